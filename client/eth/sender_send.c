/* Signing and handing in a transaction, re-sending a lost one, replacing a stuck one with higher
 * fees (eth/sender.h; state in eth/sender_int.h). */
#include "eth/sender_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/keccak.h"

/* Keeps the call and its first signed version (slot nonce % RECENT), before it is handed in: the
   answer may be lost. */
static void remember(bbvfl_sender *s, const bbvfl_tx *tx, const uint8_t *raw, size_t len, const uint8_t hash[32]) {
  sent_tx *t = &s->recent[tx->nonce % RECENT];
  bbvfl_snd_slot_free(t);
  t->raw = malloc(len ? len : 1);
  t->data = malloc(tx->data_len ? tx->data_len : 1);
  if (!t->raw || !t->data) { /* recovery then cannot re-send this one; nothing else depends on it */
    bbvfl_snd_slot_free(t);
    return;
  }
  memcpy(t->raw, raw, len);
  t->raw_len = len;
  if (tx->data_len) memcpy(t->data, tx->data, tx->data_len);
  t->len = tx->data_len;
  t->used = 1;
  t->nonce = tx->nonce;
  t->type = tx->type;
  t->has_to = tx->has_to;
  memcpy(t->to, tx->to, 20);
  t->value = tx->value;
  t->gas = tx->gas_limit;
  t->max_fee = tx->max_fee;
  t->tip = tx->max_priority_fee;
  t->gas_price = tx->gas_price;
  memcpy(t->hash[0], hash, 32);
  t->nver = 1;
  t->head_known = 0;
  if (tx->nonce + 1 > s->top) s->top = tx->nonce + 1;
}

/* Builds, signs and sends one transaction with the current nonce and fees. On success *raw
 * (malloc'd, caller frees) holds the signed bytes. */
static int sign_and_send(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                         const uint8_t *data, size_t len, uint64_t gas, uint8_t hash[32],
                         uint8_t **raw, size_t *raw_len, bbvfl_receipt *sync_out,
                         double sync_timeout, bbvfl_err *err) {
  bbvfl_tx tx;
  memset(&tx, 0, sizeof tx);
  tx.type = bbvfl_snd_legacy(s) ? BBVFL_TX_LEGACY : BBVFL_TX_EIP1559;
  tx.chain_id = s->chain_id;
  tx.nonce = s->nonce;
  if (tx.type == BBVFL_TX_LEGACY) {
    tx.gas_price = s->gas_price;
  } else {
    tx.max_fee = s->max_fee;
    tx.max_priority_fee = s->tip;
  }
  tx.gas_limit = gas;
  if (to) {
    tx.has_to = 1;
    memcpy(tx.to, to, 20);
  }
  if (value) tx.value = *value;
  tx.data = data;
  tx.data_len = len;
  *raw = NULL;
  if (bbvfl_tx_sign(&tx, s->key, raw, raw_len, hash, err) != 0)
    return bbvfl_wrap(err, "signing the transaction");
  remember(s, &tx, *raw, *raw_len, hash); /* before sending: the answer may be lost */
  int rc = sync_out ? bbvfl_rpc_send_raw_sync(s->rpc, *raw, *raw_len, sync_timeout, sync_out, err)
                    : bbvfl_rpc_send_raw(s->rpc, *raw, *raw_len, hash, err);
  if (rc != 0) {
    free(*raw);
    *raw = NULL;
    return -1;
  }
  return 0;
}

/* The gas limit of the block being built (the pending block; the latest where the node has no
   pending block) into *limit: what the node checks a new transaction against. */
static int block_gas_limit(bbvfl_sender *s, uint64_t *limit, bbvfl_err *err) {
  json_t *b;
  if (bbvfl_rpc_get_block(s->rpc, "pending", 0, &b, NULL) != 0 && bbvfl_rpc_get_block(s->rpc, "latest", 0, &b, err) != 0)
    return -1;
  int rc = bbvfl_rpc_parse_u64(json_object_get(b, "gasLimit"), limit, err);
  json_decref(b);
  return rc == 0 ? 0 : bbvfl_wrap(err, "reading the block gas limit");
}

