/* The round plan: which round carries what, and when a party applies its pending gradients.
 * One place for the off-chain trainer (offchain/offchain.c) and the on-chain client, so both walk the
 * same rounds in the same order and stay bit-identical.
 *
 * An epoch has R = floor(N_train/B) minibatches (core/schedule.h). Training rounds carry windows
 * of K consecutive minibatches: T = ceil(R/K) per epoch, window w holds batches
 * wK .. min(R, (w+1)K) - 1 (nb of them; a window never crosses an epoch), i.e. positions
 * wKB .. wKB + nb*B - 1 of the epoch's permutation. Then V = ceil(N_test/E) evaluation rounds of
 * E test rows (the last may be shorter), covering all N_test test rows.
 * Sequence: epoch 0's T training rounds, its V evaluation rounds, epoch 1's, ...; seq numbers the
 * rounds 0 .. epochs*(T+V)-1 in that order. Round ids (aggregator/contract): training e*T + w,
 * evaluation BBVFL_EVAL_ROUND_BASE + e*V + v.
 * Staleness s: windows are numbered across epochs (g = e*T + w). Before the forward of training
 * window g a party applies every pending gradient except those of the latest s windows it has
 * submitted (g applies window g-s-1's gradient when g > s, else nothing: the s outstanding windows
 * carry over from one epoch to the next); before the first evaluation round of epoch e it applies
 * the epoch's windows but the latest s (evaluation is pipelined too: it sees the model lacking
 * the epoch's last s windows), except in the last epoch, where it applies all of them (the final
 * evaluation sees the whole model). Pending gradients are applied oldest first. s = 0 applies
 * each window's gradient right before the next forward and evaluation sees the epoch's model:
 * the one-batch protocol when K = 1. The rule depends on the round alone, not on timing; the
 * round loop (core/rounds.h) applies exactly this rule. */
#ifndef BBVFL_VFL_PLAN_H
#define BBVFL_VFL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define BBVFL_MAX_STALENESS 8

typedef struct {
  size_t n_train, n_test, B;
  size_t K;           /* batches per window, 1..R (a larger request is clamped to R: see clamped) */
  size_t E;           /* evaluation rows per round, 1..n_test */
  int staleness;      /* s, 0..BBVFL_MAX_STALENESS */
  int epochs;
  size_t R, T, V;     /* minibatches, training rounds and evaluation rounds per epoch */
  int clamped;        /* 1: the requested K exceeded R and was clamped to R */
} bbvfl_plan;

/* K >= 1 (clamped to R), E: 0 = n_test (one evaluation round; larger values clamped to n_test),
 * 0 <= staleness <= BBVFL_MAX_STALENESS, epochs >= 1, B <= n_train, n_test >= 1. Errors name the
 * bad value. */
int bbvfl_plan_init(bbvfl_plan *pl, size_t n_train, size_t n_test, size_t B, size_t K, size_t E, int staleness,
                    int epochs, bbvfl_err *err);

typedef struct {
  int train;             /* 1: training round; 0: evaluation round */
  int epoch;             /* 0-based */
  int epoch_start;       /* the first round of its epoch: set the learning rates (bbvfl_party_epoch,
                            bbvfl_vhead_epoch) before anything else */
  int epoch_end;         /* the last round of its epoch (its last evaluation round): metrics */
  size_t index;          /* window w (0..T-1) or evaluation round v (0..V-1) */
  uint64_t round;        /* round id: e*T + w or BBVFL_EVAL_ROUND_BASE + e*V + v */
  size_t first, nrows;   /* training: positions first .. first+nrows-1 of the epoch's permutation
                            (= bbvfl_schedule_batch(s, e, first_batch)[0 .. nrows-1]);
                            evaluation: offsets first .. first+nrows-1 into the test-row list */
  size_t first_batch;    /* training: the window's first minibatch of the epoch (w*K) */
  size_t nbatches;       /* training: minibatches in the window (nrows = nbatches*B); evaluation: 0 */
  size_t apply;          /* pending gradients to apply before this round's forward, oldest first */
  uint64_t apply_round;  /* the training round id of the first of them (then +1, ...); 0 if none */
} bbvfl_round_plan;

/* Rounds in the whole run: epochs * (T + V). */
uint64_t bbvfl_plan_rounds(const bbvfl_plan *pl);
/* Round seq (0 .. bbvfl_plan_rounds - 1) into *out; -1 (BBVFL_E_ARG) when out of range. */
int bbvfl_window_plan(const bbvfl_plan *pl, uint64_t seq, bbvfl_round_plan *out, bbvfl_err *err);
/* The sequence number of a round id (training or evaluation); -1 when the plan has no such round. */
int bbvfl_plan_seq_of_round(const bbvfl_plan *pl, uint64_t round, uint64_t *seq, bbvfl_err *err);
/* Minibatches in window w (0..T-1) of any epoch (the nbatches of bbvfl_party_apply for it). */
size_t bbvfl_plan_window_batches(const bbvfl_plan *pl, size_t w);

#endif
