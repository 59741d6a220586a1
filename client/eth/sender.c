/* Nonce manager, fees, sign + send + wait, looking after what was sent. See sender.h. */
#include "eth/sender.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/keccak.h"

#define DEFAULT_FEE_TTL_S 5.0
#define DEFAULT_DROP_CHECK_S 5.0
#define DEFAULT_REPRICE_BLOCKS 3
#define ONE_GWEI 1000000000ULL
#define RECENT 64      /* transactions kept (ring by nonce) for re-sending and replacing */
#define VERSIONS 8     /* signed versions (hashes) kept per transaction */
#define CHECK_EVERY_S 0.25
#define NO_BLOCK_S 10.0 /* a stall cause: no new block for this long */

/* One transaction this key sent: the call (to sign it again with other fees), the latest signed
   version's fees and bytes, every version's hash, and what its receipt said. */
typedef struct {
  int used;
  uint64_t nonce;
  bbvfl_txtype type;
  uint8_t to[20];
  int has_to;
  bbvfl_u256 value;
  uint8_t *data;
  size_t len;
  uint64_t gas;
  bbvfl_u256 max_fee, tip, gas_price; /* the latest version's */
  uint8_t *raw;                       /* the latest version's signed bytes */
  size_t raw_len;
  uint8_t hash[VERSIONS][32];         /* oldest first; the latest is hash[nver - 1] */
  unsigned nver;
  uint64_t sent_head;                 /* the chain's head when the latest version was handed in */
  int head_known;                     /* sent_head read after it was handed in (else: at the next check) */
  int mined;                          /* a receipt was seen (and counted in the fees) */
  uint64_t paid_gas;
  bbvfl_u256 paid_wei;
} sent_tx;

struct bbvfl_sender {
  bbvfl_rpc *rpc;
  const bbvfl_key *key;
  uint64_t chain_id;
  bbvfl_txtype type;
  int auto_legacy; /* the node has no base fee: legacy transactions although EIP-1559 was asked */
  int have_nonce;
  uint64_t nonce;
  uint64_t top;    /* one past the highest nonce this sender handed in (0: none) */
  double fee_ttl, drop_check;
  int sync;
  double fee_time; /* bbvfl_now() of the last fetch; < 0: none */
  bbvfl_u256 max_fee, tip, gas_price, base_fee;
  int has_cap;
  bbvfl_u256 cap;
  unsigned reprice_blocks;
  double gas_limit_wait; /* seconds a send waits for the block gas limit to come back */
  int fee_waiting;
  uint64_t head;     /* the latest block seen */
  double head_time;  /* when it last changed (< 0: never read) */
  double last_check;
  int automine;      /* -1 unknown; asked again every 10 s */
  double automine_time;
  bbvfl_sender_status_fn status_fn;
  void *status_ctx;
  uint64_t paid_gas;
  bbvfl_u256 paid_wei;
  sent_tx recent[RECENT];
  uint64_t outages_seen;
};

static double gwei(const bbvfl_u256 *v) {
  bbvfl_u256 q;
  uint64_t rem = bbvfl_u256_divmod_u64(&q, v, ONE_GWEI), whole;
  if (bbvfl_u256_to_u64(&q, &whole) != 0) return 1e30;
  return (double)whole + (double)rem / (double)ONE_GWEI;
}

static int legacy(const bbvfl_sender *s) { return s->type == BBVFL_TX_LEGACY || s->auto_legacy; }

/* The price the chain asks now: the next base fee, or the gas price without a fee market. */
static const bbvfl_u256 *chain_price(const bbvfl_sender *s) { return legacy(s) ? &s->gas_price : &s->base_fee; }

