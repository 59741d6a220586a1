/* bbvfl client: one organisation's process in an on-chain session. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/onchain_common.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "eth/keystore.h"
#include "eth/wallet.h"
#include "ml/data.h"
#include "onchain/onchain.h"
#include "binding/session.h"
#ifdef BBVFL_TESTONLY_TAMPER
#include "tamper.h"
#endif

/* The flags. */
typedef struct {
  const char *session, *rpc, *contract, *key_file, *key_env, *data, *label, *columns, *state_dir, *seed_s, *label_rows;
  int labels, party, expire, as_json, exit_after, pause_after, via_self;
  double timeout, takeover, node_down, rate_wait, max_fee;
  int confirmations, reprice, no_head_check;
  uint64_t max_log_range;
  bbvfl_key_source ksrc;
} client_flags;

/* Parses argv into f (cli_start: returns 1 with *st set when the command is done, --help or a
   bad flag). */
static int parse_flags(int argc, char **argv, client_flags *f, int *st) {
  const cli_opt opts[] = {
      {"session", OPT_STR, &f->session, "FILE", "session file written by bbvfl deploy (required)"},
      {"rpc", OPT_STR, &f->rpc, "URL[,URL...]",
       "JSON-RPC endpoint (default: the session's rpc_url); several (comma-separated, or the flag repeated): "
       "fail-over to the next one when one fails (transport, HTTP 5xx, rate limited past --rate-limit-wait)"},
      {"rate-limit-wait", OPT_DBL, &f->rate_wait, "S",
       "a node answering HTTP 429/503: back off (its Retry-After, else exponential with jitter) at most S s per "
       "request (default 60)"},
      {"max-log-range", OPT_U64, &f->max_log_range, "N",
       "eth_getLogs: ask for at most N blocks at a time (default: no cap; a node's refusal halves the span anyway)"},
      {"contract", OPT_STR, &f->contract, "ADDR", "check that the session's aggregator is ADDR"},
      {"key-file", OPT_STR, &f->key_file, "FILE", "this organisation's key (hex, mode 0600)"},
      {"key-env", OPT_STR, &f->key_env, "VAR", "read the key from environment variable VAR instead"},
      {"keystore", OPT_STR, &f->ksrc.keystore, "FILE",
       "or the key from an encrypted Web3 Secret Storage v3 file (geth, cast wallet new/import)"},
      {"password-file", OPT_STR, &f->ksrc.password_file, "FILE", "--keystore's password: the first line of FILE (mode 0600)"},
      {"password-env", OPT_STR, &f->ksrc.password_env, "VAR", "--keystore's password: the value of environment variable VAR"},
      {"data", OPT_STR, &f->data, "FILE", "this organisation's table (default: the session's data)"},
      {"label", OPT_STR, &f->label, "NAME", "label column of the table (default: the session's)"},
      {"columns", OPT_STR, &f->columns, "SPEC", "this organisation's feature columns, e.g. 0-5 (required)"},
      {"labels", OPT_FLAG, &f->labels, NULL, "this organisation holds the labels (may act as active client)"},
      {"label-rows", OPT_STR, &f->label_rows, "SPEC",
       "labels split across clients: this organisation holds the labels of these rows only, e.g. 0-284 "
       "(0-based row indices; other rows' label cells are not read); implies --labels"},
      {"state-dir", OPT_STR, &f->state_dir, "DIR", "checkpoints, election secret, log summary (required)"},
      {"seed", OPT_STR, &f->seed_s, "N", "model init from N (default: from the session seed); the noise is this "
                                      "client's own (a key in --state-dir) unless the session declares reproducible "
                                      "noise"},
      {"party", OPT_INT, &f->party, "N", "stream index for --seed (default: the registration index)"},
      {"round-timeout", OPT_DBL, &f->timeout, "S", "give up when a round does not complete in S seconds (default 120)"},
      {"expire", OPT_FLAG, &f->expire, NULL, "on a round timeout call expireRound() to exclude the missing clients"},
      {"node-down-timeout", OPT_DBL, &f->node_down, "S",
       "the node unreachable mid-session: wait for it up to S s, retrying with backoff (default 120; 0: fail at once)"},
      {"takeover-after", OPT_DBL, &f->takeover, "S",
       "after S s waiting for the active client, call reelect()/expireRound() until the contract agrees it is "
       "overdue; elected, take the head over (default 30; 0: never)"},
      {"submit-via-self", OPT_FLAG, &f->via_self, NULL,
       "hashed mode: send each submit as execute(aggregator, calldata) to this key's own address (an EIP-7702 "
       "delegated account or a smart account with that function)"},
      {"max-fee-gwei", OPT_DBL, &f->max_fee, "X",
       "sign a max fee per gas of at most X gwei; while the base fee is above it send nothing, say so and wait "
       "(default: no cap)"},
      {"reprice-blocks", OPT_INT, &f->reprice, "N",
       "replace a transaction unmined after N blocks: same nonce, tip and max fee raised 12.5 % at least (default 3; "
       "0: never)"},
      {"confirmations", OPT_INT, &f->confirmations, "N",
       "payouts (payRewards) wait N blocks on top of their receipt's block and re-check it (default 0)"},
      {"no-head-check", OPT_FLAG, &f->no_head_check, NULL,
       "UNSAFE: apply the active client's gradients without checking them against the replay of the session's "
       "head (by default a passive client refuses a gradient or head that is not the head's and stops)"},
      {"exit-after-round", OPT_INT, &f->exit_after, "N", "testing: stop after N rounds, as if killed"},
      {"pause-after-submit", OPT_INT, &f->pause_after, "N", "testing: freeze (SIGSTOP) right after submitting the N-th round"},
      {"json", OPT_FLAG, &f->as_json, NULL, "print the summary as one JSON object"},
  };
  cli_spec spec = {"bbvfl client", "one organisation's client process in an on-chain session",
                   "--session FILE --key-file FILE --columns SPEC --state-dir DIR [OPTIONS]",
                   "Registers the key, takes part in the commit-reveal election, then runs every round:\n"
                   "its embedding of its own columns, PBM, submit; as the elected active client it also\n"
                   "trains the fusion head, posts gradients, metrics and pays the rewards. It exits when\n"
                   "the session ends. Restarted with the same key, session and --state-dir it carries on\n"
                   "from its checkpoint and the chain. The key is never taken from the command line.",
                   opts, sizeof opts / sizeof opts[0]};
  return cli_start(&spec, argc, argv, st);
}

