/* The fusion head: one fully connected layer on the (estimated) summed embedding, P -> K.
 * Two classes: K = 1 logit, sigmoid, binary cross-entropy. More classes: K = nclasses logits,
 * softmax, cross-entropy. Losses are means over the batch.
 *
 * Parameters: W (P x K row-major) then bias (K), one flat array (the layout that is serialised
 * on chain); grads in the same layout. The head owns its arrays (bbvfl_fhead_free). */
#ifndef BBVFL_ML_HEAD_H
#define BBVFL_ML_HEAD_H

#include <stddef.h>

#include "common/err.h"
#include "dp/rng.h"

typedef struct {
  int P, nclasses, K;
  size_t nparams;
  float *params, *grads;
  size_t cap_rows;
  float *logits; /* cap_rows x K: logits of the last forward */
  float *dlog;   /* cap_rows x K: dLoss/dlogits */
} bbvfl_fhead;

/* Xavier uniform weights from rng, zero bias. nclasses >= 2. */
int bbvfl_fhead_init(bbvfl_fhead *h, int P, int nclasses, bbvfl_rng *rng, bbvfl_err *err);
void bbvfl_fhead_free(bbvfl_fhead *h);

/* Scores for evaluation: binary: probs[rows] = P(class 1); multiclass: probs[rows x K]. */
int bbvfl_fhead_predict(bbvfl_fhead *h, const float *x, size_t rows, float *probs, bbvfl_err *err);

/* Forward + loss + backward on a labelled batch: returns the mean loss in *loss, writes
 * dLoss/dx (rows x P, caller-owned, nullable) and sets h->grads. probs as in predict (nullable). */
int bbvfl_fhead_train_batch(bbvfl_fhead *h, const float *x, const int *y, size_t rows, double *loss,
                            float *dx, float *probs, bbvfl_err *err);

/* Labels split across clients: forward, then for the rows with y[i] >= 0 (the rows this caller
 * labels; y[i] < 0: not labelled here, its dlog row is zero) dLoss/dlogits with the mean taken
 * over `denom` rows (the whole batch, so that the holders' parts sum to the batch gradient), into
 * dlog (rows x K, caller-owned). *loss_sum: the sum of those rows' losses; *nheld: their count. */
int bbvfl_fhead_label_grad(bbvfl_fhead *h, const float *x, const int *y, size_t rows, size_t denom, double *loss_sum,
                           size_t *nheld, float *dlog, bbvfl_err *err);
/* Backward from a given dLoss/dlogits (rows x K, all finite): sets h->grads and dx (rows x P,
 * nullable). */
int bbvfl_fhead_backward(bbvfl_fhead *h, const float *x, const float *dlog, size_t rows, float *dx, bbvfl_err *err);

/* Loss only (for evaluation): mean BCE / CE of the labels under the given scores (as predict
 * writes them). Probabilities are clamped to [1e-7, 1-1e-7]. */
double bbvfl_loss_from_probs(const float *probs, const int *y, size_t rows, int nclasses);

#endif
