/* Exact RDP accounting for PBM (local and masked mode) and the Gaussian baseline.
 * See accountant.h for the contract and DESIGN.md "Privacy accounting" for the model. */
#include "dp/accountant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- alpha grid ---- */

/* 1.01 .. 1.09 step 0.01 (9 orders: the paper's settings have their optimum below 1.1), 1.1 ..
 * 10.9 step 0.1 (99), 11 .. 63 (53), 128, 256, 512, 1024: a constant table, so concurrent callers
 * need no initialisation. */
static const double GRID[BBVFL_ACCT_NGRID] = {
    1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.07, 1.08, 1.09,
    1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.1, 2.2,
    2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 2.9, 3.0, 3.1, 3.2, 3.3, 3.4,
    3.5, 3.6, 3.7, 3.8, 3.9, 4.0, 4.1, 4.2, 4.3, 4.4, 4.5, 4.6,
    4.7, 4.8, 4.9, 5.0, 5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 5.8,
    5.9, 6.0, 6.1, 6.2, 6.3, 6.4, 6.5, 6.6, 6.7, 6.8, 6.9, 7.0,
    7.1, 7.2, 7.3, 7.4, 7.5, 7.6, 7.7, 7.8, 7.9, 8.0, 8.1, 8.2,
    8.3, 8.4, 8.5, 8.6, 8.7, 8.8, 8.9, 9.0, 9.1, 9.2, 9.3, 9.4,
    9.5, 9.6, 9.7, 9.8, 9.9, 10.0, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6,
    10.7, 10.8, 10.9, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0,
    20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0,
    32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0,
    44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0,
    56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 128.0, 256.0, 512.0, 1024.0,
};

const double *bbvfl_acct_grid(void) { return GRID; }

/* ---- parameter checks ---- */

static int check_common(int P, int M, int epochs, double delta, bbvfl_err *err) {
  if (P < 1) return bbvfl_fail(err, BBVFL_E_ARG, "P (embedding dimension) must be >= 1, got %d", P);
  if (M < 1) return bbvfl_fail(err, BBVFL_E_ARG, "M (number of clients) must be >= 1, got %d", M);
  if (epochs < 1) return bbvfl_fail(err, BBVFL_E_ARG, "epochs must be >= 1, got %d", epochs);
  if (!(delta > 0 && delta < 1))
    return bbvfl_fail(err, BBVFL_E_ARG, "delta must be in (0, 1), got %g", delta);
  return 0;
}

static int check_b(int b, bbvfl_err *err) {
  if (b < 1 || b > 255)
    return bbvfl_fail(err, BBVFL_E_ARG, "b (binomial trials) must be in 1..255, got %d", b);
  return 0;
}

static int check_beta(double beta, bbvfl_err *err) {
  if (!(beta > 0 && beta < 0.5))
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "beta must be in (0, 0.5) (p = 1/2 +- beta must stay inside (0, 1)), got %g", beta);
  return 0;
}

static int check_in(const bbvfl_pbm_acct_in *in, bbvfl_err *err) {
  if (!in) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: no input");
  if (check_b(in->b, err) || check_beta(in->beta, err)) return -1;
  return check_common(in->P, in->M, in->epochs, in->delta, err);
}

/* ---- per-coordinate PBM divergence ----
 *
 * Bernoulli(p) against Bernoulli(q), p = 1/2 + beta, q = 1/2 - beta, order a > 1:
 *   S = p^a q^(1-a) + q^a p^(1-a) = p e^x + q e^-x,   x = (a-1) ln(p/q) > 0,
 *   S - 1 = expm1(x) * (p - q e^-x) = expm1(x) * (2 beta - q expm1(-x)),
 * a product of two positive terms: no cancellation as beta -> 0. For large x (a up to 1024)
 * e^x overflows, so there ln S = ln p + x + log1p((q/p) e^-2x). Binomial(b, .) is b independent
 * Bernoullis, so its divergence is b times the Bernoulli one. */
static double bern_log_s(double beta, double alpha) {
  double p = 0.5 + beta, q = 0.5 - beta;
  double x = (alpha - 1.0) * (log1p(2 * beta) - log1p(-2 * beta)); /* ln(p/q) = ln((1+2b)/(1-2b)) */
  if (x < 30.0) return log1p(expm1(x) * (2 * beta - q * expm1(-x)));
  return log(p) + x + log1p((q / p) * exp(-2 * x));
}

