/* lower.c: the checked AST of one variant -> tile IR.
 *
 * sema_check_variant has annotated every expression with its type and
 * every name with its symbol, so lowering makes no decisions of its own
 * beyond spelling out what the language leaves implicit: element
 * conversions, scalar splats and broadcasts become instructions, `let`
 * names a value, `var` a slot that is read and written. */
#include "tir.h"

#include <math.h>
#include <string.h>

typedef struct Lower {
  Arena *a;
  Diags *d;
  TirFunc *f;
  TirBlock *cur;
  /* lower_kernel_unrolled: each loop `for c in range(0, D, S)` over a dim
   * named unroll_dim becomes unroll_k copies of its body, c = 0, S, ..;
   * the ids of loop j's copies are [unroll_ids[2j], unroll_ids[2j + 1]) */
  const char *unroll_dim;
  int unroll_k;
  int *unroll_ids, unroll_loops, unroll_cap;
} Lower;

static TirInst *emit(Lower *l, TirOp op, TirType ty, Span at) {
  TirInst *i = tir_new(l->a, l->f, op, ty);
  i->span = at;
  tir_append(l->a, l->cur, i);
  return i;
}

static TirInst *emit1(Lower *l, TirOp op, TirType ty, Span at, TirInst *x) {
  TirInst *i = emit(l, op, ty, at);
  i->args[i->nargs++] = x;
  return i;
}

static TirInst *emit2(Lower *l, TirOp op, int aux, TirType ty, Span at, TirInst *x, TirInst *y) {
  TirInst *i = emit(l, op, ty, at);
  i->aux = aux;
  i->args[0] = x;
  i->args[1] = y;
  i->nargs = 2;
  return i;
}

static TirType type_of(const Type *t) {
  TirType r = {.elem = t->elem};
  if (t->kind == TY_TILE) {
    r.rank = t->rank;
    for (int i = 0; i < t->rank; i++) r.dims[i] = t->dims[i];
  }
  return r;
}

static TirInst *const_int(Lower *l, Scalar e, int64_t v, Span at) {
  TirInst *c = emit(l, TIR_CONST, tir_scalar(e), at);
  c->ival = v;
  c->fval = (double)v;
  return c;
}

static TirInst *const_float(Lower *l, Scalar e, double v, Span at) {
  TirInst *c = emit(l, TIR_CONST, tir_scalar(e), at);
  c->fval = v;
  c->ival = tir_float_to_int(v, S_I64);
  return c;
}

/* A constant converted as the language converts values: float to integer
 * truncates and saturates to the target's range, integer to a narrower
 * integer wraps, bool is 0 or 1. */
static int64_t const_to_int(const TirInst *v, Scalar to) {
  if (to == S_BOOL) return tir_float_elem(v->ty.elem) ? v->fval != 0 : v->ival != 0;
  if (tir_float_elem(v->ty.elem)) return tir_float_to_int(v->fval, to);
  uint64_t u = (uint64_t)v->ival;
  if (to == S_I8) return (int8_t)(u & 0xff);
  if (to == S_U8) return (int64_t)(u & 0xff);
  if (to == S_I32) return (int32_t)(u & 0xffffffffu);
  return v->ival;
}

/* Converts v to element type `elem` and shape `to`: a constant is re-typed,
 * anything else converted, then splat or broadcast. */
static TirInst *coerce(Lower *l, TirInst *v, TirType to, Span at) {
  if (v->ty.elem != to.elem) {
    if (v->op == TIR_CONST) {
      v = tir_float_elem(to.elem) ? const_float(l, to.elem, tir_float_elem(v->ty.elem) ? v->fval : (double)v->ival, at)
                                 : const_int(l, to.elem, const_to_int(v, to.elem), at);
    } else {
      TirType t = v->ty;
      t.elem = to.elem;
      v = emit1(l, TIR_CONVERT, t, at, v);
    }
  }
  if (to.rank == 0) return v;
  if (v->ty.rank == 0) return emit1(l, TIR_SPLAT, to, at, v);
  if (!tir_same_type(&v->ty, &to)) return emit1(l, TIR_BROADCAST, to, at, v);
  return v;
}

static TirInst *lower_expr(Lower *l, Node *n);
static void lower_block(Lower *l, Node *block, TirBlock *into);

/* The [r0 :+ nr, c0 :+ nc] sub-tile of a rank-2 tile value */
static TirInst *extract2(Lower *l, TirInst *t, int64_t r0, int64_t nr, int64_t c0, int64_t nc, Span at) {
  TirType ty = t->ty;
  ty.dims[0] = nr, ty.dims[1] = nc;
  TirInst *x = tir_new(l->a, l->f, TIR_EXTRACT, ty);
  x->span = at;
  x->args[x->nargs++] = t;
  x->subs[0] = (TirSub){.start = const_int(l, S_I32, r0, at), .len = nr};
  x->subs[1] = (TirSub){.start = const_int(l, S_I32, c0, at), .len = nc};
  x->nsubs = 2;
  tir_append(l->a, l->cur, x);
  return x;
}

/* where(c, a, b) of operands already emitted (a select's operands come
 * before it in the block: emit them first) */
static TirInst *sel3(Lower *l, TirType t, Span at, TirInst *c, TirInst *a, TirInst *b) {
  TirInst *v = emit(l, TIR_SELECT, t, at);
  v->args[0] = c, v->args[1] = a, v->args[2] = b, v->nargs = 3;
  return v;
}

/* pow(x, y) from the operations the backend has, in f32 (a 16-bit result
 * rounds once, at the end): |x|^y = exp2(y log2 |x|), log2 as log times
 * log2(e), so as exact as exp2 and log are (spec 9.2). As C's pow: a
 * negative x gives |x|^y for an even integer y, -|x|^y for an odd one and
 * NaN for any other y; pow(x, 0) and pow(1, y) are 1 for every x and y
 * (NaN included); pow(0, y) is 0 for y > 0 and +inf for y < 0 (exp2 of
 * -inf and +inf). */
