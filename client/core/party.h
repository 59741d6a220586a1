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
 * Ownership: the party copies its columns and owns everything (bbvfl_party_free).
 *
 * Windows and staleness (docs: "Real chains have blocks"): a training round carries a window of
 * nb consecutive minibatches of B rows. The party runs ONE forward of the nb*B rows
 * (bbvfl_party_forward_train), which keeps that forward's activations on a FIFO of pending
 * windows; when the round's gradient (nb*B*P floats, the nb batch gradients concatenated) comes
 * back, bbvfl_party_apply pops the OLDEST pending window and, for batch k = 0..nb-1 in order,
 * back-propagates gradient slice k through rows kB..kB+B-1 of that window's forward (its
 * activations and the parameters it ran with: the gradient at the point the submission was made,
 * whatever steps came since) and takes one optimizer step (DP-SGD in row mode: per-row clipping within the batch, noise per step).
 * With staleness s a client forwards up to s windows ahead of its applied gradients; WHEN to apply
 * is the caller's rule (core/plan.h), the party only keeps the FIFO in order. Evaluation forwards
 * (bbvfl_party_forward_eval) keep nothing. nb = 1 with the apply right after its forward is
 * bit for bit the one-batch protocol (bbvfl_party_forward + bbvfl_party_backward). */
#ifndef BBVFL_VFL_PARTY_H
#define BBVFL_VFL_PARTY_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/mech.h"
#include "dp/rng.h"
#include "dp/rowdp.h"
#include "ml/afe.h"
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
  int seeded_noise;               /* 1: reproducible noise from (seed, NOISE, index) (--reproducible-noise:
                                     no epsilon holds); 0: private (noise_key, else getrandom) */
  const uint8_t *noise_key;       /* nullable, 32 bytes, borrowed for the party's life: the client's
                                     private noise key (dp/rng.h); NULL: a fresh OS key per generator */
  bbvfl_rowdp rowdp;              /* on: backward is DP-SGD (dp/rowdp.h), noise from the same generator */
  size_t max_pending;             /* windows the FIFO may hold (staleness s: s + 1); 0: no limit */
  const size_t *train_rows;       /* rowdp.encoder: the training rows (indices into the table, n_train
                                     of them, borrowed during init) the DP-PCA encoder is fitted on */
  size_t n_train;
  bbvfl_afe_cfg afe;              /* VFL-AFE (ml/afe.h; Gaussian or PBM): afe.on clips at mech.clip; afe.rescale
                                     multiplies each batch of afe.B rows by Eq. 4's factor before the noise or PBM
                                     (the factor joins the row's clip scale in the backward); afe.adjust adds
                                     the adjusting loss's gradient (FCM of the returned gradient) */
} bbvfl_party_cfg;

/* One pending window: the forward that produced the submission (activations and parameters). */
typedef struct {
  size_t rows;   /* nb*B */
  size_t cap;    /* rows the buffers below have room for (kept for reuse) */
  float *acts;   /* bbvfl_mlp_cache_floats(rows) floats (ml/mlp.h layout) */
  float *params; /* the parameters the forward ran with (nparams floats): the backward's weights */
  float *scale;  /* Gaussian: the rows' clip scales (rows floats); otherwise NULL */
} bbvfl_party_window;

typedef struct {
  bbvfl_party_cfg cfg;
  size_t nrows, ncols;
  float *x;          /* nrows x ncols, this client's columns */
  bbvfl_mlp mlp;
  bbvfl_optim opt;
  bbvfl_rng noise;
  bbvfl_rng dpnoise;  /* row mode: DP-SGD noise, its own stream (seed, DPSGD, index) or getrandom, so the
                         order of forwards and backwards (which may vary on chain) never shifts it */
  size_t cap;
  float *xb, *h, *scale;          /* forward scratch (cap rows) */
  bbvfl_party_window last;        /* bbvfl_party_forward's kept forward (rows 0: none) */
  float *dpacc, *dprow;           /* row mode: the clipped-gradient sum (nparams), one row's dLoss/dh */
  float *gtmp;                    /* Gaussian backward: one batch's scaled gradient (gcap floats) */
  size_t gcap;
  bbvfl_party_window *pend;       /* the pending FIFO, oldest first: npend windows, then free slots
                                     (buffers kept) up to pend_cap */
  size_t npend, pend_cap;
  uint64_t steps;                 /* optimizer steps taken */
  int frozen;                     /* encoder mode: the model never steps; each row released once */
  uint8_t *qhave, *qcache;        /* encoder mode: row r released (qhave[r]) and its P bytes */
} bbvfl_party;

