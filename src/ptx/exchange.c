/* exchange.c: operations that need other threads' elements: through the
 * exchange area after the planned buffers (broadcast, transpose, row
 * reductions, sub-tile reads and writes), by reloading a tile from global
 * memory where that is cheaper, or by shuffles within a fragment's quad. */
#include "emitter.h"

static void emit_reduce_frag(Emitter *e, const TirInst *in);
static void emit_reduce_blocked(Emitter *e, const TirInst *in);

/* rowmax's identity in a register of type s: -inf, the most negative
 * integer, or 0 for an unsigned type (u8, bool: max.u32 of 2^31 would win) */
static const char *max_identity(Scalar s) {
  RegClass rc = px_rc_of(s);
  if (rc == RC_F32) return "0fFF800000";
  if (rc == RC_F64) return "0dFFF0000000000000";
  if (px_arith_type(s)[0] == 'u') return "0";
  return rc == RC_B64 ? "0x8000000000000000" : "0x80000000";
}

/* rowmin's identity: +inf, the largest integer, all ones for an unsigned
 * type (a u8 or bool widened to 32 bits never reaches it) */
static const char *min_identity(Scalar s) {
  RegClass rc = px_rc_of(s);
  if (rc == RC_F32) return "0f7F800000";
  if (rc == RC_F64) return "0d7FF0000000000000";
  if (px_arith_type(s)[0] == 'u') return rc == RC_B64 ? "0xFFFFFFFFFFFFFFFF" : "0xFFFFFFFF";
  return rc == RC_B64 ? "0x7FFFFFFFFFFFFFFF" : "0x7FFFFFFF";
}

/* a TIR_REDUCE's identity and its PTX operation's name (max, min, add) */
static const char *red_identity(int aux, Scalar s) {
  return aux == TRED_MAX ? max_identity(s) : aux == TRED_MIN ? min_identity(s) : px_zero(px_rc_of(s));
}
static const char *red_op(int aux) { return aux == TRED_MAX ? "max" : aux == TRED_MIN ? "min" : "add"; }

/* One step of a reduction, d = op(a, b), op "max.s32", "add.f32", ....
 * An integer max or min goes as a compare and a select: ptxas (13.0, at -O1
 * and above) folds a chain of max.s32 over negated values wrongly: a thread's
 * max of -4l .. -(4l + 3) came back 4l + 1 (rowmax(-iota) 253 for 0; the same
 * PTX under -O0, or with setp + selp, gives 0: 2026-12-05, fifth session,
 * device call 4, .device/ng). Float reductions keep max/min/add. */
static void red_step(Emitter *e, const char *op, const char *d, const char *a, const char *b) {
  bool mx = !strncmp(op, "max.", 4), mn = !strncmp(op, "min.", 4);
  if ((mx || mn) && (op[4] == 's' || op[4] == 'u')) {
    const char *p = px_tmp(e, RC_PRED);
    px_out(e, "setp.%s.%s %s, %s, %s;", mx ? "gt" : "lt", op + 4, p, a, b);
    px_out(e, "selp.b%s %s, %s, %s, %s;", op + 5, d, a, b, p);
    return;
  }
  px_out(e, "%s %s, %s, %s;", op, d, a, b);
}

void px_red_step(Emitter *e, const char *op, const char *d, const char *a, const char *b) { red_step(e, op, d, a, b); }

/* register bytes in the exchange area */
static int exch_bytes(Scalar s) { return px_rc_of(s) == RC_F64 || px_rc_of(s) == RC_B64 ? 8 : 4; }

/* Stores value x (all its elements, from whatever holds them) into the
 * exchange area at byte offset `at`, flat physical order. */
static void exch_store(Emitter *e, const TirInst *x, int64_t at) {
  int n = px_nregs(e, x);
  int64_t elems = x->ty.rank ? px_phys_elems(x) : 1;
  int eb = exch_bytes(x->ty.elem);
  for (int k = 0; k < n; k++) {
    const char *r = px_operand(e, x, k);
    const char *fl = x->ty.rank ? px_elem_index(e, x, k) : "0";
    const char *pr = px_tmp(e, RC_PRED);
    if (x->ty.rank) px_out(e, "setp.lt.u32 %s, %s, %lld;", pr, fl, (long long)elems);
    else px_out(e, "setp.eq.u32 %s, %%tid_, 0;", pr);
    const char *own = px_blk_owner(e, x); /* one of a row value's holders stores it */
    if (own) px_out(e, "and.pred %s, %s, %s;", pr, pr, own);
    const char *ad = px_tmp(e, RC_B32);
    if (x->ty.rank) px_out(e, "mad.lo.u32 %s, %s, %d, %%smem_;", ad, fl, eb);
    else px_out(e, "mov.u32 %s, %%smem_;", ad);
    px_out(e, "add.u32 %s, %s, %lld;", ad, ad, (long long)at);
    px_out(e, "@%s st.shared.%s [%s], %s;", pr, eb == 8 ? "b64" : "b32", ad, r);
  }
}

/* Reads element at flat physical index `fl` (a register) of a value stored
 * in the exchange area at `at`. */
void px_exch_load(Emitter *e, const TirInst *x, int64_t at, const char *fl, const char *r) {
  int eb = exch_bytes(x->ty.elem);
  const char *ad = px_tmp(e, RC_B32);
  px_out(e, "mad.lo.u32 %s, %s, %d, %%smem_;", ad, fl, eb);
  px_out(e, "add.u32 %s, %s, %lld;", ad, ad, (long long)at);
  px_out(e, "ld.shared.%s %s, [%s];", eb == 8 ? "b64" : "b32", r, ad);
}

static int64_t value_exch_bytes(const TirInst *x) {
  return (x->ty.rank ? (int64_t)((px_phys_elems(x) + 0)) : 1) * exch_bytes(x->ty.elem);
}

/* An operation whose result elements need others' elements: its sources
 * go to its exchange area (the plan's scratch buffer for it, plan.c
 * choose_exchange) one after the other, at[i] the shared offset of each;
 * then the barrier within the operation. The plan puts a barrier before it
 * where other threads may still read those bytes. */
void px_exchange(Emitter *e, const TirInst *owner, const TirInst *const *src, int n, int64_t *at) {
  int64_t off = owner->plan->scratch->offset;
  for (int i = 0; i < n; i++) {
    at[i] = off;
    off += (value_exch_bytes(src[i]) + 15) / 16 * 16;
  }
  for (int i = 0; i < n; i++) exch_store(e, src[i], at[i]);
  px_cta_sync(e);
}