/* The flags that need no session: which are required, and the timeouts' and fees' ranges. */
static int check_flags(const client_flags *f, bbvfl_err *err) {
  if (!f->session || !f->columns || !f->state_dir ||
      (f->key_file != NULL) + (f->key_env != NULL) + (f->ksrc.keystore != NULL) != 1)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "need --session, --columns, --state-dir and one of --key-file / --key-env / --keystore");
  if (!(f->node_down >= 0)) return bbvfl_fail(err, BBVFL_E_ARG, "--node-down-timeout must be >= 0");
  if (!(f->takeover >= 0)) return bbvfl_fail(err, BBVFL_E_ARG, "--takeover-after must be >= 0");
  if (!(f->timeout > 0)) return bbvfl_fail(err, BBVFL_E_ARG, "--round-timeout must be > 0");
  if (!(f->max_fee >= 0 && f->max_fee <= 1e9))
    return bbvfl_fail(err, BBVFL_E_ARG, "--max-fee-gwei must be a fee in gwei, 0 (no cap) up to 1e9, got %g",
                      f->max_fee);
  if (f->confirmations < 0 || f->confirmations > 1000 || f->reprice < 0 || f->reprice > 1000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--confirmations and --reprice-blocks take 0..1000 blocks");
  return 0;
}

/* The client's configuration from the flags and the loaded session s (borrowed by cfg). */
static int client_cfg(const client_flags *f, bbvfl_session *s, bbvfl_onchain_cfg *cfg, bbvfl_err *err) {
  memset(cfg, 0, sizeof *cfg);
  cfg->sess = s;
  cfg->rpc_url = f->rpc;
  cfg->columns = f->columns;
  cfg->has_labels = f->labels || f->label_rows;
  cfg->label_rows = f->label_rows;
  cfg->party = f->party;
  cfg->seed = s->train.seed;
  /* the noise: private (this client's own key in --state-dir) unless the session declares
     reproducible noise; --seed moves the initialisation only */
  cfg->seeded_noise = s->train.seeded_noise;
  if (f->seed_s && cli_parse_u64(f->seed_s, "--seed", &cfg->seed, err) < 0) return -1;
  train_noise_warning(cfg->seeded_noise, "the session declares reproducible noise");
  cfg->state_dir = f->state_dir;
  cfg->round_timeout_s = f->timeout;
  cfg->expire = f->expire;
  cfg->submit_via_self = f->via_self;
  cfg->takeover_after_s = f->takeover;
  cfg->node_down_timeout_s = f->node_down;
  cfg->rate_limit_wait_s = f->rate_wait;
  cfg->max_log_range = f->max_log_range;
  if (!(f->rate_wait > 0)) return bbvfl_fail(err, BBVFL_E_ARG, "--rate-limit-wait must be > 0");
  cfg->exit_after_round = f->exit_after;
  cfg->no_head_check = f->no_head_check;
  cfg->max_fee_gwei = f->max_fee;
  cfg->confirmations = (unsigned)f->confirmations;
  cfg->reprice_blocks = f->reprice > 0 ? f->reprice : -1;
  cfg->pause_after_submit = f->pause_after;
  if (f->exit_after < 0 || f->pause_after < 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "--exit-after-round and --pause-after-submit take a round count >= 1");
  cfg->log = stderr;
#ifdef BBVFL_TESTONLY_TAMPER /* only in the test-only executable bbvfl-tamper (tests/tamper/tamper.h) */
  if (bbvfl_test_tamper_from_env(cfg, stderr, err) < 0) return -1;
#endif
  /* test hook: plaintext q per round (tests of masked mode compare it with the chain) */
  const char *dump = getenv("BBVFL_TEST_DUMP_Q");
  if (dump && *dump) {
    if (bbvfl_mkdirs(dump, 0700, err) < 0) return -1;
    cfg->dump_q_dir = dump;
  }
  return 0;
}

