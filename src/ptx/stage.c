/* stage.c: staged tiles: a tile the plan puts in shared memory, copied by
 * cp.async 16 bytes at a time where it is aligned and inside its tensor, by
 * the threads' rows path or a loop over its elements otherwise. */
#include "emitter.h"

/* A staged rank-2 load whose rows are covered by whole rounds of chunks:
 * the rows path of px_emit_load_rows into packed words (vector loads where
 * aligned), then one vector st.shared of each chunk into the buffer at
 * its pitch, slack and rows past the tensor included (as zeros). */
bool px_emit_stage_rows(Emitter *e, const TirInst *in) {
  const PlanBuf *b = in->plan->buf;
  int V = e->V, eb = px_elem_bytes_mem(in->ty.elem);
  if (in->plan->res != RES_SHARED || in->ty.rank != 2 || V == 1 || eb > 4 || V * eb < 4 || b->rank != 2 ||
      b->pitch % V || plan_swizzle(b))
    return false;
  int64_t p0 = in->plan->phys[0], p1 = in->plan->phys[1], TV = (int64_t)e->T * V;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  if (spans != 2 || TV % p1 || p1 % V) return false;
  int nw = V * eb / 4, rows = px_nregs(e, in) / V;
  const char **w = arena_alloc(e->a, sizeof(char *) * (size_t)(rows * nw));
  for (int i = 0; i < rows * nw; i++) w[i] = px_tmp(e, RC_B32);
  const char *c1, *r0;
  if (!px_emit_load_rows_at(e, in, w, &c1, &r0)) return false;
  /* A barrier planned before this load guards the buffer's bytes (other
   * threads may still read the last iteration's tile): it goes here, after
   * the global loads and before the stores, so the loads' latency overlaps
   * the wait instead of following it. Only the words are live across it. */
  px_emit_pending_sync(e);
  int64_t rpr = TV / p1;
  const char *a0 = px_tmp(e, RC_B32);
  px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", a0, r0, (long long)b->pitch, c1);
  px_out(e, "mad.lo.u32 %s, %s, %d, %s;", a0, a0, eb, px_smem_of(e, b));
  px_out(e, "add.u32 %s, %s, %lld;", a0, a0, (long long)b->offset);
  for (int j = 0; j < rows; j++) {
    int64_t row = (int64_t)j * rpr;
    if (row >= p0) break;
    const char *p = px_tmp(e, RC_PRED), **wj = w + j * nw;
    px_out(e, "setp.lt.u32 %s, %s, %lld;", p, r0, (long long)(p0 - row)); /* a row of the buffer */
    long long off = (long long)(row * b->pitch * eb);
    if (nw == 4) px_out(e, "@%s st.shared.v4.b32 [%s+%lld], {%s, %s, %s, %s};", p, a0, off, wj[0], wj[1], wj[2], wj[3]);
    else if (nw == 2) px_out(e, "@%s st.shared.v2.b32 [%s+%lld], {%s, %s};", p, a0, off, wj[0], wj[1]);
    else px_out(e, "@%s st.shared.b32 [%s+%lld], %s;", p, a0, off, wj[0]);
  }
  return true;
}

/* The global address of element g of tensor `param` and the byte pitch of
 * its dim i0 (the element size times its stride), and a predicate:
 * `ok` and both 16-byte aligned, what a bulk or 16-byte async copy of rows
 * starting there needs. */
const char *px_aligned16(Emitter *e, int param, int eb, const char *const *g, int i0, const char *ok,
                             const char **addr, const char **pitch) {
  const char *a0 = px_tensor_addr(e, param, g), *step = px_pitch(e, param, i0, eb), *al = px_tmp(e, RC_B64),
             *p = px_tmp(e, RC_PRED);
  px_out(e, "or.b64 %s, %s, %s;", al, a0, step);
  px_out(e, "and.b64 %s, %s, 15;", al, al);
  px_out(e, "setp.eq.and.u64 %s, %s, 0, %s;", p, al, ok);
  *addr = a0, *pitch = step;
  return p;
}

