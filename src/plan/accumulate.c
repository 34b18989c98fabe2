/* accumulate.c: wgmma dots that accumulate in their var's own registers,
 * and those whose wait moves to the next iteration of their staged ring.
 *
 * `acc += dot(a, b)` lowers to a dot, a read of acc, an add and a write of
 * acc: the dot's result in registers of its own, added to a copy of acc,
 * copied back (three register moves and an add per accumulator, every
 * iteration). wgmma accumulates into its D registers: where the add's
 * other operand is a read of the var that is used nowhere else, and the
 * var is neither read nor written between the dot and the write, the dot
 * takes the var's registers as D (scale-d 1) and the read, add and write
 * fold away (PlanVal.folded).
 *
 * A wgmma group runs on after its issue: its registers and the shared
 * memory it reads may not be touched until wgmma.wait_group says it is
 * done. Waiting at once (the default) leaves the tensor cores idle while
 * the threads reach the next group: the barrier, the next copies' issue,
 * the wait for the next stage. Where such a dot sits in the body of a loop
 * whose staged ring is filled by tensor copies only, and its var is
 * touched nowhere else in the loop, the loop waits instead after the next
 * iteration's groups are issued (wgmma.wait_group with that iteration's
 * groups still pending), and only then frees the stage the previous
 * iteration read and issues its refill (ptx/pipeline.c, px_emit_for);
 * after the loop, wait_group 0. One group is then always queued behind
 * the running one. */
#include "planner.h"

/* the one instruction that reads x, or NULL (Planner.users) */
static TirInst *only_user(const Planner *P, const TirInst *x) {
  const PtrVec *us = &P->users[x->id];
  return P->use_count[x->id] == 1 && us->len == 1 ? us->items[0] : NULL;
}

/* reads and writes of the slot within [lo, hi], other than r and w (its
 * users are its READs and WRITEs) */
static bool slot_touched(const Planner *P, const TirInst *slot, int lo, int hi, const TirInst *r, const TirInst *w) {
  const PtrVec *us = &P->users[slot->id];
  for (int i = 0; i < us->len; i++) {
    const TirInst *y = us->items[i];
    if (y != r && y != w && y->pos >= lo && y->pos <= hi) return true;
  }
  return false;
}

/* the block that holds x among its own instructions (not nested deeper) */
static const TirBlock *block_of(const TirBlock *b, const TirInst *x) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *y = b->insts[i];
    if (y == x) return b;
    if (x->pos > y->pos && x->pos <= y->end) {
      const TirBlock *r = block_of(&y->cond, x);
      if (!r) r = block_of(&y->body, x);
      if (!r) r = block_of(&y->body2, x);
      return r;
    }
  }
  return NULL;
}

/* The loop whose staged rings px_emit_for fills: the outermost loop with a
 * staged load (a buffer with stages) in its own body; NULL if the rings'
 * loads are not all tensor copies (the threads' cp.async groups need the
 * barrier after their wait, at the top of the iteration). */
static const TirInst *tma_ring_loop(const TirInst *dot, TirInst **encl) {
  const TirInst *loop = encl[dot->pos], *ring = NULL;
  for (const TirInst *l = loop; l; l = encl[l->pos]) {
    if (l->op != TIR_FOR) continue;
    for (int k = 0; k < l->body.len && ring != l; k++)
      if (plan_is_ring_stage(l->body.insts[k])) ring = l;
  }
  if (!ring || ring != loop) return NULL;
  for (int k = 0; k < ring->body.len; k++) {
    const TirInst *x = ring->body.insts[k];
    if (x->op == TIR_LOAD && x->plan->ring) return NULL; /* a @pipeline ring of bulk copies too */
    if (plan_is_ring_stage(x) && !x->plan->tma) return NULL;
  }
  return ring;
}

/* a's and b's bytes stay put while the group runs on: a stage of the ring
 * (refilled only after the wait) or a tile staged before the loop */
static bool operands_stay(const TirInst *dot, const TirInst *loop) {
  for (int k = 0; k < 2; k++) {
    const TirInst *x = dot->args[k];
    if (x->plan->res != RES_SHARED || !x->plan->buf) return false;
    if (!x->plan->buf->stages && x->pos > loop->pos) return false;
  }
  return true;
}

