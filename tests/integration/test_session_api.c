/* The session API of include/bbvfl/session.h, through the public header only: a small local
 * session (2 clients, 1 epoch, P 4, batch 40) on the test's node (BBVFL_RPC_URL, from
 * tests/with-devnet.sh), run by bbvfl_local_session_run with a progress callback, then audited by
 * bbvfl_audit_session. Checked: the structured result (metrics in range, rounds, gas, the session
 * file, the report's JSON fields), that the callback saw the node, the deployment and the clients
 * at work (TICK) in that order, that the audit passes; a callback that asks to stop stops the
 * session (STATE, no report); a missing config is ARG, before anything touches the chain; a
 * devchain starts (loopback, chain id 31337), refuses a second start in its folder, stops once (then STATE). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bbvfl/bbvfl.h"

typedef struct {
  int node, deployed, ticks, order_ok, stop_at_tick;
  char contract[64];
} seen;

static int on_progress(void *ctx, const bbvfl_progress *p) {
  seen *s = ctx;
  switch (p->kind) {
  case BBVFL_PROGRESS_NODE:
    s->node++;
    break;
  case BBVFL_PROGRESS_DEPLOYED:
    s->deployed++;
    s->order_ok = s->node == 1 && s->ticks == 0;
    snprintf(s->contract, sizeof s->contract, "%s", p->contract);
    break;
  case BBVFL_PROGRESS_TICK:
    s->ticks++;
    if (s->deployed != 1) s->order_ok = 0;
    if (p->rounds == 0 || p->epochs != 1) s->order_ok = 0;
    if (s->stop_at_tick && s->ticks >= s->stop_at_tick) return 1;
    break;
  default:
    break;
  }
  return 0;
}

static bbvfl_config *small_config(void) {
  bbvfl_config *cfg = NULL;
  assert_int_equal(bbvfl_config_create(&cfg, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_clients(cfg, 2, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_epochs(cfg, 1, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_embedding(cfg, 4, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_batch(cfg, 40, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_seed(cfg, 5, NULL), BBVFL_STATUS_OK);
  return cfg;
}

static const char *node(void) {
  const char *url = getenv("BBVFL_RPC_URL");
  if (!url || !*url) fail_msg("run under tests/with-devnet.sh (BBVFL_RPC_URL)");
  return url;
}

static void test_local_session_and_audit(void **state) {
  (void)state;
  char run[] = "/tmp/bbvfl-session-api.XXXXXX";
  assert_non_null(mkdtemp(run));
  bbvfl_config *cfg = small_config();
  seen sn = {0};
  bbvfl_local_session_opts o = {.config = cfg, .run_dir = run, .rpc_url = node(), .round_timeout_s = 120,
                                .progress = on_progress, .progress_ctx = &sn, .progress_every_s = 0.05};
  bbvfl_local_session_result r;
  bbvfl_error err;
  bbvfl_error_clear(&err);
  bbvfl_status st = bbvfl_local_session_run(&o, &r, &err);
  if (st != BBVFL_STATUS_OK) fail_msg("local session: %s: %s", bbvfl_status_name(st), err.message);
  /* the structured result */
  assert_true(r.auroc > 0.5 && r.auroc <= 1.0);
  assert_true(r.accuracy > 0.5 && r.accuracy <= 1.0);
  assert_true(r.test_loss > 0);
  assert_int_equal(r.epochs, 1);
  assert_true(r.rounds >= 2);
  assert_true(r.gas_per_coordinate > 0 && r.gas_per_coordinate < 10000);
  assert_true(r.gas_per_window > 0);
  assert_true(r.training_s > 0 && r.wall_s >= r.training_s);
  assert_true(r.epsilon > 0); /* private noise: a finite headline epsilon */
  assert_string_equal(r.contract, sn.contract);
  assert_int_equal(strlen(r.contract), 42);
  struct stat stb;
  assert_int_equal(stat(r.session_file, &stb), 0);
  assert_non_null(r.report_json);
  assert_non_null(strstr(r.report_json, "\"gas_per_coordinate\""));
  assert_non_null(strstr(r.report_json, "\"client_summaries\""));
  /* the progress callback: node, then the deployment, then the clients at work */
  assert_int_equal(sn.node, 1);
  assert_int_equal(sn.deployed, 1);
  assert_true(sn.ticks >= 1);
  assert_true(sn.order_ok);
  /* the audit from the session file and the chain */
  bbvfl_audit_summary au;
  st = bbvfl_audit_session(r.session_file, NULL, &au, &err);
  if (st != BBVFL_STATUS_OK) fail_msg("audit: %s: %s", bbvfl_status_name(st), err.message);
  if (au.verdict != BBVFL_AUDIT_PASS) fail_msg("audit verdict %d: %s", (int)au.verdict, au.first_failure);
  assert_int_equal(au.checks_failed, 0);
  assert_true(au.checks > 0);
  assert_true(au.rounds >= r.rounds);
  bbvfl_local_session_result_free(&r);
  assert_null(r.report_json);
  bbvfl_config_destroy(cfg);
}

