/* VFL-AFE's arithmetic (ml/afe.h, ml/fcm.h): fuzzy c-means on separated clusters, the rescaling
 * estimate against a normal quantile and a brute-force maximum, the adjusting loss's gradient
 * against central finite differences, and the party's rescaled release. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/rng.h"
#include "ml/afe.h"
#include "ml/fcm.h"

/* three well separated blobs in 4 dimensions: FCM finds them (up to a relabelling), confident;
   a point halfway between two centres is not confident */
static void test_fcm_blobs(void **st) {
  (void)st;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 3, 0);
  enum { N = 31, D = 4 };
  float x[N * D];
  int truth[N];
  const float ctr[3][D] = {{5, 0, 0, 0}, {0, 5, 0, 0}, {0, 0, -5, 1}};
  for (int i = 0; i < N - 1; i++) {
    truth[i] = i % 3;
    for (int k = 0; k < D; k++) x[i * D + k] = ctr[i % 3][k] + (float)(0.3 * bbvfl_rng_normal(&r));
  }
  for (int k = 0; k < D; k++) x[(N - 1) * D + k] = 0.5f * (ctr[0][k] + ctr[1][k]);
  int lab[N];
  float conf[N];
  assert_int_equal(bbvfl_fcm(x, N, D, 3, 100, 1e-6, lab, conf, NULL), 0);
  int map[3] = {-1, -1, -1};
  for (int i = 0; i < N - 1; i++) {
    if (map[truth[i]] < 0) map[truth[i]] = lab[i];
    assert_int_equal(lab[i], map[truth[i]]);
    assert_true(conf[i] > 0.9f);
  }
  assert_true(map[0] != map[1] && map[1] != map[2] && map[0] != map[2]);
  assert_true(conf[N - 1] < 0.6f);
  for (int i = 0; i < N; i++) assert_true(conf[i] >= 1.0f / 3 - 1e-6f && conf[i] <= 1.0f + 1e-6f);
  /* refusals */
  assert_int_equal(bbvfl_fcm(x, N, D, 0, 10, 1e-6, lab, conf, NULL), -1);
  assert_int_equal(bbvfl_fcm(x, 2, D, 3, 10, 1e-6, lab, conf, NULL), -1);
}

static void test_quantile(void **st) {
  (void)st;
  assert_true(fabs(bbvfl_norm_quantile(0.5)) < 1e-9);
  assert_true(fabs(bbvfl_norm_quantile(0.975) - 1.959963985) < 1e-6);
  assert_true(fabs(bbvfl_norm_quantile(0.999) - 3.090232306) < 1e-6);
  assert_true(fabs(bbvfl_norm_quantile(0.001) + 3.090232306) < 1e-6);
}

/* the estimate is mu + sd Phi^-1(1 - p2) of the pairwise distances (computed here by brute force),
   and the factor maps it to 2t, capped so it never shrinks */
static void test_rescale_estimate(void **st) {
  (void)st;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 5, 0);
  enum { N = 40, P = 6 };
  float h[N * P];
  for (int i = 0; i < N * P; i++) h[i] = (float)(0.1 * bbvfl_rng_normal(&r));
  double s = 0, s2 = 0, mx = 0, cnt = 0;
  for (int j = 0; j < N; j++)
    for (int k = j + 1; k < N; k++) {
      double d = 0;
      for (int q = 0; q < P; q++) d += pow((double)h[j * P + q] - h[k * P + q], 2);
      d = sqrt(d);
      s += d, s2 += d * d, cnt += 1;
      if (d > mx) mx = d;
    }
  double mu = s / cnt, sd = sqrt(s2 / cnt - mu * mu), m2, sd2, mx2;
  bbvfl_afe_pair_stats(h, N, P, &m2, &sd2, &mx2);
  assert_true(fabs(m2 - mu) < 1e-9 && fabs(sd2 - sd) < 1e-9 && fabs(mx2 - mx) < 1e-9);
  double est = bbvfl_afe_disparity_estimate(h, N, P, 1e-3);
  assert_true(fabs(est - (mu + 3.090232306 * sd)) < 1e-6);
  /* the normal approximation bounds the batch's maximum here */
  assert_true(est >= mx);
  double t = 1.0, f = bbvfl_afe_rescale_factor(h, N, P, t, 1e-3);
  assert_true(fabs(f - 2 * t / est) < 1e-9);
  assert_true(f > 1.0);
  /* spread rows (estimate above 2t): the factor stays 1 */
  for (int i = 0; i < N * P; i++) h[i] *= 100.0f;
  assert_true(fabs(bbvfl_afe_rescale_factor(h, N, P, t, 1e-3) - 1.0) < 1e-12);
  assert_true(fabs(bbvfl_afe_rescale_factor(h, 1, P, t, 1e-3) - 1.0) < 1e-12);
}

static double adj(const float *h, size_t n, size_t P, const int *lab, const float *conf, double lambda, double alpha,
                  float *g) {
  return bbvfl_afe_adjust_loss(h, n, P, lab, conf, 0.5, lambda, alpha, g);
}

/* the gradient of lambda L_CL + alpha L_KL against central differences, each part alone and both */
static void test_adjust_grad_fd(void **st) {
  (void)st;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 9, 0);
  enum { N = 9, P = 3 };
  float h[N * P], g[N * P], gd[N * P];
  int lab[N];
  float conf[N];
  for (int i = 0; i < N * P; i++) h[i] = (float)bbvfl_rng_normal(&r);
  for (int i = 0; i < N; i++) {
    lab[i] = i % 2;
    conf[i] = i == 4 ? 0.3f : 0.9f; /* row 4 is filtered out of the contrastive part */
  }
  const double w[3][2] = {{1.0, 0}, {0, 1.0}, {0.7, 0.3}};
  for (int c = 0; c < 3; c++) {
    double L = adj(h, N, P, lab, conf, w[c][0], w[c][1], g);
    assert_true(isfinite(L));
    int bad = 0;
    for (int i = 0; i < N * P; i++) {
      float keep = h[i];
      const float e = 1e-2f;
      h[i] = keep + e;
      double Lp = adj(h, N, P, lab, conf, w[c][0], w[c][1], gd);
      h[i] = keep - e;
      double Lm = adj(h, N, P, lab, conf, w[c][0], w[c][1], gd);
      h[i] = keep;
      double fd = (Lp - Lm) / (2 * e);
      if (fabs(fd - g[i]) > 2e-3 + 2e-2 * fabs(fd)) bad++;
    }
    assert_int_equal(bad, 0);
  }
  /* the filtered row gets no contrastive gradient */
  adj(h, N, P, lab, conf, 1.0, 0, g);
  for (int q = 0; q < P; q++) assert_true(g[4 * P + q] == 0.0f);
  /* the contrastive loss falls when the two classes move apart */
  float far[N * P];
  memcpy(far, h, sizeof far);
  for (int i = 0; i < N; i++) far[i * P] += lab[i] ? 3.0f : -3.0f;
  assert_true(adj(far, N, P, lab, conf, 1.0, 0, g) < adj(h, N, P, lab, conf, 1.0, 0, gd));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_fcm_blobs), cmocka_unit_test(test_quantile),
                                     cmocka_unit_test(test_rescale_estimate), cmocka_unit_test(test_adjust_grad_fd)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