/* The node refused a transaction of `gas` because blocks are smaller than that (a limit a
   chain's validators may vote down for a while): waits, reporting every 5 s, until the latest
   block's limit is at least gas again, at most s->gas_limit_wait seconds. */
static int wait_gas_limit(bbvfl_sender *s, uint64_t gas, bbvfl_err *err) {
  const double t0 = bbvfl_now();
  double last = -1;
  for (;;) {
    uint64_t lim;
    if (block_gas_limit(s, &lim, err) != 0) return -1;
    if (lim >= gas) {
      if (last >= 0)
        bbvfl_snd_report(s, BBVFL_SENDER_GAS_LIMIT_OK, NULL, "the block gas limit %" PRIu64 " holds a transaction of %" PRIu64
               " gas again: sending resumes", lim, gas);
      return 0;
    }
    double now = bbvfl_now();
    if (now - t0 >= s->gas_limit_wait) {
      bbvfl_fail(err, BBVFL_E_RPC,
                 "the block gas limit %" PRIu64 " stayed below this transaction's gas %" PRIu64 " for %.0f s", lim,
                 gas, now - t0);
      if (err) {
        err->rpc.present = 1;
        err->rpc.kind = BBVFL_NODE_GAS_LIMIT;
      }
      return -1;
    }
    if (last < 0 || now - last >= 5) {
      bbvfl_snd_report(s, BBVFL_SENDER_GAS_LIMIT_WAIT, NULL, "the block gas limit %" PRIu64 " is below this transaction's gas %"
             PRIu64 ": waiting for it to come back", lim, gas);
      last = now;
    }
    bbvfl_sleep(0.25);
  }
}

/* Why the node refused a transaction signed with s->nonce and the cached fees, found out by
 * asking the chain what is true now, never by reading the node's words (common/err.h): the
 * chain id, the account's pending nonce, the next block's gas limit against the gas signed, its balance against gas * fee + value, the current
 * fees (refetched: the cache is left fresh; the next base fee above the signed max fee, or fees
 * that rose). BBVFL_NODE_OTHER when none of these explains it, or when a question cannot be
 * answered. */
static bbvfl_node_refusal diagnose(bbvfl_sender *s, uint64_t gas, const bbvfl_u256 *value) {
  uint64_t chain = 0, pending = 0;
  if (bbvfl_rpc_chain_id(s->rpc, &chain, NULL) == 0 && chain != s->chain_id) return BBVFL_NODE_WRONG_CHAIN;
  if (bbvfl_rpc_nonce(s->rpc, s->key->addr, "pending", &pending, NULL) == 0 && pending != s->nonce)
    return s->nonce < pending ? BBVFL_NODE_NONCE_TOO_LOW : BBVFL_NODE_NONCE_TOO_HIGH;
  uint64_t limit = 0;
  if (block_gas_limit(s, &limit, NULL) == 0 && limit < gas) return BBVFL_NODE_GAS_LIMIT;
  const int was_legacy = bbvfl_snd_legacy(s);
  const bbvfl_u256 fee = was_legacy ? s->gas_price : s->max_fee;
  bbvfl_u256 cost, balance;
  if (bbvfl_u256_mul_u64(&cost, &fee, gas) == 0 && (!value || bbvfl_u256_add(&cost, &cost, value) == 0) &&
      bbvfl_rpc_balance(s->rpc, s->key->addr, &balance, NULL) == 0 && bbvfl_u256_cmp(&balance, &cost) < 0)
    return BBVFL_NODE_INSUFFICIENT_FUNDS;
  if (bbvfl_snd_fetch_fees(s, 1, NULL) == 0) {
    if (bbvfl_snd_legacy(s) != was_legacy) return BBVFL_NODE_UNDERPRICED; /* the fee market is not what was signed for */
    if (bbvfl_u256_cmp(bbvfl_snd_chain_price(s), &fee) > 0) return BBVFL_NODE_UNDERPRICED; /* base fee above max fee */
    const bbvfl_u256 now = bbvfl_snd_legacy(s) ? s->gas_price : s->max_fee;
    if (bbvfl_u256_cmp(&now, &fee) > 0) return BBVFL_NODE_UNDERPRICED;
  }
  return BBVFL_NODE_OTHER;
}

