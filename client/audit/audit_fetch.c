/* Chain fetching: the logs of the contract and its token in adaptive eth_getLogs windows,
 * decoded, sorted and replayed in chunks; the transactions, receipts and blocks a chunk needs in
 * one batch; the deployment transaction behind the first log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_int.h"
#include "eth/deploy.h"
#include "eth/hex.h"
#include "eth/tx.h"
#include "binding/packing.h"

void bbvfl_au_fetched_clear(fetched *f) {
  free(f->input);
  memset(f, 0, sizeof *f);
}

/* eth_getRawTransactionByHash: the signed transaction, its signer recovered here (not the node's
 * word), checked to hash to the log's transaction and to be signed for this chain. */
static void take_raw_tx(st_t *S, const bbvfl_cev *ev, const json_t *res, fetched *f) {
  uint8_t *raw = NULL;
  size_t len = 0;
  bbvfl_err e = {0};
  if (!json_is_string(res) || bbvfl_hex_decode_alloc(json_string_value(res), &raw, &len, &e) < 0) {
    snprintf(f->tx_err, sizeof f->tx_err, "the node returned no raw transaction");
    free(raw);
    return;
  }
  bbvfl_tx_decoded d;
  if (bbvfl_tx_decode(raw, len, &d, &e) < 0) {
    snprintf(f->tx_err, sizeof f->tx_err, "raw transaction does not decode: %.120s", e.msg);
    free(raw);
    return;
  }
  if (memcmp(d.hash, ev->tx_hash, 32)) {
    snprintf(f->tx_err, sizeof f->tx_err, "raw transaction does not hash to the log's transaction hash");
    free(raw);
    return;
  }
  if (d.tx.chain_id && S->r->chain_id && d.tx.chain_id != S->r->chain_id) {
    snprintf(f->tx_err, sizeof f->tx_err, "signed for chain %llu, the node is chain %llu",
             (unsigned long long)d.tx.chain_id, (unsigned long long)S->r->chain_id);
    free(raw);
    return;
  }
  memcpy(f->from, d.from, 20);
  f->has_to = d.tx.has_to;
  memcpy(f->to, d.tx.to, 20);
  f->input = malloc(d.tx.data_len ? d.tx.data_len : 1);
  if (!f->input) {
    snprintf(f->tx_err, sizeof f->tx_err, "out of memory");
    free(raw);
    return;
  }
  if (d.tx.data_len) memcpy(f->input, d.tx.data, d.tx.data_len);
  f->input_len = d.tx.data_len;
  f->have_tx = 1;
  free(raw);
}

/* Fallback for nodes without eth_getRawTransactionByHash: the node's "from" and "input". */
static void take_json_tx(const json_t *res, fetched *f) {
  bbvfl_err e = {0};
  const json_t *from = json_object_get(res, "from"), *to = json_object_get(res, "to"),
               *in = json_object_get(res, "input");
  if (!json_is_string(from) || !json_is_string(in) ||
      bbvfl_hex_decode_fixed(json_string_value(from), f->from, 20, &e) < 0 ||
      bbvfl_hex_decode_alloc(json_string_value(in), &f->input, &f->input_len, &e) < 0) {
    snprintf(f->tx_err, sizeof f->tx_err, "the node returned no transaction");
    return;
  }
  f->has_to = json_is_string(to) && bbvfl_hex_decode_fixed(json_string_value(to), f->to, 20, &e) == 0;
  f->have_tx = 1;
}

/* ------------------------------------------------------------------ one batch per chunk of logs */

enum { NEED_TX = 1, NEED_GAS = 2, NEED_TS = 4 };

/* What each event needs fetched: its transaction (signer, calldata), its receipt (gas), its
 * block (timestamp). */
