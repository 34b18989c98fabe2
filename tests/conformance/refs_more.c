/* refs_more.c: references for the conformance cases that pin down single
 * statements and builtins. Inputs arrive already rounded to their element
 * types; every reference computes in double. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* element (i, j) of a rank-2 parameter, and the like for rank 3 and 4 */
#define E2(p, i, j) ((p)->data[(int64_t)(i) * (p)->dims[1] + (j)])
#define E3(p, i, j, k) ((p)->data[((int64_t)(i) * (p)->dims[1] + (j)) * (p)->dims[2] + (k)])
#define E4(p, i, j, k, l) ((p)->data[(((int64_t)(i) * (p)->dims[1] + (j)) * (p)->dims[2] + (k)) * (p)->dims[3] + (l)])

/* ------------------------------------------------------------ statements */

/* Y = (2x + 1) * x */
static bool ref_let_var_assign(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->n; i++) Y->data[i] = (2 * X->data[i] + 1) * X->data[i];
  return true;
}

/* Z = ((x + y) * 3 - x) / y */
static bool ref_compound_tile(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *Z = ref_param(r, "Z");
  for (int64_t i = 0; i < X->n; i++) {
    double x = X->data[i], y = Y->data[i];
    Z->data[i] = ((x + y) * 3 - x) / y;
  }
  return true;
}

/* C = ((C + X) * 2 - 0.5) / 4 */
static bool ref_compound_tensor(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *C = ref_param(r, "C");
  for (int64_t i = 0; i < X->n; i++) C->data[i] = ((C->data[i] + X->data[i]) * 2 - 0.5) / 4;
  return true;
}

/* Y[i, :] = X[i, :] * (i % 5 + 1) */
static bool ref_var_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->dims[0]; i++)
    for (int64_t j = 0; j < X->dims[1]; j++) E2(Y, i, j) = E2(X, i, j) * (double)(i % 5 + 1);
  return true;
}

/* Y = X + (j - j % 3); in each block of 4 rows, [0, 0] = 100 and
 * [3, 11] = 100 + the block-filled [3, 10] */
static bool ref_var_cols(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t M = X->dims[0];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < 12; j++) E2(Y, i, j) = E2(X, i, j) + (double)(j - j % 3);
  for (int64_t r0 = 0; r0 < M; r0 += 4) {
    E2(Y, r0, 0) = 100;
    if (r0 + 3 < M) E2(Y, r0 + 3, 11) = 100 + E2(Y, r0 + 3, 10);
  }
  return true;
}

/* Y[0] = sum of rows 1..N-1, Y[1] = sum of rows 2, 5, 8, ... */
static bool ref_for_ranges(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t N = X->dims[0], C = X->dims[1];
  for (int64_t j = 0; j < C; j++) {
    double s = 0, e = 0;
    for (int64_t i = 1; i < N; i++) s += E2(X, i, j);
    for (int64_t i = 2; i < N; i += 3) e += E2(X, i, j);
    E2(Y, 0, j) = s;
    E2(Y, 1, j) = e;
  }
  return true;
}

/* acc = acc * 0.5 + X[i] for i < n */
static bool ref_while_loop(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t n = (int64_t)ref_scalar(r, "n");
  for (int64_t j = 0; j < X->dims[1]; j++) {
    double acc = 0;
    for (int64_t i = 0; i < n; i++) acc = acc * 0.5 + E2(X, i, j);
    E2(Y, 0, j) = acc;
  }
  return true;
}

/* by block of 4 rows b: b == 0: x + 1; b odd: 2x; else -x */
static bool ref_if_chain(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->dims[0]; i++) {
    int64_t b = i / 4;
    for (int64_t j = 0; j < X->dims[1]; j++) {
      double x = E2(X, i, j);
      E2(Y, i, j) = b == 0 ? x + 1 : b % 2 == 1 ? 2 * x : -x;
    }
  }
  return true;
}

/* t = flag ? x * x : x; then mode < 0: t - 1, mode == 0: t + 10, else t * -3 */
static bool ref_if_param(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  bool flag = ref_scalar(r, "flag") != 0;
  double mode = ref_scalar(r, "mode");
  for (int64_t i = 0; i < X->n; i++) {
    double t = X->data[i];
    if (flag) t = t * t;
    Y->data[i] = mode < 0 ? t - 1 : mode == 0 ? t + 10 : t * -3;
  }
  return true;
}

/* C = A @ B (dot) or A @ B^T (dot_t), A of rank 2 or 3 with its leading
 * dims folded into rows, as C's are: C [.., N] from A [.., K] and B [K, N]
 * (or [N, K]). */
static void matmul(RefCtx *r, bool transposed) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *C = ref_param(r, "C");
  int64_t K = A->dims[A->rank - 1], N = C->dims[C->rank - 1], rows = C->n / N;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += A->data[i * K + k] * (transposed ? B->data[j * K + k] : B->data[k * N + j]);
      C->data[i * N + j] = acc;
    }
}

static bool ref_matmul(RefCtx *r) {
  matmul(r, false);
  return true;
}

/* C = x x / 4 + x, x = A @ B + Bias (Bias [N] or [1, N]; dot_epilogue.ph) */
static bool ref_matmul_bias_poly(RefCtx *r) {
  matmul(r, false);
  CaseParam *C = ref_param(r, "C"), *Bias = ref_param(r, "Bias");
  int64_t N = C->dims[C->rank - 1];
  for (int64_t k = 0; k < C->n; k++) {
    double x = C->data[k] + Bias->data[k % N];
    C->data[k] = x * x * 0.25 + x;
  }
  return true;
}

/* bound_select.ph: Y = X where the column (bound_cols) or row
 * (bound_rows) is below k, else -1; C = A @ B where the column is below
 * k, else 0 (bound_mm) */
static bool bound_select(RefCtx *r, bool rows) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t N = X->dims[1], k = (int64_t)ref_scalar(r, "k");
  for (int64_t i = 0; i < X->n; i++) Y->data[i] = (rows ? i / N : i % N) < k ? X->data[i] : -1;
  return true;
}
static bool ref_bound_cols(RefCtx *r) { return bound_select(r, false); }
static bool ref_bound_rows(RefCtx *r) { return bound_select(r, true); }
static bool ref_bound_mm(RefCtx *r) {
  matmul(r, false);
  CaseParam *C = ref_param(r, "C");
  int64_t N = C->dims[1], k = (int64_t)ref_scalar(r, "k");
  for (int64_t i = 0; i < C->n; i++)
    if (i % N >= k) C->data[i] = 0;
  return true;
}

static bool ref_matmul_t(RefCtx *r) {
  matmul(r, true);
  return true;
}

/* C = A @ B over A's K columns, D = A[:, :K2] @ B2 with B2 [K2, N] */
static bool ref_matmul_two_widths(RefCtx *r) {
  matmul(r, false);
  CaseParam *A = ref_param(r, "A"), *B2 = ref_param(r, "B2"), *D = ref_param(r, "D");
  int64_t K = A->dims[1], K2 = B2->dims[0], N = D->dims[1], M = D->dims[0];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K2; k++) acc += A->data[i * K + k] * B2->data[k * N + j];
      D->data[i * N + j] = acc;
    }
  return true;
}

/* C = A @ B, and D = 2 A: the tile read both by the dot and elementwise */
static bool ref_matmul_and_2a(RefCtx *r) {
  matmul(r, false);
  CaseParam *A = ref_param(r, "A"), *D = ref_param(r, "D");
  for (int64_t i = 0; i < D->n; i++) D->data[i] = 2 * A->data[i];
  return true;
}

/* ------------------------------------------------------------- rounding */

/* v rounded to a binary float with p significant bits and smallest normal
 * exponent emin, to nearest, ties to even; past `over` it is infinite. */
static double round_to(double v, int p, int emin, double over) {
  if (!isfinite(v) || v == 0) return v;
  if (fabs(v) >= over) return v > 0 ? INFINITY : -INFINITY;
  int e;
  frexp(fabs(v), &e);
  int lead = e - 1 < emin ? emin : e - 1; /* the exponent of the leading bit */
  double q = ldexp(1.0, lead - (p - 1));  /* one unit in the last place */
  return nearbyint(v / q) * q;
}

static double to_f16(double v) { return round_to(v, 11, -14, 65520.0); }
static double to_bf16(double v) { return round_to(v, 8, -126, ldexp(2.0 - ldexp(1.0, -8), 127)); }

/* float to integer: truncate toward zero and saturate */
static double to_int_sat(double v, double lo, double hi) {
  v = trunc(v);
  return v < lo ? lo : v > hi ? hi : v;
}

/* ----------------------------------------------------- elementwise builtins */

