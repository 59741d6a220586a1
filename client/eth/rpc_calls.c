/* The typed JSON-RPC calls: chain state, fees, calls, transactions sent and tracked, logs through
 * one filter type. See rpc.h. */
#include "eth/rpc.h"

#include <curl/curl.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bbvfl_errors.h" /* generated from abi/: the contracts' custom errors */
#include "common/fsutil.h"
#include "eth/abi.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/rpc_int.h"

/* ---------------------------------------------------------------- typed calls */

static int call_u64(bbvfl_rpc *r, const char *method, json_t *params, uint64_t *out,
                    bbvfl_err *err) {
  json_t *res;
  if (bbvfl_rpc_call(r, method, params, &res, err) != 0) return -1;
  int rc = bbvfl_rpc_parse_u64(res, out, err);
  json_decref(res);
  return rc ? bbvfl_wrap(err, "%s", method) : 0;
}

static int call_u256(bbvfl_rpc *r, const char *method, json_t *params, bbvfl_u256 *out,
                     bbvfl_err *err) {
  json_t *res;
  if (bbvfl_rpc_call(r, method, params, &res, err) != 0) return -1;
  int rc = bbvfl_rpc_parse_u256(res, out, err);
  json_decref(res);
  return rc ? bbvfl_wrap(err, "%s", method) : 0;
}

int bbvfl_rpc_chain_id(bbvfl_rpc *r, uint64_t *out, bbvfl_err *err) {
  return call_u64(r, "eth_chainId", NULL, out, err);
}

int bbvfl_rpc_block_number(bbvfl_rpc *r, uint64_t *out, bbvfl_err *err) {
  return call_u64(r, "eth_blockNumber", NULL, out, err);
}

int bbvfl_rpc_nonce(bbvfl_rpc *r, const uint8_t addr[20], const char *block, uint64_t *out,
                    bbvfl_err *err) {
  return call_u64(r, "eth_getTransactionCount",
                  json_pack("[o,s]", bbvfl_json_hex(addr, 20), block ? block : "latest"), out,
                  err);
}

int bbvfl_rpc_balance(bbvfl_rpc *r, const uint8_t addr[20], bbvfl_u256 *out, bbvfl_err *err) {
  return call_u256(r, "eth_getBalance", json_pack("[o,s]", bbvfl_json_hex(addr, 20), "latest"),
                   out, err);
}

int bbvfl_rpc_gas_price(bbvfl_rpc *r, bbvfl_u256 *out, bbvfl_err *err) {
  return call_u256(r, "eth_gasPrice", NULL, out, err);
}

int bbvfl_rpc_max_priority_fee(bbvfl_rpc *r, bbvfl_u256 *out, bbvfl_err *err) {
  return call_u256(r, "eth_maxPriorityFeePerGas", NULL, out, err);
}

int bbvfl_rpc_fee_history(bbvfl_rpc *r, unsigned blocks, double percentile,
                          bbvfl_u256 *base_fee_next, bbvfl_u256 *reward, bbvfl_err *err) {
  if (blocks == 0 || blocks > 1024 || !(percentile >= 0 && percentile <= 100))
    return bbvfl_fail(err, BBVFL_E_ARG, "eth_feeHistory: need 1..1024 blocks and a percentile in 0..100");
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_feeHistory",
                     json_pack("[o,s,[f]]", bbvfl_json_quantity(blocks), "latest", percentile),
                     &res, err) != 0)
    return -1;
  json_t *base = json_object_get(res, "baseFeePerGas");
  json_t *rew = json_object_get(res, "reward");
  int rc = -1;
  if (!json_is_array(base) || json_array_size(base) == 0) {
    bbvfl_fail(err, BBVFL_E_PARSE, "eth_feeHistory: no baseFeePerGas array in the answer");
    goto out;
  }
  if (bbvfl_rpc_parse_u256(json_array_get(base, json_array_size(base) - 1), base_fee_next, err) != 0) {
    bbvfl_wrap(err, "eth_feeHistory baseFeePerGas");
    goto out;
  }
  memset(reward, 0, sizeof *reward);
  if (json_is_array(rew) && json_array_size(rew) > 0) {
    /* median of the per-block percentile tips (as u64: tips beyond 2^64 wei are not real) */
    size_t n = json_array_size(rew);
    uint64_t *v = calloc(n, sizeof *v);
    if (!v) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "eth_feeHistory: out of memory");
      goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      uint64_t x;
      if (bbvfl_rpc_parse_u64(json_array_get(json_array_get(rew, i), 0), &x, NULL) == 0) v[k++] = x;
    }
    for (size_t i = 1; i < k; i++)
      for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
        uint64_t t = v[j];
        v[j] = v[j - 1];
        v[j - 1] = t;
      }
    if (k) *reward = bbvfl_u256_from_u64(v[k / 2]);
    free(v);
  }
  rc = 0;
