/* JSON-RPC client, sender and deployment against a fresh anvil (BBVFL_RPC_URL from
 * tests/with-devnet.sh): a freshly generated key, funded from anvil's well-known dev account 0,
 * deploys the EthProbe test contract (fixtures/EthProbe.sol), sends EIP-1559 and legacy
 * transactions, reads results with eth_call and logs, and gets clear errors for reverts (reason
 * string, custom error, panic), an unreachable node and a wrong chain id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "devnet_fixture.h"
#include "test_skip.h"
#include <pthread.h>

#include "common/fsutil.h"
#include "eth/deploy.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"
#include "eth_probe_bin.h"

typedef struct {
  devnet_fixture fx; /* the node, its chain id, dev account 0 */
  bbvfl_key me;      /* a fresh key, funded with 10 ether */
  bbvfl_sender *me_s;
  uint8_t probe[20];
  int have_probe;
} fixture;

static fixture F;

static size_t call_data(uint8_t *out, const char *sig, const uint64_t *args, size_t nargs) {
  uint8_t h[32];
  bbvfl_keccak256(sig, strlen(sig), h);
  memcpy(out, h, 4);
  for (size_t i = 0; i < nargs; i++) {
    memset(out + 4 + 32 * i, 0, 32);
    for (int b = 0; b < 8; b++) out[4 + 32 * i + 31 - b] = (uint8_t)(args[i] >> (8 * b));
  }
  return 4 + 32 * nargs;
}

static uint64_t word_u64(const uint8_t *w) {
  uint64_t v = 0;
  for (int i = 24; i < 32; i++) v = v << 8 | w[i];
  return v;
}

static uint8_t *probe_code(size_t *len) {
  uint8_t *code;
  bbvfl_err err = {0};
  devnet_check(bbvfl_hex_decode_alloc(ETH_PROBE_BIN, &code, len, &err), &err);
  return code;
}

static int setup(void **state) {
  (void)state;
  memset(&F, 0, sizeof F);
  if (devnet_open(&F.fx)) return -1;
  bbvfl_err err = {0};
  if (bbvfl_key_generate(&F.me, &err) != 0) return -1;
  F.me_s = bbvfl_sender_new(F.fx.rpc, &F.me, 0, &err); /* 0: asks the node */
  if (!F.me_s) return -1;
  /* fund the fresh key with 10 ether */
  bbvfl_u256 ten;
  if (bbvfl_u256_from_string("10000000000000000000", &ten, &err) != 0) return -1;
  bbvfl_receipt rc;
  if (bbvfl_sender_transact(F.fx.dev_s, F.me.addr, &ten, NULL, 0, 21000, 30, &rc, &err) != 0) {
    fprintf(stderr, "funding failed: %s\n", err.msg);
    bbvfl_receipt_clear(&rc);
    return -1;
  }
  bbvfl_receipt_clear(&rc);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  bbvfl_sender_free(F.me_s);
  bbvfl_key_wipe(&F.me);
  devnet_close(&F.fx);
  return 0;
}

static void ensure_probe(void) {
  if (F.have_probe) return;
  size_t len;
  uint8_t *code = probe_code(&len);
  bbvfl_err err = {0};
  bbvfl_receipt rc;
  devnet_check(bbvfl_deploy_code(F.me_s, code, len, NULL, 0, 30, F.probe, &rc, &err), &err);
  free(code);
  assert_int_equal(rc.status, 1);
  assert_int_equal(rc.has_contract, 1);
  bbvfl_receipt_clear(&rc);
  F.have_probe = 1;
}

static uint64_t probe_get(void) {
  uint8_t d[4];
  call_data(d, "get()", NULL, 0);
  uint8_t *out;
  size_t n;
  bbvfl_err err = {0};
  devnet_check(bbvfl_rpc_eth_call(F.fx.rpc, NULL, F.probe, d, 4, NULL, &out, &n, &err), &err);
  assert_int_equal(n, 32);
  uint64_t v = word_u64(out);
  free(out);
  return v;
}