static TirInst *lower_pow(Lower *l, TirInst *x, TirInst *y, TirType rt, Span at) {
  TirType ft = rt, bt = rt;
  ft.elem = S_F32;
  bt.elem = S_BOOL;
  x = coerce(l, x, ft, at);
  y = coerce(l, y, ft, at);
#define K(v) coerce(l, const_float(l, S_F32, (v), at), ft, at)
#define BIN(op, a, b) emit2(l, TIR_BINARY, (op), ft, at, (a), (b))
#define CMP(op, a, b) emit2(l, TIR_BINARY, (op), bt, at, (a), (b))
  TirInst *nx = emit1(l, TIR_UNARY, ft, at, x);
  nx->aux = '-';
  TirInst *ax = BIN(TOP_MAX, x, nx);
  TirInst *lg = emit1(l, TIR_MATH, ft, at, ax);
  lg->aux = TMATH_LOG;
  TirInst *p = emit1(l, TIR_MATH, ft, at, BIN('*', y, BIN('*', lg, K(1.4426950408889634))));
  p->aux = TMATH_EXP2;
  TirInst *yr = emit1(l, TIR_MATH, ft, at, y), *hy = BIN('*', y, K(0.5));
  yr->aux = TMATH_ROUND;
  TirInst *hr = emit1(l, TIR_MATH, ft, at, hy);
  hr->aux = TMATH_ROUND;
  TirInst *np = emit1(l, TIR_UNARY, ft, at, p);
  np->aux = '-';
  /* x < 0: an odd integer y negates, an even one does not, others NaN
   * (each select's operands are emitted before it) */
  TirInst *c = CMP(ast_cmp_op("!="), hr, hy);
  TirInst *v = sel3(l, ft, at, c, np, p);
  c = CMP(ast_cmp_op("=="), yr, y);
  v = sel3(l, ft, at, c, v, K(NAN));
  c = CMP('<', x, K(0.0));
  v = sel3(l, ft, at, c, v, p);
  c = CMP(ast_cmp_op("=="), y, K(0.0));
  v = sel3(l, ft, at, c, K(1.0), v);
  c = CMP(ast_cmp_op("=="), x, K(1.0));
  v = sel3(l, ft, at, c, K(1.0), v);
#undef K
#undef BIN
#undef CMP
  return coerce(l, v, rt, at);
}

/* rowmin(x) (rowmin, colmin, rowargmax): a min reduction of its own, not
 * -rowmax(-x). Over integers the negations wrap at the most negative value
 * (max's identity), and an integer rowmin lowered that way came back -2^31
 * on the H200 (rowargmax, 12-05); a max over negated integers is still
 * wrong there (spec/conformance/argmax_by_hand.yaml, an open defect). */
static TirInst *row_min(Lower *l, TirInst *x, Span at) {
  TirType rt = x->ty;
  rt.dims[rt.rank - 1] = 1;
  TirInst *m = emit1(l, TIR_REDUCE, rt, at, x);
  m->aux = TRED_MIN;
  return m;
}

/* Whether a loop's body breaks out of it or continues it (not counting
 * loops inside it, whose jumps are their own). */
static bool ast_jumps(const Node *n) {
  if (!n) return false;
  if (n->kind == N_BREAK || n->kind == N_CONTINUE) return true;
  if (n->kind == N_FOR || n->kind == N_WHILE) return false;
  if (n->kind == N_IF) return ast_jumps(n->body) || ast_jumps(n->c);
  if (n->kind == N_BLOCK)
    for (int i = 0; i < n->list.len; i++)
      if (ast_jumps(n->list.items[i])) return true;
  return false;
}

/* A tensor dim known at launch: the first tensor parameter that names it. */
static TirInst *dim_value(Lower *l, const char *name, Span at) {
  for (int i = 0; i < l->f->nparams; i++) {
    TirParam *p = &l->f->params[i];
    for (int d = 0; p->tensor && d < p->rank; d++)
      if (p->dimname[d] && strcmp(p->dimname[d], name) == 0) {
        TirInst *v = emit(l, TIR_DIM, tir_scalar(S_I32), at);
        v->aux = i;
        v->aux2 = d;
        v->name = name;
        return v;
      }
  }
  diag_ice("lower: dim '%s' has no tensor", name);
}

static TirInst *lower_name(Lower *l, Node *n) {
  Symbol *y = n->sym;
  if (!y) { /* inf is the only name without a symbol */
    if (strcmp(n->name, "inf") != 0) diag_ice("lower: unresolved name '%s'", n->name);
    return const_float(l, S_F32, INFINITY, n->span);
  }
  switch (y->kind) {
  case SYM_CONST:
    return y->const_float ? const_float(l, S_F32, y->fval, n->span) : const_int(l, y->ty->elem, y->ival, n->span);
  case SYM_DIM: return dim_value(l, y->name, n->span);
  case SYM_SCALAR: {
    TirInst *v = emit(l, TIR_PARAM, type_of(y->ty), n->span);
    v->aux = y->index;
    v->name = y->name;
    return v;
  }
  case SYM_LET:
  case SYM_LOOP: return y->lowered;
  case SYM_VAR: {
    TirInst *slot = y->lowered;
    return emit1(l, TIR_READ, slot->ty, n->span, slot);
  }
  case SYM_TENSOR: break;
  }
  diag_ice("lower: tensor '%s' used as a value", n->name);
}

/* Fills the subscripts of a load, store, extract or partial write from an
 * index node whose result type gives the span lengths. */
static void lower_subs(Lower *l, Node *index, TirInst *into) {
  const Type *rt = index->ty;
  int k = 0;
  for (int i = 0; i < index->list.len; i++) {
    Node *sub = index->list.items[i];
    TirSub *s = &into->subs[into->nsubs++];
    if (sub->op == SUB_FULL) {
      s->start = const_int(l, S_I32, 0, sub->span);
      s->len = rt->dims[k++];
      continue;
    }
    s->start = lower_expr(l, sub->a);
    if (sub->op == SUB_POINT) {
      s->point = true;
      s->len = 1;
    } else {
      s->len = rt->dims[k++];
    }
  }
}

/* The element of an atomic or of grid_barrier: t[i, ...] written as a
 * point of every dim, or Phobos's form naming the tensor, t with index i
 * (t[i, 0] of a column). */
static int lower_element(Lower *l, Node *call, TirInst *into, TirInst *index) {
  Node *tn = call->list.items[0];
  if (tn->kind == N_INDEX) {
    into->aux = tn->a->sym->index;
    lower_subs(l, tn, into);
    return 1;
  }
  into->aux = tn->sym->index;
  into->subs[into->nsubs++] = (TirSub){.point = true, .start = index, .len = 1};
  if (tn->ty->rank == 2) into->subs[into->nsubs++] = (TirSub){.point = true, .start = const_int(l, S_I32, 0, tn->span), .len = 1};
  return 2;
}

