/* Row mode (client/dp/rowdp.h): the pieces that make the row-level epsilon end to end.
 *  - per-row backward (ml/mlp.h) against the batch backward: the row gradients sum to the batch's;
 *  - DP-SGD in the party (core/party.h): with negligible noise the update is the mean of the
 *    clipped per-row gradients, each computed here independently by a one-row forward/backward;
 *    with noise, the spread of the update is noise * clip / B;
 *  - the DP centre and scale (dp/dpscale.h): close to the median and the scaled MAD at a large
 *    epsilon, spread over the grid at a tiny one, and refusing bad input;
 *  - the accountant's row mode (dp/privacy.h) against an independent computation: the PBM
 *    per-coordinate Renyi divergence by direct summation, plus the Gaussian and pure terms,
 *    converted by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_skip.h"

#include "dp/dpscale.h"
#include "dp/privacy.h"
#include "ml/mlp.h"
#include "core/party.h"

static void test_backward_row_sums(void **st) {
  (void)st;
  int dims[] = {5, 8, 4};
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 3, 1);
  bbvfl_mlp m;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_mlp_init(&m, 2, dims, &r, &err), 0);
  enum { B = 6 };
  float x[B * 5], out[B * 4], dout[B * 4];
  for (int i = 0; i < B * 5; i++) x[i] = (float)(2 * bbvfl_rng_uniform(&r) - 1);
  for (int i = 0; i < B * 4; i++) dout[i] = (float)(2 * bbvfl_rng_uniform(&r) - 1);
  assert_int_equal(bbvfl_mlp_forward(&m, x, B, out, &err), 0);
  bbvfl_mlp_backward(&m, dout);
  float *batch = malloc(m.nparams * sizeof *batch), *sum = calloc(m.nparams, sizeof *sum);
  assert_true(batch && sum);
  memcpy(batch, m.grads, m.nparams * sizeof *batch);
  for (size_t i = 0; i < B; i++) {
    bbvfl_mlp_backward_row(&m, i, dout + 4 * i);
    for (size_t k = 0; k < m.nparams; k++) sum[k] += m.grads[k];
  }
  for (size_t k = 0; k < m.nparams; k++) assert_true(fabsf(sum[k] - batch[k]) <= 1e-5f * (1 + fabsf(batch[k])));
  free(batch);
  free(sum);
  bbvfl_mlp_free(&m);
}

/* A party in row mode with plain SGD, lr 1: the update is minus the DP-SGD gradient. */
static void make_party(bbvfl_party *p, double clip, double noise, const float *cols, size_t n, uint64_t seed) {
  bbvfl_party_cfg c = {.index = 0, .P = 3, .nhidden = 1, .hidden = {6}, .seed = seed, .seeded_noise = 1,
                       .rowdp = {.on = 1, .clip = clip, .noise = noise, .scale_eps = 0.25}};
  c.mech.kind = BBVFL_MECH_NPQ;
  bbvfl_optim_defaults(&c.opt);
  c.opt.kind = BBVFL_OPT_SGD;
  c.opt.lr = 1;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_party_init(p, &c, cols, n, 4, &err), 0);
}

