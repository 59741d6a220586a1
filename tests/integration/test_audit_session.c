/* bbvfl audit on sessions this test drives itself (3 clients, 1 epoch of 2 TRAIN + 1 EVAL
 * rounds, B=2, P=4, b=4), for what a demo run never does:
 *  - a stranger: against a tampered aggregator that lets an unregistered key submit (built by
 *    contract/testonly/make-tampered.sh, deployed through bbvfl_deploy with BBVFL_ABI_DIR
 *    pointing at it), a fourth key submits in round 1 in place of client 0. The audit must fail
 *    on `submissions` at round 1 naming the stranger and its transaction, keep `sums`,
 *    `election`, `gradients` and `metrics` passing (the sum is the sum of what was submitted),
 *    and flag `rewards` for client 0, whom the contract paid for the stranger's submission;
 *  - deadlines on the product contract: the active client misses its gradient deadline and
 *    anyone re-elects, then client 2 misses round 1 and anyone expires the round: every check
 *    passes (each re-election and exclusion justified by block numbers), client 2 is excluded
 *    (reason 3) with the submissions it made;
 *  - masked mode with the same deadlines: 16-bit lanes that wrap, and the timed-out round is
 *    voided and re-opened (RoundReopened) for the clients that submitted: every check passes and
 *    the voided submissions are not rewarded;
 *  - the plain product session audits clean with the expected figures (verdict PASS);
 *  - the token's ledger: a client's balance raised with anvil_setStorageAt (no Transfer) fails
 *    only `balances`, naming the client, the balance its Transfers give and balanceOf's; so does
 *    a raised totalSupply; restored, the audit passes again; raised once more and spent by the
 *    client (a Transfer of 3001 where its Transfers gave it 3000), `balances` names that Transfer;
 *  - an unfinished session (the drivers stop in round 1): verdict INCOMPLETE, exit status 8, no
 *    check failed, the missing rounds, SessionEnded, metrics and payout named;
 *  - hashed mode (BbvflHashAggregator, windows of K = 2, two evaluation rounds, staleness 1) with
 *    the clients running ahead as far as the contract lets them: every check passes and each
 *    client is credited the rounds done; with aggregate() mis-adding a lane of round 1 only
 *    `sums` fails, at round 1; with a client let one TRAIN round beyond the staleness only
 *    `submissions` fails, there; an expired round (plain and masked) audits clean. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devnet_fixture.h"
#include "eth/abi.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/u256.h"
#define M 3
#define BATCH 2
#define DIM 4
#define LEVELS 4

static devnet_fixture fx;
static char tamper_dir[256];

typedef struct {
  uint8_t contract[20];
  uint8_t clients[M][20];
  uint8_t stranger[20];
  bbvfl_key key1; /* a copy of client 1's key (plan.keep_key1) */
} session_out;

typedef struct {
  int stranger;  /* an unregistered key submits to round 1 first; client 0 does not */
  int deadlines; /* no gradient for round 0 until someone re-elects; client 2 misses round 1 */
  int masked;
  int stale;     /* hashed: client 0 submits round 2 while round 0 is head (2 TRAIN rounds ahead, s = 1) */
  int stop_at;   /* > 0: the session stops in round stop_at (rounds below it done, client 0 submitted
                    to it, nothing else): no metrics, no payout, no SessionEnded */
  int keep_key1; /* client 1's key copied into the session_out (the caller wipes it) */
} plan;

/* Lets `blocks` blocks pass on an automining devnet (one self-transfer each). */
static void mine(bbvfl_sender *s, int blocks) {
  bbvfl_u256 one = bbvfl_u256_from_u64(1);
  for (int i = 0; i < blocks; i++) devnet_tx(s, bbvfl_sender_address(s), &one, NULL, 0);
}

static int active_index(bbvfl_aggc *ag, bbvfl_key *keys) {
  bbvfl_err e = {0};
  uint8_t act[20];
  devnet_check(bbvfl_aggc_active(ag, act, &e), &e);
  for (int i = 0; i < M; i++)
    if (!memcmp(act, keys[i].addr, 20)) return i;
  fail_msg("the active client is none of the session's keys");
  return -1;
}

/* The first M of keys (senders cs) become the clients of the session deployed at out->contract
 * (their addresses into out->clients): registered with random secrets and elected; *ag is bound
 * to the contract. Returns the elected active client's index. */
static int start_session(bbvfl_sender **cs, bbvfl_key *keys, session_out *out, bbvfl_aggc *ag) {
  for (int i = 0; i < M; i++) memcpy(out->clients[i], keys[i].addr, 20);
  uint8_t secrets[M][32];
  for (int i = 0; i < M; i++) assert_int_equal(getrandom(secrets[i], 32, 0), 32);
  devnet_register_and_elect(cs, keys, M, out->contract, (const uint8_t(*)[32])secrets);
  bbvfl_aggc_init(ag, fx.rpc, out->contract);
  return active_index(ag, keys);
}

