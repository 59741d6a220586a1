/* Pairwise masks for masked mode: see masks.h for the derivations and the threat model. */
#include "dp/masks.h"

#include <secp256k1.h>
#include <secp256k1_ecdh.h>
#include <string.h>

#include "dp/rng.h"
#include "eth/keccak.h"

static const char TAG_SESSION[] = "bbvfl/mask/session/v1";
static const char TAG_PAIR[] = "bbvfl/mask/pair/v1";
static const char TAG_DIR[] = "bbvfl/mask/dir/v1";

enum { MAX_COORDS = 1 << 20 };

static void wipe(void *p, size_t n) {
  volatile uint8_t *v = p;
  while (n--) *v++ = 0;
}

/* secp256k1_ecdh hash callback: hands out the compressed point itself. */
static int copy_compressed(unsigned char *out, const unsigned char *x32, const unsigned char *y32,
                           void *data) {
  (void)data;
  out[0] = (unsigned char)(0x02 | (y32[31] & 1));
  memcpy(out + 1, x32, 32);
  return 1;
}

int bbvfl_mask_ecdh(const uint8_t priv[32], const uint8_t peer_pub[64], uint8_t shared[33],
                    bbvfl_err *err) {
  const secp256k1_context *ctx = bbvfl_secp256k1_ctx();
  if (!ctx) return bbvfl_fail(err, BBVFL_E_CRYPTO, "ECDH: could not create the secp256k1 context");
  uint8_t enc[65];
  enc[0] = 0x04;
  memcpy(enc + 1, peer_pub, 64);
  secp256k1_pubkey pk;
  if (!secp256k1_ec_pubkey_parse(ctx, &pk, enc, sizeof enc))
    return bbvfl_fail(err, BBVFL_E_CRYPTO,
                      "ECDH: the peer public key is not a point on secp256k1 (check the registered key)");
  if (!secp256k1_ecdh(ctx, shared, &pk, priv, copy_compressed, NULL)) {
    wipe(shared, 33);
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "ECDH: the private key is not a valid secp256k1 scalar");
  }
  return 0;
}

/* out = keccak256(tag || a[0..na) || b[0..nb)): every derivation below, each with its own tag. */
static void tagged_hash(const char *tag, const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint8_t out[32]) {
  bbvfl_keccak_ctx c;
  bbvfl_keccak_init(&c);
  bbvfl_keccak_update(&c, tag, strlen(tag));
  bbvfl_keccak_update(&c, a, na);
  bbvfl_keccak_update(&c, b, nb);
  bbvfl_keccak_final(&c, out);
}

void bbvfl_mask_session_id(uint64_t chain_id, const uint8_t contract[20], uint8_t out[32]) {
  uint8_t id[8];
  for (int i = 0; i < 8; i++) id[i] = (uint8_t)(chain_id >> (56 - 8 * i));
  tagged_hash(TAG_SESSION, id, sizeof id, contract, 20, out);
}

int bbvfl_mask_pair_key(const uint8_t priv[32], const uint8_t peer_pub[64], const uint8_t session[32],
                        uint8_t key[32], bbvfl_err *err) {
  uint8_t shared[33];
  if (bbvfl_mask_ecdh(priv, peer_pub, shared, err) < 0) return -1;
  tagged_hash(TAG_PAIR, session, 32, shared, sizeof shared, key);
  wipe(shared, sizeof shared);
  return 0;
}

/* The ChaCha20 key of direction from->to, as 8 little-endian words. */
static void dir_key(const uint8_t pair_key[32], unsigned from, unsigned to, uint32_t key[8]) {
  uint8_t dk[32];
  uint8_t idx[2] = {(uint8_t)from, (uint8_t)to};
  tagged_hash(TAG_DIR, pair_key, 32, idx, sizeof idx, dk);
  for (int i = 0; i < 8; i++)
    key[i] = (uint32_t)dk[4 * i] | (uint32_t)dk[4 * i + 1] << 8 | (uint32_t)dk[4 * i + 2] << 16 |
             (uint32_t)dk[4 * i + 3] << 24;
  wipe(dk, sizeof dk);
}

