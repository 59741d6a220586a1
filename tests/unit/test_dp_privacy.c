/* Tests for the privacy of a configuration (client/dp/privacy.h): every level comes from the
 * accountant's own functions with the right composition, the reported epsilon is the smaller
 * method, NPQ gives none, masked mode uses the participants present, and what is printed names
 * the level and says "not end-to-end". The values themselves are pinned in test_dp_accountant.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_skip.h"

#include "dp/privacy.h"

static bbvfl_privacy_in paper(void) {
  bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = 16, .beta = 0.2, .P = 16, .M = 5, .epochs = 30,
                         .rows = 40, .delta = 1e-5};
  return in;
}

static void near(double got, double want) {
  if (!(fabs(got - want) <= 1e-9 * fabs(want))) fail_msg("got %.12g, want %.12g", got, want);
}

static void test_levels_compose(void **st) {
  (void)st;
  bbvfl_err err = {0};
  bbvfl_privacy_in in = paper();
  bbvfl_privacy p;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.finite);
  assert_false(p.end_to_end);
  /* row level: one party's epochs x P releases; sample level: x M */
  bbvfl_pbm_acct_in a = {16, 0.2, 16, 5, 30, 1e-5, 0};
  bbvfl_acct_out o;
  assert_int_equal(bbvfl_acct_pbm(&a, &o, &err), 0);
  near(p.row_feature.rdp, o.epsilon_feature);
  near(p.row_sample.rdp, o.epsilon_sample);
  double pf, ps, pset;
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, 30 * 16, 1e-5, &pf, &err), 0);
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, 30 * 5 * 16, 1e-5, &ps, &err), 0);
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, 40ull * 30 * 16, 1e-5, &pset, &err), 0);
  near(p.row_feature.pld, pf);
  near(p.row_sample.pld, ps);
  near(p.feature_set.pld, pset);
  /* the feature-set level composes every row: the RDP of rows x P coordinates per epoch */
  a.P = 40 * 16;
  assert_int_equal(bbvfl_acct_pbm(&a, &o, &err), 0);
  near(p.feature_set.rdp, o.epsilon_feature);
  /* reported: the smaller, with its method (PLD is exact, so never above RDP here) */
  const bbvfl_privacy_eps *all[] = {&p.row_feature, &p.row_sample, &p.feature_set};
  for (size_t i = 0; i < 3; i++) {
    assert_true(all[i]->pld <= all[i]->rdp);
    near(all[i]->epsilon, all[i]->pld);
    assert_string_equal(all[i]->method, "pld");
  }
  assert_true(p.row_feature.epsilon < p.row_sample.epsilon);
  assert_true(p.row_sample.epsilon < p.feature_set.epsilon);
  assert_true(isnan(p.masked_row_feature.epsilon));
  /* one row: the feature-set level is the row level */
  in.rows = 1;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  near(p.feature_set.pld, p.row_feature.pld);
  near(p.feature_set.rdp, p.row_feature.rdp);
  /* no rows: not computed */
  in.rows = 0;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(isnan(p.feature_set.epsilon));
}

static void test_masked_participants(void **st) {
  (void)st;
  bbvfl_err err = {0};
  bbvfl_privacy_in in = paper();
  in.b = 8; /* small enough for the masked search to stay quick under valgrind */
  in.M = 4;
  in.masked = 1;
  in.participants = 3; /* one client dropped */
  in.colluding = 1;
  bbvfl_privacy p;
  double curve[BBVFL_ACCT_NGRID];
  assert_int_equal(bbvfl_privacy_compute(&in, &p, curve, &err), 0);
  bbvfl_pbm_acct_in a = {8, 0.2, 16, 3, 30, 1e-5, 1};
  bbvfl_acct_out o;
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&a, &o, NULL, &err), 0);
  near(p.masked_row_feature.epsilon, o.epsilon_feature);
  assert_string_equal(p.masked_row_feature.method, "rdp");
  assert_true(isnan(p.masked_row_feature.pld));
  assert_int_equal(p.participants, 3);
  assert_true(curve[0] > 0);
  /* the local levels still cover every client of the session */
  bbvfl_pbm_acct_in l = {8, 0.2, 16, 4, 30, 1e-5, 0};
  assert_int_equal(bbvfl_acct_pbm(&l, &o, &err), 0);
  near(p.row_sample.rdp, o.epsilon_sample);
  /* participants 0: all M */
  in.participants = 0;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_int_equal(p.participants, 4);
  /* colluding outside 0..participants-1 is refused */
  in.colluding = 4;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), -1);
}

static void test_npq_and_gaussian(void **st) {
  (void)st;
  bbvfl_err err = {0};
  bbvfl_privacy_in in = paper();
  in.kind = BBVFL_MECH_NPQ;
  bbvfl_privacy p;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_false(p.finite);
  assert_true(isinf(p.row_feature.epsilon) && isinf(p.feature_set.epsilon));
  assert_string_equal(p.row_feature.method, "none");
  char line[256];
  bbvfl_privacy_line(&p, line, sizeof line);
  assert_non_null(strstr(line, "no privacy guarantee"));

  in.kind = BBVFL_MECH_GAUSSIAN;
  in.clip = 1;
  in.sigma = 2;
  in.rows = 10;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  bbvfl_acct_out o, set;
  assert_int_equal(bbvfl_acct_gaussian(1, 2, 5, 30, 1e-5, &o, &err), 0);
  assert_int_equal(bbvfl_acct_gaussian(1, 2, 5, 300, 1e-5, &set, &err), 0);
  near(p.row_feature.epsilon, o.epsilon_feature);
  near(p.feature_set.epsilon, set.epsilon_feature);
  assert_true(isnan(p.row_feature.pld));
  assert_string_equal(p.row_feature.method, "rdp");
  in.masked = 1;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
}

