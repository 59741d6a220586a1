/* Cross-check against `cast` from the pinned Foundry toolchain ($BBVFL_CAST): random
 * transactions (cast mktx, legacy EIP-155 and type 2, all fields given so no node is needed),
 * random ABI argument sets (cast abi-encode and cast calldata), random messages (cast keccak) and
 * random keys (cast wallet address) must give exactly bbvfl's bytes.
 *
 * The keys here are random throwaway test keys. cast only accepts a raw key on its command line
 * (--private-key), so for this test only a key does appear in a short-lived process's argv;
 * bbvfl itself never takes keys from argv. The seed is printed; set BBVFL_TEST_SEED to replay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_skip.h"

#include "eth/abi.h"
#include "eth/buf.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/tx.h"
#include "eth/wallet.h"
#include "eth_vectors.h"

static uint64_t rng_state;

static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

static void rnd_bytes(uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)rnd();
}

/* A random number of random magnitude (so that small values and edge cases are common). */
static void rnd_u256(bbvfl_u256 *v, unsigned max_bytes) {
  memset(v->be, 0, 32);
  unsigned n = (unsigned)rnd_below(max_bytes + 1);
  rnd_bytes(v->be + 32 - n, n);
  if (rnd_below(8) == 0) memset(v->be + 32 - n, 0xff, n);
}

static uint64_t rnd_u64_mag(void) {
  bbvfl_u256 v;
  rnd_u256(&v, 8);
  uint64_t r;
  bbvfl_u256_to_u64(&v, &r);
  return r;
}

/* Skips (or, under BBVFL_REQUIRE_SETUP=1, fails) the test when ctest did not name the cast binary. */
static void need_cast(void) {
  const char *c = getenv("BBVFL_CAST");
  if (!c || !*c) bbvfl_test_skip(BBVFL_SKIP_SETUP, "BBVFL_CAST is not set (run through ctest)");
  if (access(c, X_OK) != 0) fail_msg("BBVFL_CAST=%s is not executable: run ./run.sh setup", c);
}

static char *cast_or_fail(const char *const *args) {
  const char *why = "";
  char *out = bbvfl_test_run_cast(args, &why);
  if (!out) fail_msg("%s", why);
  return out;
}

static void hex_of(const uint8_t *p, size_t n, char **out) {
  *out = malloc(2 * n + 3);
  bbvfl_hex_encode(p, n, *out);
}

