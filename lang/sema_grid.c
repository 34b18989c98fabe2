/* sema_grid.c: the launch grid of a kernel without @grid, derived from
 * how its tensor slices move with ctx.block (spec 11.1).
 *
 * Every tensor subscript whose start depends on a block axis d is written
 * as k * ctx.block.d + (terms without any block axis), k a constant of the
 * variant, the same linear form the `s : e` length prover uses (sema.c,
 * linearize), looked at through lets. Block d's window of that dim then
 * starts k elements after block d - 1's; with the terms without a block
 * axis at least -r (r >= 0: constants, loop variables from their range's
 * start), cdiv(E + r, k) blocks, E the dim's extent, reach every element
 * the windows reach. A term whose least value is not known (a scalar, a
 * dim) is an error: the blocks the first element needs are not known. The stores decide an axis (they
 * are what must all be written): with several, the grid is the largest of
 * their extents, so that every store's dim is covered (a block past a
 * smaller tensor's end stores nothing: stores past the end are skipped,
 * spec 8). An axis no store moves with is decided by the loads the same
 * way; an axis used but moved with by no slice, or moved with in a way
 * this form does not capture (through a loop variable, a var, a division,
 * a value read from a tensor, a coefficient known only at launch) is an
 * error that asks for @grid. An axis nothing uses is 1.
 *
 * Which values depend on which axis (Symbol.block_axes) is found first,
 * over the whole body to a fixed point: a var assigned late in a loop, or
 * under a condition on the block index, depends on it too. */
#include "sema.h"

#include <string.h>

typedef struct GridCtx {
  Sema *s;
  bool changed;
} GridCtx;

static int block_axis_of(Sema *s, const Node *n) {
  if (n->kind == N_MEMBER && n->a->kind == N_MEMBER && n->a->a->kind == N_NAME && !strcmp(n->a->a->name, "ctx") &&
      !n->a->a->sym && !strcmp(n->a->name, "block") && n->name[0] >= 'x' && n->name[0] <= 'z' && !n->name[1])
    return n->name[0] - 'x';
  int64_t axis;
  if (n->kind == N_CALL && n->a->kind == N_NAME && !strcmp(n->a->name, "program_id") && n->list.len == 1 &&
      sema_eval_const_quiet(s, n->list.items[0], &axis) == 1 && axis >= 0 && axis <= 2)
    return (int)axis;
  return -1;
}

/* ctx.grid.d: d, else -1 */
static int grid_axis_of(const Node *n) {
  if (n->kind == N_MEMBER && n->a->kind == N_MEMBER && n->a->a->kind == N_NAME && !strcmp(n->a->a->name, "ctx") &&
      !n->a->a->sym && !strcmp(n->a->name, "grid") && n->name[0] >= 'x' && n->name[0] <= 'z' && !n->name[1])
    return n->name[0] - 'x';
  return -1;
}

/* The block axes (bits 0 to 2) and grid extents (bits 3 to 5) an
 * expression's value may depend on. */
static unsigned taint(Sema *s, const Node *n) {
  if (!n) return 0;
  int d = block_axis_of(s, n);
  if (d >= 0) return 1u << d;
  if ((d = grid_axis_of(n)) >= 0) return 8u << d;
  switch (n->kind) {
  case N_NAME: return n->sym ? n->sym->block_axes : 0;
  case N_MEMBER: return 0;
  default: break;
  }
  unsigned t = taint(s, n->a) | taint(s, n->b) | taint(s, n->c);
  for (int i = 0; i < n->list.len; i++) t |= taint(s, n->list.items[i]);
  return t;
}

static void mark(GridCtx *g, Symbol *y, unsigned t) {
  if (y && (y->block_axes | t) != y->block_axes) {
    y->block_axes |= (unsigned char)t;
    g->changed = true;
  }
}

/* One pass of the dependence over a block; `ctl` is what the statements'
 * running at all depends on (the conditions and ranges around them). */
