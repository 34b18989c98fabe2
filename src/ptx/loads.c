/* loads.c: the threads' own global accesses: tensor addresses and masks,
 * the rows paths (vector loads of whole rounds of chunks, long rows at
 * immediate offsets), element-by-element loads and stores, the packed words
 * a load leaves for its first use, and the dispatch of every load and store
 * to its path (TMA, staged, ring, rows, elements). */
#include "emitter.h"

static void emit_pointer_store(Emitter *e, const TirInst *in);

/* global address of element g[] of tensor p, in a 64-bit register: each
 * coordinate times its dim's stride (spec 16.3), the last dim's 1 */
const char *px_tensor_addr(Emitter *e, int p, const char *const *g) {
  const TirParam *tp = &e->f->params[p];
  /* each row coordinate's product one mul.wide.s32 (32-bit strides: a
   * 64-bit stride took LDCs and three IMADs, the GQA decode code 19% more
   * bytes), the sum in 64 bits, the column last: ptxas keeps the fewest
   * registers so (the column first, or mad.wide chains, cost gqa_attention's
   * NQ=8 entries up to 100 registers a thread and spills) */
  const char *lin = px_tmp(e, RC_B64), *col = px_tmp(e, RC_B64);
  px_out(e, "mov.u64 %s, 0;", lin);
  for (int d = 0; d + 1 < tp->rank; d++) {
    const char *ge = px_tmp(e, RC_B64);
    px_out(e, "mul.wide.s32 %s, %s, %%str%d_%d;", ge, g[d], p, d);
    px_out(e, "add.s64 %s, %s, %s;", lin, lin, ge);
  }
  if (e->p->general_strides) /* the last dim's stride too (Plan.general_strides) */
    px_out(e, "mul.wide.s32 %s, %s, %%str%d_%d;", col, g[tp->rank - 1], p, tp->rank - 1);
  else
    px_out(e, "cvt.s64.s32 %s, %s;", col, g[tp->rank - 1]);
  px_out(e, "add.s64 %s, %s, %s;", lin, lin, col);
  const char *ad = px_tmp(e, RC_B64);
  px_out(e, "mad.lo.s64 %s, %s, %d, %%base%d;", ad, lin, px_elem_bytes_mem(tp->elem), p);
  return ad;
}

/* mult times the stride of tensor p's dim d (elements; the last dim's is
 * 1), in a 64-bit register: with mult the element size, the bytes from
 * one index of dim d to the next */
const char *px_pitch(Emitter *e, int p, int d, int64_t mult) {
  const char *r = px_tmp(e, RC_B64);
  if (d + 1 >= e->f->params[p].rank && !e->p->general_strides) px_out(e, "mov.u64 %s, %lld;", r, (long long)mult);
  else px_out(e, "mul.wide.s32 %s, %%str%d_%d, %lld;", r, p, d, (long long)mult);
  return r;
}

/* The OR of the byte pitches of tensor p's dims d0 to its last but one:
 * where this and an address are aligned to a power of two, so is the
 * address of every element that differs from it only in those dims'
 * indices (rows of a strided tensor lie a multiple of their own pitch
 * apart, not of the innermost row's). */
const char *px_pitch_bits(Emitter *e, int p, int d0) {
  int eb = px_elem_bytes_mem(e->f->params[p].elem), last = e->f->params[p].rank - 1;
  if (d0 >= last) return px_pitch(e, p, last, eb);
  const char *r = px_pitch(e, p, d0, eb);
  for (int d = d0 + 1; d < last; d++) px_out(e, "or.b64 %s, %s, %s;", r, r, px_pitch(e, p, d, eb));
  return r;
}

/* One past the last byte of tensor p: its base plus the element size
 * times (1 + the sum over dims of (extent - 1) times stride). */
const char *px_tensor_end(Emitter *e, int p) {
  const TirParam *tp = &e->f->params[p];
  const char *end = px_tmp(e, RC_B64), *t = px_tmp(e, RC_B64), *t2 = px_tmp(e, RC_B64);
  bool all = e->p->general_strides; /* the last dim's stride is a parameter too */
  px_out(e, "mov.b64 %s, %s;", end, all ? "1" : arena_printf(e->a, "%%ext%d_%d", p, tp->rank - 1));
  for (int d = 0; d + (all ? 0 : 1) < tp->rank; d++) {
    px_out(e, "sub.s64 %s, %%ext%d_%d, 1;", t, p, d);
    px_out(e, "cvt.s64.s32 %s, %%str%d_%d;", t2, p, d);
    px_out(e, "mad.lo.s64 %s, %s, %s, %s;", end, t, t2, end);
  }
  px_out(e, "mad.lo.s64 %s, %s, %d, %%base%d;", end, end, px_elem_bytes_mem(tp->elem), p);
  return end;
}

/* Subscript i of `in` as a 32-bit coordinate. Coordinates and extents are
 * 32-bit in the backend (an extent is below 2^31): an i64 start saturates
 * to the i32 range, so a point past it is masked like any other outside
 * the tensor instead of wrapping to one inside. */
const char *px_sub_start(Emitter *e, const TirInst *in, int i) { return px_i32(e, in->subs[i].start); }

const char *px_i32(Emitter *e, const TirInst *s) {
  if (px_rc_of(s->ty.elem) != RC_B64) return px_reg(e, s, 0);
  const char *r = px_tmp(e, RC_B32);
  px_out(e, "cvt.sat.s32.s64 %s, %s;", r, px_reg(e, s, 0));
  return r;
}

/* The register holding tensor `param`'s extent along dim d, as 32 bits. */
const char *px_ext(Emitter *e, int param, int d) { return arena_printf(e->a, "%%ext32_%d_%d", param, d); }

/* ok &&= a < bound, unsigned, so a negative a is out too: the one step of
 * every mask's predicate chain. */
void px_and_below(Emitter *e, const char *ok, const char *a, const char *bound) {
  const char *p = px_tmp(e, RC_PRED);
  px_out(e, "setp.lt.and.u32 %s, %s, %s, %s;", p, a, bound, ok);
  px_out(e, "mov.pred %s, %s;", ok, p);
}

/* ok &&= 0 <= start and start + len <= tensor param's extent along d: a
 * whole span inside the tensor. */
void px_and_span_inside(Emitter *e, const char *ok, const char *start, int64_t len, int param, int d) {
  const char *p = px_tmp(e, RC_PRED), *last = px_tmp(e, RC_B32);
  px_out(e, "add.s32 %s, %s, %lld;", last, start, (long long)len);
  px_out(e, "setp.ge.and.s32 %s, %s, 0, %s;", p, start, ok);
  px_out(e, "setp.le.and.s32 %s, %s, %s, %s;", ok, last, px_ext(e, param, d), p);
}

/* The tensor coordinates g of one element of access `in` (a load or a
 * store), and ok &&= the element is not slack and lies inside the tensor.
 * A point subscript's coordinate is its start; a span's is its start plus
 * the element's coordinate along it: c[j] for the j-th span, or (c NULL)
 * coordinate j of flat index fl in a value of physical shape phys. */
void px_subscripts(Emitter *e, const TirInst *in, const char *const *c, const char *fl, const int64_t *phys, int rank,
                   const char *ok, const char **g) {
  int j = 0;
  for (int i = 0; i < in->nsubs; i++) {
    const char *start = px_sub_start(e, in, i);
    if (in->subs[i].point) {
      g[i] = start;
    } else {
      const char *cj = c ? c[j] : px_coord(e, fl, phys, rank, j);
      j++;
#ifndef PHOBOS_BREAK_SLACK_MASK
      px_and_below(e, ok, cj, arena_printf(e->a, "%lld", (long long)in->subs[i].len)); /* slack */
#endif
      const char *gi = px_tmp(e, RC_B32);
      px_out(e, "add.s32 %s, %s, %s;", gi, start, cj);
      g[i] = gi;
    }
    px_and_below(e, ok, g[i], px_ext(e, in->aux, i));
  }
}

/* For element k of a load/store: the global coordinates and a predicate
 * that is false for slack lanes and lanes past the tensor's end. */
static const char *access_lane(Emitter *e, const TirInst *in, const TirInst *val, const int64_t *phys, int rank, int k,
                               const char **g) {
  const TirInst *held = val ? val : in->plan->res == RES_REG ? in : NULL;
  const char *fl = held ? px_elem_index(e, held, k) : px_flat_index(e, k);
  const char *ok = px_tmp(e, RC_PRED);
  int64_t elems = 1;
  for (int d = 0; d < rank; d++) elems *= phys[d];
  /* a scalar is uniform: every thread reads it (one stores it, below) */
  if (rank) px_out(e, "setp.lt.u32 %s, %s, %lld;", ok, fl, (long long)elems);
  else px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  /* a row value's lanes and warps along the row hold it alike: one stores it */
  const char *own = val ? px_blk_owner(e, val) : NULL;
  if (own) px_out(e, "and.pred %s, %s, %s;", ok, ok, own);
  px_subscripts(e, in, NULL, fl, phys, rank, ok, g);
  return ok;
}

/* Unpacks the b32 words w[] of a vector load into the V registers from k. */
static void unpack_words(Emitter *e, const TirInst *in, Scalar s, int k, const char *const *w, int V) {
  int eb = px_elem_bytes_mem(s);
  for (int v = 0; v < V; v++) {
    const char *r = px_reg(e, in, k + v), *word = w[v * eb / 4];
    int at = v * eb % 4 * 8; /* bit offset in its word */
    if (eb == 1) px_out(e, "bfe.%s %s, %s, %d, 8;", s == S_I8 ? "s32" : "u32", r, word, at);
    else if (s == S_F16)
      px_out(e,
             "{ .reg .b16 %%hl; .reg .b32 %%hw; shr.u32 %%hw, %s, %d; cvt.u16.u32 %%hl, %%hw; cvt.f32.f16 %s, %%hl; }",
             word, at, r);
    else if (at) px_out(e, "and.b32 %s, %s, 0xFFFF0000;", r, word); /* bf16: the high half is an f32 already */
    else px_out(e, "shl.b32 %s, %s, 16;", r, word);
  }
}

/* Leaves load `in`'s packed words w (`rows` chunks of V registers, nw
 * words each) to be unpacked at the load's first use (px_flush_unpack), so
 * that a barrier in between holds only the packed bytes, and so that the
 * loads after it issue before its words arrive (a use before a branch
 * would wait for them there); the oldest go first when the list is full. */
static void unpack_one(Emitter *e, const struct Pending *pd);

/* Full: behind a chain's branch (ptx.c, emit_skip_run) only that chain's
 * loads may be unpacked, since a warp that skips the branch skips the
 * unpack; where none is, this load's words are unpacked now. */
void px_defer_unpack(Emitter *e, const TirInst *in, const char **w, int nw, int rows, int V) {
  struct Pending pd = {in, w, nw, rows, V, in->ty.elem, e->skip_group};
  if (e->npending == (int)(sizeof e->pending / sizeof e->pending[0])) {
    for (int i = 0; i < e->npending; i++)
      if (!e->skip_group || e->pending[i].group == e->skip_group) {
        unpack_one(e, &e->pending[i]);
        e->pending[i--] = e->pending[--e->npending];
      }
    if (e->npending == (int)(sizeof e->pending / sizeof e->pending[0])) {
      unpack_one(e, &pd);
      return;
    }
  }
  e->pending[e->npending++] = pd;
}

static void unpack_one(Emitter *e, const struct Pending *pd) {
  const TirInst *in = pd->in;
  int V = pd->V, eb = px_elem_bytes_mem(pd->elem);
  for (int j = 0; j < pd->rows; j++) {
    const char **wj = pd->w + j * pd->nw;
    if (eb == 4) {
      for (int v = 0; v < V; v++) px_out(e, "mov.b32 %s, %s;", px_reg(e, in, j * V + v), wj[v]);
      continue;
    }
    const char *wv[16];
    for (int i = 0; i < 16; i++) wv[i] = wj[i < pd->nw ? i : 0];
    unpack_words(e, in, pd->elem, j * V, wv, V);
  }
}

/* Unpacks pending loads: all of them (x NULL), or the one of value x. */
void px_flush_unpack(Emitter *e, const TirInst *x) {
  for (int i = 0; i < e->npending; i++) {
    if (x && e->pending[i].in != x) continue;
    unpack_one(e, &e->pending[i]);
    e->pending[i--] = e->pending[--e->npending];
  }
}

/* A widening of 16-bit floats to f32 (`f32(X[...])`) whose registers are its
 * operand's, one for one: it takes over its operand's pending words, which
 * are then unpacked into its registers at its own first use. */
static bool widens_in_place(Emitter *e, const TirInst *cv) {
  const TirInst *x = cv->args[0];
  return cv->ty.elem == S_F32 && (x->ty.elem == S_BF16 || x->ty.elem == S_F16) && x->ty.rank &&
         cv->plan->res == RES_REG && x->plan->res == RES_REG && cv->plan->layout == x->plan->layout &&
         px_nregs(e, cv) == px_nregs(e, x);
}

/* A conversion of bytes to floats whose operand is a pending load read by
 * nothing else converts straight from the packed words (see px_emit_convert):
 * the pending entry, or NULL. */
struct Pending *px_fusable_convert(Emitter *e, const TirInst *in) {
  if (in->op != TIR_CONVERT || px_rc_of(in->ty.elem) != RC_F32) return NULL;
  const TirInst *x = in->args[0];
  if (e->use_count[x->id] != 1) return NULL;
  if (x->ty.elem != S_I8 && x->ty.elem != S_U8 && x->ty.elem != S_BOOL && !widens_in_place(e, in)) return NULL;
  for (int i = 0; i < e->npending; i++)
    if (e->pending[i].in == x) return &e->pending[i];
  return NULL;
}

/* Whether a rank-2 access's column span is its tensor's last dim (the
 * contiguous one): the rows paths address a row's elements by immediate
 * offsets and vectors, which only that dim allows. */
bool px_cols_contiguous(const Emitter *e, const TirInst *in) {
  int last = -1;
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) last = i;
  return last == e->f->params[in->aux].rank - 1;
}

/* What a rows path (px_emit_load_rows_at, emit_long_rows, emit_blocked_rows)
 * computes once for a rank-2 access `in` (or a rank-1 one, one row: rows_at)
 * whose columns are the tensor's contiguous dim: the
 * thread's first element lies at slice row r0 (a register; NULL: row 0)
 * and column c1 (a register), its tensor coordinates in g; its columns are
 * c1 + coff[j] (j < ncol), colok[j] true where that column lies inside the
 * slice (not slack) and the tensor and the point subscripts inside theirs;
 * lim is how many rows from r0 on it may access (below the slice's length
 * and the tensor's end); ad the first element's address; step the bytes
 * from a row to the one rstep rows further. */
typedef struct RowsAt {
  int i0, i1; /* the row and column subscripts (i0 -1: a row of a rank-1 tensor) */
  const char *g[MAX_TENSOR_RANK], **colok, *lim, *ad, *step;
  const char *grow; /* the thread's first row's coordinate (g[i0], or its row base) */
  struct ColMasks *cm;
} RowsAt;

