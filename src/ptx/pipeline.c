/* pipeline.c: for loops and what streams through them: @pipeline rings
 * filled by bulk copies (with a producer warp or warp 0), staged rings
 * filled by cp.async or tensor copies, and --prefetch's register tiles
 * loaded an iteration ahead; a later iteration's subscripts are the body's
 * scalars replayed with the loop variable advanced. spec/LANGUAGE.md 15.9,
 * 15.10. */
#include "emitter.h"

/* @pipeline.
 *
 * A loop whose loads the plan gave rings (plan.c, choose_pipeline): at
 * loop entry thread 0 initialises one mbarrier per stage; warp 0 issues
 * the first stages - 1 iterations' tiles as bulk copies (one per tile row,
 * a lane each), each stage's mbarrier expecting their bytes; at the top
 * of every iteration, after a barrier that frees the stage the previous
 * iteration read, it issues iteration i + stages - 1. The threads wait on
 * their stage's mbarrier with phase parity and read the tile from the ring
 * in the register distribution (vector shared loads). A tile that the
 * copy cannot take whole (past a tensor end, a misaligned base or row
 * pitch) is loaded by the pointer path instead, in the same iteration; its
 * stage's mbarrier is then only arrived at, so the phases stay in step.
 * The subscripts of a later iteration are the body's scalars replayed with
 * the loop variable advanced. */

/* Marks x and what it is computed from, up to the loop. */
static void mark_chain(const TirInst *x, const TirInst *loop, bool *mark, int depth) {
  if (!x || x == loop || mark[x->id] || depth > 64) return;
  mark[x->id] = true;
  for (int i = 0; i < x->nargs; i++) mark_chain(x->args[i], loop, mark, depth + 1);
}

/* The scalars of the loop body that the ringed loads' subscripts need, or
 * (with the loop's bounds) those from before the loop too: marks by id. */
bool *px_subscript_chains(Emitter *e, const TirInst *loop, const TirInst **loads, int n, bool bounds) {
  bool *mark = arena_alloc(e->a, (size_t)e->f->ninsts + 1);
  for (int i = 0; bounds && i < 3; i++) mark_chain(loop->args[i], loop, mark, 0);
  for (int q = 0; q < n; q++)
    for (int j = 0; j < loads[q]->nsubs; j++) mark_chain(loads[q]->subs[j].start, loop, mark, 0);
  return mark;
}

/* Computes the body's scalars that the loads' subscripts need again, with
 * the loop variable set to j (a later iteration's tiles: the ring's issue,
 * --prefetch). Returns the register holding the loop variable's own value,
 * for the caller to put back once the loads are issued. */
const char *px_replay_subscripts(Emitter *e, const TirInst *loop, const TirInst **loads, int n, const char *j) {
  const char *iv = px_reg(e, loop, 0), *saved = px_tmp(e, RC_B32);
  px_out(e, "mov.b32 %s, %s;", saved, iv);
  px_out(e, "mov.b32 %s, %s;", iv, j);
  bool *need = px_subscript_chains(e, loop, loads, n, false);
  e->replay = true;
  for (int k = 0; k < loop->body.len; k++)
    if (need[loop->body.insts[k]->id] && !loop->body.insts[k]->ty.rank) px_emit_inst(e, loop->body.insts[k]);
  e->replay = false;
  return saved;
}

static int ring_loads(const TirInst *loop, const TirInst **loads) {
  int n = 0;
  for (int k = 0; k < loop->body.len && n < 8; k++)
    if (loop->body.insts[k]->op == TIR_LOAD && loop->body.insts[k]->plan->ring) loads[n++] = loop->body.insts[k];
  return n;
}

/* Uniform: the whole physical tile of ld is inside its tensor, the tile's
 * first element is 16-byte aligned and so is the row pitch. */
static const char *ring_eligible(Emitter *e, const TirInst *ld) {
  int eb = px_elem_bytes_mem(ld->ty.elem), i0 = -1, j = 0;
  const char *ok = px_tmp(e, RC_PRED), *g[MAX_TENSOR_RANK];
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < ld->nsubs; i++) {
    g[i] = px_sub_start(e, ld, i);
    if (ld->subs[i].point) {
      px_and_below(e, ok, g[i], px_ext(e, ld->aux, i));
      continue;
    }
    if (i0 < 0) i0 = i;
    px_and_span_inside(e, ok, g[i], ld->plan->phys[j++], ld->aux, i);
  }
  const char *ad, *pitch;
  return px_aligned16(e, ld->aux, eb, g, i0, ok, &ad, &pitch);
}

static int64_t ring_stage_bytes(const TirInst *ld) {
  return ld->plan->phys[0] * ld->plan->phys[1] * px_elem_bytes_mem(ld->ty.elem);
}

/* Warp 0 issues the copies of the iteration whose loop value is in j (the
 * caller checked j < end) into stage pst; every thread advances pst. */