static void taint_block(GridCtx *g, const Node *block, unsigned ctl) {
  for (int i = 0; i < block->list.len; i++) {
    const Node *n = block->list.items[i];
    switch (n->kind) {
    case N_LET:
    case N_VAR: mark(g, n->sym, taint(g->s, n->a) | (n->kind == N_VAR ? ctl : 0)); break;
    case N_ASSIGN: {
      const Node *root = n->a->kind == N_INDEX ? n->a->a : n->a;
      if (root->kind == N_NAME && root->sym && root->sym->kind == SYM_VAR)
        mark(g, root->sym, taint(g->s, n->b) | taint(g->s, n->a) | ctl);
      break;
    }
    case N_FOR: {
      unsigned r = taint(g->s, n->a) | taint(g->s, n->b) | taint(g->s, n->c) | ctl;
      mark(g, n->sym, r);
      taint_block(g, n->body, r);
      break;
    }
    case N_WHILE: taint_block(g, n->body, ctl | taint(g->s, n->a)); break;
    case N_IF: {
      unsigned c = ctl | taint(g->s, n->a);
      taint_block(g, n->body, c);
      if (n->c) {
        if (n->c->kind == N_IF) {
          Node wrap = {.kind = N_BLOCK};
          vec_push(g->s->arena, &wrap.list, n->c);
          taint_block(g, &wrap, c);
        } else {
          taint_block(g, n->c, c);
        }
      }
      break;
    }
    default: break;
    }
  }
}

/* A constant of the variant, seen through lets. */
static bool gconst(Sema *s, const Node *n, int64_t *v) {
  if (sema_eval_const_quiet(s, (Node *)n, v) == 1) return true;
  int64_t a, b;
  switch (n->kind) {
  case N_NAME: return n->sym && n->sym->kind == SYM_LET && n->sym->init && gconst(s, n->sym->init, v);
  case N_UNARY: return n->op == '-' && gconst(s, n->a, &a) && ck_mul(a, -1, v);
  case N_BINARY:
    if (!gconst(s, n->a, &a) || !gconst(s, n->b, &b)) return false;
    if (n->op == '+') return ck_add(a, b, v);
    if (n->op == '-') return ck_add(a, b == INT64_MIN ? 1 : -b, v) && b != INT64_MIN;
    if (n->op == '*') return ck_mul(a, b, v);
    return false;
  default: return false;
  }
}

/* A bound of a value that depends on no block axis: its least (max
 * false) or greatest value, or false where it is not known at compile
 * time (a scalar parameter, a dim, a value read from a tensor). A loop
 * variable's least value is its range's start (steps are positive). */
static bool bound_of(Sema *s, const Node *n, bool max, int64_t *v) {
  if (gconst(s, n, v)) return true;
  int64_t a, b, k;
  switch (n->kind) {
  case N_NAME:
    if (!n->sym || !n->sym->init) return false;
    if (n->sym->kind == SYM_LET) return bound_of(s, n->sym->init, max, v);
    return n->sym->kind == SYM_LOOP && !max && n->sym->init->a && bound_of(s, n->sym->init->a, false, v);
  case N_UNARY: return n->op == '-' && bound_of(s, n->a, !max, &a) && ck_mul(a, -1, v);
  case N_BINARY:
    if (n->op == '+') return bound_of(s, n->a, max, &a) && bound_of(s, n->b, max, &b) && ck_add(a, b, v);
    if (n->op == '-')
      return bound_of(s, n->a, max, &a) && bound_of(s, n->b, !max, &b) && b != INT64_MIN && ck_add(a, -b, v);
    if (n->op == '*') {
      const Node *x = gconst(s, n->a, &k) ? n->b : gconst(s, n->b, &k) ? n->a : NULL;
      return x && bound_of(s, x, k >= 0 ? max : !max, &a) && ck_mul(a, k, v);
    }
    return false;
  case N_CALL:
    return n->a->kind == N_NAME && (!strcmp(n->a->name, "i32") || !strcmp(n->a->name, "i64")) && n->list.len == 1 &&
           bound_of(s, n->list.items[0], max, v);
  default: return false;
  }
}

/* The least value of sign times the block-free part of a start that blin
 * took (its block and grid terms counted as 0), or false where unknown. */