static void test_funded_and_chain(void **state) {
  (void)state;
  assert_int_equal(F.fx.chain_id, strtoull(getenv("BBVFL_CHAIN_ID") ? getenv("BBVFL_CHAIN_ID") : "31337", NULL, 10));
  assert_int_equal(bbvfl_sender_chain_id(F.me_s), F.fx.chain_id);
  bbvfl_u256 bal, ten;
  bbvfl_err err = {0};
  devnet_check(bbvfl_rpc_balance(F.fx.rpc, F.me.addr, &bal, &err), &err);
  devnet_check(bbvfl_u256_from_string("10000000000000000000", &ten, &err), &err);
  assert_int_equal(bbvfl_u256_cmp(&bal, &ten), 0);
  uint64_t bn;
  devnet_check(bbvfl_rpc_block_number(F.fx.rpc, &bn, &err), &err);
  assert_true(bn >= 1);
  json_t *blk;
  devnet_check(bbvfl_rpc_get_block(F.fx.rpc, "latest", 0, &blk, &err), &err);
  uint64_t num;
  devnet_check(bbvfl_rpc_parse_u64(json_object_get(blk, "number"), &num, &err), &err);
  assert_int_equal(num, bn);
  json_decref(blk);
  assert_int_equal(bbvfl_rpc_get_block(F.fx.rpc, "0xffffff", 0, &blk, &err), -1);
  assert_int_equal(err.code, BBVFL_E_STATE);
}

static void test_deploy_eip1559_call_and_logs(void **state) {
  (void)state;
  ensure_probe();
  uint8_t d[36];
  uint64_t v = 42;
  size_t n = call_data(d, "set(uint256)", &v, 1);
  bbvfl_receipt rc;
  bbvfl_err err = {0};
  devnet_check(bbvfl_sender_transact(F.me_s, F.probe, NULL, d, n, 0, 30, &rc, &err), &err);
  assert_int_equal(rc.status, 1);
  assert_true(rc.gas_used > 21000);
  assert_true(rc.effective_gas_price > 0);
  assert_int_equal(probe_get(), 42);
  /* the transaction really is type 2 */
  json_t *tx;
  assert_int_equal(bbvfl_rpc_get_tx(F.fx.rpc, rc.hash, &tx, &err), 1);
  assert_string_equal(json_string_value(json_object_get(tx, "type")), "0x2");
  json_decref(tx);
  /* the event in the receipt and through eth_getLogs */
  uint8_t topic[1][32];
  const char *ev = "Stored(address,uint256)";
  bbvfl_keccak256(ev, strlen(ev), topic[0]);
  assert_int_equal(json_array_size(rc.logs), 1);
  json_t *logs;
  bbvfl_log_filter lf;
  bbvfl_log_filter_init(&lf, rc.block_number, rc.block_number);
  devnet_check(bbvfl_log_filter_address(&lf, F.probe, &err), &err);
  devnet_check(bbvfl_log_filter_topic0(&lf, topic[0], &err), &err);
  devnet_check(bbvfl_rpc_get_logs(F.fx.rpc, &lf, &logs, &err), &err);
  assert_int_equal(json_array_size(logs), 1);
  json_t *lg = json_array_get(logs, 0);
  json_t *topics = json_object_get(lg, "topics");
  uint8_t t0[32], t1[32], data[32];
  devnet_check(bbvfl_hex_decode_fixed(json_string_value(json_array_get(topics, 0)), t0, 32, &err), &err);
  devnet_check(bbvfl_hex_decode_fixed(json_string_value(json_array_get(topics, 1)), t1, 32, &err), &err);
  devnet_check(bbvfl_hex_decode_fixed(json_string_value(json_object_get(lg, "data")), data, 32, &err), &err);
  assert_memory_equal(t0, topic[0], 32);
  assert_memory_equal(t1 + 12, F.me.addr, 20);
  assert_int_equal(word_u64(data), 42);
  json_decref(logs);
  /* a topic that matches nothing */
  uint8_t other[1][32];
  bbvfl_keccak256("x", 1, other[0]);
  bbvfl_log_filter_init(&lf, 0, rc.block_number);
  devnet_check(bbvfl_log_filter_address(&lf, F.probe, &err), &err);
  devnet_check(bbvfl_log_filter_topic0(&lf, other[0], &err), &err);
  devnet_check(bbvfl_rpc_get_logs(F.fx.rpc, &lf, &logs, &err), &err);
  assert_int_equal(json_array_size(logs), 0);
  json_decref(logs);
  /* one of two topics, up to "latest", with the emitter's first indexed argument */
  bbvfl_log_filter_init(&lf, 0, BBVFL_BLOCK_LATEST);
  devnet_check(bbvfl_log_filter_address(&lf, F.probe, &err), &err);
  devnet_check(bbvfl_log_filter_topic0(&lf, other[0], &err), &err);
  devnet_check(bbvfl_log_filter_topic0(&lf, topic[0], &err), &err);
  uint8_t who[32] = {0};
  memcpy(who + 12, F.me.addr, 20);
  bbvfl_log_filter_topic1(&lf, who);
  devnet_check(bbvfl_rpc_get_logs(F.fx.rpc, &lf, &logs, &err), &err);
  assert_int_equal(json_array_size(logs), 1);
  json_decref(logs);
  who[31] ^= 1; /* another sender: nothing */
  bbvfl_log_filter_topic1(&lf, who);
  devnet_check(bbvfl_rpc_get_logs(F.fx.rpc, &lf, &logs, &err), &err);
  assert_int_equal(json_array_size(logs), 0);
  json_decref(logs);
  bbvfl_receipt_clear(&rc);
}

