/* The sender (eth/sender.h): its settings, the key's nonces, the fees, the chain's head and the
 * event reports. Signing and handing in: sender_send.c; looking after what was sent:
 * sender_track.c; the shared state: sender_int.h. */
#include "eth/sender_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/keccak.h"

double bbvfl_snd_gwei(const bbvfl_u256 *v) {
  bbvfl_u256 q;
  uint64_t rem = bbvfl_u256_divmod_u64(&q, v, ONE_GWEI), whole;
  if (bbvfl_u256_to_u64(&q, &whole) != 0) return 1e30;
  return (double)whole + (double)rem / (double)ONE_GWEI;
}

int bbvfl_snd_legacy(const bbvfl_sender *s) { return s->type == BBVFL_TX_LEGACY || s->auto_legacy; }

/* The price the chain asks now: the next base fee, or the gas price without a fee market. */
const bbvfl_u256 *bbvfl_snd_chain_price(const bbvfl_sender *s) { return bbvfl_snd_legacy(s) ? &s->gas_price : &s->base_fee; }

void bbvfl_snd_report(bbvfl_sender *s, bbvfl_sender_event kind, const sent_tx *t, const char *fmt, ...) {
  if (!s->status_fn) return;
  bbvfl_sender_status st;
  memset(&st, 0, sizeof st);
  st.kind = kind;
  st.base_fee_gwei = bbvfl_snd_gwei(bbvfl_snd_chain_price(s));
  st.cap_gwei = s->has_cap ? bbvfl_snd_gwei(&s->cap) : 0;
  st.head = s->head;
  if (t) {
    st.nonce = t->nonce;
    if (t->nver) memcpy(st.hash, t->hash[t->nver - 1], 32);
    st.max_fee_gwei = bbvfl_snd_gwei(t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->max_fee);
    st.tip_gwei = t->type == BBVFL_TX_LEGACY ? st.max_fee_gwei : bbvfl_snd_gwei(&t->tip);
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st.msg, sizeof st.msg, fmt, ap);
  va_end(ap);
  s->status_fn(s->status_ctx, &st);
}

sent_tx *bbvfl_snd_slot_of(bbvfl_sender *s, uint64_t nonce) {
  sent_tx *t = &s->recent[nonce % RECENT];
  return t->used && t->nonce == nonce ? t : NULL;
}

void bbvfl_snd_slot_free(sent_tx *t) {
  free(t->data);
  free(t->raw);
  memset(t, 0, sizeof *t);
}

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
  s->reprice_blocks = DEFAULT_REPRICE_BLOCKS;
  s->gas_limit_wait = 120;
  s->head_time = -1;
  s->automine = -1;
  return s;
}

void bbvfl_sender_free(bbvfl_sender *s) {
  if (!s) return;
  for (int i = 0; i < RECENT; i++) bbvfl_snd_slot_free(&s->recent[i]);
  free(s);
}


int bbvfl_sender_set_type(bbvfl_sender *s, bbvfl_txtype type, bbvfl_err *err) {
  if (type != BBVFL_TX_LEGACY && type != BBVFL_TX_EIP1559)
    return bbvfl_fail(err, BBVFL_E_ARG, "sender: unsupported transaction type %d", (int)type);
  if (type != s->type) s->fee_time = -1;
  s->type = type;
  s->auto_legacy = 0;
  return 0;
}

void bbvfl_sender_set_fee_ttl(bbvfl_sender *s, double seconds) {
  s->fee_ttl = seconds > 0 ? seconds : 0;
}

void bbvfl_sender_set_drop_check(bbvfl_sender *s, double seconds) {
  s->drop_check = seconds > 0 ? seconds : DEFAULT_DROP_CHECK_S;
}

void bbvfl_sender_set_sync(bbvfl_sender *s, int on) { s->sync = on != 0; }

void bbvfl_sender_set_status(bbvfl_sender *s, bbvfl_sender_status_fn fn, void *ctx) {
  s->status_fn = fn;
  s->status_ctx = ctx;
}

void bbvfl_sender_set_max_fee(bbvfl_sender *s, const bbvfl_u256 *cap) {
  s->has_cap = cap && !bbvfl_u256_is_zero(cap);
  if (s->has_cap) s->cap = *cap;
  s->fee_time = -1;
}

