/* Nonce manager, fee cache, sign + send + wait. See sender.h. */
#include "eth/sender.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/keccak.h"

#define DEFAULT_FEE_TTL_S 5.0
#define DEFAULT_DROP_CHECK_S 5.0
#define ONE_GWEI 1000000000ULL
#define RECENT 16 /* signed transactions kept for bbvfl_sender_recover */

struct bbvfl_sender {
  bbvfl_rpc *rpc;
  const bbvfl_key *key;
  uint64_t chain_id;
  bbvfl_txtype type;
  int have_nonce;
  uint64_t nonce;
  double fee_ttl, drop_check;
  int sync;
  double fee_time; /* bbvfl_now() of the last fetch; < 0: none */
  bbvfl_u256 max_fee, tip, gas_price;
  /* the signed bytes of the last RECENT transactions (ring by nonce), for bbvfl_sender_recover */
  struct {
    uint64_t nonce;
    uint8_t *raw;
    size_t len;
  } recent[RECENT];
  uint64_t outages_seen;
};

bbvfl_sender *bbvfl_sender_new(bbvfl_rpc *rpc, const bbvfl_key *key, uint64_t chain_id,
                               bbvfl_err *err) {
  if (!rpc || !key) {
    bbvfl_fail(err, BBVFL_E_ARG, "sender: an RPC connection and a key are needed");
    return NULL;
  }
  if (chain_id == 0 && bbvfl_rpc_chain_id(rpc, &chain_id, err) != 0) {
    bbvfl_wrap(err, "sender: asking the node for its chain id");
    return NULL;
  }
  bbvfl_sender *s = calloc(1, sizeof *s);
  if (!s) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "sender: out of memory");
    return NULL;
  }
  s->rpc = rpc;
  s->key = key;
  s->chain_id = chain_id;
  s->type = BBVFL_TX_EIP1559;
  s->fee_ttl = DEFAULT_FEE_TTL_S;
  s->drop_check = DEFAULT_DROP_CHECK_S;
  s->fee_time = -1;
  return s;
}

void bbvfl_sender_free(bbvfl_sender *s) {
  if (!s) return;
  for (int i = 0; i < RECENT; i++) free(s->recent[i].raw);
  free(s);
}


/* Keeps a copy of a transaction the node took (nonce slot nonce % RECENT). */
static void remember(bbvfl_sender *s, uint64_t nonce, const uint8_t *raw, size_t len) {
  uint8_t *copy = malloc(len ? len : 1);
  if (!copy) return; /* recovery then cannot re-send this one; nothing else depends on it */
  memcpy(copy, raw, len);
  int i = (int)(nonce % RECENT);
  free(s->recent[i].raw);
  s->recent[i].raw = copy;
  s->recent[i].len = len;
  s->recent[i].nonce = nonce;
}

int bbvfl_sender_recover(bbvfl_sender *s, unsigned *resent, bbvfl_err *err) {
  if (resent) *resent = 0;
  uint64_t o = bbvfl_rpc_outages(s->rpc);
  if (o == s->outages_seen) return 0;
  uint64_t mined;
  if (bbvfl_rpc_nonce(s->rpc, s->key->addr, "latest", &mined, err) != 0)
    return bbvfl_wrap(err, "checking the account's transactions after the node came back");
  s->outages_seen = o;
  unsigned n = 0;
  for (uint64_t k = mined;; k++) {
    int i = (int)(k % RECENT);
    if (!s->recent[i].raw || s->recent[i].nonce != k) break;
    uint8_t h[32];
    bbvfl_err e = {0};
    if (bbvfl_rpc_send_raw(s->rpc, s->recent[i].raw, s->recent[i].len, h, &e) != 0) {
      /* refused and not known by its hash: fine if the nonce has been used meanwhile (another
         transaction of this key took it), asked of the chain */
      uint64_t now;
      if (!bbvfl_err_node_refused(&e) || bbvfl_rpc_nonce(s->rpc, s->key->addr, "latest", &now, NULL) != 0 || now <= k) {
        if (err) *err = e;
        return bbvfl_wrap(err, "re-sending transaction %" PRIu64 " that the node lost", k);
      }
    }
    n++;
  }
  s->have_nonce = 0;
  if (resent) *resent = n;
  return 0;
}

int bbvfl_sender_set_type(bbvfl_sender *s, bbvfl_txtype type, bbvfl_err *err) {
  if (type != BBVFL_TX_LEGACY && type != BBVFL_TX_EIP1559)
    return bbvfl_fail(err, BBVFL_E_ARG, "sender: unsupported transaction type %d", (int)type);
  if (type != s->type) s->fee_time = -1;
  s->type = type;
  return 0;
}

