/* The sender on a live chain (anvil of tests/with-devnet.sh, switched to 1 s blocks or to no
 * mining by the tests themselves over anvil's RPC): a node that loses several transactions at
 * once (all re-sent and mined, in nonce order, the same transactions), a base fee spike of
 * 100 gwei for 3 blocks (the session's transaction is mined at most 3 blocks after the spike), a
 * base fee held high (the transaction is replaced: same nonce, higher fees, another hash, and
 * the replacement counts), a fee cap below the spike (nothing is sent while the base fee is above
 * it, the wait is reported, sending resumes when it falls), a reorg of depth 3 that takes mined
 * transactions out (re-sent, mined again, confirmed), the fees paid, and the reason of a revert
 * caused by another transaction of the same block. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "devnet_fixture.h"
#include "test_skip.h"

#include "common/fsutil.h"
#include "devnet/devnet.h"
#include "eth/hex.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"

#define GWEI 1000000000ULL

static devnet_fixture FX;

static int setup(void **state) {
  (void)state;
  return devnet_open(&FX) ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  devnet_close(&FX);
  return 0;
}

static void anvil(bbvfl_rpc *r, const char *method, json_t *params) {
  json_t *res = NULL;
  bbvfl_err err = {0};
  devnet_check(bbvfl_rpc_call(r, method, params ? params : json_array(), &res, &err), &err);
  json_decref(res);
}

static uint64_t head(bbvfl_rpc *r) {
  uint64_t h = 0;
  bbvfl_err err = {0};
  devnet_check(bbvfl_rpc_block_number(r, &h, &err), &err);
  return h;
}

static uint64_t pool_pending(bbvfl_rpc *r) {
  json_t *res = NULL;
  bbvfl_err err = {0};
  uint64_t n = 0;
  devnet_check(bbvfl_rpc_call(r, "txpool_status", json_array(), &res, &err), &err);
  devnet_check(bbvfl_rpc_parse_u64(json_object_get(res, "pending"), &n, &err), &err);
  json_decref(res);
  return n;
}

/* Waits (at most 30 s) until the chain's head is past `h`; returns the new head. */
static uint64_t next_block(bbvfl_rpc *r, uint64_t h) {
  double t0 = bbvfl_now();
  for (;;) {
    uint64_t now = head(r);
    if (now > h) return now;
    if (bbvfl_now() - t0 > 30) fail_msg("no new block after block %llu for 30 s", (unsigned long long)h);
    bbvfl_sleep(0.02);
  }
}

static uint64_t tx_nonce(const uint8_t hash[32]) {
  json_t *tx = NULL;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_get_tx(FX.rpc, hash, &tx, &err), 1);
  uint64_t n = 0;
  devnet_check(bbvfl_rpc_parse_u64(json_object_get(tx, "nonce"), &n, &err), &err);
  json_decref(tx);
  return n;
}

/* What the status callback saw. */
typedef struct {
  int n[8];
  double max_base;
  double last_cap;
} seen;

static void on_status(void *ctx, const bbvfl_sender_status *st) {
  seen *s = ctx;
  if ((int)st->kind < 8) s->n[st->kind]++;
  if (st->base_fee_gwei > s->max_base) s->max_base = st->base_fee_gwei;
  s->last_cap = st->cap_gwei;
}

static void restore_mining(void) {
  anvil(FX.rpc, "evm_setIntervalMining", json_pack("[i]", 0));
  anvil(FX.rpc, "evm_setAutomine", json_pack("[b]", 1));
}

/* A node that loses several transactions at once: four sent back to back with mining off, all
 * dropped from the pool; the sender re-sends every one (in nonce order) and all are mined. */
