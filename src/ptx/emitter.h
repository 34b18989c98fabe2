/* emitter.h: the PTX backend's internal interface (src/ptx/), one section
 * of prototypes per file, as QBE's amd64/all.h. The backend's public entry
 * points are in ../ptx.h. */
#ifndef PHOBOS_EMITTER_H
#define PHOBOS_EMITTER_H

#include "ptx.h"

#include <stdlib.h>
#include <string.h>

typedef enum RegClass { RC_F32, RC_F64, RC_B32, RC_B64, RC_PRED, RC_COUNT } RegClass;

/* The backend's state for one variant, by lifetime. */
typedef struct Emitter {
  /* the variant: the plan and what follows from it, fixed for the kernel */
  Arena *a;
  Diags *d;
  const Plan *p;
  const TirFunc *f;
  bool sm90;            /* sm_90a: the async proxy (TMA, bulk copies) exists */
  int T;                /* threads */
  int V;                /* the flat layout's chunk (Plan.chunk) */
  int *use_count;       /* by value id: how many instructions read it */
  bool *barrier_before; /* by position: a planned barrier */
  bool *fused_add;      /* by value id: an x + dot whose dot started its accumulators at x */

  /* the output: the body and the register declarations it needs */
  FILE *body, *declf;
  int ntemp[RC_COUNT];
  int label;
  int ntma;    /* tensor copies emitted so far: copy i's phase is %tmaph<i> */
  bool failed; /* an error was reported: emit nothing more */
  bool isa81;  /* a vector red was emitted (loads.c): the module needs PTX ISA 8.1 */
  /* the parameters whose rows took an odd-pitch path (loads.c; bit i:
   * parameter i), and whether one past bit 63 did (ptx_odd_row_params) */
  uint64_t odd_rows;
  bool odd_rows_wide;

  /* what the instructions emitted so far leave for a later one to do: a
   * planned barrier moved past a staged load's subscripts to the load
   * (px_emit_pending_sync), cp.async copies the next barrier waits for
   * (px_async_wait), stores into a swizzled tile the next barrier fences
   * for the async proxy (px_cta_sync_why), and loads' packed words
   * unpacked at their first use (px_defer_unpack) */
  bool sync_pending, async_pending, proxy_pending;
  /* the block and index of the instruction being emitted one at a time
   * (px_emit_block; NULL inside a chain): what a load may defer for */
  const struct TirBlock *cur_block;
  int cur_index;
  int loops; /* the loops around the instruction being emitted */
  /* the shifted walk being emitted (shiftwalk.c, pipeline.c): its loop, and
   * the register holding hi, the end of the columns it covers; NULL outside */
  const struct TirInst *sw_loop;
  const char *sw_hi;
  /* the innermost loops' labels for break (their exit) and continue (the
   * end of their iteration), innermost last */
  bool returns; /* a return branched to the kernel's end, $Lreturn */
  const char *jump_break[256], *jump_cont[256]; /* (the parser nests blocks 256 deep at most) */
  int njump;
  struct Pending {
    const struct TirInst *in;
    const char **w;
    int nw, rows, V; /* rows chunks of V elements, nw words each */
    Scalar elem;     /* the words' elements (in may be a widening of the load, px_emit_convert) */
    const struct TirSkip *group; /* loaded behind chain group's branch (ptx.c, emit_skip_run) */
  } pending[8];
  int npending;

  /* the loop being emitted (pipeline.c): a @pipeline ring's stage registers */
  const struct TirInst *ring_loop;
  const char *cst, *pst, *phase; /* consumer stage, producer stage, parity bits */
  bool waited;                   /* this iteration's stage is complete */
  /* its staged rings: by buffer id the register that holds the base of the
   * stage being read (or, while issuing, filled); NULL: %smem_ */
  const struct TirInst *sring_loop;
  const char **sbase;
  bool issuing; /* px_emit_stage_async fills a ring stage: the loop commits and waits */
  int wg_deferred; /* wgmma groups this iteration committed and left running (PlanVal.wait_deferred) */
  /* wgmma dots left running to their PlanVal.wait_at (px_wgmma_settle), in
   * issue order, with the index of each one's group among every group the
   * entry committed (wg_commits so far): a wait leaves the later ones running */
  const struct TirInst *wg_late[16];
  int wg_late_at[16], nwg_late, wg_commits;
  bool refill_sync; /* a deferred loop's refill one iteration ahead: the threads' own stores end in a barrier */
  /* --prefetch: loads whose words the previous iteration loaded, and those words */
  const struct TirInst *pf_load[8];
  const char **pf_words[8];
  int npf;
  bool replay; /* re-emitting scalars for a later iteration: no declarations, no barriers */
  /* a slice of an elementwise chain (ptx.c, emit_chain): the registers
   * klo .. khi - 1 of each value; khi 0: all of them */
  int klo, khi;
  /* by value id: the index test of a bounds select whose select computes
   * it itself (ops.c, px_fold_bound_selects), emitted as nothing */
  bool *folded_test;
  /* by value id, beside folded_test: a bounds select that takes no branch
   * (outside loops, no reduction reads it; ops.c) */
  bool *flat_select;
  /* by value id: a conversion to bf16 or f16 whose store packs it from its
   * f32 source (loads.c, px_find_store_packed), emitted as nothing */
  bool *store_packed;
  /* a staged-rows copy (rowstage.c): global address + rs_delta is the
   * copy's; the blocks' mbarriers from rs_mbar, rs_nblk of them */
  const char *rs_delta, *rs_mbar, *rs_nblk;
  /* the entry takes l2pf_param (%pfd_, the prefetch distance; l2pf.c), and
   * by value id the marked loads whose prefetch is emitted */
  bool l2pf;
  bool *l2pf_done;
  /* a programmatic dependent launch's griddepcontrol.wait not yet emitted:
   * it goes before the first top-level statement that touches global
   * memory (depwait.c), not at the entry */
  bool depwait;
  /* the L2 eviction priority (TirInst.l2hint, l2hint.c) of the load or
   * store being emitted, under PLAN_L2_HINTS (L2H_NONE otherwise), and
   * whether an access took one (the entry then creates the policies) */
  signed char l2h;
  bool l2h_used;
  /* a cluster-rows copy (cluster.c): the bytes of the cluster exchange
   * its accumulators' meets have taken so far */
  int64_t clx_bytes;
  /* by TirSkip id (src/skip.c): the predicate of a chain that only stores,
   * true where the warp has a column of it to store (NULL: not yet
   * computed in this pass over its block, "": the chain runs unguarded);
   * NULL itself under PLAN_NO_SKIP */
  const char **skip_pred;
  const struct TirSkip *skip_group; /* the chain whose branch is being emitted */
} Emitter;

