#include "audit/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "dp/accountant.h"
#include "eth/hex.h"
#include "eth/wallet.h"
#include "binding/packing.h"

static void addr_str(const uint8_t a[20], char out[43]) { bbvfl_addr_checksum(a, out); }

static void hex32(const uint8_t h[32], char out[67]) { bbvfl_hex_encode(h, 32, out); }

static double u256_to_double(const bbvfl_u256 *v) {
  double x = 0;
  for (int i = 0; i < 32; i++) x = x * 256.0 + v->be[i];
  return x;
}

static size_t count_status(const bbvfl_audit_result *r, bbvfl_audit_status s) {
  size_t n = 0;
  for (int c = 0; c < BBVFL_AC_COUNT; c++) n += r->checks[c].status == s;
  return n;
}

/* The product contract of the session's aggregation mode. */
static const char *artifact_name(const bbvfl_audit_result *r) {
  return bbvfl_wire_contract(r->params.cfg.wire);
}

/* "lanes", "hashed", "packed" or "optimistic" (how a round's sum is formed on chain). */
static const char *aggregation_name(const bbvfl_cconfig *c) {
  static const char *const names[] = {"lanes", "hashed", "packed", "optimistic"};
  return c->wire >= 0 && c->wire < 4 ? names[c->wire] : "unknown";
}

