/* RLP: ethers.js vectors (encode and decode), minimal integers, and rejection of malformed or
 * non-canonical input. Also the u256 helpers RLP relies on. */
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
#include "eth/rlp.h"
#include "eth/u256.h"
#include "eth_vectors.h"

static void encode_json(bbvfl_buf *b, json_t *j) {
  if (json_is_array(j)) {
    size_t m = bbvfl_rlp_list_begin(b), i;
    json_t *x;
    json_array_foreach(j, i, x) encode_json(b, x);
    bbvfl_rlp_list_end(b, m);
  } else {
    uint8_t *data;
    size_t len;
    assert_int_equal(bbvfl_hex_decode_alloc(json_string_value(j), &data, &len, NULL), 0);
    bbvfl_rlp_put_bytes(b, data, len);
    free(data);
  }
}

/* Asserts that the decoded item equals the JSON structure. */
static void check_decoded(const bbvfl_rlp_item *item, json_t *j) {
  if (json_is_array(j)) {
    assert_true(item->is_list);
    bbvfl_rlp_iter it;
    bbvfl_rlp_item child;
    assert_int_equal(bbvfl_rlp_iter_init(&it, item, NULL), 0);
    size_t i = 0;
    int rc;
    while ((rc = bbvfl_rlp_next(&it, &child, NULL)) == 1) {
      assert_true(i < json_array_size(j));
      check_decoded(&child, json_array_get(j, i));
      i++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, json_array_size(j));
  } else {
    assert_false(item->is_list);
    uint8_t *data;
    size_t len;
    assert_int_equal(bbvfl_hex_decode_alloc(json_string_value(j), &data, &len, NULL), 0);
    assert_int_equal(item->len, len);
    if (len) assert_memory_equal(item->payload, data, len);
    free(data);
  }
}

static void test_ethers_rlp(void **state) {
  (void)state;
  json_t *root = bbvfl_test_vectors_or_skip("rlp.json.gz");
  size_t i, n = 0;
  json_t *tc;
  json_array_foreach(root, i, tc) {
    json_t *dec = json_object_get(tc, "decoded");
    const char *enc = json_string_value(json_object_get(tc, "encoded"));
    assert_non_null(dec);
    assert_non_null(enc);
    uint8_t *want;
    size_t wlen;
    assert_int_equal(bbvfl_hex_decode_alloc(enc, &want, &wlen, NULL), 0);
    bbvfl_buf b;
    bbvfl_buf_init(&b);
    encode_json(&b, dec);
    assert_int_equal(bbvfl_buf_check(&b, NULL), 0);
    assert_int_equal(b.len, wlen);
    assert_memory_equal(b.p, want, wlen);
    bbvfl_buf_free(&b);
    bbvfl_rlp_item item;
    bbvfl_err err;
    if (bbvfl_rlp_decode_exact(want, wlen, &item, &err) != 0)
      fail_msg("%s: %s", json_string_value(json_object_get(tc, "name")), err.msg);
    check_decoded(&item, dec);
    free(want);
    n++;
  }
  print_message("checked %zu RLP vectors\n", n);
  assert_true(n >= 50);
  json_decref(root);
}

static void expect_int(uint64_t v, const char *hex) {
  bbvfl_buf b;
  bbvfl_buf_init(&b);
  bbvfl_rlp_put_u64(&b, v);
  char out[64];
  bbvfl_hex_encode(b.p, b.len, out);
  assert_string_equal(out, hex);
  bbvfl_rlp_item item;
  uint64_t back;
  assert_int_equal(bbvfl_rlp_decode_exact(b.p, b.len, &item, NULL), 0);
  assert_int_equal(bbvfl_rlp_item_u64(&item, &back, NULL), 0);
  assert_true(back == v);
  bbvfl_buf_free(&b);
}

static void test_integers(void **state) {
  (void)state;
  expect_int(0, "0x80");
  expect_int(1, "0x01");
  expect_int(0x7f, "0x7f");
  expect_int(0x80, "0x8180");
  expect_int(1024, "0x820400");
  expect_int(31337, "0x827a69");
  expect_int(UINT64_MAX, "0x88ffffffffffffffff");
}

