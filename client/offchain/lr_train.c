#include "offchain/lr_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "dp/labeldp.h"
#include "dp/mech.h"
#include "dp/rng.h"
#include "ml/lr.h"
#include "ml/head.h"
#include "ml/optim.h"
#include "ml/sqn.h"
#include "core/aggregator.h"
#include "core/lr_client.h"
#include "core/plan.h"
#include "core/rounds.h"
#include "core/schedule.h"
#include "core/setup.h"

double bbvfl_lr_sqn_default_lr(int loss, int M) {
  double blocks = (M > 0 ? M : 1) + 1.0;
  return (loss == BBVFL_LOSS_TAYLOR ? 1.0 : 2.0) / blocks;
}

typedef struct {
  bbvfl_lr_client cl; /* columns, weights, noise (core/lr_client.h) */
  float *u;      /* the pending window's partial logits before the clip (nrows x K) */
  float *scale;  /* Gaussian: the rows' clip scales */
  float *v;      /* the submission (floats) */
  uint8_t *q;
} lrparty;

typedef struct {
  const bbvfl_offchain_cfg *c;
  int M, K, nclasses;
  bbvfl_lr_setup st; /* loss, mechanism (C = the logit clip under PBM), clip, L2 */
  int sqn;
  lrparty *p;
  int np;
  bbvfl_lr_block head;
  bbvfl_agg agg;
  bbvfl_schedule sched;
  int have_sched;
  bbvfl_vfl_data data;
  bbvfl_plan plan;
  size_t B, nmax;
  uint32_t *sum_q;
  float *sum, *z, *dz, *gring, *all_probs, *r;
  int *yb, *ytrain, *yeval;
  size_t *rows;           /* the last training window's rows */
  float *oz, *ot;         /* track_objective: n_train x K scratch */
  int *oy;                /* the training rows' labels (trained on) */
  size_t cap_obj;
  size_t last_nrows;
  double loss_sum, agg_total, te0;
  uint64_t train_done;    /* training rounds applied */
  uint64_t curv_t;        /* averages taken */
  bbvfl_offchain_result *res;
} lrt;

static void lrt_free(lrt *t) {
  for (int m = 0; m < t->np; m++) {
    lrparty *p = &t->p[m];
    bbvfl_lr_client_free(&p->cl);
    free(p->u);
    free(p->scale);
    free(p->v);
    free(p->q);
  }
  free(t->p);
  bbvfl_lr_block_free(&t->head);
  bbvfl_agg_destroy(&t->agg);
  if (t->have_sched) bbvfl_schedule_free(&t->sched);
  bbvfl_vfl_data_free(&t->data);
  free(t->sum_q);
  free(t->sum);
  free(t->z);
  free(t->dz);
  free(t->gring);
  free(t->all_probs);
  free(t->r);
  free(t->yb);
  free(t->ytrain);
  free(t->yeval);
  free(t->rows);
  free(t->oz);
  free(t->ot);
  free(t->oy);
}

/* The regularised training objective of the current weights: the mean loss over every training
   row plus (l2/2) sum_m |W_m|^2 (a measurement: it reads every client's columns and weights). */
static double objective(lrt *t) {
  size_t n = t->data.n_train, K = (size_t)t->K;
  memset(t->oz, 0, n * K * sizeof(float));
  double reg = 0;
  for (int m = 0; m < t->M; m++) {
    bbvfl_lr_client *cl = &t->p[m].cl;
    bbvfl_lr_partial(cl->x, cl->ncols, t->data.train, n, cl->bl.w, t->K, t->ot);
    for (size_t i = 0; i < n * K; i++) t->oz[i] += t->ot[i];
    for (size_t i = 0; i < cl->bl.n; i++) reg += (double)cl->bl.w[i] * cl->bl.w[i];
  }
  for (size_t i = 0; i < n * K; i++) t->oz[i] += t->head.w[i % K];
  return bbvfl_lr_loss(t->st.loss, t->oz, t->oy, n, t->K, NULL, NULL) + 0.5 * t->st.l2 * reg;
}

