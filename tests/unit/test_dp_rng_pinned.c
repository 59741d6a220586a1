/* Today's outputs of the seeded generator, the block function and the mask expansion, pinned.
 *
 * Provenance: every constant below was printed by the hand-written ChaCha20 of client/dp/rng.c as it
 * stood at commit 08a37ea (before the block function moved to libsodium), and the streams, the
 * counter wrap and the mask bytes were recomputed by the independent pure-Python ChaCha20 of
 * tests/unit/masks_vector.py, which agreed. They pin what a seeded run depends on: the bytes of
 * each (seed, stream) generator, the word order of u32/u64/bytes, what uniform, below, normal and
 * binomial make of them, the step to a fresh nonce after block 2^32-1, and the masked-mode key
 * streams. A change here changes every seeded run (--seed) and every mask: it must be deliberate.
 * The RFC 8439 vectors themselves are in test_dp_rng.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/masks.h"
#include "dp/rng.h"
#include "eth/keccak.h"

/* Compares n bytes with a lower-case hex string of 2n digits. */
static void assert_hex(const uint8_t *got, size_t n, const char *want) {
  assert_int_equal(strlen(want), 2 * n);
  char buf[2 * 256 + 1];
  for (size_t off = 0; off < n; off += 256) {
    size_t m = n - off < 256 ? n - off : 256;
    for (size_t i = 0; i < m; i++) snprintf(buf + 2 * i, 3, "%02x", got[off + i]);
    assert_memory_equal(buf, want + 2 * off, 2 * m);
  }
}

#define STREAM_BYTES 65536

/* (seed, purpose, index) -> the first 128 bytes and keccak256 of the first 64 KiB (1024 blocks). */
static const struct {
  uint64_t seed;
  uint32_t purpose, index;
  const char *first128, *keccak64k;
} STREAMS[] = {
    {3, BBVFL_STREAM_NOISE, 0,
     "9a822b9dd92e85a35181ac3808b611329e0119c11efb0531d517229618ec65ea"
     "5377cb60161bdd53d0035c43835b57b6207d84f9f2ea291eee87e2e67e643126"
     "31b5e41dc84f78bd57b3c22e00ce7cb7fb3a51a1ca6133407bca6a5eb5114fa7"
     "e2ae5421dcbccaa39c5ca59f2160f3f7ce47acba6df0aa832277f043f99712ca",
     "bcaf163a45e4f725d4aa8b9ce4a0a13719da5096285df9c72bafed10dad9d409"},
    {3, BBVFL_STREAM_NOISE, 4,
     "e133f7f408e98ad2ec416cb41ecb59719858e31ca3110737c1486614d12ffc3a"
     "5ec48d68ed3303d621ebeb548228e26f17c685d56cbfc171eafbc63b6406be3e"
     "db2020e9d496f55e7e802147cc7971e59e186c09b6b9a70811ff904cec7d4d8b"
     "facb7ad7d0f3cc3b84162675fcfb937c24109bdb0c2584635be99891c314ca30",
     "2278a1c3d0b33f7c6d7693dfd791bc72f715f60a1560d2085761ccdadac3b747"},
    {3, BBVFL_STREAM_SPLIT, 0,
     "9367899b4d7db7a4ace3e9971f19e22224fdd97edeef87b1050622f3198b5cbe"
     "7c38f3f170fe16dbcfc27344c6fdc3a865b15c88e8552266c7296a1a9f1988eb"
     "d83fc942be808cb5393a5541d31a80a70b83a10d21fb674d6e52867d989ece5d"
     "92e21eb097ce88e3760374504f98e592ce07e6bf917e354ed3eeecc2bb5fa0bc",
     "d7c92447d605ff4c9b001605b5062ca2021c06a156d62ebc72e077df41c0d4bb"},
    {0x0123456789abcdefull, BBVFL_STREAM_DPSGD, 63,
     "ee5f475798a399c33c642ad57f1150fcef36e5f3e7be08f2f34cca0aa422a53b"
     "f216490e3bed95a9ce042b54a34a249f219d18b1915d70f96da0b080458221c0"
     "c74fc0cb1572c893cd37afc5168a6dbdfdd07b6c4b80bc68bd67df81bac580a2"
     "e60f0d75f3e3c8dc9d11f845b1f61a4a03c97391140163e5a3aaf7728569e5ac",
     "39a01df4dde955228f4dd43d50066dbfbf926424447e31a1f1e59dc6c7cde6d1"},
};

