/* sync.c: ordering between threads: the CTA barrier (with the waits and
 * fences that must come before it), the planned barriers, the barrier that
 * publishes a shared write, the mbarrier operations of the rings, and
 * arrive (the last-block pattern). */
#include "emitter.h"

/* A staged tile copied by cp.async is waited for at the next barrier, so
 * its latency overlaps whatever comes between; its readers always follow a
 * barrier. The wait also comes before an if or a loop, at the end of each
 * branch, after a while's condition and at a loop's back edge (px_emit_inst,
 * px_emit_for): a barrier inside a branch may not run, and a read at the top
 * of the next iteration follows a barrier textually earlier. */
void px_async_wait(Emitter *e) {
  if (!e->async_pending) return;
  e->async_pending = false;
  px_out(e, "cp.async.wait_group 0;");
}

/* A barrier of the T threads that run the kernel's code: bar.sync 0, or
 * with a producer warp (which never takes part) the named barrier 1 of T.
 * Alone (cta_bar) for the atomics, whose barriers order global memory,
 * not shared tiles; px_cta_sync_why adds the waits and fences first. */
static void cta_bar(Emitter *e, const char *why) {
  if (e->p->producer) px_out(e, "bar.sync 1, %d;%s", e->T, why);
  else px_out(e, "bar.sync 0;%s", why);
}

void px_cta_sync_why(Emitter *e, const char *why) {
  px_async_wait(e);
  if (e->proxy_pending) { /* the threads' stores into a swizzled tile, seen by wgmma (async proxy) */
    e->proxy_pending = false;
    px_out(e, "fence.proxy.async.shared::cta;");
  }
  cta_bar(e, why);
}

void px_cta_sync(Emitter *e) { px_cta_sync_why(e, ""); }
/* The barrier planned before a staged load (px_emit_inst leaves it pending). */
void px_emit_pending_sync(Emitter *e) {
  if (!e->sync_pending) return;
  e->sync_pending = false;
  px_cta_sync_why(e, " // planned");
}

/* The barrier after a write into a shared slot, which readers wait for;
 * stores into a swizzled slot (a tensor copy's, which wgmma reads through
 * the async proxy) are fenced first (px_cta_sync_why). */
void px_publish_write(Emitter *e, const TirInst *slot) {
  if (slot->plan->res != RES_SHARED) return;
  e->proxy_pending |= plan_swizzle(slot->plan->buf) != 0;
  px_cta_sync(e);
}

/* arrive(C[g], n) (spec 9.5): the CTA's arrival, counted modulo n in one
 * i32 element, true in the CTA whose arrival is the n-th. This is the
 * last-block pattern: the CTAs' partial results are stored before they
 * arrive, and the last one to arrive reads them all.
 *   - Release: every thread fences its global stores at GPU scope
 *     (fence.acq_rel.gpu) before the barrier, so all of the CTA's stores
 *     come before thread 0's atomic in causality order. (A TMA store needs
 *     no more: it only goes to a tensor the kernel never loads, plan.c
 *     choose_tma_store.)
 *   - Thread 0 alone does atom.inc with bound n - 1 (acq_rel, GPU scope):
 *     the counter runs 0, 1, ..., n - 1 and wraps to 0 on the n-th
 *     arrival, so a launch that arrives a multiple of n times leaves it as
 *     it found it, with no store to reset it.
 *   - bar.red.or.pred is the barrier and the broadcast at once: every
 *     thread learns whether thread 0 saw n - 1.
 *   - Acquire: in the last CTA every thread fences again before its loads,
 *     so they see what the other CTAs stored before arriving. */
static void emit_atomic(Emitter *e, const TirInst *in);
static void emit_grid_barrier(Emitter *e, const TirInst *in);

/* An atomic's element: its address, and `ok` ANDed with its lying inside
 * the tensor (a masked element is not touched, as loads and stores mask) */
static const char *element_addr(Emitter *e, const TirInst *in, const char *ok) {
  const char *g[MAX_TENSOR_RANK];
  for (int i = 0; i < in->nsubs; i++) g[i] = px_sub_start(e, in, i);
  if (ok)
    for (int i = 0; i < in->nsubs; i++) px_and_below(e, ok, g[i], px_ext(e, in->aux, i));
  return px_tensor_addr(e, in->aux, g);
}

