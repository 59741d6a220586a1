/* Noise as accounted: for every DP mechanism, the noise actually drawn has the scale the accountant
 * assumes (issue 28, deliverable 7). Each test draws many releases of a small, fixed input and
 * compares what came out with the distribution the accountant's epsilon is computed for, taking
 * that distribution's parameters from the configuration the accountant reads (dp/accountant.h,
 * dp/privacy.h), and checking that the accountant's curve is the one of that distribution:
 *   PBM            q ~ Binomial(b, 1/2 + beta x / C)    (per-coordinate RDP, bbvfl_acct_pbm_coord_rdp)
 *   Gaussian       clip to L2 norm clip, + N(0, sigma^2) (bbvfl_acct_gaussian_curve)
 *   DP-SGD         N(0, (noise clip)^2) on the sum of B clipped gradients, / B (privacy.c row mode)
 *   DP-PCA         N(0, (pca_noise sqrt(2) d)^2) on every upper-triangle entry (privacy.c encoder)
 *   DP medians     the exponential mechanism, P(c) ~ exp(eps u(c) / 2), u of sensitivity 1
 *   labels         randomized response, keep with e^eps / (e^eps + K - 1)
 *
 * The noise comes from the operating system (bbvfl_rng_init_os, the private path), so no run
 * repeats another; every bound is derived from the distribution (comments at each) so that one
 * check fails by chance with probability below 1e-10 (about 1e-9 for the whole file), while half
 * the noise (or twice the epsilon) fails by many bound widths: each test also asserts that margin
 * (the "power" assertions), computed from the mutated distribution. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_skip.h"

#include "dp/accountant.h"
#include "dp/dppca.h"
#include "dp/dpscale.h"
#include "dp/labeldp.h"
#include "dp/mech.h"
#include "dp/privacy.h"
#include "dp/rng.h"
#include "core/party.h"

/* ln(1/p) for the per-check false-failure probability p = 1e-10. */
#define LN_INV_P 23.03

static void os_rng(bbvfl_rng *r) {
  bbvfl_err err = {0};
  if (bbvfl_rng_init_os(r, &err) != 0) fail_msg("%s", err.msg);
}

/* Variance check for n independent draws known to have mean 0 under H0: S = sum x_i^2 / sigma^2 is
 * chi-square with n degrees of freedom. Laurent & Massart (2000), Lemma 1: for every x > 0,
 * P(S - n >= 2 sqrt(n x) + 2 x) <= e^-x and P(n - S >= 2 sqrt(n x)) <= e^-x. With x = ln(1e10)
 * both tails together fail by chance with probability <= 2e-10. Returns S / n after asserting the
 * two-sided bound; also asserts that noise of half the scale (S / n = 1/4) and of 0.9 of it
 * (0.81) lie outside the bound, so the check has the power it is meant to have. */
static double chi2_check(double sum_sq_over_sigma2, double n, const char *what) {
  double up = n + 2 * sqrt(n * LN_INV_P) + 2 * LN_INV_P, lo = n - 2 * sqrt(n * LN_INV_P);
  assert_true(0.81 * n < lo); /* power: 0.9 sigma already fails */
  if (!(sum_sq_over_sigma2 > lo && sum_sq_over_sigma2 < up))
    fail_msg("%s: sum of squares / sigma^2 = %.1f over %.0f draws, outside [%.1f, %.1f] (variance ratio %.4f)", what,
             sum_sq_over_sigma2, n, lo, up, sum_sq_over_sigma2 / n);
  return sum_sq_over_sigma2 / n;
}

/* Frequency check for N independent draws over K classes with probabilities p[k]: Hoeffding, for
 * each class, P(|count_k / N - p_k| >= t) <= 2 exp(-2 N t^2); with t = sqrt(ln(2 K / P) / (2 N))
 * and the union over the K classes, a false failure has probability <= P = 1e-10. The same bound
 * holds for counts whose probability p_k is the conditional one given earlier draws
 * (Azuma-Hoeffding: the sum of indicator minus conditional probability is a martingale with
 * increments in an interval of length 1), which the scale median below uses. Returns t. */
static double freq_bound(double N, int K) { return sqrt((LN_INV_P + log(2.0 * K)) / (2 * N)); }