static int needs(const st_t *S, const bbvfl_cev *ev) {
  switch (ev->kind) {
    case BBVFL_EV_SUBMITTED: return NEED_TX | NEED_GAS;      /* lane mode: q is in the calldata */
    case BBVFL_EV_SUBMITTED_PAYLOAD: return NEED_GAS;        /* hashed mode: q is in the log */
    case BBVFL_EV_GRADIENT_POSTED: return NEED_GAS | NEED_TS;
    case BBVFL_EV_LABEL_GRADIENT_POSTED: return NEED_GAS;
    case BBVFL_EV_ROUND_COMPLETED: return S->hashed ? NEED_TS | NEED_GAS : NEED_TS; /* hashed: aggregate()'s gas */
    case BBVFL_EV_ELECTED: return NEED_TS;
    case BBVFL_EV_REWARDS_PAID: return NEED_TX;
    default: return 0;
  }
}

/* The requests of a batch, each with the event it is for and what it fetches. */
typedef struct {
  bbvfl_rpc_req reqs[AU_CHUNK * 3];
  int owner[AU_CHUNK * 3], what[AU_CHUNK * 3];
  size_t n;
} batch;

static void queue(batch *b, const char *method, json_t *params, int owner, int what) {
  b->reqs[b->n] = (bbvfl_rpc_req){method, params, NULL, {0}};
  b->owner[b->n] = owner;
  b->what[b->n++] = what;
}

static void queue_needs(const st_t *S, const bbvfl_cev *evs, size_t n, batch *b) {
  char hx[67];
  for (size_t i = 0; i < n; i++) {
    int w = needs(S, &evs[i]);
    bbvfl_hex_encode(evs[i].tx_hash, 32, hx);
    if (w & NEED_TX)
      queue(b, S->raw_ok ? "eth_getRawTransactionByHash" : "eth_getTransactionByHash", json_pack("[s]", hx), (int)i,
            NEED_TX);
    if (w & NEED_GAS) queue(b, "eth_getTransactionReceipt", json_pack("[s]", hx), (int)i, NEED_GAS);
    if (w & NEED_TS)
      queue(b, "eth_getBlockByNumber", json_pack("[o,b]", bbvfl_json_quantity(evs[i].block_number), 0), (int)i,
            NEED_TS);
  }
}

/* One answer into what was fetched for its event. */
static void take_answer(st_t *S, const bbvfl_cev *ev, int what, const json_t *res, fetched *f) {
  if (what == NEED_TX) {
    if (S->raw_ok) take_raw_tx(S, ev, res, f);
    else take_json_tx(res, f);
  } else if (what == NEED_GAS) {
    const json_t *g = json_object_get(res, "gasUsed");
    if (g && bbvfl_rpc_parse_u64(g, &f->gas, NULL) == 0) f->have_gas = 1;
  } else {
    const json_t *t = json_object_get(res, "timestamp");
    if (t && bbvfl_rpc_parse_u64(t, &f->ts, NULL) == 0) f->have_ts = 1;
  }
}

/* STATE: the node misses what it should still have of the transaction of log ev: "the node
 * <lacks> transaction <hash> of block <n><why>: it keeps a pruned history ...". */
static int pruned_history(const bbvfl_cev *ev, const char *lacks, const char *why, bbvfl_err *err) {
  char h[67];
  bbvfl_hex_encode(ev->tx_hash, 32, h);
  return bbvfl_fail(err, BBVFL_E_STATE,
                    "the node %s transaction %s of block %llu%s: it keeps a pruned history (e.g. anvil "
                    "--prune-history / --transaction-block-keeper); audit against a node with the full history",
                    lacks, h, (unsigned long long)ev->block_number, why);
}