/* One more entry of the objective (when tracked). */
static int record(lrt *t, bbvfl_err *err) {
  if (!t->c->track_objective) return 0;
  bbvfl_offchain_result *r = t->res;
  if (r->n_objective == t->cap_obj) {
    size_t nc = t->cap_obj ? 2 * t->cap_obj : 64;
    double *o = realloc(r->objective, nc * sizeof *o);
    if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    r->objective = o;
    t->cap_obj = nc;
  }
  r->objective[r->n_objective++] = objective(t);
  return 0;
}

/* Client m releases vals (nrows x K, clipped in place when a clip is set) through the mechanism
   to round `round`; Gaussian clip scales into scale (nullable). */
static int release(lrt *t, int m, uint64_t round, float *vals, size_t nrows, float *scale, bbvfl_err *err) {
  lrparty *p = &t->p[m];
  size_t n = nrows * (size_t)t->K;
  bbvfl_lr_client_release(&p->cl, vals, nrows, scale, p->q);
  if (t->st.mech.kind == BBVFL_MECH_PBM) return bbvfl_agg_submit_q(&t->agg, round, m, p->q, n, err);
  return bbvfl_agg_submit_f(&t->agg, round, m, vals, n, err);
}

/* The public sum of a round (PBM: its estimate) into t->sum. */
static int round_sum(lrt *t, uint64_t round, size_t n, bbvfl_err *err) {
  if (t->st.mech.kind == BBVFL_MECH_PBM) {
    if (bbvfl_agg_sum_q(&t->agg, round, t->sum_q, n, err) != 0) return -1;
    bbvfl_pbm_estimate(&t->st.mech, t->M, t->sum_q, n, t->sum);
    return 0;
  }
  return bbvfl_agg_sum_f(&t->agg, round, t->sum, n, err);
}

static void epoch_metrics(lrt *t, int e) {
  bbvfl_epoch_end ee = {.e = e, .loss_sum = t->loss_sum, .R = t->plan.R, .probs = t->all_probs, .y = t->yeval,
                        .n = t->data.n_test, .K = t->K, .nclasses = t->nclasses, .t0 = t->te0};
  bbvfl_offchain_epoch_end(t->c, &t->agg, &ee, &t->agg_total, t->res);
}

/* A round's forward: every client releases its partial logits of rows, the sum comes back. */
static int forward(lrt *t, uint64_t round, const size_t *rows, size_t nrows, int train, bbvfl_err *err) {
  size_t K = (size_t)t->K;
  for (int m = 0; m < t->M; m++) {
    lrparty *p = &t->p[m];
    bbvfl_lr_client_logits(&p->cl, rows, nrows, p->v);
    if (train) memcpy(p->u, p->v, nrows * K * sizeof(float));
    if (release(t, m, round, p->v, nrows, train ? p->scale : NULL, err) != 0) return -1;
  }
  return round_sum(t, round, nrows * K, err);
}

static int start_round(void *ctx, uint64_t seq, bbvfl_err *err) {
  lrt *t = ctx;
  const bbvfl_offchain_cfg *c = t->c;
  bbvfl_round_plan rp;
  if (bbvfl_window_plan(&t->plan, seq, &rp, err) != 0) return -1;
  size_t K = (size_t)t->K, B = t->B;
  if (rp.epoch_start) {
    t->te0 = bbvfl_now();
    t->loss_sum = 0;
    for (int m = 0; m < t->M; m++) bbvfl_optim_epoch(&t->p[m].cl.bl.opt, rp.epoch);
    bbvfl_optim_epoch(&t->head.opt, rp.epoch);
  }
  if (!rp.train) {
    const size_t *rows = t->data.test + rp.first;
    if (forward(t, rp.round, rows, rp.nrows, 0, err) != 0) return -1;
    bbvfl_lr_head_rows(&t->st, &t->head, t->sum, t->yeval + rp.first, rp.nrows, 1.0, t->z, NULL,
                       t->all_probs + rp.first * K);
  } else {
    const size_t *pos = bbvfl_schedule_batch(&t->sched, (uint64_t)rp.epoch, rp.first_batch);
    for (size_t i = 0; i < rp.nrows; i++) {
      t->rows[i] = t->data.train[pos[i]];
      t->yb[i] = t->ytrain[t->rows[i]];
    }
    t->last_nrows = rp.nrows;
    if (forward(t, rp.round, t->rows, rp.nrows, 1, err) != 0) return -1;
    /* the head: per minibatch, z with its current biases, the loss, dLoss/dz, one bias step */
    for (size_t b = 0; b < rp.nbatches; b++) {
      size_t off = b * B * K;
      double inv = 1.0 / (double)B;
      t->loss_sum += bbvfl_lr_head_rows(&t->st, &t->head, t->sum + off, t->yb + b * B, B, inv, t->z + off, t->dz + off,
                                        NULL) * inv;
      bbvfl_lr_head_step(&t->head, t->K, t->dz + off, B);
    }
    size_t n = rp.nrows * K;
    if (bbvfl_agg_post_gradient(&t->agg, rp.round, t->dz, n, NULL, 0, err) != 0) return -1;
    if (bbvfl_agg_read_gradient(&t->agg, rp.round, t->gring, n, err) != 0) return -1;
  }
  size_t per = t->plan.T + t->plan.V;
  if (c->on_round) c->on_round(c->ctx, rp.epoch + 1, (size_t)(seq % per) + 1, per);
  if (rp.epoch_end) epoch_metrics(t, rp.epoch);
  return 0;
}