static void ring_issue(Emitter *e, const TirInst *loop, const TirInst **loads, int n, const char *j) {
  int L = px_new_label(e);
  const char *lane = e->p->producer ? "%plane_" : "%tid_"; /* the producer warp's lanes, or warp 0's */
  if (!e->p->producer) {
    const char *w0 = px_tmp(e, RC_PRED);
    px_out(e, "setp.ge.u32 %s, %%tid_, 32;", w0);
    px_out(e, "@%s bra $Lrs%d;", w0, L);
  }
  const char *saved = px_replay_subscripts(e, loop, loads, n, j);
  const char *elig[8], *tx = px_tmp(e, RC_B32);
  px_out(e, "mov.u32 %s, 0;", tx);
  for (int q = 0; q < n; q++) {
    elig[q] = ring_eligible(e, loads[q]);
    const char *t = px_tmp(e, RC_B32);
    px_out(e, "selp.u32 %s, %lld, 0, %s;", t, (long long)ring_stage_bytes(loads[q]), elig[q]);
    px_out(e, "add.u32 %s, %s, %s;", tx, tx, t);
  }
  const PlanBuf *mbar = loads[0]->plan->mbar;
  const char *bar = px_mbar_addr(e, mbar, e->pst, 0), *lane0 = px_tmp(e, RC_PRED);
  px_out(e, "setp.eq.u32 %s, %s, 0;", lane0, lane);
  px_mbar_arm(e, lane0, bar, tx);
  /* the stage's bytes were last read through the generic proxy */
  px_out(e, "fence.proxy.async.shared::cta;");
  px_out(e, "bar.warp.sync -1;");
  for (int q = 0; q < n; q++) {
    const TirInst *ld = loads[q];
    int eb = px_elem_bytes_mem(ld->ty.elem), i0 = 0;
    while (ld->subs[i0].point) i0++; /* the rows' subscript */
    int64_t p0 = ld->plan->phys[0], row = ld->plan->phys[1] * eb;
    int S = px_new_label(e);
    px_out(e, "@!%s bra $Lrq%d;", elig[q], S);
    const char *g[MAX_TENSOR_RANK];
    for (int i = 0; i < ld->nsubs; i++) g[i] = px_sub_start(e, ld, i);
    for (int64_t r0 = 0; r0 < p0; r0 += 32) {
      const char *r = px_tmp(e, RC_B32), *in = px_tmp(e, RC_PRED), *gr = px_tmp(e, RC_B32);
      px_out(e, "add.u32 %s, %s, %lld;", r, lane, (long long)r0);
      px_out(e, "setp.lt.u32 %s, %s, %lld;", in, r, (long long)p0);
      px_out(e, "add.s32 %s, %s, %s;", gr, g[i0], r);
      const char *gg[MAX_TENSOR_RANK];
      for (int i = 0; i < ld->nsubs; i++) gg[i] = i == i0 ? gr : g[i];
      const char *src = px_tensor_addr(e, ld->aux, gg), *dst = px_tmp(e, RC_B32);
      px_out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", dst, e->pst, (long long)ring_stage_bytes(ld));
      px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", dst, r, (long long)row, dst);
      px_out(e, "add.u32 %s, %s, %lld;", dst, dst, (long long)ld->plan->ring->offset);
      px_out(e, "@%s cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%s], %lld, [%s];", in,
             dst, src, (long long)row, bar);
    }
    px_label(e, "rq", S);
  }
  px_out(e, "mov.b32 %s, %s;", px_reg(e, loop, 0), saved);
  px_label(e, "rs", L);
  const char *p = px_tmp(e, RC_PRED);
  px_out(e, "add.u32 %s, %s, 1;", e->pst, e->pst);
  px_out(e, "setp.eq.u32 %s, %s, %d;", p, e->pst, e->p->stages);
  px_out(e, "selp.u32 %s, 0, %s, %s;", e->pst, e->pst, p);
}

/* The consumer side of a ringed load, at its place in the body. */
void px_emit_ring_load(Emitter *e, const TirInst *in) {
  const PlanBuf *mbar = in->plan->mbar;
  if (!e->waited) { /* the stage's mbarrier: all of this iteration's tiles */
    px_mbar_wait(e, px_mbar_addr(e, mbar, e->cst, 0), e->phase, e->cst);
    e->waited = true;
  }
  int V = e->V, eb = px_elem_bytes_mem(in->ty.elem), nk = px_nregs(e, in);
  int64_t p1 = in->plan->phys[1], TV = (int64_t)e->T * V, elems = px_phys_elems(in);
  bool wordy = V > 1 && eb <= 4 && V * eb >= 4 && TV % p1 == 0 && p1 % V == 0 && px_cols_contiguous(e, in);
  int nw = wordy ? V * eb / 4 : 0, chunks = nk / V;
  const char **w = wordy ? arena_alloc(e->a, sizeof(char *) * (size_t)(chunks * nw)) : NULL;
  for (int i = 0; i < chunks * nw; i++) w[i] = px_tmp(e, RC_B32);
  const char *ok = ring_eligible(e, in);
  int L = px_new_label(e);
  px_out(e, "@!%s bra $Lrp%d;", ok, L);
  const char *base = px_tmp(e, RC_B32);
  px_out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", base, e->cst, (long long)ring_stage_bytes(in));
  px_out(e, "add.u32 %s, %s, %lld;", base, base, (long long)in->plan->ring->offset);
  px_out(e, "mad.lo.u32 %s, %%tidv_, %d, %s;", base, eb, base); /* the dense tile: element f at f * eb */
  for (int c = 0; c < chunks; c++) {
    int64_t off = (int64_t)c * TV * eb;
    if (wordy) {
      const char **wc = w + c * nw;
      if (nw == 4)
        px_out(e, "ld.shared.v4.b32 {%s, %s, %s, %s}, [%s+%lld];", wc[0], wc[1], wc[2], wc[3], base, (long long)off);
      else if (nw == 2) px_out(e, "ld.shared.v2.b32 {%s, %s}, [%s+%lld];", wc[0], wc[1], base, (long long)off);
      else px_out(e, "ld.shared.b32 %s, [%s+%lld];", wc[0], base, (long long)off);
      continue;
    }
    for (int v = 0; v < V; v++) {
      int k = c * V + v;
      const char *r = px_reg(e, in, k), *fl = px_flat_index(e, k), *pin = px_tmp(e, RC_PRED);
      RegClass rc = px_rc_of(in->ty.elem);
      px_out(e, "mov.%s %s, %s;", px_mov_type(rc), r, px_zero(rc));
      px_out(e, "setp.lt.u32 %s, %s, %lld;", pin, fl, (long long)elems);
      int F = px_new_label(e);
      px_out(e, "@!%s bra $Lrf%d;", pin, F);
      px_ld(e, "shared", in->ty.elem, r, arena_printf(e->a, "%s+%lld", base, (long long)(off + v * eb)), NULL);
      px_label(e, "rf", F);
    }
  }
  px_out(e, "bra.uni $Lrj%d;", L);
  px_label(e, "rp", L);
  if (wordy) {
    px_emit_load_rows(e, in, w);
  } else {
    if (!px_emit_load_rows(e, in, NULL)) px_emit_load_elements(e, in);
    px_flush_unpack(e, in);
  }
  px_label(e, "rj", L);
  if (wordy) px_defer_unpack(e, in, w, nw, chunks, e->V);
}

