#include "offchain/offchain.h"

#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "dp/labeldp.h"
#include "ml/metrics.h"
#include "core/aggregator.h"
#include "core/head.h"
#include "offchain/lr_train.h"
#include "core/rounds.h"
#include "core/schedule.h"
#include "core/setup.h"

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
  bbvfl_plan plan;
  int K;          /* head outputs */
  uint8_t *q;
  float *hf, *grad, *all_probs;
  uint32_t *sum_q;
  float *sum_f;
  int *yb, *yeval;
  int *ytrain;    /* per table row: the label trained on (randomized response with label_eps) */
  size_t *rows;
  float *gring;   /* the posted gradients not yet applied: s+1 slots of nmax floats, slot = round % (s+1) */
  size_t nmax;    /* the longest round: max(K*B, E) * P values */
  double loss_sum, agg_total, te0;
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
  free(t->all_probs);
  free(t->sum_q);
  free(t->sum_f);
  free(t->yb);
  free(t->ytrain);
  free(t->yeval);
  free(t->rows);
  free(t->gring);
}

static float *ring_slot(trainer *t, uint64_t round) {
  return t->gring + (size_t)(round % (uint64_t)(t->plan.staleness + 1)) * t->nmax;
}

/* Every party submits its forward of rows[0..nrows) (training: kept on its pending FIFO), the sum
   comes back. */
static int round_forward(trainer *t, const bbvfl_offchain_cfg *c, const bbvfl_round_plan *rp, const size_t *rows,
                         bbvfl_err *err) {
  size_t n = rp->nrows * (size_t)c->P;
  int pbm = c->mech.kind == BBVFL_MECH_PBM;
  for (int m = 0; m < t->M; m++) {
    int rc = rp->train ? bbvfl_party_forward_train(&t->parties[m], rows, rp->nrows, t->q, t->hf, err)
                       : bbvfl_party_forward_eval(&t->parties[m], rows, rp->nrows, t->q, t->hf, err);
    if (rc != 0) return -1;
    if (c->tap && c->tap->release)
      c->tap->release(c->tap->ctx, m, rp->train, rp->epoch, rows, rp->nrows, pbm ? NULL : t->hf, pbm ? t->q : NULL);
    rc = pbm ? bbvfl_agg_submit_q(&t->agg, rp->round, m, t->q, n, err)
             : bbvfl_agg_submit_f(&t->agg, rp->round, m, t->hf, n, err);
    if (rc != 0) return -1;
  }
  return pbm ? bbvfl_agg_sum_q(&t->agg, rp->round, t->sum_q, n, err)
             : bbvfl_agg_sum_f(&t->agg, rp->round, t->sum_f, n, err);
}

/* The epoch's test metrics from the scores of all n_test rows, and its timing. */
static void epoch_metrics(trainer *t, const bbvfl_offchain_cfg *c, int nclasses, int e, bbvfl_offchain_result *res) {
  bbvfl_epoch_end ee = {.e = e, .loss_sum = t->loss_sum, .R = t->plan.R, .probs = t->all_probs, .y = t->yeval,
                        .n = t->data.n_test, .K = t->K, .nclasses = nclasses, .t0 = t->te0};
  bbvfl_offchain_epoch_end(c, &t->agg, &ee, &t->agg_total, res);
}

