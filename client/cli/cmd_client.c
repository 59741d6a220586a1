/* bbvfl client: one organisation's process in an on-chain session. */
#include <errno.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/train_common.h"
#include "common/fsutil.h"
#include "eth/wallet.h"
#include "ml/data.h"
#include "vfl/onchain.h"
#include "vfl/session.h"

static int parse_u64(const char *s, const char *flag, uint64_t *out, bbvfl_err *err) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-')
    return bbvfl_fail(err, BBVFL_E_ARG, "%s '%s': expected a non-negative number", flag, s);
  *out = v;
  return 0;
}

/* The active client's privacy report: the local-DP bounds, and in masked mode the masked
 * feature-level bound for the participants that were actually present (M minus dropouts), added to
 * summary.json and printed to the log. */
static int add_privacy(const bbvfl_session *s, const bbvfl_onchain_result *res, const char *path, bbvfl_err *err) {
  const double delta = 1e-5;
  bbvfl_offchain_cfg tc = s->train;
  tc.M = (int)s->cparams.clients;
  bbvfl_privacy pv;
  if (train_common_privacy(&tc, res->n_train, res->masked, (int)res->participants, delta, &pv, err) < 0) return -1;
  /* epsilon_feature/_sample/_feature_masked: the RDP figures (kept for scripts); "levels": every
     level with its method, from the one accountant */
  json_t *pr = json_pack("{s:f, s:o, s:o, s:b, s:i, s:o}", "delta", delta, "epsilon_feature",
                         train_json_num(pv.finite ? pv.rdp.epsilon_feature : INFINITY), "epsilon_sample",
                         train_json_num(pv.finite ? pv.rdp.epsilon_sample : INFINITY), "masked", res->masked,
                         "participants", (int)res->participants, "levels", bbvfl_privacy_json(&pv));
  if (!pr) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  if (res->masked)
    json_object_set_new(pr, "epsilon_feature_masked", train_json_num(pv.masked_row_feature.epsilon));
  char line[1024];
  bbvfl_privacy_line(&pv, line, sizeof line);
  fprintf(stderr, "privacy: %s\n", line);
  fprintf(stderr, "privacy scope: %s\n", bbvfl_privacy_scope(&pv));
  char *text = NULL;
  size_t len = 0;
  if (bbvfl_read_file(path, 1 << 20, &text, &len, err) < 0) {
    json_decref(pr);
    return -1;
  }
  json_t *o = json_loadb(text, len, 0, NULL);
  free(text);
  if (!o) {
    json_decref(pr);
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s: not JSON", path);
  }
  json_object_set_new(o, "privacy", pr);
  char *out = json_dumps(o, JSON_INDENT(2));
  json_decref(o);
  if (!out) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  int rc = bbvfl_write_file_atomic(path, out, strlen(out), 0644, err);
  free(out);
  return rc;
}

