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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_train_round_with_curvature),
      cmocka_unit_test(test_train_round_plain),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