/* One short session following the plan. */
static void run_session(const plan *pl, session_out *out) {
  int stranger = pl->stranger;
  bbvfl_err e = {0};
  bbvfl_key keys[M + 1];
  bbvfl_sender *cs[M + 1];
  for (int i = 0; i <= M; i++) cs[i] = devnet_new_client(&fx, 1, &keys[i]);
  bbvfl_cconfig c = {.clients = M, .batch = BATCH, .dim = DIM, .levels = LEVELS, .beta_micro = 100000,
                     .masked = pl->masked, .train_rounds = 2, .eval_rounds = 1, .epochs = 1,
                     .commit_blocks = 1000, .reveal_blocks = 1000, .active_blocks = pl->deadlines ? 2 : 100000,
                     .round_timeout_blocks = pl->deadlines ? 2 : 100000};
  c.reward_per_submission = bbvfl_u256_from_u64(1000);
  c.reward_pool = bbvfl_u256_from_u64(1000 * M * 3);
  uint8_t *cd = NULL;
  size_t len = 0;
  devnet_deploy_aggregator(&fx, "BbvflAggregator", &c, out->contract);
  memcpy(out->stranger, keys[M].addr, 20);
  bbvfl_aggc ag;
  int ai = start_session(cs, keys, out, &ag);

  const size_t n = (size_t)BATCH * DIM * (pl->masked ? 2 : 1);
  uint8_t q[BATCH * DIM * 2], grad[BATCH * DIM * 4] = {0}, fusion[40] = {1, 2, 3};
  int in[M] = {1, 1, 1};
  for (uint64_t r = 0; r < 3; r++) {
    if (stranger && r == 1) {
      for (size_t j = 0; j < n; j++) q[j] = (uint8_t)((j * 3 + 1) % (LEVELS + 1));
      devnet_check(bbvfl_cenc_submit(r, q, n, &cd, &len, &e), &e);
      devnet_tx(cs[M], out->contract, NULL, cd, len);
    }
    for (int attempt = 0; attempt < 2; attempt++) {
      for (int i = 0; i < M; i++) {
        if (!in[i] || (stranger && r == 1 && i == 0) || (pl->deadlines && r == 1 && i == 2)) continue;
        if (pl->stop_at && r == (uint64_t)pl->stop_at && i > 0) continue;
        /* masked: arbitrary 16-bit lanes (their sum wraps); plain: values 0..b */
        for (size_t j = 0; j < n; j++)
          q[j] = pl->masked ? (uint8_t)(0xF1 + 37 * j + 11 * (size_t)i + r + (size_t)attempt)
                            : (uint8_t)((j + (size_t)i * 7 + r) % (LEVELS + 1));
        devnet_check(bbvfl_cenc_submit(r, q, n, &cd, &len, &e), &e);
        devnet_tx(cs[i], out->contract, NULL, cd, len);
      }
      if (!(pl->deadlines && r == 1) || attempt == 1) break;
      /* client 2 missed round 1: after the timeout anyone (here client 0) expires the round; masked
         mode re-opens it for clients 0 and 1, who submit again (second attempt) */
      mine(cs[0], 3);
      devnet_check(bbvfl_cenc_expire_round(&cd, &len, &e), &e);
      devnet_tx(cs[0], out->contract, NULL, cd, len);
      in[2] = 0;
      ai = active_index(&ag, keys);
      if (!pl->masked) break;
    }
    if (pl->stop_at && r == (uint64_t)pl->stop_at) break;
    if (r < 2) {
      if (pl->deadlines && r == 0) { /* the active client misses its deadline: re-election */
        mine(cs[(ai + 1) % M], 3);
        devnet_check(bbvfl_cenc_reelect(&cd, &len, &e), &e);
        devnet_tx(cs[(ai + 1) % M], out->contract, NULL, cd, len);
        int now = active_index(&ag, keys);
        assert_int_not_equal(now, ai);
        ai = now;
      }
      devnet_check(bbvfl_cenc_post_gradient(r, grad, sizeof grad, fusion, sizeof fusion, &cd, &len, &e), &e);
      devnet_tx(cs[ai], out->contract, NULL, cd, len);
    }
  }
  if (!pl->stop_at) {
    devnet_check(bbvfl_cenc_post_metrics(0, 900000, 800000, 450000, &cd, &len, &e), &e);
    devnet_tx(cs[ai], out->contract, NULL, cd, len);
    devnet_check(bbvfl_cenc_pay_rewards(0, &cd, &len, &e), &e);
    devnet_tx(cs[ai], out->contract, NULL, cd, len);
  }
  if (pl->keep_key1) out->key1 = keys[1];
  for (int i = 0; i <= M; i++) {
    bbvfl_sender_free(cs[i]);
    bbvfl_key_wipe(&keys[i]);
  }
}

/* Hashed mode (BbvflHashAggregator, built by make-tampered.sh as variant `hashed`, or `hashsum`
 * whose aggregate() of round 1 adds one to lane 0): 2 epochs of T = 2 windows (R = 4 batches,
 * K = 2) and V = 2 evaluation rounds (NE = 3 rows, ER = 2: 2 rows then 1), staleness 1. The
 * clients run ahead the way the contract allows: round r+1 is submitted before round r is
 * aggregated, the evaluation rounds and the next epoch's first window before the window's
 * gradient; a passive client aggregates one evaluation round (anyone may). */
#define H_R 4
#define H_K 2
#define H_NE 3
#define H_ER 2

