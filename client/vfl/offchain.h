/* The off-chain VFL trainer: M parties and the active client's head in one process, talking only
 * through a bbvfl_agg (the in-process aggregator), exactly as the on-chain protocol will through
 * the contract. One epoch = R = floor(N_train/B) minibatches (from the schedule of the session
 * seed) in T = ceil(R/K) training rounds of K minibatches (windows), then V = ceil(N_test/E)
 * evaluation rounds covering every test row (test metrics on all N_test rows). The rounds, their
 * rows and when each party applies its pending gradients (staleness s) come from vfl/plan.h; per
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
#include "vfl/aggregator.h"
#include "vfl/party.h"
#include "vfl/plan.h"
#include "vfl/schedule.h"
#include "vfl/setup.h"

typedef struct {
  int epoch;                 /* 1-based */
  double train_loss;         /* mean over the epoch's training batches */
  double test_loss, auroc, accuracy, f1;
  double agg_train_s;        /* aggregation time of the epoch's training rounds (summing only) */
  double agg_eval_s;
  double wall_s;             /* wall time of the epoch */
} bbvfl_epoch_metrics;

/* The model family (`--model`): each client's MLP with a tanh embedding of size P and the fusion
 * head (the paper's), or vertical logistic regression (vfl/lr_train.h): linear on each client's
 * columns, P = K, the head the sum plus a bias. */
#define BBVFL_MODEL_MLP 0
#define BBVFL_MODEL_LR 1

/* What an observer of the run sees, for the attacks of audit/attack.h (every field nullable;
 * pointers are borrowed for the call only). release: client m's submission of rows (table row
 * indices; hf for NPQ/Gaussian, q for PBM, nrows x P) in a training or evaluation round of epoch
 * (0-based). gradient: the head's posted gradient of a training window (nrows x P) with the head's
 * parameters after its steps (big-endian binary32, as the GradientPosted event carries them).
 * features: client m's (standardised) columns of every table row, once before training.
 * scores: after the last epoch, the final model's scores (n x K; K = 1: P(class 1)) of the
 * training rows (train 1) and of the test rows (train 0). */
typedef struct {
  void *ctx;
  void (*release)(void *ctx, int m, int train, int epoch, const size_t *rows, size_t nrows, const float *hf,
                  const uint8_t *q);
  void (*gradient)(void *ctx, int epoch, const size_t *rows, size_t nrows, const float *grad, const uint8_t *params_be,
                   size_t params_len);
  void (*features)(void *ctx, int m, const float *x, size_t nrows, size_t ncols);
  void (*scores)(void *ctx, int train, const size_t *rows, size_t n, const float *probs, int K);
} bbvfl_offchain_tap;

