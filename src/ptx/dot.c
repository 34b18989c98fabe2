/* dot.c: dot and dot_t: which path a product takes (wgmma, mma.sync, a row
 * against columns the threads own, or FMA over the exchange area), what the
 * tensor-core paths need to know of their operands, and the FMA paths. */
#include "emitter.h"

/* The shared byte offset of element (i, k) of a few-row A that every
 * thread reads by itself: in its staged buffer (its pitch), or in the
 * dot's exchange area at `at` (flat physical order, a word an element). */
static int64_t a_elem_off(const TirInst *a, bool exch, int64_t at, int64_t i, int64_t k) {
  if (exch) return at + (i * a->plan->phys[1] + k) * 4;
  const PlanBuf *b = a->plan->buf;
  return b->offset + (i * b->pitch + k) * sema_scalar_bytes(b->elem);
}

/* DOT_COLUMNS: a few rows times a matrix whose columns the threads
 * already own: [M, K] x [K, N] with B in registers and N a multiple of the
 * thread count (the flat distribution then gives thread t the columns t,
 * t + T, ... with every k of them, and the same columns of each of the M
 * result rows: register i per + j of the result is row i's j-th). Each
 * thread contracts its own columns: no exchange, no barrier; each B
 * register is read once for all M rows (a decode batch reads the weights
 * once). A comes from shared memory (a staged view, read by all lanes at
 * once), is a splat scalar, or is an f32 register tile the kernel computed
 * (a normalized activation), stored to the dot's exchange area first, in
 * flat physical order (plan/memory.c: one barrier, a few hundred bytes). */
static void emit_dot_columns(Emitter *e, const TirInst *in) {
  const TirInst *a = in->args[0], *b = in->args[1];
  int per = (int)(b->plan->phys[1] / e->T); /* columns per thread */
  int64_t K = a->ty.dims[1], M = in->plan->phys[0];
  RegClass rc = px_rc_of(in->ty.elem);
  const char *t = px_arith_type(in->ty.elem);
  bool exch = plan_dot_columns_exchanges(in);
  int64_t at = 0;
  if (exch) px_exchange(e, in, &a, 1, &at);
  for (int j = 0; j < per * M; j++) px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, j), px_zero(rc));
  /* an f32 row in shared memory is read four elements at a time where aligned */
  bool splat = a->op == TIR_SPLAT, v4 = !splat && a->ty.elem == S_F32;
  const char *base = exch ? "%smem_" : splat ? NULL : px_smem_of(e, a->plan->buf);
  const char *quad[PLAN_DOT_COLUMNS_ROWS][4] = {{0}};
  for (int64_t k = 0; k < K; k++) {
    for (int64_t i = 0; i < M; i++) {
      const char *av;
      int64_t off = splat ? 0 : a_elem_off(a, exch, at, i, k);
      if (v4 && k % 4 == 0 && k + 4 <= K && off % 16 == 0) {
        for (int q = 0; q < 4; q++) quad[i][q] = px_tmp(e, RC_F32);
        px_out(e, "ld.shared.v4.f32 {%s, %s, %s, %s}, [%s+%lld];", quad[i][0], quad[i][1], quad[i][2], quad[i][3],
               base, (long long)off);
      } else if (k % 4 == 0) {
        quad[i][0] = NULL;
      }
      if (quad[i][0]) {
        av = quad[i][k % 4];
      } else if (splat) {
        av = px_reg(e, a->args[0], 0);
      } else { /* the address as an immediate off the base */
        av = px_tmp(e, px_rc_of(a->ty.elem));
        px_ld(e, "shared", a->ty.elem, av, arena_printf(e->a, "%s+%lld", base, (long long)off), NULL);
      }
      for (int j = 0; j < per; j++) {
        const char *bv = px_reg(e, b, (int)(k * per + j)), *d = px_reg(e, in, (int)(i * per + j));
        if (rc == RC_F32 || rc == RC_F64) px_out(e, "fma.rn.%s %s, %s, %s, %s;", t, d, av, bv, d);
        else px_out(e, "mad.lo.s32 %s, %s, %s, %s;", d, av, bv, d);
      }
    }
  }
  for (int j = 0; j < per * M; j++) px_round_reg(e, in->ty.elem, px_reg(e, in, j));
}

/* x + dot(a, b) with the dot's only use that sum, x a fragment value of
 * the same class computed before the dot: the mma accumulates onto x
 * directly (the accumulators start at x, not 0) and the sum becomes a move
 * (px_emit_binary). Attention's acc * corr + dot(p, v). Marks the sum. */