static void test_seeded_streams(void **st) {
  (void)st;
  uint8_t *buf = malloc(STREAM_BYTES);
  assert_non_null(buf);
  for (size_t k = 0; k < sizeof STREAMS / sizeof STREAMS[0]; k++) {
    bbvfl_rng r;
    bbvfl_rng_init_seeded(&r, STREAMS[k].seed, bbvfl_rng_stream(STREAMS[k].purpose, STREAMS[k].index));
    bbvfl_rng_bytes(&r, buf, STREAM_BYTES);
    assert_hex(buf, 128, STREAMS[k].first128);
    uint8_t h[32];
    bbvfl_keccak256(buf, STREAM_BYTES, h);
    assert_hex(h, 32, STREAMS[k].keccak64k);
    /* the same stream read word by word */
    bbvfl_rng_init_seeded(&r, STREAMS[k].seed, bbvfl_rng_stream(STREAMS[k].purpose, STREAMS[k].index));
    for (size_t i = 0; i < 64; i++) {
      uint32_t w = bbvfl_rng_u32(&r);
      uint32_t want = (uint32_t)buf[4 * i] | (uint32_t)buf[4 * i + 1] << 8 | (uint32_t)buf[4 * i + 2] << 16 |
                      (uint32_t)buf[4 * i + 3] << 24;
      assert_int_equal(w, want);
    }
    bbvfl_rng_wipe(&r);
  }
  free(buf);
}

/* Mixed calls on (seed 3, NOISE, 1): what each draw makes of the stream. */
static void test_draws(void **st) {
  (void)st;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 3, bbvfl_rng_stream(BBVFL_STREAM_NOISE, 1));
  assert_int_equal(bbvfl_rng_u32(&r), 0x3d021e10u);
  uint8_t b7[7];
  bbvfl_rng_bytes(&r, b7, sizeof b7);
  assert_hex(b7, sizeof b7, "cf523bab981a01");
  assert_true(bbvfl_rng_u64(&r) == 0xdaec6a74cdb51f67ull);
  assert_true(bbvfl_rng_uniform(&r) == 0x1.f84bf7b1d72aep-1);
  assert_true(bbvfl_rng_below(&r, 1000003) == 766562u);
  assert_true(fabs(bbvfl_rng_normal(&r) - -0x1.d639223f489acp-1) < 1e-14); /* libm's log and cos */
  static const unsigned binom[8] = {9, 12, 10, 11, 11, 11, 13, 12};
  for (int i = 0; i < 8; i++) assert_int_equal(bbvfl_rng_binomial(&r, 16, 0.7), binom[i]);
}