/* cols: the party's columns of each of the nrows rows (nrows x ncols row-major), copied.
 * Encoder mode (cfg->rowdp.on and .encoder, PBM only; dp/rowdp.h): the model is one linear layer
 * (nhidden ignored) + tanh whose weights are the DP-PCA encoder of the training rows
 * cfg->train_rows (dp/dppca.h, noise from (seed, DPPCA, index) or getrandom); it is frozen (the
 * apply calls pop their windows and take no step), and the first forward of a row draws its PBM
 * output once: every later forward of that row, training or evaluation, sends the same bytes. */
int bbvfl_party_init(bbvfl_party *p, const bbvfl_party_cfg *cfg, const float *cols, size_t nrows, size_t ncols,
                     bbvfl_err *err);
void bbvfl_party_free(bbvfl_party *p);

/* Training forward of a window: rows (nrows = nb*B indices into 0..nrows-1 of the table, borrowed)
 * in one forward with the current parameters; PBM noise drawn in row-major order. PBM: q
 * (nrows*P bytes, caller-owned) is filled and hf may be NULL; NPQ/Gaussian: hf (nrows*P floats)
 * is filled and q may be NULL. Pushes the window's activations onto the pending FIFO (owned by
 * the party). Fails with BBVFL_E_STATE, drawing no noise, when cfg.max_pending windows are
 * already pending. */
int bbvfl_party_forward_train(bbvfl_party *p, const size_t *rows, size_t nrows, uint8_t *q, float *hf,
                              bbvfl_err *err);
/* Evaluation forward: the same submission, nothing kept for a backward (the FIFO is untouched). */
int bbvfl_party_forward_eval(bbvfl_party *p, const size_t *rows, size_t nrows, uint8_t *q, float *hf,
                             bbvfl_err *err);
/* Pops the OLDEST pending window (it must hold nbatches*B rows) and applies grad (nbatches*B*P
 * floats, borrowed: dLoss/dh_hat of the window's rows, batch after batch) as nbatches optimizer
 * steps in order, batch k back-propagated through rows kB..kB+B-1 of that window's forward
 * (activations and the parameters it ran with) and applied to the current parameters. Row mode
 * (cfg.rowdp.on), per batch: DP-SGD: each row's own gradient (its row of the batch gradient times
 * B, i.e. of its own loss, through the network) clipped to L2 norm clip, the B clipped gradients
 * summed, Gaussian noise of std noise*clip added per parameter, divided by B, then the step.
 * BBVFL_E_STATE with nothing pending, BBVFL_E_ARG on a size mismatch (the window stays). */
int bbvfl_party_apply(bbvfl_party *p, const float *grad, size_t nbatches, size_t B, bbvfl_err *err);
/* Windows forwarded for training but not applied yet. */
size_t bbvfl_party_pending(const bbvfl_party *p);

/* The one-batch protocol, unchanged (K = 1, staleness 0): forward of the given rows (as above)
 * keeping only this last forward, outside the FIFO; backward back-propagates grad (nb*P of that
 * forward) as one step (one batch of nb rows). A training or evaluation forward in between
 * discards the kept forward (backward then fails with BBVFL_E_STATE). */
int bbvfl_party_forward(bbvfl_party *p, const size_t *rows, size_t nb, uint8_t *q, float *hf, bbvfl_err *err);
int bbvfl_party_backward(bbvfl_party *p, const float *grad, bbvfl_err *err);
/* Sets the learning rate for epoch e. */
void bbvfl_party_epoch(bbvfl_party *p, int e);

/* Checkpoint: parameters, optimizer state, noise generator state (only when reproducible or keyed
 * from cfg.noise_key: the on-chain client's own state dir, mode 0600; see party.c), step count and the pending
 * FIFO (each window's activations, forward parameters and clip scales: what its gradient needs),
 * atomic write. Load
 * into a party initialised with the same configuration and data: it replaces the FIFO, and the
 * party continues bit for bit. A checkpoint written before windows existed loads with an empty
 * FIFO. The one-batch forward kept by bbvfl_party_forward is not saved. */
int bbvfl_party_save(const bbvfl_party *p, const char *path, bbvfl_err *err);
int bbvfl_party_load(bbvfl_party *p, const char *path, bbvfl_err *err);

#endif
