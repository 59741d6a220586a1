/* Masked mode on a real chain (fresh anvil from tests/with-devnet.sh): four freshly generated
 * keys register, elect, and submit vectors masked by dp/masks with pair keys derived by ECDH from
 * the public keys read back from the Registered events. Checks, on chain:
 *  - no submission's calldata (read back with eth_getTransactionByHash) equals the client's
 *    unmasked vector (which the test knows because it drew it), and every round sum equals the
 *    sum of the unmasked vectors exactly;
 *  - a dropout: one client stays silent in round 1, expireRound voids the round and announces the
 *    remaining set (RoundReopened), the three re-submit the same q masked for the new set (fresh
 *    masks: every lane of the re-submission is new), and the sum is exactly theirs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "devnet_fixture.h"
#include "test_skip.h"

#include "dp/masks.h"
#include "dp/rng.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"
#include "binding/contract.h"

enum { M = 4, B = 2, P = 5, N = B * P, LEVELS = 16, TIMEOUT = 5 };

static devnet_fixture fx;
static bbvfl_key g_keys[M];
static bbvfl_sender *g_s[M];
static uint8_t g_agg[20];
static bbvfl_aggc g_ac;

/* Submits y for round r from client i; returns the calldata's data bytes as the chain has them. */
static void submit(unsigned i, uint64_t r, const uint8_t *y, uint8_t *onchain) {
  bbvfl_err err;
  uint8_t *d;
  size_t len;
  devnet_check(bbvfl_cenc_submit(r, y, 2 * N, &d, &len, &err), &err);
  bbvfl_receipt rc;
  int st = bbvfl_sender_transact(g_s[i], g_agg, NULL, d, len, 0, 30, &rc, &err);
  free(d);
  devnet_check(st, &err);
  json_t *tx = NULL;
  assert_int_equal(bbvfl_rpc_get_tx(fx.rpc, rc.hash, &tx, &err), 1);
  bbvfl_receipt_clear(&rc);
  const char *input = json_string_value(json_object_get(tx, "input"));
  assert_non_null(input);
  uint8_t *raw;
  size_t raw_len;
  devnet_check(bbvfl_hex_decode_alloc(input, &raw, &raw_len, &err), &err);
  /* selector, round, offset, length, data */
  assert_true(raw_len >= 4 + 96 + 2 * N);
  memcpy(onchain, raw + 4 + 96, 2 * N);
  free(raw);
  json_decref(tx);
}

static void mine(unsigned blocks) {
  bbvfl_err err;
  json_t *res = NULL;
  devnet_check(bbvfl_rpc_call(fx.rpc, "anvil_mine", json_pack("[o]", bbvfl_json_quantity(blocks)), &res, &err), &err);
  json_decref(res);
}

static int setup(void **st) {
  (void)st;
  if (devnet_open(&fx)) return -1;
  for (unsigned i = 0; i < M; i++) g_s[i] = devnet_new_client(&fx, 1, &g_keys[i]);
  bbvfl_cconfig c = {.clients = M, .batch = B, .dim = P, .levels = LEVELS, .beta_micro = 200000,
                     .masked = 1, .train_rounds = 2, .eval_rounds = 1, .epochs = 1,
                     .commit_blocks = 10, .reveal_blocks = 10, .active_blocks = 20,
                     .round_timeout_blocks = TIMEOUT};
  c.reward_per_submission = bbvfl_u256_from_u64(1);
  c.reward_pool = bbvfl_u256_from_u64(M * 3);
  devnet_deploy_aggregator(&fx, "BbvflAggregator", &c, g_agg);
  bbvfl_aggc_init(&g_ac, fx.rpc, g_agg);
  return 0;
}

static int teardown(void **st) {
  (void)st;
  for (unsigned i = 0; i < M; i++) {
    bbvfl_sender_free(g_s[i]);
    bbvfl_key_wipe(&g_keys[i]);
  }
  devnet_close(&fx);
  return 0;
}

/* Big-endian 16-bit lanes of the exact sum of q over `set`. */
static void want_sum(uint8_t q[M][N], uint64_t set, uint8_t *out) {
  for (unsigned j = 0; j < N; j++) {
    unsigned s = 0;
    for (unsigned i = 0; i < M; i++)
      if (set >> i & 1) s += q[i][j];
    out[2 * j] = (uint8_t)(s >> 8);
    out[2 * j + 1] = (uint8_t)s;
  }
}