static void freq_check(const double *count, const double *p, int K, double N, const double *p_wrong,
                       const char *what) {
  double t = freq_bound(N, K), gap = 0;
  for (int k = 0; k < K; k++) {
    if (!(fabs(count[k] / N - p[k]) < t))
      fail_msg("%s: class %d drawn with frequency %.5f, expected %.5f (bound %.5f)", what, k, count[k] / N, p[k], t);
    if (p_wrong) gap = fmax(gap, fabs(p_wrong[k] - p[k]));
  }
  /* power: the wrong distribution (half the noise / twice the epsilon) misses some class by more
   * than two bound widths, so it fails the check except with probability <= 1e-10 */
  if (p_wrong && !(gap > 2 * t)) fail_msg("%s: the test cannot tell the wrong scale (gap %.5f, bound %.5f)", what, gap, t);
}

/* ---- PBM ---- */

static double binom_pmf(int b, int k, double p) {
  return exp(lgamma(b + 1.0) - lgamma(k + 1.0) - lgamma(b - k + 1.0) + k * log(p) + (b - k) * log1p(-p));
}

/* The accountant's per-coordinate RDP is D_alpha(Bin(b, 1/2 + beta) || Bin(b, 1/2 - beta)): the
 * distribution of q at x = +C and -C. Checked here by summing the two pmfs directly, then the
 * quantizer's q at several inputs against Binomial(b, 1/2 + beta x / C), cell by cell (b + 1
 * cells, freq_check). beta is the accountant's calibration for epsilon 2 (feature level, one
 * coordinate, delta 1e-5), the way the commands pick it. */
static void test_pbm_scale(void **st) {
  (void)st;
  bbvfl_mech m = {.kind = BBVFL_MECH_PBM, .b = 4, .C = 1.5};
  bbvfl_pbm_acct_in in = {.b = m.b, .P = 1, .M = 1, .epochs = 1, .delta = 1e-5};
  bbvfl_err err = {0};
  if (bbvfl_acct_solve_beta(&in, BBVFL_ACCT_FEATURE, 2.0, &m.beta, &err) != 0) fail_msg("%s", err.msg);
  assert_true(m.beta > 0.05 && m.beta < 0.45);
  const double alphas[] = {1.5, 2, 5, 20};
  for (size_t a = 0; a < sizeof alphas / sizeof *alphas; a++) {
    double al = alphas[a], s = 0;
    for (int k = 0; k <= m.b; k++)
      s += pow(binom_pmf(m.b, k, 0.5 + m.beta), al) * pow(binom_pmf(m.b, k, 0.5 - m.beta), 1 - al);
    double d = log(s) / (al - 1), acct = bbvfl_acct_pbm_coord_rdp(m.b, m.beta, al);
    if (!(fabs(d - acct) <= 1e-9 * fmax(1, d))) fail_msg("alpha %g: accountant %.12g, binomials %.12g", al, acct, d);
  }
  enum { N = 200000 };
  float *h = malloc(N * sizeof *h);
  uint8_t *q = malloc(N);
  assert_true(h && q);
  bbvfl_rng r;
  os_rng(&r);
  const double xs[] = {1.5, -1.5, 0.75, 0.0, -0.3};
  for (size_t c = 0; c < sizeof xs / sizeof *xs; c++) {
    for (size_t i = 0; i < N; i++) h[i] = (float)xs[c];
    bbvfl_pbm_quantize(&m, h, N, &r, q);
    double count[5] = {0}, p[5], pw[5];
    for (size_t i = 0; i < N; i++) {
      assert_true(q[i] <= m.b);
      count[q[i]]++;
    }
    /* the wrong scale: beta twice (half the noise per unit of input); at x = 0 it draws the same
     * distribution (no power assertion there) */
    double pr = 0.5 + m.beta * xs[c] / m.C, prw = fmin(1, fmax(0, 0.5 + 2 * m.beta * xs[c] / m.C));
    for (int k = 0; k <= m.b; k++) {
      p[k] = binom_pmf(m.b, k, pr);
      pw[k] = prw <= 0 ? (k == 0) : prw >= 1 ? (k == m.b) : binom_pmf(m.b, k, prw);
    }
    char what[64];
    snprintf(what, sizeof what, "PBM at x = %g", xs[c]);
    freq_check(count, p, m.b + 1, N, xs[c] != 0 ? pw : NULL, what);
  }
  bbvfl_rng_wipe(&r);
  free(h);
  free(q);
}

/* ---- Gaussian local DP ---- */

