/* ptx.c: the PTX emitter, first version.
 *
 * How values map to the machine:
 *   - scalars are uniform: every thread computes the same value in one
 *     register, so every branch and loop is uniform and bar.sync is safe
 *     anywhere;
 *   - a register tile is spread over the CTA's T threads in chunks of V
 *     neighbouring elements, cyclically (flat_index): thread t holds
 *     chunks t, t + T, ... in an unrolled array of registers (consecutive
 *     threads, consecutive chunks: global accesses coalesce, and a chunk
 *     in a row is one vector access); V is 1 unless every register tile
 *     of the kernel divides into whole rounds of chunks (chunk_width);
 *   - values the plan puts in shared memory (staging tiles) live in their
 *     planned buffers at their planned offset and pitch, with the plan's
 *     barriers;
 *   - an operation that needs another thread's elements (broadcast, row
 *     reduction, dot, transpose, sub-tile reads and writes, a point read
 *     of a register tile) goes through an exchange area after the planned
 *     buffers: bar.sync, each thread stores its elements, bar.sync, each
 *     thread reads what its results need. Correct for every shape; the
 *     layouts the planner computes (mma fragments, sliced rows) are what
 *     the next version uses to skip the exchange.
 *   - f16 and bf16 are computed in f32 registers and rounded back after
 *     every operation, i8 and u8 in 32-bit registers and wrapped, as the
 *     interpreter does; bool is 0 or 1 in a 32-bit register.
 *
 * Masks: a lane past a slice's logical extent (slack) or past the
 * tensor's end loads zero and stores nothing; reductions and dot
 * contractions run over logical extents only.
 *
 * @pipeline loops (the plan's rings) are emitted by emit_for with
 * ring_issue (the bulk copies), emit_ring_load (the consumer side) and,
 * with a producer warp, emit_producer: spec/LANGUAGE.md 15.9. */
#include "ptx.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef enum RegClass { RC_F32, RC_F64, RC_B32, RC_B64, RC_PRED, RC_COUNT } RegClass;
static const char *rc_decl[] = {".f32", ".f64", ".b32", ".b64", ".pred"};
static const char *rc_prefix[] = {"%f", "%d", "%r", "%rd", "%p"};

typedef struct Emitter {
  bool sm90; /* sm_90a: the async proxy (TMA, bulk copies) exists */
  Arena *a;
  Diags *d;
  const Plan *p;
  const TirFunc *f;
  FILE *body;
  int ntemp[RC_COUNT];
  int label;
  int T;             /* threads */
  int V;             /* elements per chunk of the flat distribution (1, 2 or 4) */
  int64_t exch_off;  /* exchange area: offset and size in bytes */
  int64_t exch_bytes;
  bool failed;
  char *decls;       /* per-value register arrays */
  size_t decls_len;
  FILE *declf;
  bool *barrier_before; /* by position: a planned barrier */
  bool sync_pending;    /* a planned barrier before a staged load, not yet emitted */
  /* --prefetch (emit_for): loads of the loop being emitted whose words the
   * previous iteration loaded, and those words */
  int ntma;             /* TMA loads emitted so far: load i waits on tmabar[i] with phase %tmaph<i> */
  const struct TirInst *pf_load[8];
  const char **pf_words[8];
  int npf;
  /* loads whose packed words are unpacked at their first use, so a
   * barrier in between holds only the packed bytes (see flush_unpack) */
  struct Pending {
    const struct TirInst *in;
    const char **w;
    int nw, rows;
  } pending[8];
  int npending;
  int *uses; /* by value id: how many instructions read it */
  /* the @pipeline loop being emitted: its stage registers (see emit_for) */
  const struct TirInst *ring_loop;
  const char *cst, *pst, *phase; /* consumer stage, producer stage, parity bits */
  bool waited;                   /* this iteration's stage is complete */
  bool replay;                   /* re-emitting scalars for a later iteration: no declarations, no barriers */
  /* tensor-core accumulator classes kept in the mma fragment layout (see
   * decide_frags): their values' registers are mma.m16n8 accumulators */
  const Layout *frag[8];
  int nfrag;
  /* row classes of those (rowmax, rowsum and what they feed: a softmax's
   * running max and sum) kept beside them: each thread holds its rows */
  const Layout *rowfrag[8];
  int nrowfrag;
  bool async_pending; /* cp.async copies issued and not yet waited for (emit_stage_async) */
  bool proxy_pending; /* threads stored into a swizzled tile: the next barrier fences the async proxy first */
  /* staged rings (@pipeline, plan.c staged_ring_reject): the loop being
   * emitted with them, and by buffer id the register that holds the base
   * of the stage being read (or, while issuing, filled); NULL: %smem_ */
  const struct TirInst *sring_loop;
  const char **sbase;
  bool ring_issue; /* emit_stage_async fills a ring stage: the loop commits and waits */
  bool *fused_add;    /* by value id: an x + dot whose dot started its accumulators at x */
} Emitter;

static struct Pending *fusable_convert(Emitter *e, const TirInst *in);
static bool packed_by_mma(const Emitter *e, const TirInst *cv);

