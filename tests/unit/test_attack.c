/* The attacks of audit/attack.h: the inversion decoder and the membership threshold on synthetic
 * data, then a tiny Breast Cancer run: label inference reads every training label back without
 * label DP and only about randomized response's share with it; inversion beats its baseline on NPQ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audit/attack.h"
#include "dp/rng.h"
#include "train_fixture.h"

/* releases a linear image of the columns: the decoder recovers them; pure noise: no gain */
static void test_inversion_synthetic(void **st) {
  (void)st;
  enum { NA = 200, NV = 100, P = 4, D = 3 };
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 11, 0);
  float *x = malloc((NA + NV) * D * sizeof *x), *z = malloc((NA + NV) * P * sizeof *z);
  for (int i = 0; i < (NA + NV); i++) {
    for (int c = 0; c < D; c++) x[i * D + c] = (float)bbvfl_rng_normal(&r);
    for (int k = 0; k < P; k++) z[i * P + k] = (float)(x[i * D + k % D] * (k + 1) + 0.01 * bbvfl_rng_normal(&r));
  }
  bbvfl_inversion inv;
  assert_int_equal(bbvfl_attack_inversion(z, x, NA, z + NA * P, x + NA * D, NV, P, D, 1e-6, &inv, NULL), 0);
  assert_true(inv.gain > 0.99);
  assert_int_equal(bbvfl_attack_inversion(z, x, NA, z + NA * P, x + NA * D, NV, P, D, 0, &inv, NULL), 0);
  assert_true(inv.gain > 0.99);
  for (int i = 0; i < (NA + NV) * P; i++) z[i] = (float)bbvfl_rng_normal(&r);
  assert_int_equal(bbvfl_attack_inversion(z, x, NA, z + NA * P, x + NA * D, NV, P, D, 1e-3, &inv, NULL), 0);
  assert_true(fabs(inv.gain) < 0.1);
  /* the attacker's own ridge (0) on noise: about nothing */
  assert_int_equal(bbvfl_attack_inversion(z, x, NA, z + NA * P, x + NA * D, NV, P, D, 0, &inv, NULL), 0);
  assert_true(fabs(inv.gain) < 0.05);
  assert_int_equal(bbvfl_attack_inversion(z, x, 1, z, x, NV, P, D, 1e-3, &inv, NULL), -1);
  free(x);
  free(z);
}

/* VFL-AFE's rescaling multiplies a batch by a data-dependent factor (up to hundreds on a batch of
   similar rows) before the noise: a tenth of the victims' releases are 100 times the aux rows'
   scale. The attacker's decoder brings a release beyond every aux release back to their median
   distance (direction kept), so it still recovers the columns; unguarded, it extrapolated 100-fold
   (gain far below 0). The baseline stays the aux rows' column means. */
static void test_inversion_rescaled_victims(void **st) {
  (void)st;
  enum { NA = 300, NV = 100, P = 4, D = 3 };
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 12, 0);
  float *x = malloc((NA + NV) * D * sizeof *x), *z = malloc((NA + NV) * P * sizeof *z);
  for (int i = 0; i < NA + NV; i++) {
    double f = i >= NA && i % 10 == 0 ? 100.0 : 1.0;
    for (int c = 0; c < D; c++) x[i * D + c] = (float)bbvfl_rng_normal(&r);
    for (int k = 0; k < P; k++)
      z[i * P + k] = (float)(f * (x[i * D + k % D] + 0.5 * x[i * D + (k + 1) % D]) + 0.05 * bbvfl_rng_normal(&r));
  }
  double mean[D] = {0}, base = 0;
  for (int i = 0; i < NA; i++)
    for (int c = 0; c < D; c++) mean[c] += x[i * D + c] / NA;
  for (int i = NA; i < NA + NV; i++)
    for (int c = 0; c < D; c++) base += (mean[c] - x[i * D + c]) * (mean[c] - x[i * D + c]) / (NV * D);
  bbvfl_inversion inv;
  for (int pick = 0; pick < 2; pick++) { /* the attacker's own ridge, then a fixed one */
    assert_int_equal(bbvfl_attack_inversion(z, x, NA, z + NA * P, x + NA * D, NV, P, D, pick ? 1e-3 : 0, &inv, NULL), 0);
    assert_true(fabs(inv.mse_base - base) < 1e-9 * base);
    assert_true(inv.gain > 0.9);
  }
  free(x);
  free(z);
}

