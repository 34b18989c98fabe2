/* plan.h: the plan of one variant (src/plan/): where each value lives and
 * how it is laid out, each dot's instruction, the shared-memory buffers and
 * their lifetimes, the tensor maps, the barriers; and the planner's entry
 * points. The backend (src/ptx/) and the interpreter (interp.c) read it. */
#ifndef PHOBOS_PLAN_H
#define PHOBOS_PLAN_H

#include "tir.h"

typedef enum Residence { RES_UNIFORM, RES_THREAD, RES_REG, RES_SHARED, RES_NONE } Residence;

typedef enum LayoutKind {
  LAYOUT_NONE,
  LAYOUT_BLOCKED, /* elements spread over lanes and warps, innermost dim fastest */
  LAYOUT_MMA_ACC, /* m16n8k16 accumulator fragment */
  LAYOUT_SLICED,  /* a row reduction of a parent layout: one value per row */
  LAYOUT_FLAT,    /* chunks of Plan.chunk elements dealt round the threads, in flat physical order */
  LAYOUT_COLUMNS, /* a row vector ([N] or [1, N]) broadcast down a blocked parent: each thread its columns */
} LayoutKind;

/* A class of tied values' distribution over the threads (all its values
 * have one physical shape). The planner decides it (plan/layout.c, pl_choose_layouts);
 * the backend spells it (ptx/layout.c). */
typedef struct Layout {
  int id; /* the planner's numbering */
  LayoutKind kind;
  int rank;
  int spt[MAX_TILE_RANK];   /* blocked: elements per thread along each dim */
  int tpw[MAX_TILE_RANK];   /* threads per warp along each dim */
  int wpc[MAX_TILE_RANK];   /* warps per CTA along each dim */
  int reps;                 /* blocked: repetitions to cover the tile; mma: fragments per warp; flat: registers */
  int reps_c;               /* blocked: of those, the repetitions along the row */
  int chunk;                /* flat: Plan.chunk */
  struct Layout *parent;    /* sliced: the layout reduced */
} Layout;

/* A blocked layout's geometry over a value's folded shape [M, N] (the
 * leading dims folded into M): threads own V consecutive elements of a row
 * (one 16-byte vector where the types allow), a warp's lanes take tc such
 * chunks along the row and tr rows, the warps wc along the row and wr down
 * (rows first: a row spans as few warps as the row's length allows), and
 * the pattern repeats reps_r times down and reps_c times along. Register k
 * of a thread is chunk (k / V) % reps_c, v = k % V of its row repetition
 * k / (V reps_c) (plan_block_geom; ptx/layout.c spells it). A row value
 * sliced from it holds register rr for row repetition rr. */
typedef struct BlockGeom {
  int V, tr, tc, wr, wc;
  int64_t M, N, reps_r, reps_c;
} BlockGeom;

/* How a dot is computed (plan.c, choose_dot_paths). */
typedef enum DotPath {
  DOT_FMA,     /* each thread its output elements over the exchange area or staged operands */
  DOT_COLUMNS, /* up to 8 rows times columns the threads own in registers: no exchange of B */
  DOT_MMA,     /* mma.sync m16n8k16 (m16n8k32 for 8-bit dot_t) through ldmatrix */
  DOT_WGMMA,   /* wgmma.mma_async m64nNk16 (sm_90a), N in PlanVal.wgmma_n */
} DotPath;

typedef enum BufKind {
  BUF_STAGE_VAR,
  BUF_STAGE_DOT,
  BUF_SCRATCH,
  BUF_RING, /* @pipeline: [stages, rows, cols] of a loop's register load, filled by bulk copies */
  BUF_MBAR, /* @pipeline: one 8-byte mbarrier per stage of a loop */
} BufKind;

