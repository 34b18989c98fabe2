/* tir.h: the tile IR, and the passes that make and check it.
 *
 * Sections by file: tir.c (IR, printer, verifier), lower.c (checked AST ->
 * IR, one variant). The plan made of it is plan/plan.h's; the
 * interpreter's API is interp.h. */
#ifndef PHOBOS_TIR_H
#define PHOBOS_TIR_H

#include "lang.h"

/* ------------------------------------------------------------------ tir.c */

/* A value's type: a scalar (rank 0) or a tile with static logical dims. */
typedef struct TirType {
  Scalar elem;
  int rank;
  int64_t dims[MAX_TILE_RANK];
} TirType;

typedef enum TirOp {
  TIR_CONST,     /* scalar immediate: ival or fval */
  TIR_PARAM,     /* scalar kernel parameter; aux: its index */
  TIR_DIM,       /* a tensor dim known at launch; aux: tensor param, aux2: dim */
  TIR_CTX,       /* aux: 0..2 ctx.block.x/y/z, 3..5 ctx.grid.x/y/z */
  TIR_UNARY,     /* aux: '-', '!', '~' */
  TIR_BINARY,    /* aux: an operator token or TOP_*; operands of one type and shape */
  TIR_MATH,      /* aux: TMATH_* */
  TIR_CONVERT,   /* element type conversion */
  TIR_SELECT,    /* args: cond, a, b, all of the result's shape */
  TIR_SPLAT,     /* scalar to a tile of the result's shape */
  TIR_BROADCAST, /* tile to a larger shape: NumPy rules */
  TIR_IOTA,      /* aux: axis */
  TIR_REDUCE,    /* aux: TRED_*; the last dim becomes 1 */
  TIR_DOT,       /* aux: 1 for dot_t (b is [N, K]); a may be rank 3 */
  TIR_TRANSPOSE,
  TIR_LOAD,      /* aux: tensor param; subs; result: tile of the span lengths, or scalar */
  TIR_STORE,     /* aux: tensor param; subs; args[0]: value of the slice's shape; aux2: TSTORE_* */
  TIR_EXTRACT,   /* args[0]: tile; subs: a sub-tile or an element */
  TIR_VAR,       /* a mutable slot of type ty; name */
  TIR_READ,      /* args[0]: the TIR_VAR */
  TIR_WRITE,     /* args[0]: the TIR_VAR, args[1]: value; with subs: into a sub-tile */
  TIR_FOR,       /* the induction value; args: lo, hi, step; body */
  TIR_WHILE,     /* cond: region ending in the condition (cond_value); body */
  TIR_IF,        /* args[0]: cond; body (then), body2 (else, may be empty) */
  TIR_ARRIVE,    /* one element's atomic, once a CTA (aux2: TARRIVE_*); aux: tensor param; subs: points.
                    COUNT: args[0] n (i32); bool, true in the CTA whose arrival is the n-th (the
                    counter wraps to 0 there). ADD: args[0] v; the old value. CAS: args cmp, v; the
                    old value. GRID: grid_barrier; subs: the generation, the counter one before */
  TIR_SCAN,      /* cumsum: args[0] of the result's type; the inclusive prefix sum down dim 0 */
  TIR_BREAK,     /* leaves the innermost for or while loop (uniform: the whole CTA) */
  TIR_CONTINUE,  /* the innermost loop's next iteration */
  TIR_RETURN,    /* the CTA's end (uniform) */
  TIR_BARRIER,   /* barrier(): the CTA's threads wait for each other (spec 10.6) */
  TIR_RESHAPE,   /* flat(t): args[0]'s elements in row-major order, in the result's shape */
} TirOp;

enum { TOP_MAX = 256, TOP_MIN, TOP_CDIV };
/* TMATH_FMA: fma(a, b, c), args a, b, c, one rounding (the others take one operand) */
enum { TMATH_EXP, TMATH_LOG, TMATH_SQRT, TMATH_TANH, TMATH_EXP2, TMATH_ROUND, TMATH_FMA };
enum { TRED_MAX, TRED_SUM, TRED_MIN };
/* a store writes its value, or (atomic_add, spec 9.6) adds it into each
 * element atomically: never staged or copied, element by element */
enum { TSTORE_WRITE, TSTORE_ADD };
/* TIR_ARRIVE's kinds: arrive (spec 9.5), the atomics that give the old
 * value back (9.6) and grid_barrier (9.8). Each is an effect on one
 * tensor element that orders the CTA's memory accesses around it. */
enum { TARRIVE_COUNT, TARRIVE_ADD, TARRIVE_CAS, TARRIVE_GRID };

/* One subscript of a load, store, extract or partial write. */
typedef struct TirSub {
  bool point;
  struct TirInst *start; /* an i32 scalar */
  int64_t len;           /* spans: the static length; points: 1 */
} TirSub;