/* atomic_add and atomic_cas of one element, its old value given back: a
 * TIR_ARRIVE of kind ADD or CAS, whose operands convert to the element's
 * type */
static TirInst *lower_atomic(Lower *l, Node *n, int kind) {
  Node *tn = n->list.items[0];
  bool named = tn->kind == N_NAME;
  TirInst *index = named ? lower_expr(l, n->list.items[1]) : NULL;
  TirInst *v = tir_new(l->a, l->f, TIR_ARRIVE, tir_scalar(S_I32));
  v->aux2 = kind;
  v->span = n->span;
  int first = lower_element(l, n, v, index);
  TirType et = tir_scalar(l->f->params[v->aux].elem);
  v->ty = et;
  for (int i = first; i < n->list.len; i++) v->args[v->nargs++] = coerce(l, lower_expr(l, n->list.items[i]), et, n->span);
  tir_append(l->a, l->cur, v);
  return v;
}

static TirInst *lower_index(Lower *l, Node *n) {
  Node *base = n->a;
  TirInst *in;
  if (base->kind == N_NAME && base->sym && base->sym->kind == SYM_TENSOR) {
    in = tir_new(l->a, l->f, TIR_LOAD, type_of(n->ty));
    in->aux = base->sym->index;
  } else {
    TirInst *tile = lower_expr(l, base);
    in = tir_new(l->a, l->f, TIR_EXTRACT, type_of(n->ty));
    in->args[in->nargs++] = tile;
  }
  in->span = n->span;
  lower_subs(l, n, in); /* subscript values come before the access */
  tir_append(l->a, l->cur, in);
  return in;
}

static TirInst *lower_binary(Lower *l, Node *n) {
  TirInst *x = lower_expr(l, n->a), *y = lower_expr(l, n->b);
  TirType rt = type_of(n->ty);
  TirType opt = rt;
  if (rt.elem == S_BOOL) opt.elem = sema_join_elem(n->a->ty, n->b->ty); /* comparisons */
  x = coerce(l, x, opt, n->a->span);
  y = coerce(l, y, opt, n->b->span);
  return emit2(l, TIR_BINARY, n->op, rt, n->span, x, y);
}

/* qdot_t and qmma_t of static K: the sum over the K / 32 blocks of each
 * block's integer product times its two scales (the scale of a's row, of
 * w's row or column) */
static TirInst *qdot_blocks(Lower *l, Node *n, bool mma, TirInst **args, TirType rt) {
  TirInst *a = args[0], *w = args[2];
  int64_t M = a->ty.dims[0], N = w->ty.dims[0], KB = a->ty.dims[1] / 32;
  TirType ast = args[1]->ty, wst = args[3]->ty;
  ast.elem = wst.elem = S_F32;
  TirInst *as = coerce(l, args[1], ast, n->span), *ws = coerce(l, args[3], wst, n->span), *acc = NULL;
  for (int64_t b = 0; b < KB; b++) {
    TirInst *ab = extract2(l, a, 0, M, 32 * b, 32, n->span), *wb = extract2(l, w, 0, N, 32 * b, 32, n->span);
    TirType it = rt;
    it.elem = S_I32;
    TirInst *d = coerce(l, emit2(l, TIR_DOT, 1, it, n->span, ab, wb), rt, n->span);
    TirInst *sa = coerce(l, extract2(l, as, 0, M, b, 1, n->span), rt, n->span), *sw;
    if (mma) {
      sw = extract2(l, ws, b, 1, 0, N, n->span);
    } else {
      TirInst *col = extract2(l, ws, 0, N, b, 1, n->span);
      TirType rowt = col->ty;
      rowt.dims[0] = 1, rowt.dims[1] = N;
      sw = emit1(l, TIR_TRANSPOSE, rowt, n->span, col);
    }
    TirInst *term = emit2(l, TIR_BINARY, '*', rt, n->span, emit2(l, TIR_BINARY, '*', rt, n->span, d, sa),
                          coerce(l, sw, rt, n->span));
    acc = acc ? emit2(l, TIR_BINARY, '+', rt, n->span, acc, term) : term;
  }
  return acc;
}

/* Phobos's qdot_t over a K known at launch (sema marks it 'K'): a loop of
 * QDOT_STEP_BLOCKS blocks of 32 a step, each step's slices loaded with the
 * rows as written and K from the step (the scales from step / 32), summed
 * into a slot. A step past K loads zero bytes and zero scales. */
enum { QDOT_STEP_BLOCKS = 8 };
static TirInst *step_load(Lower *l, Node *idx, TirInst *start, int64_t len) {
  int64_t rows = idx->ty->dims[0];
  TirType t = {.elem = idx->ty->elem, .rank = 2, .dims = {rows, len}};
  TirInst *ld = tir_new(l->a, l->f, TIR_LOAD, t);
  ld->aux = idx->a->sym->index;
  ld->span = idx->span;
  Node *first = idx->list.items[0]; /* a span (sema), or ':' over a constant dim */
  ld->subs[0] = (TirSub){.start = first->op == SUB_FULL ? const_int(l, S_I32, 0, first->span) : lower_expr(l, first->a),
                         .len = rows};
  ld->subs[1] = (TirSub){.start = start, .len = len};
  ld->nsubs = 2;
  tir_append(l->a, l->cur, ld);
  return ld;
}

