/* tma.c: TMA tensor copies and stores (sm_90a): which staged loads and
 * padded stores take them, their tensor maps (a dim split so a padded
 * extent's slack lies past its end), swizzled panels for tensor-core
 * operands, and the shared memory they add. spec/LANGUAGE.md 15.11. */
#include "planner.h"

/* sm_90a, unless --no-tensor-copies: a staged load (its tile into a
 * planned buffer, or a staged ring's stage) that a tensor copy can write:
 * no slack unless a map of one more dim puts it past a dim's end (the copy
 * fills zeros there), a box of at most 256 a dim whose innermost row is a
 * multiple of 16 bytes, a tensor of rank 5 or less that the kernel never
 * stores to, not under an if (every thread waits for the copy), and not a
 * tile under 1 KiB in a loop outside a ring. It gets a tensor map (shared
 * by loads and stores of the same tensor, box and swizzle), a dense or
 * swizzled buffer (tma_swizzle) aligned for the copy; the backend keeps the
 * pointer path beside it for launches whose tensor the map cannot describe
 * (tmok = 0). choose_tma_store gives padded tiles' stores the same. spec
 * 15.11. */
/* A span start that is provably x * len: x (an instruction), or with
 * *konst set a constant x. */
static bool start_multiple(const TirInst *st, int64_t len, const TirInst **x, int64_t *konst) {
  *x = NULL;
  if (st->op == TIR_CONST) {
    *konst = st->ival / len;
    return st->ival % len == 0;
  }
  if (st->op != TIR_BINARY || st->aux != '*' || st->ty.rank) return false;
  for (int k = 0; k < 2; k++) {
    const TirInst *c = st->args[k];
    if (c->op == TIR_CONST && c->ival == len) {
      *x = st->args[1 - k];
      return true;
    }
  }
  return false;
}

static const char ring_mbar_name[] = "staged ring mbarriers";

int64_t plan_base_rounding(const Plan *p) {
  for (int i = 0; i < p->nbufs; i++)
    if (plan_swizzle(p->bufs[i])) return 1024;
  return 0;
}

/* The swizzle of a tensor copy's tile (bytes; 0 none). ldmatrix reads
 * eight rows of 16 bytes at once: dense rows a multiple of 128 bytes apart
 * put all eight in the same banks (what @padstage's pitch avoids, and a
 * copy cannot write). A tensor-core operand's tile is swizzled instead, and
 * so is a tile @padstage padded (its kernel asked for spread banks): the
 * widest mode that divides its rows, a row wider than that cut into panels
 * (one copy each), rows a multiple of 8 so that every panel starts where
 * the pattern does (ptx.c, buf_addr). The panels are also wgmma's
 * canonical layouts (ptx.c, emit_dot_wgmma). Other tiles are read along
 * rows and stay dense. */
static int tma_swizzle(const Planner *P, const PlanBuf *b, int eb) {
  if (!(b->kind == BUF_STAGE_DOT && eb <= 2) && !pl_wants_pad(P, b)) return 0;
  if (b->rank < 2) return 0;
  int64_t rb = b->dims[b->rank - 1] * eb;
  if (plan_buf_rows(b) % 8) return 0;
  return rb % 128 == 0 ? 128 : rb % 64 == 0 ? 64 : rb % 32 == 0 ? 32 : 0;
}

/* The tensor map of load or store `in` (its subscripts over tensor tp)
 * moving a tile of physical dims phys: false when no map can. */
static bool tma_map(const TirInst *in, const TirParam *tp, const int64_t *phys, Scalar elem, PlanTmap *m,
                    const TirInst **outer, int64_t *outer_const) {
  *m = (PlanTmap){.param = in->aux, .rank = tp->rank, .elem = elem, .split_dim = -1, .boxes = 1};
  *outer = NULL, *outer_const = 0;
  if (tp->rank > 5 || in->nsubs != tp->rank) return false;
  int j = 0, md = 0;
  for (int i = 0; i < in->nsubs; i++) {
    if (in->subs[i].point) {
      m->box[md++] = 1;
      continue;
    }
    int64_t len = in->subs[i].len, ph = phys[j++];
    if (ph != len) {
      /* slack: past the end of a dim of its own, when the start is a
       * multiple of the span (one such dim, the map's rank at most 5) */
      if (m->split_dim >= 0 || tp->rank == 5 || !start_multiple(in->subs[i].start, len, outer, outer_const))
        return false;
      m->split_dim = i, m->split_inner = len;
      m->box[md++] = 1;
    }
    m->box[md++] = ph;
  }
  for (int d = 0; d < md; d++)
    if (m->box[d] < 1 || m->box[d] > 256) return false;
  for (int i = 0; i < in->nsubs; i++) /* a copy's coordinates are 32-bit */
    if (sema_scalar_bytes(in->subs[i].start->ty.elem) > 4) return false;
  if (*outer && sema_scalar_bytes((*outer)->ty.elem) > 4) return false;
  return (m->box[md - 1] * sema_scalar_bytes(elem)) % 16 == 0;
}

