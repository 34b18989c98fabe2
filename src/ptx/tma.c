/* tma.c: TMA tensor copies and stores (sm_90a): a staged tile by one copy
 * a panel completing on an mbarrier, a padded tile stored by one copy the
 * hardware clips, each with the pointer path beside it for launches whose
 * map the runtime could not build. spec/LANGUAGE.md 15.11. */
#include "emitter.h"

/* The coordinates of load or store `in` in its map, outermost first (a
 * split dim's start x * len is (x, 0)); returns how many. */
static int tma_coords(Emitter *e, const TirInst *in, const char **c) {
  const PlanTmap *tm = &e->p->tmaps[in->plan->tma - 1];
  int nc = 0;
  for (int i = 0; i < tm->rank; i++) {
    if (i == tm->split_dim) {
      c[nc++] = in->plan->tma_outer ? px_reg(e, in->plan->tma_outer, 0)
                                    : arena_printf(e->a, "%lld", (long long)in->plan->tma_outer_const);
      c[nc++] = "0";
    } else {
      c[nc++] = px_sub_start(e, in, i);
    }
  }
  return nc;
}

/* the coordinates as PTX writes them: innermost first */
static const char *tma_coord_list(Emitter *e, const char *const *c, int nc) {
  char coords[256];
  size_t n = 0;
  for (int i = nc - 1; i >= 0; i--)
    n += (size_t)snprintf(coords + n, sizeof coords - n, "%s%s", i == nc - 1 ? "" : ", ", c[i]);
  return arena_printf(e->a, "%s", coords);
}

/* Thread t0's tensor copies of load `in` into shared address dst (a
 * register), completing on the mbarrier at `bar`: one copy per panel of a
 * swizzled tile, the inner coordinate and the destination stepping by a
 * panel. */
void px_tma_copies(Emitter *e, const TirInst *in, const char *dst, const char *bar, const char *t0) {
  const PlanTmap *tm = &e->p->tmaps[in->plan->tma - 1];
  int m = in->plan->tma - 1, rank = tm->rank + (tm->split_dim >= 0);
  const char *c[MAX_TENSOR_RANK + 1];
  int nc = tma_coords(e, in, c);
  const char *inner = c[nc - 1], *dst0 = dst;
  for (int q = 0; q < tm->boxes; q++) {
    if (q) { /* panel q: q boxes along the row, q panels into the buffer (both from the first) */
      const char *ci = px_tmp(e, RC_B32), *dq = px_tmp(e, RC_B32);
      if (inner[0] == '%') px_out(e, "add.s32 %s, %s, %lld;", ci, inner, (long long)(q * tm->box[rank - 1]));
      else px_out(e, "mov.s32 %s, %lld;", ci, atoll(inner) + (long long)(q * tm->box[rank - 1]));
      px_out(e, "add.u32 %s, %s, %lld;", dq, dst0, (long long)(q * plan_buf_rows(in->plan->buf) * tm->swizzle));
      c[nc - 1] = ci;
      dst = dq;
    }
    px_out(e,
           "@%s cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%%tmap%d, {%s}], "
           "[%s];",
           t0, rank, dst, m, tma_coord_list(e, c, nc), bar);
  }
}

/* the bytes a load's copies bring: its whole physical tile (elements
 * outside the tensor arrive as zeros and count too) */
int64_t px_tma_bytes(const TirInst *in) { return px_phys_elems(in) * px_elem_bytes_mem(in->ty.elem); }

/* A tensor copy (plan.c, choose_tma): thread 0 issues one tensor copy of the whole
 * box into the staged buffer, its mbarrier expecting the box's bytes
 * (elements outside the tensor arrive as zeros and count too), and every
 * thread waits on the mbarrier's phase. When the runtime could not build
 * the map for this launch (tmok = 0: a misaligned base or pitch), the
 * staged pointer path instead. */
void px_emit_tma_load(Emitter *e, const TirInst *in) {
  int m = in->plan->tma - 1, id = e->ntma++;
  const PlanBuf *b = in->plan->buf;
  int L = px_new_label(e);
  const char *use = px_tmp(e, RC_PRED), *t0 = px_tmp(e, RC_PRED), *dst = px_tmp(e, RC_B32);
  px_out(e, "setp.ne.u32 %s, %%tmok%d, 0;", use, m);
  px_out(e, "@!%s bra $Ltmafb%d;", use, L);
  px_out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  px_out(e, "add.u32 %s, %%smem_, %lld;", dst, (long long)b->offset);
  const char *bar = px_mbar_addr(e, in->plan->mbar, NULL, 0), *phase = arena_printf(e->a, "%%tmaph%d", id);
  /* the buffer's bytes were last read through the generic proxy */
  px_out(e, "@%s fence.proxy.async.shared::cta;", t0);
  px_mbar_arm(e, t0, bar, arena_printf(e->a, "%lld", (long long)px_tma_bytes(in)));
  px_tma_copies(e, in, dst, bar, t0);
  px_mbar_wait(e, bar, phase, NULL);
  px_mbar_flip(e, phase, NULL);
  px_out(e, "bra.uni $Ltmadone%d;", L);
  px_label(e, "tmafb", L);
  if (!px_emit_stage_rows(e, in)) px_emit_load_elements(e, in);
  /* wgmma reads a swizzled tile through the async proxy */
  if (plan_swizzle(b)) px_out(e, "fence.proxy.async.shared::cta;");
  px_label(e, "tmadone", L);
}