/* A victim release off the aux rows' subspace but within their distance: the aux releases' second
   coordinate follows the first up to a tiny wobble that carries much of the column, so the fitted
   decoder weighs the difference 500-fold; victims whose difference is +-0.3 would be decoded at
   about +-150. Every decoded value stays in the aux rows' range of its column, so the error is at
   most the distance to the range's far end. */
static void test_inversion_clamped(void **st) {
  (void)st;
  enum { NA = 200, NV = 40, P = 2, D = 1 };
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 13, 0);
  float *x = malloc((NA + NV) * sizeof *x), *z = malloc((NA + NV) * P * sizeof *z);
  float lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < NA + NV; i++) {
    double a = bbvfl_rng_normal(&r), w = i < NA ? 0.01 * bbvfl_rng_normal(&r) : (i % 2 ? 0.3 : -0.3);
    z[i * P] = (float)a;
    z[i * P + 1] = (float)(a + w);
    x[i] = (float)(a + (i < NA ? 500 * w : 0.0));
    if (i < NA && x[i] < lo) lo = x[i];
    if (i < NA && x[i] > hi) hi = x[i];
  }
  double bound = 0;
  for (int i = NA; i < NA + NV; i++) {
    double e1 = (x[i] - lo) * (x[i] - lo), e2 = (x[i] - hi) * (x[i] - hi);
    bound += (e1 > e2 ? e1 : e2) / NV;
  }
  bbvfl_inversion inv;
  assert_int_equal(bbvfl_attack_inversion(z, x, NA, z + NA * P, x + NA, NV, P, D, 1e-6, &inv, NULL), 0);
  assert_true(inv.mse <= bound + 1e-9);
  assert_true(bound < 1000); /* unclamped: about 150^2 */
  free(x);
  free(z);
}

/* The attacker's own ridge (0) keeps to the column means when no decoder fitted on the first half
   of its rows beats them on the second: there the relation is reversed (x = -z against x = z), so
   every decoder loses and the victims get the means (gain exactly 0) although their releases
   would have told their columns. */
static void test_inversion_fallback(void **st) {
  (void)st;
  enum { NA = 100, NV = 50, P = 1, D = 1 };
  float x[NA + NV], z[NA + NV];
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 14, 0);
  for (int i = 0; i < NA + NV; i++) {
    z[i] = (float)bbvfl_rng_normal(&r);
    x[i] = i >= NA / 2 && i < NA ? -z[i] : z[i];
  }
  bbvfl_inversion inv;
  assert_int_equal(bbvfl_attack_inversion(z, x, NA, z + NA, x + NA, NV, P, D, 0, &inv, NULL), 0);
  assert_true(inv.gain == 0.0 && inv.mse == inv.mse_base);
}

static void test_membership_threshold(void **st) {
  (void)st;
  double sin[] = {0.1, 0.2, 0.15, 0.3}, sout[] = {0.9, 1.2, 0.8, 0.35};
  double tin[] = {0.05, 0.25, 0.5}, tout[] = {1.0, 0.28, 2.0, 3.0};
  bbvfl_membership m;
  assert_int_equal(bbvfl_attack_membership(sin, 4, sout, 4, tin, 3, tout, 4, &m, NULL), 0);
  assert_true(fabs(m.threshold - 0.3) < 1e-12);
  /* TPR 2/3, FPR 1/4 */
  assert_true(fabs(m.advantage - (2.0 / 3 - 0.25)) < 1e-12);
  assert_int_equal(bbvfl_attack_membership(sin, 0, sout, 4, tin, 3, tout, 4, &m, NULL), -1);
}