/* The accountant's curve for one release is alpha (2 clip)^2 / (2 sigma^2): the sigma it assumes
 * is read back from that curve. Rows of 0 (nothing clipped) must come out N(0, sigma^2); rows far
 * outside the ball must come out as the clipped row (norm clip) plus the same noise. */
static void test_gaussian_scale(void **st) {
  (void)st;
  bbvfl_mech m = {.kind = BBVFL_MECH_GAUSSIAN, .clip = 0.8, .sigma = 1.7};
  bbvfl_acct_curve cv;
  bbvfl_err err = {0};
  if (bbvfl_acct_gaussian_curve(m.clip, m.sigma, 1, 1, &cv, &err) != 0) fail_msg("%s", err.msg);
  double s2 = (2 * m.clip) * (2 * m.clip) * cv.alpha[0] / (2 * cv.feature[0]);
  for (size_t k = 0; k < BBVFL_ACCT_NGRID; k++)
    assert_true(fabs((2 * m.clip) * (2 * m.clip) * cv.alpha[k] / (2 * cv.feature[k]) / s2 - 1) < 1e-12);
  enum { ROWS = 25000, P = 4 };
  float *h = malloc(ROWS * P * sizeof *h), *scale = malloc(ROWS * sizeof *scale);
  assert_true(h && scale);
  bbvfl_rng r;
  os_rng(&r);
  /* (a) zero rows */
  memset(h, 0, ROWS * P * sizeof *h);
  bbvfl_gauss_clip_noise(&m, h, ROWS, P, &r, scale);
  double ss = 0;
  for (size_t i = 0; i < ROWS * P; i++) ss += (double)h[i] * h[i];
  chi2_check(ss / s2, ROWS * P, "Gaussian mechanism, zero rows");
  /* (b) rows (10, 10, 10, 10): clipped to clip (1/2, 1/2, 1/2, 1/2), scale clip / 20 */
  for (size_t i = 0; i < ROWS * P; i++) h[i] = 10;
  bbvfl_gauss_clip_noise(&m, h, ROWS, P, &r, scale);
  ss = 0;
  for (size_t i = 0; i < ROWS * P; i++) ss += (h[i] - 0.5 * m.clip) * (h[i] - 0.5 * m.clip);
  for (size_t i = 0; i < ROWS; i++) assert_true(fabs(scale[i] - m.clip / 20) < 1e-6);
  chi2_check(ss / s2, ROWS * P, "Gaussian mechanism, clipped rows");
  bbvfl_rng_wipe(&r);
  free(h);
  free(scale);
}

/* ---- row mode: what the accountant composes ---- */

/* The row-feature RDP epsilon of a row-mode configuration recomputed from its parts: the PBM
 * releases (releases x P coordinates), plus gauss(alpha) (the DP-SGD steps or the DP-PCA), plus
 * the pure scale_eps of the scaling, min(s, alpha s^2 / 2). Must equal the accountant's: that
 * ties the Gaussian term the test checks the noise against to the one the epsilon is for. */
static void check_row_accounting(const bbvfl_privacy_in *in, int releases, double gauss_per_alpha) {
  bbvfl_privacy out;
  bbvfl_err err = {0};
  if (bbvfl_privacy_compute(in, &out, NULL, &err) != 0) fail_msg("%s", err.msg);
  bbvfl_pbm_acct_in a = {in->b, in->beta, in->P, 1, releases, in->delta, 0};
  bbvfl_acct_curve c;
  if (bbvfl_acct_pbm_curve(&a, &c, &err) != 0) fail_msg("%s", err.msg);
  double rdp[BBVFL_ACCT_NGRID], s = in->rowdp.scale_eps;
  for (size_t k = 0; k < BBVFL_ACCT_NGRID; k++)
    rdp[k] = c.feature[k] + gauss_per_alpha * c.alpha[k] + fmin(s, c.alpha[k] * s * s / 2);
  double eps = bbvfl_acct_rdp_to_eps(c.alpha, rdp, BBVFL_ACCT_NGRID, in->delta, 1, NULL, NULL);
  if (!(fabs(eps - out.rdp.epsilon_feature) <= 1e-9 * eps))
    fail_msg("row mode: the accountant's epsilon %.12g is not the one of its parts %.12g", out.rdp.epsilon_feature, eps);
}

