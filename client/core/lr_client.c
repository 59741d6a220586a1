#include "core/lr_client.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


int bbvfl_lr_setup_init(bbvfl_lr_setup *st, const bbvfl_offchain_cfg *c, int nclasses, bbvfl_err *err) {
  memset(st, 0, sizeof *st);
  if (c->rowdp.on) return bbvfl_fail(err, BBVFL_E_ARG, "--model lr does not run in --privacy row (DP-SGD is the MLP's)");
  if (c->loss != BBVFL_LOSS_LOGISTIC && c->loss != BBVFL_LOSS_TAYLOR)
    return bbvfl_fail(err, BBVFL_E_ARG, "unknown loss %d", c->loss);
  st->loss = (bbvfl_loss_kind)c->loss;
  if (st->loss == BBVFL_LOSS_TAYLOR && nclasses != 2)
    return bbvfl_fail(err, BBVFL_E_ARG, "--loss taylor is for two classes; the data has %d (use --loss logistic: softmax)",
                      nclasses);
  if (c->opt.kind == BBVFL_OPT_SQN && (c->sqn_interval < 1 || c->sqn_interval > 100000))
    return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-interval must be in 1..100000, got %d", c->sqn_interval);
  if (!(c->logit_clip >= 0) || !isfinite(c->logit_clip))
    return bbvfl_fail(err, BBVFL_E_ARG, "--logit-clip must be >= 0, got %g", c->logit_clip);
  if (!(c->l2 >= 0) || !isfinite(c->l2)) return bbvfl_fail(err, BBVFL_E_ARG, "--l2 must be >= 0, got %g", c->l2);
  st->l2 = (float)c->l2;
  st->mech = c->mech;
  st->clip = (float)c->logit_clip;
  if (st->mech.kind == BBVFL_MECH_PBM) {
    if (st->clip == 0) st->clip = (float)BBVFL_LR_PBM_CLIP;
    st->mech.C = st->clip;
  }
  if (bbvfl_mech_check(&st->mech, err) != 0) return -1;
  if (st->mech.kind == BBVFL_MECH_PBM && !bbvfl_pbm_lanes_fit(c->M, st->mech.b))
    return bbvfl_fail(err, BBVFL_E_ARG, "M*b = %ld exceeds 65535, the widest lane of the aggregator", (long)c->M * st->mech.b);
  st->nclasses = nclasses;
  st->K = nclasses == 2 ? 1 : nclasses;
  st->nblocks = c->M + 1;
  if (c->opt.kind == BBVFL_OPT_SQN && (c->sqn_pairs < BBVFL_SQN_PAIRS_LOCAL || c->sqn_pairs > BBVFL_SQN_PAIRS_GLOBAL))
    return bbvfl_fail(err, BBVFL_E_ARG, "unknown --sqn-pairs %d", c->sqn_pairs);
  if (!(c->sqn_cap >= 0) || !isfinite(c->sqn_cap))
    return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-cap must be >= 0 (0: no cap), got %g", c->sqn_cap);
  st->pairs = c->sqn_pairs;
  return 0;
}

void bbvfl_lr_block_free(bbvfl_lr_block *b) {
  free(b->w);
  free(b->g);
  free(b->d);
  free(b->wsum);
  free(b->wprev);
  free(b->s);
  free(b->y);
  if (b->have_opt) bbvfl_optim_free(&b->opt);
  if (b->have_sqn) bbvfl_sqn_free(&b->sqn);
  memset(b, 0, sizeof *b);
}

int bbvfl_lr_block_init(bbvfl_lr_block *b, size_t n, const bbvfl_offchain_cfg *c, bbvfl_err *err) {
  memset(b, 0, sizeof *b);
  b->n = n;
  size_t nn = n ? n : 1;
  b->w = calloc(nn, sizeof(float));
  b->g = calloc(nn, sizeof(float));
  b->d = calloc(nn, sizeof(float));
  b->wsum = calloc(nn, sizeof(float));
  b->wprev = calloc(nn, sizeof(float));
  b->s = calloc(nn, sizeof(float));
  b->y = calloc(nn, sizeof(float));
  if (!b->w || !b->g || !b->d || !b->wsum || !b->wprev || !b->s || !b->y)
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  bbvfl_optim_cfg oc = c->opt;
  b->nblocks = c->M + 1;
  b->cap = c->sqn_cap > 0 ? c->sqn_cap : 0;
  if (oc.kind == BBVFL_OPT_SQN) { /* the step lr * H g is a plain step along H g */
    oc.kind = BBVFL_OPT_SGD;
    oc.momentum = 0;
    if (bbvfl_sqn_init(&b->sqn, n, c->sqn_memory, err) != 0) return -1;
    b->have_sqn = 1;
  }
  if (bbvfl_optim_init(&b->opt, &oc, n, err) != 0) return -1;
  b->have_opt = 1;
  return 0;
}

