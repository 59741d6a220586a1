/* The contracts' custom errors as the C side sees them: bbvfl_errors.h, generated from abi/ at
 * build time. Each selector is keccak256 of its signature, a few are pinned against Foundry's
 * `cast sig`, and the ones the client's recovery paths branch on exist and are told apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_skip.h"

#include "bbvfl_errors.h"
#include "common/err.h"
#include "eth/keccak.h"
#include "eth/rpc.h"

static void test_selectors_are_keccak_of_signatures(void **state) {
  (void)state;
  assert_true(bbvfl_contract_error_count >= 40); /* the session contracts declare about fifty */
  for (size_t i = 0; i < bbvfl_contract_error_count; i++) {
    const bbvfl_contract_error *e = &bbvfl_contract_errors[i];
    uint8_t h[32];
    bbvfl_keccak256(e->signature, strlen(e->signature), h);
    uint32_t want = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    if (e->selector != want) fail_msg("%s: selector %08x, keccak says %08x", e->signature, e->selector, want);
    size_t nl = strlen(e->name);
    assert_memory_equal(e->signature, e->name, nl);
    assert_int_equal(e->signature[nl], '(');
    assert_string_equal(e->signature + nl, e->types);
    assert_ptr_equal(bbvfl_contract_error_find(e->selector), e);
  }
  assert_null(bbvfl_contract_error_find(0x08c379a0u)); /* Error(string) is no contract's */
}

/* Selectors as `devnet/tool.sh cast sig '<signature>'` prints them (Foundry 1.7.1). */
static void test_selectors_match_cast_sig(void **state) {
  (void)state;
  assert_int_equal(BBVFL_SEL_NotActive, 0x80cb55e2u);
  assert_int_equal(BBVFL_SEL_BadLength, 0x2e728bb2u);
  assert_int_equal(BBVFL_SEL_AlreadySubmitted, 0x55d25e81u);
  assert_int_equal(BBVFL_SEL_RoundClosed, 0x7da01eb0u);
  assert_int_equal(BBVFL_SEL_AlreadyAggregated, 0xc5181f5bu);
  assert_int_equal(BBVFL_SEL_ClientExcluded, 0x700d4d40u);
  assert_string_equal(bbvfl_contract_error_find(BBVFL_SEL_RoundClosed)->params, "round,open");
}

/* Revert data of a custom error becomes a name with its arguments for people and the selector
 * and integer arguments for code. */
static void test_describe_and_decode(void **state) {
  (void)state;
  uint8_t d[4 + 64] = {0x7d, 0xa0, 0x1e, 0xb0}; /* RoundClosed(uint64 round, uint64 open) = (3, 5) */
  d[4 + 31] = 3;
  d[4 + 63] = 5;
  char out[256];
  bbvfl_revert_describe(d, sizeof d, out, sizeof out);
  assert_string_equal(out, "RoundClosed(round=3, open=5)");
  bbvfl_revert rv;
  bbvfl_revert_decode(d, sizeof d, &rv);
  assert_true(rv.present);
  assert_string_equal(rv.error, "RoundClosed(round=3, open=5)");
  assert_int_equal(rv.nargs, 2);
  assert_int_equal(rv.args[1], 5);
  bbvfl_err err = {0};
  bbvfl_fail(&err, BBVFL_E_REVERT, "execution reverted");
  err.revert = rv;
  assert_true(bbvfl_err_revert_sel_is(&err, BBVFL_SEL_RoundClosed));
  assert_false(bbvfl_err_revert_sel_is(&err, BBVFL_SEL_AlreadyAggregated));
  /* a uint64 argument with bits above 64 set is malformed: shown as such, not decoded */
  d[4 + 0] = 1;
  bbvfl_revert_describe(d, sizeof d, out, sizeof out);
  assert_non_null(strstr(out, "RoundClosed(malformed arguments 0x01"));
  /* a Config refusal names the field and the bound: ClientsOutOfRange(uint256 given, uint256 max) */
  uint8_t c[4 + 64] = {0};
  uint32_t s = BBVFL_SEL_ClientsOutOfRange;
  c[0] = (uint8_t)(s >> 24), c[1] = (uint8_t)(s >> 16), c[2] = (uint8_t)(s >> 8), c[3] = (uint8_t)s;
  c[4 + 31] = 65;
  c[4 + 63] = 64;
  bbvfl_revert_describe(c, sizeof c, out, sizeof out);
  assert_string_equal(out, "ClientsOutOfRange(given=65, max=64)");
  bbvfl_revert_decode(c, sizeof c, &rv);
  assert_int_equal(rv.nargs, 2);
  assert_int_equal(rv.args[0], 65);
  assert_int_equal(rv.args[1], 64);
  /* WrongModeContract(bool configHashed, bool contractHashed): booleans in words, no integer args */
  s = BBVFL_SEL_WrongModeContract;
  memset(c, 0, sizeof c);
  c[0] = (uint8_t)(s >> 24), c[1] = (uint8_t)(s >> 16), c[2] = (uint8_t)(s >> 8), c[3] = (uint8_t)s;
  c[4 + 63] = 1;
  bbvfl_revert_describe(c, sizeof c, out, sizeof out);
  assert_string_equal(out, "WrongModeContract(configHashed=false, contractHashed=true)");
  bbvfl_revert_decode(c, sizeof c, &rv);
  assert_int_equal(rv.nargs, 0);
  /* an unknown selector stays a hex custom error */
  uint8_t u[4] = {0xde, 0xad, 0xbe, 0xef};
  bbvfl_revert_describe(u, sizeof u, out, sizeof out);
  assert_string_equal(out, "custom error 0xdeadbeef");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_selectors_are_keccak_of_signatures),
      cmocka_unit_test(test_selectors_match_cast_sig),
      cmocka_unit_test(test_describe_and_decode),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
