/* planner.h: the planner's internal interface (src/plan/), one section of
 * prototypes per file. The plan it makes, and its entry points, are
 * plan.h's. */
#ifndef PHOBOS_PLANNER_H
#define PHOBOS_PLANNER_H

#include "plan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct Planner {
  Arena *a;
  Diags *d;
  TirFunc *f;
  Plan *p;
  int *parent; /* union-find over instruction ids: values tied elementwise */
  bool mma_ok; /* the target has m16n8k16 */
  PtrVec bufs;
  PtrVec barriers;
  int *use_count; /* by id: how many instructions read it (tir_use_counts) */
  int nlayouts; /* Layout.id: layouts made so far (at most one a class) */
  struct WalkMemo **walked; /* by loop id: the barrier walks done (pl_barrier_walk) */
  /* indexes, so that no pass scans the whole kernel for each instruction
   * (a kernel of 40,000 statements planned in quadratic time) */
  TirInst **encl;          /* by position: the innermost loop strictly containing it (pl_enclosing_loops) */
  PtrVec *users;           /* by id: the instructions that take it as an operand or subscript (pl_index_uses) */
  PtrVec *writes;          /* by slot id: its WRITEs in program order (pl_index_uses) */
  PtrVec *scratch_of;      /* by id: the scratch buffers it owns, in buffer order (pl_collect_accesses) */
  struct PlanBarrier **bar_at, **bar_within; /* by position: the barrier before it, within it (add_barrier) */
} Planner;

/* Uses of buffer contents: (position, write?) */
typedef struct Access {
  int pos;
  bool write;
  PlanBuf *buf;
} Access;

typedef struct Accesses {
  Access *items;
  int len, cap;
} Accesses;

/* ------------------------------ layout.c: shapes, layouts, dot paths */
int64_t pl_mma_k(const TirInst *dot);
void pl_tie_values(Planner *P, TirInst *in);
void pl_init_phys(Planner *P, TirInst *in);
void pl_dot_granules(Planner *P, TirInst *in);
void pl_unify_phys(Planner *P);
void pl_assign_layouts(Planner *P);
int64_t pl_phys_elems(const TirInst *x);
bool pl_is_frag(const TirInst *x);
bool pl_is_rowfrag(const TirInst *x);
void pl_choose_layouts(Planner *P);
void pl_choose_chunk(Planner *P);
bool pl_mma_direct(const TirInst *x);
void pl_choose_dot_paths(Planner *P);
bool pl_check_backend_limits(Planner *P);

/* ------------------------------- pipeline.c: @pipeline's rings */
bool pl_pure_chain(const TirInst *x, const TirInst *loop, bool before, int depth);

/* ------------------- specialize.c: a producer warp for tensor-copy rings */
void pl_choose_specialize(Planner *P);

/* ------------------------- accumulate.c: wgmma accumulating in place */
void pl_choose_accumulate(Planner *P);
void pl_choose_wgmma_waits(Planner *P);

/* ------------ deferred.c: loop accumulators reduced once, at the exit */
void pl_choose_deferred(Planner *P);

/* ----------------------------- raster.c: the order of a grid's blocks */
void pl_choose_raster(Planner *P);

/* ---------------------------- memory.c: buffers, accesses, lifetimes */
bool pl_wants_pad(const Planner *P, const PlanBuf *b);
void pl_size_buf(PlanBuf *b, RowLayout rows);
void pl_choose_rows(Planner *P);
PlanBuf *pl_new_buf(Planner *P, BufKind kind, const char *name, Scalar elem, int rank, const int64_t *phys,
                    TirInst *owner);
void pl_enclosing_loops(Planner *P, TirBlock *blk, TirInst *loop);
void pl_index_uses(Planner *P);
void pl_choose_staging(Planner *P, TirInst *in);
void pl_choose_exchange(Planner *P, TirInst *in);
Accesses pl_accesses(Planner *P);
int pl_acc_lower(const Accesses *acc, int pos);
void pl_live_ranges(Planner *P, Accesses *acc);
bool pl_bytes_overlap(const PlanBuf *a, const PlanBuf *b);
void pl_allocate(Planner *P);
int64_t pl_phys_bytes(const int64_t *phys, int rank, Scalar elem);
int64_t pl_tile_bytes(const PlanBuf *b);

/* ------------------------------------------------- pipeline.c: rings */
void pl_choose_pipeline(Planner *P, bool sm90, unsigned flags);

/* ---------------------------------------------- tma.c: tensor copies */
void pl_walk_tma(Planner *P, TirBlock *blk, bool in_if, bool looped, TirInst *loop);

/* ---------------------------------------------- barriers.c: barriers */
void pl_place_barriers(Planner *P, Accesses *acc);

#endif
