/* The session file: round trip (masked flag and round timeout included) and errors that name the
 * file and the field for a bad contract/token address and a bad reward amount. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_skip.h"

#include "core/cfgprivacy.h"
#include "onchain/onchain.h"
#include "binding/session.h"

static char g_dir[] = "/tmp/bbvfl-session-test.XXXXXX";
static char g_path[300];

static void make_session(bbvfl_session *s) {
  memset(s, 0, sizeof *s);
  snprintf(s->rpc_url, sizeof s->rpc_url, "http://127.0.0.1:8545");
  s->chain_id = 31337;
  for (int i = 0; i < 20; i++) s->contract[i] = (uint8_t)(i + 1), s->token[i] = (uint8_t)(0xA0 + i);
  s->deploy_block = 7;
  bbvfl_cconfig *c = &s->cparams;
  c->clients = 4;
  c->batch = 10;
  c->dim = 16;
  c->levels = 32;
  c->beta_micro = 250000;
  c->masked = 1;
  c->batches_per_epoch = 45;
  c->window = 9;
  c->eval_rows = 114;
  c->eval_rows_per_round = 57;
  c->train_rows = 455;
  c->test_rows = 114;
  c->staleness = 2;
  c->hashed = 1;
  c->train_rounds = 5;
  c->eval_rounds = 2;
  c->epochs = 2;
  c->reward_per_submission = bbvfl_u256_from_u64(1000);
  c->reward_pool = bbvfl_u256_from_u64(448000);
  c->commit_blocks = c->reveal_blocks = 1000;
  c->active_blocks = 100000;
  c->round_timeout_blocks = 12;
  s->lane_bits = 16;
  bbvfl_offchain_defaults(&s->train);
  s->train.M = 4;
  s->train.B = 10;
  s->train.P = 16;
  s->train.epochs = 2;
  /* training fields away from their defaults, so a field the round trip drops shows */
  s->train.seed = 99;
  s->train.test_frac = 0.25;
  s->train.label_eps = 1.5;
  s->train.rowdp = (bbvfl_rowdp){1, 0.75, 3.5, 0.125, 0, 0};
  s->train.nhidden = 2;
  s->train.hidden[0] = 24;
  s->train.hidden[1] = 12;
  s->train.opt.kind = BBVFL_OPT_SGD;
  s->train.opt.lr = 0.05;
  s->train.opt.decay = 0.9;
  s->train.opt.momentum = 0.5;
  s->train.mech.kind = BBVFL_MECH_PBM;
  s->train.mech.b = 32;
  s->train.mech.beta = 0.25;
  s->train.mech.C = 2.0;
  snprintf(s->label, sizeof s->label, "diagnosis");
  snprintf(s->data, sizeof s->data, "data.csv");
  s->n_rows = 569;
  s->n_classes = 2;
  snprintf(s->classes[0], sizeof s->classes[0], "B");
  snprintf(s->classes[1], sizeof s->classes[1], "M");
}

