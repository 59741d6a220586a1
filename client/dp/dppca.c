/* The DP-PCA encoder (dp/dppca.h). */
#include "dp/dppca.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int bbvfl_sym_eigen(double *a, size_t d, double *lambda, double *v, bbvfl_err *err) {
  if (d < 1) return bbvfl_fail(err, BBVFL_E_ARG, "eigen-decomposition of an empty matrix");
  for (size_t i = 0; i < d; i++)
    for (size_t j = 0; j < d; j++) v[i * d + j] = i == j;
  for (int sweep = 0; sweep < 100; sweep++) {
    double off = 0, tot = 0;
    for (size_t i = 0; i < d; i++)
      for (size_t j = 0; j < d; j++) {
        tot += a[i * d + j] * a[i * d + j];
        if (i != j) off += a[i * d + j] * a[i * d + j];
      }
    if (off <= 1e-30 * tot || off == 0) break;
    for (size_t p = 0; p + 1 < d; p++)
      for (size_t q = p + 1; q < d; q++) {
        double apq = a[p * d + q];
        if (apq == 0) continue;
        double theta = (a[q * d + q] - a[p * d + p]) / (2 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < d; k++) { /* columns p, q */
          double akp = a[k * d + p], akq = a[k * d + q];
          a[k * d + p] = c * akp - s * akq;
          a[k * d + q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < d; k++) { /* rows p, q */
          double apk = a[p * d + k], aqk = a[q * d + k];
          a[p * d + k] = c * apk - s * aqk;
          a[q * d + k] = s * apk + c * aqk;
        }
        for (size_t k = 0; k < d; k++) {
          double vkp = v[k * d + p], vkq = v[k * d + q];
          v[k * d + p] = c * vkp - s * vkq;
          v[k * d + q] = s * vkp + c * vkq;
        }
      }
  }
  /* sort descending (selection sort on the diagonal, columns of v swapped with it) */
  for (size_t i = 0; i < d; i++) lambda[i] = a[i * d + i];
  for (size_t i = 0; i < d; i++) {
    size_t b = i;
    for (size_t j = i + 1; j < d; j++)
      if (lambda[j] > lambda[b]) b = j;
    if (b == i) continue;
    double t = lambda[i];
    lambda[i] = lambda[b];
    lambda[b] = t;
    for (size_t k = 0; k < d; k++) {
      t = v[k * d + i];
      v[k * d + i] = v[k * d + b];
      v[k * d + b] = t;
    }
  }
  return 0;
}

int bbvfl_dp_pca_encoder(const float *z, size_t n, size_t d, int P, double noise, bbvfl_rng *r, float *W,
                         bbvfl_err *err) {
  if (n < 1 || d < 1 || d > 4096) return bbvfl_fail(err, BBVFL_E_ARG, "DP-PCA: %zu rows of %zu columns", n, d);
  if (P < 1 || (size_t)P > d)
    return bbvfl_fail(err, BBVFL_E_ARG, "DP-PCA encoder: P must be in 1..%zu (the party's columns), got %d", d, P);
  if (!(noise > 0) || !isfinite(noise))
    return bbvfl_fail(err, BBVFL_E_ARG, "DP-PCA: the noise multiplier must be > 0, got %g", noise);
  double *S = calloc(d * d, sizeof *S), *V = malloc(d * d * sizeof *V), *lam = malloc(d * sizeof *lam),
         *row = malloc(d * sizeof *row);
  if (!S || !V || !lam || !row) {
    free(S);
    free(V);
    free(lam);
    free(row);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  const double R2 = (double)d;
  for (size_t i = 0; i < n; i++) {
    double n2 = 0;
    for (size_t j = 0; j < d; j++) {
      row[j] = z[i * d + j];
      n2 += row[j] * row[j];
    }
    double f = n2 > R2 ? sqrt(R2 / n2) : 1.0; /* the clip to norm sqrt(d) */
    for (size_t j = 0; j < d; j++) row[j] *= f;
    for (size_t j = 0; j < d; j++)
      for (size_t k = j; k < d; k++) S[j * d + k] += row[j] * row[k];
  }
  /* the Gaussian mechanism on the upper triangle, mirrored */
  const double sd = noise * sqrt(2.0) * R2;
  for (size_t j = 0; j < d; j++)
    for (size_t k = j; k < d; k++) {
      S[j * d + k] += sd * bbvfl_rng_normal(r);
      S[k * d + j] = S[j * d + k];
    }
  int rc = bbvfl_sym_eigen(S, d, lam, V, err);
  if (rc == 0)
    for (int p = 0; p < P; p++) {
      double sum = 0;
      for (size_t j = 0; j < d; j++) sum += V[j * d + (size_t)p];
      double sign = sum < 0 ? -1.0 : 1.0;
      double scale = 1.0 / (BBVFL_DPPCA_KAPPA * sqrt(fmax(lam[p], 1.0) / (double)n));
      for (size_t j = 0; j < d; j++) W[j * (size_t)P + (size_t)p] = (float)(sign * scale * V[j * d + (size_t)p]);
    }
  free(S);
  free(V);
  free(lam);
  free(row);
  return rc;
}
