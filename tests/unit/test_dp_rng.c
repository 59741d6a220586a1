/* ChaCha20 (RFC 8439 test vectors: the section 2.3.2 block, the section 2.4.2 encryption and the
 * appendix A.1 key streams, through the block function and through the generator), seeded
 * streams, binomial and normal moments. Today's seeded outputs are pinned in test_dp_rng_pinned.c. */
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

/* Little-endian words of 32 key bytes / 12 nonce bytes, as RFC 8439 section 2.3 reads them. */
static void words(const uint8_t *bytes, int n, uint32_t *w) {
  for (int i = 0; i < n; i++)
    w[i] = (uint32_t)bytes[4 * i] | (uint32_t)bytes[4 * i + 1] << 8 | (uint32_t)bytes[4 * i + 2] << 16 |
           (uint32_t)bytes[4 * i + 3] << 24;
}

/* RFC 8439 section 2.4.2: key 00:01:..:1f, nonce 00:00:00:00:00:00:00:4a:00:00:00:00, initial
 * counter 1, the "sunscreen" plaintext (114 bytes) and its ciphertext. */
static const char SUNSCREEN[] = "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
                                "the future, sunscreen would be it.";
static const uint8_t SUNSCREEN_CT[114] = {
    0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81,
    0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f, 0xae, 0x0b,
    0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57,
    0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8,
    0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d, 0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08, 0x8a, 0x22, 0xb6, 0x5e,
    0x52, 0xbc, 0x51, 0x4d, 0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36,
    0x5a, 0xf9, 0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42,
    0x87, 0x4d};

static void test_rfc8439_encryption(void **st) {
  (void)st;
  assert_int_equal(sizeof SUNSCREEN - 1, sizeof SUNSCREEN_CT);
  uint8_t kb[32], nb[12] = {0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0};
  for (int i = 0; i < 32; i++) kb[i] = (uint8_t)i;
  uint32_t key[8], nonce[3];
  words(kb, 8, key);
  words(nb, 3, nonce);
  /* through the block function: key stream blocks 1 and 2 */
  uint8_t ks[128], ct[sizeof SUNSCREEN_CT];
  bbvfl_chacha20_block(key, 1, nonce, ks);
  bbvfl_chacha20_block(key, 2, nonce, ks + 64);
  for (size_t i = 0; i < sizeof ct; i++) ct[i] = (uint8_t)SUNSCREEN[i] ^ ks[i];
  assert_memory_equal(ct, SUNSCREEN_CT, sizeof ct);
  /* through the generator keyed by hand at counter 1, read in pieces across the block edge (whole
   * words: bbvfl_rng_bytes drops the rest of a word it started) */
  bbvfl_rng r;
  memset(&r, 0, sizeof r);
  memcpy(r.key, key, sizeof key);
  memcpy(r.nonce, nonce, sizeof nonce);
  r.counter = 1;
  r.pos = 16;
  size_t done = 0;
  const size_t piece[] = {4, 8, 36, 28, 38};
  for (size_t k = 0; k < sizeof piece / sizeof piece[0]; k++) {
    bbvfl_rng_bytes(&r, ks + done, piece[k]);
    done += piece[k];
  }
  assert_int_equal(done, sizeof ct);
  for (size_t i = 0; i < sizeof ct; i++) ct[i] = (uint8_t)SUNSCREEN[i] ^ ks[i];
  assert_memory_equal(ct, SUNSCREEN_CT, sizeof ct);
  bbvfl_rng_wipe(&r);
}

