/* refs_llm.c: references for the kernels of examples/llm_decode (a Qwen2-
 * shaped decode step in Q8_0), each the textbook formula in double over
 * the case's inputs (already rounded to their element types). Where a
 * kernel rounds an output to bf16 (the caches) the tolerance allows it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* X[b, r, j] = E[TOK[b], r, j] * ES[TOK[b], r, 0] */
static bool ref_embed_q8(RefCtx *r) {
  CaseParam *TOK = ref_param(r, "TOK"), *E = ref_param(r, "E"), *ES = ref_param(r, "ES"), *X = ref_param(r, "X");
  int64_t B = X->dims[0], HB = X->dims[1];
  for (int64_t b = 0; b < B; b++) {
    int64_t t = (int64_t)TOK->data[b];
    for (int64_t i = 0; i < HB * 32; i++) X->data[b * HB * 32 + i] = E->data[t * HB * 32 + i] * ES->data[t * HB + i / 32];
  }
  return true;
}

/* Y = X / sqrt(mean(X^2) + eps) * G, a row at a time */
static bool ref_rmsnorm(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *G = ref_param(r, "G"), *Y = ref_param(r, "Y");
  double eps = ref_scalar(r, "eps");
  int64_t B = X->dims[0], H = X->dims[1];
  for (int64_t b = 0; b < B; b++) {
    double ss = 0;
    for (int64_t j = 0; j < H; j++) ss += X->data[b * H + j] * X->data[b * H + j];
    double rs = 1.0 / sqrt(ss / (double)H + eps);
    for (int64_t j = 0; j < H; j++) Y->data[b * H + j] = X->data[b * H + j] * rs * G->data[j];
  }
  return true;
}

/* C[m, n] (+)= sum_k A[m, k] W[k, n] S[k / 32, n]: `add` keeps C's input */
static bool q8_gemv(RefCtx *r, bool add) {
  CaseParam *A = ref_param(r, "A"), *W = ref_param(r, "W"), *S = ref_param(r, "S"), *C = ref_param(r, "C");
  int64_t M = A->dims[0], K = A->dims[1], N = W->dims[1];
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = add ? C->data[m * N + n] : 0;
      for (int64_t k = 0; k < K; k++) acc += A->data[m * K + k] * W->data[k * N + n] * S->data[(k / 32) * N + n];
      C->data[m * N + n] = acc;
    }
  return true;
}
static bool ref_q8_gemv(RefCtx *r) { return q8_gemv(r, false); }
static bool ref_q8_gemv_add(RefCtx *r) { return q8_gemv(r, true); }

/* the rotation of the halves (x1, x2) of a head at position p:
 * (x1 c - x2 s, x2 c + x1 s), c and s from ROT[p, 0 / 1, i] */
static void rotate(const double *x, const CaseParam *ROT, int64_t p, int64_t D, double *out) {
  int64_t D2 = D / 2;
  for (int64_t i = 0; i < D2; i++) {
    double c = ROT->data[(p * 2 + 0) * D2 + i], s = ROT->data[(p * 2 + 1) * D2 + i];
    out[i] = x[i] * c - x[i + D2] * s;
    out[i + D2] = x[i + D2] * c + x[i] * s;
  }
}

/* Qr[b, 0] = rope(q + bias); Kc[b, POS[b]] = rope(k + bias); Vc[b, POS[b]] = v + bias */
static bool ref_rope_append(RefCtx *r) {
  CaseParam *QKV = ref_param(r, "QKV"), *BIAS = ref_param(r, "BIAS"), *POS = ref_param(r, "POS"),
            *ROT = ref_param(r, "ROT"), *Qr = ref_param(r, "Qr"), *Kc = ref_param(r, "Kc"), *Vc = ref_param(r, "Vc");
  int64_t B = QKV->dims[0], NH = QKV->dims[1], D = QKV->dims[2], HQ = Qr->dims[2], TC = Kc->dims[1], HKV = Kc->dims[2];
  double *x = malloc(sizeof(double) * (size_t)D * 2), *y = x + D;
  for (int64_t b = 0; b < B; b++) {
    int64_t p = (int64_t)POS->data[b];
    for (int64_t h = 0; h < HQ + 2 * HKV; h++) {
      for (int64_t d = 0; d < D; d++) x[d] = QKV->data[(b * NH + h) * D + d] + BIAS->data[h * D + d];
      if (h < HQ + HKV) rotate(x, ROT, p, D, y);
      else memcpy(y, x, sizeof(double) * (size_t)D);
      for (int64_t d = 0; d < D; d++) {
        if (h < HQ) Qr->data[(b * HQ + h) * D + d] = y[d];
        else if (h < HQ + HKV) Kc->data[((b * TC + p) * HKV + h - HQ) * D + d] = y[d];
        else Vc->data[((b * TC + p) * HKV + h - HQ - HKV) * D + d] = y[d];
      }
    }
  }
  free(x);
  return true;
}