double bbvfl_acct_pbm_coord_rdp(int b, double beta, double alpha) {
  if (beta <= 0) return 0.0;
  if (beta >= 0.5 || alpha <= 1) return INFINITY;
  return (double)b * bern_log_s(beta, alpha) / (alpha - 1.0);
}

/* ---- conversions ---- */

double bbvfl_acct_rdp_to_eps(const double *alpha, const double *rdp, size_t n, double delta, int tight,
                             double *alpha_opt, int *at_edge) {
  double best = INFINITY, best_a = n ? alpha[0] : 0;
  size_t best_i = 0;
  for (size_t i = 0; i < n; i++) {
    double a = alpha[i], e;
    if (tight) e = rdp[i] + log1p(-1.0 / a) - (log(delta) + log(a)) / (a - 1.0);
    else e = rdp[i] + log(1.0 / delta) / (a - 1.0);
    if (e < best) {
      best = e;
      best_a = a;
      best_i = i;
    }
  }
  if (best < 0) best = 0;
  if (alpha_opt) *alpha_opt = best_a;
  if (at_edge) *at_edge = n > 0 && (best_i == 0 || best_i == n - 1);
  return best;
}

void bbvfl_acct_curve_to_out(const bbvfl_acct_curve *c, double delta, bbvfl_acct_out *out) {
  int e1 = 0, e2 = 0;
  out->epsilon_feature = bbvfl_acct_rdp_to_eps(c->alpha, c->feature, BBVFL_ACCT_NGRID, delta, 1,
                                               &out->alpha_feature, &e1);
  out->epsilon_sample = bbvfl_acct_rdp_to_eps(c->alpha, c->sample, BBVFL_ACCT_NGRID, delta, 1,
                                              &out->alpha_sample, &e2);
  out->epsilon_feature_std = bbvfl_acct_rdp_to_eps(c->alpha, c->feature, BBVFL_ACCT_NGRID, delta, 0, NULL, NULL);
  out->epsilon_sample_std = bbvfl_acct_rdp_to_eps(c->alpha, c->sample, BBVFL_ACCT_NGRID, delta, 0, NULL, NULL);
  out->at_grid_edge = e1 || e2;
}

/* ---- PBM, local mode ---- */

int bbvfl_acct_pbm_curve(const bbvfl_pbm_acct_in *in, bbvfl_acct_curve *curve, bbvfl_err *err) {
  if (check_in(in, err)) return -1;
  if (!curve) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: no output");
  const double *g = bbvfl_acct_grid();
  for (size_t i = 0; i < BBVFL_ACCT_NGRID; i++) {
    double c = bbvfl_acct_pbm_coord_rdp(in->b, in->beta, g[i]);
    curve->alpha[i] = g[i];
    /* one release = P coordinates; each row released once per epoch, sequential across epochs.
     * ASSUMPTION (the papers', not this pipeline's): rows compose in parallel, i.e. one row's
     * releases depend on that row only. Here each client's network and feature scaling are
     * fitted on all its rows, so this is the accounting of one row's releases, not an end-to-end
     * bound (BBVFL_ACCT_SCOPE, docs/PRIVACY.md). */
    curve->feature[i] = (double)in->epochs * in->P * c;
    curve->sample[i] = (double)in->epochs * in->M * in->P * c;
  }
  return 0;
}

int bbvfl_acct_pbm(const bbvfl_pbm_acct_in *in, bbvfl_acct_out *out, bbvfl_err *err) {
  bbvfl_acct_curve c;
  if (bbvfl_acct_pbm_curve(in, &c, err)) return -1;
  if (!out) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: no output");
  bbvfl_acct_curve_to_out(&c, in->delta, out);
  return 0;
}

/* ---- Gaussian baseline ----
 * A "release" is one client's P-dimensional embedding of one row, clipped to L2 norm c, plus
 * N(0, sigma^2 I). Neighbouring inputs replace that embedding by another one of norm <= c
 * (replace-one), so the L2 sensitivity is 2c and the RDP of one release is
 * alpha (2c)^2 / (2 sigma^2) (Mironov 2017). Feature level: one client's release per epoch;
 * sample level: the M clients' releases of the row per epoch (local mode: all are public). */
