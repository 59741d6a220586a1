/* Labels split across clients (core/head, ml/head): the label holders' dLoss/dlogits for their rows
 * sum to the whole batch's, and the active client's step from that sum is the step it takes when
 * it holds every label (same loss, same dLoss/dh_hat, same head parameters); bad inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_skip.h"

#include "core/head.h"

enum { NB = 8, P = 4, M = 3 };

static void make_head(bbvfl_vhead *v, int nclasses) {
  bbvfl_mech mech = {.kind = BBVFL_MECH_PBM, .b = 16, .beta = 0.2, .C = 1};
  bbvfl_optim_cfg oc;
  bbvfl_optim_defaults(&oc);
  oc.lr = 0.05;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_vhead_init(v, P, nclasses, M, &mech, &oc, 17, &err), 0);
}

static void split_equals_whole(int nclasses) {
  bbvfl_err err = {0};
  bbvfl_vhead whole, act, holder;
  make_head(&whole, nclasses);
  make_head(&act, nclasses);
  make_head(&holder, nclasses);
  int K = bbvfl_vhead_outputs(&whole);
  assert_int_equal(K, nclasses == 2 ? 1 : nclasses);
  uint32_t sum[NB * P];
  int y[NB], ya[NB], yh[NB];
  for (int step = 0; step < 3; step++) {
    for (int i = 0; i < NB * P; i++) sum[i] = (uint32_t)((i * 7 + step * 5) % (M * 16 + 1));
    for (int i = 0; i < NB; i++) {
      y[i] = (i * 3 + step) % nclasses;
      /* the active client labels rows 0..2, the holder the rest */
      ya[i] = i < 3 ? y[i] : -1;
      yh[i] = i < 3 ? -1 : y[i];
    }
    double loss_whole;
    float g_whole[NB * P], g_split[NB * P], dl_a[NB * 8], dl_h[NB * 8];
    assert_int_equal(bbvfl_vhead_train(&whole, sum, NULL, y, NB, &loss_whole, g_whole, NULL, &err), 0);
    double la, lh;
    size_t na, nh;
    assert_int_equal(bbvfl_vhead_label_grad(&act, sum, NULL, ya, NB, &la, &na, dl_a, &err), 0);
    assert_int_equal(bbvfl_vhead_label_grad(&holder, sum, NULL, yh, NB, &lh, &nh, dl_h, &err), 0);
    assert_int_equal(na, 3);
    assert_int_equal(nh, NB - 3);
    for (int i = 0; i < 3 * K; i++) assert_true(dl_h[i] == 0.0f);
    for (int i = 3 * K; i < NB * K; i++) assert_true(dl_a[i] == 0.0f);
    for (int i = 0; i < NB * K; i++) dl_a[i] += dl_h[i];
    assert_true(fabs((la + lh) / NB - loss_whole) < 1e-9);
    assert_int_equal(bbvfl_vhead_train_dlogits(&act, sum, NULL, NB, dl_a, g_split, &err), 0);
    /* every row is labelled by exactly one party: the sum is the whole batch's gradient exactly */
    assert_memory_equal(g_split, g_whole, sizeof g_whole);
    assert_memory_equal(act.fh.params, whole.fh.params, whole.fh.nparams * sizeof(float));
    /* the holder follows the posted head parameters */
    uint8_t *be = malloc(4 * bbvfl_vhead_nparams(&act));
    bbvfl_vhead_params_be(&act, be);
    assert_int_equal(bbvfl_vhead_load_params_be(&holder, be, 4 * bbvfl_vhead_nparams(&act), &err), 0);
    free(be);
  }
  bbvfl_vhead_free(&whole);
  bbvfl_vhead_free(&act);
  bbvfl_vhead_free(&holder);
}

static void test_split_binary(void **state) {
  (void)state;
  split_equals_whole(2);
}

static void test_split_multiclass(void **state) {
  (void)state;
  split_equals_whole(3);
}

static void test_unlabelled_and_bad(void **state) {
  (void)state;
  bbvfl_err err = {0};
  bbvfl_vhead v;
  make_head(&v, 2);
  uint32_t sum[NB * P] = {0};
  int y[NB];
  for (int i = 0; i < NB; i++) y[i] = -1;
  float dl[NB], g[NB * P];
  double l;
  size_t n;
  /* nobody's rows: zero gradient, zero loss, no rows */
  assert_int_equal(bbvfl_vhead_label_grad(&v, sum, NULL, y, NB, &l, &n, dl, &err), 0);
  assert_int_equal(n, 0);
  assert_true(l == 0);
  for (int i = 0; i < NB; i++) assert_true(dl[i] == 0.0f);
  y[2] = 5;
  assert_int_equal(bbvfl_vhead_label_grad(&v, sum, NULL, y, NB, &l, &n, dl, &err), -1);
  assert_non_null(strstr(err.msg, "not a class"));
  memset(&err, 0, sizeof err);
  dl[1] = NAN;
  assert_int_equal(bbvfl_vhead_train_dlogits(&v, sum, NULL, NB, dl, g, &err), -1);
  assert_non_null(strstr(err.msg, "not finite"));
  memset(&err, 0, sizeof err);
  sum[0] = 1000; /* above M*b */
  dl[1] = 0;
  assert_int_equal(bbvfl_vhead_train_dlogits(&v, sum, NULL, NB, dl, g, &err), -1);
  assert_non_null(strstr(err.msg, "corrupt"));
  bbvfl_vhead_free(&v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_binary),
      cmocka_unit_test(test_split_multiclass),
      cmocka_unit_test(test_unlabelled_and_bad),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
