/* The minibatch schedule against vectors computed independently: for each step i,
 * `devnet/tool.sh cast keccak 0x<S><uint64be(e)><uint64be(i)>` gave the hash, and a python3
 * script with arbitrary-precision integers took it mod (i+1) and applied the Fisher-Yates swaps
 * (S = bytes 0x01..0x20). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <stdlib.h>

#include "core/schedule.h"

static void seed_bytes(uint8_t S[32]) {
  for (int i = 0; i < 32; i++) S[i] = (uint8_t)(i + 1);
}

static void test_vectors(void **st) {
  (void)st;
  uint8_t S[32];
  seed_bytes(S);
  size_t p10[10];
  static const size_t want10[10] = {0, 4, 3, 6, 5, 9, 8, 1, 7, 2}; /* epoch 0, N = 10 */
  bbvfl_schedule_perm(S, 0, 10, p10);
  assert_memory_equal(p10, want10, sizeof want10);
  size_t p23[23];
  static const size_t want23[23] = {0, 6, 11, 22, 7, 10, 20, 21, 17, 3, 13, 1,
                                    16, 14, 15, 8, 2, 18, 9, 19, 5, 4, 12}; /* epoch 3, N = 23 */
  bbvfl_schedule_perm(S, 3, 23, p23);
  assert_memory_equal(p23, want23, sizeof want23);
  /* single draws: the same hash reduced by a large modulus */
  assert_int_equal(bbvfl_schedule_draw(S, 7, 1000, 1000003), 208430);
  assert_int_equal(bbvfl_schedule_draw(S, 7, 1000, UINT64_C(1) << 56), UINT64_C(263115778658883));
  /* the first draws of epoch 0 (i = 9, 8, 7) */
  assert_int_equal(bbvfl_schedule_draw(S, 0, 9, 10), 2);
  assert_int_equal(bbvfl_schedule_draw(S, 0, 8, 9), 7);
  assert_int_equal(bbvfl_schedule_draw(S, 0, 7, 8), 1);
}

static void test_batches(void **st) {
  (void)st;
  uint8_t S[32];
  seed_bytes(S);
  bbvfl_schedule s;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_schedule_init(&s, S, 455, 10, &err), 0);
  assert_int_equal(s.R, 45);
  /* every epoch is a permutation; epochs differ */
  unsigned char seen[455] = {0};
  for (size_t k = 0; k < 45; k++) {
    const size_t *b = bbvfl_schedule_batch(&s, 2, k);
    for (size_t i = 0; i < 10; i++) seen[b[i]]++;
  }
  int covered = 0;
  for (int i = 0; i < 455; i++) covered += seen[i] == 1;
  assert_int_equal(covered, 450); /* 45 batches of 10 out of 455 rows, each once */
  size_t e2[10], e3[10];
  const size_t *b = bbvfl_schedule_batch(&s, 2, 0);
  for (int i = 0; i < 10; i++) e2[i] = b[i];
  b = bbvfl_schedule_batch(&s, 3, 0);
  for (int i = 0; i < 10; i++) e3[i] = b[i];
  assert_memory_not_equal(e2, e3, sizeof e2);
  /* the cache holds the two epochs used last: moving between epochs (a pipelined client) or on
     to a third one always gives that epoch's permutation */
  size_t want[3][455];
  for (int e = 0; e < 3; e++) bbvfl_schedule_perm(S, (uint64_t)e + 2, 455, want[e]);
  const int order[10] = {0, 1, 0, 1, 2, 1, 2, 0, 0, 2};
  for (int t = 0; t < 10; t++)
    for (size_t k = 0; k < 45; k += 11)
      assert_memory_equal(bbvfl_schedule_batch(&s, (uint64_t)order[t] + 2, k), want[order[t]] + k * 10,
                          10 * sizeof(size_t));
  bbvfl_schedule_free(&s);
  assert_int_equal(bbvfl_schedule_init(&s, S, 5, 10, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_vectors), cmocka_unit_test(test_batches)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