static TirInst *qdot_dynamic(Lower *l, Node *n, TirType rt) {
  Node *a = n->list.items[0];
  const TirParam *ap = &l->f->params[a->a->sym->index];
  TirInst *K = emit(l, TIR_DIM, tir_scalar(S_I32), n->span);
  K->aux = a->a->sym->index, K->aux2 = 1, K->name = ap->dimname[1];
  TirInst *slot = emit(l, TIR_VAR, rt, n->span);
  slot->name = "qdot_t";
  emit2(l, TIR_WRITE, 0, rt, n->span, slot, coerce(l, const_float(l, S_F32, 0.0, n->span), rt, n->span));
  TirInst *lo = const_int(l, S_I32, 0, n->span), *step = const_int(l, S_I32, 32 * QDOT_STEP_BLOCKS, n->span);
  TirInst *loop = emit(l, TIR_FOR, tir_scalar(S_I32), n->span);
  loop->args[0] = lo;
  loop->args[1] = K;
  loop->args[2] = step;
  loop->nargs = 3;
  loop->name = "k";
  TirBlock *saved = l->cur;
  l->cur = &loop->body;
  TirInst *kb = emit2(l, TIR_BINARY, '/', tir_scalar(S_I32), n->span, loop, const_int(l, S_I32, 32, n->span));
  TirInst *args[4];
  for (int i = 0; i < 4; i++)
    args[i] = step_load(l, n->list.items[i], i % 2 ? kb : loop, i % 2 ? QDOT_STEP_BLOCKS : 32 * QDOT_STEP_BLOCKS);
  TirInst *sum = emit2(l, TIR_BINARY, '+', rt, n->span, emit1(l, TIR_READ, rt, n->span, slot),
                       qdot_blocks(l, n, false, args, rt));
  emit2(l, TIR_WRITE, 0, rt, n->span, slot, sum);
  l->cur = saved;
  return emit1(l, TIR_READ, rt, n->span, slot);
}