/* After block 2^32-1 the generator moves to nonce word 0 + 1 and counter 0. */
static void test_counter_wrap(void **st) {
  (void)st;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 3, 0);
  r.counter = 0xfffffffeu;
  uint8_t out[192];
  bbvfl_rng_bytes(&r, out, sizeof out);
  assert_hex(out, sizeof out,
             "883aad43153dd0201b125b79935a453c30b5fa803d210bf1493ad67cd69e4f76"
             "1e440882a5b9ad1b65440933c5e608812e156b686ae3e3bb07dcc573ae88da6e"
             "0423257e3ca729fe77a634eb08a442ae27caea7f309500de777c88ebb7602eda"
             "278754e9b1cacc7e95f65be497f58a35823cf030edbb6e004185d3a08f887f00"
             "94d1705fb1cab47f49475b16b55fd99916038b103ce98c0b936c5bc99bd44c81"
             "1c9663e1616f1425cefec41ad5ddc9bfa6d4f930898af51606c0fc6e9d0bdf25");
  assert_int_equal(r.counter, 1);
  assert_int_equal(r.nonce[0], 1);
  assert_int_equal(r.nonce[1], 0);
  assert_int_equal(r.nonce[2], 0);
  /* the third block is block 0 of nonce (1, 0, 0) */
  uint8_t blk[64];
  bbvfl_chacha20_block(r.key, 0, r.nonce, blk);
  assert_memory_equal(blk, out + 128, 64);
}

static void test_block_function(void **st) {
  (void)st;
  uint32_t key[8];
  const uint32_t nonce[3] = {0xdeadbeefu, 0x01234567u, 0x89abcdefu};
  for (int i = 0; i < 8; i++) key[i] = 0x9e3779b9u * (uint32_t)(i + 1);
  uint8_t out[64];
  bbvfl_chacha20_block(key, 0, nonce, out);
  assert_hex(out, 64,
             "208eec1dfb0ced8419cd8757ccda338bb938a462a56dded02d25f8fbf662852b"
             "8cf7e8e49f2b66d121a5aee95e0823427e892214edcf997d555694cc7612b2b6");
  bbvfl_chacha20_block(key, 0xffffffffu, nonce, out);
  assert_hex(out, 64,
             "5943990f67c6a9a46096c6042a2fe9636b894e4dbab68bed21bc1888c2a19427"
             "1b7018256629727025337b2ead6d23ced7029a09387ddc0497f20b783697fe7f");
}

/* Mask values as little-endian bytes (low half of each 32-bit key-stream word first). */
static void le16(const uint16_t *v, size_t n, uint8_t *out) {
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = (uint8_t)v[i];
    out[2 * i + 1] = (uint8_t)(v[i] >> 8);
  }
}

static void test_mask_expand(void **st) {
  (void)st;
  uint8_t pk[32];
  for (int i = 0; i < 32; i++) pk[i] = (uint8_t)(0xa0 + i);
  enum { N = 20000 };
  uint16_t *m = malloc(N * sizeof *m);
  uint8_t *bytes = malloc(2 * N);
  assert_non_null(m);
  assert_non_null(bytes);
  assert_int_equal(bbvfl_mask_expand(pk, 1, 3, 77, 0x1f, m, N, NULL), 0);
  le16(m, N, bytes);
  assert_hex(bytes, 64,
             "ce29483ea61ddd77faf52d4a863a5e93eceba22f1b0888c7c63d53fcb20ba9b7"
             "61f51047a34a96e50aec963bfd32f75004c3dc29d2a812702c6e9c3b4166731e");
  uint8_t h[32];
  bbvfl_keccak256(bytes, 2 * N, h);
  assert_hex(h, 32, "348c2223b518e2de61e0f99577a5c367c96a2915b7481b535605816373284457");
  /* the largest round and set: nonce words all ones */
  assert_int_equal(bbvfl_mask_expand(pk, 3, 1, 0xffffffffull, UINT64_MAX, m, 40, NULL), 0);
  le16(m, 40, bytes);
  assert_hex(bytes, 80,
             "d9534e6f1091662ea5f39472bef56b9928d500060b1afde158b8d3faf00e4dbe"
             "bf341efe583dee81bb953cc42d7b9c516eab0cbbb33e46236f7171634df51852"
             "9770658152cf3e042f259a2dc49291ac");
  free(bytes);
  free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_seeded_streams), cmocka_unit_test(test_draws),
                                     cmocka_unit_test(test_counter_wrap), cmocka_unit_test(test_block_function),
                                     cmocka_unit_test(test_mask_expand)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
