/* gqa_host.c: runs the GQA attention example through libphobos, checks it
 * against a double-precision CPU reference, and with --bench times prefill
 * and decode shapes.
 *
 *   gqa_host [--bench] DIR     DIR holds gqa_attention_nq{N}_d{D}.cubin and
 *                              gqa_decode_nq{N}_d{D}.cubin (and their .yaml)
 *                              for N in {1, 2, 4, 7, 8}, D in {64, 128}
 *   gqa_host --bench-prefill CUBIN...
 *                              the prefill benchmark alone (NQ 7, D 128) for
 *                              each prefill cubin: A/B runs of phobosc options
 *                              or pinned @autotune points (tests/gpu/run.sh)
 *   gqa_host --bench-decode CUBIN...
 *                              the decode benchmark alone for each decode
 *                              cubin, at 1 to 16 key splits, and the split
 *                              kernel alone at the best count (what the merge
 *                              and its launch cost); the shape is B 16, HQ 28 /
 *                              HKV 4, or the B, HQ and HKV that
 *                              GQA_DECODE_SHAPE names ("64,7,1": the same
 *                              bytes with each head's keys one stream)
 *   gqa_host --bench-one-call DIR
 *                              the one-call decode (gqa_decode, NQ 7, D 128)
 *                              alone at issue 21's shapes: the library's
 *                              split count, each variant pinned, the pair
 *                              (DIR as for --bench: the NQ 7, D 128 cubins);
 *                              GQA_ONE_CALL_SHAPE=B,T: that shape alone,
 *                              no variant pinned; GQA_ONE_CALL_PIN=ENTRY:
 *                              that entry in place of the library's choice
 *
 * The check runs the matrix the example promises: NQ in {1, 2, 4, 7, 8}, D
 * in {64, 128}, causal (bottom-right aligned, T > S) and full, S and T not
 * multiples of the blocks, bf16. Every output element counts: the error is
 * max |o - ref| / max |ref| over all of O, and must stay under 2e-2 (bf16
 * inputs and P rounded to bf16 before the second product). O is poisoned
 * with NaN before each launch; any NaN fails.
 *
 * Decode (gqa_decode.ph) splits the keys across CTAs and merges the
 * partial softmaxes. gqa_decode does it in one call on Q, K, V and O: the
 * library owns the partials and counters (@scratch) and its autotuner picks
 * the split count; gqa_decode_split + gqa_decode_merge is the same in two
 * launches on partials the caller allocates, at the caller's split count.
 * The check runs both (S 1 and 3, T 300; 5 splits for the pair).
 *
 * --bench times, as triton.testing.do_bench does (a 256 MiB memset before
 * each of 21 reps, the median), prefill B 1, HQ 28 / HKV 4, S = T = 4096,
 * D 128, causal and full (TFLOP/s: 4 S T D HQ, halved for causal) and
 * decode B 16, HQ 28 / HKV 4, S 1, T 8192 (TB/s: the K and V bytes) with
 * the prefill kernel and with the split decode at 4 to 32 key splits;
 * then gqa_decode, the library's own choices, at the shapes of issue 21:
 * B 16 T 8192, B 1 T 32768, B 64 T 4096 and B 1 T 131072 (peer_decode.py
 * times cuDNN at the same shapes). Each is checked on sampled query
 * positions first. Each prefill and one-call decode line names the variant
 * the autotuner chose. */
#include <cuda.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host_common.h"

typedef struct Shape {
  int64_t B, S, T, HQ, HKV, D;
  bool causal;
} Shape;

/* Where Q, K and V live on the device: each its own contiguous tensor, or
 * views with strides (spec 16.3): for prefill one packed QKV projection
 * [B, S, HQ + 2 HKV, D] (a token's Q heads, then its K and V heads: the
 * serving layout of vLLM and llama.cpp); for decode Q out of the new
 * tokens' packed QKV and K and V out of one cache [B, T + 64, 2, HKV, D]
 * (room for 64 more tokens; a token's K heads, then its V heads). */
enum { LAYOUT_CONTIGUOUS, LAYOUT_PACKED };