/* A row of columns' masks: column c1 + coff[j] is inside when it is inside
 * the slice (coff[j] < len - c1) and the tensor (gcol + coff[j] < ext), and
 * ok holds. With lazy masks only the row's first and last columns' masks
 * (eager[0], eager[ncol - 1]) are computed before any path branches off:
 * coff increases with j and the tensor test is unsigned, so those two hold
 * exactly when every column's does, the test of the unpredicated vector
 * path. The others only the slower paths read, so col_ok computes them
 * where such a path needs them (afresh each time: a predicate computed on
 * one path is not defined on another). Computing every column's mask up
 * front cost three instructions an element on the vector path, and each
 * chunk's two ends (16 predicates for LayerNorm's four chunks a load) more
 * predicates than a thread has, which ptxas kept as bits of a register,
 * about 40 instructions a load (12-03c). */
typedef struct ColMasks {
  const char *c1, *gcol, *ok, *ext;
  int64_t len;
  const int64_t *coff;
  const char **eager;
  const char *bound; /* NULL, or the columns inside: those below it (chunks_uniform; read by CH_WHOLE only) */
} ColMasks;

/* Column j's mask. phantom_v > 0: a shifted walk's first column on the
 * vector path (col_mask_phantoms), which passes from -(phantom_v - 1) on,
 * tested signed; else the strict mask, unsigned (a negative column is out). */
static const char *col_mask_at(Emitter *e, const ColMasks *m, int j, int phantom_v) {
  const char *p = px_tmp(e, RC_PRED), *q = px_tmp(e, RC_PRED), *gc = px_tmp(e, RC_B32);
  int64_t left = m->len - m->coff[j]; /* the slice's columns from coff[j] on: none past its end */
  if (left <= 0) px_out(e, "setp.ne.and.u32 %s, 0, 0, %s;", p, m->ok);
  else px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", p, m->c1, (long long)left, m->ok);
  px_out(e, "add.s32 %s, %s, %lld;", gc, m->gcol, (long long)m->coff[j]);
  if (phantom_v > 0) px_out(e, "setp.gt.and.s32 %s, %s, %d, %s;", p, gc, -phantom_v, p);
  px_out(e, "setp.lt.and.%s %s, %s, %s, %s;", phantom_v > 0 ? "s32" : "u32", q, gc, m->ext, p);
  return q;
}

static const char *col_mask(Emitter *e, const ColMasks *m, int j) { return col_mask_at(e, m, j, 0); }

static const char *col_ok(Emitter *e, const ColMasks *m, int j) { return m->eager[j] ? m->eager[j] : col_mask(e, m, j); }

/* Whether load `in` is at its shifted walk's own block (shiftwalk.c): its
 * column slice starts at the loop's value, which starts at -sh (sh in the
 * leader's elements), and its thread columns are not negative. */
static bool shift_walk_own_load(const Emitter *e, const TirInst *in, int i1) {
  return e->sw_loop && in->op == TIR_LOAD && i1 >= 0 && in->subs[i1].start == e->sw_loop;
}

/* The vector path's mask of a shifted walk's first column (col_mask's of
 * column 0, but a first column from -(V - 1) on passes): in the walk's
 * first block the first chunk of the row's first thread starts at -sh. A
 * chunk of V elements whose address is aligned (the path's other test) and
 * whose first column lies in (-V, 0) is column 0's own 16-byte granule, in
 * the row's allocation, so the vector may read its phantoms (the folds
 * leave them out, ptx/exchange.c). A chunk wholly before column 0 (sh
 * counts the leader's elements: a load of wider ones, an f32 row beside
 * bf16, may start a granule or more before its row) fails as before. Tested
 * as slack, that thread took the element-by-element path for its four
 * chunks in each of the row's two loads (the bf16 softmax over 50257
 * columns). Only the vector path reads it: the masked paths and the
 * odd-pitch path (misaligned_rows) keep the strict masks. */
static const char *col_mask_phantoms(Emitter *e, const ColMasks *m, int V) { return col_mask_at(e, m, 0, V); }

/* whole &&= every chunk of the thread lies wholly inside its row's columns
 * or wholly past them, by one test for the whole access: a chunk starts a
 * multiple of V columns after the slice's start (the thread's first column
 * and its chunks' offsets are multiples of V in the blocked layout), and
 * the columns inside are those below B = min(len, ext - start) when the
 * start is not negative, so no chunk straddles B when B is a multiple of V
 * (a row of 5120 in a block of 8192). Testing each chunk's two ends took
 * seven instructions a chunk. m->bound keeps B for chunk_in. */
static void chunks_uniform(Emitter *e, ColMasks *m, const char *start, int V, const char *whole) {
  const char *b = px_tmp(e, RC_B32), *t = px_tmp(e, RC_B32);
  px_out(e, "sub.s32 %s, %s, %s;", b, m->ext, start);
  px_out(e, "min.s32 %s, %s, %lld;", b, b, (long long)m->len);
  px_out(e, "and.b32 %s, %s, %d;", t, b, V - 1);
  px_out(e, "setp.eq.and.u32 %s, %s, 0, %s;", whole, t, whole);
  px_out(e, "setp.ge.and.s32 %s, %s, 0, %s;", whole, start, whole);
  m->bound = b;
}

/* Whether chunk j's first column is inside, for a chunk that lies wholly
 * inside or wholly past the row's end (the CH_WHOLE path): below the bound
 * chunks_uniform took, else its own mask. */
static const char *chunk_in(Emitter *e, const ColMasks *m, int j) {
  if (!m->bound) return col_ok(e, m, j);
  const char *gc = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED);
  px_out(e, "add.s32 %s, %s, %lld;", gc, m->c1, (long long)m->coff[j]);
  px_out(e, "setp.lt.and.s32 %s, %s, %s, %s;", p, gc, m->bound, m->ok);
  return p;
}

/* The masks of a row of ncol columns in chunks of V: every column's when
 * lazy is false (V 1, or a path that reads them all), else the row's first
 * and last only. */
static ColMasks *col_masks(Emitter *e, const char *c1, const char *gcol, const char *ok, const char *ext, int64_t len,
                           const int64_t *coff, int ncol, int V, bool lazy) {
  ColMasks *m = arena_alloc(e->a, sizeof *m);
  *m = (ColMasks){c1, gcol, ok, ext, len, coff, arena_alloc(e->a, sizeof(char *) * (size_t)ncol), NULL};
  for (int j = 0; j < ncol; j++)
    if (!lazy || V <= 1 || j == 0 || j == ncol - 1) m->eager[j] = col_mask(e, m, j);
  return m;
}

/* A rank-1 access (one span, X[r, c0 :+ BN] or W[c0 :+ BN]) is one row:
 * its row is the point before its span, if any (a row of X), else a row of
 * its own (W is one row); its step is 0, and the thread's rows past the
 * first are slack (a blocked [N] value's rows past 0 hold nothing). */
static RowsAt rows_at(Emitter *e, const TirInst *in, const char *r0, const char *c1, const int64_t *coff, int ncol,
                      int64_t rstep, int eb, int lazy_v) {
  RowsAt R = {.i0 = -1, .i1 = -1, .colok = arena_alloc(e->a, sizeof(char *) * (size_t)ncol)};
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) R.i0 = R.i1, R.i1 = i;
  bool one_row = R.i0 < 0;
  if (one_row && R.i1 > 0) R.i0 = R.i1 - 1; /* a point: the row's length is 1 (TirSub.len) */
  const char *ok = px_tmp(e, RC_PRED);
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < in->nsubs; i++) {
    const char *start = px_sub_start(e, in, i);
    if (i == R.i1 || (i == R.i0 && r0)) {
      const char *gi = px_tmp(e, RC_B32);
      px_out(e, "add.s32 %s, %s, %s;", gi, start, i == R.i0 ? r0 : c1);
      R.g[i] = gi;
      continue;
    }
    R.g[i] = start;
    if (i != R.i0) px_and_below(e, ok, R.g[i], px_ext(e, in->aux, i));
  }
  R.cm = col_masks(e, c1, R.g[R.i1], ok, px_ext(e, in->aux, R.i1), in->subs[R.i1].len, coff, ncol, lazy_v,
                   lazy_v > 1);
  R.colok = R.cm->eager;
  R.lim = px_tmp(e, RC_B32);
  if (R.i0 < 0) { /* one row of its own: row 0 of the thread's rows is inside (emit_blocked_rows gives r0) */
    R.grow = r0;
    px_out(e, "sub.s32 %s, 1, %s;", R.lim, R.grow);
  } else {
    R.grow = R.g[R.i0];
    px_out(e, "sub.s32 %s, %s, %s;", R.lim, px_ext(e, in->aux, R.i0), R.g[R.i0]);
    if (r0) {
      const char *t = px_tmp(e, RC_B32);
      px_out(e, "sub.s32 %s, %lld, %s;", t, (long long)in->subs[R.i0].len, r0);
      px_out(e, "min.s32 %s, %s, %s;", R.lim, R.lim, t);
    } else {
      px_out(e, "min.s32 %s, %s, %lld;", R.lim, R.lim, (long long)in->subs[R.i0].len);
    }
  }
  R.ad = px_tensor_addr(e, in->aux, R.g);
  R.step = px_tmp(e, RC_B64);
  if (one_row) {
    px_out(e, "mov.u64 %s, 0;", R.step);
    return R;
  }
  R.step = px_pitch(e, in->aux, R.i0, rstep * eb);
  return R;
}

bool px_emit_load_rows(Emitter *e, const TirInst *in, const char **words) {
  return px_emit_load_rows_at(e, in, words, NULL, NULL);
}

/* A rank-2 load whose rows are each covered by whole rounds of chunks
 * (T * V a multiple of the physical row): a thread keeps its columns
 * across its registers and steps down rows by T * V / row, so the column
 * masks and the address are computed once and each row costs two compares
 * and an add. With V > 1 a row's V elements are one vector load when they
 * are all inside the tensor and the address is aligned to the vector
 * (checked once, at run time: the base and the extents are only known
 * then); otherwise the same rows load element by element. The common case
 * of a weight tile.
 *   words: NULL, or registers for the packed words to go into, with no
 * pending unpack (the pointer path of a ringed load, joining its ring
 * path; a staged load, which stores them itself);
 *   c1_out, r0_out: NULL, or where the thread's first chunk lies. */

bool px_emit_load_rows_at(Emitter *e, const TirInst *in, const char **words, const char **c1_out,
                              const char **r0_out) {
  if (in->ty.rank != 2 || (in->plan->res != RES_REG && !words) || plan_is_blocked(in) || plan_is_blocked_rows(in) ||
      plan_is_columns(in))
    return false;
  int64_t p0 = in->plan->phys[0], p1 = in->plan->phys[1];
  int64_t TV = (int64_t)e->T * e->V;
  if (TV % p1 || p1 % e->V) return false;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  /* a chunk's V elements are one vector, v elements on */
  if (spans != 2 || !px_cols_contiguous(e, in)) return false;
  int64_t rpr = TV / p1; /* rows a round of chunks covers */
  int V = e->V, eb = px_elem_bytes_mem(in->ty.elem);
  const char *c1 = px_tmp(e, RC_B32), *r0 = px_tmp(e, RC_B32);
  px_out(e, "and.b32 %s, %%tidv_, %lld;", c1, (long long)(p1 - 1));
  px_out(e, "shr.u32 %s, %%tidv_, %d;", r0, px_log2i(p1));
  if (c1_out) *c1_out = c1, *r0_out = r0;
  /* column v of the chunk; a round further: rpr rows */
  const int64_t coff[4] = {0, 1, 2, 3};
  RowsAt R = rows_at(e, in, r0, c1, coff, V, rpr, eb, 0);
  int i0 = R.i0;
  const char **g = R.g, **colok = R.colok, *lim = R.lim, *ad0 = R.ad, *step = R.step;
  RegClass rc = px_rc_of(in->ty.elem);
  int nk = px_nregs(e, in);
  int L = px_new_label(e);
  const char *ad = px_tmp(e, RC_B64);
  if (V > 1 && eb <= 4) {
    /* Rows go into b32 words, vector loaded when all V columns are in and
     * the address and the row step are aligned to the vector, else byte by
     * byte; the words are unpacked after the paths join, so only the
     * packed bytes are live across the branch. */
    const char *al = px_tmp(e, RC_B64), *vp = px_tmp(e, RC_PRED), *vq = px_tmp(e, RC_PRED);
    px_out(e, "or.b64 %s, %s, %s;", al, ad0, step);
    px_out(e, "and.b64 %s, %s, %d;", al, al, V * eb - 1);
    px_out(e, "setp.eq.and.u64 %s, %s, 0, %s;", vp, al, colok[0]);
    px_out(e, "and.pred %s, %s, %s;", vq, vp, colok[V - 1]);
    int nw = (V * eb + 3) / 4, rows = nk / V;
    const char **w = words ? words : arena_alloc(e->a, sizeof(char *) * (size_t)(rows * nw));
    /* words of rows past the physical tile are zero on every path; the
     * others only where a path may leave them unloaded (the fast path loads
     * them all, and zeroing them ahead of it cost a CS2R per two words) */
    for (int i = 0; i < rows * nw; i++) {
      if (!words) w[i] = px_tmp(e, RC_B32);
      if ((int64_t)(i / nw) * rpr >= p0) px_out(e, "mov.b32 %s, 0;", w[i]);
    }
    /* every row inside too (the common case away from the tensor's
     * ends): the vector loads need no predicate. (Forming each row's
     * address as mad.wide.u32 of a 32-bit step from the first row's does
     * not save the 64-bit add: ptxas hoists the 32 products out of the loop
     * into 64 registers and adds them in the loop as before.) */
    int64_t last = (p0 - 1) / rpr * rpr; /* this thread's last row, less r0 */
    const char *ar = px_tmp(e, RC_PRED), *ag = px_tmp(e, RC_PRED);
    px_out(e, "setp.gt.and.s32 %s, %s, %lld, %s;", ar, lim, (long long)last, vq);
    px_out(e, "setp.ge.and.s32 %s, %s, 0, %s;", ag, g[i0], ar);
    for (int pass = 0; pass < 3; pass++) {
      if (pass == 0) {
        px_out(e, "@!%s bra $Lldrow%d;", ag, L);
      } else if (pass == 1) {
        px_label(e, "ldrow", L);
        for (int i = 0; i < rows * nw; i++)
          if ((int64_t)(i / nw) * rpr < p0) px_out(e, "mov.b32 %s, 0;", w[i]);
        px_out(e, "@!%s bra $Lldel%d;", vq, L);
      } else {
        px_label(e, "ldel", L);
      }
      px_out(e, "mov.b64 %s, %s;", ad, ad0);
      for (int j = 0; j < rows; j++) {
        int64_t row = (int64_t)j * rpr;
        if (row >= p0) continue;
        if (j) px_out(e, "add.s64 %s, %s, %s;", ad, ad, step);
        const char **wj = w + j * nw;
        if (pass < 2) {
          const char *z = "";
          if (pass == 1) {
            const char *q = px_tmp(e, RC_PRED), *zp = px_tmp(e, RC_PRED);
            px_out(e, "setp.gt.s32 %s, %s, %lld;", q, lim, (long long)row);
            px_out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", zp, g[i0], (long long)-row, q);
            z = arena_printf(e->a, "@%s ", zp);
          }
          const char *gm = px_gmod(e, "global"), *gp = px_gpol(e, "global");
          if (V * eb == 16)
            px_out(e, "%sld.global%s.v4.b32 {%s, %s, %s, %s}, [%s]%s;", z, gm, wj[0], wj[1], wj[2], wj[3], ad, gp);
          else if (V * eb == 8) px_out(e, "%sld.global%s.v2.b32 {%s, %s}, [%s]%s;", z, gm, wj[0], wj[1], ad, gp);
          else if (V * eb == 4) px_out(e, "%sld.global%s.b32 %s, [%s]%s;", z, gm, wj[0], ad, gp);
          else px_out(e, "%sld.global%s.u16 %s, [%s]%s;", z, gm, wj[0], ad, gp);
          continue;
        }
        for (int v = 0; v < V; v++) {
          const char *q = px_tmp(e, RC_PRED), *z = px_tmp(e, RC_PRED), *x = px_tmp(e, RC_B32), *av = px_tmp(e, RC_B64);
          px_out(e, "setp.gt.and.s32 %s, %s, %lld, %s;", q, lim, (long long)row, colok[v]);
          px_out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", z, g[i0], (long long)-row, q);
          px_out(e, "add.s64 %s, %s, %d;", av, ad, v * eb);
          px_out(e, "mov.b32 %s, 0;", x);
          px_out(e, "@%s ld.global%s.%s %s, [%s]%s;", z, px_gmod(e, "global"), px_bits_type(eb), x, av,
                 px_gpol(e, "global"));
          const char *wv = wj[v * eb / 4];
          if (eb == 4) px_out(e, "mov.b32 %s, %s;", wv, x);
          else px_out(e, "bfi.b32 %s, %s, %s, %d, %d;", wv, x, wv, v * eb % 4 * 8, eb * 8);
        }
      }
      if (pass < 2) px_out(e, "bra.uni $Llddone%d;", L);
    }
    px_label(e, "lddone", L);
    if (words) return true;
    px_defer_unpack(e, in, w, nw, rows, e->V);
    return true;
  }
  px_out(e, "mov.b64 %s, %s;", ad, ad0);
  for (int k = 0; k < nk; k++) {
    int v = k % V;
    int64_t row = (int64_t)(k / V) * rpr; /* this register's row, less r0 */
    const char *r = px_reg(e, in, k);
    px_out(e, "mov.%s %s, %s;", px_mov_type(rc), r, px_zero(rc));
    if (row >= p0) continue; /* past the physical tile */
    if (k && !v) px_out(e, "add.s64 %s, %s, %s;", ad, ad, step);
    const char *q = px_tmp(e, RC_PRED), *z = px_tmp(e, RC_PRED);
    px_out(e, "setp.gt.and.s32 %s, %s, %lld, %s;", q, lim, (long long)row, colok[v]);
    px_out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", z, g[i0], (long long)-row, q);
    const char *av = ad;
    if (v) {
      av = px_tmp(e, RC_B64);
      px_out(e, "add.s64 %s, %s, %d;", av, ad, v * eb);
    }
    px_ld(e, "global", in->ty.elem, r, av, z);
  }
  return true;
}

