/* The public API (include/bbvfl/): what outside code sees. Training through it gives exactly the
 * trainer's numbers for the same configuration, the epsilon is the accountant's, bad values and
 * NULLs come back as a status with a message (never a crash), a run outlives its config. */
/* As the library itself is compiled: BBVFL_ARG_NONNULL off, so the test may pass the NULLs the
 * declarations rule out and see the library's own checks answer (a caller who does so breaks the
 * declaration's promise: the compiler warns, UBSan's nonnull-attribute check stops it). */
#define BBVFL_BUILD 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bbvfl/bbvfl.h"
#include "dp/privacy.h"
#include "api/api_int.h"
#include "ml/optim.h"
#include "core/cfgprivacy.h"
#include "offchain/offchain.h"

static char DATA[4096];

static int setup(void **st) {
  (void)st;
  const char *src = getenv("BBVFL_SOURCE_DIR");
  snprintf(DATA, sizeof DATA, "%s/data/breast_cancer.csv", src ? src : ".");
  return 0;
}

static void test_version(void **st) {
  (void)st;
  assert_string_equal(bbvfl_version_string(), BBVFL_VERSION_STRING);
  assert_int_equal(bbvfl_version_number(), BBVFL_VERSION_NUMBER);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", BBVFL_VERSION_MAJOR, BBVFL_VERSION_MINOR, BBVFL_VERSION_PATCH);
  assert_string_equal(bbvfl_version_string(), want);
  assert_string_equal(bbvfl_version_string(), BBVFL_VERSION); /* the library's own version */
}

static void test_status_names(void **st) {
  (void)st;
  assert_string_equal(bbvfl_status_name(BBVFL_STATUS_OK), "ok");
  assert_string_equal(bbvfl_status_name(BBVFL_STATUS_PARSE), "parse");
  assert_string_equal(bbvfl_status_name((bbvfl_status)99), "unknown");
  bbvfl_error e = {BBVFL_STATUS_IO, "x"};
  bbvfl_error_clear(&e);
  assert_int_equal(e.code, BBVFL_STATUS_OK);
  assert_string_equal(e.message, "");
  bbvfl_error_clear(NULL);
}

