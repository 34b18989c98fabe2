/* strip.c: rows too long for a thread's registers, strip-mined.
 *
 * A tile as wide as a whole row (Triton's `BLOCK_SIZE =
 * next_power_of_2(N)`, one program a row) is loaded, computed and stored
 * whole: every instruction covers all of a thread's elements before the
 * next starts, so all of them are live at once. At 65536 f32 columns over
 * 1024 threads that is 64 registers a value, and ptxas spills. After
 * remat.c has cut the block at its reductions, each piece is a chain from
 * loads to stores or to a reduction; this pass runs such a chain in G
 * strips of W = BN / G columns, one after another: each strip's loads,
 * elementwise operations and stores on [.., W] tiles, and each reduction's
 * input folded strip by strip into a running [.., W] tile (`max` or `+`,
 * elementwise) that one reduction ends. A strip's columns are the same
 * columns of the same threads as in the whole tile (W is a multiple of the
 * threads' span), so only the order of the work changes: the loads of a
 * strip are in flight together, and a thread holds a strip at a time.
 *
 * A chain (a connected set of tiles of last dim BN, the values built from
 * them) is strip-mined when its widest value takes more than half a
 * thread's registers (the measure of remat.c) and every reader of its
 * values is in the chain: elementwise operations, splats, broadcasts,
 * `iota`, loads, stores and the reductions that end it, all in one block,
 * with no other store or arrive among them and every reduction after all
 * of them. G is the least power of two that leaves a strip 16 registers a
 * thread or fewer, and BN must divide by it. A chain that only stores
 * (no reduction reads it), under an occupancy copy's budget of 32
 * registers, is cut once it is wider than one strip of an eighth of the
 * budget, and issues each strip's loads before the rest of the strip
 * before it. A softmax's max and its sum of exp(x - max), two chains after
 * remat.c, run as one with an online logsumexp (Fuse, below). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "tir.h"

enum { STRIP_REGS = 16 };

typedef struct Strip {
  Arena *a;
  TirFunc *f;
  int n;        /* ids below n are the originals */
  int threads;
  int *where;   /* by id: index in the block being rewritten, -1 elsewhere */
  TirInst **cl; /* by id: the value's copy in the strip being made */
  TirInst **acc; /* by id of a reduction: its running tile */
} Strip;

static int64_t per_thread(const Strip *s, const TirInst *v) { return tir_thread_regs(s->f, v); }

static bool member_op(const TirInst *in, int64_t bn) {
  if (in->op == TIR_STORE) return in->nargs > 0 && in->args[0]->ty.rank > 0 && tir_last_dim(in->args[0]) == bn;
  return (in->op == TIR_LOAD || tir_elementwise_op(in->op)) && in->ty.rank > 0 && tir_last_dim(in) == bn;
}

static TirInst *scalar(Strip *s, TirBlock *out, TirOp op, TirType ty) {
  TirInst *c = tir_new(s->a, s->f, op, ty);
  tir_append(s->a, out, c);
  return c;
}

static TirInst *i32_const(Strip *s, TirBlock *out, int64_t v) {
  TirInst *c = scalar(s, out, TIR_CONST, tir_scalar(S_I32));
  c->ival = v, c->fval = (double)v;
  return c;
}

/* op(x, y[, z]) of type ty (any that is NULL left out), into out */
static TirInst *tile_op(Strip *s, TirBlock *out, TirOp op, int aux, TirType ty, TirInst *x, TirInst *y, TirInst *z) {
  TirInst *c = scalar(s, out, op, ty);
  c->aux = aux;
  TirInst *in[3] = {x, y, z};
  for (int k = 0; k < 3; k++)
    if (in[k]) c->args[c->nargs++] = in[k];
  return c;
}

static TirInst *add(Strip *s, TirBlock *out, TirType ty, TirInst *x, TirInst *y) {
  return tile_op(s, out, TIR_BINARY, '+', ty, x, y, NULL);
}

static bool in_chain(const Strip *s, const TirInst *v, const int *root, int r) {
  return v && v->id < s->n && s->where[v->id] >= 0 && root[s->where[v->id]] == r;
}

