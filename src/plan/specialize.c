/* specialize.c: warp specialization of a tensor-copy ring (spec 15.20).
 *
 * A @pipeline loop whose staged tiles all arrive by TMA tensor copies is
 * filled, by default, by the threads that read it: at the end of each
 * iteration every thread meets at a CTA barrier (the stage just read is
 * free) and thread 0 arms that stage's mbarrier and issues the copies of
 * iteration i + S - 1. The barrier holds every warp to the slowest one
 * and the issue sits on warp 0's path between its tensor-core groups.
 *
 * The specialized copy of such a plan (PLAN_SPECIALIZE, an entry of its
 * own that the autotuner times beside the plain one) adds a producer
 * warpgroup, threads T .. T + 127: lane 0 of its first warp computes the loop's bounds and the
 * rings' subscripts by itself and issues every iteration's copies, waiting
 * before it refills a stage on that stage's "empty" mbarrier, at which
 * each consumer warp arrives once it is done with the stage (after the
 * wgmma groups that read it have completed). The consumers wait on the
 * stage's "full" mbarrier only: no CTA barrier in the loop.
 *
 * It applies where the backend can run the producer alone: one ringed
 * loop, at the top of the kernel, whose bounds and ringed subscripts are
 * pure scalar arithmetic on the loop variable and values from before it,
 * every staged ring in it filled by tensor copies, and no bulk-copy ring.
 * The rings and their mbarriers (full, then empty) then live the whole
 * kernel. Registers move from the producer to the consumers (setmaxnreg,
 * ptx.c's ws_regs): an SM sub-partition holds one warp of each warpgroup,
 * so a producer of one warp would cost the consumers as many registers
 * as a whole warpgroup without the move. The copy needs every ring's tensor map built: the manifest says
 * so (maps_required) and the runtime launches it only where they can be. */
#include "planner.h"

/* The one loop with staged rings, if the kernel has exactly one and it is
 * at the top of the kernel's body; NULL otherwise. */
static TirInst *ring_loop(Planner *P) {
  TirInst *loop = NULL;
  int n = 0;
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b->kind == BUF_RING) return NULL; /* a bulk-copy ring: the other producer's (choose_producer) */
    if (b->kind == BUF_MBAR && b->owner->op == TIR_FOR && b->owner != loop) loop = b->owner, n++;
  }
  if (n != 1) return NULL;
  for (int i = 0; i < P->f->body.len; i++)
    if (P->f->body.insts[i] == loop) return loop;
  return NULL;
}

/* A warp-specialized entry's registers (plan/specialize.c): each SM
 * sub-partition holds one warp of every warpgroup of the CTA, in 16384
 * registers (512 a lane) shared by the CTAs an SM holds (@launch's second
 * argument). The launch bound R splits them evenly over T / 128 consumer
 * warpgroups and the producer; then the producer gives back all but
 * WS_PRODUCER_REGS (Y) and the consumers take the rest (X), each a
 * multiple of 8 (setmaxnreg's rule) and at most 256. False where moving
 * registers gains the consumers nothing. */
enum { WS_PRODUCER_REGS = 40, WS_CONSUMER_LEAST = 128 };
static int ws_blocks(const Plan *p) {
  return p->occ_blocks ? p->occ_blocks : p->f->info->min_blocks > 0 ? p->f->info->min_blocks : 1;
}

bool plan_ws_regs(const Plan *p, int *R, int *X, int *Y) {
  int blocks = ws_blocks(p);
  int groups = p->threads / 128;
  int lane = 512 / blocks;
  *R = lane / (groups + 1) / 8 * 8;
  *Y = WS_PRODUCER_REGS;
  /* setmaxnreg.inc takes only what this CTA's producer gave back: the
   * consumers share (groups + 1) R a lane less the producer's Y (sized
   * from the sub-partition's 512 instead, @launch(512) or two CTAs an SM
   * would wait for registers no one frees) */
  *X = ((groups + 1) * *R - *Y) / groups / 8 * 8;
  if (*X > 256) *X = 256;
  /* (one consumer warpgroup already has 255, .maxnreg's most) */
  return *R < 248 && *R >= *Y && *X > *R;
}

void pl_choose_specialize(Planner *P) {
  Plan *p = P->p;
  /* consumers that return early would leave the producer waiting for
   * stages no one frees */
  for (int i = 0; i < P->f->ninsts; i++) /* (and a barrier() the producer would never reach) */
    if (P->f->insts[i]->op == TIR_RETURN || P->f->insts[i]->op == TIR_BARRIER) return;
  TirInst *loop = ring_loop(P);
  /* the producer is a warpgroup of its own (setmaxnreg works on whole
   * warpgroups); a register bound of the kernel's own leaves no room to
   * move registers */
  if (!loop || p->producer || p->threads % 128 || p->threads + 128 > 1024 || P->f->info->max_regs) return;
  for (int i = 0; i < 3; i++)
    if (!pl_pure_chain(loop->args[i], NULL, true, 0)) return;
  int nring = 0;
  for (int k = 0; k < loop->body.len; k++) {
    const TirInst *ld = loop->body.insts[k];
    if (!plan_is_ring_stage(ld)) continue;
    if (!ld->plan->tma) return; /* cp.async groups are the issuing threads' own */
    /* a @scratch tensor's map the runtime does not test (rt_maps_misfit):
     * its layout takes any map but a split one, whose dim may not divide */
    if (P->f->params[ld->aux].scratch && P->p->tmaps[ld->plan->tma - 1].split_dim >= 0) return;
    for (int j = 0; j < ld->nsubs; j++)
      if (!pl_pure_chain(ld->subs[j].start, loop, true, 0)) return;
    nring++;
  }
  /* a staged ring elsewhere (an inner loop's) stays the consumers' own:
   * not with a producer in the kernel */
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b->stages && (b->owner->pos < loop->pos || b->owner->pos > loop->end || !b->owner->plan->tma)) return;
  }
  if (!nring) return;
  PlanBuf *mbar = NULL;
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b->kind == BUF_MBAR && b->owner == loop) mbar = b;
  }
  if (!mbar) return;
  /* the producer's warpgroup must not leave the consumers fewer registers
   * than two CTAs an SM give a plain variant: at @launch(256, 2) they would
   * get 96, and an attention step that fits 128 failed in ptxas
   * ("Insufficient registers") */
  int R, X, Y;
  if (!plan_ws_regs(p, &R, &X, &Y)) { /* no registers move: the launch bound of T + 128 threads */
    X = 65536 / ((p->threads + 128) * ws_blocks(p));
    if (X > 255) X = 255;
  }
  if (X < WS_CONSUMER_LEAST) return;
  p->producer = p->specialized = true;
  p->launch_threads = p->threads + 128;
  mbar->dims[0] *= 2; /* full, then empty */
  pl_size_buf(mbar, ROWS_DENSE);
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b == mbar || b->stages) b->first = 0, b->last = P->f->ninsts;
  }
  for (int k = 0; k < loop->body.len; k++) {
    TirInst *ld = loop->body.insts[k];
    if (!plan_is_ring_stage(ld)) continue;
    /* tma.c's words up to the ring's stages; the rest is the producer's */
    const char *path = ld->plan->path, *cut = strstr(path, " stages (buffer #");
    const char *close = cut ? strchr(cut, ')') : NULL;
    int len = close ? (int)(close - path) + 1 : (int)strlen(path);
    ld->plan->path = arena_printf(P->a, "%.*s, issued by the producer warp up to %d iterations ahead; a full and an "
                                  "empty mbarrier a stage (every map built: maps_required)",
                                  len, path, P->p->stages);
  }
}
