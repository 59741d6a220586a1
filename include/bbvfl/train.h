/* bbvfl public API: off-chain vertical federated training.
 *
 * A bbvfl_config holds one training configuration: M clients, each holding a share of the
 * columns and training a small network (an MLP) to an embedding of P values in [-1, 1]; the
 * mechanism each client applies to its embedding before it leaves the client (PBM with b trials
 * and bias beta, as DP-BBVFL; Gaussian; or NPQ, no privacy); the batch size, the epochs, the seed.
 * bbvfl_train runs the whole protocol in one process: every client's mechanism output goes
 * through the same aggregator logic as the contract's (the integer sum), the active client's
 * fusion head trains on the estimated sum and its gradient goes back to every client. The rows
 * are split into training and test rows (a fraction, default 0.2, from the seed); after each epoch
 * every test row is scored. `bbvfl train --offchain` is the same code path.
 *
 * Ownership: a bbvfl_config and a bbvfl_run are opaque and owned by the caller from their create
 * (or train) call until their destroy call. Setters copy what they are given (strings, arrays);
 * a run copies the configuration it was trained with, so the config may be changed or destroyed
 * while the run lives.
 *
 * Threads: no global mutable state; different objects may be used from different threads at
 * once. One object must not be changed while another thread uses it. OpenBLAS may start its own
 * threads (OPENBLAS_NUM_THREADS=1 keeps it to one).
 *
 * Every setter checks its value and returns BBVFL_STATUS_ARG naming the bad value, leaving the
 * config unchanged; combinations (e.g. more clients than feature columns) are checked by
 * bbvfl_train against the table. A NULL config is BBVFL_STATUS_ARG. */
#ifndef BBVFL_PUBLIC_TRAIN_H
#define BBVFL_PUBLIC_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "bbvfl/common.h"
#include "bbvfl/data.h"
#include "bbvfl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bbvfl_config bbvfl_config;
typedef struct bbvfl_run bbvfl_run;

typedef enum {
  BBVFL_MECHANISM_NPQ = 0,      /* no noise, no quantization: no privacy (the papers' baseline) */
  BBVFL_MECHANISM_PBM = 1,      /* Poisson Binomial Mechanism: integers 0..b per value */
  BBVFL_MECHANISM_GAUSSIAN = 2  /* each embedding row clipped to L2 norm clip, N(0, sigma^2) added */
} bbvfl_mechanism;

typedef enum { BBVFL_OPTIMIZER_SGD = 0, BBVFL_OPTIMIZER_ADAM = 1 } bbvfl_optimizer;

/* The metrics of one epoch. The layout is part of the ABI (fields are only added with a new
 * SONAME). */
typedef struct {
  int epoch;          /* 1-based */
  double train_loss;  /* mean cross-entropy over the epoch's training batches */
  double test_loss;   /* mean cross-entropy over every test row */
  double auroc;       /* test AUROC (binary; macro one-vs-rest with more classes) */
  double accuracy;    /* test accuracy */
  double f1;          /* test F1 (binary; macro with more classes) */
  double seconds;     /* wall time of the epoch */
} bbvfl_epoch_stats;

/* Called after each epoch with that epoch's metrics (valid during the call only) and the ctx
 * given to bbvfl_train. It must not call into the run being trained. */
typedef void (*bbvfl_epoch_fn)(void *ctx, const bbvfl_epoch_stats *stats);

/* A new configuration with the defaults of `bbvfl train --offchain` (the paper's Breast Cancer
 * setup): M 5 clients, PBM b 16 beta 0.2, batch 10, P 16, 30 epochs, hidden layers 32,32, Adam
 * lr 0.001, test fraction 0.2, delta 1e-5, no label DP; no seed (see bbvfl_config_set_seed).
 * out: non-NULL, receives the config (NULL on failure). Returns OK, ARG (out NULL), NOMEM. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_create(bbvfl_config **out, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1);
/* Frees a config. NULL: nothing happens. */
BBVFL_API void bbvfl_config_destroy(bbvfl_config *cfg);