/* The gas limit of a transaction into *gas: gas_limit, or when it is 0 the node's estimate plus a
 * fifth (error: the estimate failed, e.g. the call reverts). */
int bbvfl_snd_gas_for(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value, const uint8_t *data, size_t len,
                   uint64_t gas_limit, uint64_t *gas, bbvfl_err *err) {
  *gas = gas_limit;
  if (gas_limit != 0) return 0;
  uint64_t est;
  if (bbvfl_rpc_estimate_gas(s->rpc, s->key->addr, to, value, data, len, &est, err) != 0)
    return bbvfl_wrap(err, "estimating gas");
  *gas = est + est / 5;
  return 0;
}

int bbvfl_snd_send_keep(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                     const uint8_t *data, size_t len, uint64_t gas_limit, uint8_t hash[32],
                     uint8_t **raw, size_t *raw_len, bbvfl_receipt *sync_out,
                     double sync_timeout, bbvfl_err *err) {
  *raw = NULL;
  if (len && !data) return bbvfl_fail(err, BBVFL_E_ARG, "sender: data is NULL but len > 0");
  if (!s->have_nonce && bbvfl_snd_fetch_nonce(s, err) != 0) return -1;
  uint64_t gas;
  if (bbvfl_snd_gas_for(s, to, value, data, len, gas_limit, &gas, err) != 0) return -1;
  if (bbvfl_snd_fees_under_cap(s, err) != 0) return -1;
  bbvfl_err e = {0};
  int rc = sign_and_send(s, to, value, data, len, gas, hash, raw, raw_len, sync_out, sync_timeout,
                       &e);
  /* a refusal (the node did not take these bytes: rpc_calls.c asked it for the hash): why,
     from the chain's state (diagnose) */
  if (rc != 0 && bbvfl_err_node_refused(&e) && e.rpc.kind == BBVFL_NODE_OTHER) e.rpc.kind = diagnose(s, gas, value);
  bbvfl_node_refusal why = bbvfl_err_node_refused(&e) ? e.rpc.kind : BBVFL_NODE_OTHER;
  if (rc != 0 && why != BBVFL_NODE_OTHER) {
    int retry = 0;
    if (why == BBVFL_NODE_NONCE_TOO_LOW || why == BBVFL_NODE_NONCE_TOO_HIGH) {
      /* someone else used this key, or our count drifted: take the node's count, re-sign once */
      uint64_t old = s->nonce;
      if (bbvfl_snd_fetch_nonce(s, err) != 0) return -1;
      retry = s->nonce != old;
    } else if (why == BBVFL_NODE_UNDERPRICED) {
      /* diagnose left the chain's fees in the cache; with a cap, wait until they are under it */
      if (bbvfl_snd_fees_under_cap(s, err) != 0) return -1;
      retry = 1;
    } else if (why == BBVFL_NODE_GAS_LIMIT) {
      /* blocks too small for it now: wait for the limit to come back, then the same call */
      if (wait_gas_limit(s, gas, err) != 0) return -1;
      retry = 1;
    }
    if (retry) {
      memset(&e, 0, sizeof e);
      rc = sign_and_send(s, to, value, data, len, gas, hash, raw, raw_len, sync_out, sync_timeout,
                       &e);
    }
  }
  if (rc != 0) {
    uint64_t node_chain = 0;
    if (bbvfl_err_node_refused_is(&e, BBVFL_NODE_WRONG_CHAIN) && bbvfl_rpc_chain_id(s->rpc, &node_chain, NULL) == 0) {
      bbvfl_fail(err, BBVFL_E_RPC,
                 "sending the transaction: wrong chain id: it was signed for chain %" PRIu64
                 " but the node at %s is chain %" PRIu64 " (%s)",
                 s->chain_id, bbvfl_rpc_url(s->rpc), node_chain, e.msg);
      if (err) err->rpc = e.rpc; /* still the node's refusal, with its reason */
      return -1;
    }
    /* A node that answered "no" did not take the nonce; anything else leaves it unknown. */
    if (!bbvfl_err_node_refused(&e) && e.code != BBVFL_E_REVERT) s->have_nonce = 0;
    if (bbvfl_err_node_refused(&e)) {
      sent_tx *t = bbvfl_snd_slot_of(s, s->nonce);
      if (t && !memcmp(t->hash[t->nver - 1], hash, 32)) bbvfl_snd_slot_free(t); /* never taken: nothing to look after */
    }
    if (err) *err = e;
    return bbvfl_wrap(err, "sending the transaction");
  }
  s->nonce++;
  return 0;
}

