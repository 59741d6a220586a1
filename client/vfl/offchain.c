#include "vfl/offchain.h"

#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "dp/labeldp.h"
#include "ml/metrics.h"
#include "vfl/aggregator.h"
#include "vfl/head.h"
#include "vfl/schedule.h"
#include "vfl/setup.h"

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
  c->seeded_noise = 1;
  c->test_frac = 0.2;
}

void bbvfl_offchain_result_free(bbvfl_offchain_result *r) {
  if (!r) return;
  free(r->per_epoch);
  free(r->cols_per_client);
  memset(r, 0, sizeof *r);
}

typedef struct {
  int M;
  bbvfl_party *parties;
  int nparties;
  bbvfl_vhead head;
  int have_head;
  bbvfl_agg agg;
  bbvfl_schedule sched;
  int have_sched;
  bbvfl_vfl_data data;
  uint8_t *q;
  float *hf, *grad, *probs, *all_probs;
  uint32_t *sum_q;
  float *sum_f;
  int *yb, *yeval;
  int *ytrain; /* per table row: the label trained on (randomized response with label_eps) */
  size_t *rows;
} trainer;

static void trainer_free(trainer *t) {
  for (int m = 0; m < t->nparties; m++) bbvfl_party_free(&t->parties[m]);
  free(t->parties);
  if (t->have_head) bbvfl_vhead_free(&t->head);
  bbvfl_agg_destroy(&t->agg);
  if (t->have_sched) bbvfl_schedule_free(&t->sched);
  bbvfl_vfl_data_free(&t->data);
  free(t->q);
  free(t->hf);
  free(t->grad);
  free(t->probs);
  free(t->all_probs);
  free(t->sum_q);
  free(t->sum_f);
  free(t->yb);
  free(t->ytrain);
  free(t->yeval);
  free(t->rows);
}

/* One round through the aggregator: every party submits for rows[0..B), the sum comes back. */
static int round_forward(trainer *t, const bbvfl_offchain_cfg *c, uint64_t round, const size_t *rows, bbvfl_err *err) {
  size_t n = c->B * (size_t)c->P;
  int pbm = c->mech.kind == BBVFL_MECH_PBM;
  for (int m = 0; m < t->M; m++) {
    if (bbvfl_party_forward(&t->parties[m], rows, c->B, t->q, t->hf, err) != 0) return -1;
    int rc = pbm ? bbvfl_agg_submit_q(&t->agg, round, m, t->q, n, err) : bbvfl_agg_submit_f(&t->agg, round, m, t->hf, n, err);
    if (rc != 0) return -1;
  }
  return pbm ? bbvfl_agg_sum_q(&t->agg, round, t->sum_q, n, err) : bbvfl_agg_sum_f(&t->agg, round, t->sum_f, n, err);
}