void bbvfl_sender_set_fee_ttl(bbvfl_sender *s, double seconds) {
  s->fee_ttl = seconds > 0 ? seconds : 0;
}

void bbvfl_sender_set_drop_check(bbvfl_sender *s, double seconds) {
  s->drop_check = seconds > 0 ? seconds : DEFAULT_DROP_CHECK_S;
}

void bbvfl_sender_set_sync(bbvfl_sender *s, int on) { s->sync = on != 0; }

const uint8_t *bbvfl_sender_address(const bbvfl_sender *s) { return s->key->addr; }
uint64_t bbvfl_sender_chain_id(const bbvfl_sender *s) { return s->chain_id; }

void bbvfl_sender_resync(bbvfl_sender *s) {
  s->have_nonce = 0;
  s->fee_time = -1;
}

static int fetch_nonce(bbvfl_sender *s, bbvfl_err *err) {
  if (bbvfl_rpc_nonce(s->rpc, s->key->addr, "pending", &s->nonce, err) != 0)
    return bbvfl_wrap(err, "reading the account's nonce");
  s->have_nonce = 1;
  return 0;
}

int bbvfl_sender_next_nonce(bbvfl_sender *s, uint64_t *nonce, bbvfl_err *err) {
  if (!s->have_nonce && fetch_nonce(s, err) != 0) return -1;
  *nonce = s->nonce;
  return 0;
}

static int fetch_fees(bbvfl_sender *s, bbvfl_err *err) {
  if (s->fee_time >= 0 && s->fee_ttl > 0 && bbvfl_now() - s->fee_time < s->fee_ttl) return 0;
  if (s->type == BBVFL_TX_LEGACY) {
    if (bbvfl_rpc_gas_price(s->rpc, &s->gas_price, err) != 0)
      return bbvfl_wrap(err, "reading the gas price");
    s->fee_time = bbvfl_now();
    return 0;
  }
  /* One round trip: base fee of the next block and the node's suggested tip. */
  bbvfl_rpc_req q[2] = {
      {.method = "eth_feeHistory", .params = json_pack("[s,s,[f]]", "0x1", "latest", 50.0)},
      {.method = "eth_maxPriorityFeePerGas", .params = json_array()},
  };
  if (bbvfl_rpc_batch(s->rpc, q, 2, err) != 0) return bbvfl_wrap(err, "reading fees");
  int rc = -1;
  bbvfl_u256 base, tip = bbvfl_u256_from_u64(ONE_GWEI);
  if (q[0].err.code != BBVFL_OK) {
    /* no EIP-1559 fee market: use the gas price for both */
    bbvfl_u256 gp;
    if (bbvfl_rpc_gas_price(s->rpc, &gp, err) != 0) {
      bbvfl_wrap(err, "reading fees (eth_feeHistory failed: %s)", q[0].err.msg);
      goto out;
    }
    s->max_fee = gp;
    s->tip = gp;
    s->fee_time = bbvfl_now();
    rc = 0;
    goto out;
  }
  json_t *bf = json_object_get(q[0].result, "baseFeePerGas");
  const char *last = json_string_value(json_array_get(bf, json_array_size(bf) - 1));
  if (!json_is_array(bf) || !last || bbvfl_u256_from_string(last, &base, err) != 0) {
    bbvfl_fail(err, BBVFL_E_PARSE, "reading fees: eth_feeHistory answer has no usable baseFeePerGas");
    goto out;
  }
  if (q[1].err.code == BBVFL_OK && json_is_string(q[1].result)) {
    bbvfl_u256 t;
    if (bbvfl_u256_from_string(json_string_value(q[1].result), &t, NULL) == 0) tip = t;
  }
  bbvfl_u256 twice;
  if (bbvfl_u256_mul_u64(&twice, &base, 2) != 0 || bbvfl_u256_add(&s->max_fee, &twice, &tip) != 0) {
    bbvfl_fail(err, BBVFL_E_PARSE, "reading fees: the base fee is out of range");
    goto out;
  }
  s->tip = tip;
  s->fee_time = bbvfl_now();
  rc = 0;
out:
  bbvfl_rpc_batch_clear(q, 2);
  return rc;
}

/* Builds, signs and sends one transaction with the current nonce and fees. On success *raw
 * (malloc'd, caller frees) holds the signed bytes. */
