#include "onchain/onchain_int.h"

#include "bbvfl_errors.h" /* generated from abi/: BBVFL_SEL_* */

#include "eth/abi.h"
#include "binding/fit.h"

/* Test hook (cfg->dump_q_dir): the active client's labels of training round r as y-<round>.bin,
   the window's true labels then the labels trained on (they differ under label DP), int32
   little-endian. Plaintext labels: never in production. */
static int dump_y(cl *c, const bbvfl_oc_slot *sl, bbvfl_err *err) {
  char p[1300];
  size_t m = sl->L.rows;
  snprintf(p, sizeof p, "%s/y-%llu.bin", c->cfg->dump_q_dir, (unsigned long long)sl->r);
  uint8_t *b = malloc(8 * m);
  if (!b) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < 2 * m; i++) {
    uint32_t v = (uint32_t)(i < m ? c->cfg->ds->y[sl->rows[i]] : c->yb[i - m]);
    for (int k = 0; k < 4; k++) b[4 * i + (size_t)k] = (uint8_t)(v >> (8 * k));
  }
  int rc = bbvfl_write_file_atomic(p, b, 8 * m, 0600, err);
  free(b);
  return rc < 0 ? bbvfl_wrap(err, "test hook: writing y") : 0;
}

int bbvfl_oc_active_train(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->lr) {
    double loss = 0;
    size_t nb = 0;
    if (bbvfl_oc_lr_active_train(c, sl, &loss, &nb, err) < 0) return -1;
    c->act.loss_sum += loss;
    c->act.trained += nb;
    return 0;
  }
  size_t B = c->B, P = c->cp.cfg.dim, nb = sl->L.nb;
  for (size_t i = 0; i < sl->L.rows; i++) c->yb[i] = c->lab.ylab[sl->rows[i]]; /* the labels trained on */
  if (c->cfg->dump_q_dir && !c->lab.split && dump_y(c, sl, err) < 0) return -1;
  if (c->lab.split && !c->lab.own_all) {
    double loss = 0;
    if (bbvfl_oc_active_split_step(c, sl, &loss, err) < 0) return -1; /* labels split across clients */
    c->act.loss_sum += loss * (double)nb;
    c->act.trained += nb;
    return 0;
  }
  if (c->cfg->tamper) { /* test-only (bbvfl-tamper): NULL in release builds */
    struct bbvfl_onchain_tamper t = {.stage = BBVFL_TAMPER_TRAIN, .round = sl->r, .epoch = sl->L.epoch, .nb = nb,
                                     .B = B, .P = P, .y = c->yb, .sum = c->sum, .head = &c->head};
    if (c->cfg->tamper(c->cfg->tamper_ctx, &t, err) != 0) return bbvfl_wrap(err, "test tamper hook");
  }
  double t1 = bbvfl_now();
  for (size_t k = 0; k < nb; k++) {
    double loss = 0;
    if (bbvfl_vhead_train(&c->head, c->sum + k * B * P, NULL, c->yb + k * B, B, &loss, c->grad + k * B * P, NULL,
                          err) < 0)
      return bbvfl_wrap(err, "batch %zu of the window", k);
    c->act.loss_sum += loss;
    c->act.trained++;
  }
  c->res->learn_s += bbvfl_now() - t1;
  return 0;
}

int bbvfl_oc_active_eval(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->lr) return bbvfl_oc_lr_active_eval(c, sl, err);
  double t1 = bbvfl_now();
  int rc = bbvfl_vhead_eval(&c->head, c->sum, NULL, sl->L.rows, c->probs + (size_t)sl->L.first * (size_t)c->K, err);
  c->res->learn_s += bbvfl_now() - t1;
  return rc;
}

/* Test metrics of the scores in probs over the rows with a label (y >= 0). */
static void bbvfl_oc_metrics_of(const cl *c, const float *probs, const int *y, size_t n, bbvfl_epoch_metrics *em) {
  em->test_loss = bbvfl_loss_from_probs(probs, y, n, c->cfg->ds->nclasses);
  bbvfl_err merr = {0};
  if (c->K == 1) {
    if (bbvfl_auroc(probs, y, n, &em->auroc, &merr) != 0) em->auroc = 0.5;
    em->accuracy = bbvfl_accuracy_bin(probs, y, n, 0.5);
    em->f1 = bbvfl_f1_bin(probs, y, n, 0.5);
  } else {
    if (bbvfl_auroc_multi(probs, y, n, c->K, &em->auroc, &merr) != 0) em->auroc = 0.5;
    em->accuracy = bbvfl_accuracy_multi(probs, y, n, c->K);
    em->f1 = bbvfl_f1_macro(probs, y, n, c->K);
  }
}

