/* wgmma.c: tensor-core dots on wgmma (sm_90a): m64nNk16 per row block and
 * k-step, operands through matrix descriptors on swizzled panels, a from
 * registers or shared memory. spec/LANGUAGE.md 15.5. */
#include "emitter.h"

/* A wgmma matrix descriptor (PTX ISA, "matrix descriptor") for a swizzled
 * buffer at shared address addr: the start address >> 4 (14 bits), the
 * leading and stride byte offsets >> 4, and the swizzle mode (1: 128B,
 * 2: 64B, 3: 32B). A k-step adds its byte offset >> 4 to the start: the
 * buffer lies below 2^18, so the field never carries. */
static const char *wg_desc(Emitter *e, const char *addr, int S, int64_t lbo, int64_t sbo) {
  const char *lo = px_tmp(e, RC_B32), *hi = px_tmp(e, RC_B32), *d = px_tmp(e, RC_B64);
  int mode = S == 128 ? 1 : S == 64 ? 2 : 3;
  px_out(e, "bfe.u32 %s, %s, 4, 14;", lo, addr);
  px_out(e, "or.b32 %s, %s, 0x%08llx;", lo, lo, (unsigned long long)((lbo >> 4) << 16));
  px_out(e, "mov.b32 %s, 0x%08llx;", hi, (unsigned long long)((sbo >> 4) | ((int64_t)mode << 30)));
  px_out(e, "mov.b64 %s, {%s, %s};", d, lo, hi);
  return d;
}

/* dot and dot_t on wgmma (DOT_WGMMA: plan.c, choose_dot_paths): per row block mi one
 * wgmma.mma_async.m64nNk16 a k-step, b (and a when staged) read by the
 * tensor cores from the swizzled panels through matrix descriptors, a
 * otherwise packed from its fragment registers as for mma.sync. The
 * accumulators are the result's registers, listed in wgmma's order (row
 * tile mi's column tiles in turn); the first k-step overwrites them
 * (scale-d false) unless the dot accumulates onto its fused addend, or
 * into its var's registers (PlanVal.acc_slot). The group is waited for at
 * once (the stages it reads may be refilled after the next barrier, and
 * the registers are read next) unless the plan deferred the wait to the
 * staged ring's next iteration (PlanVal.wait_deferred: px_emit_for). Operands come from
 * tensor copies (the async proxy); the threads' fallback stores into a
 * swizzled buffer end with a proxy fence (px_emit_tma_load, sring_issue),
 * and so does the barrier after the threads' stores into a swizzled var
 * slot (px_publish_write). */
