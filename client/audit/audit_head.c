/* The check `head`: the active client replayed from the chain (core/headcheck.h). Fed from the
 * replay: each TRAIN round's RoundCompleted (its sum as emitted and its contributor count: what
 * every client's h_hat is formed from), the round's LabelGradientPosted posts in chain order, then
 * its GradientPosted, which runs one round of the checker. The first deviation fails the check at
 * that round, naming the active client that posted it; the checker latches, so later rounds are
 * not replayed. A re-election hands the head to another client, which starts a fresh optimizer
 * state and trains on its own labels: the checker follows (bbvfl_hcheck_takeover). */
#include "audit/audit_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/headcheck.h"
#include "binding/packing.h"
#include "core/schedule.h"

static const char *const TRUSTED[] = {
    "the test labels behind the posted metrics (MetricsPosted: loss, AUROC, accuracy are the active client's word)",
    "which test rows each evaluation round's sum covers (the chain shows sums, not rows)",
    "that the class each training row implies is its true (or randomized-response) label: `head` shows one class "
    "per row, the same in every epoch, not which one",
    "each client's own rows, columns and network behind its submissions (the sums' inputs)",
    NULL};

const char *bbvfl_audit_trusted(size_t i) { return i < sizeof TRUSTED / sizeof TRUSTED[0] ? TRUSTED[i] : NULL; }

static void skip(st_t *S, const char *why) {
  bbvfl_audit_check *k = &S->r->checks[BBVFL_AC_HEAD];
  k->status = BBVFL_AS_SKIP;
  snprintf(k->note, sizeof k->note, "%s", why);
}

void bbvfl_au_head_clear(st_t *S) {
  bbvfl_hcheck_free(S->hc);
  S->hc = NULL;
  free(S->hc_sum);
  S->hc_sum = NULL;
  for (size_t i = 0; i < S->hc_nlp; i++) free(S->hc_lp[i]);
  S->hc_nlp = 0;
}

