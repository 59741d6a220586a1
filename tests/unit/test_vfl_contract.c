/* binding/contract: calldata encoders against `cast calldata` ($BBVFL_CAST; skipped with a message
 * when absent), view decoders on hand-encoded return data, and event decoders on log objects
 * shaped like a node's answer (topics from `cast keccak` of the signatures). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_skip.h"
#include <jansson.h>

#include "eth/abi.h"
#include "eth/deploy.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "binding/contract.h"

static const char *cast_bin(void) {
  const char *c = getenv("BBVFL_CAST");
  return c && *c && access(c, X_OK) == 0 ? c : NULL;
}

/* Runs cast with the arguments (no shell) and returns its trimmed stdout (static buffer). */
static const char *run_cast(const char *const *args) {
  static char out[1 << 16];
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    execv(args[0], (char *const *)args);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t k;
  while ((k = read(fd[0], out + n, sizeof out - 1 - n)) > 0) n += (size_t)k;
  close(fd[0]);
  int st;
  waitpid(pid, &st, 0);
  out[n] = 0;
  while (n && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = 0;
  return out;
}

static void expect_hex(const uint8_t *b, size_t len, const char *want) {
  char *h = malloc(2 * len + 3);
  bbvfl_hex_encode(b, len, h);
  assert_string_equal(h, want);
  free(h);
}

static void hexs(const uint8_t *b, size_t n, char *out) { bbvfl_hex_encode(b, n, out); }

static void test_encoders_vs_cast(void **state) {
  (void)state;
  const char *cast = cast_bin();
  if (!cast) {
    bbvfl_test_skip(BBVFL_SKIP_SETUP, "BBVFL_CAST is not set or not executable (cast: ./run.sh setup)");
  }
  bbvfl_err err = {0};
  uint8_t *cd;
  size_t len;
  uint8_t q[37], w[32], pub[64], grad[20], params[9];
  for (size_t i = 0; i < sizeof q; i++) q[i] = (uint8_t)(i * 7 % 17);
  for (size_t i = 0; i < 32; i++) w[i] = (uint8_t)(0xa0 + i);
  for (size_t i = 0; i < 64; i++) pub[i] = (uint8_t)(i * 3);
  for (size_t i = 0; i < sizeof grad; i++) grad[i] = (uint8_t)(255 - i);
  for (size_t i = 0; i < sizeof params; i++) params[i] = (uint8_t)(i + 1);
  char hq[100], hw[70], hp[140], hg[50], hpar[30];
  hexs(q, sizeof q, hq);
  hexs(w, 32, hw);
  hexs(pub, 64, hp);
  hexs(grad, sizeof grad, hg);
  hexs(params, sizeof params, hpar);

  assert_int_equal(bbvfl_cenc_submit(123456789012ULL, q, sizeof q, &cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "submit(uint64,bytes)", "123456789012", hq, NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_register(pub, &cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "register(bytes)", hp, NULL}));
  free(cd);
  uint8_t rs[BBVFL_CENC_ROUND_SUM_LEN];
  bbvfl_cenc_round_sum(18446744073709551615ULL, rs);
  expect_hex(rs, sizeof rs, run_cast((const char *[]){cast, "calldata", "roundSum(uint64)", "18446744073709551615", NULL}));
  assert_int_equal(bbvfl_cenc_naive_submit(123456789012ULL, q, 4, &cd, &len, &err), 0);
  char arr[64];
  snprintf(arr, sizeof arr, "[%u,%u,%u,%u]", q[0], q[1], q[2], q[3]);
  expect_hex(cd, len,
             run_cast((const char *[]){cast, "calldata", "submit(uint256,uint256[])", "123456789012", arr, NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_naive_aggregate(4000000000ULL, &cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "aggregate(uint256)", "4000000000", NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_naive_register(&cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "register()", NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_register_label_holder(pub, &cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "registerLabelHolder(bytes)", hp, NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_post_label_gradient(4000000000ULL, grad, sizeof grad, &cd, &len, &err), 0);
  expect_hex(cd, len,
             run_cast((const char *[]){cast, "calldata", "postLabelGradient(uint64,bytes)", "4000000000", hg, NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_commit(w, &cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "commit(bytes32)", hw, NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_reveal(w, &cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "reveal(bytes32)", hw, NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_post_gradient(7, grad, sizeof grad, params, sizeof params, &cd, &len, &err), 0);
  expect_hex(cd, len,
             run_cast((const char *[]){cast, "calldata", "postGradient(uint64,bytes,bytes)", "7", hg, hpar, NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_post_metrics(29, 991234, 950000, 123456789, &cd, &len, &err), 0);
  expect_hex(cd, len,
             run_cast((const char *[]){cast, "calldata", "postMetrics(uint32,uint32,uint32,uint64)", "29", "991234",
                                       "950000", "123456789", NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_pay_rewards(4294967295u, &cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "payRewards(uint32)", "4294967295", NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_finalize_election(&cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "finalizeElection()", NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_reelect(&cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "reelect()", NULL}));
  free(cd);
  assert_int_equal(bbvfl_cenc_expire_round(&cd, &len, &err), 0);
  expect_hex(cd, len, run_cast((const char *[]){cast, "calldata", "expireRound()", NULL}));
  free(cd);

  /* the constructor's Config tuple: a windowed, hashed, pipelined session */
  bbvfl_cconfig c = {.clients = 5, .batch = 10, .dim = 16, .levels = 16, .beta_micro = 200000, .masked = 1,
                     .batches_per_epoch = 45, .window = 5, .eval_rows = 114, .eval_rows_per_round = 60,
                     .train_rows = 455, .test_rows = 114, .staleness = 1, .hashed = 1, .epochs = 30,
                     .commit_blocks = 1000, .reveal_blocks = 1001, .active_blocks = 100000, .round_timeout_blocks = 99};
  c.reward_per_submission = bbvfl_u256_from_u64(1000000000000000000ULL);
  bbvfl_u256_mul_u64(&c.reward_pool, &c.reward_per_submission, 8400);
  assert_int_equal(bbvfl_cenc_config(&c, &cd, &len, &err), 0);
  const char *enc = run_cast((const char *[]){
      cast, "abi-encode",
      "f((uint8,uint32,uint32,uint8,uint32,bool,uint32,uint32,uint32,uint32,uint32,uint32,uint8,bool,uint32,uint256,"
      "uint256,uint64,uint64,uint64,uint64,uint32,uint32))",
      "(5,10,16,16,200000,true,45,5,114,60,455,114,1,true,30,1000000000000000000,8400000000000000000000,1000,1001,"
      "100000,99,0,0)",
      NULL});
  expect_hex(cd, len, enc);
  free(cd);
  /* a configuration in the form before windows (T batches, V evaluation rounds of B rows) encodes
     as K = 1 with every field filled in */
  bbvfl_cconfig old = {.clients = 5, .batch = 10, .dim = 16, .levels = 16, .beta_micro = 200000,
                       .train_rounds = 45, .eval_rounds = 11, .epochs = 30, .commit_blocks = 1000,
                       .reveal_blocks = 1001, .active_blocks = 100000, .round_timeout_blocks = 99};
  old.reward_per_submission = c.reward_per_submission;
  old.reward_pool = c.reward_pool;
  assert_int_equal(bbvfl_cenc_config(&old, &cd, &len, &err), 0);
  enc = run_cast((const char *[]){
      cast, "abi-encode",
      "f((uint8,uint32,uint32,uint8,uint32,bool,uint32,uint32,uint32,uint32,uint32,uint32,uint8,bool,uint32,uint256,"
      "uint256,uint64,uint64,uint64,uint64,uint32,uint32))",
      "(5,10,16,16,200000,false,45,1,110,10,450,110,0,false,30,1000000000000000000,8400000000000000000000,1000,1001,"
      "100000,99,0,0)",
      NULL});
  expect_hex(cd, len, enc);
  free(cd);
  /* aggregate(uint64,bytes[]) */
  const uint8_t p0[3] = {1, 2, 3}, p1[33] = {[0] = 0xaa, [32] = 0xbb};
  const uint8_t *pl[2] = {p0, p1};
  const size_t pll[2] = {sizeof p0, sizeof p1};
  assert_int_equal(bbvfl_cenc_aggregate(77, pl, pll, 2, &cd, &len, &err), 0);
  expect_hex(cd, len,
             run_cast((const char *[]){cast, "calldata", "aggregate(uint64,bytes[])", "77",
                                       "[0x010203,0xaa00000000000000000000000000000000000000000000000000000000000000bb]",
                                       NULL}));
  free(cd);

  /* commitment = keccak256(abi.encodePacked(secret, sender, contract, chainid)), as cast packs and
     hashes it; another contract or chain id gives another commitment */
  uint8_t sender[20], contract[20], com[32], com2[32];
  for (int i = 0; i < 20; i++) sender[i] = (uint8_t)(0x11 * (i % 15));
  for (int i = 0; i < 20; i++) contract[i] = (uint8_t)(0xf0 - 7 * i);
  const uint64_t chain_id = 0x0102030405060708ull;
  bbvfl_election_commitment(w, sender, contract, chain_id, com);
  char hsecret[70], hsender[50], hcontract[50], hchain[24], packed[300];
  hexs(w, 32, hsecret);
  hexs(sender, 20, hsender);
  hexs(contract, 20, hcontract);
  snprintf(hchain, sizeof hchain, "%llu", (unsigned long long)chain_id);
  snprintf(packed, sizeof packed, "%s",
           run_cast((const char *[]){cast, "abi-encode", "--packed", "f(bytes32,address,address,uint256)", hsecret, hsender,
                                     hcontract, hchain, NULL}));
  assert_int_equal(strlen(packed), 2 + 2 * 104);
  expect_hex(com, 32, run_cast((const char *[]){cast, "keccak", packed, NULL}));
  bbvfl_election_commitment(w, sender, contract, chain_id + 1, com2);
  assert_memory_not_equal(com, com2, 32);
  contract[19] ^= 1;
  bbvfl_election_commitment(w, sender, contract, chain_id, com2);
  assert_memory_not_equal(com, com2, 32);
}

/* An ABI word holding v. */
static void put_word(uint8_t *w, uint64_t v) {
  memset(w, 0, 32);
  for (int k = 0; k < 8; k++) w[31 - k] = (uint8_t)(v >> (8 * k));
}

static void test_view_decoders(void **state) {
  (void)state;
  bbvfl_err err = {0};
  enum { NW = 30 };
  uint8_t d[NW * 32];
  /* Config (21 words: ... R 45, K 5, NE 114, ER 60, rows 455/114, s 1, hashed, epochs 30 ...), then
     T 9, V 2, laneBits 8, token, totalRounds 330, maxCoords 960, then curvEvery 0, curvRows 0, C 0 */
  uint64_t vals[NW] = {5, 10, 16, 16, 200000, 0, 45, 5, 114, 60, 455, 114, 1, 1, 30, 7, 8, 100, 101, 102, 103,
                       9, 2, 8, 0, 330, 960, 0, 0, 0};
  for (int i = 0; i < NW; i++) put_word(d + 32 * i, vals[i]);
  for (int i = 0; i < 20; i++) d[32 * 24 + 12 + i] = (uint8_t)(0xc0 + i); /* token address */
  bbvfl_cparams p;
  assert_int_equal(bbvfl_cdec_params(d, sizeof d, &p, &err), 0);
  assert_int_equal(p.cfg.clients, 5);
  assert_int_equal(p.cfg.batches_per_epoch, 45);
  assert_int_equal(p.cfg.window, 5);
  assert_int_equal(p.cfg.eval_rows, 114);
  assert_int_equal(p.cfg.eval_rows_per_round, 60);
  assert_int_equal(p.cfg.train_rows, 455);
  assert_int_equal(p.cfg.test_rows, 114);
  assert_int_equal(p.cfg.staleness, 1);
  assert_true(p.cfg.hashed);
  assert_int_equal(p.cfg.train_rounds, 9);
  assert_int_equal(p.cfg.eval_rounds, 2);
  assert_int_equal(p.lane_bits, 8);
  assert_int_equal(p.total_rounds, 330);
  assert_int_equal(p.max_coords, 960);
  assert_int_equal(p.token[0], 0xc0);
  assert_int_equal(p.token[19], 0xc0 + 19);
  uint64_t r7;
  bbvfl_u256_to_u64(&p.cfg.reward_per_submission, &r7);
  assert_int_equal(r7, 7);
  /* the layout of each round, as the contract's roundLayout(r): window 8 of an epoch is the short
     last one (45 = 8 x 5 + 5: not short here), the second evaluation round has 54 rows */
  bbvfl_round_layout L;
  assert_int_equal(bbvfl_cconfig_round(&p.cfg, 8, &L, &err), 0);
  assert_true(L.train);
  assert_int_equal(L.nb, 5);
  assert_int_equal(L.first, 40);
  assert_int_equal(L.coords, 5 * 10 * 16);
  assert_int_equal(bbvfl_cconfig_round(&p.cfg, 10, &L, &err), 0);
  assert_false(L.train);
  assert_int_equal(L.index, 1);
  assert_int_equal(L.first, 60);
  assert_int_equal(L.rows, 54);
  assert_int_equal(L.coords, 54 * 16);
  assert_int_equal(bbvfl_cconfig_round(&p.cfg, 11 + 8, &L, &err), 0);
  assert_int_equal(L.epoch, 1);
  assert_int_equal(bbvfl_cconfig_max_coords(&p.cfg), 960);
  assert_int_equal(bbvfl_cconfig_round(&p.cfg, 330, &L, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  /* a ragged last window: R = 45, K = 4 gives 12 windows, the last of one batch */
  bbvfl_cconfig w = p.cfg;
  w.window = 4;
  assert_int_equal(bbvfl_cconfig_derive(&w, &err), 0);
  assert_int_equal(w.train_rounds, 12);
  assert_int_equal(bbvfl_cconfig_round(&w, 11, &L, &err), 0);
  assert_int_equal(L.nb, 1);
  assert_int_equal(L.rows, 10);
  /* inconsistent configurations are refused */
  w.window = 46;
  assert_int_equal(bbvfl_cconfig_derive(&w, &err), -1);
  w.window = 5;
  w.train_rows = 449;
  assert_int_equal(bbvfl_cconfig_derive(&w, &err), -1);
  /* a dirty uint8 word and short data are errors */
  d[30] = 1;
  assert_int_equal(bbvfl_cdec_params(d, sizeof d, &p, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  d[30] = 0;
  assert_int_equal(bbvfl_cdec_params(d, (NW - 1) * 32, &p, &err), -1);

  uint8_t rs[6 * 32];
  uint64_t rv[6] = {17, 2, 5, 0, 1234, 1200};
  for (int i = 0; i < 6; i++) put_word(rs + 32 * i, rv[i]);
  bbvfl_round_state st;
  assert_int_equal(bbvfl_cdec_round_state(rs, sizeof rs, &st, &err), 0);
  assert_int_equal(st.round, 17);
  assert_int_equal(st.submitted, 2);
  assert_int_equal(st.participants, 5);
  assert_int_equal(st.complete, 0);
  put_word(rs + 96, 2); /* complete must be a bool */
  assert_int_equal(bbvfl_cdec_round_state(rs, sizeof rs, &st, &err), -1);

  /* address[] and bytes via the general ABI encoder */
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, NULL);
  uint8_t sum[5] = {1, 2, 3, 250, 0};
  bbvfl_abi_put_bytes(&b, sum, sizeof sum);
  uint8_t *enc;
  size_t len;
  assert_int_equal(bbvfl_abi_builder_finish(&b, &enc, &len, &err), 0);
  uint8_t *got;
  size_t glen;
  assert_int_equal(bbvfl_cdec_bytes(enc, len, &got, &glen, &err), 0);
  assert_int_equal(glen, 5);
  assert_memory_equal(got, sum, 5);
  free(got);
  free(enc);
  uint32_t un[5];
  assert_int_equal(bbvfl_cdec_sum(sum, 5, 8, un, 5, &err), 0);
  assert_int_equal(un[3], 250);
  uint8_t s16[4] = {0x01, 0x02, 0xff, 0xff};
  assert_int_equal(bbvfl_cdec_sum(s16, 4, 16, un, 2, &err), 0);
  assert_int_equal(un[0], 258);
  assert_int_equal(un[1], 65535);
  assert_int_equal(bbvfl_cdec_sum(s16, 4, 16, un, 3, &err), -1);
}

/* A log object as a node returns it. */
static json_t *mk_log(const char *sig, const uint8_t (*topics)[32], size_t nt, const uint8_t *data, size_t dlen) {
  uint8_t t0[32];
  bbvfl_abi_event_topic(sig, t0);
  json_t *ta = json_array();
  json_array_append_new(ta, bbvfl_json_hex(t0, 32));
  for (size_t i = 0; i < nt; i++) json_array_append_new(ta, bbvfl_json_hex(topics[i], 32));
  uint8_t addr[20];
  memset(addr, 0x42, 20);
  uint8_t txh[32];
  memset(txh, 0x77, 32);
  return json_pack("{s:o, s:o, s:o, s:s, s:s, s:o}", "address", bbvfl_json_hex(addr, 20), "topics", ta, "data",
                   bbvfl_json_hex(data, dlen), "blockNumber", "0x1f", "logIndex", "0x2", "transactionHash",
                   bbvfl_json_hex(txh, 32));
}

/* Curvature rounds (LR's sqn): the full batch of 455 rows in rounds of 100, one evaluation round,
   6 epochs, L = 2: epochs 4 and 6 (1-based) have 5 curvature rounds between their windows and
   their evaluation round; the layout, the totals and the epoch ends are the contract's. */
static void test_curvature_layout(void **state) {
  (void)state;
  bbvfl_err err = {0};
  bbvfl_cconfig c = {.clients = 3, .batch = 1, .dim = 1, .levels = 16, .batches_per_epoch = 455, .window = 100,
                     .eval_rows = 114, .eval_rows_per_round = 114, .train_rows = 455, .test_rows = 114, .epochs = 6,
                     .curv_every = 2, .curv_rows = 455};
  assert_int_equal(bbvfl_cconfig_derive(&c, &err), 0);
  assert_int_equal(c.train_rounds, 5);
  assert_int_equal(c.curv_rounds, 5);
  assert_int_equal(bbvfl_cconfig_curv_epochs(6, 2), 2);
  assert_int_equal(bbvfl_cconfig_curv_epochs(3, 2), 0);
  assert_int_equal(bbvfl_cconfig_total(&c), 6 * 6 + 2 * 5);
  assert_int_equal(bbvfl_cconfig_epoch_start(&c, 4), 4 * 6 + 5);
  bbvfl_round_layout L;
  int ncurv = 0;
  for (uint64_t r = 0; r < bbvfl_cconfig_total(&c); r++) {
    assert_int_equal(bbvfl_cconfig_round(&c, r, &L, &err), 0);
    int want_curv = (r >= 23 && r <= 27) || (r >= 40 && r <= 44);
    assert_int_equal(L.curv, want_curv);
    ncurv += L.curv;
    if (L.curv) {
      assert_true(L.train);
      assert_int_equal(L.index, 5 + (r - (r < 40 ? 23 : 40)));
      assert_int_equal(L.first, 100 * (L.index - 5));
      assert_int_equal(L.rows, L.index == 9 ? 55 : 100);
      assert_int_equal(L.epoch, r < 40 ? 3 : 5);
    }
    int end = r == 5 || r == 11 || r == 17 || r == 28 || r == 34 || r == 45;
    assert_int_equal(bbvfl_cconfig_epoch_end(&c, r), end);
    if (end) {
      assert_false(L.train);
      assert_int_equal(L.rows, 114);
    }
  }
  assert_int_equal(ncurv, 10);
  assert_int_equal(bbvfl_cconfig_round(&c, 46, &L, &err), -1);
  /* curvature rounds need lane mode, batch 1 and 1..R rows */
  bbvfl_cconfig bad = c;
  bad.hashed = 1;
  assert_int_equal(bbvfl_cconfig_derive(&bad, &err), -1);
  bad = c;
  bad.curv_rows = 456;
  assert_int_equal(bbvfl_cconfig_derive(&bad, &err), -1);
}

static void test_event_decoders(void **state) {
  (void)state;
  bbvfl_err err = {0};
  uint8_t topics[3][32];
  uint8_t who[20];
  for (int i = 0; i < 20; i++) who[i] = (uint8_t)(i + 1);

  /* RoundCompleted(uint64 indexed round, uint8 contributors, bytes sum) */
  bbvfl_cenc_word_u64(41, topics[0]);
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, NULL);
  bbvfl_abi_put_u64(&b, 4);
  uint8_t sum[3] = {9, 8, 7};
  bbvfl_abi_put_bytes(&b, sum, 3);
  uint8_t *data;
  size_t dlen;
  assert_int_equal(bbvfl_abi_builder_finish(&b, &data, &dlen, &err), 0);
  json_t *log = mk_log("RoundCompleted(uint64,uint8,bytes)", (const uint8_t(*)[32])topics, 1, data, dlen);
  free(data);
  bbvfl_cev ev;
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_ROUND_COMPLETED);
  assert_int_equal(ev.round, 41);
  assert_int_equal(ev.participants, 4);
  assert_int_equal(ev.block_number, 31);
  assert_int_equal(ev.log_index, 2);
  assert_int_equal(ev.data_len, 3);
  assert_memory_equal(ev.data, sum, 3);
  assert_int_equal(ev.emitter[0], 0x42);
  bbvfl_cev_clear(&ev);
  json_decref(log);

  /* Submitted(uint64 indexed, address indexed, bytes32) */
  bbvfl_cenc_word_u64(5, topics[0]);
  bbvfl_cenc_word_address(who, topics[1]);
  uint8_t h[32];
  bbvfl_keccak256("x", 1, h);
  log = mk_log("Submitted(uint64,address,bytes32)", (const uint8_t(*)[32])topics, 2, h, 32);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_SUBMITTED);
  assert_int_equal(ev.round, 5);
  assert_memory_equal(ev.client, who, 20);
  assert_memory_equal(ev.word, h, 32);
  bbvfl_cev_clear(&ev);
  json_decref(log);

  /* SubmittedPayload(uint64 indexed, address indexed, bytes): q, and word = keccak256(q) */
  uint8_t q[35];
  for (size_t i = 0; i < sizeof q; i++) q[i] = (uint8_t)(i * 7 + 1);
  bbvfl_abi_builder_init(&b, NULL);
  bbvfl_abi_put_bytes(&b, q, sizeof q);
  assert_int_equal(bbvfl_abi_builder_finish(&b, &data, &dlen, &err), 0);
  log = mk_log("SubmittedPayload(uint64,address,bytes)", (const uint8_t(*)[32])topics, 2, data, dlen);
  free(data);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_SUBMITTED_PAYLOAD);
  assert_int_equal(ev.round, 5);
  assert_memory_equal(ev.client, who, 20);
  assert_int_equal(ev.data_len, sizeof q);
  assert_memory_equal(ev.data, q, sizeof q);
  bbvfl_keccak256(q, sizeof q, h);
  assert_memory_equal(ev.word, h, 32);
  assert_int_equal(bbvfl_cev_submission(1), BBVFL_EV_SUBMITTED_PAYLOAD);
  assert_int_equal(bbvfl_cev_submission(0), BBVFL_EV_SUBMITTED);
  bbvfl_cev_clear(&ev);
  json_decref(log);

  /* GradientPosted(uint64 indexed, address indexed, bytes, bytes) */
  bbvfl_abi_builder_init(&b, NULL);
  uint8_t g[8] = {1, 2, 3, 4, 5, 6, 7, 8}, pp[4] = {0xaa, 0xbb, 0xcc, 0xdd};
  bbvfl_abi_put_bytes(&b, g, 8);
  bbvfl_abi_put_bytes(&b, pp, 4);
  assert_int_equal(bbvfl_abi_builder_finish(&b, &data, &dlen, &err), 0);
  log = mk_log("GradientPosted(uint64,address,bytes,bytes)", (const uint8_t(*)[32])topics, 2, data, dlen);
  free(data);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_GRADIENT_POSTED);
  assert_int_equal(ev.data_len, 8);
  assert_int_equal(ev.data2_len, 4);
  assert_memory_equal(ev.data2, pp, 4);
  bbvfl_cev_clear(&ev);
  json_decref(log);

  /* LabelGradientPosted(uint64 indexed, address indexed, bytes) and LabelHolder(address indexed, uint8) */
  bbvfl_cenc_word_u64(77, topics[0]);
  bbvfl_cenc_word_address(who, topics[1]);
  bbvfl_abi_builder_init(&b, NULL);
  bbvfl_abi_put_bytes(&b, g, 8);
  assert_int_equal(bbvfl_abi_builder_finish(&b, &data, &dlen, &err), 0);
  log = mk_log("LabelGradientPosted(uint64,address,bytes)", (const uint8_t(*)[32])topics, 2, data, dlen);
  free(data);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_LABEL_GRADIENT_POSTED);
  assert_int_equal(ev.round, 77);
  assert_memory_equal(ev.client, who, 20);
  assert_int_equal(ev.data_len, 8);
  assert_memory_equal(ev.data, g, 8);
  bbvfl_cev_clear(&ev);
  json_decref(log);
  bbvfl_cenc_word_address(who, topics[0]);
  uint8_t idx[32];
  put_word(idx, 3);
  log = mk_log("LabelHolder(address,uint8)", (const uint8_t(*)[32])topics, 1, idx, 32);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_LABEL_HOLDER);
  assert_memory_equal(ev.client, who, 20);
  assert_int_equal(ev.index, 3);
  bbvfl_cev_clear(&ev);
  json_decref(log);

  /* RewardsPaid(uint32 indexed, address indexed, uint256, uint32) and the token's Transfer */
  uint8_t rd[64];
  put_word(rd, 5000);
  put_word(rd + 32, 5);
  bbvfl_cenc_word_u64(3, topics[0]);
  log = mk_log("RewardsPaid(uint32,address,uint256,uint32)", (const uint8_t(*)[32])topics, 2, rd, 64);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  uint64_t amt;
  bbvfl_u256_to_u64(&ev.amount, &amt);
  assert_int_equal(ev.epoch, 3);
  assert_int_equal(amt, 5000);
  assert_int_equal(ev.submissions, 5);
  bbvfl_cev_clear(&ev);
  json_decref(log);
  bbvfl_cenc_word_address(who, topics[0]);
  memset(topics[1], 0, 32);
  topics[1][31] = 9;
  log = mk_log("Transfer(address,address,uint256)", (const uint8_t(*)[32])topics, 2, rd, 32);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_TRANSFER);
  assert_memory_equal(ev.client, who, 20);
  assert_int_equal(ev.to[19], 9);
  bbvfl_cev_clear(&ev);
  json_decref(log);

  /* Elected(bytes32, address indexed, uint64, uint8, uint8) */
  uint8_t ed[4 * 32];
  memcpy(ed, h, 32);
  put_word(ed + 32, 12);
  put_word(ed + 64, 4);
  put_word(ed + 96, 1);
  bbvfl_cenc_word_address(who, topics[0]);
  log = mk_log("Elected(bytes32,address,uint64,uint8,uint8)", (const uint8_t(*)[32])topics, 1, ed, sizeof ed);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_memory_equal(ev.word, h, 32);
  assert_int_equal(ev.round, 12);
  assert_int_equal(ev.participants, 4);
  assert_int_equal(ev.reason, 1);
  bbvfl_cev_clear(&ev);
  json_decref(log);

  /* an unknown event is not an error; a malformed one is */
  log = mk_log("Other(uint256)", NULL, 0, rd, 32);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 0);
  assert_int_equal(ev.kind, BBVFL_EV_NONE);
  json_decref(log);
  log = mk_log("Submitted(uint64,address,bytes32)", (const uint8_t(*)[32])topics, 1, h, 32); /* topic missing */
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), -1);
  json_decref(log);
  json_t *bad = json_pack("{s:s}", "topics", "nope");
  assert_int_equal(bbvfl_cev_decode(bad, &ev, &err), -1);
  json_decref(bad);

  /* election pick: S mod n */
  uint8_t S[32] = {0};
  S[31] = 10;
  assert_int_equal(bbvfl_election_pick(S, 3), 1);
  uint8_t sec[2][32];
  memset(sec, 0, sizeof sec);
  sec[1][0] = 1;
  uint8_t S2[32], cat[64];
  bbvfl_election_seed((const uint8_t(*)[32])sec, 2, S2);
  memcpy(cat, sec, 64);
  uint8_t want[32];
  bbvfl_keccak256(cat, 64, want);
  assert_memory_equal(S2, want, 32);
}

/* The event table knows exactly the events the session's contracts declare in abi/ (both
 * hashed, packed and optimistic aggregators and the reward token), each with the same indexed markers: an event added to a
 * contract without its row in the table fails here. */
static void test_event_table_vs_abi(void **state) {
  (void)state;
  static const char *const contracts[] = {"BbvflAggregator", "BbvflHashAggregator", "BbvflPackedAggregator",
                                          "BbvflOptimisticAggregator", "BbvflRewardToken"};
  int seen[BBVFL_EV_COUNT] = {0};
  for (size_t c = 0; c < sizeof contracts / sizeof *contracts; c++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", bbvfl_abi_dir(), contracts[c]);
    json_error_t je;
    json_t *art = json_load_file(path, 0, &je);
    if (!art) {
      fprintf(stderr, "cannot read %s: %s\n", path, je.text);
      fail();
    }
    size_t i;
    json_t *item;
    int events = 0;
    json_array_foreach(json_object_get(art, "abi"), i, item) {
      if (strcmp(json_string_value(json_object_get(item, "type")), "event")) continue;
      char decl[512];
      int n = snprintf(decl, sizeof decl, "%s(", json_string_value(json_object_get(item, "name")));
      size_t j;
      json_t *in;
      json_array_foreach(json_object_get(item, "inputs"), j, in) {
        n += snprintf(decl + n, sizeof decl - (size_t)n, "%s%s%s", j ? "," : "",
                      json_string_value(json_object_get(in, "type")),
                      json_is_true(json_object_get(in, "indexed")) ? " indexed" : "");
      }
      snprintf(decl + n, sizeof decl - (size_t)n, ")");
      int found = 0;
      for (int k = 1; k < BBVFL_EV_COUNT; k++)
        if (!strcmp(bbvfl_cev_declaration((bbvfl_cev_kind)k), decl)) {
          found = 1;
          seen[k] = 1;
        }
      if (!found) fprintf(stderr, "%s: event %s is not in binding/contract's table\n", contracts[c], decl);
      assert_true(found);
      events++;
    }
    assert_true(events > 0);
    json_decref(art);
  }
  for (int k = 1; k < BBVFL_EV_COUNT; k++) {
    if (!seen[k]) fprintf(stderr, "table event %s is declared by none of the contracts\n", bbvfl_cev_signature(k));
    assert_true(seen[k]);
    /* the canonical signature is the declaration without "indexed", and topic0 its keccak */
    char canon[512];
    const char *d = bbvfl_cev_declaration((bbvfl_cev_kind)k);
    size_t n = 0;
    for (const char *p = d; *p && n + 1 < sizeof canon; p++) {
      if (!strncmp(p, " indexed", 8)) p += 7;
      else canon[n++] = *p;
    }
    canon[n] = 0;
    assert_string_equal(canon, bbvfl_cev_signature((bbvfl_cev_kind)k));
    uint8_t t[32], want[32];
    bbvfl_cev_topic((bbvfl_cev_kind)k, t);
    bbvfl_keccak256(canon, n, want);
    assert_memory_equal(t, want, 32);
  }
  assert_null(bbvfl_cev_signature(BBVFL_EV_NONE));
  assert_null(bbvfl_cev_signature(BBVFL_EV_COUNT));
}

/* RoundReopened (masked mode's re-open) and the token's Approval decode through the table. */
static void test_event_reopened_approval(void **state) {
  (void)state;
  bbvfl_err err = {0};
  uint8_t topics[2][32], data[64];
  bbvfl_cenc_word_u64(9, topics[0]);
  memset(data, 0, sizeof data);
  data[31] = 0x0b; /* clients 0, 1 and 3 */
  data[63] = 3;
  json_t *log = mk_log("RoundReopened(uint64,uint64,uint8)", (const uint8_t(*)[32])topics, 1, data, 64);
  bbvfl_cev ev;
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_ROUND_REOPENED);
  assert_int_equal(ev.round, 9);
  assert_int_equal(ev.bitmap, 0x0b);
  assert_int_equal(ev.participants, 3);
  bbvfl_cev_clear(&ev);
  json_decref(log);
  /* a uint8 n above 255 is not a RoundReopened the contract could emit */
  data[62] = 1;
  log = mk_log("RoundReopened(uint64,uint64,uint8)", (const uint8_t(*)[32])topics, 1, data, 64);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), -1);
  json_decref(log);

  uint8_t owner[20], spender[20];
  memset(owner, 0x11, 20);
  memset(spender, 0x22, 20);
  bbvfl_cenc_word_address(owner, topics[0]);
  bbvfl_cenc_word_address(spender, topics[1]);
  put_word(data, 777);
  log = mk_log("Approval(address,address,uint256)", (const uint8_t(*)[32])topics, 2, data, 32);
  assert_int_equal(bbvfl_cev_decode(log, &ev, &err), 1);
  assert_int_equal(ev.kind, BBVFL_EV_APPROVAL);
  assert_memory_equal(ev.client, owner, 20);
  assert_memory_equal(ev.to, spender, 20);
  uint64_t amt = 0;
  bbvfl_u256_to_u64(&ev.amount, &amt);
  assert_int_equal(amt, 777);
  bbvfl_cev_clear(&ev);
  json_decref(log);
}

/* The one log-filter type and the eth_getLogs objects built from it. */
static void test_log_filters(void **state) {
  (void)state;
  bbvfl_err err = {0};
  uint8_t agg[20], tok[20];
  memset(agg, 0xab, 20);
  memset(tok, 0xcd, 20);
  bbvfl_aggc a;
  bbvfl_aggc_init(&a, NULL, agg);
  bbvfl_log_filter f;
  uint8_t t1[32];
  bbvfl_cenc_word_u64(5, t1);
  assert_int_equal(bbvfl_aggc_filter(&a, BBVFL_EV_GRADIENT_POSTED, t1, 16, BBVFL_BLOCK_LATEST, &f, &err), 0);
  json_t *o = bbvfl_log_filter_json(&f);
  assert_non_null(o);
  char *txt = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
  uint8_t topic[32];
  bbvfl_cev_topic(BBVFL_EV_GRADIENT_POSTED, topic);
  char th[67], want[512];
  bbvfl_hex_encode(topic, 32, th);
  snprintf(want, sizeof want,
           "{\"address\":\"0x%s\",\"fromBlock\":\"0x10\",\"toBlock\":\"latest\",\"topics\":[\"%s\",\"0x%064x\"]}",
           "abababababababababababababababababababab", th, 5);
  assert_string_equal(txt, want);
  free(txt);
  json_decref(o);

  /* two emitters, two events, a fixed range, any round */
  bbvfl_log_filter_init(&f, 1, 2);
  assert_int_equal(bbvfl_log_filter_address(&f, agg, &err), 0);
  assert_int_equal(bbvfl_log_filter_address(&f, tok, &err), 0);
  assert_int_equal(bbvfl_cev_filter_event(&f, BBVFL_EV_ROUND_REOPENED, &err), 0);
  assert_int_equal(bbvfl_cev_filter_event(&f, BBVFL_EV_TRANSFER, &err), 0);
  o = bbvfl_log_filter_json(&f);
  assert_int_equal(json_array_size(json_object_get(o, "address")), 2);
  assert_string_equal(json_string_value(json_object_get(o, "toBlock")), "0x2");
  json_t *tp = json_object_get(o, "topics");
  assert_int_equal(json_array_size(tp), 1);
  assert_int_equal(json_array_size(json_array_get(tp, 0)), 2);
  json_decref(o);
  /* a round without an event: any topic0, then the round */
  bbvfl_log_filter_init(&f, 0, 0);
  bbvfl_cev_filter_index(&f, 7);
  o = bbvfl_log_filter_json(&f);
  tp = json_object_get(o, "topics");
  assert_true(json_is_null(json_array_get(tp, 0)));
  assert_null(json_object_get(o, "address"));
  json_decref(o);
  /* an unknown kind and a full filter are refused */
  assert_int_equal(bbvfl_cev_filter_event(&f, BBVFL_EV_NONE, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  for (int i = 0; i < BBVFL_LOGF_MAX_ADDRESSES - 0; i++) bbvfl_log_filter_address(&f, agg, &err);
  assert_int_equal(bbvfl_log_filter_address(&f, agg, &err), -1);
}

/* The encoders and the decoder the audit and the benchmark use (one home: the binding), against
 * byte strings `cast calldata` / `cast abi-encode` printed for the same arguments. */
static void test_binding_known_bytes(void **state) {
  (void)state;
  bbvfl_err err = {0};
  uint8_t rs[BBVFL_CENC_ROUND_SUM_LEN];
  bbvfl_cenc_round_sum(300, rs);
  expect_hex(rs, sizeof rs, "0xaa972f74000000000000000000000000000000000000000000000000000000000000012c");
  uint8_t args[BBVFL_CENC_NAIVE_ARGS_LEN];
  bbvfl_cenc_naive_args(3, 64, 258, args);
  expect_hex(args, sizeof args,
             "0x0000000000000000000000000000000000000000000000000000000000000003"
             "0000000000000000000000000000000000000000000000000000000000000040"
             "0000000000000000000000000000000000000000000000000000000000000102");
  uint8_t *cd = NULL;
  size_t len = 0;
  assert_int_equal(bbvfl_cenc_naive_register(&cd, &len, &err), 0);
  expect_hex(cd, len, "0x1aa3a008");
  free(cd);
  assert_int_equal(bbvfl_cenc_naive_aggregate(7, &cd, &len, &err), 0);
  expect_hex(cd, len, "0x407b72690000000000000000000000000000000000000000000000000000000000000007");
  free(cd);
  const uint8_t q[3] = {1, 0, 255};
  assert_int_equal(bbvfl_cenc_naive_submit(5, q, 3, &cd, &len, &err), 0);
  expect_hex(cd, len,
             "0x2f344195"
             "0000000000000000000000000000000000000000000000000000000000000005"
             "0000000000000000000000000000000000000000000000000000000000000040"
             "0000000000000000000000000000000000000000000000000000000000000003"
             "0000000000000000000000000000000000000000000000000000000000000001"
             "0000000000000000000000000000000000000000000000000000000000000000"
             "00000000000000000000000000000000000000000000000000000000000000ff");
  free(cd);
  /* submit(uint64,bytes) of 9, 0x0102ff as cast writes it, decoded; then what the decoder refuses */
  static const char submit_hex[] =
      "0xec459679"
      "0000000000000000000000000000000000000000000000000000000000000009"
      "0000000000000000000000000000000000000000000000000000000000000040"
      "0000000000000000000000000000000000000000000000000000000000000003"
      "0102ff0000000000000000000000000000000000000000000000000000000000";
  uint8_t sub[4 + 4 * 32];
  size_t sl = sizeof sub;
  assert_int_equal(bbvfl_hex_decode_fixed(submit_hex, sub, sl, &err), 0);
  uint64_t round = 0;
  const uint8_t *pq = NULL;
  size_t ql = 0;
  assert_int_equal(bbvfl_cdec_submit(sub, sl, &round, &pq, &ql, &err), 0);
  assert_int_equal(round, 9);
  assert_int_equal(ql, 3);
  const uint8_t qb[3] = {1, 2, 255};
  assert_memory_equal(pq, qb, 3);
  /* and it reads back what bbvfl_cenc_submit writes */
  assert_int_equal(bbvfl_cenc_submit(9, qb, 3, &cd, &len, &err), 0);
  assert_int_equal(len, sl);
  assert_memory_equal(cd, sub, sl);
  free(cd);
  sub[4 + 31 + 32 + 32] = 4; /* the bytes claim 4 bytes: still inside the padding, so accepted */
  assert_int_equal(bbvfl_cdec_submit(sub, sl, &round, &pq, &ql, &err), 0);
  sub[4 + 31 + 32 + 32] = 33; /* 33 bytes: past the end */
  assert_int_equal(bbvfl_cdec_submit(sub, sl, &round, &pq, &ql, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  sub[4 + 31 + 32 + 32] = 3;
  sub[4] = 1; /* a round over uint64 */
  assert_int_equal(bbvfl_cdec_submit(sub, sl, &round, &pq, &ql, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  sub[4] = 0;
  sub[0] ^= 1; /* another function */
  assert_int_equal(bbvfl_cdec_submit(sub, sl, &round, &pq, &ql, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  assert_int_equal(bbvfl_cdec_submit(sub, 4 + 63, &round, &pq, &ql, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_encoders_vs_cast),
      cmocka_unit_test(test_view_decoders),
      cmocka_unit_test(test_binding_known_bytes),
      cmocka_unit_test(test_curvature_layout),
      cmocka_unit_test(test_event_decoders),
      cmocka_unit_test(test_event_table_vs_abi),
      cmocka_unit_test(test_event_reopened_approval),
      cmocka_unit_test(test_log_filters),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