void pl_choose_accumulate(Planner *P) {
  if (!P->p->wgmma) return;
  pl_index_uses(P);
  for (int i = 0; i < P->f->ninsts; i++) {
    TirInst *dot = P->f->insts[i];
    if (dot->op != TIR_DOT || dot->plan->dot != DOT_WGMMA) continue;
    TirInst *add = only_user(P, dot);
    if (!add || add->op != TIR_BINARY || add->aux != '+' || add->ty.elem != S_F32) continue;
    TirInst *r = add->args[0] == dot ? add->args[1] : add->args[0];
    if (r == dot || r->op != TIR_READ || P->use_count[r->id] != 1) continue;
    TirInst *slot = r->args[0], *w = only_user(P, add);
    if (!w || w->op != TIR_WRITE || w->args[0] != slot || w->args[1] != add || w->nsubs) continue;
    if (slot->plan->res != RES_REG || slot->plan->layout != dot->plan->layout || r->plan->layout != dot->plan->layout)
      continue;
    /* one block: a write under an `if` (or a dot outside it) must not
     * make the dot's unconditional accumulation the var's */
    const TirBlock *blk = block_of(&P->f->body, dot);
    if (!blk || block_of(&P->f->body, r) != blk || block_of(&P->f->body, add) != blk || block_of(&P->f->body, w) != blk)
      continue;
    int lo = r->pos < dot->pos ? r->pos : dot->pos;
    if (slot_touched(P, slot, lo, w->pos, r, w)) continue;
    dot->plan->acc_slot = slot;
    r->plan->folded = add->plan->folded = w->plan->folded = true;
    const TirInst *loop = tma_ring_loop(dot, P->encl);
    bool direct = false;
    for (int k = 0; loop && k < loop->body.len; k++) direct |= loop->body.insts[k] == dot;
    if (direct && operands_stay(dot, loop) && !slot_touched(P, slot, loop->pos + 1, loop->end, r, w))
      dot->plan->wait_deferred = true;
  }
}

/* Where a wgmma dot's group is waited for (PlanVal.wait_at), for the dots
 * not deferred to their ring's next iteration.
 *
 * Waiting at the issue leaves the tensor cores idle while the threads do
 * the work that does not need the result. Where the instructions after a
 * dot in its block neither read its registers nor can touch the shared
 * memory it reads, the wait moves down to the first that does: another
 * dot issued there runs behind it (attention's P V of the block before,
 * issued after this block's Q K^T, runs under this block's softmax once
 * the source puts the two dots first; spec 15.5). The wait is then
 * wgmma.wait_group with the groups committed since still running.
 *
 * An instruction the group may run past is register work only: elementwise
 * operations, conversions, broadcasts and reductions with no exchange area
 * (the exchanges' bytes may be a dead operand's), register vars and their
 * reads and writes, scalars, and other wgmma dots. It must also not sit at a
 * planned barrier: the barrier may be what lets another warpgroup, its own
 * group done, write bytes this group still reads. A use of the result is
 * any operand that is the dot, or, for a dot accumulating into its var
 * (acc_slot), a read or write of that var not folded into it. Control
 * flow, loads, stores and the end of the block stop the walk. */
static bool at_barrier(const Plan *p, int pos) {
  for (int i = 0; i < p->nbarriers; i++)
    if (p->barriers[i].pos == pos) return true;
  return false;
}

static bool register_work(const Plan *p, const TirInst *x) {
  if (x->plan->folded) return true;
  if (x->plan->scratch || at_barrier(p, x->pos) || x->skip) return false;
  if (x->op != TIR_WRITE && x->ty.rank && x->plan->res != RES_REG) return false; /* a write has no value */
  switch (x->op) {
  case TIR_REDUCE: break;
  case TIR_DOT: return x->plan->dot == DOT_WGMMA;
  case TIR_VAR: return x->plan->res == RES_REG;
  case TIR_READ:
  case TIR_WRITE: return !x->nsubs && x->args[0]->plan->res == RES_REG;
  default:
    if (!tir_elementwise_op(x->op) && !tir_scalar_arith(x)) return false;
  }
  for (int i = 0; i < x->nargs; i++)
    if (x->args[i] && x->args[i]->ty.rank && x->args[i]->plan->res != RES_REG) return false;
  return true;
}

static bool uses_result(const TirInst *x, const TirInst *dot) {
  if (x->plan->folded) return false; /* an accumulation folded into a dot: nothing emitted */
  for (int i = 0; i < x->nargs; i++)
    if (x->args[i] == dot) return true;
  const TirInst *slot = dot->plan->acc_slot;
  return slot && !x->plan->folded && (x->op == TIR_READ || x->op == TIR_WRITE) && x->args[0] == slot;
}

static void waits_in(const Plan *p, const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    TirInst *x = b->insts[i];
    waits_in(p, &x->cond), waits_in(p, &x->body), waits_in(p, &x->body2);
    if (x->op != TIR_DOT || x->plan->dot != DOT_WGMMA || x->plan->wait_deferred) continue;
    for (int j = i + 1; j < b->len; j++) {
      const TirInst *y = b->insts[j];
      if (uses_result(y, x) || !register_work(p, y)) {
        if (j > i + 1) x->plan->wait_at = y; /* the very next: at once, as before */
        break;
      }
    }
  }
}

void pl_choose_wgmma_waits(Planner *P) {
  if (P->p->wgmma && P->p->late_waits) waits_in(P->p, &P->f->body);
}
