/* refs.c: double-precision references for the conformance cases of the
 * shipped kernels (q8_matvec, GQA attention) and of the Phobos spec's own
 * examples (SGEMM, flash attention). Inputs arrive already rounded to their
 * element types; outputs are compared after the kernel rounds its own. */
#include <math.h>
#include <stdlib.h>

#include "harness.h"

/* C[0, n] = sum_k A[0, k] * W[k, n] * S[k / 32, n]   (Q8_0: 32 weights a scale) */
static bool ref_q8_matvec(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *W = ref_param(r, "W"), *S = ref_param(r, "S"), *C = ref_param(r, "C");
  int64_t K = A->dims[1], N = W->dims[1];
  for (int64_t n = 0; n < N; n++) {
    double acc = 0;
    for (int64_t k = 0; k < K; k++) acc += A->data[k] * W->data[k * N + n] * S->data[(k / 32) * N + n];
    C->data[n] = acc;
  }
  return true;
}

/* C = alpha * A @ B + beta * C */
static bool ref_sgemm(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *C = ref_param(r, "C");
  double alpha = ref_scalar(r, "alpha"), beta = ref_scalar(r, "beta");
  int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += A->data[i * K + k] * B->data[k * N + j];
      C->data[i * N + j] = alpha * acc + beta * C->data[i * N + j];
    }
  return true;
}

/* O = softmax(scale * Q K^T) V over rows of Q [Nq, D], K and V [Nk, D] */
static bool ref_flash_attention(RefCtx *r) {
  CaseParam *Q = ref_param(r, "Q"), *K = ref_param(r, "K"), *V = ref_param(r, "V"), *O = ref_param(r, "O");
  double scale = ref_scalar(r, "scale");
  int64_t NQ = Q->dims[0], NK = K->dims[0], D = Q->dims[1];
  double *s = malloc(sizeof(double) * (size_t)NK);
  for (int64_t i = 0; i < NQ; i++) {
    double m = -INFINITY, l = 0;
    for (int64_t j = 0; j < NK; j++) {
      double dotv = 0;
      for (int64_t d = 0; d < D; d++) dotv += Q->data[i * D + d] * K->data[j * D + d];
      s[j] = dotv * scale;
      if (s[j] > m) m = s[j];
    }
    for (int64_t j = 0; j < NK; j++) l += (s[j] = exp(s[j] - m));
    for (int64_t d = 0; d < D; d++) {
      double acc = 0;
      for (int64_t j = 0; j < NK; j++) acc += s[j] * V->data[j * D + d];
      O->data[i * D + d] = acc / l;
    }
  }
  free(s);
  return true;
}

/* GQA: Q and O [B, S, HQ, D], K and V [B, T, HKV, D]; query head h reads KV
 * head h / (HQ / HKV). Causal is bottom-right aligned: query i sees keys
 * j <= i + (T - S). */
static bool ref_gqa_attention(RefCtx *r) {
  CaseParam *Q = ref_param(r, "Q"), *K = ref_param(r, "K"), *V = ref_param(r, "V"), *O = ref_param(r, "O");
  double scale = ref_scalar(r, "scale");
  bool causal = ref_scalar(r, "causal") != 0;
  int64_t B = Q->dims[0], S = Q->dims[1], HQ = Q->dims[2], D = Q->dims[3], T = K->dims[1], HKV = K->dims[2];
  int64_t nq = HQ / HKV;
  double *s = malloc(sizeof(double) * (size_t)T);
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < S; i++)
      for (int64_t h = 0; h < HQ; h++) {
        int64_t kvh = h / nq, last = causal ? i + (T - S) : T - 1;
        if (last > T - 1) last = T - 1;
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j <= last; j++) {
          double dotv = 0;
          for (int64_t d = 0; d < D; d++)
            dotv += Q->data[((b * S + i) * HQ + h) * D + d] * K->data[((b * T + j) * HKV + kvh) * D + d];
          s[j] = dotv * scale;
          if (s[j] > m) m = s[j];
        }
        for (int64_t j = 0; j <= last; j++) l += (s[j] = exp(s[j] - m));
        for (int64_t d = 0; d < D; d++) {
          double acc = 0;
          for (int64_t j = 0; j <= last; j++) acc += s[j] * V->data[((b * T + j) * HKV + kvh) * D + d];
          O->data[((b * S + i) * HQ + h) * D + d] = last < 0 ? NAN : acc / l;
        }
      }
  free(s);
  return true;
}

/* gqa_decode_split: for split x of NS, the keys [x chunk, (x + 1) chunk)
 * (chunk = cdiv(cdiv(T, NS), BK) BK) that row i sees: OP = that softmax's
 * output (0 without keys), LSE = max + log(sum) (-inf without keys) */
