/* What both in-process trainers (the MLP's, offchain/offchain.h, and LR's, offchain/lr_train.h)
 * share: the result of a run, its start once the rows are split and the rounds planned, and the
 * end of an epoch (metrics, timings, the progress callback). */
#ifndef BBVFL_OFFCHAIN_TRAINER_H
#define BBVFL_OFFCHAIN_TRAINER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "core/aggregator.h"
#include "core/config.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "core/setup.h"
#include "ml/data.h"

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

/* Frees what r owns and zeroes it; NULL is a no-op. */
void bbvfl_offchain_result_free(bbvfl_offchain_result *r);

/* What both in-process trainers (the MLP's, offchain/lr_train.h's) do once the rows are split (data,
 * core/setup.h) and the round plan made (pl): fill res's layout (epochs, rows, R, window, T, V,
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

/* What an in-process trainer (the MLP's, offchain/lr_train.h's) knows at the end of an epoch, for
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
