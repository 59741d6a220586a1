/* Tests for the exact PBM / Gaussian RDP accountant (client/dp/accountant.h).
 *
 * The closed form is checked against an independent computation done here: the Renyi divergence
 * by direct summation over the b+1 outcomes of the two binomials (pmfs via lgamma, sum in the
 * log domain), and the masked-mode worst case against a finer search done here by plain
 * linear-domain convolution. The paper's default command is pinned to values computed once by
 * tests/reference/pbm_rdp.py (exact fractions + 60-digit mpmath). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_skip.h"

#include "dp/accountant.h"

/* ---- independent reference: direct summation ---- */

static double ref_log_binom_pmf(int n, int k, double p) {
  return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) + k * log(p) + (n - k) * log(1 - p);
}

/* D_alpha(Bin(b,p) || Bin(b,q)) = 1/(alpha-1) ln sum_k P_k^alpha Q_k^(1-alpha) */
static double ref_binom_renyi(int b, double p, double q, double alpha) {
  double terms[1024], m = -INFINITY;
  for (int k = 0; k <= b; k++) {
    terms[k] = alpha * ref_log_binom_pmf(b, k, p) + (1 - alpha) * ref_log_binom_pmf(b, k, q);
    if (terms[k] > m) m = terms[k];
  }
  double s = 0;
  for (int k = 0; k <= b; k++) s += exp(terms[k] - m);
  return (m + log(s)) / (alpha - 1);
}

static void close_rel(double got, double want, double rel, double abs_tol) {
  double tol = rel * fabs(want) + abs_tol;
  if (!(fabs(got - want) <= tol)) fail_msg("got %.17g, want %.17g (tolerance %.3g)", got, want, tol);
}

static void test_grid(void **state) {
  (void)state;
  const double *g = bbvfl_acct_grid();
  assert_true(fabs(g[0] - 1.01) < 1e-12 && fabs(g[8] - 1.09) < 1e-12);
  assert_true(fabs(g[9] - 1.1) < 1e-12);
  assert_true(fabs(g[107] - 10.9) < 1e-12);
  assert_true(g[108] == 11.0 && g[160] == 63.0);
  assert_true(g[161] == 128 && g[162] == 256 && g[163] == 512 && g[164] == 1024);
  for (int i = 1; i < BBVFL_ACCT_NGRID; i++) assert_true(g[i] > g[i - 1]);
  for (int i = 1; i < BBVFL_ACCT_NGRID; i++) assert_true(g[i] > g[i - 1]);
}

static void test_closed_form_vs_direct_sum(void **state) {
  (void)state;
  static const int B[] = {1, 2, 3, 4, 8, 16, 31, 64, 255};
  static const double BETA[] = {0.001, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.45, 0.49};
  static const double A[] = {1.1, 1.5, 2, 3, 5.5, 10, 17, 63, 128, 512, 1024};
  int n = 0;
  for (size_t i = 0; i < sizeof B / sizeof B[0]; i++)
    for (size_t j = 0; j < sizeof BETA / sizeof BETA[0]; j++)
      for (size_t k = 0; k < sizeof A / sizeof A[0]; k++) {
        double want = ref_binom_renyi(B[i], 0.5 + BETA[j], 0.5 - BETA[j], A[k]);
        double got = bbvfl_acct_pbm_coord_rdp(B[i], BETA[j], A[k]);
        /* the direct sum of near-1 terms loses ~1e-16/D relative accuracy for tiny D */
        close_rel(got, want, 1e-9, 1e-14);
        assert_true(got > 0);
        n++;
      }
  assert_int_equal(n, 990);
  /* Bernoulli sanity: b = 1, alpha = 2: ln(p^2/q + q^2/p) */
  double p = 0.7, q = 0.3;
  close_rel(bbvfl_acct_pbm_coord_rdp(1, 0.2, 2.0), log(p * p / q + q * q / p), 1e-14, 0);
}

static void test_monotone(void **state) {
  (void)state;
  /* RDP is non-decreasing in alpha, increasing in beta and linear in b */
  for (double beta = 0.02; beta < 0.5; beta += 0.04) {
    double prev = 0;
    for (double a = 1.1; a < 1100; a *= 1.3) {
      double r = bbvfl_acct_pbm_coord_rdp(16, beta, a);
      assert_true(r >= prev);
      prev = r;
    }
    assert_true(bbvfl_acct_pbm_coord_rdp(16, beta + 0.01, 4) > bbvfl_acct_pbm_coord_rdp(16, beta, 4));
    close_rel(bbvfl_acct_pbm_coord_rdp(32, beta, 4), 2 * bbvfl_acct_pbm_coord_rdp(16, beta, 4), 1e-13, 0);
  }
}