/* A rank-2 register load or store whose rows are longer than a round of
 * chunks, in a kernel of one-element chunks (V 1, the physical row a
 * multiple of T): thread t's register k holds row k / cpr, column
 * t + (k % cpr) T, with cpr = p1 / T. The cpr column masks and each row's
 * mask are computed once, each row's address is one add from the last,
 * and each element is one predicated access at an immediate offset from
 * it. The general paths (px_emit_load_elements, emit_pointer_store) spend
 * about 35 instructions an element on its coordinates, masks and address,
 * unrolled: code that a CTA runs once is fetched cold, and in a one-warp
 * decode CTA's tail that cost about 10 ns an instruction (an [8, 128]
 * store of 1000 instructions took 11 us of a 95 us kernel, 11-30d calls
 * 10 and 11). val: the stored value, or NULL for a load into in. */
static bool emit_long_rows(Emitter *e, const TirInst *in, const TirInst *val) {
  const TirInst *x = val ? val : in;
  if (x->ty.rank != 2 || x->plan->res != RES_REG || e->V != 1 || px_is_frag(e, x) || px_is_rowfrag(e, x) ||
      plan_is_blocked(x) || plan_is_blocked_rows(x) || plan_is_columns(x))
    return false;
  int64_t p0 = x->plan->phys[0], p1 = x->plan->phys[1], T = e->T;
  if (p1 <= T || p1 % T) return false;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  /* the columns' chunks lie at immediate offsets T elements apart */
  if (spans != 2 || !px_cols_contiguous(e, in)) return false;
  Scalar te = val ? e->f->params[in->aux].elem : in->ty.elem;
  int eb = px_elem_bytes_mem(te);
  int64_t cpr = p1 / T, *coff = arena_alloc(e->a, sizeof(int64_t) * (size_t)cpr);
  for (int64_t c = 0; c < cpr; c++) coff[c] = c * T;
  RowsAt R = rows_at(e, in, NULL, "%tidv_", coff, (int)cpr, 1, eb, 0);
  RegClass rc = px_rc_of(in->ty.elem);
  for (int64_t j = 0; j < p0; j++) {
    if (j) px_out(e, "add.s64 %s, %s, %s;", R.ad, R.ad, R.step);
    const char *pr = px_tmp(e, RC_PRED), *pz = px_tmp(e, RC_PRED);
    px_out(e, "setp.gt.s32 %s, %s, %lld;", pr, R.lim, (long long)j);
    px_out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", pz, R.g[R.i0], (long long)-j, pr);
    for (int64_t c = 0; c < cpr; c++) {
      int k = (int)(j * cpr + c);
      const char *q = px_tmp(e, RC_PRED), *at = arena_printf(e->a, "%s+%lld", R.ad, (long long)(c * T * eb));
      px_out(e, "and.pred %s, %s, %s;", q, pz, R.colok[c]);
      if (val) {
        px_st(e, "global", te, at, px_operand(e, val, k), q);
      } else {
        const char *r = px_reg(e, in, k);
        px_out(e, "mov.%s %s, %s;", px_mov_type(rc), r, px_zero(rc));
        px_ld(e, "global", te, r, at, q);
      }
    }
  }
  return true;
}

/* A loaded chunk's words into its V registers k0.. (f32, or 16-bit
 * elements widened to f32) */
static void unpack_chunk_at(Emitter *e, const TirInst *in, Scalar te, int V, const char *const *w, int k0, int at) {
  int eb = px_elem_bytes_mem(te);
  for (int v = 0; v < V; v++) {
    int x = at + v; /* the element's place in w */
    const char *word = w[x * eb / 4], *r = px_reg(e, in, k0 + v);
    if (eb == 4) px_out(e, "mov.b32 %s, %s;", r, word);
    else if (eb == 1) /* an 8-bit element: its byte, sign-extended for i8 (a bool or u8 zero-extended) */
      px_out(e, "bfe.%s32 %s, %s, %d, 8;", te == S_I8 ? "s" : "u", r, word, x % 4 * 8);
    else if (te == S_F16)
      px_out(e, "{ .reg .b16 %%hl; .reg .b32 %%hw; shr.u32 %%hw, %s, %d; cvt.u16.u32 %%hl, %%hw; cvt.f32.f16 %s, %%hl; }",
             word, x % 2 * 16, r);
    else if (x % 2) px_out(e, "and.b32 %s, %s, 0xFFFF0000;", r, word);
    else px_out(e, "shl.b32 %s, %s, 16;", r, word);
  }
}

/* The V elements of a chunk's words w, into the registers of in from k0 */
static void unpack_chunk(Emitter *e, const TirInst *in, Scalar te, int V, const char *const *w, int k0) {
  unpack_chunk_at(e, in, te, V, w, k0, 0);
}

/* Whether access `in` of the blocked value x (the loaded value, or the
 * stored one) takes a blocked rows path: a span a dim of x (rank 1 or 2:
 * emit_blocked_rows; 3: emit_blocked_rows3), the last the tensor's
 * contiguous dim. */
static bool blocked_rows_access(const Emitter *e, const TirInst *in, const TirInst *x) {
  if (x->ty.rank < 1 || x->ty.rank > 3 || !plan_is_blocked(x)) return false;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  return spans == x->ty.rank && px_cols_contiguous(e, in);
}

/* A conversion of f32 to bf16 or f16 read by one blocked rows store only
 * (softmax's, LayerNorm's output): the store rounds two elements into a
 * word with one cvt.rn.bf16x2 (or f16x2) from the f32 source, where the
 * conversion would round each element (a cvt and a mask) and the store
 * pack them again (a prmt): 0.5 instructions an element against 2.5. */
void px_find_store_packed(Emitter *e) {
  const TirFunc *f = e->f;
  if (e->p->general_strides) return; /* element by element: each store takes its conversion's own registers */
  for (int i = 0; i < f->ninsts; i++) {
    const TirInst *st = f->insts[i];
    if (st->op != TIR_STORE || st->aux2 != TSTORE_WRITE) continue;
    const TirInst *cv = st->args[0];
    if (cv->op != TIR_CONVERT || (cv->ty.elem != S_BF16 && cv->ty.elem != S_F16) || cv->args[0]->ty.elem != S_F32 ||
        e->use_count[cv->id] != 1 || f->params[st->aux].elem != cv->ty.elem || st->plan->tma ||
        !blocked_rows_access(e, st, cv) || cv->args[0]->plan->layout != cv->plan->layout)
      continue;
    if (!e->store_packed) e->store_packed = arena_alloc(e->a, (size_t)f->ninsts + 1);
    e->store_packed[cv->id] = true;
  }
}

static bool packs_at_store(const Emitter *e, const TirInst *val) {
  return e->store_packed && val->op == TIR_CONVERT && e->store_packed[val->id];
}

/* Register k of a stored value as px_st takes it: for a conversion the
 * store packs, its f32 source rounded here (bf16: into the top half) */
static const char *store_elem(Emitter *e, const TirInst *val, int k) {
  if (!packs_at_store(e, val)) return px_operand(e, val, k);
  const char *src = px_operand(e, val->args[0], k);
  if (val->ty.elem == S_F16) return src; /* px_st rounds f16 itself */
  const char *t = px_tmp(e, RC_B32);
  px_out(e, "cvt.rn.bf16x2.f32 %s, %s, %s;", t, src, src);
  return t;
}

/* A stored chunk's registers k0.. into its nw words of te (the registers
 * hold rounded values: bf16 is the top half of an f32; a conversion the
 * store packs, from its f32 source) */
void px_pack_chunk(Emitter *e, const TirInst *val, Scalar te, int nw, int k0, const char *const *w) {
  int eb = px_elem_bytes_mem(te);
  if (packs_at_store(e, val)) {
    const TirInst *src = val->args[0];
    for (int i = 0; i < nw; i++)
      px_out(e, "cvt.rn.%sx2.f32 %s, %s, %s;", te == S_BF16 ? "bf16" : "f16", w[i], px_operand(e, src, k0 + 2 * i + 1),
             px_operand(e, src, k0 + 2 * i));
    return;
  }
  for (int i = 0; i < nw; i++) {
    if (eb == 4) {
      px_out(e, "mov.b32 %s, %s;", w[i], px_operand(e, val, k0 + i));
    } else if (eb == 1) { /* four bytes: the low byte of each register (an 8-bit value is wrapped there) */
      const char *lo = px_tmp(e, RC_B32), *hi = px_tmp(e, RC_B32);
      px_out(e, "prmt.b32 %s, %s, %s, 0x0040;", lo, px_operand(e, val, k0 + 4 * i), px_operand(e, val, k0 + 4 * i + 1));
      px_out(e, "prmt.b32 %s, %s, %s, 0x0040;", hi, px_operand(e, val, k0 + 4 * i + 2),
             px_operand(e, val, k0 + 4 * i + 3));
      px_out(e, "prmt.b32 %s, %s, %s, 0x5410;", w[i], lo, hi);
    } else if (te == S_BF16) {
      px_out(e, "prmt.b32 %s, %s, %s, 0x7632;", w[i], px_operand(e, val, k0 + 2 * i), px_operand(e, val, k0 + 2 * i + 1));
    } else {
      px_out(e, "{ .reg .b16 %%h0, %%h1; cvt.rn.f16.f32 %%h0, %s; cvt.rn.f16.f32 %%h1, %s; mov.b32 %s, {%%h0, %%h1}; }",
             px_operand(e, val, k0 + 2 * i), px_operand(e, val, k0 + 2 * i + 1), w[i]);
    }
  }
}

/* Whether another register load of the block being emitted comes between
 * load `in` and its first use, before any loop or branch: only then does
 * widening at the use let a load issue earlier. Where the use comes first
 * (a loop's load and its arithmetic), the words would only be live across
 * the paths' join for nothing (ptxas then took softmax's BR 8 variant from
 * 60 registers to 125). In a loop the load after it must be a tile of rows,
 * not a row vector: ptxas gives a loop that issues its loads together more
 * registers (LayerNorm's BR 2 variant 40 -> 48, five CTAs an SM instead of
 * six), which a row vector's short wait (its rows are shared, so it comes
 * from the L2) does not repay: measured in one call (12-02d call 4),
 * RMSNorm + residual 16384 x 5120 (its rows X and Res) 214.8 -> 200.3 us
 * with it, LayerNorm 4093 x 5120 (X, then the weight and bias vectors)
 * 39.4 -> 42.8 us. */
static bool loads_before_use(Emitter *e, const TirInst *in) {
  const TirBlock *b = e->cur_block;
  if (!b || e->cur_index >= b->len || b->insts[e->cur_index] != in) return false;
  bool loop = e->loops > 0, load = false;
  const TirInst *v = in; /* the value whose first use ends the scan: the load, or its widening */
  for (int i = e->cur_index + 1; i < b->len; i++) {
    const TirInst *u = b->insts[i];
    bool uses = false;
    for (int k = 0; k < u->nargs; k++) uses |= u->args[k] == v;
    if (uses && v == in && u->op == TIR_CONVERT && e->use_count[in->id] == 1 && widens_in_place(e, u)) {
      v = u; /* it takes the words over (px_emit_convert) */
      continue;
    }
    if (uses) return load;
    if (u->op == TIR_FOR || u->op == TIR_WHILE || u->op == TIR_IF) return load;
    if (u->op == TIR_LOAD && u->plan && u->plan->res == RES_REG && !u->plan->tma && (!loop || plan_is_blocked(u)))
      load = true;
  }
  return load;
}

/* A vector load's packed words, every path writing them (blocked_chunks,
 * misaligned_rows), unpacked at the value's first use (px_defer_unpack):
 * an unpack inside a path would wait for its words before the branch that
 * ends it, and so before the next load issues. */