/* pl->deadlines: client 2 skips round 5 (the next epoch's second window) but submits rounds 6 and 7
   ahead; once round 5 is head, anyone expires it and client 2 is excluded: its submissions to 6
   and 7 no longer count (plain), or 5, 6 and 7 re-open and clients 0 and 1 submit again (masked). */
static void run_hashed(const char *variant, const plan *pl, session_out *out) {
  char dir[300];
  snprintf(dir, sizeof dir, "%s/%s", tamper_dir, variant);
  char art[400];
  snprintf(art, sizeof art, "%s/BbvflHashAggregator.json", dir);
  if (access(art, R_OK) != 0)
    bbvfl_test_skip(BBVFL_SKIP_SETUP, "no hashed-mode contract in the source (contract/src/BbvflHashAggregator.sol)");
  bbvfl_err e = {0};
  bbvfl_key keys[M];
  bbvfl_sender *cs[M];
  for (int i = 0; i < M; i++) cs[i] = devnet_new_client(&fx, 1, &keys[i]);
  bbvfl_cconfig c = {.clients = M, .batch = BATCH, .dim = DIM, .levels = LEVELS, .beta_micro = 100000,
                     .batches_per_epoch = H_R, .window = H_K, .eval_rows = H_NE, .eval_rows_per_round = H_ER,
                     .train_rows = H_R * BATCH + 1, .test_rows = H_NE, .staleness = 1, .hashed = 1, .epochs = 2,
                     .masked = pl->masked, .commit_blocks = 1000, .reveal_blocks = 1000, .active_blocks = 100000,
                     .round_timeout_blocks = pl->deadlines ? 2 : 100000};
  devnet_check(bbvfl_cconfig_derive(&c, &e), &e);
  const uint64_t per = c.train_rounds + c.eval_rounds, total = per * c.epochs;
  assert_int_equal(per, 4);
  c.reward_per_submission = bbvfl_u256_from_u64(1000);
  c.reward_pool = bbvfl_u256_from_u64(1000 * M * total);
  uint8_t *cd = NULL;
  size_t len = 0;
  setenv("BBVFL_ABI_DIR", dir, 1);
  devnet_deploy_aggregator(&fx, "BbvflHashAggregator", &c, out->contract);
  unsetenv("BBVFL_ABI_DIR");
  bbvfl_aggc ag;
  int ai = start_session(cs, keys, out, &ag);
  /* every client's payload of every round (plain values 0..b), kept for aggregate() */
  static uint8_t q[16][M][H_K * BATCH * DIM * 2];
  size_t qlen[16];
  int in[M] = {1, 1, 1};
  static int sent[16][M];
  memset(sent, 0, sizeof sent);
  const int lane = pl->masked ? 2 : 1;
  assert_true(total <= 16);
  uint64_t submitted = 0; /* rounds below this one have every client's submission */
  uint8_t fusion[40] = {1, 2, 3};
  for (uint64_t head = 0; head < total; head++) {
    /* run ahead: everything the contract accepts (at most s = 1 TRAIN round in [head, r)) */
    for (;;) {
      uint64_t r = submitted, trains = 0;
      if (r >= total || r - head >= 8) break;
      for (uint64_t x = head; x < r; x++) trains += x % per < c.train_rounds;
      if (trains > c.staleness) break;
      bbvfl_round_layout L;
      devnet_check(bbvfl_cconfig_round(&c, r, &L, &e), &e);
      qlen[r] = (size_t)L.coords * (size_t)lane;
      for (int i = 0; i < M; i++) {
        if (!in[i] || sent[r][i] || (pl->deadlines && i == 2 && r == 5)) continue;
        sent[r][i] = 1;
        for (size_t j = 0; j < qlen[r]; j++)
          q[r][i][j] = pl->masked ? (uint8_t)(0xF1 + 37 * j + 11 * (size_t)i + r)
                                  : (uint8_t)((j + (size_t)i * 7 + r) % (LEVELS + 1));
        devnet_check(bbvfl_cenc_submit(r, q[r][i], qlen[r], &cd, &len, &e), &e);
        devnet_tx(cs[i], out->contract, NULL, cd, len);
      }
      submitted++;
    }
    assert_true(submitted > head);
    if (pl->stale && head == 0) { /* one TRAIN round further ahead than s = 1 allows */
      bbvfl_round_layout L;
      devnet_check(bbvfl_cconfig_round(&c, 2, &L, &e), &e);
      qlen[2] = (size_t)L.coords * (size_t)lane;
      for (size_t j = 0; j < qlen[2]; j++) q[2][0][j] = (uint8_t)((j + 2) % (LEVELS + 1));
      devnet_check(bbvfl_cenc_submit(2, q[2][0], qlen[2], &cd, &len, &e), &e);
      devnet_tx(cs[0], out->contract, NULL, cd, len);
      sent[2][0] = 1;
    }
    if (pl->deadlines && head == 5) { /* client 2 missed the head round: expire it */
      mine(cs[0], 3);
      devnet_check(bbvfl_cenc_expire_round(&cd, &len, &e), &e);
      devnet_tx(cs[0], out->contract, NULL, cd, len);
      in[2] = 0;
      ai = active_index(&ag, keys);
      for (uint64_t r = head; pl->masked && r < submitted; r++) /* re-opened: submit again for the new set */
        for (int i = 0; i < M; i++) {
          if (!in[i]) continue;
          for (size_t j = 0; j < qlen[r]; j++) q[r][i][j] = (uint8_t)(0x3C + 29 * j + 5 * (size_t)i + r);
          devnet_check(bbvfl_cenc_submit(r, q[r][i], qlen[r], &cd, &len, &e), &e);
          devnet_tx(cs[i], out->contract, NULL, cd, len);
        }
    }
    const uint8_t *pls[M];
    size_t pll[M], np = 0;
    for (int i = 0; i < M; i++)
      if (in[i]) pls[np] = q[head][i], pll[np++] = qlen[head];
    devnet_check(bbvfl_cenc_aggregate(head, pls, pll, np, &cd, &len, &e), &e);
    int train = head % per < c.train_rounds;
    /* a passive client aggregates the first evaluation round of each epoch */
    int other = (ai + 1) % M == 2 && !in[2] ? (ai + 2) % M : (ai + 1) % M;
    devnet_tx(cs[!train && head % per == c.train_rounds ? other : ai], out->contract, NULL, cd, len);
    if (train) {
      uint8_t grad[H_K * BATCH * DIM * 4] = {0};
      devnet_check(bbvfl_cenc_post_gradient(head, grad, qlen[head] / (size_t)lane * 4, fusion, sizeof fusion, &cd, &len, &e),
           &e);
      devnet_tx(cs[ai], out->contract, NULL, cd, len);
    }
    if (head % per == per - 1) {
      uint32_t ep = (uint32_t)(head / per);
      devnet_check(bbvfl_cenc_post_metrics(ep, 900000, 800000, 450000, &cd, &len, &e), &e);
      devnet_tx(cs[ai], out->contract, NULL, cd, len);
      devnet_check(bbvfl_cenc_pay_rewards(ep, &cd, &len, &e), &e);
      devnet_tx(cs[ai], out->contract, NULL, cd, len);
    }
  }
  for (int i = 0; i < M; i++) {
    bbvfl_sender_free(cs[i]);
    bbvfl_key_wipe(&keys[i]);
  }
}