typedef struct Problem {
  Shape s;
  int layout;
  uint16_t *q, *k, *v, *o;
  CUdeviceptr dq, dk, dv, d_o;
  CUdeviceptr dqkv, dcache;                    /* LAYOUT_PACKED: the buffers the views are of */
  int64_t qst[4], kst[4], vst[4];              /* the views' strides (elements); zeros: contiguous */
  int64_t ns;             /* decode: key splits (0: the prefill kernel; NS_LIBRARY: gqa_decode) */
  CUdeviceptr dop, dlse;  /* decode: partial outputs and log-sum-exps */
} Problem;

/* Problem.ns for the one-call decode: its split count is the autotuner's */
enum { NS_LIBRARY = -1 };

/* the kernels: prefill (gqa_attention.ph) or decode (gqa_decode.ph: one
 * call, or split and merge) */
typedef struct Kernels {
  phobos_kernel *attn, *decode, *split, *merge;
} Kernels;

static size_t nq_elems(const Shape *s) { return (size_t)(s->B * s->S * s->HQ * s->D); }
static size_t nkv_elems(const Shape *s) { return (size_t)(s->B * s->T * s->HKV * s->D); }

/* the rows of a contiguous [B, N, H, D] host tensor into a buffer whose
 * token rows are W heads wide, from head h0 on, tokens N2 apart a batch */
static void scatter(uint16_t *buf, const uint16_t *t, int64_t B, int64_t N, int64_t H, int64_t D, int64_t W, int64_t h0,
                    int64_t N2) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t n = 0; n < N; n++)
      memcpy(buf + ((b * N2 + n) * W + h0) * D, t + (b * N + n) * H * D, sizeof(uint16_t) * (size_t)(H * D));
}

static void make_layout(Problem *p, Shape s, int layout) {
  p->s = s;
  p->layout = layout;
  size_t nq = nq_elems(&s), nkv = nkv_elems(&s);
  p->q = malloc(2 * nq), p->o = malloc(2 * nq), p->k = malloc(2 * nkv), p->v = malloc(2 * nkv);
  for (size_t i = 0; i < nq; i++) p->q[i] = to_bf16((float)normal());
  for (size_t i = 0; i < nkv; i++) p->k[i] = to_bf16((float)normal()), p->v[i] = to_bf16((float)normal());
  CK(cuMemAlloc(&p->d_o, 2 * nq));
  memset(p->qst, 0, sizeof p->qst), memset(p->kst, 0, sizeof p->kst), memset(p->vst, 0, sizeof p->vst);
  p->dqkv = p->dcache = 0;
  if (layout == LAYOUT_CONTIGUOUS) {
    CK(cuMemAlloc(&p->dq, 2 * nq));
    CK(cuMemAlloc(&p->dk, 2 * nkv));
    CK(cuMemAlloc(&p->dv, 2 * nkv));
    CK(cuMemcpyHtoD(p->dq, p->q, 2 * nq));
    CK(cuMemcpyHtoD(p->dk, p->k, 2 * nkv));
    CK(cuMemcpyHtoD(p->dv, p->v, 2 * nkv));
  } else {
    int64_t D = s.D, W = s.HQ + 2 * s.HKV;
    bool prefill = s.S == s.T; /* K and V come from the same tokens' projection */
    size_t nqkv = (size_t)(s.B * s.S * W * D);
    uint16_t *h = calloc(nqkv, 2);
    scatter(h, p->q, s.B, s.S, s.HQ, D, W, 0, s.S);
    if (prefill) scatter(h, p->k, s.B, s.T, s.HKV, D, W, s.HQ, s.S), scatter(h, p->v, s.B, s.T, s.HKV, D, W, s.HQ + s.HKV, s.S);
    CK(cuMemAlloc(&p->dqkv, 2 * nqkv));
    CK(cuMemcpyHtoD(p->dqkv, h, 2 * nqkv));
    free(h);
    p->dq = p->dqkv;
    int64_t qst[4] = {s.S * W * D, W * D, D, 1};
    memcpy(p->qst, qst, sizeof qst);
    if (prefill) {
      p->dk = p->dqkv + 2 * (size_t)(s.HQ * D), p->dv = p->dqkv + 2 * (size_t)((s.HQ + s.HKV) * D);
      memcpy(p->kst, qst, sizeof qst), memcpy(p->vst, qst, sizeof qst);
    } else {
      int64_t Tc = s.T + 64;
      size_t ncache = (size_t)(s.B * Tc * 2 * s.HKV * D);
      h = calloc(ncache, 2);
      scatter(h, p->k, s.B, s.T, s.HKV, D, 2 * s.HKV, 0, Tc), scatter(h, p->v, s.B, s.T, s.HKV, D, 2 * s.HKV, s.HKV, Tc);
      CK(cuMemAlloc(&p->dcache, 2 * ncache));
      CK(cuMemcpyHtoD(p->dcache, h, 2 * ncache));
      free(h);
      int64_t kst[4] = {Tc * 2 * s.HKV * D, 2 * s.HKV * D, D, 1};
      p->dk = p->dcache, p->dv = p->dcache + 2 * (size_t)(s.HKV * D);
      memcpy(p->kst, kst, sizeof kst), memcpy(p->vst, kst, sizeof kst);
    }
  }
  p->ns = 0, p->dop = p->dlse = 0;
}