/* Loads element c (logical coordinates of x, in registers) of a plan_reloads
 * x into r, masked as the original load was. */
static void reload_at(Emitter *e, const TirInst *x, const char *const *c, const char *r) {
  const TirInst *ld = x->op == TIR_LOAD ? x : x->args[0];
  const char *lc[MAX_TILE_RANK];
  if (x->op == TIR_TRANSPOSE) lc[0] = c[1], lc[1] = c[0];
  else
    for (int d = 0; d < ld->ty.rank; d++) lc[d] = c[d];
  const char *ok = px_tmp(e, RC_PRED), *g[MAX_TENSOR_RANK];
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  px_subscripts(e, ld, lc, NULL, NULL, 0, ok, g);
  px_out(e, "mov.%s %s, %s;", px_mov_type(px_rc_of(ld->ty.elem)), r, px_zero(px_rc_of(ld->ty.elem)));
  px_ld(e, "global", ld->ty.elem, r, px_tensor_addr(e, ld->aux, g), ok);
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
  if (px_is_frag(e, in)) {
    FragGeom g = px_frag_geom(e, in);
    int mi = k / g.rpt / g.ntn, first = mi * g.ntn * g.rpt + (k % 4 >> 1) * 2;
    return first != k ? first : -1;
  }
  if (plan_is_blocked(in)) { /* a row repetition's registers: one row */
    BlockGeom g = plan_block_geom(in);
    int first = k - k % (g.V * (int)g.reps_c);
    return first != k ? first : -1;
  }
  return k % e->V && in->plan->phys[in->ty.rank - 1] % e->V == 0 ? k - 1 : -1;
}

void px_emit_broadcast(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  int r = in->ty.rank, xr = x->ty.rank;
  RegClass rc = px_rc_of(in->ty.elem);
  if (px_is_frag(e, in) && px_is_rowfrag(e, x) && xr == r && plan_folded_rows(x) == plan_folded_rows(in)) {
    /* a row value over its fragment value: the thread holds its rows already */
    FragGeom g = px_frag_geom(e, in);
    for (int k = 0; k < px_nregs(e, in); k++)
      px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k),
             px_reg(e, x, k / g.rpt / g.ntn * 2 + (k % 4 >> 1)));
    return;
  }
  if (plan_broadcast_in_regs(in) && plan_is_fragcols(x)) {
    /* a row vector over its fragment value: the thread holds its columns already */
    FragGeom g = px_frag_geom(e, in);
    for (int k = px_kbeg(e); k < px_kend(e, px_nregs(e, in)); k++)
      px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_reg(e, x, px_fragcols_reg(&g, k)));
    return;
  }
  if (plan_broadcast_in_regs(in)) {
    /* a row value over a blocked value whose rows lie alike: register k's
     * row repetition is the row value's register; a row vector in the
     * columns layout: register k's place in its row repetition */
    BlockGeom g = plan_block_geom(in);
    int per = g.V * (int)g.reps_c; /* registers a row repetition */
    for (int k = 0; k < px_nregs(e, in); k++)
      px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k),
             px_reg(e, x, plan_is_columns(x) ? k % per : k / per));
    return;
  }
  if (plan_reloads(x)) {
    for (int k = 0; k < px_nregs(e, in); k++) {
      int same = same_as(e, in, k);
      if (same >= 0) {
        px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_reg(e, in, same));
        continue;
      }
      const char *fl = px_elem_index(e, in, k);
      const char *c[MAX_TILE_RANK], *sc[MAX_TILE_RANK];
      for (int d = 0; d < r; d++) c[d] = px_coord(e, fl, in->plan->phys, r, d);
      for (int d = 0; d < xr; d++) sc[d] = x->ty.dims[d] == 1 ? "0" : c[r - xr + d];
      reload_at(e, x, sc, px_reg(e, in, k));
    }
    return;
  }
  int64_t at;
  px_exchange(e, in, &x, 1, &at);
  if (r == 2 && xr == 2 && x->ty.dims[1] == 1 && e->V == 1 && !px_is_frag(e, in) && !px_is_rowfrag(e, in) &&
      !plan_is_blocked(in) && !plan_is_blocked_rows(x) &&
      in->plan->phys[1] % e->T == 0 && x->ty.dims[0] == in->ty.dims[0] && x->plan->phys[0] == in->plan->phys[0]) {
    /* a column over rows of one-element chunks that are whole rounds of the
     * threads (emit_long_rows' layout): register k lies in row k / cpr, the
     * same row in every thread, so each row's value is one shared load at a
     * fixed offset, copied to the row's other registers */
    int64_t cpr = in->plan->phys[1] / e->T;
    int eb = exch_bytes(x->ty.elem);
    for (int k = 0; k < px_nregs(e, in); k++) {
      if (k % cpr) {
        px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_reg(e, in, k - k % cpr));
        continue;
      }
      px_out(e, "ld.shared.%s %s, [%%smem_+%lld];", eb == 8 ? "b64" : "b32", px_reg(e, in, k),
             (long long)(at + (k / cpr) * x->plan->phys[1] * eb));
    }
    return;
  }
  for (int k = 0; k < px_nregs(e, in); k++) {
    int same = same_as(e, in, k);
    if (same >= 0) {
      px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_reg(e, in, same));
      continue;
    }
    const char *fl = px_elem_index(e, in, k);
    const char *c[MAX_TILE_RANK], *sc[MAX_TILE_RANK];
    for (int d = 0; d < r; d++) c[d] = px_coord(e, fl, in->plan->phys, r, d);
    for (int d = 0; d < xr; d++) {
      const char *cd = c[r - xr + d];
      if (x->ty.dims[d] == 1) cd = "0";
      const char *m = px_tmp(e, RC_B32);
      px_out(e, "min.u32 %s, %s, %lld;", m, cd, (long long)(x->plan->phys[d] - 1));
      sc[d] = m;
    }
    px_exch_load(e, x, at, px_flat_of(e, sc, x->plan->phys, xr), px_reg(e, in, k));
  }
}

/* rows lying at row base `row`: a predicate true where that row lies in
 * the tile, or NULL where every thread's does (the lanes and warps down
 * the rows cover at most its rows) */
static const char *idle_rows_pred(Emitter *e, const BlockGeom *g, const char *row) {
  if ((int64_t)g->tr * g->wr <= g->M) return NULL;
  const char *p = px_tmp(e, RC_PRED);
  px_out(e, "setp.lt.u32 %s, %s, %lld;", p, row, (long long)g->M);
  return p;
}

