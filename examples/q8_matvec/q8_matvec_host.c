/* q8_matvec_host.c: runs the Q8_0 matvec kernels through libphobos,
 * checks them against a double-precision CPU reference, and with --bench
 * times them beside a device-to-device copy measured in the same run.
 *
 *   q8_matvec_host [--bench] DIR     DIR holds q8_matvec.cubin,
 *                                    q8_matvec_wide.cubin and q8_matvec_split.cubin
 *                                    (with their .yaml)
 *   q8_matvec_host --bench-split DIR...
 *                                    the split kernel at 4096 x 14336 for
 *                                    each DIR's q8_matvec_split.cubin (A/B runs
 *                                    of variants), beside the copy of the
 *                                    same bytes
 *   q8_matvec_host --one K N DIR
 *                                    the split kernel, 20 launches, for a
 *                                    profiler (ncu --launch-skip 19)
 *
 * The split kernel takes A, W, S and C: its partial sums and counters are
 * the library's (@scratch), and its split count is the autotuner's choice
 * among the variants (printed with each result).
 *
 * Inputs are fresh random values (A normal, W bytes in [-127, 127], S
 * scales in [0.001, 0.02]); C is poisoned with NaN before each launch.
 * Every CUDA call is checked. Bytes moved: K*N + (K/32)*N*4 + K*4 + N*4. */
#include <cuda.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_RNG_SEED 88172645463325252ull
#include "../host_common.h"

typedef struct Problem {
  int64_t K, N;
  int64_t wpitch; /* bytes from one row of W to the next: N, or more for W a view with a row pitch */
  CUdeviceptr A, W, S, C;
  float *hA, *hS, *hC;
  signed char *hW;
} Problem;

static void make_pitched(Problem *p, int64_t K, int64_t N, int64_t wpitch) {
  p->K = K, p->N = N, p->wpitch = wpitch;
  int64_t KB = K / 32;
  p->hA = malloc(sizeof(float) * (size_t)K);
  p->hW = malloc((size_t)(K * N));
  p->hS = malloc(sizeof(float) * (size_t)(KB * N));
  p->hC = malloc(sizeof(float) * (size_t)N);
  for (int64_t i = 0; i < K; i++) p->hA[i] = (float)normal();
  for (int64_t i = 0; i < K * N; i++) p->hW[i] = (signed char)(int)floor(uniform() * 255 - 127);
  for (int64_t i = 0; i < KB * N; i++) p->hS[i] = (float)(0.001 + 0.019 * uniform());
  CK(cuMemAlloc(&p->A, sizeof(float) * (size_t)K));
  CK(cuMemAlloc(&p->W, (size_t)(K * wpitch)));
  CK(cuMemAlloc(&p->S, sizeof(float) * (size_t)(KB * N)));
  CK(cuMemAlloc(&p->C, sizeof(float) * (size_t)N));
  CK(cuMemcpyHtoD(p->A, p->hA, sizeof(float) * (size_t)K));
  if (wpitch == N) {
    CK(cuMemcpyHtoD(p->W, p->hW, (size_t)(K * N)));
  } else { /* the rows at their pitch; the gaps poisoned */
    signed char *h = malloc((size_t)(K * wpitch));
    memset(h, 0x7f, (size_t)(K * wpitch));
    for (int64_t r = 0; r < K; r++) memcpy(h + r * wpitch, p->hW + r * N, (size_t)N);
    CK(cuMemcpyHtoD(p->W, h, (size_t)(K * wpitch)));
    free(h);
  }
  CK(cuMemcpyHtoD(p->S, p->hS, sizeof(float) * (size_t)(KB * N)));
}

static void make(Problem *p, int64_t K, int64_t N) { make_pitched(p, K, N, N); }

static void destroy(Problem *p) {
  CK(cuMemFree(p->A));
  CK(cuMemFree(p->W));
  CK(cuMemFree(p->S));
  CK(cuMemFree(p->C));
  free(p->hA), free(p->hW), free(p->hS), free(p->hC);
}

