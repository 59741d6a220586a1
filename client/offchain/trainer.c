#include "offchain/trainer.h"

#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "dp/labeldp.h"
#include "ml/metrics.h"
#include "core/aggregator.h"
#include "core/head.h"
#include "core/schedule.h"
#include "core/setup.h"

void bbvfl_offchain_result_free(bbvfl_offchain_result *r) {
  if (!r) return;
  free(r->per_epoch);
  free(r->cols_per_client);
  free(r->test_rows);
  free(r->objective);
  memset(r, 0, sizeof *r);
}

void bbvfl_epoch_test_metrics(const float *probs, const int *y, size_t n, int K, int nclasses,
                              bbvfl_epoch_metrics *em) {
  em->test_loss = bbvfl_loss_from_probs(probs, y, n, nclasses);
  bbvfl_err merr = {0};
  if (K == 1) {
    if (bbvfl_auroc(probs, y, n, &em->auroc, &merr) != 0) em->auroc = 0.5;
    em->accuracy = bbvfl_accuracy_bin(probs, y, n, 0.5);
    em->f1 = bbvfl_f1_bin(probs, y, n, 0.5);
  } else {
    if (bbvfl_auroc_multi(probs, y, n, K, &em->auroc, &merr) != 0) em->auroc = 0.5;
    em->accuracy = bbvfl_accuracy_multi(probs, y, n, K);
    em->f1 = bbvfl_f1_macro(probs, y, n, K);
  }
}

void bbvfl_offchain_epoch_end(const bbvfl_offchain_cfg *c, bbvfl_agg *agg, const bbvfl_epoch_end *ee,
                              double *agg_total, bbvfl_offchain_result *res) {
  bbvfl_epoch_metrics *em = &res->per_epoch[ee->e];
  em->epoch = ee->e + 1;
  em->train_loss = ee->loss_sum / (double)ee->R;
  bbvfl_epoch_test_metrics(ee->probs, ee->y, ee->n, ee->K, ee->nclasses, em);
  bbvfl_agg_inproc_stats st;
  bbvfl_agg_inproc_stats_get(agg, &st, 1);
  em->agg_train_s = st.train_sum_s;
  em->agg_eval_s = st.eval_sum_s;
  *agg_total += st.train_sum_s;
  em->wall_s = bbvfl_now() - ee->t0;
  if (c->on_epoch) c->on_epoch(c->ctx, em);
}

int bbvfl_offchain_start(const bbvfl_dataset *ds, const bbvfl_vfl_data *data, const bbvfl_plan *pl,
                         const bbvfl_offchain_cfg *c, size_t B, int *ytrain, int *yeval, bbvfl_schedule *sched,
                         bbvfl_offchain_result *res, bbvfl_err *err) {
  res->per_epoch = calloc((size_t)c->epochs, sizeof *res->per_epoch);
  if (!res->per_epoch) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  res->epochs = c->epochs;
  res->n_train = data->n_train;
  res->n_test = data->n_test;
  res->R = pl->R;
  res->window = pl->K;
  res->window_clamped = pl->clamped;
  res->T = pl->T;
  res->V = pl->V;
  res->R_test = pl->V;
  res->n_eval_rows = data->n_test;
  res->nclasses = ds->nclasses;
  for (size_t i = 0; i < data->n_test; i++) yeval[i] = ds->y[data->test[i]];
  memcpy(ytrain, ds->y, ds->n * sizeof(int));
  /* label DP: one randomized response per training row, before training; the test labels stay
     true (they only score the model) */
  if (c->label_eps > 0 && bbvfl_rr_labels_keyed(ytrain, data->train, data->n_train, ds->nclasses, c->label_eps,
                                                c->seeded_noise, c->seed, c->noise_key, err) != 0)
    return -1;
  uint8_t S[32];
  if (c->session_seed)
    memcpy(S, c->session_seed, 32);
  else
    bbvfl_offchain_session_seed(c->seed, S);
  return bbvfl_schedule_init(sched, S, data->n_train, B, err);
}

