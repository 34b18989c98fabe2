/* host_common.h: what the example host programs (and tests/gpu/qload_bench.c)
 * share: checked CUDA and libphobos calls, a reproducible random source,
 * and the L2 flush their benchmarks put before each timed rep.
 *
 * It declares the program's context, `ctx` (PK names it in its message); a
 * program may define HOST_RNG_SEED before including it. */
#ifndef PHOBOS_HOST_COMMON_H
#define PHOBOS_HOST_COMMON_H

#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "phobos.h"

static phobos_context *ctx;

/* a CUDA driver call that must succeed: on failure, the call and the
 * driver's message on stderr, exit status 2 */
#define CK(call)                                                                                      \
  do {                                                                                                \
    CUresult r_ = (call);                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                         \
      const char *s_ = NULL;                                                                          \
      cuGetErrorString(r_, &s_);                                                                      \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s_ ? s_ : "?");            \
      exit(2);                                                                                        \
    }                                                                                                 \
  } while (0)

/* a libphobos call that must succeed: the status and the runtime's message */
#define PK(call)                                                                                      \
  do {                                                                                                \
    phobos_status s_ = (call);                                                                        \
    if (s_ != PHOBOS_OK) {                                                                            \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, phobos_status_name(s_),       \
              phobos_last_error(ctx));                                                                \
      exit(2);                                                                                        \
    }                                                                                                 \
  } while (0)

#ifndef HOST_RNG_SEED
#define HOST_RNG_SEED 0x9E3779B97F4A7C15ull
#endif
static unsigned long long host_rng = HOST_RNG_SEED;

/* xorshift64: uniform in [0, 1) */
static inline double uniform(void) {
  host_rng ^= host_rng << 13, host_rng ^= host_rng >> 7, host_rng ^= host_rng << 17;
  return (double)(host_rng >> 11) / 9007199254740992.0;
}

/* standard normal (Box-Muller) */
static inline double normal(void) {
  double u = uniform() + 1e-300, v = uniform();
  return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* qsort comparison of floats (event times) */
static inline int cmpf(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* Enqueues a 256 MiB memset on the default stream, as triton.testing.do_bench
 * does before each rep: it evicts L2 (50 MiB on the H200) and keeps the GPU
 * busy while the host submits the launch that follows, so neither the cache
 * nor the host's launch time lands in the timed figure. */
static inline void flush_l2(unsigned rep) {
  static CUdeviceptr buf;
  const size_t bytes = (size_t)256 << 20;
  if (!buf) CK(cuMemAlloc(&buf, bytes));
  CK(cuMemsetD32Async(buf, rep, bytes / 4, NULL));
}

#endif