static void assert_not_unmasked(const uint8_t *onchain, const uint8_t *q) {
  int same = 1;
  for (unsigned j = 0; j < N; j++)
    if ((unsigned)(onchain[2 * j] << 8 | onchain[2 * j + 1]) != q[j]) same = 0;
  assert_false(same);
}

static void check_sum(uint64_t r, uint8_t q[M][N], uint64_t set) {
  bbvfl_err err;
  uint8_t *sum;
  size_t len;
  devnet_check(bbvfl_aggc_round_sum(&g_ac, r, &sum, &len, &err), &err);
  uint8_t want[2 * N];
  want_sum(q, set, want);
  assert_int_equal(len, 2 * N);
  assert_memory_equal(sum, want, 2 * N);
  free(sum);
}

static void post_gradient(uint64_t r) {
  bbvfl_err err;
  uint8_t act[20];
  devnet_check(bbvfl_aggc_active(&g_ac, act, &err), &err);
  for (unsigned i = 0; i < M; i++) {
    if (memcmp(act, g_keys[i].addr, 20)) continue;
    uint8_t grad[4 * N] = {0}, *d;
    size_t len;
    devnet_check(bbvfl_cenc_post_gradient(r, grad, sizeof grad, NULL, 0, &d, &len, &err), &err);
    devnet_tx(g_s[i], g_agg, NULL, d, len);
    return;
  }
  fail_msg("the active client is not one of the test's keys");
}