out:
  json_decref(res);
  return rc;
}

static json_t *call_object(const uint8_t *from, const uint8_t *to, const bbvfl_u256 *value,
                           const uint8_t *data, size_t len) {
  json_t *o = json_object();
  if (!o) return NULL;
  int bad = 0;
  if (from) bad |= json_object_set_new(o, "from", bbvfl_json_hex(from, 20));
  if (to) bad |= json_object_set_new(o, "to", bbvfl_json_hex(to, 20));
  if (value) bad |= json_object_set_new(o, "value", bbvfl_rpc_json_u256(value));
  if (len) bad |= json_object_set_new(o, "input", bbvfl_json_hex(data, len));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

int bbvfl_rpc_estimate_gas(bbvfl_rpc *r, const uint8_t *from, const uint8_t *to,
                           const bbvfl_u256 *value, const uint8_t *data, size_t len,
                           uint64_t *gas, bbvfl_err *err) {
  json_t *o = call_object(from, to, value, data, len);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_estimateGas: out of memory");
  return call_u64(r, "eth_estimateGas", json_pack("[o]", o), gas, err);
}

int bbvfl_rpc_get_block(bbvfl_rpc *r, const char *block, int full_txs, json_t **out,
                        bbvfl_err *err) {
  *out = NULL;
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_getBlockByNumber",
                     json_pack("[s,b]", block ? block : "latest", full_txs), &res, err) != 0)
    return -1;
  if (!json_is_object(res)) {
    json_decref(res);
    return bbvfl_fail(err, BBVFL_E_STATE, "eth_getBlockByNumber: block %s does not exist",
                      block ? block : "latest");
  }
  *out = res;
  return 0;
}

int bbvfl_rpc_get_tx(bbvfl_rpc *r, const uint8_t hash[32], json_t **out, bbvfl_err *err) {
  if (out) *out = NULL;
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_getTransactionByHash", json_pack("[o]", bbvfl_json_hex(hash, 32)),
                     &res, err) != 0)
    return -1;
  if (json_is_null(res)) {
    json_decref(res);
    return 0;
  }
  if (out) *out = res;
  else json_decref(res);
  return 1;
}

static int already_sent(bbvfl_rpc *r, const bbvfl_err *e, const uint8_t hash[32]);

int bbvfl_rpc_send_raw(bbvfl_rpc *r, const uint8_t *raw, size_t len, uint8_t hash[32],
                       bbvfl_err *err) {
  bbvfl_keccak256(raw, len, hash);
  json_t *res;
  bbvfl_err e = {0};
  if (bbvfl_rpc_call(r, "eth_sendRawTransaction", json_pack("[o]", bbvfl_json_hex(raw, len)),
                     &res, &e) == 0) {
    uint8_t got[32];
    int ok = json_is_string(res) && bbvfl_hex_decode_fixed(json_string_value(res), got, 32, NULL) == 0;
    json_decref(res);
    if (!ok)
      return bbvfl_fail(err, BBVFL_E_PARSE, "eth_sendRawTransaction: the answer is not a 32-byte hash");
    if (memcmp(got, hash, 32) != 0)
      return bbvfl_fail(err, BBVFL_E_RPC,
                        "eth_sendRawTransaction: the node reports a different transaction hash "
                        "than keccak256 of the bytes sent");
    return 0;
  }
  /* The node may already have these very bytes (e.g. our earlier attempt got through but the
   * answer was lost): same bytes, same hash, so that is success. */
  if (already_sent(r, &e, hash)) return 0;
  if (err) *err = e;
  return -1;
}

