/* Feature scaling that does not leak the rows: a differentially private centre and scale for
 * each column, in place of the mean and standard deviation fitted on the training rows (which
 * make every later release of every row depend on every other row: docs/PRIVACY.md).
 *
 * Centre: a DP median by the exponential mechanism (McSherry-Talwar 2007) over a fixed,
 * data-independent grid, utility -| #{x < c} - n/2 | (sensitivity 1 when one row's value changes),
 * candidate c drawn with probability proportional to exp(eps_c u(c) / 2). Scale: the same for the
 * median of |x - centre| (the MAD), times 1.4826 (the normal consistency constant). Grids: 0 and
 * +-10^(k/8) for k = -48..48 (centre; 1e-6 to 1e6), 10^(k/8) (scale). Each is pure eps/2-DP, so a
 * column costs pure eps; a party's columns compose (one row changes all of them): scale_epsilon
 * is split evenly over the party's columns, so the whole scaling of a party costs scale_epsilon.
 *
 * Pure computation; the generator is the caller's (private randomness). */
#ifndef BBVFL_DP_DPSCALE_H
#define BBVFL_DP_DPSCALE_H

#include <stddef.h>

#include "common/err.h"
#include "dp/rng.h"

/* x[n] (n >= 1, finite): *centre and *scale (> 0) with pure eps-DP (eps > 0) in the value of any
 * one x[i]. */
int bbvfl_dp_robust_scale(const double *x, size_t n, double eps, bbvfl_rng *r, double *centre, double *scale,
                          bbvfl_err *err);

/* The centre alone: the DP median of x[n] over the centre grid above with pure eps-DP (the whole
 * eps on it). Row mode's encoder (dp/rowdp.h) uses it for sign features, sign(x - centre), which
 * need no scale. */
int bbvfl_dp_centre(const double *x, size_t n, double eps, bbvfl_rng *r, double *centre, bbvfl_err *err);

/* The value a scaled input is clipped to: (x - centre) / scale in [-BBVFL_DPSCALE_CLIP, +]. */
#define BBVFL_DPSCALE_CLIP 4.0

#endif
