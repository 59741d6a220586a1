#include "ml/metrics.h"

#include <stdlib.h>

typedef struct {
  float s;
  int pos;
} scored;

static int cmp_scored(const void *a, const void *b) {
  float x = ((const scored *)a)->s, y = ((const scored *)b)->s;
  return (x > y) - (x < y);
}

static int auroc_of(const float *scores, size_t stride, const int *labels, int positive, size_t n, double *out,
                    bbvfl_err *err) {
  scored *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  size_t npos = 0;
  for (size_t i = 0; i < n; i++) {
    v[i].s = scores[i * stride];
    if (v[i].s != v[i].s) {
      free(v);
      return bbvfl_fail(err, BBVFL_E_ARG, "score %zu is NaN", i);
    }
    v[i].pos = labels[i] == positive;
    npos += (size_t)v[i].pos;
  }
  size_t nneg = n - npos;
  if (npos == 0 || nneg == 0) {
    free(v);
    return bbvfl_fail(err, BBVFL_E_ARG, "AUROC needs both classes among the %zu rows (%zu positive, %zu negative)", n,
                      npos, nneg);
  }
  qsort(v, n, sizeof *v, cmp_scored);
  /* sum of (average) ranks of the positives, ranks 1..n */
  double rsum = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    size_t p = 0;
    while (j < n && v[j].s == v[i].s) p += (size_t)v[j++].pos;
    double avg = ((double)(i + 1) + (double)j) / 2.0; /* ranks i+1 .. j */
    rsum += avg * (double)p;
    i = j;
  }
  double U = rsum - (double)npos * (double)(npos + 1) / 2.0;
  *out = U / ((double)npos * (double)nneg);
  free(v);
  return 0;
}

int bbvfl_auroc(const float *scores, const int *labels, size_t n, double *out, bbvfl_err *err) {
  return auroc_of(scores, 1, labels, 1, n, out, err);
}

int bbvfl_auroc_multi(const float *probs, const int *labels, size_t n, int K, double *out, bbvfl_err *err) {
  double s = 0;
  int cnt = 0;
  for (int k = 0; k < K; k++) {
    double a = 0;
    if (auroc_of(probs + k, (size_t)K, labels, k, n, &a, NULL) == 0) {
      s += a;
      cnt++;
    }
  }
  if (cnt == 0) return bbvfl_fail(err, BBVFL_E_ARG, "AUROC needs at least two classes among the %zu rows", n);
  *out = s / cnt;
  return 0;
}

double bbvfl_accuracy_bin(const float *scores, const int *labels, size_t n, double threshold) {
  size_t ok = 0;
  for (size_t i = 0; i < n; i++) ok += (size_t)((scores[i] >= threshold) == (labels[i] == 1));
  return n ? (double)ok / (double)n : 0;
}

double bbvfl_f1_bin(const float *scores, const int *labels, size_t n, double threshold) {
  size_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < n; i++) {
    int pred = scores[i] >= threshold, pos = labels[i] == 1;
    tp += (size_t)(pred && pos);
    fp += (size_t)(pred && !pos);
    fn += (size_t)(!pred && pos);
  }
  return tp ? 2.0 * (double)tp / (2.0 * (double)tp + (double)fp + (double)fn) : 0;
}

static int argmax(const float *p, int K) {
  int b = 0;
  for (int k = 1; k < K; k++)
    if (p[k] > p[b]) b = k;
  return b;
}

double bbvfl_accuracy_multi(const float *probs, const int *labels, size_t n, int K) {
  size_t ok = 0;
  for (size_t i = 0; i < n; i++) ok += (size_t)(argmax(probs + i * K, K) == labels[i]);
  return n ? (double)ok / (double)n : 0;
}

double bbvfl_f1_macro(const float *probs, const int *labels, size_t n, int K) {
  double s = 0;
  for (int k = 0; k < K; k++) {
    size_t tp = 0, fp = 0, fn = 0;
    for (size_t i = 0; i < n; i++) {
      int pred = argmax(probs + i * K, K) == k, pos = labels[i] == k;
      tp += (size_t)(pred && pos);
      fp += (size_t)(pred && !pos);
      fn += (size_t)(!pred && pos);
    }
    s += tp ? 2.0 * (double)tp / (2.0 * (double)tp + (double)fp + (double)fn) : 0;
  }
  return K ? s / K : 0;
}

static int cmp_median(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bbvfl_median(double *v, size_t n) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, cmp_median);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