static void test_legacy(void **state) {
  (void)state;
  ensure_probe();
  bbvfl_err err = {0};
  devnet_check(bbvfl_sender_set_type(F.me_s, BBVFL_TX_LEGACY, &err), &err);
  uint8_t d[36];
  uint64_t v = 7;
  size_t n = call_data(d, "set(uint256)", &v, 1);
  bbvfl_receipt rc;
  int st = bbvfl_sender_transact(F.me_s, F.probe, NULL, d, n, 0, 30, &rc, &err);
  bbvfl_sender_set_type(F.me_s, BBVFL_TX_EIP1559, NULL);
  devnet_check(st, &err);
  assert_int_equal(rc.status, 1);
  json_t *tx;
  assert_int_equal(bbvfl_rpc_get_tx(F.fx.rpc, rc.hash, &tx, &err), 1);
  assert_string_equal(json_string_value(json_object_get(tx, "type")), "0x0");
  json_decref(tx);
  bbvfl_receipt_clear(&rc);
  assert_int_equal(probe_get(), 7);
  /* a legacy plain value transfer back to the dev account */
  devnet_check(bbvfl_sender_set_type(F.me_s, BBVFL_TX_LEGACY, &err), &err);
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  st = bbvfl_sender_transact(F.me_s, F.fx.dev.addr, &one, NULL, 0, 21000, 30, &rc, &err);
  bbvfl_sender_set_type(F.me_s, BBVFL_TX_EIP1559, NULL);
  devnet_check(st, &err);
  assert_int_equal(rc.gas_used, 21000);
  bbvfl_receipt_clear(&rc);
}