static TirInst *lower_call(Lower *l, Node *n) {
  const char *f = n->a->name;
  TirType rt = type_of(n->ty);
  Scalar conv;
  TirInst *args[4] = {0};
  if (strcmp(f, "iota") == 0) {
    TirInst *v = emit(l, TIR_IOTA, rt, n->span);
    v->aux = rt.rank - 1;
    for (int i = 0; i < n->list.len; i++) {
      Node *arg = n->list.items[i];
      if (arg->kind == N_NAMEDARG) {
        /* sema proved the axis constant; it is an integer literal or a
         * constant name, so lowering it yields a constant */
        TirBlock scratch = {0}, *saved = l->cur;
        l->cur = &scratch;
        TirInst *axis = lower_expr(l, arg->a);
        l->cur = saved;
        if (axis->op != TIR_CONST) diag_ice("lower: iota axis is not a constant");
        v->aux = (int)axis->ival;
      }
    }
    return v;
  }
  if (strcmp(f, "program_id") == 0) {
    Node *arg = n->list.items[0];
    TirBlock scratch = {0}, *saved = l->cur;
    l->cur = &scratch;
    TirInst *axis = lower_expr(l, arg);
    l->cur = saved;
    TirInst *v = emit(l, TIR_CTX, tir_scalar(S_I32), n->span);
    v->aux = (int)axis->ival;
    return v;
  }
  if (strcmp(f, "arrive") == 0) { /* sema: a point of an i32 tensor parameter, an integer count */
    Node *cn = n->list.items[0];
    TirInst *v = tir_new(l->a, l->f, TIR_ARRIVE, rt);
    v->aux = cn->a->sym->index;
    v->span = n->span;
    lower_subs(l, cn, v);
    v->args[v->nargs++] = coerce(l, lower_expr(l, n->list.items[1]), tir_scalar(S_I32), n->span);
    tir_append(l->a, l->cur, v);
    return v;
  }
  if (!strcmp(f, "qdot_t") && n->op == 'K') return qdot_dynamic(l, n, rt);
  if (!strcmp(f, "atomic_add") || !strcmp(f, "atomic_cas")) /* sema: their value forms, one element */
    return lower_atomic(l, n, f[7] == 'c' ? TARRIVE_CAS : TARRIVE_ADD);
  for (int i = 0; i < n->list.len && i < 4; i++) args[i] = lower_expr(l, n->list.items[i]);
  if (strcmp(f, "dot") == 0 || strcmp(f, "dot_t") == 0) {
    TirInst *a = args[0], *b = args[1];
    if (a->ty.elem != b->ty.elem && tir_float_elem(a->ty.elem)) {
      /* mixed float operands meet at their join before the product */
      Scalar j = sema_join_elem(((Node *)n->list.items[0])->ty, ((Node *)n->list.items[1])->ty);
      TirType ta = a->ty, tb = b->ty;
      ta.elem = tb.elem = j;
      a = coerce(l, a, ta, n->span);
      b = coerce(l, b, tb, n->span);
    }
    return emit2(l, TIR_DOT, f[3] == '_', rt, n->span, a, b);
  }
  if (!strcmp(f, "exp") || !strcmp(f, "exp2") || !strcmp(f, "log") || !strcmp(f, "sqrt") || !strcmp(f, "tanh")) {
    int m = !strcmp(f, "exp2") ? TMATH_EXP2 : f[0] == 'e' ? TMATH_EXP : f[0] == 'l' ? TMATH_LOG : f[0] == 's' ? TMATH_SQRT : TMATH_TANH;
    TirInst *v = emit1(l, TIR_MATH, rt, n->span, coerce(l, args[0], rt, n->span));
    v->aux = m;
    return v;
  }
  /* the everyday functions, from the operations the backend has (each
   * verified on the GPU in its own right): rsqrt(x) = 1 / sqrt(x),
   * sigmoid(x) = 1 / (1 + exp(-x)), abs(x) = max(x, -x), rowmin(x) =
   * -rowmax(-x), erf by Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7) */
  if (!strcmp(f, "rsqrt") || !strcmp(f, "sigmoid") || !strcmp(f, "erf") || !strcmp(f, "abs")) {
    TirInst *x = coerce(l, args[0], rt, n->span);
    Span at = n->span;
#define K(v) coerce(l, const_float(l, S_F32, (v), at), rt, at)
    if (f[0] == 'a') {
      TirInst *nx = emit1(l, TIR_UNARY, rt, at, x);
      nx->aux = '-';
      return emit2(l, TIR_BINARY, TOP_MAX, rt, at, x, nx);
    }
    if (f[0] == 'r') {
      TirInst *sq = emit1(l, TIR_MATH, rt, at, x);
      sq->aux = TMATH_SQRT;
      return emit2(l, TIR_BINARY, '/', rt, at, K(1.0), sq);
    }
    if (f[0] == 's') {
      TirInst *nx = emit1(l, TIR_UNARY, rt, at, x);
      nx->aux = '-';
      TirInst *ex = emit1(l, TIR_MATH, rt, at, nx);
      ex->aux = TMATH_EXP;
      return emit2(l, TIR_BINARY, '/', rt, at, K(1.0), emit2(l, TIR_BINARY, '+', rt, at, K(1.0), ex));
    }
    /* erf */
    TirInst *ax = emit2(l, TIR_BINARY, TOP_MAX, rt, at, x, emit1(l, TIR_UNARY, rt, at, x));
    ax->args[1]->aux = '-';
    TirInst *t = emit2(l, TIR_BINARY, '/', rt, at, K(1.0),
                       emit2(l, TIR_BINARY, '+', rt, at, K(1.0), emit2(l, TIR_BINARY, '*', rt, at, K(0.3275911), ax)));
    static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
    TirInst *poly = K(a[0]);
    for (int i = 1; i < 5; i++) poly = emit2(l, TIR_BINARY, '+', rt, at, emit2(l, TIR_BINARY, '*', rt, at, poly, t), K(a[i]));
    poly = emit2(l, TIR_BINARY, '*', rt, at, poly, t);
    TirInst *x2 = emit2(l, TIR_BINARY, '*', rt, at, x, x), *nx2 = emit1(l, TIR_UNARY, rt, at, x2);
    nx2->aux = '-';
    TirInst *ex = emit1(l, TIR_MATH, rt, at, nx2);
    ex->aux = TMATH_EXP;
    TirInst *y = emit2(l, TIR_BINARY, '-', rt, at, K(1.0), emit2(l, TIR_BINARY, '*', rt, at, poly, ex));
    TirInst *ny = emit1(l, TIR_UNARY, rt, at, y);
    ny->aux = '-';
    TirType bt = rt;
    bt.elem = S_BOOL;
    TirInst *neg = emit2(l, TIR_BINARY, '<', bt, at, x, K(0.0));
    return sel3(l, rt, at, neg, ny, y);
#undef K
  }
  if (!strcmp(f, "pow")) return lower_pow(l, args[0], args[1], rt, n->span);
  if (!strcmp(f, "fma")) {
    TirInst *x[3]; /* the operands' conversions before the fma */
    for (int i = 0; i < 3; i++) x[i] = coerce(l, args[i], rt, n->span);
    TirInst *v = emit(l, TIR_MATH, rt, n->span);
    for (int i = 0; i < 3; i++) v->args[i] = x[i];
    v->nargs = 3, v->aux = TMATH_FMA;
    return v;
  }
  if (!strcmp(f, "rowmin")) return row_min(l, args[0], n->span);
  if (!strcmp(f, "rowmax") || !strcmp(f, "rowsum")) {
    TirInst *v = emit1(l, TIR_REDUCE, rt, n->span, args[0]);
    v->aux = f[3] == 'm' ? TRED_MAX : TRED_SUM;
    return v;
  }
  if (!strcmp(f, "tmax") || !strcmp(f, "tmin") || !strcmp(f, "max") || !strcmp(f, "min") || !strcmp(f, "cdiv")) {
    int op = !strcmp(f, "cdiv") ? TOP_CDIV : strstr(f, "max") ? TOP_MAX : TOP_MIN;
    return emit2(l, TIR_BINARY, op, rt, n->span, coerce(l, args[0], rt, n->span), coerce(l, args[1], rt, n->span));
  }
  if (!strcmp(f, "transpose")) return emit1(l, TIR_TRANSPOSE, rt, n->span, args[0]);
  if (!strcmp(f, "cumsum")) return emit1(l, TIR_SCAN, rt, n->span, args[0]);
  if (!strcmp(f, "flat")) return emit1(l, TIR_RESHAPE, rt, n->span, args[0]);
  if (!strcmp(f, "rowargmax")) {
    /* the least column whose element is not below the row's max:
     * -rowmax(-where(x < rowmax(x), INT32_MAX, column)) */
    TirInst *x = args[0];
    TirType mt = x->ty, it = x->ty, bt = x->ty;
    mt.dims[mt.rank - 1] = 1;
    it.elem = S_I32, bt.elem = S_BOOL;
    TirInst *m = emit1(l, TIR_REDUCE, mt, n->span, x);
    m->aux = TRED_MAX;
    TirInst *mb = coerce(l, m, x->ty, n->span);
    TirInst *below = emit2(l, TIR_BINARY, '<', bt, n->span, x, mb);
    TirInst *col = emit(l, TIR_IOTA, it, n->span);
    col->aux = it.rank - 1;
    TirInst *big = coerce(l, const_int(l, S_I32, INT32_MAX, n->span), it, n->span);
    return row_min(l, sel3(l, it, n->span, below, big, col), n->span);
  }
  if (!strcmp(f, "round")) {
    TirInst *v = emit1(l, TIR_MATH, rt, n->span, coerce(l, args[0], rt, n->span));
    v->aux = TMATH_ROUND;
    return v;
  }
  if (!strcmp(f, "colsum") || !strcmp(f, "colmax") || !strcmp(f, "colmin") || !strcmp(f, "sum")) {
    /* a row reduction of the transpose, transposed back: colsum(t) =
     * transpose(rowsum(transpose(t))); sum(t) = rowsum(transpose(rowsum(t)))
     * for rank 2, rowsum(t) for rank 1 (the exchanges of §15.3) */
    TirInst *x = args[0];
    bool whole = f[0] == 's', mn = !strcmp(f, "colmin"), sum = whole || !strcmp(f, "colsum");
    Scalar e = rt.elem;
    if (x->ty.elem != e) { /* a sum of bytes: in i32 */
      TirType xt = x->ty;
      xt.elem = e;
      x = coerce(l, x, xt, n->span);
    }
    if (!whole || x->ty.rank == 2) {
      TirType tt = x->ty;
      if (whole) { /* the rows' sums first: [R, 1] */
        tt.dims[1] = 1;
        x = emit1(l, TIR_REDUCE, tt, n->span, x);
        x->aux = TRED_SUM;
      }
      int64_t t0 = tt.dims[0];
      tt.dims[0] = tt.dims[1], tt.dims[1] = t0;
      x = emit1(l, TIR_TRANSPOSE, tt, n->span, x); /* [C, R] */
    }
    TirInst *r;
    if (mn) {
      r = row_min(l, x, n->span);
    } else {
      TirType rr = x->ty;
      rr.dims[rr.rank - 1] = 1;
      r = emit1(l, TIR_REDUCE, rr, n->span, x);
      r->aux = sum ? TRED_SUM : TRED_MAX;
    }
    if (whole) return r; /* [1] or [1, 1] */
    return emit1(l, TIR_TRANSPOSE, rt, n->span, r); /* [C, 1] -> [1, C] */
  }
  if (!strcmp(f, "qdot_t") || !strcmp(f, "qmma_t")) /* sema: i8 [M, K], [N, K]; f32 scales; K = 32 KB */
    return qdot_blocks(l, n, f[1] == 'm', args, rt);
  if (!strcmp(f, "tril")) { /* where(column > row, 0, t) */
    TirType it = rt, bt = rt;
    it.elem = S_I32, bt.elem = S_BOOL;
    TirInst *row = emit(l, TIR_IOTA, it, n->span), *col = emit(l, TIR_IOTA, it, n->span);
    row->aux = 0, col->aux = 1;
    TirInst *above = emit2(l, TIR_BINARY, '>', bt, n->span, col, row);
    TirInst *zero = tir_float_elem(rt.elem) ? const_float(l, rt.elem, 0.0, n->span) : const_int(l, rt.elem, 0, n->span);
    TirInst *z = coerce(l, zero, rt, n->span), *x = coerce(l, args[0], rt, n->span);
    return sel3(l, rt, n->span, above, z, x);
  }
  if (!strcmp(f, "where")) {
    TirType ct = rt;
    ct.elem = S_BOOL;
    TirInst *c = coerce(l, args[0], ct, n->span);
    TirInst *x = coerce(l, args[1], rt, n->span), *y = coerce(l, args[2], rt, n->span);
    return sel3(l, rt, n->span, c, x, y);
  }
  if (sema_scalar_from_name(f, &conv)) return coerce(l, args[0], rt, n->span);
  diag_ice("lower: unknown builtin '%s'", f);
}