/* Runs `bbvfl audit --json` on the contract; returns the parsed document, *status the exit status. */
static json_t *audit(const uint8_t contract[20], int *status) {
  char addr[43], cmd[1024];
  bbvfl_hex_encode(contract, 20, addr);
  snprintf(cmd, sizeof cmd, "'%s' audit --rpc '%s' --contract %s --json --quiet", getenv("BBVFL_BIN"), fx.url, addr);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  json_error_t je;
  json_t *j = json_loadf(p, 0, &je);
  int st = pclose(p);
  assert_true(WIFEXITED(st));
  *status = WEXITSTATUS(st);
  if (!j) fail_msg("audit printed no JSON: %s", je.text);
  return j;
}

static json_t *check(json_t *doc, const char *name) {
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(doc, "checks"), i, c) if (!strcmp(json_string_value(json_object_get(c, "name")), name)) return c;
  fail_msg("no check named %s", name);
  return NULL;
}

static const char *status(json_t *doc, const char *name) {
  return json_string_value(json_object_get(check(doc, name), "status"));
}

static int same_addr(json_t *v, const uint8_t a[20]) {
  char hex[43];
  bbvfl_hex_encode(a, 20, hex);
  return json_is_string(v) && !strcasecmp(json_string_value(v), hex);
}

/* Every check but `failing` (NULL: none) must pass and `failing` must fail, the exit status 3 (0
 * when none fails); returns the document (caller decrefs). `head` is skipped: these sessions are
 * driven by the test's own transactions, audited without a session file (the check needs the
 * session's training setup; tests/integration/test_audit_head.sh runs it on real clients). */
static json_t *audit_only_fails(const uint8_t contract[20], const char *failing) {
  int code = -1;
  json_t *doc = audit(contract, &code);
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(doc, "checks"), i, c) {
    const char *n = json_string_value(json_object_get(c, "name"));
    const char *v = json_string_value(json_object_get(c, "status"));
    if (strcmp(v, failing && !strcmp(n, failing) ? "FAIL" : !strcmp(n, "head") ? "SKIP" : "PASS"))
      fail_msg("check %s is %s: %s", n, v, json_dumps(json_object_get(c, "first_failure"), 0));
  }
  assert_int_equal(code, failing ? 3 : 0);
  if (failing) assert_string_equal(status(doc, failing), "FAIL");
  assert_string_equal(json_string_value(json_object_get(doc, "verdict")), failing ? "FAIL" : "PASS");
  if (!failing) assert_true(json_is_true(json_object_get(doc, "complete")));
  return doc;
}

/* Every check must pass; returns the document (caller decrefs). */
static json_t *audit_all_pass(const uint8_t contract[20]) {
  return audit_only_fails(contract, NULL);
}

