/* Vertical logistic regression and its quasi-Newton optimizer: the loss gradients and the
 * Hessian-vector product against finite differences, the two-loop recursion against the dense
 * inverse-Hessian update, and the Breast Cancer runs the model family is for (full batch, M = 5,
 * NPQ): LR+SQN reaches test AUROC >= 0.99 within 30 rounds and needs at least 3x fewer
 * aggregation rounds (curvature rounds included) than LR+SGD at the same step size to the same
 * test loss. (Against centralised logistic regression: tests/cli/test_lr_reference.sh.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/rng.h"
#include "ml/data.h"
#include "ml/lr.h"
#include "ml/sqn.h"
#include "core/lr_client.h"
#include "offchain/lr_train.h"
#include "offchain/offchain.h"
#include "core/setup.h"

/* mean loss of z = X w + b for the rows 0..rows-1 */
static double loss_at(bbvfl_loss_kind kind, const float *x, size_t d, const size_t *idx, size_t rows, const float *w,
                      const float *b, int K, const int *y, float *z, float *dz) {
  bbvfl_lr_partial(x, d, idx, rows, w, K, z);
  for (size_t i = 0; i < rows * (size_t)K; i++) z[i] += b[i % (size_t)K];
  return bbvfl_lr_loss(kind, z, y, rows, K, dz, NULL);
}

typedef struct {
  size_t rows, d;
  int K;
  float x[8 * 5], w[5 * 3], b[3];
  size_t idx[8];
  int y[8];
} problem;

static void make(problem *p, int K, uint64_t seed) {
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, seed, 0);
  p->rows = 8;
  p->d = 5;
  p->K = K;
  for (size_t i = 0; i < p->rows * p->d; i++) p->x[i] = (float)bbvfl_rng_normal(&r);
  for (size_t i = 0; i < p->d * (size_t)K; i++) p->w[i] = (float)(0.5 * bbvfl_rng_normal(&r));
  for (int k = 0; k < K; k++) p->b[k] = (float)(0.3 * bbvfl_rng_normal(&r));
  for (size_t i = 0; i < p->rows; i++) {
    p->idx[i] = p->rows - 1 - i; /* a permutation: the gather must follow idx */
    p->y[i] = (int)bbvfl_rng_below(&r, K == 1 ? 2 : (uint64_t)K);
  }
}

/* the gradient in w: X^T dLoss/dz */
static void grad_w(bbvfl_loss_kind kind, const problem *p, const float *w, float *g) {
  float z[24], dz[24];
  loss_at(kind, p->x, p->d, p->idx, p->rows, w, p->b, p->K, p->y, z, dz);
  bbvfl_lr_xt(p->x, p->d, p->idx, p->rows, dz, p->K, g);
}

static void check_grad(bbvfl_loss_kind kind, int K) {
  problem p;
  make(&p, K, 11 + (uint64_t)K);
  float g[15], z[24];
  grad_w(kind, &p, p.w, g);
  size_t n = p.d * (size_t)K;
  for (size_t j = 0; j < n; j++) {
    float w1[15], w2[15];
    memcpy(w1, p.w, sizeof w1);
    memcpy(w2, p.w, sizeof w2);
    const float h = 1e-2f;
    w1[j] += h;
    w2[j] -= h;
    double fd = (loss_at(kind, p.x, p.d, p.idx, p.rows, w1, p.b, K, p.y, z, NULL) -
                 loss_at(kind, p.x, p.d, p.idx, p.rows, w2, p.b, K, p.y, z, NULL)) /
                (2.0 * h);
    assert_true(fabs(fd - g[j]) <= 2e-3 * (1 + fabs(fd)));
  }
  /* the bias: the sum of dLoss/dz over the rows */
  float dz[24];
  loss_at(kind, p.x, p.d, p.idx, p.rows, p.w, p.b, K, p.y, z, dz);
  for (int k = 0; k < K; k++) {
    double gb = 0;
    for (size_t i = 0; i < p.rows; i++) gb += dz[i * (size_t)K + (size_t)k];
    float b1[3], b2[3];
    memcpy(b1, p.b, sizeof b1);
    memcpy(b2, p.b, sizeof b2);
    b1[k] += 1e-2f;
    b2[k] -= 1e-2f;
    double fd = (loss_at(kind, p.x, p.d, p.idx, p.rows, p.w, b1, K, p.y, z, NULL) -
                 loss_at(kind, p.x, p.d, p.idx, p.rows, p.w, b2, K, p.y, z, NULL)) /
                2e-2;
    assert_true(fabs(fd - gb) <= 2e-3 * (1 + fabs(fd)));
  }
}