/* How a buffer's rows lie in its bytes, decided once its copy mechanism is
 * (plan/memory.c, pl_choose_rows): one after the other; @padstage's 8 more
 * elements a row (for a tile whose rows are whole 128-byte lines and that no
 * tensor copy fills); or cut into panels 32, 64 or 128 bytes wide in the
 * layout a swizzled tensor copy writes (ptx/layout.c, px_buf_addr), which
 * wgmma and ldmatrix read without bank conflicts. */
typedef enum RowLayout { ROWS_DENSE, ROWS_PAD8, ROWS_SWIZZLE32, ROWS_SWIZZLE64, ROWS_SWIZZLE128 } RowLayout;

typedef struct PlanBuf {
  int id;
  BufKind kind;
  const char *name;    /* source name, or what the scratch is for */
  Scalar elem;
  int rank;
  int64_t dims[MAX_TILE_RANK]; /* physical */
  bool tma_dest;       /* a tensor copy fills it: its rows are the copy's (dense or swizzled) */
  RowLayout rows;
  int64_t pitch;       /* elements per row in the allocation (ROWS_PAD8: 8 more than the last dim) */
  int64_t bytes, offset;
  int align;           /* bytes: 16, or 128 for a TMA destination */
  int first, last;     /* live range in program positions */
  TirInst *owner;      /* the LOAD or VAR it holds, or the instruction that needs the scratch */
  /* @pipeline: a staged load's buffer made a ring of `stages` copies of
   * stage_bytes each, filled by cp.async stages - 1 iterations ahead of its
   * readers (bytes is stages * stage_bytes); 0 for any other buffer */
  int stages;
  int64_t stage_bytes;
} PlanBuf;

/* the width of a buffer's swizzled panels in bytes (32, 64, 128), or 0 */
static inline int plan_swizzle(const PlanBuf *b) {
  return b->rows == ROWS_SWIZZLE128 ? 128 : b->rows == ROWS_SWIZZLE64 ? 64 : b->rows == ROWS_SWIZZLE32 ? 32 : 0;
}

typedef struct PlanVal {
  Residence res;
  int64_t phys[MAX_TILE_RANK]; /* physical dims: powers of two, layout granules */
  bool slack;                  /* some physical dim exceeds its logical dim */
  Layout *layout;
  PlanBuf *buf;                /* RES_SHARED, and a tensor store's staging */
  PlanBuf *scratch;            /* an operation's exchange between threads (plan.c, choose_exchange) */
  bool dot_fma;                /* TIR_DOT: no tensor-core shapes (granules) */
  DotPath dot;                 /* TIR_DOT: its instruction */
  int wgmma_n;                 /* TIR_DOT on DOT_WGMMA: the N of m64nNk16 */
  struct TirInst *acc_slot;    /* TIR_DOT on DOT_WGMMA: the var it accumulates into in place (plan/accumulate.c) */
  bool wait_deferred;          /* ... its group waited for in the next iteration of its staged ring */
  const struct TirInst *wait_at; /* ... else waited for just before this later instruction of its block
                                    (--late-waits: plan/accumulate.c, pl_choose_wgmma_waits); NULL: at once */
  bool folded;                 /* a READ, add or WRITE of an acc_slot dot's var: nothing to compute */
  PlanBuf *ring, *mbar;        /* TIR_LOAD under @pipeline: its ring and its loop's mbarriers */
  const char *path;            /* TIR_LOAD in a @pipeline loop: the path it takes and why */
  int tma;                     /* TIR_LOAD: 1 + its tensor map's index in Plan.tmaps (a TMA copy), else 0 */
  bool partial;                /* TIR_REDUCE: folded within each thread only; its loop's exit finishes it (plan/deferred.c) */
  struct PlanDefer *defer;     /* TIR_FOR: the accumulators whose reductions finish at its exit (plan/deferred.c) */
  const struct TirInst *tma_outer; /* a split span's start is tma_outer * its length: the outer coordinate */
  int64_t tma_outer_const;         /* ... or this constant, when tma_outer is NULL */
} PlanVal;