const TirInst *px_fused_addend(Emitter *e, const TirInst *dot) {
  if (!e->fused_add || e->replay || e->use_count[dot->id] != 1) return NULL;
  for (int i = 0; i < e->f->ninsts; i++) {
    const TirInst *s = e->f->insts[i];
    if (s->op != TIR_BINARY || s->aux != '+' || (s->args[0] != dot && s->args[1] != dot)) continue;
    const TirInst *x = s->args[0] == dot ? s->args[1] : s->args[0];
    if (x == dot || !px_is_frag(e, x) || !px_is_frag(e, s) || x->plan->layout != dot->plan->layout ||
        x->pos >= dot->pos || s->ty.elem != S_F32)
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
bool px_published(const Emitter *e, const TirInst *x) {
  if (x->plan->res != RES_SHARED) return true;
  if (x->plan->buf && x->plan->buf->stages) return true;
  return e->sring_loop && x->pos < e->sring_loop->pos;
}

/* A conversion to f16 or bf16 whose one reader is a tensor-core dot that
 * packs it from registers into its A fragment: the packing (cvt.rn.*x2)
 * rounds, so the conversion need not round first. */
bool px_packed_by_mma(const Emitter *e, const TirInst *cv) {
  if (cv->op != TIR_CONVERT || (cv->ty.elem != S_BF16 && cv->ty.elem != S_F16) || e->use_count[cv->id] != 1) return false;
  for (int i = 0; i < e->f->ninsts; i++) {
    const TirInst *x = e->f->insts[i];
    if (x->op == TIR_DOT && x->args[0] == cv) return x->plan->dot >= DOT_MMA && plan_a_from_regs(x);
  }
  return false;
}

/* dot and dot_t on the path the plan chose (plan.c, choose_dot_paths);
 * DOT_FMA: each thread computes its output elements over the logical
 * contraction, reading operands from their shared buffers or from the
 * exchange area. */
void px_emit_dot(Emitter *e, const TirInst *in) {
  switch (in->plan->dot) {
  case DOT_MMA: case DOT_WGMMA: px_emit_dot_mma(e, in); return;
  case DOT_COLUMNS: emit_dot_columns(e, in); return;
  case DOT_FMA: break;
  }
  const TirInst *a = in->args[0], *b = in->args[1];
  const TirInst *src[2];
  int nsrc = 0;
  if (a->plan->res != RES_SHARED) src[nsrc++] = a;
  if (b->plan->res != RES_SHARED) src[nsrc++] = b;
  int64_t at[2] = {0, 0};
  if (nsrc) px_exchange(e, in, src, nsrc, at);
  else px_cta_sync(e); /* staged operands: their stores are complete (planned barriers cover it) */
  int64_t at_a = a->plan->res == RES_SHARED ? -1 : at[0];
  int64_t at_b = b->plan->res == RES_SHARED ? -1 : at[nsrc - 1];
  int r = in->ty.rank;
  int64_t K = a->ty.dims[a->ty.rank - 1];
  RegClass rc = px_rc_of(in->ty.elem);
  const char *t = px_arith_type(in->ty.elem);
  for (int k = 0; k < px_nregs(e, in); k++) {
    const char *fl = px_elem_index(e, in, k);
    const char *c[MAX_TILE_RANK];
    for (int d = 0; d < r; d++) c[d] = px_coord(e, fl, in->plan->phys, r, d);
    const char *acc = px_reg(e, in, k);
    px_out(e, "mov.%s %s, %s;", px_mov_type(rc), acc, px_zero(rc));
    const char *kk = px_tmp(e, RC_B32);
    int L = px_new_label(e);
    px_out(e, "mov.u32 %s, 0;", kk);
    px_label(e, "dot", L);
    /* a[.., m, kk] */
    const char *ac[MAX_TILE_RANK];
    for (int d = 0; d < r - 1; d++) {
      const char *m = px_tmp(e, RC_B32);
      px_out(e, "min.u32 %s, %s, %lld;", m, c[d], (long long)(a->plan->phys[d] - 1));
      ac[d] = m;
    }
    ac[r - 1] = kk;
    const char *n = px_tmp(e, RC_B32);
    px_out(e, "min.u32 %s, %s, %lld;", n, c[r - 1], (long long)(b->plan->phys[in->aux ? 0 : 1] - 1));
    const char *bc[2] = {in->aux ? n : kk, in->aux ? kk : n};
    const char *va = px_tmp(e, px_rc_of(a->ty.elem)), *vb = px_tmp(e, px_rc_of(b->ty.elem));
    if (at_a < 0) px_ld(e, "shared", a->ty.elem, va, px_buf_addr(e, a->plan->buf, ac), NULL);
    else px_exch_load(e, a, at_a, px_flat_of(e, ac, a->plan->phys, a->ty.rank), va);
    if (at_b < 0) px_ld(e, "shared", b->ty.elem, vb, px_buf_addr(e, b->plan->buf, bc), NULL);
    else px_exch_load(e, b, at_b, px_flat_of(e, bc, b->plan->phys, 2), vb);
    if (rc == RC_F32 || rc == RC_F64) {
      if (px_rc_of(a->ty.elem) != rc) { /* f32 operands of an f64 dot were joined already */
        const char *x = px_tmp(e, rc), *y = px_tmp(e, rc);
        px_out(e, "cvt.f64.f32 %s, %s;", x, va);
        px_out(e, "cvt.f64.f32 %s, %s;", y, vb);
        va = x, vb = y;
      }
      px_out(e, "fma.rn.%s %s, %s, %s, %s;", t, acc, va, vb, acc);
    } else {
      px_out(e, "mad.lo.s32 %s, %s, %s, %s;", acc, va, vb, acc);
    }
    px_out(e, "add.u32 %s, %s, 1;", kk, kk);
    const char *p = px_tmp(e, RC_PRED);
    px_out(e, "setp.lt.u32 %s, %s, %lld;", p, kk, (long long)K);
    px_out(e, "@%s bra $Ldot%d;", p, L);
    px_round_reg(e, in->ty.elem, acc);
  }
}