static void report(bbvfl_sender *s, bbvfl_sender_event kind, const sent_tx *t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(bbvfl_sender *s, bbvfl_sender_event kind, const sent_tx *t, const char *fmt, ...) {
  if (!s->status_fn) return;
  bbvfl_sender_status st;
  memset(&st, 0, sizeof st);
  st.kind = kind;
  st.base_fee_gwei = gwei(chain_price(s));
  st.cap_gwei = s->has_cap ? gwei(&s->cap) : 0;
  st.head = s->head;
  if (t) {
    st.nonce = t->nonce;
    if (t->nver) memcpy(st.hash, t->hash[t->nver - 1], 32);
    st.max_fee_gwei = gwei(t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->max_fee);
    st.tip_gwei = t->type == BBVFL_TX_LEGACY ? st.max_fee_gwei : gwei(&t->tip);
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st.msg, sizeof st.msg, fmt, ap);
  va_end(ap);
  s->status_fn(s->status_ctx, &st);
}

static sent_tx *slot_of(bbvfl_sender *s, uint64_t nonce) {
  sent_tx *t = &s->recent[nonce % RECENT];
  return t->used && t->nonce == nonce ? t : NULL;
}

static void slot_free(sent_tx *t) {
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
  for (int i = 0; i < RECENT; i++) slot_free(&s->recent[i]);
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
  return s->has_cap && s->fee_time >= 0 && bbvfl_u256_cmp(chain_price(s), &s->cap) > 0;
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

/* The fees for the next signature: s->base_fee (next block's), s->tip, s->max_fee = min(2 x base
   + tip, cap), tip <= max fee; legacy (asked, or the node has no base fee): s->gas_price. Cached
   for fee_ttl unless force. */
static int fetch_fees(bbvfl_sender *s, int force, bbvfl_err *err) {
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
static int fees_under_cap(bbvfl_sender *s, bbvfl_err *err) {
  if (fetch_fees(s, 0, err) != 0) return -1;
  if (!s->has_cap) return 0;
  double last = -1;
  for (;;) {
    if (bbvfl_u256_cmp(chain_price(s), &s->cap) <= 0) {
      if (s->fee_waiting)
        report(s, BBVFL_SENDER_FEE_OK, NULL, "%s %.3f gwei is within --max-fee-gwei %.3f again: sending resumes",
               legacy(s) ? "the gas price" : "the base fee", gwei(chain_price(s)), gwei(&s->cap));
      s->fee_waiting = 0;
      return 0;
    }
    double now = bbvfl_now();
    if (!s->fee_waiting || now - last >= 5) {
      report(s, BBVFL_SENDER_FEE_WAIT, NULL, "%s %.3f gwei is above --max-fee-gwei %.3f: waiting for it to fall",
             legacy(s) ? "the gas price" : "the base fee", gwei(chain_price(s)), gwei(&s->cap));
      last = now;
    }
    s->fee_waiting = 1;
    bbvfl_sleep(0.25);
    if (fetch_fees(s, 1, err) != 0) return -1;
  }
}

/* The chain's head, latest and pending nonces of this key, in one batch; the head's time kept. */
static int read_chain(bbvfl_sender *s, uint64_t *latest, uint64_t *pending, bbvfl_err *err) {
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

/* Keeps the call and its first signed version (slot nonce % RECENT), before it is handed in: the
   answer may be lost. */
static void remember(bbvfl_sender *s, const bbvfl_tx *tx, const uint8_t *raw, size_t len, const uint8_t hash[32]) {
  sent_tx *t = &s->recent[tx->nonce % RECENT];
  slot_free(t);
  t->raw = malloc(len ? len : 1);
  t->data = malloc(tx->data_len ? tx->data_len : 1);
  if (!t->raw || !t->data) { /* recovery then cannot re-send this one; nothing else depends on it */
    slot_free(t);
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
  tx.type = legacy(s) ? BBVFL_TX_LEGACY : BBVFL_TX_EIP1559;
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
        report(s, BBVFL_SENDER_GAS_LIMIT_OK, NULL, "the block gas limit %" PRIu64 " holds a transaction of %" PRIu64
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
      report(s, BBVFL_SENDER_GAS_LIMIT_WAIT, NULL, "the block gas limit %" PRIu64 " is below this transaction's gas %"
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
  const int was_legacy = legacy(s);
  const bbvfl_u256 fee = was_legacy ? s->gas_price : s->max_fee;
  bbvfl_u256 cost, balance;
  if (bbvfl_u256_mul_u64(&cost, &fee, gas) == 0 && (!value || bbvfl_u256_add(&cost, &cost, value) == 0) &&
      bbvfl_rpc_balance(s->rpc, s->key->addr, &balance, NULL) == 0 && bbvfl_u256_cmp(&balance, &cost) < 0)
    return BBVFL_NODE_INSUFFICIENT_FUNDS;
  if (fetch_fees(s, 1, NULL) == 0) {
    if (legacy(s) != was_legacy) return BBVFL_NODE_UNDERPRICED; /* the fee market is not what was signed for */
    if (bbvfl_u256_cmp(chain_price(s), &fee) > 0) return BBVFL_NODE_UNDERPRICED; /* base fee above max fee */
    const bbvfl_u256 now = legacy(s) ? s->gas_price : s->max_fee;
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
  if (fees_under_cap(s, err) != 0) return -1;
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
      /* diagnose left the chain's fees in the cache; with a cap, wait until they are under it */
      if (fees_under_cap(s, err) != 0) return -1;
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
      sent_tx *t = slot_of(s, s->nonce);
      if (t && !memcmp(t->hash[t->nver - 1], hash, 32)) slot_free(t); /* never taken: nothing to look after */
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
  if (send_keep(s, to, value, data, len, gas_limit, hash, &raw, &raw_len, NULL, 0, err) != 0)
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
static int reprice(bbvfl_sender *s, sent_tx *t, bbvfl_err *err) {
  if (fees_under_cap(s, err) != 0) return -1;
  if (fetch_fees(s, 1, err) != 0) return -1;
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
    if (legacy(s)) fresh_max = fresh_tip = s->gas_price;
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
  report(s, BBVFL_SENDER_REPRICED, t, "transaction %" PRIu64 " unmined since block %" PRIu64
         ": replaced with max fee %.3f gwei, tip %.3f gwei (base fee %.3f gwei)", t->nonce, s->head,
         gwei(t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->max_fee),
         gwei(t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->tip), gwei(chain_price(s)));
  return 1;
}

/* Hands t's latest signed bytes in again; a refusal (its fees no longer valid, in the node's
   words, which are not read) re-signs it with fresh fees. 1 handed in, 0 not now, -1 error. */
static int resend(bbvfl_sender *s, sent_tx *t, bbvfl_err *err) {
  uint8_t h[32];
  bbvfl_err e = {0};
  if (bbvfl_rpc_send_raw(s->rpc, t->raw, t->raw_len, h, &e) == 0) {
    t->sent_head = s->head;
    t->head_known = 1;
    report(s, BBVFL_SENDER_RESENT, t, "transaction %" PRIu64 " was no longer known to the node: sent the same bytes again",
           t->nonce);
    return 1;
  }
  if (!bbvfl_err_node_refused(&e)) {
    if (err) *err = e;
    return bbvfl_wrap(err, "re-sending transaction %" PRIu64 " that the node lost", t->nonce);
  }
  int k = reprice(s, t, err);
  if (k == 1)
    report(s, BBVFL_SENDER_RESENT, t, "transaction %" PRIu64 " was no longer known to the node and its fees no longer "
           "valid: signed again with fresh fees", t->nonce);
  return k;
}

/* Counts a receipt of t (or of a transaction not in the ring: t NULL) into the fees paid. */
static void note_receipt(bbvfl_sender *s, sent_tx *t, const bbvfl_receipt *rc) {
  bbvfl_u256 wei = bbvfl_u256_from_u64(rc->effective_gas_price);
  if (bbvfl_u256_mul_u64(&wei, &wei, rc->gas_used) != 0) wei = bbvfl_u256_from_u64(0);
  if (t && t->mined) {
    s->paid_gas -= t->paid_gas;
    bbvfl_u256_sub(&s->paid_wei, &s->paid_wei, &t->paid_wei);
  }
  s->paid_gas += rc->gas_used;
  bbvfl_u256_add(&s->paid_wei, &s->paid_wei, &wei);
  if (t) {
    t->mined = 1;
    t->paid_gas = rc->gas_used;
    t->paid_wei = wei;
  }
}

static int check(bbvfl_sender *s, int force, unsigned *acted, bbvfl_err *err) {
  if (acted) *acted = 0;
  if (s->top == 0) return 0; /* nothing sent */
  double now = bbvfl_now();
  if (!force && now - s->last_check < CHECK_EVERY_S) return 0;
  s->last_check = now;
  uint64_t latest, pending;
  if (read_chain(s, &latest, &pending, err) != 0) return -1;
  unsigned n = 0;
  for (uint64_t k = latest; k < s->top; k++) {
    sent_tx *t = slot_of(s, k);
    if (!t) continue; /* not this process's, or too old to be kept */
    int lost = k >= pending; /* neither mined nor in the node's pool */
    if (!t->head_known) {
      t->sent_head = s->head;
      t->head_known = 1;
    }
    if (t->mined) {
      /* it had a receipt and the chain's nonce is behind it again: a reorg took it out */
      s->paid_gas -= t->paid_gas;
      bbvfl_u256_sub(&s->paid_wei, &s->paid_wei, &t->paid_wei);
      t->mined = 0;
      t->paid_gas = 0;
      t->paid_wei = bbvfl_u256_from_u64(0);
      report(s, BBVFL_SENDER_VANISHED, t, "transaction %" PRIu64 " had a receipt but the chain no longer has it (a reorg)",
             t->nonce);
    }
    int k2 = 0;
    if (lost) {
      k2 = resend(s, t, err);
    } else if (s->reprice_blocks && s->head >= t->sent_head + s->reprice_blocks) {
      /* in the pool and unmined for reprice_blocks blocks: the next in line, or one whose max fee
         the base fee has passed, is replaced (a later one waiting behind a stuck one is not) */
      if (fetch_fees(s, 0, err) != 0) return -1;
      const bbvfl_u256 *signed_fee = t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->max_fee;
      if (k == latest || bbvfl_u256_cmp(chain_price(s), signed_fee) > 0) k2 = reprice(s, t, err);
    }
    if (k2 < 0) return -1;
    n += (unsigned)k2;
  }
  if (acted) *acted = n;
  return 0;
}

int bbvfl_sender_check(bbvfl_sender *s, unsigned *acted, bbvfl_err *err) { return check(s, 0, acted, err); }

int bbvfl_sender_recover(bbvfl_sender *s, unsigned *resent, bbvfl_err *err) {
  if (resent) *resent = 0;
  uint64_t o = bbvfl_rpc_outages(s->rpc);
  if (o == s->outages_seen) return 0;
  if (check(s, 1, resent, err) != 0) return bbvfl_wrap(err, "checking the account's transactions after the node came back");
  s->outages_seen = o;
  s->have_nonce = 0;
  return 0;
}

int bbvfl_sender_stall_cause(bbvfl_sender *s, char *out, size_t cap) {
  out[0] = 0;
  uint64_t latest, pending;
  bbvfl_err e = {0};
  if (read_chain(s, &latest, &pending, &e) != 0) {
    snprintf(out, cap, "the node does not answer: %s", e.msg);
    return 1;
  }
  double quiet = bbvfl_now() - s->head_time;
  if (quiet >= NO_BLOCK_S) {
    snprintf(out, cap, "no new block for %.0f s (the chain's head is block %" PRIu64 "): is the node mining?", quiet,
             s->head);
    return 1;
  }
  if (fetch_fees(s, 1, NULL) == 0 && s->has_cap && bbvfl_u256_cmp(chain_price(s), &s->cap) > 0) {
    snprintf(out, cap, "%s %.3f gwei is above --max-fee-gwei %.3f: this client is waiting for it to fall",
             legacy(s) ? "the gas price" : "the base fee", gwei(chain_price(s)), gwei(&s->cap));
    return 1;
  }
  if (latest >= s->top) return 0;
  sent_tx *t = slot_of(s, latest);
  if (pending <= latest) {
    snprintf(out, cap, "a nonce gap: the chain's nonce for this key is %" PRIu64 " and the node's pool does not have "
             "transaction %" PRIu64 "%s", latest, latest, t ? "" : " (not one this process keeps)");
    return 1;
  }
  if (t) {
    char h[67];
    bbvfl_hex_encode(t->hash[t->nver - 1], 32, h);
    const bbvfl_u256 *fee = t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->max_fee;
    snprintf(out, cap, "transaction %" PRIu64 " (%s, %u version%s) not included since block %" PRIu64 ": max fee %.3f gwei, "
             "tip %.3f gwei, %s %.3f gwei", t->nonce, h, t->nver, t->nver == 1 ? "" : "s", t->sent_head, gwei(fee),
             gwei(t->type == BBVFL_TX_LEGACY ? fee : &t->tip), legacy(s) ? "gas price" : "base fee",
             gwei(chain_price(s)));
    return 1;
  }
  snprintf(out, cap, "transaction %" PRIu64 " of this key is in the node's pool and not included", latest);
  return 1;
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

/* One look for a receipt of any of t's versions (t NULL: of hash only). 1 found, 0 not, -1 error. */
static int any_receipt(bbvfl_sender *s, sent_tx *t, const uint8_t hash[32], bbvfl_receipt *out, bbvfl_err *err) {
  if (!t || t->nver <= 1) return bbvfl_rpc_receipt(s->rpc, t ? t->hash[0] : hash, out, err);
  bbvfl_rpc_req q[VERSIONS];
  memset(q, 0, sizeof q);
  for (unsigned i = 0; i < t->nver; i++) {
    q[i].method = "eth_getTransactionReceipt";
    q[i].params = json_pack("[o]", bbvfl_json_hex(t->hash[i], 32));
  }
  memset(out, 0, sizeof *out);
  if (bbvfl_rpc_batch(s->rpc, q, t->nver, err) != 0) return bbvfl_wrap(err, "reading receipts");
  int rc = 0;
  for (unsigned i = 0; i < t->nver && rc == 0; i++) {
    if (q[i].err.code != BBVFL_OK) {
      if (err) *err = q[i].err;
      rc = -1;
    } else if (q[i].result && !json_is_null(q[i].result)) {
      rc = bbvfl_rpc_parse_receipt(q[i].result, out, err) == 0 ? 1 : -1;
      if (rc < 0) bbvfl_receipt_clear(out);
    }
  }
  bbvfl_rpc_batch_clear(q, t->nver);
  return rc;
}

/* Waits for the receipt of a sent transaction (nonce; hash and raw when it is not in the ring):
   polls with a short growing backoff, and about every CHECK_EVERY_S looks after this key's
   transactions (check: re-sends what the node lost, replaces what is overdue). Without a slot,
   every drop_check seconds asks whether the node still knows hash and hands raw in again if not.
   A timeout names the stall's cause. */
static int wait_mined(bbvfl_sender *s, uint64_t nonce, const uint8_t hash[32], const uint8_t *raw, size_t raw_len,
                      double timeout_s, bbvfl_receipt *out, bbvfl_err *err) {
  double t0 = bbvfl_now(), delay = 0.0002, last_drop = t0;
  for (;;) {
    sent_tx *t = slot_of(s, nonce);
    if (t && memcmp(t->hash[0], hash, 32) != 0) {
      int mine = 0; /* the slot is this transaction's when one of its versions is hash */
      for (unsigned i = 0; i < t->nver; i++) mine |= !memcmp(t->hash[i], hash, 32);
      if (!mine) t = NULL;
    }
    bbvfl_err e = {0};
    int k = any_receipt(s, t, hash, out, &e);
    if (k < 0) {
      if (err) *err = e;
      return bbvfl_wrap(err, "waiting for the receipt");
    }
    if (k == 1) {
      note_receipt(s, t, out);
      if (out->block_number > s->head) s->head = out->block_number;
      return 0;
    }
    if (check(s, 0, NULL, &e) != 0) {
      if (err) *err = e;
      return bbvfl_wrap(err, "looking after the transactions in flight");
    }
    double now = bbvfl_now();
    if (!t && raw && now - last_drop >= s->drop_check) {
      /* not in the ring: dropped from the pool? Then hand the same bytes in again */
      last_drop = now;
      int known = bbvfl_rpc_get_tx(s->rpc, hash, NULL, &e);
      if (known < 0) {
        if (err) *err = e;
        return bbvfl_wrap(err, "checking whether the node still knows the transaction");
      }
      uint8_t h2[32];
      if (known == 0 && bbvfl_rpc_send_raw(s->rpc, raw, raw_len, h2, &e) != 0) {
        if (err) *err = e;
        return bbvfl_wrap(err, "re-sending a transaction the node had dropped");
      }
    }
    if (now - t0 >= timeout_s) {
      char h[67], why[400];
      bbvfl_hex_encode(hash, 32, h);
      if (!bbvfl_sender_stall_cause(s, why, sizeof why))
        snprintf(why, sizeof why, "the transaction may still be mined later");
      return bbvfl_fail(err, BBVFL_E_TIMEOUT, "no receipt for transaction %s (nonce %" PRIu64 ") after %.1f s: %s", h,
                        nonce, timeout_s, why);
    }
    double left = timeout_s - (now - t0);
    bbvfl_sleep(delay < left ? delay : left);
    delay *= 2;
    if (delay > 0.02) delay = 0.02;
  }
}

int bbvfl_sender_confirm(bbvfl_sender *s, bbvfl_receipt *rc, unsigned confirmations, double timeout_s,
                         bbvfl_err *err) {
  if (confirmations == 0) return 0;
  if (timeout_s <= 0) timeout_s = 120;
  double t0 = bbvfl_now();
  /* the transaction's slot, by any of its versions' hashes */
  sent_tx *t = NULL;
  uint64_t nonce = 0;
  for (int i = 0; i < RECENT && !t; i++)
    for (unsigned v = 0; v < s->recent[i].nver; v++)
      if (s->recent[i].used && !memcmp(s->recent[i].hash[v], rc->hash, 32)) {
        t = &s->recent[i];
        nonce = t->nonce;
      }
  uint8_t hash[32];
  memcpy(hash, rc->hash, 32);
  for (;;) {
    uint64_t head;
    if (bbvfl_rpc_block_number(s->rpc, &head, err) != 0) return bbvfl_wrap(err, "waiting for confirmations");
    if (head >= rc->block_number + confirmations) {
      /* deep enough: is the receipt still there, in the block now canonical at its height? */
      bbvfl_receipt now;
      int k = any_receipt(s, t && slot_of(s, nonce) == t ? t : NULL, hash, &now, err);
      if (k < 0) return bbvfl_wrap(err, "re-reading a receipt for its confirmations");
      int same = 0;
      if (k == 1 && now.block_number == rc->block_number && now.has_block_hash && rc->has_block_hash &&
          !memcmp(now.block_hash, rc->block_hash, 32)) {
        char num[24];
        json_t *b = NULL;
        snprintf(num, sizeof num, "0x%" PRIx64, rc->block_number);
        if (bbvfl_rpc_get_block(s->rpc, num, 0, &b, err) != 0) {
          bbvfl_receipt_clear(&now);
          return bbvfl_wrap(err, "reading block %" PRIu64 " for a confirmation", rc->block_number);
        }
        uint8_t bh[32];
        const char *hs = json_string_value(json_object_get(b, "hash"));
        same = hs && bbvfl_hex_decode_fixed(hs, bh, 32, NULL) == 0 && !memcmp(bh, rc->block_hash, 32);
        json_decref(b);
      }
      if (same) {
        bbvfl_receipt_clear(&now);
        return 0;
      }
      if (k == 1 && now.has_block_hash) {
        /* mined again elsewhere (a reorg): confirm that one */
        note_receipt(s, t && slot_of(s, nonce) == t ? t : NULL, &now);
        bbvfl_receipt_clear(rc);
        *rc = now;
        if (rc->status == 0)
          return bbvfl_fail(err, BBVFL_E_REVERT, "a transaction re-mined after a reorg reverted in block %" PRIu64,
                            rc->block_number);
        continue;
      }
      bbvfl_receipt_clear(&now);
      /* gone: the sender hands it in again; wait for its new receipt */
      if (!t) return bbvfl_fail(err, BBVFL_E_STATE, "a confirmed step's transaction vanished (a reorg) and is no longer "
                                "kept by this sender: it cannot be re-sent");
      bbvfl_receipt again;
      double left = timeout_s - (bbvfl_now() - t0);
      if (left <= 0) left = 0.001;
      if (wait_mined(s, nonce, hash, NULL, 0, left, &again, err) != 0) return -1;
      bbvfl_receipt_clear(rc);
      *rc = again;
      if (rc->status == 0)
        return bbvfl_fail(err, BBVFL_E_REVERT, "a transaction re-sent after a reorg reverted in block %" PRIu64,
                          rc->block_number);
      continue;
    }
    if (check(s, 0, NULL, err) != 0) return -1;
    if (bbvfl_now() - t0 > timeout_s) {
      char why[400];
      if (!bbvfl_sender_stall_cause(s, why, sizeof why)) snprintf(why, sizeof why, "blocks are slow");
      return bbvfl_fail(err, BBVFL_E_TIMEOUT, "waiting for %u confirmations of block %" PRIu64 " (head %" PRIu64
                        ") after %.0f s: %s", confirmations, rc->block_number, head, timeout_s, why);
    }
    bbvfl_sleep(0.05);
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
  if (!s->have_nonce && fetch_nonce(s, err) != 0) {
    bbvfl_pending_clear(p);
    return -1;
  }
  if (send_keep(s, to, value, data, len, gas, p->hash, &p->raw, &p->raw_len, NULL, 0, err) != 0) {
    bbvfl_pending_clear(p);
    return -1;
  }
  p->nonce = s->nonce - 1;
  return 0;
}

int bbvfl_sender_wait_tracked(bbvfl_sender *s, bbvfl_pending *p, double timeout_s, bbvfl_receipt *out,
                              bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (!p->raw) return bbvfl_fail(err, BBVFL_E_ARG, "sender: no transaction to wait for");
  if (timeout_s <= 0) timeout_s = 60;
  if (wait_mined(s, p->nonce, p->hash, p->raw, p->raw_len, timeout_s, out, err) != 0) return -1;
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

/* 1 when the node mines a block for each transaction (anvil's automine, asked every 10 s; a node
   without the method: 0): only then is eth_sendRawTransactionSync used, which would hold the
   wait in the node while this sender should be looking after its transactions. */
static int automines(bbvfl_sender *s) {
  double now = bbvfl_now();
  if (s->automine >= 0 && now - s->automine_time < 10) return s->automine;
  json_t *res = NULL;
  bbvfl_err e = {0};
  s->automine = bbvfl_rpc_call(s->rpc, "anvil_getAutomine", json_array(), &res, &e) == 0 && json_is_true(res);
  json_decref(res);
  s->automine_time = now;
  return s->automine;
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
  /* a node known to lack eth_sendRawTransactionSync, or one with a block time: send the ordinary
     way, so that the wait below looks after the transaction */
  int sync = s->sync && bbvfl_rpc_has_sync(s->rpc) && automines(s);
  if (!s->have_nonce && fetch_nonce(s, err) != 0) return -1;
  uint64_t tried = s->nonce;
  if (send_keep(s, to, value, data, len, gas, hash, &raw, &raw_len, sync ? out : NULL, timeout_s, err) != 0) {
    bbvfl_receipt_clear(out);
    sent_tx *t = slot_of(s, tried);
    if (bbvfl_rpc_outages(s->rpc) == s->outages_seen || !t) return -1;
    /* the node went away and came back during this send: restarted from a saved state it may have
       lost earlier transactions of ours (then this one waits behind a nonce gap) and this one's
       answer. Hand in again what it no longer has, this one included, then wait for its receipt. */
    bbvfl_err e2 = {0};
    if (bbvfl_sender_recover(s, NULL, &e2) != 0) {
      if (err) *err = e2;
      return -1;
    }
    t = slot_of(s, tried);
    if (!t) return bbvfl_fail(err, BBVFL_E_STATE, "sender: transaction %" PRIu64 " was lost in a node restart", tried);
    raw = malloc(t->raw_len);
    if (!raw) return bbvfl_fail(err, BBVFL_E_NOMEM, "sender: out of memory");
    memcpy(raw, t->raw, t->raw_len);
    raw_len = t->raw_len;
    memcpy(hash, t->hash[0], 32);
    if (err) memset(err, 0, sizeof *err);
    sync = 0;
  } else {
    tried = s->nonce - 1; /* the nonce it went out with (a "nonce too low" answer re-read it) */
  }
  int rc;
  if (sync) {
    note_receipt(s, slot_of(s, tried), out);
    rc = 0;
  } else {
    rc = wait_mined(s, tried, hash, raw, raw_len, timeout_s, out, err);
  }
  if (rc == 0 && out->status == 0) {
    explain_revert(s, out, to, value, data, len, gas, err);
    free(raw);
    return -1; /* out keeps the receipt */
  }
  free(raw);
  if (rc != 0) bbvfl_receipt_clear(out);
  return rc;
}
