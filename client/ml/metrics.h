/* Classification metrics. Binary: scores are P(class 1), labels 0/1, class 1 is positive.
 * Multiclass: probs rows x K. Nothing allocates except bbvfl_auroc (a temporary, freed). */
#ifndef BBVFL_ML_METRICS_H
#define BBVFL_ML_METRICS_H

#include <stddef.h>

#include "common/err.h"

/* Exact AUROC = P(score of a random positive > score of a random negative) + 1/2 P(tie), by
 * ranking with averaged ranks for ties (Mann-Whitney U). Error when a class is absent. */
int bbvfl_auroc(const float *scores, const int *labels, size_t n, double *out, bbvfl_err *err);
/* Multiclass: macro average of one-vs-rest AUROCs over the classes present with both sides. */
int bbvfl_auroc_multi(const float *probs, const int *labels, size_t n, int K, double *out, bbvfl_err *err);

/* Binary: predicted class = score >= threshold. */
double bbvfl_accuracy_bin(const float *scores, const int *labels, size_t n, double threshold);
/* F1 of the positive class (1); 0 when there are no true positives. */
double bbvfl_f1_bin(const float *scores, const int *labels, size_t n, double threshold);
/* Multiclass: predicted class = argmax (first on ties). Macro F1 over the K classes. */
double bbvfl_accuracy_multi(const float *probs, const int *labels, size_t n, int K);
double bbvfl_f1_macro(const float *probs, const int *labels, size_t n, int K);
/* The median of v[n] (sorts v in place; the mean of the two middle values when n is even; 0 when
 * n is 0). */
double bbvfl_median(double *v, size_t n);

#endif