/* One round of the plan, as the M clients and the active client would run it. */
static int run_round(trainer *t, const bbvfl_offchain_cfg *c, const bbvfl_round_plan *rp, bbvfl_err *err) {
  int pbm = c->mech.kind == BBVFL_MECH_PBM;
  size_t P = (size_t)c->P, B = c->B;
  if (rp->epoch_start) {
    t->te0 = bbvfl_now();
    t->loss_sum = 0;
    for (int m = 0; m < c->M; m++) bbvfl_party_epoch(&t->parties[m], rp->epoch);
    bbvfl_vhead_epoch(&t->head, rp->epoch);
  }
  /* 1. (the pending gradients the staleness rule names were applied by finish_round: the round
     loop of core/rounds.h finished those rounds first) 2. forward, submit, sum */
  const size_t *rows;
  if (rp->train) {
    const size_t *pos = bbvfl_schedule_batch(&t->sched, (uint64_t)rp->epoch, rp->first_batch);
    for (size_t i = 0; i < rp->nrows; i++) {
      t->rows[i] = t->data.train[pos[i]];
      t->yb[i] = t->ytrain[t->rows[i]];
    }
    rows = t->rows;
  } else {
    rows = t->data.test + rp->first;
  }
  if (round_forward(t, c, rp, rows, err) != 0) return -1;
  if (!rp->train) {
    /* 3e. the scores of the round's test rows */
    if (bbvfl_vhead_eval(&t->head, pbm ? t->sum_q : NULL, pbm ? NULL : t->sum_f, rp->nrows,
                         t->all_probs + rp->first * (size_t)t->K, err) != 0)
      return -1;
    return 0;
  }
  /* 3t. the head steps through the window's minibatches in order and posts their gradients */
  for (size_t k = 0; k < rp->nbatches; k++) {
    size_t off = k * B * P;
    double loss;
    if (bbvfl_vhead_train(&t->head, pbm ? t->sum_q + off : NULL, pbm ? NULL : t->sum_f + off, t->yb + k * B, B,
                          &loss, t->grad + off, NULL, err) != 0)
      return bbvfl_wrap(err, "minibatch %zu", rp->first_batch + k);
    t->loss_sum += loss;
  }
  size_t n = rp->nrows * P;
  if (bbvfl_agg_post_gradient(&t->agg, rp->round, t->grad, n, NULL, 0, err) != 0) return -1;
  if (c->tap && c->tap->gradient) {
    size_t plen = bbvfl_vhead_nparams(&t->head) * 4;
    uint8_t *pbe = malloc(plen);
    if (!pbe) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    bbvfl_vhead_params_be(&t->head, pbe);
    c->tap->gradient(c->tap->ctx, rp->epoch, t->rows, rp->nrows, t->grad, pbe, plen);
    free(pbe);
  }
  /* 4. the gradient becomes pending for every party (each applies it when the plan says) */
  return bbvfl_agg_read_gradient(&t->agg, rp->round, ring_slot(t, rp->round), n, err);
}

typedef struct {
  trainer *t;
  const bbvfl_offchain_cfg *c;
  int nclasses;
  bbvfl_offchain_result *res;
} loop_ctx;

/* Round seq's results for every party: a training window's gradients applied (the head stepped
   and posted them when the round started: its sum was there at once). */
static int finish_round(void *ctx, uint64_t seq, bbvfl_err *err) {
  loop_ctx *x = ctx;
  trainer *t = x->t;
  bbvfl_round_plan rp;
  if (bbvfl_window_plan(&t->plan, seq, &rp, err) != 0) return -1;
  if (!rp.train) return 0;
  for (int m = 0; m < x->c->M; m++)
    if (bbvfl_party_apply(&t->parties[m], ring_slot(t, rp.round), rp.nbatches, x->c->B, err) != 0)
      return bbvfl_wrap(err, "applying the gradient of round %llu", (unsigned long long)rp.round);
  return 0;
}

static int start_round(void *ctx, uint64_t seq, bbvfl_err *err) {
  loop_ctx *x = ctx;
  trainer *t = x->t;
  bbvfl_round_plan rp;
  if (bbvfl_window_plan(&t->plan, seq, &rp, err) != 0) return -1;
  if (run_round(t, x->c, &rp, err) != 0)
    return bbvfl_wrap(err, "epoch %d, %s round %zu", rp.epoch + 1, rp.train ? "training" : "evaluation", rp.index);
  size_t per = t->plan.T + t->plan.V;
  if (x->c->on_round) x->c->on_round(x->c->ctx, rp.epoch + 1, (size_t)(seq % per) + 1, per);
  if (rp.epoch_end) epoch_metrics(t, x->c, x->nclasses, rp.epoch, x->res);
  return 0;
}

/* The attacks' tap: the final model's scores of rows (training or test), chunk by chunk through
   every party's evaluation forward and the head (the sum taken here, outside the aggregator). */
