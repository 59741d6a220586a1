/* The client side of masked mode in an on-chain session (docs/MASKED.md): the pair keys from
 * the peers' registered public keys, the current participant set, masking a round's q for that
 * set, and noticing when the contract voided a round and re-opened it for a smaller set
 * (RoundReopened(round, participants bitmap, n)).
 *
 * The caller (onchain/onchain) keeps a round's q until the round completes and re-masks that same q
 * for the announced set: it never draws a new q for a re-opened round (the "retry trap").
 *
 * Ownership: bbvfl_mclient holds secret pair keys and a malloc'd lane buffer; it borrows the
 * contract handle for each call. bbvfl_mclient_free wipes the keys and frees the buffer. */
#ifndef BBVFL_VFL_MASKED_H
#define BBVFL_VFL_MASKED_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/masks.h"
#include "eth/wallet.h"
#include "binding/contract.h"

typedef struct {
  bbvfl_masker mk;
  unsigned levels;          /* b: every q value is <= levels */
  size_t n;                 /* values per submission (B*P) */
  uint64_t set;             /* bitmap of the participants' client indexes */
  unsigned nparts;          /* popcount(set) */
  unsigned min_parts;       /* smallest participant count seen in this session */
  uint64_t reopen_round;    /* the round whose re-openings reopen_seen counts */
  size_t reopen_seen;
  uint8_t *lanes;           /* 2n bytes: the last masked submission */
} bbvfl_mclient;

/* Reads the Registered events (client index -> public key, from from_block) and participants()
 * of the aggregator, checks that key is client `self`'s registered key, and derives the pair
 * keys for the session (chain_id, the aggregator's address). n: values per submission. */
int bbvfl_mclient_init(bbvfl_mclient *m, bbvfl_aggc *agg, const bbvfl_key *key, uint64_t chain_id,
                       uint64_t from_block, unsigned self, size_t n, unsigned levels, bbvfl_err *err);
void bbvfl_mclient_free(bbvfl_mclient *m);

/* Masks q[0..n) for `round` and the current set into m->lanes (2n bytes, big-endian lanes). */
int bbvfl_mclient_mask(bbvfl_mclient *m, uint64_t round, const uint8_t *q, bbvfl_err *err);

/* Looks for RoundReopened(round) events at or after from_block that this client has not acted
 * on yet. Returns 1 when there is a new one (m->set, nparts, min_parts updated to the announced
 * set; the caller re-masks the same q and submits again), 0 when none, -1 on error. A new set
 * that does not contain this client is an error (BBVFL_E_STATE: the client was excluded). */
int bbvfl_mclient_poll_reopened(bbvfl_mclient *m, bbvfl_aggc *agg, uint64_t round, uint64_t from_block,
                                bbvfl_err *err);

#endif
