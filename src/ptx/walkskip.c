/* ptx/walkskip.c: a row walk's iteration, skipped by the warps past its end.
 *
 * A loop `for c in range(0, D, S)` walks a row in blocks of S columns; the
 * last block is partial (50257 columns in blocks of 16384 leave 1105 for
 * the last, 14 of 16 warps past the row). Inside a loop §15.19's chains do
 * not branch (a branch between a body's pieces cost every iteration more
 * than it saved), so every warp issued the last block's every
 * instruction: its loads and stores test their masks and do nothing, and
 * the arithmetic between runs on values that nothing will see. Counted in
 * the bf16 softmax's SASS, that block is a fifth of the kernel's
 * instructions.
 *
 * Here the whole body goes behind one warp-uniform branch at its top,
 * taken where some column of the warp can matter: the body is one region
 * either way (no branch splits it), and the test is a few instructions an
 * iteration. A warp skips an iteration only where doing it would change
 * nothing, which holds when every instruction of the body is
 *   - scalar arithmetic, a register-tile load, an elementwise operation
 *     (splat, broadcast in registers, iota, ...), or a store whose column
 *     start is the loop value (or scalar arithmetic of it and of values
 *     from before the loop): each store is a witness, writing nothing for
 *     a warp whose lowest column lies past the tensor's end or the slice;
 *   - a deferred accumulator's update (plan/deferred.c: each thread folds
 *     its own elements, the row meets after the loop), read and written
 *     only there, whose reduction's input is, at every column past the
 *     end, the fold's identity: 0 for a sum, -inf for a max and for the
 *     online logsumexp (whose update at -inf leaves (m, l) as they were:
 *     the running max starts finite, px_defer_enter). Which value a column
 *     past the end holds follows the input back (slack_value): a load's
 *     masked element reads 0; `where(c + iota < N, a, b)` is b there (the
 *     where is then a witness: c + the warp's lowest column >= N); splats
 *     of constants, conversions and + - * max min of known values fold.
 * Nothing in the body may exchange through shared memory, wait on a
 * barrier, copy asynchronously or branch; the loop has no rings, no
 * prefetch, no shifted walk and no cluster split (px_emit_for). A warp
 * whose every witness is past skips; since every column a thread of the
 * warp holds is at least the warp's lowest, it has nothing to write and
 * only identities to fold. (A sum of negative zeros may then end -0
 * where every warp's +0 would have made it +0: the same value.) Spec 15.25;
 * `phobosc --no-walk-skip` turns it off. */
#include <math.h>
#include <string.h>

#include "emitter.h"

typedef struct Witness {
  const TirInst *v;     /* the tile whose warp columns are tested */
  const TirInst *start; /* the column start (a scalar of the loop) */
  const char *ext;      /* the bound: a register or an immediate */
  const TirInst *bound; /* ... or the scalar it comes from (where) */
  int64_t len;          /* the slice's logical length (0: the tile's) */
} Witness;

enum { MAX_WITNESS = 64 };

typedef struct Walk {
  Emitter *e;
  const TirInst *loop;
  Witness w[MAX_WITNESS];
  int nw;
} Walk;

static bool in_body(const TirInst *loop, const TirInst *x) { return x->pos > loop->pos && x->pos <= loop->end; }

/* a scalar the test at the body's top can compute: the loop value, a
 * value from before the loop, a constant or a dim, or + - * of those */
static bool early_scalar(const TirInst *loop, const TirInst *s, int depth) {
  if (!s || s->ty.rank != 0 || depth > 8) return false;
  if (s == loop || !in_body(loop, s)) return s->ty.elem == S_I32;
  if (s->op == TIR_CONST || s->op == TIR_DIM) return s->ty.elem == S_I32;
  if (s->op == TIR_BINARY && (s->aux == '+' || s->aux == '-' || s->aux == '*') && s->ty.elem == S_I32)
    return early_scalar(loop, s->args[0], depth + 1) && early_scalar(loop, s->args[1], depth + 1);
  return false;
}

static const char *early_operand(Walk *w, const TirInst *s) {
  Emitter *e = w->e;
  if (s == w->loop || !in_body(w->loop, s)) return px_reg(e, s, 0);
  if (s->op == TIR_CONST) return arena_printf(e->a, "%lld", (long long)s->ival);
  if (s->op == TIR_DIM) return px_ext(e, s->aux, s->aux2);
  const char *a = early_operand(w, s->args[0]), *b = early_operand(w, s->args[1]), *d = px_tmp(e, RC_B32);
  px_out(e, "%s.s32 %s, %s, %s;", s->aux == '+' ? "add" : s->aux == '-' ? "sub" : "mul.lo", d, a, b);
  return d;
}

static bool add_witness(Walk *w, Witness x) {
  if (w->nw == MAX_WITNESS) return false;
  w->w[w->nw++] = x;
  return true;
}

