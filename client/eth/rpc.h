/* JSON-RPC client for an Ethereum node over HTTP(S) (libcurl + jansson).
 *
 * One bbvfl_rpc owns one CURL easy handle, so consecutive calls reuse the same keep-alive TCP
 * connection (TCP_NODELAY on). It is not thread-safe: use one per thread. Only http:// and
 * https:// URLs are accepted.
 *
 * Several endpoints: the URL may be a comma-separated list ("http://a,http://b"). Requests go to
 * one endpoint (the first) as long as it works, so the requests of one operation see one node;
 * when it fails in transport (after its retries), answers HTTP 5xx, or stays rate limited past
 * rate_wait_s, the request moves to the next endpoint and stays there (bbvfl_rpc_url names it;
 * bbvfl_rpc_outages counts the switch, as the new node's pool may lack what was sent to the old).
 * One endpoint behaves exactly as before.
 *
 * Hosted nodes' manners: HTTP 429 and 503 are retried after the answer's Retry-After (seconds or
 * an HTTP date), else after an exponential back-off with jitter, for at most rate_wait_s in all,
 * then BBVFL_E_RPC naming the endpoint and the status. eth_getLogs (bbvfl_rpc_get_logs) is paged
 * to what the node accepts: see there.
 *
 * Errors: transport failures (node unreachable, timeout, HTTP status) are BBVFL_E_RPC after the
 * configured retries with exponential backoff; a JSON-RPC error object is BBVFL_E_RPC with the
 * node's code and message; an execution revert is BBVFL_E_REVERT with the decoded reason
 * (Error(string), Panic(uint256) with its meaning, or the 4-byte selector of a custom error and
 * its raw data); a malformed or oversized answer is BBVFL_E_PARSE. Only transport failures are
 * retried: an answer from the node is never re-asked.
 *
 * Ownership: json_t parameters passed in are stolen (decref'd by the call, also on failure);
 * json_t results handed out are new references the caller json_decref()s; byte buffers handed
 * out are malloc'd and freed by the caller.
 */
#ifndef BBVFL_ETH_RPC_H
#define BBVFL_ETH_RPC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/u256.h"

typedef struct bbvfl_rpc bbvfl_rpc; /* one connection (reused), not thread-safe */

/* Zeros mean defaults: timeout 30 s per request, 3 retries (a negative value: none), response
 * cap 64 MiB.
 * down_timeout_s > 0: once the node has answered at least once, a transport failure (refused or
 * cut connection, timeout, HTTP 429/5xx without a JSON-RPC answer) is retried with a backoff
 * capped at 1 s until it has lasted down_timeout_s (a node restarting, a network outage); the
 * same request is sent again, so a caller must only send requests that are safe to repeat (reads,
 * and signed transactions: a repeat is refused as known or as a used nonce). on_wait (nullable)
 * is called with a one-line message when such a wait starts and when the node is back; the
 * library itself never prints. */
/* rate_wait_s: the longest a request waits out HTTP 429/503 answers in all (0: 60 s).
 * max_log_range: eth_getLogs asks for at most this many blocks at a time (0: no cap; the node's
 * refusals still make the span shrink). */
typedef struct {
  double timeout_s;
  int retries;
  size_t max_response;
  double down_timeout_s;
  void (*on_wait)(void *ctx, const char *msg);
  void *on_wait_ctx;
  double rate_wait_s;
  uint64_t max_log_range;
} bbvfl_rpc_opts;

bbvfl_rpc *bbvfl_rpc_new(const char *url, const bbvfl_rpc_opts *opts, bbvfl_err *err);
void bbvfl_rpc_free(bbvfl_rpc *r);
/* The endpoint in use (one of the list given). */
const char *bbvfl_rpc_url(const bbvfl_rpc *r);
/* How many endpoints were given / how many times a request moved to another one. */
size_t bbvfl_rpc_endpoints(const bbvfl_rpc *r);
uint64_t bbvfl_rpc_failovers(const bbvfl_rpc *r);
/* eth_getLogs: the span in blocks the node was found to accept (0: no refusal seen yet). */
uint64_t bbvfl_rpc_log_span(const bbvfl_rpc *r);

/* Generic call: params is stolen (json_decref'd by the call); *result is a new reference. */
int bbvfl_rpc_call(bbvfl_rpc *r, const char *method, json_t *params, json_t **result,
                   bbvfl_err *err);

/* One element of a batch. The caller fills method and params (stolen); the call fills result
 * (new reference or NULL) and, when that element failed, err (code != 0). */
typedef struct {
  const char *method;
  json_t *params;
  json_t *result;
  bbvfl_err err;
} bbvfl_rpc_req;

/* Sends n requests in one HTTP round trip (a JSON-RPC batch) and matches the answers by id.
 * Returns 0 when the batch as a whole was answered (individual elements may still have
 * failed: check reqs[i].err.code), -1 on a transport or format failure (err filled, every
 * params consumed, no results). */
int bbvfl_rpc_batch(bbvfl_rpc *r, bbvfl_rpc_req *reqs, size_t n, bbvfl_err *err);
/* Releases the results of a batch (safe to call twice). */
void bbvfl_rpc_batch_clear(bbvfl_rpc_req *reqs, size_t n);

