#include "dp/rng.h"

#include <math.h>
#include <sodium.h>
#include <stdatomic.h>
#include <string.h>

/* libsodium is initialised once, on first use. sodium_init() is itself thread-safe and idempotent;
 * the flag only spares its lock on every block. The ChaCha20 functions work before sodium_init()
 * too (with the portable implementation: same bytes), so a failed init matters only to the OS
 * key (bbvfl_rng_init_os), which reports it. */
static atomic_int sodium_ready;

static int sodium_ensure(void) {
  if (atomic_load_explicit(&sodium_ready, memory_order_acquire)) return 0;
  if (sodium_init() < 0) return -1; /* 0: initialised now, 1: already was */
  atomic_store_explicit(&sodium_ready, 1, memory_order_release);
  return 0;
}

static void put_le32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One block of the RFC 8439 key stream: libsodium's IETF ChaCha20 (96-bit nonce, 32-bit block
 * counter) over 64 zero bytes, starting at block `counter`. */
void bbvfl_chacha20_block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                          uint8_t out[64]) {
  uint8_t k[crypto_stream_chacha20_ietf_KEYBYTES], n[crypto_stream_chacha20_ietf_NONCEBYTES];
  for (int i = 0; i < 8; i++) put_le32(k + 4 * i, key[i]);
  for (int i = 0; i < 3; i++) put_le32(n + 4 * i, nonce[i]);
  (void)sodium_ensure();
  memset(out, 0, 64);
  /* one block at any counter, 2^32-1 included, is within libsodium's limit (ic + blocks <= 2^32) */
  crypto_stream_chacha20_ietf_xor_ic(out, out, 64, n, counter, k);
  sodium_memzero(k, sizeof k);
}

static void init_key(bbvfl_rng *r, const uint8_t key[32]) {
  memset(r, 0, sizeof *r);
  for (int i = 0; i < 8; i++) r->key[i] = le32(key + 4 * i);
  r->pos = 16;
}

int bbvfl_rng_init_noise(bbvfl_rng *r, int seeded, uint64_t seed, const uint8_t *key, uint64_t stream, bbvfl_err *err) {
  if (seeded) {
    bbvfl_rng_init_seeded(r, seed, stream);
    return 0;
  }
  if (key) return bbvfl_rng_init_keyed(r, key, stream, err);
  return bbvfl_rng_init_os(r, err);
}

int bbvfl_rng_init_keyed(bbvfl_rng *r, const uint8_t secret[32], uint64_t stream, bbvfl_err *err) {
  if (sodium_ensure() != 0)
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "libsodium could not be initialised (sodium_init failed)");
  uint8_t msg[8 + 14], key[32];
  for (int i = 0; i < 8; i++) msg[i] = (uint8_t)(stream >> (8 * i));
  memcpy(msg + 8, "bbvfl-noise-v1", 14);
  if (crypto_generichash(key, sizeof key, msg, sizeof msg, secret, 32) != 0)
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "BLAKE2b failed");
  init_key(r, key);
  sodium_memzero(key, sizeof key);
  return 0;
}

int bbvfl_rng_init_os(bbvfl_rng *r, bbvfl_err *err) {
  if (sodium_ensure() != 0)
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "libsodium could not be initialised (sodium_init failed)");
  uint8_t key[32];
  randombytes_buf(key, sizeof key); /* getrandom() on Linux; aborts rather than return weak bytes */
  init_key(r, key);
  sodium_memzero(key, sizeof key);
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
    /* the 64 key-stream bytes straight into block, then read in place as little-endian words (no
     * copy of the noise left on the stack; on a little-endian host the loop is a no-op) */
    uint8_t *b = (uint8_t *)r->block;
    bbvfl_chacha20_block(r->key, r->counter, r->nonce, b);
    for (int i = 0; i < 16; i++) r->block[i] = le32(b + 4 * i);
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

void bbvfl_rng_u64_fill(bbvfl_rng *r, uint64_t *out, size_t n) {
  /* the rest of the current block one word at a time (a u64 may straddle two blocks) */
  while (n > 0 && r->pos < 16) {
    *out++ = bbvfl_rng_u64(r);
    n--;
  }
  /* whole blocks (8 values each) straight into out, at most up to the counter's wrap (libsodium's
     limit: counter + blocks <= 2^32; the nonce moves on there as in bbvfl_rng_u32) */
  size_t nb = n / 8;
  if (nb > 0) {
    uint8_t k[crypto_stream_chacha20_ietf_KEYBYTES], nn[crypto_stream_chacha20_ietf_NONCEBYTES];
    for (int i = 0; i < 8; i++) put_le32(k + 4 * i, r->key[i]);
    (void)sodium_ensure();
    uint8_t *bytes = (uint8_t *)out;
    size_t done = 0;
    while (done < nb) {
      uint64_t room = (uint64_t)UINT32_MAX + 1 - r->counter;
      size_t take = nb - done < room ? nb - done : (size_t)room;
      for (int i = 0; i < 3; i++) put_le32(nn + 4 * i, r->nonce[i]);
      memset(bytes + 64 * done, 0, 64 * take);
      crypto_stream_chacha20_ietf_xor_ic(bytes + 64 * done, bytes + 64 * done, 64 * take, nn, r->counter, k);
      r->counter += (uint32_t)take;
      if (r->counter == 0) r->nonce[0]++;
      done += take;
    }
    sodium_memzero(k, sizeof k);
    /* the key-stream bytes as the u64 values bbvfl_rng_u64 makes of them (two little-endian words,
       the first low), in place; the last block stays in r, used up, as after the single calls */
    for (size_t i = 0; i < 8 * nb; i++) {
      const uint8_t *b = bytes + 8 * i;
      out[i] = (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32;
    }
    for (int i = 0; i < 8; i++) {
      uint64_t v = out[8 * nb - 8 + (size_t)i];
      r->block[2 * i] = (uint32_t)v;
      r->block[2 * i + 1] = (uint32_t)(v >> 32);
    }
    r->pos = 16;
    out += 8 * nb;
    n -= 8 * nb;
  }
  for (size_t i = 0; i < n; i++) out[i] = bbvfl_rng_u64(r);
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

int bbvfl_rng_secret(void *out, size_t n, bbvfl_err *err) {
  if (sodium_ensure() != 0)
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "libsodium could not be initialised (sodium_init failed)");
  randombytes_buf(out, n);
  return 0;
}

void bbvfl_secret_wipe(void *p, size_t n) { sodium_memzero(p, n); }

void bbvfl_rng_wipe(bbvfl_rng *r) {
  volatile uint8_t *p = (volatile uint8_t *)r;
  for (size_t i = 0; i < sizeof *r; i++) p[i] = 0;
}