int bbvfl_sender_send(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                      const uint8_t *data, size_t len, uint64_t gas_limit, uint8_t hash[32],
                      bbvfl_err *err) {
  uint8_t *raw;
  size_t raw_len;
  if (bbvfl_snd_send_keep(s, to, value, data, len, gas_limit, hash, &raw, &raw_len, NULL, 0, err) != 0)
    return -1;
  free(raw);
  return 0;
}

/* x * 9 / 8, rounded up: the smallest raise of 12.5 % (geth and anvil require 10 %). */
static bbvfl_u256 bumped(const bbvfl_u256 *x) {
  bbvfl_u256 q, r;
  uint64_t rem = bbvfl_u256_divmod_u64(&q, x, 8);
  if (bbvfl_u256_mul_u64(&r, &q, 9) != 0) return *x;
  bbvfl_u256 extra = bbvfl_u256_from_u64((rem * 9 + 7) / 8);
  if (bbvfl_u256_add(&r, &r, &extra) != 0) return *x;
  return r;
}

static const bbvfl_u256 *u256_max(const bbvfl_u256 *a, const bbvfl_u256 *b) {
  return bbvfl_u256_cmp(a, b) >= 0 ? a : b;
}

/* Signs t again with higher fees (each raised by 12.5 % at least, or to the current fees), keeps
   the new version and hands it in. 1 replaced, 0 not possible now (the cap leaves no room for the
   raise a node requires; the fee wait reports it), -1 error. */