/* `bbvfl privacy --b 16 --beta 0.2 --P 16 --M 5 --epochs 30 --delta 1e-5`.
 * Values printed by: python3 tests/reference/pbm_rdp.py --b 16 --beta 0.2 --P 16 --M 5 --epochs 30
 * --delta 1e-5 --masked (exact rational binomial pmfs, direct summation, mpmath at 60 digits):
 *   feature: eps_tight=2923.1646037228599 alpha=1.07 eps_std=2926.8580745293209
 *   sample: eps_tight=13738.719758754085 alpha=1.03 eps_std=13743.241168861698
 * (before the grid reached below 1.1 the optimum sat at its low end: 2940.88 and 14257.30)
 *   coord rdp alpha=2: 9.0623275987328232
 *   coord rdp alpha=16: 13.176312492664786
 *   coord rdp alpha=1024: 13.551187272448415 */
static void test_pinned_paper_default(void **state) {
  (void)state;
  bbvfl_pbm_acct_in in = {16, 0.2, 16, 5, 30, 1e-5, 0};
  bbvfl_acct_out out;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_acct_pbm(&in, &out, &err), 0);
  close_rel(out.epsilon_feature, 2923.1646037228599, 1e-10, 0);
  close_rel(out.epsilon_feature_std, 2926.8580745293209, 1e-10, 0);
  close_rel(out.epsilon_sample, 13738.719758754085, 1e-10, 0);
  close_rel(out.epsilon_sample_std, 13743.241168861698, 1e-10, 0);
  close_rel(out.alpha_feature, 1.07, 1e-12, 0);
  close_rel(out.alpha_sample, 1.03, 1e-12, 0);
  assert_int_equal(out.at_grid_edge, 0); /* the optimum is inside the grid now */
  close_rel(bbvfl_acct_pbm_coord_rdp(16, 0.2, 2), 9.0623275987328232, 1e-12, 0);
  close_rel(bbvfl_acct_pbm_coord_rdp(16, 0.2, 16), 13.176312492664786, 1e-12, 0);
  close_rel(bbvfl_acct_pbm_coord_rdp(16, 0.2, 1024), 13.551187272448415, 1e-12, 0);

  bbvfl_acct_curve c;
  assert_int_equal(bbvfl_acct_pbm_curve(&in, &c, &err), 0);
  for (int i = 0; i < BBVFL_ACCT_NGRID; i++) {
    double coord = ref_binom_renyi(16, 0.7, 0.3, c.alpha[i]);
    close_rel(c.feature[i], 30.0 * 16 * coord, 1e-10, 0);
    close_rel(c.sample[i], 30.0 * 5 * 16 * coord, 1e-10, 0);
  }
}

/* Conversions against the analytic Gaussian optimum: for RDP rho*alpha the standard conversion
 * rho*a + ln(1/delta)/(a-1) is minimised at a* = 1 + sqrt(ln(1/delta)/rho) with value
 * rho + 2 sqrt(rho ln(1/delta)). Choose rho so that a* = 11 sits on the grid. */
