/* bbvfl deploy: token + aggregator for one session, and the session file: flags and printing over
 * bbvfl_deploy_run (run/deploy.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/onchain_common.h"
#include "eth/wallet.h"
#include "binding/session.h"
#include "run/deploy.h"

int cmd_deploy(int argc, char **argv) {
  session_flags f;
  session_flags_defaults(&f);
  const char *rpc_url = NULL, *key_file = NULL, *deployer_key = NULL, *out = "session.json", *config = NULL;
  int as_json = 0, masked = 0, open_reg = 0;
  const char *members = NULL;
  uint64_t timeout_blocks = 0, active_blocks = 0;
  double timeout_s = 0, active_s = 0;
  cli_opt opts[TRAIN_COMMON_NOPTS + SESSION_FLAGS_NOPTS + KEYSTORE_NOPTS + 16];
  size_t no = session_flags_opts(&f, opts);
  opts[no++] = (cli_opt){"rpc", OPT_STR, &rpc_url, "URL", "JSON-RPC endpoint (required); several (comma-separated or repeated): fail-over"};
  opts[no++] = (cli_opt){"deployer-key", OPT_STR, &deployer_key, "FILE", "key file of the deploying account"};
  opts[no++] = (cli_opt){"funder-key", OPT_STR, &key_file, "FILE", "the same (name shared with bbvfl demo)"};
  bbvfl_key_source ksrc = {0};
  no += keystore_opts(&ksrc, opts + no);
  opts[no++] = (cli_opt){"config", OPT_STR, &config, "FILE", "session settings as JSON (keys named like the flags)"};
  opts[no++] = (cli_opt){"out", OPT_STR, &out, "FILE", "session file to write (default session.json)"};
  opts[no++] = (cli_opt){"masked", OPT_FLAG, &masked, NULL, "masked mode: pairwise masks hide each submission (docs/MASKED.md)"};
  opts[no++] = (cli_opt){"round-timeout-blocks", OPT_U64, &timeout_blocks, "N",
                         "blocks after which anyone may expire an open round (default: --round-timeout-seconds "
                         "in blocks)"};
  opts[no++] = (cli_opt){"round-timeout-seconds", OPT_DBL, &timeout_s, "S",
                         "the same in seconds, turned into blocks from the chain's block time measured now (default "
                         "600; a chain that makes blocks per transaction: 100000 blocks)"};
  opts[no++] = (cli_opt){"active-blocks", OPT_U64, &active_blocks, "N",
                         "blocks the active client has for a gradient or an epoch's payout before anyone may "
                         "call reelect() (default: --active-timeout in blocks)"};
  opts[no++] = (cli_opt){"active-timeout", OPT_DBL, &active_s, "SECONDS",
                         "the same in seconds, turned into blocks like --round-timeout-seconds (default 600)"};
  opts[no++] = (cli_opt){"members", OPT_STR, &members, "ADDR,...",
                         "the addresses of the --clients members (one per organisation): only they may register"};
  opts[no++] = (cli_opt){"open-registration", OPT_FLAG, &open_reg, NULL,
                         "let anyone register instead (the first M addresses take the slots; recorded in the "
                         "session file and the audit)"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &as_json, NULL, "print one JSON object"};
  cli_spec spec = {"bbvfl deploy", "deploy the reward token and the aggregator for one session", "--rpc URL [OPTIONS]",
                   "Deploys BbvflAggregator (which deploys its BbvflRewardToken and holds the whole reward\n"
                   "pool) with the session's parameters and writes the session file every client reads.\n"
                   "Key: --deployer-key FILE or --keystore FILE; without either, on a devnet (chain id 31337) anvil's well-known\n"
                   "development account 0 deploys. Settings from --config FILE.json are overridden by flags.\n"
                   "Who may join: --members ADDR,... (the M clients' addresses), or --open-registration.",
                   opts, no};
  bbvfl_err err = {0};
  if (session_flags_config(&f, argc, argv, &err) < 0) return cli_report(&err);
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  session_flags_given(&f, argc, argv);
  static char rpc_list[sizeof ((bbvfl_session *)0)->rpc_url];
  if (rpc_flag_join(argc, argv, rpc_list, sizeof rpc_list, &rpc_url, &err) < 0) return cli_report(&err);
  if (!rpc_url) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--rpc URL is required (e.g. the rpc_url of `bbvfl devnet up`)");
    return cli_report(&err);
  }
  bbvfl_session s;
  memset(&s, 0, sizeof s);
  if (strlen(rpc_url) >= sizeof s.rpc_url) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--rpc URL too long");
    return cli_report(&err);
  }
  strcpy(s.rpc_url, rpc_url);
  bbvfl_dataset ds;
  s.cparams.masked = masked;
  if (session_flags_apply(&f, &s, &ds, &err) < 0) return cli_report(&err);
  train_noise_warning(s.train.seeded_noise, "--reproducible-noise (recorded in the session file)");
  if ((timeout_blocks && timeout_s > 0) || (active_blocks && active_s > 0)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "give a deadline in blocks or in seconds, not both (--round-timeout-blocks / "
                                  "--round-timeout-seconds, --active-blocks / --active-timeout)");
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  if (!(timeout_s >= 0 && timeout_s <= 1e8) || !(active_s >= 0 && active_s <= 1e8)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--round-timeout-seconds and --active-timeout must be in 0..1e8 seconds");
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  s.cparams.round_timeout_blocks = timeout_blocks;
  s.cparams.active_blocks = active_blocks;
  s.round_timeout_s = timeout_s;
  s.active_timeout_s = active_s;
  ksrc.key_file = deployer_key ? deployer_key : key_file;
  bbvfl_deploy_req req = {.rpc_url = rpc_url, .key = &ksrc, .ds = &ds, .out = out,
                          .key_flag = ksrc.keystore ? "--keystore" : deployer_key ? "--deployer-key" : "--deployer-key/--funder-key",
                          .members = members, .open_registration = open_reg};
  int ok = bbvfl_deploy_run(&req, &s, &err);
  bbvfl_dataset_free(&ds);
  if (ok < 0) return cli_report(&err);
  char ca[43], ta[43];
  bbvfl_addr_checksum(s.contract, ca);
  bbvfl_addr_checksum(s.token, ta);
  if (as_json) {
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:f, s:I, s:I, s:s}", "contract", ca, "token", ta, "rpc_url",
                          s.rpc_url, "chain_id", (json_int_t)s.chain_id, "deploy_block", (json_int_t)s.deploy_block,
                          "session", out, "block_time_s", s.block_time_s, "round_timeout_blocks",
                          (json_int_t)s.cparams.round_timeout_blocks, "active_blocks",
                          (json_int_t)s.cparams.active_blocks, "registration", s.open_registration ? "open" : "members");
    cli_print_json(o, 0);
  } else {
    printf("aggregator %s\ntoken      %s\nblock      %llu\nsession    %s (M=%u, B=%u, P=%u, b=%u, %u+%u rounds x %u epochs%s)\n",
           ca, ta, (unsigned long long)s.deploy_block, out, s.cparams.clients, s.cparams.batch, s.cparams.dim,
           s.cparams.levels, s.cparams.train_rounds, s.cparams.eval_rounds, s.cparams.epochs,
           s.cparams.masked ? ", masked" : "");
  }
  return 0;
}