int bbvfl_acct_gaussian_curve(double clip, double sigma, int M, int epochs, bbvfl_acct_curve *curve,
                              bbvfl_err *err) {
  if (!(clip > 0 && isfinite(clip))) return bbvfl_fail(err, BBVFL_E_ARG, "clip norm must be > 0, got %g", clip);
  if (!(sigma > 0 && isfinite(sigma))) return bbvfl_fail(err, BBVFL_E_ARG, "sigma must be > 0, got %g", sigma);
  if (check_common(1, M, epochs, 0.5, err)) return -1;
  if (!curve) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: no output");
  const double *g = bbvfl_acct_grid();
  double s2 = (2 * clip) * (2 * clip) / (2 * sigma * sigma);
  for (size_t i = 0; i < BBVFL_ACCT_NGRID; i++) {
    curve->alpha[i] = g[i];
    curve->feature[i] = (double)epochs * g[i] * s2;
    curve->sample[i] = (double)epochs * M * g[i] * s2;
  }
  return 0;
}

int bbvfl_acct_gaussian(double clip, double sigma, int M, int epochs, double delta, bbvfl_acct_out *out,
                        bbvfl_err *err) {
  bbvfl_acct_curve c;
  if (check_common(1, M, epochs, delta, err)) return -1;
  if (bbvfl_acct_gaussian_curve(clip, sigma, M, epochs, &c, err)) return -1;
  if (!out) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: no output");
  bbvfl_acct_curve_to_out(&c, delta, out);
  return 0;
}

/* ---- calibration ---- */

static double eps_at(const bbvfl_pbm_acct_in *in, bbvfl_acct_level level) {
  const double *g = bbvfl_acct_grid();
  double r[BBVFL_ACCT_NGRID];
  double mult = (double)in->epochs * in->P * (level == BBVFL_ACCT_SAMPLE ? in->M : 1);
  for (size_t i = 0; i < BBVFL_ACCT_NGRID; i++) r[i] = mult * bbvfl_acct_pbm_coord_rdp(in->b, in->beta, g[i]);
  return bbvfl_acct_rdp_to_eps(g, r, BBVFL_ACCT_NGRID, in->delta, 1, NULL, NULL);
}

static const char *level_name(bbvfl_acct_level l) { return l == BBVFL_ACCT_SAMPLE ? "sample" : "feature"; }

int bbvfl_acct_solve_beta(const bbvfl_pbm_acct_in *in, bbvfl_acct_level level, double target_eps,
                          double *beta, bbvfl_err *err) {
  if (!in || !beta) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: missing argument");
  if (check_b(in->b, err) || check_common(in->P, in->M, in->epochs, in->delta, err)) return -1;
  if (!(target_eps > 0 && isfinite(target_eps)))
    return bbvfl_fail(err, BBVFL_E_ARG, "target epsilon must be a finite number > 0, got %g", target_eps);
  bbvfl_pbm_acct_in t = *in;
  /* epsilon is increasing in beta; at beta -> 0 only the conversion's delta term is left */
  double lo = 1e-12, hi = 0.5 - 1e-12;
  t.beta = lo;
  double elo = eps_at(&t, level);
  if (elo > target_eps)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "target epsilon %g is unreachable at delta %g: even beta -> 0 gives %s-level "
                      "epsilon %.4g (the delta term of the conversion); raise epsilon or delta",
                      target_eps, in->delta, level_name(level), elo);
  t.beta = hi;
  if (eps_at(&t, level) <= target_eps) {
    *beta = hi;
    return 0;
  }
  for (int it = 0; it < 200 && hi - lo > 1e-9 * hi; it++) {
    double mid = 0.5 * (lo + hi);
    t.beta = mid;
    if (eps_at(&t, level) <= target_eps) lo = mid;
    else hi = mid;
  }
  *beta = lo; /* the largest beta found whose epsilon stays within the target */
  return 0;
}

