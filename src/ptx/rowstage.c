/* rowstage.c: a staged-rows copy's rows in shared memory (staged.c,
 * spec 15.14).
 *
 * Rows r0 .. r0 + BR - 1 of tensor X (rows of D elements of eb bytes, the
 * tensor dense) are one run of global bytes [g0, g1), g1 = g0 + nin D eb
 * for the nin rows inside the tensor, g0 the first of them (max(r0, 0)). The copy holds the 16-byte granules
 * from A0 = g0 rounded down to 16 on, at the same offsets: global address a
 * is shared address a + delta (delta = S0 - A0, S0 the 16-byte aligned
 * area after the plan's buffers), so every address keeps its alignment
 * mod 16 and a load of the copy is the global load's code with the
 * address moved (loads.c: the aligned, whole-chunk, odd-pitch and
 * element-by-element paths alike; masks still from the global
 * coordinates).
 *
 * The bytes arrive by bulk copies (the copy engine: no registers, the whole
 * block in flight), in blocks of the loops' step S: block j of row i is the
 * granules from its column j S on, up to block j + 1's (the next row's
 * first, after the last block), rounded down to 16 at both ends, so the
 * blocks partition [A0, g1 rounded down) and each counts on mbarrier j.
 * The tail, the bytes of the last granule below g1 (under 16), no bulk
 * copy can take without reading past the tensor: the CTA's last 16 / eb
 * threads load it element by element and arrive at the last block's
 * mbarrier, which counts them. A load of block j waits for mbarrier j and
 * the one after it (the odd-pitch path reads the aligned 32 bytes holding
 * a chunk, which may reach into the next block), or the first block's
 * after the last block (the next row's first granule). */
#include "emitter.h"