/* A refused send whose very bytes the node has (pending or mined: an earlier attempt got
 * through, or the node "already knows" them, in whatever words) is sent. Asked by the hash,
 * never read from the refusal's message. */
static int already_sent(bbvfl_rpc *r, const bbvfl_err *e, const uint8_t hash[32]) {
  if (!bbvfl_err_node_refused(e) || bbvfl_err_node_refused_is(e, BBVFL_NODE_METHOD_NOT_FOUND)) return 0;
  bbvfl_err e2 = {0};
  return bbvfl_rpc_get_tx(r, hash, NULL, &e2) == 1;
}

int bbvfl_rpc_send_raw_sync(bbvfl_rpc *r, const uint8_t *raw, size_t len, double timeout_s,
                            bbvfl_receipt *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (timeout_s <= 0) timeout_s = 60;
  uint8_t hash[32];
  uint64_t outages0 = r->outages;
  if (r->no_sync) {
    if (bbvfl_rpc_send_raw(r, raw, len, hash, err) != 0) return -1;
    return bbvfl_rpc_wait_receipt(r, hash, timeout_s, out, err);
  }
  bbvfl_keccak256(raw, len, hash);
  json_t *res;
  bbvfl_err e = {0};
  /* Only the raw bytes: the optional timeout argument of EIP-7966 is not accepted everywhere
   * (anvil 1.7 refuses it); the HTTP timeout bounds the wait. */
  if (bbvfl_rpc_call(r, "eth_sendRawTransactionSync", json_pack("[o]", bbvfl_json_hex(raw, len)),
                     &res, &e) == 0) {
    int rc = bbvfl_rpc_parse_receipt(res, out, err);
    json_decref(res);
    if (rc != 0) {
      bbvfl_receipt_clear(out);
      return bbvfl_wrap(err, "eth_sendRawTransactionSync");
    }
    if (memcmp(out->hash, hash, 32) != 0) {
      bbvfl_receipt_clear(out);
      return bbvfl_fail(err, BBVFL_E_RPC,
                        "eth_sendRawTransactionSync: the receipt is for another transaction");
    }
    return 0;
  }
  if (bbvfl_err_node_refused_is(&e, BBVFL_NODE_METHOD_NOT_FOUND)) {
    r->no_sync = 1; /* and send the ordinary way */
    if (bbvfl_rpc_send_raw(r, raw, len, hash, err) != 0) return -1;
    return bbvfl_rpc_wait_receipt(r, hash, timeout_s, out, err);
  }
  /* Sent earlier (a retried request whose first answer was lost), or the node gave up waiting
   * while the transaction is in its pool: fetch the receipt the ordinary way. */
  /* the node restarted during this call: it may have lost earlier transactions of this account, so
     this one may wait behind a nonce gap; the caller (bbvfl_sender_transact) re-sends those first */
  if (r->outages != outages0)
    return bbvfl_fail(err, BBVFL_E_RPC, "eth_sendRawTransactionSync: the node at %s restarted during the call (%s)",
                      r->url, e.msg);
  if (already_sent(r, &e, hash)) return bbvfl_rpc_wait_receipt(r, hash, timeout_s, out, err);
  /* Refused and not taken. Some nodes refuse a method they lack with a generic code: the
   * ordinary send tells that apart from a refusal of the transaction (which it repeats, with the
   * node's answer to the ordinary method for the caller to act on). */
  if (bbvfl_err_node_refused(&e)) {
    if (bbvfl_rpc_send_raw(r, raw, len, hash, err) != 0) return -1;
    return bbvfl_rpc_wait_receipt(r, hash, timeout_s, out, err);
  }
  if (err) *err = e;
  return -1;
}

int bbvfl_rpc_eth_call_value(bbvfl_rpc *r, const uint8_t *from, const uint8_t to[20],
                             const bbvfl_u256 *value, const uint8_t *data, size_t len,
                             const char *block, uint8_t **out, size_t *out_len, bbvfl_err *err) {
  *out = NULL;
  *out_len = 0;
  json_t *o = call_object(from, to, value, data, len);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_call: out of memory");
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_call", json_pack("[o,s]", o, block ? block : "latest"), &res, err) != 0)
    return -1;
  const char *s = json_string_value(res);
  int rc;
  if (!s) rc = bbvfl_fail(err, BBVFL_E_PARSE, "eth_call: the answer is not a hex string");
  else if (bbvfl_hex_decode_alloc(s, out, out_len, err) != 0) rc = bbvfl_wrap(err, "eth_call result");
  else rc = 0;
  json_decref(res);
  return rc;
}