static int tap_scores(trainer *t, const bbvfl_offchain_cfg *c, int train, const size_t *rows, size_t n, bbvfl_err *err) {
  int pbm = c->mech.kind == BBVFL_MECH_PBM;
  size_t P = (size_t)c->P, chunk = t->nmax / P;
  float *probs = malloc(n * (size_t)t->K * sizeof *probs);
  if (!probs) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i0 = 0; i0 < n; i0 += chunk) {
    size_t nb = n - i0 < chunk ? n - i0 : chunk, nv = nb * P;
    memset(t->sum_q, 0, nv * sizeof *t->sum_q);
    memset(t->sum_f, 0, nv * sizeof *t->sum_f);
    for (int m = 0; m < t->M; m++) {
      if (bbvfl_party_forward_eval(&t->parties[m], rows + i0, nb, t->q, t->hf, err) != 0) goto fail;
      for (size_t j = 0; j < nv; j++) {
        if (pbm)
          t->sum_q[j] += t->q[j];
        else
          t->sum_f[j] += t->hf[j];
      }
    }
    if (bbvfl_vhead_eval(&t->head, pbm ? t->sum_q : NULL, pbm ? NULL : t->sum_f, nb, probs + i0 * (size_t)t->K, err) != 0)
      goto fail;
  }
  c->tap->scores(c->tap->ctx, train, rows, n, probs, t->K);
  free(probs);
  return 0;
fail:
  free(probs);
  return -1;
}