int bbvfl_rpc_chain_id(bbvfl_rpc *r, uint64_t *out, bbvfl_err *err);
int bbvfl_rpc_block_number(bbvfl_rpc *r, uint64_t *out, bbvfl_err *err);
/* block: "latest", "pending", a "0x.." number, ...; NULL = "latest" */
int bbvfl_rpc_nonce(bbvfl_rpc *r, const uint8_t addr[20], const char *block, uint64_t *out,
                    bbvfl_err *err);
int bbvfl_rpc_balance(bbvfl_rpc *r, const uint8_t addr[20], bbvfl_u256 *out, bbvfl_err *err);
int bbvfl_rpc_gas_price(bbvfl_rpc *r, bbvfl_u256 *out, bbvfl_err *err);
int bbvfl_rpc_max_priority_fee(bbvfl_rpc *r, bbvfl_u256 *out, bbvfl_err *err);

/* eth_feeHistory over the last `blocks` blocks with one reward percentile: base_fee_next is the
 * base fee of the next block, reward the median over the window of the percentile's tip. */
int bbvfl_rpc_fee_history(bbvfl_rpc *r, unsigned blocks, double percentile,
                          bbvfl_u256 *base_fee_next, bbvfl_u256 *reward, bbvfl_err *err);

/* eth_estimateGas for a call (from, to nullable; to NULL = contract creation). A revert during
 * estimation gives BBVFL_E_REVERT with the reason. */
int bbvfl_rpc_estimate_gas(bbvfl_rpc *r, const uint8_t *from, const uint8_t *to,
                           const bbvfl_u256 *value, const uint8_t *data, size_t len,
                           uint64_t *gas, bbvfl_err *err);

/* eth_getBlockByNumber: block is "latest" or a "0x.." number; *out new reference (JSON null
 * when the block does not exist is an error BBVFL_E_STATE). */
int bbvfl_rpc_get_block(bbvfl_rpc *r, const char *block, int full_txs, json_t **out,
                        bbvfl_err *err);

/* eth_getTransactionByHash: 1 = known (*out new reference, may be NULL to just ask), 0 = the
 * node does not know it, -1 = error. */
int bbvfl_rpc_get_tx(bbvfl_rpc *r, const uint8_t hash[32], json_t **out, bbvfl_err *err);

/* eth_sendRawTransaction. hash receives keccak256(raw) (the transaction hash). A transport
 * failure is retried with the same bytes (safe: same bytes, same hash); an "already known"
 * answer, or "nonce too low" when the node already has this very hash, counts as success. */
int bbvfl_rpc_send_raw(bbvfl_rpc *r, const uint8_t *raw, size_t len, uint8_t hash[32],
                       bbvfl_err *err);

/* eth_call: *out malloc'd, caller frees. A revert gives BBVFL_E_REVERT with the decoded reason
 * in err->msg. block NULL = "latest". */
int bbvfl_rpc_eth_call(bbvfl_rpc *r, const uint8_t *from /*nullable*/, const uint8_t to[20],
                       const uint8_t *data, size_t len, const char *block, uint8_t **out,
                       size_t *out_len, bbvfl_err *err);
/* The same with a value (wei) attached; value may be NULL. */
int bbvfl_rpc_eth_call_value(bbvfl_rpc *r, const uint8_t *from, const uint8_t to[20],
                             const bbvfl_u256 *value, const uint8_t *data, size_t len,
                             const char *block, uint8_t **out, size_t *out_len, bbvfl_err *err);

typedef struct {
  int status;
  uint64_t block_number;
  uint64_t gas_used;
  uint64_t effective_gas_price;
  int has_contract;
  uint8_t contract[20];
  uint8_t hash[32];
  int has_block_hash;
  uint8_t block_hash[32]; /* the block it was mined in (a reorg changes it: bbvfl_sender_confirm) */
  json_t *logs; /* owned: free with bbvfl_receipt_clear */
} bbvfl_receipt;
void bbvfl_receipt_clear(bbvfl_receipt *rc);

/* 1 = found (filled), 0 = not yet mined, -1 = error */
int bbvfl_rpc_receipt(bbvfl_rpc *r, const uint8_t hash[32], bbvfl_receipt *out, bbvfl_err *err);
/* Polls with a short growing backoff (0.2 ms up to 20 ms) until the receipt is there;
 * BBVFL_E_TIMEOUT after timeout_s (0: 60 s). */
int bbvfl_rpc_wait_receipt(bbvfl_rpc *r, const uint8_t hash[32], double timeout_s,
                           bbvfl_receipt *out, bbvfl_err *err);

/* Sends and waits in one round trip with eth_sendRawTransactionSync (EIP-7966, answered by
 * anvil): *out receives the receipt (caller clears it). A node without that method (or one that
 * times out on it) is served by bbvfl_rpc_send_raw + bbvfl_rpc_wait_receipt instead; a node
 * without it is remembered per connection. timeout_s 0: 60 s. */