#define UNARY_REF(fname, expr)                                   \
  static bool fname(RefCtx *r) {                                 \
    CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");    \
    for (int64_t i = 0; i < X->n; i++) {                         \
      double x = X->data[i];                                     \
      Y->data[i] = (expr);                                       \
    }                                                            \
    return true;                                                 \
  }

UNARY_REF(ref_math_exp, exp(x))
UNARY_REF(ref_math_exp2, exp2(x))
UNARY_REF(ref_math_log, log(x))
UNARY_REF(ref_math_sqrt, sqrt(x))
UNARY_REF(ref_math_tanh, tanh(x))

/* Y = max(max(x, R[i]), -0.5), Z = min(x, C[j]) */
static bool ref_tmax_tmin(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *R = ref_param(r, "R"), *C = ref_param(r, "C"), *Y = ref_param(r, "Y"),
            *Z = ref_param(r, "Z");
  for (int64_t i = 0; i < X->dims[0]; i++)
    for (int64_t j = 0; j < X->dims[1]; j++) {
      double x = E2(X, i, j);
      E2(Y, i, j) = fmax(fmax(x, R->data[i]), -0.5);
      E2(Z, i, j) = fmin(x, C->data[j]);
    }
  return true;
}

/* per row: min(a, b), max(a, b), cdiv(a, max(1, |c|)) */
static bool ref_scalar_min_max_cdiv(RefCtx *r) {
  CaseParam *P = ref_param(r, "P"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < P->dims[0]; i++) {
    double a = E2(P, i, 0), b = E2(P, i, 1), c = fmax(1, fabs(E2(P, i, 2)));
    E2(Y, i, 0) = fmin(a, b);
    E2(Y, i, 1) = fmax(a, b);
    E2(Y, i, 2) = ceil(a / c);
  }
  return true;
}

/* Y = X^T */
static bool ref_transpose(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->dims[0]; i++)
    for (int64_t j = 0; j < X->dims[1]; j++) E2(Y, j, i) = E2(X, i, j);
  return true;
}

/* Y = (2 X + 1)^T */
static bool ref_transpose_affine(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->dims[0]; i++)
    for (int64_t j = 0; j < X->dims[1]; j++) E2(Y, j, i) = 2 * E2(X, i, j) + 1;
  return true;
}

/* Y = sum over k of X[k]^T, X [K, M, N] */
static bool ref_transpose_sum(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t K = X->dims[0], M = X->dims[1], N = X->dims[2];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += X->data[(k * M + i) * N + j];
      E2(Y, j, i) = s;
    }
  return true;
}

/* Y = x > w ? x : 2w, Z = x < 0 ? 0 : x */
static bool ref_where_select(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *Y = ref_param(r, "Y"), *Z = ref_param(r, "Z");
  for (int64_t i = 0; i < X->n; i++) {
    double x = X->data[i], w = W->data[i];
    Y->data[i] = x > w ? x : 2 * w;
    Z->data[i] = x < 0 ? 0 : x;
  }
  return true;
}

/* Y[i, j] = 100 i + j */
static bool ref_iota_2d(RefCtx *r) {
  CaseParam *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < Y->dims[0]; i++)
    for (int64_t j = 0; j < Y->dims[1]; j++) E2(Y, i, j) = (double)(100 * i + j);
  return true;
}

/* Y[a, b, c] = 100 a + 10 b + c */
static bool ref_iota_3d(RefCtx *r) {
  CaseParam *Y = ref_param(r, "Y");
  for (int64_t a = 0; a < Y->dims[0]; a++)
    for (int64_t b = 0; b < Y->dims[1]; b++)
      for (int64_t c = 0; c < Y->dims[2]; c++) E3(Y, a, b, c) = (double)(100 * a + 10 * b + c);
  return true;
}

/* ------------------------------------------------------------ reductions */

/* MX, SM (when present) = max and sum over the last dim of X; A (when
 * present) = max over the first 7 columns. */
static bool ref_rowreduce(RefCtx *r) {
  CaseParam *X = ref_param(r, "X");
  int64_t C = X->dims[X->rank - 1], rows = X->n / C;
  const char *names[4] = {"MX", "SM", "A", "B"};
  for (int o = 0; o < 4; o++) {
    CaseParam *O = NULL;
    for (int i = 0; i < r->c->nparams; i++)
      if (!strcmp(r->c->params[i].name, names[o])) O = &r->c->params[i];
    if (!O) continue;
    for (int64_t i = 0; i < rows; i++) {
      double mx = -INFINITY, sm = 0;
      for (int64_t j = 0; j < (o == 2 ? 7 : C); j++) {
        double x = X->data[i * C + j];
        mx = fmax(mx, x);
        sm += x;
      }
      O->data[i] = o == 1 ? sm : mx;
    }
  }
  return true;
}

/* odd_store_runs.ph: Y = 2 X + 1 */
static bool ref_scale_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->n; i++) Y->data[i] = 2 * X->data[i] + 1;
  return true;
}

/* tile_acc.ph's tile_accs: per row, SM = 16 + sum x, MX = max x, SI = sum I,
 * S1 = sum x, KEPT[j] = the sum of the row's columns j, j + 16, .. */
static bool ref_tile_accs(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *I = ref_param(r, "I"), *SM = ref_param(r, "SM"), *MX = ref_param(r, "MX"),
            *SI = ref_param(r, "SI"), *S1 = ref_param(r, "S1"), *K = ref_param(r, "KEPT");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 0, mx = -INFINITY, si = 0;
    for (int64_t j = 0; j < 16; j++) E2(K, i, j) = 0;
    for (int64_t j = 0; j < N; j++) {
      s += E2(X, i, j), mx = fmax(mx, E2(X, i, j)), si += E2(I, i, j);
      E2(K, i, j % 16) += E2(X, i, j);
    }
    SM->data[i] = 16 + s, MX->data[i] = mx, SI->data[i] = si, S1->data[i] = s;
  }
  return true;
}

/* tile_acc.ph's straight_accs: S = 16 + the row's sum, M = the max of its
 * columns 0..15 and 32..47 */
static bool ref_straight_accs(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *S = ref_param(r, "S"), *M = ref_param(r, "M");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 16, m = -INFINITY;
    for (int64_t j = 0; j < N; j++) {
      s += E2(X, i, j);
      if (j < 16 || j >= 32) m = fmax(m, E2(X, i, j));
    }
    S->data[i] = s, M->data[i] = m;
  }
  return true;
}

/* tile_acc.ph's row_stats: each row's mean and (biased) variance */
static bool ref_row_stats(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *M = ref_param(r, "MEAN"), *V = ref_param(r, "VAR");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 0, q = 0;
    for (int64_t j = 0; j < N; j++) s += E2(X, i, j);
    double mean = s / (double)N;
    for (int64_t j = 0; j < N; j++) q += (E2(X, i, j) - mean) * (E2(X, i, j) - mean);
    M->data[i] = mean, V->data[i] = q / (double)N;
  }
  return true;
}

/* Y = bf16(X / sqrt(mean(X^2) + 1e-5) * W), row by row over the last dim
 * (row_norm.ph; whole_rows.ph's rms_row; rows3.ph's head_norm over [T, H, D]) */
static bool ref_row_norm(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *Y = ref_param(r, "Y");
  int64_t N = X->dims[X->rank - 1], R = X->n / N;
  for (int64_t i = 0; i < R; i++) {
    double ss = 0;
    for (int64_t j = 0; j < N; j++) ss += X->data[i * N + j] * X->data[i * N + j];
    double rs = 1.0 / sqrt(ss / (double)N + 1e-5);
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = X->data[i * N + j] * rs * W->data[j];
  }
  return true;
}

/* y = softmax of the row x of n (y may be x); returns its logsumexp */
static double softmax_row(const double *x, double *y, int64_t n) {
  double m = -INFINITY, l = 0;
  for (int64_t j = 0; j < n; j++) m = fmax(m, x[j]);
  for (int64_t j = 0; j < n; j++) l += exp(x[j] - m);
  for (int64_t j = 0; j < n; j++) y[j] = exp(x[j] - m) / l;
  return m + log(l);
}

/* Y = softmax of each row of X (one_pass.ph, softmax_rows) */
static bool ref_softmax_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) softmax_row(X->data + i * N, Y->data + i * N, N);
  return true;
}

/* C = silu(A) * B, elementwise (whole_rows.ph, silu_mul_row) */
static bool ref_silu_mul_rows(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *C = ref_param(r, "C");
  for (int64_t i = 0; i < A->n; i++) C->data[i] = A->data[i] / (1 + exp(-A->data[i])) * B->data[i];
  return true;
}

/* skip.ph: Y = 2x over X's columns, Z = x + 1 over Z's wider ones (x
 * loads as 0 past X's end) */
static bool ref_skip_two(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *Z = ref_param(r, "Z");
  int64_t R = X->dims[0], N = X->dims[1], M = Z->dims[1];
  for (int64_t i = 0; i < R; i++) {
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = 2 * X->data[i * N + j];
    for (int64_t j = 0; j < M; j++) Z->data[i * M + j] = (j < N ? X->data[i * N + j] : 0) + 1;
  }
  return true;
}

/* skip.ph: Y = 3x - 1 */
static bool ref_skip_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->n; i++) Y->data[i] = (double)(float)(3 * (float)X->data[i]) - 1;
  return true;
}

/* skip.ph: Y = x w + 0.5 a row */
static bool ref_skip_loop(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = X->data[i * N + j] * W->data[j] + 0.5;
  return true;
}

/* Q = i8(x / s), s = max(max |x|, 1e-5) / 127 a row, in f32 as the kernel
 * computes it (quant_rows.ph, quant_row); S = s */
static bool ref_quant_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Q = ref_param(r, "Q"), *S = ref_param(r, "S");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    float m = 0;
    for (int64_t j = 0; j < N; j++) m = fmaxf(m, fabsf((float)X->data[i * N + j]));
    float s = fmaxf(m, 0.00001f) / 127.0f;
    S->data[i] = s;
    for (int64_t j = 0; j < N; j++) {
      double q = trunc((double)((float)X->data[i * N + j] / s));
      Q->data[i * N + j] = q > 127 ? 127 : q < -128 ? -128 : q;
    }
  }
  return true;
}