static void test_grad_fd(void **st) {
  (void)st;
  check_grad(BBVFL_LOSS_LOGISTIC, 1);
  check_grad(BBVFL_LOSS_TAYLOR, 1);
  check_grad(BBVFL_LOSS_LOGISTIC, 3);
}

/* H s = X^T r, r = d2L/dz2 (X s) / rows, against the central difference of the gradient along s */
static void check_hvp(bbvfl_loss_kind kind, int K) {
  problem p;
  make(&p, K, 23 + (uint64_t)K);
  size_t n = p.d * (size_t)K;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 5, 1);
  float s[15], h[24], z[24], rr[24], hv[15];
  for (size_t j = 0; j < n; j++) s[j] = (float)bbvfl_rng_normal(&r);
  loss_at(kind, p.x, p.d, p.idx, p.rows, p.w, p.b, K, p.y, z, NULL);
  bbvfl_lr_partial(p.x, p.d, p.idx, p.rows, s, K, h); /* the aggregated h_i (one client here) */
  bbvfl_lr_hvp_rows(kind, z, h, p.rows, K, (double)p.rows, rr);
  bbvfl_lr_xt(p.x, p.d, p.idx, p.rows, rr, K, hv);
  const float e = 1e-2f;
  float w1[15], w2[15], g1[15], g2[15];
  for (size_t j = 0; j < n; j++) {
    w1[j] = p.w[j] + e * s[j];
    w2[j] = p.w[j] - e * s[j];
  }
  grad_w(kind, &p, w1, g1);
  grad_w(kind, &p, w2, g2);
  for (size_t j = 0; j < n; j++) {
    double fd = (g1[j] - g2[j]) / (2.0 * e);
    assert_true(fabs(fd - hv[j]) <= 5e-3 * (1 + fabs(fd)));
  }
}

static void test_hvp_fd(void **st) {
  (void)st;
  check_hvp(BBVFL_LOSS_LOGISTIC, 1);
  check_hvp(BBVFL_LOSS_TAYLOR, 1);
  check_hvp(BBVFL_LOSS_LOGISTIC, 3);
}

/* The two-loop recursion against H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T over the
   kept pairs, H0 = (s^T y / y^T y) I of the newest: 6 pairs into a memory of 4 (the ring wraps),
   one pair of negative curvature skipped. */
