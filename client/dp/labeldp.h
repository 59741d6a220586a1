/* Label differential privacy by randomized response (Warner 1965; the K-ary form as in Ghazi et
 * al., "Deep Learning with Label Differential Privacy", NeurIPS 2021).
 *
 * The labels leak through every posted gradient (audit/leak.h): anyone reading the chain reads
 * the training labels back. With randomized response the label holder trains on noisy labels
 * instead, drawn once per training row before training: the true label is kept with probability
 * e^eps / (e^eps + K - 1), otherwise replaced by one of the K - 1 others uniformly. Everything
 * the chain shows about a row's label is post-processing of that one draw, so the labels are
 * eps-label-DP (pure, delta = 0) however many epochs reuse them. The draw must happen once: a
 * second independent draw for the same row (a restart or a re-elected label holder with
 * fresh OS randomness) composes, 2 eps: the on-chain client draws from its private noise key
 * (dp/rng.h, state-dir/noise.key), so a restart redraws the same responses.
 *
 * Pure computation on caller-owned arrays; the generator is the caller's. */
#ifndef BBVFL_DP_LABELDP_H
#define BBVFL_DP_LABELDP_H

#include <stddef.h>

#include "common/err.h"
#include "dp/rng.h"

/* The probability that a row keeps its true label: e^eps / (e^eps + K - 1). K >= 2, eps > 0. */
double bbvfl_rr_keep(double eps, int K);

/* Replaces y[rows[i]] (i < n; each in 0..K-1; negative entries, rows without a label here, are
 * left alone) by its randomized response. Errors: K < 2, eps not > 0 and finite, a label >= K. */
int bbvfl_rr_labels(int *y, const size_t *rows, size_t n, int K, double eps, bbvfl_rng *r, bbvfl_err *err);
/* The same with the session's label noise: the stream (seed, LABELS, 0) when seeded (reproducible
 * noise: anyone with the session file regenerates every flip, so the labels are unprotected), else
 * the stream (key, LABELS, 0) of a client's private noise key (nullable: a restart redraws the same
 * responses, dp/rng.h), else getrandom; the generator is wiped afterwards. */
int bbvfl_rr_labels_keyed(int *y, const size_t *rows, size_t n, int K, double eps, int seeded, uint64_t seed,
                          const uint8_t *key, bbvfl_err *err);

#endif
