/* rt.h: libphobos internals, one section per file of runtime/. Every name
 * has its file's prefix: cu_ (cuda.c), mf_ (manifest.c), rt_ (runtime.c),
 * at_ (autotune.c). */
#ifndef PHOBOS_RT_H
#define PHOBOS_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "phobos.h"

/* ------------------------------------------------- checked arithmetic */

/* Every product and sum of sizes, shapes, strides, grid values and byte
 * counts in the runtime goes through these, in int64_t: true with the exact
 * result in *out, or false (and *out untouched) when it does not fit. */
static inline bool rt_mul_ok(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
static inline bool rt_add_ok(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
static inline bool rt_sub_ok(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
/* A non-negative int64 as a size_t (a byte count for the driver or malloc). */
static inline bool rt_size_ok(int64_t v, size_t *out) {
  if (v < 0 || (uint64_t)v > SIZE_MAX) return false;
  *out = (size_t)v;
  return true;
}

/* --------------------------------------------------------------- cuda.c */

/* The few driver types and entry points the runtime needs, declared here
 * so that building libphobos needs no CUDA headers. */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;

enum {
  CU_SUCCESS = 0,
  CU_ERROR_OUT_OF_MEMORY = 2,
  CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
  CU_ATTR_MAX_GRID_X = 5,
  CU_ATTR_MAX_GRID_Y = 6,
  CU_ATTR_MAX_GRID_Z = 7,
  CU_ATTR_SM_COUNT = 16,
  CU_ATTR_L2_CACHE_SIZE = 38,
  CU_ATTR_CC_MAJOR = 75,
  CU_ATTR_CC_MINOR = 76,
  CU_ATTR_SHARED_OPTIN = 97,
  CU_FUNC_SHARED_SIZE_BYTES = 1,
  CU_FUNC_MAX_DYNAMIC_SHARED = 8,
};

/* cuLaunchKernelEx's configuration and one attribute (CUlaunchConfig,
 * CUlaunchAttribute: the layout cuda.h gives them, an id padded to 8 bytes
 * and a 64-byte value union). */
enum { CU_LAUNCH_ATTR_COOPERATIVE = 2, CU_LAUNCH_ATTR_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
typedef struct CuLaunchAttr {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int allowed;
  } value;
} CuLaunchAttr;
typedef struct CuLaunchConfig {
  unsigned grid[3], block[3], shared_bytes;
  CUstream stream;
  CuLaunchAttr *attrs;
  unsigned nattrs;
} CuLaunchConfig;

typedef struct CuApi {
  void *lib;
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*FuncGetAttribute)(int *, int, CUfunction);
  CUresult (*FuncSetAttribute)(CUfunction, int, int);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                           void **, void **);
  /* optional (CUDA 12): NULL on an older driver, which launches plainly
   * and takes the pointer path of TMA loads */
  CUresult (*TensorMapEncodeTiled)(void *, int, unsigned, void *, const unsigned long long *, const unsigned long long *,
                                   const unsigned *, const unsigned *, int, int, int, int);
  CUresult (*LaunchKernelEx)(const CuLaunchConfig *, CUfunction, void **, void **);
  CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t); /* optional */
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream); /* optional: NULL where missing */
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*StreamSynchronize)(CUstream);
  /* optional (CUDA 10): NULL on an older driver, where no stream is taken
   * as capturing; the status is an int, CU_STREAM_CAPTURE_STATUS_ACTIVE 1 */
  CUresult (*StreamIsCapturing)(CUstream, int *);
  CUresult (*GetErrorName)(CUresult, const char **);
  CUresult (*GetErrorString)(CUresult, const char **);
} CuApi;

/* Opens libcuda once per process (PHOBOS_LIBCUDA overrides its path) and
 * initializes the driver; NULL with *why set when it cannot. */
const CuApi *cu_api(const char **why);
/* Whether `stream` is being captured into a CUDA graph (a capture that an
 * error invalidated counts): work a capture cannot hold (host waits,
 * timing, allocation and zeroing) must not start then. False where the
 * driver cannot say. */
bool cu_capturing(const CuApi *cu, CUstream stream);
/* "CUDA_ERROR_X (text)" for a result. */
const char *cu_error(const CuApi *cu, CUresult r, char *buf, size_t len);

/* ----------------------------------------------------------- manifest.c */

enum { MF_MAX_GRID_OPS = 32 };

