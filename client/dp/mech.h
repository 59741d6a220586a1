/* Privacy mechanisms applied to a client's embedding before it leaves the client.
 *
 *  PBM  (Poisson Binomial Mechanism, PBM-VFL Algorithm 1 / DP-BBVFL): each coordinate h in
 *       [-C, C] becomes q ~ Binomial(b, 1/2 + beta*h/C), an integer in 0..b (one byte, b <= 255).
 *       From the sum s of M clients' q: h_hat = C/(beta*b) * (s - b*M/2), an unbiased estimate of
 *       the sum of the M embeddings with variance C^2*M/(4*beta^2*b) at most (at h = 0).
 *  NPQ  no privacy, no quantization: the embedding goes out as floats (the paper's baseline).
 *  Gaussian local DP (VFL-AFE style): each row of the embedding (P values) is clipped to L2 norm
 *       c, then N(0, sigma^2) noise is added to every coordinate.
 * All buffers are caller-owned; nothing allocates. */
#ifndef BBVFL_DP_MECH_H
#define BBVFL_DP_MECH_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/rng.h"

typedef enum { BBVFL_MECH_NPQ = 0, BBVFL_MECH_PBM = 1, BBVFL_MECH_GAUSSIAN = 2 } bbvfl_mech_kind;

typedef struct {
  bbvfl_mech_kind kind;
  int b;          /* PBM: trials per coordinate, 1..255 */
  double beta;    /* PBM: in (0, 1/2] */
  double C;       /* PBM: input bound (1 for tanh embeddings) */
  double clip;    /* Gaussian: L2 clip norm per row */
  double sigma;   /* Gaussian: noise standard deviation */
} bbvfl_mech;

/* "npq", "pbm", "gaussian"; -1 if unknown. */
int bbvfl_mech_parse(const char *name, bbvfl_mech_kind *out);
const char *bbvfl_mech_name(bbvfl_mech_kind k);
/* Checks the parameters of the selected kind (error names the bad one). */
int bbvfl_mech_check(const bbvfl_mech *m, bbvfl_err *err);

/* The widest lane of the aggregator: a PBM lane sums every client's value of 0..b. */
#define BBVFL_MAX_LANE 65535
/* The one home of the lane rule: 1 when `clients` PBM values of 0..b add up within a lane
 * (clients * b <= BBVFL_MAX_LANE), else 0. Callers word their own error. */
int bbvfl_pbm_lanes_fit(long clients, long b);

/* PBM quantization of n values (clamped to [-C, C]) into q[n] in 0..b. */
void bbvfl_pbm_quantize(const bbvfl_mech *m, const float *h, size_t n, bbvfl_rng *r, uint8_t *q);
/* Estimate of the sum of M clients' embeddings from the integer sums s[n]. */
void bbvfl_pbm_estimate(const bbvfl_mech *m, int M, const uint32_t *s, size_t n, float *h_hat);
/* The variance bound of one estimated coordinate: C^2*M/(4*beta^2*b). */
double bbvfl_pbm_variance(const bbvfl_mech *m, int M);

/* Gaussian: clips each of the rows (rows x P, row-major) to L2 norm m->clip, writes the scale
 * factors min(1, clip/||row||) to scale[rows] (nullable), then adds N(0, sigma^2) in place. */
void bbvfl_gauss_clip_noise(const bbvfl_mech *m, float *h, size_t rows, size_t P, bbvfl_rng *r,
                            float *scale);

/* Sums M integer vectors of n values: s[i] = sum_m q[m][i]. The aggregation step itself. */
void bbvfl_sum_u8(const uint8_t *const *q, size_t M, size_t n, uint32_t *s);

#endif