/* the registers an elementwise emitter writes now: [px_kbeg, px_kend(n)) */
static inline int px_kbeg(const Emitter *e) { return e->klo; }
static inline int px_kend(const Emitter *e, int n) { return e->khi && e->khi < n ? e->khi : n; }

/* A fragment value's geometry (layout.c) */
typedef struct FragGeom {
  int64_t M, N;
  int NT, ntn, tpm, rpt; /* tile width, column tiles, row tiles per warp, registers per tile */
} FragGeom;

/* ------------------------------ ptx.c: entry, dispatch, control flow */
/* Whether a member of a chain a warp skips may sit behind the warp's
 * branch (no exchange, no barrier, no copy others take part in), and the
 * lowest column of tile v a thread of this warp holds (NULL: a layout
 * without one). */
bool px_skip_member_ok(const Emitter *e, const TirInst *x);
const char *px_warp_col0(Emitter *e, const TirInst *v);
/* run ||= start + c0 < bound, and c0 inside the slice's length len where
 * v's tile is wider (c0: px_warp_col0's; col, p: a b32 and a predicate
 * temporary, taken by the caller so that its registers keep their order) */
void px_or_warp_inside(Emitter *e, const char *run, const TirInst *v, const char *c0, const char *col, const char *p,
                       const char *start, const char *bound, int64_t len);