int bbvfl_snd_reprice(bbvfl_sender *s, sent_tx *t, bbvfl_err *err) {
  if (bbvfl_snd_fees_under_cap(s, err) != 0) return -1;
  if (bbvfl_snd_fetch_fees(s, 1, err) != 0) return -1;
  bbvfl_tx tx;
  memset(&tx, 0, sizeof tx);
  tx.type = t->type;
  tx.chain_id = s->chain_id;
  tx.nonce = t->nonce;
  tx.gas_limit = t->gas;
  tx.has_to = t->has_to;
  memcpy(tx.to, t->to, 20);
  tx.value = t->value;
  tx.data = t->data;
  tx.data_len = t->len;
  if (t->type == BBVFL_TX_LEGACY) {
    bbvfl_u256 b = bumped(&t->gas_price);
    tx.gas_price = *u256_max(&b, &s->gas_price);
    if (s->has_cap && bbvfl_u256_cmp(&tx.gas_price, &s->cap) > 0) {
      if (bbvfl_u256_cmp(&s->cap, &b) < 0) return 0;
      tx.gas_price = s->cap;
    }
  } else {
    bbvfl_u256 bm = bumped(&t->max_fee), bt = bumped(&t->tip);
    bbvfl_u256 fresh_max = s->max_fee, fresh_tip = s->tip;
    if (bbvfl_snd_legacy(s)) fresh_max = fresh_tip = s->gas_price;
    tx.max_fee = *u256_max(&bm, &fresh_max);
    tx.max_priority_fee = *u256_max(&bt, &fresh_tip);
    if (s->has_cap && bbvfl_u256_cmp(&tx.max_fee, &s->cap) > 0) {
      if (bbvfl_u256_cmp(&s->cap, &bm) < 0) return 0;
      tx.max_fee = s->cap;
    }
    if (bbvfl_u256_cmp(&tx.max_priority_fee, &tx.max_fee) > 0) {
      if (bbvfl_u256_cmp(&tx.max_fee, &bt) < 0) return 0;
      tx.max_priority_fee = tx.max_fee;
    }
  }
  uint8_t *raw = NULL, hash[32];
  size_t len = 0;
  if (bbvfl_tx_sign(&tx, s->key, &raw, &len, hash, err) != 0) return bbvfl_wrap(err, "signing a replacement");
  bbvfl_err e = {0};
  if (bbvfl_rpc_send_raw(s->rpc, raw, len, hash, &e) != 0) {
    free(raw);
    if (!bbvfl_err_node_refused(&e)) {
      if (err) *err = e;
      return bbvfl_wrap(err, "replacing transaction %" PRIu64 " with higher fees", t->nonce);
    }
    return 0; /* refused (mined meanwhile, or not enough of a raise for this node): next check */
  }
  free(t->raw);
  t->raw = raw;
  t->raw_len = len;
  t->max_fee = tx.max_fee;
  t->tip = tx.max_priority_fee;
  t->gas_price = tx.gas_price;
  if (t->nver == VERSIONS) {
    memmove(t->hash[0], t->hash[1], (VERSIONS - 1) * 32);
    t->nver--;
  }
  memcpy(t->hash[t->nver++], hash, 32);
  t->sent_head = s->head;
  t->head_known = 1;
  bbvfl_snd_report(s, BBVFL_SENDER_REPRICED, t, "transaction %" PRIu64 " unmined since block %" PRIu64
         ": replaced with max fee %.3f gwei, tip %.3f gwei (base fee %.3f gwei)", t->nonce, s->head,
         bbvfl_snd_gwei(t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->max_fee),
         bbvfl_snd_gwei(t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->tip), bbvfl_snd_gwei(bbvfl_snd_chain_price(s)));
  return 1;
}

/* Hands t's latest signed bytes in again; a refusal (its fees no longer valid, in the node's
   words, which are not read) re-signs it with fresh fees. 1 handed in, 0 not now, -1 error. */
int bbvfl_snd_resend(bbvfl_sender *s, sent_tx *t, bbvfl_err *err) {
  uint8_t h[32];
  bbvfl_err e = {0};
  if (bbvfl_rpc_send_raw(s->rpc, t->raw, t->raw_len, h, &e) == 0) {
    t->sent_head = s->head;
    t->head_known = 1;
    bbvfl_snd_report(s, BBVFL_SENDER_RESENT, t, "transaction %" PRIu64 " was no longer known to the node: sent the same bytes again",
           t->nonce);
    return 1;
  }
  if (!bbvfl_err_node_refused(&e)) {
    if (err) *err = e;
    return bbvfl_wrap(err, "re-sending transaction %" PRIu64 " that the node lost", t->nonce);
  }
  int k = bbvfl_snd_reprice(s, t, err);
  if (k == 1)
    bbvfl_snd_report(s, BBVFL_SENDER_RESENT, t, "transaction %" PRIu64 " was no longer known to the node and its fees no longer "
           "valid: signed again with fresh fees", t->nonce);
  return k;
}

/* Counts a receipt of t (or of a transaction not in the ring: t NULL) into the fees paid. */