typedef struct {
  int M;                     /* clients */
  size_t B;                  /* batch size */
  int P;                     /* embedding size */
  int epochs;
  int nhidden, hidden[BBVFL_MAX_HIDDEN];
  bbvfl_mech mech;
  bbvfl_optim_cfg opt;
  uint64_t seed;
  int seeded_noise;          /* 1: reproducible noise from seed (--reproducible-noise; no epsilon
                                holds: cfgprivacy reports none); 0: private noise (noise_key or OS) */
  const uint8_t *noise_key;  /* nullable, 32 bytes, borrowed: a private noise key (dp/rng.h); NULL:
                                a fresh OS key per generator */
  double test_frac;          /* 0.2 */
  uint64_t split_seed;       /* the train/test split (and row mode's scaling draws) from this seed;
                                0: from seed (the default) */
  bbvfl_rowdp rowdp;         /* on: row mode (DP scaling + DP-SGD, dp/rowdp.h); off: the paper's */
  double label_eps;          /* > 0: train on randomized-response labels, eps-label-DP (dp/labeldp.h),
                                drawn once per training row; 0: the true labels */
  const char *partition;     /* NULL: even split */
  size_t window;             /* K, minibatches per training round (0 or 1: one; clamped to R;
                                default BBVFL_DEFAULT_WINDOW) */
  int staleness;             /* s, 0..BBVFL_MAX_STALENESS (vfl/plan.h): windows a party may forward
                                ahead of its applied gradients (default 0) */
  size_t eval_rows_per_round;/* E, test rows per evaluation round; 0: all test rows in one round */
  const uint8_t *session_seed; /* 32 bytes, nullable: the minibatch seed S (e.g. an on-chain
                                  session's, to replay it off-chain); NULL: derived from seed */
  bbvfl_afe_cfg afe;         /* VFL-AFE (ml/afe.h, with the gaussian or pbm mechanism): on, rescale, adjust and
                                their weights; nclasses and B are filled in from the table and the batch */
  int model;                 /* BBVFL_MODEL_MLP (default) or BBVFL_MODEL_LR */
  int loss;                  /* lr: bbvfl_loss_kind (ml/lr.h), logistic (default) or taylor */
  double logit_clip;         /* lr: partial logits clipped to [-C, C]; 0: PBM's default bound
                                BBVFL_LR_PBM_CLIP, the others unclipped */
  double l2;                 /* lr: L2 penalty (l2/2)|W|^2 added to the mean loss (biases free);
                                1/(C n_train) is sklearn's LogisticRegression(C) */
  int sqn_memory;            /* lr with opt.kind BBVFL_OPT_SQN: curvature pairs kept, M (5) */
  int sqn_interval;          /* L: a curvature update every L training rounds (3) */
  size_t sqn_sample;         /* S: rows of the curvature subsample (the first S of the window; 0: all) */
  int sqn_pairs;             /* BBVFL_SQN_PAIRS_*: where y comes from and which H (docs/LR.md) */
  double sqn_cap;            /* > 0: a block's step H g scaled down to at most this times |g|; 0: none
                                (the default) */
  int track_objective;       /* lr off chain: fill the result's objective (one full pass over the
                                training rows per round) */
  const bbvfl_offchain_tap *tap; /* nullable: the attacks' view of the run (MLP only) */
  /* progress callbacks (nullable) */
  void (*on_round)(void *ctx, int epoch, size_t done, size_t total);
  void (*on_epoch)(void *ctx, const bbvfl_epoch_metrics *m);
  void *ctx;
} bbvfl_offchain_cfg;

/* sqn's curvature pairs (`--sqn-pairs`): LOCAL (default) each block's own y = H_bb s_b, computed
 * by its holder from its columns and the posted gradient, no curvature round, one H per block;
 * ROUND y_m from a curvature round (every client's columns), one H per block; GLOBAL y from a
 * curvature round and one H over all blocks (off chain only: each step adds a round of dot
 * products, 2 sqn_memory scalars per client, counted as a round). */
#define BBVFL_SQN_PAIRS_LOCAL 0
#define BBVFL_SQN_PAIRS_ROUND 1
#define BBVFL_SQN_PAIRS_GLOBAL 2

typedef struct {
  int epochs;
  bbvfl_epoch_metrics *per_epoch;  /* epochs entries, owned (bbvfl_offchain_result_free) */
  size_t n_train, n_test, R, n_eval_rows;  /* n_eval_rows = n_test: every test row is scored */
  size_t window;                   /* K used (the requested one clamped to R) */
  int window_clamped;              /* 1: the requested K exceeded R */
  size_t T, V;                     /* training (window) and evaluation rounds per epoch */
  size_t R_test;                   /* = V (the name before windows) */
  double agg_train_s_per_epoch;    /* mean over epochs */
  double wall_s;
  int nclasses;
  size_t *cols_per_client;         /* M entries, owned */
  size_t *test_rows;               /* lr: the n_test test rows (table row indices, ascending),
                                      owned; NULL for the MLP */
  size_t curv_rounds;              /* lr + sqn: curvature aggregation rounds run (each one more
                                      release of the subsampled rows) */
  size_t scalar_rounds;            /* lr + sqn global: rounds of dot products run */
  double *objective;               /* lr with track_objective: n_objective entries, owned: entry k
                                      the regularised training objective (mean training loss over
                                      every training row + (l2/2)|W|^2) after k rounds that change
                                      or steer the model (training, curvature and dot-product
                                      rounds; evaluation rounds are not counted); entry 0: at the
                                      start */
  size_t n_objective;
} bbvfl_offchain_result;