typedef struct MfParam {
  char *name;
  bool tensor;
  bool written;        /* the kernel stores to it */
  bool strided;        /* it takes any strides with a unit last one ("strides: inner-contiguous"); else row-major only */
  phobos_dtype dtype;
  int rank;
  char *dimname[PHOBOS_MAX_RANK]; /* NULL: a literal extent */
  int64_t dim[PHOBOS_MAX_RANK];   /* literal extents; -1 where named */
  /* @scratch (spec 11): the runtime allocates it and passes it (the caller
   * passes the other parameters only); MF_SCRATCH_ZERO: zeroed when
   * allocated, and left zero by every launch */
  enum { MF_SCRATCH_NONE, MF_SCRATCH_UNDEFINED, MF_SCRATCH_ZERO } scratch;
} MfParam;

/* One grid extent as a postfix program over dims and integers. */
typedef struct MfGridOp {
  enum { MF_DIM, MF_INT, MF_OP } kind;
  char *name; /* MF_DIM */
  int64_t v;  /* MF_INT */
  char op[8]; /* MF_OP: + - * / % cdiv min max neg */
} MfGridOp;

/* A tensor map the entry takes after its parameters (phobosc's tensor copies). */
enum {
  MF_MAX_TMAPS = 8,
  MF_MAX_SLOTS = 160, /* kernel parameters as launched (runtime.c, Params) */
  /* a kernel's parameters: each takes at least one slot. Every table
   * indexed by parameter (the autotuner's scratch copies, a launch's
   * `override`) has this many entries. */
  MF_MAX_PARAMS = MF_MAX_SLOTS,
};
typedef struct MfTmap {
  int param;                      /* the tensor parameter's index */
  int rank;                       /* the tensor's */
  int split_dim;                  /* -1, or the dim viewed as [extent / split_inner, split_inner] */
  int64_t split_inner;
  int64_t box[PHOBOS_MAX_RANK + 1]; /* per map dim (rank + 1 with a split), outermost first */
  phobos_dtype dtype;
  int swizzle;                    /* bytes: 0 (none), 32, 64 or 128 */
} MfTmap;

/* @scratch tensors a kernel may declare (phobosc's MAX_SCRATCH), and the
 * streams whose buffers a kernel keeps at once (workspace.c) */
enum { MF_MAX_SCRATCH = 8, RT_WS_STREAMS = 8 };

/* A launch contract (@requires, spec 11.2): two sides compared. */
enum { MF_MAX_REQUIRES = 16 };
typedef struct MfContract {
  char *text, *lhs, *rhs; /* as written, for messages */
  char op[3];             /* == != < <= > >= */
} MfContract;
/* Each side of a variant's contracts as a postfix program (grid tokens;
 * "grid.x" and friends name the launch grid). */
typedef struct MfProgram {
  int nops;
  MfGridOp ops[MF_MAX_GRID_OPS];
} MfProgram;

typedef struct MfVariant {
  char *entry;
  const char *kernel;  /* its kernel's name (MfKernel.name), for messages */
  int nconsts;
  char **const_name;
  int64_t *const_value;
  int npinned;
  char **pinned_name;  /* dims this variant fixes (named like a constant) */
  int64_t *pinned_value;
  int nat_most;
  char **at_most_name; /* dims this variant takes only up to a bound (a one-pass copy) */
  int64_t *at_most_value;
  int nabove;
  char **above_name; /* dims this variant takes only past a bound (a copy over several blocks) */
  int64_t *above_value;
  int ngrid;
  int nops[3];
  MfGridOp ops[3][MF_MAX_GRID_OPS];
  char *grid_text[3];  /* each axis's program as the manifest wrote it, for messages */
  int threads;
  int64_t shared_bytes;
  bool dynamic_shared;
  bool dependent_launch; /* begins with griddepcontrol.wait: may overlap the previous kernel */
  int ntmaps;
  MfTmap tmaps[MF_MAX_TMAPS];
  /* a staged-rows copy (spec 15.14): rows stage_rows of tensor parameter
   * stage_param copied into shared memory in blocks of stage_block columns */
  bool staged;
  int stage_param;
  int64_t stage_rows, stage_block;
  /* an aligned-rows copy (aligned_rows: [names]): bit i, tensor parameter
   * i must have a 16-byte aligned base and row pitch (rt_rows_fit) */
  uint64_t aligned_rows;
  uint64_t apart; /* tensors (by parameter) no written tensor may overlap: a one-pass copy over several blocks */
  bool general_strides; /* takes every dim's stride, the last included: launched only where a last dim is not contiguous */
  /* a warp-specialized entry (spec 15.20): its producer has no path for a
   * map the runtime cannot build, so it is launched only where every map
   * can be (rt_maps_misfit) */
  bool maps_required;
  /* grid_barrier (spec 9.8): every CTA resident at once, a cooperative
   * launch whose grid the runtime checks against the device's hold;
   * persistent: its derived grid's axis x cut to that hold (resident: the
   * CTAs of the variant the device holds at once, -1 until found) */
  bool co_resident, persistent;
  /* a cluster-rows copy (spec 15.22): each block of its grid a cluster of
   * this many CTAs (the entry's .reqnctapercluster), so grid axis x is
   * launched this many times wider; 1 otherwise */
  int cluster;
  int64_t resident;
  int resident_dyn; /* ... for this many bytes of dynamic shared memory */
  MfProgram (*requires)[2]; /* its kernel's nrequires contracts' sides, or NULL */
  MfProgram (*scratch)[PHOBOS_MAX_RANK]; /* each scratch tensor's extents (MfKernel.nscratch), or NULL */
  CUfunction fn;       /* set by phobos_module_load */
  /* l2_prefetch: the entry takes the prefetch distance last (phobosc's
   * l2pf.c). Each such variant has a twin after the manifest's variants,
   * named "ENTRY+l2", that passes the CTAs resident on the device
   * (l2pf_dist, found at its first launch; 0: prefetch nothing) where the
   * variant itself passes 0; the twin shares the variant's strings. */
  const char *name;    /* entry, or ENTRY+l2: what the autotune cache and pinning name */
  bool l2pf_param, l2pf_on, twin;
  int l2pf_dist;       /* -1: not found yet */
} MfVariant;