int bbvfl_rpc_send_raw_sync(bbvfl_rpc *r, const uint8_t *raw, size_t len, double timeout_s,
                            bbvfl_receipt *out, bbvfl_err *err);
/* How many times the node came back after a down_timeout_s wait (see bbvfl_rpc_opts): a node
 * restarted from a saved state may have lost the last blocks, so a caller compares this count to
 * find out when to check its recent transactions (bbvfl_sender_recover). */
uint64_t bbvfl_rpc_outages(const bbvfl_rpc *r);
/* 0 once the node has refused eth_sendRawTransactionSync on this connection, else 1. */
int bbvfl_rpc_has_sync(const bbvfl_rpc *r);

/* ---- Log filters: the one type every eth_getLogs query is built from ---- */

#define BBVFL_BLOCK_LATEST UINT64_MAX /* to_block: the node's "latest" */
#define BBVFL_LOGF_MAX_ADDRESSES 4
#define BBVFL_LOGF_MAX_TOPIC0 24

/* Which logs an eth_getLogs query asks for: emitted by one of `addresses` (none: any emitter),
 * whose topic0 (the event) is one of `topic0` (none: any event) and, with has_topic1, whose first
 * indexed argument is topic1 (a round, an epoch, an address as its 32-byte word), in blocks
 * [from_block, to_block] (to_block BBVFL_BLOCK_LATEST: "latest"). A plain value: fill it with the
 * functions below (or by hand) and pass it by pointer; nothing to free. */
typedef struct {
  size_t naddresses;
  uint8_t addresses[BBVFL_LOGF_MAX_ADDRESSES][20];
  size_t ntopic0;
  uint8_t topic0[BBVFL_LOGF_MAX_TOPIC0][32];
  int has_topic1;
  uint8_t topic1[32];
  uint64_t from_block, to_block;
} bbvfl_log_filter;

/* Empties *f and sets its block range. */
void bbvfl_log_filter_init(bbvfl_log_filter *f, uint64_t from_block, uint64_t to_block);
/* Adds an accepted emitter / an accepted topic0. -1 (BBVFL_E_ARG) when the filter is full. */
int bbvfl_log_filter_address(bbvfl_log_filter *f, const uint8_t address[20], bbvfl_err *err);
int bbvfl_log_filter_topic0(bbvfl_log_filter *f, const uint8_t topic[32], bbvfl_err *err);
/* Requires the first indexed argument to be `topic`. */
void bbvfl_log_filter_topic1(bbvfl_log_filter *f, const uint8_t topic[32]);
/* The eth_getLogs filter object of *f: a new reference (caller decrefs), NULL when out of memory. */
json_t *bbvfl_log_filter_json(const bbvfl_log_filter *f);

/* eth_getLogs with *f: *logs is a new json array reference (caller decrefs); an answer that is
 * not an array is BBVFL_E_PARSE. Paged to what the node accepts: a query over more than one block
 * that the node refuses (any JSON-RPC error, or an HTTP 4xx answer: hosted nodes cap the block
 * range or the number of results, each in its own words, which are never read) is split in halves
 * and each retried, down to one block, after which the refusal is returned; the largest span that
 * worked is remembered for the next queries, and max_log_range (bbvfl_rpc_opts) caps the span from
 * the start. The pages' logs are merged in block order. to_block BBVFL_BLOCK_LATEST is resolved with
 * eth_blockNumber only when a query must be paged. */
int bbvfl_rpc_get_logs(bbvfl_rpc *r, const bbvfl_log_filter *f, json_t **logs, bbvfl_err *err);

/* ---- Parsing helpers (no network; exposed for tests and fuzzing) ---- */

/* Parses one JSON-RPC response body: on success *result is a new reference to "result". A
 * JSON-RPC error becomes BBVFL_E_RPC / BBVFL_E_REVERT with the message (see above). */
int bbvfl_rpc_parse_response(const char *body, size_t len, json_t **result, bbvfl_err *err);

/* Turns a JSON-RPC error object into err (always returns -1). */
int bbvfl_rpc_error_from_json(const json_t *error, bbvfl_err *err);

/* Describes ABI-encoded revert data in human words into out (size n): "Error(string): <text>",
 * "Panic(0x11): arithmetic overflow or underflow", "custom error 0x12345678 (data 0x...)",
 * "no reason given". */
void bbvfl_revert_describe(const uint8_t *data, size_t len, char *out, size_t n);
/* The revert data as structure (selector; Error(string)'s reason): fills out (cleared first). */
void bbvfl_revert_decode(const uint8_t *data, size_t len, bbvfl_revert *out);

/* Parses a JSON-RPC quantity ("0x1a", no leading zeros tolerated leniently) into a u64. */
int bbvfl_rpc_parse_u64(const json_t *v, uint64_t *out, bbvfl_err *err);

/* Fills a receipt from the JSON object eth_getTransactionReceipt returns. */
int bbvfl_rpc_parse_receipt(const json_t *obj, bbvfl_receipt *out, bbvfl_err *err);

/* "0x..." JSON string of bytes / quantity helpers (new references). */
json_t *bbvfl_json_hex(const uint8_t *data, size_t len);
json_t *bbvfl_json_quantity(uint64_t v);

#endif