/* DP-SGD: the accountant composes epochs Gaussian steps of sensitivity 2 clip and standard
 * deviation noise x clip on the sum (RDP 2 alpha / noise^2 each). A party with zero gradients
 * (nothing to clip: the clipped sum is 0) and plain SGD at learning rate 1 moves each parameter by
 * minus the noise divided by the batch size B: B^2 times the squared steps over (noise clip)^2 is
 * chi-square. */
static void test_dpsgd_scale(void **st) {
  (void)st;
  const double clip = 0.7, noise = 1.3;
  bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = 8, .beta = 0.2, .P = 4, .M = 1, .epochs = 5, .delta = 1e-5,
                         .rowdp = {.on = 1, .clip = clip, .noise = noise, .scale_eps = 0.25}};
  check_row_accounting(&in, in.epochs, in.epochs * (2 * clip) * (2 * clip) / (2 * (noise * clip) * (noise * clip)));
  const double sd = noise * clip; /* the standard deviation of that Gaussian term */
  enum { D = 8, P = 4, B = 3, STEPS = 3000 };
  float cols[B * D];
  for (int i = 0; i < B * D; i++) cols[i] = (float)((i % 5) - 2) * 0.5f;
  bbvfl_party_cfg c = {.index = 0, .P = P, .nhidden = 0, .seed = 5, .seeded_noise = 0, .rowdp = in.rowdp};
  c.mech.kind = BBVFL_MECH_NPQ;
  bbvfl_optim_defaults(&c.opt);
  c.opt.kind = BBVFL_OPT_SGD;
  c.opt.lr = 1;
  bbvfl_party p;
  bbvfl_err err = {0};
  if (bbvfl_party_init(&p, &c, cols, B, D, &err) != 0) fail_msg("%s", err.msg);
  bbvfl_party_epoch(&p, 0);
  size_t np = p.mlp.nparams, rows[B] = {0, 1, 2};
  float *before = malloc(np * sizeof *before), hf[B * P], g[B * P] = {0};
  assert_true(before);
  double ss = 0;
  for (int s = 0; s < STEPS; s++) {
    memcpy(before, p.mlp.params, np * sizeof *before);
    if (bbvfl_party_forward(&p, rows, B, NULL, hf, &err) != 0 || bbvfl_party_backward(&p, g, &err) != 0)
      fail_msg("%s", err.msg);
    for (size_t k = 0; k < np; k++) {
      double d = (double)before[k] - p.mlp.params[k];
      ss += d * d * B * B;
    }
  }
  chi2_check(ss / (sd * sd), (double)STEPS * np, "DP-SGD noise on the clipped sum");
  free(before);
  bbvfl_party_free(&p);
}

/* DP-PCA: the accountant adds alpha / (2 pca_noise^2), the Gaussian mechanism of noise multiplier
 * pca_noise for the sensitivity of dp/dppca.h, sqrt(2) R^2 with R^2 = d (the clip): standard
 * deviation pca_noise sqrt(2) d on every upper-triangle entry of S = sum z z^T. The noisy S is
 * read back from the encoder's output: with P = d, column p of W is sign v_p / (kappa
 * sqrt(lambda_p / n)) (every lambda_p > 1 here), so lambda_p = n / (kappa^2 |w_p|^2) and
 * S_noisy = sum_p lambda_p w_p w_p^T / |w_p|^2. The rows are the 2^d sign patterns, each n / 2^d
 * times: S = n I, far above the noise (n / sd > 15, so no eigenvalue comes near 1). */
static void test_dppca_scale(void **st) {
  (void)st;
  const double zp = BBVFL_ROWDP_PCA_NOISE;
  bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = 8, .beta = 0.2, .P = 3, .M = 1, .epochs = 5, .delta = 1e-5,
                         .rowdp = {.on = 1, .clip = 1, .noise = 1, .scale_eps = 0.25, .encoder = 1, .pca_noise = zp}};
  check_row_accounting(&in, 1, 1 / (2 * zp * zp));
  enum { D = 3, NR = 200, CALLS = 17000 };
  const double sd = zp * sqrt(2.0) * D;
  assert_true(NR / sd > 15);
  float z[NR * D], W[D * D];
  for (int i = 0; i < NR; i++)
    for (int j = 0; j < D; j++) z[i * D + j] = ((i % 8) >> j) & 1 ? 1.0f : -1.0f;
  bbvfl_rng r;
  os_rng(&r);
  bbvfl_err err = {0};
  double ss = 0;
  for (int c = 0; c < CALLS; c++) {
    if (bbvfl_dp_pca_encoder(z, NR, D, D, zp, &r, W, &err) != 0) fail_msg("%s", err.msg);
    double S[D][D] = {{0}};
    for (int p = 0; p < D; p++) {
      double w2 = 0;
      for (int j = 0; j < D; j++) w2 += (double)W[j * D + p] * W[j * D + p];
      double lam = NR / (BBVFL_DPPCA_KAPPA * BBVFL_DPPCA_KAPPA * w2);
      for (int j = 0; j < D; j++)
        for (int k = 0; k < D; k++) S[j][k] += lam * W[j * D + p] * W[k * D + p] / w2;
    }
    for (int j = 0; j < D; j++)
      for (int k = j; k < D; k++) {
        double e = S[j][k] - (j == k ? NR : 0);
        ss += e * e;
      }
  }
  chi2_check(ss / (sd * sd), (double)CALLS * D * (D + 1) / 2, "DP-PCA covariance noise");
  bbvfl_rng_wipe(&r);
}

