/* Transactions: the EIP-155 example (exact signed bytes), every ethers.js transaction vector
 * (legacy, EIP-155 and London, unsigned and signed bytes), decoding round trips and rejection of
 * malformed raw transactions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_skip.h"

#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/tx.h"
#include "eth/wallet.h"
#include "eth_vectors.h"

static void expect_bytes(const uint8_t *got, size_t len, const char *hex, const char *what) {
  uint8_t *want;
  size_t wlen;
  assert_int_equal(bbvfl_hex_decode_alloc(hex, &want, &wlen, NULL), 0);
  if (len != wlen || memcmp(got, want, len) != 0) {
    char *g = malloc(2 * len + 3);
    bbvfl_hex_encode(got, len, g);
    print_error("%s\n  got  %s\n  want %s\n", what, g, hex);
    free(g);
    free(want);
    fail();
  }
  free(want);
}

static void test_eip155_example(void **state) {
  (void)state;
  /* EIP-155's worked example */
  bbvfl_key k;
  assert_int_equal(bbvfl_key_from_hex("0x4646464646464646464646464646464646464646464646464646464646464646", &k, NULL), 0);
  bbvfl_tx tx;
  memset(&tx, 0, sizeof tx);
  tx.type = BBVFL_TX_LEGACY;
  tx.chain_id = 1;
  tx.nonce = 9;
  tx.gas_price = bbvfl_u256_from_u64(20000000000ULL);
  tx.gas_limit = 21000;
  tx.has_to = 1;
  memset(tx.to, 0x35, 20);
  assert_int_equal(bbvfl_u256_from_string("1000000000000000000", &tx.value, NULL), 0);
  uint8_t *unsig, *raw, hash[32];
  size_t ulen, rlen;
  assert_int_equal(bbvfl_tx_encode_unsigned(&tx, &unsig, &ulen, NULL), 0);
  expect_bytes(unsig, ulen,
               "0xec098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a764000080018080",
               "EIP-155 signing data");
  uint8_t sighash[32];
  bbvfl_keccak256(unsig, ulen, sighash);
  expect_bytes(sighash, 32, "0xdaf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53", "signing hash");
  free(unsig);
  assert_int_equal(bbvfl_tx_sign(&tx, &k, &raw, &rlen, hash, NULL), 0);
  expect_bytes(raw, rlen,
               "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83",
               "EIP-155 signed transaction");
  bbvfl_tx_decoded d;
  assert_int_equal(bbvfl_tx_decode(raw, rlen, &d, NULL), 0);
  assert_memory_equal(d.from, k.addr, 20);
  assert_true(d.tx.chain_id == 1 && d.tx.nonce == 9);
  assert_memory_equal(d.hash, hash, 32);
  free(raw);
}

static void test_big_chain_id(void **state) {
  (void)state;
  /* anvil's 31337 and a chain id above 2^63: v must not overflow */
  bbvfl_key k;
  assert_int_equal(bbvfl_key_generate(&k, NULL), 0);
  static const uint64_t ids[] = {31337, 0xfffffffffffffff0ULL, 1};
  for (size_t i = 0; i < 3; i++) {
    for (int type = 0; type <= 2; type += 2) {
      bbvfl_tx tx;
      memset(&tx, 0, sizeof tx);
      tx.type = (bbvfl_txtype)type;
      tx.chain_id = ids[i];
      tx.gas_limit = 100000;
      tx.max_fee = bbvfl_u256_from_u64(1000);
      uint8_t data[3] = {1, 2, 3};
      tx.data = data;
      tx.data_len = 3;
      uint8_t *raw, hash[32];
      size_t len;
      assert_int_equal(bbvfl_tx_sign(&tx, &k, &raw, &len, hash, NULL), 0);
      bbvfl_tx_decoded d;
      bbvfl_err err;
      if (bbvfl_tx_decode(raw, len, &d, &err) != 0) fail_msg("%s", err.msg);
      assert_true(d.tx.chain_id == ids[i]);
      assert_int_equal(d.tx.has_to, 0);
      assert_int_equal(d.tx.data_len, 3);
      assert_memory_equal(d.from, k.addr, 20);
      free(raw);
    }
  }
}

/* Builds a bbvfl_tx from an ethers test case; storage for the data and access list is returned
 * for the caller to free. */
