/* The audit's reports and figure buckets, on a hand-made result (no chain): the JSON interface
 * (field names the issue spells out), the text report's order (verdict first, then one line per
 * check with the first offending round, transaction and client), the HTML page (self-contained,
 * escaped, one SVG per chart), the round structure in every form (window, staleness, aggregation
 * mode, T and V per epoch), the fixed-size per-round buckets of long histories, and the verdicts
 * (PASS, FAIL, INCOMPLETE with what is missing, FAIL winning) with their exit statuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "audit/report.h"
#include "binding/packing.h"

static void make_result(bbvfl_audit_result *r, int failing) {
  memset(r, 0, sizeof *r);
  r->ok = !failing;
  r->params.cfg.clients = 2;
  r->params.cfg.batch = 2;
  r->params.cfg.dim = 3;
  r->params.cfg.levels = 4;
  r->params.cfg.beta_micro = 200000;
  r->params.cfg.batches_per_epoch = 3; /* windows of K = 2: T = 2 (the last carries 1 batch) */
  r->params.cfg.window = 2;
  r->params.cfg.eval_rows = 5;
  r->params.cfg.eval_rows_per_round = 5;
  r->params.cfg.train_rows = 7;
  r->params.cfg.test_rows = 5;
  r->params.cfg.staleness = 1;
  r->params.cfg.hashed = 1;
  r->params.cfg.wire = BBVFL_WIRE_HASHED; /* the contract's kind, which names the aggregation */
  r->params.cfg.train_rounds = 2;
  r->params.cfg.eval_rounds = 1;
  r->params.cfg.epochs = 2;
  r->params.cfg.reward_per_submission = bbvfl_u256_from_u64(1000);
  r->params.cfg.reward_pool = bbvfl_u256_from_u64(12000);
  r->params.lane_bits = 8;
  r->params.total_rounds = 6;
  r->rounds = calloc(BBVFL_AUDIT_MAX_BUCKETS, sizeof *r->rounds);
  assert_non_null(r->rounds);
  for (uint64_t k = 0; k < 6; k++) bbvfl_audit_push_round(r, k, 1000 + k, 2, 1.0, 2);
  r->rounds_completed = 6;
  r->submissions = 12;
  r->nclients = 2;
  r->clients = calloc(2, sizeof *r->clients);
  for (int i = 0; i < 2; i++) {
    memset(r->clients[i].addr, 0x11 * (i + 1), 20);
    r->clients[i].index = (uint8_t)i;
    r->clients[i].accepted = r->clients[i].rewarded = 6;
    r->clients[i].transferred = r->clients[i].paid = bbvfl_u256_from_u64(6000);
  }
  r->nepochs = 2;
  r->epochs = calloc(2, sizeof *r->epochs);
  for (int e = 0; e < 2; e++) {
    r->epochs[e].epoch = (uint32_t)e;
    r->epochs[e].has_metrics = 1;
    r->epochs[e].auroc_micro = 900000 + 10000 * (uint32_t)e;
    r->epochs[e].accuracy_micro = 850000;
    r->epochs[e].loss_micro = 400000;
    r->epochs[e].rewards_paid = 1;
  }
  r->has_eps = 1;
  r->eps_feature = 12.5;
  r->eps_sample = 25.0;
  r->delta = 1e-5;
  r->checks[BBVFL_AC_SCHEDULE].status = BBVFL_AS_SKIP;
  snprintf(r->checks[BBVFL_AC_SCHEDULE].note, sizeof r->checks[BBVFL_AC_SCHEDULE].note, "needs <rows> & more");
  if (failing) {
    bbvfl_audit_check *c = &r->checks[BBVFL_AC_SUMS];
    c->status = BBVFL_AS_FAIL;
    c->failures = 2;
    c->first.present = 1;
    c->first.has_round = 1;
    c->first.round = 4;
    c->first.has_tx = 1;
    memset(c->first.tx, 0xab, 32);
    c->first.has_client = 1;
    memset(c->first.client, 0x22, 20);
    snprintf(c->first.detail, sizeof c->first.detail, "lane 3: emitted 9, the submitted bytes add up to 8 <script>");
  }
}