/* m's index in the plan's maps, added if new (loads and stores of one
 * tensor with one box, swizzle and panel count share a map: a load issues
 * its map's `boxes` copies) */
static int tma_map_index(Plan *p, const PlanTmap *m) {
  for (int i = 0; i < p->ntmaps; i++)
    if (p->tmaps[i].param == m->param && p->tmaps[i].split_dim == m->split_dim &&
        p->tmaps[i].split_inner == m->split_inner && p->tmaps[i].swizzle == m->swizzle &&
        p->tmaps[i].boxes == m->boxes && !memcmp(p->tmaps[i].box, m->box, sizeof m->box))
      return i;
  p->tmaps[p->ntmaps] = *m;
  return p->ntmaps++;
}

/* A store of a padded tile (slack in one dim, which a map of one more dim
 * puts past that dim's end) takes a TMA tensor store: the threads write the
 * tile into shared memory, thread 0 stores it by one copy and the hardware
 * clips what lies outside the map (the slack, and rows past the tensor's
 * end), where the pointer path masks them element by element. Not for a
 * tensor the kernel also loads (the copy writes through the async proxy)
 * or stores to elsewhere, nor in a loop, nor for a tile without slack (the
 * threads' stores are as good). */
static void choose_tma_store(Planner *P, TirInst *in, bool looped) {
  Plan *p = P->p;
  const TirInst *val = in->op == TIR_STORE && in->aux2 == TSTORE_WRITE ? in->args[0] : NULL; /* (an add: atomics, spec 9.6) */
  if (!val || !val->ty.rank || !val->plan->slack || val->ty.elem == S_BOOL || p->ntmaps == MAX_TMAPS) return;
  /* the copy's global writes land after the kernel's later instructions
   * (its wait is for the reads of the staging only): the tensor's one
   * store, outside loops, and a tensor the kernel does not load nor
   * change by an atomic (which reads it: spec 9.6) */
  if (looped || tir_count_accesses(&P->f->body, TIR_STORE, in->aux) != 1 ||
      tir_count_accesses(&P->f->body, TIR_LOAD, in->aux) || tir_count_accesses(&P->f->body, TIR_ARRIVE, in->aux))
    return;
  const TirParam *tp = &P->f->params[in->aux];
  PlanTmap m;
  const TirInst *outer;
  int64_t outer_const;
  if (tp->elem != val->ty.elem || !tma_map(in, tp, val->plan->phys, tp->elem, &m, &outer, &outer_const) ||
      m.split_dim < 0)
    return;
  /* the staging must not be what puts the kernel over its shared memory:
   * taken only when every buffer so far and it fit side by side */
  int64_t sum = pl_phys_bytes(val->plan->phys, val->ty.rank, tp->elem) + 128;
  for (int i = 0; i < P->bufs.len; i++) { /* as laid out if no tensor copy took it */
    PlanBuf *b = P->bufs.items[i];
    PlanBuf o = *b;
    pl_size_buf(&o, b->tma_dest ? b->rows : pl_wants_pad(P, b) ? ROWS_PAD8 : ROWS_DENSE);
    sum += o.bytes + 128;
  }
  PlanVal *v = in->plan;
  if (sum > p->shared_limit) {
    v->path =
        arena_printf(P->a,
                     "the threads' masked stores: a tensor store's staging (%lld bytes beside the other "
                     "buffers) could exceed the shared memory limit of %lld",
                     (long long)pl_phys_bytes(val->plan->phys, val->ty.rank, tp->elem), (long long)p->shared_limit);
    return;
  }
  int idx = tma_map_index(p, &m);
  v->tma = idx + 1;
  v->tma_outer = outer, v->tma_outer_const = outer_const;
  /* the tile's staging: a dense buffer alive at the store only (GQA's O
   * takes the bytes its Q and K/V rings held) */
  v->buf = pl_new_buf(P, BUF_SCRATCH, arena_printf(P->a, "tensor store of %%%d", val->id), tp->elem, val->ty.rank,
                   val->plan->phys, in);
  v->buf->align = 128;
  v->path =
      arena_printf(P->a,
                   "tensor store (TMA) through map %d from buffer #%d, dim %d viewed as [extent / %lld, %lld] so "
                   "the slack lies past its end (clipped), the threads' masked stores when the map cannot be built",
                   idx, v->buf->id, m.split_dim, (long long)m.split_inner, (long long)m.split_inner);
}

/* loop: the for whose body holds the load directly (a staged ring's);
 * looped: the load is inside some loop */