int bbvfl_rpc_eth_call(bbvfl_rpc *r, const uint8_t *from, const uint8_t to[20],
                       const uint8_t *data, size_t len, const char *block, uint8_t **out,
                       size_t *out_len, bbvfl_err *err) {
  return bbvfl_rpc_eth_call_value(r, from, to, NULL, data, len, block, out, out_len, err);
}

int bbvfl_rpc_receipt(bbvfl_rpc *r, const uint8_t hash[32], bbvfl_receipt *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_getTransactionReceipt", json_pack("[o]", bbvfl_json_hex(hash, 32)),
                     &res, err) != 0)
    return -1;
  if (json_is_null(res)) {
    json_decref(res);
    return 0;
  }
  int rc = bbvfl_rpc_parse_receipt(res, out, err);
  json_decref(res);
  if (rc != 0) {
    bbvfl_receipt_clear(out);
    return -1;
  }
  return 1;
}

int bbvfl_rpc_wait_receipt(bbvfl_rpc *r, const uint8_t hash[32], double timeout_s,
                           bbvfl_receipt *out, bbvfl_err *err) {
  if (timeout_s <= 0) timeout_s = 60;
  double t0 = bbvfl_now(), delay = 0.0002;
  for (;;) {
    int rc = bbvfl_rpc_receipt(r, hash, out, err);
    if (rc < 0) return -1;
    if (rc == 1) return 0;
    double left = timeout_s - (bbvfl_now() - t0);
    if (left <= 0) {
      char h[67];
      bbvfl_hex_encode(hash, 32, h);
      return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                        "no receipt for transaction %s after %.1f s (is the node mining?)", h,
                        timeout_s);
    }
    bbvfl_sleep(delay < left ? delay : left);
    delay *= 2;
    if (delay > 0.02) delay = 0.02;
  }
}

void bbvfl_log_filter_init(bbvfl_log_filter *f, uint64_t from_block, uint64_t to_block) {
  memset(f, 0, sizeof *f);
  f->from_block = from_block;
  f->to_block = to_block;
}

int bbvfl_log_filter_address(bbvfl_log_filter *f, const uint8_t address[20], bbvfl_err *err) {
  if (f->naddresses >= BBVFL_LOGF_MAX_ADDRESSES)
    return bbvfl_fail(err, BBVFL_E_ARG, "log filter: more than %d addresses", BBVFL_LOGF_MAX_ADDRESSES);
  memcpy(f->addresses[f->naddresses++], address, 20);
  return 0;
}

int bbvfl_log_filter_topic0(bbvfl_log_filter *f, const uint8_t topic[32], bbvfl_err *err) {
  if (f->ntopic0 >= BBVFL_LOGF_MAX_TOPIC0)
    return bbvfl_fail(err, BBVFL_E_ARG, "log filter: more than %d events", BBVFL_LOGF_MAX_TOPIC0);
  memcpy(f->topic0[f->ntopic0++], topic, 32);
  return 0;
}

void bbvfl_log_filter_topic1(bbvfl_log_filter *f, const uint8_t topic[32]) {
  f->has_topic1 = 1;
  memcpy(f->topic1, topic, 32);
}

/* One entry of the filter's address or topic position: a single value stays a string, several
   become an array ("one of"). */
static json_t *logf_one_of(const uint8_t *vals, size_t n, size_t w) {
  if (n == 1) return bbvfl_json_hex(vals, w);
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++)
    if (json_array_append_new(a, bbvfl_json_hex(vals + i * w, w))) {
      json_decref(a);
      return NULL;
    }
  return a;
}