/* RFC 8439 appendix A.1, test vectors #1 to #3: the key stream of one block, nonce all zero. */
static void test_rfc8439_appendix_a1(void **st) {
  (void)st;
  static const uint8_t want[3][64] = {
      {0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86, 0xbd, 0x28,
       0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d, 0xed, 0x1a, 0xa8, 0x36, 0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7,
       0xda, 0x41, 0x59, 0x7c, 0x51, 0x57, 0x48, 0x8d, 0x77, 0x24, 0xe0, 0x3f, 0xb8, 0xd8, 0x4a, 0x37,
       0x6a, 0x43, 0xb8, 0xf4, 0x15, 0x18, 0xa1, 0x1c, 0xc3, 0x87, 0xb6, 0x69, 0xb2, 0xee, 0x65, 0x86},
      {0x9f, 0x07, 0xe7, 0xbe, 0x55, 0x51, 0x38, 0x7a, 0x98, 0xba, 0x97, 0x7c, 0x73, 0x2d, 0x08, 0x0d,
       0xcb, 0x0f, 0x29, 0xa0, 0x48, 0xe3, 0x65, 0x69, 0x12, 0xc6, 0x53, 0x3e, 0x32, 0xee, 0x7a, 0xed,
       0x29, 0xb7, 0x21, 0x76, 0x9c, 0xe6, 0x4e, 0x43, 0xd5, 0x71, 0x33, 0xb0, 0x74, 0xd8, 0x39, 0xd5,
       0x31, 0xed, 0x1f, 0x28, 0x51, 0x0a, 0xfb, 0x45, 0xac, 0xe1, 0x0a, 0x1f, 0x4b, 0x79, 0x4d, 0x6f},
      {0x3a, 0xeb, 0x52, 0x24, 0xec, 0xf8, 0x49, 0x92, 0x9b, 0x9d, 0x82, 0x8d, 0xb1, 0xce, 0xd4, 0xdd,
       0x83, 0x20, 0x25, 0xe8, 0x01, 0x8b, 0x81, 0x60, 0xb8, 0x22, 0x84, 0xf3, 0xc9, 0x49, 0xaa, 0x5a,
       0x8e, 0xca, 0x00, 0xbb, 0xb4, 0xa7, 0x3b, 0xda, 0xd1, 0x92, 0xb5, 0xc4, 0x2f, 0x73, 0xf2, 0xfd,
       0x4e, 0x27, 0x36, 0x44, 0xc8, 0xb3, 0x61, 0x25, 0xa6, 0x4a, 0xdd, 0xeb, 0x00, 0x6c, 0x13, 0xa0}};
  const uint32_t nonce[3] = {0, 0, 0};
  uint32_t key[8] = {0};
  uint8_t out[64];
  bbvfl_chacha20_block(key, 0, nonce, out); /* #1: key 0, counter 0 */
  assert_memory_equal(out, want[0], 64);
  bbvfl_chacha20_block(key, 1, nonce, out); /* #2: key 0, counter 1 */
  assert_memory_equal(out, want[1], 64);
  key[7] = 0x01000000u;                     /* #3: key byte 31 = 1, counter 1 */
  bbvfl_chacha20_block(key, 1, nonce, out);
  assert_memory_equal(out, want[2], 64);
  /* #1 then #2 are one key stream: the generator keyed with zeros gives both in a row */
  bbvfl_rng r;
  memset(&r, 0, sizeof r);
  r.pos = 16;
  uint8_t two[128];
  bbvfl_rng_bytes(&r, two, sizeof two);
  assert_memory_equal(two, want[0], 64);
  assert_memory_equal(two + 64, want[1], 64);
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

/* bbvfl_rng_u64_fill is n successive bbvfl_rng_u64 calls: the same values and the same state
   after (what a checkpoint stores), from any position in a block, across the counter's wrap. */
static void test_fill(void **st) {
  (void)st;
  static uint64_t got[3000], want[3000];
  const size_t ns[7] = {0, 1, 7, 8, 9, 64, 2999};
  for (int start = 0; start < 17; start += 3)
    for (int wrap = 0; wrap <= 1; wrap++)
      for (int t = 0; t < 7; t++) {
        bbvfl_rng a, b;
        bbvfl_rng_init_seeded(&a, 9, bbvfl_rng_stream(BBVFL_STREAM_NOISE, (uint32_t)start));
        if (wrap) a.counter = UINT32_MAX - 3; /* the nonce moves on within the fill */
        for (int i = 0; i < start; i++) (void)bbvfl_rng_u32(&a);
        b = a;
        bbvfl_rng_u64_fill(&a, got, ns[t]);
        for (size_t i = 0; i < ns[t]; i++) want[i] = bbvfl_rng_u64(&b);
        assert_memory_equal(got, want, ns[t] * sizeof *got);
        assert_memory_equal(&a, &b, sizeof a);
        assert_int_equal(bbvfl_rng_u64(&a), bbvfl_rng_u64(&b));
      }
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
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_rfc8439_block), cmocka_unit_test(test_rfc8439_encryption),
                                     cmocka_unit_test(test_rfc8439_appendix_a1), cmocka_unit_test(test_streams),
                                     cmocka_unit_test(test_fill), cmocka_unit_test(test_binomial_moments)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
