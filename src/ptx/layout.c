/* layout.c: where an element is, in the layout the plan chose for a value
 * (plan/layout.c): how many registers it takes and which element each
 * holds (the flat distribution, the mma fragment layout and its row
 * values, the blocked layout, its row values and its row vectors' columns
 * layout), coordinates from flat indices, shared-memory addresses of
 * planned buffers (swizzled or padded), and operands read from a buffer. */
#include "emitter.h"

/* The fragment layout.
 *
 * A value whose class of tied values is a tensor-core dot's result (the
 * plan's mma16x8x16.acc layout) can stay in the registers the mma writes:
 * the [M, N] value (leading dims folded into M) is cut into tiles of 16
 * rows by NT columns (NT 16, or 8 when N is not a multiple of 16); warp w
 * owns the row tiles w, w + W, ... with all their column tiles, and holds
 * each tile as mma.m16n8 accumulators: lane (g = lane / 4, t = lane % 4)
 * has rows g and g + 8, columns 2t and 2t + 1 of each 8-column half.
 * Register k of such a value is element (frag base of the thread) + C(k),
 * C a constant: px_elem_index. Elementwise operations work register by
 * register as in the flat layout; everything that needs coordinates asks
 * px_elem_index; a row value broadcast over a fragment value costs a move
 * from the row value held beside it (px_is_rowfrag), or else one load per row
 * a thread holds (two per row tile). */

/* elements of a value this thread holds */
int64_t px_phys_elems(const TirInst *in) {
  int64_t n = 1;
  for (int i = 0; i < in->ty.rank; i++) n *= in->plan->phys[i];
  return n;
}

/* A value in the fragment layout (the plan's mma16x8x16.acc: plan.c,
 * pl_choose_layouts). */
bool px_is_frag(const Emitter *e, const TirInst *x) {
  (void)e;
  return x->plan && x->ty.rank >= 2 && x->plan->res == RES_REG && x->plan->layout &&
         x->plan->layout->kind == LAYOUT_MMA_ACC;
}

/* A row value ([.., 1], the class of a reduction over a fragment value)
 * held beside its fragment value: register 2 mi + h of the thread is row
 * 16 (w + mi W) + g + 8 h, the rows whose elements it holds there; the four
 * lanes of a quad hold the same rows. */
bool px_is_rowfrag(const Emitter *e, const TirInst *x) {
  (void)e;
  return x->plan && x->ty.rank >= 2 && x->plan->res == RES_REG && x->plan->layout &&
         x->plan->layout->kind == LAYOUT_SLICED && x->plan->layout->parent->kind == LAYOUT_MMA_ACC;
}

FragGeom px_frag_geom(const Emitter *e, const TirInst *x) {
  FragGeom g;
  int r = x->ty.rank;
  g.N = x->plan->phys[r - 1];
  g.M = 1;
  for (int i = 0; i + 1 < r; i++) g.M *= x->plan->phys[i];
  g.NT = g.N % 16 == 0 ? 16 : 8;
  g.ntn = (int)(g.N / g.NT);
  g.tpm = (int)(g.M / 16 / (e->T / 32));
  g.rpt = g.NT / 8 * 4;
  return g;
}

/* registers of value `in` (plan.c, plan_regs; below at most
 * MAX_REGS_PER_VALUE, check_backend_limits) */
int px_nregs(Emitter *e, const TirInst *in) { return (int)plan_regs(e->p, in); }

/* The flat physical index of this thread's element k. Chunks of V
 * consecutive elements go round the threads: register k of thread t holds
 * element ((k / V) * T + t) * V + k % V, so a thread's V registers of one
 * chunk are neighbours in a row (one vector access) and consecutive
 * threads hold consecutive chunks (coalesced). %tidv_ is t * V. */
const char *px_flat_index(Emitter *e, int k) {
  const char *r = px_tmp(e, RC_B32);
  px_out(e, "add.u32 %s, %%tidv_, %d;", r, (k / e->V) * e->T * e->V + k % e->V);
  return r;
}