/* strip j (columns j*W :+ W) of member in, into out; with jv (a loop's
 * induction value, the strip's first column) the strip at jv instead */
static void copy_member(Strip *s, TirInst *in, const int *root, int r, int64_t w, int j, TirInst *jv, TirBlock *out) {
  TirType ty = in->ty;
  if (ty.rank > 0) ty.dims[ty.rank - 1] = w;
  TirInst *off = NULL;
  if ((in->op == TIR_LOAD || in->op == TIR_STORE) && (j > 0 || jv))
    off = add(s, out, tir_scalar(S_I32), in->subs[tir_last_span(in)].start, jv ? jv : i32_const(s, out, j * w));
  TirInst *c = tir_new(s->a, s->f, in->op, ty);
  int id = c->id;
  *c = *in;
  c->id = id, c->ty = ty, c->plan = NULL;
  for (int k = 0; k < c->nargs; k++)
    if (in_chain(s, in->args[k], root, r)) c->args[k] = s->cl[in->args[k]->id];
  if (in->op == TIR_LOAD || in->op == TIR_STORE) {
    c->subs[tir_last_span(in)].len = w;
    if (off) c->subs[tir_last_span(in)].start = off;
  }
  tir_append(s->a, out, c);
  if (in->op == TIR_IOTA && in->aux == ty.rank - 1 && (j > 0 || jv)) {
    TirInst *k = jv ? jv : i32_const(s, out, j * w);
    TirInst *sp = scalar(s, out, TIR_SPLAT, ty);
    sp->args[0] = k, sp->nargs = 1;
    c = add(s, out, ty, c, sp);
  }
  s->cl[in->id] = c;
}

/* An online logsumexp across strips (spec 15.16; the loop form is
 * deferred.c's, 15.15): a chain A whose value v ends in m = rowmax(v), and
 * a chain B that computes v again (remat.c's copy) only for s =
 * rowsum(exp(v - m)). Cut alone, A and B each read the row: B's strips
 * wait for m. Fused, B is gone: where m is A's only reduction, A's strips
 * are a loop with the online logsumexp of the rows in its body (lse_loop);
 * elsewhere they are unrolled and keep two running tiles, M (the elementwise
 * max so far, from -FLT_MAX: finite, so that a column every strip masks to
 * -inf weighs 0, not NaN, with no test an element) and S (the sum of
 * exp(v - M) so far, rescaled by exp(M_old - M) as M grows), then m0 =
 * rowmax(M), s0 = rowsum(S exp(M - m0)). Either way the row values are made
 * what the unfused chains give (row_values: m -inf and s NaN where nothing
 * was finite): a softmax written one program a row (Triton's tutorial)
 * reads its row twice instead of three times, as the same softmax written
 * as an online loop does. */
typedef struct Fuse {
  TirInst *red1, *red2; /* m = rowmax(v), s = rowsum(exp(v - m)) */
  const TirInst *v;     /* A's value */
  int rb;               /* B's root */
} Fuse;

/* a and b compute the same tile: the same operations on the same operands
 * (scalars equal by tir_same_value), loads of the same tensor at the same
 * subscripts */
static bool same_tile(const TirInst *a, const TirInst *b, int depth) {
  if (a == b) return true;
  if (!a || !b || depth > 64 || a->op != b->op || a->aux != b->aux || a->aux2 != b->aux2 || a->nargs != b->nargs ||
      a->nsubs != b->nsubs || !tir_same_type(&a->ty, &b->ty))
    return false;
  if (a->ty.rank == 0) return tir_same_value((TirInst *)a, (TirInst *)b, NULL, NULL);
  if (a->op != TIR_LOAD && !tir_elementwise_op(a->op)) return false;
  for (int k = 0; k < a->nsubs; k++)
    if (a->subs[k].point != b->subs[k].point || a->subs[k].len != b->subs[k].len ||
        !tir_same_value(a->subs[k].start, b->subs[k].start, NULL, NULL))
      return false;
  for (int k = 0; k < a->nargs; k++)
    if (!same_tile(a->args[k], b->args[k], depth + 1)) return false;
  return true;
}