/* --prefetch: a register tile loaded straight into packed words (the
 * vector rows path of px_emit_load_rows_at) directly in the loop's body, its
 * subscripts computed from the loop value by scalar arithmetic only. */
static bool prefetchable(Emitter *e, const TirInst *loop, const TirInst *in) {
  if (in->op != TIR_LOAD || in->plan->res != RES_REG || in->plan->ring || in->ty.rank != 2) return false;
  int64_t p1 = in->plan->phys[1], TV = (int64_t)e->T * e->V;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  if (e->V < 2 || px_elem_bytes_mem(in->ty.elem) > 4 || TV % p1 || p1 % e->V || spans != 2 ||
      !px_cols_contiguous(e, in))
    return false;
  if (tir_stores_to(&loop->body, in->aux)) return false; /* loading ahead would read before this iteration's store */
  const TirInst *one[1] = {in};
  bool *chain = px_subscript_chains(e, loop, one, 1, false);
  for (int k = 0; k < loop->body.len; k++) {
    const TirInst *x = loop->body.insts[k];
    if (chain[x->id] && !tir_scalar_arith(x)) return false;
  }
  return true;
}

/* Loads the prefetched tiles for loop value j into their "next" words
 * (the subscripts' scalars replayed with the loop value set to j). */
static void prefetch_issue(Emitter *e, const TirInst *loop, const TirInst **loads, const char ***next, int n,
                           const char *j) {
  const char *saved = px_replay_subscripts(e, loop, loads, n, j);
  e->replay = true;
  for (int q = 0; q < n; q++) px_emit_load_rows_at(e, loads[q], next[q], NULL, NULL);
  e->replay = false;
  px_out(e, "mov.b32 %s, %s;", px_reg(e, loop, 0), saved);
}

/* The staged rings of a loop (plan.c): its staged loads whose buffers
 * have stage copies. */
static int sring_loads(const TirInst *loop, const TirInst **loads) {
  int n = 0;
  for (int k = 0; k < loop->body.len && n < 8; k++) {
    const TirInst *x = loop->body.insts[k];
    if (plan_is_ring_stage(x)) loads[n++] = x;
  }
  return n;
}

/* Copies the staged rings' tiles of the iteration whose loop value is in j
 * into stage `stage` (a register), by cp.async where the tile allows and
 * by the threads' own loads and stores otherwise (px_emit_stage_async); the
 * caller commits the group. The buffers' bases are left at that stage. */
