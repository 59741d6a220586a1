/* VFL-AFE's adaptive feature embeddings (seed 004, Algorithm 1; docs/PRIVACY.md "VFL-AFE"): the
 * arithmetic a passive client adds around the Gaussian mechanism of dp/mech.h. Pure computation:
 * nothing prints, nothing allocates except the scratch a function says it allocates and frees.
 *
 *  Rescaling (lines 6-8, Eqs. 3-5): after norm clipping at t, the batch's maximum pairwise
 *    disparity max_{j != k} ||h_j - h_k|| (Eq. 3) is estimated from the normal fit N(mu, sd^2) of
 *    the batch's pairwise distances as its 1 - p2 quantile mu + sd Phi^-1(1 - p2) (Eq. 5), and
 *    every row is multiplied by 2t / that estimate (Eq. 4), so the batch fills the 2t the noise
 *    is calibrated for. The scale depends on the batch (docs/PRIVACY.md says what that leaves
 *    unaccounted).
 *  Distribution adjusting (lines 16-18, Eqs. 6-8): fuzzy c-means (ml/fcm.h) on the gradients the
 *    active client returned gives each row a cluster and a confidence; pairs of rows both at or
 *    above the confidence threshold c form the weakly supervised contrastive loss
 *      L_CL = (1/n^2) sum_{j,k confident} (w_jk - (1 - w_jk)) ||h_j - h_k||,
 *    w_jk = 1 for the same cluster: same-cluster pairs are pulled together and different-cluster
 *    pairs pushed apart. (Eq. 8 as printed sums only the different-cluster distances with a
 *    positive weight, which minimising would pull the classes together, against the paper's
 *    stated aim; we use the sign that separates them.) The KL term of Eq. 6, D_KL(P(d) || N(mu,
 *    sd^2)) of the pairwise distances d, is taken as its moment (Edgeworth) approximation
 *    skew^2/12 + exkurt^2/48, which is differentiable. Adjusting loss = lambda L_CL + alpha L_KL. */
#ifndef BBVFL_ML_AFE_H
#define BBVFL_ML_AFE_H

#include <stddef.h>

#include "common/err.h"

typedef struct {
  int on;          /* VFL-AFE's clipped Gaussian release (needs the gaussian mechanism) */
  int rescale;     /* adaptive rescaling (Eqs. 3-5) */
  int adjust;      /* distribution adjusting (FCM soft labels, contrastive + KL) */
  double lambda;   /* weight of the contrastive loss (default 0.1) */
  double alpha;    /* weight of the KL term (default 0.01) */
  double conf;     /* confidence threshold c of the soft labels, in [0, 1] (default 0.8) */
  double p2;       /* failure probability of the quantile estimate (default 1e-3) */
  double p1;       /* failure probability of estimating from a minibatch (default 1e-3) */
  int nclasses;    /* C clusters of the gradients (the task's classes; 2 for a binary task) */
  size_t B;        /* rows per rescaling batch (the minibatch) */
} bbvfl_afe_cfg;

/* Defaults above, everything off. */
void bbvfl_afe_defaults(bbvfl_afe_cfg *a);
/* Checks the weights, threshold and probabilities (error names the flag). */
int bbvfl_afe_check(const bbvfl_afe_cfg *a, bbvfl_err *err);

/* Phi^-1(p) for p in (0, 1): bisection of 0.5 erfc(-x / sqrt 2) = p on [-40, 40] to 1e-12. */
double bbvfl_norm_quantile(double p);

/* The pairwise distances of n rows of P values: mean *mu, standard deviation *sd (population),
 * maximum *dmax (nullable). n < 2: all 0. */
void bbvfl_afe_pair_stats(const float *h, size_t n, size_t P, double *mu, double *sd, double *dmax);
/* Eq. 5: mu + sd Phi^-1(1 - p2) of the rows' pairwise distances. */
double bbvfl_afe_disparity_estimate(const float *h, size_t n, size_t P, double p2);
/* Eq. 4's factor 2t / estimate, the estimate capped at 2t (rows clipped at t are never farther
 * apart: the factor never shrinks them) and floored at 1e-6 t; n < 2: 1. */
double bbvfl_afe_rescale_factor(const float *h, size_t n, size_t P, double t, double p2);

/* The adjusting loss of n rows h (n x P) with soft labels lab[n] and confidences conf[n] (ml/fcm.h)
 * at threshold c: returns lambda L_CL + alpha L_KL and writes its gradient d/dh into g (n x P,
 * overwritten). Pairs at distance 0 contribute no gradient. Allocates n(n-1)/2 doubles of scratch
 * for the KL term (alpha > 0); returns NAN when that fails (g then holds the contrastive part only). */
double bbvfl_afe_adjust_loss(const float *h, size_t n, size_t P, const int *lab, const float *conf, double c,
                             double lambda, double alpha, float *g);

#endif
