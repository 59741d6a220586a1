/* Row mode's encoder (`--encoder pca`, dp/rowdp.h): what makes one release per row enough.
 *  - the accountant's encoder terms against tests/reference/encoder_pld.py (exact PBM orders by
 *    summation, the Gaussian part of the privacy loss integrated numerically): the RDP sum and the
 *    exact composition of the DP scaling, the DP-PCA and the one release; epochs do not count;
 *  - the eigen-decomposition and the DP-PCA encoder (dp/dppca.h): the known top direction, its
 *    sign rule and scale, refusals;
 *  - the party (core/party.h): a row's release is drawn once and re-sent by every later forward,
 *    training or evaluation, and after a checkpoint reload; the model never steps;
 *  - the whole mode off chain on Breast Cancer at the tuned epsilon-8 setting. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_skip.h"

#include "dp/dppca.h"
#include "dp/privacy.h"
#include "ml/data.h"
#include "offchain/offchain.h"
#include "core/party.h"

static bbvfl_privacy_in enc_in(void) {
  bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = 2, .beta = 0.42727, .P = 1, .M = 5, .epochs = 10,
                         .delta = 1e-5, .rowdp = {1, 1, 2, 2, 1, 4}};
  return in;
}

static void close_to(double got, double want, double rel, const char *what) {
  if (!(fabs(got - want) <= rel * want)) fail_msg("%s: %.12g, reference %.12g", what, got, want);
}

static void test_encoder_accountant(void **st) {
  (void)st;
  bbvfl_privacy_in in = enc_in();
  bbvfl_privacy p;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.end_to_end && p.encoder);
  /* printed by: python3 tests/reference/encoder_pld.py --b 2 --beta 0.42727 --P 1 --M 5
     --scale-eps 2 --z 4 */
  close_to(p.row_feature.rdp, 8.09464870251, 1e-8, "row level, RDP");
  close_to(p.row_feature.pld, 7.99998369662, 1e-7, "row level, exact composition");
  close_to(p.row_sample.rdp, 37.8068172573, 1e-8, "sample level, RDP");
  close_to(p.row_sample.pld, 37.5204207021, 1e-7, "sample level, exact composition");
  assert_string_equal(p.row_feature.method, "pld");
  assert_true(p.row_feature.epsilon == p.row_feature.pld);
  /* each row is released once: the epochs (the head's) do not count */
  double e10 = p.row_feature.epsilon;
  in.epochs = 1000;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.row_feature.epsilon == e10);
  /* the DP-SGD mode with the same release parameters pays per epoch */
  in.rowdp.encoder = 0;
  in.epochs = 10;
  bbvfl_privacy d;
  assert_int_equal(bbvfl_privacy_compute(&in, &d, NULL, &err), 0);
  assert_false(d.encoder);
  assert_true(d.row_feature.epsilon > 3 * e10);
  /* every term counts: less DP-PCA noise, a larger scaling budget, a larger beta: a larger epsilon */
  in = enc_in();
  in.rowdp.pca_noise = 2;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.row_feature.epsilon > e10);
  in = enc_in();
  in.rowdp.scale_eps = 3;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.row_feature.epsilon > e10 + 0.5);
  in = enc_in();
  in.beta = 0.45;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.row_feature.epsilon > e10);
  /* calibration reaches the target through the exact composition */
  in = enc_in();
  double beta;
  assert_int_equal(bbvfl_privacy_solve_beta(&in, 8, &beta, &err), 0);
  in.beta = beta;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), 0);
  assert_true(p.row_feature.epsilon <= 8 && p.row_feature.epsilon > 7.99);
  /* the words say which mode */
  char line[1024];
  bbvfl_privacy_line(&p, line, sizeof line);
  assert_non_null(strstr(line, "DP-PCA encoder, each row released once"));
  assert_non_null(strstr(bbvfl_privacy_scope(&p), "the one PBM release of the row"));
  /* refusals: no DP-PCA noise; a Gaussian release */
  in = enc_in();
  in.rowdp.pca_noise = 0;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), -1);
  in = enc_in();
  in.kind = BBVFL_MECH_GAUSSIAN;
  in.clip = 1;
  in.sigma = 1;
  assert_int_equal(bbvfl_privacy_compute(&in, &p, NULL, &err), -1);
}