typedef struct MfKernel {
  char *name;
  int nrequires;
  MfContract *requires;
  int nparams;
  MfParam *params;
  int nscratch;         /* the last nscratch parameters are @scratch's: the caller passes nparams - nscratch */
  int nvariants;
  MfVariant *variants;
  bool general_strides; /* some variant takes general strides */
} MfKernel;

typedef struct Manifest {
  int abi;
  char *compiler, *source, *source_hash, *arch, *cubin;
  int nkernels;
  MfKernel *kernels;
} Manifest;

/* What one manifest may hold (spec 17.8); each is refused with a message
 * naming the bound. phobosc allows 4096 @autotune points in a kernel. */
enum {
  MF_MAX_BYTES = 4 << 20, /* the file */
  MF_MAX_KERNELS = 1024,
  MF_MAX_VARIANTS = 4096, /* in all its kernels */
  MF_MAX_ALIASES = 64,    /* YAML aliases (*name); phobosc writes none */
  MF_MAX_DEPTH = 32,      /* nested sequences and mappings; phobosc's nest 8 deep */
  MF_MAX_NODES = 1 << 20, /* YAML nodes, counting a node again wherever an alias names it */
};

/* Parses a manifest held in memory (`name` for messages); false with a
 * message naming the file, line and field. */
bool mf_parse(const char *name, const char *text, size_t len, Manifest *out, char *err, size_t errlen);
/* Reads (rt_read_file, at most MF_MAX_BYTES) and parses a manifest file. */
bool mf_load(const char *path, Manifest *out, char *err, size_t errlen);
void mf_free(Manifest *m);
const char *mf_dtype_name(phobos_dtype t);
int mf_dtype_bytes(phobos_dtype t);

/* ------------------------------------------------------------ runtime.c */

typedef struct phobos_module phobos_module;

/* The dims a launch binds, by name, and the variant chosen for them. */
typedef struct RtBinding {
  int ndims;
  const char *name[32];
  int64_t value[32];
  bool general; /* some tensor's last dim is not contiguous: only general-strides entries take it */
  int64_t bytes[MF_MAX_PARAMS]; /* by parameter: a tensor's span in bytes at its strides (rt_bind) */
} RtBinding;

struct phobos_context {
  const CuApi *cu;
  int ordinal;
  CUdevice dev;
  CUcontext cuctx;
  bool retained;
  char name[128];
  int64_t max_grid[3];
  int max_shared_optin;
  bool dependent_launch; /* launch programmatic dependents (PHOBOS_DEPENDENT_LAUNCH=0: never) */
  char err[1024];
  phobos_module *modules;
  struct AtCache *cache; /* autotune.c */
  phobos_status cache_status; /* PHOBOS_CACHE_IGNORED after an unreadable cache file */
};