static void test_conversions(void **state) {
  (void)state;
  const double *g = bbvfl_acct_grid();
  double delta = 1e-5, L = log(1 / delta), rho = L / 100.0, r[BBVFL_ACCT_NGRID], a_opt;
  for (int i = 0; i < BBVFL_ACCT_NGRID; i++) r[i] = rho * g[i];
  int edge = -1;
  double e = bbvfl_acct_rdp_to_eps(g, r, BBVFL_ACCT_NGRID, delta, 0, &a_opt, &edge);
  close_rel(e, rho + 2 * sqrt(rho * L), 1e-12, 0);
  assert_true(a_opt == 11.0);
  assert_int_equal(edge, 0);
  /* tighter conversion: never above the standard one, and equal to its formula at its optimum */
  double et = bbvfl_acct_rdp_to_eps(g, r, BBVFL_ACCT_NGRID, delta, 1, &a_opt, &edge);
  assert_true(et < e);
  close_rel(et, rho * a_opt + log1p(-1 / a_opt) - (log(delta) + log(a_opt)) / (a_opt - 1), 1e-12, 0);
  for (int i = 0; i < BBVFL_ACCT_NGRID; i++)
    assert_true(et <= r[i] + log1p(-1 / g[i]) - (log(delta) + log(g[i])) / (g[i] - 1) + 1e-12);
  /* edges: a huge curve prefers alpha 1.01; a flat zero curve prefers alpha 1024 */
  for (int i = 0; i < BBVFL_ACCT_NGRID; i++) r[i] = 1e6 * g[i];
  bbvfl_acct_rdp_to_eps(g, r, BBVFL_ACCT_NGRID, delta, 1, &a_opt, &edge);
  assert_true(fabs(a_opt - 1.01) < 1e-12 && edge == 1);
  for (int i = 0; i < BBVFL_ACCT_NGRID; i++) r[i] = 0;
  e = bbvfl_acct_rdp_to_eps(g, r, BBVFL_ACCT_NGRID, delta, 0, &a_opt, &edge);
  assert_true(a_opt == 1024 && edge == 1);
  close_rel(e, L / 1023, 1e-12, 0);
}