static void sring_issue(Emitter *e, const TirInst *loop, const TirInst **loads, int n, const char *j,
                        const char *stage) {
  const char *saved = px_replay_subscripts(e, loop, loads, n, j);
  for (int q = 0; q < n; q++) {
    const PlanBuf *b = loads[q]->plan->buf;
    const char *base = px_tmp(e, RC_B32);
    px_out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", base, stage, (long long)b->stage_bytes);
    e->sbase[b->id] = base;
  }
  /* Tensor copies (plan: v->tma): thread 0 arms the stage's mbarrier with
   * the bytes of every copy whose map the runtime built and issues them;
   * with none built the arrival alone completes the phase. */
  const PlanBuf *mbar = NULL;
  for (int q = 0; q < n; q++)
    if (loads[q]->plan->tma) mbar = loads[q]->plan->mbar;
  if (mbar) {
    const char *tx = px_tmp(e, RC_B32), *t0 = px_tmp(e, RC_PRED), *bar = px_mbar_addr(e, mbar, stage, 0);
    px_out(e, "mov.u32 %s, 0;", tx);
    for (int q = 0; q < n; q++) {
      if (!loads[q]->plan->tma) continue;
      const char *t = px_tmp(e, RC_B32), *ok = px_tmp(e, RC_PRED);
      px_out(e, "setp.ne.u32 %s, %%tmok%d, 0;", ok, loads[q]->plan->tma - 1);
      px_out(e, "selp.u32 %s, %lld, 0, %s;", t, (long long)px_tma_bytes(loads[q]), ok);
      px_out(e, "add.u32 %s, %s, %s;", tx, tx, t);
    }
    /* thread 0 alone, behind a branch: the copies' operands need no
     * per-thread predicates (which ptxas turns into loops over the lanes
     * that hold registers across them) */
    int I = px_new_label(e);
    px_out(e, "setp.ne.u32 %s, %%tid_, 0;", t0);
    px_out(e, "@%s bra $Lsri%d;", t0, I);
    /* the stage's bytes were last read through the generic proxy */
    px_out(e, "fence.proxy.async.shared::cta;");
    px_mbar_arm(e, NULL, bar, tx);
    for (int q = 0; q < n; q++) {
      const TirInst *ld = loads[q];
      if (!ld->plan->tma) continue;
      const char *go = px_tmp(e, RC_PRED), *dst = px_tmp(e, RC_B32);
      px_out(e, "setp.ne.u32 %s, %%tmok%d, 0;", go, ld->plan->tma - 1);
      px_out(e, "add.u32 %s, %s, %lld;", dst, px_smem_of(e, ld->plan->buf), (long long)ld->plan->buf->offset);
      px_tma_copies(e, ld, dst, bar, go);
    }
    px_label(e, "sri", I);
  }
  e->issuing = true;
  for (int q = 0; q < n; q++) {
    const TirInst *ld = loads[q];
    if (!ld->plan->tma) {
      if (!px_emit_stage_async(e, ld)) px_emit_load_elements(e, ld);
      continue;
    }
    /* no map this launch: the threads' own loads, as a loop (a tensor the
     * map cannot describe is one cp.async cannot copy either) */
    int i0 = -1, i1 = -1, F = px_new_label(e);
    const char *g[MAX_TENSOR_RANK], *ok = px_tmp(e, RC_PRED), *a0, *step;
    px_out(e, "setp.ne.u32 %s, %%tmok%d, 0;", ok, ld->plan->tma - 1);
    px_out(e, "@%s bra $Lstf%d;", ok, F);
    for (int i = 0; i < ld->nsubs; i++) {
      g[i] = px_sub_start(e, ld, i);
      if (!ld->subs[i].point) *(i0 < 0 ? &i0 : &i1) = i;
    }
    px_aligned16(e, ld->aux, px_elem_bytes_mem(ld->ty.elem), g, i0, ok, &a0, &step);
    px_emit_stage_loop(e, ld, g, i0, i1, a0, step);
    if (plan_swizzle(ld->plan->buf)) px_out(e, "fence.proxy.async.shared::cta;"); /* for wgmma (px_emit_dot_wgmma) */
    /* refilled after the body for the very next iteration (px_emit_for,
     * two stages): no barrier comes between these stores and their
     * readers but this one (tmok is the launch's: every thread is here) */
    if (e->refill_sync) px_cta_sync(e);
    px_label(e, "stf", F);
  }
  e->issuing = false;
  px_out(e, "mov.b32 %s, %s;", px_reg(e, loop, 0), saved);
}

/* The loop value S - 1 iterations ahead of i, in *j, and a branch past the
 * issue that follows (to the label $L<prefix><returned number>) when it is
 * at or past the end. */
static int ahead_or_skip(Emitter *e, const char *i, const char *step, const char *end, int S, const char *prefix,
                         const char **j) {
  *j = px_tmp(e, RC_B32);
  const char *q = px_tmp(e, RC_PRED), *ahead = px_tmp(e, RC_B32);
  px_out(e, "mul.lo.s32 %s, %s, %d;", ahead, step, S - 1);
  px_out(e, "add.s32 %s, %s, %s;", *j, i, ahead);
  int K = px_new_label(e);
  px_out(e, "setp.ge.s32 %s, %s, %s;", q, *j, end);
  px_out(e, "@%s bra $L%s%d;", q, prefix, K);
  return K;
}

/* a stage register's step: x = x + 1 < S ? x + 1 : 0 */
static void stage_next(Emitter *e, const char *x, int S) {
  const char *q = px_tmp(e, RC_PRED);
  px_out(e, "add.u32 %s, %s, 1;", x, x);
  px_out(e, "setp.eq.u32 %s, %s, %d;", q, x, S);
  px_out(e, "selp.u32 %s, 0, %s, %s;", x, x, q);
}

/* Copies iteration i + S - 1 of the staged rings into stage apst (none
 * past the end), one cp.async group. */
static void sring_refill(Emitter *e, const TirInst *loop, const TirInst **sloads, int ns, const char *i,
                         const char *step, const char *end, int S, const char *apst) {
  const char *j;
  int K = ahead_or_skip(e, i, step, end, S, "sk", &j);
  sring_issue(e, loop, sloads, ns, j, apst);
  px_label(e, "sk", K);
  px_out(e, "cp.async.commit_group;");
}

/* A consumer warp is done with stage `stage` of a warp-specialized ring:
 * its lanes' reads are ordered before lane 0's one arrival at the stage's
 * "empty" mbarrier (slots S .. 2S - 1, T / 32 arrivals a phase). */
static void specialize_release(Emitter *e, const PlanBuf *mbar, const char *stage) {
  const char *l0 = px_tmp(e, RC_PRED), *lane = px_tmp(e, RC_B32), *st = px_tmp(e, RC_B64);
  const char *bar = px_mbar_addr(e, mbar, stage, e->p->stages);
  px_out(e, "and.b32 %s, %%tid_, 31;", lane);
  px_out(e, "setp.eq.u32 %s, %s, 0;", l0, lane);
  px_out(e, "bar.warp.sync -1;");
  px_out(e, "@%s mbarrier.arrive.release.cta.shared::cta.b64 %s, [%s];", l0, st, bar);
}

/* Whether a loop's body continues it (not counting inner loops'). */
static bool continues(const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if (x->op == TIR_CONTINUE) return true;
    if (x->op == TIR_IF && (continues(&x->body) || continues(&x->body2))) return true;
  }
  return false;
}