/* A loop's accumulator whose row reductions stay within each thread for
 * the whole loop (plan/deferred.c): DEFER_SUM and DEFER_MAX `v = v + rowsum(x)`
 * and `v = tmax(v, rowmax(x))`, one slot; DEFER_LSE the online logsumexp's
 * running max slot[0] and sum slot[1]. red: a reduction of it in the loop
 * (its input's layout is the threads' and warps' along the rows). */
typedef enum DeferKind { DEFER_SUM, DEFER_MAX, DEFER_LSE } DeferKind;
typedef struct PlanDefer {
  DeferKind kind;
  const struct TirInst *slot[2];
  const struct TirInst *red;
  struct PlanDefer *next;
} PlanDefer;

/* a load read in place from a stage of its staged ring (@pipeline) */
static inline bool plan_is_ring_stage(const struct TirInst *x) {
  return x->op == TIR_LOAD && x->plan->res == RES_SHARED && x->plan->buf && x->plan->buf->stages;
}

/* A tensor map that TMA copies go through (sm_90a): the runtime builds it
 * from the tensor argument at launch (cuTensorMapEncodeTiled). */
typedef struct PlanTmap {
  int param;                    /* the tensor parameter */
  int rank;                     /* the tensor's */
  /* Pad-and-mask: tensor dim split_dim (or -1) is viewed as [extent / split_inner,
   * split_inner] (the map's rank is rank + 1), so a span of split_inner elements
   * padded to a power of two has its slack past the end of its own dim, where the
   * copy fills zeros (GQA: Q [B, S, HQ, D] as [B, S, HKV, NQ, D]). */
  int split_dim;
  int64_t split_inner;
  int64_t box[MAX_TENSOR_RANK + 1]; /* per map dim, outermost first: span lengths (padded), 1 for a point */
  Scalar elem;
  /* bytes of the swizzle (32, 64, 128; 0 none): the inner box is that wide,
   * and a tile row `boxes` times wider takes one copy per panel */
  int swizzle, boxes;
} PlanTmap;
enum { MAX_TMAPS = 8 };
/* libphobos passes MF_MAX_SLOTS = 160 values at a launch (runtime/rt.h): a
 * kernel's parameters, at most MAX_PARAM_SLOTS (sema.c), and two for each
 * tensor map */
_Static_assert(MAX_PARAM_SLOTS + 2 * MAX_TMAPS <= 160, "launch values past libphobos's MF_MAX_SLOTS");

typedef struct PlanBarrier {
  int pos;          /* the barrier goes before the instruction at this position */
  const char *why;
} PlanBarrier;