static const char **load_words(Emitter *e, const TirInst *in, int eb) {
  if (eb != 2) return NULL; /* a 4-byte element's unpack is a move, which ptxas folds away */
  if (!loads_before_use(e, in)) return NULL;
  int n = px_nregs(e, in) * eb / 4;
  const char **pw = arena_alloc(e->a, sizeof *pw * (size_t)n);
  for (int i = 0; i < n; i++) pw[i] = px_tmp(e, RC_B32);
  return pw;
}

/* The chunks of one row of a blocked access (emit_blocked_rows,
 * emit_columns): for c < reps_c the V elements at ad + coff[c V] elements,
 * registers k0 + c V on; pz: the row is inside; colok[j]: column coff[j]
 * is; aligned: NULL, or whether the address and the row pitch are aligned
 * to the vector. A chunk whose V elements are all inside (and aligned) is
 * one 16-byte (or narrower) vector access; any other goes element by
 * element, predicated (no branches: the predicates are uniform along a row
 * away from the tensor's ends). val: the stored value, or NULL for a load
 * into in. fast: every chunk is inside and aligned (emit_blocked_rows'
 * unpredicated path): plain vector accesses, nothing element by element.
 * pw: a load's packed words (load_words), written instead of its
 * registers, or NULL. */
enum { CH_MASKED, CH_FAST, CH_WHOLE };
static void blocked_chunks(Emitter *e, const TirInst *in, const TirInst *val, const BlockGeom *g, const int64_t *coff,
                           const ColMasks *cm, const char *ad, const char *pz, const char *aligned, int k0, int mode,
                           const char **pw) {
  bool fast = mode != CH_MASKED;
  const char *sp = !val && px_rowstage_load(e, in) ? "shared" : "global"; /* a staged-rows copy's load reads the copy */
  Scalar te = val ? e->f->params[in->aux].elem : in->ty.elem;
  int eb = px_elem_bytes_mem(te), V = g->V, nw = V * eb / 4;
  RegClass rc = px_rc_of((val ? val : in)->ty.elem);
  for (int c = 0; c < (int)g->reps_c; c++, k0 += V) {
    int64_t off = coff[c * V] * eb;
    const char *vp = NULL, *at = "";
    if (mode == CH_WHOLE) at = arena_printf(e->a, "@%s ", chunk_in(e, cm, c * V)); /* the chunk is wholly in or out */
    if (aligned && !fast) {
      vp = px_tmp(e, RC_PRED);
      px_out(e, "and.pred %s, %s, %s;", vp, pz, aligned);
      px_out(e, "and.pred %s, %s, %s;", vp, vp, col_ok(e, cm, c * V));
      px_out(e, "and.pred %s, %s, %s;", vp, vp, col_ok(e, cm, c * V + V - 1));
      at = arena_printf(e->a, "@%s ", vp);
    }
    if (aligned) {
      /* a chunk of more than 16 bytes (f32 columns beside bf16 rows) goes
       * as several 16-byte vectors */
      const char *w[16] = {0};
      for (int i = 0; i < nw; i++) w[i] = pw ? pw[k0 * eb / 4 + i] : px_tmp(e, RC_B32);
      if (val) px_pack_chunk(e, val, te, nw, k0, w);
      else if (mode != CH_FAST)
        for (int i = 0; i < nw; i++) px_out(e, "mov.b32 %s, 0;", w[i]);
      for (int h = 0; h < nw; h += 4) {
        const char *const *u = w + h;
        int n = nw - h < 4 ? nw - h : 4;
        const char *list = n == 4   ? arena_printf(e->a, "{%s, %s, %s, %s}", u[0], u[1], u[2], u[3])
                           : n == 2 ? arena_printf(e->a, "{%s, %s}", u[0], u[1])
                                    : u[0];
        const char *vt = n == 4 ? ".v4" : n == 2 ? ".v2" : "";
        const char *gs = val ? "global" : sp, *gm = px_gmod(e, gs), *gp = px_gpol(e, gs);
        if (val) px_out(e, "%sst.global%s%s.b32 [%s+%lld], %s%s;", at, gm, vt, ad, (long long)(off + h * 4), list, gp);
        else px_out(e, "%sld.%s%s%s.b32 %s, [%s+%lld]%s;", at, sp, gm, vt, list, ad, (long long)(off + h * 4), gp);
      }
      if (!val && !pw) unpack_chunk(e, in, te, V, w, k0);
    } else if (!val) {
      for (int v = 0; v < V; v++) px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k0 + v), px_zero(rc));
    }
    /* the elements of a chunk that is not whole inside, one by one */
    for (int v = 0; v < V && !fast; v++) {
      const char *q = px_tmp(e, RC_PRED), *at = arena_printf(e->a, "%s+%lld", ad, (long long)(off + v * eb));
      px_out(e, "and.pred %s, %s, %s;", q, pz, col_ok(e, cm, c * V + v));
      if (vp) px_out(e, "and.pred %s, %s, !%s;", q, q, vp);
      if (val) {
        px_st(e, "global", te, at, store_elem(e, val, k0 + v), q);
      } else if (pw) { /* into its half of the packed word (zeroed above; load_words: 16-bit only) */
        const char *word = pw[(k0 + v) / 2];
        const char *t = px_tmp(e, RC_B32);
        px_out(e, "@%s ld.%s.u16 %s, [%s];", q, sp, t, at);
        px_out(e, "@%s bfi.b32 %s, %s, %s, %d, 16;", q, word, t, word, (k0 + v) % 2 * 16);
      } else {
        const char *t = px_tmp(e, rc);
        px_ld(e, sp, te, t, at, q);
        px_out(e, "@%s mov.%s %s, %s;", q, px_mov_type(rc), px_reg(e, in, k0 + v), t);
      }
    }
  }
}

/* whether a blocked access of V elements of eb bytes takes vectors: 2 or 4
 * bytes an element, 4 to 16 a chunk, or a multiple of 16 up to 64 (in
 * 16-byte vectors) */
static bool blocked_vec(int V, int eb) {
  return V > 1 && (eb == 1 || eb == 2 || eb == 4) && V * eb >= 4 &&
         (V * eb <= 16 || (V * eb % 16 == 0 && V * eb <= 64));
}

/* the alignment a blocked access's vectors need: the chunk, at most 16 bytes */
static int vec_align(int V, int eb) { return V * eb < 16 ? V * eb : 16; }

/* A row's misalignment s (ad mod 16) into s, and lo = ad - s, the aligned
 * address at or below it (misaligned_rows, misaligned_store_rows) */
static void row_shift(Emitter *e, const char *ad, const char *lo, const char *s64, const char *s) {
  px_out(e, "and.b64 %s, %s, 15;", s64, ad);
  px_out(e, "sub.s64 %s, %s, %s;", lo, ad, s64);
  px_out(e, "cvt.u32.u64 %s, %s;", s, s64);
}

/* A branch on s to case label $L<name><C>_<s> for each s from eb to 16 - eb
 * in steps of eb; s 0 falls through (the caller's first case) */
static void shift_branches(Emitter *e, const char *s, int eb, const char *name, int C, bool uni) {
  for (int sv = eb; sv < 16; sv += eb) {
    const char *q = px_tmp(e, RC_PRED);
    px_out(e, "setp.eq.u32 %s, %s, %d;", q, s, sv);
    px_out(e, "@%s bra%s $L%s%d_%d;", q, uni ? ".uni" : "", name, C, sv);
  }
}

/* A blocked load whose rows are not 16-byte aligned (an odd row pitch:
 * softmax over 50257 bf16 columns), every row and chunk inside: each chunk
 * is the aligned 32 bytes that contain it, two vector loads, and its 16
 * bytes are shifted out of them by the row's misalignment s (the same for
 * every chunk of a row, as chunks start 16 bytes apart): a branch on s a
 * row, and in each case the words at constant places, a funnel shift by
 * the bytes left (s mod 4) where s is not a multiple of 4 (a select
 * network on s took 15 instructions a chunk). The aligned superset never
 * reaches before the tensor (its base must be 16-byte aligned) or past its
 * end (the thread's last chunk plus 32 bytes lies inside); a thread for
 * which either fails takes the predicated element path. Branches to $Lbrowsend<L> when taken. */
static void misaligned_rows(Emitter *e, const TirInst *in, const BlockGeom *g, const RowsAt *R, const int64_t *coff,
                            const char *inside, const char *aligned, int L, const char **pw) {
  int eb = px_elem_bytes_mem(in->ty.elem), V = g->V, ncol = (int)g->reps_c * V;
  const char *ok = px_tmp(e, RC_PRED), *t = px_tmp(e, RC_B64), *end = px_tmp(e, RC_B64), *last = px_tmp(e, RC_B64);
  int M = px_new_label(e);
  bool held = px_rowstage_load(e, in);
  const char *sp = held ? "shared" : "global";
  px_out(e, "and.pred %s, %s, !%s;", ok, inside, aligned);
  if (!held) { /* a staged-rows copy keeps every address's alignment and has 32 bytes to spare after the rows */
    px_out(e, "and.b64 %s, %%base%d, 15;", t, in->aux);
    px_out(e, "setp.eq.and.u64 %s, %s, 0, %s;", ok, t, ok);
    end = px_tensor_end(e, in->aux);
    px_out(e, "mad.lo.s64 %s, %s, %lld, %s;", last, R->step, (long long)(g->reps_r - 1), R->ad);
    px_out(e, "add.s64 %s, %s, %lld;", last, last, (long long)(coff[ncol - V] * eb + 32));
    px_out(e, "setp.le.and.u64 %s, %s, %s, %s;", ok, last, end, ok);
  }
  px_out(e, "@!%s bra $Lbmis%d;", ok, M);
  /* Every row's aligned 32 bytes a chunk are loaded before any branch:
   * a row's words wait for its bytes in the branch on its s, so loads
   * issued inside each row's branch would go one row after another (a
   * thread of a [64, 64] f32 tile holds four rows). */
  int64_t nr = g->reps_r, nc = g->reps_c;
  const char **w = arena_alloc(e->a, sizeof(char *) * (size_t)(nr * nc * 8));
  const char **srow = arena_alloc(e->a, sizeof(char *) * (size_t)nr);
  const char *ad = px_tmp(e, RC_B64), *s64 = px_tmp(e, RC_B64);
  px_out(e, "mov.b64 %s, %s;", ad, R->ad);
  for (int64_t rr = 0; rr < nr; rr++) {
    const char *lo = px_tmp(e, RC_B64);
    srow[rr] = px_tmp(e, RC_B32);
    if (rr) px_out(e, "add.s64 %s, %s, %s;", ad, ad, R->step);
    row_shift(e, ad, lo, s64, srow[rr]);
    for (int64_t c = 0; c < nc; c++) {
      const char **u = w + (rr * nc + c) * 8;
      int64_t off = coff[c * V] * eb;
      for (int i = 0; i < 8; i++) u[i] = px_tmp(e, RC_B32);
      const char *gm = px_gmod(e, sp), *gp = px_gpol(e, sp);
      for (int h = 0; h < 2; h++)
        px_out(e, "ld.%s%s.v4.b32 {%s, %s, %s, %s}, [%s+%lld]%s;", sp, gm, u[4 * h], u[4 * h + 1], u[4 * h + 2],
               u[4 * h + 3], lo, (long long)(off + 16 * h), gp);
    }
  }
  /* s is the same for every chunk of a row: a branch on it a row, and in
   * each case the chunk's elements at constant places (words kept packed
   * take one shf where s is not a multiple of 4), where a select network
   * costs 15 instructions a chunk */
  for (int64_t rr = 0; rr < nr; rr++) {
    int C = px_new_label(e);
    shift_branches(e, srow[rr], eb, "bsh", C, false);
    for (int sv = 0; sv < 16; sv += eb) { /* s 0 falls through to its case */
      if (sv) px_label(e, arena_printf(e->a, "bsh%d_", C), sv);
      int ws = sv / 4, r = sv % 4;
      for (int64_t c = 0; c < nc; c++) {
        const char *const *u = w + (rr * nc + c) * 8, *out[4];
        int k = (int)(rr * ncol + c * V);
        if (!pw) { /* each element from its place in the 32 bytes: a 16-bit
                    * element's half or a byte is taken where it lies, so no
                    * shf first (a bf16 chunk: its four shf gone) */
          unpack_chunk_at(e, in, in->ty.elem, V, u, k, sv / eb);
          continue;
        }
        for (int j = 0; j < 4; j++) {
          if (!r) {
            out[j] = u[ws + j];
            continue;
          }
          out[j] = px_tmp(e, RC_B32);
          px_out(e, "shf.r.clamp.b32 %s, %s, %s, %d;", out[j], u[ws + j], u[ws + j + 1], r * 8);
        }
        for (int j = 0; j < V * eb / 4; j++) px_out(e, "mov.b32 %s, %s;", pw[k * eb / 4 + j], out[j]);
      }
      px_out(e, "bra.uni $Lbshd%d;", C);
    }
    px_label(e, "bshd", C);
  }
  px_out(e, "bra.uni $Lbrowsend%d;", L);
  px_label(e, "bmis", M);
}

/* A blocked store whose rows are not 16-byte aligned (softmax over 50257
 * bf16 columns), for a warp whose every row and chunk is inside: element
 * by element it costs V stores a chunk, each touching a sector of its own.
 * Instead each thread stores the aligned 16 bytes that end inside its
 * chunk: the last s bytes of the chunk before it (s, the row's
 * misalignment) and the first 16 - s of its own, the former by a shuffle
 * from the lane that holds it, the next along the row (lane - 1 of the
 * tc lanes of a row; lane tc - 1's previous chunk for lane 0, as a warp's
 * chunks of a row are one run, layout.c); the 32 bytes are shifted as the
 * loads' are (misaligned_rows: a branch on s a row) where a warp holds one
 * row, by a select network on each row's s where it holds several
 * (store_row_chunks). A chain's first chunk (the warp's first of the row)
 * has no chunk before it in the warp, so its lane stores its own bytes
 * (in aligned pieces); a chain's last chunk's last s bytes would be the
 * next aligned store, which no lane of the warp makes, so its lane too
 * (those stores rewrite the same values where they overlap). Rows that
 * are aligned (s 0) store their own chunks. Every lane of the warp takes
 * this path or none (shuffles). Branches to $Lbrowsend<L>. */
/* The lanes of misaligned_store_rows: the lane before each along its row
 * (src), a row's first and last lanes, and either of the two. */
typedef struct StoreLanes {
  const char *src, *first, *last, *solo_any;
} StoreLanes;

/* A row's shift for the select network (misaligned_store_rows with
 * several rows a warp): s is 0, the bits 8 and 4 of 16 - s, and the bits
 * of its bytes past a word. */
typedef struct ShiftNet {
  const char *zero, *b1, *b0, *sh;
} ShiftNet;

/* A chunk's bytes [b0, b1) of the 16 in its words w, stored under pred at
 * ad + off + b0 on, where the chunk's first byte lies sv bytes past a
 * 16-byte boundary: in the widest pieces their addresses align (8, 4, 2 or
 * 1 bytes; a piece that starts inside a word takes it by shf). A chain's
 * head or tail lane stores its share so, where storing each element took a
 * conversion, a shift and a store an element (a bf16 chunk's 8 elements:
 * 32 instructions the warp issued, 4 pieces now). */