typedef struct TirBlock {
  struct TirInst **insts;
  int len, cap;
  /* a large block's accesses (tir_number): counts[0] = nparams, then the
   * loads, stores and arrives of each tensor parameter in the block and
   * the blocks inside it, for tir_count_accesses; NULL for small blocks */
  int *counts;
} TirBlock;

/* A chain that only stores (skip.c): its stores, and its first member */
typedef struct TirSkip {
  int id; /* 0 .. TirFunc.nskip - 1 */
  int nstores;
  struct TirInst **stores;
  const struct TirInst *first;
} TirSkip;

typedef struct TirInst {
  int id;
  TirOp op;
  TirType ty;
  int aux, aux2;
  int64_t ival;
  double fval;
  const char *name; /* VAR: the source name; PARAM, DIM: for printing */
  int nargs;
  struct TirInst *args[3];
  int nsubs;
  TirSub subs[MAX_TENSOR_RANK];
  TirBlock body, body2, cond;
  struct TirInst *cond_value;
  Span span;
  int pos, end; /* program order: this instruction, and the last one inside it */
  struct PlanVal *plan;
  int64_t *l2pf; /* a load l2pf.c marked: each subscript's step a block (nsubs of them) */
  const TirSkip *skip; /* a member of a chain that only stores (skip.c), or NULL */
  signed char l2hint;  /* L2H_*: the load's or store's L2 eviction priority (l2hint.c) */
  bool tileacc_update; /* a reduction tileacc.c made of a tile accumulator's update in a loop */
} TirInst;

/* TirInst.l2hint (l2hint.c): none; keep the lines (a later pass reads
 * them again); let them go first (the last read, or a store nothing reads) */
enum { L2H_NONE = 0, L2H_LAST = 1, L2H_FIRST = 2 };

/* A kernel parameter as the IR sees it. */
typedef struct TirParam {
  const char *name;
  bool tensor;
  Scalar elem;
  int rank;
  const char *dimname[MAX_TENSOR_RANK]; /* NULL: a literal extent */
  int64_t dims[MAX_TENSOR_RANK];        /* literal or pinned extent; -1: from the launch */
  /* a tensor of @scratch (spec 11): the runtime allocates it (KernelInfo's
   * scratch_prog give its extents) and passes it; zero: it starts at zero */
  bool scratch, zero;
} TirParam;

typedef struct TirFunc {
  const char *name;
  const KernelInfo *info;
  int nparams;
  TirParam *params;
  TirBlock body;
  TirBlock grid;              /* computes the @grid extents from dims and constants */
  int ngrid;
  bool grid_derived;          /* no @grid: the extents are the derived grid's (spec 11.1) */
  struct TirInst *grid_value[3];
  int ninsts;
  TirInst **insts; /* by id, after tir_number */
  /* a one-pass variant (onepass.c): its loops over dim once_dim ran once
   * and were unrolled; it is launched only where once_dim <= once_max */
  const char *once_dim;
  int64_t once_max;
  /* a copy over `once_blocks` blocks (more than one): each loop ran
   * exactly that many times, so once_min < once_dim as well */
  int64_t once_min;
  int once_blocks;
  uint64_t once_apart; /* tensors read across a store to another: no written tensor may overlap them */
  /* a staged-rows variant (staged.c): every load of tensor stage_param
   * reads rows [stage_row0, + stage_rows) of it from shared memory, where
   * the kernel copies them once, right after stage_row0 is computed, in
   * blocks of stage_step columns (spec 15.14) */
  /* the most elements a thread of a tile strip.c cut into strips held as
   * written (0: none): the driver's choice of variants weighs the tiles
   * as written, so strips keep the set of variants a build keeps */
  int64_t strip_widest;
  int nskip; /* the chains skip.c marked */
  int64_t shared_need; /* the shared memory its last plan took (plan.c): 0 before planning */
  bool staged;
  int stage_param;
  const struct TirInst *stage_row0;
  int64_t stage_rows, stage_step;
} TirFunc;

TirInst *tir_new(Arena *a, TirFunc *f, TirOp op, TirType ty);
void tir_append(Arena *a, TirBlock *b, TirInst *inst);
TirType tir_scalar(Scalar e);
bool tir_same_type(const TirType *a, const TirType *b);
/* Scalar values equal by construction (the same instruction, equal
 * constants, dims, parameters or ctx registers, the same pure operation
 * of equal operands); resolve, if not NULL, maps a value first. */
bool tir_same_value(TirInst *x, TirInst *y, TirInst *(*resolve)(const void *, TirInst *), const void *ctx);
/* The elementwise tile operations and the tiles they start from (iota,
 * splat, broadcast, unary, binary, math, convert, select): the members,
 * beside loads and stores, of the row chains remat.c, strip.c and skip.c
 * work on. */
