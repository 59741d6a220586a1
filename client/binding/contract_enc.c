/* The binding's calldata encoders (binding/contract.h, bbvfl_cenc_*): pure, no RPC. Every call the
 * client, the audit and the benchmarks send to the aggregator or the naive baseline is encoded
 * here, so each function's ABI has one home; and the election's pure rules. Buffers: *out
 * malloc'd, caller frees. */
#include <stdlib.h>
#include <string.h>

#include "eth/abi.h"
#include "eth/keccak.h"
#include "binding/contract.h"
#include "binding/packing.h"

void bbvfl_cenc_word_u64(uint64_t v, uint8_t out[32]) {
  memset(out, 0, 32);
  for (int k = 0; k < 8; k++) out[31 - k] = (uint8_t)(v >> (8 * k));
}

void bbvfl_cenc_word_address(const uint8_t addr[20], uint8_t out[32]) {
  memset(out, 0, 12);
  memcpy(out + 12, addr, 20);
}

/* The Config tuple's words into b (static: inline in the head). */
static int put_config(bbvfl_abi_builder *b, const bbvfl_cconfig *c, bbvfl_err *err) {
  bbvfl_cconfig d = *c;
  if (bbvfl_cconfig_derive(&d, err) < 0) return -1;
  bbvfl_abi_put_u64(b, d.clients);
  bbvfl_abi_put_u64(b, d.batch);
  bbvfl_abi_put_u64(b, d.dim);
  bbvfl_abi_put_u64(b, d.levels);
  bbvfl_abi_put_u64(b, d.beta_micro);
  bbvfl_abi_put_bool(b, d.masked);
  bbvfl_abi_put_u64(b, d.batches_per_epoch);
  bbvfl_abi_put_u64(b, d.window);
  bbvfl_abi_put_u64(b, d.eval_rows);
  bbvfl_abi_put_u64(b, d.eval_rows_per_round);
  bbvfl_abi_put_u64(b, d.train_rows);
  bbvfl_abi_put_u64(b, d.test_rows);
  bbvfl_abi_put_u64(b, d.staleness);
  bbvfl_abi_put_bool(b, d.hashed);
  bbvfl_abi_put_u64(b, d.epochs);
  bbvfl_abi_put_u256(b, &d.reward_per_submission);
  bbvfl_abi_put_u256(b, &d.reward_pool);
  bbvfl_abi_put_u64(b, d.commit_blocks);
  bbvfl_abi_put_u64(b, d.reveal_blocks);
  bbvfl_abi_put_u64(b, d.active_blocks);
  bbvfl_abi_put_u64(b, d.round_timeout_blocks);
  bbvfl_abi_put_u64(b, d.curv_every);
  bbvfl_abi_put_u64(b, d.curv_rows);
  return 0;
}

int bbvfl_cenc_config(const bbvfl_cconfig *c, uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, NULL);
  if (put_config(&b, c, err) < 0) {
    bbvfl_abi_builder_free(&b);
    return -1;
  }
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_ctor(const bbvfl_cconfig *c, const uint8_t (*members)[20], size_t n, uint8_t **out, size_t *len,
                    bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, NULL);
  if (put_config(&b, c, err) < 0) {
    bbvfl_abi_builder_free(&b);
    return -1;
  }
  bbvfl_abi_put_address_array(&b, members, n);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

static int enc_noarg(const char *sig, uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, sig);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

static int enc_word(const char *sig, const uint8_t w[32], uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, sig);
  bbvfl_abi_put_fixed_bytes(&b, w, 32);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_register(const uint8_t pubkey[64], uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, "register(bytes)");
  bbvfl_abi_put_bytes(&b, pubkey, 64);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_register_label_holder(const uint8_t pubkey[64], uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, "registerLabelHolder(bytes)");
  bbvfl_abi_put_bytes(&b, pubkey, 64);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_post_label_gradient(uint64_t round, const uint8_t *grad, size_t grad_len, uint8_t **out,
                                   size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, "postLabelGradient(uint64,bytes)");
  bbvfl_abi_put_u64(&b, round);
  bbvfl_abi_put_bytes(&b, grad, grad_len);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_commit(const uint8_t commitment[32], uint8_t **out, size_t *len, bbvfl_err *err) {
  return enc_word("commit(bytes32)", commitment, out, len, err);
}

