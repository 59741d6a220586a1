#include "audit/report.h"
#include "audit/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "core/cfgprivacy.h"
#include "dp/accountant.h"
#include "eth/hex.h"
#include "eth/wallet.h"
#include "binding/packing.h"

double bbvfl_rep_u256_to_double(const bbvfl_u256 *v) {
  double x = 0;
  for (int i = 0; i < 32; i++) x = x * 256.0 + v->be[i];
  return x;
}

size_t bbvfl_rep_count_status(const bbvfl_audit_result *r, bbvfl_audit_status s) {
  size_t n = 0;
  for (int c = 0; c < BBVFL_AC_COUNT; c++) n += r->checks[c].status == s;
  return n;
}

/* The product contract of the session's aggregation mode. */
const char *bbvfl_rep_artifact_name(const bbvfl_audit_result *r) {
  return bbvfl_wire_contract(r->params.cfg.wire);
}

/* "lanes", "hashed", "packed" or "optimistic" (how a round's sum is formed on chain). */
static const char *aggregation_name(const bbvfl_cconfig *c) {
  static const char *const names[] = {"lanes", "hashed", "packed", "optimistic"};
  return c->wire >= 0 && c->wire < 4 ? names[c->wire] : "unknown";
}

/* The round structure in one phrase: windows, evaluation rounds, staleness, aggregation. */
void bbvfl_rep_rounds_phrase(FILE *f, const bbvfl_audit_result *r) {
  const bbvfl_cconfig *c = &r->params.cfg;
  fprintf(f, "per epoch T=%u TRAIN rounds (R=%u minibatches, window K=%u) + V=%u EVAL rounds (%u test rows, %u per "
             "round), %u epochs (%llu rounds); %u training rows; %s aggregation, staleness %u",
          c->train_rounds, c->batches_per_epoch, c->window, c->eval_rounds, c->eval_rows, c->eval_rows_per_round,
          c->epochs, (unsigned long long)r->params.total_rounds, c->train_rows, aggregation_name(c), c->staleness);
  if (c->curv_every)
    fprintf(f, "; %u curvature rounds (%u rows) after every %u-th epoch from the %u-th (%llu checked)", c->curv_rounds,
            c->curv_rows, c->curv_every, 2 * c->curv_every, (unsigned long long)r->curv_rounds);
}

static void session_line(FILE *f, const bbvfl_audit_result *r) {
  const bbvfl_cconfig *c = &r->params.cfg;
  fprintf(f, "  session: M=%u B=%u P=%u b=%u beta=%.6g, %u-bit lanes, %s mode\n", c->clients, c->batch, c->dim,
          c->levels, c->beta_micro / 1e6, r->params.lane_bits, c->masked ? "masked" : "plain");
  fputs("  rounds: ", f);
  bbvfl_rep_rounds_phrase(f, r);
  fputc('\n', f);
}

/* The verdict in one phrase (FAIL wins over INCOMPLETE; PASS only for a finished session). */
static const char *verdict_line(const bbvfl_audit_result *r) {
  switch (bbvfl_audit_verdict_of(r)) {
    case BBVFL_AV_PASS: return "PASS - every check holds";
    case BBVFL_AV_INCOMPLETE: return "INCOMPLETE - the session has not finished (no check failed so far)";
    default: return r->nmissing ? "FAIL - discrepancies found (and the session has not finished)"
                                : "FAIL - discrepancies found";
  }
}

void bbvfl_rep_failure_text(FILE *f, const bbvfl_audit_failure *x) {
  if (x->has_round) fprintf(f, " round %llu,", (unsigned long long)x->round);
  if (x->has_epoch) fprintf(f, " epoch %u,", x->epoch);
  if (x->has_tx) {
    char h[67];
    hex32(x->tx, h);
    fprintf(f, " tx %s (block %llu),", h, (unsigned long long)x->block);
  }
  if (x->has_client) {
    char a[43];
    addr_str(x->client, a);
    fprintf(f, " client %s,", a);
  }
  fprintf(f, " %s", x->detail);
}

