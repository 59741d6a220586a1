/* Labels read back from the posted gradients (audit/leak.h). */
#include "audit/leak.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/head.h"

/* Solves the K x K system A x = b in place (Gaussian elimination, partial pivoting). */
static int solve(double *A, double *b, size_t K) {
  for (size_t c = 0; c < K; c++) {
    size_t piv = c;
    for (size_t r = c + 1; r < K; r++)
      if (fabs(A[r * K + c]) > fabs(A[piv * K + c])) piv = r;
    if (!(fabs(A[piv * K + c]) > 1e-300)) return -1;
    if (piv != c) {
      for (size_t j = 0; j < K; j++) {
        double t = A[c * K + j];
        A[c * K + j] = A[piv * K + j];
        A[piv * K + j] = t;
      }
      double t = b[c];
      b[c] = b[piv];
      b[piv] = t;
    }
    for (size_t r = c + 1; r < K; r++) {
      double f = A[r * K + c] / A[c * K + c];
      for (size_t j = c; j < K; j++) A[r * K + j] -= f * A[c * K + j];
      b[r] -= f * b[c];
    }
  }
  for (size_t c = K; c-- > 0;) {
    double s = b[c];
    for (size_t j = c + 1; j < K; j++) s -= A[c * K + j] * b[j];
    b[c] = s / A[c * K + c];
  }
  return 0;
}

int bbvfl_leak_labels(const uint8_t *grad_be, size_t grad_len, size_t B, size_t P, const uint8_t *params_be,
                      size_t params_len, int *labels, bbvfl_err *err) {
  if (B == 0 || P == 0 || B > SIZE_MAX / 4 / P || grad_len != 4 * B * P)
    return bbvfl_fail(err, BBVFL_E_ARG, "gradient is %zu bytes, expected 4 x B x P = 4 x %zu x %zu", grad_len, B, P);
  if (params_len % (4 * (P + 1)) != 0 || params_len == 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "fusion parameters are %zu bytes, not 4 x (P + 1) x K for P = %zu",
                      params_len, P);
  size_t K = params_len / 4 / (P + 1);
  if (K > P) return bbvfl_fail(err, BBVFL_E_ARG, "K = %zu head outputs exceed P = %zu: labels not identifiable", K, P);
  float *W = malloc(P * K * sizeof *W), *G = malloc(B * P * sizeof *G);
  double *WtW = malloc(K * K * sizeof *WtW), *A = malloc(K * K * sizeof *A), *b = malloc(K * sizeof *b);
  int rc = 0;
  if (!W || !G || !WtW || !A || !b) {
    rc = bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  bbvfl_f32_from_be(params_be, P * K, W); /* W (P x K row-major); the bias is not needed */
  bbvfl_f32_from_be(grad_be, B * P, G);
  for (size_t i = 0; i < P * K; i++)
    if (!isfinite(W[i])) {
      rc = bbvfl_fail(err, BBVFL_E_PARSE, "fusion parameter %zu is not finite", i);
      goto out;
    }
  for (size_t i = 0; i < B * P; i++)
    if (!isfinite(G[i])) {
      rc = bbvfl_fail(err, BBVFL_E_PARSE, "gradient row %zu, coordinate %zu is not finite", i / P, i % P);
      goto out;
    }
  /* the normal matrix W^T W, the same for every row */
  for (size_t r = 0; r < K; r++)
    for (size_t c = 0; c < K; c++) {
      double a = 0;
      for (size_t p = 0; p < P; p++) a += (double)W[p * K + r] * W[p * K + c];
      WtW[r * K + c] = a;
    }
  for (size_t i = 0; i < B; i++) {
    const float *g = G + i * P;
    if (K == 1) {
      double dot = 0;
      for (size_t p = 0; p < P; p++) dot += (double)g[p] * W[p];
      labels[i] = dot < 0; /* p - y < 0: y = 1 */
      continue;
    }
    /* normal equations (W^T W) d = W^T g */
    for (size_t r = 0; r < K; r++) {
      double s = 0;
      for (size_t p = 0; p < P; p++) s += (double)W[p * K + r] * g[p];
      b[r] = s;
    }
    memcpy(A, WtW, K * K * sizeof *A);
    if (solve(A, b, K) < 0) {
      rc = bbvfl_fail(err, BBVFL_E_ARG, "the head's weight columns are linearly dependent: labels not identifiable");
      goto out;
    }
    size_t best = 0;
    for (size_t k = 1; k < K; k++)
      if (b[k] < b[best]) best = k;
    labels[i] = (int)best;
  }
out:
  free(W);
  free(G);
  free(WtW);
  free(A);
  free(b);
  return rc;
}

void bbvfl_leak_rr_band(double eps, int K, size_t n, double z, double *p, double *lo, double *hi) {
  double q = eps > 0 && isfinite(eps) && K >= 2 ? 1.0 / (1.0 + (K - 1) * exp(-eps)) : 1.0;
  double h = n ? z * sqrt(q * (1 - q) / (double)n) : 1.0;
  *p = q;
  *lo = fmax(0.0, q - h);
  *hi = fmin(1.0, q + h);
}

void bbvfl_leak_agreement(const int *read, const size_t *train, size_t n_train, const int *y, size_t *n,
                          size_t *same) {
  *n = *same = 0;
  for (size_t i = 0; i < n_train; i++) {
    if (read[i] < 0) continue;
    (*n)++;
    *same += read[i] == y[train[i]];
  }
}