int bbvfl_cenc_reveal(const uint8_t secret[32], uint8_t **out, size_t *len, bbvfl_err *err) {
  return enc_word("reveal(bytes32)", secret, out, len, err);
}

int bbvfl_cenc_finalize_election(uint8_t **out, size_t *len, bbvfl_err *err) {
  return enc_noarg("finalizeElection()", out, len, err);
}

int bbvfl_cenc_reelect(uint8_t **out, size_t *len, bbvfl_err *err) {
  return enc_noarg("reelect()", out, len, err);
}

int bbvfl_cenc_expire_round(uint8_t **out, size_t *len, bbvfl_err *err) {
  return enc_noarg("expireRound()", out, len, err);
}

int bbvfl_cenc_submit(uint64_t round, const uint8_t *q, size_t n, uint8_t **out, size_t *len,
                      bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, "submit(uint64,bytes)");
  bbvfl_abi_put_u64(&b, round);
  bbvfl_abi_put_bytes(&b, q, n);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_post_sum(uint64_t round, const uint8_t *sum, size_t n, uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  uint8_t h[32];
  bbvfl_keccak256(sum, n, h);
  bbvfl_abi_builder_init(&b, "postSum(uint64,bytes32)");
  bbvfl_abi_put_u64(&b, round);
  bbvfl_abi_put_word(&b, h);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_dispute(uint64_t round, const uint8_t claimer[20], const uint8_t sum_hash[32],
                       const uint8_t *const *payloads, const size_t *lens, size_t n, uint8_t **out, size_t *len,
                       bbvfl_err *err) {
  bbvfl_abi_value args;
  if (bbvfl_abi_value_list(&args, BBVFL_ABI_TUPLE, 4, err) < 0) return -1;
  bbvfl_abi_value_u64(&args.items[0], round);
  bbvfl_abi_value_address(&args.items[1], claimer);
  bbvfl_abi_value_fixed_bytes(&args.items[2], sum_hash, 32);
  int rc = bbvfl_abi_value_list(&args.items[3], BBVFL_ABI_ARRAY, n, err);
  for (size_t i = 0; rc == 0 && i < n; i++) rc = bbvfl_abi_value_bytes(&args.items[3].items[i], payloads[i], lens[i], err);
  if (rc == 0) rc = bbvfl_abi_encode_call("dispute(uint64,address,bytes32,bytes[])", &args, out, len, err);
  bbvfl_abi_value_clear(&args);
  return rc;
}

int bbvfl_cenc_aggregate(uint64_t round, const uint8_t *const *payloads, const size_t *lens, size_t n,
                         uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_value args;
  if (bbvfl_abi_value_list(&args, BBVFL_ABI_TUPLE, 2, err) < 0) return -1;
  bbvfl_abi_value_u64(&args.items[0], round);
  int rc = bbvfl_abi_value_list(&args.items[1], BBVFL_ABI_ARRAY, n, err);
  for (size_t i = 0; rc == 0 && i < n; i++) rc = bbvfl_abi_value_bytes(&args.items[1].items[i], payloads[i], lens[i], err);
  if (rc == 0) rc = bbvfl_abi_encode_call("aggregate(uint64,bytes[])", &args, out, len, err);
  bbvfl_abi_value_clear(&args);
  return rc;
}

int bbvfl_cenc_post_gradient(uint64_t round, const uint8_t *grad, size_t grad_len,
                             const uint8_t *params, size_t params_len, uint8_t **out, size_t *len,
                             bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, "postGradient(uint64,bytes,bytes)");
  bbvfl_abi_put_u64(&b, round);
  bbvfl_abi_put_bytes(&b, grad, grad_len);
  bbvfl_abi_put_bytes(&b, params, params_len);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_post_metrics(uint32_t epoch, uint32_t auroc_micro, uint32_t accuracy_micro,
                            uint64_t loss_micro, uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, "postMetrics(uint32,uint32,uint32,uint64)");
  bbvfl_abi_put_u64(&b, epoch);
  bbvfl_abi_put_u64(&b, auroc_micro);
  bbvfl_abi_put_u64(&b, accuracy_micro);
  bbvfl_abi_put_u64(&b, loss_micro);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

int bbvfl_cenc_pay_rewards(uint32_t epoch, uint8_t **out, size_t *len, bbvfl_err *err) {
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, "payRewards(uint32)");
  bbvfl_abi_put_u64(&b, epoch);
  return bbvfl_abi_builder_finish(&b, out, len, err);
}