static void test_revert_reasons_in_calls(void **state) {
  (void)state;
  ensure_probe();
  uint8_t d[68], *out = NULL;
  size_t n, outn;
  bbvfl_err err = {0};
  n = call_data(d, "failWithReason()", NULL, 0);
  assert_int_equal(bbvfl_rpc_eth_call(F.fx.rpc, F.me.addr, F.probe, d, n, NULL, &out, &outn, &err), -1);
  assert_int_equal(err.code, BBVFL_E_REVERT);
  assert_non_null(strstr(err.msg, "Error(string): probe says no"));
  assert_null(out);
  /* custom error: the selector of TooBig(uint256,uint256) is shown with the arguments */
  uint64_t v = 11;
  n = call_data(d, "failCustom(uint256)", &v, 1);
  assert_int_equal(bbvfl_rpc_eth_call(F.fx.rpc, NULL, F.probe, d, n, NULL, &out, &outn, &err), -1);
  assert_int_equal(err.code, BBVFL_E_REVERT);
  uint8_t sel[32];
  const char *esig = "TooBig(uint256,uint256)";
  bbvfl_keccak256(esig, strlen(esig), sel);
  char want[64], selhex[16];
  bbvfl_hex_encode(sel, 4, selhex);
  snprintf(want, sizeof want, "custom error %s", selhex);
  assert_non_null(strstr(err.msg, want));
  assert_non_null(strstr(err.msg, "000000000000000b")); /* the argument 11 */
  /* panic: division by zero */
  uint64_t args[2] = {1, 0};
  n = call_data(d, "divide(uint256,uint256)", args, 2);
  assert_int_equal(bbvfl_rpc_eth_call(F.fx.rpc, NULL, F.probe, d, n, NULL, &out, &outn, &err), -1);
  assert_int_equal(err.code, BBVFL_E_REVERT);
  assert_non_null(strstr(err.msg, "Panic(0x12): division or modulo by zero"));
  /* and the same function without the fault works */
  args[1] = 2;
  args[0] = 10;
  n = call_data(d, "divide(uint256,uint256)", args, 2);
  devnet_check(bbvfl_rpc_eth_call(F.fx.rpc, NULL, F.probe, d, n, NULL, &out, &outn, &err), &err);
  assert_int_equal(word_u64(out), 5);
  free(out);
}

static void test_revert_in_transaction(void **state) {
  (void)state;
  ensure_probe();
  uint8_t d[4];
  size_t n = call_data(d, "failWithReason()", NULL, 0);
  bbvfl_receipt rc;
  bbvfl_err err = {0};
  /* with gas estimation the revert shows up before sending */
  assert_int_equal(bbvfl_sender_transact(F.me_s, F.probe, NULL, d, n, 0, 30, &rc, &err), -1);
  assert_int_equal(err.code, BBVFL_E_REVERT);
  assert_non_null(strstr(err.msg, "probe says no"));
  bbvfl_receipt_clear(&rc);
  /* with a fixed gas limit it is mined with status 0, and replayed to find the reason */
  uint64_t before;
  devnet_check(bbvfl_sender_next_nonce(F.me_s, &before, &err), &err);
  assert_int_equal(bbvfl_sender_transact(F.me_s, F.probe, NULL, d, n, 100000, 30, &rc, &err), -1);
  assert_int_equal(err.code, BBVFL_E_REVERT);
  assert_non_null(strstr(err.msg, "reverted in block"));
  assert_non_null(strstr(err.msg, "probe says no"));
  assert_int_equal(rc.status, 0);
  assert_true(rc.block_number > 0);
  bbvfl_receipt_clear(&rc);
  uint64_t after;
  devnet_check(bbvfl_sender_next_nonce(F.me_s, &after, &err), &err);
  assert_int_equal(after, before + 1); /* a mined revert uses its nonce */
}

/* A sender on a node nothing answers for fails clearly (the JSON-RPC client's own error there is
 * test_eth_rpc_parse's test_unreachable). */
static void test_unreachable_node(void **state) {
  (void)state;
  bbvfl_rpc_opts o = {.timeout_s = 2, .retries = 1};
  bbvfl_err err = {0};
  bbvfl_rpc *r = bbvfl_rpc_new("http://127.0.0.1:1", &o, &err);
  assert_non_null(r);
  assert_null(bbvfl_sender_new(r, &F.me, 0, &err));
  assert_int_equal(err.code, BBVFL_E_RPC);
  assert_non_null(strstr(err.msg, "cannot reach the node at http://127.0.0.1:1"));
  bbvfl_rpc_free(r);
}