static void test_round_trip(void **st) {
  (void)st;
  bbvfl_session s, t;
  make_session(&s);
  bbvfl_err err = {0};
  if (bbvfl_session_save(&s, g_path, &err) != 0) fail_msg("save: %s", err.msg);
  if (bbvfl_session_load(g_path, &t, &err) != 0) fail_msg("load: %s", err.msg);
  /* every field the file carries */
  assert_string_equal(t.rpc_url, s.rpc_url);
  assert_int_equal(t.chain_id, s.chain_id);
  assert_memory_equal(t.contract, s.contract, 20);
  assert_memory_equal(t.token, s.token, 20);
  assert_int_equal(t.deploy_block, s.deploy_block);
  const bbvfl_cconfig *a = &t.cparams, *b = &s.cparams;
  assert_int_equal(a->clients, b->clients);
  assert_int_equal(a->batch, b->batch);
  assert_int_equal(a->dim, b->dim);
  assert_int_equal(a->levels, b->levels);
  assert_int_equal(a->beta_micro, b->beta_micro);
  assert_true(a->masked);
  assert_int_equal(a->train_rounds, b->train_rounds);
  assert_int_equal(a->eval_rounds, b->eval_rounds);
  assert_int_equal(a->batches_per_epoch, b->batches_per_epoch);
  assert_int_equal(a->window, b->window);
  assert_int_equal(a->eval_rows, b->eval_rows);
  assert_int_equal(a->eval_rows_per_round, b->eval_rows_per_round);
  assert_int_equal(a->train_rows, b->train_rows);
  assert_int_equal(a->test_rows, b->test_rows);
  assert_int_equal(a->staleness, b->staleness);
  assert_true(a->hashed);
  assert_int_equal(t.train.window, 9); /* the training setup follows the contract's round structure */
  assert_int_equal(t.train.staleness, 2);
  assert_int_equal(t.train.eval_rows_per_round, 57);
  assert_int_equal(a->epochs, b->epochs);
  assert_memory_equal(&a->reward_per_submission, &b->reward_per_submission, sizeof a->reward_per_submission);
  assert_memory_equal(&a->reward_pool, &b->reward_pool, sizeof a->reward_pool);
  assert_int_equal(a->commit_blocks, b->commit_blocks);
  assert_int_equal(a->reveal_blocks, b->reveal_blocks);
  assert_int_equal(a->active_blocks, b->active_blocks);
  assert_int_equal(a->round_timeout_blocks, 12);
  assert_int_equal(t.lane_bits, 16);
  const bbvfl_offchain_cfg *x = &t.train, *y = &s.train;
  assert_int_equal(x->M, y->M);
  assert_int_equal(x->B, y->B);
  assert_int_equal(x->P, y->P);
  assert_int_equal(x->epochs, y->epochs);
  assert_int_equal(x->seed, 99);
  assert_true(x->test_frac == 0.25);
  assert_true(x->label_eps == 1.5);
  assert_true(x->rowdp.on == 1 && x->rowdp.clip == 0.75 && x->rowdp.noise == 3.5 && x->rowdp.scale_eps == 0.125);
  assert_int_equal(x->nhidden, 2);
  assert_int_equal(x->hidden[0], 24);
  assert_int_equal(x->hidden[1], 12);
  assert_int_equal(x->opt.kind, BBVFL_OPT_SGD);
  assert_true(x->opt.lr == 0.05);
  assert_true(x->opt.decay == 0.9);
  assert_true(x->opt.momentum == 0.5);
  assert_int_equal(x->mech.kind, BBVFL_MECH_PBM);
  assert_int_equal(x->mech.b, 32);
  assert_true(x->mech.beta == 0.25);
  assert_true(x->mech.C == 2.0);
  assert_string_equal(t.label, "diagnosis");
  assert_string_equal(t.data, "data.csv");
  assert_int_equal(t.n_rows, 569);
  assert_int_equal(t.n_classes, 2);
  assert_string_equal(t.classes[0], "B");
  assert_string_equal(t.classes[1], "M");
}

/* Writes the saved session with one string field replaced, loads it, returns the error text. */
static void load_with(const char *obj, const char *key, const char *value, bbvfl_err *err) {
  bbvfl_session s, t;
  make_session(&s);
  assert_int_equal(bbvfl_session_save(&s, g_path, err), 0);
  json_t *o = json_load_file(g_path, 0, NULL);
  assert_non_null(o);
  json_t *where = obj ? json_object_get(o, obj) : o;
  assert_non_null(where);
  json_object_set_new(where, key, json_string(value));
  assert_int_equal(json_dump_file(o, g_path, 0), 0);
  json_decref(o);
  memset(err, 0, sizeof *err);
  assert_int_equal(bbvfl_session_load(g_path, &t, err), -1);
}

/* A session file written before windows (no round-structure keys) loads as the one-minibatch
   protocol: K = 1, evaluation rounds of B rows. */
