/* arena.c: one allocation arena per compilation.
 *
 * The compiler is short-lived: nothing is freed one by one. Blocks are
 * chained and released together by arena_free. */
#include "lang.h"

#include <stdlib.h>
#include <string.h>

enum { ARENA_BLOCK = 64 * 1024 };

typedef struct Block {
  struct Block *next;
  size_t used, size;
  _Alignas(max_align_t) unsigned char data[];
} Block;

struct Arena {
  Block *head;
};

Arena *arena_new(void) {
  Arena *a = calloc(1, sizeof *a);
  if (!a) diag_ice("out of memory");
  return a;
}

void arena_free(Arena *a) {
  if (!a) return;
  for (Block *b = a->head, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(a);
}

void *arena_alloc(Arena *a, size_t size) {
  size_t align = _Alignof(max_align_t);
  size = (size + align - 1) & ~(align - 1);
  Block *b = a->head;
  if (!b || b->size - b->used < size) {
    size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
    b = malloc(sizeof *b + cap);
    if (!b) diag_ice("out of memory (asked for %zu bytes)", size);
    b->next = a->head;
    b->used = 0;
    b->size = cap;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  /* into a buffer first, not a null destination: most strings fit, and
   * gcc 12 at -O2 warns about vsnprintf(NULL, 0, ...) (-Wformat-truncation) */
  char buf[256];
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) diag_ice("bad format string '%s'", fmt);
  char *p = arena_alloc(a, (size_t)n + 1);
  if ((size_t)n < sizeof buf) memcpy(p, buf, (size_t)n + 1);
  else vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

void vec_push(Arena *a, PtrVec *v, void *item) {
  if (v->len == v->cap) {
    int cap = v->cap ? v->cap * 2 : 4;
    void **items = arena_alloc(a, sizeof(void *) * (size_t)cap);
    if (v->len) memcpy(items, v->items, sizeof(void *) * (size_t)v->len);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->len++] = item;
}
