/* host_common.h: what the example host programs (and tests/gpu/qload_bench.c)
 * share: the start (context, or a "skipped" line without a device), checked
 * CUDA and libphobos calls, a reproducible random source, the L2 flush their
 * benchmarks put before each timed rep, and the timing loop (median of CUDA
 * event times).
 *
 * It declares the program's context, `ctx` (PK names it in its message); a
 * program may define HOST_RNG_SEED before including it. */
#ifndef PHOBOS_HOST_COMMON_H
#define PHOBOS_HOST_COMMON_H

#include <cuda.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* bf16 by round to nearest even, and back (the host programs' inputs and
 * references) */
static inline uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

static inline double from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
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

/* flush_l2 with the shape host_median_us's `before` takes */
static inline void flush_l2_before(void *arg, unsigned rep) {
  (void)arg;
  flush_l2(rep);
}

/* Median microseconds of `reps` runs of run(arg), CUDA events around each,
 * after `warm` runs untimed; before each timed run before(arg, rep) is
 * enqueued (flush_l2_before for do_bench's way; NULL for none). At most
 * 64 reps. */
static inline double host_median_us(void (*run)(void *), void (*before)(void *, unsigned), void *arg, int warm,
                                    int reps) {
  CUevent e0, e1;
  float t[64];
  if (reps > 64) reps = 64;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  for (int i = 0; i < warm; i++) run(arg);
  for (int i = 0; i < reps; i++) {
    if (before) before(arg, (unsigned)i);
    CK(cuEventRecord(e0, NULL));
    run(arg);
    CK(cuEventRecord(e1, NULL));
    CK(cuEventSynchronize(e1));
    CK(cuEventElapsedTime(&t[i], e0, e1));
  }
  qsort(t, (size_t)reps, sizeof(float), cmpf);
  CK(cuEventDestroy(e0));
  CK(cuEventDestroy(e1));
  return t[reps / 2] * 1e3;
}

/* Creates the program's context on device 0 and initialises the driver
 * API (the runtime made the primary context current); false, after
 * printing "NAME: skipped: STATUS: MESSAGE", where there is no device. */
static inline bool host_start(const char *name) {
  phobos_status s = phobos_context_create(0, &ctx);
  if (s != PHOBOS_OK) {
    printf("%s: skipped: %s: %s\n", name, phobos_status_name(s), phobos_last_error(ctx));
    phobos_context_destroy(ctx);
    return false;
  }
  CK(cuInit(0));
  return true;
}

#endif