/* ---- the exponential mechanism of the DP medians ---- */

/* The grids of dp/dpscale.h: centre 0 and +-10^(k/8), scale 10^(k/8), k = -48..48. */
#define GK 48
#define NPOS (2 * GK + 1)
static void grids(double *gc, double *gs) {
  for (int k = 0; k < NPOS; k++) gs[k] = pow(10.0, (k - GK) / 8.0);
  for (int k = 0; k < NPOS; k++) {
    gc[k] = -gs[NPOS - 1 - k];
    gc[NPOS + 1 + k] = gs[k];
  }
  gc[NPOS] = 0;
}

static size_t below(const double *v, size_t n, double c) {
  size_t b = 0;
  for (size_t i = 0; i < n; i++) b += v[i] < c;
  return b;
}

/* The exponential mechanism's distribution over the classes "j of the n values are below the
 * output" (j = 0..n), for grid g[m] and epsilon eps: a candidate c has utility
 * -|#{v < c} - n/2| of sensitivity 1, weight exp(eps u / 2); a class's probability is its
 * candidates' weight over the total. */
static void em_classes(const double *v, size_t n, const double *g, size_t m, double eps, double *p) {
  double tot = 0;
  for (size_t j = 0; j <= n; j++) p[j] = 0;
  for (size_t k = 0; k < m; k++) {
    size_t j = below(v, n, g[k]);
    double w = exp(-fabs((double)j - n / 2.0) * eps / 2);
    p[j] += w;
    tot += w;
  }
  for (size_t j = 0; j <= n; j++) p[j] /= tot;
}

/* The DP median alone (bbvfl_dp_centre, the whole eps) and the DP centre and scale
 * (bbvfl_dp_robust_scale, eps / 2 on each): the class frequencies of the outputs against
 * em_classes. For the scale, the class probabilities are conditional on the centre drawn (the
 * values are |x - centre|); their sum over the draws is the expectation of the counts
 * (Azuma-Hoeffding, freq_bound). The epsilon is what setup.c gives one column: the accountant's
 * pure scale_eps of a party split over its columns (here one column, scale_eps 2: a larger
 * epsilon than the default so that N stays small). */