/* The curvature round after average number t->curv_t (>= 2), every block's s set: on the first
   ns rows of the last training window each client releases X_m s_m, the head forms
   r = d2L/dz2 (sum + s_b) / ns and posts it, every block takes its pair (s, its part of H s). */
static int curvature_round(lrt *t, bbvfl_err *err) {
  size_t K = (size_t)t->K, ns = t->last_nrows;
  if (t->c->sqn_sample > 0 && t->c->sqn_sample < ns) ns = t->c->sqn_sample;
  uint64_t round = BBVFL_CURV_ROUND_BASE + t->curv_t;
  for (int m = 0; m < t->M; m++) {
    lrparty *p = &t->p[m];
    bbvfl_lr_client_curv_logits(&p->cl, t->rows, ns, p->v);
    if (release(t, m, round, p->v, ns, NULL, err) != 0) return -1;
  }
  size_t n = ns * K;
  if (round_sum(t, round, n, err) != 0) return -1;
  bbvfl_lr_head_curv_r(&t->st, &t->head, t->sum, t->z, ns, ns, t->r);
  if (bbvfl_agg_post_gradient(&t->agg, round, t->r, n, NULL, 0, err) != 0) return -1;
  if (bbvfl_agg_read_gradient(&t->agg, round, t->gring, n, err) != 0) return -1;
  for (int m = 0; m < t->M; m++) bbvfl_lr_client_curv_pair(&t->p[m].cl, t->rows, ns, t->gring);
  bbvfl_lr_head_curv_pair(&t->head, t->K, t->r, ns);
  if (t->st.pairs == BBVFL_SQN_PAIRS_GLOBAL) { /* one pair of the concatenation */
    if (t->M + 1 > 64) return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-pairs global runs with at most 63 clients");
    bbvfl_sqn *q[64];
    const float *s[64], *y[64];
    for (int m = 0; m < t->M; m++) {
      q[m] = &t->p[m].cl.bl.sqn;
      s[m] = t->p[m].cl.bl.s;
      y[m] = t->p[m].cl.bl.y;
    }
    q[t->M] = &t->head.sqn;
    s[t->M] = t->head.s;
    y[t->M] = t->head.y;
    bbvfl_sqn_push_multi(q, t->M + 1, s, y);
  }
  t->res->curv_rounds++;
  return record(t, err);
}

/* sqn global, one minibatch per round: every block's gradient, then (once there are pairs) the
   round of dot products, the direction H g over all blocks and every block's step. */
static int global_step(lrt *t, const size_t *rows, size_t B, bbvfl_err *err) {
  bbvfl_sqn *q[64];
  const float *g[64];
  float *d[64];
  for (int m = 0; m < t->M; m++) {
    lrparty *p = &t->p[m];
    bbvfl_lr_client_grad(&p->cl, rows, B, p->u, p->scale, t->gring);
    q[m] = &p->cl.bl.sqn;
    g[m] = p->cl.bl.g;
    d[m] = p->cl.bl.d;
  }
  q[t->M] = &t->head.sqn;
  g[t->M] = t->head.g;
  d[t->M] = t->head.d;
  if (t->head.sqn.count > 0) { /* each client's S_m^T g_m and Y_m^T g_m summed: one more round */
    t->res->scalar_rounds++;
    if (record(t, err) != 0) return -1;
  }
  bbvfl_sqn_apply_multi(q, t->M + 1, g, d);
  for (int m = 0; m < t->M; m++) bbvfl_lr_block_step_d(&t->p[m].cl.bl);
  bbvfl_lr_block_step_d(&t->head);
  return 0;
}

