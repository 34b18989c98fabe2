/* fake_cuda.h: what the fake driver (fake_cuda.c) records for the tests. */
#ifndef PHOBOS_FAKE_CUDA_H
#define PHOBOS_FAKE_CUDA_H

#include <stdint.h>

enum { FAKE_MAX_PARAMS = 160 /* the runtime's MF_MAX_SLOTS */ };

typedef struct FakeCuda {
  int plain_launches, ex_launches;       /* cuLaunchKernel, cuLaunchKernelEx */
  unsigned grid[3], block, shared;
  int nattrs, attr_id, attr_value;       /* cuLaunchKernelEx's first attribute */
  int nsizes, sizes[FAKE_MAX_PARAMS];    /* what to copy of each parameter (fake_cuda_param_sizes) */
  int nparams;
  unsigned char params[FAKE_MAX_PARAMS][128];
  char function[256];                    /* the last cuModuleGetFunction name */
  char names[16][128];                   /* a token per function name */
  int nnames;
  const char *launched;                  /* the function of the last launch */
  int watch;                             /* a parameter (a tensor's pointer) to log at every launch */
  int nlaunches;                         /* all launches, and the watched parameter at each */
  int memsets;                          /* cuMemsetD8Async: how many, and the last one's bytes */
  size_t memset_bytes;
  uint64_t watched[256];
  unsigned grid_x[256];                  /* the grid's x extent at each launch */
  int encodes;                           /* cuTensorMapEncodeTiled: the last call */
  int enc_dtype;
  unsigned enc_rank;
  uint64_t enc_addr;
  unsigned long long enc_dims[6], enc_strides[5];
  unsigned enc_box[6];
  int enc_swizzle;                       /* the driver's code: 0 none, 1 32B, 2 64B, 3 128B */
  int capturing;                         /* cuStreamIsCapturing says every stream is (set by the test) */
  int capture_violations;                /* host waits, allocations, memsets and timing while capturing: refused */
  int nallocs;                           /* cuMemAlloc: how many, and the first 64 pointers and sizes */
  uint64_t allocs[64];
  size_t alloc_bytes[64];
  int occupancy;                         /* cuOccupancyMaxActiveBlocksPerMultiprocessor's answer (0: it fails) */
} FakeCuda;

FakeCuda *fake_cuda_state(void);
/* the byte sizes of the next launches' parameters, in order, for the copy */
void fake_cuda_param_sizes(int n, const int *sizes);

#endif