/* plan_transpose_in_smem: register k of the source, at row rb + ro(k) and
 * column cb + co(k), goes to word (row P + column) of the padded tile, so a
 * thread's words lie at one base register plus constants; result register
 * k, at (i, j), reads the source's (j, i) the same way. With P odd (in
 * words, for 4-byte words) the lanes reading down a column meet each bank
 * at most twice. */
static void emit_transpose_smem(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  int eb = exch_bytes(x->ty.elem);
  int64_t P = plan_transpose_pitch(x), at = in->plan->scratch->offset;
  BlockGeom gs = plan_block_geom(x), gd = plan_block_geom(in);
  const char *w = eb == 8 ? "b64" : "b32";
  const char *sb = px_tmp(e, RC_B32), *db = px_tmp(e, RC_B32);
  const char *srow = px_blk_row_base(e, &gs), *drow = px_blk_row_base(e, &gd);
  /* a tile of fewer rows than a repetition's lanes and warps leaves the
   * threads past its last row idle (their registers are slack): they
   * neither write nor read the shared tile */
  const char *sp = idle_rows_pred(e, &gs, srow), *dp = idle_rows_pred(e, &gd, drow);
  const char *sq = sp ? arena_printf(e->a, "@%s ", sp) : "", *dq = dp ? arena_printf(e->a, "@%s ", dp) : "";
  px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", sb, srow, (long long)P, px_blk_col_base(e, &gs));
  px_out(e, "mad.lo.u32 %s, %s, %d, %%smem_;", sb, sb, eb);
  for (int k = 0; k < px_nregs(e, x); k++)
    px_out(e, "%sst.shared.%s [%s+%lld], %s;", sq, w, sb,
            (long long)(at + (px_blk_row_off(&gs, k) * P + px_blk_col_off(&gs, k)) * eb), px_operand(e, x, k));
  px_cta_sync(e);
  px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", db, px_blk_col_base(e, &gd), (long long)P, drow);
  px_out(e, "mad.lo.u32 %s, %s, %d, %%smem_;", db, db, eb);
  for (int k = 0; k < px_nregs(e, in); k++)
    px_out(e, "%sld.shared.%s %s, [%s+%lld];", dq, w, px_reg(e, in, k), db,
            (long long)(at + (px_blk_col_off(&gd, k) * P + px_blk_row_off(&gd, k)) * eb));
}

void px_emit_transpose(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  if (plan_transpose_in_smem(in)) return emit_transpose_smem(e, in);
  if (plan_reloads(in)) {
    for (int k = 0; k < px_nregs(e, in); k++) {
      const char *fl = px_elem_index(e, in, k);
      const char *c[2] = {px_coord(e, fl, in->plan->phys, 2, 0), px_coord(e, fl, in->plan->phys, 2, 1)};
      reload_at(e, in, c, px_reg(e, in, k));
    }
    return;
  }
  int64_t at;
  px_exchange(e, in, &x, 1, &at);
  for (int k = 0; k < px_nregs(e, in); k++) {
    const char *fl = px_elem_index(e, in, k);
    const char *c0 = px_coord(e, fl, in->plan->phys, 2, 0), *c1 = px_coord(e, fl, in->plan->phys, 2, 1);
    const char *sc[2] = {px_tmp(e, RC_B32), px_tmp(e, RC_B32)};
    px_out(e, "min.u32 %s, %s, %lld;", sc[0], c1, (long long)(x->plan->phys[0] - 1));
    px_out(e, "min.u32 %s, %s, %lld;", sc[1], c0, (long long)(x->plan->phys[1] - 1));
    px_exch_load(e, x, at, px_flat_of(e, sc, x->plan->phys, 2), px_reg(e, in, k));
  }
}

/* flat(t) (spec 9.3): the source through the exchange area; result
 * element (i0, ...) at logical row-major index i reads the source's
 * element i, at the source's physical coordinates (a division by each
 * constant extent). Slack elements read a clamped element: they are never
 * used. */
void px_emit_reshape(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  int64_t at;
  px_exchange(e, in, &x, 1, &at);
  int r = in->ty.rank, xr = x->ty.rank;
  int64_t total = 1;
  for (int d = 0; d < xr; d++) total *= x->ty.dims[d];
  for (int k = 0; k < px_nregs(e, in); k++) {
    const char *fl = px_elem_index(e, in, k);
    const char *li = px_tmp(e, RC_B32);
    px_out(e, "mov.u32 %s, 0;", li);
    for (int d = 0; d < r; d++)
      px_out(e, "mad.lo.u32 %s, %s, %lld, %s;", li, li, (long long)in->ty.dims[d], px_coord(e, fl, in->plan->phys, r, d));
    px_out(e, "min.u32 %s, %s, %lld;", li, li, (long long)(total - 1));
    const char *sc[MAX_TILE_RANK];
    for (int d = xr - 1; d >= 0; d--) {
      const char *c = px_tmp(e, RC_B32);
      if (d) {
        px_out(e, "rem.u32 %s, %s, %lld;", c, li, (long long)x->ty.dims[d]);
        px_out(e, "div.u32 %s, %s, %lld;", li, li, (long long)x->ty.dims[d]);
      } else {
        px_out(e, "mov.u32 %s, %s;", c, li);
      }
      sc[d] = c;
    }
    px_exch_load(e, x, at, px_flat_of(e, sc, x->plan->phys, xr), px_reg(e, in, k));
  }
}