static void make(Problem *p, Shape s) { make_layout(p, s, LAYOUT_CONTIGUOUS); }

/* the decode path with ns key splits (any number: gqa_decode_merge walks them 32 at a time) */
static void use_splits(Problem *p, int64_t ns) {
  if (p->dop) {
    CK(cuMemFree(p->dop));
    CK(cuMemFree(p->dlse));
  }
  p->ns = ns;
  size_t rows = (size_t)(p->s.B * p->s.S * p->s.HQ);
  CK(cuMemAlloc(&p->dop, sizeof(float) * rows * (size_t)(ns * p->s.D)));
  CK(cuMemAlloc(&p->dlse, sizeof(float) * rows * (size_t)ns));
}

static void destroy(Problem *p) {
  CK(cuMemFree(p->d_o));
  if (p->layout == LAYOUT_CONTIGUOUS) {
    CK(cuMemFree(p->dq));
    CK(cuMemFree(p->dk));
    CK(cuMemFree(p->dv));
  } else {
    CK(cuMemFree(p->dqkv));
    if (p->dcache) CK(cuMemFree(p->dcache));
  }
  if (p->dop) {
    CK(cuMemFree(p->dop));
    CK(cuMemFree(p->dlse));
  }
  free(p->q), free(p->k), free(p->v), free(p->o);
}

static void launch(const Kernels *k, Problem *p) {
  const Shape *s = &p->s;
  phobos_arg q = phobos_tensor_arg(p->dq, PHOBOS_BF16, 4, (int64_t[]){s->B, s->S, s->HQ, s->D}),
             kk = phobos_tensor_arg(p->dk, PHOBOS_BF16, 4, (int64_t[]){s->B, s->T, s->HKV, s->D}),
             v = phobos_tensor_arg(p->dv, PHOBOS_BF16, 4, (int64_t[]){s->B, s->T, s->HKV, s->D}),
             o = phobos_tensor_arg(p->d_o, PHOBOS_BF16, 4, (int64_t[]){s->B, s->S, s->HQ, s->D}),
             scale = phobos_float_arg(1.0 / sqrt((double)s->D)), causal = phobos_bool_arg(s->causal);
  memcpy(q.tensor.strides, p->qst, sizeof p->qst);
  memcpy(kk.tensor.strides, p->kst, sizeof p->kst);
  memcpy(v.tensor.strides, p->vst, sizeof p->vst);
  if (p->ns <= 0) {
    phobos_arg a[6] = {q, kk, v, o, scale, causal};
    PK(phobos_launch(p->ns ? k->decode : k->attn, a, 6, NULL));
    return;
  }
  phobos_arg op = phobos_tensor_arg(p->dop, PHOBOS_F32, 5, (int64_t[]){s->B, s->S, s->HQ, p->ns, s->D}),
             lse = phobos_tensor_arg(p->dlse, PHOBOS_F32, 4, (int64_t[]){s->B, s->S, s->HQ, p->ns});
  phobos_arg a[7] = {q, kk, v, op, lse, scale, causal}, m[3] = {op, lse, o};
  PK(phobos_launch(k->split, a, 7, NULL));
  if (k->merge) PK(phobos_launch(k->merge, m, 3, NULL)); /* none: the split kernel alone (timing) */
}