/* Clients M, 1..1000 (each needs at least one feature column of the table). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_clients(bbvfl_config *cfg, int clients,
                                                                        bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* The mechanism; its parameters are set by the two calls below (defaults: PBM b 16 beta 0.2,
 * Gaussian clip 1 sigma 1). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_mechanism(bbvfl_config *cfg, bbvfl_mechanism mechanism,
                                                                          bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* PBM: b trials per value, 1..255 (M * b at most 65535), beta in (0, 0.5). Selects PBM. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_pbm(bbvfl_config *cfg, int b, double beta,
                                                                    bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* Gaussian: clip > 0, sigma > 0, both finite. Selects the Gaussian mechanism. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_gaussian(bbvfl_config *cfg, double clip, double sigma,
                                                                         bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* Embedding size P per client, 1..4096. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_embedding(bbvfl_config *cfg, int P, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1);
/* Batch size B, 1..1048576 (the training rows must hold one batch). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_batch(bbvfl_config *cfg, int batch, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1);
/* Epochs, 1..100000. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_epochs(bbvfl_config *cfg, int epochs, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1);
/* A repeatable run: the split, the initial weights, the minibatches and all noise derive from
 * seed, so the same seed, table and config give bit-identical metrics (and `bbvfl train
 * --offchain --seed N` with the same settings gives the same numbers). Anyone who knows the seed
 * can reproduce the noise: use it for experiments, not to protect real data; bbvfl_config_epsilon
 * and bbvfl_run_epsilon of a seeded configuration report no guarantee (INFINITY, method "none"). Without a seed (the
 * default) each bbvfl_train draws a fresh seed for the split and the weights (bbvfl_run_seed
 * reports it) and takes the noise from the operating system's random source. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_seed(bbvfl_config *cfg, uint64_t seed,
                                                                     bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* Hidden layer widths of every client's network: n widths (each 1..65536, n at most
 * BBVFL_HIDDEN_LAYERS_MAX; n = 0: no hidden layer). widths may be NULL only when n = 0; it is
 * copied. */
#define BBVFL_HIDDEN_LAYERS_MAX 6
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_hidden(bbvfl_config *cfg, const int *widths, size_t n,
                                                                       bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* The optimizer of the clients' networks and of the fusion head, and its learning rate (> 0,
 * finite). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_optimizer(bbvfl_config *cfg, bbvfl_optimizer optimizer,
                                                                          double lr, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1);
/* The share of rows held out for testing, in (0, 1). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_test_fraction(bbvfl_config *cfg, double fraction,
                                                                              bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* The columns of each client, e.g. "0-5/6-11/12,13,20-29": clients separated by '/', each a
 * comma list of 0-based feature indices or inclusive ranges; it must name exactly M clients and
 * every index at most once (checked against the table by bbvfl_train). NULL: an even split (the
 * default). The string is copied. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_partition(bbvfl_config *cfg, const char *spec,
                                                                          bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* Label DP: train on randomized-response labels, epsilon-label-DP; 0 turns it off (the default:
 * the true labels, which anyone seeing the gradients can read back), else in [1e-6, inf). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_label_epsilon(bbvfl_config *cfg, double epsilon,
                                                                              bbvfl_error *err) BBVFL_ARG_NONNULL(1);
/* The delta of the (epsilon, delta) guarantees reported by bbvfl/privacy.h, in (0, 1). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_set_delta(bbvfl_config *cfg, double delta,
                                                                      bbvfl_error *err) BBVFL_ARG_NONNULL(1);

/* Trains on table with cfg (neither is modified nor kept).
 *   on_epoch  nullable; called after each epoch (see bbvfl_epoch_fn), with ctx.
 *   out       non-NULL; receives the run on success (NULL on failure).
 * Returns OK; ARG (a NULL argument, a configuration the table cannot serve: more clients than
 * feature columns, a partition that does not fit, too few rows for one batch or one test row);
 * CRYPTO (no seed and the OS random source failed); NOMEM. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_train(const bbvfl_table *table, const bbvfl_config *cfg,
                                                           bbvfl_epoch_fn on_epoch, void *ctx, bbvfl_run **out,
                                                           bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(2) BBVFL_ARG_NONNULL(5);

/* Frees a run. NULL: nothing happens. */
BBVFL_API void bbvfl_run_destroy(bbvfl_run *run);

/* Epochs trained (= the configured epochs); 0 for a NULL run. */
BBVFL_API int bbvfl_run_epochs(const bbvfl_run *run);
/* The metrics of epoch (1-based, 1..bbvfl_run_epochs) into *out. Returns OK, or ARG (NULL
 * argument, epoch out of range; *out untouched). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_run_epoch(const bbvfl_run *run, int epoch, bbvfl_epoch_stats *out,
                                                               bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(3);
/* Training and test rows of the split; 0 for a NULL run. */
BBVFL_API size_t bbvfl_run_train_rows(const bbvfl_run *run);
BBVFL_API size_t bbvfl_run_test_rows(const bbvfl_run *run);
/* The seed the run used: the configured one, or the one drawn for it; 0 for a NULL run.
 * *repeatable (nullable) is set to 1 when the noise came from the seed too (a configured seed),
 * 0 when it came from the operating system. */
BBVFL_API uint64_t bbvfl_run_seed(const bbvfl_run *run, int *repeatable);

#ifdef __cplusplus
}
#endif

#endif