void bbvfl_election_commitment(const uint8_t secret[32], const uint8_t sender[20], const uint8_t contract[20],
                               uint64_t chain_id, uint8_t out[32]) {
  uint8_t buf[104]; /* secret, sender, contract, chain id as a big-endian uint256 */
  memcpy(buf, secret, 32);
  memcpy(buf + 32, sender, 20);
  memcpy(buf + 52, contract, 20);
  memset(buf + 72, 0, 24);
  for (int i = 0; i < 8; i++) buf[96 + i] = (uint8_t)(chain_id >> (56 - 8 * i));
  bbvfl_keccak256(buf, sizeof buf, out);
}

void bbvfl_election_seed(const uint8_t (*secrets)[32], size_t n, uint8_t S[32]) {
  bbvfl_keccak_ctx c;
  bbvfl_keccak_init(&c);
  for (size_t i = 0; i < n; i++) bbvfl_keccak_update(&c, secrets[i], 32);
  bbvfl_keccak_final(&c, S);
}

uint64_t bbvfl_election_pick(const uint8_t S[32], uint64_t n) {
  bbvfl_u256 v;
  memcpy(v.be, S, 32);
  return bbvfl_u256_mod_u64(&v, n);
}

void bbvfl_cenc_round_sum(uint64_t round, uint8_t out[BBVFL_CENC_ROUND_SUM_LEN]) {
  bbvfl_abi_selector("roundSum(uint64)", out);
  bbvfl_cenc_word_u64(round, out + 4);
}

/* ------------------------------------------------------------------ NaiveAggregator */

void bbvfl_cenc_naive_args(uint64_t m, uint64_t coords, uint64_t salt, uint8_t out[BBVFL_CENC_NAIVE_ARGS_LEN]) {
  bbvfl_cenc_word_u64(m, out);
  bbvfl_cenc_word_u64(coords, out + 32);
  bbvfl_cenc_word_u64(salt, out + 64);
}

int bbvfl_cenc_naive_register(uint8_t **out, size_t *len, bbvfl_err *err) { return enc_noarg("register()", out, len, err); }

int bbvfl_cenc_naive_submit(uint64_t round, const uint8_t *q, size_t n, uint8_t **out, size_t *len, bbvfl_err *err) {
  size_t l = 4 + 32 * 3 + 32 * n; /* selector, round, offset of the array, its length, n words */
  uint8_t *d = calloc(1, l);
  if (!d) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  bbvfl_abi_selector("submit(uint256,uint256[])", d);
  bbvfl_cenc_word_u64(round, d + 4);
  bbvfl_cenc_word_u64(64, d + 36);
  bbvfl_cenc_word_u64(n, d + 68);
  for (size_t j = 0; j < n; j++) d[4 + 96 + 32 * j + 31] = q[j];
  *out = d;
  *len = l;
  return 0;
}

int bbvfl_cenc_naive_aggregate(uint64_t round, uint8_t **out, size_t *len, bbvfl_err *err) {
  uint8_t w[32];
  bbvfl_cenc_word_u64(round, w);
  return enc_word("aggregate(uint256)", w, out, len, err);
}