static void test_file_before_windows(void **st) {
  (void)st;
  bbvfl_session s, t;
  make_session(&s);
  bbvfl_cconfig *c = &s.cparams;
  c->batches_per_epoch = 0; /* the pre-window form: T and V only */
  c->train_rounds = 45;
  c->eval_rounds = 11;
  c->staleness = 0;
  c->hashed = 0;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_session_save(&s, g_path, &err), 0);
  json_t *o = json_load_file(g_path, 0, NULL);
  assert_non_null(o);
  json_t *cp = json_object_get(o, "contract_params");
  static const char *const keys[] = {"batches_per_epoch", "window", "eval_rows", "eval_rows_per_round", "train_rows",
                                     "test_rows", "staleness", "hashed"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) assert_int_equal(json_object_del(cp, keys[i]), 0);
  assert_int_equal(json_dump_file(o, g_path, 0), 0);
  json_decref(o);
  if (bbvfl_session_load(g_path, &t, &err) != 0) fail_msg("load: %s", err.msg);
  assert_int_equal(t.cparams.window, 1);
  assert_int_equal(t.cparams.batches_per_epoch, 45);
  assert_int_equal(t.cparams.eval_rows, 110);
  assert_int_equal(t.cparams.eval_rows_per_round, 10);
  assert_int_equal(t.cparams.train_rounds, 45);
  assert_int_equal(t.cparams.eval_rounds, 11);
  assert_false(t.cparams.hashed);
}