int bbvfl_acct_solve_b(const bbvfl_pbm_acct_in *in, bbvfl_acct_level level, double target_eps, int *b,
                       bbvfl_err *err) {
  if (!in || !b) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: missing argument");
  if (check_beta(in->beta, err) || check_common(in->P, in->M, in->epochs, in->delta, err)) return -1;
  if (!(target_eps > 0 && isfinite(target_eps)))
    return bbvfl_fail(err, BBVFL_E_ARG, "target epsilon must be a finite number > 0, got %g", target_eps);
  bbvfl_pbm_acct_in t = *in;
  t.b = 1;
  double e1 = eps_at(&t, level);
  if (e1 > target_eps)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "target epsilon %g is unreachable with beta %g: even b = 1 gives %s-level epsilon "
                      "%.4g; lower beta or raise the target",
                      target_eps, in->beta, level_name(level), e1);
  /* epsilon is increasing in b: binary search for the largest b in 1..255 within the target */
  int lo = 1, hi = 255;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    t.b = mid;
    if (eps_at(&t, level) <= target_eps) lo = mid;
    else hi = mid - 1;
  }
  *b = lo;
  return 0;
}

/* ---- masked mode ---- */

static double lse2(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  double m = a > b ? a : b;
  return m + log1p(exp(-fabs(a - b)));
}

/* log pmf of Binomial(n, p) into out[0..n] (0 < p < 1). */
static void log_binom(int n, double p, double *out) {
  double lp = log(p), lq = log1p(-p);
  double lgn = lgamma(n + 1.0);
  for (int k = 0; k <= n; k++) out[k] = lgn - lgamma(k + 1.0) - lgamma(n - k + 1.0) + k * lp + (n - k) * lq;
}

/* out[0..na+nb] = log of the convolution of exp(a[0..na]) and exp(b[0..nb]); out must not alias. */
static void log_conv(const double *a, int na, const double *b, int nb, double *out) {
  for (int k = 0; k <= na + nb; k++) {
    int j0 = k - nb > 0 ? k - nb : 0, j1 = k < na ? k : na;
    double m = -INFINITY;
    for (int j = j0; j <= j1; j++) {
      double v = a[j] + b[k - j];
      if (v > m) m = v;
    }
    if (m == -INFINITY) {
      out[k] = -INFINITY;
      continue;
    }
    double s = 0;
    for (int j = j0; j <= j1; j++) s += exp(a[j] + b[k - j] - m);
    out[k] = m + log(s);
  }
}

/* Renyi divergence D_a(P || Q) of two log pmfs on 0..n (same support). */
static double log_renyi(const double *lp, const double *lq, int n, double a) {
  double acc = -INFINITY;
  for (int k = 0; k <= n; k++) acc = lse2(acc, a * lp[k] + (1 - a) * lq[k]);
  double d = acc / (a - 1);
  return d > 0 ? d : 0; /* rounding can leave -1e-17 for identical distributions */
}

#define MASK_MAX_M 64
#define MASK_MAX_TOTAL 4096
#define MASK_MAX_WORK 4.0e8