/* Defaults: the MLP, M 5, B 10, P 16, 30 epochs, hidden 32,32, PBM b 16 beta 0.2 C 1, Gaussian clip 1
 * sigma 1, Adam lr 0.001, seed 1, private noise (seeded_noise 0), test 0.2, window BBVFL_DEFAULT_WINDOW, staleness 0, all
 * test rows in one evaluation round. */
#define BBVFL_DEFAULT_WINDOW 1
void bbvfl_offchain_defaults(bbvfl_offchain_cfg *c);
/* Trains on the raw (unstandardised) data set; ds is not modified. B = 0: full batch (every
 * training row in one minibatch). model BBVFL_MODEL_LR runs bbvfl_lr_train (vfl/lr_train.h). */
int bbvfl_offchain_train(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *cfg, bbvfl_offchain_result *res,
                         bbvfl_err *err);
void bbvfl_offchain_result_free(bbvfl_offchain_result *r);

/* What both in-process trainers (the MLP's, vfl/lr_train.h's) do once the rows are split (data,
 * vfl/setup.h) and the round plan made (pl): fill res's layout (epochs, rows, R, window, T, V,
 * classes) and allocate res->per_epoch; yeval[0..n_test) = the test rows' true labels;
 * ytrain[0..ds->n) = every row's label, the training rows' drawn by label DP when
 * c->label_eps > 0 (one randomized response per row, before training); then the session seed
 * (c->session_seed, else derived from c->seed) and the minibatch schedule of batches of B rows
 * into *sched, which the caller frees (bbvfl_schedule_free) after a success only. Borrows
 * everything else. Errors: out of memory, label DP, the schedule. */
int bbvfl_offchain_start(const bbvfl_dataset *ds, const bbvfl_vfl_data *data, const bbvfl_plan *pl,
                         const bbvfl_offchain_cfg *c, size_t B, int *ytrain, int *yeval, bbvfl_schedule *sched,
                         bbvfl_offchain_result *res, bbvfl_err *err);

/* The test metrics of scores probs (n rows x K; K = 1: P(class 1)) against labels y (nclasses
 * classes) into em's test_loss, auroc (0.5 when it is undefined, e.g. a class absent), accuracy
 * and f1; em's other fields are left alone. Borrows probs and y. */
void bbvfl_epoch_test_metrics(const float *probs, const int *y, size_t n, int K, int nclasses,
                              bbvfl_epoch_metrics *em);

/* What an in-process trainer (the MLP's, vfl/lr_train.h's) knows at the end of an epoch, for
 * bbvfl_offchain_epoch_end. Pointers are borrowed. */
typedef struct {
  int e;              /* the epoch, 0-based */
  double loss_sum;    /* the training loss summed over the epoch's R minibatches */
  size_t R;
  const float *probs; /* the scores of all n test rows, n x K */
  const int *y;       /* their (true) labels */
  size_t n;
  int K, nclasses;
  double t0;          /* bbvfl_now() when the epoch started */
} bbvfl_epoch_end;

/* Closes epoch ee->e: fills res->per_epoch[ee->e] (its number, mean training loss, the test
 * metrics of bbvfl_epoch_test_metrics, the summing times of agg, an in-process aggregator
 * (bbvfl_agg_inproc_new), since their last reset, which this resets, and the wall time since
 * ee->t0), adds the training summing time to *agg_total and calls c->on_epoch when set. */
void bbvfl_offchain_epoch_end(const bbvfl_offchain_cfg *c, bbvfl_agg *agg, const bbvfl_epoch_end *ee,
                              double *agg_total, bbvfl_offchain_result *res);

#endif
