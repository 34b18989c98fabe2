/* exchange.c: operations that need other threads' elements: through the
 * exchange area after the planned buffers (broadcast, transpose, row
 * reductions, sub-tile reads and writes), by reloading a tile from global
 * memory where that is cheaper, or by shuffles within a fragment's quad. */
#include "emitter.h"

static void emit_reduce_frag(Emitter *e, const TirInst *in);

/* register bytes in the exchange area */
static int exch_bytes(Scalar s) { return rc_of(s) == RC_F64 || rc_of(s) == RC_B64 ? 8 : 4; }

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
void exch_load(Emitter *e, const TirInst *x, int64_t at, const char *fl, const char *r) {
  int eb = exch_bytes(x->ty.elem);
  const char *ad = tmp(e, RC_B32);
  out(e, "mad.lo.u32 %s, %s, %d, %%smem_;", ad, fl, eb);
  out(e, "add.u32 %s, %s, %lld;", ad, ad, (long long)(e->exch_off + at));
  out(e, "ld.shared.%s %s, [%s];", eb == 8 ? "b64" : "b32", r, ad);
}

void exch_need(Emitter *e, int64_t bytes) {
  if (bytes > e->exch_bytes) e->exch_bytes = bytes;
}

static int64_t value_exch_bytes(const TirInst *x) {
  return (x->ty.rank ? (int64_t)((phys_elems(x) + 0)) : 1) * exch_bytes(x->ty.elem);
}

/* An operation whose result elements need others' elements: sources go to
 * the exchange area first. Emits the barrier pair and returns offsets. */
void exchange(Emitter *e, const TirInst *const *src, int n, int64_t *at) {
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

void emit_broadcast(Emitter *e, const TirInst *in) {
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

void emit_transpose(Emitter *e, const TirInst *in) {
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

void emit_reduce(Emitter *e, const TirInst *in) {
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

/* A sub-tile or an element of a tile value. */
void emit_extract(Emitter *e, const TirInst *in) {
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

void emit_write(Emitter *e, const TirInst *in) {
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
