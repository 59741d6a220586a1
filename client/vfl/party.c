#include "vfl/party.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vfl/ckpt.h"

void bbvfl_party_free(bbvfl_party *p) {
  if (!p) return;
  free(p->x);
  free(p->xb);
  free(p->h);
  free(p->scale);
  free(p->dpacc);
  free(p->dprow);
  bbvfl_mlp_free(&p->mlp);
  bbvfl_optim_free(&p->opt);
  bbvfl_rng_wipe(&p->noise);
  bbvfl_rng_wipe(&p->dpnoise);
  memset(p, 0, sizeof *p);
}

int bbvfl_party_init(bbvfl_party *p, const bbvfl_party_cfg *cfg, const float *cols, size_t nrows, size_t ncols,
                     bbvfl_err *err) {
  memset(p, 0, sizeof *p);
  if (ncols < 1) return bbvfl_fail(err, BBVFL_E_ARG, "client %d holds no columns", cfg->index);
  if (cfg->nhidden < 0 || cfg->nhidden > BBVFL_MAX_HIDDEN)
    return bbvfl_fail(err, BBVFL_E_ARG, "client model: 0..%d hidden layers, got %d", BBVFL_MAX_HIDDEN, cfg->nhidden);
  if (bbvfl_mech_check(&cfg->mech, err) != 0) return -1;
  p->cfg = *cfg;
  p->nrows = nrows;
  p->ncols = ncols;
  p->x = malloc(nrows * ncols * sizeof *p->x);
  if (!p->x) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  memcpy(p->x, cols, nrows * ncols * sizeof *p->x);
  int dims[BBVFL_MAX_HIDDEN + 2];
  dims[0] = (int)ncols;
  for (int l = 0; l < cfg->nhidden; l++) dims[l + 1] = cfg->hidden[l];
  dims[cfg->nhidden + 1] = cfg->P;
  bbvfl_rng init;
  bbvfl_rng_init_seeded(&init, cfg->seed, bbvfl_rng_stream(BBVFL_STREAM_INIT, (uint32_t)cfg->index));
  if (bbvfl_mlp_init(&p->mlp, cfg->nhidden + 1, dims, &init, err) != 0) goto fail;
  if (bbvfl_optim_init(&p->opt, &cfg->opt, p->mlp.nparams, err) != 0) goto fail;
  if (cfg->rowdp.on) {
    if (!(cfg->rowdp.clip > 0) || !(cfg->rowdp.noise > 0) || !isfinite(cfg->rowdp.clip) || !isfinite(cfg->rowdp.noise)) {
      bbvfl_fail(err, BBVFL_E_ARG, "DP-SGD: clip and noise multiplier must be > 0, got %g and %g", cfg->rowdp.clip,
                 cfg->rowdp.noise);
      goto fail;
    }
    if (bbvfl_rng_init_noise(&p->dpnoise, cfg->seeded_noise, cfg->seed,
                             bbvfl_rng_stream(BBVFL_STREAM_DPSGD, (uint32_t)cfg->index), err) != 0)
      goto fail;
    p->dpacc = malloc(p->mlp.nparams * sizeof *p->dpacc);
    p->dprow = malloc((size_t)cfg->P * sizeof *p->dprow);
    if (!p->dpacc || !p->dprow) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto fail;
    }
  }
  if (bbvfl_rng_init_noise(&p->noise, cfg->seeded_noise, cfg->seed,
                           bbvfl_rng_stream(BBVFL_STREAM_NOISE, (uint32_t)cfg->index), err) != 0)
    goto fail;
  return 0;
fail:
  bbvfl_wrap(err, "client %d", cfg->index);
  bbvfl_party_free(p);
  return -1;
}

