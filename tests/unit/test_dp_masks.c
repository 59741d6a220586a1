/* Masked-mode pairwise masks: ECDH symmetry, exact cancellation over random participant sets
 * (incl. after a dropout), masked vectors never equal to q and fresh per round and per set, a
 * fixed vector computed independently (tests/unit/masks_vector.py: pure-Python secp256k1,
 * Keccak-256 and ChaCha20), and clear errors on bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <stdlib.h>
#include <string.h>

#include "dp/masks.h"
#include "dp/rng.h"
#include "eth/hex.h"
#include "eth/wallet.h"

enum { MAXM = 8, NC = 40 };

static const uint8_t CONTRACT[20] = {0x5f, 0xbd, 0xb2, 0x31, 0x56, 0x78, 0xaf, 0xec, 0xb3, 0x67,
                                     0xf0, 0x32, 0xd9, 0x3f, 0x64, 0x2f, 0x64, 0x18, 0x0a, 0xa3};

/* Keys 0x0101..01, 0x0202..02, ... as in masks_vector.py. */
static void keys(bbvfl_key *k, uint8_t (*pubs)[64], unsigned m) {
  for (unsigned i = 0; i < m; i++) {
    uint8_t priv[32];
    memset(priv, (int)(i + 1), sizeof priv);
    assert_int_equal(bbvfl_key_from_bytes(priv, &k[i], NULL), 0);
    memcpy(pubs[i], k[i].pub, 64);
  }
}

static void maskers(bbvfl_masker *mk, unsigned m) {
  bbvfl_key k[MAXM];
  uint8_t pubs[MAXM][64];
  uint8_t sess[32];
  keys(k, pubs, m);
  bbvfl_mask_session_id(31337, CONTRACT, sess);
  for (unsigned i = 0; i < m; i++) {
    bbvfl_err err;
    int rc = bbvfl_masker_init(&mk[i], &k[i], i, m, (const uint8_t(*)[64])pubs, sess, &err);
    if (rc) fail_msg("masker_init: %s", err.msg);
    bbvfl_key_wipe(&k[i]);
  }
}

static void test_ecdh_symmetry(void **st) {
  (void)st;
  bbvfl_key k[3];
  uint8_t pubs[3][64];
  keys(k, pubs, 3);
  uint8_t ab[33], ba[33], ac[33], sess[32], pab[32], pba[32], pac[32];
  assert_int_equal(bbvfl_mask_ecdh(k[0].priv, pubs[1], ab, NULL), 0);
  assert_int_equal(bbvfl_mask_ecdh(k[1].priv, pubs[0], ba, NULL), 0);
  assert_int_equal(bbvfl_mask_ecdh(k[0].priv, pubs[2], ac, NULL), 0);
  assert_memory_equal(ab, ba, 33);
  assert_memory_not_equal(ab, ac, 33);
  assert_true(ab[0] == 0x02 || ab[0] == 0x03);
  bbvfl_mask_session_id(31337, CONTRACT, sess);
  assert_int_equal(bbvfl_mask_pair_key(k[0].priv, pubs[1], sess, pab, NULL), 0);
  assert_int_equal(bbvfl_mask_pair_key(k[1].priv, pubs[0], sess, pba, NULL), 0);
  assert_int_equal(bbvfl_mask_pair_key(k[0].priv, pubs[2], sess, pac, NULL), 0);
  assert_memory_equal(pab, pba, 32);
  assert_memory_not_equal(pab, pac, 32);
  /* another contract or chain: another pair key */
  uint8_t sess2[32], p2[32];
  bbvfl_mask_session_id(1, CONTRACT, sess2);
  assert_memory_not_equal(sess, sess2, 32);
  assert_int_equal(bbvfl_mask_pair_key(k[0].priv, pubs[1], sess2, p2, NULL), 0);
  assert_memory_not_equal(pab, p2, 32);
  for (int i = 0; i < 3; i++) bbvfl_key_wipe(&k[i]);
}