/* the estimate over seeds: mean, sd (n - 1), Student's t half-width; NAN skipped; one value: no interval */
static void test_estimate(void **st) {
  (void)st;
  bbvfl_attack_est e;
  double v[] = {0.1, 0.3, NAN, 0.2, 0.4};
  bbvfl_attack_estimate(v, 5, &e);
  assert_int_equal(e.n, 4);
  assert_true(fabs(e.mean - 0.25) < 1e-12);
  double sd = sqrt((0.0225 + 0.0025 + 0.0025 + 0.0225) / 3);
  assert_true(fabs(e.sd - sd) < 1e-12);
  assert_true(fabs(e.ci - 3.182 * sd / 2) < 1e-12); /* t(0.975, 3) */
  bbvfl_attack_estimate(v, 2, &e);                  /* t(0.975, 1) = 12.706 */
  assert_true(fabs(e.ci - 12.706 * sqrt(0.02) / sqrt(2.0)) < 1e-12);
  double w[40];
  for (int i = 0; i < 40; i++) w[i] = i % 2 ? 1.0 : -1.0;
  bbvfl_attack_estimate(w, 40, &e); /* df 39: the expansion, t = 2.0227 */
  assert_true(fabs(e.ci / (e.sd / sqrt(40.0)) - 2.0227) < 1e-3);
  bbvfl_attack_estimate(v, 1, &e);
  assert_int_equal(e.n, 1);
  assert_true(e.mean == 0.1 && isnan(e.ci) && isnan(e.sd));
  bbvfl_attack_estimate(v + 2, 1, &e);
  assert_int_equal(e.n, 0);
  assert_true(isnan(e.mean));
}

static void tiny(bbvfl_attack_cfg *a) {
  bbvfl_attack_defaults(a);
  a->cfg.epochs = 2;
  a->cfg.M = 3;
  a->cfg.seed = 4;
  a->shadows = 1;
}

static void test_attack_run(void **st) {
  (void)st;
  bbvfl_attack_cfg a;
  bbvfl_attack_result r;
  bbvfl_err err = {0};
  tiny(&a);
  a.cfg.mech.kind = BBVFL_MECH_NPQ;
  if (bbvfl_attack_offchain(&bbvfl_test_ds, &a, &r, &err) != 0) fail_msg("%s", err.msg);
  assert_true(r.label_acc == 1.0);
  assert_true(r.label_chance < 0.8);
  assert_true(isnan(r.label_rr));
  assert_true(r.inv.gain > 0.2);
  assert_true(r.inv.mse < r.inv.mse_base);
  /* label DP at eps 0.5: the posted gradients carry the randomized labels */
  tiny(&a);
  a.cfg.label_eps = 0.5;
  if (bbvfl_attack_offchain(&bbvfl_test_ds, &a, &r, &err) != 0) fail_msg("%s", err.msg);
  assert_true(fabs(r.label_rr - exp(0.5) / (exp(0.5) + 1)) < 1e-12);
  assert_true(fabs(r.label_acc - r.label_rr) < 0.08);
  /* refusals */
  tiny(&a);
  a.victim = 3;
  assert_int_equal(bbvfl_attack_offchain(&bbvfl_test_ds, &a, &r, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_inversion_synthetic), cmocka_unit_test(test_inversion_rescaled_victims),
      cmocka_unit_test(test_inversion_clamped),
      cmocka_unit_test(test_inversion_fallback), cmocka_unit_test(test_membership_threshold),
                                     cmocka_unit_test(test_estimate),
                                     cmocka_unit_test(test_attack_run)};
  return cmocka_run_group_tests(tests, bbvfl_test_ds_setup, bbvfl_test_ds_teardown);
}
