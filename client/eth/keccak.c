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

/* One lane of rho and pi: B[y, 2x+3y] = rot(A[x, y] ^ D[x], r[x, y]) (theta's D folded in). Every
   index is a constant, so the lanes stay in registers and each rotation is an immediate. */
#define RHO_PI(x, y) b[(y) + 5 * ((2 * (x) + 3 * (y)) % 5)] = rotl64(a[(x) + 5 * (y)] ^ d[(x)], rot[(x) + 5 * (y)])
/* chi on row y */
#define CHI(y)                                                                                       \
  do {                                                                                               \
    a[5 * (y) + 0] = b[5 * (y) + 0] ^ (~b[5 * (y) + 1] & b[5 * (y) + 2]);                            \
    a[5 * (y) + 1] = b[5 * (y) + 1] ^ (~b[5 * (y) + 2] & b[5 * (y) + 3]);                            \
    a[5 * (y) + 2] = b[5 * (y) + 2] ^ (~b[5 * (y) + 3] & b[5 * (y) + 4]);                            \
    a[5 * (y) + 3] = b[5 * (y) + 3] ^ (~b[5 * (y) + 4] & b[5 * (y) + 0]);                            \
    a[5 * (y) + 4] = b[5 * (y) + 4] ^ (~b[5 * (y) + 0] & b[5 * (y) + 1]);                            \
  } while (0)

static void keccak_f1600(uint64_t a[25]) {
  for (int round = 0; round < 24; round++) {
    uint64_t b[25], c[5], d[5];
    /* theta */
    c[0] = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20];
    c[1] = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21];
    c[2] = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22];
    c[3] = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23];
    c[4] = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24];
    d[0] = c[4] ^ rotl64(c[1], 1);
    d[1] = c[0] ^ rotl64(c[2], 1);
    d[2] = c[1] ^ rotl64(c[3], 1);
    d[3] = c[2] ^ rotl64(c[4], 1);
    d[4] = c[3] ^ rotl64(c[0], 1);
    /* rho and pi */
    RHO_PI(0, 0);
    RHO_PI(0, 1);
    RHO_PI(0, 2);
    RHO_PI(0, 3);
    RHO_PI(0, 4);
    RHO_PI(1, 0);
    RHO_PI(1, 1);
    RHO_PI(1, 2);
    RHO_PI(1, 3);
    RHO_PI(1, 4);
    RHO_PI(2, 0);
    RHO_PI(2, 1);
    RHO_PI(2, 2);
    RHO_PI(2, 3);
    RHO_PI(2, 4);
    RHO_PI(3, 0);
    RHO_PI(3, 1);
    RHO_PI(3, 2);
    RHO_PI(3, 3);
    RHO_PI(3, 4);
    RHO_PI(4, 0);
    RHO_PI(4, 1);
    RHO_PI(4, 2);
    RHO_PI(4, 3);
    RHO_PI(4, 4);
    /* chi */
    CHI(0);
    CHI(1);
    CHI(2);
    CHI(3);
    CHI(4);
    /* iota */
    a[0] ^= round_consts[round];
  }
}

#undef RHO_PI
#undef CHI

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