/* One cp.async of 16 bytes from src to [dst + off], or of none (the
 * destination zero-filled) unless q: then it reads no bytes and takes the
 * tensor's base as its address. `from` and `sz` are the caller's
 * registers (from may be src itself). */
static void copy16(Emitter *e, int param, const char *dst, int64_t off, const char *from, const char *src,
                   const char *sz, const char *q) {
  px_out(e, "selp.b64 %s, %s, %%base%d, %s;", from, src, param, q); /* no bytes read: any valid address */
  px_out(e, "selp.u32 %s, 16, 0, %s;", sz, q);
  px_out(e, "cp.async.cg.shared.global [%s+%lld], [%s], 16, %s;", dst, (long long)off, from, sz);
}

/* One 16-byte chunk of px_emit_stage_async: row `row`, chunk column `col`;
 * source size 0 (zeros) unless `inside`. */
static void stage_chunk(Emitter *e, const TirInst *in, const PlanBuf *b, const char *row, const char *col,
                        const char *step, const char *a0, const char *inside) {
  int eb = px_elem_bytes_mem(in->ty.elem);
  const char *src = px_tmp(e, RC_B64), *r64 = px_tmp(e, RC_B64), *dst = px_tmp(e, RC_B32), *sz = px_tmp(e, RC_B32);
  px_out(e, "cvt.s64.s32 %s, %s;", r64, row);
  px_out(e, "mad.lo.s64 %s, %s, %s, %s;", src, r64, step, a0);
  px_out(e, "mad.wide.u32 %s, %s, 16, %s;", src, col, src);
  px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", dst, row, (long long)(b->pitch * eb), px_smem_of(e, b));
  px_out(e, "mad.lo.u32 %s, %s, 16, %s;", dst, col, dst);
  copy16(e, in->aux, dst, b->offset, src, src, sz, inside);
}

/* A staged rank-2 tile (spans i0, i1 of its subscripts g; a0 the address
 * of its first element, step the byte pitch of dim i0, from aligned16)
 * copied element by element in a loop of the CTA's threads over the tile, each element
 * loaded (zero outside the slice or the tensor) and stored into its
 * buffer at the buffer's pitch: a ring stage's fallback where cp.async
 * cannot copy the tile (misaligned, or columns leaving the tensor). A
 * loop, not unrolled code: it is emitted at each of the ring's issues, and
 * a one-warp CTA's tile is hundreds of elements a thread. */