static TirInst *lower_expr(Lower *l, Node *n) {
  switch (n->kind) {
  case N_INT: return const_int(l, n->ty->elem, n->ival, n->span);
  case N_FLOAT: return const_float(l, S_F32, n->fval, n->span);
  case N_BOOL: return const_int(l, S_BOOL, n->ival, n->span);
  case N_NAME: return lower_name(l, n);
  case N_UNARY: {
    TirInst *x = lower_expr(l, n->a);
    TirType rt = type_of(n->ty);
    if (n->op == '-' && x->op == TIR_CONST) { /* -inf, -1.0: fold */
      /* drop the operand's constant only when this expression made it: a
       * let-bound constant has other users */
      bool fresh = n->a->kind == N_INT || n->a->kind == N_FLOAT ||
                   (n->a->kind == N_NAME && (!n->a->sym || n->a->sym->kind == SYM_CONST));
      if (fresh && l->cur->len && l->cur->insts[l->cur->len - 1] == x) l->cur->len--;
      /* an integer negates as it does at run time: wrapping (-INT64_MIN
       * is INT64_MIN, -(-128) as an i8 is -128), not by signed overflow */
      TirInst wrapped = {.ty = x->ty, .ival = (int64_t)(0 - (uint64_t)x->ival)};
      return tir_float_elem(x->ty.elem) ? const_float(l, x->ty.elem, -x->fval, n->span)
                                       : const_int(l, x->ty.elem, const_to_int(&wrapped, x->ty.elem), n->span);
    }
    TirInst *v = emit1(l, TIR_UNARY, rt, n->span, coerce(l, x, rt, n->span));
    v->aux = n->op;
    return v;
  }
  case N_BINARY: return lower_binary(l, n);
  case N_CALL: return lower_call(l, n);
  case N_INDEX: return lower_index(l, n);
  case N_MEMBER: {
    TirInst *v = emit(l, TIR_CTX, tir_scalar(S_I32), n->span);
    v->aux = (n->a->name[0] == 'g' ? 3 : 0) + (n->name[0] - 'x');
    return v;
  }
  default: diag_ice("lower: unexpected expression kind %d", n->kind);
  }
}

/* Applies `op=` to a current value: the operation runs in the join of the
 * two types, the result goes back in the target's type. */
static TirInst *compound(Lower *l, Node *n, TirInst *cur, const Type *cur_ty, TirInst *val) {
  static const int ops[] = {'+', '-', '*', '/'};
  const char *name = ast_op_name(n->op);
  int op = ops[strchr("+-*/", name[0]) - "+-*/"];
  TirType jt = cur->ty;
  jt.elem = sema_join_elem(cur_ty, n->b->ty);
  TirInst *r = emit2(l, TIR_BINARY, op, jt, n->span, coerce(l, cur, jt, n->span), coerce(l, val, jt, n->span));
  return coerce(l, r, cur->ty, n->span);
}

static void lower_assign(Lower *l, Node *n) {
  Node *target = n->a;
  TirInst *val = lower_expr(l, n->b);
  if (target->kind == N_NAME) {
    TirInst *slot = target->sym->lowered;
    if (n->op != '=') {
      TirInst *cur = emit1(l, TIR_READ, slot->ty, target->span, slot);
      val = compound(l, n, cur, target->sym->ty, val);
    }
    emit2(l, TIR_WRITE, 0, slot->ty, n->span, slot, coerce(l, val, slot->ty, n->span));
    return;
  }
  Symbol *y = target->a->sym;
  TirType st = type_of(target->ty);
  if (y->kind == SYM_TENSOR) {
    TirInst *st_inst = tir_new(l->a, l->f, TIR_STORE, st);
    st_inst->aux = y->index;
    st_inst->span = n->span;
    lower_subs(l, target, st_inst);
    if (n->op != '=') {
      TirInst *cur = tir_new(l->a, l->f, TIR_LOAD, st);
      cur->aux = y->index;
      cur->span = target->span;
      cur->nsubs = st_inst->nsubs;
      memcpy(cur->subs, st_inst->subs, sizeof cur->subs);
      tir_append(l->a, l->cur, cur);
      val = compound(l, n, cur, target->ty, val);
    }
    st_inst->args[st_inst->nargs++] = coerce(l, val, st, n->span);
    tir_append(l->a, l->cur, st_inst);
    return;
  }
  /* a sub-tile of a var */
  TirInst *slot = y->lowered;
  TirInst *w = tir_new(l->a, l->f, TIR_WRITE, st);
  w->span = n->span;
  lower_subs(l, target, w);
  if (n->op != '=') {
    TirInst *whole = emit1(l, TIR_READ, slot->ty, target->span, slot);
    TirInst *cur = tir_new(l->a, l->f, TIR_EXTRACT, st);
    cur->span = target->span;
    cur->args[cur->nargs++] = whole;
    cur->nsubs = w->nsubs;
    memcpy(cur->subs, w->subs, sizeof cur->subs);
    tir_append(l->a, l->cur, cur);
    val = compound(l, n, cur, target->ty, val);
  }
  w->args[0] = slot;
  w->args[1] = coerce(l, val, st, n->span);
  w->nargs = 2;
  tir_append(l->a, l->cur, w);
}