typedef struct Plan {
  TirFunc *f;
  int threads;
  int nbufs;
  PlanBuf **bufs;
  int64_t shared_bytes, shared_limit;
  int nbarriers;
  PlanBarrier *barriers;
  bool padstage;
  int stages;      /* @pipeline on sm_90a: the ring depth; 0 otherwise */
  int stages_wanted; /* @pipeline's count, where shared memory made stages fewer (0: it was not cut) */
  bool producer;   /* the rings are filled by a warp of their own, after the T threads */
  /* PLAN_SPECIALIZE took: the producer fills a loop's staged tensor-copy
   * rings (plan/specialize.c); entry KERNEL__vN..._ws, maps_required */
  bool specialized;
  int launch_threads; /* threads, plus 32 with a producer warp */
  bool prefetch;   /* PLAN_PREFETCH: loops load register tiles an iteration ahead */
  bool late_waits; /* PLAN_LATE_WAITS: wgmma groups waited for at their first use (PlanVal.wait_at) */
  bool no_defer;   /* PLAN_NO_DEFER: every row reduction in a loop meets its row each iteration (plan/deferred.c) */
  bool no_async;   /* --no-tma or @no_tma: no asynchronous copies (no cp.async staging either) */
  bool no_l2pf;    /* PLAN_NO_L2PF: no prefetch of later blocks' slices into L2 (src/l2pf.c) */
  bool early_pf;   /* PLAN_EARLY_PF: griddepcontrol.wait moved, a loop's first tiles fetched before it (ptx/depwait.c) */
  bool l2_hints, l2_hint_stores; /* L2 eviction priorities (src/l2hint.c): unless PLAN_NO_L2_HINTS; PLAN_L2_HINT_STORES */
  int l2_keep_eighths;           /* the share of lines an evict_last load keeps, in eighths (PLAN_L2_KEEP_SHIFT) */
  bool no_skip;    /* PLAN_NO_SKIP: no warp skips a chain that only stores (src/skip.c) */
  bool no_walk_skip; /* PLAN_NO_WALK_SKIP: no warp skips a walk's iteration past its end (ptx/walkskip.c) */
  bool row_broadcasts; /* PLAN_ROW_BROADCASTS: a column vector broadcast across a tile takes the tile's rows (plan/layout.c, 3c) */
  bool shift_walk; /* PLAN_SHIFT_WALK: row loops' blocks may move to their row's alignment (src/shiftwalk.c) */
  int raster_group; /* a 2-D grid's blocks grouped this many block.y rows at a time (plan/raster.c), 0: the hardware's order */
  int ntmaps;
  PlanTmap tmaps[MAX_TMAPS];
  int ntma_loads;  /* loads that take TMA copies (one mbarrier each) */
  bool wgmma;      /* sm_90a without PLAN_NO_WGMMA: fragment dots on swizzled operands may take wgmma */
  int chunk;       /* the flat layout's chunk: elements a thread holds side by side (1, 2 or 4) */
  bool frags;      /* some class keeps the mma fragment layout */
  /* an aligned-rows copy (driver_aligned_copy): the same plan emitted
   * without the odd-pitch row paths (ptx/loads.c), whose registers every
   * thread pays for where rows are aligned; launched only where the
   * tensors of aligned_params (bit i: parameter i) have 16-byte aligned
   * bases and row pitches (the manifest's aligned_rows, spec 15.12) */
  bool aligned_copy;
  uint64_t aligned_params;
  /* the odd-rows plan of a variant that has an aligned-rows copy
   * (driver_odd_rows_plan): register tiles that load from or store to the
   * tensors of scalar_params (bit i: parameter i) and whose warps span
   * several rows take the blocked layout with one element a chunk, so that
   * a warp's lanes read and write consecutive elements of a row wherever
   * it starts, with no shifts; odd_rows: some tile did (else the plan is
   * the vector plan again, and the driver drops it) */
  uint64_t scalar_params;
  bool odd_rows;
  /* an odd-rows plan kept beside the vector plan it would replace (the
   * conformance harness runs both): its entry is KERNEL__vN_odd */
  bool odd_beside;
  /* an occupancy copy (driver_occupancy_copy): the same plan emitted with
   * .minnctapersm occ_blocks (2048 threads an SM: ptxas keeps a thread to
   * 32 registers); 0: none. Entry KERNEL__vN..._occ */
  int occ_blocks;
  /* a general-strides copy (driver_general_copy, spec 16.3): every tensor
   * takes each dim's stride, the last included, and every global access
   * goes element by element at base + sum(coordinate x stride); no vectors,
   * tensor copies, staging by bulk copies or L2 prefetch. Entry
   * KERNEL__vN_strided, launched only where some tensor's last stride is
   * not 1 */
  bool general_strides;
  /* a cluster-rows copy (driver_cluster_copy, src/cluster.c, spec 15.22):
   * each row block (ctx.block.x) taken by a cluster of `cluster` CTAs, the
   * top-level loops over dim cluster_dim split among them and their
   * deferred accumulators met across the cluster; 0: none. cluster_step:
   * the least step of those loops. Entry KERNEL__vN..._clC */
  int cluster;
  const char *cluster_dim;
  int64_t cluster_step;
  uint64_t cluster_apart; /* read tensors no written one may overlap (bit i: parameter i; the manifest's apart) */
} Plan;