static int sign_and_send(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                         const uint8_t *data, size_t len, uint64_t gas, uint8_t hash[32],
                         uint8_t **raw, size_t *raw_len, bbvfl_receipt *sync_out,
                         double sync_timeout, bbvfl_err *err) {
  bbvfl_tx tx;
  memset(&tx, 0, sizeof tx);
  tx.type = s->type;
  tx.chain_id = s->chain_id;
  tx.nonce = s->nonce;
  if (s->type == BBVFL_TX_LEGACY) {
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
  remember(s, s->nonce, *raw, *raw_len); /* before sending: the answer may be lost */
  int rc = sync_out ? bbvfl_rpc_send_raw_sync(s->rpc, *raw, *raw_len, sync_timeout, sync_out, err)
                    : bbvfl_rpc_send_raw(s->rpc, *raw, *raw_len, hash, err);
  if (rc != 0) {
    free(*raw);
    *raw = NULL;
    return -1;
  }
  return 0;
}

/* Why the node refused a transaction signed with s->nonce and the cached fees, found out by
 * asking the chain what is true now, never by reading the node's words (common/err.h): the
 * chain id, the account's pending nonce, its balance against gas * fee + value, the current
 * fees (refetched: the cache is left fresh). BBVFL_NODE_OTHER when none of these explains it, or
 * when a question cannot be answered. */
static bbvfl_node_refusal diagnose(bbvfl_sender *s, uint64_t gas, const bbvfl_u256 *value) {
  uint64_t chain = 0, pending = 0;
  if (bbvfl_rpc_chain_id(s->rpc, &chain, NULL) == 0 && chain != s->chain_id) return BBVFL_NODE_WRONG_CHAIN;
  if (bbvfl_rpc_nonce(s->rpc, s->key->addr, "pending", &pending, NULL) == 0 && pending != s->nonce)
    return s->nonce < pending ? BBVFL_NODE_NONCE_TOO_LOW : BBVFL_NODE_NONCE_TOO_HIGH;
  const bbvfl_u256 fee = s->type == BBVFL_TX_LEGACY ? s->gas_price : s->max_fee;
  bbvfl_u256 cost, balance;
  if (bbvfl_u256_mul_u64(&cost, &fee, gas) == 0 && (!value || bbvfl_u256_add(&cost, &cost, value) == 0) &&
      bbvfl_rpc_balance(s->rpc, s->key->addr, &balance, NULL) == 0 && bbvfl_u256_cmp(&balance, &cost) < 0)
    return BBVFL_NODE_INSUFFICIENT_FUNDS;
  s->fee_time = -1;
  if (fetch_fees(s, NULL) == 0) {
    const bbvfl_u256 now = s->type == BBVFL_TX_LEGACY ? s->gas_price : s->max_fee;
    if (bbvfl_u256_cmp(&now, &fee) > 0) return BBVFL_NODE_UNDERPRICED;
  }
  return BBVFL_NODE_OTHER;
}

/* The gas limit of a transaction into *gas: gas_limit, or when it is 0 the node's estimate plus a
 * fifth (error: the estimate failed, e.g. the call reverts). */
static int gas_for(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value, const uint8_t *data, size_t len,
                   uint64_t gas_limit, uint64_t *gas, bbvfl_err *err) {
  *gas = gas_limit;
  if (gas_limit != 0) return 0;
  uint64_t est;
  if (bbvfl_rpc_estimate_gas(s->rpc, s->key->addr, to, value, data, len, &est, err) != 0)
    return bbvfl_wrap(err, "estimating gas");
  *gas = est + est / 5;
  return 0;
}

static int send_keep(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                     const uint8_t *data, size_t len, uint64_t gas_limit, uint8_t hash[32],
                     uint8_t **raw, size_t *raw_len, bbvfl_receipt *sync_out,
                     double sync_timeout, bbvfl_err *err) {
  *raw = NULL;
  if (len && !data) return bbvfl_fail(err, BBVFL_E_ARG, "sender: data is NULL but len > 0");
  if (!s->have_nonce && fetch_nonce(s, err) != 0) return -1;
  uint64_t gas;
  if (gas_for(s, to, value, data, len, gas_limit, &gas, err) != 0) return -1;
  if (fetch_fees(s, err) != 0) return -1;
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
      if (fetch_nonce(s, err) != 0) return -1;
      retry = s->nonce != old;
    } else if (why == BBVFL_NODE_UNDERPRICED) {
      retry = 1; /* diagnose left the new fees in the cache */
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
  if (send_keep(s, to, value, data, len, gas_limit, hash, &raw, &raw_len, NULL, 0, err) != 0)
    return -1;
  free(raw);
  return 0;
}

/* Why a mined transaction reverted: replay it as eth_call on the state before its block. */
static int explain_revert(bbvfl_sender *s, const bbvfl_receipt *rc, const uint8_t *to,
                          const bbvfl_u256 *value, const uint8_t *data, size_t len,
                          uint64_t gas_limit, bbvfl_err *err) {
  char h[67], blk[24];
  bbvfl_hex_encode(rc->hash, 32, h);
  snprintf(blk, sizeof blk, "0x%" PRIx64, rc->block_number ? rc->block_number - 1 : 0);
  uint8_t *out = NULL;
  size_t out_len = 0;
  bbvfl_err e = {0};
  int crc = bbvfl_rpc_eth_call_value(s->rpc, s->key->addr, to, value, data, len, blk, &out,
                                     &out_len, &e);
  free(out);
  if (crc != 0 && e.code == BBVFL_E_REVERT) {
    bbvfl_fail(err, BBVFL_E_REVERT, "transaction %s reverted in block %" PRIu64 ": %s", h, rc->block_number, e.msg);
    if (err) err->revert = e.revert; /* the replay's revert data is the transaction's */
    return -1;
  }
  if (gas_limit && rc->gas_used >= gas_limit)
    return bbvfl_fail(err, BBVFL_E_REVERT,
                      "transaction %s reverted in block %" PRIu64 ": out of gas (used all %" PRIu64
                      ")",
                      h, rc->block_number, rc->gas_used);
  return bbvfl_fail(err, BBVFL_E_REVERT,
                    "transaction %s reverted in block %" PRIu64
                    " (gas used %" PRIu64 "); replaying it as a call %s, so the reason is unknown",
                    h, rc->block_number, rc->gas_used,
                    crc == 0 ? "did not revert" : "failed");
}

/* Waits for the receipt of a sent transaction (hash, its signed bytes raw): every drop_check
   seconds asks whether the node still knows it and hands the same bytes in again if not. */
static int wait_mined(bbvfl_sender *s, const uint8_t hash[32], const uint8_t *raw, size_t raw_len, double timeout_s,
                      bbvfl_receipt *out, bbvfl_err *err) {
  double t0 = bbvfl_now();
  for (;;) {
    double left = timeout_s - (bbvfl_now() - t0);
    double slice = left < s->drop_check ? left : s->drop_check;
    if (slice <= 0) slice = 0.001;
    bbvfl_err e = {0};
    if (bbvfl_rpc_wait_receipt(s->rpc, hash, slice, out, &e) == 0) return 0;
    if (e.code != BBVFL_E_TIMEOUT) {
      if (err) *err = e;
      return bbvfl_wrap(err, "waiting for the receipt");
    }
    if (bbvfl_now() - t0 >= timeout_s) {
      char h[67];
      bbvfl_hex_encode(hash, 32, h);
      return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                        "no receipt for transaction %s after %.1f s (is the node mining? the transaction "
                        "may still be mined later)",
                        h, timeout_s);
    }
    /* Dropped from the pool? Then hand the same bytes in again (same hash, no double spend). */
    int known = bbvfl_rpc_get_tx(s->rpc, hash, NULL, &e);
    if (known < 0) {
      if (err) *err = e;
      return bbvfl_wrap(err, "checking whether the node still knows the transaction");
    }
    if (known == 0) {
      uint8_t h2[32];
      if (bbvfl_rpc_send_raw(s->rpc, raw, raw_len, h2, &e) != 0) {
        if (err) *err = e;
        return bbvfl_wrap(err, "re-sending a transaction the node had dropped");
      }
    }
  }
}

