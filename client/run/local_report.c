/* run/local.h: the report of a local session (RUN/report.json, RUN/metrics.csv, the result's
 * figures) from the clients' summary.json files, the chain and an off-chain rerun. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/wallet.h"
#include "ml/metrics.h"
#include "run/local_int.h"
#include "core/cfgprivacy.h"
#include "offchain/lr_train.h"
#include "offchain/offchain.h"

typedef struct {
  json_t *sums[BBVFL_LOCAL_MAX_CLIENTS];
  const json_t *act;        /* the active client's summary (in sums) */
  json_t *clients;          /* client_summaries */
  uint64_t gas_submit, gas_other, gas_aggregate, gas_gradient, fee_gas;
  bbvfl_u256 fee_wei;
  int participants;
  uint8_t S[32];
} totals;

static double jnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : 0;
}

static json_t *load_json(const char *path) {
  char *text = NULL;
  size_t len = 0;
  if (bbvfl_read_file(path, 1 << 22, &text, &len, NULL) < 0) return NULL;
  json_t *o = json_loadb(text, len, 0, NULL);
  free(text);
  return o;
}

static void totals_free(totals *t, int M) {
  for (int m = 0; m < M; m++) json_decref(t->sums[m]);
  json_decref(t->clients);
}

/* Every client's summary: the totals, client_summaries, the active client's. */
static int collect(const bbvfl_lrun *x, totals *t, bbvfl_err *err) {
  memset(t, 0, sizeof *t);
  t->fee_wei = bbvfl_u256_from_u64(0);
  t->clients = json_array();
  for (int m = 0; m < x->M; m++) {
    char path[1300];
    snprintf(path, sizeof path, "%s/summary.json", x->ch[m].dir);
    t->sums[m] = load_json(path);
    if (!t->sums[m]) return bbvfl_fail(err, BBVFL_E_IO, "client %d left no summary (%s)", m, path);
    const json_t *sm = t->sums[m];
    if (json_is_true(json_object_get(sm, "active"))) t->act = sm;
    t->gas_submit += (uint64_t)jnum(sm, "gas_submit");
    t->gas_other += (uint64_t)jnum(sm, "gas_other");
    t->gas_aggregate += (uint64_t)jnum(sm, "gas_aggregate");
    t->gas_gradient += (uint64_t)jnum(sm, "gas_gradient");
    const json_t *fe = json_object_get(sm, "fees");
    bbvfl_u256 v;
    t->fee_gas += (uint64_t)json_integer_value(json_object_get(fe, "gas_used"));
    const char *ws = json_string_value(json_object_get(fe, "eth_paid_wei"));
    if (ws && bbvfl_u256_from_string(ws, &v, NULL) == 0) bbvfl_u256_add(&t->fee_wei, &t->fee_wei, &v);
    char a[43];
    bbvfl_addr_checksum(x->ch[m].addr, a);
    json_t *c = json_deep_copy(sm);
    json_object_del(c, "epochs");
    json_object_set_new(c, "address", json_string(a));
    json_array_append_new(t->clients, c);
  }
  const json_t *eps = t->act ? json_object_get(t->act, "epochs") : NULL;
  if (!json_is_array(eps) || json_array_size(eps) == 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "no client reported per-epoch metrics as active client");
  t->participants = json_is_integer(json_object_get(t->act, "participants")) ? (int)jnum(t->act, "participants") : x->M;
  const char *shex = json_string_value(json_object_get(t->act, "session_seed"));
  if (shex) bbvfl_hex_decode_fixed(shex, t->S, 32, NULL);
  return 0;
}

/* RUN/metrics.csv (atomically; best effort, as the report's companion) and the last epoch's
   metrics and the median on-chain aggregation time into res. */
static void epochs_csv(const bbvfl_lrun *x, const json_t *eps, bbvfl_local_result *res) {
  size_t ne = json_array_size(eps);
  double *agg = calloc(ne, sizeof *agg);
  char path[1300], final[1300];
  snprintf(path, sizeof path, "%s/metrics.csv.tmp", x->run);
  FILE *csv = fopen(path, "w");
  if (csv) fprintf(csv, "epoch,train_loss,test_loss,auroc,accuracy,f1,onchain_agg_s\n");
  for (size_t e = 0; e < ne; e++) {
    const json_t *em = json_array_get(eps, e);
    if (agg) agg[e] = jnum(em, "onchain_agg_s");
    if (csv)
      fprintf(csv, "%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", (int)jnum(em, "epoch"), jnum(em, "train_loss"),
              jnum(em, "test_loss"), jnum(em, "auroc"), jnum(em, "accuracy"), jnum(em, "f1"), jnum(em, "onchain_agg_s"));
  }
  if (csv) {
    fflush(csv);
    fsync(fileno(csv));
    fclose(csv);
    snprintf(final, sizeof final, "%s/metrics.csv", x->run);
    rename(path, final);
  }
  const json_t *last = json_array_get(eps, ne - 1);
  res->auroc = jnum(last, "auroc");
  res->accuracy = jnum(last, "accuracy");
  res->test_loss = jnum(last, "test_loss");
  res->epochs_measured = ne;
  res->onchain_agg_s = agg ? bbvfl_median(agg, ne) : 0;
  free(agg);
}