typedef struct {
  uint8_t *data;
  bbvfl_access_entry *al;
  uint8_t (*keys)[32];
} tx_storage;

static void u256_field(json_t *t, const char *name, bbvfl_u256 *out) {
  const char *s = json_string_value(json_object_get(t, name));
  if (!s) {
    *out = bbvfl_u256_from_u64(0);
    return;
  }
  assert_int_equal(bbvfl_u256_from_string(s, out, NULL), 0);
}

static void tx_from_json(json_t *t, bbvfl_tx *tx, tx_storage *st) {
  memset(tx, 0, sizeof *tx);
  memset(st, 0, sizeof *st);
  bbvfl_u256 u;
  u256_field(t, "chainId", &u);
  assert_int_equal(bbvfl_u256_to_u64(&u, &tx->chain_id), 0);
  json_t *nonce = json_object_get(t, "nonce");
  tx->nonce = nonce ? (uint64_t)json_integer_value(nonce) : 0;
  u256_field(t, "gasPrice", &tx->gas_price);
  u256_field(t, "maxFeePerGas", &tx->max_fee);
  u256_field(t, "maxPriorityFeePerGas", &tx->max_priority_fee);
  u256_field(t, "gasLimit", &u);
  assert_int_equal(bbvfl_u256_to_u64(&u, &tx->gas_limit), 0);
  u256_field(t, "value", &tx->value);
  const char *to = json_string_value(json_object_get(t, "to"));
  if (to) {
    tx->has_to = 1;
    assert_int_equal(bbvfl_addr_parse(to, tx->to, NULL), 0);
  }
  const char *data = json_string_value(json_object_get(t, "data"));
  if (data) {
    assert_int_equal(bbvfl_hex_decode_alloc(data, &st->data, &tx->data_len, NULL), 0);
    tx->data = st->data;
  }
  json_t *al = json_object_get(t, "accessList");
  size_t nal = al ? json_array_size(al) : 0, nkeys = 0, i;
  json_t *e;
  json_array_foreach(al, i, e) nkeys += json_array_size(json_object_get(e, "storageKeys"));
  if (nal) {
    st->al = calloc(nal, sizeof *st->al);
    st->keys = calloc(nkeys ? nkeys : 1, 32);
    assert_non_null(st->al);
    assert_non_null(st->keys);
    size_t kpos = 0;
    json_array_foreach(al, i, e) {
      assert_int_equal(bbvfl_addr_parse(json_string_value(json_object_get(e, "address")), st->al[i].address, NULL), 0);
      json_t *keys = json_object_get(e, "storageKeys"), *key;
      size_t j;
      st->al[i].keys = (const uint8_t(*)[32])(st->keys + kpos);
      st->al[i].nkeys = json_array_size(keys);
      json_array_foreach(keys, j, key) {
        assert_int_equal(bbvfl_hex_decode_fixed(json_string_value(key), st->keys[kpos], 32, NULL), 0);
        kpos++;
      }
    }
    tx->access_list = st->al;
    tx->access_len = nal;
  }
}

static void storage_free(tx_storage *st) {
  free(st->data);
  free(st->al);
  free(st->keys);
}

static void check_variant(const bbvfl_tx *tx, const bbvfl_key *k, json_t *tc, const char *unsigned_name,
                          const char *signed_name, const char *case_name) {
  const char *want_unsigned = json_string_value(json_object_get(tc, unsigned_name));
  const char *want_signed = json_string_value(json_object_get(tc, signed_name));
  assert_non_null(want_unsigned);
  assert_non_null(want_signed);
  char what[160];
  uint8_t *out, hash[32];
  size_t len;
  bbvfl_err err;
  if (bbvfl_tx_encode_unsigned(tx, &out, &len, &err) != 0) fail_msg("%s: %s", case_name, err.msg);
  snprintf(what, sizeof what, "%s %s", case_name, unsigned_name);
  expect_bytes(out, len, want_unsigned, what);
  free(out);
  if (bbvfl_tx_sign(tx, k, &out, &len, hash, &err) != 0) fail_msg("%s: %s", case_name, err.msg);
  snprintf(what, sizeof what, "%s %s", case_name, signed_name);
  expect_bytes(out, len, want_signed, what);
  bbvfl_tx_decoded d;
  if (bbvfl_tx_decode(out, len, &d, &err) != 0) fail_msg("%s: decode: %s", case_name, err.msg);
  assert_memory_equal(d.from, k->addr, 20);
  assert_true(d.tx.nonce == tx->nonce && d.tx.gas_limit == tx->gas_limit && d.tx.chain_id == tx->chain_id);
  assert_int_equal(d.tx.data_len, tx->data_len);
  assert_int_equal(d.access_count, tx->access_len);
  free(out);
}

