/* onchain: the client's rules about the round layout ask the one layout (binding/contract.h
 * bbvfl_cconfig_round), curvature rounds included. bbvfl_oc_is_train_round decides when a
 * passive client calls reelect() (a complete round without its gradient): it must say 1 for
 * every round that takes a gradient (training windows and LR's curvature rounds) and 0 for the
 * evaluation rounds, also in the epochs after the first curvature rounds, where the rounds no
 * longer repeat every T + V. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/plan.h"
#include "onchain/onchain_int.h"

/* LR with sqn on chain as tests/integration/test_lr_onchain.sh runs it: 455 rows in rounds of
   100 (T = 5), one evaluation round (V = 1), 6 epochs, curvature rounds after epochs 4 and 6
   (rounds 23..27 and 40..44). */
static void lr_sqn(bbvfl_cconfig *cfg) {
  bbvfl_err err = {0};
  *cfg = (bbvfl_cconfig){.clients = 3, .batch = 1, .dim = 1, .levels = 16, .batches_per_epoch = 455, .window = 100,
                         .eval_rows = 114, .eval_rows_per_round = 114, .train_rows = 455, .test_rows = 114,
                         .epochs = 6, .curv_every = 2, .curv_rows = 455};
  assert_int_equal(bbvfl_cconfig_derive(cfg, &err), 0);
}

static void test_train_round_with_curvature(void **state) {
  (void)state;
  cl c = {0};
  lr_sqn(&c.cp.cfg);
  c.cp.total_rounds = bbvfl_cconfig_total(&c.cp.cfg);
  c.T = c.cp.cfg.train_rounds;
  c.V = c.cp.cfg.eval_rounds;
  assert_int_equal(c.cp.total_rounds, 46);
  bbvfl_err err = {0};
  for (uint64_t r = 0; r < c.cp.total_rounds; r++) {
    bbvfl_round_layout L;
    assert_int_equal(bbvfl_cconfig_round(&c.cp.cfg, r, &L, &err), 0);
    if (bbvfl_oc_is_train_round(&c, r) != L.train) fail_msg("round %llu: rule says %d, the layout %d", (unsigned long long)r,
                                                            bbvfl_oc_is_train_round(&c, r), L.train);
  }
  /* the rounds the modular shortcut got wrong: a curvature round, an evaluation round after one,
     the first window of the next epoch */
  assert_int_equal(bbvfl_oc_is_train_round(&c, 23), 1);
  assert_int_equal(bbvfl_oc_is_train_round(&c, 28), 0);
  assert_int_equal(bbvfl_oc_is_train_round(&c, 29), 1);
  /* past the session: no round, no gradient */
  assert_int_equal(bbvfl_oc_is_train_round(&c, c.cp.total_rounds), 0);
}

/* Without curvature rounds the layout is the plain T + V repetition (the MLP sessions). */
static void test_train_round_plain(void **state) {
  (void)state;
  cl c = {0};
  bbvfl_err err = {0};
  c.cp.cfg = (bbvfl_cconfig){.clients = 3, .batch = 4, .dim = 2, .levels = 16, .batches_per_epoch = 7, .window = 3,
                             .eval_rows = 10, .eval_rows_per_round = 4, .train_rows = 28, .test_rows = 10, .epochs = 3};
  assert_int_equal(bbvfl_cconfig_derive(&c.cp.cfg, &err), 0);
  c.T = c.cp.cfg.train_rounds;
  c.V = c.cp.cfg.eval_rounds;
  assert_int_equal(c.T, 3);
  assert_int_equal(c.V, 3);
  for (uint64_t r = 0; r < 18; r++) assert_int_equal(bbvfl_oc_is_train_round(&c, r), r % 6 < 3);
}

/* The two runtimes walk one layout: the off-chain trainer's plan (core/plan.h) and the contract
   binding's (binding/contract.h, what the client and the audit ask) give every round of a session
   the same kind, epoch, index, minibatches and rows, over windows that do and do not divide R and
   evaluation splits that do and do not divide the test rows. */
static void test_layout_matches_plan(void **state) {
  (void)state;
  static const struct {
    size_t n_train, n_test, B, K, E;
    int epochs;
  } cases[] = {{28, 10, 4, 3, 4, 3}, {455, 114, 10, 45, 114, 2}, {455, 114, 10, 1, 10, 2},
               {16000, 4000, 10, 272, 3853, 2}, {100, 7, 5, 20, 3, 4}, {99, 13, 1, 7, 13, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bbvfl_err err = {0};
    bbvfl_plan pl;
    assert_int_equal(bbvfl_plan_init(&pl, cases[i].n_train, cases[i].n_test, cases[i].B, cases[i].K, cases[i].E, 0,
                                     cases[i].epochs, &err),
                     0);
    bbvfl_cconfig cfg = {.clients = 3, .batch = (uint32_t)cases[i].B, .dim = 2, .levels = 16,
                         .batches_per_epoch = (uint32_t)pl.R, .window = (uint32_t)pl.K,
                         .eval_rows = (uint32_t)cases[i].n_test, .eval_rows_per_round = (uint32_t)pl.E,
                         .train_rows = (uint32_t)cases[i].n_train, .test_rows = (uint32_t)cases[i].n_test,
                         .epochs = (uint32_t)cases[i].epochs};
    assert_int_equal(bbvfl_cconfig_derive(&cfg, &err), 0);
    assert_int_equal(cfg.train_rounds, pl.T);
    assert_int_equal(cfg.eval_rounds, pl.V);
    assert_int_equal(bbvfl_cconfig_total(&cfg), bbvfl_plan_rounds(&pl));
    for (uint64_t r = 0; r < bbvfl_plan_rounds(&pl); r++) {
      bbvfl_round_plan rp;
      bbvfl_round_layout L;
      assert_int_equal(bbvfl_window_plan(&pl, r, &rp, &err), 0);
      assert_int_equal(bbvfl_cconfig_round(&cfg, r, &L, &err), 0);
      if (rp.train != L.train || (uint32_t)rp.epoch != L.epoch || rp.index != L.index || rp.nrows != L.rows)
        fail_msg("case %zu round %llu: plan (train %d epoch %d index %zu rows %zu), binding (train %d epoch %u "
                 "index %u rows %u)",
                 i, (unsigned long long)r, rp.train, rp.epoch, rp.index, rp.nrows, L.train, L.epoch, L.index, L.rows);
      if (rp.train) {
        assert_int_equal(rp.first_batch, L.first);
        assert_int_equal(rp.nbatches, L.nb);
      } else {
        assert_int_equal(rp.first, L.first);
      }
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_train_round_with_curvature),
      cmocka_unit_test(test_train_round_plain),
      cmocka_unit_test(test_layout_matches_plan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