int cmd_client(int argc, char **argv) {
  const char *session = NULL, *rpc = NULL, *contract = NULL, *key_file = NULL, *key_env = NULL, *data = NULL,
             *label = NULL, *columns = NULL, *state_dir = NULL, *seed_s = NULL, *label_rows = NULL;
  int labels = 0, party = -1, expire = 0, as_json = 0, exit_after = 0, pause_after = 0;
  double timeout = 120, takeover = 30, node_down = 120;
  const cli_opt opts[] = {
      {"session", OPT_STR, &session, "FILE", "session file written by bbvfl deploy (required)"},
      {"rpc", OPT_STR, &rpc, "URL", "JSON-RPC endpoint (default: the session's rpc_url)"},
      {"contract", OPT_STR, &contract, "ADDR", "check that the session's aggregator is ADDR"},
      {"key-file", OPT_STR, &key_file, "FILE", "this organisation's key (hex, mode 0600)"},
      {"key-env", OPT_STR, &key_env, "VAR", "read the key from environment variable VAR instead"},
      {"data", OPT_STR, &data, "FILE", "this organisation's table (default: the session's data)"},
      {"label", OPT_STR, &label, "NAME", "label column of the table (default: the session's)"},
      {"columns", OPT_STR, &columns, "SPEC", "this organisation's feature columns, e.g. 0-5 (required)"},
      {"labels", OPT_FLAG, &labels, NULL, "this organisation holds the labels (may act as active client)"},
      {"label-rows", OPT_STR, &label_rows, "SPEC",
       "labels split across clients: this organisation holds the labels of these rows only, e.g. 0-284 "
       "(0-based row indices; other rows' label cells are not read); implies --labels"},
      {"state-dir", OPT_STR, &state_dir, "DIR", "checkpoints, election secret, log summary (required)"},
      {"seed", OPT_STR, &seed_s, "N", "repeatable model init and noise from N (default: init from the session seed, "
                                      "noise from getrandom)"},
      {"party", OPT_INT, &party, "N", "stream index for --seed (default: the registration index)"},
      {"round-timeout", OPT_DBL, &timeout, "S", "give up when a round does not complete in S seconds (default 120)"},
      {"expire", OPT_FLAG, &expire, NULL, "on a round timeout call expireRound() to exclude the missing clients"},
      {"node-down-timeout", OPT_DBL, &node_down, "S",
       "the node unreachable mid-session: wait for it up to S s, retrying with backoff (default 120; 0: fail at once)"},
      {"takeover-after", OPT_DBL, &takeover, "S",
       "after S s waiting for the active client, call reelect()/expireRound() until the contract agrees it is "
       "overdue; elected, take the head over (default 30; 0: never)"},
      {"exit-after-round", OPT_INT, &exit_after, "N", "testing: stop after N rounds, as if killed"},
      {"pause-after-submit", OPT_INT, &pause_after, "N", "testing: freeze (SIGSTOP) right after submitting the N-th round"},
      {"json", OPT_FLAG, &as_json, NULL, "print the summary as one JSON object"},
  };
  cli_spec spec = {"bbvfl client", "one organisation's client process in an on-chain session",
                   "--session FILE --key-file FILE --columns SPEC --state-dir DIR [OPTIONS]",
                   "Registers the key, takes part in the commit-reveal election, then runs every round:\n"
                   "its embedding of its own columns, PBM, submit; as the elected active client it also\n"
                   "trains the fusion head, posts gradients, metrics and pays the rewards. It exits when\n"
                   "the session ends. Restarted with the same key, session and --state-dir it carries on\n"
                   "from its checkpoint and the chain. The key is never taken from the command line.",
                   opts, sizeof opts / sizeof opts[0]};
  bbvfl_err err = {0};
  size_t npos = 0;
  int rc = cli_parse(&spec, argc, argv, NULL, 0, &npos, &err);
  if (rc == 1) return 0;
  if (rc < 0) return cli_report(&err);
  if (!session || !columns || !state_dir || (!key_file && !key_env) || (key_file && key_env)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "need --session, --columns, --state-dir and one of --key-file / --key-env");
    return cli_report(&err);
  }
  if (!(node_down >= 0)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--node-down-timeout must be >= 0");
    return cli_report(&err);
  }
  if (!(takeover >= 0)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--takeover-after must be >= 0");
    return cli_report(&err);
  }
  if (!(timeout > 0)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--round-timeout must be > 0");
    return cli_report(&err);
  }
  bbvfl_session s;
  if (bbvfl_session_load(session, &s, &err) < 0) return cli_report(&err);
  if (contract) {
    uint8_t a[20];
    if (bbvfl_addr_parse(contract, a, &err) < 0) return cli_report(&err);
    if (memcmp(a, s.contract, 20)) {
      bbvfl_fail(&err, BBVFL_E_ARG, "--contract %s is not the session's aggregator", contract);
      return cli_report(&err);
    }
  }
  bbvfl_onchain_cfg cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.sess = &s;
  cfg.rpc_url = rpc;
  cfg.columns = columns;
  cfg.has_labels = labels || label_rows;
  cfg.label_rows = label_rows;
  cfg.party = party;
  cfg.seed = s.train.seed;
  cfg.seeded_noise = 0;
  if (seed_s) {
    if (parse_u64(seed_s, "--seed", &cfg.seed, &err) < 0) return cli_report(&err);
    cfg.seeded_noise = 1;
  }
  cfg.state_dir = state_dir;
  cfg.round_timeout_s = timeout;
  cfg.expire = expire;
  cfg.takeover_after_s = takeover;
  cfg.node_down_timeout_s = node_down;
  cfg.exit_after_round = exit_after;
  cfg.pause_after_submit = pause_after;
  if (exit_after < 0 || pause_after < 0) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--exit-after-round and --pause-after-submit take a round count >= 1");
    return cli_report(&err);
  }
  cfg.log = stderr;
  /* test hook: plaintext q per round (tests of masked mode compare it with the chain) */
  const char *dump = getenv("BBVFL_TEST_DUMP_Q");
  if (dump && *dump) {
    if (bbvfl_mkdirs(dump, 0700, &err) < 0) return cli_report(&err);
    cfg.dump_q_dir = dump;
  }
  bbvfl_key k;
  if ((key_file ? bbvfl_key_load_file(key_file, &k, &err) : bbvfl_key_load_env(key_env, &k, &err)) < 0)
    return cli_report(&err);
  bbvfl_dataset ds;
  bbvfl_csv_opts co = {.label = label ? label : (s.label[0] ? s.label : NULL)};
  if (bbvfl_csv_load(data ? data : s.data, &co, &ds, &err) < 0) {
    bbvfl_key_wipe(&k);
    return cli_report(&err);
  }
  cfg.key = &k;
  cfg.ds = &ds;
  bbvfl_onchain_result res;
  rc = bbvfl_onchain_run(&cfg, &res, &err);
  bbvfl_key_wipe(&k);
  bbvfl_dataset_free(&ds);
  char p[1200];
  snprintf(p, sizeof p, "%s/summary.json", state_dir);
  bbvfl_err e2 = {0};
  if (rc == 0 && bbvfl_onchain_result_save(&res, p, &e2) < 0) fprintf(stderr, "bbvfl client: warning: %s\n", e2.msg);
  if (rc == 0 && res.was_active && add_privacy(&s, &res, p, &e2) < 0)
    fprintf(stderr, "bbvfl client: warning: privacy report: %s\n", e2.msg);
  if (rc == 0 && as_json) {
    char *text = NULL;
    size_t len = 0;
    if (bbvfl_read_file(p, 1 << 20, &text, &len, &e2) == 0) {
      json_t *o = json_loadb(text, len, 0, NULL);
      char *c = o ? json_dumps(o, JSON_COMPACT) : NULL;
      if (c) printf("%s\n", c);
      free(c);
      json_decref(o);
      free(text);
    }
  }
  bbvfl_onchain_result_free(&res);
  if (rc < 0) return cli_report(&err);
  return 0;
}