void bbvfl_audit_print_text(FILE *f, const bbvfl_audit_result *r) {
  char a[43], t[43];
  addr_str(r->contract, a);
  addr_str(r->token, t);
  bbvfl_audit_verdict v = bbvfl_audit_verdict_of(r);
  fprintf(f, "bbvfl audit: %s\n", verdict_line(r));
  fprintf(f, "  contract %s on chain %llu, blocks %llu..%llu", a, (unsigned long long)r->chain_id,
          (unsigned long long)r->from_block, (unsigned long long)r->to_block);
  if (r->has_deploy) fprintf(f, ", deployed in block %llu", (unsigned long long)r->deploy_block);
  fprintf(f, "\n  token %s\n", t);
  if (r->code_known)
    fprintf(f, "  deployed code: %s the product artifact abi/%s.json%s\n", r->code_matches ? "identical to" : "DIFFERS from",
            bbvfl_rep_artifact_name(r), r->code_matches ? "" : " (the checks verify behaviour)");
  if (r->has_members && r->registration_open)
    fprintf(f, "  registration: open to anyone (deployed without a member list)\n");
  else if (r->has_members)
    fprintf(f, "  registration: closed to the %d members named at deploy\n", r->nmembers);
  session_line(f, r);
  fprintf(f, "  read %llu logs: %llu of %llu rounds complete, %llu submissions, %llu gradients, %llu epochs%s%s\n",
          (unsigned long long)r->logs, (unsigned long long)r->rounds_completed,
          (unsigned long long)r->params.total_rounds, (unsigned long long)r->submissions,
          (unsigned long long)r->gradients, (unsigned long long)r->epochs_completed,
          r->session_ended ? ", session ended" : ", session still running",
          r->reelections ? ", with re-elections" : "");
  if (r->nmissing) {
    fprintf(f, "  %s: the session has not finished by block %llu; missing:", v == BBVFL_AV_FAIL ? "also" : "INCOMPLETE",
            (unsigned long long)r->to_block);
    for (unsigned i = 0; i < r->nmissing; i++) fprintf(f, "%s %s", i ? ";" : "", r->missing[i]);
    fputc('\n', f);
  }
  if (r->ahead)
    fprintf(f, "  pipelined: %llu submissions went to a round after the oldest open one (up to %llu rounds ahead)\n",
            (unsigned long long)r->ahead, (unsigned long long)r->max_ahead);
  fprintf(f, "  checks: %zu passed, %zu failed, %zu skipped (audit took %.2f s)\n\n", bbvfl_rep_count_status(r, BBVFL_AS_PASS),
          bbvfl_rep_count_status(r, BBVFL_AS_FAIL), bbvfl_rep_count_status(r, BBVFL_AS_SKIP), r->elapsed_s);
  for (int c = 0; c < BBVFL_AC_COUNT; c++) {
    const bbvfl_audit_check *k = &r->checks[c];
    fprintf(f, "%s %-13s %llu checked", bbvfl_audit_status_name(k->status), bbvfl_audit_check_name(c),
            (unsigned long long)k->checked);
    if (k->status == BBVFL_AS_FAIL) {
      fprintf(f, ", %llu discrepancies; first:", (unsigned long long)k->failures);
      bbvfl_rep_failure_text(f, &k->first);
    } else if (k->note[0]) {
      fprintf(f, "; %s", k->note);
    }
    fputc('\n', f);
  }
  fprintf(f, "\ntrusted (the chain cannot show it):\n");
  for (size_t i = 0; bbvfl_audit_trusted(i); i++) fprintf(f, "  - %s\n", bbvfl_audit_trusted(i));
  fprintf(f, "\nclients (accepted submissions, rewarded, tokens received):\n");
  for (size_t i = 0; i < r->nclients; i++) {
    const bbvfl_audit_client_fig *c = &r->clients[i];
    char d[80];
    addr_str(c->addr, a);
    bbvfl_u256_to_dec(&c->transferred, d);
    fprintf(f, "  %2u %s  %8llu  %8llu  %s%s\n", c->index, a, (unsigned long long)c->accepted,
            (unsigned long long)c->rewarded, d, c->excluded ? "  (excluded)" : "");
  }
  if (r->has_supply) {
    char d[80];
    bbvfl_u256_to_dec(&r->total_supply, d);
    fprintf(f, "token: totalSupply %s, balanceOf of %llu accounts reconciled with the Transfer events\n", d,
            (unsigned long long)r->holders);
  }
  if (r->rounds_completed)
    fprintf(f, "gas: %llu in total, %.0f per completed round (submissions%s + gradient)\n",
            (unsigned long long)r->gas_total, (double)r->gas_total / (double)r->rounds_completed,
            r->params.cfg.hashed ? " + aggregate()" : "");
  size_t shown = 0;
  for (size_t i = 0; i < r->nepochs; i++) shown += r->epochs[i].has_metrics;
  if (shown) {
    const bbvfl_audit_epoch_fig *last = NULL;
    for (size_t i = 0; i < r->nepochs; i++)
      if (r->epochs[i].has_metrics) last = &r->epochs[i];
    fprintf(f, "metrics posted for %zu epochs; last (epoch %u): AUROC %.4f, accuracy %.4f, loss %.4f\n", shown,
            last->epoch, last->auroc_micro / 1e6, last->accuracy_micro / 1e6, last->loss_micro / 1e6);
  }
  if (r->has_eps) {
    char line[1024];
    bbvfl_privacy_line(&r->priv, line, sizeof line);
    fprintf(f, "privacy: %s\n", line);
    if (!r->priv.reproducible) fprintf(f, "privacy scope: %s\n", BBVFL_ACCT_SCOPE);
    if (r->has_declared) {
      bbvfl_privacy_line(&r->declared, line, sizeof line);
      fprintf(f, "privacy as the session file declares it (row mode; the chain does not record how rows were "
                 "scaled, trained or encoded): %s\n", line);
    }
  }
}