int bbvfl_au_head_init(st_t *S, bbvfl_err *err) {
  S->hc_active = -1;
  S->hc_sum_round = UINT64_MAX;
  if (!S->o->head_train) {
    skip(S, "needs the session's training setup (audit --session FILE, the file bbvfl deploy wrote)");
    S->hc_off = 1;
    return 0;
  }
  if (S->p.cfg.curv_every && S->o->head_train->model != BBVFL_MODEL_LR) {
    skip(S, "curvature rounds without --model lr: not a session this client runs");
    S->hc_off = 1;
    return 0;
  }
  S->hc_sum = malloc((S->max_coords ? S->max_coords : 1) * sizeof *S->hc_sum);
  if (!S->hc_sum) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

/* The checker, made at the first gradient (the class count from the session, else from the
   posted head's length: P x K + K values). */
static int make(st_t *S, const bbvfl_cev *ev) {
  const bbvfl_offchain_cfg *t = S->o->head_train;
  const bbvfl_cconfig *c = &S->p.cfg;
  int nc = S->o->head_nclasses, lr = t->model == BBVFL_MODEL_LR;
  if (nc < 2) {
    size_t K = lr ? c->dim : (ev->data2_len / 4) / ((size_t)c->dim + 1);
    nc = K <= 1 ? 2 : (int)K;
  }
  bbvfl_hcheck_cfg hc = {.train = t,
                         .P = (int)c->dim,
                         .nclasses = nc,
                         .B = c->batch,
                         .lb = lr && t->B == 0 ? (size_t)c->batches_per_epoch * c->batch : c->batch,
                         .seed = t->seed,
                         .n_rows = c->train_rows ? c->train_rows : 1};
  bbvfl_err e = {0};
  if (bbvfl_hcheck_new(&S->hc, &hc, &e) < 0) {
    bbvfl_au_fail(S, BBVFL_AC_HEAD, ev, 1, ev->round, -1, NULL, "the session's head cannot be set up: %s", e.msg);
    S->hc_off = 1;
    return -1;
  }
  return 0;
}

/* RoundCompleted of a TRAIN round: the sum as emitted and its count, what the clients use
   (optimistic mode: a claim emits no sum, the clients sum the payloads: the head slot's sum). */
void bbvfl_au_head_sum(st_t *S, const bbvfl_cev *ev) {
  if (S->hc_off || !bbvfl_au_is_train(S, ev->round)) return;
  bbvfl_round_layout L = bbvfl_au_layout(S, ev->round);
  bbvfl_err e = {0};
  S->hc_sum_round = UINT64_MAX;
  if (S->p.cfg.wire == BBVFL_WIRE_OPTIMISTIC && ev->data_len == 0) { /* a claim: the payloads' sum (`sums` checks it) */
    rslot *h = bbvfl_au_head(S);
    if (!h || h->sum_unknown) return;
    memcpy(S->hc_sum, h->sum, (size_t)L.coords * sizeof *S->hc_sum);
  } else if (bbvfl_cdec_round_sum(&S->p, ev->data, ev->data_len, S->hc_sum, L.coords, &e) < 0)
    return; /* `sums` says */
  S->hc_sum_round = ev->round;
  S->hc_contributors = ev->participants;
  for (size_t i = 0; i < S->hc_nlp; i++) free(S->hc_lp[i]);
  S->hc_nlp = 0;
}

/* A valid LabelGradientPosted of the open TRAIN round from holder i: kept for the gradient. */
void bbvfl_au_head_label(st_t *S, const bbvfl_cev *ev, int i) {
  if (S->hc_off || ev->round != S->hc_sum_round || S->hc_nlp >= MAX_CLIENTS) return;
  uint8_t *d = malloc(ev->data_len ? ev->data_len : 1);
  if (!d) {
    bbvfl_au_fail(S, BBVFL_AC_HEAD, ev, 1, ev->round, -1, NULL, "out of memory");
    S->hc_off = 1;
    return;
  }
  memcpy(d, ev->data, ev->data_len);
  S->hc_lp[S->hc_nlp] = d;
  S->hc_lplen[S->hc_nlp] = ev->data_len;
  S->hc_lpwho[S->hc_nlp++] = i;
}

/* A valid GradientPosted of TRAIN round ev->round by client ai: one round of the replay. */
void bbvfl_au_head_gradient(st_t *S, const bbvfl_cev *ev, int ai) {
  if (S->hc_off || S->hc_failed) return;
  if (ev->round != S->hc_sum_round) {
    bbvfl_au_fail(S, BBVFL_AC_HEAD, ev, 1, ev->round, -1, ev->client,
            "the round's sum could not be read: the head cannot be replayed from here on");
    S->hc_failed = 1;
    return;
  }
  if (!S->hc && make(S, ev) < 0) return;
  if (S->hc_active >= 0 && ai != S->hc_active) bbvfl_hcheck_takeover(S->hc);
  S->hc_active = ai;
  bbvfl_round_layout L = bbvfl_au_layout(S, ev->round);
  const size_t *rows = NULL;
  size_t B = S->p.cfg.batch;
  if (S->perm && !L.curv && ((uint64_t)L.first + L.nb) * B <= S->p.cfg.train_rows) {
    if (S->perm_epoch != (int64_t)L.epoch) {
      bbvfl_schedule_perm(S->seed, L.epoch, (size_t)S->p.cfg.train_rows, S->perm);
      S->perm_epoch = (int64_t)L.epoch;
    }
    rows = S->perm + (size_t)L.first * B;
  }
  if (S->p.cfg.masked) /* the masks cancel mod 2^16 (the emitted lanes already are) */
    for (uint64_t j = 0; j < L.coords; j++) S->hc_sum[j] &= 0xFFFFu;
  bbvfl_hcheck_input in = {.round = ev->round,
                           .epoch = (int)L.epoch,
                           .nb = L.rows / B, /* a window's nb; a curvature round's rows (B = 1) */
                           .first_pos = (size_t)L.first * B,
                           .rows = rows,
                           .contributors = S->hc_contributors,
                           .sum_q = S->hc_sum,
                           .grad = ev->data,
                           .grad_len = ev->data_len,
                           .params = ev->data2,
                           .params_len = ev->data2_len,
                           .nlabel = S->hc_nlp,
                           .label = (const uint8_t *const *)S->hc_lp,
                           .label_len = S->hc_lplen,
                           .label_holder = S->hc_lpwho,
                           .curv = L.curv,
                           .active = ai};
  if (in.nb == 0) in.nb = 1;
  bbvfl_hcheck_result res;
  bbvfl_err e = {0};
  if (bbvfl_hcheck_round(S->hc, &in, &res, &e) < 0) {
    bbvfl_au_fail(S, BBVFL_AC_HEAD, ev, 1, ev->round, L.epoch, ev->client, "%s", e.msg);
    S->hc_failed = 1;
    return;
  }
  if (res.verdict != BBVFL_HC_OK) {
    char line[200];
    bbvfl_hcheck_describe(&res, line, sizeof line);
    bbvfl_au_fail(S, BBVFL_AC_HEAD, ev, 1, ev->round, L.epoch, ev->client, "the active client deviates: %s", line);
    S->hc_failed = 1;
    return;
  }
  bbvfl_au_ok(S, BBVFL_AC_HEAD);
}

void bbvfl_au_head_stop(st_t *S, const bbvfl_cev *ev) {
  if (S->hc_off || S->hc_failed) return;
  S->hc_off = 1;
  S->hc_stopped = 1;
  S->hc_stop_round = ev->round;
}

void bbvfl_au_head_finish(st_t *S) {
  bbvfl_audit_result *r = S->r;
  if (S->hc) {
    bbvfl_hcheck_stats st;
    bbvfl_hcheck_get_stats(S->hc, &st);
    r->head_rounds = st.rounds;
    r->head_exact = st.exact_rounds;
    r->head_batches = st.batches;
    r->head_curv_skipped = st.skipped_curv;
    r->head_max_dev_grad = st.max_dev_grad;
    r->head_max_dev_params = st.max_dev_params;
  }
  bbvfl_audit_check *k = &r->checks[BBVFL_AC_HEAD];
  if (k->status == BBVFL_AS_PASS && k->checked) {
    int n = snprintf(k->note, sizeof k->note, "%llu TRAIN rounds replayed (%llu bit for bit", (unsigned long long)r->head_rounds,
                     (unsigned long long)r->head_exact);
    if (n > 0 && (size_t)n < sizeof k->note && r->head_exact < r->head_rounds)
      n += snprintf(k->note + n, sizeof k->note - (size_t)n, "; the rest within tolerance: relative deviation up to %.2g",
                    r->head_max_dev_grad > r->head_max_dev_params ? r->head_max_dev_grad : r->head_max_dev_params);
    if (n > 0 && (size_t)n < sizeof k->note)
      n += snprintf(k->note + n, sizeof k->note - (size_t)n, ")%s",
                    r->head_curv_skipped ? "; curvature rounds not replayed" : "");
    if (n > 0 && (size_t)n < sizeof k->note && S->hc_stopped)
      n += snprintf(k->note + n, sizeof k->note - (size_t)n,
                    "; stopped at round %llu, whose GradientPosted failed `gradients`",
                    (unsigned long long)S->hc_stop_round);
    (void)n;
  }
}
