#include "ml/lr.h"

#include <math.h>
#include <string.h>

int bbvfl_loss_parse(const char *s, bbvfl_loss_kind *k) {
  if (strcmp(s, "logistic") == 0) *k = BBVFL_LOSS_LOGISTIC;
  else if (strcmp(s, "taylor") == 0) *k = BBVFL_LOSS_TAYLOR;
  else return -1;
  return 0;
}

const char *bbvfl_loss_name(bbvfl_loss_kind k) { return k == BBVFL_LOSS_TAYLOR ? "taylor" : "logistic"; }

void bbvfl_lr_partial(const float *x, size_t ncols, const size_t *idx, size_t rows, const float *w, int K,
                      float *out) {
  for (size_t i = 0; i < rows; i++) {
    const float *xi = x + idx[i] * ncols;
    for (int k = 0; k < K; k++) {
      double a = 0;
      for (size_t j = 0; j < ncols; j++) a += (double)xi[j] * w[j * (size_t)K + (size_t)k];
      out[i * (size_t)K + (size_t)k] = (float)a;
    }
  }
}

static double sigmoid(double z) { return z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z)); }

/* log(1 + e^t), stable */
static double softplus(double t) { return t > 0 ? t + log1p(exp(-t)) : log1p(exp(t)); }

double bbvfl_lr_loss(bbvfl_loss_kind kind, const float *z, const int *y, size_t rows, int K, float *dz, float *probs) {
  double inv = rows ? 1.0 / (double)rows : 0;
  return bbvfl_lr_loss_sum(kind, z, y, rows, K, inv, dz, probs) * inv;
}

double bbvfl_lr_loss_sum(bbvfl_loss_kind kind, const float *z, const int *y, size_t rows, int K, double inv, float *dz,
                         float *probs) {
  double sum = 0;
  for (size_t i = 0; i < rows; i++) {
    if (K == 1) {
      double zi = z[i], yp = y[i] == 1 ? 1.0 : -1.0, p = sigmoid(zi);
      if (kind == BBVFL_LOSS_TAYLOR) {
        sum += log(2.0) - yp * zi / 2 + zi * zi / 8;
        if (dz) dz[i] = (float)((zi / 4 - yp / 2) * inv);
      } else {
        sum += softplus(-yp * zi);
        if (dz) dz[i] = (float)((p - (y[i] == 1)) * inv);
      }
      if (probs) probs[i] = (float)p;
      continue;
    }
    const float *zi = z + i * (size_t)K;
    double mx = zi[0], den = 0;
    for (int k = 1; k < K; k++) mx = zi[k] > mx ? zi[k] : mx;
    for (int k = 0; k < K; k++) den += exp(zi[k] - mx);
    sum += log(den) + mx - zi[y[i]];
    for (int k = 0; k < K; k++) {
      double p = exp(zi[k] - mx) / den;
      if (dz) dz[i * (size_t)K + (size_t)k] = (float)((p - (k == y[i])) * inv);
      if (probs) probs[i * (size_t)K + (size_t)k] = (float)p;
    }
  }
  return sum;
}

void bbvfl_lr_hvp_rows(bbvfl_loss_kind kind, const float *z, const float *h, size_t rows, int K, double denom,
                       float *r) {
  double inv = 1.0 / denom;
  for (size_t i = 0; i < rows; i++) {
    if (K == 1) {
      double p = sigmoid(z[i]), d = kind == BBVFL_LOSS_TAYLOR ? 0.25 : p * (1 - p);
      r[i] = (float)(d * h[i] * inv);
      continue;
    }
    const float *zi = z + i * (size_t)K, *hi = h + i * (size_t)K;
    double mx = zi[0], den = 0, ph = 0;
    for (int k = 1; k < K; k++) mx = zi[k] > mx ? zi[k] : mx;
    for (int k = 0; k < K; k++) den += exp(zi[k] - mx);
    for (int k = 0; k < K; k++) ph += exp(zi[k] - mx) / den * hi[k];
    for (int k = 0; k < K; k++) {
      double p = exp(zi[k] - mx) / den;
      r[i * (size_t)K + (size_t)k] = (float)(p * (hi[k] - ph) * inv);
    }
  }
}

void bbvfl_lr_hvp_rows_grad(bbvfl_loss_kind kind, const float *g, double lb, const float *h, size_t rows, int K,
                            double denom, float *r) {
  double inv = 1.0 / denom;
  for (size_t i = 0; i < rows; i++) {
    if (K == 1) {
      double q = fabs(lb * g[i]), d = kind == BBVFL_LOSS_TAYLOR ? 0.25 : q * (1 - q);
      r[i] = (float)((d > 0 ? d : 0) * h[i] * inv);
      continue;
    }
    const float *gi = g + i * (size_t)K, *hi = h + i * (size_t)K;
    int y = 0;
    for (int k = 1; k < K; k++)
      if (gi[k] < gi[y]) y = k;
    double ph = 0;
    for (int k = 0; k < K; k++) ph += (lb * gi[k] + (k == y)) * hi[k];
    for (int k = 0; k < K; k++) {
      double p = lb * gi[k] + (k == y);
      r[i * (size_t)K + (size_t)k] = (float)(p * (hi[k] - ph) * inv);
    }
  }
}

double bbvfl_lr_curv_max(bbvfl_loss_kind kind, int K) {
  (void)kind;
  return K == 1 ? 0.25 : 0.5;
}

void bbvfl_lr_xt(const float *x, size_t ncols, const size_t *idx, size_t rows, const float *a, int K, float *g) {
  for (size_t j = 0; j < ncols; j++)
    for (int k = 0; k < K; k++) {
      double s = 0;
      for (size_t i = 0; i < rows; i++) s += (double)x[idx[i] * ncols + j] * a[i * (size_t)K + (size_t)k];
      g[j * (size_t)K + (size_t)k] = (float)s;
    }
}