/* A shifted walk's bounds (shiftwalk.c): the leader's row's misalignment
 * sh in elements, from its row's start (the row subscript is defined
 * before the loop), *start = -sh and *end = hi = cdiv(D, S) S, the
 * columns the plain walk covers (sh 0 where hi is: no iteration), or D
 * itself where the loop's reductions need no slack column; *hi_out: hi,
 * where phantoms start. */
static void shift_walk_bounds(Emitter *e, const TirInst *loop, const TirInst *lead, const char **start,
                              const char **end, const char **hi_out) {
  const TirParam *t = &e->f->params[lead->aux];
  int eb = px_elem_bytes_mem(t->elem);
  int64_t S = loop->args[2]->ival;
  const char *ad = px_tmp(e, RC_B64), *s64 = px_tmp(e, RC_B64), *sh = px_tmp(e, RC_B32), *hi = px_tmp(e, RC_B32);
  const char *q = px_tmp(e, RC_PRED), *st = px_tmp(e, RC_B32);
  if (t->rank == 2) {
    px_out(e, "mul.wide.s32 %s, %s, %%str%d_0;", ad, px_sub_start(e, lead, 0), lead->aux);
    px_out(e, "mad.lo.s64 %s, %s, %d, %%base%d;", ad, ad, eb, lead->aux);
  } else {
    px_out(e, "mov.b64 %s, %%base%d;", ad, lead->aux);
  }
  px_out(e, "and.b64 %s, %s, 15;", s64, ad);
  px_out(e, "cvt.u32.u64 %s, %s;", sh, s64);
  if (eb > 1) px_out(e, "shr.u32 %s, %s, %d;", sh, sh, px_log2i(eb));
  px_out(e, "add.s32 %s, %s, %lld;", hi, *end, (long long)(S - 1));
  px_out(e, "div.s32 %s, %s, %lld;", hi, hi, (long long)S);
  px_out(e, "mul.lo.s32 %s, %s, %lld;", hi, hi, (long long)S);
  px_out(e, "setp.le.s32 %s, %s, 0;", q, hi);
  px_out(e, "selp.b32 %s, 0, %s, %s;", sh, sh, q);
  px_out(e, "neg.s32 %s, %s; // a shifted walk (shiftwalk.c): from the row's alignment", st, sh);
  *start = st;
  if (!shiftwalk_slack_free(loop)) *end = hi;
  *hi_out = hi;
}