void px_emit_arrive(Emitter *e, const TirInst *in) {
  if (in->aux2 == TARRIVE_ADD || in->aux2 == TARRIVE_CAS) return emit_atomic(e, in);
  if (in->aux2 == TARRIVE_GRID) return emit_grid_barrier(e, in);
  const char *g[MAX_TENSOR_RANK];
  for (int i = 0; i < in->nsubs; i++) g[i] = px_sub_start(e, in, i);
  const char *ad = px_tensor_addr(e, in->aux, g), *n = px_reg(e, in->args[0], 0);
  const char *t0 = px_tmp(e, RC_PRED), *go = px_tmp(e, RC_PRED), *last = px_tmp(e, RC_PRED), *any = px_tmp(e, RC_PRED);
  const char *bound = px_tmp(e, RC_B32), *old = px_tmp(e, RC_B32);
  px_out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  px_out(e, "fence.acq_rel.gpu;");
  px_cta_sync_why(e, " // arrive: the CTA's stores before its arrival");
  /* a count below 1 never arrives, nor does a counter outside its tensor
   * (masked as loads and stores are): nothing is counted */
  px_out(e, "setp.ge.and.s32 %s, %s, 1, %s;", go, n, t0);
  for (int i = 0; i < in->nsubs; i++) px_and_below(e, go, g[i], px_ext(e, in->aux, i));
  px_out(e, "sub.s32 %s, %s, 1;", bound, n);
  px_out(e, "mov.u32 %s, 0;", old);
  px_out(e, "@%s atom.acq_rel.gpu.global.inc.u32 %s, [%s], %s;", go, old, ad, bound);
  px_out(e, "setp.eq.and.u32 %s, %s, %s, %s;", last, old, bound, go);
  if (e->p->producer) px_out(e, "bar.red.or.pred %s, 1, %d, %s;", any, e->T, last);
  else px_out(e, "bar.red.or.pred %s, 0, %s;", any, last);
  px_out(e, "@%s fence.acq_rel.gpu;", any);
  /* and for reads through the async proxy (a ring's bulk copies of the
   * partials) after it */
  if (e->sm90) px_out(e, "@%s fence.proxy.async.global;", any);
  px_out(e, "selp.u32 %s, 1, 0, %s;", px_reg(e, in, 0), any);
}

/* atomic_add and atomic_cas of one element, the old value given back
 * (spec 9.6), once a CTA, ordered as arrive is: every thread fences its
 * stores at GPU scope before a barrier, thread 0 alone does the atomic
 * (acq_rel, GPU scope) inside the tensor, and its old value reaches the
 * CTA through 8 planned bytes of shared memory (plan/memory.c) between two
 * barriers; every thread fences again before what it reads next, so a
 * value another CTA stored before its own atomic is seen (a work queue's
 * tiles, a lock's data). */
static void emit_atomic(Emitter *e, const TirInst *in) {
  Scalar te = e->p->f->params[in->aux].elem;
  bool wide = te == S_I64 || te == S_F64, cas = in->aux2 == TARRIVE_CAS;
  const char *go = px_tmp(e, RC_PRED), *t0 = px_tmp(e, RC_PRED), *r = px_reg(e, in, 0);
  const char *w = wide ? "b64" : "b32";
  px_out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  px_out(e, "mov.pred %s, %s;", go, t0);
  const char *ad = element_addr(e, in, go);
  px_out(e, "fence.acq_rel.gpu;");
  cta_bar(e, " // atomic: the CTA's stores before it");
  /* an element outside its tensor is masked, as loads and stores are: the
   * CTA reads 0 back */
  px_out(e, "mov.%s %s, 0%s;", te == S_F32 ? "f32" : te == S_F64 ? "f64" : w, r,
         te == S_F32 ? "f00000000" : te == S_F64 ? "d0000000000000000" : "");
  if (cas) {
    px_out(e, "@%s atom.acq_rel.gpu.global.cas.%s %s, [%s], %s, %s;", go, w, r, ad, px_reg(e, in->args[0], 0),
           px_reg(e, in->args[1], 0));
  } else {
    const char *ty = te == S_I32 ? "s32" : te == S_I64 ? "u64" : te == S_F32 ? "f32" : "f64";
    px_out(e, "@%s atom.acq_rel.gpu.global.add.%s %s, [%s], %s;", go, ty, r, ad, px_reg(e, in->args[0], 0));
  }
  int64_t at = in->plan->scratch->offset;
  px_out(e, "@%s st.shared.%s [%%smem_+%lld], %s;", t0, w, (long long)at, r);
  cta_bar(e, " // atomic: its old value");
  px_out(e, "ld.shared.%s %s, [%%smem_+%lld];", w, r, (long long)at);
  px_out(e, "fence.acq_rel.gpu;");
  if (e->sm90) px_out(e, "fence.proxy.async.global;");
}