/* A training round's gradients applied by every client, batch by batch (the head stepped when it
   posted them); with sqn, the averaging and, when due, the curvature round. */
static int finish_round(void *ctx, uint64_t seq, bbvfl_err *err) {
  lrt *t = ctx;
  bbvfl_round_plan rp;
  if (bbvfl_window_plan(&t->plan, seq, &rp, err) != 0) return -1;
  if (!rp.train) return 0;
  size_t K = (size_t)t->K, B = t->B;
  if (t->sqn && t->st.pairs == BBVFL_SQN_PAIRS_GLOBAL) {
    if (global_step(t, t->rows, B, err) != 0) return -1;
  } else {
    for (int m = 0; m < t->M; m++) {
      lrparty *p = &t->p[m];
      for (size_t b = 0; b < rp.nbatches; b++)
        bbvfl_lr_client_step(&p->cl, t->rows + b * B, B, p->u + b * B * K, p->scale + b * B, t->gring + b * B * K);
    }
  }
  if (record(t, err) != 0) return -1;
  if (!t->sqn) return 0;
  t->train_done++;
  int L = t->c->sqn_interval;
  for (int m = 0; m < t->M; m++) bbvfl_lr_block_tick(&t->p[m].cl.bl, t->train_done, L);
  int due = bbvfl_lr_block_tick(&t->head, t->train_done, L); /* every block alike */
  if (t->train_done % (uint64_t)L == 0) t->curv_t++;
  if (!due) return 0;
  if (t->st.pairs == BBVFL_SQN_PAIRS_LOCAL) { /* each block's own H_bb s_b: no round */
    size_t ns = t->last_nrows;
    if (t->c->sqn_sample > 0 && t->c->sqn_sample < ns) ns = t->c->sqn_sample;
    for (int m = 0; m < t->M; m++) bbvfl_lr_client_local_pair(&t->p[m].cl, t->rows, ns, t->gring, (double)B);
    bbvfl_lr_head_local_pair(&t->st, &t->head, t->gring, (double)B, ns);
    return 0;
  }
  if (curvature_round(t, err) != 0)
    return bbvfl_wrap(err, "curvature round %llu", (unsigned long long)t->curv_t);
  return 0;
}

