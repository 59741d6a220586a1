/* ChaCha20 block function (RFC 8439 test vector), seeded streams, binomial and normal moments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/rng.h"

static void test_rfc8439_block(void **st) {
  (void)st;
  /* RFC 8439 section 2.3.2: key 00:01:..:1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1 */
  uint32_t key[8];
  for (int i = 0; i < 8; i++)
    key[i] = (uint32_t)(4 * i) | (uint32_t)(4 * i + 1) << 8 | (uint32_t)(4 * i + 2) << 16 | (uint32_t)(4 * i + 3) << 24;
  uint32_t nonce[3] = {0x09000000u, 0x4a000000u, 0};
  uint8_t out[64];
  bbvfl_chacha20_block(key, 1, nonce, out);
  static const uint8_t want[64] = {
      0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20, 0x71, 0xc4,
      0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e,
      0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2,
      0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
  assert_memory_equal(out, want, 64);
}

static void test_streams(void **st) {
  (void)st;
  bbvfl_rng a, b, c, d;
  bbvfl_rng_init_seeded(&a, 5, bbvfl_rng_stream(BBVFL_STREAM_NOISE, 1));
  bbvfl_rng_init_seeded(&b, 5, bbvfl_rng_stream(BBVFL_STREAM_NOISE, 1));
  bbvfl_rng_init_seeded(&c, 5, bbvfl_rng_stream(BBVFL_STREAM_NOISE, 2));
  bbvfl_rng_init_seeded(&d, 6, bbvfl_rng_stream(BBVFL_STREAM_NOISE, 1));
  uint64_t x[4][40];
  for (int i = 0; i < 40; i++) {
    x[0][i] = bbvfl_rng_u64(&a);
    x[1][i] = bbvfl_rng_u64(&b);
    x[2][i] = bbvfl_rng_u64(&c);
    x[3][i] = bbvfl_rng_u64(&d);
  }
  assert_memory_equal(x[0], x[1], sizeof x[0]);
  assert_memory_not_equal(x[0], x[2], sizeof x[0]);
  assert_memory_not_equal(x[0], x[3], sizeof x[0]);
  bbvfl_rng o1, o2;
  assert_int_equal(bbvfl_rng_init_os(&o1, NULL), 0);
  assert_int_equal(bbvfl_rng_init_os(&o2, NULL), 0);
  assert_true(bbvfl_rng_u64(&o1) != bbvfl_rng_u64(&o2));
  /* below: in range and roughly uniform */
  int cnt[7] = {0};
  for (int i = 0; i < 70000; i++) cnt[bbvfl_rng_below(&a, 7)]++;
  for (int k = 0; k < 7; k++) assert_true(abs(cnt[k] - 10000) < 500);
}

static void test_binomial_moments(void **st) {
  (void)st;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 123, 0);
  const int n = 16, T = 200000;
  const double ps[] = {0.3, 0.5, 0.7, 0.05};
  for (int k = 0; k < 4; k++) {
    double p = ps[k], s = 0, s2 = 0;
    for (int t = 0; t < T; t++) {
      unsigned v = bbvfl_rng_binomial(&r, n, p);
      assert_true(v <= (unsigned)n);
      s += v;
      s2 += (double)v * v;
    }
    double mean = s / T, var = s2 / T - mean * mean;
    double mu = n * p, sig2 = n * p * (1 - p);
    /* mean within 5 standard errors; variance within 3% */
    assert_true(fabs(mean - mu) < 5 * sqrt(sig2 / T));
    assert_true(fabs(var / sig2 - 1) < 0.03);
  }
  assert_int_equal(bbvfl_rng_binomial(&r, 9, 1.0), 9);
  assert_int_equal(bbvfl_rng_binomial(&r, 9, 0.0), 0);
  assert_int_equal(bbvfl_rng_binomial(&r, 9, 1.5), 9);
  /* normal */
  double s = 0, s2 = 0;
  for (int t = 0; t < T; t++) {
    double z = bbvfl_rng_normal(&r);
    s += z;
    s2 += z * z;
  }
  assert_true(fabs(s / T) < 0.01);
  assert_true(fabs(s2 / T - 1) < 0.02);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_rfc8439_block), cmocka_unit_test(test_streams),
                                     cmocka_unit_test(test_binomial_moments)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
