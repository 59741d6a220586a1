/* Vertical logistic regression: the arithmetic of the linear model family (`--model lr`).
 *
 * Client m holds the weights W_m (ncols_m x K, row-major) of its columns and releases the partial
 * logits u_m = X_m W_m (rows x K) of a batch; the active client forms z = sum_m u_m + b (b: its
 * K biases) and the loss. K = 1 for two classes (the logit of class 1), else K = nclasses
 * (softmax, multinomial: P = K per client).
 *
 * Losses (means over the rows):
 *   logistic  two classes: log(1 + e^-y'z) with y' = 2y - 1 (binary cross-entropy);
 *             K classes: softmax cross-entropy;
 *   taylor    (two classes only) seed 001's second-order Taylor expansion around z = 0:
 *             log 2 - y' z / 2 + z^2 / 8, y' in {-1, 1}; dL/dz = z/4 - y'/2, d2L/dz2 = 1/4.
 * Scores for evaluation are sigmoid(z) / softmax(z) whatever the training loss.
 *
 * Curvature (the quasi-Newton optimizer, ml/sqn.h): a Hessian-vector product of the mean loss
 * needs, per sampled row i, h_i = sum_m s_m . x_i^m (+ the bias step): the directional change of
 * z_i. Then r_i = (1/n) d2L/dz2(z_i) h_i and client m's block of the product is X_m^T r.
 *
 * Pure functions on caller-owned buffers; nothing allocates, nothing fails. */
#ifndef BBVFL_ML_LR_H
#define BBVFL_ML_LR_H

#include <stddef.h>

typedef enum { BBVFL_LOSS_LOGISTIC = 0, BBVFL_LOSS_TAYLOR = 1 } bbvfl_loss_kind;

/* "logistic" | "taylor"; -1 if unknown. */
int bbvfl_loss_parse(const char *s, bbvfl_loss_kind *k);
const char *bbvfl_loss_name(bbvfl_loss_kind k);

/* out (rows x K) = X[rows] W: x is the table (any number of rows x ncols, row-major), idx the
 * rows (rows indices into it), w ncols x K. */
void bbvfl_lr_partial(const float *x, size_t ncols, const size_t *idx, size_t rows, const float *w, int K,
                      float *out);

/* Mean loss of z (rows x K) under labels y (0..nclasses-1; two classes: 0/1, K = 1); dz
 * (nullable, rows x K) = d(mean loss)/dz; probs (nullable): the scores (K = 1: rows values
 * P(class 1); else rows x K). taylor needs K = 1 (the caller checks). */
double bbvfl_lr_loss(bbvfl_loss_kind kind, const float *z, const int *y, size_t rows, int K, float *dz, float *probs);
/* As bbvfl_lr_loss for rows that are part of a batch of 1/inv rows (a chunk of it: the on-chain
 * client's full batch spread over several rounds): dz = dLoss/dz scaled by inv; returns the SUM of
 * the rows' losses (bbvfl_lr_loss is this with inv = 1/rows, times inv). */
double bbvfl_lr_loss_sum(bbvfl_loss_kind kind, const float *z, const int *y, size_t rows, int K, double inv, float *dz,
                         float *probs);

/* r (rows x K) = (1/denom) * d2L/dz2(z_i) h_i for each row: logistic K = 1: p(1-p) h; softmax:
 * (diag(p) - p p^T) h; taylor: h/4. */
void bbvfl_lr_hvp_rows(bbvfl_loss_kind kind, const float *z, const float *h, size_t rows, int K, double denom,
                       float *r);

/* As bbvfl_lr_hvp_rows with d2L/dz2 recovered from the posted gradient g (rows x K, dLoss/dz
 * scaled by 1/lb: q = lb g) instead of z, so a client that sees only the public gradient can form
 * it: logistic, two classes: q = p - y, p(1-p) = |q| (1 - |q|); softmax: q = p - e_y with y the one
 * class whose q is negative (or none, p_y = 1), so p = q + e_(argmin q); taylor: 1/4. */
void bbvfl_lr_hvp_rows_grad(bbvfl_loss_kind kind, const float *g, double lb, const float *h, size_t rows, int K,
                            double denom, float *r);
/* The largest d2L/dz2 of a row (the largest eigenvalue of the K x K matrix for softmax): 1/4 for
 * two classes (logistic and taylor), 1/2 for softmax. */
double bbvfl_lr_curv_max(bbvfl_loss_kind kind, int K);

/* g (ncols x K) = X[rows]^T a (a: rows x K), accumulated in double. */
void bbvfl_lr_xt(const float *x, size_t ncols, const size_t *idx, size_t rows, const float *a, int K, float *g);

#endif
