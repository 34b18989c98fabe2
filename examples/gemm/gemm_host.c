/* gemm_host: the GEMM example (examples/gemm/gemm.ph) from C through
 * libphobos: C = epilogue(A @ B) in bf16 and f16, f32 accumulation, bias +
 * GELU and bias + ReLU epilogues, ragged M, N and K.
 *
 *   gemm_host [--bench] DIR     DIR holds gemm.cubin and gemm.yaml
 *
 * Each case draws fresh inputs, poisons C with NaN, launches through
 * phobos_launch and checks C against a double-precision reference of the
 * same rounded inputs: every element for the small and ragged shapes, and
 * for the large ones a sample of 4096 elements (each a K-long dot in double)
 * with every element checked for NaN. |got - ref| <= 2^-7 (|ref| + rms(ref))
 * (the output's own rounding is 2^-8 for bf16). With --bench it times each
 * kernel at the sizes issue 20 names with triton's do_bench protocol (the L2
 * flushed before each of 20 reps, the median) and prints TFLOP/s; the peer,
 * torch.mm in the same call, is examples/gemm/peer.py. Prints one line a
 * case and "N passed, M failed"; exit 1 on a failure. */
#include <stdint.h>
#include <string.h>

#include "../host_common.h"

/* host_common.h's bf16 pair, as a float for the decoders' common type */
static float from_bf16f(uint16_t h) { return (float)from_bf16(h); }
/* IEEE half, round to nearest even (the inputs here are normal numbers of
 * modest size: no overflow; subnormals flush) */
static uint16_t to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000, e = (u >> 23) & 0xff, m = u & 0x7fffff;
  int ex = (int)e - 127 + 15;
  if (ex <= 0) return (uint16_t)sign;
  if (ex >= 31) return (uint16_t)(sign | 0x7c00);
  uint32_t h = ((uint32_t)ex << 10) | (m >> 13), rest = m & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}
static float from_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
  if (e == 0) u = sign; /* zero (no subnormals here) */
  else if (e == 31) u = sign | 0x7f800000 | (m << 13);
  else u = sign | ((e - 15 + 127) << 23) | (m << 13);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

enum { EPI_NONE, EPI_GELU, EPI_RELU };
typedef struct Kern {
  const char *name;
  bool f16;
  int epi;
} Kern;
static const Kern kerns[] = {{"gemm_bf16", false, EPI_NONE},
                             {"gemm_bias_gelu_bf16", false, EPI_GELU},
                             {"gemm_f16", true, EPI_NONE},
                             {"gemm_bias_relu_f16", true, EPI_RELU}};

static phobos_module *mod;

typedef struct Run {
  phobos_kernel *k;
  phobos_arg args[4];
  int nargs;
} Run;

static void launch(void *p) {
  Run *r = p;
  PK(phobos_launch(r->k, r->args, r->nargs, NULL));
}

static double epilogue(const Kern *kn, double x) {
  if (kn->epi == EPI_GELU) return 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
  if (kn->epi == EPI_RELU) return x > 0 ? x : 0;
  return x;
}