bool tir_elementwise_op(TirOp op);
/* a floating-point element type (f16, bf16, f32, f64): its constants keep
 * their value in fval, the others in ival */
static inline bool tir_float_elem(Scalar e) { return e <= S_F64; }
/* Register-only scalar work: an operation on scalars that touches no memory
 * and no tile (constants, parameters, dims, ctx, arithmetic). */
bool tir_scalar_arith(const TirInst *in);
/* a value's last dim (0 for a scalar), and the index of a load's or
 * store's last span subscript, whose length is the tile's last dim (-1
 * when every subscript is a point) */
int64_t tir_last_dim(const TirInst *v);
int tir_last_span(const TirInst *in);
/* union-find over block indices: the root of x, halving the path */
int tir_uf_find(int *parent, int x);
/* whether a dot lies in b or the blocks inside it */
bool tir_has_dot(const TirBlock *b);
/* Whether a block holds a grid_barrier (TIR_ARRIVE of kind GRID), at any
 * depth. */
bool tir_has_grid_barrier(const TirBlock *b);
/* Whether a block stores to a tensor or arrives, at any depth; whether an
 * instruction does (itself or a block inside it). */
bool tir_writes(const TirBlock *b);
bool tir_inst_writes(const TirInst *in);
/* The 32-bit registers a thread has (65536 / threads, at most 255; @launch's
 * min_blocks and max_regs lower it), and those a value takes when spread
 * over the CTA's threads (16- and 8-bit tiles packed, bool a register an
 * element); whether a value takes registers of its own (splats, broadcasts
 * and iota are formed where they are read). remat.c and strip.c weigh
 * tiles with them. */
int64_t tir_register_budget(const TirFunc *f);
int64_t tir_thread_regs(const TirFunc *f, const TirInst *v);
bool tir_holds_registers(const TirInst *v);
int64_t tir_elems(const TirType *t);
/* The language's float -> integer conversion (as cvt.rzi.sat): truncate
 * toward zero, saturate to e's range (i8 u8 i32 i64), NaN -> 0. Every
 * double -> integer in lowering and the interpreter goes through it: a
 * plain cast is undefined past the target's range. */
int64_t tir_float_to_int(double v, Scalar e);
/* Numbers instructions in program order (pos, end), fills f->insts and
 * gives large blocks their tables of accesses (the IR does not change
 * after lowering, which ends with this). */
void tir_number(Arena *a, TirFunc *f);
/* How many instructions read each value (operands, subscript starts, loop
 * conditions), by id; after tir_number. */
int *tir_use_counts(Arena *a, const TirFunc *f);
/* Whether a store to tensor parameter `param`, or an arrive counting in it,
 * lies anywhere in b (nested blocks included). */
bool tir_stores_to(const TirBlock *b, int param);
/* How many instructions of op `op` (TIR_LOAD, TIR_STORE, TIR_ARRIVE) on
 * tensor parameter `param` lie in b, nested blocks included. */
int tir_count_accesses(const TirBlock *b, TirOp op, int param);
void tir_print(FILE *out, const TirFunc *f);
/* Checks the IR's invariants; returns false and reports an internal error
 * through d when one is broken. */
bool tir_verify(Diags *d, const TirFunc *f, const char *after);
const char *tir_op_name(int op);
/* The loop `for c in range(0, D, S)`, D a tensor dim and S a positive
 * constant: its TIR_DIM bound (aux, aux2: the tensor and the dim), S in
 * *step; NULL for any other instruction. */
const TirInst *tir_dim_loop(const TirFunc *f, const TirInst *in, int64_t *step);
/* the dim name of such a loop (NULL: not one, or a literal dim) */
const char *tir_dim_loop_name(const TirFunc *f, const TirInst *in, int64_t *step);
/* The PTX entry of a variant: <kernel>__v<variant index>, and _once after
 * it for the variant's one-pass copy. */
const char *tir_entry_name(Arena *a, const TirFunc *f);
/* The variant's constants as "A=1, B=2" (tir_func_str: with "; N <= 4096,
 * one pass" for a one-pass copy). */
const char *tir_variant_str(Arena *a, const KernelInfo *info);
const char *tir_func_str(Arena *a, const TirFunc *f);

/* --------------------------------------------------------------- lower.c */

/* The most steps of a @grid extent's postfix program: libphobos's
 * MF_MAX_GRID_OPS (runtime/rt.h); lowering refuses longer ones. */
enum { MAX_GRID_TOKENS = 32 };

/* Lowers a kernel checked by sema_check_variant (its AST annotated). */
TirFunc *lower_kernel(Arena *a, Diags *d, const KernelInfo *info);
/* lowered with every loop `for c in range(0, D, S)` over a dim named dim
 * replaced by k copies of its body (c = 0, S, ..), and none of the passes
 * after lowering; loop j's copies are the ids [ids[2j], ids[2j + 1]) */