/* The block of the first `kind` event (topic1: its first indexed argument, nullable) from block
   `from` on; 0 when there is none or the query fails (a report figure, not a check). */
static uint64_t first_event_block(bbvfl_aggc *a, bbvfl_cev_kind kind, const uint8_t *topic1, uint64_t from) {
  json_t *logs = NULL;
  bbvfl_err e = {0};
  uint64_t blk = 0;
  if (bbvfl_aggc_logs(a, kind, topic1, from, BBVFL_BLOCK_LATEST, &logs, &e) == 0 && json_array_size(logs) > 0) {
    bbvfl_cev ev;
    memset(&ev, 0, sizeof ev);
    if (bbvfl_cev_decode(json_array_get(logs, 0), &ev, &e) == 1) blk = ev.block_number;
    bbvfl_cev_clear(&ev);
  }
  json_decref(logs);
  return blk;
}

/* Rounds, blocks per epoch and gas per round, coordinate and window into res. */
static void gas_figures(const bbvfl_lrun *x, const totals *t, bbvfl_local_result *res) {
  const bbvfl_cconfig *c = &x->s->cparams;
  res->rounds = bbvfl_cconfig_total(c);
  /* LR's sqn: the epochs with curvature rounds, each releasing curv_rows rows once more */
  uint64_t curv_epochs = bbvfl_cconfig_curv_epochs(c->epochs, c->curv_every);
  res->curvature_rounds = curv_epochs * c->curv_rounds;
  double curv_coords_rows = (double)curv_epochs * c->curv_rows;
  /* blocks per epoch: from the first submission to round 0 to SessionEnded */
  bbvfl_aggc agg;
  bbvfl_aggc_init(&agg, x->rpc, x->s->contract);
  uint8_t t0[32];
  bbvfl_cenc_word_u64(0, t0);
  uint64_t b_first = first_event_block(&agg, bbvfl_cev_submission(c->hashed), t0, x->s->deploy_block);
  uint64_t b_end = first_event_block(&agg, BBVFL_EV_SESSION_ENDED, NULL, x->s->deploy_block);
  res->blocks_per_epoch = b_first && b_end >= b_first ? (double)(b_end - b_first + 1) / c->epochs : 0;
  /* what the sums cost (every submission, and in hashed mode every aggregate() that re-supplies
     them), per value summed: M x P values per row, every training row of every window and every
     evaluation row, each epoch */
  double M = x->M, gas_sums = (double)t->gas_submit + (double)t->gas_aggregate;
  res->gas_per_round = res->rounds ? gas_sums / (double)res->rounds : 0;
  double coords_total =
      M * c->dim * ((double)c->epochs * ((double)c->batches_per_epoch * c->batch + c->eval_rows) + curv_coords_rows);
  res->gas_per_coordinate = coords_total > 0 ? gas_sums / coords_total : 0;
  /* the rounds that take a gradient: the windows and (LR's sqn) the curvature rounds; such a
     round's whole cost: its M submissions, the aggregate() (hashed), the gradient post */
  double windows_total = (double)c->train_rounds * c->epochs + (double)res->curvature_rounds;
  double tr_coords = M * c->dim * ((double)c->batches_per_epoch * c->batch * c->epochs + curv_coords_rows);
  double share = coords_total > 0 ? tr_coords / coords_total : 0;
  res->gas_per_window = windows_total > 0 ? (gas_sums * share + (double)t->gas_gradient) / windows_total : 0;
}

/* Every client's token balance (decimal units) by checksummed address. */
static json_t *rewards(const bbvfl_lrun *x, bbvfl_err *err) {
  json_t *r = json_object();
  for (int m = 0; m < x->M; m++) {
    bbvfl_u256 bal;
    char a[43], dec[80];
    bbvfl_addr_checksum(x->ch[m].addr, a);
    if (bbvfl_token_balance(x->rpc, x->s->token, x->ch[m].addr, &bal, err) < 0) {
      json_decref(r);
      return NULL;
    }
    bbvfl_u256_to_dec(&bal, dec);
    json_object_set_new(r, a, json_string(dec));
  }
  return r;
}


