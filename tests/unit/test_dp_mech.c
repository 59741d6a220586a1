/* PBM is unbiased with variance C^2 M / (4 beta^2 b) (PBM-VFL, DP-BBVFL); the integer sum is
 * exact; Gaussian clipping bounds the norm. Statistical tests use fixed seeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/mech.h"

#define N 100000

static void test_pbm_unbiased_variance(void **st) {
  (void)st;
  const int M = 5;
  bbvfl_mech mech = {.kind = BBVFL_MECH_PBM, .b = 16, .beta = 0.2, .C = 1.0};
  assert_float_equal(bbvfl_pbm_variance(&mech, M), 5.0 / (4 * 0.04 * 16), 1e-12);
  uint8_t *q[5];
  const uint8_t *qc[5];
  float *h = malloc(N * sizeof *h), *est = malloc(N * sizeof *est);
  uint32_t *s = malloc(N * sizeof *s);
  /* (a) every embedding 0: the variance bound is attained exactly */
  /* (b) fixed non-zero embeddings: unbiased, variance C^2/(beta^2 b^2) * sum_m b p_m (1 - p_m) */
  const float cases[2][5] = {{0, 0, 0, 0, 0}, {0.3f, -0.7f, 0.9f, 0.0f, -0.2f}};
  for (int c = 0; c < 2; c++) {
    double truth = 0, var_exact = 0;
    for (int m = 0; m < M; m++) {
      bbvfl_rng r;
      bbvfl_rng_init_seeded(&r, 99, bbvfl_rng_stream(BBVFL_STREAM_TEST, (uint32_t)(10 * c + m)));
      for (size_t i = 0; i < N; i++) h[i] = cases[c][m];
      q[m] = malloc(N);
      qc[m] = q[m];
      bbvfl_pbm_quantize(&mech, h, N, &r, q[m]);
      for (size_t i = 0; i < N; i++) assert_true(q[m][i] <= 16);
      truth += cases[c][m];
      double p = 0.5 + mech.beta * cases[c][m];
      var_exact += mech.b * p * (1 - p) / (mech.beta * mech.beta * mech.b * mech.b);
    }
    bbvfl_sum_u8(qc, (size_t)M, N, s);
    bbvfl_pbm_estimate(&mech, M, s, N, est);
    double sum = 0, sum2 = 0;
    for (size_t i = 0; i < N; i++) {
      sum += est[i];
      sum2 += (double)est[i] * est[i];
    }
    double mean = sum / N, var = sum2 / N - mean * mean;
    /* unbiased: within 4 standard errors (sd of the mean ~ 0.0044) */
    assert_true(fabs(mean - truth) < 4 * sqrt(var_exact / N));
    /* variance: relative standard error sqrt(2/N) ~ 0.45%: allow 3%. A bound with b^2 instead of
     * b, without M, or with beta instead of beta^2 is off by a factor >= 2.5 */
    assert_true(fabs(var / var_exact - 1) < 0.03);
    if (c == 0) assert_true(fabs(var / bbvfl_pbm_variance(&mech, M) - 1) < 0.03);
    else assert_true(var < bbvfl_pbm_variance(&mech, M));
    for (int m = 0; m < M; m++) free(q[m]);
  }
  free(h);
  free(est);
  free(s);
}