static void test_transactions(void **state) {
  (void)state;
  need_cast();
  int ncases = 200;
  for (int c = 0; c < ncases; c++) {
    bbvfl_key k;
    uint8_t priv[32];
    do rnd_bytes(priv, 32);
    while (bbvfl_key_from_bytes(priv, &k, NULL) != 0);
    bbvfl_tx tx;
    memset(&tx, 0, sizeof tx);
    tx.type = (c % 2) ? BBVFL_TX_EIP1559 : BBVFL_TX_LEGACY;
    static const uint64_t chains[] = {1, 31337, 11155111, 0xfffffffffffffffeULL};
    tx.chain_id = rnd_below(2) ? chains[rnd_below(4)] : 1 + rnd_below(0xfffffffffffffffdULL);
    tx.nonce = rnd_u64_mag();
    if (tx.nonce == UINT64_MAX) tx.nonce--; /* EIP-2681: nonces stay below 2^64-1 */
    tx.gas_limit = rnd_u64_mag();
    rnd_u256(&tx.gas_price, 16); /* cast takes fees as 128-bit numbers */
    rnd_u256(&tx.max_fee, 16);
    rnd_u256(&tx.max_priority_fee, 16);
    rnd_u256(&tx.value, 32);
    tx.has_to = rnd_below(8) != 0;
    rnd_bytes(tx.to, 20);
    size_t dlen = rnd_below(4) ? rnd_below(100) : rnd_below(2000);
    uint8_t *data = malloc(dlen ? dlen : 1);
    rnd_bytes(data, dlen);
    tx.data = data;
    tx.data_len = dlen;

    char keyhex[67], chain[24], nonce[24], gas[24], gp[80], prio[80], value[80], to[43];
    bbvfl_hex_encode(k.priv, 32, keyhex);
    snprintf(chain, sizeof chain, "%llu", (unsigned long long)tx.chain_id);
    snprintf(nonce, sizeof nonce, "%llu", (unsigned long long)tx.nonce);
    snprintf(gas, sizeof gas, "%llu", (unsigned long long)tx.gas_limit);
    bbvfl_u256_to_dec(tx.type == BBVFL_TX_LEGACY ? &tx.gas_price : &tx.max_fee, gp);
    bbvfl_u256_to_dec(&tx.max_priority_fee, prio);
    bbvfl_u256_to_dec(&tx.value, value);
    bbvfl_hex_encode(tx.to, 20, to);
    char *datahex;
    hex_of(data, dlen, &datahex);
    const char *args[32];
    int a = 0;
    args[a++] = "mktx";
    args[a++] = "--private-key";
    args[a++] = keyhex; /* throwaway test key, see the header comment */
    if (tx.type == BBVFL_TX_LEGACY) args[a++] = "--legacy";
    args[a++] = "--chain";
    args[a++] = chain;
    args[a++] = "--nonce";
    args[a++] = nonce;
    args[a++] = "--gas-limit";
    args[a++] = gas;
    args[a++] = "--gas-price";
    args[a++] = gp;
    if (tx.type == BBVFL_TX_EIP1559) {
      args[a++] = "--priority-gas-price";
      args[a++] = prio;
    }
    args[a++] = "--value";
    args[a++] = value;
    if (tx.has_to) {
      args[a++] = to;
      args[a++] = datahex;
    } else {
      args[a++] = "--create";
      args[a++] = datahex;
    }
    args[a] = NULL;
    char *want = cast_or_fail(args);
    uint8_t *raw, hash[32];
    size_t len;
    bbvfl_err err;
    if (bbvfl_tx_sign(&tx, &k, &raw, &len, hash, &err) != 0) fail_msg("%s", err.msg);
    char *got;
    hex_of(raw, len, &got);
    if (strcmp(got, want) != 0)
      fail_msg("transaction %d (type %d, chain %s) differs from cast mktx:\n got  %.300s\n want %.300s", c,
               (int)tx.type, chain, got, want);
    free(got);
    free(want);
    free(raw);
    free(datahex);
    free(data);
    bbvfl_key_wipe(&k);
    memset(keyhex, 0, sizeof keyhex);
  }
  print_message("%d random transactions match cast mktx\n", ncases);
}

/* ---- random ABI types and values, written both as bbvfl values and as cast arguments ---- */

static const char safe_chars[] = "abcXYZ019 _-.";

static void bput(bbvfl_buf *b, const char *s) { bbvfl_buf_append(b, s, strlen(s)); }

