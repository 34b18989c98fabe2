/* tileacc.c: tile accumulators that only a reduction after their loop
 * reads, made row accumulators (spec 15.23).
 *
 * The Triton tutorials' layer norm sums a row in a tile as wide as a block:
 *
 *     var acc: tile<f32>[BS] = 0.0
 *     for off in range(0, N, BS) { acc += f32(X[row, off :+ BS]) }
 *     let mean = rowsum(acc) / f32(N)
 *
 * `acc` takes BS / threads registers a thread for the whole loop (32 at BS
 * 4096 over 128 threads), and its loop matches none of deferred.c's
 * shapes. Nothing but the reduction after the loop reads `acc`, and
 * rowsum(init + x1 + x2 + ..) is rowsum(init) + rowsum(x1) + rowsum(x2) +
 * .. reassociated (as the deferred reductions of spec 15.15 reassociate
 * already), so the slot becomes a row value `[.., 1]`: its start is the
 * reduction of the old start (a splat of the op's identity stays a
 * splat), each update adds (or maxes in) the reduction of its operand, and
 * the reduction after the loop reads the slot. The planner then defers the
 * update's reduction to the loop's exit (deferred.c): each thread keeps
 * one running register of its own elements, and the row's threads meet
 * once.
 *
 * The match, on the IR as lowered:
 * - a `var` of a tile (its last dim > 1) of f32, f64, i32 or i64 (the
 *   narrower types round after every operation, and deferred.c keeps
 *   them out);
 * - written whole exactly twice: once before a `for` loop and once
 *   directly in its body, `v = read(v) + x` or `v = tmax(read(v), x)` (in
 *   either operand order), the read and the operation used only there;
 * - read elsewhere only after that loop, each such read used only by
 *   reductions of the same kind (`rowsum` for `+`, `rowmax` for `tmax`).
 * Kernels with a dot or @pipeline, loops that hold an arrive, and
 * staged-rows copies are left alone: their loops keep their accumulators
 * (deferred.c would not defer their reductions, and a reduction every
 * iteration costs more than the tile). `phobosc --no-deferred-reductions`
 * keeps every tile accumulator too (KernelInfo.keep_tile_accs). */
#include <string.h>

#include "tir.h"

typedef struct TileAcc {
  Arena *a;
  TirFunc *f;
  TirBlock **blk; /* by id: the block that holds the instruction */
  TirInst **loop; /* by id: the for loop whose body is that block, or NULL */
} TileAcc;

static void index_block(TileAcc *t, TirBlock *b, TirInst *owner) {
  for (int i = 0; i < b->len; i++) {
    TirInst *x = b->insts[i];
    t->blk[x->id] = b;
    t->loop[x->id] = owner && owner->op == TIR_FOR && b == &owner->body ? owner : NULL;
    index_block(t, &x->cond, x);
    index_block(t, &x->body, x);
    index_block(t, &x->body2, x);
  }
}

/* the instructions that read x (each once), up to max; -1 past max */
static int users(const TirFunc *f, const TirInst *x, TirInst **out, int max) {
  int n = 0;
  for (int i = 0; i < f->ninsts; i++) {
    TirInst *y = f->insts[i];
    if (!y) continue;
    bool reads = y->cond_value == x;
    for (int k = 0; k < y->nargs; k++) reads |= y->args[k] == x;
    for (int k = 0; k < y->nsubs; k++) reads |= y->subs[k].start == x;
    if (!reads) continue;
    if (n == max) return -1;
    out[n++] = y;
  }
  return n;
}

static void insert_before(Arena *a, TirBlock *b, const TirInst *at, TirInst *x) {
  tir_append(a, b, x); /* grows the block; x then moves to at's place */
  int i = b->len - 1;
  for (; i > 0 && b->insts[i - 1] != at; i--) b->insts[i] = b->insts[i - 1];
  b->insts[i] = b->insts[i - 1];
  b->insts[i - 1] = x;
}

static void remove_from(TirBlock *b, const TirInst *x) {
  int w = 0;
  for (int i = 0; i < b->len; i++)
    if (b->insts[i] != x) b->insts[w++] = b->insts[i];
  b->len = w;
}

/* a loop with an arrive keeps its accumulators, as deferred.c would not
 * defer their reductions (a kernel with a dot is never matched) */
static bool has_arrive(const TirBlock *b) {
  for (int k = 0; k < b->len; k++) {
    const TirInst *x = b->insts[k];
    if (x->op == TIR_ARRIVE || has_arrive(&x->cond) || has_arrive(&x->body) || has_arrive(&x->body2)) return true;
  }
  return false;
}

static bool full_width(Scalar s) { return s == S_F32 || s == S_F64 || s == S_I32 || s == S_I64; }

static bool is_zero(const TirInst *c) {
  return c->op == TIR_CONST && (c->ty.elem == S_F32 || c->ty.elem == S_F64 ? c->fval == 0.0 : c->ival == 0);
}

enum { MAX_USES = 16 };