static void test_product_contract_audits_clean(void **st) {
  (void)st;
  unsetenv("BBVFL_ABI_DIR");
  session_out s;
  plan pl = {0};
  run_session(&pl, &s);
  json_t *doc = audit_all_pass(s.contract);
  size_t i;
  json_t *c;
  json_t *f = json_object_get(doc, "figures");
  assert_int_equal(json_integer_value(json_object_get(f, "rounds")), 3);
  assert_int_equal(json_integer_value(json_object_get(f, "submissions")), 9);
  json_array_foreach(json_object_get(f, "rewards_per_client"), i, c)
      assert_string_equal(json_string_value(json_object_get(c, "transferred")), "3000");
  json_t *m = json_array_get(json_object_get(f, "metrics_per_epoch"), 0);
  assert_true(json_real_value(json_object_get(m, "auroc")) == 0.9);
  json_decref(doc);
}

/* ------------------------------------------------------------------ the token's ledger */

/* A raw JSON-RPC call of the test (params stolen); the result (new reference). */
static json_t *rpc(const char *method, json_t *params) {
  bbvfl_err e = {0};
  json_t *res = NULL;
  devnet_check(bbvfl_rpc_call(fx.rpc, method, params, &res, &e), &e);
  return res;
}

static json_t *word_json(const uint8_t w[32]) {
  char h[67];
  bbvfl_hex_encode(w, 32, h);
  return json_string(h);
}

static json_t *addr_json(const uint8_t a[20]) {
  char h[43];
  bbvfl_hex_encode(a, 20, h);
  return json_string(h);
}

/* eth_getStorageAt(token, slot) at the latest block, as 32 bytes. */
static void storage_at(const uint8_t token[20], const uint8_t slot[32], uint8_t out[32]) {
  json_t *v = rpc("eth_getStorageAt", json_pack("[o,o,s]", addr_json(token), word_json(slot), "latest"));
  assert_true(json_is_string(v));
  bbvfl_err e = {0};
  bbvfl_u256 u;
  devnet_check(bbvfl_u256_from_string(json_string_value(v), &u, &e), &e);
  memcpy(out, u.be, 32);
  json_decref(v);
}

/* The storage slot of _balances[who] in the token: the OpenZeppelin ERC20 mapping is
 * keccak256(pad32(who) . pad32(k)) for its declaration slot k; k is found by probing 0..5 for the
 * slot that holds the balance (want, non-zero), so the test does not depend on the layout. */
static void balance_slot(const uint8_t token[20], const uint8_t who[20], const uint8_t want[32], uint8_t slot[32]) {
  for (int k = 0; k < 6; k++) {
    uint8_t pre[64] = {0}, got[32];
    memcpy(pre + 12, who, 20);
    pre[63] = (uint8_t)k;
    bbvfl_keccak256(pre, sizeof pre, slot);
    storage_at(token, slot, got);
    if (!memcmp(got, want, 32)) return;
  }
  fail_msg("no _balances slot among mapping slots 0..5 holds the balance");
}

/* The token of the session (params().token) and its balanceOf(who) as 32 bytes. */
static void token_of(const uint8_t contract[20], uint8_t token[20]) {
  bbvfl_aggc ag;
  bbvfl_aggc_init(&ag, fx.rpc, contract);
  bbvfl_cparams p;
  bbvfl_err e = {0};
  devnet_check(bbvfl_aggc_params(&ag, &p, &e), &e);
  memcpy(token, p.token, 20);
}

static void set_storage(const uint8_t token[20], const uint8_t slot[32], const uint8_t val[32]) {
  json_decref(rpc("anvil_setStorageAt", json_pack("[o,o,o]", addr_json(token), word_json(slot), word_json(val))));
  json_decref(rpc("evm_mine", json_array())); /* the edit in a block of its own, the audit's last */
}

static const char *detail_of(json_t *doc, const char *name) {
  return json_string_value(json_object_get(json_object_get(check(doc, name), "first_failure"), "detail"));
}

/* The product session passes; then a client's token balance is raised in the token's storage
 * (anvil_setStorageAt: no Transfer behind it): only `balances` fails, naming that client with the
 * balance its Transfer events give (3000) and the one balanceOf reports (3001). Restored, it passes
 * again; a totalSupply raised the same way fails `balances` naming totalSupply and the pool. */
