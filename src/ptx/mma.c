/* mma.c: tensor-core dots on mma.sync (m16n8k16, m16n8k32 for 8-bit
 * dot_t): ldmatrix from staged, swizzled or exchange-area operands, a's
 * fragment packed from registers, results in the fragment layout or
 * through the exchange area. spec/LANGUAGE.md 15.5. */
#include "emitter.h"

/* An operand the mma path can read with ldmatrix where it already is: a
 * staged buffer of its element type laid out as the value's physical
 * shape, with rows on 16-byte boundaries. */
static bool mma_direct(const TirInst *x) {
  const PlanBuf *b = x->plan->res == RES_SHARED ? x->plan->buf : NULL;
  if (!b || b->elem != x->ty.elem || b->rank != x->ty.rank || (b->pitch * px_elem_bytes_mem(b->elem)) % 16 ||
      b->offset % 16)
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
  int64_t cols = x->plan->phys[x->ty.rank - 1], elems = px_phys_elems(x);
  for (int k = 0; k < px_nregs(e, x); k++) {
    const char *r = px_operand(e, x, k), *fl = px_elem_index(e, x, k), *pr = px_tmp(e, RC_PRED);
    const char *row = px_tmp(e, RC_B32), *col = px_tmp(e, RC_B32), *ad = px_tmp(e, RC_B32), *h = px_tmp(e, RC_B32);
    px_out(e, "setp.lt.u32 %s, %s, %lld;", pr, fl, (long long)elems);
    px_out(e, "shr.u32 %s, %s, %d;", row, fl, px_log2i(cols));
    px_out(e, "and.b32 %s, %s, %lld;", col, fl, (long long)(cols - 1));
    px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", ad, row, (long long)pitch, col);
    if (px_elem_bytes_mem(x->ty.elem) == 1) { /* i8, u8: the register's low byte */
      px_out(e, "add.u32 %s, %s, %%smem_;", ad, ad);
      px_out(e, "@%s st.shared.u8 [%s+%lld], %s;", pr, ad, (long long)at, r);
      continue;
    }
    px_out(e, "mad.lo.u32 %s, %s, 2, %%smem_;", ad, ad);
    if (x->ty.elem == S_F16) {
      px_out(e, "{ .reg .b16 %%hs; cvt.rn.f16.f32 %%hs, %s; cvt.u32.u16 %s, %%hs; }", r, h);
    } else {
      px_out(e, "mov.b32 %s, %s;", h, r);
      px_out(e, "shr.u32 %s, %s, 16;", h, h);
    }
    px_out(e, "@%s st.shared.u16 [%s+%lld], %s;", pr, ad, (long long)at, h);
  }
}

/* ldmatrix row addresses in a swizzled operand (the layout of px_buf_addr): each lane's row r (its lane part; the rest
 * a multiple of 8) and its 16-byte chunk c + lp (c even, or lp 0) of the panel land at chunk (c + lp) ^ rowx(r) = c ^
 * (lp ^ rowx(r)). So a lane keeps L, the address of its row in panel 0, and X = (lp ^ rowx(r)) << 4, and an ldmatrix at
 * column byte cb (a constant) and constant row offset rc reads at Y[c] + panel R S + rc S with Y[c] = L + ((c << 4) ^
 * X): one register per chunk pair, made at first use, so the k-steps still take immediates. */
typedef struct SwzLane {
  int S;
  int64_t R;
  const char *L, *X, *Y[8];
} SwzLane;

static SwzLane swz_lane(Emitter *e, const PlanBuf *b, const char *row, const char *lp, const char *base) {
  SwzLane z = {.S = plan_swizzle(b), .R = plan_buf_rows(b)};
  const char *L = px_tmp(e, RC_B32), *X = px_swz_rowx(e, z.S, row);
  px_out(e, "mad.lo.u32 %s, %s, %d, %s;", L, row, z.S, base);
  if (lp) px_out(e, "xor.b32 %s, %s, %s;", X, X, lp);
  px_out(e, "shl.b32 %s, %s, 4;", X, X);
  z.L = L, z.X = X;
  return z;
}

/* the operand of an ldmatrix at column byte cb and row offset rc */
static const char *swz_at(Emitter *e, SwzLane *z, int64_t cb, int64_t rc) {
  int c = (int)((cb % z->S) / 16);
  if (!z->Y[c]) {
    const char *y = px_tmp(e, RC_B32);
    px_out(e, "xor.b32 %s, %s, %d;", y, z->X, c << 4);
    px_out(e, "add.u32 %s, %s, %s;", y, y, z->L);
    z->Y[c] = y;
  }
  return arena_printf(e->a, "%s+%lld", z->Y[c], (long long)(cb / z->S * z->R * z->S + rc * z->S));
}