/* grid_barrier(bar) (spec 9.8): every CTA of the grid waits for every
 * other, on two i32 slots of bar: the arrivals (element 0) and the
 * generation (element 1).
 *   - Every thread fences its stores at GPU scope, then the CTA meets.
 *   - Thread 0 reads the generation (acquire) before it arrives, then adds
 *     its arrival (acq_rel). The last of the grid's CTAs to arrive resets
 *     the count to 0 and then releases the next generation; the others
 *     wait (acquire, with a short sleep) until the generation moves. No
 *     CTA can arrive at the next barrier before the count is reset: it
 *     must first see the new generation, released after the reset.
 *   - The CTA meets again and every thread fences (acquire), so its loads
 *     see what every CTA stored before the barrier.
 * The count comes back to 0 and the generation only moves on, so one pair
 * zeroed once serves every barrier of every launch. The grid must be
 * resident at once: the runtime launches the kernel cooperatively
 * (manifest co_resident), which the driver refuses for a grid too large. */
static void emit_grid_barrier(Emitter *e, const TirInst *in) {
  const char *g1[MAX_TENSOR_RANK], *g0[MAX_TENSOR_RANK];
  for (int i = 0; i < in->nsubs; i++) g1[i] = px_sub_start(e, in, i), g0[i] = i ? g1[i] : "0";
  const char *gen_ad = px_tensor_addr(e, in->aux, g1), *cnt_ad = px_tensor_addr(e, in->aux, g0);
  const char *t0 = px_tmp(e, RC_PRED), *last = px_tmp(e, RC_PRED), *moved = px_tmp(e, RC_PRED);
  const char *gen = px_tmp(e, RC_B32), *now = px_tmp(e, RC_B32), *old = px_tmp(e, RC_B32), *n = px_tmp(e, RC_B32);
  const char *ny = px_tmp(e, RC_B32);
  int L = px_new_label(e);
  px_out(e, "fence.acq_rel.gpu;");
  cta_bar(e, " // grid_barrier: the CTA's stores before it");
  px_out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  px_out(e, "@!%s bra $Lgbdone%d;", t0, L);
  px_out(e, "mov.u32 %s, %%nctaid.x;", n);
  px_out(e, "mov.u32 %s, %%nctaid.y;", ny);
  px_out(e, "mul.lo.u32 %s, %s, %s;", n, n, ny);
  px_out(e, "mov.u32 %s, %%nctaid.z;", ny);
  px_out(e, "mul.lo.u32 %s, %s, %s;", n, n, ny);
  px_out(e, "sub.u32 %s, %s, 1;", n, n);
  px_out(e, "ld.acquire.gpu.global.u32 %s, [%s];", gen, gen_ad);
  px_out(e, "atom.acq_rel.gpu.global.add.u32 %s, [%s], 1;", old, cnt_ad);
  px_out(e, "setp.eq.u32 %s, %s, %s;", last, old, n);
  px_out(e, "@!%s bra $Lgbwait%d;", last, L);
  px_out(e, "st.relaxed.gpu.global.u32 [%s], 0;", cnt_ad);
  px_out(e, "add.u32 %s, %s, 1;", now, gen);
  px_out(e, "st.release.gpu.global.u32 [%s], %s;", gen_ad, now);
  px_out(e, "bra $Lgbdone%d;", L);
  px_label(e, "gbwait", L);
  px_out(e, "nanosleep.u32 32;");
  px_out(e, "ld.acquire.gpu.global.u32 %s, [%s];", now, gen_ad);
  px_out(e, "setp.ne.u32 %s, %s, %s;", moved, now, gen);
  px_out(e, "@!%s bra $Lgbwait%d;", moved, L);
  px_label(e, "gbdone", L);
  cta_bar(e, " // grid_barrier: every CTA arrived");
  px_out(e, "fence.acq_rel.gpu;");
  if (e->sm90) px_out(e, "fence.proxy.async.global;");
}

/* The mbarriers, one API for every kind (a tensor copy's own, a ring's
 * "full" and "empty" ones): each is 8 bytes of a planned BUF_MBAR buffer,
 * slot s at offset + 8 s. A barrier's phase is one bit of a register:
 * bit `slot` of `phases` for a ring's stage (slot a register), or the
 * whole register, 0 or 1, for a barrier of its own (slot NULL). */

