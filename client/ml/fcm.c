#include "ml/fcm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double dist2(const float *a, const double *c, size_t dim) {
  double s = 0;
  for (size_t k = 0; k < dim; k++) {
    double d = (double)a[k] - c[k];
    s += d * d;
  }
  return s;
}

/* Memberships of row i from its squared distances to the C centres (m = 2: u_ij = 1 / sum_k
   d_ij^2 / d_ik^2); a row on a centre belongs to it alone. Returns the largest change. */
static double memberships(const float *x, size_t n, size_t dim, int C, const double *ctr, double *u) {
  double moved = 0;
  for (size_t i = 0; i < n; i++) {
    double d2[64], *dd = d2;
    double *heap = NULL;
    if (C > 64) {
      heap = malloc((size_t)C * sizeof *heap);
      if (!heap) return -1;
      dd = heap;
    }
    int zero = -1;
    for (int j = 0; j < C; j++) {
      dd[j] = dist2(x + i * dim, ctr + (size_t)j * dim, dim);
      if (dd[j] <= 1e-24 && zero < 0) zero = j;
    }
    for (int j = 0; j < C; j++) {
      double v;
      if (zero >= 0) {
        v = j == zero ? 1.0 : 0.0;
      } else {
        double s = 0;
        for (int k = 0; k < C; k++) s += dd[j] / dd[k];
        v = 1.0 / s;
      }
      double *p = &u[i * (size_t)C + (size_t)j];
      if (fabs(v - *p) > moved) moved = fabs(v - *p);
      *p = v;
    }
    free(heap);
  }
  return moved;
}

int bbvfl_fcm(const float *x, size_t n, size_t dim, int C, int iters, double tol, int *lab, float *conf,
              bbvfl_err *err) {
  if (C < 1 || (size_t)C > n) return bbvfl_fail(err, BBVFL_E_ARG, "fuzzy c-means: %d clusters for %zu rows", C, n);
  double *ctr = calloc((size_t)C * dim + 1, sizeof *ctr);
  double *u = calloc(n * (size_t)C, sizeof *u);
  double *mind = malloc(n * sizeof *mind);
  if (!ctr || !u || !mind) {
    free(ctr);
    free(u);
    free(mind);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  /* initial centres: the row of largest norm, then farthest-first */
  size_t best = 0;
  double bn = -1;
  for (size_t i = 0; i < n; i++) {
    double s = 0;
    for (size_t k = 0; k < dim; k++) s += (double)x[i * dim + k] * x[i * dim + k];
    if (s > bn) bn = s, best = i;
  }
  for (size_t k = 0; k < dim; k++) ctr[k] = x[best * dim + k];
  for (size_t i = 0; i < n; i++) mind[i] = dist2(x + i * dim, ctr, dim);
  for (int j = 1; j < C; j++) {
    size_t far = 0;
    double fd = -1;
    for (size_t i = 0; i < n; i++)
      if (mind[i] > fd) fd = mind[i], far = i;
    double *c = ctr + (size_t)j * dim;
    for (size_t k = 0; k < dim; k++) c[k] = x[far * dim + k];
    for (size_t i = 0; i < n; i++) {
      double d = dist2(x + i * dim, c, dim);
      if (d < mind[i]) mind[i] = d;
    }
  }
  int rc = 0;
  for (int it = 0; it < iters; it++) {
    double moved = memberships(x, n, dim, C, ctr, u);
    if (moved < 0) {
      rc = bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      break;
    }
    if (it > 0 && moved <= tol) break;
    for (int j = 0; j < C; j++) {
      double *c = ctr + (size_t)j * dim, w = 0;
      memset(c, 0, dim * sizeof *c);
      for (size_t i = 0; i < n; i++) {
        double v = u[i * (size_t)C + (size_t)j];
        v *= v;
        w += v;
        for (size_t k = 0; k < dim; k++) c[k] += v * x[i * dim + k];
      }
      if (w > 0)
        for (size_t k = 0; k < dim; k++) c[k] /= w;
    }
  }
  if (rc == 0)
    for (size_t i = 0; i < n; i++) {
      int bj = 0;
      for (int j = 1; j < C; j++)
        if (u[i * (size_t)C + (size_t)j] > u[i * (size_t)C + (size_t)bj]) bj = j;
      lab[i] = bj;
      conf[i] = (float)u[i * (size_t)C + (size_t)bj];
    }
  free(ctr);
  free(u);
  free(mind);
  return rc;
}