/* ------------------------------------------------------------------ JSON */

static json_t *jhex(const uint8_t *b, size_t n) {
  char s[200];
  bbvfl_hex_encode(b, n, s);
  return json_string(s);
}

static json_t *jaddr(const uint8_t a[20]) {
  char s[43];
  addr_str(a, s);
  return json_string(s);
}

static json_t *ju256(const bbvfl_u256 *v) {
  char d[80];
  bbvfl_u256_to_dec(v, d);
  return json_string(d);
}

/* "checks": every check's status, counts and first failure. */
static json_t *json_checks(const bbvfl_audit_result *r) {
  json_t *checks = json_array();
  for (int c = 0; c < BBVFL_AC_COUNT; c++) {
    const bbvfl_audit_check *k = &r->checks[c];
    json_t *j = json_pack("{s:s,s:s,s:I,s:I,s:s}", "name", bbvfl_audit_check_name(c), "status",
                          bbvfl_audit_status_name(k->status), "checked", (json_int_t)k->checked, "failures",
                          (json_int_t)k->failures, "note", k->note);
    if (k->first.present) {
      const bbvfl_audit_failure *x = &k->first;
      json_t *ff = json_object();
      json_object_set_new(ff, "round", x->has_round ? json_integer((json_int_t)x->round) : json_null());
      json_object_set_new(ff, "epoch", x->has_epoch ? json_integer(x->epoch) : json_null());
      json_object_set_new(ff, "tx", x->has_tx ? jhex(x->tx, 32) : json_null());
      json_object_set_new(ff, "block", x->has_tx ? json_integer((json_int_t)x->block) : json_null());
      json_object_set_new(ff, "client", x->has_client ? jaddr(x->client) : json_null());
      json_object_set_new(ff, "detail", json_string(x->detail));
      json_object_set_new(j, "first_failure", ff);
    } else {
      json_object_set_new(j, "first_failure", json_null());
    }
    json_array_append_new(checks, j);
  }
  return checks;
}