/* an access along the walk: its last span's start computable at the top,
 * its value's layout one whose warps have a lowest column */
static bool access_witness(Walk *w, const TirInst *acc, const TirInst *v) {
  int k = tir_last_span(acc);
  if (k < 0 || !early_scalar(w->loop, acc->subs[k].start, 0)) return false;
  if (!(plan_is_blocked(v) || plan_is_columns(v))) return false;
  return add_witness(w, (Witness){.v = v, .start = acc->subs[k].start, .ext = px_ext(w->e, acc->aux, k),
                                  .len = acc->subs[k].len});
}

/* cond is `start + iota < n` over the last axis: false at every column
 * c with start + c >= n */
static bool where_witness(Walk *w, const TirInst *cond) {
  if (cond->op != TIR_BINARY || cond->aux != '<' || cond->ty.rank == 0) return false;
  const TirInst *a = cond->args[0], *b = cond->args[1];
  if (b->op != TIR_SPLAT || !early_scalar(w->loop, b->args[0], 0)) return false;
  if (a->op != TIR_BINARY || a->aux != '+' || a->ty.elem != S_I32) return false;
  for (int k = 0; k < 2; k++) {
    const TirInst *s = a->args[k], *io = a->args[1 - k];
    if (s->op != TIR_SPLAT || io->op != TIR_IOTA || io->aux != io->ty.rank - 1) continue;
    if (!early_scalar(w->loop, s->args[0], 0)) continue;
    if (!(plan_is_blocked(cond) || plan_is_columns(cond))) return false;
    return add_witness(w, (Witness){.v = cond, .start = s->args[0], .bound = b->args[0], .len = tir_last_dim(cond)});
  }
  return false;
}

/* The value every column past the walk's end holds in x (*v), with the
 * witnesses that say so; false where it cannot tell. */
static bool slack_value(Walk *w, const TirInst *x, double *v, int depth) {
  if (depth > 16 || !in_body(w->loop, x)) return false;
  double a, b;
  switch (x->op) {
  case TIR_LOAD:
    *v = 0;
    return x->ty.rank > 0 && x->plan->res == RES_REG && access_witness(w, x, x);
  case TIR_SPLAT:
    if (x->args[0]->op != TIR_CONST) return false;
    *v = tir_float_elem(x->args[0]->ty.elem) ? x->args[0]->fval : (double)x->args[0]->ival;
    return true;
  case TIR_CONVERT: /* exact for 0 and infinities into any type; f32 rounds, f64 keeps */
    if (!slack_value(w, x->args[0], &a, depth + 1)) return false;
    if (x->ty.elem == S_F64 || a == 0 || (isinf(a) && tir_float_elem(x->ty.elem))) *v = a;
    else if (x->ty.elem == S_F32) *v = (double)(float)a;
    else return false;
    return true;
  case TIR_SELECT:
    return where_witness(w, x->args[0]) && slack_value(w, x->args[2], v, depth + 1);
  case TIR_BINARY:
    if (x->ty.elem != S_F32 || !slack_value(w, x->args[0], &a, depth + 1) || !slack_value(w, x->args[1], &b, depth + 1))
      return false;
    switch (x->aux) {
    case '+': *v = (double)((float)a + (float)b); break;
    case '-': *v = (double)((float)a - (float)b); break;
    case '*': *v = (double)((float)a * (float)b); break;
    case TOP_MAX: *v = a > b ? a : b; break;
    case TOP_MIN: *v = a < b ? a : b; break;
    default: return false;
    }
    return !isnan(*v);
  default: return false;
  }
}

/* a partial reduction of the loop's deferred accumulator d whose input is
 * the identity past the end: d's own, or the logsumexp's sum of
 * exp(x - mnew) over the same x */
static bool reduce_ok(Walk *w, const TirInst *r) {
  if (!r->plan->partial) return false;
  for (const PlanDefer *d = w->loop->plan->defer; d; d = d->next) {
    const TirInst *x = d->red->args[0];
    if (d->kind == DEFER_LSE && r != d->red) {
      const TirInst *ex = r->args[0], *y = ex->op == TIR_MATH && ex->aux == TMATH_EXP ? ex->args[0] : NULL;
      if (r->aux != TRED_SUM || !y || y->op != TIR_BINARY || y->aux != '-' || y->args[0] != x) continue;
    } else if (r != d->red) {
      continue;
    }
    double v;
    if (!slack_value(w, x, &v, 0)) return false;
    return d->kind == DEFER_SUM ? v == 0 : v == -INFINITY;
  }
  return false;
}