static json_t *find_check(json_t *doc, const char *name) {
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(doc, "checks"), i, c) if (!strcmp(json_string_value(json_object_get(c, "name")), name)) return c;
  return NULL;
}

static void test_json_interface(void **st) {
  (void)st;
  bbvfl_audit_result r;
  make_result(&r, 1);
  json_t *doc = bbvfl_audit_json(&r);
  assert_non_null(doc);
  assert_true(json_is_false(json_object_get(doc, "ok")));
  assert_int_equal(json_array_size(json_object_get(doc, "checks")), BBVFL_AC_COUNT);
  json_t *sum = json_object_get(doc, "summary");
  assert_int_equal(json_integer_value(json_object_get(sum, "failed")), 1);
  assert_int_equal(json_integer_value(json_object_get(sum, "skipped")), 1);
  assert_int_equal(json_integer_value(json_object_get(sum, "passed")), BBVFL_AC_COUNT - 2);
  json_t *c = find_check(doc, "sums");
  assert_string_equal(json_string_value(json_object_get(c, "status")), "FAIL");
  json_t *ff = json_object_get(c, "first_failure");
  assert_int_equal(json_integer_value(json_object_get(ff, "round")), 4);
  assert_true(json_is_null(json_object_get(ff, "epoch")));
  assert_string_equal(json_string_value(json_object_get(ff, "tx")),
                      "0xabababababababababababababababababababababababababababababababab");
  assert_string_equal(json_string_value(json_object_get(ff, "client")), "0x2222222222222222222222222222222222222222");
  assert_true(json_is_null(json_object_get(find_check(doc, "params"), "first_failure")));
  json_t *f = json_object_get(doc, "figures");
  assert_int_equal(json_integer_value(json_object_get(f, "rounds")), 6);
  assert_int_equal(json_array_size(json_object_get(f, "gas_per_round")), 6);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(f, "gas_per_round"), 5), "gas")), 1005);
  assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(f, "rewards_per_client"), 1),
                                                        "transferred")),
                      "6000");
  assert_int_equal(json_array_size(json_object_get(f, "metrics_per_epoch")), 2);
  assert_true(json_real_value(json_object_get(json_object_get(f, "epsilon"), "feature")) == 12.5);
  /* the round structure: window, staleness, aggregation mode, T and V per epoch */
  json_t *pa = json_object_get(doc, "params");
  assert_int_equal(json_integer_value(json_object_get(pa, "window")), 2);
  assert_int_equal(json_integer_value(json_object_get(pa, "batches_per_epoch")), 3);
  assert_int_equal(json_integer_value(json_object_get(pa, "staleness")), 1);
  assert_string_equal(json_string_value(json_object_get(pa, "aggregation")), "hashed");
  assert_int_equal(json_integer_value(json_object_get(pa, "train_rounds")), 2);
  assert_int_equal(json_integer_value(json_object_get(pa, "eval_rounds")), 1);
  assert_int_equal(json_integer_value(json_object_get(pa, "train_rows")), 7);
  assert_int_equal(json_integer_value(json_object_get(pa, "eval_rows_per_round")), 5);
  json_decref(doc);
  bbvfl_audit_result_free(&r);
}