void bbvfl_pending_clear(bbvfl_pending *p) {
  if (!p) return;
  free(p->raw);
  free(p->data);
  memset(p, 0, sizeof *p);
}

int bbvfl_sender_send_tracked(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value, const uint8_t *data,
                              size_t len, uint64_t gas, bbvfl_pending *p, bbvfl_err *err) {
  memset(p, 0, sizeof *p);
  if (!gas) return bbvfl_fail(err, BBVFL_E_ARG, "sender: a tracked transaction needs a gas limit");
  if (bbvfl_sender_recover(s, NULL, err) != 0) return -1;
  p->data = malloc(len ? len : 1);
  if (!p->data) return bbvfl_fail(err, BBVFL_E_NOMEM, "sender: out of memory");
  if (len) memcpy(p->data, data, len);
  p->len = len;
  p->gas = gas;
  if (value) {
    p->value = *value;
    p->has_value = 1;
  }
  if (to) {
    memcpy(p->to, to, 20);
    p->has_to = 1;
  }
  if (send_keep(s, to, value, data, len, gas, p->hash, &p->raw, &p->raw_len, NULL, 0, err) != 0) {
    bbvfl_pending_clear(p);
    return -1;
  }
  return 0;
}

int bbvfl_sender_wait_tracked(bbvfl_sender *s, bbvfl_pending *p, double timeout_s, bbvfl_receipt *out,
                              bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (!p->raw) return bbvfl_fail(err, BBVFL_E_ARG, "sender: no transaction to wait for");
  if (timeout_s <= 0) timeout_s = 60;
  if (wait_mined(s, p->hash, p->raw, p->raw_len, timeout_s, out, err) != 0) return -1;
  if (out->status == 0) {
    explain_revert(s, out, p->has_to ? p->to : NULL, p->has_value ? &p->value : NULL, p->data, p->len, p->gas, err);
    return -1;
  }
  return 0;
}