/* One output row (b, i, hq) in double from the bf16 inputs; ref[D]. */
static void ref_row(const Problem *p, int64_t b, int64_t i, int64_t hq, double *ref, double *w) {
  const Shape *s = &p->s;
  int64_t nq = s->HQ / s->HKV, hk = hq / nq, D = s->D;
  const uint16_t *q = p->q + ((b * s->S + i) * s->HQ + hq) * D;
  int64_t last = s->causal ? i + (s->T - s->S) : s->T - 1; /* bottom-right aligned */
  double mx = -INFINITY;
  for (int64_t j = 0; j < s->T; j++) {
    w[j] = -INFINITY;
    if (j > last) continue;
    const uint16_t *k = p->k + ((b * s->T + j) * s->HKV + hk) * D;
    double d = 0;
    for (int64_t c = 0; c < D; c++) d += from_bf16(q[c]) * from_bf16(k[c]);
    w[j] = d / sqrt((double)D);
    if (w[j] > mx) mx = w[j];
  }
  double sum = 0;
  for (int64_t c = 0; c < D; c++) ref[c] = 0;
  for (int64_t j = 0; j <= last && j < s->T; j++) {
    double e = exp(w[j] - mx);
    sum += e;
    const uint16_t *v = p->v + ((b * s->T + j) * s->HKV + hk) * D;
    for (int64_t c = 0; c < D; c++) ref[c] += e * from_bf16(v[c]);
  }
  for (int64_t c = 0; c < D; c++) ref[c] = sum > 0 ? ref[c] / sum : 0;
}

/* Runs once on a poisoned O and compares: every row when rows is 0, else
 * that many sampled query positions (all heads of each). Returns the error
 * max |o - ref| / max |ref|, or INFINITY for a NaN. */
static double check(const Kernels *k, Problem *p, int rows) {
  const Shape *s = &p->s;
  size_t nq = nq_elems(s);
  CK(cuMemsetD8(p->d_o, 0xff, 2 * nq)); /* poison: bf16 NaN */
  launch(k, p);
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(p->o, p->d_o, 2 * nq));
  double *ref = malloc(sizeof(double) * (size_t)s->D), *w = malloc(sizeof(double) * (size_t)s->T);
  double maxerr = 0, maxref = 0;
  bool nan = false;
  /* sampled rows where there are more than asked for, else all of them */
  bool sample = rows && rows < s->B * s->S;
  int64_t n = sample ? rows : s->B * s->S;
  for (int64_t r = 0; r < n; r++) {
    int64_t bi = sample ? (int64_t)(uniform() * (double)(s->B * s->S)) : r;
    int64_t b = bi / s->S, i = bi % s->S;
    for (int64_t h = 0; h < s->HQ; h++) {
      ref_row(p, b, i, h, ref, w);
      const uint16_t *o = p->o + ((b * s->S + i) * s->HQ + h) * s->D;
      for (int64_t c = 0; c < s->D; c++) {
        double x = from_bf16(o[c]);
        if (isnan(x)) nan = true;
        maxerr = fmax(maxerr, fabs(x - ref[c]));
        maxref = fmax(maxref, fabs(ref[c]));
      }
    }
  }
  free(ref), free(w);
  return nan ? INFINITY : maxerr / fmax(maxref, 1e-30);
}

typedef struct Timed {
  const Kernels *k;
  Problem *p;
} Timed;

static void timed_run(void *arg) { launch(((Timed *)arg)->k, ((Timed *)arg)->p); }

/* median microseconds, each rep behind a 256 MiB memset (do_bench's way) */
static double median_us(const Kernels *k, Problem *p) {
  Timed t = {k, p};
  return host_median_us(timed_run, flush_l2_before, &t, 3, 21);
}

static Kernels kernels_for(const char *dir, int64_t nq, int64_t d) {
  char path[1024];
  phobos_module *m;
  Kernels k;
  snprintf(path, sizeof path, "%s/gqa_attention_nq%lld_d%lld.cubin", dir, (long long)nq, (long long)d);
  PK(phobos_module_load(ctx, path, &m));
  PK(phobos_kernel_get(m, "gqa_attention", &k.attn));
  snprintf(path, sizeof path, "%s/gqa_decode_nq%lld_d%lld.cubin", dir, (long long)nq, (long long)d);
  PK(phobos_module_load(ctx, path, &m));
  PK(phobos_kernel_get(m, "gqa_decode", &k.decode));
  PK(phobos_kernel_get(m, "gqa_decode_split", &k.split));
  PK(phobos_kernel_get(m, "gqa_decode_merge", &k.merge));
  return k;
}

