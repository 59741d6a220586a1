/* The client's summary (summary.json): built from the run's result and the session, written once. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "core/cfgprivacy.h"
#include "onchain/onchain.h"

/* The run's own figures, in the order summary.json has always had them. */
static json_t *result_json(const bbvfl_onchain_result *r) {
  char S[70];
  bbvfl_hex_encode(r->S, 32, S);
  json_t *o = json_pack("{s:i, s:b, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f}", "index", r->index, "active",
                        r->was_active, "session_seed", S, "rounds", (json_int_t)r->rounds, "submissions",
                        (json_int_t)r->submissions, "gas_submit", (json_int_t)r->gas_submit, "gas_other",
                        (json_int_t)r->gas_other, "wall_s", r->wall_s, "send_s", r->send_s, "wait_s", r->wait_s,
                        "learn_s", r->learn_s, "checkpoint_s", r->ckpt_s);
  if (!o) return NULL;
  json_object_set_new(o, "masked", json_boolean(r->masked));
  json_object_set_new(o, "gas_aggregate", json_integer((json_int_t)r->gas_aggregate));
  json_object_set_new(o, "gas_gradient", json_integer((json_int_t)r->gas_gradient));
  json_object_set_new(o, "participants", json_integer((json_int_t)r->participants));
  json_object_set_new(o, "label_split", json_boolean(r->label_split));
  const char *wei = r->fee_wei[0] ? r->fee_wei : "0";
  json_object_set_new(o, "fees", json_pack("{s:I, s:s, s:f}", "gas_used", (json_int_t)r->fee_gas, "eth_paid_wei", wei,
                                           "eth_paid", strtod(wei, NULL) / 1e18));
  if (r->label_split) {
    json_object_set_new(o, "label_holder", json_boolean(r->label_holder));
    json_object_set_new(o, "label_posts", json_integer((json_int_t)r->label_posts));
    json_object_set_new(o, "labelled_test_rows", json_integer((json_int_t)r->labelled_test_rows));
  }
  /* the passive client's check of the active client (docs/ONCHAIN.md "Passive clients check the head") */
  json_t *hc = json_object();
  if (hc) {
    if (r->head_refused) {
      json_object_set_new(hc, "ok", json_false());
      json_object_set_new(hc, "round", json_integer((json_int_t)r->head_round));
      json_object_set_new(hc, "verdict", json_string(r->head_verdict));
      json_object_set_new(hc, "detail", json_string(r->head_detail));
    } else if (r->head_rounds) {
      json_object_set_new(hc, "ok", json_true());
    } else {
      json_object_set_new(hc, "ok", json_null()); /* nothing checked: why */
      json_object_set_new(hc, "skipped", json_string(r->head_skipped[0] ? r->head_skipped
                                                     : r->was_active ? "the active client (it computes the head)"
                                                                     : "no training round finished"));
    }
    json_object_set_new(hc, "rounds_checked", json_integer((json_int_t)r->head_rounds));
    json_object_set_new(hc, "seconds", json_real(r->head_s));
    json_object_set_new(hc, "ms_per_round", json_real(r->head_rounds ? 1e3 * r->head_s / (double)r->head_rounds : 0));
    json_object_set_new(o, "head_check", hc);
  }
  if (r->per_epoch) {
    json_t *arr = json_array();
    for (int e = 0; arr && e < r->epochs; e++) {
      const bbvfl_epoch_metrics *m = &r->per_epoch[e];
      json_t *ep = json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f}", "epoch", m->epoch, "train_loss", m->train_loss,
                             "test_loss", m->test_loss, "auroc", m->auroc, "accuracy", m->accuracy, "f1", m->f1,
                             "onchain_agg_s", r->agg_s[e]);
      /* nothing measured: an epoch that ended before this process started (a restart), or, with
         labels split across clients, no labelled test rows here */
      int unmeasured = m->epoch == 0, nolab = r->label_split && r->labelled_test_rows == 0;
      if (ep && (unmeasured || nolab)) {
        static const char *const none[] = {"train_loss", "test_loss", "auroc", "accuracy", "f1"};
        json_object_set_new(ep, "epoch", json_integer(e + 1));
        for (size_t k = unmeasured ? 0 : 1; k < sizeof none / sizeof none[0]; k++)
          json_object_set_new(ep, none[k], json_null());
      }
      json_array_append_new(arr, ep);
    }
    json_object_set_new(o, "epochs", arr);
  }
  return o;
}

/* "privacy": the figures as printed (kept for scripts: epsilon_sample, the per-person headline
   with the label, first, then epsilon_sample_features and epsilon_feature, per party, and in
   masked mode _feature_masked, each with its "_level": bbvfl_privacy_json_top) and "levels",
   every level with its method, from the accountant. Reproducible noise: all null, with
   "epsilon_void". */
static json_t *privacy_json(const bbvfl_privacy *pv, const bbvfl_onchain_result *r, double delta) {
  json_t *pr = json_object();
  if (!pr) return NULL;
  bbvfl_privacy_json_top(pr, pv);
  json_object_set_new(pr, "delta", json_real(delta));
  json_object_set_new(pr, "reproducible_noise", json_boolean(pv->reproducible));
  json_object_set_new(pr, "masked", json_boolean(r->masked));
  json_object_set_new(pr, "participants", json_integer((int)r->participants));
  json_object_set_new(pr, "levels", bbvfl_privacy_json(pv));
  if (pr && r->masked) {
    json_object_set_new(pr, "epsilon_feature_masked",
                        bbvfl_json_num_or_null(bbvfl_privacy_shown(pv, &pv->masked_row_feature)));
    json_object_set_new(pr, "epsilon_feature_masked_level", json_string("per_party_masked"));
  }
  return pr;
}

int bbvfl_onchain_summary_write(const bbvfl_session *s, const bbvfl_onchain_result *res, double delta,
                                const char *path, bbvfl_onchain_summary *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  json_t *o = result_json(res);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "summary: out of memory");
  if (res->was_active) {
    /* the session's privacy for the participants this client saw (masked: M minus dropouts) */
    bbvfl_offchain_cfg tc = s->train;
    tc.M = (int)s->cparams.clients;
    if (bbvfl_cfg_privacy(&tc, res->n_train, res->masked, (int)res->participants, delta, &out->privacy,
                          &out->privacy_err) == 0) {
      json_t *pr = privacy_json(&out->privacy, res, delta);
      if (!pr) {
        json_decref(o);
        return bbvfl_fail(err, BBVFL_E_NOMEM, "summary: out of memory");
      }
      json_object_set_new(o, "privacy", pr);
      out->privacy_done = 1;
    }
  }
  char *text = json_dumps(o, JSON_INDENT(2));
  if (!text) {
    json_decref(o);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "summary: out of memory");
  }
  int rc = bbvfl_write_file_atomic(path, text, strlen(text), 0644, err);
  free(text);
  if (rc < 0) {
    json_decref(o);
    return bbvfl_wrap(err, "writing the summary %s", path);
  }
  out->json = o;
  return 0;
}

void bbvfl_onchain_summary_free(bbvfl_onchain_summary *sm) {
  if (!sm) return;
  json_decref(sm->json);
  memset(sm, 0, sizeof *sm);
}
