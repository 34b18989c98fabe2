/* deferred.c: loop accumulators whose row reductions finish once, at the
 * loop's exit, instead of every iteration (spec 15.15).
 *
 * A row kernel walks a long row in blocks and folds each block into a
 * running value: `s += rowsum(x)`, `m = tmax(m, rowmax(x))`, or the online
 * logsumexp of softmax and cross-entropy (`mnew = tmax(m, rowmax(x)); l = l *
 * exp(m - mnew) + rowsum(exp(x - mnew)); m = mnew`). Reduced in full each
 * iteration, a row that spans several warps meets through shared memory
 * every block (a barrier, and the next block's loads wait behind it); one
 * that spans a warp's lanes, by shuffles every block. Nothing in the loop
 * needs the row's value, only the running value's own update: each thread
 * may keep a running value of its own elements (its registers of the row
 * folded, no shuffles, no shared memory), and the threads' running values
 * meet once after the loop. For a sum or a max that is the same reduction
 * reassociated; for the logsumexp pair each thread's (m, l) is the online
 * logsumexp of its own elements, and the pairs combine as M = max m, L =
 * sum l exp(m - M) (ptx/exchange.c, px_defer_exit).
 *
 * The match is exact, so that nothing else in the loop can see a thread's
 * partial value: the slot is read only by its update, the update's every
 * intermediate has only the uses of the pattern, the slot is written once,
 * all in the loop's own body (not under an `if`, not in an inner loop).
 * The reductions reduce in registers (their input's layout spans the rows
 * with the threads, plan_reduce_in_regs), the broadcast of the logsumexp's
 * new max reads the thread's own register (plan_broadcast_in_regs), and
 * the slots' layout is the reductions' rows. The loop copies nothing
 * asynchronously (no staged or ringed loads, no staged stores, no dots):
 * the exit's exchange takes a scratch of its own between two barriers. */
#include "planner.h"

/* the one instruction that reads x, or NULL */
static TirInst *only_user(const Planner *P, const TirInst *x) {
  const PtrVec *us = &P->users[x->id];
  return P->use_count[x->id] == 1 && us->len == 1 ? us->items[0] : NULL;
}

static bool direct_in(const TirInst *loop, const TirInst *x) {
  for (int k = 0; k < loop->body.len; k++)
    if (loop->body.insts[k] == x) return true;
  return false;
}

/* the other operand of binary b, given one of them; NULL if a is neither */
static TirInst *other(TirInst *b, const TirInst *a) {
  if (b->args[0] == a) return b->args[1];
  if (b->args[1] == a) return b->args[0];
  return NULL;
}

static bool is_binary(const TirInst *x, int op) { return x && x->op == TIR_BINARY && x->aux == op; }

/* the slot's reads and writes inside the loop: exactly the reads r[0..nr)
 * and the one write w, all in its own body, the reads before the write */
static bool slot_uses_exactly(const Planner *P, const TirInst *loop, const TirInst *slot, const TirInst *const *r,
                              int nr, const TirInst *w) {
  const PtrVec *us = &P->users[slot->id];
  int seen = 0;
  for (int i = 0; i < us->len; i++) {
    const TirInst *y = us->items[i];
    if (y->pos <= loop->pos || y->pos > loop->end) continue;
    if (y == w) continue;
    bool ok = false;
    for (int k = 0; k < nr; k++) ok |= y == r[k];
    if (!ok || y->op != TIR_READ) return false;
    seen++;
  }
  if (!direct_in(loop, w) || w->nsubs) return false;
  for (int k = 0; k < nr; k++)
    if (!direct_in(loop, r[k]) || r[k]->pos > w->pos) return false;
  return seen >= 1;
}

/* element types whose registers hold exactly the values (the narrower
 * integers are rounded after each operation: a thread's identity, the most
 * negative i32, would round to 0 in an i8 slot) */
static bool full_width(Scalar s) { return s == S_F32 || s == S_F64 || s == S_I32 || s == S_I64; }

/* a reduction that may stay within each thread: in the loop's body, in
 * registers, its result the rows of the slot's layout */