static TirInst *f32_splat(Strip *s, TirBlock *out, TirType ty, double v) { /* an f32 constant as a tile of ty */
  TirInst *k = scalar(s, out, TIR_CONST, tir_scalar(S_F32));
  k->fval = v, k->ival = 0;
  return tile_op(s, out, TIR_SPLAT, 0, ty, k, NULL, NULL);
}

/* every reader of `from` in b (nested blocks too) reads `to` */
static void reread(TirBlock *b, const TirInst *from, TirInst *to) {
  for (int i = 0; i < b->len; i++) {
    TirInst *x = b->insts[i];
    for (int k = 0; k < x->nargs; k++)
      if (x->args[k] == from) x->args[k] = to;
    reread(&x->cond, from, to);
    reread(&x->body, from, to);
    reread(&x->body2, from, to);
  }
}

/* m and s made what the unfused chains give, from m0 and s0 whose max
 * started at -FLT_MAX: where m0 is above it, m0 and s0; where it is not,
 * a row with some finite value (s0 > 0: a row of -3.4e38 values) keeps
 * them, and a row of -inf only gets m = -inf and s = NaN */
static void row_values(Strip *s, TirBlock *out, TirInst *m0, TirInst *s0, TirInst **mx, TirInst **sx) {
  TirType rt = m0->ty, bt = rt;
  bt.elem = S_BOOL;
  TirInst *above = tile_op(s, out, TIR_BINARY, '>', bt, m0, f32_splat(s, out, rt, -FLT_MAX), NULL);
  TirInst *some = tile_op(s, out, TIR_BINARY, '>', bt, s0, f32_splat(s, out, rt, 0.0), NULL);
  TirInst *ninf = f32_splat(s, out, rt, -INFINITY), *nan = f32_splat(s, out, rt, NAN);
  TirInst *m1 = tile_op(s, out, TIR_SELECT, 0, rt, some, m0, ninf), *s1 = tile_op(s, out, TIR_SELECT, 0, rt, some, s0, nan);
  *mx = tile_op(s, out, TIR_SELECT, 0, rt, above, m0, m1), *sx = tile_op(s, out, TIR_SELECT, 0, rt, above, s0, s1);
}

/* The fused logsumexp as a loop over the strips (spec 15.16): A's members
 * at the strip's first column jv, and the online logsumexp of the rows,
 *   mnew = tmax(read M, rowmax(v));  write L, read L * exp(read M - mnew) +
 *   rowsum(exp(v - mnew));  write M, mnew
 * from M = -FLT_MAX (finite: a strip that masks all of a row to -inf then
 * weighs 0, where -inf - -inf would make the sum NaN for good when the
 * loop is not deferred), L = 0: the form plan/deferred.c (spec 15.15) keeps within
 * each thread, one (m, l) a thread's row, its threads meeting once after
 * the loop. Unrolled, the strips kept a running max and sum a column,
 * two exponentials an element: the one-block softmax port over 4096 x
 * 50257 f32 ran 789.2 us that way, 682.4 as this loop (H100, 12-06f call
 * 3; the same softmax written by hand as a loop, 618.4). *m and *l read M
 * and L after the loop; cut_chain places it where A's last member was. */