static void test_table(void **st) {
  (void)st;
  const char csv[] = "id,a,b,y\n1,0.5,1,no\n2,1.5,2,yes\n3,2.5,3,no\n";
  bbvfl_table *t = NULL;
  bbvfl_error err;
  assert_int_equal(bbvfl_table_parse_csv(csv, sizeof csv - 1, "mem", NULL, "id", &t, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_table_rows(t), 3);
  assert_int_equal(bbvfl_table_features(t), 2);
  assert_int_equal(bbvfl_table_classes(t), 2);
  assert_string_equal(bbvfl_table_feature_name(t, 1), "b");
  assert_null(bbvfl_table_feature_name(t, 2));
  assert_string_equal(bbvfl_table_class_name(t, 0), "no");
  assert_string_equal(bbvfl_table_class_name(t, 1), "yes");
  assert_null(bbvfl_table_class_name(t, 2));
  assert_null(bbvfl_table_class_name(t, -1));
  assert_string_equal(bbvfl_table_label_name(t), "y");
  bbvfl_table_destroy(t);
  bbvfl_table_destroy(NULL);
  assert_int_equal(bbvfl_table_rows(NULL), 0);

  /* malformed: PARSE, the line named; *out NULL */
  const char bad[] = "a,y\n1,0\nx,1\n";
  t = (bbvfl_table *)&err; /* anything non-NULL: must be reset */
  assert_int_equal(bbvfl_table_parse_csv(bad, sizeof bad - 1, "bad.csv", NULL, NULL, &t, &err), BBVFL_STATUS_PARSE);
  assert_int_equal(err.code, BBVFL_STATUS_PARSE);
  assert_null(t);
  assert_non_null(strstr(err.message, "bad.csv: line 3"));
  /* an unknown label column: ARG; a missing file: IO; a NULL err is allowed */
  assert_int_equal(bbvfl_table_parse_csv(csv, sizeof csv - 1, NULL, "nope", NULL, &t, &err), BBVFL_STATUS_ARG);
  assert_non_null(strstr(err.message, "nope"));
  assert_int_equal(bbvfl_table_load_csv("/nonexistent/bbvfl.csv", NULL, NULL, &t, &err), BBVFL_STATUS_IO);
  assert_int_equal(bbvfl_table_load_csv("/nonexistent/bbvfl.csv", NULL, NULL, &t, NULL), BBVFL_STATUS_IO);
  /* NULLs where the header says non-NULL: ARG, not a crash */
  assert_int_equal(bbvfl_table_load_csv(NULL, NULL, NULL, &t, &err), BBVFL_STATUS_ARG);
  assert_int_equal(bbvfl_table_load_csv(DATA, NULL, NULL, NULL, &err), BBVFL_STATUS_ARG);
  assert_int_equal(bbvfl_table_parse_csv(NULL, 0, NULL, NULL, NULL, &t, &err), BBVFL_STATUS_ARG);
}

static void test_config_checks(void **st) {
  (void)st;
  bbvfl_config *c = NULL;
  bbvfl_error err;
  assert_int_equal(bbvfl_config_create(&c, &err), BBVFL_STATUS_OK);
  struct {
    bbvfl_status got;
    const char *needle;
  } bad[] = {
      {bbvfl_config_set_clients(c, 0, &err), "clients"},
      {bbvfl_config_set_clients(c, 1001, &err), "clients"},
      {bbvfl_config_set_pbm(c, 0, 0.2, &err), "b"},
      {bbvfl_config_set_pbm(c, 16, 0.5, &err), "beta"},
      {bbvfl_config_set_gaussian(c, 0, 1, &err), "clip"},
      {bbvfl_config_set_gaussian(c, 1, NAN, &err), "sigma"},
      {bbvfl_config_set_mechanism(c, (bbvfl_mechanism)7, &err), "mechanism"},
      {bbvfl_config_set_embedding(c, 0, &err), "P"},
      {bbvfl_config_set_batch(c, 0, &err), "batch"},
      {bbvfl_config_set_epochs(c, 0, &err), "epochs"},
      {bbvfl_config_set_hidden(c, (const int[]){32, 0}, 2, &err), "width"},
      {bbvfl_config_set_hidden(c, (const int[]){1, 1, 1, 1, 1, 1, 1}, 7, &err), "hidden"},
      {bbvfl_config_set_optimizer(c, BBVFL_OPTIMIZER_ADAM, -1, &err), "learning rate"},
      {bbvfl_config_set_test_fraction(c, 1, &err), "test fraction"},
      {bbvfl_config_set_partition(c, "", &err), "partition"},
      {bbvfl_config_set_label_epsilon(c, -1, &err), "label epsilon"},
      {bbvfl_config_set_delta(c, 0, &err), "delta"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (bad[i].got != BBVFL_STATUS_ARG) fail_msg("case %zu (%s): status %d", i, bad[i].needle, (int)bad[i].got);
  }
  assert_non_null(strstr(err.message, "delta"));
  /* M x b over the widest lane: refused by whichever setter makes it so */
  assert_int_equal(bbvfl_config_set_pbm(c, 255, 0.2, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_clients(c, 300, &err), BBVFL_STATUS_ARG);
  assert_non_null(strstr(err.message, "65535"));
  assert_int_equal(bbvfl_config_set_mechanism(c, BBVFL_MECHANISM_NPQ, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_clients(c, 300, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_mechanism(c, BBVFL_MECHANISM_PBM, &err), BBVFL_STATUS_ARG);
  /* a NULL config */
  assert_int_equal(bbvfl_config_set_epochs(NULL, 3, &err), BBVFL_STATUS_ARG);
  assert_int_equal(bbvfl_config_create(NULL, &err), BBVFL_STATUS_ARG);
  bbvfl_config_destroy(c);
  bbvfl_config_destroy(NULL);
}

typedef struct {
  int calls;
  bbvfl_epoch_stats last;
} seen;

static void on_epoch(void *ctx, const bbvfl_epoch_stats *s) {
  seen *v = ctx;
  v->calls++;
  v->last = *s;
}

/* The public API's run equals the trainer's for the same configuration, every epoch; a refused
 * setter left the config as it was. */
static void test_train_equals_trainer(void **st) {
  (void)st;
  bbvfl_error err;
  bbvfl_table *t = NULL;
  assert_int_equal(bbvfl_table_load_csv(DATA, NULL, NULL, &t, &err), BBVFL_STATUS_OK);
  bbvfl_config *c = NULL;
  assert_int_equal(bbvfl_config_create(&c, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_clients(c, 3, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_pbm(c, 8, 0.25, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_embedding(c, 8, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_batch(c, 16, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_epochs(c, 3, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_epochs(c, -5, &err), BBVFL_STATUS_ARG); /* keeps 3 */
  assert_int_equal(bbvfl_config_set_hidden(c, (const int[]){24}, 1, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_optimizer(c, BBVFL_OPTIMIZER_SGD, 0.05, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_partition(c, "0-9/10-19/20-29", &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_seed(c, 42, &err), BBVFL_STATUS_OK);
  seen v = {0};
  bbvfl_run *run = NULL;
  assert_int_equal(bbvfl_train(t, c, on_epoch, &v, &run, &err), BBVFL_STATUS_OK);
  bbvfl_config_destroy(c); /* the run keeps its own copy */
  assert_int_equal(bbvfl_run_epochs(run), 3);
  assert_int_equal(v.calls, 3);
  int repeatable = -1;
  assert_int_equal(bbvfl_run_seed(run, &repeatable), 42);
  assert_int_equal(repeatable, 1);

  /* the same configuration straight through the trainer */
  bbvfl_dataset ds;
  bbvfl_err ierr = {0};
  assert_int_equal(bbvfl_csv_load(DATA, NULL, &ds, &ierr), 0);
  bbvfl_offchain_cfg oc;
  bbvfl_offchain_defaults(&oc);
  oc.M = 3;
  oc.mech.b = 8;
  oc.mech.beta = 0.25;
  oc.P = 8;
  oc.B = 16;
  oc.epochs = 3;
  oc.nhidden = 1;
  oc.hidden[0] = 24;
  oc.opt.kind = BBVFL_OPT_SGD;
  oc.opt.lr = 0.05;
  oc.partition = "0-9/10-19/20-29";
  oc.seed = 42;
  oc.seeded_noise = 1;
  bbvfl_offchain_result res;
  assert_int_equal(bbvfl_offchain_train(&ds, &oc, &res, &ierr), 0);
  assert_int_equal(bbvfl_run_train_rows(run), res.n_train);
  assert_int_equal(bbvfl_run_test_rows(run), res.n_test);
  for (int e = 1; e <= 3; e++) {
    bbvfl_epoch_stats s;
    assert_int_equal(bbvfl_run_epoch(run, e, &s, &err), BBVFL_STATUS_OK);
    const bbvfl_epoch_metrics *m = &res.per_epoch[e - 1];
    assert_int_equal(s.epoch, e);
    assert_true(s.auroc == m->auroc && s.train_loss == m->train_loss && s.test_loss == m->test_loss &&
                s.accuracy == m->accuracy && s.f1 == m->f1);
  }
  assert_true(v.last.epoch == 3 && v.last.auroc == res.per_epoch[2].auroc);
  assert_true(v.last.auroc > 0.9); /* it learned */
  bbvfl_epoch_stats s;
  assert_int_equal(bbvfl_run_epoch(run, 4, &s, &err), BBVFL_STATUS_ARG);
  assert_int_equal(bbvfl_run_epoch(run, 0, &s, &err), BBVFL_STATUS_ARG);

  /* the run's epsilon: the accountant's, with the run's training rows */
  bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = 8, .beta = 0.25, .P = 8, .M = 3, .epochs = 3,
                         .rows = (int)res.n_train, .delta = 1e-5};
  bbvfl_privacy p;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &ierr), 0);
  bbvfl_epsilon eps;
  /* the run is seeded: its noise is the seed's, so no epsilon holds (issue 28) */
  assert_int_equal(bbvfl_run_epsilon(run, BBVFL_LEVEL_ROW_FEATURE, &eps, &err), BBVFL_STATUS_OK);
  assert_true(isinf(eps.epsilon) && eps.end_to_end == 0 && eps.level == BBVFL_LEVEL_ROW_FEATURE);
  assert_string_equal(eps.method, "none");
  assert_non_null(strstr(eps.scope, "regenerated"));
  /* the accountant's figures for the same configuration with private noise */
  bbvfl_config *cu = NULL;
  assert_int_equal(bbvfl_config_create(&cu, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_clients(cu, 3, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_pbm(cu, 8, 0.25, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_embedding(cu, 8, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_epochs(cu, 3, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_epsilon(cu, BBVFL_LEVEL_ROW_FEATURE, 0, &eps, &err), BBVFL_STATUS_OK);
  assert_true(eps.epsilon == p.row_feature.epsilon && isfinite(eps.epsilon));
  assert_string_equal(eps.method, p.row_feature.method);
  assert_true(eps.delta == 1e-5 && eps.end_to_end == 0 && eps.level == BBVFL_LEVEL_ROW_FEATURE);
  assert_non_null(eps.scope);
  assert_int_equal(bbvfl_config_epsilon(cu, BBVFL_LEVEL_FEATURE_SET, res.n_train, &eps, &err), BBVFL_STATUS_OK);
  assert_true(eps.epsilon == p.feature_set.epsilon);
  assert_int_equal(bbvfl_config_epsilon(cu, BBVFL_LEVEL_ROW_SAMPLE, 0, &eps, &err), BBVFL_STATUS_OK);
  assert_true(eps.epsilon == p.row_sample.epsilon && eps.epsilon > p.row_feature.epsilon);
  bbvfl_config_destroy(cu);
  assert_int_equal(bbvfl_run_epsilon(run, (bbvfl_level)9, &eps, &err), BBVFL_STATUS_ARG);

  bbvfl_offchain_result_free(&res);
  bbvfl_dataset_free(&ds);
  bbvfl_run_destroy(run);
  bbvfl_run_destroy(NULL);
  bbvfl_table_destroy(t);
}

/* Without a seed: a fresh one each run, noise from the OS (not repeatable). Configurations the
 * table cannot serve are refused with ARG before training. */
static void test_train_unseeded_and_refusals(void **st) {
  (void)st;
  bbvfl_error err;
  bbvfl_table *t = NULL;
  assert_int_equal(bbvfl_table_load_csv(DATA, NULL, NULL, &t, &err), BBVFL_STATUS_OK);
  bbvfl_config *c = NULL;
  assert_int_equal(bbvfl_config_create(&c, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_epochs(c, 1, &err), BBVFL_STATUS_OK);
  bbvfl_run *r1 = NULL, *r2 = NULL;
  assert_int_equal(bbvfl_train(t, c, NULL, NULL, &r1, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_train(t, c, NULL, NULL, &r2, NULL), BBVFL_STATUS_OK);
  int rep1 = -1, rep2 = -1;
  assert_true(bbvfl_run_seed(r1, &rep1) != bbvfl_run_seed(r2, &rep2));
  assert_int_equal(rep1, 0);
  assert_int_equal(rep2, 0);
  bbvfl_run_destroy(r1);
  bbvfl_run_destroy(r2);

  bbvfl_run *r = (bbvfl_run *)&err;
  assert_int_equal(bbvfl_config_set_clients(c, 31, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_train(t, c, NULL, NULL, &r, &err), BBVFL_STATUS_ARG);
  assert_null(r);
  assert_non_null(strstr(err.message, "30 feature columns"));
  assert_int_equal(bbvfl_config_set_clients(c, 2, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_partition(c, "0-9/10-19/20-29", &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_train(t, c, NULL, NULL, &r, &err), BBVFL_STATUS_ARG);
  assert_non_null(strstr(err.message, "partition names 3 clients"));
  assert_int_equal(bbvfl_config_set_partition(c, "0-9/10-40", &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_train(t, c, NULL, NULL, &r, &err), BBVFL_STATUS_ARG);
  assert_int_equal(bbvfl_config_set_partition(c, NULL, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_batch(c, 1000, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_train(t, c, NULL, NULL, &r, &err), BBVFL_STATUS_ARG);
  assert_null(r);
  assert_int_equal(bbvfl_train(NULL, c, NULL, NULL, &r, &err), BBVFL_STATUS_ARG);
  assert_int_equal(bbvfl_train(t, NULL, NULL, NULL, &r, &err), BBVFL_STATUS_ARG);
  assert_int_equal(bbvfl_train(t, c, NULL, NULL, NULL, &err), BBVFL_STATUS_ARG);
  bbvfl_config_destroy(c);
  bbvfl_table_destroy(t);
}

/* The epsilon of a configuration before training: NPQ has none, label DP is pure, the
 * feature-set level needs the row count. */
static void test_config_epsilon(void **st) {
  (void)st;
  bbvfl_error err;
  bbvfl_config *c = NULL;
  assert_int_equal(bbvfl_config_create(&c, &err), BBVFL_STATUS_OK);
  bbvfl_epsilon e;
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_ROW_FEATURE, 0, &e, &err), BBVFL_STATUS_OK);
  double pbm_default = e.epsilon;
  assert_true(isfinite(pbm_default) && pbm_default > 0);
  /* a smaller beta gives a smaller epsilon */
  assert_int_equal(bbvfl_config_set_pbm(c, 16, 0.05, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_ROW_FEATURE, 0, &e, &err), BBVFL_STATUS_OK);
  assert_true(e.epsilon < pbm_default);
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_FEATURE_SET, 0, &e, &err), BBVFL_STATUS_ARG);
  assert_non_null(strstr(err.message, "row count"));
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_LABELS, 0, &e, &err), BBVFL_STATUS_OK);
  assert_true(isinf(e.epsilon));
  assert_string_equal(e.method, "none");
  assert_int_equal(bbvfl_config_set_label_epsilon(c, 1.5, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_LABELS, 0, &e, &err), BBVFL_STATUS_OK);
  assert_true(e.epsilon == 1.5 && e.delta == 0 && e.end_to_end == 1);
  assert_string_equal(e.method, "rr");
  /* the per-person headline: every party's features and the label, composed */
  bbvfl_epsilon fs, pe;
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_ROW_SAMPLE, 0, &fs, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_PERSON, 0, &pe, &err), BBVFL_STATUS_OK);
  assert_true(fabs(pe.epsilon - (fs.epsilon + 1.5)) <= 1e-9 * pe.epsilon);
  assert_non_null(strstr(pe.method, "+rr"));
  assert_string_equal(bbvfl_level_name(BBVFL_LEVEL_PERSON), "person");
  assert_int_equal(bbvfl_config_set_label_epsilon(c, 0, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_PERSON, 0, &pe, &err), BBVFL_STATUS_OK);
  assert_true(isinf(pe.epsilon)); /* labels unprotected: no finite per-person figure */
  assert_int_equal(bbvfl_config_set_label_epsilon(c, 1.5, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_mechanism(c, BBVFL_MECHANISM_NPQ, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_ROW_FEATURE, 0, &e, &err), BBVFL_STATUS_OK);
  assert_true(isinf(e.epsilon));
  assert_string_equal(e.method, "none");
  assert_int_equal(bbvfl_config_epsilon(NULL, BBVFL_LEVEL_ROW_FEATURE, 0, &e, &err), BBVFL_STATUS_ARG);
  assert_string_equal(bbvfl_level_name(BBVFL_LEVEL_ROW_SAMPLE), "row_sample");
  assert_string_equal(bbvfl_level_name((bbvfl_level)-1), "unknown");
  bbvfl_config_destroy(c);
}

/* Every epsilon through one function: the public API's epsilon of an LR configuration whose sqn
 * curvature rounds release the rows again is bbvfl_cfg_privacy's (the one `bbvfl train` prints),
 * not the plain epochs' figure. */
static void test_config_epsilon_lr(void **st) {
  (void)st;
  bbvfl_error err;
  bbvfl_config *c = NULL;
  assert_int_equal(bbvfl_config_create(&c, &err), BBVFL_STATUS_OK);
  bbvfl_epsilon plain, e;
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_ROW_FEATURE, 455, &plain, &err), BBVFL_STATUS_OK);
  c->off.model = BBVFL_MODEL_LR;
  c->off.opt.kind = BBVFL_OPT_SQN;
  c->off.sqn_pairs = BBVFL_SQN_PAIRS_GLOBAL;
  c->off.sqn_interval = 1;
  c->off.B = 0; /* full batch: one round per epoch, epochs - 1 curvature rounds */
  c->off.P = 1;
  bbvfl_privacy p;
  bbvfl_err ierr = {0};
  assert_int_equal(bbvfl_cfg_privacy(&c->off, 455, 0, 0, c->delta, &p, &ierr), 0);
  for (int level = BBVFL_LEVEL_ROW_FEATURE; level <= BBVFL_LEVEL_FEATURE_SET; level++) {
    assert_int_equal(bbvfl_config_epsilon(c, (bbvfl_level)level, 455, &e, &err), BBVFL_STATUS_OK);
    const bbvfl_privacy_eps *want = level == BBVFL_LEVEL_ROW_FEATURE  ? &p.row_feature
                                    : level == BBVFL_LEVEL_ROW_SAMPLE ? &p.row_sample
                                                                      : &p.feature_set;
    assert_true(isfinite(e.epsilon));
    assert_true(e.epsilon == want->epsilon);
  }
  /* the curvature rounds count: more releases than the MLP's epochs at P = 1 */
  c->off.opt.kind = BBVFL_OPT_ADAM;
  bbvfl_epsilon no_curv;
  assert_int_equal(bbvfl_config_epsilon(c, BBVFL_LEVEL_ROW_FEATURE, 455, &no_curv, &err), BBVFL_STATUS_OK);
  assert_true(p.row_feature.epsilon > no_curv.epsilon);
  (void)plain;
  bbvfl_config_destroy(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version),
      cmocka_unit_test(test_status_names),
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_config_checks),
      cmocka_unit_test(test_train_equals_trainer),
      cmocka_unit_test(test_train_unseeded_and_refusals),
      cmocka_unit_test(test_config_epsilon),
      cmocka_unit_test(test_config_epsilon_lr),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