static void test_bad_input(void **st) {
  (void)st;
  bbvfl_err err = {0};
  bbvfl_privacy p;
  bbvfl_privacy_in in = paper();
  in.rows = -1;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), -1);
  assert_non_null(strstr(err.msg, "rows"));
  in = paper();
  in.beta = 0.5; /* no privacy: the accountant refuses it */
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), -1);
  in = paper();
  in.rows = 1 << 30; /* rows x P overflows an int */
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), -1);
}

static void test_json_and_line(void **st) {
  (void)st;
  bbvfl_err err = {0};
  bbvfl_privacy_in in = paper();
  in.M = 3; /* the row level of one party does not depend on M */
  in.masked = 1;
  in.colluding = 1;
  bbvfl_privacy p;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  json_t *o = bbvfl_privacy_json(&p);
  assert_non_null(o);
  assert_true(json_is_false(json_object_get(o, "end_to_end")));
  assert_non_null(strstr(json_string_value(json_object_get(o, "scope")), "not an end-to-end"));
  const char *keys[] = {"row_feature", "row_sample", "feature_set", "masked_row_feature"};
  for (size_t i = 0; i < 4; i++) {
    json_t *l = json_object_get(o, keys[i]);
    assert_true(json_is_object(l));
    assert_non_null(json_string_value(json_object_get(l, "relation")));
    assert_true(json_real_value(json_object_get(l, "epsilon")) > 0);
  }
  near(json_real_value(json_object_get(json_object_get(o, "row_feature"), "epsilon")), p.row_feature.epsilon);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "feature_set"), "rows")), 40);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "masked_row_feature"), "colluding")), 1);
  json_t *lb = json_object_get(o, "labels");
  assert_true(json_is_null(json_object_get(lb, "epsilon"))); /* unprotected: infinite */
  assert_string_equal(json_string_value(json_object_get(lb, "method")), "none");
  json_decref(o);
  in.label_eps = 2;
  bbvfl_privacy q;
  assert_int_equal(bbvfl_privacy_compute(&in, &q, NULL, &err), 0);
  assert_true(q.labels.epsilon == 2);
  assert_string_equal(q.labels.method, "rr");
  char ql[1024];
  bbvfl_privacy_line(&q, ql, sizeof ql);
  assert_non_null(strstr(ql, "labels (one row's label) 2 (randomized response, pure)"));
  /* the headline per person composes the label's epsilon with every party's features of the row */
  near(q.person.epsilon, q.row_sample.epsilon + 2);
  assert_string_equal(q.person.method, "pld+rr");
  near(bbvfl_privacy_headline(&q), q.person.epsilon);
  assert_true(bbvfl_privacy_labels_protected(&q));
  assert_non_null(strstr(ql, "per person (one person's whole record: every party's columns of the row and its label)"));
  json_t *qo = json_object();
  bbvfl_privacy_json_top(qo, &q);
  near(json_real_value(json_object_get(qo, "epsilon_sample")), q.person.epsilon); /* the same figure as the line */
  near(json_real_value(json_object_get(qo, "epsilon_sample_features")), q.row_sample.epsilon);
  near(json_real_value(json_object_get(qo, "epsilon_feature")), q.row_feature.epsilon);
  assert_string_equal(json_string_value(json_object_get(qo, "epsilon_sample_method")), "pld+rr");
  json_decref(qo);
  json_t *ql2 = bbvfl_privacy_json(&q);
  near(json_real_value(json_object_get(json_object_get(ql2, "person"), "epsilon")), q.person.epsilon);
  assert_string_equal(json_string_value(json_object_get(ql2, "headline_relation")), "person");
  json_decref(ql2);
  /* without label DP: no finite per-person figure anywhere */
  assert_true(isinf(p.person.epsilon) && !bbvfl_privacy_labels_protected(&p));
  json_t *po = json_object();
  bbvfl_privacy_json_top(po, &p);
  assert_true(json_is_null(json_object_get(po, "epsilon_sample")));
  assert_true(json_is_false(json_object_get(po, "labels_protected")));
  json_decref(po);

  char line[1024];
  size_t need = bbvfl_privacy_line(&p, line, sizeof line);
  assert_int_equal(need, strlen(line));
  assert_non_null(strstr(line, "not end-to-end"));
  assert_non_null(strstr(line, "per party (one party's columns of a row) 2890 (pld)"));
  /* the per-person headline first: unbounded without label DP, then the features-only figure */
  assert_true(strstr(line, "per person unbounded (the labels are unprotected") != NULL &&
              strstr(line, "per person") < strstr(line, "per party"));
  assert_non_null(strstr(line, "; per person, features only "));
  assert_non_null(strstr(line, "per party, whole column set of 40 rows"));
  assert_non_null(strstr(line, "against 1 colluding of 3"));
  assert_non_null(strstr(line, "labels unprotected"));
  /* a short buffer: truncated, terminated, the full length returned */
  char small[20];
  assert_int_equal(bbvfl_privacy_line(&p, small, sizeof small), need);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_int_equal(strncmp(small, line, sizeof small - 1), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_levels_compose),
      cmocka_unit_test(test_masked_participants),
      cmocka_unit_test(test_npq_and_gaussian),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_json_and_line),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