/* Plans the function; returns NULL after reporting an error (over budget). */
/* Planner switches: PLAN_NO_ASYNC, @pipeline keeps plain loads (phobosc
 * --no-tma); PLAN_PRODUCER_WARP, a ringed loop may get a producer warp
 * (phobosc --producer-warp: slower on the q8 example, so off by default);
 * PLAN_PREFETCH, loops load their register tiles one iteration ahead
 * (phobosc --prefetch, experimental: ptx/pipeline.c, px_emit_for); PLAN_NO_TENSOR_COPIES,
 * staged loads never take TMA tensor copies, which on sm_90a they do where
 * they qualify (phobosc --no-tensor-copies, for A/B runs); PLAN_NO_WGMMA,
 * tensor-core dots keep mma.sync where wgmma would serve (phobosc
 * --no-wgmma, for A/B runs); PLAN_NO_L2PF, no entry takes the L2 prefetch
 * distance (phobosc --no-l2-prefetch); PLAN_NO_SKIP, every warp runs every
 * chain that only stores (phobosc --no-warp-skip); PLAN_GENERAL_STRIDES,
 * the general-strides copy (Plan.general_strides; implies no asynchronous
 * copies, no tensor copies and no L2 prefetch); PLAN_SPECIALIZE, a loop's
 * staged tensor-copy rings filled by a producer warp where the plan allows
 * (Plan.specialized, plan/specialize.c: the driver's warp-specialized copy). */
enum { PLAN_NO_ASYNC = 1, PLAN_PRODUCER_WARP = 2, PLAN_PREFETCH = 4, PLAN_NO_TENSOR_COPIES = 8, PLAN_NO_WGMMA = 16, PLAN_NO_DEFER = 32,
       PLAN_NO_L2PF = 64, PLAN_NO_SKIP = 128, PLAN_GENERAL_STRIDES = 256, PLAN_SPECIALIZE = 512,
       /* plan_kernel's own, as it degrades @pipeline: PLAN_AUTO_NO_TC, the
        * tensor copies were left out for shared memory (not asked for);
        * PLAN_STAGE_CAP(n) in bits 16-19, at most n stages (1: no rings) */
       PLAN_AUTO_NO_TC = 1024,
       /* no L2 eviction priorities on the loads l2hint.c marks (phobosc
        * --no-l2-hints), or on its stores too (--l2-hints=stores) */
       PLAN_NO_L2_HINTS = 2048, PLAN_L2_HINT_STORES = 4096,
       /* shifted walks (phobosc --shift-walks, experimental; src/shiftwalk.c) */
       PLAN_SHIFT_WALK = 8192, PLAN_STAGE_SHIFT = 16, PLAN_STAGE_MASK = 15 << 16,
       /* the share of lines an evict_last load keeps, 1 - n/8 for n in
        * bits 20-22 (--l2-keep; 0: all of them), the rest evict_first */
       PLAN_L2_KEEP_SHIFT = 20, PLAN_L2_KEEP_MASK = 7 << 20,
       /* wgmma groups waited for at their first use (phobosc --late-waits,
        * experimental; plan/accumulate.c, pl_choose_wgmma_waits) */
       PLAN_LATE_WAITS = 1 << 23,
       /* every warp runs every iteration of a walk (phobosc --no-walk-skip;
        * ptx/walkskip.c) */
       PLAN_NO_WALK_SKIP = 1 << 24,
       /* a column vector broadcast across a tile is planned in the tile's
        * rows (phobosc --row-broadcasts, experimental; plan/layout.c) */
       PLAN_ROW_BROADCASTS = 1 << 25,
       /* the dependent launch's wait moved to the first statement that
        * touches global memory, a loop's first tiles into L2 before it
        * (phobosc --early-prefetch, experimental; ptx/depwait.c) */
       PLAN_EARLY_PF = 1 << 26 };