/* "params": the contract's Config and what follows from it. */
static json_t *json_params(const bbvfl_audit_result *r) {
  const bbvfl_cconfig *c = &r->params.cfg;
  json_t *pj =
      json_pack("{s:i,s:i,s:i,s:i,s:f,s:b,s:i,s:i,s:i,s:i,s:I,s:o,s:o}", "clients", c->clients, "batch", (int)c->batch,
                "dim", (int)c->dim, "levels", c->levels, "beta", c->beta_micro / 1e6, "masked", c->masked,
                "lane_bits", r->params.lane_bits, "train_rounds", (int)c->train_rounds, "eval_rounds",
                (int)c->eval_rounds, "epochs", (int)c->epochs, "total_rounds", (json_int_t)r->params.total_rounds,
                "reward_per_submission", ju256(&c->reward_per_submission), "reward_pool", ju256(&c->reward_pool));
  if (pj) {
    json_object_set_new(pj, "batches_per_epoch", json_integer(c->batches_per_epoch));
    json_object_set_new(pj, "window", json_integer(c->window));
    json_object_set_new(pj, "eval_rows", json_integer(c->eval_rows));
    json_object_set_new(pj, "eval_rows_per_round", json_integer(c->eval_rows_per_round));
    json_object_set_new(pj, "train_rows", json_integer(c->train_rows));
    json_object_set_new(pj, "test_rows", json_integer(c->test_rows));
    json_object_set_new(pj, "curv_every", json_integer(c->curv_every));
    json_object_set_new(pj, "curv_rows", json_integer(c->curv_rows));
    json_object_set_new(pj, "curv_rounds_per_epoch", json_integer(c->curv_rounds));
    json_object_set_new(pj, "staleness", json_integer(c->staleness));
    json_object_set_new(pj, "aggregation", json_string(aggregation_name(c)));
    json_object_set_new(pj, "max_coords", json_integer(r->params.max_coords));
  }
  return pj;
}

/* "figures"."epsilon": the privacy figures (per person first; reproducible noise: none). */
static json_t *json_epsilon(const bbvfl_audit_result *r) {
  json_t *eps = json_object();
  /* per person first (names kept for scripts; each with its level); reproducible noise: none */
  const int void_eps = r->has_eps && r->priv.reproducible;
  json_object_set_new(eps, "headline", json_string(BBVFL_PRIVACY_HEADLINE));
  json_object_set_new(eps, "delta", json_real(r->delta));
  json_object_set_new(eps, "sample", r->has_eps && !void_eps ? bbvfl_json_num_or_null(r->eps_sample) : json_null());
  json_object_set_new(eps, "sample_method", json_string(r->has_eps && !void_eps ? r->priv.person.method : "none"));
  json_object_set_new(eps, "labels_protected", json_boolean(r->has_eps && bbvfl_privacy_labels_protected(&r->priv)));
  json_object_set_new(eps, "sample_features",
                      r->has_eps && !void_eps ? bbvfl_json_num_or_null(r->priv.row_sample.epsilon) : json_null());
  json_object_set_new(eps, "sample_level", json_string("per_person"));
  json_object_set_new(eps, "feature", r->has_eps && !void_eps ? bbvfl_json_num_or_null(r->eps_feature) : json_null());
  json_object_set_new(eps, "feature_level", json_string("per_party"));
  if (void_eps) json_object_set_new(eps, "epsilon_void", json_string(BBVFL_PRIVACY_VOID));
  json_object_set_new(eps, "labels",
                      r->has_eps ? json_pack("{s:s, s:o, s:s}", "level", "labels", "epsilon",
                                             isfinite(bbvfl_privacy_shown(&r->priv, &r->priv.labels))
                                                 ? json_real(r->priv.labels.epsilon)
                                                 : json_null(),
                                             "method", void_eps ? "none" : r->priv.labels.method)
                                 : json_null());
  json_object_set_new(eps, "masked_feature",
                      r->has_masked_eps && !void_eps ? json_real(r->eps_masked_feature) : json_null());
  json_object_set_new(eps, "masked_feature_level", json_string("per_party_masked"));
  json_object_set_new(eps, "masked_participants",
                      r->has_masked_eps ? json_integer((json_int_t)r->masked_participants) : json_null());
  json_object_set_new(eps, "at_grid_edge", json_boolean(r->eps_at_edge));
  json_object_set_new(eps, "levels", r->has_eps ? bbvfl_privacy_json(&r->priv) : json_null());
  json_object_set_new(eps, "declared_by_session", r->has_declared ? bbvfl_privacy_json(&r->declared) : json_null());
  return eps;
}