static void test_eigen_and_pca(void **st) {
  (void)st;
  /* a = 3 u u^T + I, u = (1, 2, 2)/3: eigenvalues 4, 1, 1, top vector +-u */
  double u[3] = {1.0 / 3, 2.0 / 3, 2.0 / 3}, a[9], lam[3], v[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) a[i * 3 + j] = 3 * u[i] * u[j] + (i == j);
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_sym_eigen(a, 3, lam, v, &err), 0);
  assert_true(fabs(lam[0] - 4) < 1e-12 && fabs(lam[1] - 1) < 1e-12 && fabs(lam[2] - 1) < 1e-12);
  double dot = 0;
  for (int i = 0; i < 3; i++) dot += v[i * 3] * u[i];
  assert_true(fabs(fabs(dot) - 1) < 1e-12);
  /* sign features of d = 4 columns driven by one factor, and one column reversed */
  enum { N = 4000, D = 4 };
  float *z = malloc(N * D * sizeof *z), W[D * 2];
  assert_non_null(z);
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 7, 1);
  for (size_t i = 0; i < N; i++) {
    double f = bbvfl_rng_normal(&r);
    for (size_t j = 0; j < D; j++) {
      double x = f + 0.5 * bbvfl_rng_normal(&r);
      z[i * D + j] = (float)((j == 3 ? -x : x) >= 0 ? 1 : -1);
    }
  }
  bbvfl_rng nr;
  bbvfl_rng_init_seeded(&nr, 7, 2);
  assert_int_equal(bbvfl_dp_pca_encoder(z, N, D, 2, 2.0, &nr, W, &err), 0);
  /* the top direction: the first three columns alike, the fourth opposite; loadings sum >= 0 */
  double w0 = W[0 * 2], nrm = 0, sum = 0;
  for (size_t j = 0; j < D; j++) {
    nrm += (double)W[j * 2] * W[j * 2];
    sum += W[j * 2];
  }
  assert_true(sum >= 0 && w0 > 0);
  assert_true(fabs(W[1 * 2] - w0) < 0.05 * fabs(w0) && fabs(W[2 * 2] - w0) < 0.05 * fabs(w0));
  assert_true(fabs(W[3 * 2] + w0) < 0.05 * fabs(w0));
  /* its scale: the projection of the rows has standard deviation near KAPPA^-1 */
  double m2 = 0;
  for (size_t i = 0; i < N; i++) {
    double pz = 0;
    for (size_t j = 0; j < D; j++) pz += (double)W[j * 2] * z[i * D + j];
    m2 += pz * pz;
  }
  double sd = sqrt(m2 / N);
  assert_true(fabs(sd - 1 / BBVFL_DPPCA_KAPPA) < 0.05 / BBVFL_DPPCA_KAPPA);
  (void)nrm;
  /* refusals */
  assert_int_equal(bbvfl_dp_pca_encoder(z, N, D, 5, 2.0, &nr, W, &err), -1);
  assert_int_equal(bbvfl_dp_pca_encoder(z, N, D, 1, 0.0, &nr, W, &err), -1);
  assert_int_equal(bbvfl_dp_pca_encoder(z, 0, D, 1, 2.0, &nr, W, &err), -1);
  free(z);
}

static void make_party(bbvfl_party *p, const float *cols, size_t n, size_t d, const size_t *train, size_t ntr) {
  bbvfl_party_cfg c = {.index = 1, .P = 1, .nhidden = 2, .hidden = {8, 8}, .seed = 3, .seeded_noise = 1,
                       .rowdp = {1, 1, 2, 1, 1, 2}, .train_rows = train, .n_train = ntr};
  c.mech = (bbvfl_mech){.kind = BBVFL_MECH_PBM, .b = 4, .beta = 0.2, .C = 1};
  bbvfl_optim_defaults(&c.opt);
  c.opt.lr = 0.5;
  bbvfl_err err = {0};
  if (bbvfl_party_init(p, &c, cols, n, d, &err) != 0) fail_msg("%s", err.msg);
}