void px_emit_dot_wgmma(Emitter *e, const TirInst *in, const PlanBuf *sa, const PlanBuf *sb, bool areg) {
  const TirInst *a = in->args[0], *b = in->args[1];
  bool tr = in->aux;
  int64_t K = a->ty.dims[a->ty.rank - 1], N = in->plan->phys[in->ty.rank - 1];
  int W = e->T / 32, eb = 2;
  FragGeom fg = px_frag_geom(e, in), ag = areg ? px_frag_geom(e, a) : (FragGeom){0};
  if ((!areg && !px_published(e, a)) || !px_published(e, b)) px_cta_sync(e);
  const char *ty = a->ty.elem == S_F16 ? "f16" : "bf16";
  /* b: K-major panels (dot_t) step 32 bytes along a row, a panel every
   * S / 32 steps; MN-major (dot, transposed) 16 rows of S bytes a step,
   * the N columns' panels R S apart (the leading byte offset) */
  int Sb = plan_swizzle(sb);
  int64_t Rb = plan_buf_rows(sb);
  const char *bad = px_tmp(e, RC_B32);
  px_out(e, "add.u32 %s, %s, %lld;", bad, px_smem_of(e, sb), (long long)b->plan->buf->offset);
  const char *bd = wg_desc(e, bad, Sb, tr ? 16 : Rb * Sb, 8 * Sb);
  const char *adesc = NULL;
  int Sa = sa ? plan_swizzle(sa) : 0;
  int64_t Ra = sa ? plan_buf_rows(sa) : 0;
  if (sa) { /* a: K-major, the warpgroup's first row 64 g */
    const char *aad = px_tmp(e, RC_B32);
    px_out(e, "add.u32 %s, %s, %lld;", aad, px_smem_of(e, sa), (long long)a->plan->buf->offset);
    if (W > 4) {
      const char *g = px_tmp(e, RC_B32);
      px_out(e, "shr.u32 %s, %%tid_, 7;", g);
      px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", aad, g, (long long)64 * Sa, aad);
    }
    adesc = wg_desc(e, aad, Sa, 16, 8 * Sa);
  }
  int nk = (int)((K + 15) / 16);
  /* a's fragments packed before the fence: wgmma reads registers that
   * other instructions wrote only across wgmma.fence */
  const char *(*ar)[4] = NULL;
  if (areg) {
    ar = arena_alloc(e->a, sizeof *ar * (size_t)(fg.tpm * nk));
    for (int mi = 0; mi < fg.tpm; mi++)
      for (int s = 0; s < nk; s++) px_pack_a_regs(e, a, ag, mi, s, ty, ar[mi * nk + s]);
  }
  /* D: the var's own registers where the plan folded acc += dot into the
   * dot (plan/accumulate.c), else the result's */
  const TirInst *dreg = in->plan->acc_slot ? in->plan->acc_slot : in;
  const TirInst *addend = in->plan->acc_slot ? NULL : px_fused_addend(e, in);
  if (addend)
    for (int k = 0; k < px_nregs(e, in); k++) px_out(e, "mov.f32 %s, %s;", px_reg(e, in, k), px_reg(e, addend, k));
  const char *acc = px_tmp(e, RC_PRED);
  px_out(e, "setp.ne.u32 %s, 0, 0;", acc); /* the first k-step's scale-d: D = A B */
  px_out(e, "wgmma.fence.sync.aligned;");
  int per = (int)(N / 2); /* accumulators per row block */
  size_t cap = (size_t)per * 16 + 256;
  char *dl = arena_alloc(e->a, cap);
  for (int s = 0; s < nk; s++) {
    int64_t kb = (int64_t)s * 16 * eb;
    int64_t boff = tr ? kb / Sb * Rb * Sb + kb % Sb : (int64_t)s * 16 * Sb;
    const char *bk = px_tmp(e, RC_B64);
    px_out(e, "add.s64 %s, %s, %lld;", bk, bd, (long long)(boff >> 4));
    for (int mi = 0; mi < fg.tpm; mi++) {
      size_t at = 0;
      for (int k = 0; k < per; k++)
        at += (size_t)snprintf(dl + at, cap - at, "%s%s", k ? ", " : "", px_reg(e, dreg, mi * fg.ntn * fg.rpt + k));
      const char *scale = s == 0 && !addend && !in->plan->acc_slot ? acc : "1";
      if (areg) {
        const char *const *r4 = ar[mi * nk + s];
        px_out(e, "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, {%s, %s, %s, %s}, %s, %s, 1, 1, %d;",
               (long long)N, ty, ty, dl, r4[0], r4[1], r4[2], r4[3], bk, scale, tr ? 0 : 1);
      } else {
        int64_t aoff = (int64_t)mi * W * 16 * Sa + kb / Sa * Ra * Sa + kb % Sa;
        const char *ak = px_tmp(e, RC_B64);
        px_out(e, "add.s64 %s, %s, %lld;", ak, adesc, (long long)(aoff >> 4));
        px_out(e, "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, %s, %s, %s, 1, 1, 0, %d;", (long long)N, ty,
               ty, dl, ak, bk, scale, tr ? 0 : 1);
      }
    }
  }
  px_out(e, "wgmma.commit_group.sync.aligned;");
  int at = e->wg_commits++;
  if (in->plan->wait_deferred) {
    e->wg_deferred++; /* the loop waits (px_emit_for) */
  } else if (in->plan->wait_at && e->nwg_late < (int)(sizeof e->wg_late / sizeof *e->wg_late)) {
    e->wg_late[e->nwg_late] = in, e->wg_late_at[e->nwg_late++] = at;
  } else {
    px_out(e, "wgmma.wait_group.sync.aligned 0;");
    e->nwg_late = 0;
  }
}

void px_wgmma_settle(Emitter *e, const TirInst *in) {
  int j = -1;
  for (int i = 0; i < e->nwg_late; i++)
    if (!in || e->wg_late[i]->plan->wait_at == in) j = i;
  if (j < 0) return;
  /* groups complete in order: waiting until at most the later ones run
   * waits for this one and every one before it */
  px_out(e, "wgmma.wait_group.sync.aligned %d;", e->wg_commits - e->wg_late_at[j] - 1);
  e->nwg_late -= j + 1;
  memmove(e->wg_late, e->wg_late + j + 1, sizeof *e->wg_late * (size_t)e->nwg_late);
  memmove(e->wg_late_at, e->wg_late_at + j + 1, sizeof *e->wg_late_at * (size_t)e->nwg_late);
}
