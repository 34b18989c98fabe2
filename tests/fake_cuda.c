/* fake_cuda.c: a stand-in for libcuda.so.1, so that the runtime's launch
 * path runs in CI without a GPU (test_runtime_launch.c points
 * PHOBOS_LIBCUDA here). It has every entry point the runtime loads, with
 * the runtime's own view of their types (runtime/rt.h): device memory is
 * host memory, modules and functions are tokens, events time nothing, and
 * launches and tensor-map encodings are recorded for the test to read
 * (fake_cuda_state). Like the driver, the encoder refuses an address or a
 * stride that is not a multiple of 16 bytes and a box over 256. Events time
 * the last launch: 5 us for the function named by $FAKE_FAST_ENTRY, 10 us
 * for any other (so the autotuner has something to choose). $FAKE_FAIL
 * names an entry point that then fails with error 999, for the runtime's
 * error paths. Every entry point holds one lock while it touches the
 * state, so that several threads may call it (test_runtime_threads.c);
 * events time the calling thread's last launch. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "rt.h" /* CuLaunchConfig: the launch configuration as the runtime passes it */

static FakeCuda st;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local const char *thread_launched; /* this thread's last launch, for its events */

#define LOCKED(...)              \
  do {                           \
    pthread_mutex_lock(&mu);     \
    __VA_ARGS__;                 \
    pthread_mutex_unlock(&mu);   \
  } while (0)

/* $FAKE_FAIL names the entry point that fails */
static int fails(const char *name) {
  const char *f = getenv("FAKE_FAIL");
  return f && !strcmp(f, name) ? 999 : 0;
}

FakeCuda *fake_cuda_state(void) { return &st; }

void fake_cuda_param_sizes(int n, const int *sizes) {
  LOCKED(st.nsizes = n < FAKE_MAX_PARAMS ? n : FAKE_MAX_PARAMS;
         for (int i = 0; i < st.nsizes; i++) st.sizes[i] = sizes[i]);
}

static void copy_params(void **params) {
  if (params && st.watch < st.nsizes && st.nlaunches < 256) memcpy(&st.watched[st.nlaunches], params[st.watch], 8);
  if (st.nlaunches < 256) st.grid_x[st.nlaunches] = st.grid[0]; /* the callers set st.grid first */
  st.nlaunches++;
  st.nparams = 0;
  for (int i = 0; params && i < st.nsizes; i++) {
    int sz = st.sizes[i] <= 128 ? st.sizes[i] : 128;
    memcpy(st.params[i], params[i], (size_t)sz);
    st.nparams++;
  }
}

int cuInit(unsigned flags) { return (int)flags; }
int cuDeviceGetCount(int *n) { return *n = 1, 0; }
int cuDeviceGet(int *d, int ordinal) { return *d = ordinal, 0; }
int cuDeviceGetAttribute(int *v, int attr, int dev) {
  (void)dev;
  switch (attr) {
  case 1: *v = 1024; break;                /* max threads per block */
  case 5: *v = 2147483647; break;          /* grid x */
  case 6: case 7: *v = 65535; break;       /* grid y, z */
  case 16: *v = 132; break;                /* SMs */
  case 75: *v = 9; break;                  /* compute capability */
  case 76: *v = 0; break;
  case 97: *v = 232448; break;             /* shared memory opt-in */
  case 38: *v = 4096; break;               /* L2 bytes (the autotuner's flush: twice this) */
  default: *v = 0; break;
  }
  return 0;
}
int cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  strncpy(name, "Fake H200", (size_t)len - 1);
  name[len - 1] = 0;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { return *ctx = (void *)(uintptr_t)(dev + 1), 0; }
int cuDevicePrimaryCtxRelease_v2(int dev) { return (void)dev, 0; }
int cuCtxSetCurrent(void *ctx) { return (void)ctx, 0; }
/* what a capture cannot hold fails as the driver's
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED does, and is counted */
static int refused_in_capture(void) {
  if (!st.capturing) return 0;
  LOCKED(st.capture_violations++);
  return 900;
}
int cuCtxSynchronize(void) { return refused_in_capture(); }
int cuModuleLoadData(void **mod, const void *image) {
  if (fails("cuModuleLoadData")) return 999;
  return (void)image, *mod = &st, 0;
}
int cuModuleUnload(void *mod) { return (void)mod, 0; }
static int get_function(void **fn, const char *name) {
  strncpy(st.function, name, sizeof st.function - 1);
  for (int i = 0; i < st.nnames; i++)
    if (!strcmp(st.names[i], name)) return *fn = st.names[i], 0;
  if (st.nnames == 16) return 500; /* CUDA_ERROR_NOT_FOUND */
  strncpy(st.names[st.nnames], name, sizeof st.names[0] - 1);
  *fn = st.names[st.nnames++];
  return 0;
}
int cuModuleGetFunction(void **fn, void *mod, const char *name) {
  if (fails("cuModuleGetFunction")) return 999;
  (void)mod;
  int r;
  LOCKED(r = get_function(fn, name));
  return r;
}
int cuFuncGetAttribute(int *v, int attr, void *fn) { return (void)attr, (void)fn, *v = 0, 0; }
int cuFuncSetAttribute(void *fn, int attr, int v) {
  if (fails("cuFuncSetAttribute")) return 999;
  return (void)fn, (void)attr, (void)v, 0;
}
int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                   void *stream, void **params, void **extra) {
  if (fails("cuLaunchKernel")) return 999;
  (void)by, (void)bz, (void)stream, (void)extra;
  thread_launched = fn;
  LOCKED(st.plain_launches++; st.launched = fn; st.grid[0] = gx, st.grid[1] = gy, st.grid[2] = gz, st.block = bx,
         st.shared = smem, st.nattrs = 0; copy_params(params));
  return 0;
}

