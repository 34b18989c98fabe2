/* pipeline.c: @pipeline: which loops' loads take rings (bulk-copy rings of
 * register tiles, staged rings of staged tiles), how deep, and whether a
 * producer warp fills them. */
#include "planner.h"

/* @pipeline(S) on sm_90a: a register load directly in a for loop's body
 * whose tile rows are whole 16-byte runs of the tensor's rows gets a ring
 * of S stage buffers, filled by bulk copies (cp.async.bulk) completing on
 * one mbarrier per stage, S - 1 iterations ahead of the threads that read
 * it (the backend emits the producer and the consumer). Its subscripts
 * must be computable for a later iteration: pure scalar arithmetic on the
 * loop variable and values from before the loop. */
/* x is pure scalar arithmetic (on the loop variable, parameters, dims,
 * the CTA index and constants; no variable, whose value may change
 * between iterations). Values from before `loop` are taken as they are
 * unless `before` too: then they must be pure as well (a producer warp
 * computes them by itself). loop NULL: every value counts as before. */
bool pl_pure_chain(const TirInst *x, const TirInst *loop, bool before, int depth) {
  if (x == loop) return true;
  bool outside = !loop || x->pos < loop->pos || x->pos > loop->end;
  if (outside && !before) return true;
  if (x->ty.rank || depth > 64) return false;
  switch (x->op) {
  case TIR_CONST: case TIR_DIM: case TIR_CTX: case TIR_PARAM: case TIR_BINARY: case TIR_UNARY: case TIR_CONVERT:
  case TIR_SELECT:
    break;
  default: return false;
  }
  for (int i = 0; i < x->nargs; i++)
    if (x->args[i] && !pl_pure_chain(x->args[i], loop, before, depth + 1)) return false;
  return true;
}

/* NULL when the load can take a ring, else why not. Both kinds need a
 * rank-2 tile whose rows run along the tensor's last dim and subscripts
 * computable for a later iteration. A register tile takes a bulk-copy
 * ring (whole 16-byte rows, no slack: the bulk copy fills no zeros). A
 * staged tile (its buffer read in place) takes a staged ring filled by
 * cp.async: 16-byte chunks of rows at the buffer's pitch (@padstage's
 * too), rows past the tensor's end as zeros, and the threads' own loads
 * into the same stage at run time when the tile is misaligned or its
 * columns leave the tensor. */
static const char *pipe_reject(Planner *P, const TirInst *loop, const TirInst *ld) {
  const PlanVal *v = ld->plan;
  if (ld->ty.rank != 2) return arena_printf(P->a, "its tile has rank %d (a ring takes rank 2)", ld->ty.rank);
  int spans = 0;
  for (int i = 0; i < ld->nsubs; i++) spans += !ld->subs[i].point;
  if (spans != 2 || ld->subs[ld->nsubs - 1].point) return "its rows do not run along the tensor's last dimension";
  for (int i = 0; i < ld->nsubs; i++)
    if (!pl_pure_chain(ld->subs[i].start, loop, false, 0))
      return "a subscript depends on a value that changes inside the loop other than the loop variable";
  int eb = sema_scalar_bytes(ld->ty.elem);
  if (v->res == RES_SHARED) {
    const PlanBuf *b = v->buf;
    if (!b || b->owner != ld) return "it is staged in a buffer it shares with a variable";
    if (eb != 1 && eb != 2 && eb != 4) return "its elements are 8 bytes (a staged ring copies 16-byte chunks of 1-, 2- or 4-byte elements)";
    /* (@padstage's 8 more elements keep a row's bytes a multiple of 16) */
    if ((v->phys[1] * eb) % 16 || ld->subs[ld->nsubs - 1].len % (16 / eb))
      return "its rows are not whole 16-byte chunks";
    if (tir_stores_to(&P->f->body, ld->aux)) return "the kernel also stores to its tensor";
    return NULL;
  }
  if (v->slack) return "an extent is not a power of two (the slack needs the tensor copy's zero fill)";
  int64_t row = v->phys[1] * eb;
  if (row % 16) return arena_printf(P->a, "its rows are %lld bytes, not a multiple of 16", (long long)row);
  if (v->phys[0] > 256) return arena_printf(P->a, "it has %lld rows (at most 256)", (long long)v->phys[0]);
  return NULL;
}