static void test_several_lost_all_resent(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_sender *s = devnet_new_client(&FX, 1, &k);
  seen sn = {0};
  bbvfl_sender_set_status(s, on_status, &sn);
  anvil(FX.rpc, "evm_setAutomine", json_pack("[b]", 0));
  enum { N = 4 };
  bbvfl_pending p[N];
  bbvfl_err err = {0};
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  uint64_t n0;
  devnet_check(bbvfl_sender_next_nonce(s, &n0, &err), &err);
  for (int i = 0; i < N; i++) devnet_check(bbvfl_sender_send_tracked(s, FX.dev.addr, &one, NULL, 0, 21000, &p[i], &err), &err);
  assert_int_equal(pool_pending(FX.rpc), N);
  anvil(FX.rpc, "anvil_dropAllTransactions", NULL);
  assert_int_equal(pool_pending(FX.rpc), 0); /* the node really lost all four */
  anvil(FX.rpc, "evm_setIntervalMining", json_pack("[i]", 1));
  uint64_t blk0 = 0;
  for (int i = 0; i < N; i++) {
    bbvfl_receipt rc;
    int st = bbvfl_sender_wait_tracked(s, &p[i], 20, &rc, &err);
    if (st != 0) restore_mining();
    devnet_check(st, &err);
    assert_int_equal(rc.status, 1);
    if (i == 0) blk0 = rc.block_number;
    assert_int_equal(rc.block_number, blk0); /* all handed in again at once: one block */
    assert_int_equal(tx_nonce(rc.hash), n0 + (uint64_t)i); /* the same transaction, its own nonce */
    bbvfl_receipt_clear(&rc);
    bbvfl_pending_clear(&p[i]);
  }
  restore_mining();
  assert_true(sn.n[BBVFL_SENDER_RESENT] >= N); /* every one of them was handed in again */
  uint64_t latest;
  devnet_check(bbvfl_rpc_nonce(FX.rpc, k.addr, "latest", &latest, &err), &err);
  assert_int_equal(latest, n0 + N);
  uint64_t gas;
  bbvfl_u256 wei;
  bbvfl_sender_fees(s, &gas, &wei);
  assert_int_equal(gas, 21000 * N); /* each counted once */
  assert_false(bbvfl_u256_is_zero(&wei));
  bbvfl_sender_free(s);
  bbvfl_key_wipe(&k);
}

/* Sets the next blocks' base fee to `fee` for `blocks` blocks (one call per block), then back to
 * `after`. Runs beside a transaction (thread). */
typedef struct {
  uint64_t fee, after;
  int blocks;
  uint64_t first, last; /* the spike's blocks */
  volatile int started;
} spike;

static void *spiker(void *arg) {
  spike *sp = arg;
  bbvfl_err err = {0};
  bbvfl_rpc *r = bbvfl_rpc_new(getenv("BBVFL_RPC_URL"), NULL, &err);
  if (!r) return NULL;
  json_t *res = NULL;
  uint64_t h = head(r);
  for (int i = 0; i < sp->blocks; i++) {
    if (bbvfl_rpc_call(r, "anvil_setNextBlockBaseFeePerGas", json_pack("[o]", bbvfl_json_quantity(sp->fee)), &res, &err) == 0)
      json_decref(res);
    h = next_block(r, h);
    if (i == 0) sp->first = h;
    sp->started = 1;
  }
  sp->last = h;
  if (bbvfl_rpc_call(r, "anvil_setNextBlockBaseFeePerGas", json_pack("[o]", bbvfl_json_quantity(sp->after)), &res, &err) == 0)
    json_decref(res);
  bbvfl_rpc_free(r);
  return NULL;
}

/* 100 gwei for 3 blocks, no cap: a transaction sent at the spike's start is mined at most 3
 * blocks after its end. */
static void test_spike_costs_at_most_3_blocks(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_sender *s = devnet_new_client(&FX, 1, &k);
  bbvfl_sender_set_fee_ttl(s, 600); /* as the on-chain client: fees cached from before the spike */
  bbvfl_err err = {0};
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_receipt rc;
  devnet_check(bbvfl_sender_transact(s, FX.dev.addr, &one, NULL, 0, 21000, 30, &rc, &err), &err);
  bbvfl_receipt_clear(&rc);
  anvil(FX.rpc, "evm_setAutomine", json_pack("[b]", 0));
  anvil(FX.rpc, "evm_setIntervalMining", json_pack("[i]", 1));
  spike sp = {.fee = 100 * GWEI, .after = GWEI, .blocks = 3};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, spiker, &sp), 0);
  while (!sp.started) bbvfl_sleep(0.01);
  int st = bbvfl_sender_transact(s, FX.dev.addr, &one, NULL, 0, 21000, 30, &rc, &err);
  pthread_join(th, NULL);
  restore_mining();
  devnet_check(st, &err);
  assert_int_equal(rc.status, 1);
  assert_true(rc.block_number <= sp.last + 3);
  bbvfl_receipt_clear(&rc);
  bbvfl_sender_free(s);
  bbvfl_key_wipe(&k);
}