static void test_pbm_clamp(void **st) {
  (void)st;
  bbvfl_mech mech = {.kind = BBVFL_MECH_PBM, .b = 8, .beta = 0.5, .C = 1.0};
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 1, 0);
  float h[4] = {5.0f, -5.0f, 1.0f, -1.0f};
  uint8_t q[4];
  bbvfl_pbm_quantize(&mech, h, 4, &r, q); /* beta = 1/2: p = 1 at C, 0 at -C */
  assert_int_equal(q[0], 8);
  assert_int_equal(q[1], 0);
  assert_int_equal(q[2], 8);
  assert_int_equal(q[3], 0);
  bbvfl_err err = {0};
  bbvfl_mech bad = {.kind = BBVFL_MECH_PBM, .b = 256, .beta = 0.2, .C = 1};
  assert_int_equal(bbvfl_mech_check(&bad, &err), -1);
  bad.b = 16;
  bad.beta = 0.6;
  assert_int_equal(bbvfl_mech_check(&bad, &err), -1);
  bad.beta = 0.5; /* deterministic at +-C: the accountant has no finite epsilon for it */
  assert_int_equal(bbvfl_mech_check(&bad, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  bad.beta = 0.4999;
  assert_int_equal(bbvfl_mech_check(&bad, &err), 0);
  bbvfl_mech_kind k;
  assert_int_equal(bbvfl_mech_parse("gaussian", &k), 0);
  assert_int_equal(k, BBVFL_MECH_GAUSSIAN);
  assert_int_equal(bbvfl_mech_parse("pbmx", &k), -1);
}

/* The quantizer draws exactly what one bbvfl_rng_binomial per value draws, value by value (its
   words come in chunks): the same q and the same generator state after, for b 1..255 and values
   inside, at and beyond +-C (p = 1 and p = 0 draw nothing), NaN included. */
static void test_pbm_same_draws(void **st) {
  (void)st;
  const int bs[4] = {1, 16, 200, 255};
  static float h[5000];
  static uint8_t q[5000], want[5000];
  for (int t = 0; t < 4; t++)
    for (int half = 0; half <= 1; half++) {
      bbvfl_mech mech = {.kind = BBVFL_MECH_PBM, .b = bs[t], .beta = half ? 0.5 : 0.2, .C = 2.0};
      bbvfl_rng a, b;
      bbvfl_rng_init_seeded(&a, 4, bbvfl_rng_stream(BBVFL_STREAM_NOISE, (uint32_t)t));
      for (size_t i = 0; i < 5000; i++) h[i] = (float)(((double)((i * 7919) % 1000) / 1000.0 - 0.5) * 6.0);
      h[17] = NAN;
      (void)bbvfl_rng_u32(&a); /* start mid-block */
      b = a;
      bbvfl_pbm_quantize(&mech, h, 5000, &a, q);
      double k = mech.beta / mech.C;
      for (size_t i = 0; i < 5000; i++) {
        double x = h[i] != h[i] ? 0 : h[i] > 2.0 ? 2.0 : h[i] < -2.0 ? -2.0 : h[i];
        want[i] = (uint8_t)bbvfl_rng_binomial(&b, (unsigned)bs[t], 0.5 + k * x);
      }
      assert_memory_equal(q, want, sizeof q);
      assert_memory_equal(&a, &b, sizeof a);
    }
}

static void test_sum_exact(void **st) {
  (void)st;
  /* odd lengths, many clients (more than one 257-client chunk), extreme values */
  const size_t M = 300, n = 37;
  uint8_t **q = malloc(M * sizeof *q);
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 3, 0);
  for (size_t m = 0; m < M; m++) {
    q[m] = malloc(n);
    for (size_t i = 0; i < n; i++) q[m][i] = (uint8_t)(m % 3 == 0 ? 255 : bbvfl_rng_u32(&r));
  }
  uint32_t s[37];
  bbvfl_sum_u8((const uint8_t *const *)q, M, n, s);
  for (size_t i = 0; i < n; i++) {
    uint32_t want = 0;
    for (size_t m = 0; m < M; m++) want += q[m][i];
    assert_int_equal(s[i], want);
  }
  for (size_t m = 0; m < M; m++) free(q[m]);
  free(q);
}

/* Every value at its maximum 255 for M = 1000 clients (the most off-chain training accepts): each
 * 16-bit accumulator lane fills to 257 * 255 = 65,535 inside one chunk, the largest value that
 * does not wrap; a chunk any longer, or a carry lost between chunks, gives a wrong sum. Lengths
 * cover the vector part (multiples of 16 and 8) and the scalar tail. */
static void test_sum_full_lanes(void **st) {
  (void)st;
  const size_t M = 1000, lens[] = {1, 7, 8, 16, 33, 160};
  uint8_t **q = malloc(M * sizeof *q);
  assert_non_null(q);
  for (size_t m = 0; m < M; m++) {
    q[m] = malloc(160);
    assert_non_null(q[m]);
    memset(q[m], 255, 160);
  }
  uint32_t s[160];
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    for (size_t Mk = 257; Mk <= M; Mk += 743) { /* exactly one full chunk, then 1000 */
      bbvfl_sum_u8((const uint8_t *const *)q, Mk, lens[k], s);
      for (size_t i = 0; i < lens[k]; i++) assert_int_equal(s[i], 255u * Mk);
    }
  }
  for (size_t m = 0; m < M; m++) free(q[m]);
  free(q);
}

static void test_gaussian(void **st) {
  (void)st;
  bbvfl_mech mech = {.kind = BBVFL_MECH_GAUSSIAN, .clip = 1.0, .sigma = 1e-9};
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 4, 0);
  float h[2 * 4] = {3, 4, 0, 0, 0.1f, 0.2f, 0.2f, 0.1f};
  float scale[2];
  bbvfl_gauss_clip_noise(&mech, h, 2, 4, &r, scale);
  assert_float_equal(scale[0], 0.2, 1e-6);
  assert_float_equal(scale[1], 1.0, 1e-6);
  assert_float_equal(h[0], 0.6, 1e-6);
  assert_float_equal(h[1], 0.8, 1e-6);
  assert_float_equal(h[4], 0.1, 1e-6);
  /* noise variance */
  mech.sigma = 0.5;
  float *z = calloc(N, sizeof *z);
  mech.clip = 1e9;
  bbvfl_gauss_clip_noise(&mech, z, N / 4, 4, &r, NULL);
  double s2 = 0;
  for (size_t i = 0; i < N; i++) s2 += (double)z[i] * z[i];
  assert_true(fabs(s2 / N / 0.25 - 1) < 0.03);
  free(z);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_pbm_unbiased_variance), cmocka_unit_test(test_pbm_clamp),
                                     cmocka_unit_test(test_pbm_same_draws),
                                     cmocka_unit_test(test_sum_exact), cmocka_unit_test(test_sum_full_lanes),
                                     cmocka_unit_test(test_gaussian)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