/* B = 3 A - 1 (quant_rows.ph, widen_u8) */
static bool ref_widen_u8(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B");
  for (int64_t i = 0; i < A->n; i++) B->data[i] = 3 * A->data[i] - 1;
  return true;
}

/* Z = X + Y (whole_rows.ph, add_vec) */
static bool ref_add_vec(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *Z = ref_param(r, "Z");
  for (int64_t i = 0; i < X->n; i++) Z->data[i] = X->data[i] + Y->data[i];
  return true;
}

/* Out[i] = (m, l): the logsumexp pair of the first n columns of row i joined
 * with (m0, l0), m the max and l the sum of e^(x - m) (deferred.ph, lse_from) */
static bool ref_lse_from(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Out = ref_param(r, "Out");
  int64_t R = X->dims[0], N = X->dims[1], n = (int64_t)ref_scalar(r, "n");
  double m0 = (float)ref_scalar(r, "m0"), l0 = (float)ref_scalar(r, "l0");
  for (int64_t i = 0; i < R; i++) {
    double m = m0;
    for (int64_t j = 0; j < n && j < N; j++) m = fmax(m, X->data[i * N + j]);
    double l = l0 * exp(m0 - m);
    for (int64_t j = 0; j < n && j < N; j++) l += exp(X->data[i * N + j] - m);
    Out->data[i * 2] = m;
    Out->data[i * 2 + 1] = l;
  }
  return true;
}

/* Out[i] = (1.5 + sum x, sum x^2, max(-3, max x, 0 where the last block of
 * 128 is ragged: its columns past N load as zero)), Isum[i] = 7 + sum I
 * (deferred.ph, folds) */
static bool ref_folds(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *I = ref_param(r, "I"), *Out = ref_param(r, "Out"), *Is = ref_param(r, "Isum");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 1.5, q = 0, mx = N % 128 ? 0.0 : -INFINITY, si = 7;
    mx = fmax(mx, -3.0);
    for (int64_t j = 0; j < N; j++) {
      double x = X->data[i * N + j];
      s += x, q += x * x, mx = fmax(mx, x), si += I->data[i * N + j];
    }
    Out->data[i * 3] = s, Out->data[i * 3 + 1] = q, Out->data[i * 3 + 2] = mx;
    Is->data[i] = si;
  }
  return true;
}

/* Y = X + the row's sum through the end of each block of 64 (deferred.ph, prefix) */
static bool ref_prefix(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 0;
    for (int64_t b = 0; b < N; b += 64) {
      for (int64_t j = b; j < b + 64 && j < N; j++) s += X->data[i * N + j];
      for (int64_t j = b; j < b + 64 && j < N; j++) Y->data[i * N + j] = X->data[i * N + j] + s;
    }
  }
  return true;
}

/* Y = softmax of each row of X, Lse = its logsumexp (cluster_rows.ph,
 * softmax_rows) */
static bool ref_cluster_softmax(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *L = ref_param(r, "Lse");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) L->data[i] = softmax_row(X->data + i * N, Y->data + i * N, N);
  return true;
}

/* strip_rows.ph, lse_late: a softmax over columns 4096.. of each row (0
 * below), Lse its logsumexp */
static bool ref_lse_late(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *L = ref_param(r, "Lse");
  int64_t R = X->dims[0], N = X->dims[1], K0 = 4096;
  for (int64_t i = 0; i < R; i++) {
    for (int64_t j = 0; j < K0; j++) Y->data[i * N + j] = 0;
    L->data[i] = softmax_row(X->data + i * N + K0, Y->data + i * N + K0, N - K0);
  }
  return true;
}

/* strip_rows.ph, lse_store_between: m = max of X's row, X doubled in place,
 * Lse = m + log(sum exp(2x - m)) (the sum reads the stored row) */
static bool ref_lse_store_between(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *L = ref_param(r, "Lse");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < N; j++) m = fmax(m, X->data[i * N + j]);
    for (int64_t j = 0; j < N; j++) X->data[i * N + j] *= 2;
    for (int64_t j = 0; j < N; j++) s += exp(X->data[i * N + j] - m);
    L->data[i] = m + log(s);
  }
  return true;
}

/* X = softmax of each row of X in place, Lse = its logsumexp (cluster_rows.ph,
 * softmax_inplace) */
static bool ref_cluster_softmax_inplace(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *L = ref_param(r, "Lse");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) L->data[i] = softmax_row(X->data + i * N, X->data + i * N, N);
  return true;
}

/* cluster_rows.ph, norm_rows: the row's mean, rstd = 1 / sqrt(mean x^2 -
 * mean^2 + 0.001), max(-1000, max x, and 0 where the last block of 32 is
 * ragged: its columns past N load as zero), mean |x - mean| into Stats;
 * Y = (x - mean) rstd; Wide = 0.5 + sum x, Isum = 3 + sum I */
static bool ref_cluster_norm(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *I = ref_param(r, "I"), *Y = ref_param(r, "Y"), *St = ref_param(r, "Stats");
  CaseParam *W = ref_param(r, "Wide"), *Is = ref_param(r, "Isum");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 0, q = 0, mx = N % 32 ? 0.0 : -INFINITY, si = 3, a = 0;
    mx = fmax(mx, -1000.0);
    for (int64_t j = 0; j < N; j++) {
      double x = X->data[i * N + j];
      s += x, q += x * x, mx = fmax(mx, x), si += I->data[i * N + j];
    }
    double mean = s / N;
    for (int64_t j = 0; j < N; j++) a += fabs(X->data[i * N + j] - mean);
    double rstd = 1 / sqrt(q / N - mean * mean + 0.001);
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = (X->data[i * N + j] - mean) * rstd;
    St->data[i * 4] = mean, St->data[i * 4 + 1] = rstd, St->data[i * 4 + 2] = mx, St->data[i * 4 + 3] = a / N;
    W->data[i] = 0.5 + s, Is->data[i] = si;
  }
  return true;
}

/* loop_past_end.ph: S = sum x over the row, Y = bf16(x / 2 - S) */
static bool ref_past_end(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *S = ref_param(r, "S");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 0;
    for (int64_t j = 0; j < N; j++) s += X->data[i * N + j];
    S->data[i] = s;
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = to_bf16(X->data[i * N + j] * 0.5 - (double)(float)s);
  }
  return true;
}

/* walk_skip.ph, fills: over the columns [0, hi), hi = cdiv(N, 1024) 1024,
 * s = sum of x (1 past N), q = max of x - 10 (0 past N); z = sum 2 x */
static bool ref_walk_skip_fills(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *S = ref_param(r, "S");
  int64_t R = X->dims[0], N = X->dims[1], hi = (N + 1023) / 1024 * 1024;
  for (int64_t i = 0; i < R; i++) {
    const double *x = X->data + i * N;
    double s = (double)(hi - N), q = hi > N ? 0.0 : -INFINITY, z = 0;
    for (int64_t j = 0; j < N; j++) s += x[j], q = fmax(q, x[j] - 10), z += 2 * x[j];
    S->data[i * 3] = s, S->data[i * 3 + 1] = q, S->data[i * 3 + 2] = z;
  }
  return true;
}

/* walk_skip.ph, fills16: s = sum of x over [0, hi), 0.5 past N */
static bool ref_walk_skip_fills16(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *S = ref_param(r, "S");
  int64_t R = X->dims[0], N = X->dims[1], hi = (N + 1023) / 1024 * 1024;
  for (int64_t i = 0; i < R; i++) {
    double s = 0.5 * (double)(hi - N);
    for (int64_t j = 0; j < N; j++) s += X->data[i * N + j];
    S->data[i] = s;
  }
  return true;
}

/* shift_walk.ph, phantoms: over the columns of the plain walk, [0, hi) with
 * hi = cdiv(N, 256) 256 (those past N load as zero): s = sum (x + 1), q =
 * max(-1000, max (x - 5)), and the row's logsumexp over [0, N); Y =
 * bf16(exp(x - lse) W + s / 1000) */
static bool ref_shift_walk(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *Y = ref_param(r, "Y"), *S = ref_param(r, "S");
  int64_t R = X->dims[0], N = X->dims[1], hi = (N + 255) / 256 * 256;
  for (int64_t i = 0; i < R; i++) {
    const double *x = X->data + i * N;
    double s = (double)(hi - N), q = hi > N ? -5.0 : -1000.0, m = -INFINITY, l = 0;
    for (int64_t j = 0; j < N; j++) s += x[j] + 1, q = fmax(q, x[j] - 5), m = fmax(m, x[j]);
    for (int64_t j = 0; j < N; j++) l += exp(x[j] - m);
    double lse = m + log(l);
    S->data[i * 3] = s, S->data[i * 3 + 1] = q, S->data[i * 3 + 2] = lse;
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = to_bf16(exp(x[j] - lse) * W->data[j] + s * 0.001);
  }
  return true;
}

/* shift_walk.ph, block_positions: Y = X T[c mod 64] + c mod 64 */
static bool ref_shift_walk_blocks(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *T = ref_param(r, "T"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < N; j++)
      Y->data[i * N + j] = (double)(float)(X->data[i * N + j] * T->data[j % 64]) + (double)(j % 64);
  return true;
}

/* cluster_rows.ph, weighted_rows: s = sum x w over the row, m = max x w,
 * S = s, Y = x w - s + m */