/* Values j0 .. j0+len-1 of the stream (j0 a multiple of 32: 32 values per 64-byte block). */
static void stream(const uint32_t key[8], const uint32_t nonce[3], size_t j0, size_t len, uint16_t *out) {
  uint8_t block[64];
  for (size_t j = 0; j < len; j++) {
    size_t k = (j0 + j) % 32;
    if (j == 0 || k == 0) bbvfl_chacha20_block(key, (uint32_t)((j0 + j) / 32), nonce, block);
    out[j] = (uint16_t)(block[2 * k] | block[2 * k + 1] << 8);
  }
  wipe(block, sizeof block);
}

int bbvfl_mask_expand(const uint8_t pair_key[32], unsigned from, unsigned to, uint64_t round,
                      uint64_t set, uint16_t *out, size_t n, bbvfl_err *err) {
  if (from >= BBVFL_MASK_MAX_CLIENTS || to >= BBVFL_MASK_MAX_CLIENTS || from == to)
    return bbvfl_fail(err, BBVFL_E_ARG, "mask expansion: client indexes %u and %u must differ and be < %d",
                      from, to, BBVFL_MASK_MAX_CLIENTS);
  if (round > UINT32_MAX)
    return bbvfl_fail(err, BBVFL_E_ARG, "mask expansion: round %llu does not fit 32 bits",
                      (unsigned long long)round);
  if (n > MAX_COORDS)
    return bbvfl_fail(err, BBVFL_E_ARG, "mask expansion: %zu values exceed the limit of %d", n, MAX_COORDS);
  uint32_t key[8];
  dir_key(pair_key, from, to, key);
  const uint32_t nonce[3] = {(uint32_t)round, (uint32_t)set, (uint32_t)(set >> 32)};
  stream(key, nonce, 0, n, out);
  wipe(key, sizeof key);
  return 0;
}

int bbvfl_masker_init(bbvfl_masker *mk, const bbvfl_key *key, unsigned self, unsigned nclients,
                      const uint8_t (*pubs)[64], const uint8_t session[32], bbvfl_err *err) {
  memset(mk, 0, sizeof *mk);
  if (nclients < 1 || nclients > BBVFL_MASK_MAX_CLIENTS)
    return bbvfl_fail(err, BBVFL_E_ARG, "masked mode: %u clients, must be 1..%d", nclients,
                      BBVFL_MASK_MAX_CLIENTS);
  if (self >= nclients)
    return bbvfl_fail(err, BBVFL_E_ARG, "masked mode: own index %u is not among the %u clients", self,
                      nclients);
  if (memcmp(pubs[self], key->pub, 64) != 0)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "masked mode: the public key registered at index %u is not this client's key", self);
  mk->self = self;
  mk->nclients = nclients;
  for (unsigned i = 0; i < nclients; i++) {
    if (i == self) continue;
    if (bbvfl_mask_pair_key(key->priv, pubs[i], session, mk->pair[i], err) < 0) {
      bbvfl_masker_wipe(mk);
      return bbvfl_wrap(err, "pair key with client %u", i);
    }
  }
  return 0;
}

void bbvfl_masker_wipe(bbvfl_masker *mk) { wipe(mk, sizeof *mk); }

static int popcount64(uint64_t x) {
  int c = 0;
  for (; x; x &= x - 1) c++;
  return c;
}