static void test_dpsgd_clips(void **st) {
  (void)st;
  enum { N = 8, D = 4, P = 3 };
  float cols[N * D], g[N * P], h[N * P];
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 9, 1);
  for (int i = 0; i < N * D; i++) cols[i] = (float)(4 * bbvfl_rng_uniform(&r) - 2);
  for (int i = 0; i < N * P; i++) g[i] = (float)(bbvfl_rng_uniform(&r) - 0.5);
  size_t rows[N];
  for (size_t i = 0; i < N; i++) rows[i] = i;
  const double clip = 0.05; /* small enough that most rows are clipped */
  bbvfl_party p;
  make_party(&p, clip, 1e-9, cols, N, 1);
  float *before = malloc(p.mlp.nparams * sizeof *before), *want = calloc(p.mlp.nparams, sizeof *want);
  assert_true(before && want);
  memcpy(before, p.mlp.params, p.mlp.nparams * sizeof *before);
  /* independent: one-row forward and backward on a copy of the network */
  int clipped = 0;
  for (size_t i = 0; i < N; i++) {
    bbvfl_mlp one;
    int dims[] = {D, 6, P};
    bbvfl_rng ri;
    bbvfl_rng_init_seeded(&ri, 1, 2);
    bbvfl_err err = {0};
    assert_int_equal(bbvfl_mlp_init(&one, 2, dims, &ri, &err), 0);
    memcpy(one.params, before, one.nparams * sizeof *before);
    float out[P], d[P];
    assert_int_equal(bbvfl_mlp_forward(&one, cols + i * D, 1, out, &err), 0);
    for (int k = 0; k < P; k++) d[k] = g[i * P + (size_t)k] * N;
    bbvfl_mlp_backward(&one, d);
    double n2 = 0;
    for (size_t k = 0; k < one.nparams; k++) n2 += (double)one.grads[k] * one.grads[k];
    double f = sqrt(n2) > clip ? clip / sqrt(n2) : 1;
    clipped += f < 1;
    for (size_t k = 0; k < one.nparams; k++) want[k] += (float)(f * one.grads[k] / N);
    bbvfl_mlp_free(&one);
  }
  assert_true(clipped >= N / 2);
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_party_forward(&p, rows, N, NULL, h, &err), 0);
  assert_int_equal(bbvfl_party_backward(&p, g, &err), 0);
  for (size_t k = 0; k < p.mlp.nparams; k++) {
    float step = before[k] - p.mlp.params[k];
    if (!(fabsf(step - want[k]) <= 1e-5f * (1 + fabsf(want[k]))))
      fail_msg("parameter %zu: step %.9g, want %.9g", k, step, want[k]);
  }
  /* the mean clipped gradient has norm at most clip */
  double n2 = 0;
  for (size_t k = 0; k < p.mlp.nparams; k++) n2 += (double)want[k] * want[k];
  assert_true(sqrt(n2) <= clip * (1 + 1e-6));
  bbvfl_party_free(&p);

  /* with noise: the update minus the clipped mean has std noise * clip / N per parameter */
  const double z = 3;
  make_party(&p, clip, z, cols, N, 1);
  assert_int_equal(bbvfl_party_forward(&p, rows, N, NULL, h, &err), 0);
  bbvfl_rng release_noise = p.noise;
  assert_int_equal(bbvfl_party_backward(&p, g, &err), 0);
  /* DP-SGD draws from its own stream: the release noise is untouched, so the order of forwards
     and backwards (which varies between client processes on chain) cannot shift either */
  assert_memory_equal(&release_noise, &p.noise, sizeof release_noise);
  double s2 = 0;
  for (size_t k = 0; k < p.mlp.nparams; k++) {
    double e = (before[k] - p.mlp.params[k]) - want[k];
    s2 += e * e;
  }
  double sd = sqrt(s2 / (double)p.mlp.nparams), expect = z * clip / N;
  if (!(fabs(sd - expect) < 0.2 * expect)) fail_msg("noise std %.6g, expected %.6g", sd, expect);
  bbvfl_party_free(&p);
  free(before);
  free(want);
}

static void test_dp_scale(void **st) {
  (void)st;
  enum { N = 2000 };
  double *x = malloc(N * sizeof *x);
  assert_non_null(x);
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 4, 1);
  for (int i = 0; i < N; i++) x[i] = 50 + 8 * bbvfl_rng_normal(&r);
  bbvfl_err err = {0};
  double c, s;
  assert_int_equal(bbvfl_dp_robust_scale(x, N, 200, &r, &c, &s, &err), 0);
  /* the grid's neighbours of 50 are 42.2 and 56.2; of 8 / 1.4826 = 5.4: 4.2 and 5.6 */
  assert_true(c > 40 && c < 60);
  assert_true(s > 1.4826 * 4.0 && s < 1.4826 * 7.6);
  /* a tiny epsilon: the choice spreads over the grid */
  int distinct = 0;
  double seen[200];
  for (int t = 0; t < 200; t++) {
    assert_int_equal(bbvfl_dp_robust_scale(x, N, 1e-9, &r, &c, &s, &err), 0);
    int dup = 0;
    for (int k = 0; k < distinct; k++) dup |= seen[k] == c;
    if (!dup) seen[distinct++] = c;
    assert_true(s > 0);
  }
  assert_true(distinct > 60);
  /* bad input */
  x[3] = NAN;
  assert_int_equal(bbvfl_dp_robust_scale(x, N, 1, &r, &c, &s, &err), -1);
  assert_non_null(strstr(err.msg, "not finite"));
  assert_int_equal(bbvfl_dp_robust_scale(x, 0, 1, &r, &c, &s, &err), -1);
  assert_int_equal(bbvfl_dp_robust_scale(x, 2, 0, &r, &c, &s, &err), -1);
  free(x);
}

/* independent: D_alpha(Bin(b, 1/2+beta) || Bin(b, 1/2-beta)) by direct summation */
static double ref_pbm(int b, double beta, double alpha) {
  double p = 0.5 + beta, q = 0.5 - beta, t[300], m = -INFINITY;
  for (int k = 0; k <= b; k++) {
    double lc = lgamma(b + 1.0) - lgamma(k + 1.0) - lgamma(b - k + 1.0);
    t[k] = alpha * (lc + k * log(p) + (b - k) * log(1 - p)) + (1 - alpha) * (lc + k * log(q) + (b - k) * log(1 - q));
    if (t[k] > m) m = t[k];
  }
  double s = 0;
  for (int k = 0; k <= b; k++) s += exp(t[k] - m);
  return (m + log(s)) / (alpha - 1);
}

