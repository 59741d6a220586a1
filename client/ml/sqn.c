#include "ml/sqn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int bbvfl_sqn_init(bbvfl_sqn *q, size_t n, int mem, bbvfl_err *err) {
  memset(q, 0, sizeof *q);
  if (mem < 1 || mem > 1000) return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-memory must be in 1..1000, got %d", mem);
  q->n = n;
  q->mem = mem;
  q->h0 = 1.0;
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

int bbvfl_sqn_push_multi(bbvfl_sqn *const *q, int nb, const float *const *s, const float *const *y) {
  double sy = 0, ss = 0, yy = 0;
  for (int b = 0; b < nb; b++)
    for (size_t i = 0; i < q[b]->n; i++) {
      sy += (double)s[b][i] * y[b][i];
      ss += (double)s[b][i] * s[b][i];
      yy += (double)y[b][i] * y[b][i];
    }
  if (!isfinite(sy) || !isfinite(ss) || !isfinite(yy) || !(sy > 1e-12 * sqrt(ss * yy)) || ss == 0) return 0;
  for (int b = 0; b < nb; b++) {
    bbvfl_sqn *qb = q[b];
    double *ds = qb->s + (size_t)qb->next * qb->n, *dy = qb->y + (size_t)qb->next * qb->n;
    for (size_t i = 0; i < qb->n; i++) {
      ds[i] = s[b][i];
      dy[i] = y[b][i];
    }
    qb->rho[qb->next] = 1.0 / sy;
    qb->next = (qb->next + 1) % qb->mem;
    if (qb->count < qb->mem) qb->count++;
  }
  return 1;
}

int bbvfl_sqn_push(bbvfl_sqn *q, const float *s, const float *y) { return bbvfl_sqn_push_multi(&q, 1, &s, &y); }

/* slot of the j-th newest pair (j = 0: newest) */
static int slot(const bbvfl_sqn *q, int j) { return ((q->next - 1 - j) % q->mem + q->mem) % q->mem; }

/* sum over the blocks of (their row sl of a) . (v) */
static double dot_rows(bbvfl_sqn *const *q, int nb, int use_y, int sl, float *const *v) {
  double a = 0;
  for (int b = 0; b < nb; b++) {
    const double *r = (use_y ? q[b]->y : q[b]->s) + (size_t)sl * q[b]->n;
    for (size_t i = 0; i < q[b]->n; i++) a += r[i] * v[b][i];
  }
  return a;
}

void bbvfl_sqn_apply_multi(bbvfl_sqn *const *q, int nb, const float *const *g, float *const *d) {
  for (int b = 0; b < nb; b++)
    if (d[b] != g[b]) memcpy(d[b], g[b], q[b]->n * sizeof *d[b]);
  bbvfl_sqn *q0 = q[0];
  if (q0->count == 0) {
    for (int b = 0; b < nb; b++)
      if (q[b]->h0 != 1.0)
        for (size_t i = 0; i < q[b]->n; i++) d[b][i] = (float)(d[b][i] * q[b]->h0);
    return;
  }
  for (int j = 0; j < q0->count; j++) { /* newest to oldest */
    int sl = slot(q0, j);
    double a = dot_rows(q, nb, 0, sl, d) * q0->rho[sl];
    q0->alpha[sl] = a;
    for (int b = 0; b < nb; b++) {
      const double *y = q[b]->y + (size_t)sl * q[b]->n;
      for (size_t i = 0; i < q[b]->n; i++) d[b][i] = (float)(d[b][i] - a * y[i]);
    }
  }
  int nw = slot(q0, 0);
  double yy = 0;
  for (int b = 0; b < nb; b++) {
    const double *yn = q[b]->y + (size_t)nw * q[b]->n;
    for (size_t i = 0; i < q[b]->n; i++) yy += yn[i] * yn[i];
  }
  double gamma = 1.0 / (q0->rho[nw] * yy); /* s^T y / y^T y */
  for (int b = 0; b < nb; b++)
    for (size_t i = 0; i < q[b]->n; i++) d[b][i] = (float)(d[b][i] * gamma);
  for (int j = q0->count - 1; j >= 0; j--) { /* oldest to newest */
    int sl = slot(q0, j);
    double c = q0->alpha[sl] - dot_rows(q, nb, 1, sl, d) * q0->rho[sl];
    for (int b = 0; b < nb; b++) {
      const double *s = q[b]->s + (size_t)sl * q[b]->n;
      for (size_t i = 0; i < q[b]->n; i++) d[b][i] = (float)(d[b][i] + c * s[i]);
    }
  }
}

void bbvfl_sqn_apply(bbvfl_sqn *q, const float *g, float *d) { bbvfl_sqn_apply_multi(&q, 1, &g, &d); }
