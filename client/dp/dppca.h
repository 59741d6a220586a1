/* A frozen, differentially private linear encoder for one party: the top principal directions of
 * its DP-prepared columns from a DP covariance estimate (the encoder mode of `--privacy row`,
 * dp/rowdp.h; docs/PRIVACY.md).
 *
 * Input: the party's training rows z (n x d), each clipped here to L2 norm sqrt(d) (the sign
 * features of row mode's encoder, z in {-1, +1}^d, have exactly that norm, so the clip changes
 * nothing for them). The second-moment matrix S = sum_i z_i z_i^T is released by the Gaussian
 * mechanism: replacing one row moves S by z z^T - z' z'^T, whose Frobenius norm is at most
 * sqrt(|z|^4 + |z'|^4 - 2 (z.z')^2) <= sqrt(2) R^2 with R^2 = d; noise N(0, (noise sqrt(2) d)^2)
 * is drawn for every entry of the upper triangle (diagonal included) and mirrored, so the
 * released vector (the upper triangle) has L2 sensitivity <= sqrt(2) d and noise multiplier
 * `noise`: RDP alpha / (2 noise^2), the Gaussian privacy curve with mu = 1 / noise. Everything
 * after the release is post-processing: the eigenvectors (cyclic Jacobi), the sign of each one
 * (its loadings sum to >= 0: a rule that does not look at the data again), and the scale of each
 * output, 1 / (BBVFL_DPPCA_KAPPA sqrt(max(lambda_k, 1) / n)), n the public row count.
 *
 * Pure computation; the generator is the caller's (private randomness). */
#ifndef BBVFL_DP_DPPCA_H
#define BBVFL_DP_DPPCA_H

#include <stddef.h>

#include "common/err.h"
#include "dp/rng.h"

/* The projection is divided by this many standard deviations of the released direction before the
 * tanh of the client model's output layer: 0.5 saturates most rows (a near-sign output, what one
 * PBM release of few trials carries best; measured, docs/PRIVACY.md). */
#define BBVFL_DPPCA_KAPPA 0.5

/* z: n x d row-major (n >= 1, 1 <= d <= 4096, finite); P in 1..d outputs; noise > 0. W (d x P,
 * caller-owned, row-major: the layout of the client model's weights, ml/mlp.h) receives the
 * scaled top-P directions. Errors: bad arguments (named), out of memory. */
int bbvfl_dp_pca_encoder(const float *z, size_t n, size_t d, int P, double noise, bbvfl_rng *r, float *W,
                         bbvfl_err *err);

/* Eigen-decomposition of the symmetric a (d x d, row-major, destroyed) by cyclic Jacobi:
 * lambda[d] descending and the matching unit eigenvectors as the COLUMNS of v (d x d). Exposed for
 * the tests. */
int bbvfl_sym_eigen(double *a, size_t d, double *lambda, double *v, bbvfl_err *err);

#endif