int bbvfl_offchain_train(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *c, bbvfl_offchain_result *res,
                         bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  trainer t;
  memset(&t, 0, sizeof t);
  t.M = c->M;
  int rc = -1;
  double t_start = bbvfl_now();
  if (c->M < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--clients must be >= 1, got %d", c->M);
  if (c->epochs < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--epochs must be >= 1, got %d", c->epochs);
  if (c->B < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--batch must be >= 1");
  if (c->P < 1 || c->P > 4096) return bbvfl_fail(err, BBVFL_E_ARG, "--P must be in 1..4096, got %d", c->P);
  if (bbvfl_mech_check(&c->mech, err) != 0) return -1;
  if (c->mech.kind == BBVFL_MECH_PBM && (long)c->M * c->mech.b > 65535)
    return bbvfl_fail(err, BBVFL_E_ARG, "M*b = %ld exceeds 65535, the widest lane of the aggregator", (long)c->M * c->mech.b);

  /* split, standardisation, partition: identical in every client (vfl/setup.h) */
  if (bbvfl_vfl_data_prepare_dp(ds, c->split_seed ? c->split_seed : c->seed, c->test_frac, c->M, c->partition, &c->rowdp, c->seeded_noise, &t.data,
                                err) != 0)
    goto out;
  size_t ntr = t.data.n_train, nte = t.data.n_test;
  if (ntr < c->B || nte < c->B) {
    bbvfl_fail(err, BBVFL_E_ARG, "%zu training / %zu test rows: each needs at least one batch of %zu", ntr, nte, c->B);
    goto out;
  }
  t.parties = calloc((size_t)c->M, sizeof *t.parties);
  res->cols_per_client = calloc((size_t)c->M, sizeof *res->cols_per_client);
  if (!t.parties || !res->cols_per_client) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  for (int m = 0; m < c->M; m++) {
    float *cols;
    size_t nc;
    if (bbvfl_vfl_data_client_cols(&t.data, m, &cols, &nc, err) != 0) goto out;
    res->cols_per_client[m] = nc;
    bbvfl_party_cfg pc = {.index = m, .P = c->P, .nhidden = c->nhidden, .mech = c->mech, .opt = c->opt,
                          .seed = c->seed, .seeded_noise = c->seeded_noise, .rowdp = c->rowdp};
    memcpy(pc.hidden, c->hidden, sizeof pc.hidden);
    int prc = bbvfl_party_init(&t.parties[m], &pc, cols, ds->n, nc, err);
    free(cols);
    if (prc != 0) goto out;
    t.nparties = m + 1;
  }
  if (bbvfl_vhead_init(&t.head, c->P, ds->nclasses, c->M, &c->mech, &c->opt, c->seed, err) != 0) goto out;
  t.have_head = 1;
  size_t n = c->B * (size_t)c->P;
  if (bbvfl_agg_inproc_new(&t.agg, c->M, n, c->mech.kind == BBVFL_MECH_PBM ? c->mech.b : 255, err) != 0) goto out;

  /* the session seed S and the schedule */
  uint8_t S[32];
  if (c->session_seed)
    memcpy(S, c->session_seed, 32);
  else
    bbvfl_offchain_session_seed(c->seed, S);
  if (bbvfl_schedule_init(&t.sched, S, ntr, c->B, err) != 0) goto out;
  t.have_sched = 1;
  size_t R = ntr / c->B, Rte = nte / c->B, neval = Rte * c->B;
  int K = ds->nclasses == 2 ? 1 : ds->nclasses;
  t.q = malloc(n);
  t.hf = malloc(n * sizeof(float));
  t.grad = malloc(n * sizeof(float));
  t.probs = malloc(c->B * (size_t)K * sizeof(float));
  t.all_probs = malloc(neval * (size_t)K * sizeof(float));
  t.sum_q = malloc(n * sizeof(uint32_t));
  t.sum_f = malloc(n * sizeof(float));
  t.yb = malloc(c->B * sizeof(int));
  t.ytrain = malloc(ds->n * sizeof(int));
  t.yeval = malloc(neval * sizeof(int));
  t.rows = malloc(c->B * sizeof(size_t));
  res->per_epoch = calloc((size_t)c->epochs, sizeof *res->per_epoch);
  if (!t.q || !t.hf || !t.grad || !t.probs || !t.all_probs || !t.sum_q || !t.sum_f || !t.yb || !t.yeval || !t.rows ||
      !t.ytrain || !res->per_epoch) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  res->epochs = c->epochs;
  res->n_train = ntr;
  res->n_test = nte;
  res->R = R;
  res->R_test = Rte;
  res->n_eval_rows = neval;
  res->nclasses = ds->nclasses;
  for (size_t i = 0; i < neval; i++) t.yeval[i] = ds->y[t.data.test[i]];
  memcpy(t.ytrain, ds->y, ds->n * sizeof(int));
  if (c->label_eps > 0) {
    /* label DP: one randomized response per training row, before training; the test labels stay
       true (they only score the model) */
    if (bbvfl_rr_labels_keyed(t.ytrain, t.data.train, ntr, ds->nclasses, c->label_eps, c->seeded_noise, c->seed,
                              err) != 0)
      goto out;
  }

  double agg_total = 0;
  for (int e = 0; e < c->epochs; e++) {
    double te0 = bbvfl_now();
    for (int m = 0; m < c->M; m++) bbvfl_party_epoch(&t.parties[m], e);
    bbvfl_vhead_epoch(&t.head, e);
    double loss_sum = 0;
    for (size_t k = 0; k < R; k++) {
      uint64_t round = (uint64_t)e * R + k;
      const size_t *pos = bbvfl_schedule_batch(&t.sched, (uint64_t)e, k);
      for (size_t i = 0; i < c->B; i++) {
        t.rows[i] = t.data.train[pos[i]];
        t.yb[i] = t.ytrain[t.rows[i]];
      }
      if (round_forward(&t, c, round, t.rows, err) != 0) goto fail_round;
      int pbm = c->mech.kind == BBVFL_MECH_PBM;
      double loss;
      if (bbvfl_vhead_train(&t.head, pbm ? t.sum_q : NULL, pbm ? NULL : t.sum_f, t.yb, c->B, &loss, t.grad, NULL,
                            err) != 0)
        goto fail_round;
      loss_sum += loss;
      if (bbvfl_agg_post_gradient(&t.agg, round, t.grad, n, NULL, 0, err) != 0) goto fail_round;
      for (int m = 0; m < c->M; m++) {
        if (bbvfl_agg_read_gradient(&t.agg, round, t.grad, n, err) != 0 ||
            bbvfl_party_backward(&t.parties[m], t.grad, err) != 0)
          goto fail_round;
      }
      if (c->on_round) c->on_round(c->ctx, e + 1, k + 1, R + Rte);
      continue;
    fail_round:
      bbvfl_wrap(err, "epoch %d, training round %zu", e + 1, k);
      goto out;
    }
    /* evaluation rounds */
    for (size_t k = 0; k < Rte; k++) {
      uint64_t round = BBVFL_EVAL_ROUND_BASE + (uint64_t)e * Rte + k;
      int pbm = c->mech.kind == BBVFL_MECH_PBM;
      if (round_forward(&t, c, round, t.data.test + k * c->B, err) != 0 ||
          bbvfl_vhead_eval(&t.head, pbm ? t.sum_q : NULL, pbm ? NULL : t.sum_f, c->B,
                           t.all_probs + k * c->B * (size_t)K, err) != 0) {
        bbvfl_wrap(err, "epoch %d, evaluation round %zu", e + 1, k);
        goto out;
      }
      if (c->on_round) c->on_round(c->ctx, e + 1, R + k + 1, R + Rte);
    }
    bbvfl_epoch_metrics *em = &res->per_epoch[e];
    em->epoch = e + 1;
    em->train_loss = loss_sum / (double)R;
    em->test_loss = bbvfl_loss_from_probs(t.all_probs, t.yeval, neval, ds->nclasses);
    bbvfl_err merr = {0};
    if (K == 1) {
      if (bbvfl_auroc(t.all_probs, t.yeval, neval, &em->auroc, &merr) != 0) em->auroc = 0.5;
      em->accuracy = bbvfl_accuracy_bin(t.all_probs, t.yeval, neval, 0.5);
      em->f1 = bbvfl_f1_bin(t.all_probs, t.yeval, neval, 0.5);
    } else {
      if (bbvfl_auroc_multi(t.all_probs, t.yeval, neval, K, &em->auroc, &merr) != 0) em->auroc = 0.5;
      em->accuracy = bbvfl_accuracy_multi(t.all_probs, t.yeval, neval, K);
      em->f1 = bbvfl_f1_macro(t.all_probs, t.yeval, neval, K);
    }
    bbvfl_agg_inproc_stats st;
    bbvfl_agg_inproc_stats_get(&t.agg, &st, 1);
    em->agg_train_s = st.train_sum_s;
    em->agg_eval_s = st.eval_sum_s;
    agg_total += st.train_sum_s;
    em->wall_s = bbvfl_now() - te0;
    if (c->on_epoch) c->on_epoch(c->ctx, em);
  }
  res->agg_train_s_per_epoch = agg_total / c->epochs;
  res->wall_s = bbvfl_now() - t_start;
  rc = 0;
out:
  trainer_free(&t);
  if (rc != 0) bbvfl_offchain_result_free(res);
  return rc;
}