static void test_text_report_order(void **st) {
  (void)st;
  bbvfl_audit_result r;
  make_result(&r, 1);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  bbvfl_audit_print_text(f, &r);
  fclose(f);
  assert_true(strncmp(buf, "bbvfl audit: FAIL", 17) == 0);
  const char *line = strstr(buf, "\nFAIL sums");
  assert_non_null(line);
  assert_non_null(strstr(line, "round 4"));
  assert_non_null(strstr(line, "tx 0xabab"));
  assert_non_null(strstr(line, "client 0x2222"));
  assert_true(strstr(buf, "PASS params") < line); /* checks in report order, after the summary */
  const char *rl = strstr(buf, "  rounds: ");
  assert_non_null(rl);
  assert_true(rl < line);
  assert_non_null(strstr(rl, "T=2 TRAIN rounds (R=3 minibatches, window K=2) + V=1 EVAL rounds"));
  assert_non_null(strstr(rl, "hashed aggregation, staleness 1"));
  free(buf);
  bbvfl_audit_result_free(&r);
}

static void test_html_self_contained(void **st) {
  (void)st;
  bbvfl_audit_result r;
  make_result(&r, 1);
  char *h = bbvfl_audit_html(&r);
  assert_non_null(h);
  assert_true(strncmp(h, "<!DOCTYPE html>", 15) == 0);
  assert_null(strstr(h, "<script"));          /* the failure detail is escaped, no script at all */
  assert_non_null(strstr(h, "8 &lt;script&gt;"));
  assert_non_null(strstr(h, "needs &lt;rows&gt; &amp; more"));
  assert_null(strstr(h, "url(")); /* nothing to fetch: no CSS urls, imports, sources or links */
  assert_null(strstr(h, "@import"));
  assert_null(strstr(h, "src="));
  assert_null(strstr(h, "<link"));
  size_t svgs = 0;
  for (const char *p = h; (p = strstr(p, "<svg")); p++) svgs++;
  assert_int_equal(svgs, 5); /* gas, duration, clients, AUROC/accuracy, loss */
  assert_non_null(strstr(h, "FAIL: discrepancies found"));
  assert_non_null(strstr(h, "window K=2"));
  assert_non_null(strstr(h, "hashed aggregation, staleness 1"));
  assert_non_null(strstr(h, "</html>"));
  free(h);
  bbvfl_audit_result_free(&r);
}

static void test_round_buckets_stay_bounded(void **st) {
  (void)st;
  bbvfl_audit_result r;
  memset(&r, 0, sizeof r);
  r.rounds = calloc(BBVFL_AUDIT_MAX_BUCKETS, sizeof *r.rounds);
  assert_non_null(r.rounds);
  const uint64_t n = 3 * BBVFL_AUDIT_MAX_BUCKETS + 5;
  for (uint64_t k = 0; k < n; k++) bbvfl_audit_push_round(&r, k, 10, 1, 0.5, 3);
  assert_true(r.nrounds <= BBVFL_AUDIT_MAX_BUCKETS);
  assert_int_equal(r.bucket_width, 4);
  uint64_t gas = 0, subs = 0, next = 0;
  for (size_t i = 0; i < r.nrounds; i++) { /* contiguous, complete, totals preserved */
    assert_int_equal(r.rounds[i].round_lo, next);
    assert_true(r.rounds[i].round_hi - r.rounds[i].round_lo + 1 <= r.bucket_width);
    next = r.rounds[i].round_hi + 1;
    gas += r.rounds[i].gas;
    subs += r.rounds[i].submissions;
  }
  assert_int_equal(next, n);
  assert_int_equal(gas, 10 * n);
  assert_int_equal(subs, 3 * n);
  assert_int_equal(r.gas_total, 10 * n);
  bbvfl_audit_result_free(&r);
}

static void test_check_names(void **st) {
  (void)st;
  const char *want[] = {"params", "registration", "election", "submissions", "sums",
                        "contributors", "schedule", "gradients", "metrics", "rewards", "balances", "privacy", "head"};
  for (int i = 0; i < BBVFL_AC_COUNT; i++) assert_string_equal(bbvfl_audit_check_name(i), want[i]);
  assert_string_equal(bbvfl_audit_status_name(BBVFL_AS_FAIL), "FAIL");
}