static void test_sqn_dense(void **st) {
  (void)st;
  enum { N = 6, MEM = 4, PAIRS = 6 };
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 3, 2);
  double A[N][N], Bm[N][N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) Bm[i][j] = bbvfl_rng_normal(&r);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (i == j) ? 0.5 : 0;
      for (int k = 0; k < N; k++) A[i][j] += Bm[k][i] * Bm[k][j]; /* SPD */
    }
  bbvfl_sqn q;
  assert_int_equal(bbvfl_sqn_init(&q, N, MEM, NULL), 0);
  float S[PAIRS][N], Y[PAIRS][N];
  for (int p = 0; p < PAIRS; p++) {
    for (int i = 0; i < N; i++) S[p][i] = (float)bbvfl_rng_normal(&r);
    for (int i = 0; i < N; i++) {
      double a = 0;
      for (int j = 0; j < N; j++) a += A[i][j] * S[p][j];
      Y[p][i] = (float)a;
    }
    assert_int_equal(bbvfl_sqn_push(&q, S[p], Y[p]), 1);
  }
  float neg[N];
  for (int i = 0; i < N; i++) neg[i] = -S[0][i];
  assert_int_equal(bbvfl_sqn_push(&q, S[0], neg), 0); /* y^T s < 0: skipped, the memory unchanged */
  assert_int_equal(q.count, MEM);
  /* dense */
  double H[N][N], T[N][N], U[N][N];
  const float *sn = S[PAIRS - 1], *yn = Y[PAIRS - 1];
  double sy = 0, yy = 0;
  for (int i = 0; i < N; i++) {
    sy += (double)sn[i] * yn[i];
    yy += (double)yn[i] * yn[i];
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) H[i][j] = i == j ? sy / yy : 0;
  for (int p = PAIRS - MEM; p < PAIRS; p++) {
    double rho = 0;
    for (int i = 0; i < N; i++) rho += (double)S[p][i] * Y[p][i];
    rho = 1 / rho;
    double V[N][N]; /* I - rho y s^T */
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) V[i][j] = (i == j) - rho * Y[p][i] * S[p][j];
    for (int i = 0; i < N; i++) /* T = V^T H */
      for (int j = 0; j < N; j++) {
        T[i][j] = 0;
        for (int k = 0; k < N; k++) T[i][j] += V[k][i] * H[k][j];
      }
    for (int i = 0; i < N; i++) /* U = T V + rho s s^T */
      for (int j = 0; j < N; j++) {
        U[i][j] = rho * S[p][i] * S[p][j];
        for (int k = 0; k < N; k++) U[i][j] += T[i][k] * V[k][j];
      }
    memcpy(H, U, sizeof H);
  }
  float g[N], d[N];
  for (int i = 0; i < N; i++) g[i] = (float)bbvfl_rng_normal(&r);
  bbvfl_sqn_apply(&q, g, d);
  for (int i = 0; i < N; i++) {
    double want = 0;
    for (int j = 0; j < N; j++) want += H[i][j] * g[j];
    assert_true(fabs(want - d[i]) <= 1e-4 * (1 + fabs(want)));
  }
  /* the secant equation of the newest pair: H y = s */
  bbvfl_sqn_apply(&q, Y[PAIRS - 1], d);
  for (int i = 0; i < N; i++) assert_true(fabs(d[i] - S[PAIRS - 1][i]) <= 1e-3 * (1 + fabs(S[PAIRS - 1][i])));
  bbvfl_sqn_free(&q);
}


/* One H over two blocks (--sqn-pairs global): the _multi functions over a split of the vector
   (2 + 4) equal the one-block recursion over the whole vector and the dense update; a pair
   whose curvature is negative is skipped by both blocks. */