/* The A fragment of k-step s of row tile mi, packed in pairs from the
 * registers of a (plan_a_from_regs: the accumulators of its column tile s),
 * into r[4]: rows g, g + 8 at columns 2t (+1), then 8 + 2t (+1). The
 * packing rounds (px_packed_by_mma). mma.sync and wgmma take the same. */
void px_pack_a_regs(Emitter *e, const TirInst *a, FragGeom ag, int mi, int s, const char *ty, const char *r[4]) {
  int base = (mi * ag.ntn + s) * ag.rpt;
  for (int i = 0; i < 4; i++) {
    r[i] = px_tmp(e, RC_B32);
    px_out(e, "cvt.rn.%sx2.f32 %s, %s, %s;", ty, r[i], px_reg(e, a, base + 2 * i + 1), px_reg(e, a, base + 2 * i));
  }
}

/* dot and dot_t of f16 or bf16 operands into f32 on the tensor cores
 * (mma.sync.m16n8k16), and dot_t of 8-bit integers into i32 (m16n8k32, the
 * same ldmatrix rows read as bytes), with operands from shared memory
 * through ldmatrix (.trans for dot's [K, N] b). Staged operands are read
 * where they are; an a in the fragment layout is packed from its registers
 * (plan_a_from_regs); other operands are first copied into the exchange area as
 * rows padded by 16 bytes, so that the eight rows of an ldmatrix matrix
 * fall in different banks. A result in the fragment layout is accumulated
 * in its own registers (row tiles w, w + W, ...); one in the flat layout
 * takes output tiles of 16 rows by 16 (or 8) columns in turn per warp and
 * goes through the exchange area. The whole logical K is unrolled. A dot
 * the plan put on DOT_WGMMA goes to px_emit_dot_wgmma. */