static void choose_tma(Planner *P, TirInst *in, TirInst *loop, bool looped) {
  PlanVal *v = in->plan;
  Plan *p = P->p;
  if (in->op != TIR_LOAD || v->res != RES_SHARED || !v->buf || v->ring || in->ty.elem == S_BOOL ||
      p->ntmaps == MAX_TMAPS || (v->buf->stages && !loop))
    return;
  /* A copy outside a ring is waited for at once: in a loop, a small tile's
   * copy only adds the copy unit's latency to each iteration (the seed q8
   * kernel's 128-byte activation tile: 165 against 137 us on the H200), so
   * tiles under 1 KiB keep the pointer path there. */
  if (looped && !v->buf->stages && pl_tile_bytes(v->buf) < 1024) {
    v->path =
        arena_printf(P->a, "pointer path: a %lld-byte tile in a loop, waited for at once (tensor copies from 1 KiB)",
                     (long long)pl_tile_bytes(v->buf));
    return;
  }
  /* a tensor the kernel also stores to: the copy reads through the async
   * proxy, which the threads' stores are not ordered with */
  if (tir_stores_to(&P->f->body, in->aux)) return;
  const TirParam *tp = &P->f->params[in->aux];
  PlanBuf *b = v->buf;
  if (b->rank != in->ty.rank) return;
  PlanTmap m;
  const TirInst *outer;
  int64_t outer_const;
  if (!tma_map(in, tp, b->dims, in->ty.elem, &m, &outer, &outer_const)) return;
  int eb = sema_scalar_bytes(in->ty.elem), md = m.rank + (m.split_dim >= 0);
  int swz = tma_swizzle(P, b, eb);
  if (swz) { /* one copy a panel: the inner box is the swizzle's width */
    m.swizzle = swz;
    m.boxes = (int)(m.box[md - 1] * eb / swz);
    m.box[md - 1] = swz / eb;
  }
  int idx = tma_map_index(p, &m);
  v->tma = idx + 1;
  v->tma_outer = outer, v->tma_outer_const = outer_const;
  const char *swzs =
      swz ? arena_printf(P->a, ", swizzled %dB (%d %s a row)", swz, m.boxes, m.boxes > 1 ? "boxes" : "box") : "";
  /* the copy writes rows dense, or swizzled (the buffer's row layout:
   * pl_choose_rows keeps it), at a copy destination's alignment */
  b->tma_dest = true;
  b->rows = swz == 128 ? ROWS_SWIZZLE128 : swz == 64 ? ROWS_SWIZZLE64 : swz == 32 ? ROWS_SWIZZLE32 : ROWS_DENSE;
  b->align = swz ? 1024 : 128;
  if (b->stages) {
    /* a staged ring: each stage aligned as a copy's destination must be,
     * one mbarrier per stage for the loop's copies (the first load of the
     * loop makes them) */
    for (int i = 0; i < P->bufs.len && !v->mbar; i++) {
      PlanBuf *o = P->bufs.items[i];
      if (o->kind == BUF_MBAR && o->owner == loop && o->name == ring_mbar_name) v->mbar = o;
    }
    if (!v->mbar) {
      int64_t d[1] = {b->stages};
      v->mbar = pl_new_buf(P, BUF_MBAR, ring_mbar_name, S_I64, 1, d, loop);
      v->mbar->first = loop->pos, v->mbar->last = loop->end;
    }
    v->path = arena_printf(P->a,
                           "tensor copies (TMA) through map %d%s into a ring of %d stages (buffer #%d), %d iteration%s "
                           "ahead, one mbarrier a stage; the threads' own loads when the map cannot be built",
                           idx, swzs, b->stages, b->id, b->stages - 1, b->stages > 2 ? "s" : "");
    return;
  }
  v->path = m.split_dim < 0
                ? arena_printf(P->a, "tensor copy (TMA) through map %d%s, pointer path when the map cannot be built",
                               idx, swzs)
                : arena_printf(P->a,
                               "tensor copy (TMA) through map %d%s, dim %d viewed as [extent / %lld, %lld] so the "
                               "slack lies past its end (zero-filled), pointer path when the map cannot be built",
                               idx, swzs, m.split_dim, (long long)m.split_inner, (long long)m.split_inner);
  /* its own mbarrier, alive the whole kernel (initialised at its start) */
  v->mbar = pl_new_buf(P, BUF_MBAR, "tensor copy mbarrier", S_I64, 1, (int64_t[]){1}, in);
  v->mbar->first = 0, v->mbar->last = P->f->ninsts;
  p->ntma_loads++;
}

/* looped: inside any loop; loop: the for whose body blk is */
void pl_walk_tma(Planner *P, TirBlock *blk, bool in_if, bool looped, TirInst *loop) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    if (!in_if) choose_tma(P, in, loop, looped);
    if (!in_if) choose_tma_store(P, in, looped);
    bool lp = looped || in->op == TIR_FOR || in->op == TIR_WHILE;
    pl_walk_tma(P, &in->body, in_if || in->op == TIR_IF, lp, in->op == TIR_FOR ? in : NULL);
    pl_walk_tma(P, &in->body2, in_if || in->op == TIR_IF, lp, NULL);
    pl_walk_tma(P, &in->cond, in_if || in->op == TIR_IF, lp, NULL);
  }
}
