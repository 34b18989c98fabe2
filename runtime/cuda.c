/* cuda.c: libcuda, opened with dlopen on first use.
 *
 * Entry points are looked up by their versioned names first (cuMemAlloc_v2
 * and friends), so the runtime calls what cuda.h would have bound it to. A
 * machine without the driver gets a clear reason instead of a link error. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static CuApi api;
static const char *api_why;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why_buf[512];

static void *sym(void *lib, const char *name, const char *v2) {
  void *p = v2 ? dlsym(lib, v2) : NULL;
  return p ? p : dlsym(lib, name);
}

#define LOAD(field, name, v2)                                                   \
  do {                                                                          \
    *(void **)&api.field = sym(lib, name, v2);                                  \
    if (!api.field) {                                                           \
      snprintf(why_buf, sizeof why_buf, "libcuda lacks %s (driver too old?)", name); \
      api_why = why_buf;                                                        \
      return;                                                                   \
    }                                                                           \
  } while (0)

static void open_driver(void) {
  const char *path = getenv("PHOBOS_LIBCUDA");
  void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why_buf, sizeof why_buf, "no CUDA driver: cannot open %s (%s)", path && *path ? path : "libcuda.so.1",
             e ? e : "?");
    api_why = why_buf;
    return;
  }
  api.lib = lib;
  LOAD(Init, "cuInit", NULL);
  LOAD(DeviceGetCount, "cuDeviceGetCount", NULL);
  LOAD(DeviceGet, "cuDeviceGet", NULL);
  LOAD(DeviceGetAttribute, "cuDeviceGetAttribute", NULL);
  LOAD(DeviceGetName, "cuDeviceGetName", NULL);
  LOAD(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
  LOAD(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2");
  LOAD(CtxSetCurrent, "cuCtxSetCurrent", NULL);
  LOAD(CtxSynchronize, "cuCtxSynchronize", NULL);
  LOAD(ModuleLoadData, "cuModuleLoadData", NULL);
  LOAD(ModuleUnload, "cuModuleUnload", NULL);
  LOAD(ModuleGetFunction, "cuModuleGetFunction", NULL);
  LOAD(FuncGetAttribute, "cuFuncGetAttribute", NULL);
  LOAD(FuncSetAttribute, "cuFuncSetAttribute", NULL);
  LOAD(LaunchKernel, "cuLaunchKernel", NULL);
  *(void **)&api.LaunchKernelEx = sym(lib, "cuLaunchKernelEx", NULL); /* optional */
  *(void **)&api.TensorMapEncodeTiled = sym(lib, "cuTensorMapEncodeTiled", NULL); /* optional */
  *(void **)&api.OccupancyMaxActiveBlocksPerMultiprocessor = sym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL);
  LOAD(MemAlloc, "cuMemAlloc", "cuMemAlloc_v2");
  LOAD(MemFree, "cuMemFree", "cuMemFree_v2");
  LOAD(MemcpyDtoDAsync, "cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2");
  LOAD(MemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2");
  LOAD(MemcpyDtoH, "cuMemcpyDtoH", "cuMemcpyDtoH_v2");
  LOAD(MemsetD8, "cuMemsetD8", "cuMemsetD8_v2");
  *(void **)&api.MemsetD8Async = sym(lib, "cuMemsetD8Async", NULL); /* optional: the autotuner's L2 flush */
  LOAD(EventCreate, "cuEventCreate", NULL);
  LOAD(EventDestroy, "cuEventDestroy", "cuEventDestroy_v2");
  LOAD(EventRecord, "cuEventRecord", NULL);
  LOAD(EventSynchronize, "cuEventSynchronize", NULL);
  LOAD(EventElapsedTime, "cuEventElapsedTime", "cuEventElapsedTime_v2");
  LOAD(StreamSynchronize, "cuStreamSynchronize", NULL);
  *(void **)&api.StreamIsCapturing = sym(lib, "cuStreamIsCapturing", NULL); /* optional */
  LOAD(GetErrorName, "cuGetErrorName", NULL);
  LOAD(GetErrorString, "cuGetErrorString", NULL);
  CUresult r = api.Init(0);
  if (r != CU_SUCCESS) {
    char b[160];
    snprintf(why_buf, sizeof why_buf, "no CUDA driver: cuInit failed: %s", cu_error(&api, r, b, sizeof b));
    api_why = why_buf;
  }
}

const CuApi *cu_api(const char **why) {
  pthread_once(&once, open_driver);
  if (api_why) {
    *why = api_why;
    return NULL;
  }
  return &api;
}

const char *cu_error(const CuApi *cu, CUresult r, char *buf, size_t len) {
  const char *name = NULL, *text = NULL;
  if (cu && cu->GetErrorName) cu->GetErrorName(r, &name);
  if (cu && cu->GetErrorString) cu->GetErrorString(r, &text);
  snprintf(buf, len, "%s (%s)", name ? name : "CUDA error", text ? text : "no description");
  if (!name) snprintf(buf, len, "CUDA error %d", r);
  return buf;
}

bool cu_capturing(const CuApi *cu, CUstream stream) {
  int status = 0; /* CU_STREAM_CAPTURE_STATUS_NONE */
  return cu->StreamIsCapturing && cu->StreamIsCapturing(stream, &status) == CU_SUCCESS && status != 0;
}