int bbvfl_sender_transact_many(bbvfl_sender *s, const uint8_t *to, size_t n, const uint8_t *const *data,
                               const size_t *len, const uint64_t *gas, double timeout_s, bbvfl_receipt *out,
                               size_t *failed, bbvfl_err *err) {
  for (size_t i = 0; i < n; i++) memset(&out[i], 0, sizeof out[i]);
  if (failed) *failed = n;
  if (n == 0) return 0;
  bbvfl_pending *p = calloc(n, sizeof *p);
  if (!p) return bbvfl_fail(err, BBVFL_E_NOMEM, "sender: out of memory");
  int rc = -1;
  size_t sent = 0;
  for (; sent < n; sent++)
    if (bbvfl_sender_send_tracked(s, to, NULL, data[sent], len[sent], gas[sent], &p[sent], err) != 0) {
      if (failed) *failed = sent;
      goto done;
    }
  rc = 0;
  for (size_t i = 0; i < n; i++) {
    bbvfl_err e = {0};
    if (bbvfl_sender_wait_tracked(s, &p[i], timeout_s, &out[i], &e) != 0 && rc == 0) {
      /* the first failure is the one reported; the later calls are still collected */
      rc = -1;
      if (err) *err = e;
      if (failed) *failed = i;
    }
  }
done:
  for (size_t i = 0; i < n; i++) bbvfl_pending_clear(&p[i]);
  free(p);
  return rc;
}

int bbvfl_sender_transact(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                          const uint8_t *data, size_t len, uint64_t gas_limit, double timeout_s,
                          bbvfl_receipt *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (timeout_s <= 0) timeout_s = 60;
  if (bbvfl_sender_recover(s, NULL, err) != 0) return -1;
  uint8_t hash[32], *raw;
  size_t raw_len;
  uint64_t gas; /* estimated here (gas_limit 0) so that explain_revert knows the limit */
  if (gas_for(s, to, value, data, len, gas_limit, &gas, err) != 0) return -1;
  /* a node known to lack eth_sendRawTransactionSync: send the ordinary way, so that the wait below
     checks for a dropped transaction */
  int sync = s->sync && bbvfl_rpc_has_sync(s->rpc);
  uint64_t tried = s->nonce;
  if (send_keep(s, to, value, data, len, gas, hash, &raw, &raw_len, sync ? out : NULL, timeout_s, err) != 0) {
    bbvfl_receipt_clear(out);
    int i = (int)(tried % RECENT);
    if (bbvfl_rpc_outages(s->rpc) == s->outages_seen || !s->recent[i].raw || s->recent[i].nonce != tried)
      return -1;
    /* the node went away and came back during this send: restarted from a saved state it may have
       lost earlier transactions of ours (then this one waits behind a nonce gap) and this one's
       answer. Hand in again what it no longer has, this one included, then wait for its receipt. */
    bbvfl_err e2 = {0};
    if (bbvfl_sender_recover(s, NULL, &e2) != 0) {
      if (err) *err = e2;
      return -1;
    }
    raw = malloc(s->recent[i].len);
    if (!raw) return bbvfl_fail(err, BBVFL_E_NOMEM, "sender: out of memory");
    memcpy(raw, s->recent[i].raw, s->recent[i].len);
    raw_len = s->recent[i].len;
    bbvfl_keccak256(raw, raw_len, hash);
    if (err) memset(err, 0, sizeof *err);
    sync = 0;
  }
  int rc = sync ? 0 : wait_mined(s, hash, raw, raw_len, timeout_s, out, err);
  if (rc == 0 && out->status == 0) {
    explain_revert(s, out, to, value, data, len, gas, err);
    free(raw);
    return -1; /* out keeps the receipt */
  }
  free(raw);
  if (rc != 0) bbvfl_receipt_clear(out);
  return rc;
}