static void test_masked_session(void **st) {
  (void)st;
  bbvfl_err err;
  uint8_t *d;
  size_t len;
  /* registration and election */
  uint8_t secrets[M][32];
  for (unsigned i = 0; i < M; i++) bbvfl_keccak256(g_keys[i].addr, 20, secrets[i]);
  devnet_register_and_elect(g_s, g_keys, M, g_agg, (const uint8_t(*)[32])secrets);
  /* the public keys as registered on chain, in index order */
  json_t *logs = NULL;
  devnet_check(bbvfl_aggc_logs(&g_ac, BBVFL_EV_REGISTERED, NULL, 0, UINT64_MAX, &logs, &err), &err);
  assert_int_equal(json_array_size(logs), M);
  uint8_t pubs[M][64];
  unsigned idx_of[M];
  for (size_t k = 0; k < M; k++) {
    bbvfl_cev ev;
    assert_int_equal(bbvfl_cev_decode(json_array_get(logs, k), &ev, &err), 1);
    assert_int_equal(ev.data_len, 64);
    assert_true(ev.index < M);
    memcpy(pubs[ev.index], ev.data, 64);
    for (unsigned i = 0; i < M; i++)
      if (!memcmp(ev.client, g_keys[i].addr, 20)) idx_of[i] = ev.index;
    bbvfl_cev_clear(&ev);
  }
  json_decref(logs);
  /* the test registered in key order, so key i is client index i */
  for (unsigned i = 0; i < M; i++) assert_int_equal(idx_of[i], i);
  uint8_t sess[32];
  bbvfl_mask_session_id(fx.chain_id, g_agg, sess);
  static bbvfl_masker mk[M];
  for (unsigned i = 0; i < M; i++)
    devnet_check(bbvfl_masker_init(&mk[i], &g_keys[i], i, M, (const uint8_t(*)[64])pubs, sess, &err), &err);

  bbvfl_rng rng;
  bbvfl_rng_init_seeded(&rng, 77, bbvfl_rng_stream(BBVFL_STREAM_TEST, 9));
  uint8_t q[M][N], y[2 * N], onchain[M][2 * N];
  const uint64_t full = (1u << M) - 1;

  /* round 0: everyone (the unmasked q are known here through the test, not the chain) */
  for (unsigned i = 0; i < M; i++) {
    for (unsigned j = 0; j < N; j++) q[i][j] = (uint8_t)bbvfl_rng_below(&rng, LEVELS + 1);
    devnet_check(bbvfl_masker_mask_u8(&mk[i], 0, full, LEVELS, q[i], N, y, &err), &err);
    submit(i, 0, y, onchain[i]);
    assert_memory_equal(onchain[i], y, 2 * N);
    assert_not_unmasked(onchain[i], q[i]);
  }
  check_sum(0, q, full);
  post_gradient(0);

  /* round 1: client 3 stays silent */
  const unsigned drop = 3;
  const uint64_t rest = full & ~(1ull << drop);
  for (unsigned i = 0; i < M; i++)
    for (unsigned j = 0; j < N; j++) q[i][j] = (uint8_t)bbvfl_rng_below(&rng, LEVELS + 1);
  for (unsigned i = 0; i < M; i++) {
    if (i == drop) continue;
    devnet_check(bbvfl_masker_mask_u8(&mk[i], 1, full, LEVELS, q[i], N, y, &err), &err);
    submit(i, 1, y, onchain[i]);
    assert_not_unmasked(onchain[i], q[i]);
  }
  bbvfl_round_state rs;
  devnet_check(bbvfl_aggc_round_state(&g_ac, &rs, &err), &err);
  assert_int_equal(rs.submitted, 3);
  mine(TIMEOUT + 1);
  uint64_t before;
  devnet_check(bbvfl_rpc_block_number(fx.rpc, &before, &err), &err);
  devnet_check(bbvfl_cenc_expire_round(&d, &len, &err), &err);
  devnet_tx(fx.dev_s, g_agg, NULL, d, len);
  devnet_check(bbvfl_aggc_round_state(&g_ac, &rs, &err), &err);
  assert_int_equal(rs.round, 1);
  assert_int_equal(rs.submitted, 0);
  assert_int_equal(rs.participants, 3);
  assert_false(rs.complete);
  /* RoundReopened(round, participants bitmap, n) announces the set */
  uint8_t t1[32];
  bbvfl_cenc_word_u64(1, t1);
  devnet_check(bbvfl_aggc_logs(&g_ac, BBVFL_EV_ROUND_REOPENED, t1, before + 1, BBVFL_BLOCK_LATEST, &logs, &err), &err);
  assert_int_equal(json_array_size(logs), 1);
  bbvfl_cev rev;
  assert_int_equal(bbvfl_cev_decode(json_array_get(logs, 0), &rev, &err), 1);
  assert_int_equal(rev.kind, BBVFL_EV_ROUND_REOPENED);
  assert_int_equal(rev.round, 1);
  assert_int_equal(rev.bitmap, rest);
  const uint64_t rev_set = rev.bitmap; /* the set the clients re-mask for: the one the event announces */
  assert_int_equal(rev.participants, 3);
  bbvfl_cev_clear(&rev);
  json_decref(logs);
  /* no RoundCompleted for the voided attempt */
  devnet_check(bbvfl_aggc_logs(&g_ac, BBVFL_EV_ROUND_COMPLETED, NULL, before + 1, UINT64_MAX, &logs, &err), &err);
  assert_int_equal(json_array_size(logs), 0);
  json_decref(logs);

  /* the re-run: the same q, masked for the announced set */
  for (unsigned i = 0; i < M; i++) {
    if (i == drop) continue;
    uint8_t again[2 * N];
    devnet_check(bbvfl_masker_mask_u8(&mk[i], 1, rev_set, LEVELS, q[i], N, y, &err), &err);
    submit(i, 1, y, again);
    assert_not_unmasked(again, q[i]);
    for (unsigned j = 0; j < N; j++) /* fresh masks: every lane differs from the voided attempt */
      assert_true(again[2 * j] != onchain[i][2 * j] || again[2 * j + 1] != onchain[i][2 * j + 1]);
  }
  check_sum(1, q, rest);
  post_gradient(1);

  /* round 2 (eval) with M-1 */
  for (unsigned i = 0; i < M; i++) {
    if (i == drop) continue;
    for (unsigned j = 0; j < N; j++) q[i][j] = (uint8_t)bbvfl_rng_below(&rng, LEVELS + 1);
    devnet_check(bbvfl_masker_mask_u8(&mk[i], 2, rest, LEVELS, q[i], N, y, &err), &err);
    submit(i, 2, y, onchain[i]);
    assert_not_unmasked(onchain[i], q[i]);
  }
  check_sum(2, q, rest);
  bbvfl_phase ph;
  devnet_check(bbvfl_aggc_phase(&g_ac, &ph, &err), &err);
  assert_int_equal(ph, BBVFL_PHASE_ENDED);
  for (unsigned i = 0; i < M; i++) bbvfl_masker_wipe(&mk[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_masked_session)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
