/* What the chain gives away about the labels (docs/PRIVACY.md, "Labels are public").
 *
 * Every GradientPosted event carries, for each row i of the round's batch, g_i = dLoss/dh_hat_i =
 * W d_i / B (d_i = dLoss/dlogits_i = p_i - onehot(y_i), W the head's P x K weights) and the head's
 * parameters after the step. Since p_i - onehot(y_i) has exactly one negative entry, at y_i, the
 * label is read back from the direction of g_i:
 *   K = 1 (two classes, sigmoid): d_i = p_i - y_i, so y_i = 1 exactly when g_i . w < 0;
 *   K > 1 (softmax): d_i is the least-squares solution of W d = g_i (K unknowns, P >= K
 *   equations); y_i is its smallest entry.
 * The posted W is the one after the step; the gradient was taken with the one before. The step is
 * small, so the sign (K = 1) or the smallest entry (K > 1) is unchanged in practice; the auditor's
 * test measures how often. Nothing else is needed: no sum, no embeddings, no key.
 *
 * Pure computation; buffers are the caller's. */
#ifndef BBVFL_AUDIT_LEAK_H
#define BBVFL_AUDIT_LEAK_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* grad_be: B x P big-endian binary32 (the event's gradient); params_be: the event's fusion
 * parameters, W (P x K row-major) then bias (K), big-endian binary32, so K = params_len / 4 / (P + 1).
 * Writes labels[B] (0..K-1 for K > 1; 0 or 1 for K = 1). Errors: lengths that do not fit B, P;
 * non-finite values; a W whose columns are linearly dependent (K > 1). */
int bbvfl_leak_labels(const uint8_t *grad_be, size_t grad_len, size_t B, size_t P, const uint8_t *params_be,
                      size_t params_len, int *labels, bbvfl_err *err);

/* What randomized response lets the read-back tell (dp/labeldp.h): with label DP eps over K
 * classes the label a gradient gives back is the randomized one, which equals the true label with
 * probability p = e^eps / (e^eps + K - 1), independently per row, drawn once. Over n distinct
 * rows the fraction that equals the true labels is Binomial(n, p) / n: *p, and the band
 * p -/+ z sqrt(p (1 - p) / n) (z = 1.96: 95 %), clamped to [0, 1]. eps <= 0 or not finite (no
 * label DP): p = lo = hi = 1. n = 0: the band is [0, 1]. */
void bbvfl_leak_rr_band(double eps, int K, size_t n, double z, double *p, double *lo, double *hi);

/* Agreement of the labels read back with the true ones, per distinct training row: read[i] the
 * label read back for training position i (-1: none), train[i] its table row, y the table's
 * labels. *n = positions read, *same = those equal to y[train[i]]. */
void bbvfl_leak_agreement(const int *read, const size_t *train, size_t n_train, const int *y, size_t *n,
                          size_t *same);

#endif