enum { RT_MEMOS = 8 }; /* the choices a kernel remembers: a model step's distinct shapes of one kernel */
struct phobos_kernel {
  phobos_module *mod;
  MfKernel *mf;
  const char *last_variant;
  int last_tmaps, last_tmaps_built; /* the last launch's tensor maps, and how many the runtime could build */
  bool explicit_grid; /* phobos_launch_grid: the caller's grid replaces @grid */
  int64_t grid[3];
  MfVariant **fits;   /* room for every variant: those that fit a launch */
  MfVariant *pinned;  /* phobos_kernel_pin_variant's, or NULL: the autotuner's */
  /* the last RT_MEMOS unpinned launches' keys and choices (runtime.c,
   * memo_key): a launch whose key is one of them takes its variant without
   * testing every variant (at 450 variants, 50-80 us of CPU a launch) */
  struct RtMemo {
    int64_t *key; /* malloc'd; NULL: empty */
    size_t len;
    MfVariant *v;
  } memo[RT_MEMOS];
  int memo_next; /* the slot the next new key takes */
  /* @scratch's buffers (workspace.c), one set a stream */
  struct RtWs {
    bool used;
    CUstream stream;
    uint64_t tick; /* of its last launch: the least recent set goes first */
    CUdeviceptr ptr[MF_MAX_SCRATCH];
    size_t bytes[MF_MAX_SCRATCH];
  } ws[RT_WS_STREAMS];
  uint64_t ws_tick;
};

struct phobos_module {
  phobos_context *ctx;
  Manifest mf;
  char image_hash[17]; /* FNV-1a of the cubin's bytes, for the autotune key */
  CUmodule cumod;
  phobos_kernel *kernels;
  phobos_module *next;
};

enum { RT_MAX_CUBIN_BYTES = 256 << 20 };

/* A whole file read into memory (NUL-terminated: data[len] == 0). */
typedef struct RtFile {
  char *data;
  size_t len;
  int open_errno; /* open(2)'s errno when it could not be opened, else 0 */
} RtFile;
/* Reads a regular file of at most `max` bytes. The file is opened
 * non-blocking and checked with fstat on the open descriptor, so a FIFO or
 * a device is refused without blocking or reading. PHOBOS_IO_ERROR (cannot
 * open, not a regular file, read error), `too_big` or PHOBOS_OUT_OF_MEMORY,
 * with a message naming `what` and the path. */
phobos_status rt_read_file(const char *path, const char *what, size_t max, phobos_status too_big, RtFile *f, char *err,
                           size_t errlen);
/* Whether a cubin's ELF structure lies inside its `len` bytes (the driver
 * takes no length and would read past a truncated file). */