/* key splits for decode: about 640 one-warp CTAs in all, five an SM (with
 * @pipeline's stages a CTA holds 39 to 144 KB of shared memory; the tuned
 * BK 32, 2 stages, 39 KB, fits five): calls 7 and 9 of 2026-11-30 measured
 * B 16, HKV 4, T 8192 best at 10 splits, 93.7 us, 640 CTAs in one wave; 12
 * to 32 splits, two waves and more, were 30 to 60% slower. One 64-key tile
 * each at least; no ceiling (the merge takes any number), so B 1 at T 32768
 * splits 160 ways, where 32 was the merge's ceiling (1.39 TB/s against
 * cuDNN's 2.02, 2026-12-01): not yet measured. */
static int64_t splits_for(const Shape *s) {
  int64_t rows = s->B * s->HKV * ((s->S + 1) / 2), ns = (640 + rows - 1) / rows, tiles = (s->T + 63) / 64;
  if (ns > tiles) ns = tiles;
  return ns < 1 ? 1 : ns;
}

/* The prefill benchmark (B 1, HQ 28 / HKV 4, S = T = 4096, D 128, causal
 * and full) of one prefill cubin, for A/B runs of compiler options or
 * autotune points (--bench-prefill CUBIN...). Returns the failures. */
static int bench_prefill(const Kernels *k, const char *tag) {
  int fail = 0;
  /* GQA_CONTIGUOUS_ONLY=1: no packed runs (a cubin from before strides
   * takes only contiguous tensors: an A/B against one) */
  const char *only = getenv("GQA_CONTIGUOUS_ONLY");
  int layouts = only && !strcmp(only, "1") ? 1 : 2;
  for (int causal = 1; causal >= 0; causal--)
    for (int layout = 0; layout < layouts; layout++) {
      Shape s = {1, 4096, 4096, 28, 4, 128, causal};
      /* GQA_PREFILL_SHAPE=B,HQ,HKV,S: another shape (S = T) */
      const char *env = getenv("GQA_PREFILL_SHAPE");
      long long eb, eq, ek, es;
      if (env && sscanf(env, "%lld,%lld,%lld,%lld", &eb, &eq, &ek, &es) == 4 && eb > 0 && ek > 0 && eq > 0 &&
          eq % ek == 0 && es > 0)
        s.B = eb, s.HQ = eq, s.HKV = ek, s.S = s.T = es;
      Problem p;
      make_layout(&p, s, layout);
      double err = check(k, &p, 48);
      bool ok = err < 2e-2;
      fail += !ok;
      double us = median_us(k, &p), flop = 4.0 * s.B * s.S * s.T * s.D * s.HQ * (causal ? 0.5 : 1.0);
      printf("prefill B %lld HQ %lld/%lld S = T = %lld %-6s%s %10.1f us %7.1f TFLOP/s  (48 rows checked: rel err "
             "%.2e %s; %s%s%s)\n",
             (long long)s.B, (long long)s.HQ, (long long)s.HKV, (long long)s.S, causal ? "causal" : "full",
             layout ? " Q/K/V packed" : "", us, flop / (us * 1e-6) / 1e12, err,
             ok ? "ok" : "FAIL", phobos_kernel_last_variant(k->attn), tag ? " of " : "", tag ? tag : "");
      destroy(&p);
    }
  return fail;
}

/* The decode benchmark (B 16, HQ 28 / HKV 4, or GQA_DECODE_SHAPE's B, HQ
 * and HKV; S 1, T 8192, D 128) of one decode cubin at 1 to 16 key splits,
 * then the split kernel alone (--bench-decode CUBIN...). Returns the
 * failures. */