static bool rest_least(Sema *s, const Node *n, int sign, int64_t *v) {
  if (!taint(s, n)) {
    int64_t b;
    if (!bound_of(s, n, sign < 0, &b)) return false;
    return sign > 0 ? (*v = b, true) : b != INT64_MIN && (*v = -b, true);
  }
  if (block_axis_of(s, n) >= 0 || grid_axis_of(n) >= 0) return *v = 0, true;
  int64_t a, b, k;
  switch (n->kind) {
  case N_NAME: return n->sym && n->sym->kind == SYM_LET && n->sym->init && rest_least(s, n->sym->init, sign, v);
  case N_UNARY: return n->op == '-' && rest_least(s, n->a, -sign, v);
  case N_BINARY:
    if (n->op == '+' || n->op == '-')
      return rest_least(s, n->a, sign, &a) && rest_least(s, n->b, n->op == '+' ? sign : -sign, &b) && ck_add(a, b, v);
    if (n->op == '*') {
      const Node *x = gconst(s, n->a, &k) ? n->b : gconst(s, n->b, &k) ? n->a : NULL;
      if (!x || k == INT64_MIN) return false;
      return rest_least(s, x, k >= 0 ? sign : -sign, &a) && ck_mul(a, k >= 0 ? k : -k, v);
    }
    return false;
  case N_CALL:
    return n->a->kind == N_NAME && n->list.len == 1 && rest_least(s, n->list.items[0], sign, v);
  default: return false;
  }
}

/* Why a start is not k * ctx.block.d + (no block axis). */
typedef struct Why {
  const Node *at;
  const char *text;
} Why;

static bool fail(Why *w, Sema *s, const Node *at, const char *text) {
  if (!w->text) {
    w->at = at;
    w->text = arena_strdup(s->arena, text);
  }
  return false;
}

/* The coefficient of each block axis (0 to 2) and grid extent (3 to 5)
 * in n, or false with the reason. */
static bool blin(Sema *s, const Node *n, int64_t coef[6], Why *w) {
  for (int i = 0; i < 6; i++) coef[i] = 0;
  if (!taint(s, n)) return true;
  int d = block_axis_of(s, n);
  if (d >= 0) return coef[d] = 1, true;
  if ((d = grid_axis_of(n)) >= 0) return coef[3 + d] = 1, true;
  int64_t a[6], b[6], k;
  switch (n->kind) {
  case N_NAME: {
    Symbol *y = n->sym;
    if (y->kind == SYM_LET && y->init) return blin(s, y->init, coef, w);
    return fail(w, s, n, arena_printf(s->arena, "through %s '%s'", sema_sym_kind_name[y->kind], y->name));
  }
  case N_UNARY:
    if (n->op != '-') break;
    if (!blin(s, n->a, a, w)) return false;
    for (int i = 0; i < 6; i++)
      if (!ck_mul(a[i], -1, &coef[i])) return fail(w, s, n, "its coefficient overflows");
    return true;
  case N_BINARY:
    if (n->op == '+' || n->op == '-') {
      if (!blin(s, n->a, a, w) || !blin(s, n->b, b, w)) return false;
      for (int i = 0; i < 6; i++)
        if (!ck_muladd(b[i], n->op == '+' ? 1 : -1, a[i], &coef[i])) return fail(w, s, n, "its coefficient overflows");
      return true;
    }
    if (n->op == '*') {
      const Node *var = NULL;
      if (gconst(s, n->a, &k)) var = n->b;
      else if (gconst(s, n->b, &k)) var = n->a;
      if (!var)
        return fail(w, s, n, "times a value that is not a constant of the variant");
      if (!blin(s, var, a, w)) return false;
      for (int i = 0; i < 6; i++)
        if (!ck_mul(a[i], k, &coef[i])) return fail(w, s, n, "its coefficient overflows");
      return true;
    }
    return fail(w, s, n, arena_printf(s->arena, "through operator '%s'", ast_op_name(n->op)));
  case N_CALL:
    /* conversions keep the value (an i32 block index in i64 is exact) */
    if (n->a->kind == N_NAME && (!strcmp(n->a->name, "i32") || !strcmp(n->a->name, "i64")) && n->list.len == 1)
      return blin(s, n->list.items[0], coef, w);
    if (n->a->kind == N_NAME)
      return fail(w, s, n, arena_printf(s->arena, "through a call to '%s'", n->a->name));
    break;
  case N_INDEX:
    return fail(w, s, n, arena_printf(s->arena, "through a value read from '%s'",
                                      n->a->kind == N_NAME ? n->a->name : "a tile"));
  default: break;
  }
  return fail(w, s, n, "through an expression that is not linear in it");
}

/* One slice of a tensor that moves with a block axis. */
typedef struct Fact {
  bool store, ok;
  int64_t coef;       /* ok: > 0 */
  int64_t reach;      /* ok: how far before element 0 the first block's window may start (>= 0) */
  const char *dim;    /* the dim's name, or NULL for a static extent */
  int64_t extent;     /* static extent */
  const Node *sub;    /* the subscript */
  Why why;            /* !ok */
  const char *tensor;
  int dimno;
} Fact;