static void test_balance_edit_is_caught(void **st) {
  (void)st;
  unsetenv("BBVFL_ABI_DIR");
  session_out s;
  plan pl = {.keep_key1 = 1};
  run_session(&pl, &s);
  json_decref(audit_all_pass(s.contract));
  uint8_t token[20], slot[32], bal[32] = {0}, raised[32] = {0};
  token_of(s.contract, token);
  bal[30] = 3000 >> 8;
  bal[31] = 3000 & 0xff; /* rate 1000 x 3 accepted submissions */
  balance_slot(token, s.clients[1], bal, slot);
  memcpy(raised, bal, 32);
  raised[31]++;
  set_storage(token, slot, raised);
  json_t *doc = audit_only_fails(s.contract, "balances");
  json_t *ff = json_object_get(check(doc, "balances"), "first_failure");
  assert_true(same_addr(json_object_get(ff, "client"), s.clients[1]));
  const char *d = detail_of(doc, "balances");
  if (!strstr(d, "client 1") || !strstr(d, "balanceOf is 3001") || !strstr(d, "give 3000"))
    fail_msg("balances detail: %s", d);
  assert_int_equal(json_integer_value(json_object_get(check(doc, "balances"), "failures")), 1);
  json_decref(doc);

  set_storage(token, slot, bal); /* restored: the ledger holds again */
  json_decref(audit_all_pass(s.contract));

  uint8_t supply_slot[32] = {0}, supply[32], more[32];
  int k;
  for (k = 0; k < 6; k++) { /* totalSupply: a plain slot holding the pool (9000) */
    supply_slot[31] = (uint8_t)k;
    storage_at(token, supply_slot, supply);
    if (supply[30] == (9000 >> 8) && supply[31] == (9000 & 0xff) && !memcmp(supply, (uint8_t[30]){0}, 30)) break;
  }
  assert_true(k < 6);
  memcpy(more, supply, 32);
  more[29] = 1;
  set_storage(token, supply_slot, more);
  doc = audit_only_fails(s.contract, "balances");
  d = detail_of(doc, "balances");
  if (!strstr(d, "totalSupply() is 74536") || !strstr(d, "9000")) fail_msg("balances detail: %s", d);
  json_decref(doc);
  set_storage(token, supply_slot, supply);
  json_decref(audit_all_pass(s.contract));

  /* raised again, and client 1 spends all of it (3001) on client 2: the Transfer moves more than
     its earlier Transfers gave it; after it both ledgers agree with balanceOf (0 and 6001) */
  set_storage(token, slot, raised);
  bbvfl_err e = {0};
  bbvfl_sender *c1 = bbvfl_sender_new(fx.rpc, &s.key1, fx.chain_id, &e);
  devnet_check(c1 ? 0 : -1, &e);
  uint8_t *cd = calloc(68, 1); /* devnet_tx takes (frees) the calldata */
  assert_non_null(cd);
  bbvfl_abi_selector("transfer(address,uint256)", cd);
  memcpy(cd + 16, s.clients[2], 20);
  memcpy(cd + 36, raised, 32);
  devnet_tx(c1, token, NULL, cd, 68);
  bbvfl_sender_free(c1);
  bbvfl_key_wipe(&s.key1);
  doc = audit_only_fails(s.contract, "balances");
  ff = json_object_get(check(doc, "balances"), "first_failure");
  assert_true(same_addr(json_object_get(ff, "client"), s.clients[1]));
  assert_true(json_is_string(json_object_get(ff, "tx")));
  d = detail_of(doc, "balances");
  if (!strstr(d, "client 1: a Transfer of 3001 out of it, its earlier Transfer events give it only 3000"))
    fail_msg("balances detail: %s", d);
  assert_int_equal(json_integer_value(json_object_get(check(doc, "balances"), "failures")), 1);
  json_decref(doc);
}

/* ------------------------------------------------------------------ an unfinished session */

/* The drivers stop in round 1 (round 0 done, client 0's round-1 submission in): every check
 * holds so far, but the verdict is INCOMPLETE with exit status 8 (never PASS), naming what is
 * missing; the text report says so on its first line. */
static void test_unfinished_session_is_incomplete(void **st) {
  (void)st;
  unsetenv("BBVFL_ABI_DIR");
  session_out s;
  plan pl = {.stop_at = 1};
  run_session(&pl, &s);
  int code = -1;
  json_t *doc = audit(s.contract, &code);
  assert_int_equal(code, 8);
  assert_string_equal(json_string_value(json_object_get(doc, "verdict")), "INCOMPLETE");
  assert_true(json_is_false(json_object_get(doc, "ok")));
  assert_true(json_is_false(json_object_get(doc, "complete")));
  assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "summary"), "failed")), 0);
  json_t *miss = json_object_get(doc, "missing");
  char all[1024] = "";
  size_t i;
  json_t *m;
  json_array_foreach(miss, i, m) {
    strncat(all, json_string_value(m), sizeof all - strlen(all) - 3);
    strcat(all, "; ");
  }
  if (!strstr(all, "rounds: 1 of 3 done (round 1 open") || !strstr(all, "no SessionEnded event") ||
      !strstr(all, "metrics: 1 of 1 epochs not posted") || !strstr(all, "rewards: 1 of 1 epochs not paid"))
    fail_msg("missing: %s", all);
  json_decref(doc);
  char addr[43], cmd[1024];
  bbvfl_hex_encode(s.contract, 20, addr);
  snprintf(cmd, sizeof cmd, "'%s' audit --rpc '%s' --contract %s --quiet", getenv("BBVFL_BIN"), fx.url, addr);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  char line[512] = "", rest[4096] = "";
  assert_non_null(fgets(line, sizeof line, p));
  size_t n = fread(rest, 1, sizeof rest - 1, p);
  rest[n] = 0;
  int stc = pclose(p);
  assert_true(WIFEXITED(stc) && WEXITSTATUS(stc) == 8);
  if (strncmp(line, "bbvfl audit: INCOMPLETE", 23) || strstr(rest, "PASS - every check holds") ||
      !strstr(rest, "missing: rounds: 1 of 3 done"))
    fail_msg("text report: %s%s", line, rest);
}

