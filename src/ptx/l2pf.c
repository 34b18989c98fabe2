/* ptx/l2pf.c: the prefetch of a marked load's slice D blocks ahead (src/l2pf.c).
 *
 * Once a CTA, beside the load's first emission: thread t < rows takes row t
 * of the slice (the last subscript's span is the row; the others' spans
 * in row-major order), at coordinates start + step * D, and asks L2 for
 * the columns the pass recorded (every load of that row) inside the tensor: `cp.async.bulk.prefetch.L2.global`
 * wants a 16-byte aligned address and a multiple of 16 bytes, so the range
 * is rounded inward (a row of 16 bytes or less may ask for nothing). A
 * distance of 0 (the runtime's default) or a row outside the tensor asks
 * for nothing. The prefetch is a hint: it writes nothing, and the loads
 * that follow read memory as they would without it. */
#include "emitter.h"
#include "ptx.h"

/* (not in a cluster-rows copy: ctx.block.x is the cluster's, and the
 * distance the runtime passes counts CTAs) */
bool ptx_l2pf(const Plan *p, const char *arch) {
  return !p->no_async && !p->no_l2pf && !p->cluster && l2pf_used(p->f, arch);
}

/* Asks L2 for one row of load `in`'s tensor: the row whose first element
 * is at 64-bit coordinates idx[] (the last its first column), cols
 * columns, where ok holds and the row lies inside the tensor (unsigned: a
 * negative coordinate is out), the columns cut to the tensor's and rounded
 * inward to 16 bytes. off is a 64-bit temporary of the caller's. */
void px_l2pf_row(Emitter *e, const TirInst *in, const char *ok, const char *off, const char *const *idx, int64_t cols) {
  int t = in->aux, last = in->nsubs - 1;
  int64_t eb = px_elem_bytes_mem(e->f->params[t].elem);
  /* rows inside the tensor (unsigned: a negative one is out), each index
   * times its dim's stride */
  px_out(e, "mov.u64 %s, 0;", off);
  const char *st = px_tmp(e, RC_B64);
  for (int k = 0; k < last; k++) {
    px_out(e, "setp.lt.and.u64 %s, %s, %%ext%d_%d, %s;", ok, idx[k], t, k, ok);
    px_out(e, "cvt.s64.s32 %s, %%str%d_%d;", st, t, k);
    px_out(e, "mad.lo.s64 %s, %s, %s, %s;", off, idx[k], st, off);
  }
  /* the row's columns inside it: [max(c, 0), min(c + len, N)) */
  const char *lo = px_tmp(e, RC_B64), *hi = px_tmp(e, RC_B64), *sz = px_tmp(e, RC_B32);
  px_out(e, "max.s64 %s, %s, 0;", lo, idx[last]);
  px_out(e, "add.s64 %s, %s, %lld;", hi, idx[last], (long long)cols);
  px_out(e, "min.s64 %s, %s, %%ext%d_%d;", hi, hi, t, last);
  px_out(e, "add.s64 %s, %s, %s;", lo, lo, off);
  px_out(e, "add.s64 %s, %s, %s;", hi, hi, off);
  px_out(e, "mad.lo.s64 %s, %s, %lld, %%base%d;", lo, lo, (long long)eb, t);
  px_out(e, "mad.lo.s64 %s, %s, %lld, %%base%d;", hi, hi, (long long)eb, t);
  px_out(e, "add.s64 %s, %s, 15;", lo, lo);
  px_out(e, "and.b64 %s, %s, -16;", lo, lo);
  px_out(e, "and.b64 %s, %s, -16;", hi, hi);
  px_out(e, "setp.gt.and.s64 %s, %s, %s, %s;", ok, hi, lo, ok);
  px_out(e, "sub.s64 %s, %s, %s;", hi, hi, lo);
  px_out(e, "min.u64 %s, %s, 2147483632;", hi, hi); /* a u32 size: rows of 2 GB and more ask for their first 2 GB */
  px_out(e, "cvt.u32.u64 %s, %s;", sz, hi);
  px_out(e, "@%s cp.async.bulk.prefetch.L2.global [%s], %s;", ok, lo, sz);
}

/* The 64-bit coordinates idx[] of row r (a register, consumed) of load
 * `in`'s slice: r in mixed radix over the slice's row dims, the last
 * fastest, added to each subscript's start; with steps (the slice's step a
 * block, TirInst.l2pf) each coordinate moved %pfd64_ blocks on, and the
 * last one col more columns. */
void px_l2pf_coords(Emitter *e, const TirInst *in, const char *r, const int64_t *steps, int64_t col, const char **idx) {
  int last = in->nsubs - 1;
  const char *part[MAX_TENSOR_RANK] = {0};
  for (int k = last - 1; k >= 0; k--) {
    if (in->subs[k].len <= 1) continue;
    part[k] = px_tmp(e, RC_B32);
    px_out(e, "rem.u32 %s, %s, %lld;", part[k], r, (long long)in->subs[k].len);
    px_out(e, "div.u32 %s, %s, %lld;", r, r, (long long)in->subs[k].len);
  }
  /* 64 bits: start + step D may pass 2^31 */
  for (int k = 0; k <= last; k++) {
    const char *v = px_tmp(e, RC_B64), *s = px_tmp(e, RC_B64);
    px_out(e, "cvt.s64.s32 %s, %s;", v, px_sub_start(e, in, k));
    if (k == last && col) px_out(e, "add.s64 %s, %s, %lld;", v, v, (long long)col);
    if (steps && steps[k]) {
      px_out(e, "mul.lo.s64 %s, %%pfd64_, %lld;", s, (long long)steps[k]);
      px_out(e, "add.s64 %s, %s, %s;", v, v, s);
    }
    if (k < last && part[k]) {
      px_out(e, "cvt.u64.u32 %s, %s;", s, part[k]);
      px_out(e, "add.s64 %s, %s, %s;", v, v, s);
    }
    idx[k] = v;
  }
}

void px_emit_l2pf(Emitter *e, const TirInst *in) {
  if (!e->l2pf || !in->l2pf || e->replay || e->l2pf_done[in->id]) return;
  e->l2pf_done[in->id] = true;

  int last = in->nsubs - 1;
  int64_t rows = 1;
  for (int k = 0; k < last; k++) rows *= in->subs[k].len;
  px_out(e, "// %%%d: its slice %%pfd_ blocks ahead, into L2 (l2pf.c)", in->id);
  const char *ok = px_tmp(e, RC_PRED), *r = px_tmp(e, RC_B32), *off = px_tmp(e, RC_B64);
  int L = px_new_label(e); /* the threads past the slice's rows (most warps) skip it all */
  px_out(e, "setp.gt.s32 %s, %%pfd_, 0;", ok);
  px_out(e, "setp.lt.and.u32 %s, %%tid_, %lld, %s;", ok, (long long)rows, ok);
  px_out(e, "@!%s bra $Ll2pf%d;", ok, L);
  px_out(e, "mov.u32 %s, %%tid_;", r);
  const char *idx[MAX_TENSOR_RANK];
  px_l2pf_coords(e, in, r, in->l2pf, in->l2pf[last + 1], idx);
  px_l2pf_row(e, in, ok, off, idx, in->l2pf[last + 2]);
  px_label(e, "l2pf", L);
}