void bbvfl_lr_block_step(bbvfl_lr_block *b) {
  if (b->have_sqn) {
    bbvfl_sqn_apply(&b->sqn, b->g, b->d);
    bbvfl_lr_block_step_d(b);
  } else {
    bbvfl_optim_step(&b->opt, b->w, b->g);
  }
}

void bbvfl_lr_block_step_d(bbvfl_lr_block *b) {
  if (b->cap > 0) { /* the optional trust region (--sqn-cap; none by default) */
    double gg = 0, dd = 0, cap = b->cap;
    for (size_t i = 0; i < b->n; i++) {
      gg += (double)b->g[i] * b->g[i];
      dd += (double)b->d[i] * b->d[i];
    }
    if (dd > cap * cap * gg) {
      float f = (float)(cap * sqrt(gg / dd));
      for (size_t i = 0; i < b->n; i++) b->d[i] *= f;
    }
  }
  bbvfl_optim_step(&b->opt, b->w, b->d);
}

/* sqn's H before the first pair: h0 = 1 / (nblocks lambda) with lambda >= the largest eigenvalue
   of the client's diagonal block of the Hessian on rows: d2L/dz2 <= cmax, so lambda =
   cmax lambda_max(X^T X / B) + l2 (power iteration on its own columns). The preconditioned
   Hessian P H (P = diag(h0_b I)) then has its largest eigenvalue <= sum_b h0_b lambda_b = 1
   (Cauchy-Schwarz over the blocks), so a plain step at lr < 2 is stable. */
static void client_h0(bbvfl_lr_client *p, const size_t *rows, size_t B) {
  bbvfl_lr_block *bl = &p->bl;
  bl->h0_set = 1;
  size_t nc = p->ncols;
  if (nc == 0 || B == 0) return;
  double *v = calloc(nc, sizeof *v), *w = calloc(nc, sizeof *w), lam = 0;
  if (!v || !w) { /* no bound: h0 stays 1 */
    free(v);
    free(w);
    return;
  }
  for (size_t j = 0; j < nc; j++) v[j] = 1.0 / sqrt((double)nc);
  for (int it = 0; it < 100; it++) {
    memset(w, 0, nc * sizeof *w);
    for (size_t i = 0; i < B; i++) {
      const float *xi = p->x + rows[i] * nc;
      double a = 0;
      for (size_t j = 0; j < nc; j++) a += xi[j] * v[j];
      for (size_t j = 0; j < nc; j++) w[j] += a * xi[j] / (double)B;
    }
    double nrm = 0;
    for (size_t j = 0; j < nc; j++) nrm += w[j] * w[j];
    nrm = sqrt(nrm);
    lam = nrm;
    if (!(nrm > 0)) break;
    for (size_t j = 0; j < nc; j++) v[j] = w[j] / nrm;
  }
  free(v);
  free(w);
  double bound = bbvfl_lr_curv_max(p->st->loss, p->st->K) * lam * 1.01 + p->st->l2;
  if (bound > 0) bl->sqn.h0 = 1.0 / ((double)bl->nblocks * bound);
}