#define PLAN_STAGE_CAP(n) ((unsigned)(n) << PLAN_STAGE_SHIFT)
Plan *plan_kernel(Arena *a, Diags *d, TirFunc *f, const char *arch, unsigned flags);
/* plan_kernel with Plan.scalar_params set (0: plan_kernel itself) */
Plan *plan_kernel_rows(Arena *a, Diags *d, TirFunc *f, const char *arch, unsigned flags, uint64_t scalar_params);
/* Whether the plan of a staged-rows copy (staged.c) spells every staged
 * load by the blocked rows path, the only one that reads the copy, with
 * no producer warp and no prefetching; the copy is left out otherwise. */
bool staged_plan_ok(const Plan *p);
/* Where a staged-rows copy's area starts in the dynamic shared memory:
 * after the plan's buffers (16-byte aligned) under @dynshared, else at 0
 * (the plan's bytes are static); its size is staged_extra_bytes. */
int64_t staged_area_offset(const Plan *p);
void plan_print(FILE *out, const Plan *p);
/* The plan's entry: its variant's (tir_entry_name), "_al" after it for an
 * aligned-rows copy; plan_func_str likewise after tir_func_str. */
const char *plan_entry_name(Arena *a, const Plan *p);

/* Cluster-rows copies (src/cluster.c, spec 15.22): whether a plan may take
 * one (the dim its loops split, their least step, and the read tensors no
 * written one may overlap), and whether a loop
 * of such a copy is split across the cluster's CTAs. */
bool cluster_rows_ok(const Plan *p, const char **dim, int64_t *step, uint64_t *apart);
/* Shifted walks (src/shiftwalk.c, spec 15.24): the access whose row's
 * alignment loop `loop` starts at, or NULL where it is not one. */
const TirInst *shiftwalk_leader(const Plan *p, const TirInst *loop);
/* whether every row reduction in such a loop reads its identity at the
 * columns past the dim it walks (or it has none): the walk may stop at the
 * dim's end instead of at the plain walk's last block's */
bool shiftwalk_slack_free(const TirInst *loop);
/* whether slot is one of loop's deferred accumulators (plan/deferred.c) */
bool plan_defers_slot(const TirInst *loop, const TirInst *slot);
bool cluster_split_loop(const Plan *p, const TirInst *loop);
/* the bytes of a copy's cluster exchange (ptx/cluster.c's clx_), counted
 * in the manifest's shared_bytes */
int64_t cluster_exchange_bytes(const TirFunc *f, const char *dim);
const char *plan_func_str(Arena *a, const Plan *p);
void plan_print_yaml(FILE *out, const Plan *p);
const char *plan_layout_str(Arena *a, const Layout *l);
/* the rows of a planned value with its leading dims folded: the product of
 * its physical dims but the last */
int64_t plan_folded_rows(const TirInst *x);
/* A buffer's rows: its leading dims folded. */
int64_t plan_buf_rows(const PlanBuf *b);
/* The bytes that rounding the shared base up to 1024 may skip: 1024 with a
 * swizzled buffer (its pattern is the shared address's own), else 0. A
 * launch's shared memory includes them. */
int64_t plan_base_rounding(const Plan *p);
/* Register tiles are unrolled per thread: past this many registers a
 * value the code would be huge and spill (plan.c, check_backend_limits). */
enum { MAX_REGS_PER_VALUE = 1024 };
/* the registers a thread spends on value x in its layout */
int64_t plan_regs(const Plan *p, const TirInst *x);
int64_t plan_most_blocked_regs(const Plan *p); /* the largest blocked register value, a thread */
int plan_mma_exchanges(const Plan *p);         /* tensor-core dots exchanged through shared memory, -1: none */
/* Whether the odd-rows plan for the tensors of params (bit i: parameter i)
 * would give some tile of p, their vector plan, one element a chunk: a
 * blocked tile loaded from or stored to them whose warps span rows. */