int bbvfl_acct_pbm_masked_feature(const bbvfl_pbm_acct_in *in, bbvfl_acct_out *out, double *rdp_feature,
                                  bbvfl_err *err) {
  if (check_in(in, err)) return -1;
  if (!out) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: no output");
  int M = in->M, b = in->b;
  if (in->colluding < 0 || in->colluding > M - 1)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "masked accounting: the colluding participants must number 0..M-1 = %d (the changed "
                      "client is not one of them), got %d",
                      M - 1, in->colluding);
  if (M > MASK_MAX_M || M * b > MASK_MAX_TOTAL)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "masked accounting is exact by convolution and limited to M <= %d and M*b <= %d "
                      "(got M=%d, M*b=%d)", MASK_MAX_M, MASK_MAX_TOTAL, M, M * b);
  /* The others' input levels, as fractions of C: corners, half-way points and the centre; for
   * large M only corners and centre. */
  static const double LV5[5] = {-1.0, -0.5, 0.0, 0.5, 1.0};
  static const double LV3[3] = {-1.0, 0.0, 1.0};
  const double *lev = LV5;
  int nlev = 5;
  double tot = (double)M * b + 1;
  /* number of multisets of size M-1 over nlev levels = C(M-1+nlev-1, nlev-1) */
  double nconf = (double)M * (M + 1) * (M + 2) * (M + 3) / 24.0;
  if (nconf * 3 * tot * tot > MASK_MAX_WORK) {
    lev = LV3;
    nlev = 3;
    nconf = (double)M * (M + 1) / 2;
    if (nconf * 3 * tot * tot > MASK_MAX_WORK)
      return bbvfl_fail(err, BBVFL_E_ARG,
                        "masked accounting for M=%d, b=%d needs too much work for an exact search; "
                        "use fewer clients or a smaller b", M, b);
  }

  size_t cap = (size_t)M * b + 1;
  double *x_hi = malloc((size_t)(b + 1) * sizeof *x_hi), *x_lo = malloc((size_t)(b + 1) * sizeof *x_lo);
  double *y = malloc(cap * sizeof *y), *tmp = malloc(cap * sizeof *tmp), *bin = malloc(cap * sizeof *bin);
  double *sp = malloc(cap * sizeof *sp), *sq = malloc(cap * sizeof *sq);
  if (!x_hi || !x_lo || !y || !tmp || !bin || !sp || !sq) {
    free(x_hi), free(x_lo), free(y), free(tmp), free(bin), free(sp), free(sq);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "masked accounting: out of memory");
  }
  const double *g = bbvfl_acct_grid();
  double worst[BBVFL_ACCT_NGRID];
  for (size_t i = 0; i < BBVFL_ACCT_NGRID; i++) worst[i] = 0;
  log_binom(b, 0.5 + in->beta, x_hi); /* the changed client at +C */
  log_binom(b, 0.5 - in->beta, x_lo); /* ... and at -C */

  /* Every multiset of `others` levels (the clients the observer does not know: M-1 minus the
   * colluding participants, who subtract their own outputs from the sum), as counts d[0..nlev-2]
   * (the last level takes the rest), enumerated by an odometer that carries whenever the counts
   * exceed `others`. others = 0 leaves the changed client alone: the local bound. */
  int others = M - 1 - in->colluding, d[5] = {0, 0, 0, 0, 0};
  for (;;) {
    int used = 0;
    for (int l = 0; l < nlev - 1; l++) used += d[l];
    /* distribution of the others' sum: the clients at one level share a Binomial(n*b, p) */
    int ny = 0;
    y[0] = 0.0;
    for (int l = 0; l < nlev; l++) {
      int cnt = l < nlev - 1 ? d[l] : others - used;
      if (!cnt) continue;
      int n = cnt * b;
      log_binom(n, 0.5 + in->beta * lev[l], bin);
      log_conv(y, ny, bin, n, tmp);
      ny += n;
      memcpy(y, tmp, (size_t)(ny + 1) * sizeof *y);
    }
    log_conv(x_hi, b, y, ny, sp);
    log_conv(x_lo, b, y, ny, sq);
    /* One direction suffices: D(lo+Y || hi+Y) equals D(hi+Y' || lo+Y') for the mirrored
     * configuration Y' (k -> M*b-k), enumerated too because the levels are symmetric. */
    for (size_t i = 0; i < BBVFL_ACCT_NGRID; i++) {
      double dv = log_renyi(sp, sq, ny + b, g[i]);
      if (dv > worst[i]) worst[i] = dv;
    }
    int i = 0;
    for (; i < nlev - 1; i++) {
      d[i]++;
      int s = 0;
      for (int l = 0; l < nlev - 1; l++) s += d[l];
      if (s <= others) break;
      d[i] = 0;
    }
    if (i == nlev - 1) break;
  }
  free(x_hi), free(x_lo), free(y), free(tmp), free(bin), free(sp), free(sq);

  bbvfl_acct_curve c;
  if (bbvfl_acct_pbm_curve(in, &c, err)) return -1;
  for (size_t i = 0; i < BBVFL_ACCT_NGRID; i++) {
    c.feature[i] = (double)in->epochs * in->P * worst[i];
    if (rdp_feature) rdp_feature[i] = c.feature[i];
  }
  bbvfl_acct_curve_to_out(&c, in->delta, out);
  return 0;
}

/* ---- exact privacy loss distribution (see accountant.h) ---- */

#define PLD_MAX_TRIALS 1e11
#define PLD_TAIL 800.0 /* log-probability below the mode's that is dropped */

static double log_binom_pmf(double N, double K, double lp, double lq, double lgn) {
  return lgn - lgamma(K + 1) - lgamma(N - K + 1) + K * lp + (N - K) * lq;
}

