/* bbvfl: the command line front end. Each subcommand lives in its own cmd_*.c file. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

typedef struct {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} command;

static const command COMMANDS[] = {
    {"demo", cmd_demo, "the main job: devnet, deploy, M client processes, training, report"},
    {"deploy", cmd_deploy, "deploy token + aggregator for a session, write the session file"},
    {"client", cmd_client, "one organisation's client process in an on-chain session"},
    {"train", cmd_train, "off-chain training with the in-process aggregator (--offchain)"},
    {"attack", cmd_attack, "measure a run's leakage: label inference, feature inversion, membership inference"},
    {"sweep", cmd_sweep, "AUROC and epsilon over the paper's b x beta grid (off-chain)"},
    {"tune", cmd_tune, "the best row-mode (end-to-end) setting at a target epsilon (off-chain)"},
    {"devnet", cmd_devnet, "a local anvil on loopback: up, down, status"},
    {"bench", cmd_bench, "benchmarks: floor (a bare transaction's round trip), ..."},
    {"privacy", cmd_privacy, "exact privacy accounting: epsilon for b, beta, P, epochs, delta"},
    {"audit", cmd_audit, "verify a session's whole on-chain history from the chain alone"},
    {"key", cmd_key, "Ethereum keys: new (from the OS random source) or address of a key file"},
};

static void usage(FILE *f) {
  fprintf(f,
          "bbvfl %s - differentially private vertical federated learning, aggregated on chain\n\n"
          "Usage: bbvfl COMMAND [OPTIONS]   (bbvfl COMMAND --help for each)\n\nCommands:\n",
          BBVFL_VERSION);
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
  fprintf(f, "\nExit status: 0 ok, 2 usage, 3 verification failed, 4 node unreachable or timeout,\n"
             "5 transaction reverted, 6 file error, 7 malformed input, 8 audit: session incomplete,\n"
             "1 other errors.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(name, "--version") == 0) {
    printf("bbvfl %s\n", BBVFL_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    if (strcmp(name, COMMANDS[i].name) == 0) return COMMANDS[i].fn(argc - 2, argv + 2);
  fprintf(stderr, "bbvfl: error: unknown command '%s' (see bbvfl --help)\n", name);
  return 2;
}
