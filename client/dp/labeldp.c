/* Randomized response on the labels (dp/labeldp.h). */
#include "dp/labeldp.h"

#include <math.h>

double bbvfl_rr_keep(double eps, int K) {
  /* e^eps / (e^eps + K - 1) = 1 / (1 + (K - 1) e^-eps), stable for large eps */
  return 1.0 / (1.0 + (K - 1) * exp(-eps));
}

int bbvfl_rr_labels(int *y, const size_t *rows, size_t n, int K, double eps, bbvfl_rng *r, bbvfl_err *err) {
  if (K < 2) return bbvfl_fail(err, BBVFL_E_ARG, "randomized response needs at least 2 classes, got %d", K);
  if (!(eps > 0) || !isfinite(eps))
    return bbvfl_fail(err, BBVFL_E_ARG, "label epsilon must be > 0 and finite, got %g", eps);
  for (size_t i = 0; i < n; i++)
    if (y[rows[i]] >= K) return bbvfl_fail(err, BBVFL_E_ARG, "label %d is not below K = %d", y[rows[i]], K);
  const double keep = bbvfl_rr_keep(eps, K);
  for (size_t i = 0; i < n; i++) {
    int *v = &y[rows[i]];
    if (*v < 0) continue;
    if (bbvfl_rng_uniform(r) < keep) continue;
    int o = (int)bbvfl_rng_below(r, (uint64_t)(K - 1)); /* one of the K - 1 others */
    *v = o >= *v ? o + 1 : o;
  }
  return 0;
}

int bbvfl_rr_labels_keyed(int *y, const size_t *rows, size_t n, int K, double eps, int seeded, uint64_t seed,
                          const uint8_t *key, bbvfl_err *err) {
  bbvfl_rng r;
  if (bbvfl_rng_init_noise(&r, seeded, seed, key, bbvfl_rng_stream(BBVFL_STREAM_LABELS, 0), err) < 0) return -1;
  int rc = bbvfl_rr_labels(y, rows, n, K, eps, &r, err);
  bbvfl_rng_wipe(&r);
  return rc;
}
