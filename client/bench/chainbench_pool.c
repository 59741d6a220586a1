/* The benchmark's pool of funded keys, each with its connection and sender (bench/chainbench.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/chainbench.h"
#include "bench/chainbench_int.h"
#include "common/fsutil.h"
#include "eth/hex.h"

/* ------------------------------------------------------------------ pool */

static int client_open(pool_client *c, const char *url, uint64_t chain_id, bbvfl_err *err) {
  c->rpc = bbvfl_rpc_new(url, NULL, err);
  if (!c->rpc) return -1;
  c->s = bbvfl_sender_new(c->rpc, &c->key, chain_id, err);
  if (!c->s) return -1;
  bbvfl_sender_set_fee_ttl(c->s, 3600); /* fees once; refetched when the node objects */
  bbvfl_sender_set_sync(c->s, 1);
  return 0;
}

static void client_close(pool_client *c) {
  bbvfl_sender_free(c->s);
  bbvfl_rpc_free(c->rpc);
  bbvfl_key_wipe(&c->key);
  c->s = NULL;
  c->rpc = NULL;
}

static int read_block_gas_limit(bbvfl_rpc *rpc, uint64_t *out, bbvfl_err *err) {
  json_t *blk = NULL;
  if (bbvfl_rpc_get_block(rpc, "latest", 0, &blk, err) != 0) return -1;
  int rc = bbvfl_rpc_parse_u64(json_object_get(blk, "gasLimit"), out, err);
  json_decref(blk);
  return rc != 0 ? bbvfl_wrap(err, "reading the block gas limit of the latest block") : 0;
}

bbvfl_cbench_pool *bbvfl_cbench_pool_new(const char *rpc_url, const bbvfl_key *funder, int n,
                                         unsigned fund_eth, bbvfl_err *err) {
  if (n < 1 || n > 64) {
    bbvfl_fail(err, BBVFL_E_ARG, "benchmark clients must be 1..64 (got %d)", n);
    return NULL;
  }
  bbvfl_cbench_pool *p = calloc(1, sizeof *p);
  pool_client f;
  memset(&f, 0, sizeof f);
  /* n clients and one more key: the driver's own, for the interleaved floor transfers */
  if (!p || !(p->c = calloc((size_t)n + 1, sizeof *p->c))) {
    free(p);
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    return NULL;
  }
  p->n = n;
  snprintf(p->url, sizeof p->url, "%s", rpc_url);
  f.key = *funder;
  f.rpc = bbvfl_rpc_new(rpc_url, NULL, err);
  if (!f.rpc || bbvfl_rpc_chain_id(f.rpc, &p->chain_id, err) != 0 ||
      read_block_gas_limit(f.rpc, &p->block_gas_limit, err) != 0)
    goto fail;
  f.s = bbvfl_sender_new(f.rpc, &f.key, p->chain_id, err);
  if (!f.s) goto fail;
  bbvfl_sender_set_fee_ttl(f.s, 3600);
  bbvfl_sender_set_sync(f.s, 1);
  char wei[64];
  snprintf(wei, sizeof wei, "%u000000000000000000", fund_eth ? fund_eth : 1);
  bbvfl_u256 amount;
  if (bbvfl_u256_from_string(wei, &amount, err) != 0) goto fail;
  uint8_t (*addrs)[20] = calloc((size_t)n + 1, sizeof *addrs);
  if (!addrs) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto fail;
  }
  for (int i = 0; i <= n; i++) {
    if (bbvfl_key_generate(&p->c[i].key, err) != 0) {
      free(addrs);
      goto fail;
    }
    memcpy(addrs[i], p->c[i].key.addr, 20);
  }
  size_t bad;
  int funded = bbvfl_sender_fund(f.s, (const uint8_t(*)[20])addrs, (size_t)n + 1, &amount, TX_TIMEOUT_S, &bad, err);
  free(addrs);
  if (funded != 0) {
    bbvfl_wrap(err, "funding benchmark client %zu from the funding account", bad);
    goto fail;
  }
  for (int i = 0; i <= n; i++)
    if (client_open(&p->c[i], rpc_url, p->chain_id, err) != 0) goto fail;
  bbvfl_sender_free(f.s);
  bbvfl_rpc_free(f.rpc);
  bbvfl_key_wipe(&f.key);
  return p;
fail:
  bbvfl_sender_free(f.s);
  bbvfl_rpc_free(f.rpc);
  bbvfl_key_wipe(&f.key);
  bbvfl_cbench_pool_free(p);
  return NULL;
}

void bbvfl_cbench_pool_free(bbvfl_cbench_pool *p) {
  if (!p) return;
  for (int i = 0; i <= p->n; i++) client_close(&p->c[i]);
  free(p->c);
  free(p);
}

int bbvfl_cbench_pool_size(const bbvfl_cbench_pool *p) { return p->n; }
uint64_t bbvfl_cbench_pool_block_gas_limit(const bbvfl_cbench_pool *p) { return p->block_gas_limit; }

void bbvfl_cbench_result_free(bbvfl_cbench_result *r) {
  if (!r) return;
  free(r->rounds);
  memset(r, 0, sizeof *r);
}
