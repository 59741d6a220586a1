/* Fuzzy c-means (Bezdek, Ehrlich and Full 1984), fuzzifier m = 2: the soft labels of VFL-AFE's
 * distribution adjusting (ml/afe.h), clustered from the gradients the active client returned.
 * Deterministic: the first centre is the row of largest norm, each next one the row farthest from
 * the centres so far; then alternating membership and centre updates until no membership moves by
 * more than tol or iters passes. Pure computation; allocates its scratch (C x dim centres, n x C
 * memberships) and frees it. */
#ifndef BBVFL_ML_FCM_H
#define BBVFL_ML_FCM_H

#include <stddef.h>

#include "common/err.h"

/* x: n rows of dim values. Writes lab[n] (the cluster of largest membership, 0..C-1) and conf[n]
 * (that membership, in [1/C, 1]). C must be in 1..n. Rows equal to a centre get membership 1 there.
 * Errors: C out of range, out of memory. */
int bbvfl_fcm(const float *x, size_t n, size_t dim, int C, int iters, double tol, int *lab, float *conf,
              bbvfl_err *err);

#endif