static void store_chunk_bytes(Emitter *e, const char *ad, int64_t off, int sv, const char *const *w, int b0, int b1,
                              const char *pred) {
  for (int b = b0; b < b1;) {
    int wd = 8;
    while (wd > 1 && ((sv + b) % wd || b + wd > b1)) wd /= 2;
    int sh = b % 4;
    const char *at = arena_printf(e->a, "%s+%lld", ad, (long long)(off + b));
    if (wd >= 4) {
      const char *r[2];
      for (int i = 0; i < wd / 4; i++) {
        r[i] = w[b / 4 + i];
        if (!sh) continue;
        r[i] = px_tmp(e, RC_B32);
        px_out(e, "shf.r.clamp.b32 %s, %s, %s, %d;", r[i], w[b / 4 + i], w[b / 4 + i + 1], sh * 8);
      }
      if (wd == 4)
        px_out(e, "@%s st.global%s.b32 [%s], %s%s;", pred, px_gmod(e, "global"), at, r[0], px_gpol(e, "global"));
      else
        px_out(e, "@%s st.global%s.v2.b32 [%s], {%s, %s}%s;", pred, px_gmod(e, "global"), at, r[0], r[1],
               px_gpol(e, "global"));
    } else {
      const char *r = w[b / 4];
      if (sh) {
        r = px_tmp(e, RC_B32);
        px_out(e, "shr.u32 %s, %s, %d;", r, w[b / 4], sh * 8);
      }
      px_out(e, "@%s st.global%s.%s [%s], %s%s;", pred, px_gmod(e, "global"), wd == 2 ? "u16" : "u8", at, r,
             px_gpol(e, "global"));
    }
    b += wd;
  }
}

/* One row repetition rr of misaligned_store_rows at row address ad
 * (aligned address lo below it): each chunk's aligned store, shifted by sv
 * bytes (a constant; 0: the row is aligned) or, where net is not NULL, by
 * the row's own s through the select network. prev: the previous chunk's
 * words, carried along the row. */
static void store_row_chunks(Emitter *e, const TirInst *val, const BlockGeom *g, const int64_t *coff, Scalar te, int rr,
                             const char *ad, const char *lo, const StoreLanes *ln, const ShiftNet *net, int sv) {
  int eb = px_elem_bytes_mem(te), V = g->V, nrc = (int)g->reps_c;
  const char *prev[4] = {0};
  for (int c = 0; c < nrc; c++) {
    int k0 = (int)(rr * nrc * V + c * V);
    int64_t off = coff[c * V] * eb;
    const char *w[4], *z[8], *out[4];
    for (int i = 0; i < 4; i++) w[i] = px_tmp(e, RC_B32);
    px_pack_chunk(e, val, te, 4, k0, w);
    if (!net && sv == 0) { /* an aligned row: its own chunks */
      px_out(e, "st.global%s.v4.b32 [%s+%lld], {%s, %s, %s, %s}%s;", px_gmod(e, "global"), ad, (long long)off, w[0],
             w[1], w[2], w[3], px_gpol(e, "global"));
      continue;
    }
    /* what the next lane along reads: lane tc - 1 gives lane 0 its
     * previous chunk (a warp's chunks of a row are one run); the words a
     * constant sv leaves unread ptxas drops (SASS of softmax_bf16, 12-06g) */
    for (int i = 0; i < 4; i++) {
      const char *v = w[i];
      if (c > 0) {
        v = px_tmp(e, RC_B32);
        px_out(e, "selp.b32 %s, %s, %s, %s;", v, prev[i], w[i], ln->last);
      }
      z[i] = px_tmp(e, RC_B32);
      px_out(e, "shfl.sync.idx.b32 %s, %s, %s, 31, -1;", z[i], v, ln->src);
      z[i + 4] = w[i];
    }
    if (!net) { /* bytes 16 - sv on of (previous, own) */
      int tb = 16 - sv, ws = tb / 4, r = tb % 4;
      for (int j = 0; j < 4; j++) {
        out[j] = z[ws + j];
        if (!r) continue;
        out[j] = px_tmp(e, RC_B32);
        px_out(e, "shf.r.clamp.b32 %s, %s, %s, %d;", out[j], z[ws + j], z[ws + j + 1], r * 8);
      }
    } else {
      const char *x[6], *y[5];
      for (int i = 0; i < 6; i++) {
        x[i] = px_tmp(e, RC_B32);
        px_out(e, "selp.b32 %s, %s, %s, %s;", x[i], z[i + 2], z[i], net->b1);
      }
      for (int i = 0; i < 5; i++) {
        y[i] = px_tmp(e, RC_B32);
        px_out(e, "selp.b32 %s, %s, %s, %s;", y[i], x[i + 1], x[i], net->b0);
      }
      for (int j = 0; j < 4; j++) {
        out[j] = px_tmp(e, RC_B32);
        if (eb == 4) px_out(e, "mov.b32 %s, %s;", out[j], y[j]); /* 16 - s is a multiple of 4 */
        else px_out(e, "shf.r.clamp.b32 %s, %s, %s, %s;", out[j], y[j], y[j + 1], net->sh);
        px_out(e, "selp.b32 %s, %s, %s, %s;", out[j], w[j], out[j], net->zero);
      }
    }
    /* this chunk's lane stores its elements itself where it starts or
     * ends a chain; the aligned store where a chunk lies before it */
    bool chain_head = c == 0, chain_tail = c == nrc - 1;
    const char *solo = chain_head && chain_tail ? ln->solo_any : chain_head ? ln->first : chain_tail ? ln->last : NULL;
    const char *vec = NULL; /* a chain's head stores a vector only when its row is aligned */
    if (chain_head) {
      vec = px_tmp(e, RC_PRED);
      px_out(e, "not.pred %s, %s;", vec, ln->first);
      if (net) px_out(e, "or.pred %s, %s, %s;", vec, vec, net->zero);
    }
    px_out(e, "%s%sst.global%s.v4.b32 [%s+%lld], {%s, %s, %s, %s}%s;", vec ? "@" : "",
           vec ? arena_printf(e->a, "%s ", vec) : "", px_gmod(e, "global"), lo, (long long)off, out[0], out[1], out[2],
           out[3], px_gpol(e, "global"));
    if (solo && !net) { /* s a constant: the head lane its first 16 - s bytes, the tail lane its last s */
      if (chain_head) store_chunk_bytes(e, ad, off, sv, w, 0, 16 - sv, ln->first);
      if (chain_tail) store_chunk_bytes(e, ad, off, sv, w, 16 - sv, 16, ln->last);
    } else if (solo) {
      for (int v = 0; v < V; v++)
        px_st(e, "global", te, arena_printf(e->a, "%s+%lld", ad, (long long)(off + v * eb)), store_elem(e, val, k0 + v),
              solo);
    }
    for (int i = 0; i < 4; i++) prev[i] = w[i];
  }
}

static void misaligned_store_rows(Emitter *e, const TirInst *in, const TirInst *val, const BlockGeom *g, const RowsAt *R,
                                  const int64_t *coff, int L) {
  Scalar te = e->f->params[in->aux].elem;
  int eb = px_elem_bytes_mem(te), tc = g->tc;
  StoreLanes ln;
  const char *lane = px_tmp(e, RC_B32), *lc = px_tmp(e, RC_B32);
  ln.src = px_tmp(e, RC_B32);
  const char *q = px_tmp(e, RC_B32);
  ln.first = px_tmp(e, RC_PRED), ln.last = px_tmp(e, RC_PRED);
  px_out(e, "and.b32 %s, %%tid_, 31;", lane);
  px_out(e, "and.b32 %s, %s, %d;", lc, lane, tc - 1);
  px_out(e, "setp.eq.u32 %s, %s, 0;", ln.first, lc);
  px_out(e, "setp.eq.u32 %s, %s, %d;", ln.last, lc, tc - 1);
  /* the lane before this one along the row, within its tc lanes */
  px_out(e, "add.u32 %s, %s, %d;", q, lc, tc - 1);
  px_out(e, "and.b32 %s, %s, %d;", q, q, tc - 1);
  px_out(e, "and.b32 %s, %s, %d;", ln.src, lane, 31 & ~(tc - 1));
  px_out(e, "or.b32 %s, %s, %s;", ln.src, ln.src, q);
  /* lanes whose chunks go element by element: a chain's first (lane 0 of
   * its row: every chunk when warps share the columns, else the first) or
   * its last (lane tc - 1: every chunk, or the last) */
  ln.solo_any = px_tmp(e, RC_PRED);
  px_out(e, "or.pred %s, %s, %s;", ln.solo_any, ln.first, ln.last);
  const char *ad = px_tmp(e, RC_B64), *lo = px_tmp(e, RC_B64), *s64 = px_tmp(e, RC_B64), *s = px_tmp(e, RC_B32),
             *t = px_tmp(e, RC_B32);
  ShiftNet net;
  net.sh = px_tmp(e, RC_B32), net.b1 = px_tmp(e, RC_PRED), net.b0 = px_tmp(e, RC_PRED), net.zero = px_tmp(e, RC_PRED);
  px_out(e, "mov.b64 %s, %s;", ad, R->ad);
  for (int64_t rr = 0; rr < g->reps_r; rr++) {
    if (rr) px_out(e, "add.s64 %s, %s, %s;", ad, ad, R->step);
    /* the aligned store lies s bytes before the chunk and takes its bytes
     * from 16 - s on of (previous chunk, own chunk) */
    row_shift(e, ad, lo, s64, s);
    if (g->tr > 1) { /* several rows a warp: the select network on the row's own s */
      px_out(e, "setp.eq.u32 %s, %s, 0;", net.zero, s);
      px_out(e, "sub.u32 %s, 16, %s;", t, s);
      px_out(e, "and.b32 %s, %s, 3;", net.sh, t);
      px_out(e, "shl.b32 %s, %s, 3;", net.sh, net.sh);
      const char *m = px_tmp(e, RC_B32);
      px_out(e, "and.b32 %s, %s, 8;", m, t);
      px_out(e, "setp.ne.u32 %s, %s, 0;", net.b1, m);
      px_out(e, "and.b32 %s, %s, 4;", m, t);
      px_out(e, "setp.ne.u32 %s, %s, 0;", net.b0, m);
      store_row_chunks(e, val, g, coff, te, (int)rr, ad, lo, &ln, &net, 0);
      continue;
    }
    /* one row a warp: a warp-uniform branch on s, each case with the
     * words at constant places */
    int C = px_new_label(e);
    shift_branches(e, s, eb, "bss", C, true);
    for (int sv = 0; sv < 16; sv += eb) {
      if (sv) px_label(e, arena_printf(e->a, "bss%d_", C), sv);
      store_row_chunks(e, val, g, coff, te, (int)rr, ad, lo, &ln, NULL, sv);
      px_out(e, "bra.uni $Lbssd%d;", C);
    }
    px_label(e, "bssd", C);
  }
  px_out(e, "bra.uni $Lbrowsend%d;", L);
}

/* An odd-pitch path of parameter in->aux's rows: emitted, or left out of
 * an aligned-rows copy (Plan.aligned_copy; ptx_odd_row_params) */
static void note_odd_rows(Emitter *e, const TirInst *in) {
  if (in->aux < 64) e->odd_rows |= UINT64_C(1) << in->aux;
  else e->odd_rows_wide = true;
}

/* whole &&= each chunk lies wholly inside the row or wholly past it (its
 * first and last columns' masks agree), for the CH_WHOLE path of a thread
 * of one chunk a row (its two masks are the eager ones; several chunks
 * take chunks_uniform) */
static void chunks_whole(Emitter *e, const RowsAt *R, const BlockGeom *g, const char *whole) {
  for (int c = 0; c < (int)g->reps_c; c++) {
    const char *x = px_tmp(e, RC_PRED);
    px_out(e, "xor.pred %s, %s, %s;", x, col_ok(e, R->cm, c * g->V), col_ok(e, R->cm, c * g->V + g->V - 1));
    px_out(e, "and.pred %s, %s, !%s;", whole, whole, x);
  }
}

/* Every row repetition's chunks as vectors (blocked_chunks in mode
 * CH_FAST or CH_WHOLE), then on to $Lbrowsend<L> */
static void vector_rows(Emitter *e, const TirInst *in, const TirInst *val, const BlockGeom *g, const RowsAt *R,
                        const int64_t *coff, const char *ad, const char *aligned, int mode, int L, const char **pw) {
  int ncol = (int)g->reps_c * g->V;
  px_out(e, "mov.b64 %s, %s;", ad, R->ad);
  for (int64_t rr = 0; rr < g->reps_r; rr++) {
    if (rr) px_out(e, "add.s64 %s, %s, %s;", ad, ad, R->step);
    blocked_chunks(e, in, val, g, coff, R->cm, ad, NULL, aligned, (int)(rr * ncol), mode, pw);
  }
  px_out(e, "bra.uni $Lbrowsend%d;", L);
}

/* A rank-2 register load or store of a blocked value (plan.h, BlockGeom)
 * whose columns are the tensor's contiguous dim: a thread's chunks lie at
 * column base + c tc V (c < reps_c), its rows at row base + rr tr wr, so
 * the column masks and the first address are computed once (rows_at), each
 * row repetition costs an add, and each row its chunks (blocked_chunks).
 * val: the stored value, or NULL for a load into in. */