typedef struct Facts {
  Fact *f;
  int n, cap;
  const Node *first_use[3]; /* where each axis is first used */
} Facts;

static void add_fact(Sema *s, Facts *fs, Fact f) {
  if (fs->n == fs->cap) {
    int cap = fs->cap ? 2 * fs->cap : 16;
    Fact *g = arena_alloc(s->arena, sizeof *g * (size_t)cap);
    if (fs->n) memcpy(g, fs->f, sizeof *g * (size_t)fs->n);
    fs->f = g, fs->cap = cap;
  }
  fs->f[fs->n++] = f;
}

static void access_facts(Sema *s, Facts *fs, const Node *n, bool store, int axis) {
  Symbol *t = n->a->sym;
  for (int i = 0; i < n->list.len && i < t->ty->rank; i++) {
    const Node *sub = n->list.items[i];
    if (sub->op == SUB_FULL || !(taint(s, sub->a) >> axis & 1)) continue;
    Fact f = {.store = store, .sub = sub, .tensor = t->name, .dimno = i, .dim = t->ty->dims[i] < 0 ? t->ty->dimname[i] : NULL,
              .extent = t->ty->dims[i]};
    int64_t coef[6];
    f.ok = blin(s, sub->a, coef, &f.why);
    if (f.ok) {
      f.coef = coef[axis];
      if (f.coef == 0) continue; /* the terms cancel: this slice does not move with it */
      /* k * (ctx.grid.d - 1 - ctx.block.d), the blocks in reverse order
       * (heavy causal blocks first), takes the same windows: its
       * block-free part must be exactly -k, or the last block's window
       * starts past element 0 ((ctx.grid.d - ctx.block.d) * k) */
      int64_t lo = 0, neg_hi = 0; /* the block-free part's least value, and minus its greatest */
      bool known = rest_least(s, sub->a, 1, &lo);
      if (f.coef < 0 && coef[3 + axis] == -f.coef) {
        if (!known || lo != f.coef || !rest_least(s, sub->a, -1, &neg_hi) || neg_hi != -f.coef) {
          f.ok = false;
          f.why.at = sub->a;
          f.why.text = arena_printf(s->arena, "in reverse order, but not as k * (ctx.grid.%c - 1 - ctx.block.%c): the "
                                    "last block's window would not start at element 0", "xyz"[axis], "xyz"[axis]);
        }
        f.coef = -f.coef, coef[3 + axis] = 0, lo = 0;
      }
      if (f.ok && f.coef > 0 && !known) {
        f.ok = false;
        f.why.at = sub->a;
        f.why.text = arena_printf(s->arena, "plus a term whose least value is not known at compile time (a scalar, "
                                  "a dim or a value read): the blocks that reach element 0 are not known");
      }
      /* a window may start before element 0 (k * b - 2): the grid reaches
       * -lo elements further; one starting after it needs no fewer blocks
       * than cdiv(E, k) (the extra ones store nothing) */
      f.reach = f.ok && lo < 0 ? (lo == INT64_MIN ? INT64_MAX : -lo) : 0;
      if (f.ok && f.reach > (1 << 20)) { /* E + reach stays in the grid's 32-bit arithmetic */
        f.ok = false;
        f.why.at = sub->a;
        f.why.text = arena_printf(s->arena, "with a start as far as %lld elements before the tensor (a derived grid "
                                  "reaches at most 2^20)", (long long)f.reach);
      }
      if (f.ok && f.coef < 0) {
        f.ok = false;
        f.why.at = sub->a;
        f.why.text = arena_printf(s->arena, "with the coefficient %lld: the slice moves back as the block index grows "
                                  "(write a reversed order as k * (ctx.grid.%c - 1 - ctx.block.%c))", (long long)f.coef,
                                  "xyz"[axis], "xyz"[axis]);
      }
      for (int d = 0; d < 6 && f.ok; d++)
        if (d != axis && coef[d]) {
          f.ok = false;
          f.why.at = sub->a;
          f.why.text = arena_printf(s->arena, "together with ctx.%s.%c", d < 3 ? "block" : "grid", "xyz"[d % 3]);
        }
    }
    add_fact(s, fs, f);
  }
}

