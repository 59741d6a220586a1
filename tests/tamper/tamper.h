/* TEST ONLY: the tampering active client behind the test-only executable `bbvfl-tamper`.
 *
 * `bbvfl-tamper` is the `bbvfl` command compiled again from the same client/cli sources with
 * BBVFL_TESTONLY_TAMPER defined and this file linked in (tests/CMakeLists.txt; built only with the
 * tests, never installed, never the release binary). Under that definition `bbvfl client` reads
 * BBVFL_TAMPER=KIND:ROUND from its environment and sets the on-chain client's test hook
 * (bbvfl_onchain_cfg.tamper), which the library calls on the active client's path only: a passive
 * process of this binary runs the release code unchanged, so a test may start every client with it
 * and whichever client the election picks deviates at training round ROUND (the contract's global
 * round number):
 *   label  the first row of the round's first minibatch trained on the other class (a flipped
 *          training label in one epoch: pick a round of epoch >= 2 so the row's label is known)
 *   scale  every posted gradient of the round multiplied by 1.01
 *   skip   the head parameters posted are those before the round's steps (the head did not step)
 *   stale  the posted gradients are computed with the head parameters of the round before
 *          (the head itself steps as usual and posts its true parameters)
 *   sum    optimistic mode: the sum it posts for round ROUND (training or evaluation) has the
 *          lowest bit of its first value flipped (the passive clients must dispute it)
 * The release `bbvfl` has none of this: its cfg.tamper stays NULL. */
#ifndef BBVFL_TESTS_TAMPER_H
#define BBVFL_TESTS_TAMPER_H

#include "common/err.h"
#include "onchain/onchain.h"

/* Reads BBVFL_TAMPER; unset or empty: nothing. Set: cfg->tamper and its context (static, lives for
   the process). Bad value: -1 with BBVFL_E_ARG. */
int bbvfl_test_tamper_from_env(bbvfl_onchain_cfg *cfg, FILE *log, bbvfl_err *err);

#endif