static bool ref_cluster_weighted(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *Y = ref_param(r, "Y"), *S = ref_param(r, "S");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 0, m = -INFINITY;
    for (int64_t j = 0; j < N; j++) {
      double xw = (double)(float)(X->data[i * N + j] * W->data[j]);
      s += xw, m = fmax(m, xw);
    }
    S->data[i] = s;
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = (double)(float)(X->data[i * N + j] * W->data[j]) - s + m;
  }
  return true;
}

/* Y = X / max(D's row), each quotient correctly rounded to f32 (div_rows.ph):
 * the double quotient of two floats rounded to float is the float quotient
 * rounded to nearest (53 >= 2 * 24 + 2), so the case can ask for equality */
static bool ref_div_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *D = ref_param(r, "D"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double l = -INFINITY;
    for (int64_t j = 0; j < N; j++) l = fmax(l, D->data[i * N + j]);
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = (float)(X->data[i * N + j] / l);
  }
  return true;
}

/* Y = X / s (div_rows.ph, div_scalar), rounded to f32 as ref_div_rows */
static bool ref_div_scalar(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *S = ref_param(r, "s"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->n; i++) Y->data[i] = (float)(X->data[i] / (double)(float)S->scalar);
  return true;
}

/* Y[i, j] = X[i, j] / W[j] (div_rows.ph, div_cols) */
static bool ref_div_cols(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = (float)(X->data[i * N + j] / W->data[j]);
  return true;
}

/* Y = (X - mean) / sqrt(var + 1e-5) * W + B, row by row (staged_rows.ph) */
static bool ref_layer_norm_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *B = ref_param(r, "B"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s1 = 0, s2 = 0;
    for (int64_t j = 0; j < N; j++) s1 += X->data[i * N + j], s2 += X->data[i * N + j] * X->data[i * N + j];
    double mean = s1 / (double)N, rstd = 1.0 / sqrt(fmax(s2 / (double)N - mean * mean, 0.0) + 1e-5);
    for (int64_t j = 0; j < N; j++) Y->data[i * N + j] = (X->data[i * N + j] - mean) * rstd * W->data[j] + B->data[j];
  }
  return true;
}

/* A = |x|, S = sigmoid(x), Q = 1 / sqrt(|x| + 1), E = erf(x), M = the
 * least of each row (everyday_math.ph) */
static bool ref_everyday_math(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *A = ref_param(r, "A"), *S = ref_param(r, "S"), *Q = ref_param(r, "Q"),
            *E = ref_param(r, "E"), *M = ref_param(r, "M");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double m = INFINITY;
    for (int64_t j = 0; j < N; j++) {
      double x = X->data[i * N + j];
      A->data[i * N + j] = fabs(x);
      S->data[i * N + j] = 1 / (1 + exp(-x));
      Q->data[i * N + j] = 1 / sqrt(fabs(x) + 1);
      E->data[i * N + j] = erf(x);
      m = fmin(m, x);
    }
    M->data[i] = m;
  }
  return true;
}

/* pow.ph: P = (|x| + 0.5)^y, Q = x^round(2y), O = x^0 + 0^(|y| + 0.5),
 * H = bf16(bf16(x)^3) */
static bool ref_pow(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *P = ref_param(r, "P"), *Q = ref_param(r, "Q"),
            *O = ref_param(r, "O"), *H = ref_param(r, "H");
  int64_t n = X->dims[0] * X->dims[1];
  for (int64_t i = 0; i < n; i++) {
    double x = X->data[i], y = Y->data[i];
    P->data[i] = pow(fabs(x) + 0.5, y);
    Q->data[i] = pow(x, nearbyint(2 * y));
    O->data[i] = pow(x, 0.0) + pow(0.0, fabs(y) + 0.5);
    double b = to_bf16((float)x);
    H->data[i] = to_bf16((float)(b * b * b));
  }
  return true;
}

/* fma_rows (fma.ph): each fma rounded once, in f32 (fmaf), Z then to bf16 */
static bool ref_fma_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *H = ref_param(r, "H"), *Y = ref_param(r, "Y"),
            *E = ref_param(r, "E"), *Z = ref_param(r, "Z");
  float s = (float)ref_scalar(r, "s");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < N; j++) {
      float x = (float)X->data[i * N + j], h = (float)H->data[i * N + j];
      Y->data[i * N + j] = fmaf(x, (float)W->data[i], s);
      E->data[i * N + j] = fmaf(x, x, -(x * x));
      Z->data[i * N + j] = to_bf16(fmaf(h, h, h));
    }
  return true;
}

/* colsum, colmax, colmin, sum, round(4x) and colsum(i8(round(4x))) of X
 * (col_reductions.ph) */
static bool ref_col_reductions(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *S = ref_param(r, "S"), *MX = ref_param(r, "MX"), *MN = ref_param(r, "MN"),
            *T = ref_param(r, "T"), *RD = ref_param(r, "RD"), *IS = ref_param(r, "IS");
  int64_t R = X->dims[0], C = X->dims[1];
  double total = 0;
  for (int64_t j = 0; j < C; j++) {
    double s = 0, mx = -INFINITY, mn = INFINITY, is = 0;
    for (int64_t i = 0; i < R; i++) {
      double x = X->data[i * C + j], q = nearbyint((double)(float)(x * 4.0));
      s += x, mx = fmax(mx, x), mn = fmin(mn, x);
      RD->data[i * C + j] = q;
      is += q < -128 ? -128 : q > 127 ? 127 : q;
    }
    S->data[j] = s, MX->data[j] = mx, MN->data[j] = mn, IS->data[j] = is;
    total += s;
  }
  T->data[0] = total;
  return true;
}

/* Y[i] += 2 in the blocks of 64 starting before lim (early_return.ph) */
static bool ref_early_return(RefCtx *r) {
  CaseParam *Y = ref_param(r, "Y"), *L = ref_param(r, "lim");
  for (int64_t i = 0; i < Y->dims[0]; i++)
    if (i / 64 * 64 < (int64_t)L->scalar) Y->data[i] += 2;
  return true;
}

/* the blocks of 32 columns before `stop` whose first element in row 0 is
 * not negative: each row's sum over them, and their count (break_continue.ph) */
static bool ref_break_continue(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *C = ref_param(r, "C"), *S = ref_param(r, "stop");
  int64_t R = X->dims[0], N = X->dims[1], stop = (int64_t)S->scalar;
  int n = 0;
  for (int64_t c0 = 0; c0 < N && c0 < stop; c0 += 32)
    if (!(X->data[c0] < 0)) n++;
  for (int64_t i = 0; i < R; i++) {
    double s = 0;
    for (int64_t c0 = 0; c0 < N && c0 < stop; c0 += 32) {
      if (X->data[c0] < 0) continue;
      for (int64_t j = c0; j < c0 + 32 && j < N; j++) s += X->data[i * N + j];
    }
    Y->data[i] = s;
    C->data[i] = n;
  }
  return true;
}

/* Y[i] = X[i - 2] + X[i - 1] + X[i], zeros before the start (negative_starts.ph) */
static bool ref_causal_sum3(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->dims[0]; i++)
    Y->data[i] = (i >= 2 ? X->data[i - 2] : 0) + (i >= 1 ? X->data[i - 1] : 0) + X->data[i];
  return true;
}

/* I[r] = the first index of row r's largest element (argmax.ph) */
static bool ref_argmax_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *I = ref_param(r, "I");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    int64_t best = 0;
    for (int64_t j = 1; j < N; j++)
      if ((float)X->data[i * N + j] > (float)X->data[i * N + best]) best = j;
    I->data[i] = (double)best;
  }
  return true;
}

/* Y = cumsum(X) down dim 0, X of rank 1 or 2 (scan.ph) */
static bool ref_cumsum_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->rank == 2 ? X->dims[1] : 1;
  for (int64_t j = 0; j < N; j++) {
    double acc = 0;
    for (int64_t i = 0; i < R; i++) Y->data[i * N + j] = acc += X->data[i * N + j];
  }
  return true;
}

/* S_t = exp(G_t) S_{t-1} + K_t^T V_t, O_t = Q_t S_t, token by token
 * (gla_chunks.ph, which computes it a chunk at a time) */
static bool ref_gla_recurrence(RefCtx *r) {
  CaseParam *Q = ref_param(r, "Q"), *K = ref_param(r, "K"), *V = ref_param(r, "V"), *G = ref_param(r, "G"),
            *O = ref_param(r, "O");
  int64_t N = Q->dims[0], D = Q->dims[1];
  double *S = calloc((size_t)(D * D), sizeof *S);
  if (!S) return false;
  for (int64_t t = 0; t < N; t++) {
    double a = exp(G->data[t]);
    for (int64_t i = 0; i < D; i++)
      for (int64_t j = 0; j < D; j++) S[i * D + j] = a * S[i * D + j] + K->data[t * D + i] * V->data[t * D + j];
    for (int64_t j = 0; j < D; j++) {
      double o = 0;
      for (int64_t i = 0; i < D; i++) o += Q->data[t * D + i] * S[i * D + j];
      O->data[t * D + j] = o;
    }
  }
  free(S);
  return true;
}

/* Y = tril(X), S = rowsum(Y) (scan.ph, tril_block) */
static bool ref_tril_block(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *S = ref_param(r, "S");
  int64_t R = X->dims[0];
  for (int64_t i = 0; i < R; i++) {
    double s = 0;
    for (int64_t j = 0; j < R; j++) {
      double y = j <= i ? X->data[i * R + j] : 0;
      Y->data[i * R + j] = y;
      s += y;
    }
    S->data[i] = s;
  }
  return true;
}