static void test_gaussian(void **state) {
  (void)state;
  bbvfl_acct_curve c;
  bbvfl_acct_out o;
  bbvfl_err err = {0};
  double clip = 1.5, sigma = 4.0;
  assert_int_equal(bbvfl_acct_gaussian_curve(clip, sigma, 5, 30, &c, &err), 0);
  for (int i = 0; i < BBVFL_ACCT_NGRID; i++) {
    double per = c.alpha[i] * (2 * clip) * (2 * clip) / (2 * sigma * sigma);
    close_rel(c.feature[i], 30 * per, 1e-13, 0);
    close_rel(c.sample[i], 5 * 30 * per, 1e-13, 0);
  }
  assert_int_equal(bbvfl_acct_gaussian(clip, sigma, 5, 30, 1e-5, &o, &err), 0);
  /* feature rho = 30 * 9 / 32 = 8.4375: standard conversion near rho + 2 sqrt(rho ln 1e5) */
  double rho = 30 * 9.0 / 32.0, cont = rho + 2 * sqrt(rho * log(1e5));
  assert_true(o.epsilon_feature_std >= cont - 1e-9 && o.epsilon_feature_std < cont * 1.01);
  assert_true(o.epsilon_feature < o.epsilon_feature_std);
  assert_true(o.epsilon_sample > o.epsilon_feature);
  assert_int_equal(bbvfl_acct_gaussian(0, sigma, 5, 30, 1e-5, &o, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  assert_int_equal(bbvfl_acct_gaussian(clip, -1, 5, 30, 1e-5, &o, &err), -1);
  assert_non_null(strstr(err.msg, "sigma"));
}

static void test_calibration(void **state) {
  (void)state;
  bbvfl_err err = {0};
  static const double TARGET[] = {1, 8, 50, 300, 3000};
  for (int lv = 0; lv < 2; lv++)
    for (size_t i = 0; i < sizeof TARGET / sizeof TARGET[0]; i++) {
      bbvfl_pbm_acct_in in = {16, 0, 16, 5, 30, 1e-5, 0};
      double beta = -1;
      assert_int_equal(bbvfl_acct_solve_beta(&in, (bbvfl_acct_level)lv, TARGET[i], &beta, &err), 0);
      assert_true(beta > 0 && beta < 0.5);
      in.beta = beta;
      bbvfl_acct_out o;
      assert_int_equal(bbvfl_acct_pbm(&in, &o, &err), 0);
      double e = lv ? o.epsilon_sample : o.epsilon_feature;
      assert_true(e <= TARGET[i] * (1 + 1e-12));
      close_rel(e, TARGET[i], 1e-6, 0);
    }
  /* the paper's beta = 0.2, b = 16 gives ~2923: asking for exactly that returns b = 16 */
  bbvfl_pbm_acct_in in = {0, 0.2, 16, 5, 30, 1e-5, 0};
  int b = 0;
  assert_int_equal(bbvfl_acct_solve_b(&in, BBVFL_ACCT_FEATURE, 2923.1646037228599 * (1 + 1e-9), &b, &err), 0);
  assert_int_equal(b, 16);
  assert_int_equal(bbvfl_acct_solve_b(&in, BBVFL_ACCT_FEATURE, 2923.16 * (1 - 1e-6), &b, &err), 0);
  assert_int_equal(b, 15);
  /* b is the largest meeting the target: b + 1 exceeds it */
  assert_int_equal(bbvfl_acct_solve_b(&in, BBVFL_ACCT_SAMPLE, 5000, &b, &err), 0);
  bbvfl_acct_out o1, o2;
  in.b = b;
  bbvfl_acct_pbm(&in, &o1, &err);
  in.b = b + 1;
  bbvfl_acct_pbm(&in, &o2, &err);
  assert_true(o1.epsilon_sample <= 5000 && o2.epsilon_sample > 5000);
  /* very large target: capped at 255 */
  assert_int_equal(bbvfl_acct_solve_b(&in, BBVFL_ACCT_FEATURE, 1e9, &b, &err), 0);
  assert_int_equal(b, 255);

  /* unreachable targets are errors that say why */
  err = (bbvfl_err){0};
  assert_int_equal(bbvfl_acct_solve_b(&in, BBVFL_ACCT_FEATURE, 10, &b, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  assert_non_null(strstr(err.msg, "b = 1"));
  bbvfl_pbm_acct_in in2 = {16, 0, 16, 5, 30, 1e-5, 0};
  double beta;
  err = (bbvfl_err){0};
  assert_int_equal(bbvfl_acct_solve_beta(&in2, BBVFL_ACCT_FEATURE, 1e-3, &beta, &err), -1);
  assert_non_null(strstr(err.msg, "unreachable"));
  assert_int_equal(bbvfl_acct_solve_beta(&in2, BBVFL_ACCT_FEATURE, -1, &beta, &err), -1);
  assert_int_equal(bbvfl_acct_solve_beta(&in2, BBVFL_ACCT_FEATURE, NAN, &beta, &err), -1);
}

static void test_bad_input(void **state) {
  (void)state;
  const bbvfl_pbm_acct_in bad[] = {
      {0, 0.2, 16, 5, 30, 1e-5, 0},   {256, 0.2, 16, 5, 30, 1e-5, 0}, {16, 0, 16, 5, 30, 1e-5, 0},
      {16, 0.5, 16, 5, 30, 1e-5, 0},  {16, -0.1, 16, 5, 30, 1e-5, 0}, {16, NAN, 16, 5, 30, 1e-5, 0},
      {16, 0.2, 0, 5, 30, 1e-5, 0},   {16, 0.2, 16, 0, 30, 1e-5, 0},  {16, 0.2, 16, 5, 0, 1e-5, 0},
      {16, 0.2, 16, 5, 30, 0, 0},     {16, 0.2, 16, 5, 30, 1, 0},     {16, 0.2, 16, 5, 30, NAN, 0},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bbvfl_acct_out o;
    bbvfl_err err = {0};
    assert_int_equal(bbvfl_acct_pbm(&bad[i], &o, &err), -1);
    assert_int_equal(err.code, BBVFL_E_ARG);
    assert_true(strlen(err.msg) > 10);
    err = (bbvfl_err){0};
    assert_int_equal(bbvfl_acct_pbm_masked_feature(&bad[i], &o, NULL, &err), -1);
    assert_int_equal(err.code, BBVFL_E_ARG);
  }
  bbvfl_pbm_acct_in big = {255, 0.2, 16, 64, 30, 1e-5, 0};
  bbvfl_acct_out o;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&big, &o, NULL, &err), -1);
  assert_non_null(strstr(err.msg, "masked"));
}

/* ---- masked mode ---- */

/* linear-domain pmf of the sum: the changed client at p0, others at ps[0..n) (b trials each) */
static void ref_sum_pmf(int b, double p0, const double *ps, int n, double *out) {
  int len = 1;
  out[0] = 1;
  double tmp[2048];
  for (int m = 0; m <= n; m++) {
    double p = m == 0 ? p0 : ps[m - 1];
    for (int k = 0; k < len + b; k++) tmp[k] = 0;
    for (int i = 0; i < len; i++)
      for (int j = 0; j <= b; j++) tmp[i + j] += out[i] * exp(ref_log_binom_pmf(b, j, p));
    len += b;
    memcpy(out, tmp, (size_t)len * sizeof *out);
  }
}

static double ref_renyi_lin(const double *P, const double *Q, int len, double a) {
  double s = 0;
  for (int k = 0; k < len; k++) s += P[k] * pow(P[k] / Q[k], a - 1);
  return log(s) / (a - 1);
}

static void test_masked_m1_equals_local(void **state) {
  (void)state;
  bbvfl_pbm_acct_in in = {16, 0.2, 16, 1, 30, 1e-5, 0};
  bbvfl_acct_out lo, mo;
  double r[BBVFL_ACCT_NGRID];
  bbvfl_acct_curve c;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_acct_pbm(&in, &lo, &err), 0);
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&in, &mo, r, &err), 0);
  assert_int_equal(bbvfl_acct_pbm_curve(&in, &c, &err), 0);
  for (int i = 0; i < BBVFL_ACCT_NGRID; i++) close_rel(r[i], c.feature[i], 1e-11, 0);
  close_rel(mo.epsilon_feature, lo.epsilon_feature, 1e-11, 0);
  close_rel(mo.epsilon_sample, lo.epsilon_sample, 1e-12, 0);
}