/* "figures": what the chain shows, round by round, client by client, epoch by epoch. */
static json_t *json_figures(const bbvfl_audit_result *r) {
  json_t *fig = json_object();
  json_object_set_new(fig, "logs", json_integer((json_int_t)r->logs));
  json_object_set_new(fig, "rounds", json_integer((json_int_t)r->rounds_completed));
  json_object_set_new(fig, "submissions", json_integer((json_int_t)r->submissions));
  json_object_set_new(fig, "gradients", json_integer((json_int_t)r->gradients));
  json_object_set_new(fig, "curvature_rounds", json_integer((json_int_t)r->curv_rounds));
  json_object_set_new(fig, "epochs", json_integer((json_int_t)r->epochs_completed));
  json_object_set_new(fig, "session_ended", json_boolean(r->session_ended));
  json_object_set_new(fig, "submissions_ahead", json_integer((json_int_t)r->ahead));
  json_object_set_new(fig, "max_rounds_ahead", json_integer((json_int_t)r->max_ahead));
  json_object_set_new(fig, "reelections", json_integer((json_int_t)r->reelections));
  json_object_set_new(fig, "seed", r->has_seed ? jhex(r->seed, 32) : json_null());
  json_object_set_new(fig, "active", r->has_active ? jaddr(r->active) : json_null());
  json_object_set_new(fig, "gas_total", json_integer((json_int_t)r->gas_total));
  json_object_set_new(fig, "rounds_per_bucket", json_integer((json_int_t)r->bucket_width));
  json_t *g = json_array();
  for (size_t i = 0; i < r->nrounds; i++) {
    const bbvfl_audit_round_fig *x = &r->rounds[i];
    json_array_append_new(g, json_pack("{s:I,s:I,s:I,s:I,s:f,s:i}", "round", (json_int_t)x->round_lo, "round_last",
                                       (json_int_t)x->round_hi, "gas", (json_int_t)x->gas, "blocks",
                                       (json_int_t)x->blocks, "seconds", x->seconds, "submissions",
                                       (int)x->submissions));
  }
  json_object_set_new(fig, "gas_per_round", g);
  json_t *cl = json_array();
  for (size_t i = 0; i < r->nclients; i++) {
    const bbvfl_audit_client_fig *x = &r->clients[i];
    json_array_append_new(cl, json_pack("{s:i,s:o,s:I,s:I,s:o,s:o,s:I,s:b,s:i}", "index", x->index, "client",
                                        jaddr(x->addr), "accepted", (json_int_t)x->accepted, "rewarded",
                                        (json_int_t)x->rewarded, "paid", ju256(&x->paid), "transferred",
                                        ju256(&x->transferred), "gas", (json_int_t)x->gas, "excluded", x->excluded,
                                        "excluded_reason", x->excluded_reason));
  }
  json_object_set_new(fig, "rewards_per_client", cl);
  json_t *tk = json_object();
  json_object_set_new(tk, "total_supply", r->has_supply ? ju256(&r->total_supply) : json_null());
  json_object_set_new(tk, "minted", ju256(&r->minted));
  json_object_set_new(tk, "burned", ju256(&r->burned));
  json_object_set_new(tk, "accounts_reconciled", json_integer((json_int_t)r->holders));
  json_object_set_new(fig, "token", tk);
  json_t *me = json_array(), *sc = json_array();
  for (size_t i = 0; i < r->nepochs; i++) {
    const bbvfl_audit_epoch_fig *x = &r->epochs[i];
    if (x->has_metrics)
      json_array_append_new(me, json_pack("{s:i,s:f,s:f,s:f,s:b}", "epoch", (int)x->epoch, "auroc",
                                           x->auroc_micro / 1e6, "accuracy", x->accuracy_micro / 1e6, "loss",
                                           x->loss_micro / 1e6, "rewards_paid", x->rewards_paid));
    if (x->has_digest)
      json_array_append_new(sc, json_pack("{s:i,s:o}", "epoch", (int)x->epoch, "digest", jhex(x->schedule_digest, 32)));
  }
  json_object_set_new(fig, "metrics_per_epoch", me);
  json_object_set_new(fig, "schedule", sc);
  json_object_set_new(fig, "epsilon", json_epsilon(r));
  return fig;
}

