/* raster.c: the order in which a 2-D grid's blocks take their tiles.
 *
 * The hardware starts a grid's blocks in the order of their linear index,
 * block.x fastest, so a wave of 132 (or 264) resident blocks of a GEMM's
 * grid covers two or three rows of output tiles whole: it streams all of
 * B (every column block) from memory for every two or three row blocks of
 * A, and B past the L2's 50 MB comes from DRAM again each time (the bf16
 * GEMM with M 4096, N 14336, K 4096 read 117 MB of B per wave). Blocks are
 * independent and run in no promised order (spec 5, "Block indices"), so the compiler may
 * hand the linear index out in any bijective order: grouped, GROUP rows of
 * block.y at a time, block.y fastest within a group, so that a wave covers
 * GROUP row blocks by a few column blocks and both operands' tiles are
 * shared through the L2.
 *
 * Taken where it pays: a kernel whose block.x and block.y both appear, with
 * one tensor load whose subscripts depend on block.y and not block.x (A's
 * row block) and another on block.x and not block.y (B's column block),
 * inside a loop with a dot: operand tiles reused across both grid dims.
 * Row kernels (1-D grids), transposes (every tile its own) and attention
 * (K and V per head, its queries per block) keep the hardware's order. */
#include "planner.h"

enum { RASTER_GROUP = 8 };

/* deps[id], bit 1: the value depends on block.x, bit 2: on block.y (through
 * its operands), in program order: operands come first, so one pass. */
static void ctx_deps(const TirBlock *b, unsigned char *deps) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    unsigned char d = x->op == TIR_CTX && x->aux < 2 ? (unsigned char)(1 << x->aux) : 0;
    for (int k = 0; k < x->nargs; k++)
      if (x->args[k]) d |= deps[x->args[k]->id];
    deps[x->id] = d;
    ctx_deps(&x->cond, deps);
    ctx_deps(&x->body, deps);
    ctx_deps(&x->body2, deps);
  }
}

void pl_choose_raster(Planner *P) {
  const TirFunc *f = P->f;
  int only_x = 0, only_y = 0, dots = 0, uses = 0;
  unsigned char *deps = arena_alloc(P->a, (size_t)f->ninsts + 1);
  ctx_deps(&f->body, deps);
  for (int i = 0; i < f->ninsts; i++) {
    const TirInst *in = f->insts[i];
    if (in->op == TIR_CTX && in->aux < 2) uses |= 1 << in->aux;
    if (in->op == TIR_CTX && in->aux == 2) return; /* block.z: leave a 3-D grid alone */
    if (in->op == TIR_ARRIVE) return;             /* the last block's order: keep the hardware's */
    bool looped = P->encl[in->pos] != NULL;
    if (in->op == TIR_DOT && looped) dots++;
    if (in->op == TIR_LOAD && looped) {
      int d = 0;
      for (int k = 0; k < in->nsubs; k++)
        if (in->subs[k].start) d |= deps[in->subs[k].start->id];
      only_x += d == 1, only_y += d == 2;
    }
  }
  if (uses == 3 && dots && only_x && only_y) P->p->raster_group = RASTER_GROUP;
}