/* Colluding participants subtract their own outputs: against t of them, an M-client sum hides the
 * changed client exactly as an (M-t)-client sum does against a chain reader; t = M-1 leaves it
 * alone (the local bound); t = M is refused (the changed client does not collude against itself). */
static void test_masked_colluding(void **state) {
  (void)state;
  bbvfl_err err = {0};
  double r1[BBVFL_ACCT_NGRID], r0[BBVFL_ACCT_NGRID];
  bbvfl_acct_out m1, m0, lo;
  bbvfl_pbm_acct_in in = {16, 0.2, 16, 5, 30, 1e-5, 1};
  bbvfl_pbm_acct_in four = {16, 0.2, 16, 4, 30, 1e-5, 0};
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&in, &m1, r1, &err), 0);
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&four, &m0, r0, &err), 0);
  for (int i = 0; i < BBVFL_ACCT_NGRID; i++) close_rel(r1[i], r0[i], 1e-12, 0);
  close_rel(m1.epsilon_feature, m0.epsilon_feature, 1e-12, 0);
  /* a participant sees more than a chain reader: 958 against 786 for the paper's setting */
  bbvfl_pbm_acct_in reader = in;
  reader.colluding = 0;
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&reader, &m0, NULL, &err), 0);
  assert_true(m1.epsilon_feature > m0.epsilon_feature * 1.15);
  assert_true(fabs(m1.epsilon_feature - 958) < 1 && fabs(m0.epsilon_feature - 786.1) < 0.1);
  in.colluding = 4;
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&in, &m1, NULL, &err), 0);
  assert_int_equal(bbvfl_acct_pbm(&in, &lo, &err), 0);
  close_rel(m1.epsilon_feature, lo.epsilon_feature, 1e-11, 0);
  in.colluding = 5;
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&in, &m1, NULL, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  in.colluding = -1;
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&in, &m1, NULL, &err), -1);
}

/* Printed by: python3 tests/reference/pbm_rdp.py --pld (defaults: b=16, beta=0.2, P=16, M=5,
 * 30 epochs, delta=1e-5): 60-digit hockey-stick sums, independent of the C code's log-domain
 * window. */
#define PLD_FEATURE_REF 2890.3001667874222
#define PLD_SAMPLE_REF 13660.526665310852

/* PLD, one Bernoulli trial (b = 1, one coordinate): delta(eps) = p - e^eps q for eps below
 * ln(p/q), 0 above. */
static void test_pld_bernoulli(void **state) {
  (void)state;
  double p = 0.7, q = 0.3, lam = log(p / q);
  for (double e = 0; e < 1.2; e += 0.1) {
    double want = e < lam ? p - exp(e) * q : 0;
    double got = bbvfl_acct_pbm_pld_delta(1, 0.2, 1, e);
    assert_true(fabs(got - want) <= 1e-15);
  }
}

/* PLD of a product: b = 2, three coordinates, every one of the 27 joint outcomes enumerated
 * with its two probabilities; the hockey-stick divergence must equal the binomial shortcut. */