void px_emit_reduce(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  if (px_is_rowfrag(e, in)) return emit_reduce_frag(e, in);
  if (plan_reduce_in_regs(in)) return emit_reduce_blocked(e, in);
  int64_t at;
  px_exchange(e, in, &x, 1, &at);
  int r = in->ty.rank;
  int64_t len = x->ty.dims[r - 1];
  RegClass rc = px_rc_of(in->ty.elem);
  const char *t = px_arith_type(in->ty.elem);
  for (int k = 0; k < px_nregs(e, in); k++) {
    const char *fl = px_elem_index(e, in, k);
    const char *c[MAX_TILE_RANK];
    for (int d = 0; d < r; d++) c[d] = px_coord(e, fl, in->plan->phys, r, d);
    const char *d = px_reg(e, in, k);
    px_out(e, "mov.%s %s, %s;", px_mov_type(rc), d, red_identity(in->aux, in->ty.elem));
    /* over the logical extent only: slack gives the identity */
    const char *j = px_tmp(e, RC_B32);
    int L = px_new_label(e);
    px_out(e, "mov.u32 %s, 0;", j);
    px_label(e, "red", L);
    const char *sc[MAX_TILE_RANK];
    for (int q = 0; q < r - 1; q++) { /* rows past the input's physical shape are slack: stay inside it */
      const char *m = px_tmp(e, RC_B32);
      px_out(e, "min.u32 %s, %s, %lld;", m, c[q], (long long)(x->plan->phys[q] - 1));
      sc[q] = m;
    }
    sc[r - 1] = j;
    const char *v = px_tmp(e, px_rc_of(x->ty.elem));
    px_exch_load(e, x, at, px_flat_of(e, sc, x->plan->phys, r), v);
    if (px_rc_of(x->ty.elem) != rc) {
      const char *cv = px_tmp(e, rc);
      px_out(e, "cvt.%s.%s %s, %s;", rc == RC_B64 ? "s64" : "s32", px_arith_type(x->ty.elem), cv, v);
      v = cv;
    }
    red_step(e, arena_printf(e->a, "%s.%s", red_op(in->aux), t), d, d, v);
    px_out(e, "add.u32 %s, %s, 1;", j, j);
    const char *p = px_tmp(e, RC_PRED);
    px_out(e, "setp.lt.u32 %s, %s, %lld;", p, j, (long long)len);
    px_out(e, "@%s bra $Lred%d;", p, L);
    px_round_reg(e, in->ty.elem, d);
  }
}

/* rowmax or rowsum of a fragment value into its row value: each thread
 * folds its registers of a row (over the logical columns only: slack gives
 * the identity), then the four lanes of the quad that share the row
 * exchange by shuffles. No shared memory, no barrier. */
static void emit_reduce_frag(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  FragGeom g = px_frag_geom(e, x);
  int64_t len = x->ty.dims[x->ty.rank - 1];
  const char *op = in->aux == TRED_SUM ? "add.rn.f32" : arena_printf(e->a, "%s.f32", red_op(in->aux));
  const char *id = red_identity(in->aux, S_F32);
  for (int mi = 0; mi < g.tpm; mi++)
    for (int h = 0; h < 2; h++) {
      const char *d = px_reg(e, in, mi * 2 + h);
      px_out(e, "mov.f32 %s, %s;", d, id);
      for (int ni = 0; ni < g.ntn; ni++)
        for (int j = 0; j < g.NT / 8; j++)
          for (int c = 0; c < 2; c++) {
            const char *v = px_reg(e, x, (mi * g.ntn + ni) * g.rpt + j * 4 + h * 2 + c);
            int64_t col = (int64_t)ni * g.NT + j * 8 + c; /* plus 2 t */
            if (col + 6 >= len) { /* some lane's column may be slack */
              const char *cc = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED), *sv = px_tmp(e, RC_F32);
              px_out(e, "add.u32 %s, %%ft2_, %lld;", cc, (long long)col);
              px_out(e, "setp.lt.u32 %s, %s, %lld;", p, cc, (long long)len);
              px_out(e, "selp.f32 %s, %s, %s, %s;", sv, v, id, p);
              v = sv;
            }
            red_step(e, op, d, d, v);
          }
      for (int m = 1; m <= 2; m *= 2) {
        const char *o = px_tmp(e, RC_F32);
        px_out(e, "shfl.sync.bfly.b32 %s, %s, %d, 31, 0xffffffff;", o, d, m);
        red_step(e, op, d, d, o);
      }
    }
}

/* A sub-tile or an element of a tile value. */
void px_emit_extract(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  bool shared = x->plan->res == RES_SHARED;
  int64_t at = 0;
  if (!shared) px_exchange(e, in, &x, 1, &at);
  int xr = x->ty.rank;
  for (int k = 0; k < px_nregs(e, in); k++) {
    const char *fl = in->ty.rank ? px_elem_index(e, in, k) : "0";
    const char *c[MAX_TILE_RANK], *wc[MAX_TILE_RANK];
    int j = 0;
    for (int i = 0; i < in->nsubs; i++) {
      const char *start = px_sub_start(e, in, i);
      const char *w = px_tmp(e, RC_B32);
      if (in->subs[i].point) {
        px_out(e, "mov.b32 %s, %s;", w, start);
      } else {
        c[j] = px_coord(e, fl, in->plan->phys, in->ty.rank, j);
        px_out(e, "add.s32 %s, %s, %s;", w, start, c[j]);
        j++;
      }
      px_out(e, "min.u32 %s, %s, %lld;", w, w, (long long)(x->plan->phys[i] - 1)); /* stays inside the tile */
      wc[i] = w;
    }
    const char *d = px_reg(e, in, k);
    if (shared) px_ld(e, "shared", x->ty.elem, d, px_buf_addr(e, x->plan->buf, wc), NULL);
    else px_exch_load(e, x, at, px_flat_of(e, wc, x->plan->phys, xr), d);
  }
}