/* The epoch's metrics into per_epoch[e]. Labels split across clients: over the rows whose labels
   this client holds (training loss: its labelled training rows; test metrics: its labelled test
   rows; all zero when it holds none, labelled_test_rows says so). */
int bbvfl_oc_fill_metrics(cl *c, uint32_t e, bbvfl_err *err) {
  bbvfl_epoch_metrics *em = &c->res->per_epoch[e];
  memset(em, 0, sizeof *em);
  em->epoch = (int)e + 1;
  em->agg_train_s = c->act.agg_sum;
  c->res->agg_s[e] = c->act.agg_sum;
  if (!c->lab.split || c->lab.own_all) {
    /* an epoch this client took over mid-way: the mean over the rounds it trained */
    size_t nt = c->act.takeover_epoch == (int)e ? c->act.trained : c->lr ? bbvfl_oc_lr_batches(c) : c->cp.cfg.batches_per_epoch;
    em->train_loss = nt ? c->act.loss_sum / (double)nt : 0;
    bbvfl_oc_metrics_of(c, c->probs, c->yeval, c->neval, em);
    return 0;
  }
  em->train_loss = c->lab.lrows_n > 0 ? c->lab.lrows_loss / c->lab.lrows_n : 0;
  size_t m = c->res->labelled_test_rows, K = (size_t)c->K, j = 0;
  if (m == 0) return 0;
  float *p = malloc(m * K * sizeof *p);
  int *y = malloc(m * sizeof *y);
  if (!p || !y) {
    free(p);
    free(y);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < c->neval; i++) {
    if (c->yeval[i] < 0) continue;
    memcpy(p + j * K, c->probs + i * K, K * sizeof *p);
    y[j++] = c->yeval[i];
  }
  bbvfl_oc_metrics_of(c, p, y, m, em);
  free(p);
  free(y);
  return 0;
}

int bbvfl_oc_post_epoch(cl *c, uint32_t e, bbvfl_err *err) {
  bbvfl_epoch_metrics *em = &c->res->per_epoch[e];
  if (bbvfl_oc_fill_metrics(c, e, err) < 0) return -1;
  if (c->lab.split && !c->lab.own_all && c->res->labelled_test_rows == 0)
    bbvfl_oc_log(c, "epoch %u: this active client holds no test labels: the metrics it posts are zeros", e + 1);
  bbvfl_epoch_state st;
  if (bbvfl_aggc_epoch_state(&c->agg, e, &st, err) < 0) return -1;
  uint8_t *cd;
  size_t len;
  if (!st.metrics_posted) {
    double loss = em->test_loss < 0 ? 0 : em->test_loss;
    if (loss > 1e12) loss = 1e12;
    if (bbvfl_cenc_post_metrics(e, (uint32_t)(em->auroc * 1e6 + 0.5), (uint32_t)(em->accuracy * 1e6 + 0.5),
                                (uint64_t)(loss * 1e6 + 0.5), &cd, &len, err) < 0)
      return -1;
    int rc = bbvfl_oc_out_send(c, cd, len, 150000, "postMetrics()", 0, err);
    free(cd);
    if (rc < 0) return -1;
  }
  if (!st.rewards_paid && c->wire == BBVFL_WIRE_OPTIMISTIC) {
    /* paid once the epoch's claims are past their dispute window (onchain_payout.c) */
    bbvfl_oc_payout_queue(c, e + 1);
    if (bbvfl_oc_payout_due(c, 0, err) < 0) return -1;
  } else if (!st.rewards_paid) {
    if (bbvfl_cenc_pay_rewards(e, &cd, &len, err) < 0) return -1;
    int rc = bbvfl_oc_out_send(c, cd, len, 150000 + 80000 * (uint64_t)c->cp.cfg.clients, "payRewards()", OC_GAS_PAYOUT, err);
    free(cd);
    if (rc < 0) return -1;
  }
  bbvfl_oc_log(c, "epoch %u: train loss %.4f, test loss %.4f, AUROC %.4f, accuracy %.4f, on-chain aggregation %.4f s", e + 1,
        em->train_loss, em->test_loss, em->auroc, em->accuracy, c->act.agg_sum);
  return 0;
}