static bool emit_blocked_rows(Emitter *e, const TirInst *in, const TirInst *val) {
  const TirInst *x = val ? val : in;
  if (x->ty.rank > 2 || !blocked_rows_access(e, in, x)) return false;
  BlockGeom g = plan_block_geom(x);
  Scalar te = val ? e->f->params[in->aux].elem : in->ty.elem;
  int eb = px_elem_bytes_mem(te), V = g.V, ncol = (int)g.reps_c * V;
  int64_t *coff = arena_alloc(e->a, sizeof(int64_t) * (size_t)ncol);
  for (int j = 0; j < ncol; j++) coff[j] = px_blk_col_off(&g, j);
  bool held = !val && px_rowstage_load(e, in);
  if (held) px_rowstage_wait(e, in);
  const char *r0 = px_blk_row_base(e, &g), *c1 = px_blk_col_base(e, &g);
  RowsAt R = rows_at(e, in, r0, c1, coff, ncol, (int64_t)g.tr * g.wr, eb, V);
  if (held) { /* the copy's address: the same alignment, the same row pitch */
    const char *sad = px_tmp(e, RC_B64);
    px_out(e, "add.s64 %s, %s, %s;", sad, R.ad, e->rs_delta);
    R.ad = sad;
  }
  const char *aligned = NULL;
  if (blocked_vec(V, eb)) {
    const char *al = px_tmp(e, RC_B64);
    aligned = px_tmp(e, RC_PRED);
    /* a thread of one row repetition never steps to the next row: the
     * pitch does not matter (a shifted walk's rows, shiftwalk.c) */
    if (g.reps_r > 1) px_out(e, "or.b64 %s, %s, %s;", al, R.ad, R.step);
    px_out(e, "and.b64 %s, %s, %d;", al, g.reps_r > 1 ? al : R.ad, vec_align(V, eb) - 1);
    px_out(e, "setp.eq.u64 %s, %s, 0;", aligned, al);
  }
  const char **pw = !val && aligned ? load_words(e, in, eb) : NULL;
  /* a thread whose every row and chunk is inside (away from the tensor's
   * ends: the common case) takes the vectors unpredicated; the others the
   * predicated path */
  int L = px_new_label(e);
  const char *ad = px_tmp(e, RC_B64);
  if (aligned) {
    const char *inside = px_tmp(e, RC_PRED), *all = px_tmp(e, RC_PRED), *whole = px_tmp(e, RC_PRED);
    px_out(e, "setp.gt.s32 %s, %s, %lld;", inside, R.lim, (long long)((g.reps_r - 1) * g.tr * g.wr));
    px_out(e, "setp.ge.and.s32 %s, %s, 0, %s;", inside, R.grow, inside);
    px_out(e, "mov.pred %s, %s;", whole, inside); /* the rows are inside; the chunks' test follows at $Lbrows */
    /* every column is inside when the row's first and last are (ColMasks);
     * a shifted walk's own load takes the vector path (only it) also where
     * its first chunk holds phantoms in column 0's granule (vin) */
    const char *vin = NULL;
    if (shift_walk_own_load(e, in, R.i1)) {
      vin = px_tmp(e, RC_PRED);
      px_out(e, "and.pred %s, %s, %s;", vin, inside, col_mask_phantoms(e, R.cm, V));
      px_out(e, "and.pred %s, %s, %s;", vin, vin, R.colok[ncol - 1]);
    }
    px_out(e, "and.pred %s, %s, %s;", inside, inside, R.colok[0]);
    px_out(e, "and.pred %s, %s, %s;", inside, inside, R.colok[ncol - 1]);
    /* one chunk: its ends' masks are those two, so its wholly-inside test
     * costs two predicate operations here (the q8 example measured 1-2%
     * faster than with them at $Lbrows, 12-03c call 4); several chunks'
     * tests need masks of their own, computed at $Lbrows */
    bool early = g.reps_c == 1;
    if (early) chunks_whole(e, &R, &g, whole);
    /* a store whose rows' pitch or base is not aligned, in a warp whose
     * every lane is inside, realigns its chunks by shuffles; the choice is
     * the whole warp's */
    int M = -1;
    if (val && V * eb == 16 && g.tc >= 4) note_odd_rows(e, in);
    if (val && V * eb == 16 && g.tc >= 4 && !e->p->aligned_copy) {
      const char *u = px_tmp(e, RC_PRED), *m = px_tmp(e, RC_PRED);
      M = px_new_label(e);
      px_out(e, "vote.sync.all.pred %s, %s, -1;", u, inside);
      px_out(e, "vote.sync.any.pred %s, !%s, -1;", m, aligned);
      px_out(e, "and.pred %s, %s, %s;", u, u, m);
      px_out(e, "@%s bra.uni $Lbsmis%d;", u, M);
    }
    px_out(e, "and.pred %s, %s, %s;", all, vin ? vin : inside, aligned);
    px_out(e, "@!%s bra $Lbrows%d;", all, L);
    vector_rows(e, in, val, &g, &R, coff, ad, aligned, CH_FAST, L, pw);
    if (M >= 0) {
      px_label(e, "bsmis", M);
      misaligned_store_rows(e, in, val, &g, &R, coff, L);
    }
    px_label(e, "brows", L);
    /* rows inside, each chunk wholly inside or wholly past the tensor's
     * end (a row of 5120 in a block of 8192): the same vectors, each
     * predicated on its chunk's first column */
    int Wl = px_new_label(e);
    if (!early) chunks_uniform(e, R.cm, px_sub_start(e, in, R.i1), V, whole);
    px_out(e, "and.pred %s, %s, %s;", whole, whole, aligned);
    px_out(e, "@!%s bra $Lbwhole%d;", whole, Wl);
    vector_rows(e, in, val, &g, &R, coff, ad, aligned, CH_WHOLE, L, pw);
    px_label(e, "bwhole", Wl);
    if (!val && V * eb == 16) note_odd_rows(e, in);
    if (!val && V * eb == 16 && !e->p->aligned_copy) misaligned_rows(e, in, &g, &R, coff, inside, aligned, L, pw);
  }
  /* A thread none of whose columns or rows is inside (past a row's end:
   * the last block of a softmax over 50257 columns in blocks of 16384
   * leaves 14 of its 16 warps so) has nothing to access element by
   * element: a load's registers are zero, a store writes nothing. Its first
   * column decides for every column (they increase along its chunks) where
   * it does not lie before the tensor's start; no row is inside where the
   * rows left are none. Element by element such a thread issued every
   * predicated access and its masks (ncu, bf16 softmax over 4096 x 50257
   * at 512 threads: 3.6x the aligned rows' load and store instructions).
   * Only in loops, where the walk's last block takes this path: outside
   * them (one-pass copies, strips) the branch kept ptxas from issuing a
   * strip's loads under the one before, as skip.c's did (the softmax port
   * over 4096 x 50257 f32: 816.0 -> 866.6 us on the H100). */
  int Z = e->loops ? px_new_label(e) : -1;
  if (Z >= 0) {
    const char *none = px_tmp(e, RC_PRED), *norow = px_tmp(e, RC_PRED);
    px_out(e, "setp.ge.s32 %s, %s, 0;", none, R.g[R.i1]);
    px_out(e, "and.pred %s, %s, !%s;", none, none, R.colok[0]);
    px_out(e, "setp.le.s32 %s, %s, 0;", norow, R.lim);
    px_out(e, "or.pred %s, %s, %s;", none, none, norow);
    px_out(e, "@%s bra $Lbnone%d;", none, Z);
  }
  px_out(e, "mov.b64 %s, %s;", ad, R.ad);
  for (int64_t rr = 0; rr < g.reps_r; rr++) {
    int64_t row = rr * g.tr * g.wr;
    if (rr) px_out(e, "add.s64 %s, %s, %s;", ad, ad, R.step);
    const char *pr = px_tmp(e, RC_PRED), *pz = px_tmp(e, RC_PRED);
    px_out(e, "setp.gt.s32 %s, %s, %lld;", pr, R.lim, (long long)row);
    px_out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", pz, R.grow, (long long)-row, pr);
    blocked_chunks(e, in, val, &g, coff, R.cm, ad, pz, aligned, (int)(rr * ncol), CH_MASKED, pw);
  }
  if (Z >= 0) {
    px_out(e, "bra.uni $Lbnoned%d;", Z);
    px_label(e, "bnone", Z);
    if (!val && pw)
      for (int i = 0; i < px_nregs(e, in) * eb / 4; i++) px_out(e, "mov.b32 %s, 0;", pw[i]);
    else if (!val) {
      RegClass rc = px_rc_of(in->ty.elem);
      for (int k = 0; k < (int)(g.reps_r * ncol); k++)
        px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_zero(rc));
    }
    px_label(e, "bnoned", Z);
  }
  if (aligned) px_label(e, "browsend", L);
  if (pw) px_defer_unpack(e, in, pw, V * eb / 4, px_nregs(e, in) / V, V);
  return true;
}

/* A rank-3 register load or store of a blocked value (folded rows [P0 P1,
 * P2]: a [BT, BH, D] block of a [T, H, D] tensor, heads of a few tokens)
 * whose three spans end in the tensor's contiguous dim: the rows of a
 * thread lie at folded row f = base + rr tr wr, tensor row (s0 + f / P1,
 * s1 + f mod P1), not a constant step apart, so each row repetition
 * computes its own address and mask (a few integer operations), and its
 * chunks go as emit_blocked_rows' do: unpredicated vectors where every row
 * and column is inside and the rows' addresses are aligned to the vector
 * (the first row's and the innermost row pitch: every row lies a multiple
 * of it from the first), else each chunk a vector where it is whole and
 * its row's address aligned, element by element where not. Element by element they took 35
 * instructions an element (12-04). */
static bool emit_blocked_rows3(Emitter *e, const TirInst *in, const TirInst *val) {
  const TirInst *x = val ? val : in;
  if (x->ty.rank != 3 || !blocked_rows_access(e, in, x) || px_rowstage_load(e, in)) return false;
  int sp[3], ns = 0;
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) sp[ns++] = i;
  BlockGeom g = plan_block_geom(x);
  Scalar te = val ? e->f->params[in->aux].elem : in->ty.elem;
  int eb = px_elem_bytes_mem(te), V = g.V, ncol = (int)g.reps_c * V;
  int64_t P1 = x->plan->phys[1], S = (int64_t)g.tr * g.wr;
  int64_t *coff = arena_alloc(e->a, sizeof(int64_t) * (size_t)ncol);
  for (int j = 0; j < ncol; j++) coff[j] = px_blk_col_off(&g, j);
  const char *r0 = px_blk_row_base(e, &g), *c1 = px_blk_col_base(e, &g), *ok = px_tmp(e, RC_PRED);
  const char *gg[MAX_TENSOR_RANK];
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < in->nsubs; i++) {
    gg[i] = px_sub_start(e, in, i);
    if (in->subs[i].point) px_and_below(e, ok, gg[i], px_ext(e, in->aux, i));
  }
  const char *gcol = px_tmp(e, RC_B32);
  px_out(e, "add.s32 %s, %s, %s;", gcol, gg[sp[2]], c1);
  ColMasks *cm = col_masks(e, c1, gcol, ok, px_ext(e, in->aux, sp[2]), in->subs[sp[2]].len, coff, ncol, V, V > 1);
  /* each row repetition's tensor row, mask and address */
  int64_t nr = g.reps_r;
  const char **ad = arena_alloc(e->a, sizeof(char *) * (size_t)nr), **pz = arena_alloc(e->a, sizeof(char *) * (size_t)nr);
  const char *all = px_tmp(e, RC_PRED);
  px_out(e, "mov.pred %s, %s;", all, ok);
  for (int64_t rr = 0; rr < nr; rr++) {
    const char *f = px_tmp(e, RC_B32), *t = px_tmp(e, RC_B32), *h = px_tmp(e, RC_B32), *gt = px_tmp(e, RC_B32),
               *gh = px_tmp(e, RC_B32);
    pz[rr] = px_tmp(e, RC_PRED);
    px_out(e, "add.u32 %s, %s, %lld;", f, r0, (long long)(rr * S));
    px_out(e, "shr.u32 %s, %s, %d;", t, f, px_log2i((int)P1));
    px_out(e, "and.b32 %s, %s, %lld;", h, f, (long long)(P1 - 1));
    px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", pz[rr], t, (long long)in->subs[sp[0]].len, ok);
    px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", pz[rr], h, (long long)in->subs[sp[1]].len, pz[rr]);
    px_out(e, "add.s32 %s, %s, %s;", gt, gg[sp[0]], t);
    px_out(e, "add.s32 %s, %s, %s;", gh, gg[sp[1]], h);
    px_and_below(e, pz[rr], gt, px_ext(e, in->aux, sp[0])); /* unsigned: a negative row is out too */
    px_and_below(e, pz[rr], gh, px_ext(e, in->aux, sp[1]));
    px_out(e, "and.pred %s, %s, %s;", all, all, pz[rr]);
    const char *g3[MAX_TENSOR_RANK];
    for (int i = 0; i < in->nsubs; i++) g3[i] = i == sp[0] ? gt : i == sp[1] ? gh : i == sp[2] ? gcol : gg[i];
    ad[rr] = px_tensor_addr(e, in->aux, g3);
  }
  const char *aligned = NULL;
  if (blocked_vec(V, eb)) {
    const char *al = px_tmp(e, RC_B64), *pitch = px_pitch_bits(e, in->aux, sp[0]);
    aligned = px_tmp(e, RC_PRED);
    px_out(e, "or.b64 %s, %s, %s;", al, ad[0], pitch);
    px_out(e, "and.b64 %s, %s, %d;", al, al, vec_align(V, eb) - 1);
    px_out(e, "setp.eq.u64 %s, %s, 0;", aligned, al);
  }
  const char **pw = !val && aligned ? load_words(e, in, eb) : NULL;
  int L = px_new_label(e);
  if (aligned) {
    px_out(e, "and.pred %s, %s, %s;", all, all, aligned);
    px_out(e, "and.pred %s, %s, %s;", all, all, cm->eager[0]); /* every column is inside (ColMasks) */
    px_out(e, "and.pred %s, %s, %s;", all, all, cm->eager[ncol - 1]);
    px_out(e, "@!%s bra $Lbr3m%d;", all, L);
    for (int64_t rr = 0; rr < nr; rr++)
      blocked_chunks(e, in, val, &g, coff, cm, ad[rr], NULL, aligned, (int)(rr * ncol), CH_FAST, pw);
    px_out(e, "bra.uni $Lbr3e%d;", L);
    px_label(e, "br3m", L);
  }
  /* here each row tests its own address: with a pitch that is not a
   * multiple of the vector (D = 100 bf16: 200 bytes), every other row is
   * aligned and takes vectors */
  for (int64_t rr = 0; rr < nr; rr++) {
    const char *arr = aligned;
    if (aligned) {
      const char *al = px_tmp(e, RC_B64);
      arr = px_tmp(e, RC_PRED);
      px_out(e, "and.b64 %s, %s, %d;", al, ad[rr], vec_align(V, eb) - 1);
      px_out(e, "setp.eq.u64 %s, %s, 0;", arr, al);
    }
    blocked_chunks(e, in, val, &g, coff, cm, ad[rr], pz[rr], arr, (int)(rr * ncol), CH_MASKED, pw);
  }
  if (aligned) px_label(e, "br3e", L);
  if (pw) px_defer_unpack(e, in, pw, V * eb / 4, px_nregs(e, in) / V, V);
  return true;
}

/* A load or store of a row vector in the columns layout ([N], or [1, N]:
 * every row of the blocked parent holds the columns it needs) whose span is
 * the tensor's contiguous dim: one row of chunks (blocked_chunks), every
 * thread loading its own columns (the rows' copies meet in L1), and one
 * row of threads storing them. (A blocked [N] takes emit_blocked_rows as
 * one row.) */