static void lse_loop(Strip *s, TirBlock *out, const int *root, int r, int last, const TirBlock *b, int64_t w, int g,
                     const Fuse *fz, TirInst **m, TirInst **l) {
  TirType rt = fz->red1->ty, i32 = tir_scalar(S_I32);
  TirInst *M = scalar(s, out, TIR_VAR, rt), *L = scalar(s, out, TIR_VAR, rt);
  M->name = "strip_max", L->name = "strip_sum";
  TirInst *m0 = f32_splat(s, out, rt, -FLT_MAX);
  tile_op(s, out, TIR_WRITE, 0, rt, M, m0, NULL);
  TirInst *l0 = f32_splat(s, out, rt, 0.0);
  tile_op(s, out, TIR_WRITE, 0, rt, L, l0, NULL);
  TirInst *lo = i32_const(s, out, 0);
  TirInst *hi = i32_const(s, out, (int64_t)g * w);
  TirInst *step = i32_const(s, out, w);
  TirInst *loop = tile_op(s, out, TIR_FOR, 0, i32, lo, hi, step);
  loop->name = "strip";
  TirBlock *body = &loop->body;
  for (int i = 0; i <= last; i++)
    if (root[i] == r) copy_member(s, b->insts[i], root, r, w, 0, loop, body);
  /* one instruction a statement: the order is the program's */
  TirInst *v = s->cl[fz->v->id];
  TirInst *ra = tile_op(s, body, TIR_READ, 0, rt, M, NULL, NULL);
  TirInst *rm = tile_op(s, body, TIR_REDUCE, TRED_MAX, rt, v, NULL, NULL);
  TirInst *mnew = tile_op(s, body, TIR_BINARY, TOP_MAX, rt, ra, rm, NULL);
  TirInst *rl = tile_op(s, body, TIR_READ, 0, rt, L, NULL, NULL);
  TirInst *rb = tile_op(s, body, TIR_READ, 0, rt, M, NULL, NULL);
  TirInst *d = tile_op(s, body, TIR_BINARY, '-', rt, rb, mnew, NULL);
  TirInst *c = tile_op(s, body, TIR_MATH, TMATH_EXP, rt, d, NULL, NULL);
  TirInst *gl = tile_op(s, body, TIR_BINARY, '*', rt, rl, c, NULL);
  TirInst *bc = tile_op(s, body, TIR_BROADCAST, 0, v->ty, mnew, NULL, NULL);
  TirInst *y = tile_op(s, body, TIR_BINARY, '-', v->ty, v, bc, NULL);
  TirInst *ex = tile_op(s, body, TIR_MATH, TMATH_EXP, v->ty, y, NULL, NULL);
  TirInst *q = tile_op(s, body, TIR_REDUCE, TRED_SUM, rt, ex, NULL, NULL);
  TirInst *h = tile_op(s, body, TIR_BINARY, '+', rt, gl, q, NULL);
  tile_op(s, body, TIR_WRITE, 0, rt, L, h, NULL);
  tile_op(s, body, TIR_WRITE, 0, rt, M, mnew, NULL);
  *m = tile_op(s, out, TIR_READ, 0, rt, M, NULL, NULL);
  *l = tile_op(s, out, TIR_READ, 0, rt, L, NULL, NULL);
}

/* Rewrites b: the chain rooted at r runs in g strips of w columns, placed
 * where its last member was (every operand is defined there, and no write
 * lies among its members but its own stores); each reduction that reads
 * it reads the running tile its strips fold into. */