/* A base fee held at 30 gwei (far above what a transaction signed before it allows): the
 * transaction unmined for 3 blocks is replaced (same nonce, higher fees, a new hash) and the
 * replacement is mined; the receipt is the replacement's. */
static void test_held_fee_replaces(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_sender *s = devnet_new_client(&FX, 1, &k);
  seen sn = {0};
  bbvfl_sender_set_status(s, on_status, &sn);
  bbvfl_err err = {0};
  anvil(FX.rpc, "evm_setAutomine", json_pack("[b]", 0));
  anvil(FX.rpc, "anvil_setNextBlockBaseFeePerGas", json_pack("[o]", bbvfl_json_quantity(GWEI)));
  anvil(FX.rpc, "evm_mine", NULL);
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_pending p;
  uint64_t n0;
  devnet_check(bbvfl_sender_next_nonce(s, &n0, &err), &err);
  devnet_check(bbvfl_sender_send_tracked(s, FX.dev.addr, &one, NULL, 0, 21000, &p, &err), &err);
  anvil(FX.rpc, "evm_setIntervalMining", json_pack("[i]", 1));
  spike sp = {.fee = 30 * GWEI, .after = 30 * GWEI, .blocks = 6};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, spiker, &sp), 0);
  bbvfl_receipt rc;
  int st = bbvfl_sender_wait_tracked(s, &p, 30, &rc, &err);
  pthread_join(th, NULL);
  restore_mining();
  devnet_check(st, &err);
  assert_int_equal(rc.status, 1);
  assert_true(sn.n[BBVFL_SENDER_REPRICED] >= 1);
  assert_memory_not_equal(rc.hash, p.hash, 32); /* the replacement was mined */
  assert_int_equal(tx_nonce(rc.hash), n0);      /* in the same nonce */
  assert_true(rc.effective_gas_price >= 30 * GWEI);
  uint64_t gas;
  bbvfl_u256 wei;
  bbvfl_sender_fees(s, &gas, &wei);
  assert_int_equal(gas, 21000);
  bbvfl_receipt_clear(&rc);
  bbvfl_pending_clear(&p);
  bbvfl_sender_free(s);
  bbvfl_key_wipe(&k);
}

/* A cap (5 gwei) below a spike (50 gwei for 3 blocks): nothing is sent while the base fee is above
 * it, the wait is reported with the base fee, and the transaction goes out and is mined when the
 * fee falls, with a max fee within the cap. */
static void test_cap_waits_and_resumes(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_sender *s = devnet_new_client(&FX, 1, &k);
  seen sn = {0};
  bbvfl_sender_set_status(s, on_status, &sn);
  bbvfl_u256 cap = bbvfl_u256_from_u64(5 * GWEI);
  bbvfl_sender_set_max_fee(s, &cap);
  bbvfl_err err = {0};
  anvil(FX.rpc, "evm_setAutomine", json_pack("[b]", 0));
  anvil(FX.rpc, "evm_setIntervalMining", json_pack("[i]", 1));
  spike sp = {.fee = 50 * GWEI, .after = GWEI, .blocks = 3};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, spiker, &sp), 0);
  while (!sp.started) bbvfl_sleep(0.01);
  uint64_t n0;
  devnet_check(bbvfl_sender_next_nonce(s, &n0, &err), &err);
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_receipt rc;
  int st = bbvfl_sender_transact(s, FX.dev.addr, &one, NULL, 0, 21000, 30, &rc, &err);
  pthread_join(th, NULL);
  restore_mining();
  devnet_check(st, &err);
  assert_int_equal(sn.n[BBVFL_SENDER_FEE_WAIT] >= 1, 1);
  assert_int_equal(sn.n[BBVFL_SENDER_FEE_OK], 1);
  assert_true(sn.max_base >= 20); /* the report showed the base fee */
  assert_true(sn.last_cap > 4.99 && sn.last_cap < 5.01);
  assert_true(rc.block_number > sp.first); /* not in the spike's first block: it waited */
  assert_true(rc.effective_gas_price <= 5 * GWEI);
  json_t *tx = NULL;
  assert_int_equal(bbvfl_rpc_get_tx(FX.rpc, rc.hash, &tx, &err), 1);
  uint64_t maxfee = 0;
  devnet_check(bbvfl_rpc_parse_u64(json_object_get(tx, "maxFeePerGas"), &maxfee, &err), &err);
  json_decref(tx);
  assert_true(maxfee <= 5 * GWEI);
  bbvfl_receipt_clear(&rc);
  bbvfl_sender_free(s);
  bbvfl_key_wipe(&k);
}