static void test_wrong_chain_id(void **state) {
  (void)state;
  bbvfl_err err = {0};
  bbvfl_sender *s = bbvfl_sender_new(F.fx.rpc, &F.me, 1, &err);
  assert_non_null(s);
  uint8_t h[32];
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  assert_int_equal(bbvfl_sender_send(s, F.fx.dev.addr, &one, NULL, 0, 21000, h, &err), -1);
  assert_int_equal(err.code, BBVFL_E_RPC);
  char want[96];
  snprintf(want, sizeof want, "signed for chain 1 but the node at %s is chain %llu",
           getenv("BBVFL_RPC_URL"), (unsigned long long)F.fx.chain_id);
  if (!strstr(err.msg, want)) fail_msg("unexpected message: %s", err.msg);
  bbvfl_sender_free(s);
}

/* Why a node refused is asked of the chain, not read from its words: the wrong chain above, a
 * stale nonce in test_nonce_manager_in_flight; here an account that cannot pay. */
static void test_refusal_reasons_from_chain(void **state) {
  (void)state;
  bbvfl_err err = {0};
  bbvfl_key poor;
  devnet_check(bbvfl_key_generate(&poor, &err), &err);
  bbvfl_sender *s = bbvfl_sender_new(F.fx.rpc, &poor, F.fx.chain_id, &err);
  assert_non_null(s);
  uint8_t h[32];
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  assert_int_equal(bbvfl_sender_send(s, F.fx.dev.addr, &one, NULL, 0, 21000, h, &err), -1);
  assert_true(bbvfl_err_node_refused_is(&err, BBVFL_NODE_INSUFFICIENT_FUNDS));
  bbvfl_sender_free(s);
}

static void test_batch(void **state) {
  (void)state;
  bbvfl_rpc_req q[4] = {
      {.method = "eth_chainId"},
      {.method = "eth_blockNumber", .params = json_array()},
      {.method = "eth_getBalance", .params = json_pack("[o,s]", bbvfl_json_hex(F.me.addr, 20), "latest")},
      {.method = "eth_noSuchMethod", .params = json_array()},
  };
  bbvfl_err err = {0};
  devnet_check(bbvfl_rpc_batch(F.fx.rpc, q, 4, &err), &err);
  uint64_t id, bn, bn2;
  devnet_check(bbvfl_rpc_parse_u64(q[0].result, &id, &err), &err);
  assert_int_equal(id, F.fx.chain_id);
  devnet_check(bbvfl_rpc_parse_u64(q[1].result, &bn, &err), &err);
  devnet_check(bbvfl_rpc_block_number(F.fx.rpc, &bn2, &err), &err);
  assert_int_equal(bn, bn2);
  assert_int_equal(q[2].err.code, BBVFL_OK);
  assert_true(json_is_string(q[2].result));
  assert_int_equal(q[3].err.code, BBVFL_E_RPC);
  assert_null(q[3].result);
  assert_non_null(strstr(q[3].err.msg, "eth_noSuchMethod"));
  bbvfl_rpc_batch_clear(q, 4);
}

