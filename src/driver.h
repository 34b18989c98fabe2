/* driver.h: the compiler as a library call, shared by phobosc and the tests. */
#ifndef PHOBOS_DRIVER_H
#define PHOBOS_DRIVER_H

#include "lang.h"

enum { DRIVER_OK = 0, DRIVER_SOURCE_ERROR = 1, DRIVER_USAGE = 2, DRIVER_ICE = 4 };

typedef enum Emit {
  EMIT_CHECK, EMIT_TOKENS, EMIT_AST, EMIT_TIR, EMIT_PLAN, EMIT_PLAN_YAML, EMIT_MANIFEST, EMIT_PTX, EMIT_CUBIN,
  EMIT_C,     /* the cubin and manifest as data in a C file, and a function that loads them */
  EMIT_HEADER /* typed launchers (launcher.c) */
} Emit;

typedef struct DriverOptions {
  const char *input;  /* path, or "-" for standard input */
  const char *output; /* NULL: the out stream given to driver_compile */
  const char *arch;   /* "sm_90a" or "sm_80" */
  Emit emit;
  bool plain;         /* diagnostics without source line and caret */
  int max_errors;
  Define *defines;
  int ndefines;
  bool verbose;       /* -v: stage times and ptxas's resource report */
  bool no_tma;        /* --no-tma: no asynchronous bulk copies (@pipeline rings), for A/B runs */
  bool producer_warp; /* --producer-warp: @pipeline rings filled by a warp of their own (experimental) */
  bool prefetch;      /* --prefetch: loops load register tiles an iteration ahead (experimental) */
  bool no_tensor_copies; /* --no-tensor-copies: staged loads by cp.async, not TMA tensor copies (A/B runs) */
  bool no_wgmma;         /* --no-wgmma: tensor-core dots by mma.sync only (A/B runs) */
  bool late_waits;       /* --late-waits (experimental): wgmma groups waited for at their first use */
  bool no_defer;         /* --no-deferred-reductions: every loop row reduction meets its row each iteration (A/B runs) */
  bool no_onepass;       /* --no-one-pass: no one-pass copies of multi-pass variants (onepass.c) */
  bool no_aligned_rows;  /* --no-aligned-rows: no aligned-rows copies (driver_aligned_copy) */
  bool vector_odd_rows;  /* --vector-odd-rows: no odd-rows plans (driver_odd_rows_plan) */
  bool no_occupancy;     /* --no-occupancy-copies: no occupancy copies (driver_occupancy_copy) */
  bool no_cluster;       /* --no-cluster-rows: no cluster-rows copies (driver_cluster_copy) */
  bool no_l2pf;          /* --no-l2-prefetch: no entry prefetches later blocks' slices (l2pf.c) */
  bool early_pf;         /* --early-prefetch: the dependent launch's wait moved, a loop's first tiles before it (ptx/depwait.c) */
  int l2_hints;          /* 0: L2 hints on the loads l2hint.c marks; -1 --no-l2-hints; 2 --l2-hints=stores, its stores too */
  int l2_keep_eighths;   /* --l2-keep=F: the share of lines evict_last keeps, in eighths (0: unset, all) */
  bool no_skip;          /* --no-warp-skip: every warp runs every chain that only stores (skip.c; A/B runs) */
  bool no_walk_skip;     /* --no-walk-skip: every warp runs every iteration of a walk (ptx/walkskip.c; A/B runs) */
  bool shift_walk;       /* --shift-walks, experimental: row loops at their rows' alignment (shiftwalk.c) */
  bool row_broadcasts;   /* --row-broadcasts, experimental: column vectors broadcast across tiles in the tiles' rows (plan/layout.c) */
  bool staged_rows;      /* --staged-rows (experimental): staged-rows copies of multi-pass variants (staged.c) */
  bool all_variants;     /* --all-variants: keep the variants drop_oversized leaves out (driver.c) */
  bool no_general_strides; /* --no-general-strides: no general-strides copy (driver_general_copy) */
  bool warn_narrowing;   /* -Wnarrowing: warn at each implicit narrowing (SemaOptions) */
  bool specialize;       /* --warp-specialize (experimental): warp-specialized copies (driver_specialized_copy) */
  int max_variants;      /* the largest @autotune space compiled (0: 4096); the fuzzer's is small */
} DriverOptions;