static void out(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(Emitter *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("  ", e->body);
  vfprintf(e->body, fmt, ap);
  fputc('\n', e->body);
  va_end(ap);
}

/* A staged tile copied by cp.async is waited for at the next barrier, so
 * its latency overlaps whatever comes between; its readers always follow a
 * barrier. The wait also comes before an if or a loop, at the end of each
 * branch, after a while's condition and at a loop's back edge (emit_inst,
 * emit_for): a barrier inside a branch may not run, and a read at the top
 * of the next iteration follows a barrier textually earlier. */
static void async_wait(Emitter *e) {
  if (!e->async_pending) return;
  e->async_pending = false;
  out(e, "cp.async.wait_group 0;");
}

/* A barrier of the T threads that run the kernel's code: bar.sync 0, or
 * with a producer warp (which never takes part) the named barrier 1 of T. */
static void cta_sync_why(Emitter *e, const char *why) {
  async_wait(e);
  if (e->proxy_pending) { /* the threads' stores into a swizzled tile, seen by wgmma (async proxy) */
    e->proxy_pending = false;
    out(e, "fence.proxy.async.shared::cta;");
  }
  if (e->p->producer) out(e, "bar.sync 1, %d;%s", e->T, why);
  else out(e, "bar.sync 0;%s", why);
}

static void cta_sync(Emitter *e) { cta_sync_why(e, ""); }

static void unsupported(Emitter *e, const TirInst *in, const char *what) {
  if (!e->failed)
    diag_error(e->d, in->span, "the PTX backend cannot compile this yet: %s", what);
  e->failed = true;
}

static RegClass rc_of(Scalar s) {
  switch (s) {
  case S_F16:
  case S_BF16:
  case S_F32: return RC_F32;
  case S_F64: return RC_F64;
  case S_I64: return RC_B64;
  default: return RC_B32;
  }
}

static const char *tmp(Emitter *e, RegClass rc) {
  return arena_printf(e->a, "%st%d", rc_prefix[rc], e->ntemp[rc]++);
}

static int new_label(Emitter *e) { return e->label++; }

/* elements of a value this thread holds */
static int64_t phys_elems(const TirInst *in) {
  int64_t n = 1;
  for (int i = 0; i < in->ty.rank; i++) n *= in->plan->phys[i];
  return n;
}

/* ------------------------------------------------ the fragment layout
 *
 * A value whose class of tied values is a tensor-core dot's result (the
 * plan's mma16x8x16.acc layout) can stay in the registers the mma writes:
 * the [M, N] value (leading dims folded into M) is cut into tiles of 16
 * rows by NT columns (NT 16, or 8 when N is not a multiple of 16); warp w
 * owns the row tiles w, w + W, ... with all their column tiles, and holds
 * each tile as mma.m16n8 accumulators: lane (g = lane / 4, t = lane % 4)
 * has rows g and g + 8, columns 2t and 2t + 1 of each 8-column half.
 * Register k of such a value is element (frag base of the thread) + C(k),
 * C a constant: elem_index. Elementwise operations work register by
 * register as in the flat layout; everything that needs coordinates asks
 * elem_index; a row value broadcast over a fragment value costs a move
 * from the row value held beside it (is_rowfrag), or else one load per row
 * a thread holds (two per row tile). */

typedef struct FragGeom {
  int64_t M, N;
  int NT, ntn, tpm, rpt; /* tile width, column tiles, row tiles per warp, registers per tile */
} FragGeom;

static bool is_frag(const Emitter *e, const TirInst *x) {
  if (!e->nfrag || !x->plan || x->ty.rank < 2 || x->plan->res != RES_REG) return false;
  for (int i = 0; i < e->nfrag; i++)
    if (x->plan->layout == e->frag[i]) return true;
  return false;
}

/* A row value ([.., 1], the class of a reduction over a fragment value)
 * held beside its fragment value: register 2 mi + h of the thread is row
 * 16 (w + mi W) + g + 8 h, the rows whose elements it holds there; the four
 * lanes of a quad hold the same rows. */
static bool is_rowfrag(const Emitter *e, const TirInst *x) {
  if (!e->nrowfrag || !x->plan || x->ty.rank < 2 || x->plan->res != RES_REG) return false;
  for (int i = 0; i < e->nrowfrag; i++)
    if (x->plan->layout == e->rowfrag[i]) return true;
  return false;
}

static FragGeom frag_geom(const Emitter *e, const TirInst *x) {
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

static int nregs(Emitter *e, const TirInst *in) {
  if (in->ty.rank == 0) return 1;
  if (is_frag(e, in)) {
    FragGeom g = frag_geom(e, in);
    return g.tpm * g.ntn * g.rpt;
  }
  if (is_rowfrag(e, in)) return frag_geom(e, in).tpm * 2;
  int64_t round = (int64_t)e->T * e->V;
  return (int)((phys_elems(in) + round - 1) / round * e->V);
}

/* the register holding element k of value `in` (k = 0 for scalars) */
static const char *reg(Emitter *e, const TirInst *in, int k) {
  return arena_printf(e->a, "%sv%d_%d", rc_prefix[rc_of(in->ty.elem)], in->id, k);
}

static void declare_value(Emitter *e, const TirInst *in) {
  fprintf(e->declf, "  .reg %s %sv%d_<%d>;\n", rc_decl[rc_of(in->ty.elem)], rc_prefix[rc_of(in->ty.elem)], in->id,
          nregs(e, in));
}

static int log2i(int64_t v) {
  int l = 0;
  while ((1ll << l) < v) l++;
  return l;
}

/* PTX type suffixes for arithmetic in a register class */
static const char *arith_type(Scalar s) {
  switch (s) {
  case S_F16:
  case S_BF16:
  case S_F32: return "f32";
  case S_F64: return "f64";
  case S_I64: return "s64";
  case S_U8: return "u32";
  case S_BOOL: return "u32";
  default: return "s32";
  }
}

/* Rounds a register to what its element type holds, after an operation. */
static void round_reg(Emitter *e, Scalar s, const char *r) {
  if (s == S_F16) {
    out(e, "{ .reg .b16 %%h; cvt.rn.f16.f32 %%h, %s; cvt.f32.f16 %s, %%h; }", r, r);
  } else if (s == S_BF16) {
    /* cvt.rn.bf16x2.f32 (sm_80 and later, both targets) rounds to nearest
     * even and makes NaN a quiet NaN; the upper half is the bf16, whose
     * f32 is that half with zeros below: two instructions, where rounding
     * in integer arithmetic took seven */
    const char *b = tmp(e, RC_B32);
    out(e, "cvt.rn.bf16x2.f32 %s, %s, %s;", b, r, r);
    out(e, "and.b32 %s, %s, 0xffff0000;", b, b);
    out(e, "mov.b32 %s, %s;", r, b);
  } else if (s == S_I8) {
    out(e, "cvt.s32.s8 %s, %s;", r, r);
  } else if (s == S_U8) {
    out(e, "and.b32 %s, %s, 255;", r, r);
  }
}

/* ------------------------------------------------------------ addresses */

static const char *pname(int p, const char *what) {
  static char buf[8][64];
  static int slot;
  char *b = buf[slot++ & 7];
  snprintf(b, 64, "%s%d", what, p);
  return b;
}

/* The flat physical index of this thread's element k. Chunks of V
 * consecutive elements go round the threads: register k of thread t holds
 * element ((k / V) * T + t) * V + k % V, so a thread's V registers of one
 * chunk are neighbours in a row (one vector access) and consecutive
 * threads hold consecutive chunks (coalesced). %tidv_ is t * V. */
static const char *flat_index(Emitter *e, int k) {
  const char *r = tmp(e, RC_B32);
  out(e, "add.u32 %s, %%tidv_, %d;", r, (k / e->V) * e->T * e->V + k % e->V);
  return r;
}

/* The flat physical index of register k of value x, in x's layout. */
static const char *elem_index(Emitter *e, const TirInst *x, int k) {
  if (is_rowfrag(e, x)) {
    const char *r = tmp(e, RC_B32);
    out(e, "add.u32 %s, %%fwg_, %lld;", r, (long long)(k / 2 * (e->T / 32) * 16 + k % 2 * 8));
    return r;
  }
  if (!is_frag(e, x)) return flat_index(e, k);
  FragGeom g = frag_geom(e, x);
  int W = e->T / 32, i = k / g.rpt, mi = i / g.ntn, ni = i % g.ntn, j = k / 4 % (g.NT / 8), q = k % 4;
  int64_t c = (int64_t)mi * W * 16 * g.N + 8 * (q >> 1) * g.N + ni * g.NT + j * 8 + (q & 1);
  const char *r = tmp(e, RC_B32);
  out(e, "mad.lo.u32 %s, %%fwg_, %lld, %%ft2_;", r, (long long)g.N); /* (16 w + g) N + 2 t */
  out(e, "add.u32 %s, %s, %lld;", r, r, (long long)c);
  return r;
}

/* Coordinate d of register k of a fragment value, from its row and column
 * separately: the column is 2t plus a constant, the folded row 16 w + g
 * plus a constant, so registers of one row share the row's coordinates
 * (ptxas keeps one copy) instead of each decoding its flat index. */
static const char *frag_coord(Emitter *e, const TirInst *x, int k, int d) {
  FragGeom g = frag_geom(e, x);
  int r = x->ty.rank, W = e->T / 32, i = k / g.rpt, mi = i / g.ntn, ni = i % g.ntn, j = k / 4 % (g.NT / 8), q = k % 4;
  const char *c = tmp(e, RC_B32);
  if (d == r - 1) {
    out(e, "add.u32 %s, %%ft2_, %d;", c, ni * g.NT + j * 8 + (q & 1));
    return c;
  }
  int shift = 0;
  for (int i2 = d + 1; i2 < r - 1; i2++) shift += log2i(x->plan->phys[i2]);
  out(e, "add.u32 %s, %%fwg_, %d;", c, mi * W * 16 + 8 * (q >> 1));
  if (shift) out(e, "shr.u32 %s, %s, %d;", c, c, shift);
  if (d) out(e, "and.b32 %s, %s, %lld;", c, c, (long long)(x->plan->phys[d] - 1));
  return c;
}

/* coordinate d of a flat index, for a value of physical shape phys */
static const char *coord(Emitter *e, const char *flat, const int64_t *phys, int rank, int d) {
  int shift = 0;
  for (int i = d + 1; i < rank; i++) shift += log2i(phys[i]);
  const char *r = tmp(e, RC_B32);
  out(e, "shr.u32 %s, %s, %d;", r, flat, shift);
  out(e, "and.b32 %s, %s, %lld;", r, r, (long long)(phys[d] - 1));
  return r;
}

static int elem_bytes_mem(Scalar s) { return sema_scalar_bytes(s); }

/* register bytes in the exchange area */
static int exch_bytes(Scalar s) { return rc_of(s) == RC_F64 || rc_of(s) == RC_B64 ? 8 : 4; }

static const char *zero(RegClass rc) {
  return rc == RC_F32 ? "0f00000000" : rc == RC_F64 ? "0d0000000000000000" : "0";
}

static const char *mov_type(RegClass rc) { return rc == RC_F32 ? "f32" : rc == RC_F64 ? "f64" : rc == RC_B64 ? "b64" : "b32"; }

/* Loads element from global memory at address `addr` into register r. */
static void ld_global(Emitter *e, Scalar s, const char *r, const char *addr, const char *pred) {
  const char *g = pred ? arena_printf(e->a, "@%s ", pred) : "";
  switch (s) {
  case S_F32: out(e, "%sld.global.f32 %s, [%s];", g, r, addr); break;
  case S_F64: out(e, "%sld.global.f64 %s, [%s];", g, r, addr); break;
  case S_I64: out(e, "%sld.global.s64 %s, [%s];", g, r, addr); break;
  case S_I32: out(e, "%sld.global.s32 %s, [%s];", g, r, addr); break;
  case S_I8: out(e, "%sld.global.s8 %s, [%s];", g, r, addr); break;
  case S_U8:
  case S_BOOL: out(e, "%sld.global.u8 %s, [%s];", g, r, addr); break;
  case S_F16: {
    const char *t = tmp(e, RC_B32);
    out(e, "mov.b32 %s, 0;", t);
    out(e, "%sld.global.u16 %s, [%s];", g, t, addr);
    out(e, "{ .reg .b16 %%hl; cvt.u16.u32 %%hl, %s; cvt.f32.f16 %s, %%hl; }", t, r);
    break;
  }
  case S_BF16: {
    const char *t = tmp(e, RC_B32);
    out(e, "mov.b32 %s, 0;", t);
    out(e, "%sld.global.u16 %s, [%s];", g, t, addr);
    out(e, "shl.b32 %s, %s, 16;", t, t);
    out(e, "mov.b32 %s, %s;", r, t);
    break;
  }
  default: break;
  }
}

static void st_mem(Emitter *e, const char *space, Scalar s, const char *addr, const char *r, const char *pred) {
  const char *g = pred ? arena_printf(e->a, "@%s ", pred) : "";
  switch (s) {
  case S_F32: out(e, "%sst.%s.f32 [%s], %s;", g, space, addr, r); break;
  case S_F64: out(e, "%sst.%s.f64 [%s], %s;", g, space, addr, r); break;
  case S_I64: out(e, "%sst.%s.s64 [%s], %s;", g, space, addr, r); break;
  case S_I32: out(e, "%sst.%s.s32 [%s], %s;", g, space, addr, r); break;
  case S_I8:
  case S_U8:
  case S_BOOL: out(e, "%sst.%s.u8 [%s], %s;", g, space, addr, r); break;
  case S_F16:
  case S_BF16: {
    const char *t = tmp(e, RC_B32);
    if (s == S_F16) out(e, "{ .reg .b16 %%hs; cvt.rn.f16.f32 %%hs, %s; cvt.u32.u16 %s, %%hs; }", r, t);
    else {
      out(e, "mov.b32 %s, %s;", t, r);
      out(e, "shr.u32 %s, %s, 16;", t, t); /* already rounded to bf16 */
    }
    out(e, "%sst.%s.u16 [%s], %s;", g, space, addr, t);
    break;
  }
  default: break;
  }
}

static void ld_shared(Emitter *e, Scalar s, const char *r, const char *addr) {
  switch (s) {
  case S_F32: out(e, "ld.shared.f32 %s, [%s];", r, addr); break;
  case S_F64: out(e, "ld.shared.f64 %s, [%s];", r, addr); break;
  case S_I64: out(e, "ld.shared.s64 %s, [%s];", r, addr); break;
  case S_I32: out(e, "ld.shared.s32 %s, [%s];", r, addr); break;
  case S_I8: out(e, "ld.shared.s8 %s, [%s];", r, addr); break;
  case S_U8:
  case S_BOOL: out(e, "ld.shared.u8 %s, [%s];", r, addr); break;
  case S_F16: {
    const char *t = tmp(e, RC_B32);
    out(e, "ld.shared.u16 %s, [%s];", t, addr);
    out(e, "{ .reg .b16 %%hl; cvt.u16.u32 %%hl, %s; cvt.f32.f16 %s, %%hl; }", t, r);
    break;
  }
  case S_BF16: {
    const char *t = tmp(e, RC_B32);
    out(e, "ld.shared.u16 %s, [%s];", t, addr);
    out(e, "shl.b32 %s, %s, 16;", t, t);
    out(e, "mov.b32 %s, %s;", r, t);
    break;
  }
  default: break;
  }
}

/* The register a buffer's addresses start from: %smem_, or for a staged
 * ring the base of its current stage (emit_for). */
static const char *smem_of(const Emitter *e, const PlanBuf *b) {
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
static const char *swz_rowx(Emitter *e, int S, const char *row) {
  const char *x = tmp(e, RC_B32);
  out(e, "mul.lo.u32 %s, %s, %d;", x, row, S);
  out(e, "bfe.u32 %s, %s, 7, %d;", x, x, log2i(S / 16));
  return x;
}

/* shared address of physical coordinates c in a planned buffer */
static const char *buf_addr(Emitter *e, const PlanBuf *b, const char *const *c) {
  const char *row = tmp(e, RC_B32);
  out(e, "mov.u32 %s, 0;", row);
  for (int d = 0; d + 1 < b->rank; d++) out(e, "mad.lo.u32 %s, %s, %lld, %s;", row, row, (long long)b->dims[d], c[d]);
  if (b->swizzle) {
    int S = b->swizzle;
    const char *cb = tmp(e, RC_B32), *pan = tmp(e, RC_B32), *o = tmp(e, RC_B32), *x = tmp(e, RC_B32);
    out(e, "mul.lo.u32 %s, %s, %d;", cb, c[b->rank - 1], sema_scalar_bytes(b->elem));
    out(e, "shr.u32 %s, %s, %d;", pan, cb, log2i(S));
    out(e, "and.b32 %s, %s, %d;", cb, cb, S - 1);
    out(e, "mad.lo.u32 %s, %s, %d, %s;", o, row, S, cb);
    out(e, "bfe.u32 %s, %s, 7, %d;", x, o, log2i(S / 16)); /* o's row bits: w < S carries nothing into bit 7 */
    out(e, "shl.b32 %s, %s, 4;", x, x);
    out(e, "xor.b32 %s, %s, %s;", o, o, x);
    out(e, "mad.lo.u32 %s, %s, %lld, %s;", o, pan, (long long)(plan_buf_rows(b) * S), o);
    out(e, "add.u32 %s, %s, %s;", o, o, smem_of(e, b));
    if (b->offset) out(e, "add.u32 %s, %s, %lld;", o, o, (long long)b->offset);
    return o;
  }
  const char *a = tmp(e, RC_B32);
  out(e, "mad.lo.u32 %s, %s, %lld, %s;", a, row, (long long)b->pitch, c[b->rank - 1]);
  out(e, "mad.lo.u32 %s, %s, %d, %s;", a, a, sema_scalar_bytes(b->elem), smem_of(e, b));
  if (b->offset) out(e, "add.u32 %s, %s, %lld;", a, a, (long long)b->offset);
  return a;
}

/* ------------------------------------------------------- register views */

/* Register k of an operand: its own register, or a load from its shared
 * buffer when the plan keeps it there. */
static const char *operand(Emitter *e, const TirInst *x, int k) {
  if (x->ty.rank == 0 || x->plan->res != RES_SHARED) return reg(e, x, k);
  const PlanBuf *b = x->plan->buf;
  const char *r = tmp(e, rc_of(x->ty.elem));
  const char *fl = flat_index(e, k);
  const char *c[MAX_TILE_RANK];
  for (int d = 0; d < x->ty.rank; d++) c[d] = coord(e, fl, x->plan->phys, x->ty.rank, d);
  /* the thread's last element may lie past the tile: read element 0 instead */
  const char *in_range = tmp(e, RC_PRED);
  out(e, "setp.lt.u32 %s, %s, %lld;", in_range, fl, (long long)phys_elems(x));
  for (int d = 0; d < x->ty.rank; d++) out(e, "selp.b32 %s, %s, 0, %s;", c[d], c[d], in_range);
  ld_shared(e, x->ty.elem, r, buf_addr(e, b, c));
  return r;
}

/* ------------------------------------------------------------ exchange */

/* Stores value x (all its elements, from whatever holds them) into the
 * exchange area at byte offset `at`, flat physical order. */
static void exch_store(Emitter *e, const TirInst *x, int64_t at) {
  int n = nregs(e, x);
  int64_t elems = x->ty.rank ? phys_elems(x) : 1;
  int eb = exch_bytes(x->ty.elem);
  for (int k = 0; k < n; k++) {
    const char *r = operand(e, x, k);
    const char *fl = x->ty.rank ? elem_index(e, x, k) : "0";
    const char *pr = tmp(e, RC_PRED);
    if (x->ty.rank) out(e, "setp.lt.u32 %s, %s, %lld;", pr, fl, (long long)elems);
    else out(e, "setp.eq.u32 %s, %%tid_, 0;", pr);
    const char *ad = tmp(e, RC_B32);
    if (x->ty.rank) out(e, "mad.lo.u32 %s, %s, %d, %%smem_;", ad, fl, eb);
    else out(e, "mov.u32 %s, %%smem_;", ad);
    out(e, "add.u32 %s, %s, %lld;", ad, ad, (long long)(e->exch_off + at));
    out(e, "@%s st.shared.%s [%s], %s;", pr, eb == 8 ? "b64" : "b32", ad, r);
  }
}

/* Reads element at flat physical index `fl` (a register) of a value stored
 * in the exchange area at `at`. */
static void exch_load(Emitter *e, const TirInst *x, int64_t at, const char *fl, const char *r) {
  int eb = exch_bytes(x->ty.elem);
  const char *ad = tmp(e, RC_B32);
  out(e, "mad.lo.u32 %s, %s, %d, %%smem_;", ad, fl, eb);
  out(e, "add.u32 %s, %s, %lld;", ad, ad, (long long)(e->exch_off + at));
  out(e, "ld.shared.%s %s, [%s];", eb == 8 ? "b64" : "b32", r, ad);
}

static void exch_need(Emitter *e, int64_t bytes) {
  if (bytes > e->exch_bytes) e->exch_bytes = bytes;
}

static int64_t value_exch_bytes(const TirInst *x) {
  return (x->ty.rank ? (int64_t)((phys_elems(x) + 0)) : 1) * exch_bytes(x->ty.elem);
}

/* the flat physical index of coordinates c in a value of shape phys */
static const char *flat_of(Emitter *e, const char *const *c, const int64_t *phys, int rank) {
  const char *r = tmp(e, RC_B32);
  out(e, "mov.u32 %s, 0;", r);
  for (int d = 0; d < rank; d++) {
    out(e, "shl.b32 %s, %s, %d;", r, r, log2i(phys[d]));
    out(e, "or.b32 %s, %s, %s;", r, r, c[d]);
  }
  return r;
}

/* ------------------------------------------------------------ operations */

static void emit_block(Emitter *e, const TirBlock *b);

static const char *ptx_binop(Emitter *e, const TirInst *in, Scalar s) {
  bool fl = rc_of(s) == RC_F32 || rc_of(s) == RC_F64;
  const char *t = arith_type(s);
  switch (in->aux) {
  case '+': return arena_printf(e->a, "add.%s", fl ? (rc_of(s) == RC_F64 ? "rn.f64" : "rn.f32") : t);
  case '-': return arena_printf(e->a, "sub.%s", fl ? (rc_of(s) == RC_F64 ? "rn.f64" : "rn.f32") : t);
  case '*': return arena_printf(e->a, fl ? "mul.rn.%s" : "mul.lo.%s", t);
  case '/': return arena_printf(e->a, fl ? "div.rn.%s" : "div.%s", t);
  case '%': return arena_printf(e->a, "rem.%s", t);
  case '&': return rc_of(s) == RC_B64 ? "and.b64" : "and.b32";
  case '|': return rc_of(s) == RC_B64 ? "or.b64" : "or.b32";
  case '^': return rc_of(s) == RC_B64 ? "xor.b64" : "xor.b32";
  case TOP_MAX: return arena_printf(e->a, "max.%s", t);
  case TOP_MIN: return arena_printf(e->a, "min.%s", t);
  }
  return NULL;
}

static const char *cmp_name(int op) {
  switch (op) {
  case '<': return "lt";
  case '>': return "gt";
  }
  const char *s = ast_op_name(op);
  if (!s) return NULL;
  if (!strcmp(s, "<=")) return "le";
  if (!strcmp(s, ">=")) return "ge";
  if (!strcmp(s, "==")) return "eq";
  if (!strcmp(s, "!=")) return "ne";
  return NULL;
}

/* An integer divisor known at compile time goes in as an immediate: ptxas
 * turns division by an immediate into a multiply-high or shifts, but
 * expands division by a register (even one just moved from a constant) into
 * the general reciprocal sequence, about twenty instructions. */
static const char *divisor(Emitter *e, const TirInst *in, const TirInst *b, int k) {
  bool divides = in->aux == '/' || in->aux == '%' || in->aux == TOP_CDIV;
  RegClass rc = rc_of(b->ty.elem);
  if (divides && b->op == TIR_CONST && b->ty.rank == 0 && (rc == RC_B32 || rc == RC_B64) && b->ival != 0)
    return arena_printf(e->a, "%lld", (long long)b->ival);
  return operand(e, b, k);
}

/* Integer a / 2^s or a % 2^s, truncating toward zero as C does, in shifts:
 * ptxas expands div.s32 by an immediate power of two into the general
 * reciprocal sequence (about twenty instructions; seen in the q8 split
 * kernel's loop for k / 32). Negative a is biased by 2^s - 1 first. False
 * for anything else (not an integer, not a positive power of two). */
static bool emit_divrem_pow2(Emitter *e, int op, Scalar os, const TirInst *b, const char *d, const char *a) {
  RegClass rc = rc_of(os);
  if ((op != '/' && op != '%') || b->op != TIR_CONST || b->ty.rank != 0 || (rc != RC_B32 && rc != RC_B64) ||
      b->ival <= 0 || (b->ival & (b->ival - 1)))
    return false;
  int sh = 0;
  while ((1LL << sh) < b->ival) sh++;
  const char *w = rc == RC_B64 ? "64" : "32";
  int bits = rc == RC_B64 ? 64 : 32;
  bool sgn = arith_type(os)[0] == 's';
  const char *t = a;
  if (sgn && sh) { /* t = a + (a < 0 ? 2^s - 1 : 0) */
    const char *x = tmp(e, rc);
    out(e, "shr.s%s %s, %s, %d;", w, x, a, bits - 1);
    out(e, "shr.u%s %s, %s, %d;", w, x, x, bits - sh);
    out(e, "add.s%s %s, %s, %s;", w, x, a, x);
    t = x;
  }
  if (op == '/') {
    out(e, "shr.%s%s %s, %s, %d;", sgn ? "s" : "u", w, d, t, sh);
  } else {
    const char *m = tmp(e, rc);
    out(e, "and.b%s %s, %s, %lld;", w, m, t, (long long)~(b->ival - 1));
    out(e, "sub.%s%s %s, %s, %s;", sgn ? "s" : "u", w, d, a, m);
  }
  return true;
}

/* x * r, x a fragment value and r a row value broadcast over it
 * (attention's acc * corr): where r is exactly 1 in every row the warp
 * holds, the product is x itself (x * 1 = x for every float), so a
 * warp-uniform branch skips the multiplies. An online softmax that moves
 * its running max only when it grows by a margin (gqa_attention.ph)
 * rescales in a few key blocks only. */
static bool emit_scale_rows(Emitter *e, const TirInst *in) {
  if (in->aux != '*' || in->ty.elem != S_F32 || e->replay || !is_frag(e, in)) return false;
  int bi = -1;
  for (int i = 0; i < 2; i++)
    if (in->args[i]->op == TIR_BROADCAST && is_rowfrag(e, in->args[i]->args[0]) && is_frag(e, in->args[1 - i])) bi = i;
  if (bi < 0) return false;
  const TirInst *r = in->args[bi]->args[0], *x = in->args[1 - bi];
  const char *one = tmp(e, RC_PRED), *all = tmp(e, RC_PRED);
  for (int j = 0; j < nregs(e, r); j++) {
    if (j) out(e, "setp.eq.and.f32 %s, %s, 0f3F800000, %s;", one, reg(e, r, j), one);
    else out(e, "setp.eq.f32 %s, %s, 0f3F800000;", one, reg(e, r, j));
  }
  out(e, "vote.sync.all.pred %s, %s, 0xffffffff;", all, one);
  int L = new_label(e);
  out(e, "@%s bra $Lunit%d;", all, L);
  for (int k = 0; k < nregs(e, in); k++)
    out(e, "mul.rn.f32 %s, %s, %s;", reg(e, in, k), reg(e, x, k), reg(e, in->args[bi], k));
  out(e, "bra.uni $Lunitd%d;", L);
  fprintf(e->body, "$Lunit%d:\n", L);
  for (int k = 0; k < nregs(e, in); k++) out(e, "mov.f32 %s, %s;", reg(e, in, k), reg(e, x, k));
  fprintf(e->body, "$Lunitd%d:\n", L);
  return true;
}

static void emit_binary(Emitter *e, const TirInst *in) {
  Scalar os = in->args[0]->ty.elem;
  if (emit_scale_rows(e, in)) return;
  if (e->fused_add && e->fused_add[in->id]) { /* x + dot: the dot's accumulators started at x */
    const TirInst *dot = in->args[0]->op == TIR_DOT ? in->args[0] : in->args[1];
    for (int k = 0; k < nregs(e, in); k++)
      out(e, "mov.%s %s, %s;", mov_type(rc_of(in->ty.elem)), reg(e, in, k), reg(e, dot, k));
    return;
  }
  const char *opn = ast_op_name(in->aux);
  for (int k = 0; k < nregs(e, in); k++) {
    const char *a = operand(e, in->args[0], k), *b = divisor(e, in, in->args[1], k), *d = reg(e, in, k);
    const char *cmp = cmp_name(in->aux);
    if (cmp) {
      const char *p = tmp(e, RC_PRED);
      const char *ct = os == S_BOOL ? "u32" : arith_type(os);
      out(e, "setp.%s.%s %s, %s, %s;", cmp, ct, p, a, b);
      out(e, "selp.u32 %s, 1, 0, %s;", d, p);
      continue;
    }
    if (opn && (!strcmp(opn, "&&") || !strcmp(opn, "||"))) {
      out(e, "%s.b32 %s, %s, %s;", opn[0] == '&' ? "and" : "or", d, a, b);
      continue;
    }
    if (opn && (!strcmp(opn, "<<") || !strcmp(opn, ">>"))) {
      const char *sh = tmp(e, RC_B32);
      if (rc_of(os) == RC_B64) out(e, "cvt.u32.u64 %s, %s;", sh, b);
      else out(e, "mov.b32 %s, %s;", sh, b);
      out(e, "min.u32 %s, %s, %d;", sh, sh, rc_of(os) == RC_B64 ? 64 : 32);
      const char *w = rc_of(os) == RC_B64 ? "64" : "32";
      if (opn[0] == '<') out(e, "shl.b%s %s, %s, %s;", w, d, a, sh);
      else out(e, "shr.%s %s, %s, %s;", os == S_U8 ? (w[0] == '6' ? "u64" : "u32") : (w[0] == '6' ? "s64" : "s32"), d, a, sh);
      round_reg(e, in->ty.elem, d);
      continue;
    }
    if (in->aux == TOP_CDIV) {
      /* (a + b - 1) / b for a >= 0, a / b otherwise (as the interpreter) */
      const char *t = arith_type(os), *q = tmp(e, rc_of(os)), *p = tmp(e, RC_PRED);
      out(e, "add.%s %s, %s, %s;", t, q, a, b);
      out(e, "sub.%s %s, %s, 1;", t, q, q);
      out(e, "setp.lt.%s %s, %s, 0;", t, p, a);
      out(e, "selp.%s %s, %s, %s, %s;", rc_of(os) == RC_B64 ? "b64" : "b32", q, a, q, p);
      out(e, "div.%s %s, %s, %s;", t, d, q, b);
      continue;
    }
    if (emit_divrem_pow2(e, in->aux, os, in->args[1], d, a)) {
      round_reg(e, in->ty.elem, d);
      continue;
    }
    const char *op = ptx_binop(e, in, os);
    if (!op) return unsupported(e, in, "this operator");
    out(e, "%s %s, %s, %s;", op, d, a, b);
    round_reg(e, in->ty.elem, d);
  }
}

static void emit_math(Emitter *e, const TirInst *in) {
  if (rc_of(in->ty.elem) == RC_F64) return unsupported(e, in, "exp, exp2, log, sqrt and tanh on f64");
  for (int k = 0; k < nregs(e, in); k++) {
    const char *a = operand(e, in->args[0], k), *d = reg(e, in, k);
    switch (in->aux) {
    case TMATH_EXP:
      /* .ftz: results under 2^-126 are 0, which spares the subnormal
       * rescaling ex2.approx.f32 otherwise wraps around the MUFU (a compare,
       * two selects and a multiply) */
      out(e, "mul.f32 %s, %s, 0f3FB8AA3B;", d, a); /* log2(e) */
      out(e, "ex2.approx.ftz.f32 %s, %s;", d, d);
      break;
    case TMATH_EXP2: /* the softmax's own base: no multiply (see exp) */
      out(e, "ex2.approx.ftz.f32 %s, %s;", d, a);
      break;
    case TMATH_LOG:
      out(e, "lg2.approx.f32 %s, %s;", d, a);
      out(e, "mul.f32 %s, %s, 0f3F317218;", d, d); /* ln(2) */
      break;
    case TMATH_SQRT: out(e, "sqrt.rn.f32 %s, %s;", d, a); break;
    case TMATH_TANH: {
      /* 1 - 2 / (exp(2x) + 1), saturating for large |x| */
      const char *t = tmp(e, RC_F32);
      out(e, "mul.f32 %s, %s, 0f4038AA3B;", t, a); /* 2 log2(e) */
      out(e, "ex2.approx.f32 %s, %s;", t, t);
      out(e, "add.f32 %s, %s, 0f3F800000;", t, t);
      out(e, "rcp.rn.f32 %s, %s;", t, t);
      out(e, "fma.rn.f32 %s, %s, 0fC0000000, 0f3F800000;", d, t);
      break;
    }
    }
    round_reg(e, in->ty.elem, d);
  }
}

static void emit_convert(Emitter *e, const TirInst *in) {
  Scalar from = in->args[0]->ty.elem, to = in->ty.elem;
  RegClass rf = rc_of(from), rt = rc_of(to);
  struct Pending *pd = fusable_convert(e, in);
  if (pd) {
    /* bytes of packed words to floats, two instructions a byte: prmt puts
     * the byte (plus 128 when signed: the xor, once a word) under the
     * exponent of 2^23, and a subtraction takes that float off */
    int V = e->V;
    for (int j = 0; j < pd->rows; j++) {
      const char *w = pd->w[j * pd->nw];
      if (from == S_I8) {
        const char *x = tmp(e, RC_B32);
        out(e, "xor.b32 %s, %s, 0x80808080;", x, w);
        w = x;
      }
      for (int v = 0; v < V; v++) {
        const char *t = tmp(e, RC_B32), *d = reg(e, in, j * V + v);
        out(e, "prmt.b32 %s, %s, 0x4B000000, 0x%x;", t, w, 0x7540 | v);
        out(e, "mov.b32 %s, %s;", d, t);
        out(e, "sub.f32 %s, %s, %s;", d, d, from == S_I8 ? "0f4B000080" : "0f4B000000");
        round_reg(e, to, d);
      }
    }
    *pd = e->pending[--e->npending];
    return;
  }
  bool packed = packed_by_mma(e, in);
  for (int k = 0; k < nregs(e, in); k++) {
    const char *a = operand(e, in->args[0], k), *d = reg(e, in, k);
    if (rf == rt && rf != RC_F32) {
      out(e, "mov.%s %s, %s;", mov_type(rt), d, a);
    } else if (rf == RC_F32 && rt == RC_F32) {
      out(e, "mov.f32 %s, %s;", d, a);
    } else if ((rf == RC_F32 || rf == RC_F64) && (rt == RC_F32 || rt == RC_F64)) {
      out(e, "cvt%s.%s.%s %s, %s;", rt == RC_F32 ? ".rn" : "", rt == RC_F32 ? "f32" : "f64", rf == RC_F32 ? "f32" : "f64", d, a);
    } else if (rt == RC_F32 && (from == S_I8 || from == S_U8 || from == S_BOOL)) {
      /* exact without the conversion unit (a quarter of the FMA rate): the
       * byte plus 128 (signed) as the mantissa of 2^23, minus that float */
      const char *b = tmp(e, RC_B32);
      if (from == S_I8) out(e, "add.s32 %s, %s, 0x4B000080;", b, a);
      else out(e, "or.b32 %s, %s, 0x4B000000;", b, a);
      out(e, "mov.b32 %s, %s;", d, b);
      out(e, "sub.f32 %s, %s, %s;", d, d, from == S_I8 ? "0f4B000080" : "0f4B000000");
    } else if (rt == RC_F32 || rt == RC_F64) {
      out(e, "cvt.rn.%s.%s %s, %s;", rt == RC_F32 ? "f32" : "f64", arith_type(from), d, a);
    } else if (rf == RC_F32 || rf == RC_F64) {
      /* toward zero, saturating, NaN -> 0 (cvt.rzi.sat) */
      const char *it = to == S_I64 ? "s64" : to == S_U8 ? "u32" : "s32";
      out(e, "cvt.rzi.%s.%s %s, %s;", it, rf == RC_F32 ? "f32" : "f64", d, a); /* clamps; NaN gives 0 */
      if (to == S_I8) out(e, "max.s32 %s, %s, -128; min.s32 %s, %s, 127;", d, d, d, d);
      if (to == S_U8) out(e, "min.u32 %s, %s, 255;", d, d);
    } else {
      out(e, "cvt.%s.%s %s, %s;", rt == RC_B64 ? "s64" : "s32", rf == RC_B64 ? "s64" : (from == S_U8 ? "u32" : "s32"), d, a);
    }
    if (!packed) round_reg(e, to, d);
  }
}

/* global address of element g[] of tensor p, in a 64-bit register */
static const char *tensor_addr(Emitter *e, int p, const char *const *g) {
  const TirParam *tp = &e->f->params[p];
  const char *lin = tmp(e, RC_B64);
  out(e, "mov.u64 %s, 0;", lin);
  for (int d = 0; d < tp->rank; d++) {
    const char *ge = tmp(e, RC_B64);
    out(e, "cvt.s64.s32 %s, %s;", ge, g[d]);
    out(e, "mad.lo.s64 %s, %s, %%ext%d_%d, %s;", lin, lin, p, d, ge);
  }
  const char *ad = tmp(e, RC_B64);
  out(e, "mad.lo.s64 %s, %s, %d, %%base%d;", ad, lin, elem_bytes_mem(tp->elem), p);
  return ad;
}

/* For element k of a load/store: the global coordinates and a predicate
 * that is false for slack lanes and lanes past the tensor's end. */
static const char *access_lane(Emitter *e, const TirInst *in, const TirInst *val, const int64_t *phys, int rank, int k,
                               const char **g) {
  const char *fl = val ? elem_index(e, val, k) : flat_index(e, k);
  const char *ok = tmp(e, RC_PRED);
  int64_t elems = 1;
  for (int d = 0; d < rank; d++) elems *= phys[d];
  /* a scalar is uniform: every thread reads it (one stores it, below) */
  if (rank) out(e, "setp.lt.u32 %s, %s, %lld;", ok, fl, (long long)elems);
  else out(e, "setp.eq.u32 %s, 0, 0;", ok);
  int j = 0;
  for (int i = 0; i < in->nsubs; i++) {
    const char *start = reg(e, in->subs[i].start, 0);
    if (in->subs[i].point) {
      g[i] = start;
    } else {
      const char *c = coord(e, fl, phys, rank, j++);
#ifndef PHOBOS_BREAK_SLACK_MASK
      const char *p = tmp(e, RC_PRED);
      out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", p, c, (long long)in->subs[i].len, ok); /* slack */
      out(e, "mov.pred %s, %s;", ok, p);
#endif
      const char *gi = tmp(e, RC_B32);
      out(e, "add.s32 %s, %s, %s;", gi, start, c);
      g[i] = gi;
    }
    const char *p2 = tmp(e, RC_PRED);
    out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", p2, g[i], in->aux, i, ok); /* unsigned: also >= 0 */
    out(e, "mov.pred %s, %s;", ok, p2);
  }
  return ok;
}

/* Unpacks the b32 words w[] of a vector load into the V registers from k. */
static void unpack_words(Emitter *e, const TirInst *in, int k, const char *const *w) {
  Scalar s = in->ty.elem;
  int eb = elem_bytes_mem(s);
  for (int v = 0; v < e->V; v++) {
    const char *r = reg(e, in, k + v), *word = w[v * eb / 4];
    int at = v * eb % 4 * 8; /* bit offset in its word */
    if (eb == 1) out(e, "bfe.%s %s, %s, %d, 8;", s == S_I8 ? "s32" : "u32", r, word, at);
    else if (s == S_F16) out(e, "{ .reg .b16 %%hl; .reg .b32 %%hw; shr.u32 %%hw, %s, %d; cvt.u16.u32 %%hl, %%hw; cvt.f32.f16 %s, %%hl; }", word, at, r);
    else if (at) out(e, "and.b32 %s, %s, 0xFFFF0000;", r, word); /* bf16: the high half is an f32 already */
    else out(e, "shl.b32 %s, %s, 16;", r, word);
  }
}

/* Unpacks pending loads: all of them (x NULL), or the one of value x. */
static void flush_unpack(Emitter *e, const TirInst *x) {
  for (int i = 0; i < e->npending; i++) {
    struct Pending *pd = &e->pending[i];
    if (x && pd->in != x) continue;
    const TirInst *in = pd->in;
    int V = e->V, eb = elem_bytes_mem(in->ty.elem);
    for (int j = 0; j < pd->rows; j++) {
      const char **wj = pd->w + j * pd->nw;
      if (eb == 4) {
        for (int v = 0; v < V; v++) out(e, "mov.b32 %s, %s;", reg(e, in, j * V + v), wj[v]);
        continue;
      }
      const char *wv[4] = {wj[0], pd->nw > 1 ? wj[1] : wj[0], wj[0], wj[0]};
      unpack_words(e, in, j * V, wv);
    }
    e->pending[i--] = e->pending[--e->npending];
  }
}

/* A conversion of bytes to floats whose operand is a pending load read by
 * nothing else converts straight from the packed words (see emit_convert):
 * the pending entry, or NULL. */
static struct Pending *fusable_convert(Emitter *e, const TirInst *in) {
  if (in->op != TIR_CONVERT || rc_of(in->ty.elem) != RC_F32) return NULL;
  const TirInst *x = in->args[0];
  if ((x->ty.elem != S_I8 && x->ty.elem != S_U8 && x->ty.elem != S_BOOL) || e->uses[x->id] != 1) return NULL;
  for (int i = 0; i < e->npending; i++)
    if (e->pending[i].in == x) return &e->pending[i];
  return NULL;
}

/* Whether a rank-2 access's column span is its tensor's last dim (the
 * contiguous one): the rows paths address a row's elements by immediate
 * offsets and vectors, which only that dim allows. */
static bool cols_contiguous(const Emitter *e, const TirInst *in) {
  int last = -1;
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) last = i;
  return last == e->f->params[in->aux].rank - 1;
}

/* What a rows path (emit_load_rows_at, emit_long_rows) computes once for a
 * rank-2 access `in` whose columns are the tensor's contiguous dim: the
 * thread's first element lies at slice row r0 (a register; NULL: row 0)
 * and column c1 (a register), its tensor coordinates in g; its columns are
 * c1 + coff[j] (j < ncol), colok[j] true where that column lies inside the
 * slice (not slack) and the tensor and the point subscripts inside theirs;
 * lim is how many rows from r0 on it may access (below the slice's length
 * and the tensor's end); ad the first element's address; step the bytes
 * from a row to the one rstep rows further. */
typedef struct RowsAt {
  int i0, i1; /* the row and column subscripts */
  const char *g[MAX_TENSOR_RANK], **colok, *lim, *ad, *step;
} RowsAt;

static RowsAt rows_at(Emitter *e, const TirInst *in, const char *r0, const char *c1, const int64_t *coff, int ncol,
                      int64_t rstep, int eb) {
  RowsAt R = {.i0 = -1, .i1 = -1, .colok = arena_alloc(e->a, sizeof(char *) * (size_t)ncol)};
  for (int i = 0; i < in->nsubs; i++)
    if (!in->subs[i].point) R.i0 = R.i1, R.i1 = i;
  const char *ok = tmp(e, RC_PRED);
  out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < in->nsubs; i++) {
    const char *start = reg(e, in->subs[i].start, 0);
    if (i == R.i1 || (i == R.i0 && r0)) {
      const char *gi = tmp(e, RC_B32);
      out(e, "add.s32 %s, %s, %s;", gi, start, i == R.i0 ? r0 : c1);
      R.g[i] = gi;
      continue;
    }
    R.g[i] = start;
    if (i == R.i0) continue;
    const char *p = tmp(e, RC_PRED);
    out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", p, R.g[i], in->aux, i, ok);
    out(e, "mov.pred %s, %s;", ok, p);
  }
  for (int j = 0; j < ncol; j++) {
    const char *p = tmp(e, RC_PRED), *q = tmp(e, RC_PRED), *gc = tmp(e, RC_B32);
    int64_t left = in->subs[R.i1].len - coff[j]; /* the slice's columns from coff[j] on: none past its end */
    if (left < 0) out(e, "setp.ne.and.u32 %s, 0, 0, %s;", p, ok);
    else out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", p, c1, (long long)left, ok);
    out(e, "add.s32 %s, %s, %lld;", gc, R.g[R.i1], (long long)coff[j]);
    out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", q, gc, in->aux, R.i1, p);
    R.colok[j] = q;
  }
  R.lim = tmp(e, RC_B32);
  out(e, "sub.s32 %s, %%ext32_%d_%d, %s;", R.lim, in->aux, R.i0, R.g[R.i0]);
  if (r0) {
    const char *t = tmp(e, RC_B32);
    out(e, "sub.s32 %s, %lld, %s;", t, (long long)in->subs[R.i0].len, r0);
    out(e, "min.s32 %s, %s, %s;", R.lim, R.lim, t);
  } else {
    out(e, "min.s32 %s, %s, %lld;", R.lim, R.lim, (long long)in->subs[R.i0].len);
  }
  R.ad = tensor_addr(e, in->aux, R.g);
  R.step = tmp(e, RC_B64);
  out(e, "mov.u64 %s, %lld;", R.step, (long long)(rstep * eb));
  for (int d = R.i0 + 1; d < e->f->params[in->aux].rank; d++)
    out(e, "mul.lo.s64 %s, %s, %%ext%d_%d;", R.step, R.step, in->aux, d);
  return R;
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
static bool emit_load_rows_at(Emitter *e, const TirInst *in, const char **words, const char **c1_out,
                              const char **r0_out);

static bool emit_load_rows(Emitter *e, const TirInst *in, const char **words) {
  return emit_load_rows_at(e, in, words, NULL, NULL);
}

static bool emit_load_rows_at(Emitter *e, const TirInst *in, const char **words, const char **c1_out,
                              const char **r0_out) {
  if (in->ty.rank != 2 || (in->plan->res != RES_REG && !words)) return false;
  int64_t p0 = in->plan->phys[0], p1 = in->plan->phys[1];
  int64_t TV = (int64_t)e->T * e->V;
  if (TV % p1 || p1 % e->V) return false;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  /* a chunk's V elements are one vector, v elements on */
  if (spans != 2 || !cols_contiguous(e, in)) return false;
  int64_t rpr = TV / p1; /* rows a round of chunks covers */
  int V = e->V, eb = elem_bytes_mem(in->ty.elem);
  const char *c1 = tmp(e, RC_B32), *r0 = tmp(e, RC_B32);
  out(e, "and.b32 %s, %%tidv_, %lld;", c1, (long long)(p1 - 1));
  out(e, "shr.u32 %s, %%tidv_, %d;", r0, log2i(p1));
  if (c1_out) *c1_out = c1, *r0_out = r0;
  /* column v of the chunk; a round further: rpr rows */
  const int64_t coff[4] = {0, 1, 2, 3};
  RowsAt R = rows_at(e, in, r0, c1, coff, V, rpr, eb);
  int i0 = R.i0;
  const char **g = R.g, **colok = R.colok, *lim = R.lim, *ad0 = R.ad, *step = R.step;
  RegClass rc = rc_of(in->ty.elem);
  int nk = nregs(e, in);
  int L = new_label(e);
  const char *ad = tmp(e, RC_B64);
  if (V > 1 && eb <= 4) {
    /* Rows go into b32 words, vector loaded when all V columns are in and
     * the address and the row step are aligned to the vector, else byte by
     * byte; the words are unpacked after the paths join, so only the
     * packed bytes are live across the branch. */
    const char *al = tmp(e, RC_B64), *vp = tmp(e, RC_PRED), *vq = tmp(e, RC_PRED);
    out(e, "or.b64 %s, %s, %s;", al, ad0, step);
    out(e, "and.b64 %s, %s, %d;", al, al, V * eb - 1);
    out(e, "setp.eq.and.u64 %s, %s, 0, %s;", vp, al, colok[0]);
    out(e, "and.pred %s, %s, %s;", vq, vp, colok[V - 1]);
    int nw = (V * eb + 3) / 4, rows = nk / V;
    const char **w = words ? words : arena_alloc(e->a, sizeof(char *) * (size_t)(rows * nw));
    /* words of rows past the physical tile are zero on every path; the
     * others only where a path may leave them unloaded (the fast path loads
     * them all, and zeroing them ahead of it cost a CS2R per two words) */
    for (int i = 0; i < rows * nw; i++) {
      if (!words) w[i] = tmp(e, RC_B32);
      if ((int64_t)(i / nw) * rpr >= p0) out(e, "mov.b32 %s, 0;", w[i]);
    }
    /* every row inside too (the common case away from the tensor's
     * ends): the vector loads need no predicate. (Forming each row's
     * address as mad.wide.u32 of a 32-bit step from the first row's does
     * not save the 64-bit add: ptxas hoists the 32 products out of the loop
     * into 64 registers and adds them in the loop as before.) */
    int64_t last = (p0 - 1) / rpr * rpr; /* this thread's last row, less r0 */
    const char *ar = tmp(e, RC_PRED), *ag = tmp(e, RC_PRED);
    out(e, "setp.gt.and.s32 %s, %s, %lld, %s;", ar, lim, (long long)last, vq);
    out(e, "setp.ge.and.s32 %s, %s, 0, %s;", ag, g[i0], ar);
    for (int pass = 0; pass < 3; pass++) {
      if (pass == 0) {
        out(e, "@!%s bra $Lldrow%d;", ag, L);
      } else if (pass == 1) {
        fprintf(e->body, "$Lldrow%d:\n", L);
        for (int i = 0; i < rows * nw; i++)
          if ((int64_t)(i / nw) * rpr < p0) out(e, "mov.b32 %s, 0;", w[i]);
        out(e, "@!%s bra $Lldel%d;", vq, L);
      } else {
        fprintf(e->body, "$Lldel%d:\n", L);
      }
      out(e, "mov.b64 %s, %s;", ad, ad0);
      for (int j = 0; j < rows; j++) {
        int64_t row = (int64_t)j * rpr;
        if (row >= p0) continue;
        if (j) out(e, "add.s64 %s, %s, %s;", ad, ad, step);
        const char **wj = w + j * nw;
        if (pass < 2) {
          const char *z = "";
          if (pass == 1) {
            const char *q = tmp(e, RC_PRED), *zp = tmp(e, RC_PRED);
            out(e, "setp.gt.s32 %s, %s, %lld;", q, lim, (long long)row);
            out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", zp, g[i0], (long long)-row, q);
            z = arena_printf(e->a, "@%s ", zp);
          }
          if (V * eb == 16) out(e, "%sld.global.v4.b32 {%s, %s, %s, %s}, [%s];", z, wj[0], wj[1], wj[2], wj[3], ad);
          else if (V * eb == 8) out(e, "%sld.global.v2.b32 {%s, %s}, [%s];", z, wj[0], wj[1], ad);
          else if (V * eb == 4) out(e, "%sld.global.b32 %s, [%s];", z, wj[0], ad);
          else out(e, "%sld.global.u16 %s, [%s];", z, wj[0], ad);
          continue;
        }
        for (int v = 0; v < V; v++) {
          const char *q = tmp(e, RC_PRED), *z = tmp(e, RC_PRED), *x = tmp(e, RC_B32), *av = tmp(e, RC_B64);
          out(e, "setp.gt.and.s32 %s, %s, %lld, %s;", q, lim, (long long)row, colok[v]);
          out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", z, g[i0], (long long)-row, q);
          out(e, "add.s64 %s, %s, %d;", av, ad, v * eb);
          out(e, "mov.b32 %s, 0;", x);
          out(e, "@%s ld.global.%s %s, [%s];", z, eb == 4 ? "b32" : eb == 2 ? "u16" : "u8", x, av);
          const char *wv = wj[v * eb / 4];
          if (eb == 4) out(e, "mov.b32 %s, %s;", wv, x);
          else out(e, "bfi.b32 %s, %s, %s, %d, %d;", wv, x, wv, v * eb % 4 * 8, eb * 8);
        }
      }
      if (pass < 2) out(e, "bra.uni $Llddone%d;", L);
    }
    fprintf(e->body, "$Llddone%d:\n", L);
    if (words) return true;
    if (e->npending == (int)(sizeof e->pending / sizeof e->pending[0])) flush_unpack(e, NULL);
    e->pending[e->npending++] = (struct Pending){in, w, nw, rows};
    return true;
  }
  out(e, "mov.b64 %s, %s;", ad, ad0);
  for (int k = 0; k < nk; k++) {
    int v = k % V;
    int64_t row = (int64_t)(k / V) * rpr; /* this register's row, less r0 */
    const char *r = reg(e, in, k);
    out(e, "mov.%s %s, %s;", mov_type(rc), r, zero(rc));
    if (row >= p0) continue; /* past the physical tile */
    if (k && !v) out(e, "add.s64 %s, %s, %s;", ad, ad, step);
    const char *q = tmp(e, RC_PRED), *z = tmp(e, RC_PRED);
    out(e, "setp.gt.and.s32 %s, %s, %lld, %s;", q, lim, (long long)row, colok[v]);
    out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", z, g[i0], (long long)-row, q);
    const char *av = ad;
    if (v) {
      av = tmp(e, RC_B64);
      out(e, "add.s64 %s, %s, %d;", av, ad, v * eb);
    }
    ld_global(e, in->ty.elem, r, av, z);
  }
  return true;
}

/* A rank-2 register load or store whose rows are longer than a round of
 * chunks, in a kernel of one-element chunks (V 1, the physical row a
 * multiple of T): thread t's register k holds row k / cpr, column
 * t + (k % cpr) T, with cpr = p1 / T. The cpr column masks and each row's
 * mask are computed once, each row's address is one add from the last,
 * and each element is one predicated access at an immediate offset from
 * it. The general paths (emit_load_elements, emit_pointer_store) spend
 * about 35 instructions an element on its coordinates, masks and address,
 * unrolled: code that a CTA runs once is fetched cold, and in a one-warp
 * decode CTA's tail that cost about 10 ns an instruction (an [8, 128]
 * store of 1000 instructions took 11 us of a 95 us kernel, 11-30d calls
 * 10 and 11). val: the stored value, or NULL for a load into in. */
static bool emit_long_rows(Emitter *e, const TirInst *in, const TirInst *val) {
  const TirInst *x = val ? val : in;
  if (x->ty.rank != 2 || x->plan->res != RES_REG || e->V != 1 || is_frag(e, x) || is_rowfrag(e, x)) return false;
  int64_t p0 = x->plan->phys[0], p1 = x->plan->phys[1], T = e->T;
  if (p1 <= T || p1 % T) return false;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  /* the columns' chunks lie at immediate offsets T elements apart */
  if (spans != 2 || !cols_contiguous(e, in)) return false;
  Scalar te = val ? e->f->params[in->aux].elem : in->ty.elem;
  int eb = elem_bytes_mem(te);
  int64_t cpr = p1 / T, *coff = arena_alloc(e->a, sizeof(int64_t) * (size_t)cpr);
  for (int64_t c = 0; c < cpr; c++) coff[c] = c * T;
  RowsAt R = rows_at(e, in, NULL, "%tidv_", coff, (int)cpr, 1, eb);
  RegClass rc = rc_of(in->ty.elem);
  for (int64_t j = 0; j < p0; j++) {
    if (j) out(e, "add.s64 %s, %s, %s;", R.ad, R.ad, R.step);
    const char *pr = tmp(e, RC_PRED), *pz = tmp(e, RC_PRED);
    out(e, "setp.gt.s32 %s, %s, %lld;", pr, R.lim, (long long)j);
    out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", pz, R.g[R.i0], (long long)-j, pr);
    for (int64_t c = 0; c < cpr; c++) {
      int k = (int)(j * cpr + c);
      const char *q = tmp(e, RC_PRED), *at = arena_printf(e->a, "%s+%lld", R.ad, (long long)(c * T * eb));
      out(e, "and.pred %s, %s, %s;", q, pz, R.colok[c]);
      if (val) {
        st_mem(e, "global", te, at, operand(e, val, k), q);
      } else {
        const char *r = reg(e, in, k);
        out(e, "mov.%s %s, %s;", mov_type(rc), r, zero(rc));
        ld_global(e, te, r, at, q);
      }
    }
  }
  return true;
}

static void emit_inst(Emitter *e, const TirInst *in);
static void emit_for(Emitter *e, const TirInst *in);
static void emit_ring_load(Emitter *e, const TirInst *in);

/* A staged rank-2 load whose rows are covered by whole rounds of chunks:
 * the rows path of emit_load_rows into packed words (vector loads where
 * aligned), then one vector st.shared of each chunk into the buffer at
 * its pitch, slack and rows past the tensor included (as zeros). */
/* The barrier planned before a staged load (emit_inst leaves it pending). */
static void emit_pending_sync(Emitter *e) {
  if (!e->sync_pending) return;
  e->sync_pending = false;
  cta_sync_why(e, " // planned");
}

static bool emit_stage_rows(Emitter *e, const TirInst *in) {
  const PlanBuf *b = in->plan->buf;
  int V = e->V, eb = elem_bytes_mem(in->ty.elem);
  if (in->plan->res != RES_SHARED || in->ty.rank != 2 || V == 1 || eb > 4 || V * eb < 4 || b->rank != 2 ||
      b->pitch % V || b->swizzle)
    return false;
  int64_t p0 = in->plan->phys[0], p1 = in->plan->phys[1], TV = (int64_t)e->T * V;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  if (spans != 2 || TV % p1 || p1 % V) return false;
  int nw = V * eb / 4, rows = nregs(e, in) / V;
  const char **w = arena_alloc(e->a, sizeof(char *) * (size_t)(rows * nw));
  for (int i = 0; i < rows * nw; i++) w[i] = tmp(e, RC_B32);
  const char *c1, *r0;
  if (!emit_load_rows_at(e, in, w, &c1, &r0)) return false;
  /* A barrier planned before this load guards the buffer's bytes (other
   * threads may still read the last iteration's tile): it goes here, after
   * the global loads and before the stores, so the loads' latency overlaps
   * the wait instead of following it. Only the words are live across it. */
  emit_pending_sync(e);
  int64_t rpr = TV / p1;
  const char *a0 = tmp(e, RC_B32);
  out(e, "mad.lo.u32 %s, %s, %lld, %s;", a0, r0, (long long)b->pitch, c1);
  out(e, "mad.lo.u32 %s, %s, %d, %s;", a0, a0, eb, smem_of(e, b));
  out(e, "add.u32 %s, %s, %lld;", a0, a0, (long long)b->offset);
  for (int j = 0; j < rows; j++) {
    int64_t row = (int64_t)j * rpr;
    if (row >= p0) break;
    const char *p = tmp(e, RC_PRED), **wj = w + j * nw;
    out(e, "setp.lt.u32 %s, %s, %lld;", p, r0, (long long)(p0 - row)); /* a row of the buffer */
    long long off = (long long)(row * b->pitch * eb);
    if (nw == 4) out(e, "@%s st.shared.v4.b32 [%s+%lld], {%s, %s, %s, %s};", p, a0, off, wj[0], wj[1], wj[2], wj[3]);
    else if (nw == 2) out(e, "@%s st.shared.v2.b32 [%s+%lld], {%s, %s};", p, a0, off, wj[0], wj[1]);
    else out(e, "@%s st.shared.b32 [%s+%lld], %s;", p, a0, off, wj[0]);
  }
  return true;
}

static void emit_load_elements(Emitter *e, const TirInst *in);

/* The global address of element g of tensor `param` and the byte pitch of
 * its dim i0 (the element size times the extents after it), and a predicate:
 * `ok` and both 16-byte aligned, what a bulk or 16-byte async copy of rows
 * starting there needs. */
static const char *aligned16(Emitter *e, int param, int eb, const char *const *g, int i0, const char *ok,
                             const char **addr, const char **pitch) {
  const TirParam *tp = &e->f->params[param];
  const char *a0 = tensor_addr(e, param, g), *step = tmp(e, RC_B64), *al = tmp(e, RC_B64), *p = tmp(e, RC_PRED);
  out(e, "mov.u64 %s, %d;", step, eb);
  for (int d = i0 + 1; d < tp->rank; d++) out(e, "mul.lo.s64 %s, %s, %%ext%d_%d;", step, step, param, d);
  out(e, "or.b64 %s, %s, %s;", al, a0, step);
  out(e, "and.b64 %s, %s, 15;", al, al);
  out(e, "setp.eq.and.u64 %s, %s, 0, %s;", p, al, ok);
  *addr = a0, *pitch = step;
  return p;
}

/* One cp.async of 16 bytes from src to [dst + off], or of none (the
 * destination zero-filled) unless q: then it reads no bytes and takes the
 * tensor's base as its address. `from` and `sz` are the caller's
 * registers (from may be src itself). */
static void copy16(Emitter *e, int param, const char *dst, int64_t off, const char *from, const char *src,
                   const char *sz, const char *q) {
  out(e, "selp.b64 %s, %s, %%base%d, %s;", from, src, param, q); /* no bytes read: any valid address */
  out(e, "selp.u32 %s, 16, 0, %s;", sz, q);
  out(e, "cp.async.cg.shared.global [%s+%lld], [%s], 16, %s;", dst, (long long)off, from, sz);
}

/* One 16-byte chunk of emit_stage_async: row `row`, chunk column `col`;
 * source size 0 (zeros) unless `inside`. */
static void stage_chunk(Emitter *e, const TirInst *in, const PlanBuf *b, const char *row, const char *col,
                        const char *step, const char *a0, const char *inside) {
  int eb = elem_bytes_mem(in->ty.elem);
  const char *src = tmp(e, RC_B64), *r64 = tmp(e, RC_B64), *dst = tmp(e, RC_B32), *sz = tmp(e, RC_B32);
  out(e, "cvt.s64.s32 %s, %s;", r64, row);
  out(e, "mad.lo.s64 %s, %s, %s, %s;", src, r64, step, a0);
  out(e, "mad.wide.u32 %s, %s, 16, %s;", src, col, src);
  out(e, "mad.lo.u32 %s, %s, %lld, %s;", dst, row, (long long)(b->pitch * eb), smem_of(e, b));
  out(e, "mad.lo.u32 %s, %s, 16, %s;", dst, col, dst);
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
static void emit_stage_loop(Emitter *e, const TirInst *in, const char *const *g, int i0, int i1, const char *a0,
                            const char *step) {
  const PlanBuf *b = in->plan->buf;
  int eb = elem_bytes_mem(in->ty.elem), P = in->aux;
  int64_t p0 = in->plan->phys[0], p1 = in->plan->phys[1];
  const char *pok = tmp(e, RC_PRED); /* the point subscripts inside the tensor */
  out(e, "setp.eq.u32 %s, 0, 0;", pok);
  for (int i = 0; i < in->nsubs; i++) {
    if (i == i0 || i == i1) continue;
    const char *q = tmp(e, RC_PRED);
    out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", q, g[i], P, i, pok);
    out(e, "mov.pred %s, %s;", pok, q);
  }
  const char *f = tmp(e, RC_B32), *done = tmp(e, RC_PRED), *row = tmp(e, RC_B32), *col = tmp(e, RC_B32),
             *gr = tmp(e, RC_B32), *gc = tmp(e, RC_B32), *v = tmp(e, RC_PRED), *r64 = tmp(e, RC_B64),
             *ad = tmp(e, RC_B64), *w = tmp(e, RC_B32), *dst = tmp(e, RC_B32);
  const char *ty = eb == 2 ? "u16" : eb == 1 ? "u8" : eb == 8 ? "b64" : "b32";
  const char *wr = eb == 8 ? tmp(e, RC_B64) : w;
  int L = new_label(e);
  out(e, "mov.u32 %s, %%tid_;", f);
  fprintf(e->body, "$Lel%d:\n", L);
  out(e, "setp.ge.u32 %s, %s, %lld;", done, f, (long long)(p0 * p1));
  out(e, "@%s bra $Leld%d;", done, L);
  out(e, "shr.u32 %s, %s, %d;", row, f, log2i(p1));
  out(e, "and.b32 %s, %s, %lld;", col, f, (long long)(p1 - 1));
  out(e, "add.s32 %s, %s, %s;", gr, g[i0], row);
  out(e, "add.s32 %s, %s, %s;", gc, g[i1], col);
  out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", v, row, (long long)in->subs[i0].len, pok);
  out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", v, col, (long long)in->subs[i1].len, v);
  out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", v, gr, P, i0, v); /* unsigned: a negative row is out too */
  out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", v, gc, P, i1, v);
  out(e, "cvt.s64.s32 %s, %s;", r64, row);
  out(e, "mad.lo.s64 %s, %s, %s, %s;", ad, r64, step, a0);
  out(e, "cvt.s64.s32 %s, %s;", r64, col);
  out(e, "mad.lo.s64 %s, %s, %d, %s;", ad, r64, eb, ad);
  out(e, "mov.%s %s, 0;", eb == 8 ? "b64" : "b32", wr);
  out(e, "@%s ld.global.%s %s, [%s];", v, ty, wr, ad);
  if (b->swizzle) {
    const char *rc[2] = {row, col};
    out(e, "st.shared.%s [%s], %s;", ty, buf_addr(e, b, rc), wr);
  } else {
    out(e, "mad.lo.u32 %s, %s, %lld, %s;", dst, row, (long long)b->pitch, col);
    out(e, "mad.lo.u32 %s, %s, %d, %s;", dst, dst, eb, smem_of(e, b));
    out(e, "st.shared.%s [%s+%lld], %s;", ty, dst, (long long)b->offset, wr);
  }
  out(e, "add.u32 %s, %s, %d;", f, f, e->T);
  out(e, "bra.uni $Lel%d;", L);
  fprintf(e->body, "$Leld%d:\n", L);
}

/* A staged rank-2 load by cp.async (sm_80 and later), 16 bytes a copy
 * straight from global to shared memory, no registers in between: thread t
 * copies the 16-byte chunks t, t + T, ... of the tile into the buffer at its
 * pitch (a @padstage pitch too). Rows past the slice's length or the
 * tensor's end, and chunks of column slack, are copied with source size 0,
 * which fills zeros. Taken at run time when the tile's columns lie inside
 * the tensor and its first element and row pitch are 16-byte aligned; the
 * other tiles, and tiles of a tensor the kernel also stores to, take the
 * element path (emit_stage_rows, emit_load_elements).
 * The thread waits for its copies just before the next barrier (async_wait),
 * the one planned before the tile's readers, which publishes them. Issuing
 * a staged ring's stage (e->ring_issue), the loop commits and waits, and a
 * tile that fails the run-time test is copied by emit_stage_loop. */
static bool emit_stage_async(Emitter *e, const TirInst *in) {
  const PlanBuf *b = in->plan->buf;
  int eb = elem_bytes_mem(in->ty.elem);
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
  if (ns != 2 || (p1 * eb) % 16 || (b->pitch * eb) % 16 || b->offset % 16 || in->subs[spans[1]].len % ce || b->swizzle)
    return false;
  int i0 = spans[0], i1 = spans[1];
  const TirParam *tp = &e->f->params[in->aux];
  if (i1 != tp->rank - 1) return false; /* the columns must be the contiguous dim */
  /* a 16-byte chunk belongs to another thread than the elements the flat
   * layout gives a thread: against a store to the same tensor (before or
   * after) the element path, where each thread loads and stores its own */
  if (tir_stores_to(&e->f->body, in->aux)) return false;
  emit_pending_sync(e);
  const char *g[MAX_TENSOR_RANK], *ok = tmp(e, RC_PRED);
  out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < in->nsubs; i++) {
    g[i] = reg(e, in->subs[i].start, 0);
    if (i == i0) continue;
    const char *p = tmp(e, RC_PRED);
    if (i == i1) { /* 0 <= start and start + phys <= extent: every chunk's columns inside */
      const char *last = tmp(e, RC_B32);
      out(e, "add.s32 %s, %s, %lld;", last, g[i], (long long)p1);
      out(e, "setp.ge.and.s32 %s, %s, 0, %s;", p, g[i], ok);
      out(e, "setp.le.and.s32 %s, %s, %%ext32_%d_%d, %s;", ok, last, in->aux, i, p);
      continue;
    }
    out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", p, g[i], in->aux, i, ok);
    out(e, "mov.pred %s, %s;", ok, p);
  }
  const char *a0, *step, *go = aligned16(e, in->aux, eb, g, i0, ok, &a0, &step);
  int L = new_label(e);
  out(e, "@!%s bra $Lsa%d;", go, L);
  int64_t cpr = p1 / ce, chunks = p0 * cpr, len0 = in->subs[i0].len, len1 = in->subs[i1].len;
  /* rows this thread may copy: below the slice's length and inside the tensor */
  const char *lim = tmp(e, RC_B32), *t = tmp(e, RC_B32);
  out(e, "sub.s32 %s, %%ext32_%d_%d, %s;", lim, in->aux, i0, g[i0]);
  out(e, "min.s32 %s, %s, %lld;", lim, lim, (long long)len0);
  if (e->T % cpr == 0 && chunks % e->T == 0) {
    /* Every round of T chunks is T / cpr whole rows: a thread keeps its
     * column and steps down by that many rows, so its source and
     * destination advance by constant strides and only the row test
     * changes from one chunk to the next. */
    int64_t rstep = e->T / cpr;
    const char *row = tmp(e, RC_B32), *col = tmp(e, RC_B32), *lim0 = tmp(e, RC_B32), *r64 = tmp(e, RC_B64),
               *src = tmp(e, RC_B64), *stride = tmp(e, RC_B64), *dst = tmp(e, RC_B32), *colok = tmp(e, RC_PRED);
    out(e, "shr.u32 %s, %%tid_, %d;", row, log2i(cpr));
    out(e, "and.b32 %s, %%tid_, %lld;", col, (long long)(cpr - 1));
    out(e, "sub.s32 %s, %s, %s;", lim0, lim, row);    /* chunk k's row is inside while k * rstep < lim0 */
    out(e, "add.s32 %s, %s, %s;", t, g[i0], row);      /* the first chunk's row in the tensor */
    out(e, "setp.lt.u32 %s, %s, %lld;", colok, col, (long long)(len1 < p1 ? len1 / ce : cpr)); /* column slack: zeros */
    out(e, "cvt.s64.s32 %s, %s;", r64, row);
    out(e, "mad.lo.s64 %s, %s, %s, %s;", src, r64, step, a0);
    out(e, "mad.wide.u32 %s, %s, 16, %s;", src, col, src);
    out(e, "mul.lo.s64 %s, %s, %lld;", stride, step, (long long)rstep);
    out(e, "mad.lo.u32 %s, %s, %lld, %s;", dst, row, (long long)(b->pitch * eb), smem_of(e, b));
    out(e, "mad.lo.u32 %s, %s, 16, %s;", dst, col, dst);
    int64_t rounds = chunks / e->T;
    if (rounds > 8 && rounds % 4 == 0) {
      /* many rounds a thread (a one-warp CTA's tile): a loop of four
       * copies a trip, or ptxas hoists every copy's address into registers
       * of its own */
      const char *kr = tmp(e, RC_B32), *tk = tmp(e, RC_B32), *lu[4], *more = tmp(e, RC_PRED);
      out(e, "mov.u32 %s, 0;", kr);
      for (int u = 0; u < 4; u++) {
        lu[u] = tmp(e, RC_B32);
        out(e, "sub.s32 %s, %s, %lld;", lu[u], lim0, (long long)(u * rstep));
      }
      int C = new_label(e);
      fprintf(e->body, "$Lcp%d:\n", C);
      out(e, "add.s32 %s, %s, %s;", tk, t, kr);
      for (int u = 0; u < 4; u++) {
        const char *v = tmp(e, RC_PRED), *q = tmp(e, RC_PRED), *from = tmp(e, RC_B64), *sz = tmp(e, RC_B32);
        out(e, "setp.gt.and.s32 %s, %s, %s, %s;", v, lu[u], kr, colok);
        out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", q, tk, (long long)(-u * rstep), v);
        copy16(e, in->aux, dst, b->offset + u * rstep * b->pitch * eb, from, src, sz, q);
        out(e, "add.s64 %s, %s, %s;", src, src, stride);
      }
      out(e, "add.s32 %s, %s, %lld;", kr, kr, (long long)(4 * rstep));
      out(e, "add.u32 %s, %s, %lld;", dst, dst, (long long)(4 * rstep * b->pitch * eb));
      out(e, "setp.lt.s32 %s, %s, %lld;", more, kr, (long long)(rounds * rstep));
      out(e, "@%s bra $Lcp%d;", more, C);
      rounds = 0;
    }
    for (int64_t k = 0; k < rounds; k++) {
      const char *v = tmp(e, RC_PRED), *q = tmp(e, RC_PRED), *from = tmp(e, RC_B64), *sz = tmp(e, RC_B32);
      if (k) out(e, "add.s64 %s, %s, %s;", src, src, stride);
      out(e, "setp.gt.and.s32 %s, %s, %lld, %s;", v, lim0, (long long)(k * rstep), colok);
      out(e, "setp.ge.and.s32 %s, %s, %lld, %s;", q, t, (long long)(-k * rstep), v);
      copy16(e, in->aux, dst, b->offset + k * rstep * b->pitch * eb, from, src, sz, q);
    }
  }
  for (int64_t c0 = 0; !(e->T % cpr == 0 && chunks % e->T == 0) && c0 < chunks; c0 += e->T) {
    const char *c = tmp(e, RC_B32), *row = tmp(e, RC_B32), *col = tmp(e, RC_B32), *v = tmp(e, RC_PRED),
               *q = tmp(e, RC_PRED);
    out(e, "add.u32 %s, %%tid_, %lld;", c, (long long)c0);
    out(e, "shr.u32 %s, %s, %d;", row, c, log2i(cpr));
    out(e, "and.b32 %s, %s, %lld;", col, c, (long long)(cpr - 1));
    out(e, "setp.lt.s32 %s, %s, %s;", v, row, lim);
    out(e, "add.s32 %s, %s, %s;", t, g[i0], row);
    out(e, "setp.ge.and.s32 %s, %s, 0, %s;", q, t, v);
    if (len1 < p1) {
      const char *q2 = tmp(e, RC_PRED);
      out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", q2, col, (long long)(len1 / ce), q);
      q = q2;
    }
    const char *inside = q;
    if (chunks % e->T && c0 + e->T > chunks) { /* the last round: threads past the tile copy nothing */
      const char *q3 = tmp(e, RC_PRED), *in_t = tmp(e, RC_PRED);
      out(e, "setp.lt.u32 %s, %s, %lld;", in_t, c, (long long)chunks);
      out(e, "and.pred %s, %s, %s;", q3, q, in_t);
      inside = q3;
      const char *sk = tmp(e, RC_PRED);
      out(e, "not.pred %s, %s;", sk, in_t);
      int S = new_label(e);
      out(e, "@%s bra $Lsn%d;", sk, S);
      stage_chunk(e, in, b, row, col, step, a0, inside);
      fprintf(e->body, "$Lsn%d:\n", S);
      continue;
    }
    stage_chunk(e, in, b, row, col, step, a0, inside);
  }
  if (!e->ring_issue) { /* a ring's loop commits once for all its tiles, and waits by count */
    out(e, "cp.async.commit_group;");
    e->async_pending = true;
  }
  out(e, "bra.uni $Lsd%d;", L);
  fprintf(e->body, "$Lsa%d:\n", L);
  /* (a ring stage's fallback is a loop: unrolled, it would be emitted at
   * each issue and hold registers the loop's own work needs) */
  if (e->ring_issue) emit_stage_loop(e, in, g, i0, i1, a0, step);
  else if (!emit_stage_rows(e, in)) emit_load_elements(e, in);
  fprintf(e->body, "$Lsd%d:\n", L);
  return true;
}

/* Any load, element by element: each register's element, masked, and a
 * staged one stored into its buffer. */
static void emit_load_elements(Emitter *e, const TirInst *in) {
  bool shared = in->plan->res == RES_SHARED;
  int rank = in->ty.rank;
  for (int k = 0; k < nregs(e, in); k++) {
    const char *g[MAX_TENSOR_RANK];
    const char *ok = access_lane(e, in, NULL, in->plan->phys, rank, k, g);
    const char *ad = tensor_addr(e, in->aux, g);
    const char *r = shared ? tmp(e, rc_of(in->ty.elem)) : reg(e, in, k);
    out(e, "mov.%s %s, %s;", mov_type(rc_of(in->ty.elem)), r, zero(rc_of(in->ty.elem)));
    ld_global(e, in->ty.elem, r, ad, ok);
    if (shared) {
      const PlanBuf *b = in->plan->buf;
      const char *fl = flat_index(e, k);
      const char *in_range = tmp(e, RC_PRED);
      out(e, "setp.lt.u32 %s, %s, %lld;", in_range, fl, (long long)phys_elems(in));
      const char *c[MAX_TILE_RANK];
      for (int d = 0; d < rank; d++) c[d] = coord(e, fl, in->plan->phys, rank, d);
      st_mem(e, "shared", in->ty.elem, buf_addr(e, b, c), r, in_range);
    }
  }
}

/* The coordinates of load or store `in` in its map, outermost first (a
 * split dim's start x * len is (x, 0)); returns how many. */
static int tma_coords(Emitter *e, const TirInst *in, const char **c) {
  const PlanTmap *tm = &e->p->tmaps[in->plan->tma - 1];
  int nc = 0;
  for (int i = 0; i < tm->rank; i++) {
    if (i == tm->split_dim) {
      c[nc++] = in->plan->tma_outer ? reg(e, in->plan->tma_outer, 0)
                                    : arena_printf(e->a, "%lld", (long long)in->plan->tma_outer_const);
      c[nc++] = "0";
    } else {
      c[nc++] = reg(e, in->subs[i].start, 0);
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
static void tma_copies(Emitter *e, const TirInst *in, const char *dst, const char *bar, const char *t0) {
  const PlanTmap *tm = &e->p->tmaps[in->plan->tma - 1];
  int m = in->plan->tma - 1, rank = tm->rank + (tm->split_dim >= 0);
  const char *c[MAX_TENSOR_RANK + 1];
  int nc = tma_coords(e, in, c);
  const char *inner = c[nc - 1];
  for (int q = 0; q < tm->boxes; q++) {
    if (q) {
      const char *ci = tmp(e, RC_B32), *dq = tmp(e, RC_B32);
      if (inner[0] == '%') out(e, "add.s32 %s, %s, %lld;", ci, inner, (long long)(q * tm->box[rank - 1]));
      else out(e, "mov.s32 %s, %lld;", ci, atoll(inner) + (long long)(q * tm->box[rank - 1]));
      out(e, "add.u32 %s, %s, %lld;", dq, dst, (long long)(q * plan_buf_rows(in->plan->buf) * tm->swizzle));
      c[nc - 1] = ci;
      dst = dq;
    }
    out(e, "@%s cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%%tmap%d, {%s}], [%s];",
        t0, rank, dst, m, tma_coord_list(e, c, nc), bar);
  }
}

/* the bytes a load's copies bring: its whole physical tile (elements
 * outside the tensor arrive as zeros and count too) */
static int64_t tma_bytes(const TirInst *in) { return phys_elems(in) * elem_bytes_mem(in->ty.elem); }

/* A tensor copy (plan.c, choose_tma): thread 0 issues one tensor copy of the whole
 * box into the staged buffer, its mbarrier expecting the box's bytes
 * (elements outside the tensor arrive as zeros and count too), and every
 * thread waits on the mbarrier's phase. When the runtime could not build
 * the map for this launch (tmok = 0: a misaligned base or pitch), the
 * staged pointer path instead. */
static void emit_tma_load(Emitter *e, const TirInst *in) {
  int m = in->plan->tma - 1, id = e->ntma++;
  const PlanBuf *b = in->plan->buf;
  int L = new_label(e);
  const char *use = tmp(e, RC_PRED), *t0 = tmp(e, RC_PRED), *st = tmp(e, RC_B64), *dst = tmp(e, RC_B32),
             *bar = tmp(e, RC_B32), *done = tmp(e, RC_PRED);
  out(e, "setp.ne.u32 %s, %%tmok%d, 0;", use, m);
  out(e, "@!%s bra $Ltmafb%d;", use, L);
  out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  out(e, "add.u32 %s, %%smem_, %lld;", dst, (long long)b->offset);
  out(e, "mov.u32 %s, tmabar;", bar);
  out(e, "add.u32 %s, %s, %d;", bar, bar, 8 * id);
  /* the buffer's bytes were last read through the generic proxy */
  out(e, "@%s fence.proxy.async.shared::cta;", t0);
  out(e, "@%s mbarrier.arrive.expect_tx.shared::cta.b64 %s, [%s], %lld;", t0, st, bar, (long long)tma_bytes(in));
  tma_copies(e, in, dst, bar, t0);
  fprintf(e->body, "$Ltmaw%d:\n", L);
  out(e, "mbarrier.try_wait.parity.shared::cta.b64 %s, [%s], %%tmaph%d;", done, bar, id);
  out(e, "@!%s bra $Ltmaw%d;", done, L);
  out(e, "xor.b32 %%tmaph%d, %%tmaph%d, 1;", id, id);
  out(e, "bra.uni $Ltmadone%d;", L);
  fprintf(e->body, "$Ltmafb%d:\n", L);
  if (!emit_stage_rows(e, in)) emit_load_elements(e, in);
  /* wgmma reads a swizzled tile through the async proxy */
  if (b->swizzle) out(e, "fence.proxy.async.shared::cta;");
  fprintf(e->body, "$Ltmadone%d:\n", L);
}

static void emit_load(Emitter *e, const TirInst *in) {
  if (in->plan->res == RES_SHARED && in->plan->buf && in->plan->buf->stages && !e->ring_issue) {
    /* a staged ring's tile: its loop copied it ahead (emit_for) and waited
     * for it at the top of this iteration */
    out(e, "// %%%d: in stage of ring buffer #%d", in->id, in->plan->buf->id);
    return;
  }
  if (in->plan->tma && !e->replay) {
    /* Every thread must be past its wait on this load's mbarrier (the
     * previous round, in a loop) before thread 0 arms it again, or a slow
     * warp would see the next phase's parity and fall a round behind: a
     * planned barrier here does that, else one of its own. */
    if (e->sync_pending) emit_pending_sync(e);
    else cta_sync_why(e, " // the last round of this copy's mbarrier is over");
    emit_tma_load(e, in);
    return;
  }
  if (e->sync_pending && emit_stage_rows(e, in)) return; /* the barrier went between its loads and stores */
  if (emit_stage_async(e, in)) return;
  emit_pending_sync(e);
  for (int q = 0; q < e->npf; q++)
    if (e->pf_load[q] == in && !e->replay) { /* loaded an iteration ago (emit_for): unpack at first use */
      if (e->npending == (int)(sizeof e->pending / sizeof e->pending[0])) flush_unpack(e, NULL);
      int nw = (e->V * elem_bytes_mem(in->ty.elem) + 3) / 4;
      e->pending[e->npending++] = (struct Pending){in, e->pf_words[q], nw, nregs(e, in) / e->V};
      return;
    }
  if (in->plan->ring && e->ring_loop && in->plan->mbar->owner == e->ring_loop) return emit_ring_load(e, in);
  if (emit_load_rows(e, in, NULL)) return;
  if (emit_stage_rows(e, in)) return;
  if (emit_long_rows(e, in, NULL)) return;
  emit_load_elements(e, in);
}

static void emit_pointer_store(Emitter *e, const TirInst *in);

/* A TMA tensor store (plan.c, choose_tma_store): the tile's elements, slack
 * included, into its planned staging buffer (dense, physical order), made
 * visible to the async proxy; then one copy by thread 0 through the map,
 * which clips what lies outside it, thread 0 waiting until the copy has
 * read the buffer before the barrier that frees its bytes. When the
 * runtime could not build the map, the threads store the staged elements
 * inside the slice and the tensor by a loop instead: the tile's registers
 * are read once either way. */
static void emit_tma_store(Emitter *e, const TirInst *in) {
  const TirInst *v = in->args[0];
  int m = in->plan->tma - 1, L = new_label(e), rank = v->ty.rank;
  Scalar te = e->f->params[in->aux].elem;
  int eb = elem_bytes_mem(te);
  int64_t elems = phys_elems(v);
  const char *t0 = tmp(e, RC_PRED), *src = tmp(e, RC_B32), *use = tmp(e, RC_PRED);
  cta_sync(e); /* the buffer's bytes: earlier readers are done */
  out(e, "add.u32 %s, %%smem_, %lld;", src, (long long)in->plan->buf->offset);
  for (int k = 0; k < nregs(e, v); k++) {
    const char *fl = elem_index(e, v, k), *pr = tmp(e, RC_PRED), *ad = tmp(e, RC_B32), *r = operand(e, v, k);
    out(e, "setp.lt.u32 %s, %s, %lld;", pr, fl, (long long)elems);
    out(e, "mad.lo.u32 %s, %s, %d, %s;", ad, fl, eb, src);
    st_mem(e, "shared", te, ad, r, pr);
  }
  out(e, "fence.proxy.async.shared::cta;"); /* the threads' writes, seen by the copy */
  cta_sync(e);
  out(e, "setp.ne.u32 %s, %%tmok%d, 0;", use, m);
  out(e, "@!%s bra $Ltsfb%d;", use, L);
  out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  const char *c[MAX_TENSOR_RANK + 1];
  int nc = tma_coords(e, in, c);
  out(e, "@%s cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group [%%tmap%d, {%s}], [%s];", t0, nc, m,
      tma_coord_list(e, c, nc), src);
  out(e, "@%s cp.async.bulk.commit_group;", t0);
  out(e, "@%s cp.async.bulk.wait_group.read 0;", t0);
  out(e, "bra.uni $Ltsd%d;", L);
  /* no map: element f of the staged tile at physical coordinates (its
   * dims are powers of two), stored when inside the slice and the tensor */
  fprintf(e->body, "$Ltsfb%d:\n", L);
  const char *f = tmp(e, RC_B32), *done = tmp(e, RC_PRED), *ok = tmp(e, RC_PRED), *w = tmp(e, RC_B32),
             *ad = tmp(e, RC_B32);
  out(e, "mov.u32 %s, %%tid_;", f);
  fprintf(e->body, "$Ltsl%d:\n", L);
  out(e, "setp.ge.u32 %s, %s, %lld;", done, f, (long long)elems);
  out(e, "@%s bra $Ltsd%d;", done, L);
  out(e, "setp.eq.u32 %s, 0, 0;", ok);
  const char *g[MAX_TENSOR_RANK];
  int j = 0;
  int64_t below = 1;
  const char *cd[MAX_TILE_RANK];
  for (int d = rank - 1; d >= 0; d--) { /* coordinate d = (f / below) % phys[d] */
    cd[d] = tmp(e, RC_B32);
    out(e, "shr.u32 %s, %s, %d;", cd[d], f, log2i(below));
    out(e, "and.b32 %s, %s, %lld;", cd[d], cd[d], (long long)(v->plan->phys[d] - 1));
    below *= v->plan->phys[d];
  }
  for (int i = 0; i < in->nsubs; i++) {
    const char *q = tmp(e, RC_PRED);
    if (in->subs[i].point) {
      g[i] = reg(e, in->subs[i].start, 0);
    } else {
      const char *gi = tmp(e, RC_B32);
      out(e, "add.s32 %s, %s, %s;", gi, reg(e, in->subs[i].start, 0), cd[j]);
      out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", q, cd[j], (long long)in->subs[i].len, ok);
      out(e, "mov.pred %s, %s;", ok, q);
      q = tmp(e, RC_PRED);
      g[i] = gi;
      j++;
    }
    out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", q, g[i], in->aux, i, ok); /* unsigned: negative is out */
    out(e, "mov.pred %s, %s;", ok, q);
  }
  out(e, "mad.lo.u32 %s, %s, %d, %s;", ad, f, eb, src);
  const char *ty = eb == 2 ? "u16" : eb == 1 ? "u8" : eb == 8 ? "b64" : "b32";
  const char *wr = eb == 8 ? tmp(e, RC_B64) : w;
  out(e, "ld.shared.%s %s, [%s];", ty, wr, ad);
  out(e, "@%s st.global.%s [%s], %s;", ok, ty, tensor_addr(e, in->aux, g), wr);
  out(e, "add.u32 %s, %s, %d;", f, f, e->T);
  out(e, "bra.uni $Ltsl%d;", L);
  fprintf(e->body, "$Ltsd%d:\n", L);
  cta_sync(e); /* the buffer's bytes are free again */
}

static void emit_store(Emitter *e, const TirInst *in) {
  if (in->plan->tma && !e->replay) emit_tma_store(e, in);
  else emit_pointer_store(e, in);
}

static void emit_pointer_store(Emitter *e, const TirInst *in) {
  const TirInst *v = in->args[0];
  int rank = v->ty.rank;
  if (emit_long_rows(e, in, v)) return;
  for (int k = 0; k < nregs(e, v); k++) {
    const char *g[MAX_TENSOR_RANK];
    const char *ok = access_lane(e, in, rank ? v : NULL, rank ? v->plan->phys : NULL, rank, k, g);
    if (!rank) {
      const char *p = tmp(e, RC_PRED);
      out(e, "setp.eq.and.u32 %s, %%tid_, 0, %s;", p, ok); /* one thread stores a scalar */
      ok = p;
    }
    const char *r = operand(e, v, k);
    st_mem(e, "global", e->f->params[in->aux].elem, tensor_addr(e, in->aux, g), r, ok);
  }
}

/* An operation whose result elements need others' elements: sources go to
 * the exchange area first. Emits the barrier pair and returns offsets. */
static void exchange(Emitter *e, const TirInst *const *src, int n, int64_t *at) {
  int64_t off = 0;
  for (int i = 0; i < n; i++) {
    at[i] = off;
    off += (value_exch_bytes(src[i]) + 15) / 16 * 16;
  }
  exch_need(e, off);
  cta_sync(e);
  for (int i = 0; i < n; i++) exch_store(e, src[i], at[i]);
  cta_sync(e);
}

/* A value read from global memory into registers (a load, or the
 * transpose of one) can be read again at any coordinates instead of being
 * exchanged: every thread loads what it needs, no barrier. */
static bool reloadable(const TirInst *x) {
  if (x->plan->res != RES_REG) return false;
  if (x->op == TIR_LOAD) return true;
  return x->op == TIR_TRANSPOSE && x->args[0]->op == TIR_LOAD && x->args[0]->plan->res == RES_REG;
}

/* Loads element c (logical coordinates of x, in registers) of a reloadable
 * x into r, masked as the original load was. */
static void reload_at(Emitter *e, const TirInst *x, const char *const *c, const char *r) {
  const TirInst *ld = x->op == TIR_LOAD ? x : x->args[0];
  const char *lc[MAX_TILE_RANK];
  if (x->op == TIR_TRANSPOSE) lc[0] = c[1], lc[1] = c[0];
  else
    for (int d = 0; d < ld->ty.rank; d++) lc[d] = c[d];
  const char *ok = tmp(e, RC_PRED), *g[MAX_TENSOR_RANK];
  out(e, "setp.eq.u32 %s, 0, 0;", ok);
  int j = 0;
  for (int i = 0; i < ld->nsubs; i++) {
    const char *start = reg(e, ld->subs[i].start, 0);
    if (ld->subs[i].point) {
      g[i] = start;
    } else {
      const char *cc = lc[j++];
      const char *p = tmp(e, RC_PRED);
      out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", p, cc, (long long)ld->subs[i].len, ok);
      out(e, "mov.pred %s, %s;", ok, p);
      const char *gi = tmp(e, RC_B32);
      out(e, "add.s32 %s, %s, %s;", gi, start, cc);
      g[i] = gi;
    }
    const char *p2 = tmp(e, RC_PRED);
    out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", p2, g[i], ld->aux, i, ok);
    out(e, "mov.pred %s, %s;", ok, p2);
  }
  out(e, "mov.%s %s, %s;", mov_type(rc_of(ld->ty.elem)), r, zero(rc_of(ld->ty.elem)));
  ld_global(e, ld->ty.elem, r, tensor_addr(e, ld->aux, g), ok);
}

/* For a broadcast along the last dim, an earlier register of the result
 * that holds the same source element as register k, or -1: in the flat
 * layout the previous register of k's chunk of V (a chunk never crosses a
 * row when the row is a multiple of V long), in the fragment layout the
 * first register of k's row (rows g and g + 8 of each row tile). A
 * [BQ, NQ, 1] row value spread over [BQ, NQ, D] then costs one load a
 * chunk, or two a row tile, instead of one an element. */
static int same_as(Emitter *e, const TirInst *in, int k) {
  const TirInst *x = in->args[0];
  if (!x->ty.rank || x->ty.dims[x->ty.rank - 1] != 1) return -1;
  if (is_frag(e, in)) {
    FragGeom g = frag_geom(e, in);
    int mi = k / g.rpt / g.ntn, first = mi * g.ntn * g.rpt + (k % 4 >> 1) * 2;
    return first != k ? first : -1;
  }
  return k % e->V && in->plan->phys[in->ty.rank - 1] % e->V == 0 ? k - 1 : -1;
}

static void emit_broadcast(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  int r = in->ty.rank, xr = x->ty.rank;
  RegClass rc = rc_of(in->ty.elem);
  if (is_frag(e, in) && is_rowfrag(e, x) && xr == r && plan_folded_rows(x) == plan_folded_rows(in)) {
    /* a row value over its fragment value: the thread holds its rows already */
    FragGeom g = frag_geom(e, in);
    for (int k = 0; k < nregs(e, in); k++)
      out(e, "mov.%s %s, %s;", mov_type(rc), reg(e, in, k), reg(e, x, k / g.rpt / g.ntn * 2 + (k % 4 >> 1)));
    return;
  }
  if (reloadable(x)) {
    for (int k = 0; k < nregs(e, in); k++) {
      int same = same_as(e, in, k);
      if (same >= 0) {
        out(e, "mov.%s %s, %s;", mov_type(rc), reg(e, in, k), reg(e, in, same));
        continue;
      }
      const char *fl = elem_index(e, in, k);
      const char *c[MAX_TILE_RANK], *sc[MAX_TILE_RANK];
      for (int d = 0; d < r; d++) c[d] = coord(e, fl, in->plan->phys, r, d);
      for (int d = 0; d < xr; d++) sc[d] = x->ty.dims[d] == 1 ? "0" : c[r - xr + d];
      reload_at(e, x, sc, reg(e, in, k));
    }
    return;
  }
  int64_t at;
  exchange(e, &x, 1, &at);
  if (r == 2 && xr == 2 && x->ty.dims[1] == 1 && e->V == 1 && !is_frag(e, in) && !is_rowfrag(e, in) &&
      in->plan->phys[1] % e->T == 0 && x->ty.dims[0] == in->ty.dims[0] && x->plan->phys[0] == in->plan->phys[0]) {
    /* a column over rows of one-element chunks that are whole rounds of the
     * threads (emit_long_rows' layout): register k lies in row k / cpr, the
     * same row in every thread, so each row's value is one shared load at a
     * fixed offset, copied to the row's other registers */
    int64_t cpr = in->plan->phys[1] / e->T;
    int eb = exch_bytes(x->ty.elem);
    for (int k = 0; k < nregs(e, in); k++) {
      if (k % cpr) {
        out(e, "mov.%s %s, %s;", mov_type(rc), reg(e, in, k), reg(e, in, k - k % cpr));
        continue;
      }
      out(e, "ld.shared.%s %s, [%%smem_+%lld];", eb == 8 ? "b64" : "b32", reg(e, in, k),
          (long long)(e->exch_off + at + (k / cpr) * x->plan->phys[1] * eb));
    }
    return;
  }
  for (int k = 0; k < nregs(e, in); k++) {
    int same = same_as(e, in, k);
    if (same >= 0) {
      out(e, "mov.%s %s, %s;", mov_type(rc), reg(e, in, k), reg(e, in, same));
      continue;
    }
    const char *fl = elem_index(e, in, k);
    const char *c[MAX_TILE_RANK], *sc[MAX_TILE_RANK];
    for (int d = 0; d < r; d++) c[d] = coord(e, fl, in->plan->phys, r, d);
    for (int d = 0; d < xr; d++) {
      const char *cd = c[r - xr + d];
      if (x->ty.dims[d] == 1) cd = "0";
      const char *m = tmp(e, RC_B32);
      out(e, "min.u32 %s, %s, %lld;", m, cd, (long long)(x->plan->phys[d] - 1));
      sc[d] = m;
    }
    exch_load(e, x, at, flat_of(e, sc, x->plan->phys, xr), reg(e, in, k));
  }
}

static void emit_transpose(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  if (reloadable(in)) {
    for (int k = 0; k < nregs(e, in); k++) {
      const char *fl = flat_index(e, k);
      const char *c[2] = {coord(e, fl, in->plan->phys, 2, 0), coord(e, fl, in->plan->phys, 2, 1)};
      reload_at(e, in, c, reg(e, in, k));
    }
    return;
  }
  int64_t at;
  exchange(e, &x, 1, &at);
  for (int k = 0; k < nregs(e, in); k++) {
    const char *fl = flat_index(e, k);
    const char *c0 = coord(e, fl, in->plan->phys, 2, 0), *c1 = coord(e, fl, in->plan->phys, 2, 1);
    const char *sc[2] = {tmp(e, RC_B32), tmp(e, RC_B32)};
    out(e, "min.u32 %s, %s, %lld;", sc[0], c1, (long long)(x->plan->phys[0] - 1));
    out(e, "min.u32 %s, %s, %lld;", sc[1], c0, (long long)(x->plan->phys[1] - 1));
    exch_load(e, x, at, flat_of(e, sc, x->plan->phys, 2), reg(e, in, k));
  }
}

static void emit_reduce_frag(Emitter *e, const TirInst *in);

static void emit_reduce(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  if (is_rowfrag(e, in)) return emit_reduce_frag(e, in);
  int64_t at;
  exchange(e, &x, 1, &at);
  int r = in->ty.rank;
  int64_t len = x->ty.dims[r - 1];
  RegClass rc = rc_of(in->ty.elem);
  const char *t = arith_type(in->ty.elem);
  for (int k = 0; k < nregs(e, in); k++) {
    const char *fl = elem_index(e, in, k);
    const char *c[MAX_TILE_RANK];
    for (int d = 0; d < r; d++) c[d] = coord(e, fl, in->plan->phys, r, d);
    const char *d = reg(e, in, k);
    if (in->aux == TRED_MAX)
      out(e, "mov.%s %s, %s;", mov_type(rc), d,
          rc == RC_F32 ? "0fFF800000" : rc == RC_F64 ? "0dFFF0000000000000" : rc == RC_B64 ? "0x8000000000000000" : "0x80000000");
    else out(e, "mov.%s %s, %s;", mov_type(rc), d, zero(rc));
    /* over the logical extent only: slack gives the identity */
    const char *j = tmp(e, RC_B32);
    int L = new_label(e);
    out(e, "mov.u32 %s, 0;", j);
    fprintf(e->body, "$Lred%d:\n", L);
    const char *sc[MAX_TILE_RANK];
    for (int q = 0; q < r - 1; q++) { /* rows past the input's physical shape are slack: stay inside it */
      const char *m = tmp(e, RC_B32);
      out(e, "min.u32 %s, %s, %lld;", m, c[q], (long long)(x->plan->phys[q] - 1));
      sc[q] = m;
    }
    sc[r - 1] = j;
    const char *v = tmp(e, rc_of(x->ty.elem));
    exch_load(e, x, at, flat_of(e, sc, x->plan->phys, r), v);
    if (rc_of(x->ty.elem) != rc) {
      const char *cv = tmp(e, rc);
      out(e, "cvt.%s.%s %s, %s;", rc == RC_B64 ? "s64" : "s32", arith_type(x->ty.elem), cv, v);
      v = cv;
    }
    if (in->aux == TRED_MAX) out(e, "max.%s %s, %s, %s;", t, d, d, v);
    else out(e, "add.%s %s, %s, %s;", t, d, d, v);
    out(e, "add.u32 %s, %s, 1;", j, j);
    const char *p = tmp(e, RC_PRED);
    out(e, "setp.lt.u32 %s, %s, %lld;", p, j, (long long)len);
    out(e, "@%s bra $Lred%d;", p, L);
    round_reg(e, in->ty.elem, d);
  }
}

/* Element (0, k) of a one-row A that every thread can read by itself: from
 * its shared buffer, or the scalar it was splat from. */
static const char *row_elem(Emitter *e, const TirInst *a, int64_t k) {
  if (a->op == TIR_SPLAT) return reg(e, a->args[0], 0);
  /* row 0 of the buffer: its address plus k elements, as an immediate */
  const PlanBuf *b = a->plan->buf;
  const char *r = tmp(e, rc_of(a->ty.elem));
  const char *ad = arena_printf(e->a, "%s+%lld", smem_of(e, b), (long long)(b->offset + k * sema_scalar_bytes(b->elem)));
  ld_shared(e, a->ty.elem, r, ad);
  return r;
}

/* A row times a matrix whose columns the threads already own: [1, K] x
 * [K, N] with B in registers and N a multiple of the thread count (the flat
 * distribution then gives thread t the columns t, t + T, ... with every k
 * of them). Each thread contracts its own columns: no exchange, no barrier.
 * A comes from shared memory (a staged view, read by all lanes at once) or
 * is a splat scalar. */
static bool emit_dot_columns(Emitter *e, const TirInst *in) {
  const TirInst *a = in->args[0], *b = in->args[1];
  int64_t TV = (int64_t)e->T * e->V;
  if (in->aux || a->ty.rank != 2 || a->plan->phys[0] != 1 || b->plan->res != RES_REG || is_frag(e, b) || b->plan->phys[1] % TV ||
      in->plan->phys[1] != b->plan->phys[1] || (a->op != TIR_SPLAT && (a->plan->res != RES_SHARED || a->plan->buf->swizzle)))
    return false;
  int per = (int)(b->plan->phys[1] / e->T); /* columns per thread */
  int64_t K = a->ty.dims[1];
  RegClass rc = rc_of(in->ty.elem);
  const char *t = arith_type(in->ty.elem);
  for (int j = 0; j < per; j++) out(e, "mov.%s %s, %s;", mov_type(rc), reg(e, in, j), zero(rc));
  /* an f32 row in shared memory is read four elements at a time where aligned */
  bool v4 = a->op != TIR_SPLAT && a->ty.elem == S_F32;
  const char *quad[4] = {0};
  for (int64_t k = 0; k < K; k++) {
    const char *av;
    int64_t off = v4 ? a->plan->buf->offset + k * 4 : 0;
    if (v4 && k % 4 == 0 && k + 4 <= K && off % 16 == 0) {
      for (int q = 0; q < 4; q++) quad[q] = tmp(e, RC_F32);
      out(e, "ld.shared.v4.f32 {%s, %s, %s, %s}, [%s+%lld];", quad[0], quad[1], quad[2], quad[3],
          smem_of(e, a->plan->buf), (long long)off);
    } else if (k % 4 == 0) {
      quad[0] = NULL;
    }
    av = quad[0] ? quad[k % 4] : row_elem(e, a, k);
    for (int j = 0; j < per; j++) {
      const char *bv = reg(e, b, (int)(k * per + j));
      if (rc == RC_F32 || rc == RC_F64) out(e, "fma.rn.%s %s, %s, %s, %s;", t, reg(e, in, j), av, bv, reg(e, in, j));
      else out(e, "mad.lo.s32 %s, %s, %s, %s;", reg(e, in, j), av, bv, reg(e, in, j));
    }
  }
  for (int j = 0; j < per; j++) round_reg(e, in->ty.elem, reg(e, in, j));
  return true;
}

/* ----------------------------------------------- tensor-core dot (mma) */

/* An operand the mma path can read with ldmatrix where it already is: a
 * staged buffer of its element type laid out as the value's physical
 * shape, with rows on 16-byte boundaries. */
static bool mma_direct(const TirInst *x) {
  const PlanBuf *b = x->plan->res == RES_SHARED ? x->plan->buf : NULL;
  if (!b || b->elem != x->ty.elem || b->rank != x->ty.rank || (b->pitch * elem_bytes_mem(b->elem)) % 16 || b->offset % 16)
    return false;
  for (int i = 0; i < b->rank; i++)
    if (b->dims[i] != x->plan->phys[i]) return false;
  return true;
}

/* Copies an operand held in registers (or anywhere operand() reads) into
 * the exchange area at `at` as 16-bit (or 8-bit) elements, row-major over
 * its folded rows, `pitch` elements a row: the layout ldmatrix reads. f16
 * and bf16 values are held exactly in f32 registers, 8-bit integers in
 * 32-bit ones, so the narrowing is exact. */
static void mma_copy(Emitter *e, const TirInst *x, int64_t at, int64_t pitch) {
  int64_t cols = x->plan->phys[x->ty.rank - 1], elems = phys_elems(x);
  for (int k = 0; k < nregs(e, x); k++) {
    const char *r = operand(e, x, k), *fl = elem_index(e, x, k), *pr = tmp(e, RC_PRED);
    const char *row = tmp(e, RC_B32), *col = tmp(e, RC_B32), *ad = tmp(e, RC_B32), *h = tmp(e, RC_B32);
    out(e, "setp.lt.u32 %s, %s, %lld;", pr, fl, (long long)elems);
    out(e, "shr.u32 %s, %s, %d;", row, fl, log2i(cols));
    out(e, "and.b32 %s, %s, %lld;", col, fl, (long long)(cols - 1));
    out(e, "mad.lo.u32 %s, %s, %lld, %s;", ad, row, (long long)pitch, col);
    if (elem_bytes_mem(x->ty.elem) == 1) { /* i8, u8: the register's low byte */
      out(e, "add.u32 %s, %s, %%smem_;", ad, ad);
      out(e, "@%s st.shared.u8 [%s+%lld], %s;", pr, ad, (long long)(e->exch_off + at), r);
      continue;
    }
    out(e, "mad.lo.u32 %s, %s, 2, %%smem_;", ad, ad);
    if (x->ty.elem == S_F16) {
      out(e, "{ .reg .b16 %%hs; cvt.rn.f16.f32 %%hs, %s; cvt.u32.u16 %s, %%hs; }", r, h);
    } else {
      out(e, "mov.b32 %s, %s;", h, r);
      out(e, "shr.u32 %s, %s, 16;", h, h);
    }
    out(e, "@%s st.shared.u16 [%s+%lld], %s;", pr, ad, (long long)(e->exch_off + at), h);
  }
}

/* Whether a dot takes the tensor-core path (emit_dot_mma): the planner
 * gave it the tensor-core shapes (f16 or bf16 operands, or an 8-bit
 * dot_t) and nothing in plan_dot_fallback sends it to FMA. */
static bool mma_fits(const Emitter *e, const TirInst *in) {
  return !in->plan->dot_fma && !plan_dot_fallback(e->a, e->p, in);
}

/* Whether every member of the class of tied values with layout L allows
 * a register layout other than the flat one: register values of one
 * physical shape (with a last dim of 1 for a row class), whole writes into
 * register vars only, and operations that work register by register or
 * ask elem_index. A fragment class (rows false) may hold tensor-core dots,
 * broadcasts and iotas; a row class (rows true) rowmax and rowsum of f32
 * fragment values with its rows. Returns a member, or NULL. */
static const TirInst *class_allows(const Emitter *e, const Layout *L, bool rows) {
  const TirFunc *f = e->f;
  const TirInst *first = NULL;
  for (int j = 0; j < f->ninsts; j++) {
    const TirInst *x = f->insts[j];
    if (x->op == TIR_WRITE && x->args[1]->plan && x->args[1]->plan->layout == L &&
        (x->nsubs || x->args[0]->plan->res != RES_REG))
      return NULL;
    if (x->op == TIR_WRITE && x->args[0]->plan && x->args[0]->plan->res == RES_REG && x->args[0]->plan->layout == L &&
        (x->nsubs || (x->args[1]->ty.rank && x->args[1]->plan->res != RES_REG)))
      return NULL;
    if (!x->plan || x->plan->res != RES_REG || x->plan->layout != L) continue;
    if (!first) first = x;
    /* operand() reads a staged tile operand at the flat index of register
     * k: an elementwise member must take its tiles from registers (a dot
     * reads its staged operands through ldmatrix, a broadcast its source
     * through the exchange area, in the source's own layout) */
    if (x->op != TIR_DOT && x->op != TIR_BROADCAST)
      for (int i = 0; i < x->nargs; i++)
        if (x->args[i] && x->args[i]->ty.rank && x->args[i]->plan && x->args[i]->plan->res != RES_REG) return NULL;
    int r = x->ty.rank;
    if (r < 2 || r != first->ty.rank || (rows && x->plan->phys[r - 1] != 1)) return NULL;
    for (int d = 0; d < r; d++)
      if (x->plan->phys[d] != first->plan->phys[d]) return NULL;
    bool ok;
    switch (x->op) {
    case TIR_DOT: ok = !rows && mma_fits(e, x); break;
    case TIR_REDUCE:
      ok = rows && is_frag(e, x->args[0]) && x->ty.elem == S_F32 && x->args[0]->ty.elem == S_F32 &&
           plan_folded_rows(x->args[0]) == plan_folded_rows(x) && (x->aux == TRED_MAX || x->aux == TRED_SUM);
      break;
    case TIR_BROADCAST: case TIR_IOTA: ok = !rows; break;
    case TIR_READ: ok = x->args[0]->plan->res == RES_REG; break;
    case TIR_BINARY: case TIR_UNARY: case TIR_MATH: case TIR_CONVERT: case TIR_SELECT: case TIR_SPLAT: case TIR_VAR:
      ok = true;
      break;
    default: ok = false;
    }
    if (!ok) return NULL;
  }
  return first;
}

/* The fragment layout for each tensor-core accumulator class whose every
 * member allows it (class_allows) and whose row tiles divide evenly among
 * the warps; then the row layout for each row class fed by a reduction of
 * such a class. */
static void decide_frags(Emitter *e) {
  const TirFunc *f = e->f;
  int W = e->T / 32;
  if (e->T % 32) return;
  for (int i = 0; i < f->ninsts; i++) {
    const TirInst *in = f->insts[i];
    const Layout *L = in->plan && in->plan->res == RES_REG ? in->plan->layout : NULL;
    if (!L || L->kind != LAYOUT_MMA_ACC) continue;
    bool seen = false;
    for (int j = 0; j < e->nfrag; j++) seen |= e->frag[j] == L;
    if (seen || e->nfrag == (int)(sizeof e->frag / sizeof e->frag[0])) continue;
    const TirInst *first = class_allows(e, L, false);
    if (!first) continue;
    int64_t M = plan_folded_rows(first), N = first->plan->phys[first->ty.rank - 1];
    if (M % 16 || N % 8 || (M / 16) % W) continue;
    e->frag[e->nfrag++] = L;
  }
  for (int i = 0; i < f->ninsts; i++) {
    const TirInst *in = f->insts[i];
    const Layout *L = in->plan && in->plan->res == RES_REG ? in->plan->layout : NULL;
    if (!L || L->kind != LAYOUT_SLICED || e->nrowfrag == (int)(sizeof e->rowfrag / sizeof e->rowfrag[0])) continue;
    bool parent = false, seen = false;
    for (int j = 0; j < e->nfrag; j++) parent |= e->frag[j] == L->parent;
    for (int j = 0; j < e->nrowfrag; j++) seen |= e->rowfrag[j] == L;
    if (!parent || seen) continue;
    const TirInst *first = class_allows(e, L, true);
    if (!first) continue;
    int64_t M = plan_folded_rows(first);
    if (M % 16 || (M / 16) % W) continue;
    e->rowfrag[e->nrowfrag++] = L;
  }
}

/* rowmax or rowsum of a fragment value into its row value: each thread
 * folds its registers of a row (over the logical columns only: slack gives
 * the identity), then the four lanes of the quad that share the row
 * exchange by shuffles. No shared memory, no barrier. */
static void emit_reduce_frag(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  FragGeom g = frag_geom(e, x);
  int64_t len = x->ty.dims[x->ty.rank - 1];
  bool mx = in->aux == TRED_MAX;
  const char *op = mx ? "max.f32" : "add.rn.f32", *id = mx ? "0fFF800000" : "0f00000000";
  for (int mi = 0; mi < g.tpm; mi++)
    for (int h = 0; h < 2; h++) {
      const char *d = reg(e, in, mi * 2 + h);
      out(e, "mov.f32 %s, %s;", d, id);
      for (int ni = 0; ni < g.ntn; ni++)
        for (int j = 0; j < g.NT / 8; j++)
          for (int c = 0; c < 2; c++) {
            const char *v = reg(e, x, (mi * g.ntn + ni) * g.rpt + j * 4 + h * 2 + c);
            int64_t col = (int64_t)ni * g.NT + j * 8 + c; /* plus 2 t */
            if (col + 6 >= len) { /* some lane's column may be slack */
              const char *cc = tmp(e, RC_B32), *p = tmp(e, RC_PRED), *sv = tmp(e, RC_F32);
              out(e, "add.u32 %s, %%ft2_, %lld;", cc, (long long)col);
              out(e, "setp.lt.u32 %s, %s, %lld;", p, cc, (long long)len);
              out(e, "selp.f32 %s, %s, %s, %s;", sv, v, id, p);
              v = sv;
            }
            out(e, "%s %s, %s, %s;", op, d, d, v);
          }
      for (int m = 1; m <= 2; m *= 2) {
        const char *o = tmp(e, RC_F32);
        out(e, "shfl.sync.bfly.b32 %s, %s, %d, 31, 0xffffffff;", o, d, m);
        out(e, "%s %s, %s, %s;", op, d, d, o);
      }
    }
}

/* x + dot(a, b) with the dot's only use that sum, x a fragment value of
 * the same class computed before the dot: the mma accumulates onto x
 * directly (the accumulators start at x, not 0) and the sum becomes a move
 * (emit_binary). Attention's acc * corr + dot(p, v). Marks the sum. */
static const TirInst *fused_addend(Emitter *e, const TirInst *dot) {
  if (!e->fused_add || e->replay || e->uses[dot->id] != 1) return NULL;
  for (int i = 0; i < e->f->ninsts; i++) {
    const TirInst *s = e->f->insts[i];
    if (s->op != TIR_BINARY || s->aux != '+' || (s->args[0] != dot && s->args[1] != dot)) continue;
    const TirInst *x = s->args[0] == dot ? s->args[1] : s->args[0];
    if (x == dot || !is_frag(e, x) || !is_frag(e, s) || x->plan->layout != dot->plan->layout || x->pos >= dot->pos ||
        s->ty.elem != S_F32)
      return NULL;
    e->fused_add[s->id] = true;
    return x;
  }
  return NULL;
}

/* A value that no barrier needs to publish before a dot reads it: one in
 * registers, a staged ring's tile (its iteration began with the barrier
 * after its copies), or a tile staged before the staged-ring loop being
 * emitted (every iteration begins with a barrier). */
static bool published(const Emitter *e, const TirInst *x) {
  if (x->plan->res != RES_SHARED) return true;
  if (x->plan->buf && x->plan->buf->stages) return true;
  return e->sring_loop && x->pos < e->sring_loop->pos;
}

/* A tensor-core dot whose a operand is in the fragment layout with
 * 16-column tiles, the result's rows and K columns: the accumulators of
 * its column tile s are, packed in pairs, the A fragment of k-step s
 * (FlashAttention's P kept in registers). */
static bool a_from_regs(const Emitter *e, const TirInst *dot) {
  const TirInst *a = dot->args[0];
  if ((a->ty.elem != S_F16 && a->ty.elem != S_BF16) || !is_frag(e, dot) || !is_frag(e, a)) return false;
  FragGeom ag = frag_geom(e, a);
  return ag.NT == 16 && ag.M == plan_folded_rows(dot) && ag.N == a->ty.dims[a->ty.rank - 1];
}

/* A conversion to f16 or bf16 whose one reader is a tensor-core dot that
 * packs it from registers into its A fragment: the packing (cvt.rn.*x2)
 * rounds, so the conversion need not round first. */
static bool packed_by_mma(const Emitter *e, const TirInst *cv) {
  if (cv->op != TIR_CONVERT || (cv->ty.elem != S_BF16 && cv->ty.elem != S_F16) || e->uses[cv->id] != 1) return false;
  for (int i = 0; i < e->f->ninsts; i++) {
    const TirInst *x = e->f->insts[i];
    if (x->op == TIR_DOT && x->args[0] == cv) return mma_fits(e, x) && a_from_regs(e, x);
  }
  return false;
}

/* ldmatrix row addresses in a swizzled operand (the layout of buf_addr): each lane's row r (its lane part; the rest a multiple of 8)
 * and its 16-byte chunk c + lp (c even, or lp 0) of the panel land at
 * chunk (c + lp) ^ rowx(r) = c ^ (lp ^ rowx(r)). So a lane keeps L, the
 * address of its row in panel 0, and X = (lp ^ rowx(r)) << 4, and an
 * ldmatrix at column byte cb (a constant) and constant row offset rc reads
 * at Y[c] + panel R S + rc S with Y[c] = L + ((c << 4) ^ X): one register
 * per chunk pair, made at first use, so the k-steps still take immediates. */
typedef struct SwzLane {
  int S;
  int64_t R;
  const char *L, *X, *Y[8];
} SwzLane;

static SwzLane swz_lane(Emitter *e, const PlanBuf *b, const char *row, const char *lp, const char *base) {
  SwzLane z = {.S = b->swizzle, .R = plan_buf_rows(b)};
  const char *L = tmp(e, RC_B32), *X = swz_rowx(e, z.S, row);
  out(e, "mad.lo.u32 %s, %s, %d, %s;", L, row, z.S, base);
  if (lp) out(e, "xor.b32 %s, %s, %s;", X, X, lp);
  out(e, "shl.b32 %s, %s, 4;", X, X);
  z.L = L, z.X = X;
  return z;
}

/* the operand of an ldmatrix at column byte cb and row offset rc */
static const char *swz_at(Emitter *e, SwzLane *z, int64_t cb, int64_t rc) {
  int c = (int)((cb % z->S) / 16);
  if (!z->Y[c]) {
    const char *y = tmp(e, RC_B32);
    out(e, "xor.b32 %s, %s, %d;", y, z->X, c << 4);
    out(e, "add.u32 %s, %s, %s;", y, y, z->L);
    z->Y[c] = y;
  }
  return arena_printf(e->a, "%s+%lld", z->Y[c], (long long)(cb / z->S * z->R * z->S + rc * z->S));
}

/* The A fragment of k-step s of row tile mi, packed in pairs from the
 * registers of a (a_from_regs: the accumulators of its column tile s),
 * into r[4]: rows g, g + 8 at columns 2t (+1), then 8 + 2t (+1). The
 * packing rounds (packed_by_mma). mma.sync and wgmma take the same. */
static void pack_a_regs(Emitter *e, const TirInst *a, FragGeom ag, int mi, int s, const char *ty, const char *r[4]) {
  int base = (mi * ag.ntn + s) * ag.rpt;
  for (int i = 0; i < 4; i++) {
    r[i] = tmp(e, RC_B32);
    out(e, "cvt.rn.%sx2.f32 %s, %s, %s;", ty, r[i], reg(e, a, base + 2 * i + 1), reg(e, a, base + 2 * i));
  }
}

/* A wgmma matrix descriptor (PTX ISA, "matrix descriptor") for a swizzled
 * buffer at shared address addr: the start address >> 4 (14 bits), the
 * leading and stride byte offsets >> 4, and the swizzle mode (1: 128B,
 * 2: 64B, 3: 32B). A k-step adds its byte offset >> 4 to the start: the
 * buffer lies below 2^18, so the field never carries. */
static const char *wg_desc(Emitter *e, const char *addr, int S, int64_t lbo, int64_t sbo) {
  const char *lo = tmp(e, RC_B32), *hi = tmp(e, RC_B32), *d = tmp(e, RC_B64);
  int mode = S == 128 ? 1 : S == 64 ? 2 : 3;
  out(e, "bfe.u32 %s, %s, 4, 14;", lo, addr);
  out(e, "or.b32 %s, %s, 0x%08llx;", lo, lo, (unsigned long long)((lbo >> 4) << 16));
  out(e, "mov.b32 %s, 0x%08llx;", hi, (unsigned long long)((sbo >> 4) | ((int64_t)mode << 30)));
  out(e, "mov.b64 %s, {%s, %s};", d, lo, hi);
  return d;
}

/* Whether a dot in the fragment layout goes to wgmma (sm_90a, Plan.wgmma):
 * f16 or bf16 operands into f32, whole warpgroups (the row tile mi of warp
 * w holds rows 16 (mi W + w): for each mi, the four warps of warpgroup g
 * hold the 64 rows from 16 (mi W + 4 g) in wgmma's m64 accumulator
 * layout, which is mma.sync's m16n8 tile for tile), b a swizzled buffer
 * (its panels are wgmma's canonical layouts: K-major for dot_t's [N, K],
 * MN-major for dot's [K, N]), a in registers or a swizzled buffer, and N a
 * multiple of 8 up to 256. */
static bool wgmma_fits(const Emitter *e, const TirInst *in, const PlanBuf *sa, const PlanBuf *sb, bool areg) {
  const TirInst *a = in->args[0];
  int64_t N = in->plan->phys[in->ty.rank - 1];
  return e->p->wgmma && (a->ty.elem == S_BF16 || a->ty.elem == S_F16) && in->ty.elem == S_F32 && e->T % 128 == 0 &&
         sb && (areg || sa) && N % 8 == 0 && N <= 256;
}

/* dot and dot_t on wgmma (wgmma_fits): per row block mi one
 * wgmma.mma_async.m64nNk16 a k-step, b (and a when staged) read by the
 * tensor cores from the swizzled panels through matrix descriptors, a
 * otherwise packed from its fragment registers as for mma.sync. The
 * accumulators are the result's registers, listed in wgmma's order (row
 * tile mi's column tiles in turn); the first k-step overwrites them
 * (scale-d false) unless the dot accumulates onto its fused addend. The
 * group is waited for at once: the stages it reads may be refilled after
 * the next barrier, and the registers are read next. Operands come from
 * tensor copies (the async proxy); the threads' fallback stores into a
 * swizzled buffer end with a proxy fence (emit_tma_load, sring_issue),
 * and so does the barrier after the threads' stores into a swizzled var
 * slot (publish_write). */
static void emit_dot_wgmma(Emitter *e, const TirInst *in, const PlanBuf *sa, const PlanBuf *sb, bool areg) {
  const TirInst *a = in->args[0], *b = in->args[1];
  bool tr = in->aux;
  int64_t K = a->ty.dims[a->ty.rank - 1], N = in->plan->phys[in->ty.rank - 1];
  int W = e->T / 32, eb = 2;
  FragGeom fg = frag_geom(e, in), ag = areg ? frag_geom(e, a) : (FragGeom){0};
  if ((!areg && !published(e, a)) || !published(e, b)) cta_sync(e);
  const char *ty = a->ty.elem == S_F16 ? "f16" : "bf16";
  /* b: K-major panels (dot_t) step 32 bytes along a row, a panel every
   * S / 32 steps; MN-major (dot, transposed) 16 rows of S bytes a step,
   * the N columns' panels R S apart (the leading byte offset) */
  int Sb = sb->swizzle;
  int64_t Rb = plan_buf_rows(sb);
  const char *bad = tmp(e, RC_B32);
  out(e, "add.u32 %s, %s, %lld;", bad, smem_of(e, sb), (long long)b->plan->buf->offset);
  const char *bd = wg_desc(e, bad, Sb, tr ? 16 : Rb * Sb, 8 * Sb);
  const char *adesc = NULL;
  int Sa = sa ? sa->swizzle : 0;
  int64_t Ra = sa ? plan_buf_rows(sa) : 0;
  if (sa) { /* a: K-major, the warpgroup's first row 64 g */
    const char *aad = tmp(e, RC_B32);
    out(e, "add.u32 %s, %s, %lld;", aad, smem_of(e, sa), (long long)a->plan->buf->offset);
    if (W > 4) {
      const char *g = tmp(e, RC_B32);
      out(e, "shr.u32 %s, %%tid_, 7;", g);
      out(e, "mad.lo.u32 %s, %s, %lld, %s;", aad, g, (long long)64 * Sa, aad);
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
      for (int s = 0; s < nk; s++) pack_a_regs(e, a, ag, mi, s, ty, ar[mi * nk + s]);
  }
  const TirInst *addend = fused_addend(e, in);
  if (addend)
    for (int k = 0; k < nregs(e, in); k++) out(e, "mov.f32 %s, %s;", reg(e, in, k), reg(e, addend, k));
  const char *acc = tmp(e, RC_PRED);
  out(e, "setp.ne.u32 %s, 0, 0;", acc); /* the first k-step's scale-d: D = A B */
  out(e, "wgmma.fence.sync.aligned;");
  int per = (int)(N / 2); /* accumulators per row block */
  size_t cap = (size_t)per * 16 + 256;
  char *dl = arena_alloc(e->a, cap);
  for (int s = 0; s < nk; s++) {
    int64_t kb = (int64_t)s * 16 * eb;
    int64_t boff = tr ? kb / Sb * Rb * Sb + kb % Sb : (int64_t)s * 16 * Sb;
    const char *bk = tmp(e, RC_B64);
    out(e, "add.s64 %s, %s, %lld;", bk, bd, (long long)(boff >> 4));
    for (int mi = 0; mi < fg.tpm; mi++) {
      size_t at = 0;
      for (int k = 0; k < per; k++)
        at += (size_t)snprintf(dl + at, cap - at, "%s%s", k ? ", " : "", reg(e, in, mi * fg.ntn * fg.rpt + k));
      const char *scale = s == 0 && !addend ? acc : "1";
      if (areg) {
        const char *const *r4 = ar[mi * nk + s];
        out(e, "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, {%s, %s, %s, %s}, %s, %s, 1, 1, %d;",
            (long long)N, ty, ty, dl, r4[0], r4[1], r4[2], r4[3], bk, scale, tr ? 0 : 1);
      } else {
        int64_t aoff = (int64_t)mi * W * 16 * Sa + kb / Sa * Ra * Sa + kb % Sa;
        const char *ak = tmp(e, RC_B64);
        out(e, "add.s64 %s, %s, %lld;", ak, adesc, (long long)(aoff >> 4));
        out(e, "wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {%s}, %s, %s, %s, 1, 1, 0, %d;", (long long)N, ty,
            ty, dl, ak, bk, scale, tr ? 0 : 1);
      }
    }
  }
  out(e, "wgmma.commit_group.sync.aligned;");
  out(e, "wgmma.wait_group.sync.aligned 0;");
}

/* dot and dot_t of f16 or bf16 operands into f32 on the tensor cores
 * (mma.sync.m16n8k16), and dot_t of 8-bit integers into i32 (m16n8k32, the
 * same ldmatrix rows read as bytes), with operands from shared memory
 * through ldmatrix (.trans for dot's [K, N] b). Staged operands are read
 * where they are; an a in the fragment layout is packed from its registers
 * (a_from_regs); other operands are first copied into the exchange area as
 * rows padded by 16 bytes, so that the eight rows of an ldmatrix matrix
 * fall in different banks. A result in the fragment layout is accumulated
 * in its own registers (row tiles w, w + W, ...); one in the flat layout
 * takes output tiles of 16 rows by 16 (or 8) columns in turn per warp and
 * goes through the exchange area. The whole logical K is unrolled. False,
 * for the FMA path, when mma_fits says no. */
static bool emit_dot_mma(Emitter *e, const TirInst *in) {
  const TirInst *a = in->args[0], *b = in->args[1];
  bool tr = in->aux; /* dot_t: b is [N, K] */
  int r = in->ty.rank;
  if (!mma_fits(e, in)) return false;
  int64_t K = a->ty.dims[a->ty.rank - 1], M = plan_folded_rows(in), N = in->plan->phys[r - 1];
  bool frag = is_frag(e, in);
  bool areg = a_from_regs(e, in);
  FragGeom ag = areg ? frag_geom(e, a) : (FragGeom){0};
  bool da = areg || mma_direct(a), db = mma_direct(b);
  /* swizzled operands (a tensor copy's tile) */
  const PlanBuf *sa = da && !areg && a->plan->buf->swizzle ? a->plan->buf : NULL;
  const PlanBuf *sb = db && b->plan->buf->swizzle ? b->plan->buf : NULL;
  if (frag && wgmma_fits(e, in, sa, sb, areg)) {
    emit_dot_wgmma(e, in, sa, sb, areg);
    in->plan->wgmma_n = (int)in->plan->phys[in->ty.rank - 1]; /* for the plan's printout (driver.c) */
    return true;
  }
  /* eb: operand bytes (2, or 1 for i8/u8 dot_t on m16n8k32); ce: elements
   * in 16 bytes, an ldmatrix row; a k-step is 32 bytes of K */
  int eb = elem_bytes_mem(a->ty.elem), ce = 16 / eb, kstep = 2 * ce;
  bool i8 = eb == 1;
  int64_t ka = a->plan->phys[r - 1], cb = b->plan->phys[1];
  int64_t pa = areg ? 0 : da ? a->plan->buf->pitch : ka + ce, pb = db ? b->plan->buf->pitch : cb + ce;
  int64_t at_a = 0, at_b = da ? 0 : (M * pa * eb + 15) / 16 * 16;
  int64_t at_c = at_b + (db ? 0 : (b->plan->phys[0] * pb * eb + 15) / 16 * 16);
  exch_need(e, at_c + (frag ? 0 : M * N * 4));
  /* staged operands complete; earlier readers of the exchange area done
   * (a result in the flat layout goes through it too) */
  if (!frag || !da || !db || (!areg && !published(e, a)) || !published(e, b)) cta_sync(e);
  if (!da) mma_copy(e, a, at_a, pa);
  if (!db) mma_copy(e, b, at_b, pb);
  if (!da || !db) cta_sync(e);
  const char *abase = da ? arena_printf(e->a, "%lld", areg ? 0LL : (long long)a->plan->buf->offset)
                         : arena_printf(e->a, "%lld", (long long)(e->exch_off + at_a));
  const char *bbase = db ? arena_printf(e->a, "%lld", (long long)b->plan->buf->offset)
                         : arena_printf(e->a, "%lld", (long long)(e->exch_off + at_b));
  int NT = N % 16 == 0 ? 16 : 8, W = e->T / 32;
  int64_t ntn = N / NT, ntiles = M / 16 * ntn;
  /* the mma: shape, accumulator and operand types */
  const char *ty = a->ty.elem == S_F16 ? "f16" : "bf16";
  char op[96];
  if (i8)
    snprintf(op, sizeof op, "mma.sync.aligned.m16n8k32.row.col.s32.%s.%s.s32", a->ty.elem == S_U8 ? "u8" : "s8",
             b->ty.elem == S_U8 ? "u8" : "s8");
  else
    snprintf(op, sizeof op, "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32", ty, ty);
  const char *zero_acc = i8 ? "0" : "0f00000000", *acc_mov = i8 ? "b32" : "f32";
  /* lane parts of the ldmatrix row addresses (bytes) */
  const char *lane = tmp(e, RC_B32), *warp = tmp(e, RC_B32), *l8 = tmp(e, RC_B32), *h8 = tmp(e, RC_B32),
             *h16 = tmp(e, RC_B32), *alane = tmp(e, RC_B32), *blane = tmp(e, RC_B32), *x = tmp(e, RC_B32);
  out(e, "and.b32 %s, %%tid_, 31;", lane);
  out(e, "shr.u32 %s, %%tid_, 5;", warp);
  out(e, "and.b32 %s, %s, 7;", l8, lane);
  out(e, "bfe.u32 %s, %s, 3, 1;", h8, lane);  /* (lane / 8) % 2 */
  out(e, "bfe.u32 %s, %s, 4, 1;", h16, lane); /* lane / 16 */
  /* swizzled operands: rows S bytes apart in their panel, the lane's
   * chunk part folded into SwzLane.X */
  SwzLane za = {0}, zb = {0};
  int64_t ra = sa ? sa->swizzle : pa * eb; /* bytes from one row to the next */
  if (!areg) { /* a: row (lane % 8) + 8 ((lane / 8) % 2), 16 bytes on for lane / 16 */
    out(e, "mad.lo.u32 %s, %s, 8, %s;", x, h8, l8);
    if (sa) {
      const char *ab = tmp(e, RC_B32);
      out(e, "add.u32 %s, %s, %s;", ab, smem_of(e, sa), abase);
      za = swz_lane(e, sa, x, h16, ab);
      alane = za.L;
    } else {
      out(e, "mul.lo.u32 %s, %s, %lld;", alane, x, (long long)pa);
      out(e, "mad.lo.u32 %s, %s, %d, %s;", alane, h16, ce, alane);
      out(e, "mad.lo.u32 %s, %s, %d, %s;", alane, alane, eb, da ? smem_of(e, a->plan->buf) : "%smem_");
      out(e, "add.u32 %s, %s, %s;", alane, alane, abase);
    }
  }
  const char *bb = NULL;
  if (sb) {
    bb = tmp(e, RC_B32);
    out(e, "add.u32 %s, %s, %s;", bb, smem_of(e, sb), bbase);
  }
  if (tr) { /* b [N, K]: row n = (lane % 8) + 8 (lane / 16), 16 bytes on for (lane / 8) % 2 */
    if (NT == 16) out(e, "mad.lo.u32 %s, %s, 8, %s;", x, h16, l8);
    else out(e, "mov.u32 %s, %s;", x, l8);
    if (sb) {
      zb = swz_lane(e, sb, x, h8, bb);
    } else {
      out(e, "mul.lo.u32 %s, %s, %lld;", blane, x, (long long)pb);
      out(e, "mad.lo.u32 %s, %s, %d, %s;", blane, h8, ce, blane);
    }
  } else { /* b [K, N], transposed by ldmatrix: row k = (lane % 8) + 8 ((lane / 8) % 2), column n = 8 (lane / 16) */
    out(e, "mad.lo.u32 %s, %s, 8, %s;", x, h8, l8);
    if (sb) {
      zb = swz_lane(e, sb, x, NT == 16 ? h16 : NULL, bb);
    } else {
      out(e, "mul.lo.u32 %s, %s, %lld;", blane, x, (long long)pb);
      if (NT == 16) out(e, "mad.lo.u32 %s, %s, 8, %s;", blane, h16, blane);
    }
  }
  if (sb) {
    blane = zb.L;
  } else {
    out(e, "mad.lo.u32 %s, %s, %d, %s;", blane, blane, eb, db ? smem_of(e, b->plan->buf) : "%smem_");
    out(e, "add.u32 %s, %s, %s;", blane, blane, bbase);
  }
  int64_t rb = sb ? sb->swizzle : pb * eb;
  if (frag) {
    /* the accumulators are the result's registers: row tiles w + mi W,
     * every column tile */
    FragGeom fg = frag_geom(e, in);
    const char *aw = tmp(e, RC_B32);
    if (!areg) out(e, "mad.lo.u32 %s, %s, %lld, %s;", aw, warp, (long long)(16 * ra), alane);
    za.L = aw;
    const TirInst *addend = fused_addend(e, in);
    for (int k = 0; k < nregs(e, in); k++)
      out(e, "mov.%s %s, %s;", acc_mov, reg(e, in, k), addend ? reg(e, addend, k) : zero_acc);
    /* k-step by k-step: the A fragments of every row tile the warp owns,
     * then each B fragment loaded once and used by all of them (a warp
     * with two row tiles reads K and V from shared memory half as often) */
    for (int64_t k0 = 0; k0 < K; k0 += kstep) {
      const char *(*ar)[4] = arena_alloc(e->a, sizeof *ar * (size_t)fg.tpm); /* [row tile][register] */
      for (int mi = 0; mi < fg.tpm; mi++) {
        if (areg) {
          pack_a_regs(e, a, ag, mi, (int)(k0 / 16), ty, ar[mi]);
        } else {
          for (int i = 0; i < 4; i++) ar[mi][i] = tmp(e, RC_B32);
          const char *ad = sa ? swz_at(e, &za, k0 * eb, (int64_t)mi * W * 16)
                              : arena_printf(e->a, "%s+%lld", aw, (long long)((int64_t)mi * W * 16 * ra + k0 * eb));
          out(e, "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%s, %s, %s, %s}, [%s];", ar[mi][0], ar[mi][1], ar[mi][2],
              ar[mi][3], ad);
        }
      }
      for (int ni = 0; ni < fg.ntn; ni++) {
        const char *br[4];
        for (int i = 0; i < 4; i++) br[i] = tmp(e, RC_B32);
        /* tr: rows ni NT on, column bytes k0 eb on; else rows k0 on, column bytes ni NT eb on */
        int64_t bcol = tr ? k0 * eb : (int64_t)ni * NT * eb, brow = tr ? (int64_t)ni * NT : k0;
        const char *bad = sb ? swz_at(e, &zb, bcol, brow) : arena_printf(e->a, "%s+%lld", blane, (long long)(brow * rb + bcol));
        if (NT == 16)
          out(e, "ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s];", tr ? "" : ".trans", br[0], br[1],
              br[2], br[3], bad);
        else
          out(e, "ldmatrix.sync.aligned.m8n8.x2%s.shared.b16 {%s, %s}, [%s];", tr ? "" : ".trans", br[0], br[1], bad);
        for (int mi = 0; mi < fg.tpm; mi++)
          for (int j = 0; j < NT / 8; j++) {
            int k = (mi * fg.ntn + ni) * fg.rpt + j * 4;
            const char *d[4] = {reg(e, in, k), reg(e, in, k + 1), reg(e, in, k + 2), reg(e, in, k + 3)};
            out(e, "%s {%s, %s, %s, %s}, {%s, %s, %s, %s}, {%s, %s}, {%s, %s, %s, %s};", op, d[0], d[1], d[2], d[3],
                ar[mi][0], ar[mi][1], ar[mi][2], ar[mi][3], br[2 * j], br[2 * j + 1], d[0], d[1], d[2], d[3]);
          }
      }
    }
    return true;
  }
  /* the accumulator's place in the result: row lane / 4 (and + 8), column 2 (lane % 4) */
  const char *clane = tmp(e, RC_B32), *g = tmp(e, RC_B32), *t2 = tmp(e, RC_B32);
  out(e, "shr.u32 %s, %s, 2;", g, lane);
  out(e, "and.b32 %s, %s, 3;", t2, lane);
  out(e, "shl.b32 %s, %s, 1;", t2, t2);
  out(e, "mad.lo.u32 %s, %s, %lld, %s;", clane, g, (long long)N, t2);
  out(e, "mad.lo.u32 %s, %s, 4, %%smem_;", clane, clane);
  out(e, "add.u32 %s, %s, %lld;", clane, clane, (long long)(e->exch_off + at_c));
  /* the tile loop: tile = warp, warp + W, ... */
  const char *tile = tmp(e, RC_B32), *mt = tmp(e, RC_B32), *nt = tmp(e, RC_B32), *aad = tmp(e, RC_B32),
             *bad = tmp(e, RC_B32), *cad = tmp(e, RC_B32), *p = tmp(e, RC_PRED);
  int L = new_label(e);
  out(e, "mov.u32 %s, %s;", tile, warp);
  out(e, "setp.ge.u32 %s, %s, %lld;", p, tile, (long long)ntiles);
  out(e, "@%s bra $Lmmaend%d;", p, L);
  fprintf(e->body, "$Lmma%d:\n", L);
  out(e, "shr.u32 %s, %s, %d;", mt, tile, log2i(ntn)); /* N and NT are powers of two */
  out(e, "and.b32 %s, %s, %lld;", nt, tile, (long long)(ntn - 1));
  out(e, "mad.lo.u32 %s, %s, %lld, %s;", aad, mt, (long long)(16 * ra), alane);
  SwzLane ta = za, tb = zb; /* this tile's lanes: fresh Y registers inside the loop */
  memset(ta.Y, 0, sizeof ta.Y), memset(tb.Y, 0, sizeof tb.Y);
  ta.L = aad;
  if (sb && !tr) { /* the column tile nt is a run-time column: its panel into L, its chunk into X */
    const char *cb = tmp(e, RC_B32), *pan = tmp(e, RC_B32);
    tb.X = tmp(e, RC_B32);
    out(e, "mul.lo.u32 %s, %s, %d;", cb, nt, NT * eb);
    out(e, "shr.u32 %s, %s, %d;", pan, cb, log2i(zb.S));
    out(e, "mad.lo.u32 %s, %s, %lld, %s;", bad, pan, (long long)(zb.R * zb.S), blane);
    out(e, "and.b32 %s, %s, %d;", cb, cb, zb.S - 1);
    out(e, "xor.b32 %s, %s, %s;", tb.X, zb.X, cb);
  } else {
    out(e, "mad.lo.u32 %s, %s, %lld, %s;", bad, nt, (long long)(tr ? NT * rb : NT * eb), blane);
  }
  tb.L = bad;
  const char *acc[8];
  for (int i = 0; i < 2 * (NT / 8) * 2; i++) {
    acc[i] = tmp(e, i8 ? RC_B32 : RC_F32);
    out(e, "mov.%s %s, %s;", acc_mov, acc[i], zero_acc);
  }
  for (int64_t k0 = 0; k0 < K; k0 += kstep) {
    const char *ar[4], *br[4];
    for (int i = 0; i < 4; i++) ar[i] = tmp(e, RC_B32), br[i] = tmp(e, RC_B32);
    const char *aq = sa ? swz_at(e, &ta, k0 * eb, 0) : arena_printf(e->a, "%s+%lld", aad, (long long)(k0 * eb));
    out(e, "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%s, %s, %s, %s}, [%s];", ar[0], ar[1], ar[2], ar[3], aq);
    const char *bq = sb ? swz_at(e, &tb, tr ? k0 * eb : 0, tr ? 0 : k0)
                        : arena_printf(e->a, "%s+%lld", bad, (long long)(tr ? k0 * eb : k0 * pb * eb));
    if (NT == 16)
      out(e, "ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s];", tr ? "" : ".trans", br[0], br[1],
          br[2], br[3], bq);
    else
      out(e, "ldmatrix.sync.aligned.m8n8.x2%s.shared.b16 {%s, %s}, [%s];", tr ? "" : ".trans", br[0], br[1], bq);
    for (int j = 0; j < NT / 8; j++)
      out(e, "%s {%s, %s, %s, %s}, {%s, %s, %s, %s}, {%s, %s}, {%s, %s, %s, %s};", op, acc[4 * j], acc[4 * j + 1],
          acc[4 * j + 2], acc[4 * j + 3], ar[0], ar[1], ar[2], ar[3], br[2 * j], br[2 * j + 1], acc[4 * j],
          acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
  }
  /* accumulators to the exchange area, row-major [M, N] f32 or i32: the flat order */
  out(e, "mul.lo.u32 %s, %s, %lld;", cad, mt, (long long)(16 * N * 4));
  out(e, "mad.lo.u32 %s, %s, %d, %s;", cad, nt, NT * 4, cad);
  out(e, "add.u32 %s, %s, %s;", cad, cad, clane);
  for (int j = 0; j < NT / 8; j++) {
    out(e, "st.shared.v2.%s [%s+%lld], {%s, %s};", acc_mov, cad, (long long)(j * 32), acc[4 * j], acc[4 * j + 1]);
    out(e, "st.shared.v2.%s [%s+%lld], {%s, %s};", acc_mov, cad, (long long)(j * 32 + 8 * N * 4), acc[4 * j + 2],
        acc[4 * j + 3]);
  }
  out(e, "add.u32 %s, %s, %d;", tile, tile, W);
  out(e, "setp.lt.u32 %s, %s, %lld;", p, tile, (long long)ntiles);
  out(e, "@%s bra $Lmma%d;", p, L);
  fprintf(e->body, "$Lmmaend%d:\n", L);
  cta_sync(e);
  int64_t elems = phys_elems(in);
  for (int k = 0; k < nregs(e, in); k++) {
    const char *fl = flat_index(e, k);
    out(e, "min.u32 %s, %s, %lld;", fl, fl, (long long)(elems - 1));
    exch_load(e, in, at_c, fl, reg(e, in, k));
  }
  return true;
}

/* dot and dot_t: each thread computes its output elements over the logical
 * contraction, reading operands from their shared buffers or from the
 * exchange area. */
static void emit_dot(Emitter *e, const TirInst *in) {
  if (emit_dot_mma(e, in)) return;
  if (emit_dot_columns(e, in)) return;
  const TirInst *a = in->args[0], *b = in->args[1];
  const TirInst *src[2];
  int nsrc = 0;
  if (a->plan->res != RES_SHARED) src[nsrc++] = a;
  if (b->plan->res != RES_SHARED) src[nsrc++] = b;
  int64_t at[2] = {0, 0};
  if (nsrc) exchange(e, src, nsrc, at);
  else cta_sync(e); /* staged operands: their stores are complete (planned barriers cover it) */
  int64_t at_a = a->plan->res == RES_SHARED ? -1 : at[0];
  int64_t at_b = b->plan->res == RES_SHARED ? -1 : at[nsrc - 1];
  int r = in->ty.rank;
  int64_t K = a->ty.dims[a->ty.rank - 1];
  RegClass rc = rc_of(in->ty.elem);
  const char *t = arith_type(in->ty.elem);
  for (int k = 0; k < nregs(e, in); k++) {
    const char *fl = elem_index(e, in, k);
    const char *c[MAX_TILE_RANK];
    for (int d = 0; d < r; d++) c[d] = coord(e, fl, in->plan->phys, r, d);
    const char *acc = reg(e, in, k);
    out(e, "mov.%s %s, %s;", mov_type(rc), acc, zero(rc));
    const char *kk = tmp(e, RC_B32);
    int L = new_label(e);
    out(e, "mov.u32 %s, 0;", kk);
    fprintf(e->body, "$Ldot%d:\n", L);
    /* a[.., m, kk] */
    const char *ac[MAX_TILE_RANK];
    for (int d = 0; d < r - 1; d++) {
      const char *m = tmp(e, RC_B32);
      out(e, "min.u32 %s, %s, %lld;", m, c[d], (long long)(a->plan->phys[d] - 1));
      ac[d] = m;
    }
    ac[r - 1] = kk;
    const char *n = tmp(e, RC_B32);
    out(e, "min.u32 %s, %s, %lld;", n, c[r - 1], (long long)(b->plan->phys[in->aux ? 0 : 1] - 1));
    const char *bc[2] = {in->aux ? n : kk, in->aux ? kk : n};
    const char *va = tmp(e, rc_of(a->ty.elem)), *vb = tmp(e, rc_of(b->ty.elem));
    if (at_a < 0) ld_shared(e, a->ty.elem, va, buf_addr(e, a->plan->buf, ac));
    else exch_load(e, a, at_a, flat_of(e, ac, a->plan->phys, a->ty.rank), va);
    if (at_b < 0) ld_shared(e, b->ty.elem, vb, buf_addr(e, b->plan->buf, bc));
    else exch_load(e, b, at_b, flat_of(e, bc, b->plan->phys, 2), vb);
    if (rc == RC_F32 || rc == RC_F64) {
      if (rc_of(a->ty.elem) != rc) { /* f32 operands of an f64 dot were joined already */
        const char *x = tmp(e, rc), *y = tmp(e, rc);
        out(e, "cvt.f64.f32 %s, %s;", x, va);
        out(e, "cvt.f64.f32 %s, %s;", y, vb);
        va = x, vb = y;
      }
      out(e, "fma.rn.%s %s, %s, %s, %s;", t, acc, va, vb, acc);
    } else {
      out(e, "mad.lo.s32 %s, %s, %s, %s;", acc, va, vb, acc);
    }
    out(e, "add.u32 %s, %s, 1;", kk, kk);
    const char *p = tmp(e, RC_PRED);
    out(e, "setp.lt.u32 %s, %s, %lld;", p, kk, (long long)K);
    out(e, "@%s bra $Ldot%d;", p, L);
    round_reg(e, in->ty.elem, acc);
  }
}

/* A sub-tile or an element of a tile value. */
static void emit_extract(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  bool shared = x->plan->res == RES_SHARED;
  int64_t at = 0;
  if (!shared) exchange(e, &x, 1, &at);
  int xr = x->ty.rank;
  for (int k = 0; k < nregs(e, in); k++) {
    const char *fl = in->ty.rank ? elem_index(e, in, k) : "0";
    const char *c[MAX_TILE_RANK], *wc[MAX_TILE_RANK];
    int j = 0;
    for (int i = 0; i < in->nsubs; i++) {
      const char *start = reg(e, in->subs[i].start, 0);
      const char *w = tmp(e, RC_B32);
      if (in->subs[i].point) {
        out(e, "mov.b32 %s, %s;", w, start);
      } else {
        c[j] = coord(e, fl, in->plan->phys, in->ty.rank, j);
        out(e, "add.s32 %s, %s, %s;", w, start, c[j]);
        j++;
      }
      out(e, "min.u32 %s, %s, %lld;", w, w, (long long)(x->plan->phys[i] - 1)); /* stays inside the tile */
      wc[i] = w;
    }
    const char *d = reg(e, in, k);
    if (shared) ld_shared(e, x->ty.elem, d, buf_addr(e, x->plan->buf, wc));
    else exch_load(e, x, at, flat_of(e, wc, x->plan->phys, xr), d);
  }
}

/* The barrier after a write into a shared slot, which readers wait for;
 * stores into a swizzled slot (a tensor copy's, which wgmma reads through
 * the async proxy) are fenced first (cta_sync_why). */
static void publish_write(Emitter *e, const TirInst *slot) {
  if (slot->plan->res != RES_SHARED) return;
  e->proxy_pending |= slot->plan->buf->swizzle != 0;
  cta_sync(e);
}

static void emit_write(Emitter *e, const TirInst *in) {
  const TirInst *slot = in->args[0], *v = in->args[1];
  bool shared = slot->plan->res == RES_SHARED;
  if (!in->nsubs && shared && v->op == TIR_LOAD && v->plan->buf == slot->plan->buf) return; /* the load staged it there */
  /* a tile copied by cp.async may still be landing, chunks of it owned by
   * other threads than the elements this write stores: all wait, then write */
  if (shared && e->async_pending) cta_sync(e);
  if (!in->nsubs) {
    if (shared) cta_sync(e); /* others may still read the old contents */
    for (int k = 0; k < nregs(e, slot); k++) {
      const char *r = operand(e, v, k);
      if (!shared) {
        out(e, "mov.%s %s, %s;", mov_type(rc_of(slot->ty.elem)), reg(e, slot, k), r);
        continue;
      }
      const char *fl = elem_index(e, slot, k);
      const char *pr = tmp(e, RC_PRED);
      out(e, "setp.lt.u32 %s, %s, %lld;", pr, fl, (long long)phys_elems(slot));
      const char *c[MAX_TILE_RANK];
      for (int d = 0; d < slot->ty.rank; d++) c[d] = coord(e, fl, slot->plan->phys, slot->ty.rank, d);
      st_mem(e, "shared", slot->ty.elem, buf_addr(e, slot->plan->buf, c), r, pr);
    }
    publish_write(e, slot);
    return;
  }
  /* a sub-tile: each slot element inside the region takes the value's
   * element at its relative coordinates, read from the exchange area */
  int64_t at = 0;
  if (v->ty.rank) exchange(e, &v, 1, &at);
  int sr = slot->ty.rank;
  for (int k = 0; k < nregs(e, slot); k++) {
    const char *fl = elem_index(e, slot, k);
    const char *inside = tmp(e, RC_PRED);
    out(e, "setp.lt.u32 %s, %s, %lld;", inside, fl, (long long)phys_elems(slot));
    const char *c[MAX_TILE_RANK], *rel[MAX_TILE_RANK];
    int j = 0;
    for (int i = 0; i < sr; i++) {
      c[i] = coord(e, fl, slot->plan->phys, sr, i);
      const char *start = reg(e, in->subs[i].start, 0);
      const char *off = tmp(e, RC_B32), *p = tmp(e, RC_PRED);
      out(e, "sub.s32 %s, %s, %s;", off, c[i], start);
      /* inside when 0 <= off < len (unsigned compare covers both) */
      out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", p, off, (long long)in->subs[i].len, inside);
      out(e, "mov.pred %s, %s;", inside, p);
      if (!in->subs[i].point) {
        const char *m = tmp(e, RC_B32);
        out(e, "min.u32 %s, %s, %lld;", m, off, (long long)(v->ty.rank ? v->plan->phys[j] - 1 : 0));
        rel[j++] = m;
      }
    }
    const char *val = tmp(e, rc_of(slot->ty.elem));
    if (v->ty.rank) exch_load(e, v, at, flat_of(e, rel, v->plan->phys, v->ty.rank), val);
    else out(e, "mov.%s %s, %s;", mov_type(rc_of(slot->ty.elem)), val, reg(e, v, 0));
    if (!shared) {
      out(e, "@%s mov.%s %s, %s;", inside, mov_type(rc_of(slot->ty.elem)), reg(e, slot, k), val);
    } else {
      st_mem(e, "shared", slot->ty.elem, buf_addr(e, slot->plan->buf, c), val, inside);
    }
  }
  publish_write(e, slot);
}

/* Register tiles are unrolled per thread: past this many elements a thread
 * the code would be huge and spill; such tiles wait for layouts that keep
 * them in shared memory or tensor-core fragments. */
enum { MAX_REGS_PER_VALUE = 1024 };

/* Register-only scalar work: it touches no memory and no tile. */
static bool scalar_arith(const TirInst *in) {
  if (in->ty.rank) return false;
  switch (in->op) {
  case TIR_CONST: case TIR_PARAM: case TIR_DIM: case TIR_CTX: case TIR_UNARY: case TIR_BINARY: case TIR_MATH:
  case TIR_CONVERT: case TIR_SELECT:
    for (int i = 0; i < in->nargs; i++)
      if (in->args[i] && in->args[i]->ty.rank) return false;
    return true;
  default: return false;
  }
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
static void emit_arrive(Emitter *e, const TirInst *in) {
  const char *g[MAX_TENSOR_RANK];
  for (int i = 0; i < in->nsubs; i++) g[i] = reg(e, in->subs[i].start, 0);
  const char *ad = tensor_addr(e, in->aux, g), *n = reg(e, in->args[0], 0);
  const char *t0 = tmp(e, RC_PRED), *go = tmp(e, RC_PRED), *last = tmp(e, RC_PRED), *any = tmp(e, RC_PRED);
  const char *bound = tmp(e, RC_B32), *old = tmp(e, RC_B32);
  out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  out(e, "fence.acq_rel.gpu;");
  cta_sync_why(e, " // arrive: the CTA's stores before its arrival");
  /* a count below 1 never arrives, nor does a counter outside its tensor
   * (masked as loads and stores are): nothing is counted */
  out(e, "setp.ge.and.s32 %s, %s, 1, %s;", go, n, t0);
  for (int i = 0; i < in->nsubs; i++) {
    const char *p = tmp(e, RC_PRED);
    out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", p, g[i], in->aux, i, go);
    go = p;
  }
  out(e, "sub.s32 %s, %s, 1;", bound, n);
  out(e, "mov.u32 %s, 0;", old);
  out(e, "@%s atom.acq_rel.gpu.global.inc.u32 %s, [%s], %s;", go, old, ad, bound);
  out(e, "setp.eq.and.u32 %s, %s, %s, %s;", last, old, bound, go);
  if (e->p->producer) out(e, "bar.red.or.pred %s, 1, %d, %s;", any, e->T, last);
  else out(e, "bar.red.or.pred %s, 0, %s;", any, last);
  out(e, "@%s fence.acq_rel.gpu;", any);
  /* and for reads through the async proxy (a ring's bulk copies of the
   * partials) after it */
  if (e->sm90) out(e, "@%s fence.proxy.async.global;", any);
  out(e, "selp.u32 %s, 1, 0, %s;", reg(e, in, 0), any);
}

static void emit_inst(Emitter *e, const TirInst *in) {
  if (e->failed) return;
  /* a branch or loop may skip the barrier that would wait for copies in
   * flight: wait before entering one */
  if (in->op == TIR_IF || in->op == TIR_FOR || in->op == TIR_WHILE) async_wait(e);
  if (in->ty.rank && in->plan->res != RES_SHARED && nregs(e, in) > MAX_REGS_PER_VALUE)
    return unsupported(e, in, arena_printf(e->a, "a register tile of %lld elements is %d per thread with %d threads "
                                                 "(at most %d): use smaller tiles or more threads",
                                           (long long)phys_elems(in), nregs(e, in), e->T, MAX_REGS_PER_VALUE));
  /* A planned barrier waits past scalar arithmetic (a staged load's
   * subscripts) to the staged load, which places it after its global
   * reads (emit_stage_rows); anything else takes it first. */
  if (!e->replay && in->pos < e->f->ninsts && e->barrier_before[in->pos]) e->sync_pending = true;
  if (e->sync_pending && !(in->op == TIR_LOAD && in->plan->res == RES_SHARED) && !scalar_arith(in)) emit_pending_sync(e);
  if (in->op == TIR_FOR || in->op == TIR_WHILE || in->op == TIR_IF) flush_unpack(e, NULL);
  if (!fusable_convert(e, in))
    for (int i = 0; i < in->nargs; i++)
      if (in->args[i]) flush_unpack(e, in->args[i]);
  if (in->op != TIR_STORE && in->op != TIR_WRITE && in->op != TIR_IF && in->op != TIR_WHILE && !e->replay) declare_value(e, in);
  int n = nregs(e, in);
  const char *d0 = reg(e, in, 0);
  RegClass rc = rc_of(in->ty.elem);
  switch (in->op) {
  case TIR_CONST:
    if (rc == RC_F32) {
      float f = (float)in->fval;
      uint32_t bits;
      memcpy(&bits, &f, 4);
      out(e, "mov.b32 %s, 0x%08x;", d0, bits);
      round_reg(e, in->ty.elem, d0);
    } else if (rc == RC_F64) {
      uint64_t bits;
      double v = in->fval;
      memcpy(&bits, &v, 8);
      out(e, "mov.b64 %s, 0x%016llx;", d0, (unsigned long long)bits);
    } else if (rc == RC_B64) {
      out(e, "mov.b64 %s, %lld;", d0, (long long)in->ival);
    } else {
      out(e, "mov.b32 %s, %d;", d0, (int32_t)in->ival);
      round_reg(e, in->ty.elem, d0);
    }
    break;
  case TIR_PARAM: {
    const char *pt = in->ty.elem == S_F64 ? "f64" : rc == RC_F32 ? "f32" : in->ty.elem == S_I64 ? "s64" : "s32";
    out(e, "ld.param.%s %s, [%s];", pt, d0, pname(in->aux, "p"));
    round_reg(e, in->ty.elem, d0);
    break;
  }
  case TIR_DIM: out(e, "mov.b32 %s, %%ext32_%d_%d;", d0, in->aux, in->aux2); break;
  case TIR_CTX: {
    static const char *sr[] = {"%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z"};
    out(e, "mov.u32 %s, %s;", d0, sr[in->aux]);
    break;
  }
  case TIR_UNARY:
    for (int k = 0; k < n; k++) {
      const char *a = operand(e, in->args[0], k), *d = reg(e, in, k);
      if (in->aux == '-') out(e, "neg.%s %s, %s;", arith_type(in->ty.elem)[0] == 'u' ? "s32" : arith_type(in->ty.elem), d, a);
      else if (in->aux == '!') out(e, "xor.b32 %s, %s, 1;", d, a);
      else out(e, "not.%s %s, %s;", rc == RC_B64 ? "b64" : "b32", d, a);
      round_reg(e, in->ty.elem, d);
    }
    break;
  case TIR_BINARY: emit_binary(e, in); break;
  case TIR_MATH: emit_math(e, in); break;
  case TIR_CONVERT: emit_convert(e, in); break;
  case TIR_SELECT:
    for (int k = 0; k < n; k++) {
      const char *c = operand(e, in->args[0], k), *a = operand(e, in->args[1], k), *b = operand(e, in->args[2], k);
      const char *p = tmp(e, RC_PRED);
      out(e, "setp.ne.u32 %s, %s, 0;", p, c);
      out(e, "selp.%s %s, %s, %s, %s;", mov_type(rc), reg(e, in, k), a, b, p);
    }
    break;
  case TIR_SPLAT:
    for (int k = 0; k < n; k++) out(e, "mov.%s %s, %s;", mov_type(rc), reg(e, in, k), reg(e, in->args[0], 0));
    break;
  case TIR_BROADCAST: emit_broadcast(e, in); break;
  case TIR_IOTA:
    for (int k = 0; k < n; k++) {
      const char *c = is_frag(e, in) ? frag_coord(e, in, k, in->aux)
                                     : coord(e, elem_index(e, in, k), in->plan->phys, in->ty.rank, in->aux);
      out(e, "mov.b32 %s, %s;", reg(e, in, k), c);
    }
    break;
  case TIR_REDUCE: emit_reduce(e, in); break;
  case TIR_DOT: emit_dot(e, in); break;
  case TIR_TRANSPOSE: emit_transpose(e, in); break;
  case TIR_LOAD: emit_load(e, in); break;
  case TIR_STORE: emit_store(e, in); break;
  case TIR_ARRIVE: emit_arrive(e, in); break;
  case TIR_EXTRACT: emit_extract(e, in); break;
  case TIR_VAR:
    /* a register slot starts undefined; a shared one lives in its buffer */
    break;
  case TIR_READ: {
    const TirInst *slot = in->args[0];
    if (slot->plan->res == RES_SHARED && in->plan->res == RES_SHARED) break; /* read from the buffer at use */
    for (int k = 0; k < n; k++) out(e, "mov.%s %s, %s;", mov_type(rc), reg(e, in, k), operand(e, slot, k));
    break;
  }
  case TIR_WRITE: emit_write(e, in); break;
  case TIR_FOR: emit_for(e, in); break;
  case TIR_WHILE: {
    int L = new_label(e);
    const char *p = tmp(e, RC_PRED);
    fprintf(e->body, "$Lwhile%d:\n", L);
    emit_block(e, &in->cond);
    async_wait(e); /* the exit below skips the body's barriers */
    out(e, "setp.eq.u32 %s, %s, 0;", p, reg(e, in->cond_value, 0));
    out(e, "@%s bra $Lwend%d;", p, L);
    emit_block(e, &in->body);
    async_wait(e);
    out(e, "bra.uni $Lwhile%d;", L);
    fprintf(e->body, "$Lwend%d:\n", L);
    break;
  }
  case TIR_IF: {
    int L = new_label(e);
    const char *p = tmp(e, RC_PRED);
    out(e, "setp.eq.u32 %s, %s, 0;", p, reg(e, in->args[0], 0));
    out(e, "@%s bra $Lelse%d;", p, L);
    emit_block(e, &in->body);
    async_wait(e); /* copies of one branch must not wait on a barrier of the other */
    out(e, "bra.uni $Lfi%d;", L);
    fprintf(e->body, "$Lelse%d:\n", L);
    emit_block(e, &in->body2);
    async_wait(e);
    fprintf(e->body, "$Lfi%d:\n", L);
    break;
  }
  }
}

/* ------------------------------------------------------------ @pipeline
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
static bool *subscript_chains(Emitter *e, const TirInst *loop, const TirInst **loads, int n, bool bounds) {
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
static const char *replay_subscripts(Emitter *e, const TirInst *loop, const TirInst **loads, int n, const char *j) {
  const char *iv = reg(e, loop, 0), *saved = tmp(e, RC_B32);
  out(e, "mov.b32 %s, %s;", saved, iv);
  out(e, "mov.b32 %s, %s;", iv, j);
  bool *need = subscript_chains(e, loop, loads, n, false);
  e->replay = true;
  for (int k = 0; k < loop->body.len; k++)
    if (need[loop->body.insts[k]->id] && !loop->body.insts[k]->ty.rank) emit_inst(e, loop->body.insts[k]);
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
  int eb = elem_bytes_mem(ld->ty.elem), i0 = -1, j = 0;
  const char *ok = tmp(e, RC_PRED), *g[MAX_TENSOR_RANK];
  out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int i = 0; i < ld->nsubs; i++) {
    const char *st = reg(e, ld->subs[i].start, 0);
    g[i] = st;
    const char *p = tmp(e, RC_PRED), *last = tmp(e, RC_B32);
    if (ld->subs[i].point) {
      out(e, "setp.lt.and.u32 %s, %s, %%ext32_%d_%d, %s;", p, st, ld->aux, i, ok);
    } else {
      if (i0 < 0) i0 = i;
      int64_t ph = ld->plan->phys[j++];
      /* 0 <= start and start + phys <= extent */
      out(e, "add.s32 %s, %s, %lld;", last, st, (long long)ph);
      out(e, "setp.ge.and.s32 %s, %s, 0, %s;", p, st, ok);
      out(e, "setp.le.and.s32 %s, %s, %%ext32_%d_%d, %s;", ok, last, ld->aux, i, p);
      continue;
    }
    out(e, "mov.pred %s, %s;", ok, p);
  }
  const char *ad, *pitch;
  return aligned16(e, ld->aux, eb, g, i0, ok, &ad, &pitch);
}

static int64_t ring_stage_bytes(const TirInst *ld) {
  return ld->plan->phys[0] * ld->plan->phys[1] * elem_bytes_mem(ld->ty.elem);
}

/* first: 0 for the stage's "full" mbarrier, stages for its "empty" one */
static const char *mbar_addr(Emitter *e, const PlanBuf *mbar, const char *stage, int first) {
  const char *a = tmp(e, RC_B32);
  out(e, "mad.lo.u32 %s, %s, 8, %%smem_;", a, stage);
  out(e, "add.u32 %s, %s, %lld;", a, a, (long long)(mbar->offset + 8 * first));
  return a;
}

/* Thread 0 initialises n mbarriers at buffer mbar (one arrival each)
 * between two barriers: their bytes may have held other buffers. */
static void mbar_init(Emitter *e, const PlanBuf *mbar, int n, bool proxy_fence) {
  const char *t0 = tmp(e, RC_PRED);
  cta_sync(e);
  out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  for (int s = 0; s < n; s++) out(e, "@%s mbarrier.init.shared::cta.b64 [%%smem_+%lld], 1;", t0, (long long)(mbar->offset + 8 * s));
  out(e, "@%s fence.mbarrier_init.release.cluster;", t0);
  if (proxy_fence) out(e, "fence.proxy.async.shared::cta;");
  cta_sync(e);
}

/* After a barrier that every thread passed its last wait before: thread 0
 * invalidates the n mbarriers, and a barrier keeps their bytes from other
 * uses until then. */
static void mbar_inval(Emitter *e, const PlanBuf *mbar, int n) {
  const char *t0 = tmp(e, RC_PRED);
  out(e, "setp.eq.u32 %s, %%tid_, 0;", t0);
  for (int s = 0; s < n; s++) out(e, "@%s mbarrier.inval.shared::cta.b64 [%%smem_+%lld];", t0, (long long)(mbar->offset + 8 * s));
  cta_sync(e);
}

/* Waits on the mbarrier at bar for the parity bit `stage` of `phases`. */
static void mbar_wait(Emitter *e, const char *bar, const char *phases, const char *stage) {
  const char *par = tmp(e, RC_B32), *done = tmp(e, RC_PRED);
  out(e, "shr.u32 %s, %s, %s;", par, phases, stage);
  out(e, "and.b32 %s, %s, 1;", par, par);
  int L = new_label(e);
  fprintf(e->body, "$Lmw%d:\n", L);
  out(e, "mbarrier.try_wait.parity.shared::cta.b64 %s, [%s], %s;", done, bar, par);
  out(e, "@!%s bra $Lmw%d;", done, L);
}

/* flips bit `stage` of `phases` */
static void phase_flip(Emitter *e, const char *phases, const char *stage) {
  const char *b = tmp(e, RC_B32);
  out(e, "shl.b32 %s, 1, %s;", b, stage);
  out(e, "xor.b32 %s, %s, %s;", phases, phases, b);
}

/* Warp 0 issues the copies of the iteration whose loop value is in j (the
 * caller checked j < end) into stage pst; every thread advances pst. */
static void ring_issue(Emitter *e, const TirInst *loop, const TirInst **loads, int n, const char *j) {
  int L = new_label(e);
  const char *lane = e->p->producer ? "%plane_" : "%tid_"; /* the producer warp's lanes, or warp 0's */
  if (!e->p->producer) {
    const char *w0 = tmp(e, RC_PRED);
    out(e, "setp.ge.u32 %s, %%tid_, 32;", w0);
    out(e, "@%s bra $Lrs%d;", w0, L);
  }
  const char *saved = replay_subscripts(e, loop, loads, n, j);
  const char *elig[8], *tx = tmp(e, RC_B32);
  out(e, "mov.u32 %s, 0;", tx);
  for (int q = 0; q < n; q++) {
    elig[q] = ring_eligible(e, loads[q]);
    const char *t = tmp(e, RC_B32);
    out(e, "selp.u32 %s, %lld, 0, %s;", t, (long long)ring_stage_bytes(loads[q]), elig[q]);
    out(e, "add.u32 %s, %s, %s;", tx, tx, t);
  }
  const PlanBuf *mbar = loads[0]->plan->mbar;
  const char *bar = mbar_addr(e, mbar, e->pst, 0), *lane0 = tmp(e, RC_PRED), *state = tmp(e, RC_B64);
  out(e, "setp.eq.u32 %s, %s, 0;", lane0, lane);
  out(e, "@%s mbarrier.arrive.expect_tx.shared::cta.b64 %s, [%s], %s;", lane0, state, bar, tx);
  /* the stage's bytes were last read through the generic proxy */
  out(e, "fence.proxy.async.shared::cta;");
  out(e, "bar.warp.sync -1;");
  for (int q = 0; q < n; q++) {
    const TirInst *ld = loads[q];
    int eb = elem_bytes_mem(ld->ty.elem), i0 = 0;
    while (ld->subs[i0].point) i0++; /* the rows' subscript */
    int64_t p0 = ld->plan->phys[0], row = ld->plan->phys[1] * eb;
    int S = new_label(e);
    out(e, "@!%s bra $Lrq%d;", elig[q], S);
    const char *g[MAX_TENSOR_RANK];
    for (int i = 0; i < ld->nsubs; i++) g[i] = reg(e, ld->subs[i].start, 0);
    for (int64_t r0 = 0; r0 < p0; r0 += 32) {
      const char *r = tmp(e, RC_B32), *in = tmp(e, RC_PRED), *gr = tmp(e, RC_B32);
      out(e, "add.u32 %s, %s, %lld;", r, lane, (long long)r0);
      out(e, "setp.lt.u32 %s, %s, %lld;", in, r, (long long)p0);
      out(e, "add.s32 %s, %s, %s;", gr, g[i0], r);
      const char *gg[MAX_TENSOR_RANK];
      for (int i = 0; i < ld->nsubs; i++) gg[i] = i == i0 ? gr : g[i];
      const char *src = tensor_addr(e, ld->aux, gg), *dst = tmp(e, RC_B32);
      out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", dst, e->pst, (long long)ring_stage_bytes(ld));
      out(e, "mad.lo.u32 %s, %s, %lld, %s;", dst, r, (long long)row, dst);
      out(e, "add.u32 %s, %s, %lld;", dst, dst, (long long)ld->plan->ring->offset);
      out(e, "@%s cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%s], [%s], %lld, [%s];", in, dst,
          src, (long long)row, bar);
    }
    fprintf(e->body, "$Lrq%d:\n", S);
  }
  out(e, "mov.b32 %s, %s;", reg(e, loop, 0), saved);
  fprintf(e->body, "$Lrs%d:\n", L);
  const char *p = tmp(e, RC_PRED);
  out(e, "add.u32 %s, %s, 1;", e->pst, e->pst);
  out(e, "setp.eq.u32 %s, %s, %d;", p, e->pst, e->p->stages);
  out(e, "selp.u32 %s, 0, %s, %s;", e->pst, e->pst, p);
}

/* The consumer side of a ringed load, at its place in the body. */
static void emit_ring_load(Emitter *e, const TirInst *in) {
  const PlanBuf *mbar = in->plan->mbar;
  if (!e->waited) { /* the stage's mbarrier: all of this iteration's tiles */
    mbar_wait(e, mbar_addr(e, mbar, e->cst, 0), e->phase, e->cst);
    e->waited = true;
  }
  int V = e->V, eb = elem_bytes_mem(in->ty.elem), nk = nregs(e, in);
  int64_t p1 = in->plan->phys[1], TV = (int64_t)e->T * V, elems = phys_elems(in);
  bool wordy = V > 1 && eb <= 4 && V * eb >= 4 && TV % p1 == 0 && p1 % V == 0 && cols_contiguous(e, in);
  int nw = wordy ? V * eb / 4 : 0, chunks = nk / V;
  const char **w = wordy ? arena_alloc(e->a, sizeof(char *) * (size_t)(chunks * nw)) : NULL;
  for (int i = 0; i < chunks * nw; i++) w[i] = tmp(e, RC_B32);
  const char *ok = ring_eligible(e, in);
  int L = new_label(e);
  out(e, "@!%s bra $Lrp%d;", ok, L);
  const char *base = tmp(e, RC_B32);
  out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", base, e->cst, (long long)ring_stage_bytes(in));
  out(e, "add.u32 %s, %s, %lld;", base, base, (long long)in->plan->ring->offset);
  out(e, "mad.lo.u32 %s, %%tidv_, %d, %s;", base, eb, base); /* the dense tile: element f at f * eb */
  for (int c = 0; c < chunks; c++) {
    int64_t off = (int64_t)c * TV * eb;
    if (wordy) {
      const char **wc = w + c * nw;
      if (nw == 4) out(e, "ld.shared.v4.b32 {%s, %s, %s, %s}, [%s+%lld];", wc[0], wc[1], wc[2], wc[3], base, (long long)off);
      else if (nw == 2) out(e, "ld.shared.v2.b32 {%s, %s}, [%s+%lld];", wc[0], wc[1], base, (long long)off);
      else out(e, "ld.shared.b32 %s, [%s+%lld];", wc[0], base, (long long)off);
      continue;
    }
    for (int v = 0; v < V; v++) {
      int k = c * V + v;
      const char *r = reg(e, in, k), *fl = flat_index(e, k), *pin = tmp(e, RC_PRED);
      RegClass rc = rc_of(in->ty.elem);
      out(e, "mov.%s %s, %s;", mov_type(rc), r, zero(rc));
      out(e, "setp.lt.u32 %s, %s, %lld;", pin, fl, (long long)elems);
      int F = new_label(e);
      out(e, "@!%s bra $Lrf%d;", pin, F);
      ld_shared(e, in->ty.elem, r, arena_printf(e->a, "%s+%lld", base, (long long)(off + v * eb)));
      fprintf(e->body, "$Lrf%d:\n", F);
    }
  }
  out(e, "bra.uni $Lrj%d;", L);
  fprintf(e->body, "$Lrp%d:\n", L);
  if (wordy) {
    emit_load_rows(e, in, w);
  } else {
    if (!emit_load_rows(e, in, NULL)) emit_load_elements(e, in);
    flush_unpack(e, in);
  }
  fprintf(e->body, "$Lrj%d:\n", L);
  if (wordy) {
    if (e->npending == (int)(sizeof e->pending / sizeof e->pending[0])) flush_unpack(e, NULL);
    e->pending[e->npending++] = (struct Pending){in, w, nw, chunks};
  }
}

/* --prefetch: a register tile loaded straight into packed words (the
 * vector rows path of emit_load_rows_at) directly in the loop's body, its
 * subscripts computed from the loop value by scalar arithmetic only. */
static bool prefetchable(Emitter *e, const TirInst *loop, const TirInst *in) {
  if (in->op != TIR_LOAD || in->plan->res != RES_REG || in->plan->ring || in->ty.rank != 2) return false;
  int64_t p1 = in->plan->phys[1], TV = (int64_t)e->T * e->V;
  int spans = 0;
  for (int i = 0; i < in->nsubs; i++) spans += !in->subs[i].point;
  if (e->V < 2 || elem_bytes_mem(in->ty.elem) > 4 || TV % p1 || p1 % e->V || spans != 2 || !cols_contiguous(e, in))
    return false;
  if (tir_stores_to(&loop->body, in->aux)) return false; /* loading ahead would read before this iteration's store */
  const TirInst *one[1] = {in};
  bool *chain = subscript_chains(e, loop, one, 1, false);
  for (int k = 0; k < loop->body.len; k++) {
    const TirInst *x = loop->body.insts[k];
    if (chain[x->id] && !scalar_arith(x)) return false;
  }
  return true;
}

/* Loads the prefetched tiles for loop value j into their "next" words
 * (the subscripts' scalars replayed with the loop value set to j). */
static void prefetch_issue(Emitter *e, const TirInst *loop, const TirInst **loads, const char ***next, int n,
                           const char *j) {
  const char *saved = replay_subscripts(e, loop, loads, n, j);
  e->replay = true;
  for (int q = 0; q < n; q++) emit_load_rows_at(e, loads[q], next[q], NULL, NULL);
  e->replay = false;
  out(e, "mov.b32 %s, %s;", reg(e, loop, 0), saved);
}

/* The staged rings of a loop (plan.c): its staged loads whose buffers
 * have stage copies. */
static int sring_loads(const TirInst *loop, const TirInst **loads) {
  int n = 0;
  for (int k = 0; k < loop->body.len && n < 8; k++) {
    const TirInst *x = loop->body.insts[k];
    if (x->op == TIR_LOAD && x->plan->res == RES_SHARED && x->plan->buf && x->plan->buf->stages) loads[n++] = x;
  }
  return n;
}

/* Copies the staged rings' tiles of the iteration whose loop value is in j
 * into stage `stage` (a register), by cp.async where the tile allows and
 * by the threads' own loads and stores otherwise (emit_stage_async); the
 * caller commits the group. The buffers' bases are left at that stage. */
static void sring_issue(Emitter *e, const TirInst *loop, const TirInst **loads, int n, const char *j, const char *stage) {
  const char *saved = replay_subscripts(e, loop, loads, n, j);
  for (int q = 0; q < n; q++) {
    const PlanBuf *b = loads[q]->plan->buf;
    const char *base = tmp(e, RC_B32);
    out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", base, stage, (long long)b->stage_bytes);
    e->sbase[b->id] = base;
  }
  /* Tensor copies (plan: v->tma): thread 0 arms the stage's mbarrier with
   * the bytes of every copy whose map the runtime built and issues them;
   * with none built the arrival alone completes the phase. */
  const PlanBuf *mbar = NULL;
  for (int q = 0; q < n; q++)
    if (loads[q]->plan->tma) mbar = loads[q]->plan->mbar;
  if (mbar) {
    const char *tx = tmp(e, RC_B32), *t0 = tmp(e, RC_PRED), *st = tmp(e, RC_B64), *bar = mbar_addr(e, mbar, stage, 0);
    out(e, "mov.u32 %s, 0;", tx);
    for (int q = 0; q < n; q++) {
      if (!loads[q]->plan->tma) continue;
      const char *t = tmp(e, RC_B32), *ok = tmp(e, RC_PRED);
      out(e, "setp.ne.u32 %s, %%tmok%d, 0;", ok, loads[q]->plan->tma - 1);
      out(e, "selp.u32 %s, %lld, 0, %s;", t, (long long)tma_bytes(loads[q]), ok);
      out(e, "add.u32 %s, %s, %s;", tx, tx, t);
    }
    /* thread 0 alone, behind a branch: the copies' operands need no
     * per-thread predicates (which ptxas turns into loops over the lanes
     * that hold registers across them) */
    int I = new_label(e);
    out(e, "setp.ne.u32 %s, %%tid_, 0;", t0);
    out(e, "@%s bra $Lsri%d;", t0, I);
    /* the stage's bytes were last read through the generic proxy */
    out(e, "fence.proxy.async.shared::cta;");
    out(e, "mbarrier.arrive.expect_tx.shared::cta.b64 %s, [%s], %s;", st, bar, tx);
    for (int q = 0; q < n; q++) {
      const TirInst *ld = loads[q];
      if (!ld->plan->tma) continue;
      const char *go = tmp(e, RC_PRED), *dst = tmp(e, RC_B32);
      out(e, "setp.ne.u32 %s, %%tmok%d, 0;", go, ld->plan->tma - 1);
      out(e, "add.u32 %s, %s, %lld;", dst, smem_of(e, ld->plan->buf), (long long)ld->plan->buf->offset);
      tma_copies(e, ld, dst, bar, go);
    }
    fprintf(e->body, "$Lsri%d:\n", I);
  }
  e->ring_issue = true;
  for (int q = 0; q < n; q++) {
    const TirInst *ld = loads[q];
    if (!ld->plan->tma) {
      if (!emit_stage_async(e, ld)) emit_load_elements(e, ld);
      continue;
    }
    /* no map this launch: the threads' own loads, as a loop (a tensor the
     * map cannot describe is one cp.async cannot copy either) */
    int i0 = -1, i1 = -1, F = new_label(e);
    const char *g[MAX_TENSOR_RANK], *ok = tmp(e, RC_PRED), *a0, *step;
    out(e, "setp.ne.u32 %s, %%tmok%d, 0;", ok, ld->plan->tma - 1);
    out(e, "@%s bra $Lstf%d;", ok, F);
    for (int i = 0; i < ld->nsubs; i++) {
      g[i] = reg(e, ld->subs[i].start, 0);
      if (!ld->subs[i].point) *(i0 < 0 ? &i0 : &i1) = i;
    }
    aligned16(e, ld->aux, elem_bytes_mem(ld->ty.elem), g, i0, ok, &a0, &step);
    emit_stage_loop(e, ld, g, i0, i1, a0, step);
    if (ld->plan->buf->swizzle) out(e, "fence.proxy.async.shared::cta;"); /* for wgmma (emit_dot_wgmma) */
    fprintf(e->body, "$Lstf%d:\n", F);
  }
  e->ring_issue = false;
  out(e, "mov.b32 %s, %s;", reg(e, loop, 0), saved);
}

/* The loop value S - 1 iterations ahead of i, in *j, and a branch past the
 * issue that follows (to the label $L<prefix><returned number>) when it is
 * at or past the end. */
static int ahead_or_skip(Emitter *e, const char *i, const char *step, const char *end, int S, const char *prefix,
                         const char **j) {
  *j = tmp(e, RC_B32);
  const char *q = tmp(e, RC_PRED), *ahead = tmp(e, RC_B32);
  out(e, "mul.lo.s32 %s, %s, %d;", ahead, step, S - 1);
  out(e, "add.s32 %s, %s, %s;", *j, i, ahead);
  int K = new_label(e);
  out(e, "setp.ge.s32 %s, %s, %s;", q, *j, end);
  out(e, "@%s bra $L%s%d;", q, prefix, K);
  return K;
}

/* a stage register's step: x = x + 1 < S ? x + 1 : 0 */
static void stage_next(Emitter *e, const char *x, int S) {
  const char *q = tmp(e, RC_PRED);
  out(e, "add.u32 %s, %s, 1;", x, x);
  out(e, "setp.eq.u32 %s, %s, %d;", q, x, S);
  out(e, "selp.u32 %s, 0, %s, %s;", x, x, q);
}

static void emit_for(Emitter *e, const TirInst *in) {
  int L = new_label(e);
  const char *i = reg(e, in, 0), *p = tmp(e, RC_PRED);
  const char *end = reg(e, in->args[1], 0), *step = reg(e, in->args[2], 0);
  const TirInst *loads[8];
  int n = e->ring_loop ? 0 : ring_loads(in, loads); /* one ringed loop at a time: an inner loop's loads stay plain */
  const TirInst *sloads[8];
  int ns = e->ring_loop || e->sring_loop ? 0 : sring_loads(in, sloads);
  out(e, "mov.b32 %s, %s;", i, reg(e, in->args[0], 0));
  /* --prefetch: the next iteration's register tiles are loaded at the top
   * of this one, so their latency overlaps this iteration's work; the
   * first iteration's before the loop. One loop at a time. */
  const TirInst *pfl[8];
  const char **next[8];
  int npf = 0, onpf = e->npf;
  for (int k = 0; e->p->prefetch && !n && !e->npf && k < in->body.len && npf < 8; k++)
    if (prefetchable(e, in, in->body.insts[k])) pfl[npf++] = in->body.insts[k];
  for (int q = 0; q < npf; q++) {
    int nw = (e->V * elem_bytes_mem(pfl[q]->ty.elem) + 3) / 4, words = nw * (nregs(e, pfl[q]) / e->V);
    next[q] = arena_alloc(e->a, sizeof(char *) * (size_t)words);
    for (int w = 0; w < words; w++) next[q][w] = tmp(e, RC_B32);
  }
  if (npf) {
    int P = new_label(e);
    out(e, "setp.ge.s32 %s, %s, %s;", p, i, end);
    out(e, "@%s bra $Lpf%d;", p, P);
    prefetch_issue(e, in, pfl, next, npf, i);
    fprintf(e->body, "$Lpf%d:\n", P);
  }
  const TirInst *outer = e->ring_loop;
  const char *ocst = e->cst, *opst = e->pst, *oph = e->phase;
  bool owaited = e->waited;
  int S = e->p->stages;
  bool prod = n && e->p->producer; /* the producer warp fills the ring (emit_producer) */
  if (prod) {
    e->ring_loop = in;
    e->cst = tmp(e, RC_B32), e->phase = tmp(e, RC_B32);
    out(e, "mov.u32 %s, 0;", e->cst);
    out(e, "mov.u32 %s, 0;", e->phase);
  } else if (n) {
    const PlanBuf *mbar = loads[0]->plan->mbar;
    e->ring_loop = in;
    e->cst = tmp(e, RC_B32), e->pst = tmp(e, RC_B32), e->phase = tmp(e, RC_B32);
    out(e, "mov.u32 %s, 0;", e->cst);
    out(e, "mov.u32 %s, 0;", e->pst);
    out(e, "mov.u32 %s, 0;", e->phase);
    mbar_init(e, mbar, S, true); /* and the ring's bytes, last used by others, to the async proxy */
    /* the prologue: iterations 0 .. S - 2 */
    int P = new_label(e);
    const char *j = tmp(e, RC_B32);
    out(e, "mov.b32 %s, %s;", j, i);
    for (int q = 0; q + 1 < S; q++) {
      out(e, "setp.ge.s32 %s, %s, %s;", p, j, end);
      out(e, "@%s bra $Lrpro%d;", p, P);
      ring_issue(e, in, loads, n, j);
      out(e, "add.s32 %s, %s, %s;", j, j, step);
    }
    fprintf(e->body, "$Lrpro%d:\n", P);
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
  if (smbar) { /* sph: the parity each stage's mbarrier is waited for next */
    sph = tmp(e, RC_B32);
    out(e, "mov.u32 %s, 0;", sph);
    mbar_init(e, smbar, S, false);
  }
  if (ns) {
    e->sring_loop = in;
    acst = tmp(e, RC_B32), apst = tmp(e, RC_B32);
    out(e, "mov.u32 %s, 0;", acst);
    out(e, "mov.u32 %s, %d;", apst, S - 1);
    const char *j = tmp(e, RC_B32), *st = tmp(e, RC_B32);
    out(e, "mov.b32 %s, %s;", j, i);
    for (int q = 0; q + 1 < S; q++) {
      int P = new_label(e);
      out(e, "setp.ge.s32 %s, %s, %s;", p, j, end);
      out(e, "@%s bra $Lspro%d;", p, P);
      out(e, "mov.u32 %s, %d;", st, q);
      sring_issue(e, in, sloads, ns, j, st);
      fprintf(e->body, "$Lspro%d:\n", P);
      out(e, "cp.async.commit_group;");
      out(e, "add.s32 %s, %s, %s;", j, j, step);
    }
    for (int q = 0; q < ns; q++) cons[q] = tmp(e, RC_B32);
  }
  fprintf(e->body, "$Lfor%d:\n", L);
  out(e, "setp.ge.s32 %s, %s, %s;", p, i, end);
  out(e, "@%s bra $Lend%d;", p, L);
  if (npf) {
    for (int q = 0; q < npf; q++) {
      int nw = (e->V * elem_bytes_mem(pfl[q]->ty.elem) + 3) / 4, words = nw * (nregs(e, pfl[q]) / e->V);
      const char **cur = arena_alloc(e->a, sizeof(char *) * (size_t)words);
      for (int w = 0; w < words; w++) {
        cur[w] = tmp(e, RC_B32);
        out(e, "mov.b32 %s, %s;", cur[w], next[q][w]);
      }
      e->pf_load[q] = pfl[q], e->pf_words[q] = cur;
    }
    const char *j = tmp(e, RC_B32), *q = tmp(e, RC_PRED);
    int K = new_label(e);
    out(e, "add.s32 %s, %s, %s;", j, i, step);
    out(e, "setp.ge.s32 %s, %s, %s;", q, j, end);
    out(e, "@%s bra $Lpfk%d;", q, K);
    prefetch_issue(e, in, pfl, next, npf, j);
    fprintf(e->body, "$Lpfk%d:\n", K);
    e->npf = npf;
  }
  if (ns) out(e, "cp.async.wait_group %d;", S - 2); /* this iteration's stage has landed */
  if (!prod && (n || ns)) {
    /* the stages the previous iteration read are free: refill them with
     * iteration i + S - 1 (a barrier planned first in the body is this one) */
    if (in->body.len && e->barrier_before[in->body.insts[0]->pos]) e->barrier_before[in->body.insts[0]->pos] = false;
    cta_sync(e);
  }
  if (prod) {
    e->waited = false;
  } else if (n) {
    const char *j;
    int K = ahead_or_skip(e, i, step, end, S, "rk", &j);
    ring_issue(e, in, loads, n, j);
    fprintf(e->body, "$Lrk%d:\n", K);
    e->waited = false;
  }
  if (ns) {
    const char *j;
    int K = ahead_or_skip(e, i, step, end, S, "sk", &j);
    sring_issue(e, in, sloads, ns, j, apst);
    fprintf(e->body, "$Lsk%d:\n", K);
    out(e, "cp.async.commit_group;");
    for (int k = 0; k < ns; k++) { /* the readers' stage */
      const PlanBuf *b = sloads[k]->plan->buf;
      out(e, "mad.lo.u32 %s, %s, %lld, %%smem_;", cons[k], acst, (long long)b->stage_bytes);
      e->sbase[b->id] = cons[k];
    }
    if (smbar) { /* this iteration's tensor copies have landed: wait on its stage's phase */
      mbar_wait(e, mbar_addr(e, smbar, acst, 0), sph, acst);
      phase_flip(e, sph, acst);
    }
  }
  emit_block(e, &in->body);
  e->npf = onpf;
  if (prod) { /* every thread is done with its stage: the producer may refill it */
    const char *st = tmp(e, RC_B64);
    out(e, "mbarrier.arrive.shared::cta.b64 %s, [%s];", st, mbar_addr(e, loads[0]->plan->mbar, e->cst, S));
  }
  if (ns) {
    stage_next(e, acst, S);
    stage_next(e, apst, S);
  }
  if (n) { /* the consumer moves to the next stage */
    const char *b = tmp(e, RC_B32), *q = tmp(e, RC_PRED);
    out(e, "shl.b32 %s, 1, %s;", b, e->cst);
    out(e, "xor.b32 %s, %s, %s;", e->phase, e->phase, b);
    out(e, "add.u32 %s, %s, 1;", e->cst, e->cst);
    out(e, "setp.eq.u32 %s, %s, %d;", q, e->cst, S);
    out(e, "selp.u32 %s, 0, %s, %s;", e->cst, e->cst, q);
  }
  out(e, "add.s32 %s, %s, %s;", i, i, step);
  async_wait(e);
  out(e, "bra.uni $Lfor%d;", L);
  fprintf(e->body, "$Lend%d:\n", L);
  if (n && !prod) { /* every thread is past its last wait before the mbarriers go */
    cta_sync(e);
    mbar_inval(e, loads[0]->plan->mbar, S);
  }
  if (ns) { /* the groups left are empty; every thread is done with the stages before their bytes go to others */
    out(e, "cp.async.wait_group 0;");
    cta_sync(e);
    if (smbar) mbar_inval(e, smbar, S); /* every copy issued was waited for (none past the end) */
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
static void emit_producer(Emitter *e) {
  const TirFunc *f = e->f;
  const TirInst *loop = NULL, *loads[8];
  for (int i = 0; i < f->body.len && !loop; i++)
    if (f->body.insts[i]->op == TIR_FOR && ring_loads(f->body.insts[i], loads)) loop = f->body.insts[i];
  if (!loop) return;
  int n = ring_loads(loop, loads), S = e->p->stages;
  bool *mark = subscript_chains(e, loop, loads, n, true);
  e->replay = true;
  for (int i = 0; i < f->body.len && f->body.insts[i] != loop; i++)
    if (mark[f->body.insts[i]->id]) emit_inst(e, f->body.insts[i]);
  e->replay = false;
  const char *j = tmp(e, RC_B32), *cnt = tmp(e, RC_B32), *pe = tmp(e, RC_B32), *p = tmp(e, RC_PRED);
  const char *end = reg(e, loop->args[1], 0), *step = reg(e, loop->args[2], 0);
  e->pst = tmp(e, RC_B32);
  out(e, "mov.b32 %s, %s;", j, reg(e, loop->args[0], 0));
  out(e, "mov.u32 %s, 0;", cnt);
  out(e, "mov.u32 %s, 0;", pe);
  out(e, "mov.u32 %s, 0;", e->pst);
  int L = new_label(e);
  fprintf(e->body, "$Lprod%d:\n", L);
  out(e, "setp.ge.s32 %s, %s, %s;", p, j, end);
  out(e, "@%s bra $Lprodend%d;", p, L);
  out(e, "setp.lt.u32 %s, %s, %d;", p, cnt, S);
  out(e, "@%s bra $Lprodgo%d;", p, L);
  /* the stage's previous tiles are consumed */
  mbar_wait(e, mbar_addr(e, loads[0]->plan->mbar, e->pst, S), pe, e->pst);
  phase_flip(e, pe, e->pst);
  fprintf(e->body, "$Lprodgo%d:\n", L);
  ring_issue(e, loop, loads, n, j);
  out(e, "add.u32 %s, %s, 1;", cnt, cnt);
  out(e, "add.s32 %s, %s, %s;", j, j, step);
  out(e, "bra.uni $Lprod%d;", L);
  fprintf(e->body, "$Lprodend%d:\n", L);
}

static void emit_block(Emitter *e, const TirBlock *b) {
  for (int i = 0; i < b->len && !e->failed; i++) emit_inst(e, b->insts[i]);
  emit_pending_sync(e); /* a barrier never leaves its block */
  flush_unpack(e, NULL); /* a value may be used after its block, on another path */
}

static const char *param_ptx_type(Scalar s) {
  return s == S_F64 ? "f64" : s <= S_F32 ? "f32" : s == S_I64 ? "s64" : "s32";
}

/* The widest chunk (4, 2, 1) that divides every register tile of the
 * kernel into whole rounds of T chunks along whole rows: then no thread
 * holds a partial chunk, every chunk lies in one row, and a thread that
 * owns a column of one tile owns it in every tile of that row length. */
static bool chunks_fit(const TirBlock *b, int64_t T, int64_t v) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    if (in->plan && in->ty.rank && in->plan->res == RES_REG) {
      int64_t inner = in->plan->phys[in->ty.rank - 1];
      if (inner % v || phys_elems(in) % (T * v)) return false;
    }
    if (!chunks_fit(&in->body, T, v) || !chunks_fit(&in->body2, T, v) || !chunks_fit(&in->cond, T, v)) return false;
  }
  return true;
}

static int chunk_width(const TirBlock *b, int T) {
  for (int v = 4; v > 1; v /= 2)
    if (chunks_fit(b, T, v)) return v;
  return 1;
}

bool ptx_emit_kernel(Arena *a, Diags *d, const Plan *p, const char *arch, const char *entry, FILE *out_f,
                     int64_t *shared_total) {
  Emitter e = {.a = a, .d = d, .p = p, .f = p->f, .T = p->threads};
  const TirFunc *f = p->f;
  e.V = chunk_width(&f->body, e.T);
  decide_frags(&e);
  e.fused_add = arena_alloc(a, (size_t)f->ninsts + 1);
  e.sbase = arena_alloc(a, sizeof(char *) * (size_t)(p->nbufs + 1));
  e.uses = tir_use_counts(a, f);
  char *body = NULL, *decls = NULL;
  size_t blen = 0, dlen = 0;
  e.body = open_memstream(&body, &blen);
  e.declf = open_memstream(&decls, &dlen);
  e.exch_off = (p->shared_bytes + 15) / 16 * 16;
  e.barrier_before = arena_alloc(a, (size_t)f->ninsts + 1);
  for (int i = 0; i < p->nbarriers; i++)
    if (p->barriers[i].pos >= 0 && p->barriers[i].pos < f->ninsts) e.barrier_before[p->barriers[i].pos] = true;
  e.sm90 = !strcmp(arch, "sm_90a");
  const PlanBuf *mbar = NULL;
  for (int i = 0; i < p->nbufs; i++)
    if (p->bufs[i]->kind == BUF_MBAR) mbar = p->bufs[i];
  if (p->producer && mbar) {
    /* the mbarriers first, seen by every thread; then the producer warp
     * goes its own way (emit_producer, after the kernel's code) */
    const char *t0 = tmp(&e, RC_PRED), *pw = tmp(&e, RC_PRED);
    out(&e, "setp.eq.u32 %s, %%tid_, 0;", t0);
    for (int s = 0; s < p->stages; s++) {
      out(&e, "@%s mbarrier.init.shared::cta.b64 [%%smem_+%lld], 1;", t0, (long long)(mbar->offset + 8 * s));
      out(&e, "@%s mbarrier.init.shared::cta.b64 [%%smem_+%lld], %d;", t0, (long long)(mbar->offset + 8 * (p->stages + s)),
          e.T);
    }
    out(&e, "@%s fence.mbarrier_init.release.cluster;", t0);
    out(&e, "bar.sync 0;");
    out(&e, "setp.ge.u32 %s, %%tid_, %d;", pw, e.T);
    out(&e, "@%s bra $Lproducer;", pw);
  }
  /* the grid block computes nothing the kernel needs */
  emit_block(&e, &f->body);
  async_wait(&e); /* no copy outstanding at the exit */
  if (p->producer && mbar && !e.failed) {
    out(&e, "ret;");
    fprintf(e.body, "$Lproducer:\n");
    out(&e, "sub.u32 %%plane_, %%tid_, %d;", e.T);
    emit_producer(&e);
  }
  fclose(e.body);
  fclose(e.declf);
  if (e.failed) {
    free(body);
    free(decls);
    return false;
  }
  int64_t total = e.exch_off + e.exch_bytes;
  if (!e.exch_bytes) total = p->shared_bytes;
  *shared_total = total;
  /* the TMA loads' mbarriers are static shared memory beside it; swizzled
   * buffers' offsets are 1024-aligned from a base rounded up to 1024 at run
   * time (the pattern is the shared address's own) */
  int64_t rounding;
  total += plan_copy_extra(p, &rounding);
  *shared_total += rounding;
  if (total > p->shared_limit) {
    diag_error(d, f->info->kernel->span,
               "kernel '%s' needs %lld bytes of shared memory with the backend's exchange area (%lld bytes); the "
               "limit is %lld%s", f->name, (long long)total, (long long)e.exch_bytes, (long long)p->shared_limit,
               f->info->dynshared ? "" : " (static; @dynshared raises it)");
    free(body);
    free(decls);
    return false;
  }
  const KernelInfo *info = f->info;
  fprintf(out_f, "\n.visible .entry %s(\n", entry);
  bool first = true;
  for (int i = 0; i < f->nparams; i++) {
    const TirParam *tp = &f->params[i];
    if (tp->tensor) {
      fprintf(out_f, "%s  .param .u64 base_param%d", first ? "" : ",\n", i);
      first = false;
      for (int dd = 0; dd < tp->rank; dd++) fprintf(out_f, ",\n  .param .s32 ext_param%d_%d", i, dd);
    } else {
      fprintf(out_f, "%s  .param .%s p%d", first ? "" : ",\n", param_ptx_type(tp->elem), i);
      first = false;
    }
  }
  for (int m = 0; m < p->ntmaps; m++) /* after the parameters: each map and whether the runtime built it */
    fprintf(out_f, ",\n  .param .align 64 .b8 tmap_param%d[128],\n  .param .u32 tmok_param%d", m, m);
  fprintf(out_f, ")\n  .maxntid %d, 1, 1\n", p->launch_threads);
  if (info->min_blocks) fprintf(out_f, "  .minnctapersm %d\n", info->min_blocks);
  if (info->max_regs) fprintf(out_f, "  .maxnreg %d\n", info->max_regs);
  fputs("{\n", out_f);
  if (total > 0) {
    if (info->dynshared) fputs("  .reg .b32 %smem_;\n  mov.u32 %smem_, dsmem;\n", out_f);
    else fprintf(out_f, "  .shared .align %d .b8 smem[%lld];\n  .reg .b32 %%smem_;\n  mov.u32 %%smem_, smem;\n",
                 p->ntmaps ? 128 : 16, (long long)total);
    if (rounding) fputs("  add.u32 %smem_, %smem_, 1023;\n  and.b32 %smem_, %smem_, -1024;\n", out_f);
  } else {
    fputs("  .reg .b32 %smem_;\n  mov.u32 %smem_, 0;\n", out_f);
  }
  fprintf(out_f, "  .reg .b32 %%tid_, %%tidv_%s;\n  mov.u32 %%tid_, %%tid.x;\n  mul.lo.u32 %%tidv_, %%tid_, %d;\n",
          p->producer ? ", %plane_" : "", e.V);
  if (e.nfrag) /* the fragment layout's thread base: 16 w + g and 2 t (elem_index) */
    fputs("  .reg .b32 %fwg_, %ft2_;\n  shr.u32 %fwg_, %tid_, 5;\n  shl.b32 %fwg_, %fwg_, 4;\n"
          "  bfe.u32 %ft2_, %tid_, 2, 3;\n  add.u32 %fwg_, %fwg_, %ft2_;\n  and.b32 %ft2_, %tid_, 3;\n"
          "  shl.b32 %ft2_, %ft2_, 1;\n", out_f);
  for (int i = 0; i < f->nparams; i++) {
    const TirParam *tp = &f->params[i];
    if (!tp->tensor) continue;
    fprintf(out_f, "  .reg .b64 %%base%d;\n  ld.param.u64 %%base%d, [base_param%d];\n  cvta.to.global.u64 %%base%d, %%base%d;\n",
            i, i, i, i, i);
    for (int dd = 0; dd < tp->rank; dd++)
      fprintf(out_f, "  .reg .b32 %%ext32_%d_%d;\n  ld.param.s32 %%ext32_%d_%d, [ext_param%d_%d];\n  .reg .b64 %%ext%d_%d;\n"
                     "  cvt.s64.s32 %%ext%d_%d, %%ext32_%d_%d;\n",
              i, dd, i, dd, i, dd, i, dd, i, dd, i, dd);
  }
  if (!strcmp(arch, "sm_90a")) {
    /* Programmatic dependent launch: the runtime may start this grid while
     * the previous kernel in the stream is still running (its launch and
     * this prologue overlap that kernel's tail). The wait holds every
     * thread until that kernel has finished and its writes are visible, so
     * it comes before any global access, read or write. Signalling our own
     * dependents at once is safe for the same reason, and lets the next
     * kernel's CTAs take the slots this grid's last wave frees. Without the
     * launch attribute both are no-ops. */
    fputs("  griddepcontrol.wait;\n  griddepcontrol.launch_dependents;\n", out_f);
  }
  for (int m = 0; m < p->ntmaps; m++)
    fprintf(out_f, "  .reg .b64 %%tmap%d;\n  mov.b64 %%tmap%d, tmap_param%d;\n  cvta.param.u64 %%tmap%d, %%tmap%d;\n"
                   "  .reg .b32 %%tmok%d;\n  ld.param.u32 %%tmok%d, [tmok_param%d];\n",
            m, m, m, m, m, m, m, m);
  if (p->ntma_loads) {
    /* one mbarrier per TMA load, initialised before any thread waits */
    fprintf(out_f, "  .shared .align 8 .b64 tmabar[%d];\n  {\n  .reg .pred %%tz;\n  .reg .b32 %%tb;\n"
                   "  setp.eq.u32 %%tz, %%tid_, 0;\n  mov.u32 %%tb, tmabar;\n", p->ntma_loads);
    for (int i = 0; i < p->ntma_loads; i++)
      fprintf(out_f, "  @%%tz mbarrier.init.shared::cta.b64 [%%tb+%d], 1;\n", 8 * i);
    fputs("  @%tz fence.mbarrier_init.release.cluster;\n  bar.sync 0;\n  }\n", out_f);
    for (int i = 0; i < p->ntma_loads; i++) fprintf(out_f, "  .reg .b32 %%tmaph%d;\n  mov.u32 %%tmaph%d, 0;\n", i, i);
  }
  fputs(decls ? decls : "", out_f);
  for (int rc = 0; rc < RC_COUNT; rc++)
    if (e.ntemp[rc]) fprintf(out_f, "  .reg %s %st<%d>;\n", rc_decl[rc], rc_prefix[rc], e.ntemp[rc]);
  fputs(body ? body : "", out_f);
  fputs("  ret;\n}\n", out_f);
  free(body);
  free(decls);
  return true;
}

void ptx_emit_header(FILE *out, const char *arch, bool any_dynshared, bool any_tma) {
  fprintf(out, "// Generated by phobosc %s\n.version 8.0\n.target %s\n.address_size 64\n", PHOBOS_VERSION, arch);
  if (any_dynshared) fprintf(out, ".extern .shared .align %d .b8 dsmem[];\n", any_tma ? 128 : 16);
}