/* rewrites v where it matches; whether it did */
static bool try_var(TileAcc *t, TirInst *v) {
  TirFunc *f = t->f;
  int r = v->ty.rank;
  if (r < 1 || v->ty.dims[r - 1] < 2 || !full_width(v->ty.elem)) return false;
  TirInst *us[MAX_USES], *wr[2], *rd[MAX_USES];
  int n = users(f, v, us, MAX_USES), nw = 0, nr = 0;
  if (n < 3) return false;
  for (int i = 0; i < n; i++) {
    TirInst *y = us[i];
    if (y->op == TIR_WRITE && y->args[0] == v && y->nsubs == 0 && nw < 2) wr[nw++] = y;
    else if (y->op == TIR_READ && y->args[0] == v) rd[nr++] = y;
    else return false;
  }
  if (nw != 2) return false;
  /* the update: directly in a for loop's body; the start: before the loop */
  TirInst *wu = t->loop[wr[1]->id] ? wr[1] : wr[0], *wi = wu == wr[1] ? wr[0] : wr[1];
  TirInst *L = t->loop[wu->id];
  if (!L || wi->pos >= L->pos || has_arrive(&L->body)) return false;
  TirInst *h = wu->args[1], *hu[2];
  if (h->op != TIR_BINARY || (h->aux != '+' && h->aux != TOP_MAX) || users(f, h, hu, 2) != 1 ||
      t->blk[h->id] != &L->body)
    return false;
  int tred = h->aux == '+' ? TRED_SUM : TRED_MAX, side = -1;
  for (int k = 0; k < 2; k++)
    if (h->args[k]->op == TIR_READ && h->args[k]->args[0] == v) side = k;
  if (side < 0 || (h->args[1 - side]->op == TIR_READ && h->args[1 - side]->args[0] == v)) return false;
  TirInst *ru = h->args[side], *e = h->args[1 - side], *ruu[2];
  if (users(f, ru, ruu, 2) != 1 || t->blk[ru->id] != &L->body) return false;
  /* every other read: after the loop, read only by reductions of the kind */
  TirInst *red[MAX_USES * MAX_USES];
  int nred = 0;
  for (int i = 0; i < nr; i++) {
    if (rd[i] == ru) continue;
    if (rd[i]->pos <= L->end) return false;
    TirInst *ys[MAX_USES];
    int m = users(f, rd[i], ys, MAX_USES);
    if (m < 1) return false;
    for (int j = 0; j < m; j++) {
      if (ys[j]->op != TIR_REDUCE || ys[j]->aux != tred || ys[j]->args[0] != rd[i]) return false;
      red[nred++] = ys[j];
    }
  }
  if (!nred) return false;
  TirType rt = v->ty;
  rt.dims[r - 1] = 1;
  /* the start: the old start's reduction (the identity's splat stays one) */
  TirInst *x0 = wi->args[1], *s;
  if (x0->op == TIR_SPLAT && (tred == TRED_MAX || is_zero(x0->args[0]))) {
    s = tir_new(t->a, f, TIR_SPLAT, rt);
    s->args[s->nargs++] = x0->args[0];
  } else {
    s = tir_new(t->a, f, TIR_REDUCE, rt);
    s->aux = tred;
    s->args[s->nargs++] = x0;
  }
  s->span = wi->span;
  insert_before(t->a, t->blk[wi->id], wi, s);
  TirInst *x0u[2];
  if (x0->op == TIR_SPLAT && s->op == TIR_SPLAT && users(f, x0, x0u, 2) == 1) remove_from(t->blk[x0->id], x0);
  wi->args[1] = s;
  /* the update: the slot's row value and the reduction of the operand */
  TirInst *q = tir_new(t->a, f, TIR_REDUCE, rt);
  q->aux = tred;
  q->args[q->nargs++] = e;
  q->span = h->span;
  insert_before(t->a, &L->body, h, q);
  h->args[1 - side] = q;
  v->ty = h->ty = ru->ty = wi->ty = wu->ty = rt;
  /* each reduction after the loop reads the slot */
  for (int i = 0; i < nred; i++) {
    red[i]->op = TIR_READ;
    red[i]->aux = 0;
    red[i]->args[0] = v;
  }
  for (int i = 0; i < nr; i++)
    if (rd[i] != ru) remove_from(t->blk[rd[i]->id], rd[i]);
  return true;
}

/* the block and loop tables, for f as numbered now */
static void index_func(TileAcc *t) {
  size_t n = (size_t)t->f->ninsts + 1;
  t->blk = arena_alloc(t->a, sizeof(TirBlock *) * n);
  t->loop = arena_alloc(t->a, sizeof(TirInst *) * n);
  memset(t->blk, 0, sizeof(TirBlock *) * n);
  memset(t->loop, 0, sizeof(TirInst *) * n);
  index_block(t, &t->f->body, NULL);
}

void tileacc_rows(Arena *a, TirFunc *f) {
  if (f->staged || f->info->keep_tile_accs || f->info->pipeline_stages || tir_has_dot(&f->body)) return;
  int nv = 0;
  TirInst **vars = arena_alloc(a, sizeof(TirInst *) * (size_t)(f->ninsts + 1));
  for (int i = 0; i < f->ninsts; i++)
    if (f->insts[i] && f->insts[i]->op == TIR_VAR) vars[nv++] = f->insts[i];
  if (!nv) return;
  TileAcc t = {.a = a, .f = f};
  index_func(&t);
  for (int i = 0; i < nv; i++)
    if (t.blk[vars[i]->id] && try_var(&t, vars[i])) {
      tir_number(a, f); /* positions, ids and f->insts changed: the tables again for the next var */
      index_func(&t);
    }
}