int bbvfl_offchain_train(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *cin, bbvfl_offchain_result *res,
                         bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  if (cin->model == BBVFL_MODEL_LR) return bbvfl_lr_train(ds, cin, res, err);
  if (cin->model != BBVFL_MODEL_MLP) return bbvfl_fail(err, BBVFL_E_ARG, "unknown model %d", cin->model);
  if (cin->opt.kind == BBVFL_OPT_SQN)
    return bbvfl_fail(err, BBVFL_E_ARG, "--optimizer sqn needs --model lr (the MLP trains with sgd or adam)");
  bbvfl_offchain_cfg cfull = *cin; /* --batch 0: every training row in one minibatch */
  const bbvfl_offchain_cfg *c = &cfull;
  trainer t;
  memset(&t, 0, sizeof t);
  t.M = c->M;
  int rc = -1;
  double t_start = bbvfl_now();
  if (c->M < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--clients must be >= 1, got %d", c->M);
  if (c->epochs < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--epochs must be >= 1, got %d", c->epochs);
  if (c->P < 1 || c->P > 4096) return bbvfl_fail(err, BBVFL_E_ARG, "--P must be in 1..4096, got %d", c->P);
  if (c->staleness < 0 || c->staleness > BBVFL_MAX_STALENESS)
    return bbvfl_fail(err, BBVFL_E_ARG, "--staleness must be in 0..%d, got %d", BBVFL_MAX_STALENESS, c->staleness);
  if (bbvfl_mech_check(&c->mech, err) != 0) return -1;
  if (c->mech.kind == BBVFL_MECH_PBM && !bbvfl_pbm_lanes_fit(c->M, c->mech.b))
    return bbvfl_fail(err, BBVFL_E_ARG, "M*b = %ld exceeds 65535, the widest lane of the aggregator", (long)c->M * c->mech.b);

  /* split, standardisation, partition: identical in every client (core/setup.h) */
  if (bbvfl_vfl_data_prepare_dp(ds, c->split_seed ? c->split_seed : c->seed, c->test_frac, c->M, c->partition, &c->rowdp, c->seeded_noise, c->noise_key, &t.data,
                                err) != 0)
    goto out;
  size_t ntr = t.data.n_train, nte = t.data.n_test;
  if (cfull.B == 0) cfull.B = ntr;
  if (ntr < c->B || nte < 1) {
    bbvfl_fail(err, BBVFL_E_ARG, "%zu training / %zu test rows: training needs at least one batch of %zu, testing one row",
               ntr, nte, c->B);
    goto out;
  }
  if (bbvfl_plan_init(&t.plan, ntr, nte, c->B, c->window ? c->window : 1, c->eval_rows_per_round, c->staleness, c->epochs, err) != 0)
    goto out;
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
    if (c->tap && c->tap->features) c->tap->features(c->tap->ctx, m, cols, ds->n, nc);
    bbvfl_party_cfg pc = {.index = m, .P = c->P, .nhidden = c->nhidden, .mech = c->mech, .opt = c->opt,
                          .seed = c->seed, .seeded_noise = c->seeded_noise, .noise_key = c->noise_key, .rowdp = c->rowdp,
                          .max_pending = (size_t)c->staleness + 1, .train_rows = t.data.train,
                          .n_train = t.data.n_train, .afe = c->afe};
    pc.afe.nclasses = ds->nclasses;
    pc.afe.B = c->B;
    memcpy(pc.hidden, c->hidden, sizeof pc.hidden);
    int prc = bbvfl_party_init(&t.parties[m], &pc, cols, ds->n, nc, err);
    free(cols);
    if (prc != 0) goto out;
    t.nparties = m + 1;
  }
  if (bbvfl_vhead_init(&t.head, c->P, ds->nclasses, c->M, &c->mech, &c->opt, c->seed, err) != 0) goto out;
  t.have_head = 1;
  size_t wrows = t.plan.K * c->B, maxrows = wrows > t.plan.E ? wrows : t.plan.E;
  size_t n = maxrows * (size_t)c->P;
  t.nmax = n;
  if (bbvfl_agg_inproc_new(&t.agg, c->M, n, c->mech.kind == BBVFL_MECH_PBM ? c->mech.b : 255, err) != 0) goto out;

  t.K = ds->nclasses == 2 ? 1 : ds->nclasses;
  t.q = malloc(n);
  t.hf = malloc(n * sizeof(float));
  t.grad = malloc(wrows * (size_t)c->P * sizeof(float));
  t.all_probs = malloc(nte * (size_t)t.K * sizeof(float));
  t.sum_q = malloc(n * sizeof(uint32_t));
  t.sum_f = malloc(n * sizeof(float));
  t.yb = malloc(wrows * sizeof(int));
  t.ytrain = malloc(ds->n * sizeof(int));
  t.yeval = malloc(nte * sizeof(int));
  t.rows = malloc(wrows * sizeof(size_t));
  t.gring = malloc(((size_t)c->staleness + 1) * n * sizeof(float));
  if (!t.q || !t.hf || !t.grad || !t.all_probs || !t.sum_q || !t.sum_f || !t.yb || !t.yeval || !t.rows ||
      !t.ytrain || !t.gring) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  /* the labels (label DP applied), the result's layout, the session seed S and the schedule */
  if (bbvfl_offchain_start(ds, &t.data, &t.plan, c, c->B, t.ytrain, t.yeval, &t.sched, res, err) != 0) goto out;
  t.have_sched = 1;

  /* the round loop every participant runs (core/rounds.h, the on-chain client's too): it finishes
     the rounds the staleness rule names before each round starts */
  loop_ctx lx = {.t = &t, .c = c, .nclasses = ds->nclasses, .res = res};
  bbvfl_rounds_sched sched = {.T = (uint32_t)t.plan.T, .V = (uint32_t)t.plan.V,
                              .staleness = (unsigned)t.plan.staleness, .one_open = 0, .slots = 0,
                              .epochs = (uint32_t)t.plan.epochs};
  bbvfl_rounds_ops ops = {.finish = finish_round, .checkpoint = NULL, .start = start_round};
  if (bbvfl_rounds_run(&sched, 0, 0, bbvfl_plan_rounds(&t.plan), &ops, &lx, err) != 0) goto out;
  if (c->tap && c->tap->scores &&
      (tap_scores(&t, c, 1, t.data.train, t.data.n_train, err) != 0 ||
       tap_scores(&t, c, 0, t.data.test, t.data.n_test, err) != 0))
    goto out;
  res->agg_train_s_per_epoch = t.agg_total / c->epochs;
  res->wall_s = bbvfl_now() - t_start;
  rc = 0;
out:
  trainer_free(&t);
  if (rc != 0) bbvfl_offchain_result_free(res);
  return rc;
}
