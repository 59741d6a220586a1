/* The active client's side: the fusion head behind the aggregation.
 *
 * From the round's aggregate (PBM: the integer sums, B*P uint32; NPQ/Gaussian: the float sums)
 * it forms h_hat (the estimate of the sum of the M embeddings), runs the fusion head, the loss on
 * the labels, back-propagates to get dLoss/dh_hat (what every client needs) and steps its own
 * optimizer. Evaluation: the same without labels and update.
 * Parameters travel on chain as big-endian IEEE-754 binary32 (W row-major P x K, then bias K).
 * The head owns its model, optimizer and scratch (bbvfl_vhead_free). */
#ifndef BBVFL_VFL_HEAD_H
#define BBVFL_VFL_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/mech.h"
#include "ml/head.h"
#include "ml/optim.h"

typedef struct {
  int M, P;
  bbvfl_mech mech;
  bbvfl_fhead fh;
  bbvfl_optim opt;
  size_t cap;
  float *hhat;
  uint64_t steps;
} bbvfl_vhead;

/* Head weights from ChaCha20 stream (seed, HEAD, 0). */
int bbvfl_vhead_init(bbvfl_vhead *v, int P, int nclasses, int M, const bbvfl_mech *mech, const bbvfl_optim_cfg *opt,
                     uint64_t seed, bbvfl_err *err);
void bbvfl_vhead_free(bbvfl_vhead *v);
void bbvfl_vhead_epoch(bbvfl_vhead *v, int e);

/* h_hat (nb x P, caller-owned) from the aggregate: exactly one of sum_q / sum_f is non-NULL
 * (sum_q for PBM). */
int bbvfl_vhead_estimate(const bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, size_t nb, float *hhat,
                         bbvfl_err *err);
/* One training step: loss (mean), grad = dLoss/dh_hat (nb x P, caller-owned), head updated.
 * probs (nullable) receives the scores before the update. */
int bbvfl_vhead_train(bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, const int *y, size_t nb,
                      double *loss, float *grad, float *probs, bbvfl_err *err);
/* Labels split across clients (Algorithm 2, lines 11-14). A label holder: dLoss/dlogits (nb x K,
 * caller-owned) for the rows it labels (y[i] >= 0; other rows zero), the mean over the whole
 * batch nb, from the aggregate and the head's current parameters; no update. *loss_sum and
 * *nheld as in bbvfl_fhead_label_grad. The active client: the training step from the summed
 * dLoss/dlogits of every holder: grad = dLoss/dh_hat (nb x P, caller-owned), head updated. */
int bbvfl_vhead_label_grad(bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, const int *y, size_t nb,
                           double *loss_sum, size_t *nheld, float *dlog, bbvfl_err *err);
int bbvfl_vhead_train_dlogits(bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, size_t nb,
                              const float *dlog, float *grad, bbvfl_err *err);
/* Outputs of the head (K: 1 for two classes). */
int bbvfl_vhead_outputs(const bbvfl_vhead *v);

/* Evaluation scores (binary: nb values = P(class 1); else nb x K). */
int bbvfl_vhead_eval(bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, size_t nb, float *probs,
                     bbvfl_err *err);

/* Parameter count and serialisation as big-endian binary32 (4 * nparams bytes). */
size_t bbvfl_vhead_nparams(const bbvfl_vhead *v);
void bbvfl_vhead_params_be(const bbvfl_vhead *v, uint8_t *out);
int bbvfl_vhead_load_params_be(bbvfl_vhead *v, const uint8_t *in, size_t len, bbvfl_err *err);
/* Floats <-> big-endian binary32 (the on-chain gradient encoding). */
void bbvfl_f32_to_be(const float *v, size_t n, uint8_t *out);
void bbvfl_f32_from_be(const uint8_t *in, size_t n, float *v);

/* Checkpoint (parameters + optimizer state), atomic. */
int bbvfl_vhead_save(const bbvfl_vhead *v, const char *path, bbvfl_err *err);
int bbvfl_vhead_load(bbvfl_vhead *v, const char *path, bbvfl_err *err);

#endif