static void test_nonce_manager_in_flight(void **state) {
  (void)state;
  ensure_probe();
  bbvfl_err err = {0};
  enum { K = 6 };
  uint8_t hashes[K][32];
  uint64_t n0;
  devnet_check(bbvfl_sender_next_nonce(F.me_s, &n0, &err), &err);
  for (uint64_t i = 0; i < K; i++) {
    uint8_t d[36];
    uint64_t v = 100 + i;
    size_t n = call_data(d, "set(uint256)", &v, 1);
    devnet_check(bbvfl_sender_send(F.me_s, F.probe, NULL, d, n, 60000, hashes[i], &err), &err);
  }
  uint64_t n1;
  devnet_check(bbvfl_sender_next_nonce(F.me_s, &n1, &err), &err);
  assert_int_equal(n1, n0 + K);
  for (int i = 0; i < K; i++) {
    bbvfl_receipt rc;
    devnet_check(bbvfl_rpc_wait_receipt(F.fx.rpc, hashes[i], 30, &rc, &err), &err);
    assert_int_equal(rc.status, 1);
    json_t *tx;
    assert_int_equal(bbvfl_rpc_get_tx(F.fx.rpc, hashes[i], &tx, &err), 1);
    uint64_t nonce;
    devnet_check(bbvfl_rpc_parse_u64(json_object_get(tx, "nonce"), &nonce, &err), &err);
    assert_int_equal(nonce, n0 + (uint64_t)i);
    json_decref(tx);
    bbvfl_receipt_clear(&rc);
  }
  assert_int_equal(probe_get(), 100 + K - 1);
  uint64_t chain_nonce;
  devnet_check(bbvfl_rpc_nonce(F.fx.rpc, F.me.addr, "latest", &chain_nonce, &err), &err);
  assert_int_equal(chain_nonce, n0 + K);

  /* Another process uses the same key: our local nonce is stale, the node says "nonce too
   * low", the sender re-reads the nonce and succeeds. */
  bbvfl_sender *other = bbvfl_sender_new(F.fx.rpc, &F.me, F.fx.chain_id, &err);
  assert_non_null(other);
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_receipt rc;
  devnet_check(bbvfl_sender_transact(other, F.fx.dev.addr, &one, NULL, 0, 21000, 30, &rc, &err), &err);
  bbvfl_receipt_clear(&rc);
  bbvfl_sender_free(other);
  devnet_check(bbvfl_sender_transact(F.me_s, F.fx.dev.addr, &one, NULL, 0, 21000, 30, &rc, &err), &err);
  assert_int_equal(rc.status, 1);
  bbvfl_receipt_clear(&rc);
  devnet_check(bbvfl_rpc_nonce(F.fx.rpc, F.me.addr, "latest", &chain_nonce, &err), &err);
  assert_int_equal(chain_nonce, n0 + K + 2);
}

static void test_resend_same_bytes_is_success(void **state) {
  (void)state;
  /* Sending identical signed bytes twice (a retry after a lost answer) is not an error. */
  bbvfl_tx tx;
  memset(&tx, 0, sizeof tx);
  bbvfl_err err = {0};
  uint64_t nonce;
  devnet_check(bbvfl_rpc_nonce(F.fx.rpc, F.fx.dev.addr, "pending", &nonce, &err), &err);
  bbvfl_u256 gp;
  devnet_check(bbvfl_rpc_gas_price(F.fx.rpc, &gp, &err), &err);
  tx.type = BBVFL_TX_LEGACY;
  tx.chain_id = F.fx.chain_id;
  tx.nonce = nonce;
  devnet_check(bbvfl_u256_mul_u64(&tx.gas_price, &gp, 2), &err);
  tx.gas_limit = 21000;
  tx.has_to = 1;
  memcpy(tx.to, F.me.addr, 20);
  tx.value = bbvfl_u256_from_u64(5);
  uint8_t *raw, h1[32], h2[32], h3[32];
  size_t raw_len;
  devnet_check(bbvfl_tx_sign(&tx, &F.fx.dev, &raw, &raw_len, h1, &err), &err);
  devnet_check(bbvfl_rpc_send_raw(F.fx.rpc, raw, raw_len, h2, &err), &err);
  assert_memory_equal(h1, h2, 32);
  bbvfl_receipt rc;
  devnet_check(bbvfl_rpc_wait_receipt(F.fx.rpc, h2, 30, &rc, &err), &err);
  bbvfl_receipt_clear(&rc);
  /* mined already: the node answers "nonce too low" but knows the hash */
  devnet_check(bbvfl_rpc_send_raw(F.fx.rpc, raw, raw_len, h3, &err), &err);
  assert_memory_equal(h1, h3, 32);
  free(raw);
  bbvfl_sender_resync(F.fx.dev_s); /* we used the dev key behind its back */
}