/* Fetches what the n events need (fx[i] for evs[i]) in one JSON-RPC batch. */
static int prefetch(st_t *S, const bbvfl_cev *evs, size_t n, fetched *fx, bbvfl_err *err) {
  batch b;
  b.n = 0;
  queue_needs(S, evs, n, &b);
  if (b.n == 0) return 0;
  if (bbvfl_rpc_batch(S->rpc, b.reqs, b.n, err) < 0) return bbvfl_wrap(err, "fetching transactions");
  int retry_json = 0;
  const bbvfl_cev *gone = NULL;
  for (size_t k = 0; k < b.n; k++) {
    fetched *f = &fx[b.owner[k]];
    const bbvfl_rpc_req *q = &b.reqs[k];
    if (!q->err.code && json_is_null(q->result) && !gone) gone = &evs[b.owner[k]];
    if (q->err.code) {
      if (b.what[k] == NEED_TX && S->raw_ok && q->err.code == BBVFL_E_RPC) retry_json = 1;
      if (b.what[k] == NEED_TX) snprintf(f->tx_err, sizeof f->tx_err, "%.150s", q->err.msg);
      continue;
    }
    take_answer(S, &evs[b.owner[k]], b.what[k], q->result, f);
  }
  bbvfl_rpc_batch_clear(b.reqs, b.n);
  if (gone) return pruned_history(gone, "no longer has", " although it still has its log", err);
  if (retry_json) { /* the node lacks eth_getRawTransactionByHash: ask for the JSON form */
    S->raw_ok = 0;
    for (size_t i = 0; i < n; i++) bbvfl_au_fetched_clear(&fx[i]);
    return prefetch(S, evs, n, fx, err);
  }
  return 0;
}

/* ------------------------------------------------------------------ the deployment */

/* Is the first log's transaction the one that created the aggregator? 0 yes, -1 (err) no. */
static int find_deployment(st_t *S, const bbvfl_cev *ev, bbvfl_err *err) {
  bbvfl_receipt rc;
  memset(&rc, 0, sizeof rc);
  int got = bbvfl_rpc_receipt(S->rpc, ev->tx_hash, &rc, err);
  if (got < 0) return bbvfl_wrap(err, "receipt of the first transaction");
  int is_deploy = got == 1 && rc.has_contract && !memcmp(rc.contract, S->r->contract, 20);
  bbvfl_receipt_clear(&rc);
  if (got == 0) return pruned_history(ev, "has no receipt for", ", the contract's first log", err);
  if (!is_deploy) {
    int late = S->o->from_block > 0 && ev->block_number == S->o->from_block;
    return bbvfl_fail(err, late ? BBVFL_E_ARG : BBVFL_E_STATE,
                      "the first log of the contract from block %llu on (in block %llu) is not from its deployment: "
                      "start the audit at or before the deploy block (--from-block, or --session with the deploy "
                      "block)%s",
                      (unsigned long long)S->o->from_block, (unsigned long long)ev->block_number,
                      late ? "" : ", on a node that keeps the full history (anvil --prune-history drops old logs)");
  }
  S->r->has_deploy = 1;
  S->r->deploy_block = ev->block_number;
  return 0;
}

/* The constructor arguments end the creation calldata (in, inlen): the Config tuple (cfglen bytes,
 * inline), the offset of the member list (cfglen + 32), its length n and n address words. The
 * length of the arguments, or 0 when no n in 0..64 fits (*n the members). */
static size_t ctor_args_len(const uint8_t *in, size_t inlen, const uint8_t *cfg, size_t cfglen, size_t *n) {
  static const uint8_t zero[12];
  for (size_t k = 0; k <= 64; k++) {
    size_t len = cfglen + 64 + 32 * k;
    if (inlen < len) break;
    const uint8_t *a = in + inlen - len;
    uint8_t off[32], cnt[32];
    bbvfl_cenc_word_u64(cfglen + 32, off);
    bbvfl_cenc_word_u64(k, cnt);
    if (memcmp(a, cfg, cfglen) || memcmp(a + cfglen, off, 32) || memcmp(a + cfglen + 32, cnt, 32)) continue;
    int ok = 1;
    for (size_t i = 0; ok && i < k; i++) ok = !memcmp(a + cfglen + 64 + 32 * i, zero, 12);
    if (!ok) continue;
    *n = k;
    return len;
  }
  return 0;
}