static void expect_reject(const char *hex, const char *fragment) {
  uint8_t *data;
  size_t len;
  assert_int_equal(bbvfl_hex_decode_alloc(hex, &data, &len, NULL), 0);
  bbvfl_rlp_item item;
  bbvfl_err err;
  bbvfl_err_clear(&err);
  int rc = bbvfl_rlp_decode_exact(data, len, &item, &err);
  if (rc == 0 && item.is_list) { /* walk the list: errors may be inside */
    bbvfl_rlp_iter it;
    bbvfl_rlp_item c;
    bbvfl_rlp_iter_init(&it, &item, NULL);
    while ((rc = bbvfl_rlp_next(&it, &c, &err)) == 1) {
    }
  } else if (rc == 0) {
    uint64_t v;
    rc = bbvfl_rlp_item_u64(&item, &v, &err);
  }
  if (rc >= 0) fail_msg("%s was accepted", hex);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  if (!strstr(err.msg, fragment)) fail_msg("%s: message \"%s\" lacks \"%s\"", hex, err.msg, fragment);
  free(data);
}

static void test_hostile(void **state) {
  (void)state;
  expect_reject("0x", "empty");
  expect_reject("0x8100", "must not have a prefix");
  expect_reject("0x83aabb", "only 2 remain");
  expect_reject("0xb801aa", "short length");
  expect_reject("0xb90001aa", "leading zero");
  expect_reject("0xbf", "runs past");
  expect_reject("0xbfffffffffffffffff00", "remain");
  expect_reject("0xc3aabb", "remain");
  expect_reject("0xc28501", "remain");
  expect_reject("0x0102", "trailing");
  expect_reject("0x820001", "leading zero"); /* integer with a leading zero */
  expect_reject("0x89010000000000000000", "64 bits");
}

static void test_u256(void **state) {
  (void)state;
  bbvfl_u256 v;
  char dec[80], hex[67];
  assert_int_equal(bbvfl_u256_from_string(
      "115792089237316195423570985008687907853269984665640564039457584007913129639935", &v, NULL), 0);
  for (int i = 0; i < 32; i++) assert_int_equal(v.be[i], 0xff);
  bbvfl_u256_to_dec(&v, dec);
  assert_string_equal(dec, "115792089237316195423570985008687907853269984665640564039457584007913129639935");
  bbvfl_err err;
  assert_int_equal(bbvfl_u256_from_string(
      "115792089237316195423570985008687907853269984665640564039457584007913129639936", &v, &err), -1);
  assert_non_null(strstr(err.msg, "256 bits"));
  assert_int_equal(bbvfl_u256_from_string("0x0", &v, NULL), 0);
  bbvfl_u256_to_hex(&v, hex);
  assert_string_equal(hex, "0x0");
  bbvfl_u256_to_dec(&v, dec);
  assert_string_equal(dec, "0");
  assert_int_equal(bbvfl_u256_from_string("0x00ff", &v, NULL), 0);
  bbvfl_u256_to_hex(&v, hex);
  assert_string_equal(hex, "0xff");
  assert_int_equal(bbvfl_u256_from_string("12a", &v, &err), -1);
  assert_int_equal(bbvfl_u256_from_string("0x", &v, &err), -1);
  assert_int_equal(bbvfl_u256_from_string("", &v, &err), -1);
  uint64_t u;
  assert_int_equal(bbvfl_u256_from_string("18446744073709551615", &v, NULL), 0);
  assert_int_equal(bbvfl_u256_to_u64(&v, &u), 0);
  assert_true(u == UINT64_MAX);
  assert_int_equal(bbvfl_u256_from_string("18446744073709551616", &v, NULL), 0);
  assert_int_equal(bbvfl_u256_to_u64(&v, &u), -1);
  /* 2^64 mod 10^9+7 and division by a full 64-bit divisor */
  assert_true(bbvfl_u256_mod_u64(&v, 1000000007u) == 582344008u);
  bbvfl_u256 q;
  assert_true(bbvfl_u256_divmod_u64(&q, &v, UINT64_MAX) == 1);
  assert_int_equal(bbvfl_u256_to_u64(&q, &u), 0);
  assert_true(u == 1);
  /* multiplication overflow is reported */
  bbvfl_u256 big;
  memset(big.be, 0xff, 32);
  assert_int_equal(bbvfl_u256_mul_u64(&q, &big, 2), 1);
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  assert_int_equal(bbvfl_u256_add(&q, &big, &one), 1);
  assert_true(bbvfl_u256_is_zero(&q));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ethers_rlp),
      cmocka_unit_test(test_integers),
      cmocka_unit_test(test_hostile),
      cmocka_unit_test(test_u256),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