json_t *bbvfl_audit_json(const bbvfl_audit_result *r) {
  json_t *o = json_object();
  bbvfl_audit_verdict v = bbvfl_audit_verdict_of(r);
  json_object_set_new(o, "verdict", json_string(bbvfl_audit_verdict_name(v)));
  json_object_set_new(o, "ok", json_boolean(v == BBVFL_AV_PASS));
  json_object_set_new(o, "exit_status", json_integer(bbvfl_audit_exit_status(v)));
  json_object_set_new(o, "complete", json_boolean(r->nmissing == 0));
  json_t *miss = json_array();
  for (unsigned i = 0; i < r->nmissing; i++) json_array_append_new(miss, json_string(r->missing[i]));
  json_object_set_new(o, "missing", miss);
  json_object_set_new(o, "contract", jaddr(r->contract));
  json_object_set_new(o, "token", jaddr(r->token));
  json_object_set_new(o, "chain_id", json_integer((json_int_t)r->chain_id));
  json_object_set_new(o, "from_block", json_integer((json_int_t)r->from_block));
  json_object_set_new(o, "to_block", json_integer((json_int_t)r->to_block));
  json_object_set_new(o, "deploy_block", r->has_deploy ? json_integer((json_int_t)r->deploy_block) : json_null());
  json_object_set_new(o, "elapsed_s", json_real(r->elapsed_s));
  json_object_set_new(o, "code_matches_artifact", r->code_known ? json_boolean(r->code_matches) : json_null());
  json_object_set_new(o, "registration", !r->has_members ? json_null() : json_string(r->registration_open ? "open" : "members"));
  if (r->has_members && !r->registration_open) {
    json_t *mem = json_array();
    for (int i = 0; mem && i < r->nmembers; i++) json_array_append_new(mem, jaddr(r->members[i]));
    json_object_set_new(o, "members", mem);
  }
  json_object_set_new(o, "summary", json_pack("{s:i,s:i,s:i,s:i}", "checks", BBVFL_AC_COUNT, "passed",
                                              (int)bbvfl_rep_count_status(r, BBVFL_AS_PASS), "failed",
                                              (int)bbvfl_rep_count_status(r, BBVFL_AS_FAIL), "skipped",
                                              (int)bbvfl_rep_count_status(r, BBVFL_AS_SKIP)));
  json_t *checks = json_checks(r);
  json_object_set_new(o, "checks", checks);
  json_t *tr = json_array();
  for (size_t i = 0; bbvfl_audit_trusted(i); i++) json_array_append_new(tr, json_string(bbvfl_audit_trusted(i)));
  json_object_set_new(o, "trusted", tr);
  json_object_set_new(o, "head",
                      json_pack("{s:I,s:I,s:I,s:I,s:f,s:f}", "rounds", (json_int_t)r->head_rounds, "exact",
                                (json_int_t)r->head_exact, "batches", (json_int_t)r->head_batches,
                                "curvature_rounds_not_replayed", (json_int_t)r->head_curv_skipped,
                                "max_rel_dev_gradient", r->head_max_dev_grad, "max_rel_dev_params",
                                r->head_max_dev_params));

  json_t *pj = json_params(r);
  json_object_set_new(o, "params", pj);

  json_t *fig = json_figures(r);
  json_object_set_new(o, "figures", fig);
  return o;
}
