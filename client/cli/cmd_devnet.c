/* bbvfl devnet up|down|status */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "devnet/devnet.h"

#define DEFAULT_DIR "runs/devnet"

static void print_info(const bbvfl_devnet *d, int as_json, const char *status) {
  if (as_json) {
    json_t *o = json_pack("{s:s, s:I, s:i, s:s, s:I, s:s, s:s, s:s}", "status", status, "pid",
                          (json_int_t)d->pid, "port", d->port, "rpc_url", d->rpc_url, "chain_id",
                          (json_int_t)d->chain_id, "dir", d->dir, "log", d->log_path, "state",
                          d->state_path);
    cli_print_json(o, 0);
  } else {
    printf("devnet %s\n  rpc_url  %s\n  chain_id %llu\n  pid      %ld\n  dir      %s\n  log      %s\n",
           status, d->rpc_url, d->chain_id, (long)d->pid, d->dir, d->log_path);
    if (d->state_path[0]) printf("  state    %s\n", d->state_path);
  }
}

int cmd_devnet(int argc, char **argv) {
  const char *dir = DEFAULT_DIR, *state = NULL, *hardfork = NULL;
  int port = 0, persist = 0, as_json = 0;
  double timeout = 30, block_time = 0;
  const cli_opt opts[] = {
      {"dir", OPT_STR, &dir, "DIR", "run folder holding devnet.json, anvil.log, state (default " DEFAULT_DIR ")"},
      {"port", OPT_INT, &port, "N", "up: loopback port (default: a free one)"},
      {"persist", OPT_FLAG, &persist, NULL, "up: keep chain state in DIR/state.json across down/up"},
      {"state", OPT_STR, &state, "FILE", "up: persistent state in FILE (implies --persist)"},
      {"block-time", OPT_DBL, &block_time, "S", "up: mine a block every S seconds (default: on each tx)"},
      {"hardfork", OPT_STR, &hardfork, "NAME", "up: EVM hard fork (default cancun, see README; 'default' = anvil's)"},
      {"timeout", OPT_DBL, &timeout, "S", "seconds to wait for start or stop (default 30)"},
      {"json", OPT_FLAG, &as_json, NULL, "print a JSON object"},
  };
  cli_spec spec = {"bbvfl devnet", "a local anvil devnet on 127.0.0.1", "up|down|status [OPTIONS]",
                   "up starts anvil and waits until it answers eth_chainId; down stops it by its\n"
                   "recorded pid; status says whether it is running and answering.\n"
                   "Exit status of status: 0 running, 1 recorded but not answering, 3 none recorded.",
                   opts, sizeof opts / sizeof opts[0]};
  const char *verb;
  int cli_st;
  if (cli_start_verb(&spec, argc, argv, &verb, "say up, down or status", &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (!(timeout > 0 && timeout <= 3600)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--timeout must be in (0, 3600] seconds, got %g", timeout);
    return cli_report(&err);
  }
  if (!(block_time >= 0 && block_time <= 86400)) {
    bbvfl_fail(&err, BBVFL_E_ARG,
               "--block-time must be in [0, 86400] seconds (0: a block per transaction), got %g",
               block_time);
    return cli_report(&err);
  }
  if (strcmp(verb, "up") == 0) {
    bbvfl_devnet_opts o = {.dir = dir, .port = port, .persist = persist || state, .state = state,
                           .timeout_s = timeout, .block_time = block_time,
                           .hardfork = hardfork};
    bbvfl_devnet d;
    if (bbvfl_devnet_up(&o, &d, &err) != 0) return cli_report(&err);
    print_info(&d, as_json, "running");
    return 0;
  }
  if (strcmp(verb, "down") == 0) {
    bbvfl_devnet d;
    int had = bbvfl_devnet_load(dir, &d, NULL) == 0;
    if (bbvfl_devnet_down(dir, timeout, &err) != 0) return cli_report(&err);
    if (as_json) printf("{\"status\":\"stopped\",\"pid\":%ld}\n", had ? (long)d.pid : 0L);
    else printf("devnet stopped%s\n", had ? "" : " (none was recorded)");
    return 0;
  }
  if (strcmp(verb, "status") == 0) {
    bbvfl_devnet d;
    if (bbvfl_devnet_load(dir, &d, &err) != 0) {
      if (as_json) printf("{\"status\":\"none\"}\n");
      else fprintf(stderr, "%s\n", err.msg);
      return 3;
    }
    unsigned long long cid = 0;
    int alive = bbvfl_devnet_alive(&d) && bbvfl_devnet_ping(d.rpc_url, 2, &cid, NULL) == 0;
    print_info(&d, as_json, alive ? "running" : "not answering");
    return alive ? 0 : 1;
  }
  fprintf(stderr, "bbvfl devnet: unknown action '%s': say up, down or status\n", verb);
  return 2;
}