static int bench_decode(const Kernels *k, const char *tag) {
  static const int64_t sweep[] = {1, 2, 3, 4, 6, 8, 10, 16};
  int fail = 0;
  Shape s = {16, 1, 8192, 28, 4, 128, false};
  const char *env = getenv("GQA_DECODE_SHAPE");
  long long eb, eq, ek;
  if (env && sscanf(env, "%lld,%lld,%lld", &eb, &eq, &ek) == 3 && eb > 0 && ek > 0 && eq > 0 && eq % ek == 0)
    s.B = eb, s.HQ = eq, s.HKV = ek;
  Problem p;
  make(&p, s);
  double bytes = 2.0 * 2 * (double)nkv_elems(&s), best = 1e30;
  int64_t bns = 1;
  if (k->decode) { /* the one call, at the autotuner's split count */
    p.ns = NS_LIBRARY;
    double err = check(k, &p, 16), us = median_us(k, &p);
    fail += !(err < 2e-2);
    printf("decode  B %lld HQ %lld / HKV %lld S 1 T 8192 one call  %8.1f us %7.2f TB/s  (16 rows checked: rel err %.2e %s; %s of %s)\n",
           (long long)s.B, (long long)s.HQ, (long long)s.HKV, us, bytes / (us * 1e-6) / 1e12, err, err < 2e-2 ? "ok" : "FAIL",
           phobos_kernel_last_variant(k->decode), tag);
  }
  for (size_t si = 0; si < sizeof sweep / sizeof sweep[0]; si++) {
    use_splits(&p, sweep[si]);
    double err = check(k, &p, 16);
    bool ok = err < 2e-2;
    fail += !ok;
    double us = median_us(k, &p);
    if (us < best) best = us, bns = sweep[si];
    printf("decode  B %lld HQ %lld / HKV %lld S 1 T 8192 %3lld splits %8.1f us %7.2f TB/s  (16 rows checked: rel err %.2e %s; %s of %s)\n",
           (long long)s.B, (long long)s.HQ, (long long)s.HKV, (long long)sweep[si], us, bytes / (us * 1e-6) / 1e12, err, ok ? "ok" : "FAIL",
           phobos_kernel_last_variant(k->split), tag);
  }
  /* the same at the best split count on a packed Q and a K/V cache with room */
  destroy(&p);
  const char *only = getenv("GQA_CONTIGUOUS_ONLY");
  if (only && !strcmp(only, "1")) return fail;
  make_layout(&p, s, LAYOUT_PACKED);
  use_splits(&p, bns);
  double err = check(k, &p, 16), pus = median_us(k, &p);
  fail += !(err < 2e-2);
  printf("decode  B %lld HQ %lld / HKV %lld S 1 T 8192 %3lld splits %8.1f us %7.2f TB/s  Q packed, K/V of a cache "
         "(16 rows checked: rel err %.2e %s; contiguous %.1f us)\n", (long long)s.B, (long long)s.HQ, (long long)s.HKV,
         (long long)bns, pus, bytes / (pus * 1e-6) / 1e12, err, err < 2e-2 ? "ok" : "FAIL", best);
  /* what the merge costs: the split kernel alone at the best split count */
  use_splits(&p, bns);
  Kernels alone = {.split = k->split};
  double us = median_us(&alone, &p);
  printf("decode  split kernel alone at %lld splits %8.1f us %7.2f TB/s (the merge and its launch: %.1f us)\n",
         (long long)bns, us, bytes / (us * 1e-6) / 1e12, best - us);
  destroy(&p);
  return fail;
}

/* check and median_us of p's launch, counted in pass or fail; its time,
 * and its error in *err */
static double timed_check(const Kernels *k, Problem *p, double *err, int *pass, int *fail) {
  *err = check(k, p, 16);
  bool ok = *err < 2e-2;
  *pass += ok, *fail += !ok;
  return median_us(k, p);
}

/* The one call at issue 21's shapes (B 16 T 8192, B 1 T 32768, B 64 T 4096,
 * B 1 T 131072; HQ 28 / HKV 4, D 128): the library's choice, each of its
 * variants pinned, and the pair beside it (--bench and --bench-one-call). */