void px_rowstage_issue(Emitter *e) {
  const TirFunc *f = e->f;
  int X = f->stage_param, eb = px_elem_bytes_mem(f->params[X].elem), ntail = 16 / eb;
  int64_t BR = f->stage_rows, S = f->stage_step;
  const char *D = px_ext(e, X, 1), *R = px_ext(e, X, 0), *r0 = px_i32(e, f->stage_row0);
  const char *nin = px_tmp(e, RC_B32), *t = px_tmp(e, RC_B64), *g0 = px_tmp(e, RC_B64), *g1 = px_tmp(e, RC_B64);
  const char *r0c = px_tmp(e, RC_B32), *hi = px_tmp(e, RC_B32);
  const char *a0 = px_tmp(e, RC_B64), *s0 = px_tmp(e, RC_B32), *d64 = px_tmp(e, RC_B64), *db = px_tmp(e, RC_B32);
  e->rs_delta = px_tmp(e, RC_B64), e->rs_mbar = px_tmp(e, RC_B32), e->rs_nblk = px_tmp(e, RC_B32);
  px_out(e, "// rows %%%d :+ %lld of %s staged in shared memory", f->stage_row0->id, (long long)BR, f->params[X].name);
  /* the rows inside the tensor, [max(r0, 0), min(r0 + BR, R)): the copy
   * starts at the first (a row before the tensor is masked, never read) */
  px_out(e, "max.s32 %s, %s, 0;", r0c, r0);
  px_out(e, "add.s32 %s, %s, %lld;", hi, r0, (long long)BR);
  px_out(e, "min.s32 %s, %s, %s;", hi, hi, R);
  px_out(e, "sub.s32 %s, %s, %s;", nin, hi, r0c);
  px_out(e, "max.s32 %s, %s, 0;", nin, nin);
  px_out(e, "mul.wide.s32 %s, %s, %s;", t, r0c, D);
  px_out(e, "mad.lo.s64 %s, %s, %d, %%base%d;", g0, t, eb, X);
  px_out(e, "mul.wide.s32 %s, %s, %s;", t, nin, D);
  px_out(e, "mad.lo.s64 %s, %s, %d, %s;", g1, t, eb, g0);
  px_out(e, "and.b64 %s, %s, -16;", a0, g0);
  /* the area: past the plan's buffers in the dynamic shared memory of a
   * @dynshared kernel, all of it otherwise */
  int64_t off = staged_area_offset(e->p);
  px_out(e, "mov.u32 %s, dsmem;", s0);
  px_out(e, "add.u32 %s, %s, %lld;", s0, s0, (long long)off);
  px_out(e, "cvt.u64.u32 %s, %s;", d64, s0);
  px_out(e, "sub.s64 %s, %s, %s;", e->rs_delta, d64, a0);
  px_out(e, "mul.lo.u32 %s, %s, %lld;", db, D, (long long)(BR * eb));
  px_out(e, "add.u32 %s, %s, 15;", db, db);
  px_out(e, "and.b32 %s, %s, -16;", db, db);
  px_out(e, "add.u32 %s, %s, 64;", db, db);
  px_out(e, "add.u32 %s, %s, %s;", e->rs_mbar, s0, db);
  px_out(e, "add.u32 %s, %s, %lld;", e->rs_nblk, D, (long long)(S - 1));
  px_out(e, "div.u32 %s, %s, %lld;", e->rs_nblk, e->rs_nblk, (long long)S);
  /* thread 0 initialises an mbarrier a block (the last one also counts
   * the tail's threads), seen by every thread before any waits */
  int L = px_new_label(e);
  const char *q = px_tmp(e, RC_PRED), *j = px_tmp(e, RC_B32), *last = px_tmp(e, RC_B32), *mb = px_tmp(e, RC_B32);
  px_out(e, "setp.ne.u32 %s, %%tid_, 0;", q);
  px_out(e, "@%s bra $Lrsi%d;", q, L);
  px_out(e, "mov.u32 %s, 0;", j);
  px_out(e, "sub.u32 %s, %s, 1;", last, e->rs_nblk);
  px_label(e, "rsj", L);
  px_out(e, "setp.ge.u32 %s, %s, %s;", q, j, last);
  px_out(e, "@%s bra $Lrsk%d;", q, L);
  px_out(e, "mad.lo.u32 %s, %s, 8, %s;", mb, j, e->rs_mbar);
  px_out(e, "mbarrier.init.shared::cta.b64 [%s], 1;", mb);
  px_out(e, "add.u32 %s, %s, 1;", j, j);
  px_out(e, "bra $Lrsj%d;", L);
  px_label(e, "rsk", L);
  px_out(e, "mad.lo.u32 %s, %s, 8, %s;", mb, last, e->rs_mbar);
  px_out(e, "mbarrier.init.shared::cta.b64 [%s], %d;", mb, 1 + ntail);
  px_out(e, "fence.mbarrier_init.release.cluster;");
  px_label(e, "rsi", L);
  px_out(e, "bar.sync 0;");
  /* warp 0's lanes issue the blocks, lane l blocks l, l + 32, ...: each
   * row's bytes expected on the block's mbarrier, then copied; one arrival
   * when the block's rows are issued */
  const char *c0 = px_tmp(e, RC_B32), *c1 = px_tmp(e, RC_B32), *i = px_tmp(e, RC_B32), *id = px_tmp(e, RC_B64);
  const char *o0 = px_tmp(e, RC_B64), *o1 = px_tmp(e, RC_B64), *bb = px_tmp(e, RC_B64), *ee = px_tmp(e, RC_B64);
  const char *sz = px_tmp(e, RC_B32), *dst = px_tmp(e, RC_B32), *st = px_tmp(e, RC_B64), *nz = px_tmp(e, RC_PRED);
  px_out(e, "setp.ge.u32 %s, %%tid_, 32;", q);
  px_out(e, "@%s bra $Lrsc%d;", q, L);
  px_out(e, "mov.u32 %s, %%tid_;", j);
  px_label(e, "rsb", L);
  px_out(e, "setp.ge.u32 %s, %s, %s;", q, j, e->rs_nblk);
  px_out(e, "@%s bra $Lrsc%d;", q, L);
  px_out(e, "mad.lo.u32 %s, %s, 8, %s;", mb, j, e->rs_mbar);
  px_out(e, "mul.lo.u32 %s, %s, %lld;", c0, j, (long long)S);
  px_out(e, "add.u32 %s, %s, %lld;", c1, c0, (long long)S);
  px_out(e, "min.u32 %s, %s, %s;", c1, c1, D);
  px_out(e, "mov.u32 %s, 0;", i);
  px_label(e, "rsr", L);
  px_out(e, "setp.ge.s32 %s, %s, %s;", q, i, nin);
  px_out(e, "@%s bra $Lrse%d;", q, L);
  px_out(e, "mul.wide.u32 %s, %s, %s;", id, i, D);
  px_out(e, "cvt.u64.u32 %s, %s;", o0, c0);
  px_out(e, "add.s64 %s, %s, %s;", o0, o0, id);
  px_out(e, "mad.lo.s64 %s, %s, %d, %s;", bb, o0, eb, g0);
  px_out(e, "and.b64 %s, %s, -16;", bb, bb);
  px_out(e, "cvt.u64.u32 %s, %s;", o1, c1);
  px_out(e, "add.s64 %s, %s, %s;", o1, o1, id);
  px_out(e, "mad.lo.s64 %s, %s, %d, %s;", ee, o1, eb, g0);
  px_out(e, "and.b64 %s, %s, -16;", ee, ee);
  px_out(e, "sub.s64 %s, %s, %s;", ee, ee, bb);
  px_out(e, "cvt.u32.u64 %s, %s;", sz, ee);
  px_out(e, "setp.ne.u32 %s, %s, 0;", nz, sz);
  px_out(e, "add.s64 %s, %s, %s;", o0, bb, e->rs_delta);
  px_out(e, "cvt.u32.u64 %s, %s;", dst, o0);
  px_out(e, "@%s mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%s], %s;", nz, mb, sz);
  px_out(e, "@%s cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%s], %s, [%s];", nz, dst, bb,
         sz, mb);
  px_out(e, "add.u32 %s, %s, 1;", i, i);
  px_out(e, "bra $Lrsr%d;", L);
  px_label(e, "rse", L);
  px_out(e, "mbarrier.arrive.shared::cta.b64 %s, [%s];", st, mb);
  px_out(e, "add.u32 %s, %s, 32;", j, j);
  px_out(e, "bra $Lrsb%d;", L);
  px_label(e, "rsc", L);
  /* the tail: the CTA's last ntail threads, an element each */
  const char *tt = px_tmp(e, RC_B32), *ga = px_tmp(e, RC_B64), *v = px_tmp(e, RC_B32), *in = px_tmp(e, RC_PRED);
  px_out(e, "sub.u32 %s, %%tid_, %d;", tt, e->T - ntail);
  px_out(e, "setp.ge.u32 %s, %s, %d;", q, tt, ntail);
  px_out(e, "@%s bra $Lrst%d;", q, L);
  px_out(e, "and.b64 %s, %s, -16;", ga, g1);
  px_out(e, "mad.wide.u32 %s, %s, %d, %s;", ga, tt, eb, ga);
  px_out(e, "setp.lt.u64 %s, %s, %s;", in, ga, g1);
  px_out(e, "setp.gt.and.s32 %s, %s, 0, %s;", in, nin, in);
  px_out(e, "add.s64 %s, %s, %s;", o0, ga, e->rs_delta);
  px_out(e, "cvt.u32.u64 %s, %s;", dst, o0);
  const char *w = eb == 2 ? "u16" : "b32"; /* a u16 in a 32-bit register */
  px_out(e, "@%s ld.global.%s %s, [%s];", in, w, v, ga);
  px_out(e, "@%s st.shared.%s [%s], %s;", in, w, dst, v);
  px_out(e, "sub.u32 %s, %s, 1;", last, e->rs_nblk);
  px_out(e, "mad.lo.u32 %s, %s, 8, %s;", mb, last, e->rs_mbar);
  px_out(e, "mbarrier.arrive.shared::cta.b64 %s, [%s];", st, mb);
  px_label(e, "rst", L);
}

