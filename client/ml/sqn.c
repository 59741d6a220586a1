#include "ml/sqn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int bbvfl_sqn_init(bbvfl_sqn *q, size_t n, int mem, bbvfl_err *err) {
  memset(q, 0, sizeof *q);
  if (mem < 1 || mem > 1000) return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-memory must be in 1..1000, got %d", mem);
  q->n = n;
  q->mem = mem;
  size_t nn = n ? n : 1;
  q->s = calloc((size_t)mem * nn, sizeof *q->s);
  q->y = calloc((size_t)mem * nn, sizeof *q->y);
  q->rho = calloc((size_t)mem, sizeof *q->rho);
  q->alpha = calloc((size_t)mem, sizeof *q->alpha);
  if (!q->s || !q->y || !q->rho || !q->alpha) {
    bbvfl_sqn_free(q);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for the quasi-Newton pairs");
  }
  return 0;
}

void bbvfl_sqn_free(bbvfl_sqn *q) {
  if (!q) return;
  free(q->s);
  free(q->y);
  free(q->rho);
  free(q->alpha);
  memset(q, 0, sizeof *q);
}

int bbvfl_sqn_push(bbvfl_sqn *q, const float *s, const float *y) {
  double sy = 0, ss = 0, yy = 0;
  for (size_t i = 0; i < q->n; i++) {
    sy += (double)s[i] * y[i];
    ss += (double)s[i] * s[i];
    yy += (double)y[i] * y[i];
  }
  if (!isfinite(sy) || !isfinite(ss) || !isfinite(yy) || !(sy > 1e-12 * sqrt(ss * yy)) || ss == 0) return 0;
  double *ds = q->s + (size_t)q->next * q->n, *dy = q->y + (size_t)q->next * q->n;
  for (size_t i = 0; i < q->n; i++) {
    ds[i] = s[i];
    dy[i] = y[i];
  }
  q->rho[q->next] = 1.0 / sy;
  q->next = (q->next + 1) % q->mem;
  if (q->count < q->mem) q->count++;
  return 1;
}

/* slot of the j-th newest pair (j = 0: newest) */
static int slot(const bbvfl_sqn *q, int j) { return ((q->next - 1 - j) % q->mem + q->mem) % q->mem; }

void bbvfl_sqn_apply(bbvfl_sqn *q, const float *g, float *d) {
  size_t n = q->n;
  if (q->count == 0) {
    if (d != g) memcpy(d, g, n * sizeof *d);
    return;
  }
  if (d != g) memcpy(d, g, n * sizeof *d);
  for (int j = 0; j < q->count; j++) { /* newest to oldest */
    int sl = slot(q, j);
    const double *s = q->s + (size_t)sl * n, *y = q->y + (size_t)sl * n;
    double a = 0;
    for (size_t i = 0; i < n; i++) a += s[i] * d[i];
    a *= q->rho[sl];
    q->alpha[sl] = a;
    for (size_t i = 0; i < n; i++) d[i] = (float)(d[i] - a * y[i]);
  }
  int nw = slot(q, 0);
  const double *yn = q->y + (size_t)nw * n;
  double yy = 0;
  for (size_t i = 0; i < n; i++) yy += yn[i] * yn[i];
  double gamma = 1.0 / (q->rho[nw] * yy); /* s^T y / y^T y */
  for (size_t i = 0; i < n; i++) d[i] = (float)(d[i] * gamma);
  for (int j = q->count - 1; j >= 0; j--) { /* oldest to newest */
    int sl = slot(q, j);
    const double *s = q->s + (size_t)sl * n, *y = q->y + (size_t)sl * n;
    double b = 0;
    for (size_t i = 0; i < n; i++) b += y[i] * d[i];
    b *= q->rho[sl];
    for (size_t i = 0; i < n; i++) d[i] = (float)(d[i] + (q->alpha[sl] - b) * s[i]);
  }
}
