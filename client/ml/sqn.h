/* The limited-memory inverse-Hessian estimate of the stochastic quasi-Newton optimizer
 * (`--optimizer sqn`, seed 001's Algorithm 1 after Byrd et al.'s SQN): the last `mem` curvature
 * pairs (s_j, y_j) of one parameter block, s_j the change of the averaged iterates, y_j a
 * subsampled Hessian times s_j. H g is the two-loop recursion over the pairs, oldest to newest,
 * starting from H0 = (s^T y / y^T y) I of the newest pair; that equals the dense update
 * H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T, rho = 1 / (y^T s), applied pair by pair
 * (the unit test checks it against that dense computation). With no pair yet H = h0 I (h0 = 1
 * unless the owner sets it: core/lr_client.h sets a bound from the block's curvature).
 *
 * One H over several blocks (`--sqn-pairs global`): the _multi functions run the same recursion
 * over the concatenation of the blocks' s, y and g: every dot product is the sum of the blocks'
 * parts (what each client would contribute as a scalar through a round); all blocks hold the
 * same pairs (pushed together, skipped together) and share rho.
 *
 * A pair whose curvature y^T s is not positive (<= 1e-12 |s| |y|, or not finite) is skipped:
 * the estimate stays positive definite. The struct owns its arrays (bbvfl_sqn_free). */
#ifndef BBVFL_ML_SQN_H
#define BBVFL_ML_SQN_H

#include <stddef.h>

#include "common/err.h"

typedef struct {
  size_t n;      /* parameters in the block */
  int mem;       /* pairs kept, >= 1 */
  int count;     /* pairs held, <= mem */
  int next;      /* slot of the next pair (ring) */
  double *s, *y; /* mem x n each */
  double *rho;   /* mem */
  double *alpha; /* mem, scratch of the two-loop */
  double h0;     /* H = h0 I while count is 0 (1 after init) */
} bbvfl_sqn;

int bbvfl_sqn_init(bbvfl_sqn *q, size_t n, int mem, bbvfl_err *err);
void bbvfl_sqn_free(bbvfl_sqn *q);
/* Adds the pair (s, y) (n floats each, borrowed), dropping the oldest when full. Returns 1 when
 * taken, 0 when skipped for its curvature. */
int bbvfl_sqn_push(bbvfl_sqn *q, const float *s, const float *y);
/* d = H g (n floats each; d may alias g). */
void bbvfl_sqn_apply(bbvfl_sqn *q, const float *g, float *d);
/* One H over nb blocks: the pair (s[b], y[b]) of every block b (q[b]->n floats each) pushed as one
 * pair of the concatenation (taken or skipped for all; returns 1 when taken); every q[b] must have
 * the same mem and the same history (only these functions push to them). */
int bbvfl_sqn_push_multi(bbvfl_sqn *const *q, int nb, const float *const *s, const float *const *y);
/* d[b] = (H g)[b] with H over the concatenation (d[b] may alias g[b]); while no pair is held,
 * d[b] = q[b]->h0 g[b]. */
void bbvfl_sqn_apply_multi(bbvfl_sqn *const *q, int nb, const float *const *g, float *const *d);

#endif