void px_emit_stage_loop(Emitter *e, const TirInst *in, const char *const *g, int i0, int i1, const char *a0,
                            const char *step) {
  const PlanBuf *b = in->plan->buf;
  int eb = px_elem_bytes_mem(in->ty.elem), P = in->aux;
  int64_t p0 = in->plan->phys[0], p1 = in->plan->phys[1];
  const char *pok = px_tmp(e, RC_PRED); /* the point subscripts inside the tensor */
  px_out(e, "setp.eq.u32 %s, 0, 0;", pok);
  for (int i = 0; i < in->nsubs; i++) {
    if (i == i0 || i == i1) continue;
    px_and_below(e, pok, g[i], px_ext(e, P, i));
  }
  const char *f = px_tmp(e, RC_B32), *done = px_tmp(e, RC_PRED), *row = px_tmp(e, RC_B32), *col = px_tmp(e, RC_B32),
             *gr = px_tmp(e, RC_B32), *gc = px_tmp(e, RC_B32), *v = px_tmp(e, RC_PRED), *r64 = px_tmp(e, RC_B64),
             *ad = px_tmp(e, RC_B64), *w = px_tmp(e, RC_B32), *dst = px_tmp(e, RC_B32);
  const char *ty = px_bits_type(eb);
  const char *wr = eb == 8 ? px_tmp(e, RC_B64) : w;
  int L = px_new_label(e);
  px_out(e, "mov.u32 %s, %%tid_;", f);
  px_label(e, "el", L);
  px_out(e, "setp.ge.u32 %s, %s, %lld;", done, f, (long long)(p0 * p1));
  px_out(e, "@%s bra $Leld%d;", done, L);
  px_out(e, "shr.u32 %s, %s, %d;", row, f, px_log2i(p1));
  px_out(e, "and.b32 %s, %s, %lld;", col, f, (long long)(p1 - 1));
  px_out(e, "add.s32 %s, %s, %s;", gr, g[i0], row);
  px_out(e, "add.s32 %s, %s, %s;", gc, g[i1], col);
  px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", v, row, (long long)in->subs[i0].len, pok);
  px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", v, col, (long long)in->subs[i1].len, v);
  px_out(e, "setp.lt.and.u32 %s, %s, %s, %s;", v, gr, px_ext(e, P, i0), v); /* unsigned: a negative row is out too */
  px_out(e, "setp.lt.and.u32 %s, %s, %s, %s;", v, gc, px_ext(e, P, i1), v);
  px_out(e, "cvt.s64.s32 %s, %s;", r64, row);
  px_out(e, "mad.lo.s64 %s, %s, %s, %s;", ad, r64, step, a0);
  px_out(e, "cvt.s64.s32 %s, %s;", r64, col);
  px_out(e, "mad.lo.s64 %s, %s, %d, %s;", ad, r64, eb, ad);
  px_out(e, "mov.%s %s, 0;", eb == 8 ? "b64" : "b32", wr);
  px_out(e, "@%s ld.global.%s %s, [%s];", v, ty, wr, ad);
  if (plan_swizzle(b)) {
    const char *rc[2] = {row, col};
    px_out(e, "st.shared.%s [%s], %s;", ty, px_buf_addr(e, b, rc), wr);
  } else {
    px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", dst, row, (long long)b->pitch, col);
    px_out(e, "mad.lo.u32 %s, %s, %d, %s;", dst, dst, eb, px_smem_of(e, b));
    px_out(e, "st.shared.%s [%s+%lld], %s;", ty, dst, (long long)b->offset, wr);
  }
  px_out(e, "add.u32 %s, %s, %d;", f, f, e->T);
  px_out(e, "bra.uni $Lel%d;", L);
  px_label(e, "eld", L);
}

/* A staged rank-2 load by cp.async (sm_80 and later), 16 bytes a copy
 * straight from global to shared memory, no registers in between: thread t
 * copies the 16-byte chunks t, t + T, ... of the tile into the buffer at its
 * pitch (a @padstage pitch too). Rows past the slice's length or the
 * tensor's end, and chunks of column slack, are copied with source size 0,
 * which fills zeros. Taken at run time when the tile's columns lie inside
 * the tensor and its first element and row pitch are 16-byte aligned; the
 * other tiles, and tiles of a tensor the kernel also stores to, take the
 * element path (px_emit_stage_rows, px_emit_load_elements).
 * The thread waits for its copies just before the next barrier (px_async_wait),
 * the one planned before the tile's readers, which publishes them. Issuing
 * a staged ring's stage (e->issuing), the loop commits and waits, and a
 * tile that fails the run-time test is copied by px_emit_stage_loop. */