bool plan_odd_rows_narrow(const Plan *p, uint64_t params);
/* the dynamic shared memory a launch of the plan needs: its buffers, and the
 * 1024 bytes that rounding the base up may skip when a buffer is swizzled */
int64_t plan_launch_shared(const Plan *p);
/* why a dot planned with tensor-core shapes runs on FMA, or NULL */
const char *plan_dot_fallback(Arena *a, const Plan *p, const TirInst *dot);
/* the most rows of A a DOT_COLUMNS product takes (a decode batch's: each
 * costs a register a column the thread owns) */
enum { PLAN_DOT_COLUMNS_ROWS = 8 };
/* a DOT_COLUMNS dot whose A is a register tile (not a splat): it goes
 * through the dot's exchange area (ptx/dot.c) */
static inline bool plan_dot_columns_exchanges(const TirInst *dot) {
  const TirInst *a = dot->args[0];
  return a->op != TIR_SPLAT && a->plan->res == RES_REG;
}
/* x in a blocked layout, in a row layout sliced from one, or in the
 * columns layout of a row vector broadcast down one */
bool plan_is_blocked(const TirInst *x);
bool plan_is_blocked_rows(const TirInst *x);
bool plan_is_columns(const TirInst *x);
/* x a row vector ([N] or [1, N]) broadcast over a fragment value, in the
 * columns that value's threads hold: register m of a thread is column
 * (m / 2) 8 + 2 t + m % 2 (t = lane % 4), N / 4 registers, so a broadcast
 * over the fragment is a move from register to register (a GEMM's bias) */
bool plan_is_fragcols(const TirInst *x);
/* the geometry of x's blocked layout (of the parent, for a sliced row value) */
BlockGeom plan_block_geom(const TirInst *x);
/* whether two values' blocked layouts place their rows alike (same M,
 * row repetitions, lanes and warps down the rows) */
bool plan_same_rows(const BlockGeom *a, const BlockGeom *b);
/* a row reduction of a blocked value into its row layout: each thread
 * folds its registers, the lanes of a row shuffle, the warps of a row (when
 * it spans several) meet in a scratch of M x wc partials */
bool plan_reduce_in_regs(const TirInst *red);
/* A warp-specialized plan's registers (plan/specialize.c): the launch
 * bound R a thread, what the consumers take (X) and the producer keeps
 * (Y) by setmaxnreg; false where moving registers gains the consumers
 * nothing. */
bool plan_ws_regs(const Plan *p, int *R, int *X, int *Y);
/* a broadcast of a row value over a blocked value whose rows lie alike, or
 * of a row vector over the fragment value whose columns it holds:
 * register moves */
bool plan_broadcast_in_regs(const TirInst *bc);
/* a transpose of a blocked value into a blocked value of the swapped
 * physical shape: each thread writes its registers into a shared tile of
 * rows plan_transpose_pitch elements long (one more than the source's row,
 * so that a column read falls in different banks), a barrier, and each
 * reads its result registers down the columns; both sides keep their
 * 16-byte global accesses (a transpose of a load otherwise reloads it in
 * transposed order, one element a thread, §15.4) */
bool plan_transpose_in_smem(const TirInst *t);
/* a value read from global memory into registers (a load, or a transpose
 * of one that does not go through shared memory) is read again at any
 * coordinates instead of being exchanged: every thread loads what it
 * needs, no barrier (ptx/exchange.c; the planner gives it no scratch) */
bool plan_reloads(const TirInst *x);
static inline int64_t plan_transpose_pitch(const TirInst *src) { return src->plan->phys[1] + 1; }
/* whether a tensor-core dot packs its a operand from the accumulators of
 * a fragment value (attention's P) */
bool plan_a_from_regs(const TirInst *dot);

#endif