/* Lane sum of the masked vectors of every member of `set` equals the sum of their q. */
static void check_cancel(const bbvfl_masker *mk, unsigned m, uint64_t round, uint64_t set, unsigned levels,
                         bbvfl_rng *r) {
  static uint8_t q[MAXM][NC], y[MAXM][2 * NC];
  const uint8_t *subs[MAXM];
  unsigned cnt = 0;
  uint32_t want[NC] = {0};
  for (unsigned i = 0; i < m; i++) {
    if (!(set >> i & 1)) continue;
    for (unsigned j = 0; j < NC; j++) {
      q[i][j] = (uint8_t)bbvfl_rng_below(r, levels + 1);
      want[j] += q[i][j];
    }
    bbvfl_err err;
    if (bbvfl_masker_mask_u8(&mk[i], round, set, levels, q[i], NC, y[i], &err)) fail_msg("mask: %s", err.msg);
    if (set != (1ull << i)) {
      /* with at least one peer the submission differs from q */
      int same = 1;
      for (unsigned j = 0; j < NC; j++)
        if ((unsigned)(y[i][2 * j] << 8 | y[i][2 * j + 1]) != q[i][j]) same = 0;
      assert_false(same);
    }
    subs[cnt++] = y[i];
  }
  uint16_t sum[NC];
  bbvfl_mask_lane_sum(subs, cnt, NC, sum);
  for (unsigned j = 0; j < NC; j++) assert_int_equal(sum[j], want[j]);
}

static void test_cancel_random_sets(void **st) {
  (void)st;
  static bbvfl_masker mk[MAXM];
  maskers(mk, MAXM);
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 11, bbvfl_rng_stream(BBVFL_STREAM_TEST, 1));
  for (int t = 0; t < 60; t++) {
    uint64_t set = 0;
    while (!set) set = bbvfl_rng_below(&r, 1u << MAXM);
    unsigned levels = 1 + (unsigned)bbvfl_rng_below(&r, 255);
    check_cancel(mk, MAXM, (uint64_t)t, set, levels, &r);
    /* the same round re-run without one member (dropout): still exact */
    for (unsigned i = 0; i < MAXM; i++) {
      if ((set >> i & 1) && (set & ~(1ull << i))) {
        check_cancel(mk, MAXM, (uint64_t)t, set & ~(1ull << i), levels, &r);
        break;
      }
    }
  }
  /* the largest b allowed with 8 clients: 8 * 8191 < 65536 */
  static uint16_t q16[MAXM][NC];
  static uint8_t y[MAXM][2 * NC];
  const uint8_t *subs[MAXM];
  uint32_t want[NC] = {0};
  for (unsigned i = 0; i < MAXM; i++) {
    for (unsigned j = 0; j < NC; j++) want[j] += q16[i][j] = (uint16_t)(8191 - (i * 37 + j) % 100);
    assert_int_equal(bbvfl_masker_mask_u16(&mk[i], 3, 0xff, 8191, q16[i], NC, y[i], NULL), 0);
    subs[i] = y[i];
  }
  uint16_t sum[NC];
  bbvfl_mask_lane_sum(subs, MAXM, NC, sum);
  for (unsigned j = 0; j < NC; j++) assert_int_equal(sum[j], want[j]);
  for (unsigned i = 0; i < MAXM; i++) bbvfl_masker_wipe(&mk[i]);
}