void bbvfl_sender_set_reprice_blocks(bbvfl_sender *s, unsigned blocks) { s->reprice_blocks = blocks; }
void bbvfl_sender_set_gas_limit_wait(bbvfl_sender *s, double seconds) { s->gas_limit_wait = seconds > 0 ? seconds : 0; }

const uint8_t *bbvfl_sender_address(const bbvfl_sender *s) { return s->key->addr; }
uint64_t bbvfl_sender_chain_id(const bbvfl_sender *s) { return s->chain_id; }

void bbvfl_sender_resync(bbvfl_sender *s) {
  s->have_nonce = 0;
  s->fee_time = -1;
}

void bbvfl_sender_fees(const bbvfl_sender *s, uint64_t *gas_used, bbvfl_u256 *wei) {
  if (gas_used) *gas_used = s->paid_gas;
  if (wei) *wei = s->paid_wei;
}

int bbvfl_sender_fee_above_cap(const bbvfl_sender *s) {
  return s->has_cap && s->fee_time >= 0 && bbvfl_u256_cmp(bbvfl_snd_chain_price(s), &s->cap) > 0;
}

int bbvfl_snd_fetch_nonce(bbvfl_sender *s, bbvfl_err *err) {
  if (bbvfl_rpc_nonce(s->rpc, s->key->addr, "pending", &s->nonce, err) != 0)
    return bbvfl_wrap(err, "reading the account's nonce");
  s->have_nonce = 1;
  return 0;
}

int bbvfl_sender_next_nonce(bbvfl_sender *s, uint64_t *nonce, bbvfl_err *err) {
  if (!s->have_nonce && bbvfl_snd_fetch_nonce(s, err) != 0) return -1;
  *nonce = s->nonce;
  return 0;
}

/* The fees for the next signature: s->base_fee (next block's), s->tip, s->max_fee = min(2 x base
   + tip, cap), tip <= max fee; legacy (asked, or the node has no base fee): s->gas_price. Cached
   for fee_ttl unless force. */
int bbvfl_snd_fetch_fees(bbvfl_sender *s, int force, bbvfl_err *err) {
  if (!force && s->fee_time >= 0 && s->fee_ttl > 0 && bbvfl_now() - s->fee_time < s->fee_ttl) return 0;
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
  json_t *bf = q[0].err.code == BBVFL_OK ? json_object_get(q[0].result, "baseFeePerGas") : NULL;
  int no_market = !json_is_array(bf) || json_array_size(bf) == 0;
  if (!no_market) {
    /* a zero base fee: a fee market at zero (anvil --base-fee 0), or none (a pre-London chain, whose
       blocks have no baseFeePerGas: nodes answer eth_feeHistory with zeros there); the block says */
    const char *z = json_string_value(json_array_get(bf, json_array_size(bf) - 1));
    json_t *blk = NULL;
    if (z && bbvfl_u256_from_string(z, &base, NULL) == 0 && bbvfl_u256_is_zero(&base) &&
        bbvfl_rpc_get_block(s->rpc, "latest", 0, &blk, NULL) == 0) {
      no_market = json_object_get(blk, "baseFeePerGas") == NULL;
      json_decref(blk);
    }
  }
  if (no_market) {
    /* no EIP-1559 fee market (no base fee in the node's blocks): legacy transactions */
    if (bbvfl_rpc_gas_price(s->rpc, &s->gas_price, err) != 0) {
      bbvfl_wrap(err, "reading fees (the node reports no base fee: %s)",
                 q[0].err.code ? q[0].err.msg : "eth_feeHistory has no baseFeePerGas");
      goto out;
    }
    s->auto_legacy = 1;
    s->fee_time = bbvfl_now();
    rc = 0;
    goto out;
  }
  const char *last = json_string_value(json_array_get(bf, json_array_size(bf) - 1));
  if (!last || bbvfl_u256_from_string(last, &base, err) != 0) {
    bbvfl_fail(err, BBVFL_E_PARSE, "reading fees: eth_feeHistory answer has no usable baseFeePerGas");
    goto out;
  }
  s->auto_legacy = 0;
  if (q[1].err.code == BBVFL_OK && json_is_string(q[1].result)) {
    bbvfl_u256 t;
    if (bbvfl_u256_from_string(json_string_value(q[1].result), &t, NULL) == 0) tip = t;
  }
  bbvfl_u256 twice;
  if (bbvfl_u256_mul_u64(&twice, &base, 2) != 0 || bbvfl_u256_add(&s->max_fee, &twice, &tip) != 0) {
    bbvfl_fail(err, BBVFL_E_PARSE, "reading fees: the base fee is out of range");
    goto out;
  }
  if (s->has_cap && bbvfl_u256_cmp(&s->max_fee, &s->cap) > 0) s->max_fee = s->cap;
  if (bbvfl_u256_cmp(&tip, &s->max_fee) > 0) tip = s->max_fee;
  s->base_fee = base;
  s->tip = tip;
  s->fee_time = bbvfl_now();
  rc = 0;
out:
  bbvfl_rpc_batch_clear(q, 2);
  return rc;
}