static double ref_eps(int b, double beta, int P, int E, int M, double z, double se, double delta) {
  double grid[170];
  int n = 0;
  for (int k = 101; k <= 109; k++) grid[n++] = k / 100.0; /* 1.01 .. 1.09 */
  for (int k = 11; k <= 109; k++) grid[n++] = k / 10.0;   /* 1.1 .. 10.9 */
  for (int k = 11; k <= 63; k++) grid[n++] = k;
  for (int k = 128; k <= 1024; k *= 2) grid[n++] = k;
  double best = INFINITY;
  for (int i = 0; i < n; i++) {
    double alpha = grid[i];
    double r = M * (E * P * ref_pbm(b, beta, alpha) + E * 2 * alpha / (z * z) + fmin(se, alpha * se * se / 2));
    double eps = r + log1p(-1 / alpha) - (log(delta) + log(alpha)) / (alpha - 1);
    if (eps < best) best = eps;
  }
  return best;
}

static void test_row_accountant(void **st) {
  (void)st;
  bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = 8, .beta = 0.05, .P = 4, .M = 5, .epochs = 10, .delta = 1e-5,
                         .rows = 455, .rowdp = {.on = 1, .clip = 1, .noise = 2, .scale_eps = 0.25}};
  bbvfl_privacy p;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.end_to_end);
  double f = ref_eps(8, 0.05, 4, 10, 1, 2, 0.25, 1e-5), s = ref_eps(8, 0.05, 4, 10, 5, 2, 0.25, 1e-5);
  if (!(fabs(p.row_feature.epsilon - f) <= 1e-6 * f)) fail_msg("row level %.10g, independent %.10g", p.row_feature.epsilon, f);
  if (!(fabs(p.row_sample.epsilon - s) <= 1e-6 * s)) fail_msg("sample level %.10g, independent %.10g", p.row_sample.epsilon, s);
  assert_string_equal(p.row_feature.method, "rdp");
  assert_true(isnan(p.feature_set.epsilon)); /* not computed in row mode */
  /* more noise, fewer epochs, a smaller scaling budget: never a larger epsilon */
  double e0 = p.row_feature.epsilon;
  in.rowdp.noise = 4;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.row_feature.epsilon < e0);
  in.rowdp.scale_eps = 0.01;
  double e1 = p.row_feature.epsilon;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.row_feature.epsilon < e1);
  /* the end-to-end number is above the releases alone (paper mode, RDP) */
  in.rowdp.on = 0;
  bbvfl_privacy paper;
  assert_int_equal(bbvfl_privacy_compute(&in, &paper, NULL, &err), 0);
  assert_false(paper.end_to_end);
  assert_true(p.row_feature.epsilon > paper.row_feature.rdp);
  char line[1024];
  bbvfl_privacy_line(&p, line, sizeof line);
  assert_non_null(strstr(line, "end-to-end (row mode)"));
  /* bench attacks' row mode (b 16, P 16, 30 epochs): at beta 0.2 the 480 PBM coordinates dominate
     (about 2900 at the row level whatever the DP-SGD noise, within 3% between noise 1 and 1000);
     at beta 0.01 the DP-SGD term does (noise 1: over 4 times noise 1000's) */
  bbvfl_privacy_in bench = {.kind = BBVFL_MECH_PBM, .b = 16, .beta = 0.2, .P = 16, .M = 5, .epochs = 30,
                            .delta = 1e-5, .rowdp = {.on = 1, .clip = 1, .noise = 1, .scale_eps = 0.25}};
  double eb[2][2];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      bench.beta = i ? 0.01 : 0.2;
      bench.rowdp.noise = j ? 1000 : 1;
      assert_int_equal(bbvfl_privacy_compute(&bench, &p, NULL, &err), 0);
      eb[i][j] = p.row_feature.epsilon;
      double r = ref_eps(16, bench.beta, 16, 30, 1, bench.rowdp.noise, 0.25, 1e-5);
      if (!(fabs(eb[i][j] - r) <= 1e-6 * r)) fail_msg("beta %g noise %g: %.10g, independent %.10g", bench.beta, bench.rowdp.noise, eb[i][j], r);
    }
  assert_true(eb[0][1] > 2800 && eb[0][0] < 1.03 * eb[0][1]);
  assert_true(eb[1][0] > 4 * eb[1][1]);
  /* bad row-mode parameters */
  in.rowdp = (bbvfl_rowdp){1, 1, 0, 0.25, 0, 0};
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backward_row_sums),
      cmocka_unit_test(test_dpsgd_clips),
      cmocka_unit_test(test_dp_scale),
      cmocka_unit_test(test_row_accountant),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
