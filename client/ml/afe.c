#include "ml/afe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void bbvfl_afe_defaults(bbvfl_afe_cfg *a) {
  memset(a, 0, sizeof *a);
  a->lambda = 0.1;
  a->alpha = 0.01;
  a->conf = 0.8;
  a->p1 = 1e-3;
  a->p2 = 1e-3;
  a->nclasses = 2;
  a->B = 1;
}

int bbvfl_afe_check(const bbvfl_afe_cfg *a, bbvfl_err *err) {
  if (!a->on) {
    if (a->rescale || a->adjust) return bbvfl_fail(err, BBVFL_E_ARG, "--afe-rescale and --afe-adjust need --afe");
    return 0;
  }
  if (!(a->lambda >= 0) || !isfinite(a->lambda))
    return bbvfl_fail(err, BBVFL_E_ARG, "--afe-lambda must be >= 0, got %g", a->lambda);
  if (!(a->alpha >= 0) || !isfinite(a->alpha))
    return bbvfl_fail(err, BBVFL_E_ARG, "--afe-kl must be >= 0, got %g", a->alpha);
  if (!(a->conf >= 0 && a->conf <= 1)) return bbvfl_fail(err, BBVFL_E_ARG, "--afe-conf must be in [0, 1], got %g", a->conf);
  if (!(a->p1 > 0 && a->p1 < 0.5)) return bbvfl_fail(err, BBVFL_E_ARG, "--afe-p1 must be in (0, 0.5), got %g", a->p1);
  if (!(a->p2 > 0 && a->p2 < 0.5)) return bbvfl_fail(err, BBVFL_E_ARG, "--afe-p2 must be in (0, 0.5), got %g", a->p2);
  if (a->nclasses < 2) return bbvfl_fail(err, BBVFL_E_ARG, "VFL-AFE: %d classes (at least 2)", a->nclasses);
  if (a->B < 1) return bbvfl_fail(err, BBVFL_E_ARG, "VFL-AFE: batch of %zu rows", a->B);
  return 0;
}

double bbvfl_norm_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
    double mid = 0.5 * (lo + hi);
    if (0.5 * erfc(-mid / sqrt(2.0)) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

static double pdist(const float *a, const float *b, size_t P) {
  double s = 0;
  for (size_t k = 0; k < P; k++) {
    double d = (double)a[k] - b[k];
    s += d * d;
  }
  return sqrt(s);
}

void bbvfl_afe_pair_stats(const float *h, size_t n, size_t P, double *mu, double *sd, double *dmax) {
  double s = 0, s2 = 0, mx = 0, N = 0;
  for (size_t j = 0; j < n; j++)
    for (size_t k = j + 1; k < n; k++) {
      double d = pdist(h + j * P, h + k * P, P);
      s += d;
      s2 += d * d;
      if (d > mx) mx = d;
      N += 1;
    }
  double m = N > 0 ? s / N : 0, v = N > 0 ? s2 / N - m * m : 0;
  *mu = m;
  *sd = v > 0 ? sqrt(v) : 0;
  if (dmax) *dmax = mx;
}

double bbvfl_afe_disparity_estimate(const float *h, size_t n, size_t P, double p2) {
  double mu, sd;
  bbvfl_afe_pair_stats(h, n, P, &mu, &sd, NULL);
  return mu + sd * bbvfl_norm_quantile(1.0 - p2);
}

double bbvfl_afe_rescale_factor(const float *h, size_t n, size_t P, double t, double p2) {
  if (n < 2) return 1.0;
  double est = bbvfl_afe_disparity_estimate(h, n, P, p2);
  if (est > 2.0 * t) est = 2.0 * t; /* clipped rows are never farther apart than 2t */
  if (est < 1e-6 * t) est = 1e-6 * t;
  return 2.0 * t / est;
}

/* The moment (Edgeworth) approximation of D_KL(P(d) || N(mu, sd^2)) of the N pairwise distances
   d (rows j < k in order) and its gradient by d into gd (N). Returns 0 when the spread is nil. */
static double kl_moments(const double *d, size_t N, double *gd) {
  double mu = 0;
  for (size_t i = 0; i < N; i++) mu += d[i];
  mu /= (double)N;
  double m2 = 0, m3 = 0, m4 = 0;
  for (size_t i = 0; i < N; i++) {
    double e = d[i] - mu, e2 = e * e;
    m2 += e2;
    m3 += e2 * e;
    m4 += e2 * e2;
  }
  m2 /= (double)N;
  m3 /= (double)N;
  m4 /= (double)N;
  if (!(m2 > 1e-18)) {
    memset(gd, 0, N * sizeof *gd);
    return 0;
  }
  double skew = m3 / pow(m2, 1.5), ek = m4 / (m2 * m2) - 3.0;
  for (size_t i = 0; i < N; i++) {
    double e = d[i] - mu;
    double dm2 = 2.0 / (double)N * e;
    double dm3 = 3.0 / (double)N * (e * e - m2);
    double dm4 = 4.0 / (double)N * (e * e * e - m3);
    double dskew = dm3 / pow(m2, 1.5) - 1.5 * m3 / pow(m2, 2.5) * dm2;
    double dek = dm4 / (m2 * m2) - 2.0 * m4 / (m2 * m2 * m2) * dm2;
    gd[i] = skew / 6.0 * dskew + ek / 24.0 * dek;
  }
  return skew * skew / 12.0 + ek * ek / 48.0;
}

/* g[j] += w (h_j - h_k) / d, g[k] -= the same */
static void pair_grad(const float *h, size_t j, size_t k, size_t P, double d, double w, float *g) {
  if (!(d > 0)) return;
  for (size_t q = 0; q < P; q++) {
    double v = w * ((double)h[j * P + q] - h[k * P + q]) / d;
    g[j * P + q] += (float)v;
    g[k * P + q] -= (float)v;
  }
}

double bbvfl_afe_adjust_loss(const float *h, size_t n, size_t P, const int *lab, const float *conf, double c,
                             double lambda, double alpha, float *g) {
  memset(g, 0, n * P * sizeof *g);
  if (n < 2) return 0;
  double L = 0, inv = 2.0 / ((double)n * (double)n); /* each unordered pair counts twice in sum_{j,k} */
  if (lambda > 0)
    for (size_t j = 0; j < n; j++) {
      if (conf[j] < c) continue;
      for (size_t k = j + 1; k < n; k++) {
        if (conf[k] < c) continue;
        double s = lab[j] == lab[k] ? 1.0 : -1.0, d = pdist(h + j * P, h + k * P, P);
        L += lambda * inv * s * d;
        pair_grad(h, j, k, P, d, lambda * inv * s, g);
      }
    }
  if (alpha > 0) {
    size_t N = n * (n - 1) / 2;
    double *d = malloc(2 * N * sizeof *d);
    if (!d) return NAN;
    double *gd = d + N;
    size_t i = 0;
    for (size_t j = 0; j < n; j++)
      for (size_t k = j + 1; k < n; k++) d[i++] = pdist(h + j * P, h + k * P, P);
    L += alpha * kl_moments(d, N, gd);
    i = 0;
    for (size_t j = 0; j < n; j++)
      for (size_t k = j + 1; k < n; k++, i++) pair_grad(h, j, k, P, d[i], alpha * gd[i], g);
    free(d);
  }
  return L;
}