/* Whether a loop's body breaks out of it (not counting inner loops'
 * breaks) or returns (anywhere inside): copies issued ahead would land
 * after the loop, or the CTA, let go of the ring. */
static bool returns(const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if (x->op == TIR_RETURN || returns(&x->body) || returns(&x->body2)) return true;
  }
  return false;
}

static bool breaks(const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if (x->op == TIR_BREAK || x->op == TIR_RETURN) return true;
    if (x->op == TIR_IF && (breaks(&x->body) || breaks(&x->body2))) return true;
    if ((x->op == TIR_FOR || x->op == TIR_WHILE) && returns(&x->body)) return true;
  }
  return false;
}

/* inside: the enclosing loop with rings, if any; the backend streams one
 * loop at a time, so a loop inside it keeps plain loads. */
static int pipe_loops(Planner *P, TirBlock *blk, int stages, const char **why, const TirInst *inside, bool staged) {
  int n = 0;
  for (int i = 0; i < blk->len; i++) {
    TirInst *loop = blk->insts[i];
    PlanBuf *mbar = NULL;
    int nbulk = 0, nstaged = 0; /* the backend streams at most 8 of each kind a loop */
    for (int k = 0; loop->op == TIR_FOR && k < loop->body.len; k++) {
      TirInst *ld = loop->body.insts[k];
      if (ld->op != TIR_LOAD) continue;
      bool sh = ld->plan->res == RES_SHARED;
      const char *r = inside ? arena_printf(P->a, "the enclosing loop at %d:%d has the rings", inside->span.first_line,
                                            inside->span.first_column)
                      : breaks(&loop->body) ? "the loop has a break or a return (copies issued ahead would outlive the ring)"
                      : !staged && sh ? "a producer warp (--producer-warp) fills bulk rings only"
                      : (sh ? nstaged : nbulk) == 8 ? "the loop has 8 rings of this kind already"
                                                    : pipe_reject(P, loop, ld);
      if (r) {
        ld->plan->path = arena_printf(P->a, "%s: %s",
                                      ld->plan->res == RES_SHARED ? "staged, not ringed" : "plain loads", r);
        if (!*why) *why = arena_printf(P->a, "the load at %d:%d: %s", ld->span.first_line, ld->span.first_column, r);
        continue;
      }
      if (ld->plan->res == RES_SHARED) { /* its own buffer, stages copies of it, alive over the loop */
        PlanBuf *b = ld->plan->buf;
        b->stages = stages; /* its bytes: pl_choose_rows */
        b->first = loop->pos, b->last = loop->end;
        ld->plan->path = arena_printf(P->a, "cp.async into a ring of %d stages (buffer #%d), %d iteration%s ahead",
                                      stages, b->id, stages - 1, stages > 2 ? "s" : "");
        n++, nstaged++;
        continue;
      }
      if (!mbar) {
        int64_t d[1] = {stages};
        mbar = pl_new_buf(P, BUF_MBAR, "mbarriers", S_I64, 1, d, loop);
        mbar->first = loop->pos, mbar->last = loop->end;
      }
      int64_t d[3] = {stages, ld->plan->phys[0], ld->plan->phys[1]};
      PlanBuf *ring = pl_new_buf(P, BUF_RING, arena_printf(P->a, "ring of %%%d", ld->id), ld->ty.elem, 3, d, ld);
      ring->first = loop->pos, ring->last = loop->end;
      ld->plan->ring = ring;
      ld->plan->mbar = mbar;
      ld->plan->path = arena_printf(P->a, "bulk copies into ring #%d, %d stages", ring->id, stages);
      n++, nbulk++;
    }
    /* one ringed loop at a time: the loads of a loop inside a ringed one stay plain */
    const TirInst *in = mbar || nstaged ? loop : inside;
    n += pipe_loops(P, &loop->body, stages, why, in, staged) + pipe_loops(P, &loop->body2, stages, why, in, staged);
  }
  return n;
}

static void mark_no_async(TirBlock *blk, const char *why) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    mark_no_async(&in->body, why);
    mark_no_async(&in->body2, why);
    for (int k = 0; in->op == TIR_FOR && k < in->body.len; k++)
      if (in->body.insts[k]->op == TIR_LOAD) in->body.insts[k]->plan->path = why;
  }
}