/* the bytes a matvec moves: K*N + (K/32)*N*4 + K*4 + N*4 */
static double q8_bytes(const Problem *p) { return (double)(p->K * p->N + (p->K / 32) * p->N * 4 + p->K * 4 + p->N * 4); }

/* the bytes the same-size copy moves (timed_run: W's first half onto its second, read and written) */
static double copy_bytes(const Problem *p) { return (double)(p->K * p->N / 2 * 2); }

static phobos_kernel *reducer;

/* tile_n: the seed's columns per CTA (it has no @grid), 0 for a kernel
 * with a @grid (split K too: its partial sums and counters are the
 * library's, and its last CTAs sum the partial rows into C) */
static void launch(phobos_kernel *k, Problem *p, int tile_n) {
  phobos_arg w = phobos_tensor_arg(p->W, PHOBOS_I8, 2, (int64_t[]){p->K, p->N});
  if (p->wpitch != p->N) w.tensor.strides[0] = p->wpitch, w.tensor.strides[1] = 1;
  phobos_arg args[4] = {phobos_tensor_arg(p->A, PHOBOS_F32, 2, (int64_t[]){1, p->K}),
                        w,
                        phobos_tensor_arg(p->S, PHOBOS_F32, 2, (int64_t[]){p->K / 32, p->N}),
                        phobos_tensor_arg(p->C, PHOBOS_F32, 2, (int64_t[]){1, p->N})};
  if (tile_n) { /* the seed's kernel has no @grid */
    int64_t grid[3] = {(p->N + tile_n - 1) / tile_n, 1, 1};
    PK(phobos_launch_grid(k, args, 4, grid, NULL));
  } else {
    PK(phobos_launch(k, args, 4, NULL));
  }
}

/* max |c - ref| / max |ref| over every output, and the NaN count */
static double check(phobos_kernel *k, Problem *p, int tile_n, int *nans) {
  CK(cuMemsetD8(p->C, 0xff, sizeof(float) * (size_t)p->N)); /* poison: NaN */
  launch(k, p, tile_n);
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(p->hC, p->C, sizeof(float) * (size_t)p->N));
  double maxerr = 0, maxref = 0;
  *nans = 0;
  for (int64_t n = 0; n < p->N; n++) {
    double ref = 0;
    for (int64_t kk = 0; kk < p->K; kk++) ref += (double)p->hA[kk] * p->hW[kk * p->N + n] * p->hS[(kk / 32) * p->N + n];
    if (isnan(p->hC[n])) (*nans)++;
    maxerr = fmax(maxerr, fabs(p->hC[n] - ref));
    maxref = fmax(maxref, fabs(ref));
  }
  return maxerr / maxref;
}

/* The L2 state a timed rep starts in. FLUSH_MEMSET is how
 * triton.testing.do_bench times the peer: before each rep a 256 MiB memset
 * evicts the inputs from L2 (50 MiB on the H200), and the events around the
 * launch are enqueued while that memset still runs, so the host's time to
 * submit the launch is hidden behind it rather than counted as device time.
 * But the memset leaves the L2 full of dirty lines, and the timed kernel
 * pays for writing them back to DRAM while it reads its own inputs.
 * FLUSH_CLEAN follows the memset with a kernel that reads another 256 MiB
 * (q8_reduce summing 1024 rows, writing 256 KiB): the dirty lines are
 * written back during that kernel, and the timed rep starts with an L2 that
 * holds none of its inputs and nothing to write back, as a decode step's
 * projection finds it after a kernel that wrote little. IDLE starts each rep
 * on an idle GPU (inputs partly still in L2 from the rep before, the host's
 * launch counted), the figure this program reported first. */
typedef enum { FLUSH_MEMSET, FLUSH_CLEAN, IDLE } L2State;