void px_emit_write(Emitter *e, const TirInst *in) {
  const TirInst *slot = in->args[0], *v = in->args[1];
  if (in->plan->folded) return; /* acc += dot: the dot accumulated in the slot's registers */
  bool shared = slot->plan->res == RES_SHARED;
  if (!in->nsubs && shared && v->op == TIR_LOAD && v->plan->buf == slot->plan->buf)
    return; /* the load staged it there */
  /* a tile copied by cp.async may still be landing, chunks of it owned by
   * other threads than the elements this write stores: all wait, then write */
  if (shared && e->async_pending) px_cta_sync(e);
  if (!in->nsubs) {
    if (shared) px_cta_sync(e); /* others may still read the old contents */
    for (int k = 0; k < px_nregs(e, slot); k++) {
      const char *r = px_operand(e, v, k);
      if (!shared) {
        px_out(e, "mov.%s %s, %s;", px_mov_type(px_rc_of(slot->ty.elem)), px_reg(e, slot, k), r);
        continue;
      }
      const char *fl = px_elem_index(e, slot, k);
      const char *pr = px_tmp(e, RC_PRED);
      px_out(e, "setp.lt.u32 %s, %s, %lld;", pr, fl, (long long)px_phys_elems(slot));
      const char *own = px_blk_owner(e, slot);
      if (own) px_out(e, "and.pred %s, %s, %s;", pr, pr, own);
      const char *c[MAX_TILE_RANK];
      for (int d = 0; d < slot->ty.rank; d++) c[d] = px_coord(e, fl, slot->plan->phys, slot->ty.rank, d);
      px_st(e, "shared", slot->ty.elem, px_buf_addr(e, slot->plan->buf, c), r, pr);
    }
    px_publish_write(e, slot);
    return;
  }
  /* a sub-tile: each slot element inside the region takes the value's
   * element at its relative coordinates, read from the exchange area */
  int64_t at = 0;
  if (v->ty.rank) px_exchange(e, in, &v, 1, &at);
  int sr = slot->ty.rank;
  for (int k = 0; k < px_nregs(e, slot); k++) {
    const char *fl = px_elem_index(e, slot, k);
    const char *inside = px_tmp(e, RC_PRED);
    px_out(e, "setp.lt.u32 %s, %s, %lld;", inside, fl, (long long)px_phys_elems(slot));
    const char *c[MAX_TILE_RANK], *rel[MAX_TILE_RANK];
    int j = 0;
    for (int i = 0; i < sr; i++) {
      c[i] = px_coord(e, fl, slot->plan->phys, sr, i);
      const char *start = px_sub_start(e, in, i);
      const char *off = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED);
      px_out(e, "sub.s32 %s, %s, %s;", off, c[i], start);
      /* inside when 0 <= off < len (unsigned compare covers both) */
      px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", p, off, (long long)in->subs[i].len, inside);
      px_out(e, "mov.pred %s, %s;", inside, p);
      if (!in->subs[i].point) {
        const char *m = px_tmp(e, RC_B32);
        px_out(e, "min.u32 %s, %s, %lld;", m, off, (long long)(v->ty.rank ? v->plan->phys[j] - 1 : 0));
        rel[j++] = m;
      }
    }
    const char *val = px_tmp(e, px_rc_of(slot->ty.elem));
    if (v->ty.rank) px_exch_load(e, v, at, px_flat_of(e, rel, v->plan->phys, v->ty.rank), val);
    else px_out(e, "mov.%s %s, %s;", px_mov_type(px_rc_of(slot->ty.elem)), val, px_reg(e, v, 0));
    if (!shared) {
      px_out(e, "@%s mov.%s %s, %s;", inside, px_mov_type(px_rc_of(slot->ty.elem)), px_reg(e, slot, k), val);
    } else {
      px_st(e, "shared", slot->ty.elem, px_buf_addr(e, slot->plan->buf, c), val, inside);
    }
  }
  px_publish_write(e, slot);
}

/* One butterfly step of a reduction: d = op(d, lane ^ m's d). */
static void shfl_fold(Emitter *e, RegClass rc, const char *op, const char *d, int m) {
  if (rc == RC_F64 || rc == RC_B64) {
    const char *lo = px_tmp(e, RC_B32), *hi = px_tmp(e, RC_B32), *o = px_tmp(e, rc);
    px_out(e, "mov.b64 {%s, %s}, %s;", lo, hi, d);
    px_out(e, "shfl.sync.bfly.b32 %s, %s, %d, 31, 0xffffffff;", lo, lo, m);
    px_out(e, "shfl.sync.bfly.b32 %s, %s, %d, 31, 0xffffffff;", hi, hi, m);
    px_out(e, "mov.b64 %s, {%s, %s};", o, lo, hi);
    red_step(e, op, d, d, o);
    return;
  }
  const char *o = px_tmp(e, rc);
  px_out(e, "shfl.sync.bfly.b32 %s, %s, %d, 31, 0xffffffff;", o, d, m);
  red_step(e, op, d, d, o);
}

/* The warps of a row meet: the partial of row (row base + rr tr wr) from
 * warp column wcol goes to (row wc + wcol) 8 bytes at `base` (lane column 0
 * writes it), one barrier, and every thread folds its row's wc (or its
 * warp's lanes do, for four warps or more). regs[rr]:
 * the row repetitions' registers, each already folded over the row's lanes. */
static void meet_warps(Emitter *e, const BlockGeom *g, RegClass rc, const char *op, const char *const *regs,
                       int64_t base) {
  const char *rb = px_blk_row_base(e, g), *wcol = px_tmp(e, RC_B32), *lc = px_tmp(e, RC_PRED);
  px_out(e, "bfe.u32 %s, %%tid_, 5, %d;", wcol, px_log2i(g->wc));
  {
    const char *l = px_tmp(e, RC_B32);
    px_out(e, "and.b32 %s, %%tid_, %d;", l, g->tc - 1);
    px_out(e, "setp.eq.u32 %s, %s, 0;", lc, l);
  }
  const char *mov = rc == RC_F64 || rc == RC_B64 ? "b64" : "b32";
  for (int rr = 0; rr < (int)g->reps_r; rr++) {
    const char *row = px_tmp(e, RC_B32), *ad = px_tmp(e, RC_B32), *in_tile = px_tmp(e, RC_PRED);
    px_out(e, "add.u32 %s, %s, %lld;", row, rb, (long long)rr * g->tr * g->wr);
    px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", in_tile, row, (long long)g->M, lc);
    px_out(e, "mad.lo.u32 %s, %s, %d, %s;", ad, row, g->wc, wcol);
    px_out(e, "mad.lo.u32 %s, %s, 8, %%smem_;", ad, ad);
    px_out(e, "@%s st.shared.%s [%s+%lld], %s;", in_tile, mov, ad, (long long)base, regs[rr]);
  }
  px_cta_sync(e);
  /* four or more warps a row (its lanes all along the row: tc 32): lane l
   * reads partial l mod wc and the lanes fold them by butterfly shuffles,
   * log2(wc) steps, where reading every partial took wc loads and wc - 1
   * operations a thread (31 of each for a row of 32 warps) */
  bool lanes = g->wc >= 4 && g->tc == 32;
  const char *lw = NULL;
  if (lanes) {
    lw = px_tmp(e, RC_B32);
    px_out(e, "and.b32 %s, %%tid_, %d;", lw, g->wc - 1);
    px_out(e, "shl.b32 %s, %s, 3;", lw, lw);
  }
  for (int rr = 0; rr < (int)g->reps_r; rr++) {
    const char *row = px_tmp(e, RC_B32), *ad = px_tmp(e, RC_B32), *d = regs[rr];
    px_out(e, "add.u32 %s, %s, %lld;", row, rb, (long long)rr * g->tr * g->wr);
    px_out(e, "min.u32 %s, %s, %lld;", row, row, (long long)(g->M - 1)); /* slack rows read row M - 1 */
    px_out(e, "mul.lo.u32 %s, %s, %d;", ad, row, g->wc * 8);
    px_out(e, "add.u32 %s, %s, %%smem_;", ad, ad);
    if (lanes) {
      px_out(e, "add.u32 %s, %s, %s;", ad, ad, lw);
      px_out(e, "ld.shared.%s %s, [%s+%lld];", mov, d, ad, (long long)base);
      for (int m = 1; m < g->wc; m *= 2) shfl_fold(e, rc, op, d, m);
      continue;
    }
    px_out(e, "ld.shared.%s %s, [%s+%lld];", mov, d, ad, (long long)base);
    for (int w = 1; w < g->wc; w++) {
      const char *o = px_tmp(e, rc);
      px_out(e, "ld.shared.%s %s, [%s+%lld];", mov, o, ad, (long long)(base + w * 8));
      red_step(e, op, d, d, o);
    }
  }
}