static int ensure(bbvfl_party *p, size_t nb, bbvfl_err *err) {
  if (nb <= p->cap) return 0;
  free(p->xb);
  free(p->h);
  free(p->scale);
  p->xb = malloc(nb * p->ncols * sizeof(float));
  p->h = malloc(nb * (size_t)p->cfg.P * sizeof(float));
  p->scale = malloc(nb * sizeof(float));
  if (!p->xb || !p->h || !p->scale) {
    p->cap = 0;
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  p->cap = nb;
  return 0;
}

int bbvfl_party_forward(bbvfl_party *p, const size_t *rows, size_t nb, uint8_t *q, float *hf, bbvfl_err *err) {
  if (nb == 0) return bbvfl_fail(err, BBVFL_E_ARG, "empty batch");
  if (ensure(p, nb, err) != 0) return -1;
  for (size_t i = 0; i < nb; i++) {
    if (rows[i] >= p->nrows)
      return bbvfl_fail(err, BBVFL_E_ARG, "client %d: row %zu out of range (%zu rows)", p->cfg.index, rows[i], p->nrows);
    memcpy(p->xb + i * p->ncols, p->x + rows[i] * p->ncols, p->ncols * sizeof(float));
  }
  if (bbvfl_mlp_forward(&p->mlp, p->xb, nb, p->h, err) != 0) return -1;
  p->last_rows = nb;
  size_t n = nb * (size_t)p->cfg.P;
  switch (p->cfg.mech.kind) {
  case BBVFL_MECH_PBM:
    if (!q) return bbvfl_fail(err, BBVFL_E_ARG, "PBM forward needs a byte buffer");
    bbvfl_pbm_quantize(&p->cfg.mech, p->h, n, &p->noise, q);
    break;
  case BBVFL_MECH_NPQ:
    if (!hf) return bbvfl_fail(err, BBVFL_E_ARG, "NPQ forward needs a float buffer");
    memcpy(hf, p->h, n * sizeof(float));
    break;
  case BBVFL_MECH_GAUSSIAN:
    if (!hf) return bbvfl_fail(err, BBVFL_E_ARG, "Gaussian forward needs a float buffer");
    memcpy(hf, p->h, n * sizeof(float));
    bbvfl_gauss_clip_noise(&p->cfg.mech, hf, nb, (size_t)p->cfg.P, &p->noise, p->scale);
    break;
  }
  return 0;
}

/* DP-SGD (row mode): the noisy mean of the clipped per-row gradients into p->dpacc. g is the
   mean-loss gradient dLoss/dh (rows x P): row i's own loss has gradient rows * g_i. */
static void dpsgd_grad(bbvfl_party *p, const float *g) {
  size_t nb = p->last_rows, P = (size_t)p->cfg.P, np = p->mlp.nparams;
  const double clip = p->cfg.rowdp.clip, sd = p->cfg.rowdp.noise * p->cfg.rowdp.clip;
  memset(p->dpacc, 0, np * sizeof *p->dpacc);
  for (size_t i = 0; i < nb; i++) {
    for (size_t k = 0; k < P; k++) p->dprow[k] = g[i * P + k] * (float)nb;
    bbvfl_mlp_backward_row(&p->mlp, i, p->dprow);
    double n2 = 0;
    for (size_t k = 0; k < np; k++) n2 += (double)p->mlp.grads[k] * p->mlp.grads[k];
    float f = n2 > clip * clip ? (float)(clip / sqrt(n2)) : 1.0f;
    for (size_t k = 0; k < np; k++) p->dpacc[k] += f * p->mlp.grads[k];
  }
  for (size_t k = 0; k < np; k++) p->dpacc[k] = (p->dpacc[k] + (float)(sd * bbvfl_rng_normal(&p->dpnoise))) / (float)nb;
}

int bbvfl_party_backward(bbvfl_party *p, const float *grad, bbvfl_err *err) {
  if (p->last_rows == 0) return bbvfl_fail(err, BBVFL_E_STATE, "client %d: backward without a forward", p->cfg.index);
  const float *g = grad;
  float *tmp = NULL;
  if (p->cfg.mech.kind == BBVFL_MECH_GAUSSIAN) {
    /* the clip scale is treated as a constant of the row (straight-through for the norm) */
    size_t P = (size_t)p->cfg.P, n = p->last_rows * P;
    tmp = malloc(n * sizeof *tmp);
    if (!tmp) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) tmp[i] = grad[i] * p->scale[i / P];
    g = tmp;
  }
  if (p->cfg.rowdp.on) {
    dpsgd_grad(p, g);
    free(tmp);
    bbvfl_optim_step(&p->opt, p->mlp.params, p->dpacc);
    p->steps++;
    return 0;
  }
  bbvfl_mlp_backward(&p->mlp, g);
  free(tmp);
  bbvfl_optim_step(&p->opt, p->mlp.params, p->mlp.grads);
  p->steps++;
  return 0;
}