static void flush(L2State how, unsigned rep) {
  static CUdeviceptr big, out;
  if (how == IDLE) return;
  flush_l2(rep);
  if (how == FLUSH_MEMSET) return;
  enum { ROWS = 1024, COLS = 65536 };
  if (!big) {
    CK(cuMemAlloc(&big, sizeof(float) * (size_t)ROWS * COLS));
    CK(cuMemsetD32(big, 0, (size_t)ROWS * COLS));
    CK(cuMemAlloc(&out, sizeof(float) * COLS));
  }
  phobos_arg r[2] = {phobos_tensor_arg(big, PHOBOS_F32, 2, (int64_t[]){ROWS, COLS}),
                     phobos_tensor_arg(out, PHOBOS_F32, 2, (int64_t[]){1, COLS})};
  PK(phobos_launch(reducer, r, 2, NULL));
}

/* one timed run: a launch, or with no kernel a device-to-device copy
 * moving about as many bytes as the problem reads (W's first half onto its
 * second: the bench's weights are no longer checked by then) */
typedef struct Timed {
  phobos_kernel *k;
  Problem *p;
  int tile_n;
  L2State how;
} Timed;

static void timed_run(void *arg) {
  Timed *t = arg;
  if (t->k) {
    launch(t->k, t->p, t->tile_n);
  } else {
    size_t half = (size_t)(t->p->K * t->p->N) / 2;
    CK(cuMemcpyDtoDAsync(t->p->W + half, t->p->W, half, NULL));
  }
}

static void timed_before(void *arg, unsigned rep) { flush(((Timed *)arg)->how, rep); }

/* Median microseconds of `reps` launches, each after flush(how) */
static double median_us_how(phobos_kernel *k, Problem *p, int tile_n, int reps, L2State how) {
  Timed t = {k, p, tile_n, how};
  return host_median_us(timed_run, timed_before, &t, k ? 5 : 0, reps);
}

static double median_us(phobos_kernel *k, Problem *p, int tile_n, int reps) {
  return median_us_how(k, p, tile_n, reps, FLUSH_MEMSET);
}

typedef struct Copy {
  CUdeviceptr from, to;
  size_t n;
} Copy;

static void copy_run(void *arg) {
  Copy *c = arg;
  CK(cuMemcpyDtoDAsync(c->to, c->from, c->n, NULL));
}

/* device-to-device copy of 1 GiB: bytes read + written per second */
static double copy_tbps(void) {
  Copy c = {.n = (size_t)1 << 30};
  CK(cuMemAlloc(&c.from, c.n));
  CK(cuMemAlloc(&c.to, c.n));
  CK(cuMemsetD8(c.from, 1, c.n));
  double us = host_median_us(copy_run, NULL, &c, 3, 21);
  CK(cuMemFree(c.from));
  CK(cuMemFree(c.to));
  return 2.0 * (double)c.n / (us * 1e-6) / 1e12;
}

/* --bench-split: each DIR's split kernel at 4096 x 14336, checked, then
 * timed (the autotuner's variant) from two L2 states; returns the failures */
static int bench_split(int ndirs, char **dirs) {
  Problem p;
  make(&p, 4096, 14336);
  double bytes = q8_bytes(&p);
  int fail = 0;
  for (int d = 0; d < ndirs; d++) {
    char path[1024];
    phobos_module *m;
    phobos_kernel *k;
    snprintf(path, sizeof path, "%s/q8_matvec_split.cubin", dirs[d]);
    PK(phobos_module_load(ctx, path, &m));
    PK(phobos_kernel_get(m, "q8_matvec_split", &k));
    PK(phobos_kernel_get(m, "q8_reduce", &reducer));
    int nans;
    double e = check(k, &p, 0, &nans);
    fail += !(e < 1e-5 && !nans);
    double best = median_us(k, &p, 0, 31);
    double clean = median_us_how(k, &p, 0, 31, FLUSH_CLEAN);
    printf("split 4096x14336 memset %.1f us %.2f TB/s | clean %.1f us %.2f TB/s | %s of %s%s\n", best,
           bytes / (best * 1e-6) / 1e12, clean, bytes / (clean * 1e-6) / 1e12, phobos_kernel_last_variant(k), dirs[d],
           e < 1e-5 && !nans ? "" : " | CHECK FAILED");
  }
  double cm = median_us_how(NULL, &p, 0, 31, FLUSH_MEMSET), cc = median_us_how(NULL, &p, 0, 31, FLUSH_CLEAN);
  double cb = copy_bytes(&p);
  printf("copy same B      memset %.1f us %.2f TB/s | clean %.1f us %.2f TB/s\n", cm, cb / (cm * 1e-6) / 1e12, cc,
         cb / (cc * 1e-6) / 1e12);
  destroy(&p);
  return fail;
}

