/* Fuzz target: everything a user types as configuration. The first byte picks the parser, the
 * rest is its input:
 *   0  command-line flags (client/cli/args.c, compiled in: it belongs to the bbvfl binary, not
 *      the library), the input split at NUL bytes into argv, against a spec with every kind
 *   1  the --partition spec (bbvfl_partition_parse) for 1..64 feature columns
 *   2  numbers and addresses from strings: u256 (decimal / 0x hex), EIP-55 address, private key
 * Properties: success or an error with a message, never a crash; values that parse keep their
 * promises (a partition covers each column at most once, u256 round-trips through its decimal
 * form, an address re-checksums to a string that parses to the same bytes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "eth/u256.h"
#include "eth/wallet.h"
#include "ml/data.h"

#include "../../client/cli/args.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

static const struct {
  const char *s;
  size_t len;
} SEEDS[] = {
#define S(x) {x, sizeof(x) - 1}
    S("\0--clients\0" "5\0--beta=0.2\0--json\0pos\0--seed\0" "0x10"),
    S("\0--b\0\0--lr\0" "1e-3\0--name=\0--"),
    S("\x01" "0-5/6-11/12,13,20-29"),
    S("\x01" "0,1,2/3-3/4-"),
    S("\x02" "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
    S("\x02" "115792089237316195423570985008687907853269984665640564039457584007913129639935"),
    S("\x02" "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
#undef S
};

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  for (size_t i = 0; i < sizeof SEEDS / sizeof SEEDS[0]; i++)
    add((const uint8_t *)SEEDS[i].s, SEEDS[i].len);
}

static void need_msg(const bbvfl_err *err) {
  if (err->code == BBVFL_OK || err->msg[0] == 0) __builtin_trap();
  if (memchr(err->msg, 0, sizeof err->msg) == NULL) __builtin_trap();
}

static void fuzz_flags(char *text, size_t len) {
  char *argv[64];
  int argc = 0;
  for (size_t i = 0; i <= len && argc < 64;) {
    argv[argc++] = text + i;
    i += strlen(text + i) + 1;
  }
  for (int i = 0; i < argc; i++) /* --help prints the usage: not what is fuzzed here */
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return;
  int flag = 0, n = 0;
  double x = 0;
  unsigned long long u = 0;
  const char *name = NULL;
  const cli_opt opts[] = {
      {"json", OPT_FLAG, &flag, NULL, "a flag"},
      {"clients", OPT_INT, &n, "M", "an int"},
      {"beta", OPT_DBL, &x, "X", "a double"},
      {"seed", OPT_U64, &u, "N", "a u64"},
      {"name", OPT_STR, &name, "S", "a string"},
  };
  cli_spec spec = {"fuzz", "fuzz", "[OPTIONS] [POS]", NULL, opts, sizeof opts / sizeof opts[0]};
  const char *pos[2];
  size_t npos = 0;
  bbvfl_err err;
  memset(&err, 0, sizeof err);
  int rc = cli_parse(&spec, argc, argv, pos, 2, &npos, &err);
  if (rc < 0) need_msg(&err);
  else if (npos > 2) __builtin_trap();
}

static void fuzz_partition(const char *spec, size_t d) {
  bbvfl_partition p;
  memset(&p, 0, sizeof p);
  bbvfl_err err;
  memset(&err, 0, sizeof err);
  if (bbvfl_partition_parse(spec, d, &p, &err) != 0) {
    need_msg(&err);
    bbvfl_partition_free(&p);
    return;
  }
  if (p.M < 1 || p.off[0] != 0 || p.off[p.M] > d) __builtin_trap();
  unsigned char seen[64] = {0};
  for (int m = 0; m < p.M; m++) {
    if (p.off[m + 1] < p.off[m]) __builtin_trap();
    for (size_t k = p.off[m]; k < p.off[m + 1]; k++) {
      if (p.cols[k] >= d || seen[p.cols[k]]++) __builtin_trap();
    }
  }
  bbvfl_partition_free(&p);
}

static void fuzz_values(const char *s) {
  bbvfl_err err;
  memset(&err, 0, sizeof err);
  bbvfl_u256 v, w;
  if (bbvfl_u256_from_string(s, &v, &err) == 0) {
    char dec[80];
    bbvfl_u256_to_dec(&v, dec);
    if (bbvfl_u256_from_string(dec, &w, NULL) != 0 || memcmp(&v, &w, sizeof v) != 0)
      __builtin_trap();
  } else {
    need_msg(&err);
  }
  memset(&err, 0, sizeof err);
  uint8_t a[20], b[20];
  if (bbvfl_addr_parse(s, a, &err) == 0) {
    char cs[43];
    bbvfl_addr_checksum(a, cs);
    if (bbvfl_addr_parse(cs, b, NULL) != 0 || memcmp(a, b, 20) != 0) __builtin_trap();
  } else {
    need_msg(&err);
  }
  memset(&err, 0, sizeof err);
  bbvfl_key k;
  if (bbvfl_key_from_hex(s, &k, &err) == 0) bbvfl_key_wipe(&k);
  else need_msg(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char *s = malloc(size); /* the rest, NUL-terminated */
  if (!s) return 0;
  memcpy(s, data + 1, size - 1);
  s[size - 1] = 0;
  switch (data[0] % 3) {
    case 0: fuzz_flags(s, size - 1); break;
    case 1: fuzz_partition(s, 1 + (size_t)(data[0] / 3) % 64); break;
    default: fuzz_values(s); break;
  }
  free(s);
  return 0;
}