static void test_deploy_from_artifact(void **state) {
  (void)state;
  char dir[] = "/tmp/bbvfl-abi-test.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256], *json;
  snprintf(path, sizeof path, "%s/EthProbe.json", dir);
  size_t jl = strlen(ETH_PROBE_BIN) + 128;
  json = malloc(jl);
  snprintf(json, jl, "{\"contractName\":\"EthProbe\",\"abi\":[],\"bytecode\":\"0x%s\"}", ETH_PROBE_BIN);
  bbvfl_err err = {0};
  devnet_check(bbvfl_write_file_atomic(path, json, strlen(json), 0644, &err), &err);
  free(json);
  setenv("BBVFL_ABI_DIR", dir, 1);
  uint8_t addr[20];
  bbvfl_receipt rc;
  devnet_check(bbvfl_deploy(F.me_s, "EthProbe", NULL, 0, 30, addr, &rc, &err), &err);
  assert_memory_equal(addr, rc.contract, 20);
  bbvfl_receipt_clear(&rc);
  /* it is a working contract */
  uint8_t d[4], *out;
  size_t outn;
  call_data(d, "get()", NULL, 0);
  devnet_check(bbvfl_rpc_eth_call(F.fx.rpc, NULL, addr, d, 4, NULL, &out, &outn, &err), &err);
  assert_int_equal(outn, 32);
  assert_int_equal(word_u64(out), 0);
  free(out);
  /* missing artifact and bad names: clear errors, nothing sent */
  assert_int_equal(bbvfl_deploy(F.me_s, "NoSuchContract", NULL, 0, 30, addr, NULL, &err), -1);
  assert_int_equal(err.code, BBVFL_E_IO);
  assert_non_null(strstr(err.msg, "NoSuchContract"));
  assert_int_equal(bbvfl_deploy(F.me_s, "../etc/passwd", NULL, 0, 30, addr, NULL, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  snprintf(path, sizeof path, "%s/Broken.json", dir);
  devnet_check(bbvfl_write_file_atomic(path, "{\"abi\":[]", 9, 0644, &err), &err);
  assert_int_equal(bbvfl_deploy(F.me_s, "Broken", NULL, 0, 30, addr, NULL, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  unsetenv("BBVFL_ABI_DIR");
  unlink(path);
  snprintf(path, sizeof path, "%s/EthProbe.json", dir);
  unlink(path);
  rmdir(dir);
}

static void test_sync_send(void **state) {
  (void)state;
  ensure_probe();
  bbvfl_err err = {0};
  bbvfl_sender_set_sync(F.me_s, 1);
  uint8_t d[36];
  uint64_t v = 9;
  size_t n = call_data(d, "set(uint256)", &v, 1);
  bbvfl_receipt rc;
  int st = bbvfl_sender_transact(F.me_s, F.probe, NULL, d, n, 0, 30, &rc, &err);
  if (st != 0) bbvfl_sender_set_sync(F.me_s, 0);
  devnet_check(st, &err);
  assert_int_equal(rc.status, 1);
  assert_int_equal(json_array_size(rc.logs), 1);
  bbvfl_receipt_clear(&rc);
  assert_int_equal(probe_get(), 9);
  /* a mined revert through the same path still names its reason */
  n = call_data(d, "failWithReason()", NULL, 0);
  st = bbvfl_sender_transact(F.me_s, F.probe, NULL, d, n, 100000, 30, &rc, &err);
  bbvfl_sender_set_sync(F.me_s, 0);
  assert_int_equal(st, -1);
  assert_int_equal(err.code, BBVFL_E_REVERT);
  assert_non_null(strstr(err.msg, "probe says no"));
  assert_int_equal(rc.status, 0);
  bbvfl_receipt_clear(&rc);
}

/* Waits until the transaction under test is in anvil's pool (txpool_status: pending >= 1; automine
 * is off), drops every pending transaction, then mines again. Sets *arg to 1 when it saw the
 * transaction and dropped it: the test then knows the transaction was really gone. */
static void *dropper(void *arg) {
  int *dropped = arg;
  bbvfl_err err = {0};
  bbvfl_rpc *r = bbvfl_rpc_new(getenv("BBVFL_RPC_URL"), NULL, &err);
  json_t *res = NULL;
  if (!r) return NULL;
  double t0 = bbvfl_now();
  while (bbvfl_now() - t0 < 20) {
    uint64_t pending = 0;
    int got = 0;
    if (bbvfl_rpc_call(r, "txpool_status", NULL, &res, &err) == 0) {
      got = bbvfl_rpc_parse_u64(json_object_get(res, "pending"), &pending, &err) == 0;
      json_decref(res);
    }
    if (got && pending >= 1) {
      if (bbvfl_rpc_call(r, "anvil_dropAllTransactions", NULL, &res, &err) == 0) {
        json_decref(res);
        *dropped = 1;
      }
      break;
    }
    bbvfl_sleep(0.01);
  }
  if (bbvfl_rpc_call(r, "evm_setAutomine", json_pack("[b]", 1), &res, &err) == 0) json_decref(res);
  if (bbvfl_rpc_call(r, "evm_mine", NULL, &res, &err) == 0) json_decref(res);
  bbvfl_rpc_free(r);
  return NULL;
}

static void test_dropped_tx_is_resent(void **state) {
  (void)state;
  bbvfl_err err = {0};
  json_t *res;
  devnet_check(bbvfl_rpc_call(F.fx.rpc, "evm_setAutomine", json_pack("[b]", 0), &res, &err), &err);
  json_decref(res);
  pthread_t th;
  int dropped = 0;
  assert_int_equal(pthread_create(&th, NULL, dropper, &dropped), 0);
  bbvfl_sender_set_drop_check(F.me_s, 0.05);
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_receipt rc;
  uint64_t before;
  devnet_check(bbvfl_sender_next_nonce(F.me_s, &before, &err), &err);
  int st = bbvfl_sender_transact(F.me_s, F.fx.dev.addr, &one, NULL, 0, 21000, 20, &rc, &err);
  pthread_join(th, NULL);
  bbvfl_sender_set_drop_check(F.me_s, 5);
  devnet_check(st, &err);
  assert_int_equal(dropped, 1); /* the node really lost the transaction once */
  assert_int_equal(rc.status, 1);
  json_t *tx;
  assert_int_equal(bbvfl_rpc_get_tx(F.fx.rpc, rc.hash, &tx, &err), 1);
  uint64_t nonce;
  devnet_check(bbvfl_rpc_parse_u64(json_object_get(tx, "nonce"), &nonce, &err), &err);
  assert_int_equal(nonce, before); /* the same transaction, not a new one */
  json_decref(tx);
  bbvfl_receipt_clear(&rc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_funded_and_chain),
      cmocka_unit_test(test_deploy_eip1559_call_and_logs),
      cmocka_unit_test(test_legacy),
      cmocka_unit_test(test_revert_reasons_in_calls),
      cmocka_unit_test(test_revert_in_transaction),
      cmocka_unit_test(test_unreachable_node),
      cmocka_unit_test(test_wrong_chain_id),
      cmocka_unit_test(test_refusal_reasons_from_chain),
      cmocka_unit_test(test_batch),
      cmocka_unit_test(test_nonce_manager_in_flight),
      cmocka_unit_test(test_resend_same_bytes_is_success),
      cmocka_unit_test(test_deploy_from_artifact),
      cmocka_unit_test(test_dropped_tx_is_resent),
      cmocka_unit_test(test_sync_send),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