/* Blocks made smaller than a transaction (evm_setBlockGasLimit below its gas): the node refuses
 * it; the sender finds out why from the next block's gas limit, reports the wait, and sends the
 * same call once the limit is back (restored here by the status callback, on the wait's report). */
typedef struct {
  seen sn;
  uint64_t limit;
} gas_wait;

static void on_gas_status(void *ctx, const bbvfl_sender_status *st) {
  gas_wait *g = ctx;
  on_status(&g->sn, st);
  if (st->kind == BBVFL_SENDER_GAS_LIMIT_WAIT && g->sn.n[BBVFL_SENDER_GAS_LIMIT_WAIT] == 2)
    anvil(FX.rpc, "evm_setBlockGasLimit", json_pack("[o]", bbvfl_json_quantity(g->limit)));
}

static void test_gas_limit_waits(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_sender *s = devnet_new_client(&FX, 1, &k);
  json_t *b = NULL;
  bbvfl_err err = {0};
  devnet_check(bbvfl_rpc_get_block(FX.rpc, "latest", 0, &b, &err), &err);
  gas_wait g = {0};
  devnet_check(bbvfl_rpc_parse_u64(json_object_get(b, "gasLimit"), &g.limit, &err), &err);
  json_decref(b);
  bbvfl_sender_set_status(s, on_gas_status, &g);
  anvil(FX.rpc, "evm_setBlockGasLimit", json_pack("[o]", bbvfl_json_quantity(30000)));
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_receipt rc;
  int st = bbvfl_sender_transact(s, FX.dev.addr, &one, NULL, 0, 50000, 60, &rc, &err);
  if (g.sn.n[BBVFL_SENDER_GAS_LIMIT_WAIT] < 2)
    anvil(FX.rpc, "evm_setBlockGasLimit", json_pack("[o]", bbvfl_json_quantity(g.limit)));
  devnet_check(st, &err);
  assert_int_equal(g.sn.n[BBVFL_SENDER_GAS_LIMIT_WAIT], 2); /* waited (reported twice, 5 s apart) */
  assert_int_equal(g.sn.n[BBVFL_SENDER_GAS_LIMIT_OK], 1);
  assert_int_equal(rc.status, 1);
  bbvfl_receipt_clear(&rc);
  /* a limit that does not come back: a bounded wait, then an error that names it */
  bbvfl_sender_set_status(s, on_status, &g.sn);
  bbvfl_sender_set_gas_limit_wait(s, 1);
  anvil(FX.rpc, "evm_setBlockGasLimit", json_pack("[o]", bbvfl_json_quantity(30000)));
  memset(&err, 0, sizeof err);
  st = bbvfl_sender_transact(s, FX.dev.addr, &one, NULL, 0, 50000, 60, &rc, &err);
  anvil(FX.rpc, "evm_setBlockGasLimit", json_pack("[o]", bbvfl_json_quantity(g.limit)));
  assert_int_equal(st, -1);
  assert_int_equal(err.rpc.kind, BBVFL_NODE_GAS_LIMIT);
  bbvfl_receipt_clear(&rc);
  bbvfl_sender_free(s);
  bbvfl_key_wipe(&k);
}

/* A reorg of depth 3 (anvil does not put the removed transactions back in its pool) takes three
 * mined transactions out: the sender notices (the chain's nonce is behind its own), re-sends them,
 * and confirming the last one waits until it is mined again and 2 blocks deep. */
