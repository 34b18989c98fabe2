/* qload_bench.c: the memory-bound Q-load tile benchmark of issue 5. The
 * kernel qload_edges (spec/conformance/qload.ph) reads Q [1, S, HQ, D] f32
 * as [BQ, NQ, D] tiles (NQ query heads of one KV head) into shared memory
 * and writes each row's first plus last element (1/D of what it reads).
 * Two builds of it are timed on the same tensor:
 * the staged pointer path (phobosc --no-tensor-copies) and TMA tensor copies (phobosc),
 * whose map views HQ as [HQ / NQ, NQ] when NQ is not a power of two.
 *
 *   qload_bench PTR_DIR TMA_DIR S HKV
 *
 * Each DIR holds qload.cubin and qload.yaml of the same NQ, D and BQ. Both
 * results are checked against the CPU (R poisoned with NaN first); the TMA build must have built its map. Prints one line:
 * microseconds (median of 51 launches, CUDA events), TB/s of Q read, and the
 * pointer / TMA time ratio. */
#include <cuda.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_common.h"

static int64_t constant(const char *yaml_path, const char *name) {
  FILE *f = fopen(yaml_path, "r");
  if (!f) return -1;
  char line[4096], key[64];
  snprintf(key, sizeof key, "%s: ", name);
  int64_t v = -1;
  while (v < 0 && fgets(line, sizeof line, f)) {
    char *at = strstr(line, "constants:");
    char *k = at ? strstr(at, key) : NULL;
    if (k) v = atoll(k + strlen(key));
  }
  fclose(f);
  return v;
}

typedef struct Launch {
  phobos_kernel *k;
  phobos_arg *args;
} Launch;

static void launch_run(void *arg) { PK(phobos_launch(((Launch *)arg)->k, ((Launch *)arg)->args, 2, NULL)); }

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: qload_bench PTR_DIR TMA_DIR S HKV\n");
    return 2;
  }
  if (!host_start("qload_bench")) return 0;
  char path[1024];
  snprintf(path, sizeof path, "%s/qload.yaml", argv[2]);
  int64_t NQ = constant(path, "NQ"), D = constant(path, "D"), BQ = constant(path, "BQ");
  int64_t S = atoll(argv[3]), HKV = atoll(argv[4]), HQ = NQ * HKV;
  if (NQ < 1 || D < 1 || BQ < 1 || S < 1 || HKV < 1) {
    fprintf(stderr, "qload_bench: bad constants or sizes (NQ %lld, D %lld, BQ %lld)\n", (long long)NQ, (long long)D,
            (long long)BQ);
    return 2;
  }
  size_t nq = (size_t)(S * HQ * D), nr = (size_t)(S * HQ);
  float *hq = malloc(sizeof(float) * nq), *hr = malloc(sizeof(float) * nr);
  for (size_t i = 0; i < nq; i++) hq[i] = (float)(2 * uniform() - 1);
  CUdeviceptr q, r;
  CK(cuMemAlloc(&q, sizeof(float) * nq));
  CK(cuMemAlloc(&r, sizeof(float) * nr));
  CK(cuMemcpyHtoD(q, hq, sizeof(float) * nq));
  phobos_arg args[2] = {phobos_tensor_arg(q, PHOBOS_F32, 4, (int64_t[]){1, S, HQ, D}),
                        phobos_tensor_arg(r, PHOBOS_F32, 4, (int64_t[]){1, S, HQ, 1})};
  double us[2];
  int failures = 0;
  for (int w = 0; w < 2; w++) {
    phobos_module *mod;
    phobos_kernel *k;
    snprintf(path, sizeof path, "%s/qload.cubin", argv[1 + w]);
    PK(phobos_module_load(ctx, path, &mod));
    PK(phobos_kernel_get(mod, "qload_edges", &k));
    CK(cuMemsetD8(r, 0xff, sizeof(float) * nr)); /* poison: NaN */
    PK(phobos_launch(k, args, 2, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(hr, r, sizeof(float) * nr));
    double maxerr = 0, maxref = 0;
    int nans = 0;
    for (size_t row = 0; row < nr; row++) {
      double ref = (double)hq[row * (size_t)D] + hq[row * (size_t)D + (size_t)D - 1];
      nans += isnan(hr[row]);
      maxerr = fmax(maxerr, fabs(hr[row] - ref));
      maxref = fmax(maxref, fabs(ref));
    }
    int built, maps = phobos_kernel_last_tensor_maps(k, &built);
    bool ok = maxerr / maxref < 1e-5 && !nans && (w == 0 ? maps == 0 : maps > 0 && built == maps);
    if (!ok)
      printf("qload_bench: %s build wrong: rel err %.2e, %d NaN, %d of %d tensor maps built\n", w ? "TMA" : "pointer",
             maxerr / maxref, nans, built, maps);
    failures += !ok;
    /* as triton.testing.do_bench (flush_l2): the host's launch time, more
     * for TMA since it builds maps, stays out of the figure */
    Launch l = {k, args};
    us[w] = host_median_us(launch_run, flush_l2_before, &l, 5, 51);
  }
  double bytes = (double)nq * 4 + (double)nr * 4;
  printf("Q load NQ %lld (tile [%lld, %lld, %lld] f32, S %lld, HQ %lld): pointer %.1f us %.2f TB/s, TMA %.1f us %.2f TB/s, "
         "TMA speedup %.2fx%s\n",
         (long long)NQ, (long long)BQ, (long long)NQ, (long long)D, (long long)S, (long long)HQ, us[0],
         bytes / (us[0] * 1e-6) / 1e12, us[1], bytes / (us[1] * 1e-6) / 1e12, us[0] / us[1], failures ? "  FAIL" : "");
  CK(cuMemFree(q));
  CK(cuMemFree(r));
  free(hq), free(hr);
  phobos_context_destroy(ctx);
  return failures ? 1 : 0;
}