static bool reducible(const TirInst *loop, const TirInst *red, const TirInst *slot) {
  if (!red || red->op != TIR_REDUCE || !direct_in(loop, red) || !plan_reduce_in_regs(red)) return false;
  if (!full_width(slot->ty.elem) || red->ty.elem != slot->ty.elem) return false;
  if (slot->plan->res != RES_REG || !plan_is_blocked_rows(slot)) return false;
  if (red->ty.rank != slot->ty.rank || red->plan->layout != slot->plan->layout) return false;
  BlockGeom a = plan_block_geom(red), b = plan_block_geom(slot);
  return plan_same_rows(&a, &b);
}

/* the two reductions of a logsumexp meet through the same lanes and warps */
static bool same_spread(const TirInst *r1, const TirInst *r2) {
  BlockGeom a = plan_block_geom(r1->args[0]), b = plan_block_geom(r2->args[0]);
  return plan_same_rows(&a, &b) && a.tc == b.tc && a.wc == b.wc;
}

/* `v = v + rowsum(x)` or `v = tmax(v, rowmax(x))` written by w */
static PlanDefer *match_fold(Planner *P, const TirInst *loop, TirInst *w) {
  const TirInst *slot = w->args[0];
  TirInst *h = w->args[1];
  bool sum = is_binary(h, '+'), mx = is_binary(h, TOP_MAX);
  if ((!sum && !mx) || only_user(P, h) != w) return NULL;
  for (int k = 0; k < 2; k++) {
    TirInst *r = h->args[k], *red = h->args[1 - k];
    if (r->op != TIR_READ || r->args[0] != slot || only_user(P, r) != h) continue;
    if (!red || red->op != TIR_REDUCE || red->aux != (sum ? TRED_SUM : TRED_MAX) || only_user(P, red) != h) continue;
    if (!reducible(loop, red, slot) || !direct_in(loop, h)) continue;
    const TirInst *rs[1] = {r};
    if (!slot_uses_exactly(P, loop, slot, rs, 1, w)) continue;
    PlanDefer *d = arena_alloc(P->a, sizeof *d);
    *d = (PlanDefer){.kind = sum ? DEFER_SUM : DEFER_MAX, .slot = {slot, NULL}, .red = red};
    red->plan->partial = true;
    return d;
  }
  return NULL;
}

/* The online logsumexp, from the write of its max wm:
 *   mnew = tmax(read m, rowmax(x))           (rm: the rowmax)
 *   g    = read l * exp(read m - mnew)
 *   q    = rowsum(exp(x - broadcast(mnew)))
 *   write l, g + q;  write m, mnew
 * in f32, every intermediate used only there. */