static void test_stop_from_the_callback(void **state) {
  (void)state;
  char run[] = "/tmp/bbvfl-session-api-stop.XXXXXX";
  assert_non_null(mkdtemp(run));
  bbvfl_config *cfg = small_config();
  seen sn = {.stop_at_tick = 1};
  bbvfl_local_session_opts o = {.config = cfg, .run_dir = run, .rpc_url = node(), .progress = on_progress,
                                .progress_ctx = &sn, .progress_every_s = 0.05};
  bbvfl_local_session_result r;
  bbvfl_error err;
  bbvfl_error_clear(&err);
  assert_int_equal(bbvfl_local_session_run(&o, &r, &err), BBVFL_STATUS_STATE);
  assert_int_equal(err.code, BBVFL_STATUS_STATE);
  assert_null(r.report_json);
  assert_int_equal(sn.ticks, 1);
  char report[200];
  snprintf(report, sizeof report, "%s/report.json", run);
  assert_int_not_equal(access(report, F_OK), 0);
  bbvfl_local_session_result_free(&r);
  bbvfl_config_destroy(cfg);
}

static void test_devchain(void **state) {
  (void)state;
  char dir[] = "/tmp/bbvfl-session-api-chain.XXXXXX";
  assert_non_null(mkdtemp(dir));
  bbvfl_devchain c;
  bbvfl_error err;
  bbvfl_status st = bbvfl_devchain_start(dir, 0, &c, &err);
  if (st != BBVFL_STATUS_OK) fail_msg("devchain: %s: %s", bbvfl_status_name(st), err.message);
  assert_true(c.pid > 0);
  assert_int_equal(strncmp(c.rpc_url, "http://127.0.0.1:", 17), 0);
  assert_int_equal(c.chain_id, 31337);
  assert_int_equal(bbvfl_devchain_start(dir, 0, &c, &err), BBVFL_STATUS_STATE); /* one live chain per folder */
  assert_int_equal(bbvfl_devchain_stop(dir, &err), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_devchain_stop(dir, &err), BBVFL_STATUS_STATE); /* nothing recorded any more */
  assert_int_equal(bbvfl_devchain_start(dir, -1, &c, &err), BBVFL_STATUS_ARG);
}

static void test_bad_options(void **state) {
  (void)state;
  bbvfl_local_session_opts o = {.run_dir = "/tmp/never-made-by-bbvfl"};
  bbvfl_local_session_result r;
  bbvfl_error err;
  assert_int_equal(bbvfl_local_session_run(&o, &r, &err), BBVFL_STATUS_ARG);
  assert_int_not_equal(access("/tmp/never-made-by-bbvfl", F_OK), 0);
  bbvfl_audit_summary au;
  assert_int_equal(bbvfl_audit_session("/nonexistent/session.json", NULL, &au, &err), BBVFL_STATUS_IO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_options),
      cmocka_unit_test(test_devchain),
      cmocka_unit_test(test_local_session_and_audit),
      cmocka_unit_test(test_stop_from_the_callback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
