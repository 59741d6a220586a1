/* Vertical logistic regression off chain (`bbvfl train --offchain --model lr`): M clients, each a
 * linear model on its columns, and the active client's head (the sum plus K biases), in one
 * process through the in-process aggregator, run by the one round loop of core/rounds.h on the
 * round plan of core/plan.h (the same rounds, rows and schedule as the MLP's).
 *
 * A round (the FederatedScope flow with the contract in place of the coordinator and the
 * mechanism in place of Paillier): client m releases its partial logits u_m = X_m W_m of the
 * window's rows (P = K values per row: K = 1 for two classes, softmax with K = nclasses
 * otherwise), clipped to [-C, C] when C > 0 (PBM needs the bound: C = cfg.logit_clip, default
 * BBVFL_LR_PBM_CLIP; the PBM's own C is set to it). Only the sum is public: the head forms
 * z = sum + b, the loss (logistic, or seed 001's Taylor loss), and posts dLoss/dz of every row;
 * client m's gradient is X_m^T (dLoss/dz, zero where its partial logit was clipped; Gaussian:
 * times the row's clip scale). Weights and biases start at zero.
 *
 * Optimizers: sgd, adam (ml/optim.h) or sqn (seed 001's Algorithm 1): steps w -= lr H g
 * (no cap unless cfg.sqn_cap), H an inverse-Hessian estimate from the last sqn_memory curvature
 * pairs (ml/sqn.h). Every sqn_interval (L) training rounds each block averages its last L
 * iterates; from the second average on, s = wbar_t - wbar_{t-1} and y comes from (sqn_pairs):
 *  - LOCAL (default): each block's own H_bb s_b, computed by its holder from its columns and the
 *    window's posted gradient (bbvfl_lr_client_local_pair), no round, no release; one H per block;
 *  - GLOBAL: the curvature round below, and one H over all blocks (ml/sqn.h _multi); every step
 *    with pairs first takes a round of dot products (2 sqn_memory scalars per client; counted in
 *    res->scalar_rounds and the objective; not released through the mechanism: off chain only);
 *  - ROUND: the curvature round, one H per block (bbvfl's earlier variant).
 * The CURVATURE ROUND runs right after that training
 * round's gradients were applied: on the first S rows of that window (S = sqn_sample, 0 or more
 * than the window: all of them) each client releases v_i^m = s_m . x_i^m through the same
 * mechanism and clip (round id BBVFL_CURV_ROUND_BASE + t); the head forms
 * h_i = sum + s_b, r_i = d2L/dz2(z_i) h_i / S (z_i the logits of that window's training step) and
 * posts r; each client's y_m = X_m^T r, the head's y_b = sum_i r_i.
 * With ROUND, H is BLOCK-DIAGONAL, one estimate per client (its own pairs (s_m, y_m), where y_m
 * is its block of the full Hessian-vector product, so h_i couples the clients) and one for the
 * head's biases. Seed 001's coordinator holds one H over all blocks, which would need every
 * client's gradient in one place (on a public chain: published); here no gradient block ever
 * leaves its client, and the price is the cross-block curvature. The extra release: one value
 * per row per class of S rows every L rounds from the second average on (bbvfl_lr_releases
 * counts it for the accountant).
 * Staleness must be 0 (each gradient is applied before the next forward).
 *
 * Determinism: split, schedule and noise streams as the MLP's (offchain/offchain.h). */
#ifndef BBVFL_VFL_LR_TRAIN_H
#define BBVFL_VFL_LR_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "ml/data.h"
#include "offchain/trainer.h"

/* sqn's default step with M clients (docs/LR.md "Step"): each block's H inverts only its own
 * diagonal block of the Hessian, so the step lr H g can overshoot by up to the block count M + 1
 * (the preconditioned Hessian's top eigenvalue); a plain step is stable below 2 / (M + 1): the
 * logistic loss takes 2 / (M + 1) (measured with 5 clients: 0.33 converged on Breast Cancer, Wine
 * and Digits on every seed, 0.5 diverged on Digits, 0.7 and 1 everywhere), the Taylor loss, whose
 * curvature never fades, 1 / (M + 1). */
double bbvfl_lr_sqn_default_lr(int loss, int M);
#define BBVFL_CURV_ROUND_BASE (UINT64_C(1) << 61)


/* As bbvfl_offchain_train (which calls it for model lr). Errors: bad parameters (named). */
int bbvfl_lr_train(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *c, bbvfl_offchain_result *res, bbvfl_err *err);


#endif