static void test_stranger_submission_is_caught(void **st) {
  (void)st;
  char dir[300];
  snprintf(dir, sizeof dir, "%s/stranger", tamper_dir);
  setenv("BBVFL_ABI_DIR", dir, 1);
  session_out s;
  plan pl = {.stranger = 1};
  run_session(&pl, &s);
  unsetenv("BBVFL_ABI_DIR");
  int code = -1;
  json_t *doc = audit(s.contract, &code);
  assert_int_equal(code, 3);
  assert_false(json_is_true(json_object_get(doc, "ok")));
  assert_string_equal(status(doc, "submissions"), "FAIL");
  json_t *ff = json_object_get(check(doc, "submissions"), "first_failure");
  assert_int_equal(json_integer_value(json_object_get(ff, "round")), 1);
  assert_true(same_addr(json_object_get(ff, "client"), s.stranger));
  assert_true(json_is_string(json_object_get(ff, "tx")));
  assert_non_null(strstr(json_string_value(json_object_get(ff, "detail")), "unregistered"));
  /* what was submitted was summed correctly; the election, gradients and metrics are fine */
  const char *fine[] = {"params",   "registration", "election", "sums",    "contributors",
                        "schedule", "gradients",    "metrics",  "balances", "privacy"};
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
    if (strcmp(status(doc, fine[i]), "PASS")) fail_msg("check %s is %s", fine[i], status(doc, fine[i]));
  /* the contract credited client 0 with the stranger's submission and paid it for it */
  assert_string_equal(status(doc, "rewards"), "FAIL");
  json_t *rf = json_object_get(check(doc, "rewards"), "first_failure");
  assert_true(same_addr(json_object_get(rf, "client"), s.clients[0]));
  assert_int_equal(json_integer_value(json_object_get(rf, "epoch")), 0);
  json_decref(doc);
}

static void check_deadline_figures(json_t *doc, int masked) {
  json_t *f = json_object_get(doc, "figures");
  assert_true(json_integer_value(json_object_get(f, "reelections")) >= 1);
  assert_int_equal(json_integer_value(json_object_get(f, "rounds")), 3);
  /* plain: 3 + 2 + 2; masked: 3 + (2 voided + 2) + 2 */
  assert_int_equal(json_integer_value(json_object_get(f, "submissions")), masked ? 9 : 7);
  json_t *c2 = json_array_get(json_object_get(f, "rewards_per_client"), 2);
  assert_true(json_is_true(json_object_get(c2, "excluded")));
  assert_int_equal(json_integer_value(json_object_get(c2, "excluded_reason")), 3);
  assert_int_equal(json_integer_value(json_object_get(c2, "accepted")), 1);
  assert_string_equal(json_string_value(json_object_get(c2, "transferred")), "1000");
  json_t *c0 = json_array_get(json_object_get(f, "rewards_per_client"), 0);
  assert_int_equal(json_integer_value(json_object_get(c0, "accepted")), 3);
  assert_string_equal(json_string_value(json_object_get(c0, "transferred")), "3000");
}

static void test_reelection_and_expired_round_are_justified(void **st) {
  (void)st;
  unsetenv("BBVFL_ABI_DIR");
  session_out s;
  plan pl = {.deadlines = 1};
  run_session(&pl, &s);
  json_t *doc = audit_all_pass(s.contract);
  check_deadline_figures(doc, 0);
  json_decref(doc);
}

static void test_masked_session_with_reopened_round(void **st) {
  (void)st;
  unsetenv("BBVFL_ABI_DIR");
  session_out s;
  plan pl = {.deadlines = 1, .masked = 1};
  run_session(&pl, &s);
  json_t *doc = audit_all_pass(s.contract);
  check_deadline_figures(doc, 1);
  json_t *eps = json_object_get(json_object_get(doc, "figures"), "epsilon");
  assert_true(json_real_value(json_object_get(eps, "masked_feature")) > 0);
  /* never above the local-mode figure (the sum is post-processing of the outputs) */
  assert_true(json_real_value(json_object_get(eps, "masked_feature")) <= json_real_value(json_object_get(eps, "feature")));
  json_decref(doc);
}

static void test_hashed_pipelined_session_audits_clean(void **st) {
  (void)st;
  session_out s;
  plan pl = {0};
  run_hashed("hashed", &pl, &s);
  json_t *doc = audit_all_pass(s.contract);
  json_t *f = json_object_get(doc, "figures");
  assert_int_equal(json_integer_value(json_object_get(f, "rounds")), 8);
  assert_int_equal(json_integer_value(json_object_get(f, "submissions")), 8 * M);
  assert_int_equal(json_integer_value(json_object_get(f, "gradients")), 4);
  /* every round but 0 goes in before the head reaches it: 1 (head 0), 2, 3, 4 (head 1: s = 1 lets
     window 4 of the next epoch in, the EVAL rounds 2 and 3 do not gate), 5 (head 2), 6, 7 (head 5) */
  assert_int_equal(json_integer_value(json_object_get(f, "submissions_ahead")), 7 * M);
  assert_int_equal(json_integer_value(json_object_get(f, "max_rounds_ahead")), 3);
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(f, "rewards_per_client"), i, c) {
    assert_int_equal(json_integer_value(json_object_get(c, "accepted")), 8);
    assert_string_equal(json_string_value(json_object_get(c, "transferred")), "8000");
  }
  json_t *p = json_object_get(doc, "params");
  assert_string_equal(json_string_value(json_object_get(p, "aggregation")), "hashed");
  assert_int_equal(json_integer_value(json_object_get(p, "staleness")), 1);
  assert_int_equal(json_integer_value(json_object_get(p, "window")), H_K);
  assert_int_equal(json_array_size(json_object_get(f, "schedule")), 2);
  json_decref(doc);
}