/* Random value of an already-parsed type. */
static void rnd_value(const bbvfl_abi_type *t, bbvfl_abi_value *v, bbvfl_buf *vs, int quote) {
  char tmp[80];
  switch (t->kind) {
    case BBVFL_ABI_UINT: {
      bbvfl_u256 u;
      rnd_u256(&u, t->bits / 8);
      bbvfl_abi_value_uint(v, &u);
      bbvfl_u256_to_dec(&u, tmp);
      bput(vs, tmp);
      break;
    }
    case BBVFL_ABI_INT: {
      bbvfl_u256 u;
      unsigned nb = t->bits / 8;
      rnd_u256(&u, nb);
      u.be[32 - nb] &= 0x7f; /* magnitude below 2^(bits-1) */
      int neg = rnd_below(2);
      if (neg && rnd_below(6) == 0) { /* the most negative value */
        memset(u.be, 0, 32);
        u.be[32 - nb] = 0x80;
      }
      bbvfl_u256_to_dec(&u, tmp);
      if (neg && !bbvfl_u256_is_zero(&u)) {
        bput(vs, "-");
        bbvfl_u256 zero = bbvfl_u256_from_u64(0);
        bbvfl_u256_sub(&u, &zero, &u);
      }
      bput(vs, tmp);
      bbvfl_abi_value_uint(v, &u);
      v->kind = BBVFL_ABI_INT;
      break;
    }
    case BBVFL_ABI_ADDRESS: {
      uint8_t a[20];
      rnd_bytes(a, 20);
      bbvfl_abi_value_address(v, a);
      char s[43];
      bbvfl_addr_checksum(a, s);
      bput(vs, s);
      break;
    }
    case BBVFL_ABI_BOOL: {
      int b = (int)rnd_below(2);
      bbvfl_abi_value_bool(v, b);
      bput(vs, b ? "true" : "false");
      break;
    }
    case BBVFL_ABI_FIXED_BYTES:
    case BBVFL_ABI_BYTES: {
      size_t n = t->kind == BBVFL_ABI_FIXED_BYTES ? t->size : rnd_below(4) ? rnd_below(70) : 0;
      uint8_t *b = malloc(n ? n : 1);
      rnd_bytes(b, n);
      if (t->kind == BBVFL_ABI_FIXED_BYTES) bbvfl_abi_value_fixed_bytes(v, b, n);
      else assert_int_equal(bbvfl_abi_value_bytes(v, b, n, NULL), 0);
      char *h;
      hex_of(b, n, &h);
      bput(vs, h);
      free(h);
      free(b);
      break;
    }
    case BBVFL_ABI_STRING: {
      size_t n = rnd_below(40);
      char s[48];
      for (size_t i = 0; i < n; i++) s[i] = safe_chars[rnd_below(sizeof safe_chars - 1)];
      s[n] = 0;
      if (n && s[0] == '-') s[0] = 'm';       /* not a flag */
      if (n && s[0] == ' ') s[0] = 's';       /* cast trims surrounding spaces */
      if (n && s[n - 1] == ' ') s[n - 1] = 'e';
      assert_int_equal(bbvfl_abi_value_string(v, s, NULL), 0);
      if (quote) bput(vs, "\"");
      bput(vs, s);
      if (quote) bput(vs, "\"");
      break;
    }
    case BBVFL_ABI_ARRAY:
    case BBVFL_ABI_FIXED_ARRAY:
    case BBVFL_ABI_TUPLE: {
      size_t n = t->kind == BBVFL_ABI_TUPLE ? t->nfields : t->kind == BBVFL_ABI_FIXED_ARRAY ? t->size : rnd_below(4);
      assert_int_equal(bbvfl_abi_value_list(v, t->kind, n, NULL), 0);
      bput(vs, t->kind == BBVFL_ABI_TUPLE ? "(" : "[");
      for (size_t i = 0; i < n; i++) {
        if (i) bput(vs, ",");
        rnd_value(t->kind == BBVFL_ABI_TUPLE ? t->fields[i] : t->elem, &v->items[i], vs, 1);
      }
      bput(vs, t->kind == BBVFL_ABI_TUPLE ? ")" : "]");
      break;
    }
  }
}

/* Random type text. */
static void rnd_type(int depth, bbvfl_buf *ts) {
  char tmp[32];
  int pick = (int)rnd_below(depth < 2 ? 10 : 7);
  switch (pick) {
    case 0: snprintf(tmp, sizeof tmp, "uint%u", 8 * (unsigned)(1 + rnd_below(32))); bput(ts, tmp); break;
    case 1: snprintf(tmp, sizeof tmp, "int%u", 8 * (unsigned)(1 + rnd_below(32))); bput(ts, tmp); break;
    case 2: bput(ts, "address"); break;
    case 3: bput(ts, "bool"); break;
    case 4: snprintf(tmp, sizeof tmp, "bytes%u", (unsigned)(1 + rnd_below(32))); bput(ts, tmp); break;
    case 5: bput(ts, "bytes"); break;
    case 6: bput(ts, "string"); break;
    case 7: /* dynamic array */
      rnd_type(depth + 1, ts);
      bput(ts, "[]");
      break;
    case 8: /* fixed array */
      rnd_type(depth + 1, ts);
      snprintf(tmp, sizeof tmp, "[%u]", (unsigned)(1 + rnd_below(3)));
      bput(ts, tmp);
      break;
    default: { /* tuple */
      int n = 1 + (int)rnd_below(3);
      bput(ts, "(");
      for (int i = 0; i < n; i++) {
        if (i) bput(ts, ",");
        rnd_type(depth + 1, ts);
      }
      bput(ts, ")");
    }
  }
}