TirFunc *lower_kernel_unrolled(Arena *a, Diags *d, const KernelInfo *info, const char *dim, int k, int **ids,
                               int *nloops);

/* ------------------------------------------------------------- tileacc.c */

/* Tile accumulators that only reductions after their loop read (`acc +=
 * x` in a for loop, `rowsum(acc)` after it; or tmax and rowmax), made row
 * accumulators `[.., 1]` that add (max in) each update's reduction, for
 * deferred.c to keep a register a thread (spec 15.23); the IR is numbered
 * again. Kernels with a dot or @pipeline, staged-rows copies and
 * KernelInfo.keep_tile_accs are unchanged. */
void tileacc_rows(Arena *a, TirFunc *f);

/* --------------------------------------------------------------- early.c */

/* Loads issued early: each tile load moved up its block to just after its
 * operands and the last store or arrive before it (early.c), and the IR
 * numbered again; all: the loads written into vars too (a one-pass copy's);
 * early_loads_wanted: the kernels whose loads it moves (none with a dot). */
void early_loads(Arena *a, TirFunc *f, bool all);
bool early_loads_wanted(const TirFunc *f);

/* --------------------------------------------------------------- remat.c */

/* Values computed again instead of held across a row reduction (remat.c):
 * where the tiles live across a reduction of a block would take more than
 * half a thread's registers, each use after it of a value whose chain reads
 * only read-only tensors (loads, iota, splats, broadcasts, elementwise
 * operations) reads a copy of that chain made before the use; the IR is
 * numbered again. Kernels with a dot and staged-rows copies are unchanged. */
void remat_values(Arena *a, TirFunc *f);

/* --------------------------------------------------------------- strip.c */

/* Chains of whole-row tiles too wide for a thread's registers (the widest
 * value over half of them), strip-mined (strip.c): loads, elementwise
 * operations and stores run in strips of W columns, one after another, and
 * the reductions that end a chain fold the strips into a running tile that
 * one reduction ends; the IR is numbered again. After remat_values. */
void strip_rows(Arena *a, TirFunc *f);

/* l2pf.c: marks the loads whose slices move with ctx.block.x (TirInst.l2pf),
 * for the prefetch of the slice D blocks ahead into L2 (spec 15.18).
 * l2pf_used: whether an entry of f for arch takes the distance parameter;
 * l2pf_arch: whether arch has the bulk prefetch (sm_90 and later). */
void l2pf_mark(Arena *a, TirFunc *f);
bool l2pf_used(const TirFunc *f, const char *arch);
bool l2pf_arch(const char *arch);

/* l2hint.c: marks the tile loads of a tensor that later top-level loops
 * load again at the same rows (TirInst.l2hint: L2H_LAST, the last such
 * loop's L2H_FIRST), and then the stores to tensors the kernel never
 * loads (L2H_FIRST), for the backend's L2 eviction priorities (spec 15.21).
 * Kernels with a dot are unchanged. */
void l2hint_mark(Arena *a, TirFunc *f);

/* skip.c: marks each chain of a block that only stores (TirInst.skip), for
 * the warps whose part of it lies wholly past the tensor or the tile to
 * skip (spec 15.19); scalar arithmetic its stores' column starts need moves
 * up before it (the IR is then numbered again). After l2pf_mark. */
void skip_mark(Arena *a, TirFunc *f);

/* ------------------------------------------------------------- onepass.c */

/* The one-pass copy of a variant, lowered afresh: its loops over one tensor
 * dim in constant steps unrolled to their single iteration and the loads
 * the later passes repeat merged into the first's, for launches where that
 * dim is at most the least step; NULL where it would merge no load of one
 * loop into another's (or on an error, reported through d). With blocks
 * > 1, every loop unrolled to exactly that many iterations (their steps S
 * must be equal), for launches where (blocks - 1) S < dim <= blocks S. */
TirFunc *onepass_variant(Arena *a, Diags *d, const KernelInfo *info, int blocks);

/* -------------------------------------------------------------- staged.c */

/* The staged-rows copy of a variant, lowered afresh: a read-only tensor
 * whose every load is X[r0 :+ BR, c :+ S] in loops `for c in range(0, D,
 * S)` over its last dim, in two loops or more, is copied once into shared
 * memory (bulk copies, an mbarrier a block of S columns) and every load
 * reads the copy; NULL where no tensor qualifies. */
TirFunc *staged_variant(Arena *a, Diags *d, const KernelInfo *info);
/* The shared bytes the copy adds past the plan's for a last dim of D: the
 * rows, 64 bytes of slack, an mbarrier a block (spec 16.2; the runtime
 * computes the same). */
int64_t staged_extra_bytes(const TirFunc *f, int64_t D);

#endif