static void bench_one_call(const Kernels *k, int *pass, int *fail) {
  Problem p;
  /* Q, K, V and O only, the split count and the partials the library's
   * (peer_decode.py: cuDNN at the same shapes) */
  static const int64_t shapes[][2] = {{16, 8192}, {1, 32768}, {64, 4096}, {1, 131072}};
  /* GQA_ONE_CALL_SHAPE=B,T (--bench and --bench-one-call): that shape
   * alone, the library's choice and the pair, without each variant pinned;
   * GQA_ONE_CALL_PIN=ENTRY: that variant timed in place of the library's
   * choice (A/B runs of one split count) */
  const char *env = getenv("GQA_ONE_CALL_SHAPE"), *pin = getenv("GQA_ONE_CALL_PIN");
  long long eb = 0, et = 0;
  bool one = env && sscanf(env, "%lld,%lld", &eb, &et) == 2 && eb > 0 && et > 0;
  for (size_t i = 0; i < (one ? 1 : sizeof shapes / sizeof shapes[0]); i++) {
    Shape d = {one ? eb : shapes[i][0], 1, one ? et : shapes[i][1], 28, 4, 128, false};
    make(&p, d);
    p.ns = NS_LIBRARY;
    if (pin && *pin) PK(phobos_kernel_pin_variant(k->decode, pin));
    double err, us = timed_check(k, &p, &err, pass, fail), bytes = 2.0 * 2 * (double)nkv_elems(&d);
    printf("decode  B %-2lld S 1 T %-6lld one call %8.1f us %7.2f TB/s  (rel err %.2e %s; %s)\n", (long long)d.B,
           (long long)d.T, us, bytes / (us * 1e-6) / 1e12, err, err < 2e-2 ? "ok" : "FAIL",
           phobos_kernel_last_variant(k->decode));
    /* each of the one call's variants pinned in turn: what the autotuner
     * chose among (its split counts against the pair's below) */
    for (int v = 0; v < (one ? 0 : 64); v++) {
      char entry[64];
      snprintf(entry, sizeof entry, "gqa_decode__v%d", v);
      if (phobos_kernel_pin_variant(k->decode, entry) != PHOBOS_OK) break;
      us = timed_check(k, &p, &err, pass, fail);
      printf("decode  B %-2lld S 1 T %-6lld one call pinned %-16s %8.1f us %7.2f TB/s  (rel err %.2e %s)\n",
             (long long)d.B, (long long)d.T, entry, us, bytes / (us * 1e-6) / 1e12, err, err < 2e-2 ? "ok" : "FAIL");
    }
    phobos_kernel_pin_variant(k->decode, NULL);
    /* the pair at the host's split count, and for B 1 at 64 to 256 */
    static const int64_t more[] = {0, 64, 128, 256};
    for (size_t j = 0; j < (d.B == 1 ? sizeof more / sizeof more[0] : 1); j++) {
      int64_t ns = more[j] ? more[j] : splits_for(&d);
      if (j && ns == splits_for(&d)) continue;
      use_splits(&p, ns);
      us = timed_check(k, &p, &err, pass, fail);
      printf("decode  B %-2lld S 1 T %-6lld split + merge, %3lld splits%s %8.1f us %7.2f TB/s  (rel err %.2e %s)\n",
             (long long)d.B, (long long)d.T, (long long)ns, j ? "" : " (the host's)", us,
             bytes / (us * 1e-6) / 1e12, err, err < 2e-2 ? "ok" : "FAIL");
    }
    destroy(&p);
  }
}