static bool ref_gqa_decode_split(RefCtx *r) {
  CaseParam *Q = ref_param(r, "Q"), *K = ref_param(r, "K"), *V = ref_param(r, "V"), *OP = ref_param(r, "OP"),
            *LSE = ref_param(r, "LSE");
  double scale = ref_scalar(r, "scale");
  bool causal = ref_scalar(r, "causal") != 0;
  int64_t B = Q->dims[0], S = Q->dims[1], HQ = Q->dims[2], D = Q->dims[3], T = K->dims[1], HKV = K->dims[2];
  int64_t NS = OP->dims[3], BK = ref_const(r, "BK"), nq = HQ / HKV;
  int64_t chunk = ((T + NS - 1) / NS + BK - 1) / BK * BK;
  double *s = malloc(sizeof(double) * (size_t)T);
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < S; i++)
      for (int64_t h = 0; h < HQ; h++)
        for (int64_t x = 0; x < NS; x++) {
          int64_t kvh = h / nq, last = causal ? i + (T - S) : T - 1, j0 = x * chunk, j1 = (x + 1) * chunk;
          if (last > T - 1) last = T - 1;
          if (j1 > last + 1) j1 = last + 1;
          double m = -INFINITY, l = 0;
          for (int64_t j = j0; j < j1; j++) {
            double dotv = 0;
            for (int64_t d = 0; d < D; d++)
              dotv += Q->data[((b * S + i) * HQ + h) * D + d] * K->data[((b * T + j) * HKV + kvh) * D + d];
            s[j] = dotv * scale;
            if (s[j] > m) m = s[j];
          }
          for (int64_t j = j0; j < j1; j++) l += (s[j] = exp(s[j] - m));
          for (int64_t d = 0; d < D; d++) {
            double acc = 0;
            for (int64_t j = j0; j < j1; j++) acc += s[j] * V->data[((b * T + j) * HKV + kvh) * D + d];
            OP->data[(((b * S + i) * HQ + h) * NS + x) * D + d] = l > 0 ? acc / l : 0;
          }
          LSE->data[((b * S + i) * HQ + h) * NS + x] = l > 0 ? m + log(l) : -INFINITY;
        }
  free(s);
  return true;
}

/* gqa_decode_merge: O = sum_x w_x OP[.., x, :] / sum_x w_x, w = exp(LSE - max LSE) */
static bool ref_gqa_decode_merge(RefCtx *r) {
  CaseParam *OP = ref_param(r, "OP"), *LSE = ref_param(r, "LSE"), *O = ref_param(r, "O");
  int64_t rows = OP->dims[0] * OP->dims[1] * OP->dims[2], NS = OP->dims[3], D = OP->dims[4];
  for (int64_t row = 0; row < rows; row++) {
    double mx = -INFINITY, sw = 0;
    for (int64_t x = 0; x < NS; x++) mx = fmax(mx, LSE->data[row * NS + x]);
    for (int64_t x = 0; x < NS; x++) sw += exp(LSE->data[row * NS + x] - mx);
    for (int64_t d = 0; d < D; d++) {
      double acc = 0;
      for (int64_t x = 0; x < NS; x++) acc += exp(LSE->data[row * NS + x] - mx) * OP->data[(row * NS + x) * D + d];
      O->data[row * D + d] = acc / sw;
    }
  }
  return true;
}

/* P[y, n]: the Q8_0 sum over the y-th chunk of K, chunk = cdiv(K, KSPLIT 32) 32;
 * C[0, n] (where the case has C): the sum of P's rows */
static bool ref_q8_split(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *W = ref_param(r, "W"), *S = ref_param(r, "S"), *P = ref_param(r, "P");
  int64_t K = A->dims[1], N = W->dims[1], KS = P->dims[0];
  int64_t chunk = (K + KS * 32 - 1) / (KS * 32) * 32;
  for (int64_t y = 0; y < KS; y++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k = y * chunk; k < K && k < (y + 1) * chunk; k++)
        acc += A->data[k] * W->data[k * N + n] * S->data[(k / 32) * N + n];
      P->data[y * N + n] = acc;
    }
  /* the example's kernel: its last CTAs also sum P's rows into C */
  if (harness_param(r->c, "C")) {
    CaseParam *C = ref_param(r, "C");
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t y = 0; y < KS; y++) acc += P->data[y * N + n];
      C->data[n] = acc;
    }
  }
  return true;
}

/* C[0, n] = sum over rows of P */
static bool ref_rows_sum(RefCtx *r) {
  CaseParam *P = ref_param(r, "P"), *C = ref_param(r, "C");
  for (int64_t n = 0; n < P->dims[1]; n++) {
    double acc = 0;
    for (int64_t y = 0; y < P->dims[0]; y++) acc += P->data[y * P->dims[1] + n];
    C->data[n] = acc;
  }
  return true;
}

/* arrive_colsum: P[y, n] = the sum of X's rows [y chunk, (y + 1) chunk)
 * (chunk = cdiv(R, KS)), C[0, n] = the sum of all of X's rows (the last
 * CTA of each column block adds P's rows); Cnt stays at its zeros */
static bool ref_arrive_colsum(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *P = ref_param(r, "P"), *C = ref_param(r, "C");
  int64_t R = X->dims[0], N = X->dims[1], KS = P->dims[0], chunk = (R + KS - 1) / KS;
  for (int64_t n = 0; n < N; n++) {
    double all = 0;
    for (int64_t y = 0; y < KS; y++) {
      double acc = 0;
      for (int64_t i = y * chunk; i < R && i < (y + 1) * chunk; i++) acc += X->data[i * N + n];
      P->data[y * N + n] = acc;
      all += acc;
    }
    C->data[n] = all;
  }
  return true;
}

/* B = 3 A (as A + 2 A) */
static bool ref_triple(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B");
  for (int64_t i = 0; i < A->n; i++) B->data[i] = A->data[i] + 2 * A->data[i];
  return true;
}

const RefEntry harness_refs[] = {
    {"triple", ref_triple},
    {"q8_split", ref_q8_split},
    {"rows_sum", ref_rows_sum},
    {"q8_matvec", ref_q8_matvec},
    {"sgemm", ref_sgemm},
    {"flash_attention", ref_flash_attention},
    {"gqa_attention", ref_gqa_attention},
    {"gqa_decode_split", ref_gqa_decode_split},
    {"gqa_decode_merge", ref_gqa_decode_merge},
    {"arrive_colsum", ref_arrive_colsum},
    {NULL, NULL},
};
