/* phobos.h: libphobos, the runtime that loads phobosc's cubins and launches
 * their kernels from C.
 *
 *   phobos_context *ctx;
 *   phobos_module *mod;
 *   phobos_kernel *k;
 *   if (phobos_context_create(0, &ctx) != PHOBOS_OK) { puts(phobos_last_error(ctx)); ... }
 *   phobos_module_load(ctx, "q8_matvec.cubin", &mod);   // reads q8_matvec.yaml beside it
 *   phobos_kernel_get(mod, "q8_matvec", &k);
 *   phobos_arg args[4] = {phobos_tensor_arg(a_ptr, PHOBOS_F32, 2, (int64_t[]){1, K}), ...};
 *   phobos_launch(k, args, 4, stream);
 *
 * Every call returns a status; the message that goes with the last failure
 * on a context is phobos_last_error(ctx). Nothing here prints or exits.
 * libcuda is opened with dlopen on first use, so a program linked with
 * libphobos runs on a machine without a GPU and gets PHOBOS_NO_DRIVER.
 *
 * A context is used from one thread at a time; different contexts may be
 * used from different threads at once. */
#ifndef PHOBOS_H
#define PHOBOS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PHOBOS_MAX_RANK 5

typedef enum phobos_status {
  PHOBOS_OK = 0,
  PHOBOS_NO_DRIVER,      /* libcuda could not be loaded or initialized */
  PHOBOS_NO_DEVICE,      /* no device with that ordinal */
  PHOBOS_CUDA_ERROR,     /* a driver call failed; the message names it */
  PHOBOS_IO_ERROR,       /* a file is missing or unreadable, or not a regular file */
  PHOBOS_BAD_MANIFEST,   /* the YAML beside the cubin is malformed, past a bound, or does not match it */
  PHOBOS_BAD_CUBIN,      /* the driver rejected the cubin */
  PHOBOS_NOT_FOUND,      /* no kernel of that name */
  PHOBOS_BAD_ARGUMENT,   /* wrong argument count, kind or element type */
  PHOBOS_BAD_SHAPE,      /* a dim does not bind, or is not positive */
  PHOBOS_BAD_POINTER,    /* a null or misaligned tensor pointer */
  PHOBOS_NO_VARIANT,     /* no compiled variant fits these shapes */
  PHOBOS_LAUNCH_LIMIT,   /* grid or shared memory beyond what the device allows */
  PHOBOS_CACHE_IGNORED,  /* the autotune cache file was unreadable; it was ignored (not fatal) */
  PHOBOS_OUT_OF_MEMORY,
  PHOBOS_INVALID,        /* a NULL handle or another misuse of the API */
  PHOBOS_NOT_WARMED_UP,  /* a launch on a capturing stream would have to autotune or allocate: launch it once before */
} phobos_status;

typedef enum phobos_dtype {
  PHOBOS_F16, PHOBOS_BF16, PHOBOS_F32, PHOBOS_F64, PHOBOS_I8, PHOBOS_U8, PHOBOS_I32, PHOBOS_I64, PHOBOS_BOOL
} phobos_dtype;

/* A tensor argument: a device pointer, its element type and shape, and its
 * strides in elements. All zero: contiguous, row-major. Otherwise each is
 * taken as given (a view of a larger buffer: Q, K and V out of one packed
 * QKV tensor, rows with a pitch): the last must be 1 (a dim of extent 1
 * aside), none negative, and a tensor the kernel writes must not have two
 * elements at one address; a read-only one may (a stride of 0 repeats a
 * row). Tensor maps are built from the real strides where their pitches
 * are multiples of 16 bytes; the kernel takes its pointer path otherwise. */
typedef struct phobos_tensor {
  uint64_t data;
  phobos_dtype dtype;
  int rank;
  int64_t shape[PHOBOS_MAX_RANK];
  int64_t strides[PHOBOS_MAX_RANK];
} phobos_tensor;

typedef enum phobos_arg_kind { PHOBOS_ARG_TENSOR, PHOBOS_ARG_INT, PHOBOS_ARG_FLOAT, PHOBOS_ARG_BOOL } phobos_arg_kind;

typedef struct phobos_arg {
  phobos_arg_kind kind;
  phobos_tensor tensor; /* PHOBOS_ARG_TENSOR */
  int64_t i;            /* PHOBOS_ARG_INT, PHOBOS_ARG_BOOL */
  double f;             /* PHOBOS_ARG_FLOAT */
} phobos_arg;

typedef struct phobos_context phobos_context;
typedef struct phobos_module phobos_module;
typedef struct phobos_kernel phobos_kernel;

