#include "vfl/lr_client.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vfl/lr_train.h"

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
  if (st->mech.kind == BBVFL_MECH_PBM && (long)c->M * st->mech.b > 65535)
    return bbvfl_fail(err, BBVFL_E_ARG, "M*b = %ld exceeds 65535, the widest lane of the aggregator", (long)c->M * st->mech.b);
  st->nclasses = nclasses;
  st->K = nclasses == 2 ? 1 : nclasses;
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
    double gg = 0, dd = 0, cap = BBVFL_SQN_MAX_RATIO;
    for (size_t i = 0; i < b->n; i++) {
      gg += (double)b->g[i] * b->g[i];
      dd += (double)b->d[i] * b->d[i];
    }
    if (dd > cap * cap * gg) {
      float f = (float)(cap * sqrt(gg / dd));
      for (size_t i = 0; i < b->n; i++) b->d[i] *= f;
    }
    bbvfl_optim_step(&b->opt, b->w, b->d);
  } else {
    bbvfl_optim_step(&b->opt, b->w, b->g);
  }
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
  const bbvfl_lr_setup *st = p->st;
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
  bbvfl_lr_block_step(&p->bl);
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
  bbvfl_lr_block_step(head);
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
  bbvfl_sqn_push(&bl->sqn, bl->s, bl->y);
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
  bbvfl_sqn_push(&head->sqn, head->s, head->y);
}