static void test_pld_product_enumeration(void **state) {
  (void)state;
  const double beta = 0.15, p = 0.5 + beta, q = 0.5 - beta;
  double P1[3] = {q * q, 2 * p * q, p * p}, Q1[3] = {p * p, 2 * p * q, q * q};
  const double eps[] = {0, 0.3, 1.0, 2.0, 3.5};
  for (size_t i = 0; i < sizeof eps / sizeof eps[0]; i++) {
    double d = 0;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        for (int c = 0; c < 3; c++) {
          double pp = P1[a] * P1[b] * P1[c], qq = Q1[a] * Q1[b] * Q1[c];
          if (pp > exp(eps[i]) * qq) d += pp - exp(eps[i]) * qq;
        }
    double got = bbvfl_acct_pbm_pld_delta(2, beta, 3, eps[i]);
    assert_true(fabs(got - d) <= 1e-14 * (d > 1e-3 ? d : 1e-3));
  }
}

/* The paper's default: the exact epsilon lies between the composed KL divergence (2602.9, the
 * mean privacy loss) and the RDP conversion (2923.16), meets delta, and equals the independent
 * 60-digit reference (tests/reference/pbm_rdp.py --pld). */
static void test_pld_default(void **state) {
  (void)state;
  bbvfl_err err = {0};
  double ef, es, ef6;
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, 30 * 16, 1e-5, &ef, &err), 0);
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, 30 * 5 * 16, 1e-5, &es, &err), 0);
  assert_true(ef > 2602.9 && ef < 2923.17);
  assert_true(es > 5 * 2602.9 && es < 13738.72);
  close_rel(bbvfl_acct_pbm_pld_delta(16, 0.2, 30 * 16, ef), 1e-5, 1e-6, 0);
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, 30 * 16, 1e-6, &ef6, &err), 0);
  assert_true(ef6 > ef);
  close_rel(ef, PLD_FEATURE_REF, 1e-9, 0);
  close_rel(es, PLD_SAMPLE_REF, 1e-9, 0);
  /* a whole column set (Breast Cancer's 455 training rows): one million times more trials */
  double big;
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, (uint64_t)455 * 30 * 16, 1e-5, &big, &err), 0);
  assert_true(big > 455 * 2602.9 && big < 455 * 2923.17);
  /* bad input */
  assert_int_equal(bbvfl_acct_pbm_pld_eps(0, 0.2, 10, 1e-5, &ef, &err), -1);
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.5, 10, 1e-5, &ef, &err), -1);
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, 0, 1e-5, &ef, &err), -1);
  assert_int_equal(bbvfl_acct_pbm_pld_eps(16, 0.2, 10, 0, &ef, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  assert_true(isnan(bbvfl_acct_pbm_pld_delta(16, 0.2, 10, -1)));
}

/* Masked <= local, and the bound falls as M grows. PBM-VFL's Theorem 6.1 states feature RDP of
 * order P b beta^2 alpha / M (up to a constant). The exact computation shows that 1/M holds only
 * at small alpha: at alpha = 1.1 the M=5 masked curve is about 1/4.2 of the local one, at
 * alpha = 16 about 1/1.13, and as alpha grows it approaches the local value because the
 * extreme outcome (every trial of every client a success) keeps the ratio (p/q)^b. */
static void test_masked_bound_and_scaling(void **state) {
  (void)state;
  bbvfl_err err = {0};
  double prev_eps = INFINITY, prev_r2 = INFINITY;
  bbvfl_pbm_acct_in in = {8, 0.2, 16, 1, 30, 1e-5, 0};
  bbvfl_acct_curve c;
  assert_int_equal(bbvfl_acct_pbm_curve(&in, &c, &err), 0);
  int i2 = 18; /* alpha = 2 */
  assert_true(c.alpha[i2] == 2.0);
  for (int M = 1; M <= 8; M++) {
    in.M = M;
    bbvfl_acct_out mo, lo;
    double r[BBVFL_ACCT_NGRID];
    assert_int_equal(bbvfl_acct_pbm_masked_feature(&in, &mo, r, &err), 0);
    assert_int_equal(bbvfl_acct_pbm(&in, &lo, &err), 0);
    for (int i = 0; i < BBVFL_ACCT_NGRID; i++) assert_true(r[i] <= c.feature[i] * (1 + 1e-12));
    assert_true(mo.epsilon_feature <= lo.epsilon_feature * (1 + 1e-12));
    if (M > 1) {
      assert_true(mo.epsilon_feature < prev_eps);
      assert_true(r[i2] < prev_r2);
    }
    prev_eps = mo.epsilon_feature;
    prev_r2 = r[i2];
  }
  /* at alpha = 2, M = 8 the masked RDP is well below local but not 8 times below */
  assert_true(prev_r2 < c.feature[i2] / 2);
}

/* The library searches the others' inputs over {-C,-C/2,0,C/2,C}. Search finer here (21 levels
 * per other client, M=3, b=4, every pair) by plain convolution: nothing worse may be found, and
 * the library's worst case must be attained by some configuration (it is a maximum, not a bound
 * from elsewhere). */
static void test_masked_worst_case_search(void **state) {
  (void)state;
  const int b = 4, M = 3;
  const double beta = 0.2;
  bbvfl_pbm_acct_in in = {b, beta, 1, M, 1, 1e-5, 0};
  bbvfl_acct_out mo;
  bbvfl_err err = {0};
  double r[BBVFL_ACCT_NGRID];
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&in, &mo, r, &err), 0);
  static const double A[] = {1.1, 2, 4, 16, 63, 1024};
  static const int AI[] = {9, 18, 38, 113, 160, 164};
  for (size_t k = 0; k < sizeof A / sizeof A[0]; k++) {
    assert_true(bbvfl_acct_grid()[AI[k]] == A[k]);
    double best = 0;
    for (int u = 0; u <= 20; u++)
      for (int v = 0; v <= 20; v++) {
        double ps[2] = {0.5 + beta * (-1 + u / 10.0), 0.5 + beta * (-1 + v / 10.0)};
        double P[64], Q[64];
        ref_sum_pmf(b, 0.5 + beta, ps, 2, P);
        ref_sum_pmf(b, 0.5 - beta, ps, 2, Q);
        double d1 = ref_renyi_lin(P, Q, M * b + 1, A[k]), d2 = ref_renyi_lin(Q, P, M * b + 1, A[k]);
        if (d1 > best) best = d1;
        if (d2 > best) best = d2;
      }
    close_rel(r[AI[k]], best, 1e-9, 1e-15);
  }
}