/* Hashed mode with an expired round: client 2 is excluded at round 5 with its submissions to 6
   and 7 already in; the audit counts only the participants' payloads in those sums, credits
   client 2 the 5 rounds done before (paid 4 + 1), and justifies the exclusion by block numbers. */
static void hashed_expired(int masked) {
  session_out s;
  plan pl = {.deadlines = 1, .masked = masked};
  run_hashed("hashed", &pl, &s);
  json_t *doc = audit_all_pass(s.contract);
  json_t *f = json_object_get(doc, "figures");
  assert_int_equal(json_integer_value(json_object_get(f, "rounds")), 8);
  /* 5 rounds x 3, round 5 x 2, rounds 6 and 7 x 3; masked: 5, 6, 7 again by clients 0 and 1 */
  assert_int_equal(json_integer_value(json_object_get(f, "submissions")), masked ? 29 : 23);
  json_t *cls = json_object_get(f, "rewards_per_client");
  json_t *c2 = json_array_get(cls, 2), *c0 = json_array_get(cls, 0);
  assert_true(json_is_true(json_object_get(c2, "excluded")));
  assert_int_equal(json_integer_value(json_object_get(c2, "excluded_reason")), 3);
  assert_int_equal(json_integer_value(json_object_get(c2, "accepted")), 5);
  assert_string_equal(json_string_value(json_object_get(c2, "transferred")), "5000");
  assert_int_equal(json_integer_value(json_object_get(c0, "accepted")), 8);
  assert_string_equal(json_string_value(json_object_get(c0, "transferred")), "8000");
  json_decref(doc);
}

static void test_hashed_expired_round_plain(void **st) {
  (void)st;
  hashed_expired(0);
}

static void test_hashed_expired_round_masked(void **st) {
  (void)st;
  hashed_expired(1);
}

/* A contract that lets a client run one TRAIN round further ahead than the staleness: only the
   submissions check fails, at that submission (round 2, client 0, while round 0 was head); the
   round's sum, contributors and rewards are judged on what the contract did and pass. */
static void test_hashed_submission_beyond_staleness_is_caught(void **st) {
  (void)st;
  session_out s;
  plan pl = {.stale = 1};
  run_hashed("stale", &pl, &s);
  json_t *doc = audit_only_fails(s.contract, "submissions");
  json_t *ff = json_object_get(check(doc, "submissions"), "first_failure");
  assert_int_equal(json_integer_value(json_object_get(ff, "round")), 2);
  assert_true(same_addr(json_object_get(ff, "client"), s.clients[0]));
  assert_true(json_is_string(json_object_get(ff, "tx")));
  assert_non_null(strstr(json_string_value(json_object_get(ff, "detail")), "2 TRAIN rounds lie between it and the oldest open round 0 (staleness 1)"));
  json_decref(doc);
}

static void test_hashed_sum_mismatch_is_caught(void **st) {
  (void)st;
  session_out s;
  plan pl = {0};
  run_hashed("hashsum", &pl, &s);
  json_t *doc = audit_only_fails(s.contract, "sums");
  json_t *ff = json_object_get(check(doc, "sums"), "first_failure");
  assert_int_equal(json_integer_value(json_object_get(ff, "round")), 1);
  assert_non_null(strstr(json_string_value(json_object_get(ff, "detail")), "lane 0:"));
  assert_true(json_is_string(json_object_get(ff, "tx")));
  json_decref(doc);
}

static int setup(void **st) {
  (void)st;
  const char *src = getenv("BBVFL_SOURCE_DIR");
  if (!src || !getenv("BBVFL_BIN")) {
    fprintf(stderr, "needs BBVFL_SOURCE_DIR and BBVFL_BIN\n");
    return -1;
  }
  snprintf(tamper_dir, sizeof tamper_dir, "%s", "/tmp/bbvfl-audit-tamper.XXXXXX");
  if (!mkdtemp(tamper_dir)) return -1;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s/contract/testonly/make-tampered.sh' '%s'", src, tamper_dir);
  if (system(cmd) != 0) {
    fprintf(stderr, "make-tampered.sh failed\n");
    return -1;
  }
  return devnet_open(&fx);
}

static int teardown(void **st) {
  (void)st;
  devnet_close(&fx);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tamper_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_product_contract_audits_clean),
      cmocka_unit_test(test_stranger_submission_is_caught),
      cmocka_unit_test(test_balance_edit_is_caught),
      cmocka_unit_test(test_unfinished_session_is_incomplete),
      cmocka_unit_test(test_reelection_and_expired_round_are_justified),
      cmocka_unit_test(test_masked_session_with_reopened_round),
      cmocka_unit_test(test_hashed_pipelined_session_audits_clean),
      cmocka_unit_test(test_hashed_sum_mismatch_is_caught),
      cmocka_unit_test(test_hashed_expired_round_plain),
      cmocka_unit_test(test_hashed_expired_round_masked),
      cmocka_unit_test(test_hashed_submission_beyond_staleness_is_caught),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