/* H = X + Res; Res = H; Y = H / sqrt(mean(H^2) + 1e-5) * W (one_pass.ph, rms_residual) */
static bool ref_rms_residual(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Res = ref_param(r, "Res"), *W = ref_param(r, "W"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double ss = 0;
    for (int64_t j = 0; j < N; j++) {
      double h = X->data[i * N + j] + Res->data[i * N + j];
      ss += h * h;
    }
    double rs = 1.0 / sqrt(ss / (double)N + 1e-5);
    for (int64_t j = 0; j < N; j++) {
      double h = X->data[i * N + j] + Res->data[i * N + j];
      Res->data[i * N + j] = h;
      Y->data[i * N + j] = h * rs * W->data[j];
    }
  }
  return true;
}

/* s = rowsum(X), X = 2 X in place, then Y = X + s (one_pass.ph, scale_twice) */
static bool ref_scale_twice(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < R; i++) {
    double s = 0;
    for (int64_t j = 0; j < N; j++) s += X->data[i * N + j];
    for (int64_t j = 0; j < N; j++) {
      X->data[i * N + j] *= 2;
      Y->data[i * N + j] = X->data[i * N + j] + s;
    }
  }
  return true;
}

/* S = rowsum, MX = rowmax of an i8 tensor */
static bool ref_rowsum_i8(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *S = ref_param(r, "S"), *MX = ref_param(r, "MX");
  for (int64_t i = 0; i < X->dims[0]; i++) {
    double s = 0, m = -INFINITY;
    for (int64_t j = 0; j < X->dims[1]; j++) s += E2(X, i, j), m = fmax(m, E2(X, i, j));
    S->data[i] = s;
    MX->data[i] = m;
  }
  return true;
}

/* Y = rowsum(X) + C, U = T^T (reduce.ph, rowsum_plus_col) */
static bool ref_rowsum_plus_col(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *C = ref_param(r, "C"), *Y = ref_param(r, "Y"), *T = ref_param(r, "T"),
            *U = ref_param(r, "U");
  for (int64_t i = 0; i < X->dims[0]; i++) {
    double s = 0;
    for (int64_t j = 0; j < X->dims[1]; j++) s += E2(X, i, j);
    Y->data[i] = s + C->data[i];
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) U->data[i * 4 + j] = T->data[j * 4 + i];
  return true;
}

/* ----------------------------------------------------------- conversions */

/* H = f16(x), BH = bf16(x) */
static bool ref_to_f16_bf16(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *H = ref_param(r, "H"), *BH = ref_param(r, "BH");
  for (int64_t i = 0; i < X->n; i++) {
    H->data[i] = to_f16(X->data[i]);
    BH->data[i] = to_bf16(X->data[i]);
  }
  return true;
}

/* S = (float)D, P = X * W in double */
static bool ref_to_f32_f64(RefCtx *r) {
  CaseParam *D = ref_param(r, "D"), *X = ref_param(r, "X"), *W = ref_param(r, "W"), *S = ref_param(r, "S"),
            *P = ref_param(r, "P");
  for (int64_t i = 0; i < D->n; i++) {
    S->data[i] = (double)(float)D->data[i];
    P->data[i] = X->data[i] * W->data[i];
  }
  return true;
}

/* truncation toward zero, saturated to each type */
static bool ref_to_int(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *L = ref_param(r, "L");
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *C = ref_param(r, "C"), *D = ref_param(r, "D"),
            *E = ref_param(r, "E");
  for (int64_t i = 0; i < X->n; i++) {
    double x = X->data[i], l = L->data[i];
    A->data[i] = to_int_sat(x, -128, 127);
    B->data[i] = to_int_sat(x, 0, 255);
    C->data[i] = to_int_sat(x, -2147483648.0, 2147483647.0);
    D->data[i] = to_int_sat(l, -2147483648.0, 2147483647.0);
    E->data[i] = trunc(l);
  }
  return true;
}

/* F = i * 0.5, H = j, P = i * i in 64 bits */
static bool ref_int_to_other(RefCtx *r) {
  CaseParam *I = ref_param(r, "I"), *J = ref_param(r, "J"), *F = ref_param(r, "F"), *H = ref_param(r, "H"),
            *P = ref_param(r, "P");
  for (int64_t k = 0; k < I->n; k++) {
    F->data[k] = I->data[k] * 0.5;
    H->data[k] = J->data[k];
    P->data[k] = I->data[k] * I->data[k];
  }
  return true;
}

/* ------------------------------------------------------------- operators */

/* NX = -x, NI = -i, CI = ~i, NB = !(x > 0) */
static bool ref_unary_ops(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *I = ref_param(r, "I"), *NX = ref_param(r, "NX"), *NI = ref_param(r, "NI"),
            *CI = ref_param(r, "CI"), *NB = ref_param(r, "NB");
  for (int64_t k = 0; k < X->n; k++) {
    NX->data[k] = -X->data[k];
    NI->data[k] = -I->data[k];
    CI->data[k] = (double)~(int64_t)I->data[k];
    NB->data[k] = X->data[k] > 0 ? 0 : 1;
  }
  return true;
}

/* Y[.., 0..4] = a + b, a - b, a * b, a / d, a % d with d = b >= 0 ? b + 1 : b */
static bool ref_int_arith(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *Y = ref_param(r, "Y");
  for (int64_t k = 0; k < A->n; k++) {
    int64_t a = (int64_t)A->data[k], b = (int64_t)B->data[k], d = b >= 0 ? b + 1 : b;
    double *y = &Y->data[k * 5];
    y[0] = (double)(a + b);
    y[1] = (double)(a - b);
    y[2] = (double)(a * b);
    y[3] = (double)(a / d);
    y[4] = (double)(a % d);
  }
  return true;
}

/* hazards.ph: C = A @ B + Z */
static bool ref_frag_plus_staged(RefCtx *r) {
  matmul(r, false);
  CaseParam *Z = ref_param(r, "Z"), *C = ref_param(r, "C");
  for (int64_t k = 0; k < C->n; k++) C->data[k] += Z->data[k];
  return true;
}

/* hazards.ph: C[i] = max(max_j (A @ B)[i, j], M0[i]) */
static bool ref_rowmax_staged(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *M0 = ref_param(r, "M0"), *C = ref_param(r, "C");
  int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
  for (int64_t i = 0; i < M; i++) {
    double mx = M0->data[i];
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += A->data[i * K + k] * B->data[k * N + j];
      mx = fmax(mx, acc);
    }
    C->data[i] = mx;
  }
  return true;
}

/* hazards.ph: Y = 3 X, diagonal 0 */
static bool ref_point_writes_staged(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < 4; i++)
    for (int64_t j = 0; j < 4; j++) Y->data[i * 4 + j] = i == j ? 0 : 3 * X->data[i * 4 + j];
  return true;
}

/* hazards.ph: B = A (before the kernel overwrote it) */
static bool ref_stage_then_store(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B");
  for (int64_t k = 0; k < A->n; k++) B->data[k] = A->data[k];
  return true;
}

/* hazards.ph: B = C */
static bool ref_store_then_stage(RefCtx *r) {
  CaseParam *C = ref_param(r, "C"), *B = ref_param(r, "B");
  for (int64_t k = 0; k < C->n; k++) B->data[k] = C->data[k];
  return true;
}

/* Y = flag ? 2 X : 2 */
static bool ref_if_stage(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  bool flag = ref_scalar(r, "flag") != 0;
  for (int64_t k = 0; k < X->n; k++) Y->data[k] = flag ? 2 * X->data[k] : 2;
  return true;
}

/* Y = a/8, a%8, a/1, a%1, a/6, a%32; Z = l/1024, l%1024, l/2, l%6 (C: toward zero) */
static bool ref_int_divrem_const(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *L = ref_param(r, "L"), *Y = ref_param(r, "Y"), *Z = ref_param(r, "Z");
  for (int64_t k = 0; k < A->n; k++) {
    int64_t a = (int64_t)A->data[k], l = (int64_t)L->data[k];
    double *y = &Y->data[k * 6], *z = &Z->data[k * 4];
    y[0] = (double)(a / 8), y[1] = (double)(a % 8), y[2] = (double)(a / 1);
    y[3] = (double)(a % 1), y[4] = (double)(a / 6), y[5] = (double)(a % 32);
    z[0] = (double)(l / 1024), z[1] = (double)(l % 1024), z[2] = (double)(l / 2), z[3] = (double)(l % 6);
  }
  return true;
}

/* Y[.., 0..3] = a + b, a - b, a * b, a / b, each rounded to f16 */
static bool ref_f16_arith(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *Y = ref_param(r, "Y");
  for (int64_t k = 0; k < A->n; k++) {
    double a = A->data[k], b = B->data[k], *y = &Y->data[k * 4];
    y[0] = to_f16(a + b);
    y[1] = to_f16(a - b);
    y[2] = to_f16(a * b);
    y[3] = to_f16(a / b);
  }
  return true;
}

/* Y[.., 0..4] = a << s, a >> s (arithmetic), a & 0x5a5, a | s, a ^ (77 s) */
static bool ref_bit_ops(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *S = ref_param(r, "S"), *Y = ref_param(r, "Y");
  for (int64_t k = 0; k < A->n; k++) {
    int64_t a = (int64_t)A->data[k], s = (int64_t)S->data[k];
    double *y = &Y->data[k * 5];
    y[0] = (double)(a * ((int64_t)1 << s));
    y[1] = floor((double)a / (double)((int64_t)1 << s));
    y[2] = (double)(a & 0x5a5);
    y[3] = (double)(a | s);
    y[4] = (double)(a ^ (s * 77));
  }
  return true;
}

