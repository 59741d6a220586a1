/* The aggregation transport: what a party and the active client need from "the place where the
 * embeddings meet". Two implementations: the in-process aggregator here (off-chain mode, the
 * paper's standalone baseline) and the aggregator contract (on-chain mode).
 *
 * Rounds (core/plan.h): training round r = e*T + w (epoch e, window w of K minibatches); evaluation
 * rounds are numbered BBVFL_EVAL_ROUND_BASE + e*V + v. Per round, each of the M clients submits
 * once; the sum is available when all M have; the active client posts dLoss/dh_hat of the round's
 * rows (and its head parameters) for training rounds; the clients read it back. Rounds differ in
 * length (a window of nb batches carries nb*B*P values, an evaluation round E*P): n is per call,
 * and every submission, sum and gradient of one round has the round's length.
 *   submit_q / sum_q: PBM integer vectors (n bytes, each <= b; sums as uint32).
 *   submit_f / sum_f: NPQ and Gaussian float vectors (off-chain only; the contract refuses them).
 * An implementation may block in sum_q/read_gradient until the data is there (the contract); the
 * in-process one answers at once or fails with BBVFL_E_STATE if a submission is missing.
 * Buffers passed in are borrowed for the call; outputs are caller-owned. */
#ifndef BBVFL_VFL_AGGREGATOR_H
#define BBVFL_VFL_AGGREGATOR_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define BBVFL_EVAL_ROUND_BASE (UINT64_C(1) << 62)

typedef struct {
  int (*submit_q)(void *self, uint64_t round, int client, const uint8_t *q, size_t n, bbvfl_err *err);
  int (*submit_f)(void *self, uint64_t round, int client, const float *h, size_t n, bbvfl_err *err);
  int (*sum_q)(void *self, uint64_t round, uint32_t *sum, size_t n, bbvfl_err *err);
  int (*sum_f)(void *self, uint64_t round, float *sum, size_t n, bbvfl_err *err);
  /* head: the fusion parameters as big-endian binary32 (nullable when not posted) */
  int (*post_gradient)(void *self, uint64_t round, const float *grad, size_t n, const uint8_t *head, size_t head_len,
                       bbvfl_err *err);
  int (*read_gradient)(void *self, uint64_t round, float *grad, size_t n, bbvfl_err *err);
  void (*destroy)(void *self);
} bbvfl_agg_ops;

typedef struct {
  const bbvfl_agg_ops *ops;
  void *self;
} bbvfl_agg;

static inline int bbvfl_agg_submit_q(bbvfl_agg *a, uint64_t r, int c, const uint8_t *q, size_t n, bbvfl_err *e) {
  return a->ops->submit_q(a->self, r, c, q, n, e);
}
static inline int bbvfl_agg_submit_f(bbvfl_agg *a, uint64_t r, int c, const float *h, size_t n, bbvfl_err *e) {
  return a->ops->submit_f(a->self, r, c, h, n, e);
}
static inline int bbvfl_agg_sum_q(bbvfl_agg *a, uint64_t r, uint32_t *s, size_t n, bbvfl_err *e) {
  return a->ops->sum_q(a->self, r, s, n, e);
}
static inline int bbvfl_agg_sum_f(bbvfl_agg *a, uint64_t r, float *s, size_t n, bbvfl_err *e) {
  return a->ops->sum_f(a->self, r, s, n, e);
}
static inline int bbvfl_agg_post_gradient(bbvfl_agg *a, uint64_t r, const float *g, size_t n, const uint8_t *head,
                                          size_t hl, bbvfl_err *e) {
  return a->ops->post_gradient(a->self, r, g, n, head, hl, e);
}
static inline int bbvfl_agg_read_gradient(bbvfl_agg *a, uint64_t r, float *g, size_t n, bbvfl_err *e) {
  return a->ops->read_gradient(a->self, r, g, n, e);
}
static inline void bbvfl_agg_destroy(bbvfl_agg *a) {
  if (a && a->ops) a->ops->destroy(a->self);
  if (a) a->ops = NULL;
}

/* ---- the in-process aggregator ---- */

/* M clients, at most n values per submission (a round's first submission sets its length, the
 * others and the sum must match it; the gradient read back has the length posted), b = the
 * largest value a PBM submission may hold. */
int bbvfl_agg_inproc_new(bbvfl_agg *a, int M, size_t n, int b, bbvfl_err *err);

typedef struct {
  double train_sum_s;   /* monotonic seconds spent summing the M integer vectors, training rounds */
  double eval_sum_s;    /* the same for evaluation rounds */
  uint64_t train_rounds, eval_rounds;
} bbvfl_agg_inproc_stats;
/* Reads (and with reset = 1 zeroes) the timing counters. a must be an in-process aggregator. */
void bbvfl_agg_inproc_stats_get(bbvfl_agg *a, bbvfl_agg_inproc_stats *st, int reset);

#endif
