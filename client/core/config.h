/* A training configuration: what a session trains and how (model, mechanism, optimizer, windows,
 * staleness, row mode, label DP, VFL-AFE, LR's options), shared by the off-chain trainer
 * (offchain/offchain.h), the on-chain client (onchain/onchain.h), the session file
 * (binding/session.h), the privacy accounting (core/cfgprivacy.h) and the head replay
 * (core/headcheck.h). Plain data: every pointer in it is borrowed from the caller. */
#ifndef BBVFL_CORE_CONFIG_H
#define BBVFL_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/party.h"
#include "dp/mech.h"
#include "dp/rowdp.h"
#include "ml/afe.h"
#include "ml/optim.h"

typedef struct {
  int epoch;                 /* 1-based */
  double train_loss;         /* mean over the epoch's training batches */
  double test_loss, auroc, accuracy, f1;
  double agg_train_s;        /* aggregation time of the epoch's training rounds (summing only) */
  double agg_eval_s;
  double wall_s;             /* wall time of the epoch */
} bbvfl_epoch_metrics;

/* The model family (`--model`): each client's MLP with a tanh embedding of size P and the fusion
 * head (the paper's), or vertical logistic regression (offchain/lr_train.h): linear on each client's
 * columns, P = K, the head the sum plus a bias. */
#define BBVFL_MODEL_MLP 0
#define BBVFL_MODEL_LR 1

#define BBVFL_LR_PBM_CLIP 4.0

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
  int staleness;             /* s, 0..BBVFL_MAX_STALENESS (core/plan.h): windows a party may forward
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

/* Defaults: the MLP, M 5, B 10, P 16, 30 epochs, hidden 32,32, PBM b 16 beta 0.2 C 1, Gaussian clip 1
 * sigma 1, Adam lr 0.001, seed 1, private noise (seeded_noise 0), test 0.2, window BBVFL_DEFAULT_WINDOW, staleness 0, all
 * test rows in one evaluation round. */
#define BBVFL_DEFAULT_WINDOW 1
void bbvfl_offchain_defaults(bbvfl_offchain_cfg *c);

/* "mlp" | "lr" -> BBVFL_MODEL_*; -1 if unknown. */
int bbvfl_model_parse(const char *s, int *model);
const char *bbvfl_model_name(int model);

/* Curvature rounds a run of c makes with n_train training rows (0 unless model lr and sqn; full
 * batch, c->B = 0, needs no row count; minibatches with n_train 0: 0, not known). */
uint64_t bbvfl_lr_curv_rounds(const bbvfl_offchain_cfg *c, size_t n_train);
/* What the accountant composes for one row of one client under model lr: *P = K values per
 * release, *releases = epochs training releases plus (worst case: the row is in every
 * subsample) the curvature rounds (bbvfl_lr_curv_rounds). */
void bbvfl_lr_releases(const bbvfl_offchain_cfg *c, size_t n_train, int nclasses, int *P, int *releases);

#endif