static bool member_ok(Walk *w, const TirInst *x) {
  Emitter *e = w->e;
  if (x->pos < e->f->ninsts && e->barrier_before[x->pos]) return false;
  if (x->body.len || x->body2.len || x->cond.len) return false;
  if (tir_scalar_arith(x)) return true;
  switch (x->op) {
  case TIR_READ: return x->args[0]->plan->res == RES_REG && x->plan->res == RES_REG; /* (a deferred slot is read by its update alone) */
  case TIR_WRITE: return !x->nsubs && x->args[0]->plan->res == RES_REG && plan_defers_slot(w->loop, x->args[0]);
  case TIR_REDUCE: return x->plan->res == RES_REG && reduce_ok(w, x);
  case TIR_STORE:
    return x->aux2 == TSTORE_WRITE && px_skip_member_ok(e, x) && x->args[0]->ty.rank > 0 &&
           access_witness(w, x, x->args[0]);
  default: return (x->op == TIR_LOAD || tir_elementwise_op(x->op)) && x->ty.rank > 0 && px_skip_member_ok(e, x);
  }
}

/* start as base + a constant offset */
static const TirInst *split_start(const TirInst *s, int64_t *off) {
  *off = 0;
  if (s->op == TIR_BINARY && s->aux == '+')
    for (int k = 0; k < 2; k++)
      if (s->args[k]->op == TIR_CONST) return *off = s->args[k]->ival, s->args[1 - k];
  return s;
}

static bool same_geom(const TirInst *a, const TirInst *b) {
  if (plan_is_blocked(a) != plan_is_blocked(b) || plan_is_columns(a) != plan_is_columns(b)) return false;
  BlockGeom x = plan_block_geom(a), y = plan_block_geom(b);
  return x.V == y.V && x.tc == y.tc && x.wc == y.wc && x.reps_c == y.reps_c &&
         a->plan->phys[a->ty.rank - 1] == b->plan->phys[b->ty.rank - 1];
}

/* the bound as a name that costs no instruction (early_operand emits only
 * for arithmetic in the body), or NULL */
static const char *bound_name(Walk *w, const Witness *x) {
  if (x->ext) return x->ext;
  return x->bound->op == TIR_BINARY && in_body(w->loop, x->bound) ? NULL : early_operand(w, x->bound);
}

/* Whether witness i adds nothing to the test: another with the same warp
 * columns, bound and length starts at the same base no later (a strip's
 * stores at c, c + W, ...; a load and the where that masks it) */
static bool implied(Walk *w, int i) {
  const Witness *x = &w->w[i];
  const char *nx = bound_name(w, x);
  int64_t ox, oy;
  const TirInst *bx = split_start(x->start, &ox);
  for (int j = 0; nx && j < w->nw; j++) {
    const Witness *y = &w->w[j];
    if (j == i || y->len != x->len || !same_geom(x->v, y->v)) continue;
    const TirInst *by = split_start(y->start, &oy);
    const char *ny = bound_name(w, y);
    if (by == bx && (oy < ox || (oy == ox && j < i)) && ny && !strcmp(nx, ny)) return true;
  }
  return false;
}

/* Emits, at the top of loop's body, the branch past it for the warps that
 * would change nothing there; returns its label (px_walk_skip_end places
 * it), or -1 where the body does not qualify. */
int px_walk_skip_begin(Emitter *e, const TirInst *loop) {
  if (e->p->no_walk_skip || e->replay || !loop->body.len || tir_has_dot(&e->f->body) || e->f->staged) return -1;
  Walk *w = arena_alloc(e->a, sizeof *w);
  *w = (Walk){.e = e, .loop = loop};
  for (int i = 0; i < loop->body.len; i++)
    if (!member_ok(w, loop->body.insts[i])) return -1;
  if (!w->nw) return -1; /* nothing says a warp may skip */
  /* what waits to be done for values from outside the body is done on
   * every warp's path, and a barrier due goes before the branch */
  for (int i = 0; i < loop->body.len; i++)
    for (int k = 0; k < loop->body.insts[i]->nargs; k++) {
      const TirInst *a = loop->body.insts[i]->args[k];
      if (a && !in_body(loop, a)) px_flush_unpack(e, a);
    }
  if (e->sync_pending) px_emit_pending_sync(e);
  const char *run = px_tmp(e, RC_PRED);
  px_out(e, "setp.ne.u32 %s, 0, 0; // a warp past the walk's end skips the iteration (walkskip.c)", run);
  for (int i = 0; i < w->nw; i++) {
    const Witness *x = &w->w[i];
    if (implied(w, i)) continue;
    const char *bound = x->ext ? x->ext : early_operand(w, x->bound);
    const char *start = early_operand(w, x->start), *c0 = px_warp_col0(e, x->v);
    if (!c0) { /* (blocked and columns layouts always have one) */
      px_out(e, "setp.eq.u32 %s, 0, 0;", run);
      break;
    }
    const char *col = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED);
    px_or_warp_inside(e, run, x->v, c0, col, p, start, bound, x->len);
  }
  int L = px_new_label(e);
  px_out(e, "@!%s bra.uni $Lwalk%d;", run, L);
  return L;
}

void px_walk_skip_end(Emitter *e, int label) {
  if (label >= 0) px_label(e, "walk", label);
}
