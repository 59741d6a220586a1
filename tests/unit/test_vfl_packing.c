/* Bit-packed values (client/binding/packing.c) against the layout of
 * contract/src/BbvflPackedAggregator.sol: lengths at block boundaries, a hand-made vector, round
 * trips, the bit-sliced sum (the contract's ripple carry) against packing the plain sums, the
 * padding and range refusals, and the wire cost per mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "binding/packing.h"

static void test_bits_and_lengths(void **st) {
  (void)st;
  assert_int_equal(bbvfl_pack_bits(1), 1);
  assert_int_equal(bbvfl_pack_bits(15), 4);
  assert_int_equal(bbvfl_pack_bits(16), 5);
  assert_int_equal(bbvfl_pack_bits(80), 7);
  assert_int_equal(bbvfl_pack_bits(255), 8);
  assert_int_equal(bbvfl_pack_bits(256), 9);
  static const size_t ns[] = {1, 7, 8, 9, 255, 256, 257, 300, 513, 7200};
  static const size_t want5[] = {5, 5, 5, 10, 160, 160, 165, 190, 325, 4500};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) assert_int_equal(bbvfl_packed_len(ns[i], 5), want5[i]);
  assert_int_equal(bbvfl_packed_len(7200, 7), 6300);
  assert_int_equal(bbvfl_packed_len(10, 0), 0);
}

/* 9 values at 5 bits: one block of pb = 2 bytes per plane; v[0] = 16 (plane 4, byte 0, bit 7),
 * v[8] = 1 (plane 0, byte 1, bit 7): the bytes the contract's calldataload reads at bit 255 - t. */
static void test_vector(void **st) {
  (void)st;
  uint32_t v[9] = {16, 0, 0, 0, 0, 0, 0, 0, 1};
  uint8_t out[10];
  static const uint8_t want[10] = {0x00, 0x80, 0, 0, 0, 0, 0, 0, 0x80, 0x00};
  assert_int_equal(bbvfl_pack(v, 9, 5, out, sizeof out, NULL), 0);
  assert_memory_equal(out, want, sizeof want);
  uint32_t back[9];
  assert_int_equal(bbvfl_unpack(out, sizeof out, 9, 5, back, NULL), 0);
  assert_memory_equal(back, v, sizeof v);
}

static uint32_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

static void test_round_trip_and_sum(void **st) {
  (void)st;
  static const size_t ns[] = {1, 8, 9, 255, 256, 257, 600, 7200};
  uint64_t seed = 7;
  for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
    size_t n = ns[t];
    unsigned m = 5, b = 16, vb = bbvfl_pack_bits(b), sb = bbvfl_pack_bits(m * b);
    uint32_t *v = calloc(n, sizeof *v), *sum = calloc(n, sizeof *sum), *back = calloc(n, sizeof *back);
    size_t pl = bbvfl_packed_len(n, vb), sl = bbvfl_packed_len(n, sb);
    uint8_t *p = calloc(pl, 1), *acc = calloc(sl, 1), *want = calloc(sl, 1);
    assert_non_null(v);
    assert_non_null(sum);
    assert_non_null(back);
    assert_non_null(p);
    assert_non_null(acc);
    assert_non_null(want);
    for (unsigned i = 0; i < m; i++) {
      for (size_t j = 0; j < n; j++) {
        v[j] = i == 0 && j == n - 1 ? b : rnd(&seed) % (b + 1); /* b at the last position once */
        sum[j] += v[j];
      }
      assert_int_equal(bbvfl_pack(v, n, vb, p, pl, NULL), 0);
      assert_int_equal(bbvfl_unpack(p, pl, n, vb, back, NULL), 0);
      assert_memory_equal(back, v, n * sizeof *v);
      assert_int_equal(bbvfl_packed_add(acc, sl, p, pl, n, vb, sb, NULL), 0);
    }
    assert_int_equal(bbvfl_pack(sum, n, sb, want, sl, NULL), 0);
    assert_memory_equal(acc, want, sl);
    free(v);
    free(sum);
    free(back);
    free(p);
    free(acc);
    free(want);
  }
}

static void test_refusals(void **st) {
  (void)st;
  bbvfl_err err;
  uint32_t v[9] = {0, 0, 0, 0, 0, 0, 0, 0, 32};
  uint8_t out[10];
  assert_int_equal(bbvfl_pack(v, 9, 5, out, sizeof out, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  v[8] = 31;
  assert_int_equal(bbvfl_pack(v, 9, 5, out, 9, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  assert_int_equal(bbvfl_pack(v, 9, 5, out, sizeof out, NULL), 0);
  uint32_t back[9];
  out[9] |= 0x01; /* a bit past value 8 in plane 4 */
  assert_int_equal(bbvfl_unpack(out, sizeof out, 9, 5, back, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  out[9] &= 0xFE;
  out[1] |= 0x40; /* value 9 of plane 0: padding too */
  assert_int_equal(bbvfl_unpack(out, sizeof out, 9, 5, back, &err), -1);
  out[1] &= (uint8_t)~0x40;
  assert_int_equal(bbvfl_unpack(out, 9, 9, 5, back, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  assert_int_equal(bbvfl_unpack(out, sizeof out, 9, 5, back, NULL), 0);
}

static void test_wire_cost(void **st) {
  (void)st;
  bbvfl_wire_cost c;
  /* M=5, B=10, P=16, b=16, K=45: 7200 values per client */
  assert_int_equal(bbvfl_wire_cost_of(BBVFL_WIRE_HASHED, 5, 16, 7200, &c, NULL), 0);
  assert_int_equal(c.submit_bytes, 7200);
  assert_int_equal(c.aggregate_bytes, 36000);
  assert_true(c.calldata_gas_per_value_prague > 79.9 && c.calldata_gas_per_value_prague < 80.1);
  assert_int_equal(bbvfl_wire_cost_of(BBVFL_WIRE_PACKED, 5, 16, 7200, &c, NULL), 0);
  assert_int_equal(c.submit_bytes, 4500);
  assert_int_equal(c.aggregate_bytes, 22500);
  assert_true(c.calldata_gas_per_value_prague > 49.9 && c.calldata_gas_per_value_prague < 50.1);
  assert_int_equal(bbvfl_wire_cost_of(BBVFL_WIRE_OPTIMISTIC, 5, 16, 7200, &c, NULL), 0);
  assert_int_equal(c.aggregate_bytes, 32); /* the claim is keccak256 of the sum */
  assert_true(c.calldata_gas_per_value_prague > 25.0 && c.calldata_gas_per_value_prague < 25.1);
  assert_true(c.calldata_gas_per_value_cancun > 10.0 && c.calldata_gas_per_value_cancun < 10.1);
  bbvfl_err err;
  assert_int_equal(bbvfl_wire_cost_of(BBVFL_WIRE_PACKED, 0, 16, 7200, &c, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  assert_int_equal(bbvfl_wire_cost_of((bbvfl_wire_mode)9, 5, 16, 7200, &c, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bits_and_lengths), cmocka_unit_test(test_vector), cmocka_unit_test(test_round_trip_and_sum),
      cmocka_unit_test(test_refusals), cmocka_unit_test(test_wire_cost)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
