/* The round loop: one definition of the order in which a participant runs a session's rounds,
 * used by the off-chain trainer (offchain/offchain.c: the M parties and the head in one process,
 * the in-process aggregator) and by the on-chain client (onchain/onchain_rounds.c: one party, the
 * contract). Each brings its own round steps as callbacks; the loop decides when each runs.
 *
 * Rounds are numbered 0 .. total-1 as the contract numbers them: epoch e has T training rounds
 * (windows) then V evaluation rounds. For round r the loop first finishes the earlier rounds the
 * schedule says must be finished (in round order, each once), writes the checkpoint of "the state
 * before r's forward", then starts r (its forward and submission). After the last round it
 * finishes the rest. Which earlier rounds must be finished before r:
 *  - one_open (lane storage: the contract keeps one round open): every one of them;
 *  - otherwise (hashed aggregation, and the off-chain trainer): before a training window or an
 *    evaluation round every window but the latest `staleness` ones (windows counted across
 *    epochs), before an evaluation round of the last epoch every window (the final evaluation
 *    sees the whole model); an evaluation round is finished only when a later round's rule
 *    reaches past it (it holds nothing up); and at most `slots` rounds stay open.
 * Finishing a training window applies its gradients, so this rule is the staleness rule of
 * core/plan.h: the same seed gives the same model on and off chain. */
#ifndef BBVFL_VFL_ROUNDS_H
#define BBVFL_VFL_ROUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct {
  uint32_t T, V;        /* training and evaluation rounds per epoch */
  unsigned staleness;   /* s */
  int one_open;         /* 1: every earlier round is finished before the next starts */
  size_t slots;         /* rounds open at once, at most (>= staleness + 2) */
  uint32_t epochs;      /* epochs of the session: the last one's evaluation sees every gradient */
} bbvfl_rounds_sched;

typedef struct {
  /* Round r's results: the sum, the head's steps, the gradients applied (0 or -1). */
  int (*finish)(void *ctx, uint64_t r, bbvfl_err *err);
  /* The state before round r's forward, every round below first_open finished (nullable). */
  int (*checkpoint)(void *ctx, uint64_t r, uint64_t first_open, bbvfl_err *err);
  /* Round r's forward and submission. */
  int (*start)(void *ctx, uint64_t r, bbvfl_err *err);
} bbvfl_rounds_ops;

/* 1 when round r is a training window. */
int bbvfl_rounds_is_train(const bbvfl_rounds_sched *s, uint64_t r);
/* The rounds from..(result-1) must be finished before round r starts (from: the oldest round
 * not finished yet, from <= r). */
uint64_t bbvfl_rounds_finish_until(const bbvfl_rounds_sched *s, uint64_t from, uint64_t r);
/* Runs rounds start..total-1, the rounds first_open..start-1 having been started before (a
 * restart), then finishes every open round. The first failing callback's error is returned. */
int bbvfl_rounds_run(const bbvfl_rounds_sched *s, uint64_t start, uint64_t first_open, uint64_t total,
                     const bbvfl_rounds_ops *ops, void *ctx, bbvfl_err *err);

#endif