/* The blocked layout (plan.h, BlockGeom). A thread's row base is
 * wrow tr + lrow and its column base (wcol reps_c tc + lcol) V, lane =
 * lrow tc + lcol and warp = wrow wc + wcol; register k lies rr = k / (V
 * reps_c) row repetitions (tr wr rows each) down and c = k / V % reps_c
 * chunk repetitions (tc V columns each) along, v = k % V columns into its
 * chunk. The chunk repetitions go first along a row, then the warps: each
 * warp's columns of a row are one run (its lanes' chunks, then theirs
 * again tc chunks on), so that a store whose rows are not 16-byte aligned
 * passes each chunk's bytes between neighbouring lanes of one warp
 * (loads.c, misaligned_store_rows), and a warp past a row's end holds none
 * of it (skip.c). ptxas keeps one copy of the bases. */
const char *px_blk_row_base(Emitter *e, const BlockGeom *g) {
  const char *r = px_tmp(e, RC_B32), *l = px_tmp(e, RC_B32);
  px_out(e, "shr.u32 %s, %%tid_, %d;", r, 5 + px_log2i(g->wc));
  px_out(e, "shl.b32 %s, %s, %d;", r, r, px_log2i(g->tr));
  if (g->tr > 1) {
    px_out(e, "bfe.u32 %s, %%tid_, %d, %d;", l, px_log2i(g->tc), 5 - px_log2i(g->tc));
    px_out(e, "add.u32 %s, %s, %s;", r, r, l);
  }
  return r;
}

const char *px_blk_col_base(Emitter *e, const BlockGeom *g) {
  const char *c = px_tmp(e, RC_B32), *l = px_tmp(e, RC_B32);
  if (g->wc > 1) px_out(e, "bfe.u32 %s, %%tid_, 5, %d;", c, px_log2i(g->wc));
  else px_out(e, "mov.u32 %s, 0;", c);
  px_out(e, "shl.b32 %s, %s, %d;", c, c, px_log2i(g->tc) + px_log2i((int)g->reps_c));
  px_out(e, "and.b32 %s, %%tid_, %d;", l, g->tc - 1);
  px_out(e, "add.u32 %s, %s, %s;", c, c, l);
  px_out(e, "shl.b32 %s, %s, %d;", c, c, px_log2i(g->V));
  return c;
}

/* register k's row and column, less the thread's bases */
int64_t px_blk_row_off(const BlockGeom *g, int k) { return k / (g->V * g->reps_c) * (int64_t)g->tr * g->wr; }
int64_t px_blk_col_off(const BlockGeom *g, int k) { return (int64_t)(k / g->V % g->reps_c) * g->tc * g->V + k % g->V; }

/* the highest column base of the CTA's threads */
int64_t px_blk_col_last(const BlockGeom *g) {
  return ((int64_t)(g->wc - 1) * g->reps_c * g->tc + g->tc - 1) * g->V;
}

/* A row vector in the fragment's columns (plan_is_fragcols): register m's
 * column less 2t, and the register that holds register k's column of a
 * fragment value of geometry g (its column tile ni, 8-column half j, and
 * column q & 1 of the pair) */
int px_fragcols_col(int m) { return m / 2 * 8 + m % 2; }
int px_fragcols_reg(const FragGeom *g, int k) {
  int i = k / g->rpt, ni = i % g->ntn, j = k / 4 % (g->NT / 8), q = k % 4;
  return (ni * (g->NT / 8) + j) * 2 + (q & 1);
}

/* The thread that stores a row value (sliced from a blocked layout, which
 * the lanes and warps along a row all hold): column base 0; or a row
 * vector in the columns layout (which every row holds): row base 0. NULL
 * for any other value. */
