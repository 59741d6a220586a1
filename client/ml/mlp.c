#include "ml/mlp.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void bbvfl_mlp_free(bbvfl_mlp *m) {
  if (!m) return;
  free(m->params);
  free(m->grads);
  for (int l = 0; l <= BBVFL_MLP_MAX_LAYERS; l++) free(m->act[l]);
  free(m->scratch_a);
  free(m->scratch_b);
  memset(m, 0, sizeof *m);
}

int bbvfl_mlp_init(bbvfl_mlp *m, int nlayers, const int *dims, bbvfl_rng *rng, bbvfl_err *err) {
  memset(m, 0, sizeof *m);
  if (nlayers < 1 || nlayers > BBVFL_MLP_MAX_LAYERS)
    return bbvfl_fail(err, BBVFL_E_ARG, "an MLP needs 1..%d layers, got %d", BBVFL_MLP_MAX_LAYERS, nlayers);
  size_t n = 0;
  for (int l = 0; l <= nlayers; l++) {
    if (dims[l] < 1 || dims[l] > 1 << 20)
      return bbvfl_fail(err, BBVFL_E_ARG, "MLP layer size %d is out of range (1..%d)", dims[l], 1 << 20);
    m->dims[l] = dims[l];
  }
  m->nlayers = nlayers;
  for (int l = 0; l < nlayers; l++) {
    m->woff[l] = n;
    n += (size_t)dims[l] * dims[l + 1];
    m->boff[l] = n;
    n += (size_t)dims[l + 1];
  }
  m->nparams = n;
  m->params = calloc(n, sizeof *m->params);
  m->grads = calloc(n, sizeof *m->grads);
  if (!m->params || !m->grads) {
    bbvfl_mlp_free(m);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for %zu MLP parameters", n);
  }
  for (int l = 0; l < nlayers; l++) {
    int in = dims[l], out = dims[l + 1];
    float *w = m->params + m->woff[l];
    if (l < nlayers - 1) { /* He normal for ReLU */
      double sd = sqrt(2.0 / in);
      for (size_t i = 0; i < (size_t)in * out; i++) w[i] = (float)(sd * bbvfl_rng_normal(rng));
    } else { /* Xavier uniform for tanh */
      double a = sqrt(6.0 / (in + out));
      for (size_t i = 0; i < (size_t)in * out; i++) w[i] = (float)(a * (2 * bbvfl_rng_uniform(rng) - 1));
    }
  }
  return 0;
}

static int ensure_scratch(bbvfl_mlp *m, size_t rows, bbvfl_err *err) {
  if (rows <= m->scratch_rows) return 0;
  int maxd = 0;
  for (int l = 0; l <= m->nlayers; l++)
    if (m->dims[l] > maxd) maxd = m->dims[l];
  free(m->scratch_a);
  free(m->scratch_b);
  m->scratch_a = malloc(rows * (size_t)maxd * sizeof(float));
  m->scratch_b = malloc(rows * (size_t)maxd * sizeof(float));
  if (!m->scratch_a || !m->scratch_b) {
    m->scratch_rows = 0;
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for an MLP batch of %zu rows", rows);
  }
  m->scratch_rows = rows;
  return 0;
}

static int ensure_cap(bbvfl_mlp *m, size_t rows, bbvfl_err *err) {
  if (rows <= m->cap_rows) return 0;
  m->rows = 0;
  for (int l = 0; l <= m->nlayers; l++) {
    free(m->act[l]);
    m->act[l] = malloc(rows * (size_t)m->dims[l] * sizeof(float));
    if (!m->act[l]) {
      m->cap_rows = 0;
      return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for an MLP batch of %zu rows", rows);
    }
  }
  m->cap_rows = rows;
  return ensure_scratch(m, rows, err);
}

int bbvfl_mlp_forward(bbvfl_mlp *m, const float *x, size_t rows, float *out, bbvfl_err *err) {
  if (rows == 0) return bbvfl_fail(err, BBVFL_E_ARG, "empty batch");
  if (ensure_cap(m, rows, err) != 0) return -1;
  m->rows = rows;
  memcpy(m->act[0], x, rows * (size_t)m->dims[0] * sizeof(float));
  for (int l = 0; l < m->nlayers; l++) {
    int in = m->dims[l], o = m->dims[l + 1];
    float *y = m->act[l + 1];
    const float *b = m->params + m->boff[l];
    for (size_t i = 0; i < rows; i++) memcpy(y + i * o, b, (size_t)o * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, o, in, 1.0f, m->act[l], in,
                m->params + m->woff[l], o, 1.0f, y, o);
    size_t k = rows * (size_t)o;
    if (l < m->nlayers - 1)
      for (size_t i = 0; i < k; i++) y[i] = y[i] > 0 ? y[i] : 0;
    else
      for (size_t i = 0; i < k; i++) y[i] = tanhf(y[i]);
  }
  memcpy(out, m->act[m->nlayers], rows * (size_t)m->dims[m->nlayers] * sizeof(float));
  return 0;
}