/* Shared body: q is read through q8 or q16. */
static int mask_any(const bbvfl_masker *mk, uint64_t round, uint64_t set, unsigned levels,
                    const uint8_t *q8, const uint16_t *q16, size_t n, uint8_t *out, bbvfl_err *err) {
  if (mk->nclients < 1 || mk->nclients > BBVFL_MASK_MAX_CLIENTS || mk->self >= mk->nclients)
    return bbvfl_fail(err, BBVFL_E_ARG, "masking: the masker is not initialised");
  if (n > MAX_COORDS)
    return bbvfl_fail(err, BBVFL_E_ARG, "masking: %zu values exceed the limit of %d", n, MAX_COORDS);
  if (!(set >> mk->self & 1))
    return bbvfl_fail(err, BBVFL_E_ARG, "masking: own index %u is not in the participant set 0x%llx",
                      mk->self, (unsigned long long)set);
  if (mk->nclients < 64 && set >> mk->nclients != 0)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "masking: participant set 0x%llx names an index >= the %u registered clients",
                      (unsigned long long)set, mk->nclients);
  if (levels < 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "masking: b must be >= 1");
  int members = popcount64(set);
  if ((unsigned long)members * levels >= 65536ul)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "masking: %d participants x b=%u = %lu does not fit a 16-bit lane (need M*b < 65536)",
                      members, levels, (unsigned long)members * levels);
  if (round > UINT32_MAX)
    return bbvfl_fail(err, BBVFL_E_ARG, "masking: round %llu does not fit 32 bits", (unsigned long long)round);
  for (size_t j = 0; j < n; j++) {
    unsigned v = q8 ? q8[j] : q16[j];
    if (v > levels)
      return bbvfl_fail(err, BBVFL_E_ARG, "masking: q[%zu] = %u is above b = %u", j, v, levels);
  }
  /* Accumulate in out as big-endian lanes: start with q, then add u(self->i) - u(i->self). */
  for (size_t j = 0; j < n; j++) {
    unsigned v = q8 ? q8[j] : q16[j];
    out[2 * j] = (uint8_t)(v >> 8);
    out[2 * j + 1] = (uint8_t)v;
  }
  enum { CHUNK = 256 }; /* a multiple of 32, so each chunk starts on a block boundary */
  uint16_t up[CHUNK], down[CHUNK];
  uint32_t kup[8], kdown[8];
  const uint32_t nonce[3] = {(uint32_t)round, (uint32_t)set, (uint32_t)(set >> 32)};
  for (unsigned i = 0; i < mk->nclients; i++) {
    if (i == mk->self || !(set >> i & 1)) continue;
    dir_key(mk->pair[i], mk->self, i, kup);
    dir_key(mk->pair[i], i, mk->self, kdown);
    for (size_t j0 = 0; j0 < n; j0 += CHUNK) {
      size_t len = n - j0 < CHUNK ? n - j0 : CHUNK;
      stream(kup, nonce, j0, len, up);
      stream(kdown, nonce, j0, len, down);
      for (size_t k = 0; k < len; k++) {
        uint8_t *o = out + 2 * (j0 + k);
        uint16_t v = (uint16_t)(o[0] << 8 | o[1]);
        v = (uint16_t)(v + up[k] - down[k]);
        o[0] = (uint8_t)(v >> 8);
        o[1] = (uint8_t)v;
      }
    }
  }
  wipe(up, sizeof up);
  wipe(down, sizeof down);
  wipe(kup, sizeof kup);
  wipe(kdown, sizeof kdown);
  return 0;
}

int bbvfl_masker_mask_u8(const bbvfl_masker *mk, uint64_t round, uint64_t set, unsigned levels,
                         const uint8_t *q, size_t n, uint8_t *out, bbvfl_err *err) {
  return mask_any(mk, round, set, levels, q, NULL, n, out, err);
}

int bbvfl_masker_mask_u16(const bbvfl_masker *mk, uint64_t round, uint64_t set, unsigned levels,
                          const uint16_t *q, size_t n, uint8_t *out, bbvfl_err *err) {
  return mask_any(mk, round, set, levels, NULL, q, n, out, err);
}

void bbvfl_mask_lane_sum(const uint8_t *const *subs, size_t count, size_t n, uint16_t *sum) {
  for (size_t j = 0; j < n; j++) {
    uint16_t s = 0;
    for (size_t k = 0; k < count; k++) s = (uint16_t)(s + (subs[k][2 * j] << 8 | subs[k][2 * j + 1]));
    sum[j] = s;
  }
}
