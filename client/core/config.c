#include "core/config.h"

#include <stdint.h>
#include <string.h>

#include "ml/optim.h"

void bbvfl_offchain_defaults(bbvfl_offchain_cfg *c) {
  memset(c, 0, sizeof *c);
  c->M = 5;
  c->B = 10;
  c->P = 16;
  c->epochs = 30;
  c->nhidden = 2;
  c->hidden[0] = 32;
  c->hidden[1] = 32;
  c->mech.kind = BBVFL_MECH_PBM;
  c->mech.b = 16;
  c->mech.beta = 0.2;
  c->mech.C = 1.0;
  c->mech.clip = 1.0;
  c->mech.sigma = 1.0;
  bbvfl_optim_defaults(&c->opt);
  c->seed = 1;
  c->seeded_noise = 0; /* private noise (OS) by default; 1 only for --reproducible-noise and tests */
  c->test_frac = 0.2;
  c->window = BBVFL_DEFAULT_WINDOW;
  c->staleness = 0;
  c->eval_rows_per_round = 0;
  c->model = BBVFL_MODEL_MLP;
  c->sqn_memory = 5;
  c->sqn_interval = 3;
  c->sqn_sample = 0;
  bbvfl_afe_defaults(&c->afe);
}

int bbvfl_model_parse(const char *s, int *model) {
  if (strcmp(s, "mlp") == 0) *model = BBVFL_MODEL_MLP;
  else if (strcmp(s, "lr") == 0) *model = BBVFL_MODEL_LR;
  else return -1;
  return 0;
}

const char *bbvfl_model_name(int model) { return model == BBVFL_MODEL_LR ? "lr" : "mlp"; }

static size_t rounds_per_epoch(const bbvfl_offchain_cfg *c, size_t n_train) {
  if (c->B == 0) return 1; /* full batch: one training round per epoch, whatever the row count */
  size_t B = c->B;
  if (B < 1 || n_train < B) return 0;
  size_t R = n_train / B, K = c->window ? c->window : 1;
  if (K > R) K = R;
  return (R + K - 1) / K;
}

uint64_t bbvfl_lr_curv_rounds(const bbvfl_offchain_cfg *c, size_t n_train) {
  if (c->model != BBVFL_MODEL_LR || c->opt.kind != BBVFL_OPT_SQN || c->sqn_interval < 1) return 0;
  if (c->sqn_pairs == BBVFL_SQN_PAIRS_LOCAL) return 0; /* the pairs need no round */
  uint64_t total = (uint64_t)rounds_per_epoch(c, n_train) * (uint64_t)(c->epochs > 0 ? c->epochs : 0);
  uint64_t avgs = total / (uint64_t)c->sqn_interval;
  return avgs > 1 ? avgs - 1 : 0;
}

void bbvfl_lr_releases(const bbvfl_offchain_cfg *c, size_t n_train, int nclasses, int *P, int *releases) {
  *P = nclasses > 2 ? nclasses : 1;
  uint64_t r = (uint64_t)(c->epochs > 0 ? c->epochs : 0) + bbvfl_lr_curv_rounds(c, n_train);
  *releases = r > (uint64_t)INT32_MAX ? INT32_MAX : (int)r;
}