static void test_reorg_resends_and_confirms(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_sender *s = devnet_new_client(&FX, 1, &k);
  seen sn = {0};
  bbvfl_sender_set_status(s, on_status, &sn);
  bbvfl_err err = {0};
  anvil(FX.rpc, "evm_setAutomine", json_pack("[b]", 0));
  uint64_t n0;
  devnet_check(bbvfl_sender_next_nonce(s, &n0, &err), &err);
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_pending p[3];
  bbvfl_receipt rc[3];
  for (int i = 0; i < 3; i++) {
    devnet_check(bbvfl_sender_send_tracked(s, FX.dev.addr, &one, NULL, 0, 21000, &p[i], &err), &err);
    anvil(FX.rpc, "evm_mine", NULL); /* one block each */
    devnet_check(bbvfl_sender_wait_tracked(s, &p[i], 10, &rc[i], &err), &err);
  }
  uint64_t h = head(FX.rpc);
  assert_int_equal(rc[2].block_number, h);
  assert_int_equal(rc[0].block_number, h - 2);
  anvil(FX.rpc, "anvil_reorg", json_pack("[i,[]]", 3));
  uint64_t latest;
  devnet_check(bbvfl_rpc_nonce(FX.rpc, k.addr, "latest", &latest, &err), &err);
  assert_int_equal(latest, n0); /* the reorg really took all three out */
  anvil(FX.rpc, "evm_setIntervalMining", json_pack("[i]", 1));
  int st = bbvfl_sender_confirm(s, &rc[2], 2, 30, &err);
  uint64_t after = head(FX.rpc);
  for (int i = 0; i < 2 && st == 0; i++) { /* the other two: their new receipts */
    bbvfl_receipt_clear(&rc[i]);
    st = bbvfl_sender_wait_tracked(s, &p[i], 10, &rc[i], &err);
  }
  restore_mining();
  devnet_check(st, &err);
  assert_true(sn.n[BBVFL_SENDER_VANISHED] >= 3);
  assert_true(rc[2].block_number > h && after >= rc[2].block_number + 2); /* the receipt of its new block */
  devnet_check(bbvfl_rpc_nonce(FX.rpc, k.addr, "latest", &latest, &err), &err);
  assert_int_equal(latest, n0 + 3); /* all three mined again */
  uint64_t gas;
  bbvfl_sender_fees(s, &gas, NULL);
  assert_int_equal(gas, 21000 * 3); /* the vanished receipts were taken back; the new one counted */
  for (int i = 0; i < 3; i++) {
    bbvfl_receipt_clear(&rc[i]);
    bbvfl_pending_clear(&p[i]);
  }
  bbvfl_sender_free(s);
  bbvfl_key_wipe(&k);
}

/* A stall names its cause: with mining off, a transaction in the pool is "not included" (its
 * nonce, fees against the base fee); after 10 s without a block, "no new block". */
static void test_stall_names_cause(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_sender *s = devnet_new_client(&FX, 1, &k);
  bbvfl_err err = {0};
  anvil(FX.rpc, "evm_setAutomine", json_pack("[b]", 0));
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_pending p;
  devnet_check(bbvfl_sender_send_tracked(s, FX.dev.addr, &one, NULL, 0, 21000, &p, &err), &err);
  bbvfl_receipt rc;
  int st1 = bbvfl_sender_wait_tracked(s, &p, 1, &rc, &err);
  bbvfl_err e1 = err;
  bbvfl_receipt_clear(&rc);
  memset(&err, 0, sizeof err);
  int st2 = bbvfl_sender_wait_tracked(s, &p, 11, &rc, &err);
  bbvfl_receipt_clear(&rc);
  restore_mining();
  anvil(FX.rpc, "evm_mine", NULL);
  assert_int_equal(st1, -1);
  assert_int_equal(e1.code, BBVFL_E_TIMEOUT);
  if (!strstr(e1.msg, "not included")) fail_msg("no cause named: %s", e1.msg);
  assert_int_equal(st2, -1);
  assert_int_equal(err.code, BBVFL_E_TIMEOUT);
  if (!strstr(err.msg, "no new block for")) fail_msg("no cause named: %s", err.msg);
  devnet_check(bbvfl_sender_wait_tracked(s, &p, 10, &rc, &err), &err); /* mined once blocks come */
  bbvfl_receipt_clear(&rc);
  bbvfl_pending_clear(&p);
  bbvfl_sender_free(s);
  bbvfl_key_wipe(&k);
}

/* Two calls racing into one block, the later one reverting only because of the earlier one (two
 * clients disputing the same claim: the second reverts NoClaim). The contract (runtime code set
 * with anvil_setCode): the first call sets slot 0, a call that finds it set reverts with the
 * custom error 0xdeadbeef. Mining off, both sent (gas given, nothing estimated), then one block:
 * one call succeeds, the other's revert is decoded with its selector, although replaying it on
 * the state before the block succeeds (the replay on the block's final state is the one that
 * reverts), and the message says which replay it is. */