/* Row repetition rr's registers of x folded by one thread into in's
 * register rr (emit_reduce_blocked); cb: its column base. gcol: NULL, or in a shifted walk
 * (shiftwalk.c) the thread's first column in the row (the loop's value
 * plus its column base), where the columns before 0 or at or past the
 * walk's end e->sw_hi are phantoms, folded as the identity. */
static void fold_thread(Emitter *e, const TirInst *in, const BlockGeom *g, const char *cb, int rr, const char *gcol) {
  const TirInst *x = in->args[0];
  int64_t len = x->ty.dims[x->ty.rank - 1];
  RegClass rc = px_rc_of(in->ty.elem), xc = px_rc_of(x->ty.elem);
  const char *op = arena_printf(e->a, "%s.%s", red_op(in->aux), px_arith_type(in->ty.elem));
  const char *id = red_identity(in->aux, in->ty.elem);
  int per = g->V * (int)g->reps_c;
  /* the fold starts from the thread's first column when no thread's is
   * slack, not from the identity: one operation fewer */
  bool first_real = !gcol && px_blk_col_off(g, 0) + px_blk_col_last(g) < len;
  const char *d = px_reg(e, in, rr);
  if (!first_real) px_out(e, "mov.%s %s, %s;", px_mov_type(rc), d, id);
  for (int j = 0; j < per; j++) {
    const char *v = px_reg(e, x, rr * per + j);
    if (xc != rc) {
      const char *cv = px_tmp(e, rc);
      px_out(e, "cvt.%s.%s %s, %s;", rc == RC_B64 ? "s64" : "s32", px_arith_type(x->ty.elem), cv, v);
      v = cv;
    }
    int64_t col = px_blk_col_off(g, j); /* plus the column base */
    const char *p = NULL;
    if (col + px_blk_col_last(g) >= len) { /* some thread's column may be slack */
      const char *cc = px_tmp(e, RC_B32);
      p = px_tmp(e, RC_PRED);
      px_out(e, "add.u32 %s, %s, %lld;", cc, cb, (long long)col);
      px_out(e, "setp.lt.u32 %s, %s, %lld;", p, cc, (long long)len);
    }
    if (gcol) { /* a phantom column of a shifted walk */
      const char *cc = px_tmp(e, RC_B32), *q = px_tmp(e, RC_PRED);
      px_out(e, "add.s32 %s, %s, %lld;", cc, gcol, (long long)col);
      px_out(e, "setp.ge.s32 %s, %s, 0;", q, cc);
      px_out(e, "setp.lt.and.s32 %s, %s, %s, %s;", q, cc, e->sw_hi, q);
      if (p) px_out(e, "and.pred %s, %s, %s;", q, q, p);
      p = q;
    }
    if (p) {
      const char *sv = px_tmp(e, rc);
      px_out(e, "selp.%s %s, %s, %s, %s;", px_mov_type(rc), sv, v, id, p);
      v = sv;
    }
    if (j == 0 && first_real) px_out(e, "mov.%s %s, %s;", px_mov_type(rc), d, v);
    else red_step(e, op, d, d, v);
  }
}

/* rowmax or rowsum of a blocked value into its row layout (plan.c,
 * plan_reduce_in_regs): each thread folds its registers of a row repetition
 * (over the logical columns only: slack gives the identity), the tc lanes
 * along the row (the low bits of the lane) meet by butterfly shuffles, and
 * when wc warps share a row their partials go through the plan's scratch
 * (meet_warps). No shared memory at all when a row lies within a warp. A
 * partial reduction (plan/deferred.c) stops after the thread's own fold:
 * its loop's exit meets the rows (px_defer_exit). In a shifted walk
 * (shiftwalk.c, whose reductions are all partial) a thread whose columns
 * are not all inside [0, hi) folds with each column's test, the others
 * as before: only the first and last blocks of a row have phantoms. */
static void emit_reduce_blocked(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  BlockGeom g = plan_block_geom(x);
  RegClass rc = px_rc_of(in->ty.elem);
  bool partial = in->plan->partial;
  const char *op = arena_printf(e->a, "%s.%s", red_op(in->aux), px_arith_type(in->ty.elem));
  const char *cb = px_blk_col_base(e, &g);
  if (partial && e->sw_loop) {
    int W = px_new_label(e);
    const char *gcol = px_tmp(e, RC_B32), *last = px_tmp(e, RC_B32), *in_ = px_tmp(e, RC_PRED);
    px_out(e, "add.s32 %s, %s, %s;", gcol, px_reg(e, e->sw_loop, 0), cb);
    px_out(e, "add.s32 %s, %s, %lld;", last, gcol, (long long)px_blk_col_off(&g, g.V * (int)g.reps_c - 1));
    px_out(e, "setp.ge.s32 %s, %s, 0;", in_, gcol);
    px_out(e, "setp.lt.and.s32 %s, %s, %s, %s;", in_, last, e->sw_hi, in_);
    px_out(e, "@!%s bra $Lswph%d;", in_, W);
    for (int rr = 0; rr < (int)g.reps_r; rr++) fold_thread(e, in, &g, cb, rr, NULL);
    px_out(e, "bra.uni $Lswphd%d;", W);
    px_label(e, "swph", W);
    /* every column a phantom (a block past hi, the walk's last): the identity */
    const char *none = px_tmp(e, RC_PRED);
    px_out(e, "setp.ge.s32 %s, %s, %s;", none, gcol, e->sw_hi);
    px_out(e, "setp.lt.or.s32 %s, %s, 0, %s;", none, last, none);
    for (int rr = 0; rr < (int)g.reps_r; rr++)
      px_out(e, "@%s mov.%s %s, %s;", none, px_mov_type(rc), px_reg(e, in, rr), red_identity(in->aux, in->ty.elem));
    px_out(e, "@%s bra $Lswphd%d;", none, W);
    for (int rr = 0; rr < (int)g.reps_r; rr++) fold_thread(e, in, &g, cb, rr, gcol);
    px_label(e, "swphd", W);
  } else {
    for (int rr = 0; rr < (int)g.reps_r; rr++) {
      fold_thread(e, in, &g, cb, rr, NULL);
      for (int m = 1; !partial && m < g.tc; m *= 2) shfl_fold(e, rc, op, px_reg(e, in, rr), m);
    }
  }
  if (g.wc > 1 && !partial) {
    const char **regs = arena_alloc(e->a, sizeof *regs * (size_t)g.reps_r);
    for (int rr = 0; rr < (int)g.reps_r; rr++) regs[rr] = px_reg(e, in, rr);
    meet_warps(e, &g, rc, op, regs, in->plan->scratch->offset);
  }
  for (int rr = 0; rr < (int)g.reps_r; rr++) px_round_reg(e, in->ty.elem, px_reg(e, in, rr));
}