static void lower_stmt(Lower *l, Node *n) {
  switch (n->kind) {
  case N_LET: {
    TirInst *v = lower_expr(l, n->a);
    if (n->type) v = coerce(l, v, type_of(n->ty), n->span);
    if ((v->op == TIR_LOAD || v->op == TIR_EXTRACT) && !v->name) v->name = n->name; /* names its buffer */
    n->sym->lowered = v;
    break;
  }
  case N_VAR: {
    TirInst *slot = emit(l, TIR_VAR, type_of(n->ty), n->span);
    slot->name = n->name;
    n->sym->lowered = slot;
    if (n->a) {
      TirInst *v = lower_expr(l, n->a);
      emit2(l, TIR_WRITE, 0, slot->ty, n->span, slot, coerce(l, v, slot->ty, n->span));
    }
    break;
  }
  case N_ASSIGN: lower_assign(l, n); break;
  case N_FOR: {
    TirInst *lo = coerce(l, lower_expr(l, n->a), tir_scalar(S_I32), n->a->span);
    TirInst *hi = coerce(l, lower_expr(l, n->b), tir_scalar(S_I32), n->b->span);
    TirInst *step = n->c ? coerce(l, lower_expr(l, n->c), tir_scalar(S_I32), n->c->span) : const_int(l, S_I32, 1, n->span);
    /* (a loop with a break or continue of its own keeps its loop: copies
     * of its body have nowhere to jump to) */
    if (l->unroll_dim && !ast_jumps(n->body) && lo->op == TIR_CONST && lo->ival == 0 && step->op == TIR_CONST && step->ival > 0 &&
        hi->op == TIR_DIM && hi->aux >= 0 && hi->aux < l->f->nparams && hi->aux2 >= 0 &&
        hi->aux2 < l->f->params[hi->aux].rank && l->f->params[hi->aux].dimname[hi->aux2] &&
        !strcmp(l->f->params[hi->aux].dimname[hi->aux2], l->unroll_dim)) {
      if (l->unroll_loops == l->unroll_cap) {
        int cap = l->unroll_cap ? 2 * l->unroll_cap : 8;
        int *ids = arena_alloc(l->a, sizeof(int) * 2 * (size_t)cap);
        if (l->unroll_loops) memcpy(ids, l->unroll_ids, sizeof(int) * 2 * (size_t)l->unroll_loops);
        l->unroll_ids = ids, l->unroll_cap = cap;
      }
      int j = l->unroll_loops++;
      l->unroll_ids[2 * j] = l->f->ninsts;
      for (int c = 0; c < l->unroll_k; c++) {
        n->sym->lowered = const_int(l, S_I32, c * step->ival, n->span);
        lower_block(l, n->body, l->cur);
      }
      l->unroll_ids[2 * j + 1] = l->f->ninsts;
      break;
    }
    /* for<unroll u>: the body u times an iteration, the later copies each
     * under its own bound test (i + k step < end), the loop stepping u
     * steps. A body that breaks or continues keeps one copy: a jump from
     * a copy would skip the copies after it. */
    int u = n->ival > 1 && !ast_jumps(n->body) ? (int)n->ival : 1;
    TirInst *ustep = step;
    if (u > 1) {
      TirInst *k = const_int(l, S_I32, u, n->span);
      ustep = step->op == TIR_CONST ? const_int(l, S_I32, step->ival * u, n->span)
                                    : emit2(l, TIR_BINARY, '*', tir_scalar(S_I32), n->span, step, k);
    }
    TirInst *loop = emit(l, TIR_FOR, tir_scalar(S_I32), n->span);
    loop->args[0] = lo;
    loop->args[1] = hi;
    loop->args[2] = ustep;
    loop->nargs = 3;
    loop->name = n->name;
    n->sym->lowered = loop;
    lower_block(l, n->body, &loop->body);
    for (int c = 1; c < u; c++) {
      TirBlock *saved = l->cur;
      l->cur = &loop->body;
      TirInst *off = step->op == TIR_CONST ? const_int(l, S_I32, step->ival * c, n->span)
                                           : emit2(l, TIR_BINARY, '*', tir_scalar(S_I32), n->span, step,
                                                   const_int(l, S_I32, c, n->span));
      TirInst *iv = emit2(l, TIR_BINARY, '+', tir_scalar(S_I32), n->span, loop, off);
      TirInst *in = emit2(l, TIR_BINARY, '<', tir_scalar(S_BOOL), n->span, iv, hi);
      TirInst *br = emit1(l, TIR_IF, tir_scalar(S_BOOL), n->span, in);
      l->cur = saved;
      n->sym->lowered = iv;
      lower_block(l, n->body, &br->body);
    }
    n->sym->lowered = loop;
    break;
  }
  case N_WHILE: {
    TirInst *w = emit(l, TIR_WHILE, tir_scalar(S_BOOL), n->span);
    TirBlock *saved = l->cur;
    l->cur = &w->cond;
    w->cond_value = lower_expr(l, n->a);
    l->cur = saved;
    lower_block(l, n->body, &w->body);
    break;
  }
  case N_IF: {
    TirInst *c = lower_expr(l, n->a);
    TirInst *br = emit1(l, TIR_IF, tir_scalar(S_BOOL), n->span, c);
    lower_block(l, n->body, &br->body);
    if (n->c) {
      if (n->c->kind == N_BLOCK) {
        lower_block(l, n->c, &br->body2);
      } else {
        TirBlock *saved = l->cur;
        l->cur = &br->body2;
        lower_stmt(l, n->c);
        l->cur = saved;
      }
    }
    break;
  }
  case N_BREAK: emit(l, TIR_BREAK, tir_scalar(S_BOOL), n->span); break;
  case N_CONTINUE: emit(l, TIR_CONTINUE, tir_scalar(S_BOOL), n->span); break;
  case N_RETURN: emit(l, TIR_RETURN, tir_scalar(S_BOOL), n->span); break;
  case N_EXPR: { /* sema: only atomic_add(T[slice], v) and barrier() stand as statements */
    const char *f = n->a->a->name;
    if (!strcmp(f, "barrier")) {
      emit(l, TIR_BARRIER, tir_scalar(S_BOOL), n->span);
      break;
    }
    if (!strcmp(f, "grid_barrier")) { /* the generation's element, 1; the counter's is 0 */
      TirInst *g = tir_new(l->a, l->f, TIR_ARRIVE, tir_scalar(S_BOOL));
      g->aux2 = TARRIVE_GRID;
      g->span = n->span;
      lower_element(l, n->a, g, const_int(l, S_I32, 1, n->span));
      tir_append(l->a, l->cur, g);
      break;
    }
    if (!strcmp(f, "atomic_cas")) {
      lower_atomic(l, n->a, TARRIVE_CAS);
      break;
    }
    if (n->a->list.len == 3) { /* atomic_add(t, i, v): an add into t[i], as atomic_add(t[i], v) */
      TirInst *add = tir_new(l->a, l->f, TIR_STORE, tir_scalar(S_I32));
      add->aux2 = TSTORE_ADD;
      add->span = n->span;
      lower_element(l, n->a, add, lower_expr(l, n->a->list.items[1]));
      TirType et = tir_scalar(l->f->params[add->aux].elem);
      add->ty = et;
      add->args[add->nargs++] = coerce(l, lower_expr(l, n->a->list.items[2]), et, n->span);
      tir_append(l->a, l->cur, add);
      break;
    }
    Node *target = n->a->list.items[0];
    TirType st = type_of(target->ty);
    TirInst *val = lower_expr(l, n->a->list.items[1]);
    TirInst *add = tir_new(l->a, l->f, TIR_STORE, st);
    add->aux = target->a->sym->index;
    add->aux2 = TSTORE_ADD;
    add->span = n->span;
    lower_subs(l, target, add);
    add->args[add->nargs++] = coerce(l, val, st, n->span);
    tir_append(l->a, l->cur, add);
    break;
  }
  default: diag_ice("lower: unexpected statement kind %d", n->kind);
  }
}