/* The creation calldata (in, inlen) ends with the constructor arguments: the Config tuple params()
 * reports and the member list (who may register); informational: is the code before them the
 * product's artifact? (the checks verify behaviour whatever the code) */
static int check_constructor_args(st_t *S, const bbvfl_cev *ev, const uint8_t *in, size_t inlen, bbvfl_err *err) {
  uint8_t *cfg = NULL;
  size_t cfgw = 0, n = 0;
  if (bbvfl_cenc_config(&S->p.cfg, &cfg, &cfgw, err) < 0) return -1;
  size_t cfglen = ctor_args_len(in, inlen, cfg, cfgw, &n);
  if (!cfglen) {
    bbvfl_au_fail(S, BBVFL_AC_PARAMS, ev, 0, 0, -1, NULL,
            "params() does not match the constructor arguments of the deployment transaction");
  } else {
    bbvfl_au_ok(S, BBVFL_AC_PARAMS);
    const uint8_t *m = in + inlen - cfglen + cfgw + 64;
    S->r->has_members = 1;
    S->r->registration_open = n == 0;
    S->r->nmembers = (int)n;
    for (size_t i = 0; i < n; i++) memcpy(S->r->members[i], m + 32 * i + 12, 20);
  }
  uint8_t *code = NULL;
  size_t clen = 0;
  bbvfl_err ce = {0};
  if (cfglen && bbvfl_artifact_bytecode(bbvfl_wire_contract(S->p.cfg.wire), &code, &clen, &ce) == 0) {
    S->r->code_known = 1;
    S->r->code_matches = clen == inlen - cfglen && !memcmp(code, in, clen);
  }
  free(code);
  free(cfg);
  return 0;
}

/* The deployment: the first log in range must come from the transaction that created the
 * aggregator (the token's mint in its constructor); its calldata ends with the Config tuple. */
static int check_deployment(st_t *S, const bbvfl_cev *ev, bbvfl_err *err) {
  if (find_deployment(S, ev, err) < 0) return -1;
  json_t *tx = NULL;
  if (bbvfl_rpc_get_tx(S->rpc, ev->tx_hash, &tx, err) != 1) {
    json_decref(tx);
    return bbvfl_wrap(err, "deployment transaction");
  }
  uint8_t *in = NULL;
  size_t inlen = 0;
  const json_t *j = json_object_get(tx, "input");
  int rc;
  if (!json_is_string(j) || bbvfl_hex_decode_alloc(json_string_value(j), &in, &inlen, err) < 0)
    rc = bbvfl_fail(err, BBVFL_E_PARSE, "deployment transaction without input");
  else
    rc = check_constructor_args(S, ev, in, inlen, err);
  free(in);
  json_decref(tx);
  return rc;
}

/* ------------------------------------------------------------------ windows of logs */

static int cmp_log(const void *a, const void *b) {
  const bbvfl_cev *x = a, *y = b;
  if (x->block_number != y->block_number) return x->block_number < y->block_number ? -1 : 1;
  return x->log_index < y->log_index ? -1 : x->log_index > y->log_index;
}

/* Every log of the aggregator and its token in blocks [from, to]. */
static int get_logs(st_t *S, uint64_t from, uint64_t to, json_t **logs, bbvfl_err *err) {
  bbvfl_log_filter f;
  bbvfl_log_filter_init(&f, from, to);
  if (bbvfl_log_filter_address(&f, S->r->contract, err) < 0 || bbvfl_log_filter_address(&f, S->r->token, err) < 0)
    return -1;
  return bbvfl_rpc_get_logs(S->rpc, &f, logs, err);
}

/* The window's logs decoded (*evs malloc'd, *m of them) and sorted in (block, logIndex) order;
 * logs of no known event and the token's Approvals (a holder's allowance, not the session's
 * history) are left out. */