static void test_bad_fields_are_named(void **st) {
  (void)st;
  struct {
    const char *obj, *key, *value, *named;
  } cases[] = {
      {NULL, "contract", "0x1234", "\"contract\""},
      {NULL, "token", "0xZZ00000000000000000000000000000000000000", "\"token\""},
      {"contract_params", "reward_per_submission", "12x", "\"reward_per_submission\""},
      {"contract_params", "reward_pool", "-5", "\"reward_pool\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bbvfl_err err;
    load_with(cases[i].obj, cases[i].key, cases[i].value, &err);
    if (!strstr(err.msg, cases[i].named) || !strstr(err.msg, g_path)) fail_msg("case %zu: '%s'", i, err.msg);
  }
}

/* VFL-AFE's local steps before PBM: "training"."afe" round-trips every field (and the clip t),
 * is absent when off, and a malformed one is refused naming the field. */
static void test_afe_round_trip(void **st) {
  (void)st;
  bbvfl_session s, t;
  make_session(&s);
  bbvfl_err err = {0};
  if (bbvfl_session_save(&s, g_path, &err) != 0 || bbvfl_session_load(g_path, &t, &err) != 0) fail_msg("%s", err.msg);
  assert_false(t.train.afe.on);
  s.train.afe.on = s.train.afe.rescale = 1;
  s.train.afe.adjust = 0;
  s.train.afe.lambda = 0.25;
  s.train.afe.alpha = 0.125;
  s.train.afe.conf = 0.5;
  s.train.afe.p1 = 0.002;
  s.train.afe.p2 = 0.004;
  s.train.mech.clip = 3.5;
  if (bbvfl_session_save(&s, g_path, &err) != 0 || bbvfl_session_load(g_path, &t, &err) != 0) fail_msg("%s", err.msg);
  assert_true(t.train.afe.on && t.train.afe.rescale && !t.train.afe.adjust);
  assert_true(t.train.afe.lambda == 0.25 && t.train.afe.alpha == 0.125 && t.train.afe.conf == 0.5);
  assert_true(t.train.afe.p1 == 0.002 && t.train.afe.p2 == 0.004 && t.train.mech.clip == 3.5);
  /* malformed: each refused, naming "afe" */
  json_error_t je;
  json_t *root = json_load_file(g_path, 0, &je);
  assert_non_null(root);
  json_t *afe = json_object_get(json_object_get(root, "training"), "afe");
  assert_non_null(afe);
  json_object_set_new(afe, "rescale", json_string("yes"));
  assert_int_equal(json_dump_file(root, g_path, 0), 0);
  assert_int_equal(bbvfl_session_load(g_path, &t, &err), -1);
  if (!strstr(err.msg, "\"afe\"")) fail_msg("'%s'", err.msg);
  json_object_set_new(afe, "rescale", json_true());
  json_object_set_new(afe, "clip", json_real(-1));
  assert_int_equal(json_dump_file(root, g_path, 0), 0);
  assert_int_equal(bbvfl_session_load(g_path, &t, &err), -1);
  if (!strstr(err.msg, "\"clip\"")) fail_msg("'%s'", err.msg);
  json_decref(root);
}

static int setup(void **st) {
  (void)st;
  if (!mkdtemp(g_dir)) return -1;
  snprintf(g_path, sizeof g_path, "%s/session.json", g_dir);
  return 0;
}

static int teardown(void **st) {
  (void)st;
  unlink(g_path);
  rmdir(g_dir);
  return 0;
}


/* The setup checks a deploy runs (and `bbvfl deploy`/`demo` before touching the chain): each
 * refusal names the flag; a good setup passes. */
static void test_setup_checks(void **st) {
  (void)st;
  bbvfl_session s;
  bbvfl_err err = {0};
  make_session(&s);
  assert_int_equal(bbvfl_session_check_setup(&s, &err), 0);
  s.train.mech.kind = BBVFL_MECH_NPQ;
  assert_int_equal(bbvfl_session_check_setup(&s, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  assert_non_null(strstr(err.msg, "only pbm"));
  make_session(&s);
  s.train.staleness = 2;
  s.cparams.hashed = 0; /* staleness 2 needs hashed aggregation */
  assert_int_equal(bbvfl_session_check_setup(&s, &err), -1);
  assert_non_null(strstr(err.msg, "--aggregation hashed"));
  make_session(&s);
  s.train.M = 65;
  assert_int_equal(bbvfl_session_check_setup(&s, &err), -1);
  assert_non_null(strstr(err.msg, "--clients"));
  make_session(&s);
  s.train.M = 64;
  s.train.mech.b = 255; /* 64 x 255 = 16320 fits 16-bit lanes */
  assert_int_equal(bbvfl_session_check_setup(&s, &err), 0);
  int hashed = -1;
  assert_int_equal(bbvfl_session_parse_aggregation("hashed", &hashed, &err), 0);
  assert_int_equal(hashed, 1);
  assert_int_equal(bbvfl_session_parse_aggregation("optimistic", &hashed, &err), 0);
  assert_int_equal(hashed, 3);
  assert_int_equal(bbvfl_session_parse_aggregation("packed", &hashed, &err), 0);
  assert_int_equal(hashed, 2);
  assert_int_equal(bbvfl_session_parse_aggregation("lanes", &hashed, &err), -1);
  assert_non_null(strstr(err.msg, "'lanes'"));
  uint64_t seed = 0;
  assert_int_equal(bbvfl_session_parse_seed("42", &seed, &err), 0);
  assert_int_equal(seed, 42);
  assert_int_equal(bbvfl_session_parse_seed("9223372036854775808", &seed, &err), -1); /* 2^63 */
  assert_int_equal(bbvfl_session_parse_seed("-1", &seed, &err), -1);
}

/* --contract: the session's aggregator in any case passes, another address or no address fails. */
static void test_contract_check(void **st) {
  (void)st;
  bbvfl_session s;
  bbvfl_err err = {0};
  make_session(&s);
  char a[43];
  bbvfl_addr_checksum(s.contract, a);
  assert_int_equal(bbvfl_session_check_contract(&s, a, &err), 0);
  a[41] = a[41] == '1' ? '2' : '1';
  assert_int_equal(bbvfl_session_check_contract(&s, a, &err), -1);
  assert_int_equal(bbvfl_session_check_contract(&s, "0x12", &err), -1);
  assert_non_null(strstr(err.msg, "--contract"));
}

/* bbvfl_session_locate reads where the history is; a file without a contract is refused. */
static void test_locate(void **st) {
  (void)st;
  bbvfl_session s;
  bbvfl_err err = {0};
  make_session(&s);
  assert_int_equal(bbvfl_session_save(&s, g_path, &err), 0);
  bbvfl_session_loc loc;
  assert_int_equal(bbvfl_session_locate(g_path, &loc, &err), 0);
  assert_string_equal(loc.rpc_url, "http://127.0.0.1:8545");
  assert_int_equal(loc.deploy_block, 7);
  uint8_t addr[20];
  assert_int_equal(bbvfl_addr_parse(loc.contract, addr, &err), 0);
  assert_memory_equal(addr, s.contract, 20);
  FILE *f = fopen(g_path, "w");
  fputs("{\"rpc_url\": \"http://x\", \"deploy_block\": 1}", f);
  fclose(f);
  assert_int_equal(bbvfl_session_locate(g_path, &loc, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
}

/* The client's summary: written once with every field; the active client's has its privacy
 * (the same epsilon as the accountant for the session's setup), a passive client's none. */
static void test_summary(void **st) {
  (void)st;
  bbvfl_session s;
  bbvfl_err err = {0};
  make_session(&s);
  s.cparams.masked = 0;
  bbvfl_onchain_result r;
  memset(&r, 0, sizeof r);
  r.index = 2;
  r.participants = 4;
  r.n_train = 455;
  r.rounds = 14;
  r.submissions = 14;
  r.gas_submit = 1000;
  r.epochs = 2;
  bbvfl_epoch_metrics m[2] = {{.epoch = 1, .auroc = 0.9}, {.epoch = 2, .auroc = 0.95}};
  double agg[2] = {0.5, 0.25};
  r.per_epoch = m;
  r.agg_s = agg;
  char path[400];
  snprintf(path, sizeof path, "%s/summary.json", g_dir);
  for (int active = 0; active <= 1; active++) {
    r.was_active = active;
    bbvfl_onchain_summary sm;
    assert_int_equal(bbvfl_onchain_summary_write(&s, &r, 1e-5, path, &sm, &err), 0);
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    assert_non_null(o);
    assert_true(json_equal(o, sm.json));
    static const char *const keys[] = {"index", "active", "session_seed", "rounds", "submissions", "gas_submit",
                                       "gas_other", "wall_s", "send_s", "wait_s", "learn_s", "checkpoint_s",
                                       "masked", "gas_aggregate", "gas_gradient", "participants", "label_split",
                                       "epochs"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) assert_non_null(json_object_get(o, keys[k]));
    assert_int_equal(json_integer_value(json_object_get(o, "index")), 2);
    assert_int_equal(json_array_size(json_object_get(o, "epochs")), 2);
    const json_t *pr = json_object_get(o, "privacy");
    assert_int_equal(sm.privacy_done, active);
    if (!active) {
      assert_null(pr);
    } else {
      assert_non_null(pr);
      bbvfl_offchain_cfg tc = s.train;
      tc.M = 4;
      bbvfl_privacy want;
      assert_int_equal(bbvfl_cfg_privacy(&tc, 455, 0, 4, 1e-5, &want, &err), 0);
      assert_true(json_real_value(json_object_get(pr, "epsilon_feature")) == want.rdp.epsilon_feature);
      assert_non_null(json_object_get(pr, "levels"));
      assert_int_equal(json_integer_value(json_object_get(pr, "participants")), 4);
    }
    json_decref(o);
    bbvfl_onchain_summary_free(&sm);
  }
  /* a folder that cannot be written: an error, nothing half-written */
  bbvfl_onchain_summary sm;
  assert_int_equal(bbvfl_onchain_summary_write(&s, &r, 1e-5, "/nonexistent-dir/summary.json", &sm, &err), -1);
  assert_null(sm.json);
  bbvfl_onchain_summary_free(&sm);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_bad_fields_are_named),
      cmocka_unit_test(test_afe_round_trip),
      cmocka_unit_test(test_file_before_windows),
      cmocka_unit_test(test_setup_checks),
      cmocka_unit_test(test_contract_check),
      cmocka_unit_test(test_locate),
      cmocka_unit_test(test_summary),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