/* The window [*lo, *hi] of K whose log-probability is within PLD_TAIL of the mode's. */
static void pld_window(double N, double p, double lp, double lq, double lgn, double *lo, double *hi) {
  double mode = floor((N + 1) * p);
  if (mode > N) mode = N;
  double top = log_binom_pmf(N, mode, lp, lq, lgn);
  /* the pmf falls monotonically away from the mode: step out in growing strides, then bisect */
  for (int side = 0; side < 2; side++) {
    double in = mode, step = 1;
    for (;;) {
      double k = side ? in + step : in - step;
      if (k < 0 || k > N) {
        k = side ? N : 0;
        if (log_binom_pmf(N, k, lp, lq, lgn) >= top - PLD_TAIL) {
          in = k;
          break;
        }
      }
      if (log_binom_pmf(N, k, lp, lq, lgn) < top - PLD_TAIL) {
        double out = k;
        while (fabs(out - in) > 1) {
          double mid = floor((in + out) / 2);
          if (log_binom_pmf(N, mid, lp, lq, lgn) >= top - PLD_TAIL) in = mid;
          else out = mid;
        }
        break;
      }
      in = k;
      step *= 2;
    }
    if (side) *hi = in;
    else *lo = in;
  }
}

static int pld_check(int b, double beta, uint64_t n_coords, bbvfl_err *err) {
  if (check_b(b, err) || check_beta(beta, err)) return -1;
  if (n_coords < 1 || (double)n_coords * b > PLD_MAX_TRIALS)
    return bbvfl_fail(err, BBVFL_E_ARG, "PLD accounting needs 1 <= coordinates x b <= %.0e, got %.0f x %d",
                      PLD_MAX_TRIALS, (double)n_coords, b);
  return 0;
}

/* delta(eps) over the window: sum over K with loss (2K - N) lambda > eps of P(K) (1 - e^(eps - loss)). */
static double pld_delta_window(double N, double lo, double hi, double lp, double lq, double lgn, double lambda,
                               double eps) {
  double kstar = floor((eps / lambda + N) / 2) + 1; /* the smallest K with loss > eps */
  if (kstar < lo) kstar = lo;
  double d = 0;
  for (double k = hi; k >= kstar; k--) {
    double loss = (2 * k - N) * lambda;
    if (loss <= eps) continue;
    d += exp(log_binom_pmf(N, k, lp, lq, lgn)) * -expm1(eps - loss);
  }
  return d;
}

double bbvfl_acct_pbm_pld_delta(int b, double beta, uint64_t n_coords, double eps) {
  if (pld_check(b, beta, n_coords, NULL) || !(eps >= 0)) return NAN;
  double N = (double)n_coords * b, p = 0.5 + beta, lp = log(p), lq = log(0.5 - beta), lgn = lgamma(N + 1);
  double lo, hi;
  pld_window(N, p, lp, lq, lgn, &lo, &hi);
  return pld_delta_window(N, lo, hi, lp, lq, lgn, lp - lq, eps);
}

int bbvfl_acct_pbm_pld_eps(int b, double beta, uint64_t n_coords, double delta, double *eps, bbvfl_err *err) {
  if (pld_check(b, beta, n_coords, err)) return -1;
  if (!(delta > 0 && delta < 1)) return bbvfl_fail(err, BBVFL_E_ARG, "delta must be in (0, 1), got %g", delta);
  if (!eps) return bbvfl_fail(err, BBVFL_E_ARG, "accountant: no output");
  double N = (double)n_coords * b, p = 0.5 + beta, lp = log(p), lq = log(0.5 - beta), lgn = lgamma(N + 1);
  double lambda = lp - lq, lo, hi;
  pld_window(N, p, lp, lq, lgn, &lo, &hi);
  double a = 0, z = N * lambda; /* delta(N lambda) = 0: no outcome has a larger loss */
  if (pld_delta_window(N, lo, hi, lp, lq, lgn, lambda, 0) <= delta) {
    *eps = 0;
    return 0;
  }
  for (int i = 0; i < 200 && z - a > 1e-12 * z; i++) {
    double m = (a + z) / 2;
    if (pld_delta_window(N, lo, hi, lp, lq, lgn, lambda, m) <= delta) z = m;
    else a = m;
  }
  *eps = z;
  return 0;
}