/* The privacy, the model and the session's setup into the report. */
static void report_setup(const bbvfl_lrun *x, const totals *t, const bbvfl_local_result *res, json_t *r) {
  const bbvfl_session *s = x->s;
  const bbvfl_privacy *pv = &res->privacy;
  const int finite = res->have_privacy && pv->finite, mfinite = s->cparams.masked && finite;
  /* the report's top-level epsilons, the same fields as `bbvfl train`'s (names kept for scripts) */
  if (res->have_privacy) {
    bbvfl_privacy_json_top(r, pv);
  } else {
    json_object_set_new(r, "headline", json_string(BBVFL_PRIVACY_HEADLINE));
    json_object_set_new(r, "epsilon_sample", json_null());
    json_object_set_new(r, "epsilon_feature", json_null());
  }
  json_object_set_new(r, "reproducible_noise", json_boolean(s->train.seeded_noise));
  json_object_set_new(r, "masked", json_boolean(s->cparams.masked));
  json_object_set_new(r, "participants", json_integer(t->participants));
  json_object_set_new(r, "epsilon_feature_masked",
                      mfinite ? bbvfl_json_num_or_null(bbvfl_privacy_shown(pv, &pv->masked_row_feature)) : json_null());
  json_object_set_new(r, "epsilon_feature_masked_level", json_string("per_party_masked"));
  json_object_set_new(r, "privacy", bbvfl_privacy_json(pv));
  json_object_set_new(r, "delta", json_real(x->o->delta > 0 ? x->o->delta : 1e-5));
}

/* The figures: metrics, timings, gas, rounds, the chain, the setup's numbers. */
static void report_figures(const bbvfl_lrun *x, const totals *t, const bbvfl_local_result *res, json_t *r) {
  const bbvfl_session *s = x->s;
  const bbvfl_cconfig *c = &s->cparams;
  json_object_set_new(r, "onchain_agg_s_per_epoch", json_real(res->onchain_agg_s));
  json_object_set_new(r, "offchain_agg_s_per_epoch", json_real(res->offchain_agg_s));
  json_object_set_new(r, "gas_per_round", json_real(res->gas_per_round));
  json_object_set_new(r, "gas_per_coordinate", json_real(res->gas_per_coordinate));
  json_object_set_new(r, "gas_per_window", json_real(res->gas_per_window));
  json_object_set_new(r, "blocks_per_epoch", json_real(res->blocks_per_epoch));
  json_object_set_new(r, "curvature_rounds", json_integer((json_int_t)res->curvature_rounds));
  json_object_set_new(r, "model", json_string(bbvfl_model_name(s->train.model)));
  json_object_set_new(r, "gas_submit_total", json_integer((json_int_t)t->gas_submit));
  json_object_set_new(r, "gas_aggregate_total", json_integer((json_int_t)t->gas_aggregate));
  json_object_set_new(r, "gas_gradient_total", json_integer((json_int_t)t->gas_gradient));
  json_object_set_new(r, "window", json_integer(c->window));
  json_object_set_new(r, "staleness", json_integer(c->staleness));
  json_object_set_new(r, "aggregation", json_string(bbvfl_session_aggregation_name(c->wire)));
  json_object_set_new(r, "train_rounds_per_epoch", json_integer(c->train_rounds));
  json_object_set_new(r, "eval_rounds_per_epoch", json_integer(c->eval_rounds));
  json_object_set_new(r, "block_time", json_real(x->o->block_time));
  json_object_set_new(r, "gas_other_total", json_integer((json_int_t)t->gas_other));
  json_object_set_new(r, "gas_chain_total", json_integer((json_int_t)x->chain_gas));
  json_object_set_new(r, "training_wall_s", json_real(res->training_s));
  json_object_set_new(r, "wall_s", json_real(res->wall_s));
  json_object_set_new(r, "rpc_url", json_string(x->rpc_url));
  json_object_set_new(r, "chain_id", json_integer((json_int_t)s->chain_id));
  char caddr[43], taddr[43];
  bbvfl_addr_checksum(s->contract, caddr);
  bbvfl_addr_checksum(s->token, taddr);
  json_object_set_new(r, "contract", json_string(caddr));
  json_object_set_new(r, "token", json_string(taddr));
}