/* After the run: summary.json in --state-dir (written by the library), the active client's
   privacy lines to the log, --json's summary on stdout. rc: the run's; returns the exit status. */
static int finish(const client_flags *f, const bbvfl_session *s, int rc, bbvfl_onchain_result *res, bbvfl_err *err) {
  char p[1200];
  snprintf(p, sizeof p, "%s/summary.json", f->state_dir);
  bbvfl_onchain_summary sm;
  bbvfl_err e2 = {0};
  if (rc < 0) {
    /* a refused gradient: the summary says where and why ("head_check"), then the error */
    if (res->head_refused && bbvfl_onchain_summary_write(s, res, 1e-5, p, &sm, &e2) == 0) bbvfl_onchain_summary_free(&sm);
    else if (res->head_refused) fprintf(stderr, "bbvfl client: warning: %s\n", e2.msg);
    bbvfl_onchain_result_free(res);
    return cli_report(err);
  }
  if (bbvfl_onchain_summary_write(s, res, 1e-5, p, &sm, &e2) < 0) fprintf(stderr, "bbvfl client: warning: %s\n", e2.msg);
  if (sm.privacy_done) {
    char line[1024];
    bbvfl_privacy_line(&sm.privacy, line, sizeof line);
    fprintf(stderr, "privacy: %s\n", line);
    if (!sm.privacy.reproducible) fprintf(stderr, "privacy scope: %s\n", bbvfl_privacy_scope(&sm.privacy));
  } else if (res->was_active) {
    fprintf(stderr, "bbvfl client: warning: privacy report: %s\n", sm.privacy_err.msg);
  }
  if (f->as_json) cli_print_json(json_incref(sm.json), 0);
  bbvfl_onchain_summary_free(&sm);
  bbvfl_onchain_result_free(res);
  return 0;
}

int cmd_client(int argc, char **argv) {
  client_flags f = {.party = -1, .timeout = 120, .takeover = 30, .node_down = 120, .rate_wait = 60, .reprice = 3};
  int cli_st;
  if (parse_flags(argc, argv, &f, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  f.ksrc.key_file = f.key_file;
  f.ksrc.key_env = f.key_env;
  static char rpc_list[2048];
  if (rpc_flag_join(argc, argv, rpc_list, sizeof rpc_list, &f.rpc, &err) < 0) return cli_report(&err);
  if (check_flags(&f, &err) != 0) return cli_report(&err);
  bbvfl_session s;
  if (bbvfl_session_load(f.session, &s, &err) < 0) return cli_report(&err);
  if (f.contract && bbvfl_session_check_contract(&s, f.contract, &err) < 0) return cli_report(&err);
  bbvfl_onchain_cfg cfg;
  if (client_cfg(&f, &s, &cfg, &err) != 0) return cli_report(&err);
  bbvfl_key k;
  if (bbvfl_key_source_load(&f.ksrc, &k, &err) < 0) return cli_report(&err);
  bbvfl_dataset ds;
  bbvfl_csv_opts co = {.label = f.label ? f.label : (s.label[0] ? s.label : NULL)};
  if (bbvfl_csv_load(f.data ? f.data : s.data, &co, &ds, &err) < 0) {
    bbvfl_key_wipe(&k);
    return cli_report(&err);
  }
  cfg.key = &k;
  cfg.ds = &ds;
  bbvfl_onchain_result res;
  int rc = bbvfl_onchain_run(&cfg, &res, &err);
  bbvfl_key_wipe(&k);
  bbvfl_dataset_free(&ds);
  return finish(&f, &s, rc, &res, &err);
}