void px_emit_for(Emitter *e, const TirInst *in) {
  int L = px_new_label(e);
  const char *i = px_reg(e, in, 0), *p = px_tmp(e, RC_PRED);
  const char *end = px_reg(e, in->args[1], 0), *step = px_reg(e, in->args[2], 0);
  const char *start = px_reg(e, in->args[0], 0);
  const TirInst *lead = shiftwalk_leader(e->p, in);
  const char *sw_hi = NULL;
  if (lead) shift_walk_bounds(e, in, lead, &start, &end, &sw_hi);
  const TirInst *loads[8];
  int n = e->ring_loop ? 0 : ring_loads(in, loads); /* one ringed loop at a time: an inner loop's loads stay plain */
  const TirInst *sloads[8];
  int ns = e->ring_loop || e->sring_loop ? 0 : sring_loads(in, sloads);
  if (cluster_split_loop(e->p, in)) px_cluster_loop(e, in, i, start, &step);
  else px_out(e, "mov.b32 %s, %s;", i, start);
  /* --prefetch: the next iteration's register tiles are loaded at the top
   * of this one, so their latency overlaps this iteration's work; the
   * first iteration's before the loop. One loop at a time. */
  const TirInst *pfl[8];
  const char **next[8];
  int npf = 0, onpf = e->npf;
  for (int k = 0; e->p->prefetch && !n && !e->npf && k < in->body.len && npf < 8; k++)
    if (prefetchable(e, in, in->body.insts[k])) pfl[npf++] = in->body.insts[k];
  for (int q = 0; q < npf; q++) {
    int nw = (e->V * px_elem_bytes_mem(pfl[q]->ty.elem) + 3) / 4, words = nw * (px_nregs(e, pfl[q]) / e->V);
    next[q] = arena_alloc(e->a, sizeof(char *) * (size_t)words);
    for (int w = 0; w < words; w++) next[q][w] = px_tmp(e, RC_B32);
  }
  if (npf) {
    int P = px_new_label(e);
    px_out(e, "setp.ge.s32 %s, %s, %s;", p, i, end);
    px_out(e, "@%s bra $Lpf%d;", p, P);
    prefetch_issue(e, in, pfl, next, npf, i);
    px_label(e, "pf", P);
  }
  const TirInst *outer = e->ring_loop;
  const char *ocst = e->cst, *opst = e->pst, *oph = e->phase;
  bool owaited = e->waited;
  int S = e->p->stages;
  bool prod = n && e->p->producer; /* the producer warp fills the ring (px_emit_producer) */
  if (prod) {
    e->ring_loop = in;
    e->cst = px_tmp(e, RC_B32), e->phase = px_tmp(e, RC_B32);
    px_out(e, "mov.u32 %s, 0;", e->cst);
    px_out(e, "mov.u32 %s, 0;", e->phase);
  } else if (n) {
    const PlanBuf *mbar = loads[0]->plan->mbar;
    e->ring_loop = in;
    e->cst = px_tmp(e, RC_B32), e->pst = px_tmp(e, RC_B32), e->phase = px_tmp(e, RC_B32);
    px_out(e, "mov.u32 %s, 0;", e->cst);
    px_out(e, "mov.u32 %s, 0;", e->pst);
    px_out(e, "mov.u32 %s, 0;", e->phase);
    px_mbar_init(e, mbar, S, true); /* and the ring's bytes, last used by others, to the async proxy */
    /* the prologue: iterations 0 .. S - 2 */
    int P = px_new_label(e);
    const char *j = px_tmp(e, RC_B32);
    px_out(e, "mov.b32 %s, %s;", j, i);
    for (int q = 0; q + 1 < S; q++) {
      px_out(e, "setp.ge.s32 %s, %s, %s;", p, j, end);
      px_out(e, "@%s bra $Lrpro%d;", p, P);
      ring_issue(e, in, loads, n, j);
      px_out(e, "add.s32 %s, %s, %s;", j, j, step);
    }
    px_label(e, "rpro", P);
  }
  /* Staged rings: stage s of each holds iteration s's tile; the prologue
   * copies iterations 0 .. S - 2, one cp.async group each (empty past the
   * end, so that groups and iterations keep in step). At the top of
   * iteration i: wait until at most S - 2 groups are pending (iteration i's
   * has landed), a barrier (every thread's copies seen, and every thread
   * done with iteration i - 1's stage), then copy iteration i + S - 1 into
   * that stage while this one computes. */
  const char *acst = NULL, *apst = NULL, *cons[8], *sph = NULL;
  const PlanBuf *smbar = NULL; /* staged rings filled by tensor copies: their mbarriers, one a stage */
  for (int q = 0; q < ns; q++)
    if (sloads[q]->plan->tma) smbar = sloads[q]->plan->mbar;
  /* warp-specialized (plan/specialize.c): the producer warp fills every
   * stage; the mbarriers were initialised at the kernel's start (ptx.c) */
  bool ws = ns && e->p->specialized;
  const char *rel = NULL; /* ws with groups left running: the stage to release once they are done */
  if (smbar) { /* sph: the parity each stage's mbarrier is waited for next */
    sph = px_tmp(e, RC_B32);
    px_out(e, "mov.u32 %s, 0;", sph);
    if (!ws) px_mbar_init(e, smbar, S, false);
  }
  if (ws) {
    e->sring_loop = in;
    acst = px_tmp(e, RC_B32), rel = px_tmp(e, RC_B32);
    px_out(e, "mov.u32 %s, 0;", acst);
    px_out(e, "mov.u32 %s, -1;", rel);
    for (int q = 0; q < ns; q++) cons[q] = px_tmp(e, RC_B32);
  } else if (ns) {
    e->sring_loop = in;
    acst = px_tmp(e, RC_B32), apst = px_tmp(e, RC_B32);
    px_out(e, "mov.u32 %s, 0;", acst);
    px_out(e, "mov.u32 %s, %d;", apst, S - 1);
    const char *j = px_tmp(e, RC_B32), *st = px_tmp(e, RC_B32);
    px_out(e, "mov.b32 %s, %s;", j, i);
    for (int q = 0; q + 1 < S; q++) {
      int P = px_new_label(e);
      px_out(e, "setp.ge.s32 %s, %s, %s;", p, j, end);
      px_out(e, "@%s bra $Lspro%d;", p, P);
      px_out(e, "mov.u32 %s, %d;", st, q);
      sring_issue(e, in, sloads, ns, j, st);
      px_label(e, "spro", P);
      px_out(e, "cp.async.commit_group;");
      px_out(e, "add.s32 %s, %s, %s;", j, j, step);
    }
    for (int q = 0; q < ns; q++) cons[q] = px_tmp(e, RC_B32);
  }
  /* wgmma groups left running into the next iteration (plan/accumulate.c):
   * the refill moves after the body, behind their wait; the barrier that
   * publishes the prologue's stages (the threads' own stores where no map
   * was built) is then here, once */
  bool defer = false;
  for (int k = 0; ns && k < in->body.len; k++) /* (the plan saw that the ring's loads are all tensor copies) */
    defer |= in->body.insts[k]->op == TIR_DOT && in->body.insts[k]->plan->wait_deferred;
  int owg = e->wg_deferred;
  e->wg_deferred = 0;
  if (defer && !ws) px_cta_sync(e);
  px_label(e, "for", L);
  px_out(e, "setp.ge.s32 %s, %s, %s;", p, i, end);
  px_out(e, "@%s bra $Lend%d;", p, L);
  if (npf) {
    for (int q = 0; q < npf; q++) {
      int nw = (e->V * px_elem_bytes_mem(pfl[q]->ty.elem) + 3) / 4, words = nw * (px_nregs(e, pfl[q]) / e->V);
      const char **cur = arena_alloc(e->a, sizeof(char *) * (size_t)words);
      for (int w = 0; w < words; w++) {
        cur[w] = px_tmp(e, RC_B32);
        px_out(e, "mov.b32 %s, %s;", cur[w], next[q][w]);
      }
      e->pf_load[q] = pfl[q], e->pf_words[q] = cur;
    }
    const char *j = px_tmp(e, RC_B32), *q = px_tmp(e, RC_PRED);
    int K = px_new_label(e);
    px_out(e, "add.s32 %s, %s, %s;", j, i, step);
    px_out(e, "setp.ge.s32 %s, %s, %s;", q, j, end);
    px_out(e, "@%s bra $Lpfk%d;", q, K);
    prefetch_issue(e, in, pfl, next, npf, j);
    px_label(e, "pfk", K);
    e->npf = npf;
  }
  if (ns && !defer && !ws) px_out(e, "cp.async.wait_group %d;", S - 2); /* this iteration's stage has landed */
  if (!prod && (n || (ns && !defer && !ws))) {
    /* the stages the previous iteration read are free: refill them with
     * iteration i + S - 1 (a barrier planned first in the body is this one) */
    if (in->body.len && e->barrier_before[in->body.insts[0]->pos]) e->barrier_before[in->body.insts[0]->pos] = false;
    px_cta_sync(e);
  }
  if (prod) {
    e->waited = false;
  } else if (n) {
    const char *j;
    int K = ahead_or_skip(e, i, step, end, S, "rk", &j);
    ring_issue(e, in, loads, n, j);
    px_label(e, "rk", K);
    e->waited = false;
  }
  if (ns) {
    if (!defer && !ws) sring_refill(e, in, sloads, ns, i, step, end, S, apst);
    for (int k = 0; k < ns; k++) { /* the readers' stage */
      const PlanBuf *b = sloads[k]->plan->buf;
      px_out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", cons[k], acst, (long long)b->stage_bytes);
      e->sbase[b->id] = cons[k];
    }
    if (smbar) { /* this iteration's tensor copies have landed: wait on its stage's phase */
      px_mbar_wait(e, px_mbar_addr(e, smbar, acst, 0), sph, acst);
      px_mbar_flip(e, sph, acst);
    }
  }
  px_jump_push(e, arena_printf(e->a, "$Lend%d", L), arena_printf(e->a, "$Lcont%d", L));
  const TirInst *osw = e->sw_loop;
  const char *oswhi = e->sw_hi;
  e->sw_loop = lead ? in : NULL, e->sw_hi = sw_hi;
  /* a loop without rings, prefetch, shifted walk or cluster split: the
   * warps past the walk's end may skip the body (walkskip.c) */
  int wskip = !n && !ns && !npf && !lead && !cluster_split_loop(e->p, in) ? px_walk_skip_begin(e, in) : -1;
  px_emit_block(e, &in->body);
  px_walk_skip_end(e, wskip);
  e->sw_loop = osw, e->sw_hi = oswhi;
  e->njump--;
  if (continues(&in->body)) px_label(e, "cont", L); /* continue: the iteration's end, its waits and stage moves included */
  e->npf = onpf;
  if (ws) {
    /* each consumer warp tells the producer it is done with a stage: with
     * groups left running, the previous iteration's, once they are done */
    if (defer) {
      px_out(e, "wgmma.wait_group.sync.aligned %d;", e->wg_deferred);
      const char *q = px_tmp(e, RC_PRED);
      px_out(e, "setp.ne.u32 %s, %s, -1;", q, rel);
      int R = px_new_label(e);
      px_out(e, "@!%s bra $Lwsr%d;", q, R);
      specialize_release(e, smbar, rel);
      px_label(e, "wsr", R);
      px_out(e, "mov.u32 %s, %s;", rel, acst);
    } else {
      if (e->wg_deferred) px_out(e, "wgmma.wait_group.sync.aligned 0;");
      specialize_release(e, smbar, acst);
    }
  } else if (defer) { /* the previous iteration's groups are done (this one's run on): its stage is free */
    px_out(e, "wgmma.wait_group.sync.aligned %d;", e->wg_deferred);
    px_cta_sync(e);
    e->refill_sync = S == 2; /* with more stages the next iteration's barrier comes first */
    sring_refill(e, in, sloads, ns, i, step, end, S, apst);
    e->refill_sync = false;
  } else if (e->wg_deferred) {
    px_out(e, "wgmma.wait_group.sync.aligned 0;"); /* not this loop's ring: wait within the iteration */
  }
  e->wg_deferred = owg;
  if (prod) { /* every thread is done with its stage: the producer may refill it */
    px_mbar_arrive(e, px_mbar_addr(e, loads[0]->plan->mbar, e->cst, S));
  }
  if (ns) {
    stage_next(e, acst, S);
    if (!ws) stage_next(e, apst, S);
  }
  if (n) { /* the consumer moves to the next stage */
    px_mbar_flip(e, e->phase, e->cst);
    stage_next(e, e->cst, S);
  }
  px_out(e, "add.s32 %s, %s, %s;", i, i, step);
  px_async_wait(e);
  px_out(e, "bra.uni $Lfor%d;", L);
  px_label(e, "end", L);
  if (defer) px_out(e, "wgmma.wait_group.sync.aligned 0;"); /* the last iteration's groups */
  if (n && !prod) { /* every thread is past its last wait before the mbarriers go */
    px_cta_sync(e);
    px_mbar_inval(e, loads[0]->plan->mbar, S);
  }
  if (ws) { /* the rings live the whole kernel: nothing to wait for or give back */
    for (int k = 0; k < ns; k++) e->sbase[sloads[k]->plan->buf->id] = NULL;
    e->sring_loop = NULL;
  } else if (ns) { /* the groups left are empty; every thread is done with the stages before their bytes go to others */
    px_out(e, "cp.async.wait_group 0;");
    px_cta_sync(e);
    if (smbar) px_mbar_inval(e, smbar, S); /* every copy issued was waited for (none past the end) */
    for (int k = 0; k < ns; k++) e->sbase[sloads[k]->plan->buf->id] = NULL;
    e->sring_loop = NULL;
  }
  e->ring_loop = outer, e->cst = ocst, e->pst = opst, e->phase = oph, e->waited = owaited;
}