/* gqa_split_len: for split x of NS over sequence b's keys 0 .. POS[b] (t_end
 * = POS[b] + 1, chunk = cdiv(cdiv(t_end, NS), BK) BK, the keys [x chunk,
 * min(t_end, (x + 1) chunk))): OP = that softmax of Qr[b, hq] . Kc[b, t, hq /
 * NQ] * scale times Vc (0 without keys), LSE = max + log(sum) (-inf without) */
static bool ref_gqa_split_len(RefCtx *r) {
  CaseParam *Qr = ref_param(r, "Qr"), *Kc = ref_param(r, "Kc"), *Vc = ref_param(r, "Vc"), *POS = ref_param(r, "POS"),
            *OP = ref_param(r, "OP"), *LSE = ref_param(r, "LSE");
  double scale = ref_scalar(r, "scale");
  int64_t B = Qr->dims[0], HQ = Qr->dims[2], D = Qr->dims[3], TC = Kc->dims[1], HKV = Kc->dims[2], nq = HQ / HKV;
  int64_t NS = OP->dims[3], BK = ref_const(r, "BK");
  double *w = malloc(sizeof(double) * (size_t)TC);
  for (int64_t b = 0; b < B; b++) {
    int64_t t_end = (int64_t)POS->data[b] + 1, chunk = ((t_end + NS - 1) / NS + BK - 1) / BK * BK;
    for (int64_t h = 0; h < HQ; h++)
      for (int64_t x = 0; x < NS; x++) {
        int64_t k0 = x * chunk, k1 = k0 + chunk < t_end ? k0 + chunk : t_end;
        double mx = -INFINITY, sum = 0;
        for (int64_t t = k0; t < k1; t++) {
          double d = 0;
          for (int64_t c = 0; c < D; c++)
            d += Qr->data[(b * HQ + h) * D + c] * Kc->data[((b * TC + t) * HKV + h / nq) * D + c];
          w[t] = d * scale;
          mx = fmax(mx, w[t]);
        }
        for (int64_t t = k0; t < k1; t++) sum += (w[t] = exp(w[t] - mx));
        for (int64_t c = 0; c < D; c++) {
          double acc = 0;
          for (int64_t t = k0; t < k1; t++) acc += w[t] * Vc->data[((b * TC + t) * HKV + h / nq) * D + c];
          OP->data[((b * HQ + h) * NS + x) * D + c] = sum > 0 ? acc / sum : 0;
        }
        LSE->data[(b * HQ + h) * NS + x] = sum > 0 ? mx + log(sum) : -INFINITY;
      }
  }
  free(w);
  return true;
}

/* Hh = silu(GU[:, :F]) * GU[:, F:] */
static bool ref_silu_mul(RefCtx *r) {
  CaseParam *GU = ref_param(r, "GU"), *Hh = ref_param(r, "Hh");
  int64_t B = Hh->dims[0], F = Hh->dims[1], F2 = GU->dims[1];
  for (int64_t b = 0; b < B; b++)
    for (int64_t j = 0; j < F; j++) {
      double g = GU->data[b * F2 + j], u = GU->data[b * F2 + F + j];
      Hh->data[b * F + j] = g / (1 + exp(-g)) * u;
    }
  return true;
}

/* TOK[b] = the least index of L[b]'s maximum; POS[b] += 1 */
static bool ref_argmax_step(RefCtx *r) {
  CaseParam *L = ref_param(r, "L"), *TOK = ref_param(r, "TOK"), *POS = ref_param(r, "POS");
  int64_t B = L->dims[0], V = L->dims[1];
  for (int64_t b = 0; b < B; b++) {
    int64_t at = 0;
    for (int64_t j = 1; j < V; j++)
      if (L->data[b * V + j] > L->data[b * V + at]) at = j;
    TOK->data[b] = (double)at;
    POS->data[b] += 1;
  }
  return true;
}

/* Out[x] = the sum of Wd's rows [x TR, (x + 1) TR), wrapping as i32 */
static bool ref_read_roof(RefCtx *r) {
  CaseParam *Wd = ref_param(r, "Wd"), *Out = ref_param(r, "Out");
  int64_t R = Wd->dims[0], C = Wd->dims[1], TR = ref_const(r, "TR");
  for (int64_t x = 0; x * TR < R; x++) {
    uint32_t acc = 0;
    for (int64_t i = x * TR; i < R && i < (x + 1) * TR; i++)
      for (int64_t j = 0; j < C; j++) acc += (uint32_t)(int32_t)Wd->data[i * C + j];
    Out->data[x] = (double)(int32_t)acc;
  }
  return true;
}

const RefEntry harness_refs_llm[] = {
    {"read_roof", ref_read_roof},
    {"embed_q8", ref_embed_q8},
    {"rmsnorm", ref_rmsnorm},
    {"q8_gemv", ref_q8_gemv},
    {"q8_gemv_add", ref_q8_gemv_add},
    {"rope_append", ref_rope_append},
    {"gqa_split_len", ref_gqa_split_len},
    {"silu_mul", ref_silu_mul},
    {"argmax_step", ref_argmax_step},
    {NULL, NULL},
};
