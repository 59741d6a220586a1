#include "dp/rng.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/random.h>

#define ROTL(v, c) (((v) << (c)) | ((v) >> (32 - (c))))
#define QR(a, b, c, d)                                                                             \
  do {                                                                                             \
    a += b; d ^= a; d = ROTL(d, 16);                                                               \
    c += d; b ^= c; b = ROTL(b, 12);                                                               \
    a += b; d ^= a; d = ROTL(d, 8);                                                                \
    c += d; b ^= c; b = ROTL(b, 7);                                                                \
  } while (0)

static void chacha_words(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                         uint32_t out[16]) {
  uint32_t s[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
  for (int i = 0; i < 8; i++) s[4 + i] = key[i];
  s[12] = counter;
  s[13] = nonce[0];
  s[14] = nonce[1];
  s[15] = nonce[2];
  uint32_t x[16];
  memcpy(x, s, sizeof x);
  for (int i = 0; i < 10; i++) {
    QR(x[0], x[4], x[8], x[12]);
    QR(x[1], x[5], x[9], x[13]);
    QR(x[2], x[6], x[10], x[14]);
    QR(x[3], x[7], x[11], x[15]);
    QR(x[0], x[5], x[10], x[15]);
    QR(x[1], x[6], x[11], x[12]);
    QR(x[2], x[7], x[8], x[13]);
    QR(x[3], x[4], x[9], x[14]);
  }
  for (int i = 0; i < 16; i++) out[i] = x[i] + s[i];
}

void bbvfl_chacha20_block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                          uint8_t out[64]) {
  uint32_t w[16];
  chacha_words(key, counter, nonce, w);
  for (int i = 0; i < 16; i++) {
    out[4 * i] = (uint8_t)w[i];
    out[4 * i + 1] = (uint8_t)(w[i] >> 8);
    out[4 * i + 2] = (uint8_t)(w[i] >> 16);
    out[4 * i + 3] = (uint8_t)(w[i] >> 24);
  }
}

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void init_key(bbvfl_rng *r, const uint8_t key[32]) {
  memset(r, 0, sizeof *r);
  for (int i = 0; i < 8; i++) r->key[i] = le32(key + 4 * i);
  r->pos = 16;
}

int bbvfl_rng_init_noise(bbvfl_rng *r, int seeded, uint64_t seed, uint64_t stream, bbvfl_err *err) {
  if (!seeded) return bbvfl_rng_init_os(r, err);
  bbvfl_rng_init_seeded(r, seed, stream);
  return 0;
}

int bbvfl_rng_init_os(bbvfl_rng *r, bbvfl_err *err) {
  uint8_t key[32];
  size_t got = 0;
  while (got < sizeof key) {
    ssize_t n = getrandom(key + got, sizeof key - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return bbvfl_fail(err, BBVFL_E_CRYPTO, "getrandom failed: %s", strerror(errno));
    }
    got += (size_t)n;
  }
  init_key(r, key);
  memset(key, 0, sizeof key);
  return 0;
}

void bbvfl_rng_init_seeded(bbvfl_rng *r, uint64_t seed, uint64_t stream) {
  uint8_t key[32] = {0};
  for (int i = 0; i < 8; i++) {
    key[i] = (uint8_t)(seed >> (8 * i));
    key[8 + i] = (uint8_t)(stream >> (8 * i));
  }
  memcpy(key + 16, "bbvfl-rng-v1", 12);
  init_key(r, key);
}

uint64_t bbvfl_rng_stream(uint32_t purpose, uint32_t index) {
  return (uint64_t)purpose << 32 | index;
}

uint32_t bbvfl_rng_u32(bbvfl_rng *r) {
  if (r->pos >= 16) {
    chacha_words(r->key, r->counter, r->nonce, r->block);
    r->counter++;
    if (r->counter == 0) r->nonce[0]++; /* 2^32 blocks used: move to a fresh nonce */
    r->pos = 0;
  }
  return r->block[r->pos++];
}

uint64_t bbvfl_rng_u64(bbvfl_rng *r) {
  uint64_t lo = bbvfl_rng_u32(r);
  return lo | (uint64_t)bbvfl_rng_u32(r) << 32;
}

void bbvfl_rng_bytes(bbvfl_rng *r, void *out, size_t n) {
  uint8_t *o = out;
  while (n > 0) {
    uint32_t w = bbvfl_rng_u32(r);
    for (int i = 0; i < 4 && n > 0; i++, n--) *o++ = (uint8_t)(w >> (8 * i));
  }
}

double bbvfl_rng_uniform(bbvfl_rng *r) { return (double)(bbvfl_rng_u64(r) >> 11) * 0x1.0p-53; }

uint64_t bbvfl_rng_below(bbvfl_rng *r, uint64_t n) {
  uint64_t lim = UINT64_MAX - UINT64_MAX % n; /* accept w < lim */
  for (;;) {
    uint64_t w = bbvfl_rng_u64(r);
    if (w < lim || lim == 0) return w % n;
  }
}

double bbvfl_rng_normal(bbvfl_rng *r) {
  double u1 = bbvfl_rng_uniform(r), u2 = bbvfl_rng_uniform(r);
  return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

uint64_t bbvfl_bernoulli_threshold(double p, int *always) {
  *always = 0;
  if (!(p > 0)) return 0;
  if (p >= 1) {
    *always = 1;
    return UINT64_MAX;
  }
  double t = ldexp(p, 64);
  if (t >= 18446744073709551615.0) {
    *always = 1;
    return UINT64_MAX;
  }
  return (uint64_t)t;
}

unsigned bbvfl_rng_binomial(bbvfl_rng *r, unsigned n, double p) {
  int always;
  uint64_t t = bbvfl_bernoulli_threshold(p, &always);
  if (always) return n;
  if (t == 0) return 0;
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) k += bbvfl_rng_u64(r) < t;
  return k;
}

void bbvfl_rng_wipe(bbvfl_rng *r) {
  volatile uint8_t *p = (volatile uint8_t *)r;
  for (size_t i = 0; i < sizeof *r; i++) p[i] = 0;
}