static void cut_chain(Strip *s, TirBlock *b, const int *root, int r, int last, int64_t w, int g, bool ahead,
                      const Fuse *fz) {
  for (int i = 0; i <= last; i++) { /* elements a thread as written, as plan_most_blocked_regs counts them */
    const TirInst *in = b->insts[i];
    if (root[i] != r || in->op == TIR_STORE) continue;
    int64_t e = (tir_elems(&in->ty) + s->threads - 1) / s->threads * (sema_scalar_bytes(in->ty.elem) == 8 ? 2 : 1);
    if (e > s->f->strip_widest) s->f->strip_widest = e;
  }
  /* the fused logsumexp as a loop (lse_loop) where m is the chain's only
   * reduction: then no strip is unrolled (gs 0) */
  bool as_loop = fz != NULL;
  for (int i = last + 1; i < b->len && as_loop; i++)
    if (b->insts[i]->op == TIR_REDUCE && in_chain(s, b->insts[i]->args[0], root, r) && b->insts[i] != fz->red1)
      as_loop = false;
  int gs = as_loop ? 0 : g;
  /* each strip's loads in a block of their own, the rest in another */
  TirBlock *ld = arena_alloc(s->a, sizeof(TirBlock) * (size_t)g), *rest = arena_alloc(s->a, sizeof(TirBlock) * (size_t)g);
  TirInst *M = NULL, *S = NULL; /* the online logsumexp's running tiles (fz) */
  for (int j = 0; j < gs; j++) {
    ld[j] = (TirBlock){0}, rest[j] = (TirBlock){0};
    for (int i = 0; i <= last; i++)
      if (root[i] == r) copy_member(s, b->insts[i], root, r, w, j, NULL, b->insts[i]->op == TIR_LOAD && ahead ? &ld[j] : &rest[j]);
    if (fz) {
      TirInst *a = s->cl[fz->v->id];
      TirType ty = a->ty;
      if (j == 0) M = f32_splat(s, &rest[j], ty, -FLT_MAX);
      TirInst *mn = tile_op(s, &rest[j], TIR_BINARY, TOP_MAX, ty, M, a, NULL);
      TirInst *e = tile_op(s, &rest[j], TIR_MATH, TMATH_EXP, ty, tile_op(s, &rest[j], TIR_BINARY, '-', ty, a, mn, NULL), NULL, NULL);
      if (j == 0) { /* S was 0 */
        S = e;
      } else {
        TirInst *c = tile_op(s, &rest[j], TIR_MATH, TMATH_EXP, ty, tile_op(s, &rest[j], TIR_BINARY, '-', ty, M, mn, NULL), NULL, NULL);
        S = add(s, &rest[j], ty, tile_op(s, &rest[j], TIR_BINARY, '*', ty, S, c, NULL), e);
      }
      M = mn;
    }
    for (int i = last + 1; i < b->len; i++) { /* each reduction's running tile */
      TirInst *red = b->insts[i];
      if (red->op != TIR_REDUCE || !in_chain(s, red->args[0], root, r) || (fz && red == fz->red1)) continue;
      TirInst *v = s->cl[red->args[0]->id];
      if (j == 0) {
        s->acc[red->id] = v;
      } else {
        TirInst *c = scalar(s, &rest[j], TIR_BINARY, v->ty);
        c->aux = red->aux == TRED_MAX ? TOP_MAX : red->aux == TRED_MIN ? TOP_MIN : '+';
        c->args[0] = s->acc[red->id], c->args[1] = v, c->nargs = 2;
        s->acc[red->id] = c;
      }
    }
  }
  /* ahead: the loads of strip j + 1 issued before the rest of strip j, so
   * that they are in flight while it computes and stores */
  TirBlock out = {0};
  for (int i = 0; i < last; i++)
    if (root[i] != r) tir_append(s->a, &out, b->insts[i]);
  TirInst *mx = NULL, *sx = NULL; /* m and s as the unfused chains give them */
  int fixed = 0;
  if (as_loop) {
    TirInst *m0, *s0;
    lse_loop(s, &out, root, r, last, b, w, g, fz, &m0, &s0);
    row_values(s, &out, m0, s0, &mx, &sx);
    fixed = out.len;
  }
  for (int j = -1; j < gs; j++) {
    if (j + 1 < gs)
      for (int k = 0; k < ld[j + 1].len; k++) tir_append(s->a, &out, ld[j + 1].insts[k]);
    if (j >= 0)
      for (int k = 0; k < rest[j].len; k++) tir_append(s->a, &out, rest[j].insts[k]);
  }
  for (int i = last + 1; i < b->len; i++) {
    TirInst *in = b->insts[i];
    /* B: its sum comes from S or the loop's L; m from the loop's M */
    if (fz && (root[i] == fz->rb || in == fz->red2 || (as_loop && in == fz->red1))) continue;
    if (fz && in == fz->red1) {
      /* m0 = rowmax(M), then s = rowsum(S exp(M - m0)) at once (it reads
       * nothing else), then the row values: m0 is -FLT_MAX where nothing
       * was above it, and s 0 where nothing was finite: m -inf and s NaN
       * there, as unfused; a row of -FLT_MAX values keeps m0 and its sum */
      in->args[0] = M;
      tir_append(s->a, &out, in);
      TirInst *red2 = fz->red2;
      TirType ty = S->ty;
      TirInst *bm = tile_op(s, &out, TIR_BROADCAST, 0, ty, in, NULL, NULL);
      TirInst *c = tile_op(s, &out, TIR_MATH, TMATH_EXP, ty, tile_op(s, &out, TIR_BINARY, '-', ty, M, bm, NULL), NULL, NULL);
      red2->args[0] = tile_op(s, &out, TIR_BINARY, '*', ty, S, c, NULL);
      tir_append(s->a, &out, red2);
      row_values(s, &out, in, red2, &mx, &sx);
      fixed = out.len;
      continue;
    }
    if (in->op == TIR_REDUCE && in_chain(s, in->args[0], root, r)) in->args[0] = s->acc[in->id];
    tir_append(s->a, &out, in);
  }
  /* every reader of m and s (all after them) reads the row values */
  if (mx) {
    TirBlock tail = {.insts = &out.insts[fixed], .len = out.len - fixed};
    reread(&tail, fz->red1, mx);
    reread(&tail, fz->red2, sx);
  }
  b->insts = out.insts, b->len = out.len, b->cap = out.cap;
}