/* A TMA tensor store (plan.c, choose_tma_store): the tile's elements, slack
 * included, into its planned staging buffer (dense, physical order), made
 * visible to the async proxy; then one copy by thread 0 through the map,
 * which clips what lies outside it, thread 0 waiting until the copy has
 * read the buffer before the barrier that frees its bytes. When the
 * runtime could not build the map, the threads store the staged elements
 * inside the slice and the tensor by a loop instead: the tile's registers
 * are read once either way. */
void px_emit_tma_store(Emitter *e, const TirInst *in) {
  const TirInst *v = in->args[0];
  int m = in->plan->tma - 1, L = px_new_label(e), rank = v->ty.rank;
  Scalar te = e->f->params[in->aux].elem;
  int eb = px_elem_bytes_mem(te);
  int64_t elems = px_phys_elems(v);
  const char *t0 = px_tmp(e, RC_PRED), *src = px_tmp(e, RC_B32), *use = px_tmp(e, RC_PRED);
  px_cta_sync(e); /* the buffer's bytes: earlier readers are done */
  px_out(e, "add.u32 %s, %%smem_, %lld;", src, (long long)in->plan->buf->offset);
  /* a fragment's registers 2i and 2i + 1 are neighbouring columns of one
   * row (columns 2t, 2t + 1 of each 8): 16-bit elements go two to a word,
   * one st.shared.b32 a pair where each took five instructions and a
   * 2-byte store (the GQA prefill's O, 128 elements a thread) */
  bool pairs = px_is_frag(e, v) && (te == S_BF16 || te == S_F16) && px_nregs(e, v) % 2 == 0;
  for (int k = 0; k < px_nregs(e, v); k += pairs ? 2 : 1) {
    const char *fl = px_elem_index(e, v, k), *pr = px_tmp(e, RC_PRED), *ad = px_tmp(e, RC_B32),
               *r = px_operand(e, v, k);
    px_out(e, "setp.lt.u32 %s, %s, %lld;", pr, fl, (long long)elems);
    px_out(e, "mad.lo.u32 %s, %s, %d, %s;", ad, fl, eb, src);
    if (!pairs) {
      px_st(e, "shared", te, ad, r, pr);
      continue;
    }
    const char *w = px_tmp(e, RC_B32);
    px_pack_chunk(e, v, te, 1, k, &w);
    px_out(e, "@%s st.shared.b32 [%s], %s;", pr, ad, w);
  }
  px_out(e, "fence.proxy.async.shared::cta;"); /* the threads' writes, seen by the copy */
  px_cta_sync(e);
  px_out(e, "setp.ne.u32 %s, %%tmok%d, 0;", use, m);
  px_out(e, "@!%s bra $Ltsfb%d;", use, L);
  px_out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  const char *c[MAX_TENSOR_RANK + 1];
  int nc = tma_coords(e, in, c);
  px_out(e, "@%s cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group [%%tmap%d, {%s}], [%s];", t0, nc, m,
         tma_coord_list(e, c, nc), src);
  px_out(e, "@%s cp.async.bulk.commit_group;", t0);
  px_out(e, "@%s cp.async.bulk.wait_group.read 0;", t0);
  px_out(e, "bra.uni $Ltsd%d;", L);
  /* no map: element f of the staged tile at physical coordinates (its
   * dims are powers of two), stored when inside the slice and the tensor */
  px_label(e, "tsfb", L);
  const char *f = px_tmp(e, RC_B32), *done = px_tmp(e, RC_PRED), *ok = px_tmp(e, RC_PRED), *w = px_tmp(e, RC_B32),
             *ad = px_tmp(e, RC_B32);
  px_out(e, "mov.u32 %s, %%tid_;", f);
  px_label(e, "tsl", L);
  px_out(e, "setp.ge.u32 %s, %s, %lld;", done, f, (long long)elems);
  px_out(e, "@%s bra $Ltsd%d;", done, L);
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  const char *g[MAX_TENSOR_RANK];
  int64_t below = 1;
  const char *cd[MAX_TILE_RANK];
  for (int d = rank - 1; d >= 0; d--) { /* coordinate d = (f / below) % phys[d] */
    cd[d] = px_tmp(e, RC_B32);
    px_out(e, "shr.u32 %s, %s, %d;", cd[d], f, px_log2i(below));
    px_out(e, "and.b32 %s, %s, %lld;", cd[d], cd[d], (long long)(v->plan->phys[d] - 1));
    below *= v->plan->phys[d];
  }
  px_subscripts(e, in, cd, NULL, NULL, 0, ok, g);
  px_out(e, "mad.lo.u32 %s, %s, %d, %s;", ad, f, eb, src);
  const char *ty = px_bits_type(eb);
  const char *wr = eb == 8 ? px_tmp(e, RC_B64) : w;
  px_out(e, "ld.shared.%s %s, [%s];", ty, wr, ad);
  px_out(e, "@%s st.global.%s [%s], %s;", ok, ty, px_tensor_addr(e, in->aux, g), wr);
  px_out(e, "add.u32 %s, %s, %d;", f, f, e->T);
  px_out(e, "bra.uni $Ltsl%d;", L);
  px_label(e, "tsd", L);
  px_cta_sync(e); /* the buffer's bytes are free again */
}