/* Backward for rows first .. first+rows-1 of the activations base[0..L] (dout: rows x out). */
static void backward_range(bbvfl_mlp *m, const float *params, const float *const *base, size_t first, size_t rows,
                           const float *dout) {
  int L = m->nlayers;
  float *delta = m->scratch_a, *next = m->scratch_b;
  const float *act[BBVFL_MLP_MAX_LAYERS + 1] = {0};
  for (int l = 0; l <= L; l++) act[l] = base[l] + first * (size_t)m->dims[l];
  /* through tanh: d/dz tanh = 1 - y^2 */
  {
    size_t k = rows * (size_t)m->dims[L];
    const float *y = act[L];
    for (size_t i = 0; i < k; i++) delta[i] = dout[i] * (1 - y[i] * y[i]);
  }
  for (int l = L - 1; l >= 0; l--) {
    int in = m->dims[l], o = m->dims[l + 1];
    /* dW = act[l]^T delta (in x o), db = column sums of delta */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, in, o, (int)rows, 1.0f, act[l], in, delta, o, 0.0f,
                m->grads + m->woff[l], o);
    float *db = m->grads + m->boff[l];
    memset(db, 0, (size_t)o * sizeof(float));
    for (size_t i = 0; i < rows; i++)
      for (int j = 0; j < o; j++) db[j] += delta[i * o + j];
    if (l == 0) break;
    /* d act[l] = delta W^T (rows x in), then through ReLU of layer l-1 */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, in, o, 1.0f, delta, o, params + m->woff[l], o, 0.0f,
                next, in);
    const float *a = act[l];
    size_t k = rows * (size_t)in;
    for (size_t i = 0; i < k; i++)
      if (a[i] <= 0) next[i] = 0;
    float *t = delta;
    delta = next;
    next = t;
  }
}

static void own_cache(const bbvfl_mlp *m, const float **base) {
  for (int l = 0; l <= m->nlayers; l++) base[l] = m->act[l];
}

void bbvfl_mlp_backward(bbvfl_mlp *m, const float *dout) {
  const float *base[BBVFL_MLP_MAX_LAYERS + 1] = {0};
  own_cache(m, base);
  backward_range(m, m->params, base, 0, m->rows, dout);
}

void bbvfl_mlp_backward_row(bbvfl_mlp *m, size_t i, const float *dout_row) {
  if (i >= m->rows) return;
  const float *base[BBVFL_MLP_MAX_LAYERS + 1] = {0};
  own_cache(m, base);
  backward_range(m, m->params, base, i, 1, dout_row);
}

size_t bbvfl_mlp_cache_floats(const bbvfl_mlp *m, size_t rows) {
  size_t n = 0;
  for (int l = 0; l <= m->nlayers; l++) n += rows * (size_t)m->dims[l];
  return n;
}

void bbvfl_mlp_cache_copy(const bbvfl_mlp *m, float *out) {
  for (int l = 0; l <= m->nlayers; l++) {
    size_t k = m->rows * (size_t)m->dims[l];
    if (k) memcpy(out, m->act[l], k * sizeof(float));
    out += k;
  }
}

int bbvfl_mlp_backward_cached(bbvfl_mlp *m, const float *params, const float *cache, size_t cache_rows, size_t first,
                              size_t rows, const float *dout, bbvfl_err *err) {
  if (rows == 0 || first > cache_rows || rows > cache_rows - first)
    return bbvfl_fail(err, BBVFL_E_ARG, "backward of rows %zu..%zu of a cache of %zu rows", first, first + rows,
                      cache_rows);
  if (ensure_scratch(m, rows, err) != 0) return -1;
  const float *base[BBVFL_MLP_MAX_LAYERS + 1] = {0};
  const float *at = cache;
  for (int l = 0; l <= m->nlayers; l++) {
    base[l] = at;
    at += cache_rows * (size_t)m->dims[l];
  }
  backward_range(m, params ? params : m->params, base, first, rows, dout);
  return 0;
}