/* Masks change with the round and with the participant set; masked lanes look uniform. */
static void test_fresh_and_uniform(void **st) {
  (void)st;
  bbvfl_masker mk[3];
  maskers(mk, 3);
  uint8_t q[NC] = {0};
  uint8_t a[2 * NC], b[2 * NC], c[2 * NC], d[2 * NC];
  assert_int_equal(bbvfl_masker_mask_u8(&mk[0], 5, 7, 16, q, NC, a, NULL), 0);
  assert_int_equal(bbvfl_masker_mask_u8(&mk[0], 5, 7, 16, q, NC, b, NULL), 0);
  assert_memory_equal(a, b, sizeof a); /* deterministic */
  assert_int_equal(bbvfl_masker_mask_u8(&mk[0], 6, 7, 16, q, NC, c, NULL), 0);
  assert_int_equal(bbvfl_masker_mask_u8(&mk[0], 5, 3, 16, q, NC, d, NULL), 0);
  for (unsigned j = 0; j < NC; j++) {
    /* per coordinate: a different round or set gives a different mask (2^-16 chance each) */
    assert_true(a[2 * j] != c[2 * j] || a[2 * j + 1] != c[2 * j + 1]);
    assert_true(a[2 * j] != d[2 * j] || a[2 * j + 1] != d[2 * j + 1]);
  }
  /* uniformity: 4096 masked lanes of a zero vector, 16 buckets of the top 4 bits, chi-square
   * with 15 degrees of freedom below 37.7 (p = 0.001) */
  enum { LONG = 4096 };
  static uint8_t zq[LONG], y[2 * LONG];
  assert_int_equal(bbvfl_masker_mask_u8(&mk[1], 9, 7, 16, zq, LONG, y, NULL), 0);
  unsigned hist[16] = {0};
  for (unsigned j = 0; j < LONG; j++) hist[y[2 * j] >> 4]++;
  double chi = 0, e = LONG / 16.0;
  for (int k = 0; k < 16; k++) chi += (hist[k] - e) * (hist[k] - e) / e;
  assert_true(chi < 37.7);
  for (int i = 0; i < 3; i++) bbvfl_masker_wipe(&mk[i]);
}

static void expect_hex(const uint8_t *got, size_t n, const char *hex) {
  uint8_t want[128];
  assert_true(n <= sizeof want);
  assert_int_equal(bbvfl_hex_decode_fixed(hex, want, n, NULL), 0);
  assert_memory_equal(got, want, n);
}

/* Values printed by tests/unit/masks_vector.py (independent pure-Python implementation). */
static void test_fixed_vector(void **st) {
  (void)st;
  bbvfl_key k[3];
  uint8_t pubs[3][64], sess[32], shared[33], pk[32];
  keys(k, pubs, 3);
  bbvfl_mask_session_id(31337, CONTRACT, sess);
  expect_hex(sess, 32, "257d13f81a7ff24b10bceaa5fd983cc21fe4bd21b2d7472c3a0dc1355e380c99");
  assert_int_equal(bbvfl_mask_ecdh(k[0].priv, pubs[1], shared, NULL), 0);
  expect_hex(shared, 33, "03d0158a38faf6118af133af12d9bfa388eab4a08d1a2088ea6e6ec1269e03567f");
  assert_int_equal(bbvfl_mask_pair_key(k[0].priv, pubs[1], sess, pk, NULL), 0);
  expect_hex(pk, 32, "65a9e6c13ce817631d6ce2f9130d86ac3fd463b9230dfac1c10f7037e30783af");
  static const uint16_t u01[NC] = {
      0xd58a, 0x2b3a, 0xa8bb, 0x8997, 0x6348, 0x12cf, 0x1289, 0xa87a, 0xe65a, 0x3355,
      0x58bc, 0xc3c2, 0x25fa, 0x20ab, 0x98b1, 0xa4e5, 0x9504, 0xd2c1, 0xad24, 0x5f6f,
      0x5c6b, 0x8a54, 0x5eeb, 0x88d9, 0xb0d4, 0x0ab8, 0xa1a6, 0x937a, 0x8ccf, 0x2910,
      0x341b, 0xb129, 0x0377, 0x70af, 0xea48, 0xa0c8, 0x9e0c, 0x2b27, 0x967f, 0x07fc};
  uint16_t u[NC];
  assert_int_equal(bbvfl_mask_expand(pk, 0, 1, 7, 7, u, NC, NULL), 0);
  assert_memory_equal(u, u01, sizeof u);
  bbvfl_masker mk;
  assert_int_equal(bbvfl_masker_init(&mk, &k[0], 0, 3, (const uint8_t(*)[64])pubs, sess, NULL), 0);
  uint8_t q[NC], y[2 * NC];
  for (unsigned j = 0; j < NC; j++) q[j] = (uint8_t)(j % 17);
  assert_int_equal(bbvfl_masker_mask_u8(&mk, 7, 7, 16, q, NC, y, NULL), 0);
  expect_hex(y, 80,
             "9ea88be69cbe2ad7114e51f5d262aa42d12795cbc114f49f9ace068f5e3cdbea6129127cfb5af289b8383f9d"
             "28a392ceb7e9b524de868e2c72bc5243135f71fed31d465094cb99625f680310ab680520");
  bbvfl_masker_wipe(&mk);
  for (int i = 0; i < 3; i++) bbvfl_key_wipe(&k[i]);
}