/* After an active client's call reverted with NotActive(), or with NotTraining() (the session
   ended while this client was stopped: the client elected in its place finished it): 1 when the
   chain has elected another client (this one was slow, not dead): it carries on as a passive
   client (err cleared); 0 when not (err kept). */
int bbvfl_oc_demoted(cl *c, uint64_t r, bbvfl_err *err) {
  if (!bbvfl_err_revert_sel_is(err, BBVFL_SEL_NotActive) && !bbvfl_err_revert_sel_is(err, BBVFL_SEL_NotTraining))
    return 0;
  uint8_t act[20];
  bbvfl_err e2 = {0};
  if (bbvfl_aggc_active(&c->agg, act, &e2) < 0 || !memcmp(act, c->me, 20)) return 0;
  char a[43];
  bbvfl_addr_checksum(act, a);
  bbvfl_oc_log(c, "round %llu: the chain elected %s while this client was slow; carrying on as a passive client",
        (unsigned long long)r, a);
  memcpy(c->active, act, 20);
  c->is_active = 0;
  memset(err, 0, sizeof *err);
  return 1;
}

/* The head as the off-chain trainer initialises it (session seed) and its parameter buffer. */
int bbvfl_oc_init_head(cl *c, bbvfl_err *err) {
  const bbvfl_session *s = c->sess;
  if (bbvfl_vhead_init(&c->head, (int)s->cparams.dim, c->cfg->ds->nclasses, s->cparams.clients, &s->train.mech,
                       &s->train.opt, c->cfg->seed, err) < 0)
    return -1;
  c->have_head = 1;
  c->head_len = 4 * bbvfl_vhead_nparams(&c->head);
  c->head_be = malloc(c->head_len ? c->head_len : 1);
  if (!c->head_be) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

/* Evaluates the head on the first `count` evaluation rounds of epoch e from their RoundCompleted
   sums (into c->probs). */
int bbvfl_oc_rebuild_eval(cl *c, uint64_t e, size_t count, bbvfl_err *err) {
  uint64_t r0 = bbvfl_cconfig_epoch_start(&c->cp.cfg, e), r1 = bbvfl_cconfig_epoch_start(&c->cp.cfg, e + 1);
  for (uint64_t r = r0; r < r1; r++) {
    bbvfl_round_layout L;
    if (bbvfl_cconfig_round(&c->cp.cfg, r, &L, err) < 0) return -1;
    if (L.train) continue;
    if (L.index >= count) break;
    bbvfl_cev ev;
    if (bbvfl_oc_find_event(c, BBVFL_EV_ROUND_COMPLETED, r, &ev, err) < 0) return -1;
    int ok = bbvfl_oc_sum_from_event(c, &ev, L.coords, err);
    bbvfl_cev_clear(&ev);
    if (ok < 0 ||
        bbvfl_vhead_eval(&c->head, c->sum, NULL, L.rows, c->probs + (size_t)L.first * (size_t)c->K, err) < 0)
      return bbvfl_wrap(err, "re-evaluating round %llu", (unsigned long long)r);
  }
  return 0;
}

/* This client was elected during the session (reelect() or expireRound()) while at round r: it
   takes the head over from the last GradientPosted (checked against lastFusionParamsHash), settles
   the previous epoch if its metrics or rewards are missing (optimistic: queues the payouts of
   every earlier epoch, paid when their dispute windows have closed), and re-evaluates the evaluation rounds
   of r's epoch that are already complete. */
int bbvfl_oc_take_over(cl *c, uint64_t r, bbvfl_err *err) {
  if (c->lr)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "round %llu: this client was elected the new active client, but taking the head over is not "
                      "built for --model lr (docs/LR.md)",
                      (unsigned long long)r);
  if (!c->cfg->has_labels && !c->lab.split)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "round %llu: this client was elected the new active client but holds no labels (--labels)",
                      (unsigned long long)r);
  c->is_active = 1;
  uint64_t blk0 = c->blk; /* the round's events may precede the settling transactions below */
  bbvfl_round_layout Lr; /* r's place: its epoch, and the evaluation rounds of it before r */
  if (bbvfl_cconfig_round(&c->cp.cfg, r, &Lr, err) < 0) return -1;
  uint64_t e = Lr.epoch;
  if (!c->have_head && bbvfl_oc_init_head(c, err) < 0) return -1;
  bbvfl_vhead_epoch(&c->head, (int)e);
  static const uint8_t zero[32];
  uint8_t h[32];
  uint64_t fr = 0;
  if (bbvfl_aggc_last_fusion_hash(&c->agg, h, err) < 0) return -1;
  int have_fr = memcmp(h, zero, 32) != 0;
  int rolled = 0;
  if (have_fr && bbvfl_aggc_last_fusion_round(&c->agg, &fr, err) < 0) return -1;
  if (have_fr && fr >= r) {
    /* optimistic mode after a dispute rolled the session back to r: the last post is the disputed
       round's (or a later one's); the head is the one the latest training round before r posted */
    rolled = 1;
    have_fr = 0;
    for (uint64_t p = r; p-- > 0;)
      if (bbvfl_oc_is_train_round(c, p)) {
        fr = p;
        have_fr = 1;
        break;
      }
  }
  if (have_fr) {
    bbvfl_cev gp;
    if (bbvfl_oc_find_event(c, BBVFL_EV_GRADIENT_POSTED, fr, &gp, err) < 0) return -1;
    uint8_t got[32];
    bbvfl_keccak256(gp.data2, gp.data2_len, got);
    int rc = !rolled && memcmp(got, h, 32) ? bbvfl_fail(err, BBVFL_E_STATE,
                                             "GradientPosted(%llu)'s parameters do not match lastFusionParamsHash()",
                                             (unsigned long long)fr)
                                : bbvfl_vhead_load_params_be(&c->head, gp.data2, gp.data2_len, err);
    bbvfl_cev_clear(&gp);
    if (rc < 0) return bbvfl_wrap(err, "taking over the head");
    bbvfl_oc_log(c, "round %llu: took over the fusion head from GradientPosted(round %llu) (%zu parameters; the optimizer "
          "state starts afresh)", (unsigned long long)r, (unsigned long long)fr, c->head_len / 4);
  } else {
    bbvfl_oc_log(c, "round %llu: no gradient posted yet: the head starts from the session's initialisation",
          (unsigned long long)r);
  }
  if (e > 0 && (!have_fr || fr < bbvfl_cconfig_epoch_start(&c->cp.cfg, e))) {
    /* no training round of epoch e was posted: the head is the one epoch e-1 ended with */
    bbvfl_epoch_state st;
    if (bbvfl_aggc_epoch_state(&c->agg, (uint32_t)(e - 1), &st, err) < 0) return -1;
    if (!st.metrics_posted || !st.rewards_paid) {
      bbvfl_oc_log(c, "epoch %llu: metrics or rewards missing; settling it", (unsigned long long)e);
      if (bbvfl_oc_rebuild_eval(c, e - 1, c->V, err) < 0) return -1;
      c->act.loss_sum = c->act.agg_sum = 0;
      c->act.trained = 0;
      c->act.takeover_epoch = (int)(e - 1);
      if (bbvfl_oc_post_epoch(c, (uint32_t)(e - 1), err) < 0) return -1;
    }
  }
  /* optimistic: the epochs before e its predecessor may have left unpaid (their payouts wait for
     the dispute windows) */
  if (c->wire == BBVFL_WIRE_OPTIMISTIC) bbvfl_oc_payout_queue(c, (uint32_t)e);
  c->act.loss_sum = c->act.agg_sum = 0;
  c->act.trained = 0;
  c->act.takeover_epoch = (int)e;
  if (!Lr.train && Lr.index > 0 && bbvfl_oc_rebuild_eval(c, e, Lr.index, err) < 0) return -1;
  c->blk = blk0;
  return 0;
}

/* A label holder that is not active, EVAL round: its scores with the head of the last
   GradientPosted, from the RoundCompleted sum (rcev), or in hashed mode (rcev NULL) from the
   payloads. */
int bbvfl_oc_holder_eval(cl *c, bbvfl_oc_slot *sl, const bbvfl_cev *rcev, bbvfl_err *err) {
  if (rcev ? bbvfl_oc_sum_from_event(c, rcev, sl->L.coords, err) < 0 : bbvfl_oc_round_sum(c, sl, NULL, err) < 0) return -1;
  return bbvfl_oc_active_eval(c, sl, err);
}

void bbvfl_oc_active_epoch_start(cl *c) {
  c->act.loss_sum = c->act.agg_sum = 0;
  c->act.trained = 0;
}

void bbvfl_oc_active_agg_time(cl *c, double dt) { c->act.agg_sum += dt; }