/* The producer warp (plan.c, choose_producer): it computes the loop's
 * bounds and the scalars from before the loop that the subscripts need,
 * then issues every iteration's tiles into the ring, waiting on a stage's
 * "empty" mbarrier (all T threads arrive at it when they are done with
 * the stage) before it fills the stage a second time. */
/* The staged rings' tensor copies of the iteration whose loop value is in
 * j into stage e->pst, which then steps (the warp-specialized producer's
 * issue, as ring_issue is the bulk rings'): every map was built. */
static void tma_stage_issue(Emitter *e, const TirInst *loop, const TirInst **loads, int n, const char *j) {
  int64_t tx = 0;
  for (int q = 0; q < n; q++) tx += px_tma_bytes(loads[q]);
  px_replay_subscripts(e, loop, loads, n, j); /* (the producer has no other use for the loop variable) */
  for (int q = 0; q < n; q++) {
    const PlanBuf *b = loads[q]->plan->buf;
    const char *base = px_tmp(e, RC_B32);
    px_out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", base, e->pst, (long long)b->stage_bytes);
    e->sbase[b->id] = base;
  }
  const char *bar = px_mbar_addr(e, loads[0]->plan->mbar, e->pst, 0);
  /* the stage's bytes were last read by the consumers (generic proxy, or
   * wgmma's async one) */
  px_out(e, "fence.proxy.async.shared::cta;");
  px_mbar_arm(e, NULL, bar, arena_printf(e->a, "%lld", (long long)tx));
  for (int q = 0; q < n; q++) {
    const TirInst *ld = loads[q];
    const char *go = px_tmp(e, RC_PRED), *dst = px_tmp(e, RC_B32);
    px_out(e, "setp.eq.u32 %s, 0, 0;", go);
    px_out(e, "add.u32 %s, %s, %lld;", dst, px_smem_of(e, ld->plan->buf), (long long)ld->plan->buf->offset);
    px_tma_copies(e, ld, dst, bar, go);
  }
  for (int q = 0; q < n; q++) e->sbase[loads[q]->plan->buf->id] = NULL;
  stage_next(e, e->pst, e->p->stages);
}

