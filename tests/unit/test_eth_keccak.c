/* Keccak-256: published vectors ("" and "abc"), streaming in odd-sized pieces, and every
 * keccak256 case of the ethers.js hashes.json. */
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
#include "eth_vectors.h"

static void expect_hash(const void *data, size_t len, const char *hex) {
  uint8_t out[32], want[32];
  assert_int_equal(bbvfl_hex_decode_fixed(hex, want, 32, NULL), 0);
  bbvfl_keccak256(data, len, out);
  assert_memory_equal(out, want, 32);
}

static void test_published(void **state) {
  (void)state;
  expect_hash("", 0, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  expect_hash("abc", 3, "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  /* the ERC-20 Transfer event topic */
  const char *sig = "Transfer(address,address,uint256)";
  expect_hash(sig, strlen(sig), "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
}

static void test_not_sha3(void **state) {
  (void)state;
  /* SHA3-256("") = a7ffc6f8...; Keccak-256 must differ */
  uint8_t out[32], sha3[32];
  assert_int_equal(bbvfl_hex_decode_fixed(
      "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a", sha3, 32, NULL), 0);
  bbvfl_keccak256("", 0, out);
  assert_memory_not_equal(out, sha3, 32);
}

static void test_streaming(void **state) {
  (void)state;
  uint8_t data[1000];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + 3);
  static const size_t lens[] = {0, 1, 135, 136, 137, 271, 272, 273, 999, 1000};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    size_t len = lens[li];
    uint8_t one[32], parts[32];
    bbvfl_keccak256(data, len, one);
    for (size_t step = 1; step < 150; step += 37) {
      bbvfl_keccak_ctx c;
      bbvfl_keccak_init(&c);
      for (size_t off = 0; off < len; off += step)
        bbvfl_keccak_update(&c, data + off, len - off < step ? len - off : step);
      bbvfl_keccak_final(&c, parts);
      assert_memory_equal(one, parts, 32);
    }
  }
}

static void test_ethers_hashes(void **state) {
  (void)state;
  json_t *root = bbvfl_test_vectors_or_skip("hashes.json.gz");
  size_t i, n = 0;
  json_t *tc;
  json_array_foreach(root, i, tc) {
    const char *data = json_string_value(json_object_get(tc, "data"));
    const char *want = json_string_value(json_object_get(tc, "keccak256"));
    assert_non_null(data);
    assert_non_null(want);
    uint8_t *buf;
    size_t len;
    assert_int_equal(bbvfl_hex_decode_alloc(data, &buf, &len, NULL), 0);
    expect_hash(buf, len, want);
    free(buf);
    n++;
  }
  assert_true(n >= 200);
  print_message("checked %zu keccak256 vectors\n", n);
  json_decref(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_published),
      cmocka_unit_test(test_not_sha3),
      cmocka_unit_test(test_streaming),
      cmocka_unit_test(test_ethers_hashes),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