/* -FLT_MAX: a deferred logsumexp's running max before a thread has seen an
 * element. Finite, so that a thread whose columns of a block are all -inf
 * (masked) computes exp(-inf - -FLT_MAX) = 0 and exp(m - mnew) = 1, not NaN. */
static const char *LSE_NONE = "0fFF7FFFFF";

/* e^a into d, as the language's exp (ops.c, px_emit_math) */
static void exp_f32(Emitter *e, const char *d, const char *a) {
  px_out(e, "mul.f32 %s, %s, 0f3FB8AA3B;", d, a);
  px_out(e, "ex2.approx.ftz.f32 %s, %s;", d, d);
}

void px_exp_f32(Emitter *e, const char *d, const char *a) { exp_f32(e, d, a); }

/* Before a loop with deferred accumulators (plan/deferred.c): each
 * accumulator's value so far is set aside and its registers start at the
 * identity, to take the thread's own elements. Returns the values set
 * aside, an array of registers per accumulator, for px_defer_exit. */
const char ***px_defer_enter(Emitter *e, const TirInst *loop) {
  int n = 0;
  for (const PlanDefer *d = loop->plan->defer; d; d = d->next) n++;
  if (!n) return NULL;
  const char ***saved = arena_alloc(e->a, sizeof *saved * (size_t)n);
  /* the plan counts the exit's exchange as written and read back at the
   * loop (plan/memory.c, pl_live_ranges: its bytes are the loop's own),
   * where it takes that exchange's barrier to order what came before */
  if (loop->plan->scratch) px_cta_sync(e);
  int i = 0;
  for (const PlanDefer *d = loop->plan->defer; d; d = d->next, i++) {
    int ns = d->kind == DEFER_LSE ? 2 : 1, nr = px_nregs(e, d->slot[0]);
    saved[i] = arena_alloc(e->a, sizeof **saved * (size_t)(ns * nr));
    for (int s = 0; s < ns; s++) {
      const TirInst *slot = d->slot[s];
      RegClass rc = px_rc_of(slot->ty.elem);
      const char *id = d->kind == DEFER_SUM || s == 1 ? px_zero(rc)
                       : d->kind == DEFER_MAX          ? max_identity(slot->ty.elem)
                                                       : LSE_NONE;
      for (int k = 0; k < nr; k++) {
        const char *v = px_tmp(e, rc), *r = px_reg(e, slot, k);
        px_out(e, "mov.%s %s, %s;", px_mov_type(rc), v, r);
        px_out(e, "mov.%s %s, %s;", px_mov_type(rc), r, id);
        saved[i][s * nr + k] = v;
      }
    }
  }
  return saved;
}

/* The row's threads meet in regs: lanes by shuffles, warps through the
 * loop's exit exchange, after a barrier where an accumulator before this
 * one used it (*used: others may still be reading its values). */
static void meet_row(Emitter *e, const BlockGeom *g, RegClass rc, const char *op, const char *const *regs, int64_t base,
                     bool *used) {
  for (int rr = 0; rr < (int)g->reps_r; rr++)
    for (int m = 1; m < g->tc; m *= 2) shfl_fold(e, rc, op, regs[rr], m);
  if (g->wc > 1) {
    if (*used) px_cta_sync(e);
    meet_warps(e, g, rc, op, regs, base);
    *used = true;
  }
}

/* After the loop: each accumulator's threads meet (a sum or a max as the
 * reduction would have; the logsumexp's pairs as M = max m, L = sum l e^(m -
 * M)), then the result joins the value set aside before the loop. */
