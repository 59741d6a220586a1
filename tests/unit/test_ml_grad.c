/* Finite-difference checks of the MLP and fusion-head backward passes, and optimizer basics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/rng.h"
#include "ml/head.h"
#include "ml/mlp.h"
#include "ml/optim.h"

/* loss = sum(out .* R) so dLoss/dout = R */
static double mlp_loss(bbvfl_mlp *m, const float *x, size_t rows, const float *R, float *out) {
  assert_int_equal(bbvfl_mlp_forward(m, x, rows, out, NULL), 0);
  double L = 0;
  size_t n = rows * (size_t)m->dims[m->nlayers];
  for (size_t i = 0; i < n; i++) L += (double)out[i] * R[i];
  return L;
}

static void test_mlp_fd(void **st) {
  (void)st;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 7, 0);
  int dims[] = {4, 6, 5, 3};
  bbvfl_mlp m;
  assert_int_equal(bbvfl_mlp_init(&m, 3, dims, &r, NULL), 0);
  for (size_t i = 0; i < m.nparams; i++) m.params[i] += (float)(0.05 * bbvfl_rng_normal(&r)); /* nonzero biases */
  size_t rows = 5;
  float x[20], R[15], out[15];
  for (int i = 0; i < 20; i++) x[i] = (float)bbvfl_rng_normal(&r);
  for (int i = 0; i < 15; i++) R[i] = (float)bbvfl_rng_normal(&r);
  mlp_loss(&m, x, rows, R, out);
  bbvfl_mlp_backward(&m, R);
  float *g = malloc(m.nparams * sizeof *g);
  memcpy(g, m.grads, m.nparams * sizeof *g);
  int checked = 0, bad = 0;
  for (size_t i = 0; i < m.nparams; i++) {
    float keep = m.params[i];
    const float h = 1e-2f;
    m.params[i] = keep + h;
    double lp = mlp_loss(&m, x, rows, R, out);
    m.params[i] = keep - h;
    double lm = mlp_loss(&m, x, rows, R, out);
    m.params[i] = keep;
    double fd = (lp - lm) / (2 * h);
    double tol = 2e-2 * (fabs(fd) + fabs(g[i])) + 2e-3;
    checked++;
    if (fabs(fd - g[i]) > tol) bad++;
  }
  /* a ReLU kink inside +-h can spoil a rare coordinate; a wrong backward spoils most */
  assert_true(bad <= checked / 50);
  assert_int_equal(checked, (int)m.nparams);
  free(g);
  bbvfl_mlp_free(&m);
}

static void head_fd(int nclasses) {
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 11, (uint64_t)nclasses);
  int P = 5;
  size_t rows = 6;
  bbvfl_fhead h;
  assert_int_equal(bbvfl_fhead_init(&h, P, nclasses, &r, NULL), 0);
  for (size_t i = 0; i < h.nparams; i++) h.params[i] += (float)(0.1 * bbvfl_rng_normal(&r));
  float x[30], dx[30];
  int y[6];
  for (int i = 0; i < 30; i++) x[i] = (float)(2 * bbvfl_rng_normal(&r));
  for (int i = 0; i < 6; i++) y[i] = (int)bbvfl_rng_below(&r, (uint64_t)nclasses);
  double L;
  assert_int_equal(bbvfl_fhead_train_batch(&h, x, y, rows, &L, dx, NULL, NULL), 0);
  float *g = malloc(h.nparams * sizeof *g);
  memcpy(g, h.grads, h.nparams * sizeof *g);
  const float eps = 1e-2f;
  for (size_t i = 0; i < h.nparams; i++) {
    float keep = h.params[i];
    double lp, lm;
    h.params[i] = keep + eps;
    bbvfl_fhead_train_batch(&h, x, y, rows, &lp, NULL, NULL, NULL);
    h.params[i] = keep - eps;
    bbvfl_fhead_train_batch(&h, x, y, rows, &lm, NULL, NULL, NULL);
    h.params[i] = keep;
    double fd = (lp - lm) / (2 * eps);
    assert_true(fabs(fd - g[i]) <= 1e-2 * fabs(fd) + 1e-3);
  }
  for (size_t i = 0; i < 30; i++) {
    float keep = x[i];
    double lp, lm;
    x[i] = keep + eps;
    bbvfl_fhead_train_batch(&h, x, y, rows, &lp, NULL, NULL, NULL);
    x[i] = keep - eps;
    bbvfl_fhead_train_batch(&h, x, y, rows, &lm, NULL, NULL, NULL);
    x[i] = keep;
    double fd = (lp - lm) / (2 * eps);
    assert_true(fabs(fd - dx[i]) <= 1e-2 * fabs(fd) + 1e-3);
  }
  /* predict agrees with the loss: BCE/CE recomputed from the scores */
  float probs[6 * 8];
  assert_int_equal(bbvfl_fhead_predict(&h, x, rows, probs, NULL), 0);
  assert_true(fabs(bbvfl_loss_from_probs(probs, y, rows, nclasses) - L) < 1e-4);
  /* bad label */
  y[0] = nclasses;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_fhead_train_batch(&h, x, y, rows, &L, NULL, NULL, &err), -1);
  free(g);
  bbvfl_fhead_free(&h);
}

static void test_head_fd_binary(void **st) {
  (void)st;
  head_fd(2);
}
static void test_head_fd_multi(void **st) {
  (void)st;
  head_fd(4);
}

static void test_optim(void **st) {
  (void)st;
  /* minimise f(p) = sum (p - 3)^2 with both optimizers */
  for (int k = 0; k < 2; k++) {
    bbvfl_optim_cfg c;
    bbvfl_optim_defaults(&c);
    c.kind = k ? BBVFL_OPT_ADAM : BBVFL_OPT_SGD;
    c.lr = k ? 0.05 : 0.1;
    c.momentum = k ? 0 : 0.5;
    bbvfl_optim o;
    assert_int_equal(bbvfl_optim_init(&o, &c, 3, NULL), 0);
    float p[3] = {0, -1, 10}, g[3];
    for (int t = 0; t < 2000; t++) {
      for (int i = 0; i < 3; i++) g[i] = 2 * (p[i] - 3);
      bbvfl_optim_step(&o, p, g);
    }
    for (int i = 0; i < 3; i++) assert_true(fabsf(p[i] - 3) < 1e-2f);
    bbvfl_optim_free(&o);
  }
  /* plain SGD step is exact, and decay scales the rate per epoch */
  bbvfl_optim_cfg c;
  bbvfl_optim_defaults(&c);
  c.kind = BBVFL_OPT_SGD;
  c.lr = 0.5;
  c.decay = 0.5;
  bbvfl_optim o;
  assert_int_equal(bbvfl_optim_init(&o, &c, 1, NULL), 0);
  float p = 1, g = 2;
  bbvfl_optim_epoch(&o, 2);
  bbvfl_optim_step(&o, &p, &g);
  assert_true(fabsf(p - (1 - 0.125f * 2)) < 1e-7f);
  bbvfl_optim_free(&o);
  c.lr = -1;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_optim_init(&o, &c, 1, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_mlp_fd), cmocka_unit_test(test_head_fd_binary),
                                     cmocka_unit_test(test_head_fd_multi), cmocka_unit_test(test_optim)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