static PlanDefer *match_lse(Planner *P, const TirInst *loop, TirInst *wm) {
  const TirInst *m = wm->args[0];
  TirInst *mnew = wm->args[1];
  if (m->ty.elem != S_F32 || !is_binary(mnew, TOP_MAX) || P->use_count[mnew->id] != 3 || !direct_in(loop, mnew))
    return NULL;
  TirInst *ra = NULL, *rm = NULL;
  for (int k = 0; k < 2; k++)
    if (mnew->args[k]->op == TIR_READ && mnew->args[k]->args[0] == m) ra = mnew->args[k], rm = mnew->args[1 - k];
  if (!ra || !rm || rm->op != TIR_REDUCE || rm->aux != TRED_MAX || only_user(P, ra) != mnew || only_user(P, rm) != mnew)
    return NULL;
  /* mnew's other two users: d = read m - mnew, and its broadcast */
  TirInst *d = NULL, *bc = NULL;
  const PtrVec *us = &P->users[mnew->id];
  for (int i = 0; i < us->len; i++) {
    TirInst *u = us->items[i];
    if (u == wm) continue;
    if (is_binary(u, '-') && u->args[1] == mnew && !d) d = u;
    else if (u->op == TIR_BROADCAST && !bc) bc = u;
    else return NULL;
  }
  if (!d || !bc || !plan_broadcast_in_regs(bc)) return NULL;
  TirInst *rb = d->args[0];
  if (rb->op != TIR_READ || rb->args[0] != m || only_user(P, rb) != d) return NULL;
  TirInst *f = only_user(P, d);
  if (!f || f->op != TIR_MATH || f->aux != TMATH_EXP) return NULL;
  TirInst *g = only_user(P, f);
  if (!is_binary(g, '*')) return NULL;
  TirInst *rl = other(g, f);
  if (!rl || rl->op != TIR_READ || only_user(P, rl) != g) return NULL;
  const TirInst *l = rl->args[0];
  if (l == m || l->ty.elem != S_F32) return NULL;
  /* the broadcast's path to the sum, of the max's own input: each thread's
   * exp(x - mnew) is then at most 1 (of another value z, a thread whose x
   * are all -inf would compute exp(z + 3.4e38)) */
  TirInst *y = only_user(P, bc);
  if (!is_binary(y, '-') || y->args[1] != bc || y->args[0] != rm->args[0]) return NULL;
  TirInst *ex = only_user(P, y);
  if (!ex || ex->op != TIR_MATH || ex->aux != TMATH_EXP) return NULL;
  TirInst *q = only_user(P, ex);
  if (!q || q->op != TIR_REDUCE || q->aux != TRED_SUM) return NULL;
  TirInst *h = only_user(P, q);
  if (!is_binary(h, '+') || other(h, q) != g || only_user(P, g) != h) return NULL;
  TirInst *wl = only_user(P, h);
  if (!wl || wl->op != TIR_WRITE || wl->args[0] != l || wl->args[1] != h) return NULL;
  if (!reducible(loop, rm, m) || !reducible(loop, q, l) || l->plan->layout != m->plan->layout || !same_spread(rm, q))
    return NULL;
  const TirInst *path[] = {mnew, d, f, g, bc, y, ex, h};
  for (size_t i = 0; i < sizeof path / sizeof *path; i++)
    if (!direct_in(loop, path[i])) return NULL;
  const TirInst *rms[2] = {ra, rb}, *rls[1] = {rl};
  if (!slot_uses_exactly(P, loop, m, rms, 2, wm) || !slot_uses_exactly(P, loop, l, rls, 1, wl)) return NULL;
  PlanDefer *dd = arena_alloc(P->a, sizeof *dd);
  *dd = (PlanDefer){.kind = DEFER_LSE, .slot = {m, l}, .red = rm};
  rm->plan->partial = q->plan->partial = true;
  return dd;
}

/* nothing in the loop copies asynchronously or computes a dot */
static bool plain_loop(const TirBlock *b) {
  for (int k = 0; k < b->len; k++) {
    const TirInst *x = b->insts[k];
    if (x->op == TIR_DOT || x->op == TIR_ARRIVE) return false;
    if (x->op == TIR_LOAD && (x->plan->res == RES_SHARED || x->plan->ring || x->plan->tma)) return false;
    if (x->op == TIR_STORE && x->plan->buf) return false;
    if (!plain_loop(&x->cond) || !plain_loop(&x->body) || !plain_loop(&x->body2)) return false;
  }
  return true;
}

bool plan_defers_slot(const TirInst *loop, const TirInst *slot) {
  for (const PlanDefer *d = loop->plan->defer; d; d = d->next)
    if (d->slot[0] == slot || d->slot[1] == slot) return true;
  return false;
}

void pl_choose_deferred(Planner *P) {
  if (P->p->no_defer || P->f->staged) return;
  pl_index_uses(P);
  for (int i = 0; i < P->f->ninsts; i++) {
    TirInst *loop = P->f->insts[i];
    if (loop->op != TIR_FOR || !plain_loop(&loop->body)) continue;
    for (int k = 0; k < loop->body.len; k++) {
      TirInst *w = loop->body.insts[k];
      if (w->op != TIR_WRITE || w->nsubs || plan_defers_slot(loop, w->args[0])) continue;
      PlanDefer *d = match_lse(P, loop, w);
      if (!d) d = match_fold(P, loop, w);
      if (!d) continue;
      PlanDefer **tail = &loop->plan->defer; /* in program order */
      while (*tail) tail = &(*tail)->next;
      *tail = d;
    }
  }
}
