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
  int *uses; /* tir_use_counts */
  int nlayouts; /* Layout.id: layouts made so far (at most one a class) */
  struct WalkMemo **walked; /* by loop id: the barrier walks done (barrier_walk) */
  /* indexes, so that no pass scans the whole kernel for each instruction
   * (a kernel of 40,000 statements planned in quadratic time) */
  TirInst **encl;          /* by position: the innermost loop strictly containing it (enclosing_loops) */
  PtrVec *users;           /* by id: the instructions that take it as an operand or subscript (written_while_alive) */
  PtrVec *writes;          /* by slot id: its WRITEs in program order (written_while_alive) */
  PtrVec *scratch_of;      /* by id: the scratch buffers it owns, in buffer order (collect_accesses) */
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


typedef struct Hazards {
  PlanBuf *dirty[64]; /* written since the last barrier */
  int ndirty;
  PlanBuf *read[64];  /* read since the last barrier */
  int nread;
} Hazards;

static inline PlanVal *pv(const TirInst *in) { return in->plan; }

/* ------------------------------ layout.c: shapes, layouts, dot paths */
int64_t mma_k(const TirInst *dot);
void tie_values(Planner *P, TirInst *in);
void init_phys(Planner *P, TirInst *in);
void dot_granules(Planner *P, TirInst *in);
void unify_phys(Planner *P);
void assign_layouts(Planner *P);
int64_t phys_elems(const TirInst *x);
bool is_frag(const TirInst *x);
bool is_rowfrag(const TirInst *x);
void choose_frags(Planner *P);
void choose_chunk(Planner *P);
bool mma_direct(const TirInst *x);
void choose_dot_paths(Planner *P);
void check_backend_limits(Planner *P);

/* ---------------------------- memory.c: buffers, accesses, lifetimes */
PlanBuf *new_buf(Planner *P, BufKind kind, const char *name, Scalar elem, int rank, const int64_t *phys, TirInst *owner);
void enclosing_loops(Planner *P, TirBlock *blk, TirInst *loop);
void choose_staging(Planner *P, TirInst *in);
void choose_exchange(Planner *P, TirInst *in);
void collect_accesses(Planner *P, TirBlock *blk, Accesses *acc);
int acc_lower(const Accesses *acc, int pos);
void live_ranges(Planner *P, Accesses *acc);
bool bytes_overlap(const PlanBuf *a, const PlanBuf *b);
void allocate(Planner *P);
int64_t phys_bytes(const int64_t *phys, int rank, Scalar elem);
int64_t tile_bytes(const PlanBuf *b);

/* ------------------------------------------------- pipeline.c: rings */
void choose_pipeline(Planner *P, bool sm90, unsigned flags);

/* ---------------------------------------------- tma.c: tensor copies */
void walk_tma(Planner *P, TirBlock *blk, bool in_if, bool looped, TirInst *loop);

/* ---------------------------------------------- barriers.c: barriers */
void barrier_walk(Planner *P, TirBlock *blk, Hazards *h, Accesses *acc);
void hoist_barriers(Planner *P, TirBlock *blk, const Accesses *acc);
int cmp_barrier(const void *x, const void *y);

#endif