void px_emit_dot_mma(Emitter *e, const TirInst *in) {
  const TirInst *a = in->args[0], *b = in->args[1];
  bool tr = in->aux; /* dot_t: b is [N, K] */
  int r = in->ty.rank;
  int64_t K = a->ty.dims[a->ty.rank - 1], M = plan_folded_rows(in), N = in->plan->phys[r - 1];
  bool frag = px_is_frag(e, in);
  bool areg = plan_a_from_regs(in);
  FragGeom ag = areg ? px_frag_geom(e, a) : (FragGeom){0};
  bool da = areg || mma_direct(a), db = mma_direct(b);
  /* swizzled operands (a tensor copy's tile) */
  const PlanBuf *sa = da && !areg && plan_swizzle(a->plan->buf) ? a->plan->buf : NULL;
  const PlanBuf *sb = db && plan_swizzle(b->plan->buf) ? b->plan->buf : NULL;
  if (in->plan->dot == DOT_WGMMA) {
    px_emit_dot_wgmma(e, in, sa, sb, areg);
    return;
  }
  /* eb: operand bytes (2, or 1 for i8/u8 dot_t on m16n8k32); ce: elements
   * in 16 bytes, an ldmatrix row; a k-step is 32 bytes of K */
  int eb = px_elem_bytes_mem(a->ty.elem), ce = 16 / eb, kstep = 2 * ce;
  bool i8 = eb == 1;
  int64_t ka = a->plan->phys[r - 1], cb = b->plan->phys[1];
  int64_t pa = areg ? 0 : da ? a->plan->buf->pitch : ka + ce, pb = db ? b->plan->buf->pitch : cb + ce;
  /* the exchange area (plan.c, mma_exchange_bytes): a's copy, b's, the
   * flat result's words */
  int64_t at_a = in->plan->scratch ? in->plan->scratch->offset : 0;
  int64_t at_b = at_a + (da ? 0 : (M * pa * eb + 15) / 16 * 16);
  int64_t at_c = at_b + (db ? 0 : (b->plan->phys[0] * pb * eb + 15) / 16 * 16);
  /* staged operands complete (earlier readers of the exchange area are the
   * plan's to wait for) */
  if ((!areg && !px_published(e, a)) || !px_published(e, b)) px_cta_sync(e);
  if (!da) mma_copy(e, a, at_a, pa);
  if (!db) mma_copy(e, b, at_b, pb);
  if (!da || !db) px_cta_sync(e);
  const char *abase = da ? arena_printf(e->a, "%lld", areg ? 0LL : (long long)a->plan->buf->offset)
                         : arena_printf(e->a, "%lld", (long long)at_a);
  const char *bbase = db ? arena_printf(e->a, "%lld", (long long)b->plan->buf->offset)
                         : arena_printf(e->a, "%lld", (long long)at_b);
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
  const char *lane = px_tmp(e, RC_B32), *warp = px_tmp(e, RC_B32), *l8 = px_tmp(e, RC_B32), *h8 = px_tmp(e, RC_B32),
             *h16 = px_tmp(e, RC_B32), *alane = px_tmp(e, RC_B32), *blane = px_tmp(e, RC_B32), *x = px_tmp(e, RC_B32);
  px_out(e, "and.b32 %s, %%tid_, 31;", lane);
  px_out(e, "shr.u32 %s, %%tid_, 5;", warp);
  px_out(e, "and.b32 %s, %s, 7;", l8, lane);
  px_out(e, "bfe.u32 %s, %s, 3, 1;", h8, lane);  /* (lane / 8) % 2 */
  px_out(e, "bfe.u32 %s, %s, 4, 1;", h16, lane); /* lane / 16 */
  /* swizzled operands: rows S bytes apart in their panel, the lane's
   * chunk part folded into SwzLane.X */
  SwzLane za = {0}, zb = {0};
  int64_t ra = sa ? plan_swizzle(sa) : pa * eb; /* bytes from one row to the next */
  if (!areg) { /* a: row (lane % 8) + 8 ((lane / 8) % 2), 16 bytes on for lane / 16 */
    px_out(e, "mad.lo.u32 %s, %s, 8, %s;", x, h8, l8);
    if (sa) {
      const char *ab = px_tmp(e, RC_B32);
      px_out(e, "add.u32 %s, %s, %s;", ab, px_smem_of(e, sa), abase);
      za = swz_lane(e, sa, x, h16, ab);
      alane = za.L;
    } else {
      px_out(e, "mul.lo.u32 %s, %s, %lld;", alane, x, (long long)pa);
      px_out(e, "mad.lo.u32 %s, %s, %d, %s;", alane, h16, ce, alane);
      px_out(e, "mad.lo.u32 %s, %s, %d, %s;", alane, alane, eb, da ? px_smem_of(e, a->plan->buf) : "%smem_");
      px_out(e, "add.u32 %s, %s, %s;", alane, alane, abase);
    }
  }
  const char *bb = NULL;
  if (sb) {
    bb = px_tmp(e, RC_B32);
    px_out(e, "add.u32 %s, %s, %s;", bb, px_smem_of(e, sb), bbase);
  }
  if (tr) { /* b [N, K]: row n = (lane % 8) + 8 (lane / 16), 16 bytes on for (lane / 8) % 2 */
    if (NT == 16) px_out(e, "mad.lo.u32 %s, %s, 8, %s;", x, h16, l8);
    else px_out(e, "mov.u32 %s, %s;", x, l8);
    if (sb) {
      zb = swz_lane(e, sb, x, h8, bb);
    } else {
      px_out(e, "mul.lo.u32 %s, %s, %lld;", blane, x, (long long)pb);
      px_out(e, "mad.lo.u32 %s, %s, %d, %s;", blane, h8, ce, blane);
    }
  } else { /* b [K, N], transposed by ldmatrix: row k = (lane % 8) + 8 ((lane / 8) % 2), column n = 8 (lane / 16) */
    px_out(e, "mad.lo.u32 %s, %s, 8, %s;", x, h8, l8);
    if (sb) {
      zb = swz_lane(e, sb, x, NT == 16 ? h16 : NULL, bb);
    } else {
      px_out(e, "mul.lo.u32 %s, %s, %lld;", blane, x, (long long)pb);
      if (NT == 16) px_out(e, "mad.lo.u32 %s, %s, 8, %s;", blane, h16, blane);
    }
  }
  if (sb) {
    blane = zb.L;
  } else {
    px_out(e, "mad.lo.u32 %s, %s, %d, %s;", blane, blane, eb, db ? px_smem_of(e, b->plan->buf) : "%smem_");
    px_out(e, "add.u32 %s, %s, %s;", blane, blane, bbase);
  }
  int64_t rb = sb ? plan_swizzle(sb) : pb * eb;
  if (frag) {
    /* the accumulators are the result's registers: row tiles w + mi W,
     * every column tile */
    FragGeom fg = px_frag_geom(e, in);
    const char *aw = px_tmp(e, RC_B32);
    if (!areg) px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", aw, warp, (long long)(16 * ra), alane);
    za.L = aw;
    const TirInst *addend = px_fused_addend(e, in);
    for (int k = 0; k < px_nregs(e, in); k++)
      px_out(e, "mov.%s %s, %s;", acc_mov, px_reg(e, in, k), addend ? px_reg(e, addend, k) : zero_acc);
    /* k-step by k-step: the A fragments of every row tile the warp owns,
     * then each B fragment loaded once and used by all of them (a warp
     * with two row tiles reads K and V from shared memory half as often) */
    for (int64_t k0 = 0; k0 < K; k0 += kstep) {
      const char *(*ar)[4] = arena_alloc(e->a, sizeof *ar * (size_t)fg.tpm); /* [row tile][register] */
      for (int mi = 0; mi < fg.tpm; mi++) {
        if (areg) {
          px_pack_a_regs(e, a, ag, mi, (int)(k0 / 16), ty, ar[mi]);
        } else {
          for (int i = 0; i < 4; i++) ar[mi][i] = px_tmp(e, RC_B32);
          const char *ad = sa ? swz_at(e, &za, k0 * eb, (int64_t)mi * W * 16)
                              : arena_printf(e->a, "%s+%lld", aw, (long long)((int64_t)mi * W * 16 * ra + k0 * eb));
          px_out(e, "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%s, %s, %s, %s}, [%s];", ar[mi][0], ar[mi][1], ar[mi][2],
                 ar[mi][3], ad);
        }
      }
      for (int ni = 0; ni < fg.ntn; ni++) {
        const char *br[4];
        for (int i = 0; i < 4; i++) br[i] = px_tmp(e, RC_B32);
        /* tr: rows ni NT on, column bytes k0 eb on; else rows k0 on, column bytes ni NT eb on */
        int64_t bcol = tr ? k0 * eb : (int64_t)ni * NT * eb, brow = tr ? (int64_t)ni * NT : k0;
        const char *bad =
            sb ? swz_at(e, &zb, bcol, brow) : arena_printf(e->a, "%s+%lld", blane, (long long)(brow * rb + bcol));
        if (NT == 16)
          px_out(e, "ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s];", tr ? "" : ".trans", br[0],
                 br[1], br[2], br[3], bad);
        else
          px_out(e, "ldmatrix.sync.aligned.m8n8.x2%s.shared.b16 {%s, %s}, [%s];", tr ? "" : ".trans", br[0], br[1],
                 bad);
        for (int mi = 0; mi < fg.tpm; mi++)
          for (int j = 0; j < NT / 8; j++) {
            int k = (mi * fg.ntn + ni) * fg.rpt + j * 4;
            const char *d[4] = {px_reg(e, in, k), px_reg(e, in, k + 1), px_reg(e, in, k + 2), px_reg(e, in, k + 3)};
            px_out(e, "%s {%s, %s, %s, %s}, {%s, %s, %s, %s}, {%s, %s}, {%s, %s, %s, %s};", op, d[0], d[1], d[2], d[3],
                   ar[mi][0], ar[mi][1], ar[mi][2], ar[mi][3], br[2 * j], br[2 * j + 1], d[0], d[1], d[2], d[3]);
          }
      }
    }
    return;
  }
  /* the accumulator's place in the result: row lane / 4 (and + 8), column 2 (lane % 4) */
  const char *clane = px_tmp(e, RC_B32), *g = px_tmp(e, RC_B32), *t2 = px_tmp(e, RC_B32);
  px_out(e, "shr.u32 %s, %s, 2;", g, lane);
  px_out(e, "and.b32 %s, %s, 3;", t2, lane);
  px_out(e, "shl.b32 %s, %s, 1;", t2, t2);
  px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", clane, g, (long long)N, t2);
  px_out(e, "mad.lo.u32 %s, %s, 4, %%smem_;", clane, clane);
  px_out(e, "add.u32 %s, %s, %lld;", clane, clane, (long long)at_c);
  /* the tile loop: tile = warp, warp + W, ... */
  const char *tile = px_tmp(e, RC_B32), *mt = px_tmp(e, RC_B32), *nt = px_tmp(e, RC_B32), *aad = px_tmp(e, RC_B32),
             *bad = px_tmp(e, RC_B32), *cad = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED);
  int L = px_new_label(e);
  px_out(e, "mov.u32 %s, %s;", tile, warp);
  px_out(e, "setp.ge.u32 %s, %s, %lld;", p, tile, (long long)ntiles);
  px_out(e, "@%s bra $Lmmaend%d;", p, L);
  px_label(e, "mma", L);
  px_out(e, "shr.u32 %s, %s, %d;", mt, tile, px_log2i(ntn)); /* N and NT are powers of two */
  px_out(e, "and.b32 %s, %s, %lld;", nt, tile, (long long)(ntn - 1));
  px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", aad, mt, (long long)(16 * ra), alane);
  SwzLane ta = za, tb = zb; /* this tile's lanes: fresh Y registers inside the loop */
  memset(ta.Y, 0, sizeof ta.Y), memset(tb.Y, 0, sizeof tb.Y);
  ta.L = aad;
  if (sb && !tr) { /* the column tile nt is a run-time column: its panel into L, its chunk into X */
    const char *cb = px_tmp(e, RC_B32), *pan = px_tmp(e, RC_B32);
    tb.X = px_tmp(e, RC_B32);
    px_out(e, "mul.lo.u32 %s, %s, %d;", cb, nt, NT * eb);
    px_out(e, "shr.u32 %s, %s, %d;", pan, cb, px_log2i(zb.S));
    px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", bad, pan, (long long)(zb.R * zb.S), blane);
    px_out(e, "and.b32 %s, %s, %d;", cb, cb, zb.S - 1);
    px_out(e, "xor.b32 %s, %s, %s;", tb.X, zb.X, cb);
  } else {
    px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", bad, nt, (long long)(tr ? NT * rb : NT * eb), blane);
  }
  tb.L = bad;
  const char *acc[8];
  for (int i = 0; i < 2 * (NT / 8) * 2; i++) {
    acc[i] = px_tmp(e, i8 ? RC_B32 : RC_F32);
    px_out(e, "mov.%s %s, %s;", acc_mov, acc[i], zero_acc);
  }
  for (int64_t k0 = 0; k0 < K; k0 += kstep) {
    const char *ar[4], *br[4];
    for (int i = 0; i < 4; i++) ar[i] = px_tmp(e, RC_B32), br[i] = px_tmp(e, RC_B32);
    const char *aq = sa ? swz_at(e, &ta, k0 * eb, 0) : arena_printf(e->a, "%s+%lld", aad, (long long)(k0 * eb));
    px_out(e, "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%s, %s, %s, %s}, [%s];", ar[0], ar[1], ar[2], ar[3], aq);
    const char *bq = sb ? swz_at(e, &tb, tr ? k0 * eb : 0, tr ? 0 : k0)
                        : arena_printf(e->a, "%s+%lld", bad, (long long)(tr ? k0 * eb : k0 * pb * eb));
    if (NT == 16)
      px_out(e, "ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s];", tr ? "" : ".trans", br[0], br[1],
             br[2], br[3], bq);
    else
      px_out(e, "ldmatrix.sync.aligned.m8n8.x2%s.shared.b16 {%s, %s}, [%s];", tr ? "" : ".trans", br[0], br[1], bq);
    for (int j = 0; j < NT / 8; j++)
      px_out(e, "%s {%s, %s, %s, %s}, {%s, %s, %s, %s}, {%s, %s}, {%s, %s, %s, %s};", op, acc[4 * j], acc[4 * j + 1],
             acc[4 * j + 2], acc[4 * j + 3], ar[0], ar[1], ar[2], ar[3], br[2 * j], br[2 * j + 1], acc[4 * j],
             acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
  }
  /* accumulators to the exchange area, row-major [M, N] f32 or i32: the flat order */
  px_out(e, "mul.lo.u32 %s, %s, %lld;", cad, mt, (long long)(16 * N * 4));
  px_out(e, "mad.lo.u32 %s, %s, %d, %s;", cad, nt, NT * 4, cad);
  px_out(e, "add.u32 %s, %s, %s;", cad, cad, clane);
  for (int j = 0; j < NT / 8; j++) {
    px_out(e, "st.shared.v2.%s [%s+%lld], {%s, %s};", acc_mov, cad, (long long)(j * 32), acc[4 * j], acc[4 * j + 1]);
    px_out(e, "st.shared.v2.%s [%s+%lld], {%s, %s};", acc_mov, cad, (long long)(j * 32 + 8 * N * 4), acc[4 * j + 2],
           acc[4 * j + 3]);
  }
  px_out(e, "add.u32 %s, %s, %d;", tile, tile, W);
  px_out(e, "setp.lt.u32 %s, %s, %lld;", p, tile, (long long)ntiles);
  px_out(e, "@%s bra $Lmma%d;", p, L);
  px_label(e, "mmaend", L);
  px_cta_sync(e);
  int64_t elems = px_phys_elems(in);
  for (int k = 0; k < px_nregs(e, in); k++) {
    const char *fl = px_flat_index(e, k);
    px_out(e, "min.u32 %s, %s, %lld;", fl, fl, (long long)(elems - 1));
    px_exch_load(e, in, at_c, fl, px_reg(e, in, k));
  }
}