bool px_emit_stage_async(Emitter *e, const TirInst *in) {
  const PlanBuf *b = in->plan->buf;
  int eb = px_elem_bytes_mem(in->ty.elem);
  if (in->plan->res != RES_SHARED || in->ty.rank != 2 || !b || b->rank != 2 || (eb != 2 && eb != 4) || e->replay ||
      e->p->no_async)
    return false;
  int spans[2], ns = 0;
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) {
      if (ns == 2) return false;
      spans[ns++] = i;
    }
  int64_t p0 = in->plan->phys[0], p1 = in->plan->phys[1], ce = 16 / eb;
  if (ns != 2 || (p1 * eb) % 16 || (b->pitch * eb) % 16 || b->offset % 16 || in->subs[spans[1]].len % ce || plan_swizzle(b))
    return false;
  int i0 = spans[0], i1 = spans[1];
  const TirParam *tp = &e->f->params[in->aux];
  if (i1 != tp->rank - 1) return false; /* the columns must be the contiguous dim */
  /* a 16-byte chunk belongs to another thread than the elements the flat
   * layout gives a thread: against a store to the same tensor (before or
   * after) the element path, where each thread loads and stores its own */
  if (tir_stores_to(&e->f->body, in->aux)) return false;
  px_emit_pending_sync(e);
  const char *g[MAX_TENSOR_RANK], *ok = px_tmp(e, RC_PRED);
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < in->nsubs; i++) {
    g[i] = px_sub_start(e, in, i);
    if (i == i1) px_and_span_inside(e, ok, g[i], p1, in->aux, i); /* every chunk's columns inside */
    else if (i != i0) px_and_below(e, ok, g[i], px_ext(e, in->aux, i));
  }
  const char *a0, *step, *go = px_aligned16(e, in->aux, eb, g, i0, ok, &a0, &step);
  int L = px_new_label(e);
  px_out(e, "@!%s bra $Lsa%d;", go, L);
  int64_t cpr = p1 / ce, chunks = p0 * cpr, len0 = in->subs[i0].len, len1 = in->subs[i1].len;
  /* rows this thread may copy: below the slice's length and inside the tensor */
  const char *lim = px_tmp(e, RC_B32), *t = px_tmp(e, RC_B32);
  px_out(e, "sub.s32 %s, %s, %s;", lim, px_ext(e, in->aux, i0), g[i0]);
  px_out(e, "min.s32 %s, %s, %lld;", lim, lim, (long long)len0);
  if (e->T % cpr == 0 && chunks % e->T == 0) {
    /* Every round of T chunks is T / cpr whole rows: a thread keeps its
     * column and steps down by that many rows, so its source and
     * destination advance by constant strides and only the row test
     * changes from one chunk to the next. */
    int64_t rstep = e->T / cpr;
    const char *row = px_tmp(e, RC_B32), *col = px_tmp(e, RC_B32), *lim0 = px_tmp(e, RC_B32), *r64 = px_tmp(e, RC_B64),
               *src = px_tmp(e, RC_B64), *stride = px_tmp(e, RC_B64), *dst = px_tmp(e, RC_B32),
               *colok = px_tmp(e, RC_PRED);
    px_out(e, "shr.u32 %s, %%tid_, %d;", row, px_log2i(cpr));
    px_out(e, "and.b32 %s, %%tid_, %lld;", col, (long long)(cpr - 1));
    px_out(e, "sub.s32 %s, %s, %s;", lim0, lim, row);    /* chunk k's row is inside while k * rstep < lim0 */
    px_out(e, "add.s32 %s, %s, %s;", t, g[i0], row);      /* the first chunk's row in the tensor */
    px_out(e, "setp.lt.u32 %s, %s, %lld;", colok, col,
           (long long)(len1 < p1 ? len1 / ce : cpr)); /* column slack: zeros */
    px_out(e, "cvt.s64.s32 %s, %s;", r64, row);
    px_out(e, "mad.lo.s64 %s, %s, %s, %s;", src, r64, step, a0);
    px_out(e, "mad.wide.u32 %s, %s, 16, %s;", src, col, src);
    px_out(e, "mul.lo.s64 %s, %s, %lld;", stride, step, (long long)rstep);
    px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", dst, row, (long long)(b->pitch * eb), px_smem_of(e, b));
    px_out(e, "mad.lo.u32 %s, %s, 16, %s;", dst, col, dst);
    int64_t rounds = chunks / e->T;
    if (rounds > 8 && rounds % 4 == 0) {
      /* many rounds a thread (a one-warp CTA's tile): a loop of four
       * copies a trip, or ptxas hoists every copy's address into registers
       * of its own */
      const char *kr = px_tmp(e, RC_B32), *tk = px_tmp(e, RC_B32), *lu[4], *more = px_tmp(e, RC_PRED);
      px_out(e, "mov.u32 %s, 0;", kr);
      for (int u = 0; u < 4; u++) {
        lu[u] = px_tmp(e, RC_B32);
        px_out(e, "sub.s32 %s, %s, %lld;", lu[u], lim0, (long long)(u * rstep));
      }
      int C = px_new_label(e);
      px_label(e, "cp", C);
      px_out(e, "add.s32 %s, %s, %s;", tk, t, kr);
      for (int u = 0; u < 4; u++) {
        const char *v = px_tmp(e, RC_PRED), *q = px_tmp(e, RC_PRED), *from = px_tmp(e, RC_B64), *sz = px_tmp(e, RC_B32);
        px_out(e, "setp.gt.and.s32 %s, %s, %s, %s;", v, lu[u], kr, colok);
        px_out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", q, tk, (long long)(-u * rstep), v);
        copy16(e, in->aux, dst, b->offset + u * rstep * b->pitch * eb, from, src, sz, q);
        px_out(e, "add.s64 %s, %s, %s;", src, src, stride);
      }
      px_out(e, "add.s32 %s, %s, %lld;", kr, kr, (long long)(4 * rstep));
      px_out(e, "add.u32 %s, %s, %lld;", dst, dst, (long long)(4 * rstep * b->pitch * eb));
      px_out(e, "setp.lt.s32 %s, %s, %lld;", more, kr, (long long)(rounds * rstep));
      px_out(e, "@%s bra $Lcp%d;", more, C);
      rounds = 0;
    }
    for (int64_t k = 0; k < rounds; k++) {
      const char *v = px_tmp(e, RC_PRED), *q = px_tmp(e, RC_PRED), *from = px_tmp(e, RC_B64), *sz = px_tmp(e, RC_B32);
      if (k) px_out(e, "add.s64 %s, %s, %s;", src, src, stride);
      px_out(e, "setp.gt.and.s32 %s, %s, %lld, %s;", v, lim0, (long long)(k * rstep), colok);
      px_out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", q, t, (long long)(-k * rstep), v);
      copy16(e, in->aux, dst, b->offset + k * rstep * b->pitch * eb, from, src, sz, q);
    }
  }
  for (int64_t c0 = 0; !(e->T % cpr == 0 && chunks % e->T == 0) && c0 < chunks; c0 += e->T) {
    const char *c = px_tmp(e, RC_B32), *row = px_tmp(e, RC_B32), *col = px_tmp(e, RC_B32), *v = px_tmp(e, RC_PRED),
               *q = px_tmp(e, RC_PRED);
    px_out(e, "add.u32 %s, %%tid_, %lld;", c, (long long)c0);
    px_out(e, "shr.u32 %s, %s, %d;", row, c, px_log2i(cpr));
    px_out(e, "and.b32 %s, %s, %lld;", col, c, (long long)(cpr - 1));
    px_out(e, "setp.lt.s32 %s, %s, %s;", v, row, lim);
    px_out(e, "add.s32 %s, %s, %s;", t, g[i0], row);
    px_out(e, "setp.ge.and.s32 %s, %s, 0, %s;", q, t, v);
    if (len1 < p1) {
      const char *q2 = px_tmp(e, RC_PRED);
      px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", q2, col, (long long)(len1 / ce), q);
      q = q2;
    }
    const char *inside = q;
    if (chunks % e->T && c0 + e->T > chunks) { /* the last round: threads past the tile copy nothing */
      const char *q3 = px_tmp(e, RC_PRED), *in_t = px_tmp(e, RC_PRED);
      px_out(e, "setp.lt.u32 %s, %s, %lld;", in_t, c, (long long)chunks);
      px_out(e, "and.pred %s, %s, %s;", q3, q, in_t);
      inside = q3;
      const char *sk = px_tmp(e, RC_PRED);
      px_out(e, "not.pred %s, %s;", sk, in_t);
      int S = px_new_label(e);
      px_out(e, "@%s bra $Lsn%d;", sk, S);
      stage_chunk(e, in, b, row, col, step, a0, inside);
      px_label(e, "sn", S);
      continue;
    }
    stage_chunk(e, in, b, row, col, step, a0, inside);
  }
  if (!e->issuing) { /* a ring's loop commits once for all its tiles, and waits by count */
    px_out(e, "cp.async.commit_group;");
    e->async_pending = true;
  }
  px_out(e, "bra.uni $Lsd%d;", L);
  px_label(e, "sa", L);
  /* (a ring stage's fallback is a loop: unrolled, it would be emitted at
   * each issue and hold registers the loop's own work needs) */
  if (e->issuing) px_emit_stage_loop(e, in, g, i0, i1, a0, step);
  else if (!px_emit_stage_rows(e, in)) px_emit_load_elements(e, in);
  px_label(e, "sd", L);
  return true;
}