/* With a cap: waits (reporting) until the base fee (legacy: the gas price) is at most the cap; the
   fees are then fresh. Without: the cached fees. */
int bbvfl_snd_fees_under_cap(bbvfl_sender *s, bbvfl_err *err) {
  if (bbvfl_snd_fetch_fees(s, 0, err) != 0) return -1;
  if (!s->has_cap) return 0;
  double last = -1;
  for (;;) {
    if (bbvfl_u256_cmp(bbvfl_snd_chain_price(s), &s->cap) <= 0) {
      if (s->fee_waiting)
        bbvfl_snd_report(s, BBVFL_SENDER_FEE_OK, NULL, "%s %.3f gwei is within --max-fee-gwei %.3f again: sending resumes",
               bbvfl_snd_legacy(s) ? "the gas price" : "the base fee", bbvfl_snd_gwei(bbvfl_snd_chain_price(s)), bbvfl_snd_gwei(&s->cap));
      s->fee_waiting = 0;
      return 0;
    }
    double now = bbvfl_now();
    if (!s->fee_waiting || now - last >= 5) {
      bbvfl_snd_report(s, BBVFL_SENDER_FEE_WAIT, NULL, "%s %.3f gwei is above --max-fee-gwei %.3f: waiting for it to fall",
             bbvfl_snd_legacy(s) ? "the gas price" : "the base fee", bbvfl_snd_gwei(bbvfl_snd_chain_price(s)), bbvfl_snd_gwei(&s->cap));
      last = now;
    }
    s->fee_waiting = 1;
    bbvfl_sleep(0.25);
    if (bbvfl_snd_fetch_fees(s, 1, err) != 0) return -1;
  }
}

/* The chain's head, latest and pending nonces of this key, in one batch; the head's time kept. */
int bbvfl_snd_read_chain(bbvfl_sender *s, uint64_t *latest, uint64_t *pending, bbvfl_err *err) {
  char a[43];
  bbvfl_hex_encode(s->key->addr, 20, a);
  bbvfl_rpc_req q[3] = {
      {.method = "eth_blockNumber", .params = json_array()},
      {.method = "eth_getTransactionCount", .params = json_pack("[s,s]", a, "latest")},
      {.method = "eth_getTransactionCount", .params = json_pack("[s,s]", a, "pending")},
  };
  if (bbvfl_rpc_batch(s->rpc, q, 3, err) != 0) return bbvfl_wrap(err, "reading the chain's head and nonces");
  int rc = 0;
  uint64_t head = 0;
  for (int i = 0; i < 3 && rc == 0; i++)
    if (q[i].err.code != BBVFL_OK) {
      if (err) *err = q[i].err;
      rc = bbvfl_wrap(err, "reading the chain's head and nonces");
    }
  if (rc == 0 && (bbvfl_rpc_parse_u64(q[0].result, &head, err) != 0 || bbvfl_rpc_parse_u64(q[1].result, latest, err) != 0 ||
                  bbvfl_rpc_parse_u64(q[2].result, pending, err) != 0))
    rc = bbvfl_wrap(err, "reading the chain's head and nonces");
  bbvfl_rpc_batch_clear(q, 3);
  if (rc == 0 && (head != s->head || s->head_time < 0)) {
    s->head = head;
    s->head_time = bbvfl_now();
  }
  return rc;
}
