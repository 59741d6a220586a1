/* The deploy-and-clients half of include/bbvfl/session.h: bbvfl_deploy_session, then one
 * bbvfl_client_run per organisation (each in a forked process, as the header asks), then
 * bbvfl_audit_session, on the test's node (BBVFL_RPC_URL, from tests/with-devnet.sh; a block per
 * transaction). Checked: the deployment's structured result (addresses, chain, rounds, each
 * client's columns, the session file, the funded keys at mode 0600), every client's result (its
 * registration index, exactly one active client, the session's rounds, submissions, gas), a
 * passing audit; bad input to either call is ARG (IO for a missing key file) naming the problem,
 * with no block mined (no transaction sent) and no session file, key folder or summary written. The library
 * is driven through the public header; the block number is read with the internal JSON-RPC
 * client (eth/rpc.h), the one thing the public API has no call for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bbvfl/bbvfl.h"
#include "eth/rpc.h"

#include <jansson.h>

#define NCLIENTS 2

static const char *node(void) {
  const char *url = getenv("BBVFL_RPC_URL");
  if (!url || !*url) fail_msg("run under tests/with-devnet.sh (BBVFL_RPC_URL)");
  return url;
}

static uint64_t block_number(void) {
  bbvfl_err e = {0};
  bbvfl_rpc *r = bbvfl_rpc_new(node(), NULL, &e);
  if (!r) fail_msg("rpc: %s", e.msg);
  uint64_t n = 0;
  if (bbvfl_rpc_block_number(r, &n, &e) < 0) fail_msg("eth_blockNumber: %s", e.msg);
  bbvfl_rpc_free(r);
  return n;
}

static bbvfl_config *small_config(int clients) {
  bbvfl_config *cfg = NULL;
  assert_int_equal(bbvfl_config_create(&cfg, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_clients(cfg, clients, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_epochs(cfg, 1, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_embedding(cfg, 4, NULL), BBVFL_STATUS_OK);
  assert_int_equal(bbvfl_config_set_batch(cfg, 40, NULL), BBVFL_STATUS_OK);
  return cfg;
}

/* A deployment of the small config into run (RUN/session.json, keys in RUN/keys). */
static void deploy(const char *run, bbvfl_deploy_result *dep) {
  char sf[512], keys[512];
  snprintf(sf, sizeof sf, "%s/session.json", run);
  snprintf(keys, sizeof keys, "%s/keys", run);
  bbvfl_config *cfg = small_config(NCLIENTS);
  bbvfl_deploy_opts o = {.rpc_url = node(), .config = cfg, .session_file = sf, .client_keys_dir = keys};
  bbvfl_error err;
  bbvfl_status st = bbvfl_deploy_session(&o, dep, &err);
  bbvfl_config_destroy(cfg);
  if (st != BBVFL_STATUS_OK) fail_msg("deploy: %s: %s", bbvfl_status_name(st), err.message);
}

static void client_opts(const char *run, const bbvfl_deploy_result *dep, int m, char *key, char *state,
                        bbvfl_client_opts *o) {
  snprintf(key, 512, "%s/keys/client-%d.key", run, m);
  snprintf(state, 512, "%s/clients/%d", run, m);
  memset(o, 0, sizeof *o);
  o->session_file = dep->session_file;
  o->key_file = key;
  o->columns = dep->columns[m];
  o->state_dir = state;
  o->has_labels = 1;
  o->party = m;
}

/* What a client process sends back. */
typedef struct {
  bbvfl_status st;
  bbvfl_client_result r;
  char msg[256];
} child_report;