/* comparisons and logic, one bit each */
static bool ref_compare_logic(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *Y = ref_param(r, "Y");
  for (int64_t k = 0; k < A->n; k++) {
    double a = A->data[k], b = B->data[k];
    bool an = a < 0, bn = b < 0;
    int v = (a < b) | (a > b) << 1 | (a <= b) << 2 | (a >= b) << 3 | (a == b) << 4 | (a != b) << 5 |
            (an && bn) << 6 | (an || bn) << 7 | (an != bn) << 8 | (an && bn) << 9 | (an || bn) << 10;
    Y->data[k] = v;
  }
  return true;
}

/* Y = x R[i] + C[j] - V[j] s + R[i] C[j] */
static bool ref_broadcast(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *R = ref_param(r, "R"), *C = ref_param(r, "C"), *V = ref_param(r, "V"),
            *Y = ref_param(r, "Y");
  double s = ref_scalar(r, "s");
  for (int64_t i = 0; i < X->dims[0]; i++)
    for (int64_t j = 0; j < X->dims[1]; j++)
      E2(Y, i, j) = E2(X, i, j) * R->data[i] + C->data[j] - V->data[j] * s + R->data[i] * C->data[j];
  return true;
}

/* ------------------------------------------------------------ subscripts */

/* Y = t * S[b, 2] + t[1, 3], t the 5 rows of block b (zero past the end) */
static bool ref_point_subscript(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *S = ref_param(r, "S"), *Y = ref_param(r, "Y");
  int64_t M = X->dims[0];
  for (int64_t i = 0; i < M; i++) {
    int64_t b = i / 5, p = b * 5 + 1;
    double pv = p < M ? E2(X, p, 3) : 0;
    for (int64_t j = 0; j < 12; j++) E2(Y, i, j) = E2(X, i, j) * E2(S, b, 2) + pv;
  }
  return true;
}

/* t = 2 X[8b :+ 8] (zero past the end); A[b] = t[2 :+ 5, 3 : 10],
 * R[b] = t[b % 8], W[b] = t[j :+ 3] with j = (b + k) % 6 */
static bool ref_extract_subtile(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *A = ref_param(r, "A"), *R = ref_param(r, "R"), *W = ref_param(r, "W");
  int64_t M = X->dims[0], G = A->dims[0], k = (int64_t)ref_scalar(r, "k");
#define T(b, i, j) ((b) * 8 + (i) < M ? 2 * E2(X, (b) * 8 + (i), j) : 0.0)
  for (int64_t b = 0; b < G; b++) {
    for (int64_t i = 0; i < 5; i++)
      for (int64_t j = 0; j < 7; j++) E3(A, b, i, j) = T(b, 2 + i, 3 + j);
    for (int64_t j = 0; j < 12; j++) E2(R, b, j) = T(b, b % 8, j);
    int64_t s = (b + k) % 6;
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < 12; j++) E3(W, b, i, j) = T(b, s + i, j);
  }
#undef T
  return true;
}

/* Y = 3 X; Z[p, s, j] = X[p, s, 6 + j] - 1 */
static bool ref_rank3_slices(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *Z = ref_param(r, "Z");
  for (int64_t k = 0; k < X->n; k++) Y->data[k] = 3 * X->data[k];
  for (int64_t p = 0; p < 2; p++)
    for (int64_t s = 0; s < X->dims[1]; s++)
      for (int64_t j = 0; j < 6; j++) E3(Z, p, s, j) = E3(X, p, s, 6 + j) - 1;
  return true;
}

/* Y[a, i, c, :] = X[a, i, c, :] + 10 X[a, 1, c, :]; R[a, c, :] = X[a, 0, c, :] X[a, 2, c, 5] */
static bool ref_rank4_slices(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *R = ref_param(r, "R");
  for (int64_t a = 0; a < X->dims[0]; a++)
    for (int64_t c = 0; c < X->dims[2]; c++)
      for (int64_t j = 0; j < 12; j++) {
        for (int64_t i = 0; i < 3; i++) E4(Y, a, i, c, j) = E4(X, a, i, c, j) + 10 * E4(X, a, 1, c, j);
        E3(R, a, c, j) = E4(X, a, 0, c, j) * E4(X, a, 2, c, 5);
      }
  return true;
}

/* ---------------------------------------------------------------- ragged */

/* spec/conformance/qload.ph: O = 2Q + 1, R[b, s, h, 0] = the sum of Q[b, s, h, :] */
static bool ref_qload(RefCtx *r) {
  CaseParam *Q = ref_param(r, "Q"), *O = ref_param(r, "O"), *R = ref_param(r, "R");
  for (int64_t k = 0; k < Q->n; k++) O->data[k] = 2 * Q->data[k] + 1;
  int64_t D = Q->dims[3];
  for (int64_t k = 0; k < Q->n / D; k++) {
    double s = 0;
    for (int64_t d = 0; d < D; d++) s += Q->data[k * D + d];
    R->data[k] = s;
  }
  return true;
}

/* spec/conformance/qload.ph, qload_edges: R[b, s, h, 0] = Q[b, s, h, 0] + Q[b, s, h, D - 1] */
static bool ref_qload_edges(RefCtx *r) {
  CaseParam *Q = ref_param(r, "Q"), *R = ref_param(r, "R");
  int64_t D = Q->dims[3];
  for (int64_t k = 0; k < Q->n / D; k++) R->data[k] = Q->data[k * D] + Q->data[k * D + D - 1];
  return true;
}

/* Y = 2X + 1 */
static bool ref_ragged_copy(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t k = 0; k < X->n; k++) Y->data[k] = 2 * X->data[k] + 1;
  return true;
}

/* Y[r, c] = X[r, c] + X[16 (r / 16) + r mod 8, c] (spec/conformance/pipeline.ph) */
static bool ref_pipe_nested(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t M = X->dims[0], N = X->dims[1];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      int64_t a = 16 * (i / 16) + i % 8; /* always < M: row i exists, and a <= i */
      Y->data[i * N + j] = X->data[i * N + j] + X->data[a * N + j];
    }
  return true;
}

/* R = rowsum(X), S[i, j] = X[i, 4 + j] or 0 past the end */
static bool ref_ragged_load_zero(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *R = ref_param(r, "R"), *S = ref_param(r, "S");
  int64_t N = X->dims[1];
  for (int64_t i = 0; i < X->dims[0]; i++) {
    double s = 0;
    for (int64_t j = 0; j < N; j++) s += E2(X, i, j);
    R->data[i] = s;
    for (int64_t j = 0; j < 16; j++) E2(S, i, j) = 4 + j < N ? E2(X, i, 4 + j) : 0;
  }
  return true;
}

/* Y = 3X - 2 */
static bool ref_npot_tiles(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t k = 0; k < X->n; k++) Y->data[k] = 3 * X->data[k] - 2;
  return true;
}

/* R = rowsum(X); C[g, j] = sum of X[21 g + i, j] over i < 7 (zero past the end) */
static bool ref_npot_reduce(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *R = ref_param(r, "R"), *C = ref_param(r, "C");
  int64_t M = X->dims[0];
  for (int64_t i = 0; i < M; i++) {
    double s = 0;
    for (int64_t j = 0; j < 96; j++) s += E2(X, i, j);
    R->data[i] = s;
  }
  for (int64_t g = 0; g < C->dims[0]; g++)
    for (int64_t j = 0; j < 5; j++) {
      double s = 0;
      for (int64_t i = 0; i < 7 && 21 * g + i < M; i++) s += E2(X, 21 * g + i, j);
      E2(C, g, j) = s;
    }
  return true;
}

/* --------------------------------------------------------- more statements */

/* Y = X * 0.5 + the CTA that owns the block of 4 rows (block index mod 3) */
static bool ref_grid_stride(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  for (int64_t i = 0; i < X->dims[0]; i++)
    for (int64_t j = 0; j < X->dims[1]; j++) E2(Y, i, j) = E2(X, i, j) * 0.5 + (double)((i / 4) % 3);
  return true;
}

/* Y[i] = [sum, prod(1 + x / 8), count(x > 0)], C[i] = count(x > 0) */
static bool ref_scalar_vars(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *C = ref_param(r, "C");
  for (int64_t i = 0; i < X->dims[0]; i++) {
    double s = 0, p = 1;
    int n = 0;
    for (int64_t j = 0; j < X->dims[1]; j++) {
      double x = E2(X, i, j);
      s += x;
      p *= 1 + x / 8;
      n += x > 0;
    }
    E2(Y, i, 0) = s;
    E2(Y, i, 1) = p;
    E2(Y, i, 2) = n;
    C->data[i] = n;
  }
  return true;
}

/* SE = rowsum(exp(x)), MQ = rowmax(-x^2 - 1) over 12 columns; MS the same
 * two summed over the first 7 columns */
static bool ref_reduce_computed(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *SE = ref_param(r, "SE"), *MQ = ref_param(r, "MQ"), *MS = ref_param(r, "MS");
  for (int64_t i = 0; i < X->dims[0]; i++) {
    double se = 0, mq = -INFINITY, se7 = 0, mq7 = -INFINITY;
    for (int64_t j = 0; j < 12; j++) {
      double x = E2(X, i, j), q = -(x * x) - 1;
      se += exp(x);
      mq = fmax(mq, q);
      if (j < 7) se7 += exp(x), mq7 = fmax(mq7, q);
    }
    SE->data[i] = se;
    MQ->data[i] = mq;
    MS->data[i] = mq7 + se7;
  }
  return true;
}