/* A ringed loop alone at the top of the kernel, whose bounds and ringed
 * subscripts a warp can compute without the other threads, gets a
 * producer warp: threads T .. T + 31 issue the copies, waiting on one
 * "empty" mbarrier per stage that the consumer warps arrive at when they
 * are done with it, so the issue work is off the consumers' path and no
 * CTA barrier is needed for the ring. The rings and mbarriers then live
 * the whole kernel (the producer starts at once). */
static void choose_producer(Planner *P) {
  Plan *p = P->p;
  for (int i = 0; i < P->f->ninsts; i++) /* (the consumers that return would leave it waiting) */
    if (P->f->insts[i]->op == TIR_RETURN) return;
  const TirInst *loop = NULL;
  int nloops = 0;
  PlanBuf *mbar = NULL;
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b->kind == BUF_MBAR) nloops++, mbar = b, loop = b->owner;
    if (b->stages) return; /* a staged ring's copies are the consumers' own (their cp.async groups) */
  }
  if (nloops != 1 || p->threads + 32 > 1024) return;
  bool top = false;
  for (int i = 0; i < P->f->body.len; i++) top = top || P->f->body.insts[i] == loop;
  if (!top) return;
  for (int i = 0; i < 3; i++)
    if (!pl_pure_chain(loop->args[i], NULL, true, 0)) return;
  for (int k = 0; k < loop->body.len; k++) {
    const TirInst *ld = loop->body.insts[k];
    if (ld->op != TIR_LOAD || !ld->plan->ring) continue;
    for (int j = 0; j < ld->nsubs; j++)
      if (!pl_pure_chain(ld->subs[j].start, loop, true, 0)) return;
  }
  p->producer = true;
  p->launch_threads = p->threads + 32;
  mbar->dims[0] *= 2; /* full, then empty */
  mbar->pitch = mbar->dims[0];
  mbar->bytes *= 2;
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b->kind == BUF_MBAR || b->kind == BUF_RING) b->first = 0, b->last = P->f->ninsts;
  }
}

/* Whether any for loop loads from a tensor directly in its body. */
static bool loop_loads(const TirBlock *blk) {
  for (int i = 0; i < blk->len; i++) {
    const TirInst *in = blk->insts[i];
    if (loop_loads(&in->body) || loop_loads(&in->body2)) return true;
    if (in->op != TIR_FOR) continue;
    for (int k = 0; k < in->body.len; k++)
      if (in->body.insts[k]->op == TIR_LOAD) return true;
  }
  return false;
}

/* A kernel with no loop load at all is an error; loads the ring does not
 * take yet (staged ones, for one) say why in their plan's path. */
void pl_choose_pipeline(Planner *P, bool sm90, unsigned flags) {
  const KernelInfo *info = P->f->info;
  if (!info->pipeline_stages) return;
  if (!loop_loads(&P->f->body)) {
    Span at = info->kernel->span;
    for (int i = 0; i < info->kernel->attrs.len; i++) {
      const Node *n = info->kernel->attrs.items[i];
      if (n->name && strcmp(n->name, "pipeline") == 0) at = n->span;
    }
    diag_error(P->d, at, "@pipeline: nothing in kernel '%s' can be pipelined: no for loop loads a tile from a tensor",
               P->f->name);
    return;
  }
  if (!sm90) return; /* sm_80 has no bulk copies: the loads stay plain */
  if (P->p->no_async) { /* the same kernel on the threads' loads, to compare */
    mark_no_async(&P->f->body, info->no_tma ? "plain loads: @no_tma" : "plain loads: --no-tma");
    return;
  }
  const char *why = NULL;
  /* plan_kernel degrades a @pipeline whose rings do not fit: fewer stages,
   * then none (Phobos's @pipeline is a double buffer, never an error) */
  int cap = (int)((flags & PLAN_STAGE_MASK) >> PLAN_STAGE_SHIFT);
  if (cap) P->p->stages_wanted = info->pipeline_stages;
  if (cap == 1) {
    mark_no_async(&P->f->body, arena_printf(P->a, "plain loads: @pipeline(%d)'s rings do not fit shared memory even at 2 "
                                                  "stages", info->pipeline_stages));
    return;
  }
  P->p->stages = cap && cap < info->pipeline_stages ? cap : info->pipeline_stages;
  if (!pipe_loops(P, &P->f->body, P->p->stages, &why, NULL, !(flags & PLAN_PRODUCER_WARP))) P->p->stages = 0;
  else if (flags & PLAN_PRODUCER_WARP) choose_producer(P);
}