int main(int argc, char **argv) {
  bool bdec = argc > 1 && !strcmp(argv[1], "--bench-decode"), bpre = argc > 1 && !strcmp(argv[1], "--bench-prefill");
  if (bdec || bpre) { /* one benchmark for each cubin named */
    if (!host_start("gqa_attention")) return 0;
    int fail = 0, n = 0;
    for (int i = 2; i < argc; i++) {
      phobos_module *m;
      Kernels k = {0};
      PK(phobos_module_load(ctx, argv[i], &m));
      if (bdec) {
        /* a cubin from before the one-call kernel has none: its pair alone */
        if (phobos_kernel_get(m, "gqa_decode", &k.decode) != PHOBOS_OK) k.decode = NULL;
        PK(phobos_kernel_get(m, "gqa_decode_split", &k.split));
        PK(phobos_kernel_get(m, "gqa_decode_merge", &k.merge));
      } else {
        PK(phobos_kernel_get(m, "gqa_attention", &k.attn));
      }
      fail += bdec ? bench_decode(&k, argv[i]) : bench_prefill(&k, argv[i]);
      const char *only = getenv("GQA_CONTIGUOUS_ONLY");
      bool one = only && !strcmp(only, "1");
      n += bdec ? 8 + !one + !!k.decode : 2 * (2 - one); /* the decode sweep's split counts and a packed run, or causal and full in each layout */
    }
    phobos_context_destroy(ctx);
    printf("%d passed, %d failed\n", n - fail, fail);
    return fail ? 1 : 0;
  }
  if (argc > 1 && !strcmp(argv[1], "--bench-one-call")) { /* the one call at issue 21's shapes alone */
    if (!host_start("gqa_attention")) return 0;
    Kernels k = kernels_for(argc > 2 ? argv[2] : "build/examples", 7, 128);
    int pass = 0, fail = 0;
    bench_one_call(&k, &pass, &fail);
    phobos_context_destroy(ctx);
    printf("%d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
  }
  bool bench = argc > 1 && !strcmp(argv[1], "--bench");
  const char *dir = argc > 1 + bench ? argv[1 + bench] : "build/examples";
  if (!host_start("gqa_attention")) return 0;
  int pass = 0, fail = 0;
  static const int64_t nqs[] = {1, 2, 4, 7, 8}, ds[] = {64, 128};
  for (size_t a = 0; a < sizeof nqs / sizeof nqs[0]; a++)
    for (size_t c = 0; c < 2; c++) {
      Kernels k = kernels_for(dir, nqs[a], ds[c]);
      for (int causal = 0; causal < 2; causal++)
        for (int dec = 0; dec < 3; dec++) { /* prefill S 45; decode S 1 and 3: one call, and split + merge */
          Shape s = dec ? (Shape){2, 1 + 2 * causal, 300, 2 * nqs[a], 2, ds[c], causal}
                        : (Shape){2, 45, 77, 2 * nqs[a], 2, ds[c], causal};
          for (int layout = 0; layout < 2; layout++) {
            Problem p;
            Shape sl = s;
            if (layout && !dec) sl.T = sl.S; /* packed: the keys are the same tokens' */
            make_layout(&p, sl, layout);
            if (dec == 1) p.ns = NS_LIBRARY;
            if (dec == 2) use_splits(&p, 5);
            double err = check(&k, &p, 0);
            bool ok = err < 2e-2;
            pass += ok, fail += !ok;
            printf("check gqa %s NQ %lld D %-3lld %-6s B 2 S %-2lld T %-3lld HKV 2%s%s: rel err %.2e  %s\n",
                   dec ? "decode " : "prefill", (long long)nqs[a], (long long)ds[c], causal ? "causal" : "full",
                   (long long)sl.S, (long long)sl.T, dec == 1 ? ", one call" : dec ? ", 5 key splits" : "",
                   layout ? (dec ? ", Q packed, K/V of a cache" : ", Q/K/V packed") : "", err, ok ? "ok" : "FAIL");
            destroy(&p);
          }
        }
    }
  if (bench) {
    Kernels k = kernels_for(dir, 7, 128);
    printf("\n==== gqa_attention, bf16, D 128, HQ 28 / HKV 4 (median of 21, L2 flushed before each)\n");
    int f = bench_prefill(&k, NULL);
    pass += 4 - f, fail += f;
    Shape s = {16, 1, 8192, 28, 4, 128, false};
    Problem p;
    make(&p, s);
    double bytes = 2.0 * 2 * (double)nkv_elems(&s);
    static const int64_t sweep[] = {0, 4, 8, 10, 12, 16, 32}; /* 0: the prefill kernel; then the split decode */
    for (size_t si = 0; si < sizeof sweep / sizeof sweep[0]; si++) {
      int64_t ns = sweep[si];
      if (ns) use_splits(&p, ns);
      double err = check(&k, &p, 16);
      bool ok = err < 2e-2;
      pass += ok, fail += !ok;
      double us = median_us(&k, &p);
      printf("decode  B 16 S 1 T 8192 %-13s %8.1f us %7.2f TB/s  (16 rows checked: rel err %.2e %s)\n",
             ns ? "" : "(prefill)", us, bytes / (us * 1e-6) / 1e12, err, ok ? "ok" : "FAIL");
      if (ns) printf("        (%lld key splits; the host's choice for this shape is %lld)\n", (long long)ns,
                     (long long)splits_for(&s));
    }
    destroy(&p);
    /* Q packed with its K and V, K and V out of a cache with room (the
     * serving layout), at the host's split count: as fast as contiguous */
    make_layout(&p, s, LAYOUT_PACKED);
    use_splits(&p, splits_for(&s));
    double err = check(&k, &p, 16), us = median_us(&k, &p);
    bool ok = err < 2e-2;
    pass += ok, fail += !ok;
    printf("decode  B 16 S 1 T 8192 Q packed, K/V of a cache %8.1f us %7.2f TB/s  (%lld key splits; 16 rows checked: "
           "rel err %.2e %s)\n", us, bytes / (us * 1e-6) / 1e12, (long long)splits_for(&s), err, ok ? "ok" : "FAIL");
    destroy(&p);
    bench_one_call(&k, &pass, &fail);
  }
  phobos_context_destroy(ctx);
  printf("%d passed, %d failed\n", pass, fail);
  return fail ? 1 : 0;
}