/* The rest after the rewards: the session's numbers, client summaries, fees, the run folder. */
static void report_session(const bbvfl_lrun *x, totals *t, const bbvfl_local_result *res, json_t *r) {
  const bbvfl_session *s = x->s;
  const bbvfl_cconfig *c = &s->cparams;
  json_object_set_new(r, "clients", json_integer(x->M));
  json_object_set_new(r, "epochs", json_integer(c->epochs));
  json_object_set_new(r, "rounds", json_integer((json_int_t)res->rounds));
  json_object_set_new(r, "b", json_integer(c->levels));
  json_object_set_new(r, "beta", json_real(s->train.mech.beta));
  json_object_set_new(r, "B", json_integer(c->batch));
  json_object_set_new(r, "P", json_integer(c->dim));
  json_object_set_new(r, "seed", json_integer((json_int_t)s->train.seed));
  char Shex[70];
  bbvfl_hex_encode(t->S, 32, Shex);
  json_object_set_new(r, "session_seed", json_string(Shex));
  json_object_set_new(r, "client_summaries", t->clients);
  t->clients = NULL;
  char fee_dec[80];
  bbvfl_u256_to_dec(&t->fee_wei, fee_dec);
  /* what the clients' mined transactions paid, summed (each client's own: client_summaries[].fees) */
  json_object_set_new(r, "fees", json_pack("{s:I, s:s, s:f}", "gas_used", (json_int_t)t->fee_gas, "eth_paid_wei",
                                           fee_dec, "eth_paid", strtod(fee_dec, NULL) / 1e18));
  json_object_set_new(r, "max_fee_gwei", x->o->max_fee_gwei > 0 ? json_real(x->o->max_fee_gwei) : json_null());
  json_object_set_new(r, "confirmations", json_integer(x->o->confirmations));
  json_object_set_new(r, "run_dir", json_string(x->run));
}

/* The off-chain run with the same seed and session seed (aggregation timing and the comparison),
   then the session's privacy from the one accountant: the masked bound for the clients actually
   present at the end (against one of them). */
static int offchain_and_privacy(const bbvfl_lrun *x, const totals *t, bbvfl_local_result *res, bbvfl_err *err) {
  bbvfl_offchain_cfg oc = x->s->train; /* reproducible noise as the session's (else private: timing only) */
  oc.session_seed = t->S;
  oc.partition = x->o->partition;
  bbvfl_offchain_result ores;
  memset(&ores, 0, sizeof ores);
  if (bbvfl_offchain_train(x->o->ds, &oc, &ores, err) < 0) return bbvfl_wrap(err, "off-chain comparison run");
  res->offchain_agg_s = ores.agg_train_s_per_epoch;
  res->auroc_offchain = ores.per_epoch[ores.epochs - 1].auroc;
  double offchain_loss = ores.per_epoch[ores.epochs - 1].test_loss;
  memset(&res->privacy, 0, sizeof res->privacy);
  res->have_privacy = bbvfl_cfg_privacy(&x->s->train, ores.n_train, x->s->cparams.masked, t->participants,
                                        x->o->delta > 0 ? x->o->delta : 1e-5, &res->privacy, &res->privacy_err) == 0;
  if (!res->have_privacy) res->privacy.finite = 0;
  bbvfl_offchain_result_free(&ores);
  res->report = json_object();
  json_t *r = res->report;
  json_object_set_new(r, "auroc", json_real(res->auroc));
  json_object_set_new(r, "accuracy", json_real(res->accuracy));
  json_object_set_new(r, "test_loss", json_real(res->test_loss));
  if (x->o->compare) {
    json_object_set_new(r, "auroc_offchain_same_seed", json_real(res->auroc_offchain));
    json_object_set_new(r, "auroc_gap", json_real(fabs(res->auroc - res->auroc_offchain)));
    json_object_set_new(r, "test_loss_offchain_same_seed", json_real(offchain_loss));
  } else {
    res->auroc_offchain = NAN;
  }
  return 0;
}

int bbvfl_lrun_report(bbvfl_lrun *x, bbvfl_local_result *res, bbvfl_err *err) {
  totals t;
  int rc = -1;
  if (collect(x, &t, err) < 0) goto out;
  epochs_csv(x, json_object_get(t.act, "epochs"), res);
  gas_figures(x, &t, res);
  json_t *rw = rewards(x, err);
  if (!rw) goto out;
  if (offchain_and_privacy(x, &t, res, err) < 0) {
    json_decref(rw);
    goto out;
  }
  res->training_s = x->t_train1 - x->t_train0;
  res->wall_s = bbvfl_now() - x->t_start;
  report_setup(x, &t, res, res->report);
  report_figures(x, &t, res, res->report);
  json_object_set_new(res->report, "rewards", rw);
  report_session(x, &t, res, res->report);
  char *text = json_dumps(res->report, JSON_INDENT(2));
  char path[1300];
  snprintf(path, sizeof path, "%s/report.json", x->run);
  if (!text) bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  else if (bbvfl_write_file_atomic(path, text, strlen(text), 0644, err) == 0) rc = 0;
  free(text);
out:
  totals_free(&t, x->M);
  return rc;
}
