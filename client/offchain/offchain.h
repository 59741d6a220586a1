/* The off-chain VFL trainer: M parties and the active client's head in one process, talking only
 * through a bbvfl_agg (the in-process aggregator), exactly as the on-chain protocol will through
 * the contract. One epoch = R = floor(N_train/B) minibatches (from the schedule of the session
 * seed) in T = ceil(R/K) training rounds of K minibatches (windows), then V = ceil(N_test/E)
 * evaluation rounds covering every test row (test metrics on all N_test rows). The rounds, their
 * rows and when each party applies its pending gradients (staleness s) come from core/plan.h; per
 * round, in order: every party applies the pending gradients the plan names, forwards and
 * submits; the sum; the head steps through the window's minibatches and posts their gradients;
 * the gradient becomes pending for every party.
 *
 * Determinism: split, model initialisation and the session seed S derive from cfg->seed through
 * separate ChaCha20 streams per (purpose, client); the noise too only with seeded_noise
 * (--reproducible-noise), else it is private (OS-keyed). */
#ifndef BBVFL_VFL_OFFCHAIN_H
#define BBVFL_VFL_OFFCHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/mech.h"
#include "ml/data.h"
#include "ml/optim.h"
#include "core/aggregator.h"
#include "core/config.h"
#include "offchain/trainer.h"
#include "core/party.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "core/setup.h"



/* Trains on the raw (unstandardised) data set; ds is not modified. B = 0: full batch (every
 * training row in one minibatch). model BBVFL_MODEL_LR runs bbvfl_lr_train (offchain/lr_train.h). */
int bbvfl_offchain_train(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *cfg, bbvfl_offchain_result *res,
                         bbvfl_err *err);

#endif