int bbvfl_lr_train(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *c, bbvfl_offchain_result *res, bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  lrt t;
  memset(&t, 0, sizeof t);
  t.c = c;
  t.res = res;
  t.M = c->M;
  int rc = -1;
  double t_start = bbvfl_now();
  if (c->M < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--clients must be >= 1, got %d", c->M);
  if (c->epochs < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--epochs must be >= 1, got %d", c->epochs);
  if (c->staleness != 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "--model lr runs with --staleness 0 (each gradient applied before the next forward), got %d",
                      c->staleness);
  if (bbvfl_lr_setup_init(&t.st, c, ds->nclasses, err) != 0) return -1;
  t.sqn = c->opt.kind == BBVFL_OPT_SQN;
  t.nclasses = ds->nclasses;
  t.K = ds->nclasses == 2 ? 1 : ds->nclasses;
  size_t K = (size_t)t.K;

  if (bbvfl_vfl_data_prepare(ds, c->split_seed ? c->split_seed : c->seed, c->test_frac, c->M, c->partition, &t.data,
                             err) != 0)
    goto out;
  size_t ntr = t.data.n_train, nte = t.data.n_test;
  t.B = c->B ? c->B : ntr;
  if (ntr < t.B || nte < 1) {
    bbvfl_fail(err, BBVFL_E_ARG, "%zu training / %zu test rows: training needs at least one batch of %zu, testing one row",
               ntr, nte, t.B);
    goto out;
  }
  if (bbvfl_plan_init(&t.plan, ntr, nte, t.B, c->window ? c->window : 1, c->eval_rows_per_round, 0, c->epochs, err) != 0)
    goto out;
  size_t wrows = t.plan.K * t.B, maxrows = wrows > t.plan.E ? wrows : t.plan.E;
  t.nmax = maxrows * K;
  t.p = calloc((size_t)c->M, sizeof *t.p);
  res->cols_per_client = calloc((size_t)c->M, sizeof *res->cols_per_client);
  if (!t.p || !res->cols_per_client) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  for (int m = 0; m < c->M; m++) {
    lrparty *p = &t.p[m];
    t.np = m + 1;
    float *x = NULL;
    size_t ncols = 0;
    if (bbvfl_vfl_data_client_cols(&t.data, m, &x, &ncols, err) != 0) goto out;
    res->cols_per_client[m] = ncols;
    if (bbvfl_lr_client_init(&p->cl, &t.st, c, x, ncols, m, t.B, err) != 0) goto out;
    p->u = malloc(t.nmax * sizeof(float));
    p->v = malloc(t.nmax * sizeof(float));
    p->scale = malloc(maxrows * sizeof(float));
    p->q = malloc(t.nmax);
    if (!p->u || !p->v || !p->scale || !p->q) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
  }
  if (bbvfl_lr_block_init(&t.head, K, c, err) != 0) goto out;
  if (t.sqn && t.st.pairs == BBVFL_SQN_PAIRS_GLOBAL) {
    if (t.plan.K > 1 || c->M + 1 > 64) {
      bbvfl_fail(err, BBVFL_E_ARG, "--sqn-pairs global runs with one minibatch per round (--window 1) and at most 63 clients");
      goto out;
    }
    t.head.defer = 1; /* the biases step with the clients, along their part of H g */
  }
  if (bbvfl_agg_inproc_new(&t.agg, c->M, t.nmax, t.st.mech.kind == BBVFL_MECH_PBM ? t.st.mech.b : 255, err) != 0) goto out;
  t.sum_q = malloc(t.nmax * sizeof(uint32_t));
  t.sum = malloc(t.nmax * sizeof(float));
  t.z = malloc(t.nmax * sizeof(float));
  t.dz = malloc(t.nmax * sizeof(float));
  t.r = malloc(t.nmax * sizeof(float));
  t.gring = malloc(t.nmax * sizeof(float));
  t.all_probs = malloc(nte * K * sizeof(float));
  t.yb = malloc(wrows * sizeof(int));
  t.ytrain = malloc(ds->n * sizeof(int));
  t.yeval = malloc(nte * sizeof(int));
  t.rows = malloc(wrows * sizeof(size_t));
  res->test_rows = malloc(nte * sizeof(size_t));
  if (!res->test_rows || !t.sum_q || !t.sum || !t.z || !t.dz || !t.r || !t.gring || !t.all_probs || !t.yb || !t.ytrain || !t.yeval ||
      !t.rows) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  memcpy(res->test_rows, t.data.test, nte * sizeof(size_t));
  /* the labels (label DP applied), the result's layout, the session seed S and the schedule */
  if (bbvfl_offchain_start(ds, &t.data, &t.plan, c, t.B, t.ytrain, t.yeval, &t.sched, res, err) != 0) goto out;
  t.have_sched = 1;
  if (c->track_objective) {
    t.oz = malloc(ntr * K * sizeof(float));
    t.ot = malloc(ntr * K * sizeof(float));
    t.oy = malloc(ntr * sizeof(int));
    if (!t.oz || !t.ot || !t.oy) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
    for (size_t i = 0; i < ntr; i++) t.oy[i] = t.ytrain[t.data.train[i]];
    if (record(&t, err) != 0) goto out;
  }

  /* the round loop every participant runs (core/rounds.h) */
  bbvfl_rounds_sched sched = {.T = (uint32_t)t.plan.T, .V = (uint32_t)t.plan.V, .staleness = 0, .one_open = 0,
                              .slots = 0, .epochs = (uint32_t)t.plan.epochs};
  bbvfl_rounds_ops ops = {.finish = finish_round, .checkpoint = NULL, .start = start_round};
  if (bbvfl_rounds_run(&sched, 0, 0, bbvfl_plan_rounds(&t.plan), &ops, &t, err) != 0) goto out;
  res->agg_train_s_per_epoch = t.agg_total / c->epochs;
  res->wall_s = bbvfl_now() - t_start;
  rc = 0;
out:
  lrt_free(&t);
  if (rc != 0) bbvfl_offchain_result_free(res);
  return rc;
}
