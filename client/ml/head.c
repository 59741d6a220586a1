#include "ml/head.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void bbvfl_fhead_free(bbvfl_fhead *h) {
  if (!h) return;
  free(h->params);
  free(h->grads);
  free(h->logits);
  free(h->dlog);
  memset(h, 0, sizeof *h);
}

int bbvfl_fhead_init(bbvfl_fhead *h, int P, int nclasses, bbvfl_rng *rng, bbvfl_err *err) {
  memset(h, 0, sizeof *h);
  if (P < 1) return bbvfl_fail(err, BBVFL_E_ARG, "embedding size P must be >= 1, got %d", P);
  if (nclasses < 2) return bbvfl_fail(err, BBVFL_E_ARG, "need at least 2 classes, got %d", nclasses);
  h->P = P;
  h->nclasses = nclasses;
  h->K = nclasses == 2 ? 1 : nclasses;
  h->nparams = (size_t)P * h->K + h->K;
  h->params = calloc(h->nparams, sizeof(float));
  h->grads = calloc(h->nparams, sizeof(float));
  if (!h->params || !h->grads) {
    bbvfl_fhead_free(h);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  double a = sqrt(6.0 / (P + h->K));
  for (size_t i = 0; i < (size_t)P * h->K; i++) h->params[i] = (float)(a * (2 * bbvfl_rng_uniform(rng) - 1));
  return 0;
}

static int forward(bbvfl_fhead *h, const float *x, size_t rows, bbvfl_err *err) {
  if (rows == 0) return bbvfl_fail(err, BBVFL_E_ARG, "empty batch");
  if (rows > h->cap_rows) {
    free(h->logits);
    free(h->dlog);
    h->logits = malloc(rows * h->K * sizeof(float));
    h->dlog = malloc(rows * h->K * sizeof(float));
    if (!h->logits || !h->dlog) {
      h->cap_rows = 0;
      return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    }
    h->cap_rows = rows;
  }
  int K = h->K;
  const float *b = h->params + (size_t)h->P * K;
  for (size_t i = 0; i < rows; i++) memcpy(h->logits + i * K, b, (size_t)K * sizeof(float));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, K, h->P, 1.0f, x, h->P, h->params, K, 1.0f,
              h->logits, K);
  return 0;
}

static double sigmoid(double z) { return z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z)); }

/* probs from logits (binary: rows; multi: rows x K) */
static void probs_of(const bbvfl_fhead *h, size_t rows, float *probs) {
  int K = h->K;
  if (K == 1) {
    for (size_t i = 0; i < rows; i++) probs[i] = (float)sigmoid(h->logits[i]);
    return;
  }
  for (size_t i = 0; i < rows; i++) {
    const float *z = h->logits + i * K;
    double mx = z[0], s = 0;
    for (int k = 1; k < K; k++) mx = z[k] > mx ? z[k] : mx;
    for (int k = 0; k < K; k++) s += exp(z[k] - mx);
    for (int k = 0; k < K; k++) probs[i * K + k] = (float)(exp(z[k] - mx) / s);
  }
}

int bbvfl_fhead_predict(bbvfl_fhead *h, const float *x, size_t rows, float *probs, bbvfl_err *err) {
  if (forward(h, x, rows, err) != 0) return -1;
  probs_of(h, rows, probs);
  return 0;
}

/* log(1 + exp(z)) without overflow */
static double softplus(double z) { return z > 0 ? z + log1p(exp(-z)) : log1p(exp(z)); }

/* Loss of row i (of the last forward) and dLoss/dlogits of that row scaled by inv, into dl (K values). */
static double row_loss_grad(const bbvfl_fhead *h, size_t i, int y, double inv, float *dl) {
  int K = h->K;
  if (K == 1) {
    double z = h->logits[i];
    /* BCE(sigmoid z, y) = softplus(z) - y z */
    dl[0] = (float)((sigmoid(z) - y) * inv);
    return softplus(z) - y * z;
  }
  const float *z = h->logits + i * K;
  double mx = z[0], s = 0;
  for (int k = 1; k < K; k++) mx = z[k] > mx ? z[k] : mx;
  for (int k = 0; k < K; k++) s += exp(z[k] - mx);
  for (int k = 0; k < K; k++) dl[k] = (float)((exp(z[k] - mx) / s - (k == y)) * inv);
  return log(s) + mx - z[y];
}

