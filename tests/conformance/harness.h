/* harness.h: the conformance harness.
 *
 * A case is a YAML file in spec/conformance/ beside the .ph it runs:
 *
 *   source: gqa.ph              the kernel file, relative to the case
 *   kernel: gqa_attention       optional when the file has one kernel
 *   constants: {NQ: 7, BQ: 16}  -D values; every remaining @autotune point runs
 *   params:                     every kernel parameter, by name
 *     Q: {shape: [2, 37, 14, 64], fill: normal, seed: 7}
 *     O: {shape: [2, 37, 14, 64], fill: poison}
 *     scale: 0.125
 *   reference: gqa              a double-precision function in refs*.c
 *   outputs: [O]
 *   tolerance: {rel: 1e-5, abs: 1e-6}
 *   grid: [2, 1, 1]             the launch grid, for a kernel without @grid
 *   same_as:                    optional: the outputs must also equal a rerun
 *     constants: {NQ: 1}        with other constants
 *     repeat: {K: [2, 7]}       and inputs repeated along a dim (heads expanded)
 *
 * Fills: normal (scale: s), uniform and int over `range: [lo, hi]`, poison
 * (NaN, or -77 for integers), iota. Inputs are rounded to the parameter's element
 * type before the reference sees them. An element passes when
 * |got - ref| <= abs + rel * |ref|; every output element counts. */
#ifndef PHOBOS_HARNESS_H
#define PHOBOS_HARNESS_H

#include "interp.h"

enum { CASE_MAX_PARAMS = 16, CASE_MAX_CONSTS = 16 };

typedef struct CaseParam {
  const char *name;
  bool tensor;
  Scalar elem;      /* from the kernel */
  int rank;
  int64_t dims[MAX_TENSOR_RANK];
  int64_t n;
  double *data;     /* tensor contents, row-major */
  double scalar;
  const char *fill;
  double lo, hi, scale;
  uint64_t seed;
  int misalign;     /* GPU run: the data pointer sits this many bytes past an aligned one */
} CaseParam;

typedef struct Case {
  const char *path, *dir, *name;
  const char *source, *kernel, *reference;
  Define consts[CASE_MAX_CONSTS];
  int nconsts;
  CaseParam params[CASE_MAX_PARAMS];
  int nparams;
  const char *outputs[8];
  int noutputs;
  double rel, abs;
  int64_t grid[3];
  bool has_grid;
  bool has_same_as;
  Define same_consts[CASE_MAX_CONSTS];
  int nsame_consts;
  struct { const char *name; int dim, times; } repeat[4];
  int nrepeat;
} Case;

/* A reference: fills the outputs (allocated, NaN) from the inputs. */
typedef struct RefCtx {
  Case *c;
  char *err;
  size_t errlen;
} RefCtx;

typedef bool (*RefFn)(RefCtx *r);

typedef struct RefEntry {
  const char *name;
  RefFn fn;
} RefEntry;

extern const RefEntry harness_refs[];      /* refs.c, ends with {NULL, NULL} */
extern const RefEntry harness_refs_more[]; /* refs_more.c, likewise */
extern const RefEntry harness_refs_llm[];  /* refs_llm.c, likewise */

/* Accessors for references. */
CaseParam *ref_param(RefCtx *r, const char *name);          /* fails the case when missing */
double ref_scalar(RefCtx *r, const char *name);
int64_t ref_const(RefCtx *r, const char *name);             /* a case constant */
double *ref_at(CaseParam *p, const int64_t *idx);           /* element at full coordinates */
int64_t ref_off(const CaseParam *p, const int64_t *idx);

/* Loads a case; false with a message. */
bool harness_load(const char *path, Case *c, char *err, size_t errlen);
/* Where a case's variants run: the interpreter, or the GPU. `begin` sees
 * every planned variant of one compilation (the GPU runner builds its
 * cubin there); `run` runs one of them on the case's tensors (outputs
 * poisoned first) and hands back the outputs, by parameter index. */
typedef struct Runner {
  void *self;
  bool (*begin)(void *self, Case *c, Plan **plans, int nplans, const Source *src, char *err, size_t errlen);
  bool (*run)(void *self, Case *c, const Plan *p, int index, double **outs, char *err, size_t errlen);
  void (*end)(void *self);
} Runner;

/* Runs a loaded case with a runner: every variant against the reference,
 * then the same_as rerun. */
bool harness_run(Case *c, const Runner *r, char *err, size_t errlen);
/* Elements a runner lays out past the end of each row of a tensor of rank 2
 * or more (its strides then differ from its extents, spec 16.3); the
 * variants the runtime would not take at such strides are left out. 0 by
 * default (contiguous). */
extern int harness_pad;
/* PHOBOS_GPU_SPREAD=s (gpu_conformance): every tensor's elements s apart
 * along its last dim, so only the general-strides copies run (1: off) */
extern int harness_spread;
/* Variants launched so far (harness_run adds each): 0 after a case means
 * none fit it (under PHOBOS_GPU_SPREAD, a kernel with no general-strides
 * entry) */
extern int harness_runs;
/* Whether an output is also read (its fill is not poison). */
bool harness_is_inout(const Case *c, const CaseParam *p);
bool harness_is_output(const Case *c, const char *name);
CaseParam *harness_param(Case *c, const char *name);
/* The extents of scratch tensor `param` of f (a @scratch tensor, which no
 * case lists) for the case's dims; false when they cannot be computed. */
bool harness_scratch_dims(Case *c, const struct TirFunc *f, int param, int64_t *dims);

/* Releases what harness_load allocated (safe after a failed load). */
void harness_free(Case *c);
/* Runs a loaded case on the interpreter (every variant) against its
 * reference; false with a message naming the first mismatches. */
bool harness_run_interp(Case *c, char *err, size_t errlen);

#endif