static void test_sqn_multi_dense(void **st) {
  (void)st;
  enum { N = 6, MEM = 3, PAIRS = 5, N0 = 2 };
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 5, 1);
  double A[N][N], Bm[N][N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) Bm[i][j] = bbvfl_rng_normal(&r);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (i == j) ? 0.3 : 0;
      for (int k = 0; k < N; k++) A[i][j] += Bm[k][i] * Bm[k][j];
    }
  bbvfl_sqn whole, b0, b1;
  assert_int_equal(bbvfl_sqn_init(&whole, N, MEM, NULL), 0);
  assert_int_equal(bbvfl_sqn_init(&b0, N0, MEM, NULL), 0);
  assert_int_equal(bbvfl_sqn_init(&b1, N - N0, MEM, NULL), 0);
  bbvfl_sqn *q[2] = {&b0, &b1};
  float S[PAIRS][N], Y[PAIRS][N];
  for (int p = 0; p < PAIRS; p++) {
    for (int i = 0; i < N; i++) S[p][i] = (float)bbvfl_rng_normal(&r);
    for (int i = 0; i < N; i++) {
      double a = 0;
      for (int j = 0; j < N; j++) a += A[i][j] * S[p][j];
      Y[p][i] = (float)a;
    }
    const float *sp[2] = {S[p], S[p] + N0}, *yp[2] = {Y[p], Y[p] + N0};
    assert_int_equal(bbvfl_sqn_push(&whole, S[p], Y[p]), 1);
    assert_int_equal(bbvfl_sqn_push_multi(q, 2, sp, yp), 1);
  }
  float neg[N];
  for (int i = 0; i < N; i++) neg[i] = -Y[0][i];
  const float *sn[2] = {S[0], S[0] + N0}, *yn[2] = {neg, neg + N0};
  assert_int_equal(bbvfl_sqn_push_multi(q, 2, sn, yn), 0);
  assert_int_equal(b0.count, MEM);
  assert_int_equal(b1.count, MEM);
  /* the dense reference over the kept pairs */
  double H[N][N], T[N][N], U[N][N];
  double sy = 0, yy = 0;
  for (int i = 0; i < N; i++) {
    sy += (double)S[PAIRS - 1][i] * Y[PAIRS - 1][i];
    yy += (double)Y[PAIRS - 1][i] * Y[PAIRS - 1][i];
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) H[i][j] = i == j ? sy / yy : 0;
  for (int p = PAIRS - MEM; p < PAIRS; p++) {
    double rho = 0;
    for (int i = 0; i < N; i++) rho += (double)S[p][i] * Y[p][i];
    rho = 1 / rho;
    double V[N][N];
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) V[i][j] = (i == j) - rho * Y[p][i] * S[p][j];
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        T[i][j] = 0;
        for (int k = 0; k < N; k++) T[i][j] += V[k][i] * H[k][j];
      }
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        U[i][j] = rho * S[p][i] * S[p][j];
        for (int k = 0; k < N; k++) U[i][j] += T[i][k] * V[k][j];
      }
    memcpy(H, U, sizeof H);
  }
  float g[N], dw[N], d[N];
  for (int i = 0; i < N; i++) g[i] = (float)bbvfl_rng_normal(&r);
  bbvfl_sqn_apply(&whole, g, dw);
  const float *gp[2] = {g, g + N0};
  float *dp[2] = {d, d + N0};
  bbvfl_sqn_apply_multi(q, 2, gp, dp);
  for (int i = 0; i < N; i++) {
    double want = 0;
    for (int j = 0; j < N; j++) want += H[i][j] * g[j];
    assert_true(fabs(want - d[i]) <= 1e-4 * (1 + fabs(want)));
    assert_true(fabs(dw[i] - d[i]) <= 1e-5 * (1 + fabs(dw[i])));
  }
  /* block by block is another H: it differs (the coupling the global H keeps) */
  float d0[N0], d1[N - N0];
  bbvfl_sqn_free(&b0);
  bbvfl_sqn_free(&b1);
  assert_int_equal(bbvfl_sqn_init(&b0, N0, MEM, NULL), 0);
  assert_int_equal(bbvfl_sqn_init(&b1, N - N0, MEM, NULL), 0);
  for (int p = 0; p < PAIRS; p++) {
    bbvfl_sqn_push(&b0, S[p], Y[p]);
    bbvfl_sqn_push(&b1, S[p] + N0, Y[p] + N0);
  }
  bbvfl_sqn_apply(&b0, g, d0);
  bbvfl_sqn_apply(&b1, g + N0, d1);
  double diff = 0;
  for (int i = 0; i < N0; i++) diff += fabs(d0[i] - d[i]);
  for (int i = 0; i < N - N0; i++) diff += fabs(d1[i] - d[N0 + i]);
  assert_true(diff > 1e-3);
  /* with no pair: h0 g */
  bbvfl_sqn e;
  assert_int_equal(bbvfl_sqn_init(&e, N, MEM, NULL), 0);
  e.h0 = 0.25;
  bbvfl_sqn_apply(&e, g, d);
  for (int i = 0; i < N; i++) assert_true(d[i] == (float)(g[i] * 0.25));
  bbvfl_sqn_free(&e);
  bbvfl_sqn_free(&whole);
  bbvfl_sqn_free(&b0);
  bbvfl_sqn_free(&b1);
}

/* No cap by default: a pair that makes |H g| = 100 |g| moves the weight by lr * 100; with
   --sqn-cap 10 by lr * 10. */
static void test_sqn_no_cap(void **st) {
  (void)st;
  bbvfl_offchain_cfg c;
  bbvfl_offchain_defaults(&c);
  c.model = BBVFL_MODEL_LR;
  c.opt.kind = BBVFL_OPT_SQN;
  c.opt.lr = 0.5;
  for (int capped = 0; capped < 2; capped++) {
    c.sqn_cap = capped ? 10 : 0;
    bbvfl_lr_block b;
    assert_int_equal(bbvfl_lr_block_init(&b, 2, &c, NULL), 0);
    const float s[2] = {1, 0}, y[2] = {0.01f, 0};
    assert_int_equal(bbvfl_sqn_push(&b.sqn, s, y), 1);
    b.g[0] = 1;
    b.g[1] = 0;
    bbvfl_lr_block_step(&b);
    double want = capped ? -0.5 * 10 : -0.5 * 100;
    assert_true(fabs(b.w[0] - want) <= 1e-4 * fabs(want));
    assert_true(b.w[1] == 0);
    bbvfl_lr_block_free(&b);
  }
}

