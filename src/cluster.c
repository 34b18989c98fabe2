/* cluster.c: cluster-rows copies, a row block taken by a cluster of CTAs
 * (spec 15.22).
 *
 * A row kernel walks each row in blocks, once to reduce it and once more
 * to write it: softmax, cross-entropy's logsumexp, a norm's sums. Where
 * the rows are long (a vocabulary: 50257 or 128256 columns) one CTA holds
 * a whole row while it walks it, and the rows in flight on the device, a
 * CTA's rows times the CTAs resident, outgrow the L2: the second pass
 * reads its row from DRAM again (f32 softmax over 4096 x 128256, 132 rows
 * of 513 KB in flight: 4.12 GB read for 2.1 GB of input, ncu, 12-05f call
 * 2). Fewer rows in flight means fewer CTAs, and SMs left idle.
 *
 * A cluster copy gives each row block to a cluster of C CTAs instead (C
 * SMs): ctx.block.x is the cluster's index, and every top-level loop
 * `for c in range(0, D, S)` over the row dim D runs its iterations
 * round-robin over the cluster's CTAs (CTA k: c = k S, k S + C S, ...).
 * A CTA then holds 1/C of each row, and C CTAs share one row block's
 * reductions: each loop's deferred accumulators (plan/deferred.c), met
 * within each CTA at the loop's exit as before, meet again across the
 * cluster through distributed shared memory (ptx/cluster.c), every CTA
 * folding the C values in the same order so that all of them hold the
 * same bits. The rows in flight are 1/C of the plain variant's.
 *
 * That is right only where nothing else carries a value from one block of
 * a row to the next, and where every CTA of a cluster doing the same work
 * outside the split loops is harmless:
 * - each split loop writes no variable declared outside it but its
 *   deferred accumulators;
 * - outside the split loops every CTA computes the same values from the
 *   same inputs and the met accumulators; stores there write the same
 *   bytes C times (a row's loss, say), which is allowed; nothing counts
 *   arrivals, takes atomics, waits at a grid barrier, returns early or
 *   jumps out of a loop;
 * - no loop over D lies inside another statement (it would run whole in
 *   every CTA while the split ones run a share);
 * - a tensor the kernel both loads and stores (an in-place softmax) is
 *   touched only in the split loops, all of one step, each access at the
 *   loop's own block (its last subscript the induction value, the step
 *   long): each block of a row is then one CTA's in every loop, and no CTA
 *   reads what another writes;
 * - the grid has one axis, the kernel no dot, no rings, no tensor copies,
 *   no staged rows: the plan is a row kernel's. */
#include <stdint.h>
#include <string.h>

#include "plan/plan.h"

/* nothing in b that a cluster may not repeat or split */
static bool plain_ops(const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    switch (x->op) {
    case TIR_DOT:
    case TIR_ARRIVE:
    case TIR_RETURN:
    case TIR_BREAK:
    case TIR_CONTINUE:
    case TIR_BARRIER:
      return false;
    case TIR_LOAD:
      if (x->plan->res == RES_SHARED || x->plan->ring || x->plan->tma) return false;
      break;
    case TIR_STORE: /* atomic_add is a store that adds: C CTAs would add C times */
      if (x->plan->buf || x->aux2 != TSTORE_WRITE) return false;
      break;
    default:
      break;
    }
    if (!plain_ops(&x->cond) || !plain_ops(&x->body) || !plain_ops(&x->body2)) return false;
  }
  return true;
}

/* every write in b to a slot declared before the loop is one of the loop's
 * deferred accumulators (its stores are checked with the tensors they
 * write: own_blocks) */
static bool split_safe(const TirInst *loop, const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if (x->op == TIR_WRITE && x->args[0]->pos < loop->pos && !plan_defers_slot(loop, x->args[0])) return false;
    if (!split_safe(loop, &x->cond) || !split_safe(loop, &x->body) || !split_safe(loop, &x->body2)) return false;
  }
  return true;
}

/* a loop over dim `dim` anywhere inside b */
static bool has_dim_loop(const TirFunc *f, const TirBlock *b, const char *dim) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    int64_t s;
    const char *name = tir_dim_loop_name(f, x, &s);
    if (name && !strcmp(name, dim)) return true;
    if (has_dim_loop(f, &x->cond, dim) || has_dim_loop(f, &x->body, dim) || has_dim_loop(f, &x->body2, dim)) return true;
  }
  return false;
}

/* bit t: tensor parameter t loaded (ld) or stored (st) anywhere in b;
 * parameters past 63 count as both */
static void accessed(const TirBlock *b, uint64_t *ld, uint64_t *st) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if (x->op == TIR_LOAD || x->op == TIR_STORE) {
      uint64_t bit = x->aux < 64 ? UINT64_C(1) << x->aux : ~UINT64_C(0);
      if (x->op == TIR_LOAD || x->aux >= 64) *ld |= bit;
      if (x->op == TIR_STORE || x->aux >= 64) *st |= bit;
    }
    accessed(&x->cond, ld, st);
    accessed(&x->body, ld, st);
    accessed(&x->body2, ld, st);
  }
}

/* an access at the loop's own block: its last subscript the induction
 * value, the step long */
static bool at_own_block(const TirInst *x, const TirInst *loop, int64_t step) {
  const TirSub *last = x->nsubs ? &x->subs[x->nsubs - 1] : NULL;
  return loop && last && !last->point && last->start == loop && last->len == step;
}

