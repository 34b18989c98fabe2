/* cluster.c: a cluster-rows copy's code (src/cluster.c, spec 15.22): the
 * split loops' bounds and the deferred accumulators met across the
 * cluster's CTAs through distributed shared memory.
 *
 * At a split loop's exit each CTA has met its own threads' values as the
 * plain variant does (exchange.c, px_defer_exit); then every thread of a
 * row stores that row's value (the same bits in each: an element stored
 * by many threads lands once) into its CTA's slot of the cluster
 * exchange, a static area of 8 bytes a row for each such accumulator
 * (each its own bytes: no slot is written twice, so no barrier is needed
 * before a later one is written). A cluster barrier (arrive.release, wait
 * .acquire) publishes the stores; then each thread reads the C CTAs'
 * slots of its rows (mapa, ld.shared::cluster) and folds them in rank
 * order, which every CTA does alike: all hold the same bits. A sum or a
 * max folds as its reduction; a logsumexp's pairs (m, l) as M = max m, L =
 * sum l e^(m - M). The kernel ends on one more cluster barrier (its arrive
 * relaxed), so that no CTA's shared memory goes while another may still
 * read it. */
#include "emitter.h"

void px_cluster_loop(Emitter *e, const TirInst *loop, const char *i, const char *start, const char **step) {
  const TirInst *st = loop->args[2]; /* a constant (tir_dim_loop) */
  px_out(e, "mad.lo.s32 %s, %%clr_, %lld, %s; // CTA k of the cluster starts at block k (cluster.c)", i,
         (long long)st->ival, start);
  *step = arena_printf(e->a, "%lld", (long long)(st->ival * e->p->cluster));
}

/* this thread's slot address (shared::cta) for row register rr, and
 * whether the row is inside the tile */
static const char *slot_addr(Emitter *e, const BlockGeom *g, int rr, int64_t off, const char **in_tile) {
  const char *rb = px_blk_row_base(e, g), *row = px_tmp(e, RC_B32), *ad = px_tmp(e, RC_B32);
  px_out(e, "add.u32 %s, %s, %lld;", row, rb, (long long)rr * g->tr * g->wr);
  if (in_tile) {
    *in_tile = px_tmp(e, RC_PRED);
    px_out(e, "setp.lt.u32 %s, %s, %lld;", *in_tile, row, (long long)g->M);
  }
  px_out(e, "min.u32 %s, %s, %lld;", row, row, (long long)(g->M - 1)); /* slack rows read row M - 1 */
  px_out(e, "mov.u32 %s, clx_;", ad);
  px_out(e, "mad.lo.u32 %s, %s, 8, %s;", ad, row, ad);
  if (off) px_out(e, "add.u32 %s, %s, %lld;", ad, ad, (long long)off);
  return ad;
}

static void cluster_sync(Emitter *e) {
  px_out(e, "barrier.cluster.arrive.release.aligned;");
  px_out(e, "barrier.cluster.wait.acquire.aligned;");
}

void px_cluster_meet(Emitter *e, const BlockGeom *g, RegClass rc, const char *op, const char *const *r0,
                     const char *const *r1) {
  int C = e->p->cluster;
  int64_t off = e->clx_bytes;
  e->clx_bytes += g->M * 8;
  bool lse = r1 != NULL, wide = rc == RC_F64 || rc == RC_B64;
  const char **ad = arena_alloc(e->a, sizeof *ad * (size_t)g->reps_r);
  for (int rr = 0; rr < (int)g->reps_r; rr++) {
    const char *in;
    ad[rr] = slot_addr(e, g, rr, off, &in);
    if (lse) px_out(e, "@%s st.shared.v2.f32 [%s], {%s, %s};", in, ad[rr], r0[rr], r1[rr]);
    else px_out(e, "@%s st.shared.%s [%s], %s;", in, wide ? "b64" : "b32", ad[rr], r0[rr]);
  }
  cluster_sync(e);
  for (int rr = 0; rr < (int)g->reps_r; rr++) {
    const char **m = arena_alloc(e->a, sizeof *m * (size_t)C), **l = arena_alloc(e->a, sizeof *l * (size_t)C);
    for (int k = 0; k < C; k++) {
      const char *ra = px_tmp(e, RC_B32);
      px_out(e, "mapa.shared::cluster.u32 %s, %s, %d;", ra, ad[rr], k);
      m[k] = px_tmp(e, rc);
      if (lse) {
        l[k] = px_tmp(e, RC_F32);
        px_out(e, "ld.shared::cluster.v2.f32 {%s, %s}, [%s];", m[k], l[k], ra);
      } else {
        px_out(e, "ld.shared::cluster.%s %s, [%s];", wide ? "b64" : "b32", m[k], ra);
      }
    }
    if (!lse) {
      px_out(e, "mov.%s %s, %s;", px_mov_type(rc), r0[rr], m[0]);
      for (int k = 1; k < C; k++) px_red_step(e, op, r0[rr], r0[rr], m[k]);
      continue;
    }
    px_out(e, "mov.f32 %s, %s;", r0[rr], m[0]);
    for (int k = 1; k < C; k++) px_out(e, "max.f32 %s, %s, %s;", r0[rr], r0[rr], m[k]);
    for (int k = 0; k < C; k++) {
      const char *x = px_tmp(e, RC_F32);
      px_out(e, "sub.rn.f32 %s, %s, %s;", x, m[k], r0[rr]);
      px_exp_f32(e, x, x);
      if (k == 0) px_out(e, "mul.rn.f32 %s, %s, %s;", r1[rr], l[k], x);
      else px_out(e, "fma.rn.f32 %s, %s, %s, %s;", r1[rr], l[k], x, r1[rr]);
    }
  }
}

/* The kernel's last cluster barrier only keeps each CTA's shared memory
 * alive while another may still read it: its arrive is relaxed. A release
 * there first waits for the CTA's global stores to drain (stalls on membar:
 * 4.0 cycles an instruction in a cluster copy whose CTAs store 64 KB each,
 * ncu, 12-06c call 3); relaxed, softmax f32 over 4096 x 128256 ran
 * v9_cl8 at 1520 us against 1572 (12-06c call 4, H100). */
void px_cluster_end(Emitter *e) {
  px_out(e, "barrier.cluster.arrive.relaxed.aligned;");
  px_out(e, "barrier.cluster.wait.acquire.aligned;");
}

void px_cluster_prologue(const Emitter *e, FILE *out) {
  fputs("  .reg .b32 %clr_;\n  mov.u32 %clr_, %cluster_ctarank;\n", out);
  if (e->clx_bytes) fprintf(out, "  .shared .align 8 .b8 clx_[%lld];\n", (long long)e->clx_bytes);
}