static void test_ethers_transactions(void **state) {
  (void)state;
  json_t *root = bbvfl_test_vectors_or_skip("transactions.json.gz");
  size_t i, nlegacy = 0, n155 = 0, nlondon = 0;
  json_t *tc;
  /* BBVFL_TEST_STRIDE=k checks every k-th vector (the valgrind run uses it: all of them take a
   * minute there) */
  const char *st_env = getenv("BBVFL_TEST_STRIDE");
  size_t stride = st_env && atoi(st_env) > 1 ? (size_t)atoi(st_env) : 1;
  json_array_foreach(root, i, tc) {
    if (i % stride) continue;
    const char *name = json_string_value(json_object_get(tc, "name"));
    bbvfl_key k;
    bbvfl_err err;
    if (bbvfl_key_from_hex(json_string_value(json_object_get(tc, "privateKey")), &k, &err) != 0)
      fail_msg("%s: %s", name, err.msg);
    bbvfl_tx tx;
    tx_storage st;
    tx_from_json(json_object_get(tc, "transaction"), &tx, &st);
    /* London (type 2), with its access list */
    tx.type = BBVFL_TX_EIP1559;
    check_variant(&tx, &k, tc, "unsignedLondon", "signedLondon", name);
    nlondon++;
    /* legacy forms carry no access list */
    tx.type = BBVFL_TX_LEGACY;
    tx.access_list = NULL;
    tx.access_len = 0;
    uint64_t chain = tx.chain_id;
    tx.chain_id = 0;
    check_variant(&tx, &k, tc, "unsignedLegacy", "signedLegacy", name);
    nlegacy++;
    const char *s155 = json_string_value(json_object_get(tc, "signedEip155"));
    if (chain && s155 && *s155) {
      tx.chain_id = chain;
      check_variant(&tx, &k, tc, "unsignedEip155", "signedEip155", name);
      n155++;
    }
    storage_free(&st);
  }
  print_message("checked %zu legacy, %zu EIP-155 and %zu London transaction vectors\n", nlegacy, n155, nlondon);
  assert_true(nlegacy >= 3000 / stride && nlondon >= 3000 / stride && n155 >= 1500 / stride);
  json_decref(root);
}

static void expect_decode_fail(const char *hex, const char *fragment) {
  uint8_t *raw;
  size_t len;
  assert_int_equal(bbvfl_hex_decode_alloc(hex, &raw, &len, NULL), 0);
  bbvfl_tx_decoded d;
  bbvfl_err err;
  bbvfl_err_clear(&err);
  if (bbvfl_tx_decode(raw, len, &d, &err) == 0) fail_msg("%s decoded", hex);
  if (!strstr(err.msg, fragment)) fail_msg("%s: \"%s\" lacks \"%s\"", hex, err.msg, fragment);
  free(raw);
}

static void test_decode_hostile(void **state) {
  (void)state;
  expect_decode_fail("0x", "empty");
  expect_decode_fail("0x01c0", "not supported");
  expect_decode_fail("0xc0", "missing field nonce");
  expect_decode_fail("0x02c0", "missing field chainId");
  /* the EIP-155 example with a 19-byte to */
  expect_decode_fail("0xf86b098504a817c8008252089335353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83",
                     "expected 20 or 0");
  /* v = 29 */
  expect_decode_fail("0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a7640000801da028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83",
                     "v must be");
  /* trailing garbage */
  expect_decode_fail("0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d8300",
                     "trailing");
  /* high S (n - s of the example) is rejected */
  expect_decode_fail("0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008026a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a098341627668089e51348fccfb4c7ff31c55912f2d2e47ef09652acf665fad3be",
                     "high S");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eip155_example),
      cmocka_unit_test(test_big_chain_id),
      cmocka_unit_test(test_ethers_transactions),
      cmocka_unit_test(test_decode_hostile),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