static void test_same_block_revert_reason(void **state) {
  (void)state;
  /* SLOAD(0) ? revert(0xdeadbeef) : SSTORE(0, 1) */
  static const char code[] = "0x600054600c57600160005500" "5b63deadbeef60e01b60005260046000fd";
  static const uint8_t at[20] = {0xbb, 0xf1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
  char at_hex[43];
  bbvfl_hex_encode(at, 20, at_hex);
  anvil(FX.rpc, "anvil_setCode", json_pack("[s,s]", at_hex, code));
  bbvfl_key k;
  bbvfl_sender *s2 = devnet_new_client(&FX, 1, &k);
  bbvfl_sender *s1 = FX.dev_s;
  bbvfl_err err = {0};
  anvil(FX.rpc, "evm_setAutomine", json_pack("[b]", 0));
  bbvfl_pending p1, p2;
  devnet_check(bbvfl_sender_send_tracked(s1, at, NULL, NULL, 0, 100000, &p1, &err), &err);
  devnet_check(bbvfl_sender_send_tracked(s2, at, NULL, NULL, 0, 100000, &p2, &err), &err);
  assert_int_equal(pool_pending(FX.rpc), 2);
  anvil(FX.rpc, "evm_mine", NULL);
  restore_mining();
  bbvfl_receipt r1, r2;
  bbvfl_err e1 = {0}, e2 = {0};
  int st1 = bbvfl_sender_wait_tracked(s1, &p1, 10, &r1, &e1);
  int st2 = bbvfl_sender_wait_tracked(s2, &p2, 10, &r2, &e2);
  uint64_t b1 = r1.block_number, b2 = r2.block_number;
  bbvfl_receipt_clear(&r1);
  bbvfl_receipt_clear(&r2);
  bbvfl_pending_clear(&p1);
  bbvfl_pending_clear(&p2);
  bbvfl_sender_free(s2);
  bbvfl_key_wipe(&k);
  assert_true(b1 != 0 && b1 == b2); /* one block */
  assert_true((st1 == 0) != (st2 == 0)); /* exactly one reverted */
  const bbvfl_err *e = st1 == 0 ? &e2 : &e1;
  assert_int_equal(e->code, BBVFL_E_REVERT);
  if (!bbvfl_err_revert_sel_is(e, 0xdeadbeefu)) fail_msg("the revert's selector was not decoded: %s", e->msg);
  if (!strstr(e->msg, "final state")) fail_msg("the message does not say which replay decoded it: %s", e->msg);
}

/* A node without a fee market (anvil --hardfork berlin: no base fee in its blocks, eth_feeHistory
 * answers zeros): the sender asked for EIP-1559 sends a legacy transaction at the gas price. */
static void test_legacy_without_base_fee(void **state) {
  (void)state;
  char dir[] = "/tmp/bbvfl-legacy-XXXXXX";
  assert_non_null(mkdtemp(dir));
  bbvfl_devnet_opts o = {.dir = dir, .hardfork = "berlin"};
  bbvfl_devnet d;
  bbvfl_err err = {0};
  devnet_check(bbvfl_devnet_up(&o, &d, &err), &err);
  bbvfl_rpc *r = bbvfl_rpc_new(d.rpc_url, NULL, &err);
  bbvfl_sender *s = r ? bbvfl_sender_new(r, &FX.dev, 0, &err) : NULL;
  bbvfl_receipt rc;
  memset(&rc, 0, sizeof rc);
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  int st = s ? bbvfl_sender_transact(s, FX.dev.addr, &one, NULL, 0, 21000, 30, &rc, &err) : -1;
  json_t *tx = NULL;
  int known = st == 0 ? bbvfl_rpc_get_tx(r, rc.hash, &tx, &err) : -1;
  const char *type = json_string_value(json_object_get(tx, "type"));
  char t[8];
  snprintf(t, sizeof t, "%s", type ? type : "?");
  json_decref(tx);
  bbvfl_receipt_clear(&rc);
  bbvfl_sender_free(s);
  bbvfl_rpc_free(r);
  bbvfl_devnet_down(dir, 10, NULL);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  devnet_check(st, &err);
  assert_int_equal(known, 1);
  assert_string_equal(t, "0x0"); /* legacy */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_several_lost_all_resent),
      cmocka_unit_test(test_spike_costs_at_most_3_blocks),
      cmocka_unit_test(test_held_fee_replaces),
      cmocka_unit_test(test_cap_waits_and_resumes),
      cmocka_unit_test(test_reorg_resends_and_confirms),
      cmocka_unit_test(test_legacy_without_base_fee),
      cmocka_unit_test(test_gas_limit_waits),
      cmocka_unit_test(test_stall_names_cause),
      cmocka_unit_test(test_same_block_revert_reason),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