/* The verdict: PASS only for a finished session with no failed check; INCOMPLETE (exit 8) for an
 * unfinished one, with what it lacks, in every report; FAIL (exit 3) wins over INCOMPLETE. */
static void test_verdicts(void **st) {
  (void)st;
  bbvfl_audit_result r;
  make_result(&r, 0);
  assert_int_equal(bbvfl_audit_verdict_of(&r), BBVFL_AV_PASS);
  assert_int_equal(bbvfl_audit_exit_status(BBVFL_AV_PASS), 0);
  json_t *doc = bbvfl_audit_json(&r);
  assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "PASS");
  assert_true(json_is_true(json_object_get(doc, "ok")) && json_is_true(json_object_get(doc, "complete")));
  assert_int_equal(json_array_size(json_object_get(doc, "missing")), 0);
  json_decref(doc);

  r.nmissing = 2;
  snprintf(r.missing[0], sizeof r.missing[0], "rounds: 3 of 6 done");
  snprintf(r.missing[1], sizeof r.missing[1], "no SessionEnded <event>");
  assert_int_equal(bbvfl_audit_verdict_of(&r), BBVFL_AV_INCOMPLETE);
  assert_int_equal(bbvfl_audit_exit_status(BBVFL_AV_INCOMPLETE), 8);
  assert_string_equal(bbvfl_audit_verdict_name(BBVFL_AV_INCOMPLETE), "INCOMPLETE");
  doc = bbvfl_audit_json(&r);
  assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "INCOMPLETE");
  assert_true(json_is_false(json_object_get(doc, "ok")) && json_is_false(json_object_get(doc, "complete")));
  assert_int_equal(json_integer_value(json_object_get(doc, "exit_status")), 8);
  assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "missing"), 0)), "rounds: 3 of 6 done");
  json_decref(doc);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  bbvfl_audit_print_text(f, &r);
  fclose(f);
  assert_true(strncmp(buf, "bbvfl audit: INCOMPLETE", 23) == 0);
  assert_null(strstr(buf, "PASS - every check holds"));
  assert_non_null(strstr(buf, "missing: rounds: 3 of 6 done; no SessionEnded <event>"));
  free(buf);
  char *h = bbvfl_audit_html(&r);
  assert_non_null(h);
  assert_non_null(strstr(h, "INCOMPLETE: the session has not finished"));
  assert_non_null(strstr(h, "<li>no SessionEnded &lt;event&gt;</li>"));
  assert_null(strstr(h, "PASS: every check holds"));
  free(h);
  bbvfl_audit_result_free(&r);

  make_result(&r, 1); /* a failed check and an unfinished session: FAIL, saying both */
  r.nmissing = 1;
  snprintf(r.missing[0], sizeof r.missing[0], "rounds: 3 of 6 done");
  assert_int_equal(bbvfl_audit_verdict_of(&r), BBVFL_AV_FAIL);
  assert_int_equal(bbvfl_audit_exit_status(BBVFL_AV_FAIL), 3);
  buf = NULL;
  f = open_memstream(&buf, &len);
  assert_non_null(f);
  bbvfl_audit_print_text(f, &r);
  fclose(f);
  assert_true(strncmp(buf, "bbvfl audit: FAIL", 17) == 0);
  assert_non_null(strstr(buf, "has not finished"));
  assert_non_null(strstr(buf, "rounds: 3 of 6 done"));
  free(buf);
  doc = bbvfl_audit_json(&r);
  assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "FAIL");
  assert_true(json_is_false(json_object_get(doc, "complete")));
  json_decref(doc);
  bbvfl_audit_result_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_interface),
      cmocka_unit_test(test_text_report_order),
      cmocka_unit_test(test_html_self_contained),
      cmocka_unit_test(test_round_buckets_stay_bounded),
      cmocka_unit_test(test_check_names),
      cmocka_unit_test(test_verdicts),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
