/* Pairwise additive masks for masked mode (PBM-VFL's Protocol 0, without a server).
 *
 * Every pair of registered clients (i, j) derives a shared key by secp256k1 ECDH from its own
 * private key and the peer's public key as registered on chain. For each round and participant
 * set S the key expands (ChaCha20) into two directional mask vectors u(i->j) and u(j->i) of n
 * 16-bit values. Client m submits, lane by lane,
 *
 *     y_m = q_m + sum over m' in S, m' != m, of ( u(m->m') - u(m'->m) )   (mod 2^16)
 *
 * as 16-bit big-endian lanes. Summed over S the masks cancel, so sum y_m = sum q_m mod 2^16, which
 * is the exact integer sum when |S| * b < 65536 (enforced here). Derivations (docs/MASKED.md):
 *
 *   shared   = 0x02|parity(Y) || X of priv * peer_pub        (33 bytes, the compressed point;
 *              computed by libsecp256k1's secp256k1_ecdh with a hash function that copies it out)
 *   session  = keccak256("bbvfl/mask/session/v1" || chain_id as 8 bytes big-endian || contract address)
 *   pair key = keccak256("bbvfl/mask/pair/v1" || session || shared)
 *   dir key  = keccak256("bbvfl/mask/dir/v1" || pair key || u8 from || u8 to)   (client indexes)
 *   u(from->to)(round, S) = ChaCha20 key stream (RFC 8439 block function, dp/rng.h) with
 *              key = dir key (read as 8 little-endian words), nonce = (round as LE32,
 *              S as LE64), block counter from 0; each 32-bit word gives two values, low half first.
 *
 * S is the bitmap of the participants' client indexes (bit i = client i). A round re-run after a
 * dropout has a strictly smaller S, so it uses fresh masks: a mask is never used for two
 * different q. The session id binds the keys to one contract on one chain, so a key reused in
 * another session does not repeat masks either.
 *
 * Threat model. What the masks hide: each client's q_m, from everyone (other clients, observers
 * of the chain, the contract), as long as at least one other participant of the round does not
 * collude: y_m then contains that pair's mask, which is uniform given everything the others know.
 * What they do not hide: the sum over S (that is the point), nor q_m from a coalition of all the
 * other participants of the round (they can subtract their own q from the sum). What is given
 * up: the contract can no longer range-check values (masked lanes look uniform), so a malicious
 * client can shift the sum by any amount mod 2^16 undetected; an auditor can check that the
 * chain is consistent (sums = lane sums of the submissions), not that each q_m <= b.
 * Honest-but-curious clients are assumed for correctness, as in Protocol 0.
 *
 * Ownership: every buffer is caller-owned; nothing here allocates. bbvfl_masker holds secret
 * keys: wipe it with bbvfl_masker_wipe. No function puts key material in an error message. */
#ifndef BBVFL_DP_MASKS_H
#define BBVFL_DP_MASKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/wallet.h"

enum { BBVFL_MASK_MAX_CLIENTS = 64, BBVFL_MASK_LANE_BITS = 16 };

/* The ECDH point: 33-byte compressed encoding of priv * peer_pub. Fails (BBVFL_E_CRYPTO) when
 * peer_pub (64 bytes X || Y) is not a point on secp256k1 or priv is not a valid scalar. */
int bbvfl_mask_ecdh(const uint8_t priv[32], const uint8_t peer_pub[64], uint8_t shared[33],
                    bbvfl_err *err);
/* The session id binding the masks to one aggregator contract on one chain. */
void bbvfl_mask_session_id(uint64_t chain_id, const uint8_t contract[20], uint8_t out[32]);
/* pair key = keccak256(tag || session || ECDH(priv, peer_pub)); symmetric in the two clients. */
int bbvfl_mask_pair_key(const uint8_t priv[32], const uint8_t peer_pub[64], const uint8_t session[32],
                        uint8_t key[32], bbvfl_err *err);
/* u(from->to)(round, set)[0..n): the directional mask vector. round < 2^32, n <= 2^20,
 * from != to, both < 64 (BBVFL_E_ARG otherwise). */
int bbvfl_mask_expand(const uint8_t pair_key[32], unsigned from, unsigned to, uint64_t round,
                      uint64_t set, uint16_t *out, size_t n, bbvfl_err *err);

/* One client's view of a masked session: its index and the pair key with every other client. */
typedef struct {
  unsigned self;                               /* own client index */
  unsigned nclients;                           /* registered clients, indexes 0..nclients-1 */
  uint8_t pair[BBVFL_MASK_MAX_CLIENTS][32];    /* pair[i]: key shared with client i (not self) */
} bbvfl_masker; /* caller-owned, holds secrets: bbvfl_masker_wipe */

/* pubs[i] is client i's registered 64-byte public key, i < nclients (client index order, as in
 * the Registered events); pubs[self] must be key's own public key. Every peer key is checked. */
int bbvfl_masker_init(bbvfl_masker *mk, const bbvfl_key *key, unsigned self, unsigned nclients,
                      const uint8_t (*pubs)[64], const uint8_t session[32], bbvfl_err *err);
void bbvfl_masker_wipe(bbvfl_masker *mk);

/* Masks q[0..n) (each value <= levels) for `round` and participant set `set` (bitmap of client
 * indexes, must contain self, only registered indexes, popcount(set) * levels < 65536) into
 * out[0..2n): 16-bit big-endian lanes, ready for submit(). out must not overlap q. On error out
 * is untouched. A client re-sending a round must re-send the same q (docs/MASKED.md). */
int bbvfl_masker_mask_u8(const bbvfl_masker *mk, uint64_t round, uint64_t set, unsigned levels,
                         const uint8_t *q, size_t n, uint8_t *out, bbvfl_err *err);
int bbvfl_masker_mask_u16(const bbvfl_masker *mk, uint64_t round, uint64_t set, unsigned levels,
                          const uint16_t *q, size_t n, uint8_t *out, bbvfl_err *err);

/* Lane-wise sum mod 2^16 of count submissions of n big-endian 16-bit lanes each (what the
 * contract computes): sum[j] = sum over k of lane j of subs[k]. For tests and the auditor. */
void bbvfl_mask_lane_sum(const uint8_t *const *subs, size_t count, size_t n, uint16_t *sum);

#endif