/* The local pair's curvature from the posted gradient alone equals the one from the logits:
   logistic (K = 1), softmax (K = 3), taylor; the gradient scaled by 1/lb as posted. */
static void test_hvp_from_grad(void **st) {
  (void)st;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, 9, 4);
  enum { ROWS = 7 };
  const double lb = 20;
  for (int kind = 0; kind < 3; kind++) {
    int K = kind == 1 ? 3 : 1;
    bbvfl_loss_kind lk = kind == 2 ? BBVFL_LOSS_TAYLOR : BBVFL_LOSS_LOGISTIC;
    float z[ROWS * 3], h[ROWS * 3], g[ROWS * 3], r1[ROWS * 3], r2[ROWS * 3];
    int y[ROWS];
    for (int i = 0; i < ROWS; i++) y[i] = i % (K == 1 ? 2 : K);
    for (int i = 0; i < ROWS * K; i++) {
      z[i] = (float)(2 * bbvfl_rng_normal(&r));
      h[i] = (float)bbvfl_rng_normal(&r);
    }
    bbvfl_lr_loss_sum(lk, z, y, ROWS, K, 1.0 / lb, g, NULL);
    bbvfl_lr_hvp_rows(lk, z, h, ROWS, K, 5.0, r1);
    bbvfl_lr_hvp_rows_grad(lk, g, lb, h, ROWS, K, 5.0, r2);
    for (int i = 0; i < ROWS * K; i++) assert_true(fabs(r1[i] - r2[i]) <= 1e-5 * (1 + fabs(r1[i])));
  }
}

static bbvfl_dataset DS;