void px_unsupported(Emitter *e, const TirInst *in, const char *what);
/* l2pf.c: a marked load's slice D blocks ahead into L2 (src/l2pf.c) */
void px_emit_l2pf(Emitter *e, const TirInst *in);
void px_l2pf_coords(Emitter *e, const TirInst *in, const char *r, const int64_t *steps, int64_t col, const char **idx);
void px_l2pf_row(Emitter *e, const TirInst *in, const char *ok, const char *off, const char *const *idx, int64_t cols);
void px_emit_inst(Emitter *e, const TirInst *in);
void px_emit_block(Emitter *e, const TirBlock *b);

/* -------------------------------- regs.c: registers and typed access */
extern const char *px_rc_decl[];
extern const char *px_rc_prefix[];
void px_out(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
RegClass px_rc_of(Scalar s);
const char *px_tmp(Emitter *e, RegClass rc);
int px_new_label(Emitter *e);
void px_label(Emitter *e, const char *name, int n);
const char *px_reg(Emitter *e, const TirInst *in, int k);
void px_declare_value(Emitter *e, const TirInst *in);
int px_log2i(int64_t v);
const char *px_arith_type(Scalar s);
void px_round_reg(Emitter *e, Scalar s, const char *r);
const char *px_pname(int p, const char *what);
int px_elem_bytes_mem(Scalar s);
const char *px_zero(RegClass rc);
const char *px_mov_type(RegClass rc);
void px_ld(Emitter *e, const char *space, Scalar s, const char *r, const char *addr, const char *pred);
void px_st(Emitter *e, const char *space, Scalar s, const char *addr, const char *r, const char *pred);
const char *px_bits_type(int eb);
/* The L2 eviction priority of the accesses being emitted (e->l2h) in
 * `space` (only "global" takes one): px_gmod is the qualifier that follows
 * the space ("" or ".L2::cache_hint"), px_gpol the operand that follows the
 * address of a load or the value of a store ("" or ", %l2pol_last" /
 * ", %l2pol_first"). */
const char *px_gmod(Emitter *e, const char *space);
const char *px_gpol(Emitter *e, const char *space);

/* ----------------------- sync.c: barriers, fences, mbarriers, arrive */
void px_async_wait(Emitter *e);
void px_cta_sync_why(Emitter *e, const char *why);
void px_cta_sync(Emitter *e);
void px_emit_pending_sync(Emitter *e);
void px_publish_write(Emitter *e, const TirInst *slot);
void px_emit_arrive(Emitter *e, const TirInst *in);
const char *px_mbar_addr(Emitter *e, const PlanBuf *mbar, const char *stage, int first);
void px_mbar_init_slots(Emitter *e, const char *pred, const PlanBuf *mbar, int first, int n, int count);
void px_mbar_init(Emitter *e, const PlanBuf *mbar, int n, bool proxy_fence);
void px_mbar_arm(Emitter *e, const char *pred, const char *bar, const char *bytes);
void px_mbar_arrive(Emitter *e, const char *bar);
void px_mbar_inval(Emitter *e, const PlanBuf *mbar, int n);
void px_mbar_wait(Emitter *e, const char *bar, const char *phases, const char *slot);

/* ----------------------- rowstage.c: a staged-rows copy's shared rows */
/* The copy of the staged rows, issued right after their row start. */
void px_rowstage_issue(Emitter *e);
/* Before a load of the copy: the waits for its block's bytes. */
void px_rowstage_wait(Emitter *e, const TirInst *in);
/* Whether load `in` reads the copy. */
bool px_rowstage_load(const Emitter *e, const TirInst *in);
void px_mbar_flip(Emitter *e, const char *phases, const char *slot);

/* ------------------------------------- layout.c: where an element is */
int64_t px_phys_elems(const TirInst *in);
bool px_is_frag(const Emitter *e, const TirInst *x);
bool px_is_rowfrag(const Emitter *e, const TirInst *x);
FragGeom px_frag_geom(const Emitter *e, const TirInst *x);
int px_nregs(Emitter *e, const TirInst *in);
const char *px_flat_index(Emitter *e, int k);
const char *px_blk_row_base(Emitter *e, const BlockGeom *g);
const char *px_blk_col_base(Emitter *e, const BlockGeom *g);
int64_t px_blk_row_off(const BlockGeom *g, int k);
int64_t px_blk_col_off(const BlockGeom *g, int k);
int64_t px_blk_col_last(const BlockGeom *g);
const char *px_blk_owner(Emitter *e, const TirInst *x);
int px_fragcols_col(int m);
int px_fragcols_reg(const FragGeom *g, int k);
const char *px_elem_coord(Emitter *e, const TirInst *x, int k, int d);
const char *px_elem_index(Emitter *e, const TirInst *x, int k);
const char *px_frag_coord(Emitter *e, const TirInst *x, int k, int d);
const char *px_coord(Emitter *e, const char *flat, const int64_t *phys, int rank, int d);
const char *px_smem_of(const Emitter *e, const PlanBuf *b);
const char *px_swz_rowx(Emitter *e, int S, const char *row);
const char *px_buf_addr(Emitter *e, const PlanBuf *b, const char *const *c);
const char *px_operand(Emitter *e, const TirInst *x, int k);
const char *px_flat_of(Emitter *e, const char *const *c, const int64_t *phys, int rank);

/* ------------------------------------- ops.c: elementwise operations */
bool px_binary_whole(Emitter *e, const TirInst *in);
void px_fold_bound_selects(Emitter *e);
void px_emit_select(Emitter *e, const TirInst *in);
void px_emit_binary(Emitter *e, const TirInst *in);
void px_emit_math(Emitter *e, const TirInst *in);
void px_emit_convert(Emitter *e, const TirInst *in);

/* ------------------------------- exchange.c: cross-thread operations */
void px_exch_load(Emitter *e, const TirInst *x, int64_t at, const char *fl, const char *r);
void px_exchange(Emitter *e, const TirInst *owner, const TirInst *const *src, int n, int64_t *at);
void px_emit_broadcast(Emitter *e, const TirInst *in);
void px_emit_transpose(Emitter *e, const TirInst *in);
void px_emit_scan(Emitter *e, const TirInst *in);
void px_emit_reshape(Emitter *e, const TirInst *in);
void px_jump_push(Emitter *e, const char *brk, const char *cont);
void px_emit_reduce(Emitter *e, const TirInst *in);
const char ***px_defer_enter(Emitter *e, const TirInst *loop);
void px_defer_exit(Emitter *e, const TirInst *loop, const char ***saved);
void px_emit_extract(Emitter *e, const TirInst *in);
void px_emit_write(Emitter *e, const TirInst *in);
/* one fold step, op d = a op b (integer max/min as setp + selp), and e^a */
void px_red_step(Emitter *e, const char *op, const char *d, const char *a, const char *b);
void px_exp_f32(Emitter *e, const char *d, const char *a);

/* ------------------ cluster.c: cluster-rows copies (src/cluster.c) */
void px_cluster_loop(Emitter *e, const TirInst *loop, const char *i, const char *start, const char **step);
void px_cluster_meet(Emitter *e, const BlockGeom *g, RegClass rc, const char *op, const char *const *r0,
                     const char *const *r1);
void px_cluster_end(Emitter *e);
void px_cluster_prologue(const Emitter *e, FILE *out);

/* ----------------------------- loads.c: the threads' global accesses */
const char *px_tensor_addr(Emitter *e, int p, const char *const *g);
const char *px_pitch(Emitter *e, int p, int d, int64_t mult);
const char *px_pitch_bits(Emitter *e, int p, int d0);
const char *px_tensor_end(Emitter *e, int p);
const char *px_sub_start(Emitter *e, const TirInst *in, int i);
/* A scalar coordinate value as 32 bits (px_sub_start's rule). */
const char *px_i32(Emitter *e, const TirInst *s);
const char *px_ext(Emitter *e, int param, int d);
void px_and_below(Emitter *e, const char *ok, const char *a, const char *bound);
void px_and_span_inside(Emitter *e, const char *ok, const char *start, int64_t len, int param, int d);
void px_subscripts(Emitter *e, const TirInst *in, const char *const *c, const char *fl, const int64_t *phys, int rank,
                   const char *ok, const char **g);
void px_defer_unpack(Emitter *e, const TirInst *in, const char **w, int nw, int rows, int V);
void px_flush_unpack(Emitter *e, const TirInst *x);
struct Pending *px_fusable_convert(Emitter *e, const TirInst *in);
bool px_cols_contiguous(const Emitter *e, const TirInst *in);
/* registers k0.. of a stored value val as nw words of te (16-bit: two a word) */
void px_pack_chunk(Emitter *e, const TirInst *val, Scalar te, int nw, int k0, const char *const *w);
bool px_emit_load_rows(Emitter *e, const TirInst *in, const char **words);
bool px_emit_load_rows_at(Emitter *e, const TirInst *in, const char **words, const char **c1_out,
                          const char **r0_out);
void px_emit_load_elements(Emitter *e, const TirInst *in);
void px_emit_load(Emitter *e, const TirInst *in);
void px_emit_store(Emitter *e, const TirInst *in);
void px_find_store_packed(Emitter *e);

/* --------------------------------------------- stage.c: staged tiles */
bool px_emit_stage_rows(Emitter *e, const TirInst *in);
const char *px_aligned16(Emitter *e, int param, int eb, const char *const *g, int i0, const char *ok,
                         const char **addr, const char **pitch);
void px_emit_stage_loop(Emitter *e, const TirInst *in, const char *const *g, int i0, int i1, const char *a0,
                        const char *step);
bool px_emit_stage_async(Emitter *e, const TirInst *in);

/* ----------------------------------- tma.c: tensor copies and stores */
void px_tma_copies(Emitter *e, const TirInst *in, const char *dst, const char *bar, const char *t0);
int64_t px_tma_bytes(const TirInst *in);
void px_emit_tma_load(Emitter *e, const TirInst *in);
void px_emit_tma_store(Emitter *e, const TirInst *in);

/* --------------------------------------------- dot.c: the dot's path */
const TirInst *px_fused_addend(Emitter *e, const TirInst *dot);
bool px_published(const Emitter *e, const TirInst *x);
bool px_packed_by_mma(const Emitter *e, const TirInst *cv);
void px_emit_dot(Emitter *e, const TirInst *in);

/* --------------------------------------------------- mma.c: mma.sync */
void px_pack_a_regs(Emitter *e, const TirInst *a, FragGeom ag, int mi, int s, const char *ty, const char *r[4]);
void px_emit_dot_mma(Emitter *e, const TirInst *in);

/* ---------------------------------------------------- wgmma.c: wgmma */
/* Waits for the wgmma dots left running whose PlanVal.wait_at is `in`, or
 * for all of them where `in` is NULL (the end of a block, a branch). */
void px_wgmma_settle(Emitter *e, const TirInst *in);
void px_emit_dot_wgmma(Emitter *e, const TirInst *in, const PlanBuf *sa, const PlanBuf *sb, bool areg);

/* -------------------------------- pipeline.c: loops, rings, prefetch */
void px_emit_ring_load(Emitter *e, const TirInst *in);
void px_emit_for(Emitter *e, const TirInst *in);
void px_emit_producer(Emitter *e);
/* marks by id the scalars of loop's body (bounds: and of its bounds) that
 * the loads' subscripts are computed from; px_replay_subscripts emits the
 * body's ones again with the loop variable set to j, returning the register
 * that holds the loop variable's own value for the caller to put back */
bool *px_subscript_chains(Emitter *e, const TirInst *loop, const TirInst **loads, int n, bool bounds);
const char *px_replay_subscripts(Emitter *e, const TirInst *loop, const TirInst **loads, int n, const char *j);

/* ------ depwait.c: where a dependent launch waits, what it fetches first */
bool px_depwait_begin(Emitter *e); /* true: the wait moves (the entry only signals its dependents) */
void px_depwait_before(Emitter *e, const TirBlock *b, int i, int j);
void px_depwait_end(Emitter *e);

/* ------------------ walkskip.c: a walk's iteration skipped past its end */
/* At the top of a loop's body: the branch past it for the warps whose
 * columns all lie past the walk's end, where the body would change
 * nothing for them (spec 15.25); its label for px_walk_skip_end, or -1. */
int px_walk_skip_begin(Emitter *e, const TirInst *loop);
void px_walk_skip_end(Emitter *e, int label);

#endif