/* F = h + bh (f32), G = f16(i + h), P = a * 1.5, S = a + u */
static bool ref_join_types(RefCtx *r) {
  CaseParam *H = ref_param(r, "H"), *BH = ref_param(r, "BH"), *I = ref_param(r, "I"), *A = ref_param(r, "A"),
            *U = ref_param(r, "U"), *F = ref_param(r, "F"), *G = ref_param(r, "G"), *P = ref_param(r, "P"),
            *S = ref_param(r, "S");
  for (int64_t k = 0; k < H->n; k++) {
    F->data[k] = (double)(float)(H->data[k] + BH->data[k]);
    G->data[k] = to_f16(I->data[k] + H->data[k]);
    P->data[k] = A->data[k] * 1.5;
    S->data[k] = A->data[k] + U->data[k];
  }
  return true;
}

/* C = exp(A) @ exp(B), D = exp(A) @ exp(BT)^T */
static bool ref_dot_slack(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *BT = ref_param(r, "BT"), *C = ref_param(r, "C"),
            *D = ref_param(r, "D");
  for (int64_t i = 0; i < A->dims[0]; i++)
    for (int64_t j = 0; j < 12; j++) {
      double c = 0, d = 0;
      for (int64_t k = 0; k < 7; k++) {
        c += exp(E2(A, i, k)) * exp(E2(B, k, j));
        d += exp(E2(A, i, k)) * exp(E2(BT, j, k));
      }
      E2(C, i, j) = c;
      E2(D, i, j) = d;
    }
  return true;
}

/* C = A' @ B with A'[:, k] = 0 where k % 16 < 4 */
static bool ref_dot_var_write(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *C = ref_param(r, "C");
  int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        if (k % 16 >= 4) acc += E2(A, i, k) * E2(B, k, j);
      E2(C, i, j) = acc;
    }
  return true;
}

/* long_rows: Y = X - (the max of the row's block of W columns, elements
 * past C counting as 0) + 1; W = 128, or 80 for long_rows_80 */
static bool long_rows_ref(RefCtx *r, int64_t W) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], C = X->dims[1];
  for (int64_t i = 0; i < R; i++)
    for (int64_t c0 = 0; c0 < C; c0 += W) {
      double m = -INFINITY;
      for (int64_t c = c0; c < c0 + W; c++) m = fmax(m, c < C ? E2(X, i, c) : 0.0);
      for (int64_t c = c0; c < c0 + W && c < C; c++) E2(Y, i, c) = E2(X, i, c) - m + 1;
    }
  return true;
}
static bool ref_long_rows(RefCtx *r) { return long_rows_ref(r, 128); }
/* long_rows_strided: long_rows over X[:, :, 1] (blocks of 128 columns) into
 * Y[:, :, 1]; Y[:, :, 0] is not written */
static bool ref_long_rows_strided(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y");
  int64_t R = X->dims[0], C = X->dims[1];
  for (int64_t i = 0; i < R; i++)
    for (int64_t c0 = 0; c0 < C; c0 += 128) {
      double m = -INFINITY;
      for (int64_t c = c0; c < c0 + 128; c++) m = fmax(m, c < C ? E3(X, i, c, 1) : 0.0);
      for (int64_t c = c0; c < c0 + 128 && c < C; c++) E3(Y, i, c, 1) = E3(X, i, c, 1) - m + 1;
    }
  return true;
}

/* long_rows_scalar_dot: Y = Z + sum_k A[0, k] B[k, 0] */
static bool ref_long_rows_scalar_dot(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *Z = ref_param(r, "Z"), *Y = ref_param(r, "Y");
  double s = 0;
  for (int64_t k = 0; k < 16; k++) s += A->data[k] * B->data[k];
  for (int64_t i = 0; i < Z->n; i++) Y->data[i] = Z->data[i] + s;
  return true;
}
static bool ref_long_rows_80(RefCtx *r) { return long_rows_ref(r, 80); }

/* Y[r] = X[r, Idx[r]], zero where the index is outside the row */
static bool ref_gather(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *I = ref_param(r, "Idx"), *Y = ref_param(r, "Y");
  int64_t N = X->dims[1];
  for (int64_t y = 0; y < X->dims[0]; y++) {
    double k = I->data[y];
    Y->data[y] = k >= 0 && k < (double)N ? X->data[y * N + (int64_t)k] : 0;
  }
  return true;
}

/* C += colsum(X) (atomics.ph) */
static bool ref_atomic_colsum(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *C = ref_param(r, "C");
  for (int64_t j = 0; j < X->dims[1]; j++)
    for (int64_t i = 0; i < X->dims[0]; i++) C->data[j] += E2(X, i, j);
  return true;
}

/* C += A B (atomics.ph) */
static bool ref_atomic_splitk(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *C = ref_param(r, "C");
  int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += E2(A, i, k) * E2(B, k, j);
      E2(C, i, j) += acc;
    }
  return true;
}

/* C += R X / 2, each of the R CTAs of a column block adding X / 2, R P's length (atomics.ph) */
static bool ref_atomic_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *C = ref_param(r, "C"), *P = ref_param(r, "P");
  int64_t R = P->dims[0];
  for (int64_t i = 0; i < X->dims[0]; i++)
    for (int64_t j = 0; j < X->dims[1]; j++) E2(C, i, j) += (double)R * E2(X, i, j) * 0.5;
  return true;
}

/* each of G CTAs adds i + 1 (halved in H and D) and stores S[i] = i */
static bool ref_atomic_scalars(RefCtx *r) {
  CaseParam *S = ref_param(r, "S"), *I = ref_param(r, "I"), *L = ref_param(r, "L"), *H = ref_param(r, "H"),
            *D = ref_param(r, "D");
  int64_t G = S->dims[0];
  for (int64_t i = 0; i < G; i++) S->data[i] = (double)i;
  I->data[0] += (double)(G * (G + 1) / 2), L->data[0] += (double)(G * (G + 1) / 2);
  H->data[0] += (double)(G * (G + 1)) / 4, D->data[0] += (double)(G * (G + 1)) / 4;
  return true;
}

/* grid_sync.ph, atomic_tickets: G CTAs take tickets 0 .. G - 1 (counted
 * in Cnt[0], which every CTA reads back after the grid barrier), each
 * flag swapped once from 0 to b + 1 and then not to 99, each Wide element
 * from 0 to (b + 1) 2^32, F 0.5 a CTA, Cnt[1] one a CTA; the barrier's
 * count back at 0 and its generation one on, as every CTA reads them after
 * it (Gen) */
static bool ref_atomic_tickets(RefCtx *r) {
  CaseParam *Cnt = ref_param(r, "Cnt"), *Seen = ref_param(r, "Seen"), *Flags = ref_param(r, "Flags"),
            *First = ref_param(r, "First"), *Second = ref_param(r, "Second"), *Wide = ref_param(r, "Wide"),
            *F = ref_param(r, "F"), *Total = ref_param(r, "Total"), *Bar = ref_param(r, "Bar"),
            *Gen = ref_param(r, "Gen");
  int64_t G = Seen->dims[0];
  for (int64_t b = 0; b < G; b++) {
    Seen->data[(int64_t)Cnt->data[0] + b] = 1;
    First->data[b] = Flags->data[b];
    if (Flags->data[b] == 0) Flags->data[b] = (double)(b + 1);
    Second->data[b] = Flags->data[b];
    if (Wide->data[b] == 0) Wide->data[b] = (double)(b + 1) * 4294967296.0;
  }
  Cnt->data[0] += (double)G, Cnt->data[1] += (double)G, F->data[0] += 0.5 * (double)G;
  for (int64_t b = 0; b < G; b++) Total->data[b] = Cnt->data[0];
  Bar->data[0] = 0, Bar->data[1] += 1;
  for (int64_t b = 0; b < G; b++) Gen->data[b] = Bar->data[1] * 10 + Bar->data[0];
  return true;
}

/* grid_sync.ph, grid_rounds: three rounds of A[r] = (A[r - 1] + A[r + 1]) / 2
 * (rows clamped at the ends), B the last round's; S the column sums of A;
 * Bar's count 0 and its generation 6 on */
static bool ref_grid_rounds(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *B = ref_param(r, "B"), *S = ref_param(r, "S"), *Bar = ref_param(r, "Bar");
  int64_t R = A->dims[0], N = A->dims[1];
  for (int it = 0; it < 3; it++) {
    for (int64_t i = 0; i < R; i++)
      for (int64_t j = 0; j < N; j++)
        E2(B, i, j) = (E2(A, i > 0 ? i - 1 : 0, j) + E2(A, i + 1 < R ? i + 1 : R - 1, j)) * 0.5;
    for (int64_t i = 0; i < R * N; i++) A->data[i] = B->data[i];
  }
  for (int64_t j = 0; j < N; j++) {
    double s = 0;
    for (int64_t i = 0; i < R; i++) s += E2(A, i, j);
    S->data[j] = s;
  }
  Bar->data[0] = 0, Bar->data[1] += 6;
  return true;
}

/* flat.ph, quant_flat: X's blocks of 32 scaled by their largest |x| / 127
 * and rounded (ties to even, as cvt.rni), one row again; W's 3 rows of 24
 * doubled, as one row; a rank-3 iota pattern in row-major order */