int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *fn, int threads, size_t dyn) {
  (void)fn, (void)threads, (void)dyn;
  int o;
  LOCKED(o = st.occupancy);
  return o > 0 ? (*n = o, 0) : 1; /* CUDA_ERROR_INVALID_VALUE where the test sets none */
}

int cuLaunchKernelEx(const CuLaunchConfig *c, void *fn, void **params, void **extra) {
  if (fails("cuLaunchKernelEx")) return 999;
  (void)extra;
  thread_launched = fn;
  LOCKED(st.ex_launches++; st.launched = fn; memcpy(st.grid, c->grid, sizeof st.grid);
         st.block = c->block[0], st.shared = c->shared_bytes, st.nattrs = (int)c->nattrs;
         if (c->nattrs) st.attr_id = c->attrs[0].id, st.attr_value = c->attrs[0].value.allowed; copy_params(params));
  return 0;
}

int cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const unsigned long long *dims,
                           const unsigned long long *strides, const unsigned *box, const unsigned *estr, int interleave,
                           int swizzle, int l2, int fill) {
  if (fails("cuTensorMapEncodeTiled")) return 999;
  (void)estr, (void)interleave, (void)l2, (void)fill;
  LOCKED(st.encodes++; st.enc_swizzle = swizzle;
         st.enc_dtype = dtype, st.enc_rank = rank, st.enc_addr = (uint64_t)(uintptr_t)addr;
         for (unsigned i = 0; i < rank && i < 6; i++) st.enc_dims[i] = dims[i], st.enc_box[i] = box[i];
         for (unsigned i = 0; i + 1 < rank && i < 5; i++) st.enc_strides[i] = strides[i]);
  if ((uintptr_t)addr % 16 || rank < 1 || rank > 5) return 1; /* CUDA_ERROR_INVALID_VALUE */
  for (unsigned i = 0; i + 1 < rank; i++)
    if (strides[i] % 16) return 1;
  for (unsigned i = 0; i < rank; i++)
    if (box[i] < 1 || box[i] > 256) return 1;
  static const unsigned span[] = {0, 32, 64, 128};
  if (swizzle < 0 || swizzle > 3 || (swizzle && box[0] * 4 > span[swizzle])) return 1; /* f32 rows: the tests' */
  memset(map, 0xA5, 128); /* something to see in the launch's parameters */
  return 0;
}

/* device memory is host memory, 256-byte aligned like the driver's */
int cuMemAlloc_v2(uint64_t *p, size_t n) {
  if (fails("cuMemAlloc_v2")) return 999;
  if (refused_in_capture()) return 900;
  void *m = NULL;
  if (posix_memalign(&m, 256, n ? n : 1)) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  *p = (uint64_t)(uintptr_t)m;
  LOCKED(if (st.nallocs < 64) st.allocs[st.nallocs] = *p, st.alloc_bytes[st.nallocs] = n; st.nallocs++);
  return 0;
}
int cuMemFree_v2(uint64_t p) { return free((void *)(uintptr_t)p), 0; }
int cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void *stream) {
  (void)stream;
  memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return 0;
}
int cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) { return memcpy((void *)(uintptr_t)d, s, n), 0; }
int cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) { return memcpy(d, (const void *)(uintptr_t)s, n), 0; }
int cuMemsetD8_v2(uint64_t d, unsigned char v, size_t n) { return memset((void *)(uintptr_t)d, v, n), 0; }
int cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void *stream) {
  (void)stream;
  if (fails("cuMemsetD8Async")) return 999;
  if (refused_in_capture()) return 900;
  memset((void *)(uintptr_t)d, v, n);
  LOCKED(st.memsets++; st.memset_bytes = n);
  return 0;
}
int cuEventCreate(void **e, unsigned flags) { return (void)flags, *e = &st, 0; }
int cuEventDestroy_v2(void *e) { return (void)e, 0; }
int cuEventRecord(void *e, void *s) {
  if (fails("cuEventRecord")) return 999;
  return (void)e, (void)s, 0;
}
int cuEventSynchronize(void *e) { return (void)e, refused_in_capture(); }
int cuEventElapsedTime(float *ms, void *a, void *b) {
  (void)a, (void)b;
  const char *fast = getenv("FAKE_FAST_ENTRY");
  *ms = fast && thread_launched && !strcmp(fast, thread_launched) ? 0.005f : 0.01f;
  return 0;
}
int cuStreamSynchronize(void *s) { return (void)s, refused_in_capture(); }
int cuStreamIsCapturing(void *s, int *status) { return (void)s, *status = st.capturing ? 1 : 0, 0; }
int cuGetErrorName(int r, const char **s) { return *s = r ? "CUDA_ERROR_FAKE" : "CUDA_SUCCESS", 0; }
int cuGetErrorString(int r, const char **s) { return *s = r ? "refused by the fake driver" : "no error", 0; }