/* The tensor accesses of an expression, and the first use of each axis. */
static void expr_facts(Sema *s, Facts *fs, const Node *n, bool store, int axis) {
  if (!n) return;
  int d = block_axis_of(s, n);
  if (d >= 0) {
    if (!fs->first_use[d]) fs->first_use[d] = n;
    return;
  }
  if (n->kind == N_CALL && n->a->kind == N_NAME && !strcmp(n->a->name, "arrive") && n->list.len >= 1) {
    /* the counter is bookkeeping, not an output the grid must cover: its
     * length is the launch's contract to state (@requires) */
    for (int i = 0; i < n->list.len; i++) {
      const Node *arg = n->list.items[i];
      if (i == 0 && arg->kind == N_INDEX)
        for (int j = 0; j < arg->list.len; j++) expr_facts(s, fs, ((Node *)arg->list.items[j])->a, false, axis);
      else expr_facts(s, fs, arg, false, axis);
    }
    return;
  }
  if (n->kind == N_INDEX && n->a->kind == N_NAME && n->a->sym && n->a->sym->kind == SYM_TENSOR)
    access_facts(s, fs, n, store, axis);
  expr_facts(s, fs, n->a, false, axis);
  expr_facts(s, fs, n->b, false, axis);
  expr_facts(s, fs, n->c, false, axis);
  if (n->kind != N_BLOCK)
    for (int i = 0; i < n->list.len; i++) expr_facts(s, fs, n->list.items[i], false, axis);
}

static void stmt_facts(Sema *s, Facts *fs, const Node *block, int axis) {
  for (int i = 0; i < block->list.len; i++) {
    const Node *n = block->list.items[i];
    switch (n->kind) {
    case N_ASSIGN:
      expr_facts(s, fs, n->a, n->a->kind == N_INDEX, axis);
      expr_facts(s, fs, n->b, false, axis);
      break;
    case N_FOR:
      expr_facts(s, fs, n->a, false, axis), expr_facts(s, fs, n->b, false, axis), expr_facts(s, fs, n->c, false, axis);
      stmt_facts(s, fs, n->body, axis);
      break;
    case N_WHILE:
    case N_IF:
      expr_facts(s, fs, n->a, false, axis);
      stmt_facts(s, fs, n->body, axis);
      if (n->c) {
        if (n->c->kind == N_IF) {
          Node wrap = {.kind = N_BLOCK};
          vec_push(s->arena, &wrap.list, n->c);
          stmt_facts(s, fs, &wrap, axis);
        } else {
          stmt_facts(s, fs, n->c, axis);
        }
      }
      break;
    default: expr_facts(s, fs, n->a, false, axis); break;
    }
  }
}

static Node *mk(Sema *s, NodeKind kind, Span at) { return ast_new(s->arena, kind, at); }

static Node *mk_int(Sema *s, int64_t v, Span at) {
  Node *n = mk(s, N_INT, at);
  n->ival = v;
  n->text = arena_printf(s->arena, "%lld", (long long)v);
  return n;
}

static Node *mk_call(Sema *s, const char *f, Node *x, Node *y, Span at) {
  Node *n = mk(s, N_CALL, at);
  n->a = mk(s, N_NAME, at);
  n->a->name = f;
  vec_push(s->arena, &n->list, x);
  vec_push(s->arena, &n->list, y);
  return n;
}

/* cdiv(E + reach, k) for a fact, folded where E is static. Blocks k >
 * 2^31 - 1 elements apart: block 0 alone reaches an extent, which is below
 * 2^31 (and reach is 0 there), so 1; the grid's arithmetic is 32-bit. */
static Node *extent_of(Sema *s, const Fact *f) {
  Span at = f->sub->span;
  if (f->coef > INT32_MAX) return mk_int(s, 1, at);
  if (!f->dim) {
    int64_t e = f->extent + f->reach;
    return mk_int(s, e / f->coef + (e % f->coef != 0), at);
  }
  Node *e = mk(s, N_NAME, at);
  e->name = f->dim;
  if (f->reach) {
    Node *sum = mk(s, N_BINARY, at);
    sum->op = '+', sum->a = e, sum->b = mk_int(s, f->reach, at);
    e = sum;
  }
  return f->coef == 1 ? e : mk_call(s, "cdiv", e, mk_int(s, f->coef, at), at);
}

/* the steps of extent_of's program */
static int extent_steps(const Fact *f) {
  if (!f->dim || f->coef > INT32_MAX) return 1;
  return 1 + (f->reach ? 2 : 0) + (f->coef == 1 ? 0 : 2);
}

