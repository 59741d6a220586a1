/* One client's side of VFL, independent of transport (in-process aggregator or the contract).
 *
 * A party holds its feature columns of every row, its local MLP (in -> hidden... -> P, tanh at the
 * embedding) with its optimizer, and its noise generator. Forward: batch row indices -> embedding
 * h (B x P) -> mechanism -> what it submits (PBM: uint8 q, B*P row-major; NPQ/Gaussian: floats).
 * Backward: the gradient with respect to h_hat (B x P, the same for every client because the
 * Jacobian of the sum is the identity) -> its MLP update.
 *
 * Determinism: the model initialisation comes from ChaCha20 stream (seed, INIT, index) and the
 * noise from (seed, NOISE, index) in seeded mode (or getrandom otherwise; row mode's DP-SGD noise
 * from (seed, DPSGD, index)), so the same seed gives
 * the same party whether it runs alone in a process or next to the others.
 * Ownership: the party copies its columns and owns everything (bbvfl_party_free). */
#ifndef BBVFL_VFL_PARTY_H
#define BBVFL_VFL_PARTY_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/mech.h"
#include "dp/rng.h"
#include "dp/rowdp.h"
#include "ml/mlp.h"
#include "ml/optim.h"

#define BBVFL_MAX_HIDDEN 6

typedef struct {
  int index;                      /* client index m, 0..M-1 */
  int P;                          /* embedding size */
  int nhidden;                    /* hidden layers (the paper's three-layer model: 2) */
  int hidden[BBVFL_MAX_HIDDEN];   /* their widths */
  bbvfl_mech mech;
  bbvfl_optim_cfg opt;
  uint64_t seed;
  int seeded_noise;               /* 1: noise from (seed, NOISE, index); 0: getrandom */
  bbvfl_rowdp rowdp;              /* on: backward is DP-SGD (dp/rowdp.h), noise from the same generator */
} bbvfl_party_cfg;

typedef struct {
  bbvfl_party_cfg cfg;
  size_t nrows, ncols;
  float *x;          /* nrows x ncols, this client's columns */
  bbvfl_mlp mlp;
  bbvfl_optim opt;
  bbvfl_rng noise;
  bbvfl_rng dpnoise;  /* row mode: DP-SGD noise, its own stream (seed, DPSGD, index) or getrandom, so the
                         order of forwards and backwards (which may vary on chain) never shifts it */
  size_t cap, last_rows;
  float *xb, *h, *scale;
  float *dpacc, *dprow;           /* row mode: the clipped-gradient sum (nparams), one row's dLoss/dh */
  uint64_t steps;
} bbvfl_party;

/* cols: the party's columns of each of the nrows rows (nrows x ncols row-major), copied. */
int bbvfl_party_init(bbvfl_party *p, const bbvfl_party_cfg *cfg, const float *cols, size_t nrows, size_t ncols,
                     bbvfl_err *err);
void bbvfl_party_free(bbvfl_party *p);

/* Forward of the given rows (indices into 0..nrows-1). PBM: q (rows*P bytes) is filled and hf may be
 * NULL; NPQ/Gaussian: hf (rows*P floats) is filled and q may be NULL. The embedding before the
 * mechanism is kept for backward. */
int bbvfl_party_forward(bbvfl_party *p, const size_t *rows, size_t nb, uint8_t *q, float *hf, bbvfl_err *err);
/* Back-propagates grad (dLoss/dh_hat, nb*P of the last forward) and steps the optimizer. Row
 * mode (cfg.rowdp.on): DP-SGD: each row's own gradient (its row of grad times nb, i.e. of its own
 * loss, through the network) clipped to L2 norm clip, the nb clipped gradients summed, Gaussian
 * noise of std noise*clip added per parameter, divided by nb, then the optimizer step. */
int bbvfl_party_backward(bbvfl_party *p, const float *grad, bbvfl_err *err);
/* Sets the learning rate for epoch e. */
void bbvfl_party_epoch(bbvfl_party *p, int e);

/* Checkpoint: parameters, optimizer state, noise generator state, step count (atomic write). Load
 * into a party initialised with the same configuration and data. */
int bbvfl_party_save(const bbvfl_party *p, const char *path, bbvfl_err *err);
int bbvfl_party_load(bbvfl_party *p, const char *path, bbvfl_err *err);

#endif