/* What the analysis knows of each chain (by its root's index): the span of
 * its members, its first reader outside it, and whether it may be cut. */
typedef struct Chain {
  int first, last;  /* members' indices */
  int first_red;    /* the first reduction that reads a member */
  int writes;       /* member stores */
  int64_t widest;   /* registers a thread of its widest value */
  bool bad;
} Chain;

static int64_t chain_dim(const TirInst *in) { return in->op == TIR_STORE ? (in->nargs ? tir_last_dim(in->args[0]) : 0) : tir_last_dim(in); }

/* a reader of a chain's value inside a nested block makes the chain bad */
static void nested_reads(const Strip *s, const TirBlock *b, const int *root, Chain *c) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    for (int k = 0; k < in->nargs; k++) {
      const TirInst *o = in->args[k];
      if (o && o->id < s->n && s->where[o->id] >= 0 && root[s->where[o->id]] >= 0) c[root[s->where[o->id]]].bad = true;
    }
    nested_reads(s, &in->cond, root, c);
    nested_reads(s, &in->body, root, c);
    nested_reads(s, &in->body2, root, c);
  }
}

/* Whether chain r ends in m = rowmax(v) (f32) and a later chain B computes
 * only s = rowsum(exp(v' - m)) with v' the same tile as v (Fuse), and
 * nothing from A's first member to B's last writes memory: B's loads then
 * read what A's read (parameters may alias, so any store counts, as in
 * remat.c). */
static bool lse_pair(const Strip *s, const TirBlock *b, const int *root, const Chain *c, const int *writes_before, int r,
                     Fuse *fz) {
  int fr = c[r].first_red;
  if (fr >= b->len) return false;
  TirInst *red1 = b->insts[fr];
  if (red1->op != TIR_REDUCE || red1->aux != TRED_MAX || red1->ty.elem != S_F32 || !in_chain(s, red1->args[0], root, r))
    return false;
  for (int k = fr + 1; k < b->len; k++) {
    TirInst *red2 = b->insts[k];
    if (red2->op != TIR_REDUCE || red2->aux != TRED_SUM || red2->ty.elem != S_F32) continue;
    TirInst *e = red2->args[0];
    int we = e->id < s->n ? s->where[e->id] : -1;
    int rb = we >= 0 ? root[we] : -1;
    if (rb < 0 || rb == r || e->op != TIR_MATH || e->aux != TMATH_EXP) continue;
    TirInst *d = e->args[0];
    if (d->op != TIR_BINARY || d->aux != '-' || d->args[1]->op != TIR_BROADCAST || d->args[1]->args[0] != red1 ||
        !same_tile(d->args[0], red1->args[0], 0))
      continue;
    /* the first sum of exp(v' - m) decides: a later one would be read after it */
    const Chain *cb = &c[rb];
    if (cb->bad || cb->writes || cb->first_red != k || cb->first < fr || cb->last > k ||
        writes_before[cb->last + 1] - writes_before[c[r].first])
      return false;
    for (int i = cb->last + 1; i < b->len; i++) { /* s is B's only reader */
      const TirInst *x = b->insts[i];
      if (i == k) continue;
      for (int q = 0; q < x->nargs; q++) {
        int wq = x->args[q] && x->args[q]->id < s->n ? s->where[x->args[q]->id] : -1;
        if (wq >= 0 && root[wq] == rb) return false;
      }
    }
    *fz = (Fuse){.red1 = red1, .red2 = red2, .v = red1->args[0], .rb = rb};
    return true;
  }
  return false;
}