void px_defer_exit(Emitter *e, const TirInst *loop, const char ***saved) {
  if (!saved) return;
  int64_t base = loop->plan->scratch ? loop->plan->scratch->offset : 0;
  bool used = false, cl = cluster_split_loop(e->p, loop); /* the CTAs of a cluster meet too (cluster.c) */
  int i = 0;
  for (const PlanDefer *d = loop->plan->defer; d; d = d->next, i++) {
    BlockGeom g = plan_block_geom(d->red->args[0]);
    const TirInst *s0 = d->slot[0];
    int nr = px_nregs(e, s0);
    if (nr != (int)g.reps_r) diag_ice("ptx: a deferred accumulator's registers are not its rows'");
    RegClass rc = px_rc_of(s0->ty.elem);
    const char *t = px_arith_type(s0->ty.elem);
    const char **r0 = arena_alloc(e->a, sizeof *r0 * (size_t)nr);
    for (int k = 0; k < nr; k++) r0[k] = px_reg(e, s0, k);
    if (d->kind != DEFER_LSE) {
      bool mx = d->kind == DEFER_MAX;
      const char *op = arena_printf(e->a, "%s.%s", mx ? "max" : "add", t);
      meet_row(e, &g, rc, op, r0, base, &used);
      if (cl) px_cluster_meet(e, &g, rc, op, r0, NULL);
      for (int k = 0; k < nr; k++) {
        red_step(e, op, r0[k], saved[i][k], r0[k]);
        px_round_reg(e, s0->ty.elem, r0[k]);
      }
      continue;
    }
    const char **r1 = arena_alloc(e->a, sizeof *r1 * (size_t)nr), **mt = arena_alloc(e->a, sizeof *mt * (size_t)nr);
    for (int k = 0; k < nr; k++) {
      r1[k] = px_reg(e, d->slot[1], k);
      mt[k] = px_tmp(e, RC_F32);
      px_out(e, "mov.f32 %s, %s;", mt[k], r0[k]);
    }
    meet_row(e, &g, RC_F32, "max.f32", r0, base, &used); /* M */
    for (int k = 0; k < nr; k++) { /* l e^(m - M), each thread's */
      const char *x = px_tmp(e, RC_F32);
      px_out(e, "sub.rn.f32 %s, %s, %s;", x, mt[k], r0[k]);
      exp_f32(e, x, x);
      px_out(e, "mul.rn.f32 %s, %s, %s;", r1[k], r1[k], x);
    }
    meet_row(e, &g, RC_F32, "add.f32", r1, base, &used); /* L */
    if (cl) px_cluster_meet(e, &g, RC_F32, "max.f32", r0, r1);
    for (int k = 0; k < nr; k++) { /* joined with the (m0, l0) before the loop; none seen: (m0, l0) */
      const char *m0 = saved[i][k], *l0 = saved[i][nr + k];
      const char *mn = px_tmp(e, RC_F32), *a = px_tmp(e, RC_F32), *b = px_tmp(e, RC_F32), *p = px_tmp(e, RC_PRED);
      /* no thread saw an element: the max still the marker and the sum 0
       * (a row of -3.4e38 values has that max, and a sum) */
      px_out(e, "setp.eq.f32 %s, %s, %s;", p, r0[k], LSE_NONE);
      px_out(e, "setp.eq.and.f32 %s, %s, 0f00000000, %s;", p, r1[k], p);
      px_out(e, "max.f32 %s, %s, %s;", mn, m0, r0[k]);
      px_out(e, "sub.rn.f32 %s, %s, %s;", a, m0, mn);
      exp_f32(e, a, a);
      px_out(e, "sub.rn.f32 %s, %s, %s;", b, r0[k], mn);
      exp_f32(e, b, b);
      px_out(e, "mul.rn.f32 %s, %s, %s;", a, l0, a);
      px_out(e, "mul.rn.f32 %s, %s, %s;", b, r1[k], b);
      px_out(e, "add.rn.f32 %s, %s, %s;", r1[k], a, b);
      px_out(e, "mov.f32 %s, %s;", r0[k], mn);
      px_out(e, "@%s mov.f32 %s, %s;", p, r0[k], m0);
      px_out(e, "@%s mov.f32 %s, %s;", p, r1[k], l0);
    }
  }
  /* what follows may reuse the exchange's bytes: the plan, counting its
   * reads at the loop, may take a barrier inside the loop for them */
  if (used) px_cta_sync(e);
}

/* cumsum (TIR_SCAN, spec 9.2): the inclusive prefix sum down dim 0, a
 * Hillis-Steele scan through the exchange area. x's elements go to their
 * flat physical places (px_exchange) and each result register takes its
 * own; then for s = 1, 2, 4, ... below the rows, each register adds the
 * element s rows above its own (rows past the tile's end are slack and come
 * after every real row, so they reach no real sum). Between rounds the new
 * values are stored in place of the old, between two barriers (every read
 * of a round before any store of the next). log2(rows) rounds of one load
 * and one store a register: a scan, not a square mask. */
/* register k's word of the area (its flat index, slack registers clamped
 * to a real word), its row, and whether it stores (inside the tile, and
 * the one holder that stores an element held twice) */
static const char *scan_word(Emitter *e, const TirInst *in, int k, int64_t at, int64_t elems, const char *own,
                             const char **row, const char **st) {
  int eb = exch_bytes(in->ty.elem);
  const char *fl = px_elem_index(e, in, k), *ad = px_tmp(e, RC_B32);
  if (st) {
    *st = px_tmp(e, RC_PRED);
    px_out(e, "setp.lt.u32 %s, %s, %lld;", *st, fl, (long long)elems);
    if (own) px_out(e, "and.pred %s, %s, %s;", *st, *st, own);
  }
  px_out(e, "min.u32 %s, %s, %lld;", ad, fl, (long long)(elems - 1));
  px_out(e, "mad.lo.u32 %s, %s, %d, %%smem_;", ad, ad, eb);
  px_out(e, "add.u32 %s, %s, %lld;", ad, ad, (long long)at);
  if (row) *row = px_elem_coord(e, in, k, 0);
  return ad;
}

void px_emit_scan(Emitter *e, const TirInst *in) {
  const TirInst *x = in->args[0];
  int64_t at;
  px_exchange(e, in, &x, 1, &at);
  int n = px_nregs(e, in), eb = exch_bytes(in->ty.elem);
  int64_t R = in->plan->phys[0], C = in->ty.rank == 2 ? in->plan->phys[1] : 1, elems = R * C;
  RegClass rc = px_rc_of(in->ty.elem);
  const char *add = in->ty.elem == S_F32 ? "add.f32" : in->ty.elem == S_F64 ? "add.f64"
                  : rc == RC_B64 ? "add.s64" : "add.s32";
  const char *w = eb == 8 ? "b64" : "b32";
  const char *own = px_blk_owner(e, in); /* one of an element's holders stores it */
  /* each register's address is made again where it is used: kept across
   * the rounds, three registers an element spilled a [128, 32] tile */
  for (int k = 0; k < n; k++)
    px_out(e, "ld.shared.%s %s, [%s];", w, px_reg(e, in, k), scan_word(e, in, k, at, elems, NULL, NULL, NULL));
  for (int64_t s = 1; s < R; s *= 2) {
    for (int k = 0; k < n; k++) {
      const char *row, *ad = scan_word(e, in, k, at, elems, NULL, &row, NULL);
      const char *p = px_tmp(e, RC_PRED), *t = px_tmp(e, rc);
      px_out(e, "setp.ge.u32 %s, %s, %lld;", p, row, (long long)s);
      px_out(e, "@%s ld.shared.%s %s, [%s+%lld];", p, w, t, ad, (long long)(-s * C * eb));
      px_out(e, "@%s %s %s, %s, %s;", p, add, px_reg(e, in, k), px_reg(e, in, k), t);
    }
    if (s * 2 >= R) break;
    px_cta_sync(e); /* every read of this round before any store */
    for (int k = 0; k < n; k++) {
      const char *st, *ad = scan_word(e, in, k, at, elems, own, NULL, &st);
      px_out(e, "@%s st.shared.%s [%s], %s;", st, w, ad, px_reg(e, in, k));
    }
    px_cta_sync(e);
  }
}