/* the shared address of slot first + stage (stage a register, or NULL) */
const char *px_mbar_addr(Emitter *e, const PlanBuf *mbar, const char *stage, int first) {
  const char *a = px_tmp(e, RC_B32);
  if (stage) {
    px_out(e, "mad.lo.u32 %s, %s, 8, %%smem_;", a, stage);
    px_out(e, "add.u32 %s, %s, %lld;", a, a, (long long)(mbar->offset + 8 * first));
  } else {
    px_out(e, "add.u32 %s, %%smem_, %lld;", a, (long long)(mbar->offset + 8 * first));
  }
  return a;
}

/* Under pred, slots first .. first + n - 1 of mbar take `count` arrivals a
 * phase. */
void px_mbar_init_slots(Emitter *e, const char *pred, const PlanBuf *mbar, int first, int n, int count) {
  for (int s = first; s < first + n; s++)
    px_out(e, "@%s mbarrier.init.shared::cta.b64 [%%smem_+%lld], %d;", pred, (long long)(mbar->offset + 8 * s), count);
}

/* Thread 0 initialises n mbarriers at buffer mbar (one arrival each)
 * between two barriers: their bytes may have held other buffers. */
void px_mbar_init(Emitter *e, const PlanBuf *mbar, int n, bool proxy_fence) {
  const char *t0 = px_tmp(e, RC_PRED);
  px_cta_sync(e);
  px_out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  px_mbar_init_slots(e, t0, mbar, 0, n, 1);
  px_out(e, "@%s fence.mbarrier_init.release.cluster;", t0);
  if (proxy_fence) px_out(e, "fence.proxy.async.shared::cta;");
  px_cta_sync(e);
}

/* One arrival at bar expecting `bytes` (an immediate or a register) of
 * copies to complete the phase, under pred (NULL: unpredicated). */
void px_mbar_arm(Emitter *e, const char *pred, const char *bar, const char *bytes) {
  const char *st = px_tmp(e, RC_B64), *g = pred ? arena_printf(e->a, "@%s ", pred) : "";
  px_out(e, "%smbarrier.arrive.expect_tx.shared::cta.b64 %s, [%s], %s;", g, st, bar, bytes);
}

/* One arrival at bar (an "empty" barrier: the stage is consumed). */
void px_mbar_arrive(Emitter *e, const char *bar) {
  const char *st = px_tmp(e, RC_B64);
  px_out(e, "mbarrier.arrive.shared::cta.b64 %s, [%s];", st, bar);
}

/* After a barrier that every thread passed its last wait before: thread 0
 * invalidates the n mbarriers, and a barrier keeps their bytes from other
 * uses until then. */
void px_mbar_inval(Emitter *e, const PlanBuf *mbar, int n) {
  const char *t0 = px_tmp(e, RC_PRED);
  px_out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  for (int s = 0; s < n; s++)
    px_out(e, "@%s mbarrier.inval.shared::cta.b64 [%%smem_+%lld];", t0, (long long)(mbar->offset + 8 * s));
  px_cta_sync(e);
}

/* Waits on the mbarrier at bar for its phase: bit `slot` of `phases`, or
 * (slot NULL) `phases` itself. */
void px_mbar_wait(Emitter *e, const char *bar, const char *phases, const char *slot) {
  const char *par = phases, *done = px_tmp(e, RC_PRED);
  if (slot) {
    par = px_tmp(e, RC_B32);
    px_out(e, "shr.u32 %s, %s, %s;", par, phases, slot);
    px_out(e, "and.b32 %s, %s, 1;", par, par);
  }
  int L = px_new_label(e);
  px_label(e, "mw", L);
  px_out(e, "mbarrier.try_wait.parity.shared::cta.b64 %s, [%s], %s;", done, bar, par);
  px_out(e, "@!%s bra $Lmw%d;", done, L);
}

/* The next phase: bit `slot` of `phases` flipped, or (slot NULL) phases ^ 1. */
void px_mbar_flip(Emitter *e, const char *phases, const char *slot) {
  if (!slot) {
    px_out(e, "xor.b32 %s, %s, 1;", phases, phases);
    return;
  }
  const char *b = px_tmp(e, RC_B32);
  px_out(e, "shl.b32 %s, 1, %s;", b, slot);
  px_out(e, "xor.b32 %s, %s, %s;", phases, phases, b);
}
