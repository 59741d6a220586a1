/* A cryptographic random generator: ChaCha20 (RFC 8439: 96-bit nonce, 32-bit block counter) in
 * counter mode. The block function and the OS randomness are libsodium's
 * (crypto_stream_chacha20_ietf_xor_ic, randombytes_buf); this file adds the keying, the stream ids
 * and the draws. Every output is byte-identical to the hand-written ChaCha20 this replaced
 * (tests/unit/test_dp_rng_pinned.c pins it; test_dp_rng.c checks the RFC's vectors).
 *
 * Two ways to key it: from the operating system (randombytes_buf: getrandom on Linux, for noise
 * nobody may predict), or from a 64-bit seed plus a 64-bit stream id (for repeatable runs: every
 * client derives its own streams from (seed, client index, purpose), never from a shared
 * sequential stream, so a run gives the same numbers whether the clients share a process or not).
 *
 * libsodium is initialised (sodium_init) lazily, by the first call here that needs it; a program
 * may also call sodium_init itself first: it is idempotent and thread-safe.
 *
 * The generator is caller-owned plain data (no allocation); copy it to save its state (party
 * checkpoints store it byte for byte: keep the layout). Not thread-safe: one generator per thread.
 * bbvfl_rng_wipe clears the key material. */
#ifndef BBVFL_DP_RNG_H
#define BBVFL_DP_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct {
  uint32_t key[8];
  uint32_t nonce[3];
  uint32_t counter;      /* next block counter */
  uint32_t block[16];    /* current key-stream block */
  unsigned pos;          /* next unused 32-bit word of block (16 = exhausted) */
} bbvfl_rng;

/* The RFC 8439 section 2.3 block function: out = ChaCha20(key, counter, nonce), 64 bytes. */
void bbvfl_chacha20_block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                          uint8_t out[64]);

/* Keys the generator from randombytes_buf (getrandom). 0, or -1 (BBVFL_E_CRYPTO) when libsodium
 * cannot be initialised. */
int bbvfl_rng_init_os(bbvfl_rng *r, bbvfl_err *err);
/* Keys the generator from (seed, stream): key = LE64(seed) || LE64(stream) || "bbvfl-rng-v1\0\0\0\0". */
void bbvfl_rng_init_seeded(bbvfl_rng *r, uint64_t seed, uint64_t stream);
/* Stream ids: purpose in the high 32 bits, client index (or 0) in the low 32. */
uint64_t bbvfl_rng_stream(uint32_t purpose, uint32_t index);
/* Keys the generator from a 32-byte secret and a stream id: key = BLAKE2b-256(LE64(stream) ||
 * "bbvfl-noise-v1", keyed by secret). A client's private noise key (state-dir/noise.key, drawn
 * from the OS once, mode 0600) gives streams only that client can regenerate: a restart redraws
 * the same randomized labels, DP scaling and DP-PCA instead of new ones (each new draw would
 * compose). 0, or -1 (BBVFL_E_CRYPTO) when libsodium cannot be initialised. */
int bbvfl_rng_init_keyed(bbvfl_rng *r, const uint8_t secret[32], uint64_t stream, bbvfl_err *err);
/* The private noise of one purpose: bbvfl_rng_init_seeded(r, seed, stream) when seeded (reproducible
 * noise: anyone holding the seed regenerates it, so no epsilon holds; --reproducible-noise only),
 * else bbvfl_rng_init_keyed(r, key, stream) when key (nullable, 32 bytes) is given, else
 * bbvfl_rng_init_os. 0, or -1 as bbvfl_rng_init_os. */
int bbvfl_rng_init_noise(bbvfl_rng *r, int seeded, uint64_t seed, const uint8_t *key, uint64_t stream, bbvfl_err *err);
enum { BBVFL_STREAM_SPLIT = 1, BBVFL_STREAM_INIT = 2, BBVFL_STREAM_NOISE = 3, BBVFL_STREAM_SCHEDULE = 4,
       BBVFL_STREAM_HEAD = 5, BBVFL_STREAM_TEST = 6, BBVFL_STREAM_LABELS = 7,
       BBVFL_STREAM_SCALE = 8, BBVFL_STREAM_DPSGD = 9, BBVFL_STREAM_DPPCA = 10 };

uint32_t bbvfl_rng_u32(bbvfl_rng *r);
uint64_t bbvfl_rng_u64(bbvfl_rng *r);
/* out[0..n-1] = n successive bbvfl_rng_u64(r) values, leaving r exactly as those calls would (the
 * same later outputs, the same bytes in a checkpoint); whole key-stream blocks are generated many
 * at a time. out is caller-owned: it holds noise, wipe it (bbvfl_secret_wipe) when done. */
void bbvfl_rng_u64_fill(bbvfl_rng *r, uint64_t *out, size_t n);
void bbvfl_rng_bytes(bbvfl_rng *r, void *out, size_t n);
/* Uniform in [0, 1) with 53 random bits. */
double bbvfl_rng_uniform(bbvfl_rng *r);
/* Uniform integer in [0, n), unbiased (rejection). n > 0. */
uint64_t bbvfl_rng_below(bbvfl_rng *r, uint64_t n);
/* Standard normal (Box-Muller, both values consumed one at a time is not cached: one call = one
 * pair of uniforms, so the stream position depends only on the number of calls). */
double bbvfl_rng_normal(bbvfl_rng *r);
/* Bernoulli threshold for probability p in [0, 1]: a u64 word w is a success when w < t, or
 * always when p >= 1 (returned as UINT64_MAX with *always = 1). */
uint64_t bbvfl_bernoulli_threshold(double p, int *always);
/* Binomial(n, p), exact: the sum of n Bernoulli draws, one 64-bit word each. p is clamped to
 * [0, 1]. */
unsigned bbvfl_rng_binomial(bbvfl_rng *r, unsigned n, double p);

void bbvfl_rng_wipe(bbvfl_rng *r);
/* n bytes from the OS (randombytes_buf): a private noise key. 0, or -1 as bbvfl_rng_init_os. */
int bbvfl_rng_secret(void *out, size_t n, bbvfl_err *err);
/* Clears n bytes in a way the compiler keeps. */
void bbvfl_secret_wipe(void *p, size_t n);

#endif