void px_rowstage_wait(Emitter *e, const TirInst *in) {
  const char *c = px_sub_start(e, in, 1), *j = px_tmp(e, RC_B32), *jn = px_tmp(e, RC_B32);
  const char *mb = px_tmp(e, RC_B32), *z = px_tmp(e, RC_B32), *q = px_tmp(e, RC_PRED);
  int64_t S = e->f->stage_step;
  if ((S & (S - 1)) == 0) px_out(e, "shr.u32 %s, %s, %d;", j, c, px_log2i(S));
  else px_out(e, "div.u32 %s, %s, %lld;", j, c, (long long)S);
  px_out(e, "mov.u32 %s, 0;", z);
  px_out(e, "mad.lo.u32 %s, %s, 8, %s;", mb, j, e->rs_mbar);
  px_mbar_wait(e, mb, z, NULL);
  px_out(e, "add.u32 %s, %s, 1;", jn, j);
  px_out(e, "setp.ge.u32 %s, %s, %s;", q, jn, e->rs_nblk);
  px_out(e, "selp.b32 %s, 0, %s, %s;", jn, jn, q);
  const char *mb2 = px_tmp(e, RC_B32);
  px_out(e, "mad.lo.u32 %s, %s, 8, %s;", mb2, jn, e->rs_mbar);
  px_mbar_wait(e, mb2, z, NULL);
}

bool px_rowstage_load(const Emitter *e, const TirInst *in) {
  return e->f->staged && in->op == TIR_LOAD && in->aux == e->f->stage_param;
}