/* Opens device `ordinal` (its primary context). On PHOBOS_NO_DRIVER and
 * PHOBOS_NO_DEVICE *out is still a context: read the message with
 * phobos_last_error, then destroy it. */
phobos_status phobos_context_create(int ordinal, phobos_context **out);
void phobos_context_destroy(phobos_context *ctx);
/* The message of the last failure on ctx ("" when none). */
const char *phobos_last_error(const phobos_context *ctx);
const char *phobos_status_name(phobos_status s);

/* Loads a cubin and the manifest beside it (same path, .yaml instead of
 * .cubin). The module lives until phobos_module_unload or the context's end. */
phobos_status phobos_module_load(phobos_context *ctx, const char *cubin_path, phobos_module **out);
/* Loads a module from memory: a cubin image of cubin_len bytes and its
 * manifest's text (manifest_len bytes, no terminator needed), as the C
 * file of `phobosc --emit=c` holds them; both are read during the call
 * only. Checked as phobos_module_load checks the files; the messages name
 * "the embedded cubin" and "the embedded manifest". */
phobos_status phobos_module_load_image(phobos_context *ctx, const void *cubin, size_t cubin_len, const char *manifest,
                                       size_t manifest_len, phobos_module **out);
void phobos_module_unload(phobos_module *mod);
phobos_status phobos_kernel_get(phobos_module *mod, const char *name, phobos_kernel **out);

/* Checks the arguments against the kernel's parameters (count, kinds,
 * element types, dims that must agree, pointers and alignment), picks the
 * variant (the autotuner's choice for this shape, timed on first use),
 * evaluates the grid and launches on `stream` (a CUstream; NULL for the
 * default stream). Each variant launches on its own grid: its @grid, or
 * for a kernel without @grid the grid phobosc derived from its slices.
 * A variant whose @requires contracts fail for these dims is not launched;
 * when none holds, PHOBOS_BAD_SHAPE names the kernel, the contract and the
 * values ("kernel 'k' requires NC >= cdiv(N, BN): NC = 3, cdiv(N, BN) = 4").
 * Asynchronous: errors of the kernel itself surface at the caller's next
 * synchronization. */
phobos_status phobos_launch(phobos_kernel *k, const phobos_arg *args, int nargs, void *stream);

/* PHOBOS_CACHE_IGNORED when an autotune cache file could not be read and
 * was ignored (the launches went on; the message says which file and why),
 * else PHOBOS_OK. */
phobos_status phobos_cache_status(const phobos_context *ctx);

/* The same on the caller's grid. Unless a variant is pinned, it runs only
 * a variant whose own grid (its @grid or derived grid) for these shapes is
 * `grid`, autotuning among those: a grid computed for one tile never
 * launches a variant of another, which would leave outputs unwritten. When
 * no variant's grid is `grid`, PHOBOS_NO_VARIANT lists their grids. A
 * pinned variant (phobos_kernel_pin_variant) is launched on `grid` as
 * given, an explicit override. A variant whose manifest lists no grid (a
 * manifest from before grids were derived) takes any. */
phobos_status phobos_launch_grid(phobos_kernel *k, const phobos_arg *args, int nargs, const int64_t grid[3],
                                 void *stream);

/* Pins the kernel's launches to the variant whose entry is `entry` (as
 * the manifest names it, e.g. "softmax__v3_staged"; "ENTRY+l2" for the
 * same entry with its slices prefetched into L2, where the manifest says
 * l2_prefetch: spec 15.18), skipping the autotuner: to compare variants,
 * or to reproduce a run. A launch whose
 * shapes or arguments that variant does not take fails with
 * PHOBOS_NO_VARIANT and says why. NULL unpins. PHOBOS_INVALID, with a
 * message, for an entry the kernel does not have. */
phobos_status phobos_kernel_pin_variant(phobos_kernel *k, const char *entry);

/* The entry name of the variant the last launch used ("ENTRY+l2" for an
 * entry launched with its L2 prefetch), for reports. */
const char *phobos_kernel_last_variant(const phobos_kernel *k);

/* The tensor maps the last launch's variant takes (phobosc --tma), and in
 * *built how many of them the runtime could build for those tensors (the
 * rest took the pointer path: a misaligned base or row pitch). */
int phobos_kernel_last_tensor_maps(const phobos_kernel *k, int *built);

/* Argument helpers. */
phobos_arg phobos_tensor_arg(uint64_t data, phobos_dtype dtype, int rank, const int64_t *shape);
phobos_arg phobos_int_arg(int64_t v);
phobos_arg phobos_float_arg(double v);
phobos_arg phobos_bool_arg(int v);

#ifdef __cplusplus
}
#endif

#endif