static void abi_case(int c, int calldata) {
  bbvfl_buf ts;
  bbvfl_buf_init(&ts);
  bput(&ts, "f(");
  int nargs = 1 + (int)rnd_below(4);
  for (int i = 0; i < nargs; i++) {
    if (i) bput(&ts, ",");
    rnd_type(0, &ts);
  }
  bput(&ts, ")");
  bbvfl_buf_byte(&ts, 0);
  const char *sig = (const char *)ts.p;
  bbvfl_abi_type *t;
  bbvfl_err err;
  if (bbvfl_abi_type_parse(sig + 1, &t, &err) != 0) fail_msg("%s: %s", sig, err.msg);
  bbvfl_abi_value v;
  assert_int_equal(bbvfl_abi_value_list(&v, BBVFL_ABI_TUPLE, t->nfields, NULL), 0);
  const char *args[16];
  bbvfl_buf vs[8];
  int a = 0;
  args[a++] = calldata ? "calldata" : "abi-encode";
  args[a++] = sig;
  args[a++] = "--"; /* negative numbers are arguments, not flags */
  for (size_t i = 0; i < t->nfields; i++) {
    bbvfl_buf_init(&vs[i]);
    rnd_value(t->fields[i], &v.items[i], &vs[i], 0);
    bbvfl_buf_byte(&vs[i], 0);
    args[a++] = (const char *)vs[i].p;
  }
  args[a] = NULL;
  char *want = cast_or_fail(args);
  uint8_t *out;
  size_t len;
  int rc = calldata ? bbvfl_abi_encode_call(sig, &v, &out, &len, &err) : bbvfl_abi_encode(t, &v, &out, &len, &err);
  if (rc != 0) fail_msg("%s: %s", sig, err.msg);
  char *got;
  hex_of(out, len, &got);
  if (strcmp(got, want) != 0) {
    print_error("case %d: %s\n", c, sig);
    for (size_t i = 0; i < t->nfields; i++) print_error("  arg %zu: %s\n", i, (const char *)vs[i].p);
    fail_msg("cast %s differs:\n got  %s\n want %s", args[0], got, want);
  }
  /* and our decoder reads cast's bytes back to the same value */
  bbvfl_abi_value back;
  if (bbvfl_abi_decode(t, out + (calldata ? 4 : 0), len - (calldata ? 4 : 0), &back, &err) != 0)
    fail_msg("%s: decode: %s", sig, err.msg);
  bbvfl_abi_value_clear(&back);
  free(got);
  free(want);
  free(out);
  for (size_t i = 0; i < t->nfields; i++) bbvfl_buf_free(&vs[i]);
  bbvfl_abi_value_clear(&v);
  bbvfl_abi_type_free(t);
  bbvfl_buf_free(&ts);
}

static void test_abi(void **state) {
  (void)state;
  need_cast();
  for (int c = 0; c < 150; c++) abi_case(c, 0);
  for (int c = 0; c < 100; c++) abi_case(c, 1);
  print_message("150 random argument sets match cast abi-encode, 100 match cast calldata\n");
}

static void test_keccak(void **state) {
  (void)state;
  need_cast();
  for (int c = 0; c < 100; c++) {
    size_t n = rnd_below(4) ? rnd_below(300) : rnd_below(5000);
    uint8_t *m = malloc(n ? n : 1);
    rnd_bytes(m, n);
    char *h;
    hex_of(m, n, &h);
    const char *args[] = {"keccak", h, NULL};
    char *want = cast_or_fail(args);
    uint8_t d[32];
    char got[67];
    bbvfl_keccak256(m, n, d);
    bbvfl_hex_encode(d, 32, got);
    if (strcmp(got, want) != 0) fail_msg("keccak of %zu bytes: got %s, cast says %s", n, got, want);
    free(want);
    free(h);
    free(m);
  }
  print_message("100 random messages match cast keccak\n");
}

static void test_addresses(void **state) {
  (void)state;
  need_cast();
  for (int c = 0; c < 50; c++) {
    uint8_t priv[32];
    bbvfl_key k;
    do rnd_bytes(priv, 32);
    while (bbvfl_key_from_bytes(priv, &k, NULL) != 0);
    char keyhex[67], got[43];
    bbvfl_hex_encode(k.priv, 32, keyhex);
    const char *args[] = {"wallet", "address", "--private-key", keyhex, NULL}; /* throwaway key */
    char *want = cast_or_fail(args);
    bbvfl_addr_checksum(k.addr, got);
    assert_string_equal(got, want);
    free(want);
    bbvfl_key_wipe(&k);
  }
  print_message("50 random keys match cast wallet address\n");
}

int main(void) {
  const char *s = getenv("BBVFL_TEST_SEED");
  uint64_t seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
  rng_state = seed;
  printf("test_eth_cast: seed %llu (set BBVFL_TEST_SEED to replay)\n", (unsigned long long)seed);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_transactions),
      cmocka_unit_test(test_abi),
      cmocka_unit_test(test_keccak),
      cmocka_unit_test(test_addresses),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