const char *px_blk_owner(Emitter *e, const TirInst *x) {
  if (x->ty.rank && plan_is_columns(x)) { /* every row holds a row vector: row base 0 stores it */
    BlockGeom g = plan_block_geom(x);
    if (g.tr == 1 && g.wr == 1) return NULL;
    const char *p = px_tmp(e, RC_PRED);
    px_out(e, "setp.eq.u32 %s, %s, 0;", p, px_blk_row_base(e, &g));
    return p;
  }
  if (!x->ty.rank || !plan_is_blocked_rows(x)) return NULL;
  BlockGeom g = plan_block_geom(x);
  if (g.tc == 1 && g.wc == 1) return NULL;
  const char *p = px_tmp(e, RC_PRED);
  px_out(e, "setp.eq.u32 %s, %s, 0;", p, px_blk_col_base(e, &g));
  return p;
}

/* Coordinate d of register k of x: through its flat index, or directly
 * from the rows and columns of a fragment or blocked value. */
const char *px_elem_coord(Emitter *e, const TirInst *x, int k, int d) {
  if (px_is_frag(e, x)) return px_frag_coord(e, x, k, d);
  int r = x->ty.rank;
  if (!plan_is_blocked(x) && !plan_is_blocked_rows(x) && !plan_is_columns(x))
    return px_coord(e, px_elem_index(e, x, k), x->plan->phys, r, d);
  BlockGeom g = plan_block_geom(x);
  const char *c = px_tmp(e, RC_B32);
  if (plan_is_columns(x) && d < r - 1) return "0";
  if (d == r - 1) {
    if (plan_is_blocked_rows(x)) return "0";
    px_out(e, "add.u32 %s, %s, %lld;", c, px_blk_col_base(e, &g), (long long)px_blk_col_off(&g, k));
    return c;
  }
  int shift = 0;
  for (int i = d + 1; i < r - 1; i++) shift += px_log2i(x->plan->phys[i]);
  int64_t roff = plan_is_blocked_rows(x) ? (int64_t)k * g.tr * g.wr : px_blk_row_off(&g, k); /* a row value: k is its row repetition */
  px_out(e, "add.u32 %s, %s, %lld;", c, px_blk_row_base(e, &g), (long long)roff);
  if (shift) px_out(e, "shr.u32 %s, %s, %d;", c, c, shift);
  if (d) px_out(e, "and.b32 %s, %s, %lld;", c, c, (long long)(x->plan->phys[d] - 1));
  return c;
}

/* The flat physical index of register k of value x, in x's layout. */
const char *px_elem_index(Emitter *e, const TirInst *x, int k) {
  if (x->ty.rank && (plan_is_blocked(x) || plan_is_blocked_rows(x) || plan_is_columns(x))) {
    BlockGeom g = plan_block_geom(x);
    const char *r = px_tmp(e, RC_B32);
    if (plan_is_columns(x)) { /* [N] or [1, N]: the column is the flat index */
      px_out(e, "add.u32 %s, %s, %lld;", r, px_blk_col_base(e, &g), (long long)px_blk_col_off(&g, k));
      return r;
    }
    if (plan_is_blocked_rows(x)) { /* row k's repetition: the folded row is the flat index */
      px_out(e, "add.u32 %s, %s, %lld;", r, px_blk_row_base(e, &g), (long long)(k * (int64_t)g.tr * g.wr));
      return r;
    }
    px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", r, px_blk_row_base(e, &g), (long long)g.N, px_blk_col_base(e, &g));
    px_out(e, "add.u32 %s, %s, %lld;", r, r, (long long)(px_blk_row_off(&g, k) * g.N + px_blk_col_off(&g, k)));
    return r;
  }
  if (x->ty.rank && plan_is_fragcols(x)) { /* [N] or [1, N]: the column is the flat index */
    const char *r = px_tmp(e, RC_B32);
    px_out(e, "add.u32 %s, %%ft2_, %d;", r, px_fragcols_col(k));
    return r;
  }
  if (px_is_rowfrag(e, x)) {
    const char *r = px_tmp(e, RC_B32);
    px_out(e, "add.u32 %s, %%fwg_, %lld;", r, (long long)(k / 2 * (e->T / 32) * 16 + k % 2 * 8));
    return r;
  }
  if (!px_is_frag(e, x)) return px_flat_index(e, k);
  FragGeom g = px_frag_geom(e, x);
  int W = e->T / 32, i = k / g.rpt, mi = i / g.ntn, ni = i % g.ntn, j = k / 4 % (g.NT / 8), q = k % 4;
  int64_t c = (int64_t)mi * W * 16 * g.N + 8 * (q >> 1) * g.N + ni * g.NT + j * 8 + (q & 1);
  const char *r = px_tmp(e, RC_B32);
  px_out(e, "mad.lo.u32 %s, %%fwg_, %lld, %%ft2_;", r, (long long)g.N); /* (16 w + g) N + 2 t */
  px_out(e, "add.u32 %s, %s, %lld;", r, r, (long long)c);
  return r;
}