static bool emit_columns(Emitter *e, const TirInst *in, const TirInst *val) {
  const TirInst *x = val ? val : in;
  bool fc = plan_is_fragcols(x) && !val; /* the columns of a fragment: pairs 8 columns apart from 2t */
  if ((!plan_is_columns(x) && !fc) || !px_cols_contiguous(e, in)) return false;
  int last = -1;
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) last = i;
  for (int i = 0; i < in->nsubs; i++) /* a [1, N] access: its row span is one long */
    if (!in->subs[i].point && i != last && in->subs[i].len != 1) return false;
  BlockGeom g = fc ? (BlockGeom){.V = 2, .reps_c = x->plan->phys[x->ty.rank - 1] / 8} : plan_block_geom(x);
  Scalar te = val ? e->f->params[in->aux].elem : in->ty.elem;
  int eb = px_elem_bytes_mem(te), V = g.V, ncol = (int)g.reps_c * V;
  int64_t *coff = arena_alloc(e->a, sizeof(int64_t) * (size_t)ncol);
  for (int j = 0; j < ncol; j++) coff[j] = fc ? px_fragcols_col(j) : px_blk_col_off(&g, j);
  const char *c1 = fc ? "%ft2_" : px_blk_col_base(e, &g), *ok = px_tmp(e, RC_PRED), *gg[MAX_TENSOR_RANK];
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < in->nsubs; i++) {
    gg[i] = px_sub_start(e, in, i);
    if (i != last) {
      px_and_below(e, ok, gg[i], px_ext(e, in->aux, i));
      continue;
    }
    const char *gi = px_tmp(e, RC_B32);
    px_out(e, "add.s32 %s, %s, %s;", gi, gg[i], c1);
    gg[i] = gi;
  }
  if (val) { /* one row of threads stores */
    const char *own = px_blk_owner(e, val);
    if (own) px_out(e, "and.pred %s, %s, %s;", ok, ok, own);
  }
  ColMasks *cm = col_masks(e, c1, gg[last], ok, px_ext(e, in->aux, last), in->subs[last].len, coff, ncol, V, true);
  const char *ad = px_tensor_addr(e, in->aux, gg), *aligned = NULL;
  if (blocked_vec(V, eb)) {
    const char *al = px_tmp(e, RC_B64);
    aligned = px_tmp(e, RC_PRED);
    px_out(e, "and.b64 %s, %s, %d;", al, ad, vec_align(V, eb) - 1);
    px_out(e, "setp.eq.u64 %s, %s, 0;", aligned, al);
  }
  if (!aligned) {
    blocked_chunks(e, in, val, &g, coff, cm, ad, ok, aligned, 0, CH_MASKED, NULL);
    return true;
  }
  const char **pw = !val && !fc ? load_words(e, in, eb) : NULL;
  /* a thread whose chunks are all inside and aligned (away from the
   * tensor's end: the common case) takes the vectors unpredicated, as
   * emit_blocked_rows does; the others the predicated path */
  int L = px_new_label(e);
  const char *all = px_tmp(e, RC_PRED);
  px_out(e, "and.pred %s, %s, %s;", all, ok, aligned);
  px_out(e, "and.pred %s, %s, %s;", all, all, cm->eager[0]); /* every column is inside (ColMasks) */
  px_out(e, "and.pred %s, %s, %s;", all, all, cm->eager[ncol - 1]);
  px_out(e, "@!%s bra $Lcols%d;", all, L);
  blocked_chunks(e, in, val, &g, coff, cm, ad, NULL, aligned, 0, CH_FAST, pw);
  px_out(e, "bra.uni $Lcolsend%d;", L);
  px_label(e, "cols", L);
  if (!fc && g.reps_c > 1) {
    /* each chunk wholly inside or wholly past the tensor's end (a weight
     * of 5120 in a block of 8192): the same vectors, each predicated on its
     * first column (chunks_uniform) */
    int Wl = px_new_label(e);
    const char *whole = px_tmp(e, RC_PRED);
    px_out(e, "and.pred %s, %s, %s;", whole, ok, aligned);
    chunks_uniform(e, cm, px_sub_start(e, in, last), V, whole);
    px_out(e, "@!%s bra $Lcwhole%d;", whole, Wl);
    blocked_chunks(e, in, val, &g, coff, cm, ad, NULL, aligned, 0, CH_WHOLE, pw);
    px_out(e, "bra.uni $Lcolsend%d;", L);
    px_label(e, "cwhole", Wl);
  }
  blocked_chunks(e, in, val, &g, coff, cm, ad, ok, aligned, 0, CH_MASKED, pw);
  px_label(e, "colsend", L);
  if (pw) px_defer_unpack(e, in, pw, V * eb / 4, px_nregs(e, in) / V, V);
  return true;
}

/* Any load, element by element: each register's element, masked, and a
 * staged one stored into its buffer. */
void px_emit_load_elements(Emitter *e, const TirInst *in) {
  bool shared = in->plan->res == RES_SHARED;
  int rank = in->ty.rank;
  for (int k = 0; k < px_nregs(e, in); k++) {
    const char *g[MAX_TENSOR_RANK];
    const char *ok = access_lane(e, in, NULL, in->plan->phys, rank, k, g);
    const char *ad = px_tensor_addr(e, in->aux, g);
    const char *r = shared ? px_tmp(e, px_rc_of(in->ty.elem)) : px_reg(e, in, k);
    px_out(e, "mov.%s %s, %s;", px_mov_type(px_rc_of(in->ty.elem)), r, px_zero(px_rc_of(in->ty.elem)));
    px_ld(e, "global", in->ty.elem, r, ad, ok);
    if (shared) {
      const PlanBuf *b = in->plan->buf;
      const char *fl = px_flat_index(e, k);
      const char *in_range = px_tmp(e, RC_PRED);
      px_out(e, "setp.lt.u32 %s, %s, %lld;", in_range, fl, (long long)px_phys_elems(in));
      const char *c[MAX_TILE_RANK];
      for (int d = 0; d < rank; d++) c[d] = px_coord(e, fl, in->plan->phys, rank, d);
      px_st(e, "shared", in->ty.elem, px_buf_addr(e, b, c), r, in_range);
    }
  }
}

static void emit_load(Emitter *e, const TirInst *in) {
  if (in->plan->res == RES_SHARED && in->plan->buf && in->plan->buf->stages && !e->issuing) {
    /* a staged ring's tile: its loop copied it ahead (px_emit_for) and waited
     * for it at the top of this iteration */
    px_out(e, "// %%%d: in stage of ring buffer #%d", in->id, in->plan->buf->id);
    return;
  }
  if (e->p->general_strides) { /* element by element at every dim's stride: no path assumes a contiguous dim */
    px_emit_pending_sync(e);
    return px_emit_load_elements(e, in);
  }
  if (in->plan->tma && !e->replay) {
    /* Every thread must be past its wait on this load's mbarrier (the
     * previous round, in a loop) before thread 0 arms it again, or a slow
     * warp would see the next phase's parity and fall a round behind: a
     * planned barrier here does that, else one of its own. */
    if (e->sync_pending) px_emit_pending_sync(e);
    else px_cta_sync_why(e, " // the last round of this copy's mbarrier is over");
    px_emit_tma_load(e, in);
    return;
  }
  px_emit_l2pf(e, in); /* a marked load: the slice D blocks ahead, into L2 */
  if (e->sync_pending && px_emit_stage_rows(e, in)) return; /* the barrier went between its loads and stores */
  if (px_emit_stage_async(e, in)) return;
  px_emit_pending_sync(e);
  for (int q = 0; q < e->npf; q++)
    if (e->pf_load[q] == in && !e->replay) { /* loaded an iteration ago (px_emit_for): unpack at first use */
      int nw = (e->V * px_elem_bytes_mem(in->ty.elem) + 3) / 4;
      px_defer_unpack(e, in, e->pf_words[q], nw, px_nregs(e, in) / e->V, e->V);
      return;
    }
  if (in->plan->ring && e->ring_loop && in->plan->mbar->owner == e->ring_loop) return px_emit_ring_load(e, in);
  if (emit_blocked_rows(e, in, NULL) || emit_blocked_rows3(e, in, NULL)) return;
  if (px_rowstage_load(e, in)) return px_unsupported(e, in, "a staged-rows load that is not a blocked rows load");
  if (emit_columns(e, in, NULL)) return;
  if (px_emit_load_rows(e, in, NULL)) return;
  if (px_emit_stage_rows(e, in)) return;
  if (emit_long_rows(e, in, NULL)) return;
  px_emit_load_elements(e, in);
}

/* A load or store's own L2 eviction priority, under PLAN_L2_HINTS (the
 * stores' only under PLAN_L2_HINT_STORES): every global access of it takes
 * it (px_gmod, px_gpol); the access's other instructions are unchanged. */
static signed char l2hint_of(const Emitter *e, const TirInst *in) {
  if (!e->p->l2_hints || (in->op == TIR_STORE && !e->p->l2_hint_stores)) return L2H_NONE;
  return in->l2hint;
}

void px_emit_load(Emitter *e, const TirInst *in) {
  e->l2h = l2hint_of(e, in);
  emit_load(e, in);
  e->l2h = L2H_NONE;
}

void px_emit_store(Emitter *e, const TirInst *in) {
  e->l2h = l2hint_of(e, in);
  if (in->plan->tma && !e->replay) px_emit_tma_store(e, in);
  else emit_pointer_store(e, in);
  e->l2h = L2H_NONE;
}

/* The 16-bit fragment store by whole 16-byte vectors (emit_frag_rows_store's
 * first path): a lane's word of each 8-column block holds columns 2t, 2t + 1,
 * so a warp's b32 store covers 8 rows by 16 bytes, half of a 32-byte sector
 * each, and a 128 x 256 bf16 tile took 512 such stores a warp at the end of
 * every CTA: the GEMM's whole wave of CTAs stored at once at a fraction of
 * the write bandwidth (H100, 12-06d call 6: with the stores taken out,
 * 4096 x 4096 x 256 ran 55.7 -> 24.8 us). Here the four lanes of a quad
 * transpose their words of four neighbouring blocks (two butterfly steps,
 * shfl.bfly 1 and 2, each lane keeping the words whose block index matches
 * its own in that bit), so that lane t holds block t of the four, 16
 * contiguous bytes, and a warp's v4 store covers 8 rows by 64 bytes: two
 * whole sectors a row and a quarter of the instructions. Taken where every
 * lane of the warp is active and on the b32 path (rows inside, the tile's
 * columns inside) with its block start and the row pitch 16-byte aligned:
 * decided by the whole warp (the shuffles need every lane), else the b32
 * path below. Branches to $Lfrstd<L> when done. */
static void frag_quad_store(Emitter *e, const TirInst *val, Scalar te, const FragGeom *g, const char *ad,
                            const char *pitch, const char *p, int L) {
  const char *q = px_tmp(e, RC_B32), *adj = px_tmp(e, RC_B64), *ad16 = px_tmp(e, RC_B64), *al = px_tmp(e, RC_B64),
             *p16 = px_tmp(e, RC_PRED), *am = px_tmp(e, RC_B32), *odd = px_tmp(e, RC_PRED), *hi = px_tmp(e, RC_PRED);
  /* ad holds column 2t of the block start: lane t's vector is at 16 t */
  px_out(e, "and.b32 %s, %%tid_, 3;", q);
  px_out(e, "mul.wide.u32 %s, %s, 12;", adj, q);
  px_out(e, "add.s64 %s, %s, %s;", ad16, ad, adj);
  px_out(e, "or.b64 %s, %s, %s;", al, ad16, pitch);
  px_out(e, "and.b64 %s, %s, 15;", al, al);
  px_out(e, "setp.eq.and.u64 %s, %s, 0, %s;", p16, al, p);
  px_out(e, "activemask.b32 %s;", am);
  px_out(e, "setp.eq.and.u32 %s, %s, 0xffffffff, %s;", p16, am, p16);
  px_out(e, "vote.sync.all.pred %s, %s, %s;", p16, p16, am);
  px_out(e, "@!%s bra $Lfrsb%d;", p16, L);
  px_out(e, "and.b32 %s, %%tid_, 1;", q);
  px_out(e, "setp.ne.u32 %s, %s, 0;", odd, q);
  px_out(e, "and.b32 %s, %%tid_, 2;", q);
  px_out(e, "setp.ne.u32 %s, %s, 0;", hi, q);
  int W = e->T / 32;
  const char *ra = px_tmp(e, RC_B64);
  for (int mi = 0; mi < g->tpm; mi++)
    for (int h = 0; h < 2; h++) {
      px_out(e, "mad.lo.s64 %s, %s, %lld, %s;", ra, pitch, (long long)mi * W * 16 + 8 * h, ad16);
      for (int b0 = 0; b0 < g->N / 8; b0 += 4) {
        const char *x[4];
        for (int i = 0; i < 4; i++) { /* block b0 + i: column tile ni, its 8-column half j */
          int b = b0 + i, ni = b / (g->NT / 8), j = b % (g->NT / 8);
          x[i] = px_tmp(e, RC_B32);
          px_pack_chunk(e, val, te, 1, (mi * g->ntn + ni) * g->rpt + j * 4 + h * 2, &x[i]);
        }
        /* step m: a lane whose bit m differs from position i's takes its
         * partner's word i ^ m there (the partner sends what it replaces) */
        for (int m = 1; m <= 2; m <<= 1) {
          const char *pr = m == 1 ? odd : hi;
          for (int i = 0; i < 4; i++) {
            if (i & m) continue;
            const char *s = px_tmp(e, RC_B32), *r = px_tmp(e, RC_B32), *lo = px_tmp(e, RC_B32),
                       *up = px_tmp(e, RC_B32);
            px_out(e, "selp.b32 %s, %s, %s, %s;", s, x[i], x[i | m], pr);
            px_out(e, "shfl.sync.bfly.b32 %s, %s, %d, 0x1f, 0xffffffff;", r, s, m);
            px_out(e, "selp.b32 %s, %s, %s, %s;", lo, r, x[i], pr);
            px_out(e, "selp.b32 %s, %s, %s, %s;", up, x[i | m], r, pr);
            x[i] = lo, x[i | m] = up;
          }
        }
        px_out(e, "st.global%s.v4.b32 [%s+%lld], {%s, %s, %s, %s}%s;", px_gmod(e, "global"), ra,
               (long long)b0 * 8 * 2, x[0], x[1], x[2], x[3], px_gpol(e, "global"));
      }
    }
  px_out(e, "bra.uni $Lfrstd%d;", L);
  px_label(e, "frsb", L);
}

/* The pair stores of one of a thread's fragment rows (row tile mi, half h:
 * row g + 8 h), at immediate offsets from its address ra: a 4-byte word (16-
 * bit elements) or an 8-byte v2 (f32) each pair of neighbouring columns,
 * under predicate mask (NULL: unpredicated). */
static void frag_row_pairs(Emitter *e, const TirInst *val, Scalar te, const FragGeom *g, int mi, int h, const char *ra,
                           const char *mask) {
  int eb = px_elem_bytes_mem(te);
  const char *pr = mask ? arena_printf(e->a, "@%s ", mask) : "";
  for (int ni = 0; ni < g->ntn; ni++)
    for (int j = 0; j < g->NT / 8; j++) {
      int k = (mi * g->ntn + ni) * g->rpt + j * 4 + h * 2;
      int64_t off = ((int64_t)ni * g->NT + j * 8) * eb;
      if (eb == 4) {
        px_out(e, "%sst.global%s.v2.b32 [%s+%lld], {%s, %s}%s;", pr, px_gmod(e, "global"), ra, (long long)off,
               px_operand(e, val, k), px_operand(e, val, k + 1), px_gpol(e, "global"));
        continue;
      }
      const char *w = px_tmp(e, RC_B32);
      px_pack_chunk(e, val, te, 1, k, &w);
      px_out(e, "%sst.global%s.b32 [%s+%lld], %s%s;", pr, px_gmod(e, "global"), ra, (long long)off, w,
             px_gpol(e, "global"));
    }
}