static void lower_block(Lower *l, Node *block, TirBlock *into) {
  TirBlock *saved = l->cur;
  l->cur = into;
  for (int i = 0; i < block->list.len; i++) lower_stmt(l, block->list.items[i]);
  l->cur = saved;
}

/* The steps of a @grid extent as the manifest writes it, a postfix program
 * (manifest.c, postfix): conversions are none, each constant, dim and
 * operator one. Saturates at INT64_MAX. */
static int64_t grid_tokens(const TirInst *in) {
  int64_t n = 0;
  for (const TirInst *x = in; x;) { /* conversions and unary minus along the spine, then one level of operands */
    if (x->op == TIR_CONVERT) {
      x = x->args[0];
      continue;
    }
    n++;
    if (x->op == TIR_UNARY) {
      x = x->args[0];
      continue;
    }
    if (x->op != TIR_BINARY) break;
    int64_t r = grid_tokens(x->args[1]);
    if (!ck_add(n, r, &n)) return INT64_MAX;
    x = x->args[0];
  }
  return n;
}

static TirFunc *lower_with(Arena *a, Diags *d, const KernelInfo *info, Lower *lw) {
  Node *k = info->kernel;
  TirFunc *f = arena_alloc(a, sizeof *f);
  f->name = k->name;
  f->info = info;
  f->nparams = k->list.len;
  f->params = arena_alloc(a, sizeof(TirParam) * (size_t)(f->nparams + 1));
  for (int i = 0; i < f->nparams; i++) {
    Node *pn = k->list.items[i];
    TirParam *p = &f->params[i];
    p->name = pn->name;
    p->elem = pn->ty->elem;
    p->tensor = pn->ty->kind == TY_TENSOR;
    p->rank = p->tensor ? pn->ty->rank : 0;
    p->scratch = pn->op == PARAM_SCRATCH;
    p->zero = p->scratch && pn->a;
    for (int dd = 0; dd < p->rank; dd++) {
      p->dimname[dd] = pn->ty->dimname[dd];
      p->dims[dd] = pn->ty->dims[dd];
    }
  }
  Lower l = *lw;
  l.a = a, l.d = d, l.f = f, l.cur = &f->grid;
  f->grid_derived = info->grid_derived;
  for (int i = 0; i < info->ngrid; i++) {
    f->grid_value[f->ngrid++] = coerce(&l, lower_expr(&l, info->grid[i]), tir_scalar(S_I32), info->grid[i]->span);
    int64_t n = grid_tokens(f->grid_value[i]);
    if (n > MAX_GRID_TOKENS) {
      diag_error(d, info->grid[i]->span, "@grid: this extent is a program of %lld steps; the runtime evaluates at most %d",
                 (long long)n, MAX_GRID_TOKENS);
      return NULL;
    }
  }
  l.cur = &f->body;
  lower_block(&l, k->body, &f->body);
  *lw = l;
  tir_number(a, f);
  if (l.unroll_dim) return f; /* the caller merges the copies' loads first (onepass.c) */
  tileacc_rows(a, f);                                    /* tileacc.c */
  if (early_loads_wanted(f)) early_loads(a, f, false); /* early.c */
  remat_values(a, f);                                    /* remat.c */
  strip_rows(a, f);                                      /* strip.c */
  l2pf_mark(a, f);                                       /* l2pf.c */
  l2hint_mark(a, f);                                     /* l2hint.c */
  skip_mark(a, f);                                       /* skip.c */
  if (!tir_verify(d, f, "lowering")) return NULL;
  return f;
}

TirFunc *lower_kernel(Arena *a, Diags *d, const KernelInfo *info) {
  Lower l = {0};
  return lower_with(a, d, info, &l);
}

TirFunc *lower_kernel_unrolled(Arena *a, Diags *d, const KernelInfo *info, const char *dim, int k, int **ids,
                               int *nloops) {
  Lower l = {.unroll_dim = dim, .unroll_k = k};
  TirFunc *f = lower_with(a, d, info, &l);
  *ids = l.unroll_ids, *nloops = l.unroll_loops;
  return f;
}