/* every access in b to a tensor of `both` is at the loop's own block */
static bool own_blocks(const TirBlock *b, uint64_t both, const TirInst *loop, int64_t step) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if ((x->op == TIR_LOAD || x->op == TIR_STORE) && (x->aux >= 64 || both >> x->aux & 1)) {
      if (!at_own_block(x, loop, step)) return false;
    }
    if (!own_blocks(&x->cond, both, loop, step) || !own_blocks(&x->body, both, loop, step) ||
        !own_blocks(&x->body2, both, loop, step))
      return false;
  }
  return true;
}

/* bit t of *other: some load of tensor t in b is not at the loop's own
 * block */
static void other_loads(const TirBlock *b, const TirInst *loop, int64_t step, uint64_t *other) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if (x->op == TIR_LOAD && x->aux < 64 && !at_own_block(x, loop, step)) *other |= UINT64_C(1) << x->aux;
    other_loads(&x->cond, loop, step, other);
    other_loads(&x->body, loop, step, other);
    other_loads(&x->body2, loop, step, other);
  }
}

int64_t cluster_exchange_bytes(const TirFunc *f, const char *dim) {
  int64_t n = 0;
  for (int i = 0; i < f->body.len; i++) {
    const TirInst *x = f->body.insts[i];
    int64_t s;
    const char *name = tir_dim_loop_name(f, x, &s);
    if (!name || strcmp(name, dim)) continue;
    for (const PlanDefer *d = x->plan->defer; d; d = d->next) n += plan_block_geom(d->red->args[0]).M * 8;
  }
  return n;
}

bool cluster_split_loop(const Plan *p, const TirInst *loop) {
  if (!p->cluster || loop->op != TIR_FOR) return false;
  int64_t s;
  const char *dim = tir_dim_loop_name(p->f, loop, &s);
  if (!dim || strcmp(dim, p->cluster_dim)) return false;
  for (int i = 0; i < p->f->body.len; i++)
    if (p->f->body.insts[i] == loop) return true;
  return false;
}

bool cluster_rows_ok(const Plan *p, const char **dim, int64_t *step, uint64_t *apart) {
  const TirFunc *f = p->f;
  if (f->ngrid != 1 || f->staged || f->once_dim || p->stages || p->producer || p->specialized || p->general_strides ||
      p->prefetch || p->ntmaps || p->raster_group || p->occ_blocks || p->cluster || f->info->persistent ||
      !plain_ops(&f->body))
    return false;
  *dim = NULL;
  *step = 0;
  bool deferred = false;
  for (int i = 0; i < f->body.len; i++) {
    const TirInst *x = f->body.insts[i];
    int64_t s;
    const char *name = tir_dim_loop_name(f, x, &s);
    if (!name || (*dim && strcmp(name, *dim))) continue;
    if (!*dim) *dim = name;
    if (!*step || s < *step) *step = s;
    if (!split_safe(x, &x->body)) return false;
    deferred |= x->plan->defer != NULL;
  }
  if (!*dim || !deferred) return false;
  /* the cluster exchange, 8 bytes a row an accumulator (ptx/cluster.c), is
   * static shared memory beside the plan's */
  if (plan_launch_shared(p) + cluster_exchange_bytes(p->f, *dim) > p->shared_limit) return false;
  /* The tensors the split loops store, and those the kernel both loads and
   * stores, are accessed only in the split loops, all of one step, each
   * access at its loop's own block: each block of a row is one CTA's in
   * every loop (a store before the loops, or a loop of another step, would
   * put one block's writes in two CTAs with no order between them). */
  uint64_t ld = 0, st = 0, split_st = 0;
  accessed(&f->body, &ld, &st);
  for (int i = 0; i < f->body.len; i++) {
    const TirInst *x = f->body.insts[i];
    int64_t s = 0;
    const char *name = tir_dim_loop_name(f, x, &s);
    if (name && !strcmp(name, *dim)) {
      uint64_t l = 0;
      accessed(&x->body, &l, &split_st);
    }
  }
  uint64_t guarded = (ld & st) | split_st, other = 0;
  for (int i = 0; i < f->body.len; i++) {
    const TirInst *x = f->body.insts[i];
    int64_t s = 0;
    const char *name = tir_dim_loop_name(f, x, &s);
    bool split = name && !strcmp(name, *dim);
    if (split && s != *step && guarded) return false;
    TirBlock one = {.insts = (TirInst **)&f->body.insts[i], .len = 1};
    if (guarded && !own_blocks(split ? &x->body : &one, guarded, split ? x : NULL, s)) return false;
    if (split) other_loads(&x->body, x, s, &other);
    else accessed(&one, &other, &(uint64_t){0});
  }
  /* Parameters may alias. A tensor read only at its split loops' own
   * blocks reads what no other CTA writes; any other read tensor goes in
   * *apart (the runtime launches the copy only where no written tensor
   * overlaps it), all of them where the kernel also stores outside the
   * split loops (a row's value stored while other CTAs still read) */
  *apart = (st & ~split_st ? ld : ld & other) & ~guarded;
  if (!st) *apart = 0;
  /* a loop over the dim inside another statement would run whole */
  for (int i = 0; i < f->body.len; i++) {
    const TirInst *x = f->body.insts[i];
    if (has_dim_loop(f, &x->cond, *dim) || has_dim_loop(f, &x->body, *dim) || has_dim_loop(f, &x->body2, *dim))
      return false;
  }
  return true;
}
