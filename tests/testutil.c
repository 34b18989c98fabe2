/* testutil.c: helpers shared by the unit tests. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static Source source_of(Arena *a, const char *text) {
  return (Source){.name = "t.ph", .text = arena_strdup(a, text), .len = strlen(text)};
}

typedef struct Ctx {
  Arena *arena;
  Source src;
  Diags diags;
  FILE *out, *err;
  char *obuf, *ebuf;
  size_t olen, elen;
} Ctx;

static void open_ctx(Ctx *c, const char *text) {
  memset(c, 0, sizeof *c);
  c->arena = arena_new(); /* not freed: results point into it */
  c->src = source_of(c->arena, text);
  c->out = open_memstream(&c->obuf, &c->olen);
  c->err = open_memstream(&c->ebuf, &c->elen);
  diag_init(&c->diags, &c->src, c->err, true);
  c->diags.max_errors = 0;
}

static Run close_ctx(Ctx *c, Node *program) {
  fclose(c->out);
  fclose(c->err);
  return (Run){.out = c->obuf, .diag = c->ebuf, .errors = c->diags.errors, .program = program};
}

Run run_tokens(const char *text) {
  Ctx c;
  open_ctx(&c, text);
  lex_dump_tokens(c.arena, &c.diags, &c.src, c.out);
  return close_ctx(&c, NULL);
}

Run run_parse(const char *text) {
  Ctx c;
  open_ctx(&c, text);
  Node *p = parse_program(c.arena, &c.diags, &c.src);
  if (p) ast_print(c.out, p);
  return close_ctx(&c, p);
}

Run run_check(const char *text) {
  Ctx c;
  open_ctx(&c, text);
  Node *p = parse_program(c.arena, &c.diags, &c.src);
  if (p) {
    SemaOptions so = {.max_variants = 4096};
    sema_check(c.arena, &c.diags, p, &so);
  }
  return close_ctx(&c, p);
}

static void put(char **buf, size_t *len, size_t *cap, const char *s) {
  size_t n = strlen(s);
  if (*len + n + 1 > *cap) {
    *cap = (*len + n + 1) * 2;
    *buf = realloc(*buf, *cap);
  }
  memcpy(*buf + *len, s, n + 1);
  *len += n;
}

static const char *sub_kind[] = {"pt", ":", ":+", "all"};

static void sx(const Node *n, char **b, size_t *l, size_t *c) {
  char tmp[256];
  if (!n) {
    put(b, l, c, "nil");
    return;
  }
  switch (n->kind) {
  case N_INT:
  case N_FLOAT: put(b, l, c, n->text); return;
  case N_BOOL: put(b, l, c, n->ival ? "true" : "false"); return;
  case N_NAME: put(b, l, c, n->name); return;
  case N_UNARY:
  case N_BINARY:
    snprintf(tmp, sizeof tmp, "(%s ", ast_op_name(n->op));
    put(b, l, c, tmp);
    sx(n->a, b, l, c);
    if (n->b) {
      put(b, l, c, " ");
      sx(n->b, b, l, c);
    }
    put(b, l, c, ")");
    return;
  case N_CALL:
  case N_INDEX:
    put(b, l, c, n->kind == N_CALL ? "(call " : "(index ");
    sx(n->a, b, l, c);
    for (int i = 0; i < n->list.len; i++) {
      put(b, l, c, " ");
      sx(n->list.items[i], b, l, c);
    }
    put(b, l, c, ")");
    return;
  case N_NAMEDARG:
    snprintf(tmp, sizeof tmp, "(%s= ", n->name);
    put(b, l, c, tmp);
    sx(n->a, b, l, c);
    put(b, l, c, ")");
    return;
  case N_MEMBER:
    put(b, l, c, "(. ");
    sx(n->a, b, l, c);
    snprintf(tmp, sizeof tmp, " %s)", n->name);
    put(b, l, c, tmp);
    return;
  case N_SUB:
    if (n->op == SUB_POINT) {
      sx(n->a, b, l, c);
      return;
    }
    snprintf(tmp, sizeof tmp, "(%s", sub_kind[n->op]);
    put(b, l, c, tmp);
    if (n->a) {
      put(b, l, c, " ");
      sx(n->a, b, l, c);
    }
    if (n->b) {
      put(b, l, c, " ");
      sx(n->b, b, l, c);
    }
    put(b, l, c, ")");
    return;
  case N_ASSIGN:
    snprintf(tmp, sizeof tmp, "(%s ", ast_op_name(n->op));
    put(b, l, c, tmp);
    sx(n->a, b, l, c);
    put(b, l, c, " ");
    sx(n->b, b, l, c);
    put(b, l, c, ")");
    return;
  case N_EXPR: sx(n->a, b, l, c); return;
  default:
    snprintf(tmp, sizeof tmp, "<node %d>", n->kind);
    put(b, l, c, tmp);
  }
}

char *sexpr(const Node *n) {
  char *b = NULL;
  size_t l = 0, c = 0;
  put(&b, &l, &c, "");
  sx(n, &b, &l, &c);
  return b;
}

Node *first_stmt(Node *program) {
  if (!program || !program->list.len) return NULL;
  Node *k = program->list.items[0];
  return k->body && k->body->list.len ? k->body->list.items[0] : NULL;
}

char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, n, m);
  fclose(f);
  fclose(m);
  return buf;
}