static void test_dp_median_scale(void **st) {
  (void)st;
  const double scale_eps = 2.0;
  bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = 8, .beta = 0.2, .P = 1, .M = 1, .epochs = 1, .delta = 1e-5,
                         .rowdp = {.on = 1, .clip = 1, .noise = 1, .scale_eps = scale_eps, .encoder = 1, .pca_noise = 3}};
  check_row_accounting(&in, 1, 1 / (2.0 * 9)); /* the scaling term is pure scale_eps */
  const int ncols = 1;
  const double eps = scale_eps / ncols;
  double gc[2 * NPOS + 1], gs[NPOS];
  grids(gc, gs);
  enum { NX = 4, N = 40000 };
  const double x[NX] = {-4.5, -0.45, 0.45, 4.5};
  double p[NX + 1], pw[NX + 1], count[NX + 1] = {0};
  bbvfl_rng r;
  os_rng(&r);
  bbvfl_err err = {0};
  /* (a) the DP median alone */
  em_classes(x, NX, gc, 2 * NPOS + 1, eps, p);
  em_classes(x, NX, gc, 2 * NPOS + 1, 2 * eps, pw);
  for (int i = 0; i < N; i++) {
    double c;
    if (bbvfl_dp_centre(x, NX, eps, &r, &c, &err) != 0) fail_msg("%s", err.msg);
    count[below(x, NX, c)]++;
  }
  freq_check(count, p, NX + 1, N, pw, "DP median (bbvfl_dp_centre)");
  /* (b) centre and scale, eps / 2 each */
  double cc[NX + 1] = {0}, cs[NX + 1] = {0}, es[NX + 1] = {0}, esw[NX + 1] = {0};
  em_classes(x, NX, gc, 2 * NPOS + 1, eps / 2, p);
  em_classes(x, NX, gc, 2 * NPOS + 1, eps, pw);
  for (int i = 0; i < N; i++) {
    double c, sc, v[NX], q[NX + 1], qw[NX + 1];
    if (bbvfl_dp_robust_scale(x, NX, eps, &r, &c, &sc, &err) != 0) fail_msg("%s", err.msg);
    cc[below(x, NX, c)]++;
    for (int j = 0; j < NX; j++) v[j] = fabs(x[j] - c);
    em_classes(v, NX, gs, NPOS, eps / 2, q);
    em_classes(v, NX, gs, NPOS, eps, qw);
    for (int j = 0; j <= NX; j++) {
      es[j] += q[j];
      esw[j] += qw[j];
    }
    size_t kg = 0; /* the grid point drawn: sc = 1.4826 g */
    for (size_t k = 1; k < NPOS; k++)
      if (fabs(gs[k] - sc / 1.4826) < fabs(gs[kg] - sc / 1.4826)) kg = k;
    assert_true(fabs(gs[kg] * 1.4826 / sc - 1) < 1e-9);
    cs[below(v, NX, gs[kg])]++;
  }
  freq_check(cc, p, NX + 1, N, pw, "DP centre of the robust scaling");
  for (int j = 0; j <= NX; j++) {
    es[j] /= N;
    esw[j] /= N;
  }
  freq_check(cs, es, NX + 1, N, esw, "DP scale (median of |x - centre|)");
  bbvfl_rng_wipe(&r);
}

/* ---- randomized response ---- */

/* The accountant reports the labels at pure label_eps; randomized response at that epsilon keeps
 * a label with probability e^eps / (e^eps + K - 1) and otherwise picks one of the K - 1 others
 * uniformly. All true labels 0, N rows: the class counts against (keep, (1 - keep) / (K - 1), ...),
 * K = 2 and 3. */
static void test_rr_scale(void **st) {
  (void)st;
  bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = 8, .beta = 0.2, .P = 1, .M = 1, .epochs = 1, .delta = 1e-5,
                         .label_eps = 1.0};
  bbvfl_privacy out;
  bbvfl_err err = {0};
  if (bbvfl_privacy_compute(&in, &out, NULL, &err) != 0) fail_msg("%s", err.msg);
  const double eps = out.labels.epsilon;
  assert_true(eps == in.label_eps);
  enum { N = 100000 };
  int *y = malloc(N * sizeof *y);
  size_t *rows = malloc(N * sizeof *rows);
  assert_true(y && rows);
  for (size_t i = 0; i < N; i++) rows[i] = i;
  bbvfl_rng r;
  os_rng(&r);
  for (int K = 2; K <= 3; K++) {
    for (size_t i = 0; i < N; i++) y[i] = 0;
    if (bbvfl_rr_labels(y, rows, N, K, eps, &r, &err) != 0) fail_msg("%s", err.msg);
    double count[3] = {0}, p[3], pw[3];
    for (size_t i = 0; i < N; i++) {
      assert_true(y[i] >= 0 && y[i] < K);
      count[y[i]]++;
    }
    double keep = exp(eps) / (exp(eps) + K - 1), keepw = exp(2 * eps) / (exp(2 * eps) + K - 1);
    for (int k = 0; k < K; k++) {
      p[k] = k == 0 ? keep : (1 - keep) / (K - 1);
      pw[k] = k == 0 ? keepw : (1 - keepw) / (K - 1);
    }
    freq_check(count, p, K, N, pw, K == 2 ? "randomized response, 2 classes" : "randomized response, 3 classes");
  }
  bbvfl_rng_wipe(&r);
  free(y);
  free(rows);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_pbm_scale),       cmocka_unit_test(test_gaussian_scale),
                                     cmocka_unit_test(test_dpsgd_scale),     cmocka_unit_test(test_dppca_scale),
                                     cmocka_unit_test(test_dp_median_scale), cmocka_unit_test(test_rr_scale)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