/* Pinned masked values for the paper's default. Printed by python3 tests/reference/pbm_rdp.py
 * --b 16 --beta 0.2 --P 16 --M 5 --epochs 30 --delta 1e-5 --masked (exact rational convolution of
 * the sum pmfs over every multiset of the 4 others' levels, mpmath at 60 digits, 69 s):
 *   masked feature: eps_tight=786.10451950973253 alpha=1.1 eps_std=789.45551658057415
 *   masked coord rdp alpha=2: 2.731215865548411
 *   masked coord rdp alpha=16: 11.65466384196289
 *   masked coord rdp alpha=1024: 13.528873297461046
 * (against the local per-coordinate 9.062, 13.176, 13.551 at the same orders) */
static void test_masked_pinned(void **state) {
  (void)state;
  bbvfl_pbm_acct_in in = {16, 0.2, 16, 5, 30, 1e-5, 0};
  bbvfl_acct_out mo;
  bbvfl_err err = {0};
  double r[BBVFL_ACCT_NGRID];
  assert_int_equal(bbvfl_acct_pbm_masked_feature(&in, &mo, r, &err), 0);
  close_rel(mo.epsilon_feature, 786.10451950973253, 1e-9, 0);
  close_rel(mo.alpha_feature, 1.1, 1e-12, 0);
  close_rel(mo.epsilon_feature_std, 789.45551658057415, 1e-9, 0);
  close_rel(r[18] / 480, 2.731215865548411, 1e-9, 0); /* composed over P * epochs = 480 */
  close_rel(r[113] / 480, 11.65466384196289, 1e-9, 0);
  close_rel(r[164] / 480, 13.528873297461046, 1e-9, 0);
  /* the sample level is unchanged by masking */
  close_rel(mo.epsilon_sample, 13738.719758754085, 1e-10, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grid),
      cmocka_unit_test(test_closed_form_vs_direct_sum),
      cmocka_unit_test(test_monotone),
      cmocka_unit_test(test_pinned_paper_default),
      cmocka_unit_test(test_conversions),
      cmocka_unit_test(test_gaussian),
      cmocka_unit_test(test_calibration),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_masked_m1_equals_local),
      cmocka_unit_test(test_masked_bound_and_scaling),
      cmocka_unit_test(test_masked_colluding),
      cmocka_unit_test(test_pld_bernoulli),
      cmocka_unit_test(test_pld_product_enumeration),
      cmocka_unit_test(test_pld_default),
      cmocka_unit_test(test_masked_worst_case_search),
      cmocka_unit_test(test_masked_pinned),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