static int decode_window(const json_t *logs, bbvfl_cev **evs, size_t *m, bbvfl_err *err) {
  size_t n = json_array_size(logs);
  *m = 0;
  *evs = calloc(n ? n : 1, sizeof **evs);
  if (!*evs) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    bbvfl_cev *e = &(*evs)[*m];
    int d = bbvfl_cev_decode(json_array_get(logs, i), e, err);
    if (d < 0) return bbvfl_wrap(err, "log %zu", i);
    if (d == 1 && e->kind != BBVFL_EV_APPROVAL) (*m)++;
    else bbvfl_cev_clear(e);
  }
  qsort(*evs, *m, sizeof **evs, cmp_log);
  return 0;
}

/* Replays m sorted events in chunks of AU_CHUNK, each chunk's fetching in one batch. */
static int replay_events(st_t *S, bbvfl_cev *evs, size_t m, bbvfl_err *err) {
  fetched fx[AU_CHUNK];
  memset(fx, 0, sizeof fx);
  int rc = 0;
  for (size_t at = 0; rc == 0 && at < m; at += AU_CHUNK) {
    size_t k = m - at < AU_CHUNK ? m - at : AU_CHUNK;
    if (!S->first_log_seen) {
      S->first_log_seen = 1;
      if (check_deployment(S, &evs[at], err) < 0) {
        rc = -1;
        break;
      }
    }
    if (prefetch(S, evs + at, k, fx, err) < 0) {
      rc = -1;
      break;
    }
    for (size_t i = 0; i < k; i++) {
      bbvfl_au_dispatch(S, &evs[at + i], &fx[i]);
      bbvfl_au_fetched_clear(&fx[i]);
      bbvfl_cev_clear(&evs[at + i]);
    }
  }
  for (size_t i = 0; i < AU_CHUNK; i++) bbvfl_au_fetched_clear(&fx[i]);
  return rc;
}

/* One window: decoded, replayed, freed (logs too). */
static int process_window(st_t *S, json_t *logs, bbvfl_err *err) {
  bbvfl_cev *evs = NULL;
  size_t m = 0;
  int rc = decode_window(logs, &evs, &m, err);
  json_decref(logs);
  if (rc == 0) rc = replay_events(S, evs, m, err);
  for (size_t i = 0; evs && i < m; i++) bbvfl_cev_clear(&evs[i]);
  free(evs);
  return rc;
}

/* Hex characters of log data in an answer: with the log count, what the next window's size
   follows. */
static size_t data_bytes(const json_t *logs) {
  size_t bytes = 0;
  for (size_t i = 0; i < json_array_size(logs); i++)
    bytes += json_string_length(json_object_get(json_array_get(logs, i), "data"));
  return bytes;
}

int bbvfl_au_read_range(st_t *S, uint64_t from, uint64_t to, bbvfl_err *err) {
  const bbvfl_audit_opts *o = S->o;
  uint64_t win = o->window ? o->window : 500;
  for (uint64_t b = from; b <= to;) {
    uint64_t e = (to - b >= win - 1) ? b + win - 1 : to;
    json_t *logs = NULL;
    bbvfl_err le = {0};
    if (get_logs(S, b, e, &logs, &le) < 0) {
      if (win > 1 && le.code != BBVFL_E_REVERT) { /* too many results or too large: smaller window */
        win /= 2;
        continue;
      }
      *err = le;
      return bbvfl_wrap(err, "eth_getLogs blocks %llu..%llu", (unsigned long long)b, (unsigned long long)e);
    }
    size_t n = json_array_size(logs), bytes = data_bytes(logs);
    if (process_window(S, logs, err) < 0) return -1;
    if (o->progress) o->progress(o->progress_ctx, e, from, to, S->r->logs, S->r->rounds_completed);
    b = e + 1;
    if (e == to) break;
    /* keep one answer near a few hundred logs and well under a few MB of data: memory stays flat */
    if (n < 256 && bytes < AU_WINDOW_BYTES / 4 && win < AU_MAX_WINDOW) win *= 2;
    else if ((n > 1024 || bytes > AU_WINDOW_BYTES) && win > 1) win /= 2;
  }
  return 0;
}
