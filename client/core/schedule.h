/* The minibatch schedule (DESIGN.md "One round of training", step 1). Every client and the
 * auditor derive the same batches from the 32-byte session seed S without talking:
 *   for epoch e, start from the identity permutation of 0..N_train-1; for i = N_train-1 down to 1
 *   swap positions i and j, j = uint256(keccak256(S || uint64be(e) || uint64be(i))) mod (i + 1).
 *   Batch k of epoch e is positions kB .. kB+B-1; R = floor(N_train / B) batches per epoch.
 * Indices are positions into the training row list (0..N_train-1), not file rows. */
#ifndef BBVFL_VFL_SCHEDULE_H
#define BBVFL_VFL_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* The permutation of epoch e into perm[n] (caller-owned). n >= 1. */
void bbvfl_schedule_perm(const uint8_t S[32], uint64_t epoch, size_t n, size_t *perm);
/* uint256(keccak256(S || uint64be(e) || uint64be(i))) mod m, 1 <= m <= 2^56. */
uint64_t bbvfl_schedule_draw(const uint8_t S[32], uint64_t epoch, uint64_t i, uint64_t m);

/* A cached schedule: the permutations of the two epochs used last (a pipelined client moves
 * between the next epoch's windows and the previous epoch's last gradients and head checks; each
 * permutation costs N_train keccak draws). */
typedef struct {
  uint8_t S[32];
  size_t n, B, R;
  uint64_t epoch[2];
  int have[2];
  int last;        /* the slot used last */
  size_t *perm[2]; /* owned */
} bbvfl_schedule;

/* n_train in B..2^56. */
int bbvfl_schedule_init(bbvfl_schedule *s, const uint8_t S[32], size_t n_train, size_t B, bbvfl_err *err);
void bbvfl_schedule_free(bbvfl_schedule *s);
/* Batch k of epoch e: B positions, borrowed pointer into the schedule (valid until a call for
 * a third epoch: the two epochs used last stay cached). */
const size_t *bbvfl_schedule_batch(bbvfl_schedule *s, uint64_t epoch, size_t k);

#endif
