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

#include "vfl/session.h"

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
  c->levels = 16;
  c->beta_micro = 200000;
  c->masked = 1;
  c->train_rounds = 45;
  c->eval_rounds = 11;
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
  snprintf(s->data, sizeof s->data, "data.csv");
  s->n_rows = 569;
}

static void test_round_trip(void **st) {
  (void)st;
  bbvfl_session s, t;
  make_session(&s);
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_session_save(&s, g_path, &err), 0);
  assert_int_equal(bbvfl_session_load(g_path, &t, &err), 0);
  assert_true(t.cparams.masked);
  assert_int_equal(t.cparams.round_timeout_blocks, 12);
  assert_memory_equal(t.contract, s.contract, 20);
  assert_memory_equal(t.token, s.token, 20);
  assert_int_equal(t.lane_bits, 16);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_bad_fields_are_named),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