/* Finds the chains of b (a union of members with the members they read)
 * and cuts the first that qualifies; returns whether it cut one. Linear in
 * the block's length: a kernel of 20,000 statements plans in time. */
static bool strip_block(Strip *s, TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    if (strip_block(s, &in->cond) || strip_block(s, &in->body) || strip_block(s, &in->body2)) return true;
  }
  if (b->len < 2) return false;
  int *parent = arena_alloc(s->a, sizeof(int) * (size_t)b->len);
  int *root = arena_alloc(s->a, sizeof(int) * (size_t)b->len);
  int *writes_before = arena_alloc(s->a, sizeof(int) * (size_t)(b->len + 1));
  Chain *c = arena_alloc(s->a, sizeof(Chain) * (size_t)b->len);
  for (int i = 0; i < b->len; i++) {
    parent[i] = i;
    s->where[b->insts[i]->id] = i;
  }
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    int64_t bn = chain_dim(in);
    if (!bn || !member_op(in, bn)) continue;
    for (int k = 0; k < in->nargs; k++) {
      TirInst *o = in->args[k];
      if (!o || o->id >= s->n || s->where[o->id] < 0) continue;
      if (member_op(o, bn) && o->op != TIR_STORE) parent[tir_uf_find(parent, i)] = tir_uf_find(parent, s->where[o->id]);
    }
  }
  writes_before[0] = 0;
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    root[i] = chain_dim(in) && member_op(in, chain_dim(in)) ? tir_uf_find(parent, i) : -1;
    writes_before[i + 1] = writes_before[i] + tir_inst_writes(in);
    c[i] = (Chain){.first = -1, .last = -1, .first_red = b->len};
  }
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    int r = root[i];
    if (r >= 0) {
      Chain *ch = &c[r];
      if (ch->first < 0) ch->first = i;
      ch->last = i;
      ch->writes += in->op == TIR_STORE;
      if (in->op != TIR_STORE && tir_holds_registers(in) && per_thread(s, in) > ch->widest) ch->widest = per_thread(s, in);
      int64_t bn = chain_dim(in);
      for (int k = 0; k < in->nargs; k++) { /* every tile of BN columns it reads is in the chain */
        const TirInst *o = in->args[k];
        if (o && o->ty.rank > 0 && tir_last_dim(o) == bn &&
            (o->id >= s->n || s->where[o->id] < 0 || root[s->where[o->id]] != r))
          ch->bad = true;
      }
      if (in->op == TIR_LOAD || in->op == TIR_STORE) {
        int k = tir_last_span(in);
        if (k < 0 || in->subs[k].len != bn) ch->bad = true;
      }
    } else {
      /* a reader outside the chain: only a reduction, after every member */
      for (int k = 0; k < in->nargs; k++) {
        const TirInst *o = in->args[k];
        int j = o && o->id < s->n ? s->where[o->id] : -1;
        if (j < 0 || root[j] < 0) continue;
        if (in->op != TIR_REDUCE || in->nargs != 1) c[root[j]].bad = true;
        else if (i < c[root[j]].first_red) c[root[j]].first_red = i;
      }
      if (in->nsubs || in->cond_value)
        for (int k = 0; k < in->nsubs + 1; k++) {
          const TirInst *o = k < in->nsubs ? in->subs[k].start : in->cond_value;
          int j = o && o->id < s->n ? s->where[o->id] : -1;
          if (j >= 0 && root[j] >= 0) c[root[j]].bad = true;
        }
      nested_reads(s, &in->cond, root, c);
      nested_reads(s, &in->body, root, c);
      nested_reads(s, &in->body2, root, c);
    }
  }
  int64_t budget = tir_register_budget(s->f) / 2;
  bool cut = false;
  for (int r = 0; r < b->len && !cut; r++) {
    Chain *ch = &c[r];
    if (root[r] != r || ch->bad || ch->last > ch->first_red) continue;
    /* no write among the members but their own stores */
    if (writes_before[ch->last + 1] - writes_before[ch->first] != ch->writes) continue;
    int64_t bn = chain_dim(b->insts[r]);
    /* strips a warp's 16-byte vectors wide at least (narrower ones read
     * memory a few bytes a row), few enough registers a thread */
    int eb = 16;
    for (int i = ch->first; i <= ch->last; i++)
      if (root[i] == r && b->insts[i]->op == TIR_LOAD && sema_scalar_bytes(b->insts[i]->ty.elem) < eb)
        eb = sema_scalar_bytes(b->insts[i]->ty.elem);
    int64_t min_w = 32 * (16 / eb);
    /* A chain that only stores, under a budget of 32 registers or fewer
     * (an occupancy copy's), runs with the next strip's loads ahead in
     * strips of an eighth of the registers (two strips are live): the
     * SwiGLU port over 4096 x 14336 (rows of 16384 bf16, 512 threads)
     * measured 130.3 -> 111.5 us. Elsewhere strips of 16 and no loads
     * ahead: the softmax over rows of 65536 f32 at 1024 threads (64
     * registers) measured 762.8 -> 809.7 us with its last chain ahead
     * (12-04c, call 1) and 829.1 with every chain ahead (12-04b, call 1). */
    bool ahead = ch->first_red == b->len && budget <= 16;
    int64_t strip_regs = ahead && 2 * budget / 8 < STRIP_REGS ? 2 * budget / 8 : STRIP_REGS;
    /* such a chain is cut once it is wider than a strip, not only past the
     * budget: two whole f32 tiles in an occupancy copy's 32 registers ran
     * the SwiGLU port's swiglu__v3_al_occ over 4096 x 14336 at 217.4 us,
     * in strips 114.6 (12-04d, call 6) */
    if (ch->widest <= (ahead ? strip_regs : budget)) continue;
    int g = 1;
    while (g < 1024 && ch->widest / g > strip_regs && bn % (2 * g) == 0 && bn / (2 * g) >= min_w) g *= 2;
    if (g == 1 || ch->widest / g > budget) continue; /* a strip would not fit either */
    Fuse fz = {0};
    bool fused = lse_pair(s, b, root, c, writes_before, r, &fz); /* (a chain with its loads ahead has no reduction) */
    cut_chain(s, b, root, r, ch->last, bn / g, g, ahead, fused ? &fz : NULL);
    cut = true;
  }
  for (int i = 0; i < b->len; i++)
    if (b->insts[i]->id < s->n) s->where[b->insts[i]->id] = -1;
  return cut;
}

void strip_rows(Arena *a, TirFunc *f) {
  if (f->staged || !early_loads_wanted(f)) return;
  /* a chain a round: each cut numbers the IR again */
  for (int round = 0; round < 64; round++) {
    Strip s = {.a = a, .f = f, .n = f->ninsts, .threads = f->info->threads > 0 ? f->info->threads : LANG_DEFAULT_THREADS};
    size_t n = (size_t)s.n + 1;
    s.where = arena_alloc(a, sizeof(int) * n);
    s.cl = arena_alloc(a, sizeof(TirInst *) * n);
    s.acc = arena_alloc(a, sizeof(TirInst *) * n);
    for (size_t i = 0; i < n; i++) s.where[i] = -1, s.cl[i] = NULL, s.acc[i] = NULL;
    if (!strip_block(&s, &f->body)) return;
    tir_number(a, f);
  }
}