static void expect_err(int rc, const bbvfl_err *err, bbvfl_errcode code, const char *needle) {
  assert_int_equal(rc, -1);
  assert_int_equal(err->code, code);
  if (!strstr(err->msg, needle)) fail_msg("error '%s' does not mention '%s'", err->msg, needle);
}

static void test_bad_inputs(void **st) {
  (void)st;
  bbvfl_key k[3];
  uint8_t pubs[3][64], sess[32], shared[33];
  keys(k, pubs, 3);
  bbvfl_mask_session_id(31337, CONTRACT, sess);
  bbvfl_err err;
  /* a peer key off the curve: flip one bit of Y */
  uint8_t bad[3][64];
  memcpy(bad, pubs, sizeof bad);
  bad[2][63] ^= 1;
  expect_err(bbvfl_mask_ecdh(k[0].priv, bad[2], shared, &err), &err, BBVFL_E_CRYPTO, "not a point on secp256k1");
  bbvfl_masker mk;
  expect_err(bbvfl_masker_init(&mk, &k[0], 0, 3, (const uint8_t(*)[64])bad, sess, &err), &err, BBVFL_E_CRYPTO,
             "client 2");
  /* own index not matching the registered key, own index out of range */
  expect_err(bbvfl_masker_init(&mk, &k[0], 1, 3, (const uint8_t(*)[64])pubs, sess, &err), &err, BBVFL_E_ARG,
             "not this client's key");
  expect_err(bbvfl_masker_init(&mk, &k[0], 3, 3, (const uint8_t(*)[64])pubs, sess, &err), &err, BBVFL_E_ARG,
             "not among");
  assert_int_equal(bbvfl_masker_init(&mk, &k[0], 0, 3, (const uint8_t(*)[64])pubs, sess, &err), 0);
  uint8_t q[4] = {1, 2, 3, 4}, y[8];
  uint16_t q16[4] = {1, 2, 3, 4};
  /* own index not in the participant set; set naming an unregistered index */
  expect_err(bbvfl_masker_mask_u8(&mk, 0, 6, 16, q, 4, y, &err), &err, BBVFL_E_ARG, "not in the participant set");
  expect_err(bbvfl_masker_mask_u8(&mk, 0, 9, 16, q, 4, y, &err), &err, BBVFL_E_ARG, "registered clients");
  /* M*b too large: 3 * 21846 = 65538 */
  expect_err(bbvfl_masker_mask_u16(&mk, 0, 7, 21846, q16, 4, y, &err), &err, BBVFL_E_ARG, "M*b < 65536");
  assert_int_equal(bbvfl_masker_mask_u16(&mk, 0, 7, 21845, q16, 4, y, &err), 0);
  /* a value above b; round beyond 32 bits */
  expect_err(bbvfl_masker_mask_u8(&mk, 0, 7, 3, q, 4, y, &err), &err, BBVFL_E_ARG, "above b");
  expect_err(bbvfl_masker_mask_u8(&mk, 1ull << 32, 7, 16, q, 4, y, &err), &err, BBVFL_E_ARG, "32 bits");
  uint16_t u[4];
  expect_err(bbvfl_mask_expand(mk.pair[1], 1, 1, 0, 7, u, 4, &err), &err, BBVFL_E_ARG, "must differ");
  bbvfl_masker_wipe(&mk);
  for (int i = 0; i < 3; i++) bbvfl_key_wipe(&k[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ecdh_symmetry),    cmocka_unit_test(test_cancel_random_sets),
      cmocka_unit_test(test_fresh_and_uniform), cmocka_unit_test(test_fixed_vector),
      cmocka_unit_test(test_bad_inputs),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