/* The round structure in one phrase: windows, evaluation rounds, staleness, aggregation. */
static void rounds_phrase(FILE *f, const bbvfl_audit_result *r) {
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
  rounds_phrase(f, r);
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

static void failure_text(FILE *f, const bbvfl_audit_failure *x) {
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
            artifact_name(r), r->code_matches ? "" : " (the checks verify behaviour)");
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
  fprintf(f, "  checks: %zu passed, %zu failed, %zu skipped (audit took %.2f s)\n\n", count_status(r, BBVFL_AS_PASS),
          count_status(r, BBVFL_AS_FAIL), count_status(r, BBVFL_AS_SKIP), r->elapsed_s);
  for (int c = 0; c < BBVFL_AC_COUNT; c++) {
    const bbvfl_audit_check *k = &r->checks[c];
    fprintf(f, "%s %-13s %llu checked", bbvfl_audit_status_name(k->status), bbvfl_audit_check_name(c),
            (unsigned long long)k->checked);
    if (k->status == BBVFL_AS_FAIL) {
      fprintf(f, ", %llu discrepancies; first:", (unsigned long long)k->failures);
      failure_text(f, &k->first);
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
  json_object_set_new(o, "summary", json_pack("{s:i,s:i,s:i,s:i}", "checks", BBVFL_AC_COUNT, "passed",
                                              (int)count_status(r, BBVFL_AS_PASS), "failed",
                                              (int)count_status(r, BBVFL_AS_FAIL), "skipped",
                                              (int)count_status(r, BBVFL_AS_SKIP)));
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
  json_object_set_new(o, "params", pj);

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
  json_t *eps = json_object();
  /* per person first (names kept for scripts; each with its level); reproducible noise: none */
  const int void_eps = r->has_eps && r->priv.reproducible;
  json_object_set_new(eps, "headline", json_string(BBVFL_PRIVACY_HEADLINE));
  json_object_set_new(eps, "delta", json_real(r->delta));
  json_object_set_new(eps, "sample", r->has_eps && !void_eps ? json_real(r->eps_sample) : json_null());
  json_object_set_new(eps, "sample_level", json_string("per_person"));
  json_object_set_new(eps, "feature", r->has_eps && !void_eps ? json_real(r->eps_feature) : json_null());
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
  json_object_set_new(fig, "epsilon", eps);
  json_object_set_new(o, "figures", fig);
  return o;
}

/* ------------------------------------------------------------------ HTML */

static void esc(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

typedef struct {
  const char *name, *color;
  const double *y;
} series;

static double nice_max(double v) {
  if (!(v > 0)) return 1;
  double p = pow(10, floor(log10(v)));
  double m = v / p;
  double n = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
  return n * p;
}

/* A line chart (bars when bars = 1, grouped by series) of n points; x labels from xs. */
static void svg_chart(FILE *f, const char *title, const char *xlabel, const double *xs, size_t n, const series *s,
                      size_t ns, int bars, double ymax_fixed) {
  const double W = 560, L = 70, R = 12, T = 30 + 14.0 * (double)ns, B = 42, H = 232 + 14.0 * (double)ns;
  double pw = W - L - R, ph = H - T - B;
  double ymax = 0;
  for (size_t k = 0; k < ns; k++)
    for (size_t i = 0; i < n; i++)
      if (isfinite(s[k].y[i]) && s[k].y[i] > ymax) ymax = s[k].y[i];
  ymax = ymax_fixed > 0 ? ymax_fixed : nice_max(ymax);
  fprintf(f, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
          W, H, W, H);
  fprintf(f, "<text x=\"%.0f\" y=\"18\" class=\"t\">", L);
  esc(f, title);
  fputs("</text>\n", f);
  for (int g = 0; g <= 4; g++) {
    double y = T + ph - ph * g / 4.0;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", L, y, L + pw, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"yl\">%.4g</text>\n", L - 6, y + 4, ymax * g / 4.0);
  }
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>", L, T + ph, L + pw, T + ph);
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", L, T, L, T + ph);
  if (n > 0) {
    size_t step = n > 8 ? (n + 7) / 8 : 1;
    for (size_t i = 0; i < n; i += step) {
      double x = bars ? L + pw * (i + 0.5) / n : (n == 1 ? L + pw / 2 : L + pw * i / (double)(n - 1));
      fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"xl\">%.6g</text>", x, T + ph + 16, xs[i]);
    }
    if (bars) {
      double gw = pw / n, bw = gw * 0.8 / ns;
      for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < n; i++) {
          double v = isfinite(s[k].y[i]) ? s[k].y[i] : 0;
          double h = ph * (v > ymax ? 1 : v / ymax);
          fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>%.6g</title></rect>",
                  L + gw * i + gw * 0.1 + bw * k, T + ph - h, bw > 0.5 ? bw : 0.5, h, s[k].color, v);
        }
    } else {
      for (size_t k = 0; k < ns; k++) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", s[k].color);
        for (size_t i = 0; i < n; i++) {
          double v = isfinite(s[k].y[i]) ? s[k].y[i] : 0;
          double x = n == 1 ? L + pw / 2 : L + pw * i / (double)(n - 1);
          fprintf(f, "%.2f,%.2f ", x, T + ph - ph * (v > ymax ? 1 : v / ymax));
        }
        fputs("\"/>\n", f);
        if (n <= 60)
          for (size_t i = 0; i < n; i++) {
            double v = isfinite(s[k].y[i]) ? s[k].y[i] : 0;
            double x = n == 1 ? L + pw / 2 : L + pw * i / (double)(n - 1);
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.2\" fill=\"%s\"/>", x,
                    T + ph - ph * (v > ymax ? 1 : v / ymax), s[k].color);
          }
      }
    }
  } else {
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"xl\">no data</text>", L + pw / 2, T + ph / 2);
  }
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"xl\">", L + pw / 2, H - 6);
  esc(f, xlabel);
  fputs("</text>\n", f);
  for (size_t k = 0; k < ns; k++) {
    double x = L + 4, y = 24 + 14.0 * (double)k; /* legend rows between the title and the plot */
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" class=\"lg\">",
            x, y, s[k].color, x + 14, y + 9);
    esc(f, s[k].name);
    fputs("</text>\n", f);
  }
  fputs("</svg></figure>\n", f);
}

static const char CSS[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1d232a;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd}"
    ".verdict{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:600}"
    ".ok{background:#1f7a3a}.bad{background:#b3261e}.inc{background:#a15c00}"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #d5d9de;padding:4px 8px;text-align:left}"
    "th{background:#f2f4f6}td.PASS{color:#1f7a3a;font-weight:600}td.FAIL{color:#b3261e;font-weight:600}"
    "td.SKIP{color:#6b7280;font-weight:600}code{font-size:12px}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0;border:1px solid #e3e6ea;border-radius:4px}"
    "svg .t{font-size:14px;font-weight:600;fill:#1d232a}svg .yl{font-size:11px;text-anchor:end;fill:#555}"
    "svg .xl{font-size:11px;text-anchor:middle;fill:#555}svg .lg{font-size:11px;fill:#333}"
    "svg .grid{stroke:#eceff2}svg .axis{stroke:#888}";

