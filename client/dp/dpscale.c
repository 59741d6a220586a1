/* Differentially private centre and scale of a column (dp/dpscale.h). */
#include "dp/dpscale.h"

#include <math.h>
#include <stdlib.h>

#define GRID_K 48 /* 10^(k/8), k = -48..48 */
#define NPOS (2 * GRID_K + 1)

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Exponential mechanism for the median of sorted v[n] over the sorted grid g[m]. */
static double dp_median(const double *v, size_t n, const double *g, size_t m, double eps, bbvfl_rng *r,
                        double *w) {
  size_t below = 0;
  double best = -INFINITY;
  for (size_t k = 0; k < m; k++) {
    while (below < n && v[below] < g[k]) below++;
    w[k] = -fabs((double)below - (double)n / 2) * eps / 2;
    if (w[k] > best) best = w[k];
  }
  double tot = 0;
  for (size_t k = 0; k < m; k++) tot += (w[k] = exp(w[k] - best));
  double u = bbvfl_rng_uniform(r) * tot, acc = 0;
  for (size_t k = 0; k < m; k++) {
    acc += w[k];
    if (u < acc) return g[k];
  }
  return g[m - 1];
}

static void centre_grid(double *gc) {
  for (int k = 0; k < NPOS; k++) {
    gc[k] = -pow(10.0, (NPOS - 1 - k - GRID_K) / 8.0);
    gc[NPOS + 1 + k] = pow(10.0, (k - GRID_K) / 8.0);
  }
  gc[NPOS] = 0;
}

int bbvfl_dp_centre(const double *x, size_t n, double eps, bbvfl_rng *r, double *centre, bbvfl_err *err) {
  if (n == 0) return bbvfl_fail(err, BBVFL_E_ARG, "DP centre over zero rows");
  if (!(eps > 0) || !isfinite(eps)) return bbvfl_fail(err, BBVFL_E_ARG, "DP centre: epsilon must be > 0, got %g", eps);
  double *v = malloc(n * sizeof *v), gc[2 * NPOS + 1], w[2 * NPOS + 1];
  if (!v) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  centre_grid(gc);
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) {
      free(v);
      return bbvfl_fail(err, BBVFL_E_ARG, "DP centre: value %zu is not finite", i);
    }
    v[i] = x[i];
  }
  qsort(v, n, sizeof *v, cmp_dbl);
  *centre = dp_median(v, n, gc, 2 * NPOS + 1, eps, r, w);
  free(v);
  return 0;
}

int bbvfl_dp_robust_scale(const double *x, size_t n, double eps, bbvfl_rng *r, double *centre, double *scale,
                          bbvfl_err *err) {
  if (n == 0) return bbvfl_fail(err, BBVFL_E_ARG, "DP scaling over zero rows");
  if (!(eps > 0) || !isfinite(eps)) return bbvfl_fail(err, BBVFL_E_ARG, "DP scaling: epsilon must be > 0, got %g", eps);
  double *v = malloc(n * sizeof *v), gc[2 * NPOS + 1], gs[NPOS], w[2 * NPOS + 1];
  if (!v) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (int k = 0; k < NPOS; k++) gs[k] = pow(10.0, (k - GRID_K) / 8.0);
  for (int k = 0; k < NPOS; k++) {
    gc[k] = -gs[NPOS - 1 - k];
    gc[NPOS + 1 + k] = gs[k];
  }
  gc[NPOS] = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) {
      free(v);
      return bbvfl_fail(err, BBVFL_E_ARG, "DP scaling: value %zu is not finite", i);
    }
    v[i] = x[i];
  }
  qsort(v, n, sizeof *v, cmp_dbl);
  double c = dp_median(v, n, gc, 2 * NPOS + 1, eps / 2, r, w);
  for (size_t i = 0; i < n; i++) v[i] = fabs(x[i] - c);
  qsort(v, n, sizeof *v, cmp_dbl);
  double s = dp_median(v, n, gs, NPOS, eps / 2, r, w);
  free(v);
  *centre = c;
  *scale = 1.4826 * s;
  return 0;
}