static void test_deploy_clients_audit(void **state) {
  (void)state;
  char run[] = "/tmp/bbvfl-session-api-clients.XXXXXX";
  assert_non_null(mkdtemp(run));
  bbvfl_deploy_result dep;
  deploy(run, &dep);
  /* the deployment */
  assert_int_equal(strlen(dep.contract), 42);
  assert_int_equal(strncmp(dep.contract, "0x", 2), 0);
  assert_int_equal(strlen(dep.token), 42);
  assert_string_not_equal(dep.contract, dep.token);
  assert_int_equal(dep.chain_id, 31337);
  assert_true(dep.deploy_block > 0);
  assert_true(dep.rounds >= 2);
  assert_int_equal(dep.clients, NCLIENTS);
  assert_non_null(dep.columns);
  assert_string_equal(dep.columns[0], "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14"); /* an even split of the 30 columns */
  assert_string_equal(dep.columns[1], "15,16,17,18,19,20,21,22,23,24,25,26,27,28,29");
  struct stat sb;
  assert_int_equal(stat(dep.session_file, &sb), 0);
  for (int m = 0; m < NCLIENTS; m++) {
    char key[512];
    snprintf(key, sizeof key, "%s/keys/client-%d.key", run, m);
    assert_int_equal(stat(key, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
  }
  /* the clients, one process each */
  int fds[NCLIENTS][2];
  pid_t pids[NCLIENTS];
  fflush(NULL);
  for (int m = 0; m < NCLIENTS; m++) {
    assert_int_equal(pipe(fds[m]), 0);
    pids[m] = fork();
    assert_true(pids[m] >= 0);
    if (pids[m] == 0) {
      char key[512], st[512];
      bbvfl_client_opts o;
      client_opts(run, &dep, m, key, st, &o);
      child_report rep;
      memset(&rep, 0, sizeof rep);
      bbvfl_error err;
      rep.st = bbvfl_client_run(&o, &rep.r, &err);
      if (rep.st != BBVFL_STATUS_OK) snprintf(rep.msg, sizeof rep.msg, "%.200s", err.message);
      _exit(write(fds[m][1], &rep, sizeof rep) == (ssize_t)sizeof rep ? 0 : 2);
    }
    close(fds[m][1]);
  }
  child_report rep[NCLIENTS];
  for (int m = 0; m < NCLIENTS; m++) {
    ssize_t got = read(fds[m][0], &rep[m], sizeof rep[m]);
    close(fds[m][0]);
    int status = 0;
    assert_int_equal(waitpid(pids[m], &status, 0), pids[m]);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(got, (ssize_t)sizeof rep[m]);
    if (rep[m].st != BBVFL_STATUS_OK) fail_msg("client %d: %s: %s", m, bbvfl_status_name(rep[m].st), rep[m].msg);
  }
  int active = 0;
  for (int m = 0; m < NCLIENTS; m++) {
    const bbvfl_client_result *r = &rep[m].r;
    assert_true(r->index >= 0 && r->index < NCLIENTS);
    assert_int_equal(r->rounds, dep.rounds);
    assert_true(r->submissions >= r->rounds);
    assert_true(r->gas_used > 0);
    active += r->was_active;
  }
  assert_int_not_equal(rep[0].r.index, rep[1].r.index);
  assert_int_equal(active, 1);
  /* the audit */
  bbvfl_audit_summary au;
  bbvfl_error err;
  bbvfl_status st = bbvfl_audit_session(dep.session_file, node(), &au, &err);
  if (st != BBVFL_STATUS_OK) fail_msg("audit: %s: %s", bbvfl_status_name(st), err.message);
  if (au.verdict != BBVFL_AUDIT_PASS) fail_msg("audit verdict %d: %s", (int)au.verdict, au.first_failure);
  assert_int_equal(au.checks_failed, 0);
  assert_true(au.rounds >= dep.rounds);
  bbvfl_deploy_result_free(&dep);
  assert_null(dep.columns);
}

/* hashed = 1 alone deploys the hashed contract (the public API names no aggregation mode): a
   session whose Config says hashed on the lane contract reverts WrongModeContract at deploy. */
static void test_deploy_hashed(void **state) {
  (void)state;
  char run[] = "/tmp/bbvfl-session-api-hashed.XXXXXX";
  assert_non_null(mkdtemp(run));
  char sf[600];
  snprintf(sf, sizeof sf, "%s/session.json", run);
  bbvfl_config *cfg = small_config(NCLIENTS);
  bbvfl_deploy_opts o = {.rpc_url = node(), .config = cfg, .session_file = sf, .hashed = 1, .open_registration = 1};
  bbvfl_deploy_result dep;
  bbvfl_error err;
  bbvfl_status st = bbvfl_deploy_session(&o, &dep, &err);
  bbvfl_config_destroy(cfg);
  if (st != BBVFL_STATUS_OK) fail_msg("hashed deploy: %s: %s", bbvfl_status_name(st), err.message);
  json_error_t je;
  json_t *j = json_load_file(sf, 0, &je);
  assert_non_null(j);
  json_t *cp = json_object_get(j, "contract_params");
  assert_non_null(cp);
  assert_true(json_is_true(json_object_get(cp, "hashed")));
  json_decref(j);
  bbvfl_deploy_result_free(&dep);
}

/* A deploy that must fail with `want` before sending anything, writing no session file. */
static void deploy_refused(const bbvfl_deploy_opts *o, bbvfl_status want, const char *why) {
  uint64_t before = block_number();
  bbvfl_deploy_result dep;
  bbvfl_error err;
  bbvfl_error_clear(&err);
  bbvfl_status st = bbvfl_deploy_session(o, &dep, &err);
  if (st != want) fail_msg("%s: got %s (%s), expected %s", why, bbvfl_status_name(st), err.message, bbvfl_status_name(want));
  assert_int_equal(err.code, want);
  assert_true(err.message[0] != 0);
  assert_null(dep.columns);
  assert_int_equal(block_number(), before);
  struct stat sb; /* no session file (the folder case: still the folder) */
  if (o->session_file && stat(o->session_file, &sb) == 0) assert_true(S_ISDIR(sb.st_mode));
}

static void test_deploy_bad_input(void **state) {
  (void)state;
  char run[] = "/tmp/bbvfl-session-api-deploy-bad.XXXXXX";
  assert_non_null(mkdtemp(run));
  char sf[512], nofolder[512], nokey[512];
  snprintf(sf, sizeof sf, "%s/session.json", run);
  snprintf(nofolder, sizeof nofolder, "%s/missing/session.json", run);
  snprintf(nokey, sizeof nokey, "%s/no.key", run);
  bbvfl_config *cfg = small_config(NCLIENTS);
  bbvfl_deploy_opts o = {.rpc_url = node(), .config = cfg, .session_file = sf};
  o.config = NULL;
  deploy_refused(&o, BBVFL_STATUS_ARG, "no config");
  o.config = cfg;
  o.rpc_url = NULL;
  deploy_refused(&o, BBVFL_STATUS_ARG, "no node");
  o.rpc_url = node();
  o.session_file = nofolder;
  deploy_refused(&o, BBVFL_STATUS_ARG, "the session file's folder is missing");
  o.session_file = run;
  deploy_refused(&o, BBVFL_STATUS_ARG, "the session file is a folder");
  o.session_file = sf;
  o.key_file = nokey;
  char keys[512];
  snprintf(keys, sizeof keys, "%s/keys", run);
  o.client_keys_dir = keys;
  deploy_refused(&o, BBVFL_STATUS_IO, "a missing key file");
  assert_int_not_equal(access(keys, F_OK), 0); /* nor the key folder */
  o.key_file = NULL;
  bbvfl_config *three = small_config(NCLIENTS);
  assert_int_equal(bbvfl_config_set_partition(three, "0-9/10-19/20-29", NULL), BBVFL_STATUS_OK);
  o.config = three;
  deploy_refused(&o, BBVFL_STATUS_ARG, "a partition of 3 clients for 2");
  bbvfl_config *many = small_config(40);
  o.config = many;
  deploy_refused(&o, BBVFL_STATUS_ARG, "more clients than feature columns");
  /* who may join: a member list, generated keys or open registration asked for; nothing else */
  o.config = cfg;
  o.client_keys_dir = NULL;
  deploy_refused(&o, BBVFL_STATUS_ARG, "no members and no open registration");
  o.members = "0x1111111111111111111111111111111111111111";
  deploy_refused(&o, BBVFL_STATUS_ARG, "one member for a session of two clients");
  o.members = "0x1111111111111111111111111111111111111111,0x1111111111111111111111111111111111111111";
  deploy_refused(&o, BBVFL_STATUS_ARG, "a member named twice");
  o.members = "0x1111111111111111111111111111111111111111,0x22";
  deploy_refused(&o, BBVFL_STATUS_ARG, "a malformed member address");
  o.open_registration = 1;
  deploy_refused(&o, BBVFL_STATUS_ARG, "open registration with a member list");
  bbvfl_config_destroy(three);
  bbvfl_config_destroy(many);
  bbvfl_config_destroy(cfg);
}

/* A client that must fail with `want` before sending anything, writing no summary. */
static void client_refused(const bbvfl_client_opts *o, bbvfl_status want, const char *why) {
  uint64_t before = block_number();
  bbvfl_client_result r;
  bbvfl_error err;
  bbvfl_error_clear(&err);
  bbvfl_status st = bbvfl_client_run(o, &r, &err);
  if (st != want) fail_msg("%s: got %s (%s), expected %s", why, bbvfl_status_name(st), err.message, bbvfl_status_name(want));
  assert_int_equal(err.code, want);
  assert_true(err.message[0] != 0);
  assert_int_equal(block_number(), before);
  if (o->state_dir) {
    char sm[600];
    snprintf(sm, sizeof sm, "%s/summary.json", o->state_dir);
    assert_int_not_equal(access(sm, F_OK), 0);
  }
}

static void test_client_bad_input(void **state) {
  (void)state;
  char run[] = "/tmp/bbvfl-session-api-client-bad.XXXXXX";
  assert_non_null(mkdtemp(run));
  bbvfl_deploy_result dep;
  deploy(run, &dep);
  char key[512], st[512], nokey[512];
  bbvfl_client_opts good, o;
  client_opts(run, &dep, 0, key, st, &good);
  snprintf(nokey, sizeof nokey, "%s/keys/none.key", run);
  o = good;
  o.session_file = NULL;
  client_refused(&o, BBVFL_STATUS_ARG, "no session file");
  o = good;
  o.columns = NULL;
  client_refused(&o, BBVFL_STATUS_ARG, "no columns");
  o = good;
  o.party = -2;
  client_refused(&o, BBVFL_STATUS_ARG, "party -2");
  o = good;
  o.party = 64;
  client_refused(&o, BBVFL_STATUS_ARG, "party 64");
  o = good;
  o.round_timeout_s = -1;
  client_refused(&o, BBVFL_STATUS_ARG, "a negative round timeout");
  o = good;
  o.round_timeout_s = NAN;
  client_refused(&o, BBVFL_STATUS_ARG, "a NaN round timeout");
  o = good;
  o.has_labels = 2;
  client_refused(&o, BBVFL_STATUS_ARG, "has_labels 2");
  o = good;
  o.columns = "0-99";
  client_refused(&o, BBVFL_STATUS_ARG, "columns beyond the table");
  o = good;
  o.key_file = nokey;
  client_refused(&o, BBVFL_STATUS_IO, "a missing key file");
  bbvfl_deploy_result_free(&dep);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_deploy_bad_input),
      cmocka_unit_test(test_client_bad_input),
      cmocka_unit_test(test_deploy_clients_audit),
      cmocka_unit_test(test_deploy_hashed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