struct Plan;
/* The occupancy copy of a plan (`.minnctapersm` for 2048 threads an SM,
 * lowered with that register budget), for kernels without a dot and with
 * register tiles of at most 32 elements a thread; NULL where it does not
 * qualify (driver.c). */
struct Plan *driver_occupancy_copy(Arena *a, Diags *d, const struct Plan *p, const char *arch, unsigned plan_flags);
/* the cluster-rows copies' cluster sizes, DRIVER_CLUSTER_LEAST and twice
 * that (8: the most a portable cluster holds) */
enum { DRIVER_CLUSTER_LEAST = 4 };
struct Plan *driver_cluster_copy(Arena *a, const struct Plan *p, int ctas, const char *arch);
/* p's cluster-rows copies, of DRIVER_CLUSTER_LEAST and twice as many CTAs,
 * into out[0..2); returns how many */
int driver_cluster_copies(Arena *a, const struct Plan *p, const char *arch, struct Plan *out[2]);

/* A variant's optional copies, planned beside it: its one-pass copies
 * over one block and over two (onepass.c) when onepass, its staged-rows
 * copy (staged.c) when staged and arch is sm_90a; a copy the planner
 * refuses (quietly), or whose staged loads the plan does not spell as
 * blocked rows, is left out. Returns how many plans went into out.
 * phobosc and the conformance harness both take their copies from here. */
enum { DRIVER_MAX_COPIES = 3 }; /* one pass over one block, over two, staged rows */
int driver_variant_copies(Arena *a, Diags *d, const KernelInfo *info, const char *arch, unsigned plan_flags,
                          bool onepass, bool staged, struct Plan *out[DRIVER_MAX_COPIES]);

/* The warp-specialized copy of a plan (Plan.specialized, spec 15.20): the
 * same variant planned with PLAN_SPECIALIZE, a producer warp filling its
 * loop's staged tensor-copy rings; NULL where the plan has no such ring or
 * the planner does not specialize it (plan/specialize.c). An entry of its
 * own (KERNEL__vN_ws) that the autotuner times beside the plan. */
struct Plan *driver_specialized_copy(Arena *a, Diags *d, const struct Plan *p, const char *arch, unsigned plan_flags);

/* The general-strides copy of a variant (Plan.general_strides, spec
 * 16.3): planned with PLAN_GENERAL_STRIDES, every global access element by
 * element at every dim's stride; NULL for a kernel with a dot (its
 * operands want tiles, not elements) or where the planner refuses it.
 * phobosc makes one for each kernel's first variant kept (first, whose
 * IR says whether the kernel has a dot before anything is lowered again). */
struct Plan *driver_general_copy(Arena *a, Diags *d, const struct Plan *first, const char *arch, unsigned plan_flags);

/* A plan's aligned-rows copy: the same plan, emitted without its
 * odd-pitch row paths (Plan.aligned_copy), for launches whose tensors that
 * take them have 16-byte aligned rows; NULL where the plan has no such path
 * (or is itself a copy). phobosc and the conformance harness both call it. */
struct Plan *driver_aligned_copy(Arena *a, Diags *d, const struct Plan *p, const char *arch);

/* The odd-rows plan of p, a variant or one-pass copy that has an
 * aligned-rows copy whose tensors are `odd` (its aligned_params): the same
 * kernel planned again with those tensors' register tiles one element a
 * chunk where a warp spans several rows (Plan.scalar_params), to replace p
 * for launches whose rows are not aligned; NULL where p is a staged-rows
 * copy, no tile changes, or the planner refuses it. */
struct Plan *driver_odd_rows_plan(Arena *a, Diags *d, const KernelInfo *info, const struct Plan *p, uint64_t odd,
                                  const char *arch, unsigned plan_flags);

/* Runs the passes on one file. Output goes to opts->output or to out;
 * diagnostics to err. Returns a DRIVER_* status. */
int driver_compile(const DriverOptions *opts, FILE *out, FILE *err);
/* The same on a source already in memory (the fuzz target's entry). */
int driver_compile_source(const DriverOptions *opts, const Source *src, FILE *out, FILE *err);

#endif