int bbvfl_lr_client_init(bbvfl_lr_client *p, const bbvfl_lr_setup *st, const bbvfl_offchain_cfg *c, float *x,
                         size_t ncols, int index, size_t maxrows, bbvfl_err *err) {
  memset(p, 0, sizeof *p);
  p->st = st;
  p->x = x;
  p->ncols = ncols;
  if (bbvfl_lr_block_init(&p->bl, ncols * (size_t)st->K, c, err) != 0) return -1;
  if (bbvfl_rng_init_noise(&p->noise, c->seeded_noise, c->seed, c->noise_key, bbvfl_rng_stream(BBVFL_STREAM_NOISE, (uint32_t)index),
                           err) != 0)
    return -1;
  p->a = malloc((maxrows ? maxrows : 1) * (size_t)st->K * sizeof(float));
  if (!p->a) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

void bbvfl_lr_client_free(bbvfl_lr_client *p) {
  bbvfl_lr_block_free(&p->bl);
  free(p->x);
  free(p->a);
  bbvfl_rng_wipe(&p->noise);
  memset(p, 0, sizeof *p);
}

void bbvfl_lr_client_logits(const bbvfl_lr_client *p, const size_t *rows, size_t nrows, float *out) {
  bbvfl_lr_partial(p->x, p->ncols, rows, nrows, p->bl.w, p->st->K, out);
}

void bbvfl_lr_client_release(bbvfl_lr_client *p, float *vals, size_t nrows, float *scale, uint8_t *q) {
  const bbvfl_lr_setup *st = p->st;
  size_t n = nrows * (size_t)st->K;
  float c = st->clip;
  if (c > 0)
    for (size_t i = 0; i < n; i++) vals[i] = vals[i] > c ? c : vals[i] < -c ? -c : vals[i];
  if (st->mech.kind == BBVFL_MECH_PBM) bbvfl_pbm_quantize(&st->mech, vals, n, &p->noise, q);
  else if (st->mech.kind == BBVFL_MECH_GAUSSIAN) bbvfl_gauss_clip_noise(&st->mech, vals, nrows, (size_t)st->K, &p->noise, scale);
}

void bbvfl_lr_client_step(bbvfl_lr_client *p, const size_t *rows, size_t B, const float *u, const float *scale,
                          const float *grad) {
  bbvfl_lr_client_grad(p, rows, B, u, scale, grad);
  bbvfl_lr_block_step(&p->bl);
}

void bbvfl_lr_client_grad(bbvfl_lr_client *p, const size_t *rows, size_t B, const float *u, const float *scale,
                          const float *grad) {
  const bbvfl_lr_setup *st = p->st;
  if (p->bl.have_sqn && !p->bl.h0_set) client_h0(p, rows, B);
  size_t K = (size_t)st->K;
  for (size_t i = 0; i < B; i++) {
    float sc = st->mech.kind == BBVFL_MECH_GAUSSIAN && scale ? scale[i] : 1.0f;
    for (size_t k = 0; k < K; k++) {
      float v = u[i * K + k];
      int clipped = st->clip > 0 && (v > st->clip || v < -st->clip);
      p->a[i * K + k] = clipped ? 0.0f : grad[i * K + k] * sc;
    }
  }
  bbvfl_lr_xt(p->x, p->ncols, rows, B, p->a, st->K, p->bl.g);
  if (st->l2 > 0)
    for (size_t i = 0; i < p->bl.n; i++) p->bl.g[i] += st->l2 * p->bl.w[i];
}

double bbvfl_lr_head_rows(const bbvfl_lr_setup *st, const bbvfl_lr_block *head, const float *sum, const int *y,
                          size_t rows, double inv, float *z, float *dz, float *probs) {
  size_t K = (size_t)st->K;
  for (size_t i = 0; i < rows * K; i++) z[i] = sum[i] + head->w[i % K];
  return bbvfl_lr_loss_sum(st->loss, z, y, rows, st->K, inv, dz, probs);
}

void bbvfl_lr_head_step(bbvfl_lr_block *head, int K, const float *dz, size_t B) {
  size_t k1 = (size_t)K;
  memset(head->g, 0, k1 * sizeof(float));
  for (size_t i = 0; i < B; i++)
    for (size_t k = 0; k < k1; k++) head->g[k] += dz[i * k1 + k];
  if (head->have_sqn && !head->h0_set) { /* the biases' block: d2L/dz2 <= cmax (client_h0) */
    head->h0_set = 1;
    head->sqn.h0 = 1.0 / ((double)head->nblocks * bbvfl_lr_curv_max(BBVFL_LOSS_LOGISTIC, K));
  }
  if (!head->defer) bbvfl_lr_block_step(head);
}

int bbvfl_lr_block_tick(bbvfl_lr_block *b, uint64_t done, int L) {
  for (size_t i = 0; i < b->n; i++) b->wsum[i] += b->w[i];
  if (L < 1 || done % (uint64_t)L != 0) return 0;
  int have_prev = done / (uint64_t)L >= 2;
  for (size_t i = 0; i < b->n; i++) {
    float avg = b->wsum[i] / (float)L;
    b->s[i] = have_prev ? avg - b->wprev[i] : 0;
    b->wprev[i] = avg;
    b->wsum[i] = 0;
  }
  return have_prev;
}

void bbvfl_lr_client_curv_logits(const bbvfl_lr_client *p, const size_t *rows, size_t nrows, float *out) {
  bbvfl_lr_partial(p->x, p->ncols, rows, nrows, p->bl.s, p->st->K, out);
}

void bbvfl_lr_client_curv_pair(bbvfl_lr_client *p, const size_t *rows, size_t S, const float *r) {
  bbvfl_lr_block *bl = &p->bl;
  bbvfl_lr_xt(p->x, p->ncols, rows, S, r, p->st->K, bl->y);
  if (p->st->l2 > 0)
    for (size_t i = 0; i < bl->n; i++) bl->y[i] += p->st->l2 * bl->s[i];
  if (p->st->pairs != BBVFL_SQN_PAIRS_GLOBAL) bbvfl_sqn_push(&bl->sqn, bl->s, bl->y); /* global: the caller's */
}

void bbvfl_lr_head_curv_r(const bbvfl_lr_setup *st, const bbvfl_lr_block *head, float *sum, const float *z,
                          size_t nrows, size_t S, float *r) {
  size_t K = (size_t)st->K, n = nrows * K;
  for (size_t i = 0; i < n; i++) sum[i] += head->s[i % K];
  bbvfl_lr_hvp_rows(st->loss, z, sum, nrows, st->K, (double)S, r);
}

void bbvfl_lr_head_curv_pair(bbvfl_lr_block *head, int K, const float *r, size_t S) {
  size_t k1 = (size_t)K;
  memset(head->y, 0, k1 * sizeof(float));
  for (size_t i = 0; i < S; i++)
    for (size_t k = 0; k < k1; k++) head->y[k] += r[i * k1 + k];
  if (!head->defer) bbvfl_sqn_push(&head->sqn, head->s, head->y); /* global: the caller's */
}

void bbvfl_lr_client_local_pair(bbvfl_lr_client *p, const size_t *rows, size_t S, const float *g, double lb) {
  bbvfl_lr_block *bl = &p->bl;
  size_t K = (size_t)p->st->K;
  float *h = malloc((S ? S : 1) * K * sizeof *h);
  if (!h) return; /* no pair this time: H keeps its pairs */
  bbvfl_lr_partial(p->x, p->ncols, rows, S, bl->s, p->st->K, h);
  bbvfl_lr_hvp_rows_grad(p->st->loss, g, lb, h, S, p->st->K, (double)S, h);
  bbvfl_lr_xt(p->x, p->ncols, rows, S, h, p->st->K, bl->y);
  free(h);
  if (p->st->l2 > 0)
    for (size_t i = 0; i < bl->n; i++) bl->y[i] += p->st->l2 * bl->s[i];
  bbvfl_sqn_push(&bl->sqn, bl->s, bl->y);
}

void bbvfl_lr_head_local_pair(const bbvfl_lr_setup *st, bbvfl_lr_block *head, const float *g, double lb, size_t S) {
  size_t K = (size_t)st->K;
  float *h = head->d, *r = head->g; /* scratch: both are set afresh by the next step */
  memset(head->y, 0, K * sizeof(float));
  for (size_t i = 0; i < S; i++) {
    memcpy(h, head->s, K * sizeof(float));
    bbvfl_lr_hvp_rows_grad(st->loss, g + i * K, lb, h, 1, st->K, (double)S, r);
    for (size_t k = 0; k < K; k++) head->y[k] += r[k];
  }
  bbvfl_sqn_push(&head->sqn, head->s, head->y);
}