static bool ref_quant_flat(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *W = ref_param(r, "W"), *Q = ref_param(r, "Q"), *S = ref_param(r, "S"),
            *T = ref_param(r, "T"), *U = ref_param(r, "U");
  for (int b = 0; b < 4; b++) {
    double m = 0;
    for (int j = 0; j < 32; j++) m = fmax(m, fabs(X->data[b * 32 + j]));
    float sc = (float)m / 127.0f;
    S->data[b] = sc;
    for (int j = 0; j < 32; j++)
      Q->data[b * 32 + j] = nearbyintf((float)X->data[b * 32 + j] / (sc > 0 ? sc : 1.0f));
  }
  for (int i = 0; i < 72; i++) T->data[i] = 2 * W->data[i];
  for (int i = 0; i < 144; i++) U->data[i] = (double)(i % 24) + 100.0 * (double)(i / 24 % 3) + 1000.0 * (double)(i / 72);
  return true;
}

/* Y = 2 X; C += colsum(Y) (atomics.ph, barrier_rows) */
static bool ref_barrier_rows(RefCtx *r) {
  CaseParam *X = ref_param(r, "X"), *Y = ref_param(r, "Y"), *C = ref_param(r, "C");
  for (int64_t i = 0; i < X->dims[0]; i++)
    for (int64_t j = 0; j < X->dims[1]; j++) E2(Y, i, j) = 2 * E2(X, i, j), C->data[j] += E2(Y, i, j);
  return true;
}

/* C[i, j] = sum_b (sum_{k in block b} A[i, k] W[j, k]) AS[i, b] WS (qdot.ph):
 * WS[j, b] (qdot_t) or WS[b, j] (qmma_t) */
static bool q8_blocks(RefCtx *r, bool mma) {
  CaseParam *A = ref_param(r, "A"), *AS = ref_param(r, "AS"), *W = ref_param(r, "W"), *WS = ref_param(r, "WS"),
            *C = ref_param(r, "C");
  int64_t M = A->dims[0], K = A->dims[1], N = W->dims[0];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t b = 0; b * 32 < K; b++) {
        double blk = 0;
        for (int64_t k = 32 * b; k < K && k < 32 * b + 32; k++) blk += E2(A, i, k) * E2(W, j, k);
        acc += blk * E2(AS, i, b) * (mma ? E2(WS, b, j) : E2(WS, j, b));
      }
      E2(C, i, j) = acc;
    }
  return true;
}
/* C = (A G) @ W: a few rows scaled by a weight row times int8 columns
 * (dot_columns.ph: the product's A computed in registers) */
static bool ref_rows_gated_columns(RefCtx *r) {
  CaseParam *A = ref_param(r, "A"), *G = ref_param(r, "G"), *W = ref_param(r, "W"), *C = ref_param(r, "C");
  int64_t M = A->dims[0], K = A->dims[1], N = W->dims[1];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += E2(A, i, k) * G->data[k] * E2(W, k, j);
      E2(C, i, j) = acc;
    }
  return true;
}
static bool ref_qdot_blocks(RefCtx *r) { return q8_blocks(r, false); }
static bool ref_qmma_blocks(RefCtx *r) { return q8_blocks(r, true); }

const RefEntry harness_refs_more[] = {
    {"atomic_tickets", ref_atomic_tickets},
    {"quant_flat", ref_quant_flat},
    {"grid_rounds", ref_grid_rounds},
    {"rows_gated_columns", ref_rows_gated_columns},
    {"qdot_blocks", ref_qdot_blocks},
    {"qmma_blocks", ref_qmma_blocks},
    {"barrier_rows", ref_barrier_rows},
    {"atomic_colsum", ref_atomic_colsum},
    {"atomic_splitk", ref_atomic_splitk},
    {"atomic_rows", ref_atomic_rows},
    {"atomic_scalars", ref_atomic_scalars},
    {"long_rows", ref_long_rows},
    {"long_rows_80", ref_long_rows_80},
    {"long_rows_strided", ref_long_rows_strided},
    {"long_rows_scalar_dot", ref_long_rows_scalar_dot},
    {"let_var_assign", ref_let_var_assign},
    {"compound_tile", ref_compound_tile},
    {"compound_tensor", ref_compound_tensor},
    {"var_rows", ref_var_rows},
    {"var_cols", ref_var_cols},
    {"for_ranges", ref_for_ranges},
    {"while_loop", ref_while_loop},
    {"if_chain", ref_if_chain},
    {"if_param", ref_if_param},
    {"matmul", ref_matmul},
    {"matmul_t", ref_matmul_t},
    {"matmul_and_2a", ref_matmul_and_2a},
    {"matmul_two_widths", ref_matmul_two_widths},
    {"math_exp", ref_math_exp},
    {"math_exp2", ref_math_exp2},
    {"math_log", ref_math_log},
    {"math_sqrt", ref_math_sqrt},
    {"math_tanh", ref_math_tanh},
    {"tmax_tmin", ref_tmax_tmin},
    {"scalar_min_max_cdiv", ref_scalar_min_max_cdiv},
    {"transpose", ref_transpose},
    {"transpose_affine", ref_transpose_affine},
    {"transpose_sum", ref_transpose_sum},
    {"where_select", ref_where_select},
    {"iota_2d", ref_iota_2d},
    {"iota_3d", ref_iota_3d},
    {"rowreduce", ref_rowreduce},
    {"tile_accs", ref_tile_accs},
    {"straight_accs", ref_straight_accs},
    {"scale_rows", ref_scale_rows},
    {"row_stats", ref_row_stats},
    {"row_norm", ref_row_norm},
    {"softmax_rows", ref_softmax_rows},
    {"silu_mul_rows", ref_silu_mul_rows},
    {"skip_two", ref_skip_two},
    {"skip_rows", ref_skip_rows},
    {"skip_loop", ref_skip_loop},
    {"add_vec", ref_add_vec},
    {"quant_rows", ref_quant_rows},
    {"widen_u8", ref_widen_u8},
    {"lse_from", ref_lse_from},
    {"folds", ref_folds},
    {"prefix", ref_prefix},
    {"cluster_softmax", ref_cluster_softmax},
    {"lse_store_between", ref_lse_store_between},
    {"cluster_norm", ref_cluster_norm},
    {"cluster_softmax_inplace", ref_cluster_softmax_inplace},
    {"cluster_weighted", ref_cluster_weighted},
    {"past_end", ref_past_end},
    {"walk_skip_fills", ref_walk_skip_fills},
    {"walk_skip_fills16", ref_walk_skip_fills16},
    {"shift_walk", ref_shift_walk},
    {"shift_walk_blocks", ref_shift_walk_blocks},
    {"layer_norm_rows", ref_layer_norm_rows},
    {"div_rows", ref_div_rows},
    {"div_scalar", ref_div_scalar},
    {"div_cols", ref_div_cols},
    {"matmul_bias_poly", ref_matmul_bias_poly},
    {"bound_cols", ref_bound_cols},
    {"bound_rows", ref_bound_rows},
    {"bound_mm", ref_bound_mm},
    {"rms_residual", ref_rms_residual},
    {"everyday_math", ref_everyday_math},
    {"pow", ref_pow},
    {"lse_late", ref_lse_late},
    {"fma_rows", ref_fma_rows},
    {"cumsum_rows", ref_cumsum_rows},
    {"argmax_rows", ref_argmax_rows},
    {"causal_sum3", ref_causal_sum3},
    {"break_continue", ref_break_continue},
    {"early_return", ref_early_return},
    {"col_reductions", ref_col_reductions},
    {"tril_block", ref_tril_block},
    {"gla_recurrence", ref_gla_recurrence},
    {"scale_twice", ref_scale_twice},
    {"rowsum_i8", ref_rowsum_i8},
    {"rowsum_plus_col", ref_rowsum_plus_col},
    {"to_f16_bf16", ref_to_f16_bf16},
    {"to_f32_f64", ref_to_f32_f64},
    {"to_int", ref_to_int},
    {"int_to_other", ref_int_to_other},
    {"unary_ops", ref_unary_ops},
    {"int_arith", ref_int_arith},
    {"int_divrem_const", ref_int_divrem_const},
    {"if_stage", ref_if_stage},
    {"frag_plus_staged", ref_frag_plus_staged},
    {"rowmax_staged", ref_rowmax_staged},
    {"point_writes_staged", ref_point_writes_staged},
    {"stage_then_store", ref_stage_then_store},
    {"store_then_stage", ref_store_then_stage},
    {"f16_arith", ref_f16_arith},
    {"bit_ops", ref_bit_ops},
    {"compare_logic", ref_compare_logic},
    {"broadcast", ref_broadcast},
    {"point_subscript", ref_point_subscript},
    {"extract_subtile", ref_extract_subtile},
    {"rank3_slices", ref_rank3_slices},
    {"rank4_slices", ref_rank4_slices},
    {"ragged_copy", ref_ragged_copy},
    {"qload", ref_qload},
    {"qload_edges", ref_qload_edges},
    {"pipe_nested", ref_pipe_nested},
    {"ragged_load_zero", ref_ragged_load_zero},
    {"npot_tiles", ref_npot_tiles},
    {"npot_reduce", ref_npot_reduce},
    {"grid_stride", ref_grid_stride},
    {"scalar_vars", ref_scalar_vars},
    {"reduce_computed", ref_reduce_computed},
    {"join_types", ref_join_types},
    {"dot_slack", ref_dot_slack},
    {"dot_var_write", ref_dot_var_write},
    {"gather", ref_gather},
    {NULL, NULL},
};