/* A producer (plan.c, choose_producer, and plan/specialize.c): it
 * computes the loop's bounds and the scalars from before the loop that
 * the ringed subscripts need, then issues every iteration's tiles into
 * the ring (ring_issue's bulk copies, or tma_stage_issue's tensor copies),
 * waiting before it fills a stage a second time on that stage's "empty"
 * mbarrier, which the consumers arrive at when they are done with it. */
static void producer_loop(Emitter *e, const TirInst *loop, const TirInst **loads, int n, bool tma) {
  const TirFunc *f = e->f;
  int S = e->p->stages;
  bool *mark = px_subscript_chains(e, loop, loads, n, true);
  e->replay = true;
  for (int i = 0; i < f->body.len && f->body.insts[i] != loop; i++)
    if (mark[f->body.insts[i]->id]) px_emit_inst(e, f->body.insts[i]);
  e->replay = false;
  const char *j = px_tmp(e, RC_B32), *cnt = px_tmp(e, RC_B32), *pe = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED);
  const char *end = px_reg(e, loop->args[1], 0), *step = px_reg(e, loop->args[2], 0);
  e->pst = px_tmp(e, RC_B32);
  px_out(e, "mov.b32 %s, %s;", j, px_reg(e, loop->args[0], 0));
  px_out(e, "mov.u32 %s, 0;", cnt);
  px_out(e, "mov.u32 %s, 0;", pe);
  px_out(e, "mov.u32 %s, 0;", e->pst);
  int L = px_new_label(e);
  px_label(e, "prod", L);
  px_out(e, "setp.ge.s32 %s, %s, %s;", p, j, end);
  px_out(e, "@%s bra $Lprodend%d;", p, L);
  px_out(e, "setp.lt.u32 %s, %s, %d;", p, cnt, S);
  px_out(e, "@%s bra $Lprodgo%d;", p, L);
  /* the stage's previous tiles are consumed */
  px_mbar_wait(e, px_mbar_addr(e, loads[0]->plan->mbar, e->pst, S), pe, e->pst);
  px_mbar_flip(e, pe, e->pst);
  px_label(e, "prodgo", L);
  if (tma) tma_stage_issue(e, loop, loads, n, j);
  else ring_issue(e, loop, loads, n, j);
  px_out(e, "add.u32 %s, %s, 1;", cnt, cnt);
  px_out(e, "add.s32 %s, %s, %s;", j, j, step);
  px_out(e, "bra.uni $Lprod%d;", L);
  px_label(e, "prodend", L);
}

/* The producer warp (plan.c, choose_producer) fills a loop's bulk rings;
 * a warp-specialized plan's producer (plan/specialize.c) its staged
 * tensor-copy rings, from lane 0 of its first warp alone. Every map of
 * the latter was built (the runtime launches it only then,
 * maps_required): a launch without one traps rather than leave the
 * consumers waiting or reading stale stages. */
void px_emit_producer(Emitter *e) {
  const TirFunc *f = e->f;
  bool tma = e->p->specialized;
  const TirInst *loop = NULL, *loads[8];
  for (int i = 0; i < f->body.len && !loop; i++)
    if (f->body.insts[i]->op == TIR_FOR && (tma ? sring_loads : ring_loads)(f->body.insts[i], loads))
      loop = f->body.insts[i];
  if (!loop) return;
  int n = (tma ? sring_loads : ring_loads)(loop, loads);
  if (tma) {
    const char *p = px_tmp(e, RC_PRED);
    px_out(e, "setp.ne.u32 %s, %%plane_, 0;", p);
    px_out(e, "@%s ret;", p); /* lanes 1 .. 127: nothing to do */
    for (int q = 0; q < n; q++) {
      px_out(e, "setp.eq.u32 %s, %%tmok%d, 0;", p, loads[q]->plan->tma - 1);
      px_out(e, "@%s trap;", p);
    }
  }
  producer_loop(e, loop, loads, n, tma);
}