static const char *kernel_grid_hint(Sema *s, const Node *kernel, int axis) {
  return arena_printf(s->arena, "give the grid with @grid(...) before 'kernel %s', one extent per axis up to %c, "
                      "e.g. @grid(cdiv(N, BLOCK)%s)", kernel->name, "xyz"[axis], axis == 0 ? "" : axis == 1 ? ", 1" : ", 1, 1");
}

/* Derives the grid of the kernel whose body was just checked (no @grid);
 * false after an error. With info, the extents go to info->grid. */
bool sema_derive_grid(Sema *s, Node *kernel, KernelInfo *info) {
  GridCtx g = {.s = s};
  do { /* each pass that changes something sets one of a symbol's 6 bits, which stay set: it ends */
    g.changed = false;
    taint_block(&g, kernel->body, 0);
  } while (g.changed);
  Node *ext[3] = {NULL, NULL, NULL};
  int naxes = 0;
  for (int axis = 0; axis < 3; axis++) {
    Facts fs = {0};
    stmt_facts(s, &fs, kernel->body, axis);
    if (!fs.first_use[axis]) continue; /* nothing reads this axis: 1 */
    const Node *use = fs.first_use[axis];
    bool stores = false, loads = false;
    for (int i = 0; i < fs.n; i++) *(fs.f[i].store ? &stores : &loads) = true;
    if (!stores && !loads) {
      diag_error(s->d, use->span, "cannot derive the launch grid of kernel '%s' along %c: no tensor slice moves with "
                 "ctx.block.%c", kernel->name, "xyz"[axis], "xyz"[axis]);
      diag_note(s->d, kernel->span, "%s", kernel_grid_hint(s, kernel, axis));
      return false;
    }
    Node *acc = NULL;
    int ntok = 0;
    const Fact *seen[32];
    int nseen = 0;
    for (int i = 0; i < fs.n; i++) {
      const Fact *f = &fs.f[i];
      if (f->store != stores) continue;
      if (!f->ok) {
        diag_error(s->d, f->why.at ? f->why.at->span : f->sub->span,
                   "cannot derive the launch grid of kernel '%s' along %c: this %s of '%s' depends on ctx.block.%c %s",
                   kernel->name, "xyz"[axis], f->store ? "store" : "load", f->tensor, "xyz"[axis], f->why.text);
        diag_note(s->d, f->sub->span, "a derived grid needs each slice start as k * ctx.block.%c + (terms without it), "
                  "k a constant", "xyz"[axis]);
        diag_note(s->d, kernel->span, "%s", kernel_grid_hint(s, kernel, axis));
        return false;
      }
      bool dup = false;
      for (int j = 0; j < nseen; j++)
        if (seen[j]->coef == f->coef && seen[j]->reach == f->reach &&
            (seen[j]->dim ? f->dim && !strcmp(seen[j]->dim, f->dim) : !f->dim && seen[j]->extent == f->extent))
          dup = true;
      if (dup) continue;
      if (nseen == 32 || ntok + extent_steps(f) + (acc ? 1 : 0) > MAX_PROGRAM_STEPS) {
        diag_error(s->d, f->sub->span, "cannot derive the launch grid of kernel '%s' along %c: the largest of its %s' "
                   "extents is a program of more than %d steps", kernel->name, "xyz"[axis], stores ? "stores" : "loads",
                   MAX_PROGRAM_STEPS);
        diag_note(s->d, kernel->span, "%s", kernel_grid_hint(s, kernel, axis));
        return false;
      }
      seen[nseen++] = f;
      Node *e = extent_of(s, f);
      ntok += extent_steps(f) + (acc ? 1 : 0);
      if (!acc) acc = e;
      else if (acc->kind == N_INT && e->kind == N_INT) acc = mk_int(s, acc->ival > e->ival ? acc->ival : e->ival, e->span);
      else acc = mk_call(s, "max", acc, e, e->span);
    }
    ext[axis] = acc;
    naxes = axis + 1;
  }
  if (!info) return true;
  if (!naxes) { /* no block index: one CTA does the kernel's work */
    ext[0] = mk_int(s, 1, kernel->span);
    naxes = 1;
  }
  info->grid_derived = true;
  for (int a = 0; a < naxes; a++) {
    Node *e = ext[a] ? ext[a] : mk_int(s, 1, kernel->span);
    Type *t = sema_check_expr(s, e); /* annotates the names (dims) for lowering */
    if (t->kind == TY_ERROR) diag_ice("sema_derive_grid: the derived extent does not check");
    info->grid[info->ngrid++] = e;
  }
  return true;
}
