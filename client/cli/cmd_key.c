/* bbvfl key new|address: create a key (a hex file, or an encrypted Web3 Secret Storage v3 keystore)
 * from the OS random source, or show a key's address. Keys are read from a file (mode 0600), an
 * environment variable or a keystore with its password, never from the command line, and are never
 * printed. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "eth/keystore.h"
#include "eth/wallet.h"

int cmd_key(int argc, char **argv) {
  const char *out = NULL, *key_file = NULL, *key_env = NULL;
  int force = 0, as_json = 0;
  bbvfl_key_source ks = {0};
  const cli_opt opts[] = {
      {"out", OPT_STR, &out, "FILE", "new: where to write the key (created with mode 0600)"},
      {"force", OPT_FLAG, &force, NULL, "new: replace FILE if it exists"},
      {"key-file", OPT_STR, &key_file, "FILE", "address: read the key from FILE (must not be group/other-readable)"},
      {"key-env", OPT_STR, &key_env, "VAR", "address: read the key from environment variable VAR"},
      {"keystore", OPT_STR, &ks.keystore, "FILE",
       "new: write the key as an encrypted Web3 Secret Storage v3 file (scrypt; mode 0600, never replacing a "
       "file); address: read the key from this keystore"},
      {"password-file", OPT_STR, &ks.password_file, "FILE", "the keystore's password: the first line of FILE (mode 0600)"},
      {"password-env", OPT_STR, &ks.password_env, "VAR", "the keystore's password: the value of environment variable VAR"},
      {"json", OPT_FLAG, &as_json, NULL, "print a JSON object"},
  };
  cli_spec spec = {"bbvfl key", "Ethereum keys for clients", "new (--out FILE | --keystore FILE (--password-file F | --password-env VAR))\n"
                   "       | address (--key-file FILE | --key-env VAR | --keystore FILE (--password-file F | --password-env VAR))",
                   "new generates a secp256k1 key from the OS random source (getrandom), writes it\n"
                   "as hex to FILE (mode 0600, atomically) and prints its EIP-55 address; with --keystore\n"
                   "it writes an encrypted keystore instead (scrypt n=2^18 r=8 p=1, AES-128-CTR), which\n"
                   "geth and `cast wallet address --keystore` read.\n"
                   "address prints the address of an existing key. The key itself is never printed.",
                   opts, sizeof opts / sizeof opts[0]};
  const char *pos[1];
  int cli_st;
  if (cli_start_verb(&spec, argc, argv, pos, "say new or address", &cli_st)) return cli_st;
  bbvfl_err err = {0};
  bbvfl_key k;
  if (strcmp(pos[0], "new") == 0) {
    if ((out != NULL) == (ks.keystore != NULL) || ks.key_file || ks.key_env || key_file || key_env) {
      fprintf(stderr, "bbvfl key new: give exactly one of --out FILE or --keystore FILE (the key is never printed)\n");
      return 2;
    }
    if (ks.keystore) {
      if (force) {
        fprintf(stderr, "bbvfl key new: --force does not apply to --keystore (a keystore is never replaced)\n");
        return 2;
      }
      char *pw = NULL;
      size_t pwlen = 0;
      if (bbvfl_password_load(ks.password_file, ks.password_env, &pw, &pwlen, &err) < 0) return cli_report(&err);
      int rc = bbvfl_key_generate(&k, &err);
      if (rc == 0) rc = bbvfl_keystore_save(ks.keystore, &k, pw, pwlen, 0, &err);
      bbvfl_password_free(pw, pwlen);
      if (rc != 0) {
        bbvfl_key_wipe(&k);
        return cli_report(&err);
      }
      out = ks.keystore;
      goto print;
    }
    if (ks.password_file || ks.password_env) {
      fprintf(stderr, "bbvfl key new: --password-file / --password-env go with --keystore FILE\n");
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
    ks.key_file = key_file;
    ks.key_env = key_env;
    if (bbvfl_key_source_load(&ks, &k, &err) != 0) {
      bbvfl_key_wipe(&k);
      return cli_report(&err);
    }
  } else {
    fprintf(stderr, "bbvfl key: unknown action '%s': say new or address\n", pos[0]);
    return 2;
  }
print:;
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