/* Coordinate d of register k of a fragment value, from its row and column
 * separately: the column is 2t plus a constant, the folded row 16 w + g
 * plus a constant, so registers of one row share the row's coordinates
 * (ptxas keeps one copy) instead of each decoding its flat index. */
const char *px_frag_coord(Emitter *e, const TirInst *x, int k, int d) {
  FragGeom g = px_frag_geom(e, x);
  int r = x->ty.rank, W = e->T / 32, i = k / g.rpt, mi = i / g.ntn, ni = i % g.ntn, j = k / 4 % (g.NT / 8), q = k % 4;
  const char *c = px_tmp(e, RC_B32);
  if (d == r - 1) {
    px_out(e, "add.u32 %s, %%ft2_, %d;", c, ni * g.NT + j * 8 + (q & 1));
    return c;
  }
  int shift = 0;
  for (int i2 = d + 1; i2 < r - 1; i2++) shift += px_log2i(x->plan->phys[i2]);
  px_out(e, "add.u32 %s, %%fwg_, %d;", c, mi * W * 16 + 8 * (q >> 1));
  if (shift) px_out(e, "shr.u32 %s, %s, %d;", c, c, shift);
  if (d) px_out(e, "and.b32 %s, %s, %lld;", c, c, (long long)(x->plan->phys[d] - 1));
  return c;
}

/* coordinate d of a flat index, for a value of physical shape phys */
const char *px_coord(Emitter *e, const char *flat, const int64_t *phys, int rank, int d) {
  int shift = 0;
  for (int i = d + 1; i < rank; i++) shift += px_log2i(phys[i]);
  const char *r = px_tmp(e, RC_B32);
  px_out(e, "shr.u32 %s, %s, %d;", r, flat, shift);
  px_out(e, "and.b32 %s, %s, %lld;", r, r, (long long)(phys[d] - 1));
  return r;
}

/* The register a buffer's addresses start from: %smem_, or for a staged
 * ring the base of its current stage (px_emit_for). */
const char *px_smem_of(const Emitter *e, const PlanBuf *b) {
  return b && b->stages && e->sbase[b->id] ? e->sbase[b->id] : "%smem_";
}

/* A swizzled buffer (PlanBuf.swizzle S bytes, as a swizzled tensor copy
 * writes it): R rows (the leading dims folded) cut into panels of S bytes
 * of each row, panel p at p R S; within a panel, byte o = row S + w (w < S)
 * lies at o ^ (((o >> 7) & (S / 16 - 1)) << 4): the 16-byte chunks of a
 * row permuted by bits of the row, so that eight rows at one column fall in
 * eight different banks. The pattern repeats every 8 rows (1024 bytes at
 * S = 128), and buffers are 1024-aligned, so it is the hardware's, which
 * applies it to the shared address itself. */
/* The row bits that a swizzled panel's chunk index is XORed with, for row
 * register `row` (lane-dependent rows only: a multiple of 8 added to a row
 * leaves them alone). */
const char *px_swz_rowx(Emitter *e, int S, const char *row) {
  const char *x = px_tmp(e, RC_B32);
  px_out(e, "mul.lo.u32 %s, %s, %d;", x, row, S);
  px_out(e, "bfe.u32 %s, %s, 7, %d;", x, x, px_log2i(S / 16));
  return x;
}

