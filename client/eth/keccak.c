/* Keccak-f[1600] permutation and the Keccak-256 sponge (rate 1088 bits, capacity 512 bits),
 * written from the Keccak reference specification (Bertoni, Daemen, Peeters, Van Assche). */
#include "eth/keccak.h"

#include <string.h>

#define KECCAK_RATE 136

static const uint64_t round_consts[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};

/* Rotation offsets r[x + 5y]. */
static const unsigned rot[25] = {0,  1,  62, 28, 27, 36, 44, 6,  55, 20, 3,  10, 43,
                                 25, 39, 41, 45, 15, 21, 8,  18, 2,  61, 56, 14};

static inline uint64_t rotl64(uint64_t v, unsigned n) {
  return n ? (v << n) | (v >> (64 - n)) : v;
}

static void keccak_f1600(uint64_t a[25]) {
  uint64_t b[25], c[5], d[5];
  for (int round = 0; round < 24; round++) {
    /* theta */
    for (int x = 0; x < 5; x++) c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
    for (int x = 0; x < 5; x++) d[x] = c[(x + 4) % 5] ^ rotl64(c[(x + 1) % 5], 1);
    for (int i = 0; i < 25; i++) a[i] ^= d[i % 5];
    /* rho and pi: B[y, 2x+3y] = rot(A[x, y], r[x, y]) */
    for (int x = 0; x < 5; x++)
      for (int y = 0; y < 5; y++) b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl64(a[x + 5 * y], rot[x + 5 * y]);
    /* chi */
    for (int y = 0; y < 5; y++)
      for (int x = 0; x < 5; x++)
        a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
    /* iota */
    a[0] ^= round_consts[round];
  }
}

static uint64_t load_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static void absorb_block(uint64_t s[25], const uint8_t *block) {
  for (int i = 0; i < KECCAK_RATE / 8; i++) s[i] ^= load_le64(block + 8 * i);
  keccak_f1600(s);
}

void bbvfl_keccak_init(bbvfl_keccak_ctx *c) { memset(c, 0, sizeof *c); }

void bbvfl_keccak_update(bbvfl_keccak_ctx *c, const void *data, size_t len) {
  const uint8_t *p = data;
  if (len == 0) return;
  if (c->n) {
    size_t take = KECCAK_RATE - c->n;
    if (take > len) take = len;
    memcpy(c->buf + c->n, p, take);
    c->n += take;
    p += take;
    len -= take;
    if (c->n < KECCAK_RATE) return;
    absorb_block(c->s, c->buf);
    c->n = 0;
  }
  while (len >= KECCAK_RATE) {
    absorb_block(c->s, p);
    p += KECCAK_RATE;
    len -= KECCAK_RATE;
  }
  if (len) {
    memcpy(c->buf, p, len);
    c->n = len;
  }
}

void bbvfl_keccak_final(bbvfl_keccak_ctx *c, uint8_t out[32]) {
  memset(c->buf + c->n, 0, KECCAK_RATE - c->n);
  c->buf[c->n] ^= 0x01; /* original Keccak padding, not SHA3's 0x06 */
  c->buf[KECCAK_RATE - 1] ^= 0x80;
  absorb_block(c->s, c->buf);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 8; j++) out[8 * i + j] = (uint8_t)(c->s[i] >> (8 * j));
  memset(c, 0, sizeof *c);
}

void bbvfl_keccak256(const void *data, size_t len, uint8_t out[32]) {
  bbvfl_keccak_ctx c;
  bbvfl_keccak_init(&c);
  bbvfl_keccak_update(&c, data, len);
  bbvfl_keccak_final(&c, out);
}