/* A store of a fragment value (a GEMM's or attention's output tile) into
 * a tensor whose contiguous dim is the tile's columns: each lane holds
 * pairs of neighbouring columns (2t, 2t + 1 of each 8) in rows g and g + 8
 * of each of its row tiles, so a thread whose rows are all inside the
 * tensor, in a tile whose columns are, and whose address and row pitch are
 * aligned to a pair stores one 4-byte (16-bit elements) or 8-byte (f32)
 * word a pair at an immediate offset from its row's address, unpredicated:
 * two instructions a pair where the element path below spends about 25 an
 * element on its coordinates and masks. Returns the label of the element
 * path the others branch to (placed by the caller), or -1 when the store
 * is not of this kind. */
static int emit_frag_rows_store(Emitter *e, const TirInst *in, const TirInst *val) {
  if (val->ty.rank != 2 || !px_is_frag(e, val) || !px_cols_contiguous(e, in) || e->replay) return -1;
  Scalar te = e->f->params[in->aux].elem;
  int eb = px_elem_bytes_mem(te);
  if (eb != 2 && eb != 4) return -1;
  int i0 = -1, i1 = -1;
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) i0 = i1, i1 = i;
  if (i0 < 0) return -1;
  FragGeom g = px_frag_geom(e, val);
  int64_t M = val->plan->phys[0], N = val->plan->phys[1];
  if (in->subs[i0].len < M || in->subs[i1].len < N) return -1; /* slack rows or columns: the element path */
  int W = e->T / 32;
  int64_t maxrow = (int64_t)(g.tpm - 1) * W * 16 + 8;
  const char *gg[MAX_TENSOR_RANK], *ok = px_tmp(e, RC_PRED);
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < in->nsubs; i++) {
    gg[i] = px_sub_start(e, in, i);
    if (i != i0 && i != i1) px_and_below(e, ok, gg[i], px_ext(e, in->aux, i));
  }
  /* the tile's columns inside the tensor (the same for every thread) */
  px_and_span_inside(e, ok, gg[i1], N, in->aux, i1);
  { /* this thread's rows inside */
    const char *r = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED);
    px_out(e, "add.s32 %s, %s, %%fwg_;", r, gg[i0]);
    px_out(e, "setp.ge.and.s32 %s, %s, 0, %s;", p, r, ok);
    gg[i0] = r;
    const char *last = px_tmp(e, RC_B32);
    px_out(e, "add.s32 %s, %s, %lld;", last, r, (long long)maxrow);
    px_out(e, "setp.lt.and.s32 %s, %s, %s, %s;", ok, last, px_ext(e, in->aux, i0), p);
  }
  const char *c = px_tmp(e, RC_B32);
  px_out(e, "add.s32 %s, %s, %%ft2_;", c, gg[i1]);
  gg[i1] = c;
  const char *ad = px_tensor_addr(e, in->aux, gg), *pitch = px_pitch(e, in->aux, i0, eb), *al = px_tmp(e, RC_B64);
  px_out(e, "or.b64 %s, %s, %s;", al, ad, pitch);
  px_out(e, "and.b64 %s, %s, %d;", al, al, 2 * eb - 1);
  const char *p = px_tmp(e, RC_PRED);
  px_out(e, "setp.eq.and.u64 %s, %s, 0, %s;", p, al, ok);
  int L = px_new_label(e);
  if (eb == 2 && N % 32 == 0) frag_quad_store(e, val, te, &g, ad, pitch, p, L);
  px_out(e, "@!%s bra $Lfrst%d;", p, L);
  const char *ra = px_tmp(e, RC_B64);
  for (int mi = 0; mi < g.tpm; mi++)
    for (int h = 0; h < 2; h++) {
      px_out(e, "mad.lo.s64 %s, %s, %lld, %s;", ra, pitch, (long long)mi * W * 16 + 8 * h, ad);
      frag_row_pairs(e, val, te, &g, mi, h, ra, NULL);
    }
  return L;
}

/* The coordinates of flat row fr (a register) of a fragment value stored
 * by `in`: its coordinate along each leading dim (the row split by the
 * tile's physical extents lead[], powers of two) added to that span's
 * start into gg[span[j]], and a predicate, ok and the row inside the slice
 * (not slack) and the tensor along each of them. */
static const char *frag_row_at(Emitter *e, const TirInst *in, const char *fr, const int64_t *lead, int r,
                               const int *span, const char *const *starts, const char *ok, const char **gg) {
  const char *rok = px_tmp(e, RC_PRED);
  px_out(e, "mov.pred %s, %s;", rok, ok);
  for (int j = 0; j + 1 < r; j++) {
    const char *cj = px_coord(e, fr, lead, r - 1, j), *gj = px_tmp(e, RC_B32);
    px_and_below(e, rok, cj, arena_printf(e->a, "%lld", (long long)in->subs[span[j]].len));
    px_out(e, "add.s32 %s, %s, %s;", gj, starts[j], cj);
    px_and_below(e, rok, gj, px_ext(e, in->aux, span[j]));
    gg[span[j]] = gj;
  }
  return rok;
}

/* The fragment store of the tiles the rank-2 path above leaves to the
 * element path: leading dims beyond one (an attention output [BQ, NQ, D]
 * stored into [B, S, H, .., D]) or slack rows (NQ 7 held as 8). The
 * element path spends about 25 instructions an element on coordinates and
 * masks, and a CTA that stores its tile once runs them cold: the decode
 * split kernel's [2, 8, 128] f32 store was ~2000 of its ~11000 SASS
 * instructions, run once a CTA, every CTA fetching them from the L2 (a
 * first pass over ~1200 instructions of run-once code cost ~16 us in the
 * one-call decode's merge, H100, 12-07 call 1). Here each of a thread's
 * rows (two a row tile) finds its coordinates along the leading dims, its
 * mask (inside the slice, not slack, and inside the tensor) and its
 * address, and stores its pairs under that mask (frag_row_pairs). Taken
 * where the tile's columns are inside the tensor and the point subscripts
 * inside theirs, and where the thread's first row's address and the
 * pitches of every dim from the first row dim on are aligned to a pair
 * (then every row's is); else the element path, whose label this returns
 * (-1: not a store of this kind). */
static int emit_frag_rows_store_ranked(Emitter *e, const TirInst *in, const TirInst *val) {
  if (val->ty.rank < 2 || !px_is_frag(e, val) || !px_cols_contiguous(e, in) || e->replay) return -1;
  Scalar te = e->f->params[in->aux].elem;
  int eb = px_elem_bytes_mem(te), r = val->ty.rank;
  if (eb != 2 && eb != 4) return -1;
  int span[MAX_TENSOR_RANK], ns = 0;
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) span[ns++] = i;
  if (ns != r) return -1;
  int i1 = span[r - 1];
  FragGeom g = px_frag_geom(e, val);
  if (in->subs[i1].len < g.N) return -1; /* slack columns: the element path */
  int W = e->T / 32;
  const char *gg[MAX_TENSOR_RANK], *ok = px_tmp(e, RC_PRED);
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < in->nsubs; i++) {
    gg[i] = px_sub_start(e, in, i);
    if (in->subs[i].point) px_and_below(e, ok, gg[i], px_ext(e, in->aux, i));
  }
  px_and_span_inside(e, ok, gg[i1], g.N, in->aux, i1);
  const char *c = px_tmp(e, RC_B32);
  px_out(e, "add.s32 %s, %s, %%ft2_;", c, gg[i1]);
  const char *starts[MAX_TENSOR_RANK];
  int64_t lead[MAX_TENSOR_RANK];
  for (int j = 0; j + 1 < r; j++) starts[j] = gg[span[j]], lead[j] = val->plan->phys[j];
  gg[i1] = c;
  const char *rok = frag_row_at(e, in, "%fwg_", lead, r, span, starts, ok, gg);
  const char *ad0 = px_tensor_addr(e, in->aux, gg), *al = px_tmp(e, RC_B64), *p = px_tmp(e, RC_PRED);
  px_out(e, "or.b64 %s, %s, %s;", al, ad0, px_pitch_bits(e, in->aux, span[0]));
  px_out(e, "and.b64 %s, %s, %d;", al, al, 2 * eb - 1);
  px_out(e, "setp.eq.and.u64 %s, %s, 0, %s;", p, al, ok);
  int L = px_new_label(e);
  px_out(e, "@!%s bra $Lfrst%d;", p, L);
  for (int mi = 0; mi < g.tpm; mi++)
    for (int h = 0; h < 2; h++) {
      const char *ra = ad0, *mask = rok;
      if (mi || h) {
        const char *fr = px_tmp(e, RC_B32);
        px_out(e, "add.u32 %s, %%fwg_, %lld;", fr, (long long)mi * W * 16 + 8 * h);
        mask = frag_row_at(e, in, fr, lead, r, span, starts, ok, gg);
        ra = px_tensor_addr(e, in->aux, gg);
      }
      frag_row_pairs(e, val, te, &g, mi, h, ra, mask);
    }
  return L;
}

/* An f32 value whose registers go four neighbouring elements of a row at a
 * time (flat chunks of Plan.chunk 4, or a blocked layout of four a thread
 * along the row) in a tensor whose last dim is contiguous: on sm_90a each
 * four can be added by one red.global.add.v4.f32 where its lanes are in
 * bounds and its address is 16-byte aligned (the masks and the addresses
 * are the scalar path's, computed for all four first). */
static bool red_v4(Emitter *e, const TirInst *v, Scalar te) {
  if (!e->sm90 || te != S_F32 || !v->ty.rank || e->p->general_strides || px_nregs(e, v) % 4) return false;
  if (plan_is_blocked(v)) return plan_block_geom(v).V == 4;
  return e->V == 4 && !px_is_frag(e, v) && !px_is_rowfrag(e, v) && !plan_is_blocked_rows(v) && !plan_is_columns(v) &&
         !plan_is_fragcols(v);
}

/* atomic_add (spec 9.6): each element this thread owns added into its
 * tensor element with one red.global.add, under the store's masks, so the
 * adds of every CTA count; an f32 value's fours along a row with one
 * red.global.add.v4.f32 each where they can (red_v4: a quarter of the L2's
 * atomic operations), never staged. A scalar is added by one thread. */
static void emit_atomic_add(Emitter *e, const TirInst *in) {
  const TirInst *v = in->args[0];
  int rank = v->ty.rank;
  Scalar te = e->f->params[in->aux].elem;
  if (red_v4(e, v, te)) {
    e->isa81 = true;
    for (int k = 0; k < px_nregs(e, v); k += 4) {
      /* the four are neighbours in a contiguous row: one address, each
       * lane's own mask */
      const char *ok[4], *ad = NULL, *all = px_tmp(e, RC_PRED), *al = px_tmp(e, RC_B64);
      for (int j = 0; j < 4; j++) {
        const char *g[MAX_TENSOR_RANK];
        ok[j] = access_lane(e, in, v, v->plan->phys, rank, k + j, g);
        if (!j) ad = px_tensor_addr(e, in->aux, g);
      }
      px_out(e, "and.b64 %s, %s, 15;", al, ad);
      px_out(e, "setp.eq.and.u64 %s, %s, 0, %s;", all, al, ok[0]);
      for (int j = 1; j < 4; j++) px_out(e, "and.pred %s, %s, %s;", all, all, ok[j]);
      px_out(e, "@%s red.global.add.v4.f32 [%s], {%s, %s, %s, %s};", all, ad, px_operand(e, v, k),
             px_operand(e, v, k + 1), px_operand(e, v, k + 2), px_operand(e, v, k + 3));
      for (int j = 0; j < 4; j++) { /* the lanes of a four the vector did not take */
        const char *p = px_tmp(e, RC_PRED);
        px_out(e, "and.pred %s, %s, !%s;", p, ok[j], all);
        px_out(e, "@%s red.global.add.f32 [%s+%d], %s;", p, ad, 4 * j, px_operand(e, v, k + j));
      }
    }
    return;
  }
  for (int k = 0; k < px_nregs(e, v); k++) {
    const char *g[MAX_TENSOR_RANK];
    const char *ok = access_lane(e, in, rank ? v : NULL, rank ? v->plan->phys : NULL, rank, k, g);
    if (!rank) {
      const char *p = px_tmp(e, RC_PRED);
      px_out(e, "setp.eq.and.u32 %s, %%tid_, 0, %s;", p, ok);
      ok = p;
    }
    const char *r = px_operand(e, v, k), *ad = px_tensor_addr(e, in->aux, g);
    switch (te) {
    case S_F32: px_out(e, "@%s red.global.add.f32 [%s], %s;", ok, ad, r); break;
    case S_F64: px_out(e, "@%s red.global.add.f64 [%s], %s;", ok, ad, r); break;
    case S_I32: px_out(e, "@%s red.global.add.s32 [%s], %s;", ok, ad, r); break;
    case S_I64: px_out(e, "@%s red.global.add.u64 [%s], %s;", ok, ad, r); break;
    case S_F16:
      px_out(e, "{ .reg .b16 %%ha; cvt.rn.f16.f32 %%ha, %s; @%s red.global.add.noftz.f16 [%s], %%ha; }", r, ok, ad);
      break;
    default: diag_ice("atomic_add into %s elements (sema allows f32, f64, f16, i32, i64)", sema_scalar_name(te));
    }
  }
}

static void emit_pointer_store(Emitter *e, const TirInst *in) {
  const TirInst *v = in->args[0];
  int rank = v->ty.rank;
  bool general = e->p->general_strides; /* element by element: no path assumes a contiguous dim */
  if (in->aux2 == TSTORE_ADD) {
    emit_atomic_add(e, in);
    return;
  }
  if (!general && (emit_blocked_rows(e, in, v) || emit_blocked_rows3(e, in, v) || emit_columns(e, in, v))) return;
  if (!general && emit_long_rows(e, in, v)) return;
  int F = rank && !general ? emit_frag_rows_store(e, in, v) : -1;
  if (F < 0 && rank && !general) F = emit_frag_rows_store_ranked(e, in, v);
  if (F >= 0) {
    px_out(e, "bra.uni $Lfrstd%d;", F);
    px_label(e, "frst", F);
  }
  for (int k = 0; k < px_nregs(e, v); k++) {
    const char *g[MAX_TENSOR_RANK];
    const char *ok = access_lane(e, in, rank ? v : NULL, rank ? v->plan->phys : NULL, rank, k, g);
    if (!rank) {
      const char *p = px_tmp(e, RC_PRED);
      px_out(e, "setp.eq.and.u32 %s, %%tid_, 0, %s;", p, ok); /* one thread stores a scalar */
      ok = p;
    }
    const char *r = px_operand(e, v, k);
    px_st(e, "global", e->f->params[in->aux].elem, px_tensor_addr(e, in->aux, g), r, ok);
  }
  if (F >= 0) px_label(e, "frstd", F);
}
