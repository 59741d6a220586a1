/* Private to client/eth/rpc*.c: the JSON-RPC client's state and the helpers its three files share
 * (rpc.c: the client, transport and batches; rpc_errors.c: a node's answers, errors and reverts
 * read into structure, receipts, JSON encodings; rpc_calls.c: the typed calls, sending, logs).
 * Nothing outside client/eth/rpc*.c includes this header. */
#ifndef BBVFL_ETH_RPC_INT_H
#define BBVFL_ETH_RPC_INT_H

#include <curl/curl.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "eth/rpc.h"

struct bbvfl_rpc {
  CURL *curl;
  struct curl_slist *headers;
  char *url;      /* the endpoint in use: urls[cur] */
  char **urls;    /* every endpoint given (one, or several for fail-over), owned */
  size_t nurls, cur;
  uint64_t failovers;   /* switches to another endpoint */
  double rate_wait_s;   /* bound on the back-off of one request answered HTTP 429/503 */
  uint64_t jitter;      /* xorshift state of the back-off's jitter (not a secret) */
  long last_status;     /* HTTP status of the last answer (0: none) */
  uint64_t max_log_range; /* eth_getLogs: at most this many blocks per query (0: no cap) */
  uint64_t log_span;      /* eth_getLogs: the largest span that worked after a refusal (0: none yet) */
  double timeout_s;
  int retries;
  size_t max_response;
  uint64_t next_id;
  /* response buffer, reused between calls */
  char *buf;
  size_t len, cap;
  int overflow;
  int no_sync; /* the node has no eth_sendRawTransactionSync */
  int ever_ok;  /* the node answered at least once */
  uint64_t outages; /* down_timeout_s waits that ended with the node back */
  double down_timeout_s;
  void (*on_wait)(void *ctx, const char *msg);
  void *on_wait_ctx;
  char curl_err[CURL_ERROR_SIZE];
};

/* One response object of a batch (or a single call): *result (new reference) or err from its
 * "error" member. Returns 0 or -1. */
int bbvfl_rpc_parse_one(const json_t *resp, json_t **result, bbvfl_err *err);
/* A hex quantity up to 2^256-1 into *out; -1 with err (BBVFL_E_PARSE) otherwise. */
int bbvfl_rpc_parse_u256(const json_t *v, bbvfl_u256 *out, bbvfl_err *err);
/* A 0x-prefixed hex string of v (new reference; NULL: out of memory). */
json_t *bbvfl_rpc_json_u256(const bbvfl_u256 *v);

#endif