static int setup(void **st) {
  (void)st;
  const char *src = getenv("BBVFL_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/breast_cancer.csv", src ? src : ".");
  bbvfl_err err = {0};
  if (bbvfl_csv_load(path, NULL, &DS, &err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  return 0;
}

static int teardown(void **st) {
  (void)st;
  bbvfl_dataset_free(&DS);
  return 0;
}

/* Breast Cancer, M = 5, NPQ, full batch, the L2 strength of sklearn's default C = 1 */
static void bc_cfg(bbvfl_offchain_cfg *c, bbvfl_opt_kind opt, int epochs) {
  bbvfl_offchain_defaults(c);
  c->model = BBVFL_MODEL_LR;
  c->mech.kind = BBVFL_MECH_NPQ;
  c->B = 0;
  c->P = 1;
  c->epochs = epochs;
  c->opt.kind = opt;
  c->opt.lr = 1.0;
  bbvfl_vfl_data v;
  assert_int_equal(bbvfl_vfl_data_prepare(&DS, c->seed, c->test_frac, c->M, NULL, &v, NULL), 0);
  c->l2 = 1.0 / (double)v.n_train;
  bbvfl_vfl_data_free(&v);
}

/* rounds (entries of the objective after the start) to a 0.1% gap of fstar; 0: never */
static size_t rounds_to_gap(const bbvfl_offchain_result *r, double fstar) {
  for (size_t k = 0; k < r->n_objective; k++)
    if ((r->objective[k] - fstar) / fstar <= 1e-3) return k;
  return 0;
}

static double min_objective(const bbvfl_offchain_result *r) {
  double m = INFINITY;
  for (size_t k = 0; k < r->n_objective; k++) m = r->objective[k] < m ? r->objective[k] : m;
  return m;
}

/* sqn with local pairs (the default) and no cap (the default) at its best step on Breast Cancer,
   0.5 (docs/LR.md): the objective of every round, a 0.1% gap within 45 rounds (no curvature
   round), fewer rounds than sgd at its best step of 1..64 (16), AUROC >= 0.99 after 30; the
   optimum from 300 rounds of both. */
static void test_bc_sqn(void **st) {
  (void)st;
  bbvfl_offchain_cfg c;
  bc_cfg(&c, BBVFL_OPT_SQN, 300);
  c.opt.lr = 0.5;
  c.track_objective = 1;
  assert_int_equal(c.sqn_pairs, BBVFL_SQN_PAIRS_LOCAL); /* the default */
  assert_true(c.sqn_cap == 0);
  bbvfl_offchain_result rq;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_offchain_train(&DS, &c, &rq, &err), 0);
  assert_int_equal(rq.T, 1); /* full batch: one training round per epoch */
  assert_true(rq.per_epoch[29].auroc >= 0.99);
  assert_int_equal(rq.curv_rounds, 0);
  assert_int_equal(rq.n_objective, 1 + 300); /* the start and every training round */
  assert_true(fabs(rq.objective[0] - log(2.0)) < 1e-6); /* zero weights */
  /* monotone-ish: never above the start after it, at most a few rises, none of more than 5% */
  int rises = 0;
  for (size_t k = 1; k < rq.n_objective; k++) {
    assert_true(rq.objective[k] < rq.objective[0]);
    if (rq.objective[k] > rq.objective[k - 1] * (1 + 1e-6)) {
      rises++;
      assert_true(rq.objective[k] <= rq.objective[k - 1] * 1.05);
    }
  }
  assert_true(rises <= 10);
  int P = 0, rel = 0;
  bbvfl_lr_releases(&c, rq.n_train, 2, &P, &rel);
  assert_int_equal(P, 1);
  assert_int_equal(rel, 300); /* local pairs release nothing more */
  bbvfl_offchain_cfg cs;
  bc_cfg(&cs, BBVFL_OPT_SGD, 300);
  cs.opt.lr = 16;
  cs.track_objective = 1;
  bbvfl_offchain_result rs;
  assert_int_equal(bbvfl_offchain_train(&DS, &cs, &rs, &err), 0);
  double fq = min_objective(&rq), fs = min_objective(&rs), fstar = fq < fs ? fq : fs;
  print_message("optimum: sqn %.9f, sgd %.9f\n", fq, fs);
  assert_true(fabs(fq - fs) <= 1e-3 * fstar); /* both came within the gap of one optimum */
  size_t nq = rounds_to_gap(&rq, fstar), ns = rounds_to_gap(&rs, fstar);
  print_message("0.1%% objective gap: sqn %zu rounds, sgd (lr 16) %zu\n", nq, ns);
  assert_true(nq > 0 && nq <= 45);
  assert_true(ns > nq);
  /* the default step 2/(M+1) = 1/3, the only fixed step stable on any table (the per-block H is
     a damped block-Jacobi iteration: stable below 2/lam_max(P A), lam_max <= M+1; Breast
     Cancer's lam_max is 3.76, tools/sqn_block_bound.py): within 70 rounds (63 on this seed, about
     tuned sgd's 61; the medians over seeds 1-5 are in docs/LR.md), monotone, and as slow against
     lr 0.5 as that iteration predicts (rounds ~ 1/lr: 1.5x;
     docs/LR.md "Why the default step needs more than 45 rounds") */
  bbvfl_offchain_cfg cd;
  bc_cfg(&cd, BBVFL_OPT_SQN, 150);
  cd.opt.lr = bbvfl_lr_sqn_default_lr(BBVFL_LOSS_LOGISTIC, cd.M);
  assert_true(fabs(cd.opt.lr - 1.0 / 3) < 1e-12);
  cd.track_objective = 1;
  bbvfl_offchain_result rd;
  assert_int_equal(bbvfl_offchain_train(&DS, &cd, &rd, &err), 0);
  assert_true(min_objective(&rd) >= fstar * (1 - 1e-6)); /* the same optimum */
  size_t nd = rounds_to_gap(&rd, fstar);
  print_message("0.1%% objective gap at the default step 1/3: %zu rounds (lr 0.5: %zu)\n", nd, nq);
  assert_true(nd > 0 && nd <= 70);
  assert_true(nd * 10 >= nq * 13 && nd * 10 <= nq * 17);
  for (size_t k = 1; k < rd.n_objective; k++) /* stable: never a rise of more than 1e-6 */
    assert_true(rd.objective[k] <= rd.objective[k - 1] * (1 + 1e-6));
  bbvfl_offchain_result_free(&rd);
  bbvfl_offchain_result_free(&rs);
  bbvfl_offchain_result_free(&rq);
  /* --sqn-pairs round: the curvature rounds of bbvfl's earlier variant, counted in the objective
     and the releases */
  bc_cfg(&c, BBVFL_OPT_SQN, 30);
  c.opt.lr = 0.5;
  c.sqn_pairs = BBVFL_SQN_PAIRS_ROUND;
  c.track_objective = 1;
  assert_int_equal(bbvfl_offchain_train(&DS, &c, &rq, &err), 0);
  assert_int_equal(rq.curv_rounds, bbvfl_lr_curv_rounds(&c, rq.n_train));
  assert_int_equal(rq.curv_rounds, 30 / 3 - 1);
  assert_int_equal(rq.n_objective, 1 + 30 + 9);
  bbvfl_lr_releases(&c, rq.n_train, 2, &P, &rel);
  assert_int_equal(rel, 30 + 9);
  bbvfl_lr_releases(&c, 0, 3, &P, &rel); /* full batch: known before the split */
  assert_int_equal(P, 3);
  assert_int_equal(rel, 30 + 9);
  bbvfl_offchain_result_free(&rq);
  /* --sqn-pairs global: one dot-product round per step with pairs, counted */
  bc_cfg(&c, BBVFL_OPT_SQN, 30);
  c.opt.lr = 0.5;
  c.sqn_pairs = BBVFL_SQN_PAIRS_GLOBAL;
  c.track_objective = 1;
  assert_int_equal(bbvfl_offchain_train(&DS, &c, &rq, &err), 0);
  assert_int_equal(rq.curv_rounds, 9);
  assert_int_equal(rq.scalar_rounds, 30 - 6); /* every step after the first pair (round 6) */
  assert_int_equal(rq.n_objective, 1 + 30 + 9 + 24);
  assert_true(min_objective(&rq) < 0.1); /* from log 2 (not monotone at this step: docs/LR.md) */
  bbvfl_offchain_result_free(&rq);
}

/* the Taylor loss trains too, the MLP refuses sqn, and taylor refuses more than two classes */
static void test_bc_taylor_and_refusals(void **st) {
  (void)st;
  bbvfl_offchain_cfg c;
  bc_cfg(&c, BBVFL_OPT_SQN, 30);
  c.loss = BBVFL_LOSS_TAYLOR;
  /* its default step 1/(M+1) (cli/train_common.c): stable, the objective never rises (lr 0.5
     diverges on this seed: docs/LR.md "Step") */
  c.opt.lr = bbvfl_lr_sqn_default_lr(c.loss, c.M);
  assert_true(fabs(c.opt.lr - 1.0 / 6) < 1e-12);
  c.track_objective = 1;
  bbvfl_offchain_result r;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_offchain_train(&DS, &c, &r, &err), 0);
  int reached = 0;
  for (int e = 0; e < 30; e++) reached |= r.per_epoch[e].auroc >= 0.99;
  assert_true(reached);
  assert_int_equal(r.n_objective, 31);
  for (size_t k = 1; k < r.n_objective; k++) assert_true(r.objective[k] <= r.objective[k - 1] * (1 + 1e-6));
  assert_true(r.objective[30] < 0.32);
  bbvfl_offchain_result_free(&r);
  c.model = BBVFL_MODEL_MLP;
  assert_int_equal(bbvfl_offchain_train(&DS, &c, &r, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  assert_non_null(strstr(err.msg, "sqn"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grad_fd),
      cmocka_unit_test(test_hvp_fd),
      cmocka_unit_test(test_sqn_dense),
      cmocka_unit_test(test_sqn_multi_dense),
      cmocka_unit_test(test_sqn_no_cap),
      cmocka_unit_test(test_hvp_from_grad),
      cmocka_unit_test(test_bc_sqn),
      cmocka_unit_test(test_bc_taylor_and_refusals),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