static void test_encoder_party(void **st) {
  (void)st;
  enum { N = 40, D = 3, NT = 30 };
  float cols[N * D];
  size_t train[NT], rows[N];
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 9, 1);
  for (size_t i = 0; i < N * D; i++) cols[i] = bbvfl_rng_uniform(&r) < 0.5 ? -1.0f : 1.0f;
  for (size_t i = 0; i < NT; i++) train[i] = i;
  bbvfl_party p;
  make_party(&p, cols, N, D, train, NT);
  assert_true(p.frozen);
  assert_int_equal(p.mlp.nlayers, 1); /* one linear layer whatever nhidden says */
  float *w0 = malloc(p.mlp.nparams * sizeof *w0);
  assert_non_null(w0);
  memcpy(w0, p.mlp.params, p.mlp.nparams * sizeof *w0);
  /* first releases: rows 0..9 (training), then 30..39 (evaluation) */
  uint8_t q1[N], q2[N], q3[N];
  bbvfl_err err = {0};
  for (size_t i = 0; i < 10; i++) rows[i] = i;
  assert_int_equal(bbvfl_party_forward_train(&p, rows, 10, q1, NULL, &err), 0);
  float g[10];
  for (size_t i = 0; i < 10; i++) g[i] = 1.0f;
  assert_int_equal(bbvfl_party_apply(&p, g, 1, 10, &err), 0);
  assert_memory_equal(p.mlp.params, w0, p.mlp.nparams * sizeof *w0); /* frozen */
  assert_int_equal(p.steps, 0);
  for (size_t i = 0; i < 10; i++) rows[i] = 30 + i;
  assert_int_equal(bbvfl_party_forward_eval(&p, rows, 10, q1 + 10, NULL, &err), 0);
  /* the same rows again, in another order and batch: the same bytes each */
  for (size_t i = 0; i < 20; i++) rows[i] = i < 10 ? 39 - i : 19 - i;
  assert_int_equal(bbvfl_party_forward_train(&p, rows, 20, q2, NULL, &err), 0);
  for (size_t i = 0; i < 20; i++) {
    size_t at = rows[i] < 10 ? rows[i] : 10 + rows[i] - 30;
    assert_int_equal(q2[i], q1[at]);
  }
  /* the releases are not constant: the noise was drawn (b = 4 trials per row, 20 rows) */
  int differ = 0;
  for (size_t i = 1; i < 20; i++) differ |= q1[i] != q1[0];
  assert_true(differ);
  /* a checkpoint keeps them: a restarted party re-sends the same bytes */
  char path[] = "/tmp/bbvfl-encoder-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(bbvfl_party_save(&p, path, &err), 0);
  bbvfl_party p2;
  make_party(&p2, cols, N, D, train, NT);
  assert_int_equal(bbvfl_party_load(&p2, path, &err), 0);
  for (size_t i = 0; i < 10; i++) rows[i] = i;
  assert_int_equal(bbvfl_party_forward_eval(&p2, rows, 10, q3, NULL, &err), 0);
  assert_memory_equal(q3, q1, 10);
  unlink(path);
  bbvfl_party_free(&p2);
  bbvfl_party_free(&p);
  free(w0);
  /* refusals: the encoder needs PBM and the training rows */
  bbvfl_party_cfg c = {.index = 0, .P = 1, .seed = 3, .seeded_noise = 1, .rowdp = {1, 1, 2, 1, 1, 2}};
  c.mech = (bbvfl_mech){.kind = BBVFL_MECH_PBM, .b = 4, .beta = 0.2, .C = 1};
  bbvfl_optim_defaults(&c.opt);
  assert_int_equal(bbvfl_party_init(&p, &c, cols, N, D, &err), -1);
  c.train_rows = train;
  c.n_train = NT;
  c.mech.kind = BBVFL_MECH_NPQ;
  assert_int_equal(bbvfl_party_init(&p, &c, cols, N, D, &err), -1);
}

static void test_encoder_trains(void **st) {
  (void)st;
  const char *src = getenv("BBVFL_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/breast_cancer.csv", src ? src : ".");
  bbvfl_dataset ds;
  bbvfl_err err = {0};
  if (bbvfl_csv_load(path, NULL, &ds, &err) != 0) fail_msg("%s", err.msg);
  /* a setting at row-level epsilon 8 (the accountant test above pins its epsilon) */
  bbvfl_offchain_cfg c;
  bbvfl_offchain_defaults(&c);
  c.epochs = 10;
  c.P = 1;
  c.mech.b = 2;
  c.mech.beta = 0.42727;
  c.opt.lr = 0.01;
  c.rowdp = (bbvfl_rowdp){1, 1, 2, 2, 1, 4};
  double a[3];
  for (int s = 0; s < 3; s++) {
    c.seed = (uint64_t)s + 1;
    c.split_seed = 1;
    bbvfl_offchain_result res;
    if (bbvfl_offchain_train(&ds, &c, &res, &err) != 0) fail_msg("%s", err.msg);
    a[s] = res.per_epoch[res.epochs - 1].auroc;
    bbvfl_offchain_result_free(&res);
  }
  bbvfl_dataset_free(&ds);
  double med = a[0] < a[1] ? (a[1] < a[2] ? a[1] : (a[0] < a[2] ? a[2] : a[0]))
                           : (a[0] < a[2] ? a[0] : (a[1] < a[2] ? a[2] : a[1]));
  if (!(med > 0.93)) fail_msg("median test AUROC %.4f (%.4f %.4f %.4f), expected above 0.93", med, a[0], a[1], a[2]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_encoder_accountant),
      cmocka_unit_test(test_eigen_and_pca),
      cmocka_unit_test(test_encoder_party),
      cmocka_unit_test(test_encoder_trains),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
