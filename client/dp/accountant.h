/* Exact Renyi-DP accountant for the Poisson Binomial Mechanism (PBM) and the Gaussian local-DP
 * baseline (DESIGN.md "Privacy accounting" and "Masked mode").
 *
 * Every function here is pure computation: no allocation that outlives a call, no printing.
 * All output structs are caller-owned. Errors (bad parameters, unreachable targets) are returned
 * through bbvfl_err with a message saying what was wrong.
 *
 * Levels:
 *   feature level: one client's whole column set changes (one client's embedding of every row);
 *   sample level:  one row changes, so every client's embedding of that row changes.
 * Local mode: every client's PBM output is public (on chain), so sample level composes over the
 * M clients. Masked mode: only the sum of the M clients' outputs is public.
 */
#ifndef BBVFL_DP_ACCOUNTANT_H
#define BBVFL_DP_ACCOUNTANT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* What every epsilon of this accountant is, in words, for each command that prints one: the
 * accounting of one row's releases (E x P coordinates per client), as the papers compose them.
 * It is not an end-to-end guarantee for the pipeline as built (docs/PRIVACY.md, "What these
 * numbers do not guarantee"). A static string, not owned by the caller. */
#define BBVFL_ACCT_SCOPE                                                                         \
  "these epsilons account one row's PBM releases (epochs x P per client) as the papers do; they " \
  "are not an end-to-end guarantee: each client's network and feature scaling are fitted on its " \
  "rows, a whole column set changes every row's releases, and the labels are not protected "     \
  "(docs/PRIVACY.md)"

/* colluding (masked mode only): how many participants pool what they know against the changed
 * client, the observer included; each knows its own output and subtracts it from the public sum,
 * so only M - 1 - colluding others' noise hides the changed client. 0: an observer outside the
 * session (any chain reader); 1: one participant, e.g. the active client (what the commands
 * report by default, BBVFL_ACCT_COLLUDING_DEFAULT). Ignored outside masked mode. */
typedef struct { int b; double beta; int P; int M; int epochs; double delta; int colluding; } bbvfl_pbm_acct_in;
#define BBVFL_ACCT_COLLUDING_DEFAULT 1
typedef struct {
  double epsilon_feature, alpha_feature;   /* tighter (Canonne-Kamath-Steinke / Balle) conversion */
  double epsilon_sample, alpha_sample;
  double epsilon_feature_std, epsilon_sample_std; /* standard conversion r + ln(1/delta)/(alpha-1) */
  int at_grid_edge;                         /* optimum at an end of the alpha grid: warn */
} bbvfl_acct_out;
int bbvfl_acct_pbm(const bbvfl_pbm_acct_in *in, bbvfl_acct_out *out, bbvfl_err *err);
/* Gaussian local DP baseline: clip norm c, noise sigma, P-dim embedding released per epoch */
int bbvfl_acct_gaussian(double clip, double sigma, int M, int epochs, double delta, bbvfl_acct_out *out, bbvfl_err *err);

/* ---- additions beyond the shared interface ---- */

/* The alpha grid: 1.01..1.09 step 0.01, 1.1..10.9 step 0.1, 11..63, 128, 256, 512, 1024
 * (ascending). */
#define BBVFL_ACCT_NGRID 165
/* Returns a pointer to a static array of BBVFL_ACCT_NGRID orders (not owned by the caller). */
const double *bbvfl_acct_grid(void);

/* Renyi divergence of order alpha > 1 between Binomial(b, 1/2+beta) and Binomial(b, 1/2-beta):
 * the per-coordinate RDP of PBM, computed in closed form without overflow or cancellation. */
double bbvfl_acct_pbm_coord_rdp(int b, double beta, double alpha);

/* The composed RDP curves on the grid (caller-owned struct, fixed size). */
typedef struct {
  double alpha[BBVFL_ACCT_NGRID];
  double feature[BBVFL_ACCT_NGRID]; /* epochs * P * coord */
  double sample[BBVFL_ACCT_NGRID];  /* epochs * M * P * coord (local mode) */
} bbvfl_acct_curve;
int bbvfl_acct_pbm_curve(const bbvfl_pbm_acct_in *in, bbvfl_acct_curve *curve, bbvfl_err *err);
/* A composed curve converted to *out (both conversions, the optimal orders, grid-edge flag): what
 * bbvfl_acct_pbm and bbvfl_acct_gaussian do after building their curve; for curves composed
 * further by the caller (dp/privacy.h, row mode). */
void bbvfl_acct_curve_to_out(const bbvfl_acct_curve *curve, double delta, bbvfl_acct_out *out);
int bbvfl_acct_gaussian_curve(double clip, double sigma, int M, int epochs, bbvfl_acct_curve *curve,
                              bbvfl_err *err);

/* Converts an RDP curve (n orders) to (epsilon, delta)-DP, minimised over the orders.
 * tight = 0: eps = r + ln(1/delta)/(alpha-1); tight = 1: eps = r + ln(1-1/alpha)
 * - ln(delta*alpha)/(alpha-1). Negative values are clamped to 0. *alpha_opt and *at_edge
 * (optimum at the first or last order) may be NULL. */
double bbvfl_acct_rdp_to_eps(const double *alpha, const double *rdp, size_t n, double delta, int tight,
                             double *alpha_opt, int *at_edge);

typedef enum { BBVFL_ACCT_FEATURE = 0, BBVFL_ACCT_SAMPLE = 1 } bbvfl_acct_level;

/* Calibration against the tighter conversion at the given level.
 * solve_beta: in->b, P, M, epochs, delta given (in->beta ignored); finds beta in (0, 0.5) with
 * epsilon(beta) = target (bisection, relative tolerance 1e-9). Error if even beta -> 0 exceeds it.
 * solve_b: in->beta given (in->b ignored); the largest integer b in 1..255 with epsilon <= target.
 * Error if b = 1 already exceeds the target. */
int bbvfl_acct_solve_beta(const bbvfl_pbm_acct_in *in, bbvfl_acct_level level, double target_eps,
                          double *beta, bbvfl_err *err);
int bbvfl_acct_solve_b(const bbvfl_pbm_acct_in *in, bbvfl_acct_level level, double target_eps, int *b,
                       bbvfl_err *err);

/* Masked mode, feature level: only the sum of the M clients' PBM outputs is public. Per
 * coordinate, the exact Renyi divergence between the Poisson-binomial sum distributions (M*b+1
 * outcomes, by direct convolution) when one client's input moves from C to -C (and back), worst
 * case over the inputs of the M-1-colluding clients that the observer does not know (searched
 * over every multiset of the levels
 * {-C, -C/2, 0, C/2, C}, or of {-C, 0, C} when that search would be too long; the worst case
 * found numerically is all others at one corner), composed over P and epochs. Fills out->epsilon_feature,
 * alpha_feature, epsilon_feature_std and at_grid_edge (for the feature level); the sample-level
 * fields are those of local mode (masking does not help: a changed row moves every client).
 * rdp_feature (nullable) receives the BBVFL_ACCT_NGRID composed feature-level orders.
 * in->colluding must be in 0..M-1 (M-1: nobody hides the changed client; the local bound).
 * Cost: O(multisets * (M*b)^2); M <= 64, M*b <= 4096, and an error when the search is too long. */
int bbvfl_acct_pbm_masked_feature(const bbvfl_pbm_acct_in *in, bbvfl_acct_out *out, double *rdp_feature,
                                  bbvfl_err *err);

/* ---- exact privacy loss distribution (PLD) of PBM, local mode ----
 * n_coords coordinates, each released as Binomial(b, 1/2 + beta x/C), the worst pair x = C
 * against x' = -C (it dominates every other pair: Bernoulli(p') against Bernoulli(q') for
 * q <= q' <= p' <= p is a garbling of Bernoulli(p) against Bernoulli(q)). The privacy loss of an
 * outcome with K successes out of N = n_coords * b trials is (2K - N) ln(p/q), an affine function
 * of K ~ Binomial(N, p): the composed loss distribution is exact, with no discretisation. delta
 * at a given epsilon is the hockey-stick divergence sum_K max(0, P(K) - e^eps Q(K)), summed over
 * every K whose probability is within e^-800 of the mode's (the rest cannot matter in double
 * precision). The same pair reversed gives the same curve (K -> N-K), so this is the epsilon of
 * the (epsilon, delta) guarantee itself: any RDP conversion is an upper bound on it.
 * Feature level: n_coords = epochs * P; sample level: epochs * M * P (the row-release accounting
 * of BBVFL_ACCT_SCOPE). Limits: 1 <= N <= 1e11. */

/* delta(eps) for eps >= 0; NAN for bad parameters. */
double bbvfl_acct_pbm_pld_delta(int b, double beta, uint64_t n_coords, double eps);
/* The smallest eps >= 0 with delta(eps) <= delta (bisection to a relative 1e-12). */
int bbvfl_acct_pbm_pld_eps(int b, double beta, uint64_t n_coords, double delta, double *eps, bbvfl_err *err);

#endif