int main(int argc, char **argv) {
  if (argc > 2 && !strcmp(argv[1], "--bench-split")) {
    if (!host_start("q8_matvec")) return 0;
    int fail = bench_split(argc - 2, argv + 2);
    phobos_context_destroy(ctx);
    printf("%d passed, %d failed\n", (argc - 2) - fail, fail);
    return fail ? 1 : 0;
  }
  bool bench = argc > 1 && !strcmp(argv[1], "--bench");
  bool one = argc == 5 && !strcmp(argv[1], "--one");
  const char *dir = one ? argv[4] : argc > 1 + bench ? argv[1 + bench] : "build/examples";
  if (!host_start("q8_matvec")) return 0;
  char path[1024];
  phobos_module *seed_mod, *wide_mod;
  phobos_kernel *seed, *wide;
  snprintf(path, sizeof path, "%s/q8_matvec.cubin", dir);
  PK(phobos_module_load(ctx, path, &seed_mod));
  PK(phobos_kernel_get(seed_mod, "q8_matvec", &seed));
  snprintf(path, sizeof path, "%s/q8_matvec_wide.cubin", dir);
  PK(phobos_module_load(ctx, path, &wide_mod));
  PK(phobos_kernel_get(wide_mod, "q8_matvec_wide", &wide));
  phobos_module *split_mod;
  phobos_kernel *split;
  snprintf(path, sizeof path, "%s/q8_matvec_split.cubin", dir);
  PK(phobos_module_load(ctx, path, &split_mod));
  PK(phobos_kernel_get(split_mod, "q8_matvec_split", &split));
  PK(phobos_kernel_get(split_mod, "q8_reduce", &reducer));

  if (one) {
    Problem p;
    make(&p, atoll(argv[2]), atoll(argv[3]));
    double us = median_us(split, &p, 0, 15);
    printf("split K=%lld N=%lld: %.1f us (%s)\n", (long long)p.K, (long long)p.N, us, phobos_kernel_last_variant(split));
    destroy(&p);
    phobos_context_destroy(ctx);
    return 0;
  }
  /* 160 x 1001: rows of an odd byte count, so the weight loads take the
   * element-by-element path (no 4-byte alignment) and the last chunk is cut */
  static const int64_t shapes[][2] = {{160, 1001}, {4096, 4096}, {4096, 14336}, {14336, 4096}, {8192, 28672}};
  int failures = 0, checks = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int pitched = 0; pitched < 2; pitched++) {
      /* W a view of wider rows: 64 bytes more (aligned rows), or 13 (odd) for 160 x 1001 */
      int64_t N = shapes[i][1], wp = !pitched ? N : N % 16 ? N + 13 : N + 64;
      char tag[48] = "";
      if (pitched) snprintf(tag, sizeof tag, " W pitch %lld", (long long)wp);
      Problem p;
      make_pitched(&p, shapes[i][0], N, wp);
      int nans;
      double e1 = check(seed, &p, 64, &nans);
      printf("check seed q8_matvec K=%-6lld N=%-6lld%s rel err %.2e, %d NaN  %s\n", (long long)p.K, (long long)p.N, tag,
             e1, nans, e1 < 1e-5 && !nans ? "ok" : "FAIL");
      failures += !(e1 < 1e-5 && !nans);
      double e2 = check(wide, &p, 0, &nans);
      printf("check wide q8_matvec K=%-6lld N=%-6lld%s rel err %.2e, %d NaN  %s\n", (long long)p.K, (long long)p.N, tag,
             e2, nans, e2 < 1e-5 && !nans ? "ok" : "FAIL");
      failures += !(e2 < 1e-5 && !nans);
      double e3 = check(split, &p, 0, &nans);
      printf("check split-K q8_matvec K=%-6lld N=%-6lld%s rel err %.2e, %d NaN  %s (%s)\n", (long long)p.K,
             (long long)p.N, tag, e3, nans, e3 < 1e-5 && !nans ? "ok" : "FAIL", phobos_kernel_last_variant(split));
      failures += !(e3 < 1e-5 && !nans);
      checks += 3;
      destroy(&p);
    }
  if (bench) {
    double copy = copy_tbps();
    printf("\n==== q8_matvec on %s (copy: %.2f TB/s read+write, same run; median, L2 flushed before each rep, as do_bench)\n", "device 0", copy);
    printf("%-14s %9s %6s %7s %9s %6s %7s %9s %6s %7s\n", "K x N", "seed us", "TB/s", "vs copy", "wide us", "TB/s",
           "vs copy", "split us", "TB/s", "vs copy");
    for (size_t i = 1; i < sizeof shapes / sizeof shapes[0]; i++) {
      Problem p;
      make(&p, shapes[i][0], shapes[i][1]);
      double bytes = q8_bytes(&p);
      /* the split count is the autotuner's (a KSPLIT per variant) */
      double us1 = median_us(seed, &p, 64, 51), us2 = median_us(wide, &p, 0, 51), us3 = median_us(split, &p, 0, 51);
      const char *chosen = phobos_kernel_last_variant(split);
      /* the same on a W with a row pitch (64 bytes more a row), same call */
      Problem pp;
      make_pitched(&pp, p.K, p.N, p.N + 64);
      double usp = median_us(split, &pp, 0, 51);
      destroy(&pp);
      double clean = median_us_how(split, &p, 0, 51, FLUSH_CLEAN);
      double idle = median_us_how(split, &p, 0, 51, IDLE);
      double t1 = bytes / (us1 * 1e-6) / 1e12, t2 = bytes / (us2 * 1e-6) / 1e12, t3 = bytes / (us3 * 1e-6) / 1e12;
      printf("%6lldx%-7lld %9.1f %6.2f %6.0f%% %9.1f %6.2f %6.0f%% %9.1f %6.2f %6.0f%%  %s\n", (long long)p.K,
             (long long)p.N, us1, t1, 100 * t1 / copy, us2, t2, 100 * t2 / copy, us3, t3, 100 * t3 / copy, chosen);
      /* the same split kernel and a copy of the same bytes from other L2 states */
      double cm = median_us_how(NULL, &p, 0, 51, FLUSH_MEMSET), cc = median_us_how(NULL, &p, 0, 51, FLUSH_CLEAN),
             ci = median_us_how(NULL, &p, 0, 51, IDLE);
      double cb = copy_bytes(&p);
      printf("%14s L2 after: memset %.1f us %.2f TB/s | clean flush %.1f us %.2f TB/s | idle %.1f us %.2f TB/s\n", "split",
             us3, t3, clean, bytes / (clean * 1e-6) / 1e12, idle, bytes / (idle * 1e-6) / 1e12);
      printf("%14s W with a row pitch of %lld bytes: %.1f us %.2f TB/s (contiguous %.1f us)\n", "split",
             (long long)(p.N + 64), usp, bytes / (usp * 1e-6) / 1e12, us3);
      printf("%14s L2 after: memset %.1f us %.2f TB/s | clean flush %.1f us %.2f TB/s | idle %.1f us %.2f TB/s\n",
             "copy same B", cm, cb / (cm * 1e-6) / 1e12, cc, cb / (cc * 1e-6) / 1e12, ci, cb / (ci * 1e-6) / 1e12);
      destroy(&p);
    }
  }
  phobos_context_destroy(ctx);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