json_t *bbvfl_log_filter_json(const bbvfl_log_filter *f) {
  json_t *o = json_object();
  if (!o) return NULL;
  int bad = 0;
  if (f->naddresses) bad |= json_object_set_new(o, "address", logf_one_of(&f->addresses[0][0], f->naddresses, 20));
  bad |= json_object_set_new(o, "fromBlock", bbvfl_json_quantity(f->from_block));
  bad |= json_object_set_new(o, "toBlock", f->to_block == BBVFL_BLOCK_LATEST ? json_string("latest")
                                                                            : bbvfl_json_quantity(f->to_block));
  if (f->ntopic0 || f->has_topic1) {
    json_t *t = json_array();
    bad |= !t;
    if (t) bad |= json_array_append_new(t, f->ntopic0 ? logf_one_of(&f->topic0[0][0], f->ntopic0, 32) : json_null());
    if (t && f->has_topic1) bad |= json_array_append_new(t, bbvfl_json_hex(f->topic1, 32));
    bad |= json_object_set_new(o, "topics", t);
  }
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* One eth_getLogs query of *f as it is (no paging). */
static int get_logs_once(bbvfl_rpc *r, const bbvfl_log_filter *f, json_t **logs, bbvfl_err *err) {
  *logs = NULL;
  json_t *o = bbvfl_log_filter_json(f);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_getLogs: out of memory");
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_getLogs", json_pack("[o]", o), &res, err) != 0) return -1;
  if (!json_is_array(res)) {
    json_decref(res);
    return bbvfl_fail(err, BBVFL_E_PARSE, "eth_getLogs: the answer is not an array");
  }
  *logs = res;
  return 0;
}

/* Whether the node refused the query itself (a JSON-RPC error object, or an HTTP 4xx other than
   429 without one): what hosted nodes answer to a range or a result count above their cap, each in
   its own words and code. Transport failures and rate limits are not refusals of the query. */
static int logs_refused(const bbvfl_rpc *r, const bbvfl_err *e) {
  if (e->code == BBVFL_E_REVERT) return 0;
  if (bbvfl_err_node_refused(e)) return 1;
  return e->code == BBVFL_E_RPC && r->last_status >= 400 && r->last_status < 500 && r->last_status != 429;
}

int bbvfl_rpc_get_logs(bbvfl_rpc *r, const bbvfl_log_filter *f, json_t **logs, bbvfl_err *err) {
  *logs = NULL;
  uint64_t cap = r->max_log_range;
  if (r->log_span && (!cap || r->log_span < cap)) cap = r->log_span;
  bbvfl_err e = {0};
  uint64_t span = 0; /* blocks per page; 0: the whole range in one query */
  if (!cap) {
    if (get_logs_once(r, f, logs, &e) == 0) return 0;
    if (!logs_refused(r, &e) || f->from_block == f->to_block) {
      if (err) *err = e;
      return -1;
    }
  }
  uint64_t to = f->to_block;
  if (to == BBVFL_BLOCK_LATEST && bbvfl_rpc_block_number(r, &to, err) < 0) return bbvfl_wrap(err, "eth_getLogs");
  json_t *all = json_array();
  if (!all) return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_getLogs: out of memory");
  if (f->from_block > to) { /* nothing yet up to this node's head */
    *logs = all;
    return 0;
  }
  uint64_t whole = to - f->from_block + 1;
  if (cap) span = cap < whole ? cap : whole;
  else span = whole / 2 ? whole / 2 : 1; /* the whole range was refused: halve it */
  bbvfl_log_filter page = *f;
  uint64_t b = f->from_block;
  int refused = !cap || r->log_span != 0;
  while (b <= to) {
    page.from_block = b;
    page.to_block = to - b + 1 <= span ? to : b + span - 1;
    json_t *got;
    if (get_logs_once(r, &page, &got, &e) < 0) {
      if (!logs_refused(r, &e) || page.from_block == page.to_block) {
        json_decref(all);
        if (err) *err = e;
        return bbvfl_wrap(err, "eth_getLogs blocks %llu..%llu", (unsigned long long)page.from_block,
                          (unsigned long long)page.to_block);
      }
      span = (page.to_block - page.from_block + 1) / 2; /* refused: half the span, same start */
      refused = 1;
      continue;
    }
    if (json_array_extend(all, got) != 0) {
      json_decref(got);
      json_decref(all);
      return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_getLogs: out of memory");
    }
    json_decref(got);
    /* remember the largest span the node took since it refused one */
    if (refused && page.to_block - page.from_block + 1 == span && span > r->log_span) r->log_span = span;
    if (page.to_block == to) break;
    b = page.to_block + 1;
  }
  *logs = all;
  return 0;
}