bool rt_elf_ok(const unsigned char *p, size_t len, char *why, size_t wlen);
/* Records a failure's message on the context; returns s. */
phobos_status rt_set_err(phobos_context *ctx, phobos_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Checks arguments against a kernel's parameters and binds its dims; on
 * failure the status and a message naming the parameter, dim and values. */
phobos_status rt_bind(const MfKernel *k, const phobos_arg *args, int nargs, RtBinding *b, char *err, size_t errlen);
/* A tensor's size in bytes; false when a dim is negative or the size does
 * not fit in int64. */
/* Tensor t's strides in elements as its kernel takes them: the caller's
 * (any stride of a dim of extent 1 replaced by an aligned one), or the
 * row-major ones where all are zero; false where a stride or an extent is
 * negative or a span overflows. */
bool rt_strides(const phobos_tensor *t, int64_t s[PHOBOS_MAX_RANK]);
/* Whether t comes with strides (any nonzero; all zero: row-major). */
bool rt_strides_given(const phobos_tensor *t);
/* The bytes from t's first element to one past its last, at its strides. */
bool rt_tensor_bytes(const phobos_tensor *t, int64_t *bytes);
/* Launches one variant; `override` (NULL, or one entry per parameter of the
 * kernel, by index) replaces tensor pointers (autotuning's scratch copies)
 * where non-zero. */
phobos_status rt_launch_variant(phobos_kernel *k, MfVariant *v, const phobos_arg *args, const RtBinding *b,
                                const CUdeviceptr *override, CUstream stream);

/* One grid operation in int64 (+ - * / % cdiv min max): false when its
 * exact result does not fit or it divides by zero (*by_zero). */
bool rt_grid_op(const char *op, int64_t x, int64_t y, int64_t *r, bool *by_zero);

/* Why a postfix program (a grid extent's, a contract side's) could not be
 * evaluated, for the caller's message. */
typedef struct RtEvalFail {
  enum { RT_EVAL_MISSING, RT_EVAL_ZERO, RT_EVAL_OVERFLOW } kind;
  const char *name; /* RT_EVAL_MISSING: the dim no tensor gave */
  const char *op;   /* the others: the step, "neg" for a negation of x */
  int64_t x, y;
} RtEvalFail;
/* Runs ops[0..nops) over the bound dims in int64 arithmetic (rt_grid_op);
 * a name "grid.x" (.y, .z) reads grid[], where grid is not NULL. The one
 * evaluator of the manifest's programs (rt_grid, contract.c). */
bool rt_eval_program(const MfGridOp *ops, int nops, const RtBinding *b, const int64_t *grid, int64_t *out,
                     RtEvalFail *why);

/* ----------------------------------------------------------- contract.c */

/* What a launch may run, beyond the variants that fit (spec 17.3): drops
 * from fits[] the variants whose contracts (@requires) fail for these
 * dims, and, under phobos_launch_grid, those whose own grid is not the
 * caller's. PHOBOS_OK with *nfits left > 0, else the status and message
 * of the refusal (PHOBOS_BAD_SHAPE: a contract; PHOBOS_NO_VARIANT: no
 * variant's grid is the caller's). */
phobos_status ct_filter(phobos_kernel *k, const RtBinding *b, MfVariant **fits, int *nfits, char *err, size_t errlen);
/* The pinned variant's contracts, under the grid it launches with. */
phobos_status ct_check_pinned(phobos_kernel *k, const MfVariant *v, const RtBinding *b, char *err, size_t errlen);

/* ----------------------------------------------------------- autotune.c */

/* Picks among variants that fit: the cached choice for this shape, or the
 * fastest when timed on scratch copies of the written tensors. */
phobos_status at_choose(phobos_kernel *k, const phobos_arg *args, const RtBinding *b, MfVariant **fits, int nfits,
                        CUstream stream, MfVariant **chosen);
void at_free(phobos_context *ctx);
/* Whether a variant's pinned dims agree with a binding. */
bool rt_variant_fits(const MfVariant *v, const RtBinding *b);
/* A staged-rows copy's dynamic shared bytes for these shapes (spec 16.2:
 * the plan's, rounded to 16 where they are dynamic, then the rows rounded
 * to 16, 64 bytes, 8 a block); a variant without staged rows: its own. */
int64_t rt_dynamic_shared(const MfKernel *k, const MfVariant *v, const RtBinding *b);
/* Whether a staged-rows copy may run on these arguments: its shared
 * memory within the device's (max_optin), the staged tensor's base 16-byte
 * aligned, and no written tensor overlapping it (the copy is read when the
 * kernel starts); true for any other variant. */
bool rt_stage_fits(const MfKernel *k, const MfVariant *v, const phobos_arg *args, const RtBinding *b, int max_optin);
/* The first tensor of a variant's apart set (a one-pass copy over several
 * blocks reads it before a store to another tensor that the loops' order
 * stores first) that a written tensor other than itself overlaps; -1 where
 * none does. */
int rt_apart_misfit(const MfKernel *k, const MfVariant *v, const phobos_arg *args);
/* A maps_required variant's first tensor parameter whose map the driver
 * would refuse (tmap_shape), or -1: every map can be built */
int rt_maps_misfit(const MfKernel *k, const MfVariant *v, const phobos_arg *args);
/* workspace.c: fills args' scratch tensors (the kernel's last nscratch
 * parameters) for variant v, their buffers the kernel's for `stream`,
 * made or grown as needed; and frees them all */
phobos_status rt_scratch_fill(phobos_kernel *k, const MfVariant *v, const RtBinding *b, phobos_arg *args,
                              CUstream stream);
void rt_scratch_free(phobos_kernel *k);
/* Frees what a kernel holds: its room for fitting variants and its
 * remembered choices. */
void rt_kernel_free(phobos_kernel *k);
/* The OR of tensor t's row pitches in bytes (the strides of its dims but
 * the last, those of extent 1 left out), modulo 16: 0 where every row
 * starts 16-byte aligned from an aligned base. */
int64_t rt_row_pitches(const phobos_tensor *t);
/* Whether an aligned-rows copy may run on these arguments: every tensor
 * its manifest names with a 16-byte aligned base and rows (rt_row_pitches);
 * -1 where it may (any other variant too), else the first parameter that
 * is not. */
int rt_rows_misfit(const MfKernel *k, const MfVariant *v, const phobos_arg *args);
/* Evaluates the variant's grid; false with a message naming the kernel,
 * the variant and the axis's program (a result that is zero, negative or
 * beyond `max`; an operation that overflows int64 or divides by zero). */
bool rt_grid(const MfVariant *v, const RtBinding *b, const int64_t max[3], int64_t grid[3], char *err, size_t errlen);

#endif