/* One case: returns true when C matches; *us the median time with --bench */
static bool run_case(const Kern *kn, int64_t M, int64_t N, int64_t K, bool full, bool bench, double *us) {
  size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = (size_t)(M * N);
  uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *bias = malloc((size_t)N * 2), *c = malloc(nc * 2);
  float *af = malloc(na * 4), *bf = malloc(nb * 4), *biasf = malloc((size_t)N * 4);
  if (!a || !b || !bias || !c || !af || !bf || !biasf) {
    fprintf(stderr, "gemm_host: out of memory\n");
    exit(2);
  }
  uint16_t (*to)(float) = kn->f16 ? to_f16 : to_bf16;
  float (*from)(uint16_t) = kn->f16 ? from_f16 : from_bf16f;
  /* A ~ N(0, 1), B ~ N(0, 1/K): C ~ N(0, 1) whatever K */
  double sb = 1 / sqrt((double)K);
  for (size_t i = 0; i < na; i++) a[i] = to((float)normal()), af[i] = from(a[i]);
  for (size_t i = 0; i < nb; i++) b[i] = to((float)(normal() * sb)), bf[i] = from(b[i]);
  for (int64_t i = 0; i < N; i++) bias[i] = to((float)(0.5 * normal())), biasf[i] = from(bias[i]);
  CUdeviceptr da, db, dbias, dc;
  CK(cuMemAlloc(&da, na * 2));
  CK(cuMemAlloc(&db, nb * 2));
  CK(cuMemAlloc(&dbias, (size_t)N * 2));
  CK(cuMemAlloc(&dc, nc * 2));
  CK(cuMemcpyHtoD(da, a, na * 2));
  CK(cuMemcpyHtoD(db, b, nb * 2));
  CK(cuMemcpyHtoD(dbias, bias, (size_t)N * 2));
  CK(cuMemsetD16(dc, 0xffff, nc)); /* NaN in both types: an element left unwritten fails */
  phobos_dtype dt = kn->f16 ? PHOBOS_F16 : PHOBOS_BF16;
  Run r = {.nargs = 0};
  PK(phobos_kernel_get(mod, kn->name, &r.k));
  r.args[r.nargs++] = phobos_tensor_arg(da, dt, 2, (int64_t[]){M, K});
  r.args[r.nargs++] = phobos_tensor_arg(db, dt, 2, (int64_t[]){K, N});
  if (kn->epi != EPI_NONE) r.args[r.nargs++] = phobos_tensor_arg(dbias, dt, 1, (int64_t[]){N});
  r.args[r.nargs++] = phobos_tensor_arg(dc, dt, 2, (int64_t[]){M, N});
  launch(&r);
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(c, dc, nc * 2));
  /* the reference: every element, or a sample; the rms over what is checked */
  size_t nchk = full ? nc : 4096, nan = 0, bad = 0;
  double *ref = malloc(nchk * sizeof *ref), ss = 0, worst = 0;
  size_t *at = malloc(nchk * sizeof *at);
  for (size_t i = 0; i < nc; i++) nan += isnan(from(c[i]));
  for (size_t q = 0; q < nchk; q++) {
    size_t idx = full ? q : (size_t)(uniform() * (double)nc) % nc;
    int64_t i = (int64_t)idx / N, j = (int64_t)idx % N;
    double s = 0;
    for (int64_t kk = 0; kk < K; kk++) s += (double)af[i * K + kk] * bf[kk * N + j];
    if (kn->epi != EPI_NONE) s += biasf[j];
    ref[q] = epilogue(kn, s), at[q] = idx, ss += ref[q] * ref[q];
  }
  double rms = sqrt(ss / (double)nchk);
  for (size_t q = 0; q < nchk; q++) {
    double got = from(c[at[q]]), d = fabs(got - ref[q]);
    if (!(d <= 0x1p-7 * (fabs(ref[q]) + rms))) bad++;
    if (d > worst || isnan(d)) worst = d;
  }
  bool ok = !nan && !bad;
  printf("%s %-20s M %5lld N %5lld K %5lld  %s %zu: worst |diff| %.3g (rms %.3g), NaN %zu, out of tolerance %zu  [%s]\n",
         ok ? "ok  " : "FAIL", kn->name, (long long)M, (long long)N, (long long)K, full ? "all" : "sampled", nchk, worst,
         rms, nan, bad, phobos_kernel_last_variant(r.k));
  if (bench && ok) *us = host_median_us(launch, flush_l2_before, &r, 3, 20);
  CK(cuMemFree(da));
  CK(cuMemFree(db));
  CK(cuMemFree(dbias));
  CK(cuMemFree(dc));
  free(a), free(b), free(bias), free(c), free(af), free(bf), free(biasf), free(ref), free(at);
  return ok;
}

int main(int argc, char **argv) {
  bool bench = argc > 1 && !strcmp(argv[1], "--bench");
  const char *dir = argc > 1 + bench ? argv[1 + bench] : "build/examples";
  if (!host_start("gemm_host")) return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/gemm.cubin", dir);
  PK(phobos_module_load(ctx, path, &mod));
  int passed = 0, failed = 0;
  /* every element: ragged in each dim, tiny, and one K block */
  static const int64_t small[][3] = {{1, 1, 1}, {257, 383, 511}, {64, 64, 64}, {1000, 1000, 1000}, {33, 4097, 129},
                                     {4093, 130, 70}};
  for (size_t kn = 0; kn < sizeof kerns / sizeof *kerns; kn++)
    for (size_t s = 0; s < sizeof small / sizeof *small; s++) {
      double us;
      run_case(&kerns[kn], small[s][0], small[s][1], small[s][2], true, false, &us) ? passed++ : failed++;
    }
  /* the sizes issue 20 names, sampled; timed with --bench */
  static const int64_t big[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 14336, 4096}, {4093, 4096, 4000}};
  for (size_t kn = 0; kn < sizeof kerns / sizeof *kerns; kn++)
    for (size_t s = 0; s < sizeof big / sizeof *big; s++) {
      if (!bench && s > 0 && s != 3) continue; /* without --bench: 4096^3 and the ragged one */
      double us = 0;
      bool ok = run_case(&kerns[kn], big[s][0], big[s][1], big[s][2], false, bench, &us);
      ok ? passed++ : failed++;
      if (bench && ok)
        printf("bench %-20s M %5lld N %5lld K %5lld: %9.1f us, %6.1f TFLOP/s\n", kerns[kn].name, (long long)big[s][0],
               (long long)big[s][1], (long long)big[s][2], us,
               2.0 * (double)big[s][0] * (double)big[s][1] * (double)big[s][2] / (us * 1e-6) / 1e12);
    }
  printf("%d passed, %d failed\n", passed, failed);
  phobos_module_unload(mod);
  phobos_context_destroy(ctx);
  return failed ? 1 : 0;
}