char *bbvfl_audit_html(const bbvfl_audit_result *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  char a[43], t[43], h[67];
  addr_str(r->contract, a);
  addr_str(r->token, t);
  const bbvfl_cconfig *c = &r->params.cfg;
  char *rounds = NULL;
  size_t rlen = 0;
  FILE *rf = open_memstream(&rounds, &rlen);
  if (rf) {
    rounds_phrase(rf, r);
    fclose(rf);
  }
  fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
             "<title>bbvfl audit %s</title><style>%s</style></head><body>\n",
          a, CSS);
  bbvfl_audit_verdict v = bbvfl_audit_verdict_of(r);
  fprintf(f, "<h1>bbvfl audit of %s</h1>\n<p><span class=\"verdict %s\">%s</span> %zu passed, %zu failed, %zu skipped</p>\n",
          a, v == BBVFL_AV_PASS ? "ok" : v == BBVFL_AV_FAIL ? "bad" : "inc",
          v == BBVFL_AV_PASS ? "PASS: every check holds"
          : v == BBVFL_AV_FAIL ? "FAIL: discrepancies found"
                               : "INCOMPLETE: the session has not finished",
          count_status(r, BBVFL_AS_PASS), count_status(r, BBVFL_AS_FAIL), count_status(r, BBVFL_AS_SKIP));
  if (r->nmissing) {
    fprintf(f, "<p>The session has not finished by block %llu%s. Missing:</p>\n<ul>", (unsigned long long)r->to_block,
            v == BBVFL_AV_FAIL ? " (and a check failed)" : "; no check failed so far");
    for (unsigned i = 0; i < r->nmissing; i++) {
      fputs("<li>", f);
      esc(f, r->missing[i]);
      fputs("</li>", f);
    }
    fputs("</ul>\n", f);
  }
  fprintf(f, "<table><tr><th>chain</th><td>%llu</td><th>blocks</th><td>%llu .. %llu</td></tr>"
             "<tr><th>token</th><td><code>%s</code></td><th>deployed in block</th><td>%s%llu</td></tr>"
             "<tr><th>deployed code</th><td colspan=\"3\">%s abi/%s.json</td></tr>"
             "<tr><th>session</th><td colspan=\"3\">M=%u, B=%u, P=%u, b=%u, beta=%.6g, %u-bit lanes, %s mode</td></tr>"
             "<tr><th>rounds</th><td colspan=\"3\">%s</td></tr>"
             "<tr><th>read</th><td colspan=\"3\">%llu logs: %llu rounds complete, %llu submissions, %llu gradients, "
             "%llu epochs, %s%s; audit took %.2f s</td></tr></table>\n",
          (unsigned long long)r->chain_id, (unsigned long long)r->from_block, (unsigned long long)r->to_block, t,
          r->has_deploy ? "" : "not in range ", (unsigned long long)r->deploy_block,
          !r->code_known     ? "not compared (no artifact)"
          : r->code_matches ? "identical to the product artifact"
                            : "DIFFERS from the product artifact (the checks verify behaviour):",
          artifact_name(r),
          c->clients, c->batch, c->dim,
          c->levels, c->beta_micro / 1e6, r->params.lane_bits, c->masked ? "masked" : "plain", rounds ? rounds : "",
          (unsigned long long)r->logs,
          (unsigned long long)r->rounds_completed, (unsigned long long)r->submissions,
          (unsigned long long)r->gradients, (unsigned long long)r->epochs_completed,
          r->session_ended ? "session ended" : "session still running",
          r->reelections ? ", with re-elections" : "", r->elapsed_s);
  free(rounds);

  fputs("<h2>Checks</h2>\n<table><tr><th>check</th><th>status</th><th>checked</th><th>discrepancies</th>"
        "<th>first discrepancy / note</th></tr>\n", f);
  for (int k = 0; k < BBVFL_AC_COUNT; k++) {
    const bbvfl_audit_check *x = &r->checks[k];
    fprintf(f, "<tr><td>%s</td><td class=\"%s\">%s</td><td>%llu</td><td>%llu</td><td>", bbvfl_audit_check_name(k),
            bbvfl_audit_status_name(x->status), bbvfl_audit_status_name(x->status), (unsigned long long)x->checked,
            (unsigned long long)x->failures);
    if (x->first.present) {
      char *line = NULL;
      size_t ll = 0;
      FILE *m = open_memstream(&line, &ll);
      if (m) {
        failure_text(m, &x->first);
        fclose(m);
        esc(f, line);
        free(line);
      }
    } else {
      esc(f, x->note);
    }
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
  fputs("<h2>Trusted (the chain cannot show it)</h2>\n<ul>\n", f);
  for (size_t i = 0; bbvfl_audit_trusted(i); i++) {
    fputs("<li>", f);
    esc(f, bbvfl_audit_trusted(i));
    fputs("</li>\n", f);
  }
  fputs("</ul>\n", f);

  /* per-round gas and timing */
  size_t n = r->nrounds;
  double *xs = calloc(n ? n : 1, sizeof *xs), *gas = calloc(n ? n : 1, sizeof *gas),
         *secs = calloc(n ? n : 1, sizeof *secs), *blocks = calloc(n ? n : 1, sizeof *blocks);
  if (xs && gas && secs && blocks) {
    for (size_t i = 0; i < n; i++) {
      const bbvfl_audit_round_fig *x = &r->rounds[i];
      double w = (double)(x->round_hi - x->round_lo + 1);
      xs[i] = (double)x->round_lo;
      gas[i] = (double)x->gas / w;
      secs[i] = x->seconds / w;
      blocks[i] = (double)x->blocks / w;
    }
    fprintf(f, "<h2>Rounds</h2>\n<p>Gas of the M submissions%s and the gradient post of each round; time from the "
               "block that opened the round to the block that completed it (block timestamps, 1 s resolution)%s.</p>\n"
               "<div class=\"charts\">\n",
            c->hashed ? ", the aggregate() call" : "",
            r->bucket_width > 1 ? "; long history: each point averages adjacent rounds" : "");
    series sg = {"gas", "#2f6db5", gas};
    svg_chart(f, "gas per round", "round", xs, n, &sg, 1, 0, 0);
    series st[2] = {{"seconds", "#c0562b", secs}, {"blocks", "#6a9f3a", blocks}};
    svg_chart(f, "duration per round", "round", xs, n, st, 2, 0, 0);
    fputs("</div>\n", f);
  }
  free(xs);
  free(gas);
  free(secs);
  free(blocks);

  /* per-client contributions and rewards */
  size_t m = r->nclients;
  double *ci = calloc(m ? m : 1, sizeof *ci), *acc = calloc(m ? m : 1, sizeof *acc),
         *rew = calloc(m ? m : 1, sizeof *rew), *tok = calloc(m ? m : 1, sizeof *tok);
  if (ci && acc && rew && tok) {
    double rate = u256_to_double(&c->reward_per_submission);
    for (size_t i = 0; i < m; i++) {
      ci[i] = (double)i;
      acc[i] = (double)r->clients[i].accepted;
      rew[i] = (double)r->clients[i].rewarded;
      tok[i] = rate > 0 ? u256_to_double(&r->clients[i].transferred) / rate : 0;
    }
    fputs("<h2>Clients</h2>\n<div class=\"charts\">\n", f);
    series sc[3] = {{"accepted submissions", "#2f6db5", acc}, {"rewarded", "#6a9f3a", rew},
                    {"tokens received / rate", "#d4a017", tok}};
    svg_chart(f, "contributions and rewards per client", "client index", ci, m, sc, 3, 1, 0);
    fputs("</div>\n<table><tr><th>index</th><th>client</th><th>accepted</th><th>rewarded</th><th>paid (RewardsPaid)</th>"
          "<th>received (Transfer)</th><th>gas</th><th>status</th></tr>\n", f);
    for (size_t i = 0; i < m; i++) {
      const bbvfl_audit_client_fig *x = &r->clients[i];
      char d1[80], d2[80];
      addr_str(x->addr, a);
      bbvfl_u256_to_dec(&x->paid, d1);
      bbvfl_u256_to_dec(&x->transferred, d2);
      fprintf(f, "<tr><td>%u</td><td><code>%s</code></td><td>%llu</td><td>%llu</td><td>%s</td><td>%s</td><td>%llu</td>"
                 "<td>%s</td></tr>\n",
              x->index, a, (unsigned long long)x->accepted, (unsigned long long)x->rewarded, d1, d2,
              (unsigned long long)x->gas,
              !x->excluded ? "participant" : x->excluded_reason == 1 ? "excluded: no commit"
                                             : x->excluded_reason == 2 ? "excluded: no reveal"
                                                                       : "excluded: missed a round");
    }
    fputs("</table>\n", f);
  }
  free(ci);
  free(acc);
  free(rew);
  free(tok);

  /* metrics per epoch */
  size_t ne = 0;
  for (size_t i = 0; i < r->nepochs; i++) ne += r->epochs[i].has_metrics;
  double *ex = calloc(ne ? ne : 1, sizeof *ex), *au = calloc(ne ? ne : 1, sizeof *au),
         *ac = calloc(ne ? ne : 1, sizeof *ac), *lo = calloc(ne ? ne : 1, sizeof *lo);
  if (ex && au && ac && lo) {
    size_t k = 0;
    for (size_t i = 0; i < r->nepochs; i++)
      if (r->epochs[i].has_metrics) {
        ex[k] = r->epochs[i].epoch;
        au[k] = r->epochs[i].auroc_micro / 1e6;
        ac[k] = r->epochs[i].accuracy_micro / 1e6;
        lo[k] = r->epochs[i].loss_micro / 1e6;
        k++;
      }
    fputs("<h2>Metrics posted per epoch</h2>\n<div class=\"charts\">\n", f);
    series sm[2] = {{"AUROC", "#2f6db5", au}, {"accuracy", "#6a9f3a", ac}};
    svg_chart(f, "test AUROC and accuracy", "epoch", ex, ne, sm, 2, 0, 1.0);
    series sl = {"loss", "#c0562b", lo};
    svg_chart(f, "test loss", "epoch", ex, ne, &sl, 1, 0, 0);
    fputs("</div>\n", f);
  }
  free(ex);
  free(au);
  free(ac);
  free(lo);

  fputs("<h2>Election, schedule and privacy</h2>\n<table>", f);
  if (r->has_seed) {
    hex32(r->seed, h);
    fprintf(f, "<tr><th>session seed S</th><td><code>%s</code></td></tr>", h);
  }
  if (r->has_active) {
    addr_str(r->active, a);
    fprintf(f, "<tr><th>active client (last)</th><td><code>%s</code> (%llu re-elections)</td></tr>", a,
            (unsigned long long)r->reelections);
  }
  for (size_t i = 0; i < r->nepochs && i < 3; i++)
    if (r->epochs[i].has_digest) {
      hex32(r->epochs[i].schedule_digest, h);
      fprintf(f, "<tr><th>schedule digest, epoch %u</th><td><code>%s</code></td></tr>", r->epochs[i].epoch, h);
    }
  if (r->has_eps) {
    const bbvfl_privacy *p = &r->priv;
    if (p->reproducible)
      fprintf(f, "<tr><th>epsilon, every level</th><td>%s</td></tr>", BBVFL_PRIVACY_VOID);
    if (!p->reproducible) {
    fprintf(f, "<tr><th>epsilon per person: one person's whole row, all parties (delta %g)</th><td>%.4g (%s)</td></tr>",
            r->delta, p->row_sample.epsilon, p->row_sample.method);
    fprintf(f, "<tr><th>epsilon per party: one party's columns of a row</th><td>%.4g (%s)</td></tr>",
            p->row_feature.epsilon, p->row_feature.method);
    if (r->has_declared)
      fprintf(f, "<tr><th>per person, as the session file declares (row mode, end to end if so; not on "
                 "chain)</th><td>%.4g (%s)</td></tr>",
              r->declared.row_sample.epsilon, r->declared.row_sample.method);
    if (isfinite(p->labels.epsilon))
      fprintf(f, "<tr><th>epsilon, labels (one row's label; randomized response, as declared)</th><td>%.4g (rr)</td></tr>",
              p->labels.epsilon);
    else
      fprintf(f, "<tr><th>labels</th><td>unprotected: the posted gradients give them back</td></tr>");
    if (!isnan(p->feature_set.epsilon))
      fprintf(f, "<tr><th>epsilon per party, its whole column set (%d rows)</th><td>%.4g (%s)</td></tr>", p->rows,
              p->feature_set.epsilon, p->feature_set.method);
    if (r->has_masked_eps)
      fprintf(f, "<tr><th>epsilon per party, masked (against one participant)</th><td>%.4g (%s)</td></tr>",
              p->masked_row_feature.epsilon, p->masked_row_feature.method);
    fprintf(f, "<tr><th>what these are</th><td>not end-to-end: %s</td></tr>", BBVFL_ACCT_SCOPE);
    }
  }
  fputs("</table>\n<p>Generated by bbvfl audit from the chain alone: events, signed transactions, receipts and "
        "block headers.</p>\n</body></html>\n", f);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

int bbvfl_audit_write_html(const bbvfl_audit_result *r, const char *path, bbvfl_err *err) {
  char *s = bbvfl_audit_html(r);
  if (!s) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory while writing the HTML report");
  int rc = bbvfl_write_file_atomic(path, s, strlen(s), 0644, err);
  free(s);
  return rc;
}