void bbvfl_party_epoch(bbvfl_party *p, int e) { bbvfl_optim_epoch(&p->opt, e); }

int bbvfl_party_save(const bbvfl_party *p, const char *path, bbvfl_err *err) {
  bbvfl_ckpt c = {0};
  bbvfl_ckpt_put_u64(&c, (uint64_t)p->cfg.index);
  bbvfl_ckpt_put_u64(&c, p->steps);
  bbvfl_ckpt_put_u64(&c, (uint64_t)p->opt.t);
  bbvfl_ckpt_put_f64(&c, p->opt.lr_now);
  bbvfl_ckpt_put_floats(&c, p->mlp.params, p->mlp.nparams);
  bbvfl_ckpt_put_floats(&c, p->opt.m, p->opt.n);
  bbvfl_ckpt_put_floats(&c, p->opt.v, p->opt.n);
  bbvfl_rng none;
  memset(&none, 0, sizeof none);
  /* a getrandom-keyed generator is never written to disk (its key would let anyone strip the noise) */
  bbvfl_ckpt_put_bytes(&c, p->cfg.seeded_noise ? &p->noise : &none, sizeof none);
  if (p->cfg.rowdp.on) bbvfl_ckpt_put_bytes(&c, p->cfg.seeded_noise ? &p->dpnoise : &none, sizeof none);
  int rc = bbvfl_ckpt_save(&c, path, "party", err);
  bbvfl_ckpt_free(&c);
  return rc;
}

int bbvfl_party_load(bbvfl_party *p, const char *path, bbvfl_err *err) {
  bbvfl_ckpt c;
  if (bbvfl_ckpt_open(&c, path, "party", err) != 0) return -1;
  uint64_t idx, steps, t;
  double lr;
  float *params = malloc(p->mlp.nparams * sizeof(float)), *m = malloc(p->opt.n * sizeof(float)),
        *v = malloc(p->opt.n * sizeof(float));
  bbvfl_rng noise, dpn;
  memset(&dpn, 0, sizeof dpn);
  int rc = -1;
  if (!params || !m || !v) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  if (bbvfl_ckpt_get_u64(&c, &idx, err) || bbvfl_ckpt_get_u64(&c, &steps, err) || bbvfl_ckpt_get_u64(&c, &t, err) ||
      bbvfl_ckpt_get_f64(&c, &lr, err) || bbvfl_ckpt_get_floats(&c, params, p->mlp.nparams, err) ||
      bbvfl_ckpt_get_floats(&c, m, p->opt.n, err) || bbvfl_ckpt_get_floats(&c, v, p->opt.n, err) ||
      bbvfl_ckpt_get_bytes(&c, &noise, sizeof noise, err) ||
      (p->cfg.rowdp.on && bbvfl_ckpt_get_bytes(&c, &dpn, sizeof dpn, err))) {
    bbvfl_wrap(err, "%s", path);
    goto out;
  }
  if (idx != (uint64_t)p->cfg.index) {
    bbvfl_fail(err, BBVFL_E_STATE, "%s is the checkpoint of client %llu, not client %d", path, (unsigned long long)idx,
               p->cfg.index);
    goto out;
  }
  memcpy(p->mlp.params, params, p->mlp.nparams * sizeof(float));
  memcpy(p->opt.m, m, p->opt.n * sizeof(float));
  memcpy(p->opt.v, v, p->opt.n * sizeof(float));
  p->opt.t = (long long)t;
  p->opt.lr_now = lr;
  p->steps = steps;
  if (p->cfg.seeded_noise) p->noise = noise; /* an OS-keyed generator is never restored from disk */
  if (p->cfg.seeded_noise && p->cfg.rowdp.on) p->dpnoise = dpn;
  rc = 0;
out:
  bbvfl_rng_wipe(&noise);
  bbvfl_rng_wipe(&dpn);
  free(params);
  free(m);
  free(v);
  bbvfl_ckpt_free(&c);
  return rc;
}
