/* bbvfl key new|address: create a key file from the OS random source, or show a key's address.
 * Keys are read from a file (mode 0600) or an environment variable, never from the command line,
 * and are never printed. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "eth/wallet.h"

int cmd_key(int argc, char **argv) {
  const char *out = NULL, *key_file = NULL, *key_env = NULL;
  int force = 0, as_json = 0;
  const cli_opt opts[] = {
      {"out", OPT_STR, &out, "FILE", "new: where to write the key (created with mode 0600)"},
      {"force", OPT_FLAG, &force, NULL, "new: replace FILE if it exists"},
      {"key-file", OPT_STR, &key_file, "FILE", "address: read the key from FILE (must not be group/other-readable)"},
      {"key-env", OPT_STR, &key_env, "VAR", "address: read the key from environment variable VAR"},
      {"json", OPT_FLAG, &as_json, NULL, "print a JSON object"},
  };
  cli_spec spec = {"bbvfl key", "Ethereum keys for clients", "new --out FILE | address (--key-file FILE | --key-env VAR)",
                   "new generates a secp256k1 key from the OS random source (getrandom), writes it\n"
                   "as hex to FILE (mode 0600, atomically) and prints its EIP-55 address.\n"
                   "address prints the address of an existing key. The key itself is never printed.",
                   opts, sizeof opts / sizeof opts[0]};
  const char *pos[1];
  int cli_st;
  if (cli_start_verb(&spec, argc, argv, pos, "say new or address", &cli_st)) return cli_st;
  bbvfl_err err = {0};
  bbvfl_key k;
  if (strcmp(pos[0], "new") == 0) {
    if (!out) {
      fprintf(stderr, "bbvfl key new: --out FILE is required (the key is never printed)\n");
      return 2;
    }
    FILE *f = fopen(out, "r");
    if (f && !force) {
      fclose(f);
      fprintf(stderr, "bbvfl key new: %s already exists: choose another file or pass --force\n", out);
      return 2;
    }
    if (f) fclose(f);
    if (bbvfl_key_generate(&k, &err) != 0 || bbvfl_key_save_file(out, &k, &err) != 0) {
      bbvfl_key_wipe(&k);
      return cli_report(&err);
    }
  } else if (strcmp(pos[0], "address") == 0) {
    if ((key_file != NULL) == (key_env != NULL)) {
      fprintf(stderr, "bbvfl key address: give exactly one of --key-file FILE or --key-env VAR\n");
      return 2;
    }
    int rc = key_file ? bbvfl_key_load_file(key_file, &k, &err) : bbvfl_key_load_env(key_env, &k, &err);
    if (rc != 0) {
      bbvfl_key_wipe(&k);
      return cli_report(&err);
    }
  } else {
    fprintf(stderr, "bbvfl key: unknown action '%s': say new or address\n", pos[0]);
    return 2;
  }
  char addr[43];
  bbvfl_addr_checksum(k.addr, addr);
  bbvfl_key_wipe(&k);
  if (as_json) {
    json_t *o = json_pack("{s:s}", "address", addr);
    if (out) json_object_set_new(o, "file", json_string(out));
    if (cli_print_json(o, 0) != 0) printf("{}\n");
  } else {
    printf("%s\n", addr);
  }
  return 0;
}