static void backward(bbvfl_fhead *h, const float *x, const float *dlog, size_t rows, float *dx) {
  int K = h->K;
  /* dW = x^T dlog, db = column sums, dx = dlog W^T */
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, h->P, K, (int)rows, 1.0f, x, h->P, dlog, K, 0.0f, h->grads, K);
  float *db = h->grads + (size_t)h->P * K;
  memset(db, 0, (size_t)K * sizeof(float));
  for (size_t i = 0; i < rows; i++)
    for (int k = 0; k < K; k++) db[k] += dlog[i * K + k];
  if (dx)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, h->P, K, 1.0f, dlog, K, h->params, K, 0.0f, dx,
                h->P);
}

int bbvfl_fhead_label_grad(bbvfl_fhead *h, const float *x, const int *y, size_t rows, size_t denom, double *loss_sum,
                           size_t *nheld, float *dlog, bbvfl_err *err) {
  if (denom == 0) return bbvfl_fail(err, BBVFL_E_ARG, "label gradient: denominator 0");
  if (forward(h, x, rows, err) != 0) return -1;
  int K = h->K;
  double L = 0, inv = 1.0 / (double)denom;
  size_t held = 0;
  for (size_t i = 0; i < rows; i++) {
    if (y[i] < 0) {
      memset(dlog + i * K, 0, (size_t)K * sizeof(float));
      continue;
    }
    if (y[i] >= h->nclasses)
      return bbvfl_fail(err, BBVFL_E_ARG, "label %d of batch row %zu is not a class (0..%d)", y[i], i, h->nclasses - 1);
    L += row_loss_grad(h, i, y[i], inv, dlog + i * K);
    held++;
  }
  *loss_sum = L;
  *nheld = held;
  return 0;
}

int bbvfl_fhead_backward(bbvfl_fhead *h, const float *x, const float *dlog, size_t rows, float *dx, bbvfl_err *err) {
  if (rows == 0) return bbvfl_fail(err, BBVFL_E_ARG, "empty batch");
  for (size_t i = 0; i < rows * (size_t)h->K; i++)
    if (!isfinite(dlog[i])) return bbvfl_fail(err, BBVFL_E_ARG, "dLoss/dlogits value %zu is not finite", i);
  backward(h, x, dlog, rows, dx);
  return 0;
}

int bbvfl_fhead_train_batch(bbvfl_fhead *h, const float *x, const int *y, size_t rows, double *loss,
                            float *dx, float *probs, bbvfl_err *err) {
  if (forward(h, x, rows, err) != 0) return -1;
  int K = h->K;
  double L = 0, inv = 1.0 / (double)rows;
  for (size_t i = 0; i < rows; i++) {
    if (y[i] < 0 || y[i] >= h->nclasses)
      return bbvfl_fail(err, BBVFL_E_ARG, "label %d of batch row %zu is not a class (0..%d)", y[i], i, h->nclasses - 1);
    L += row_loss_grad(h, i, y[i], inv, h->dlog + i * K);
  }
  *loss = L * inv;
  if (probs) probs_of(h, rows, probs);
  backward(h, x, h->dlog, rows, dx);
  return 0;
}

double bbvfl_loss_from_probs(const float *probs, const int *y, size_t rows, int nclasses) {
  double L = 0;
  for (size_t i = 0; i < rows; i++) {
    double p = nclasses == 2 ? (y[i] == 1 ? probs[i] : 1 - probs[i]) : probs[i * nclasses + y[i]];
    if (p < 1e-7) p = 1e-7;
    if (p > 1 - 1e-7) p = 1 - 1e-7;
    L -= log(p);
  }
  return rows ? L / (double)rows : 0;
}