/* shared address of physical coordinates c in a planned buffer */
const char *px_buf_addr(Emitter *e, const PlanBuf *b, const char *const *c) {
  const char *row = px_tmp(e, RC_B32);
  px_out(e, "mov.u32 %s, 0;", row);
  for (int d = 0; d + 1 < b->rank; d++)
    px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", row, row, (long long)b->dims[d], c[d]);
  if (plan_swizzle(b)) {
    int S = plan_swizzle(b);
    const char *cb = px_tmp(e, RC_B32), *pan = px_tmp(e, RC_B32), *o = px_tmp(e, RC_B32), *x = px_tmp(e, RC_B32);
    px_out(e, "mul.lo.u32 %s, %s, %d;", cb, c[b->rank - 1], sema_scalar_bytes(b->elem));
    px_out(e, "shr.u32 %s, %s, %d;", pan, cb, px_log2i(S));
    px_out(e, "and.b32 %s, %s, %d;", cb, cb, S - 1);
    px_out(e, "mad.lo.u32 %s, %s, %d, %s;", o, row, S, cb);
    px_out(e, "bfe.u32 %s, %s, 7, %d;", x, o, px_log2i(S / 16)); /* o's row bits: w < S carries nothing into bit 7 */
    px_out(e, "shl.b32 %s, %s, 4;", x, x);
    px_out(e, "xor.b32 %s, %s, %s;", o, o, x);
    px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", o, pan, (long long)(plan_buf_rows(b) * S), o);
    px_out(e, "add.u32 %s, %s, %s;", o, o, px_smem_of(e, b));
    if (b->offset) px_out(e, "add.u32 %s, %s, %lld;", o, o, (long long)b->offset);
    return o;
  }
  const char *a = px_tmp(e, RC_B32);
  px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", a, row, (long long)b->pitch, c[b->rank - 1]);
  px_out(e, "mad.lo.u32 %s, %s, %d, %s;", a, a, sema_scalar_bytes(b->elem), px_smem_of(e, b));
  if (b->offset) px_out(e, "add.u32 %s, %s, %lld;", a, a, (long long)b->offset);
  return a;
}

/* Register k of an operand: its own register, or a load from its shared
 * buffer when the plan keeps it there. */
const char *px_operand(Emitter *e, const TirInst *x, int k) {
  if (x->ty.rank == 0 || x->plan->res != RES_SHARED) return px_reg(e, x, k);
  const PlanBuf *b = x->plan->buf;
  const char *r = px_tmp(e, px_rc_of(x->ty.elem));
  const char *fl = px_flat_index(e, k);
  const char *c[MAX_TILE_RANK];
  for (int d = 0; d < x->ty.rank; d++) c[d] = px_coord(e, fl, x->plan->phys, x->ty.rank, d);
  /* the thread's last element may lie past the tile: read element 0 instead */
  const char *in_range = px_tmp(e, RC_PRED);
  px_out(e, "setp.lt.u32 %s, %s, %lld;", in_range, fl, (long long)px_phys_elems(x));
  for (int d = 0; d < x->ty.rank; d++) px_out(e, "selp.b32 %s, %s, 0, %s;", c[d], c[d], in_range);
  px_ld(e, "shared", x->ty.elem, r, px_buf_addr(e, b, c), NULL);
  return r;
}

/* the flat physical index of coordinates c in a value of shape phys */
const char *px_flat_of(Emitter *e, const char *const *c, const int64_t *phys, int rank) {
  const char *r = px_tmp(e, RC_B32);
  px_out(e, "mov.u32 %s, 0;", r);
  for (int d = 0; d < rank; d++) {
    px_out(e, "shl.b32 %s, %s, %d;", r, r, px_log2i(phys[d]));
    px_out(e, "or.b32 %s, %s, %s;", r, r, c[d]);
  }
  return r;
}
