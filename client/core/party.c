#include "core/party.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/dppca.h"
#include "ml/fcm.h"
#include "core/ckpt.h"

static void window_free(bbvfl_party_window *w);

void bbvfl_party_free(bbvfl_party *p) {
  if (!p) return;
  free(p->x);
  free(p->xb);
  free(p->h);
  free(p->scale);
  free(p->dpacc);
  free(p->dprow);
  free(p->gtmp);
  free(p->qhave);
  free(p->qcache);
  window_free(&p->last);
  for (size_t i = 0; i < p->pend_cap; i++) window_free(&p->pend[i]);
  free(p->pend);
  bbvfl_mlp_free(&p->mlp);
  bbvfl_optim_free(&p->opt);
  bbvfl_rng_wipe(&p->noise);
  bbvfl_rng_wipe(&p->dpnoise);
  memset(p, 0, sizeof *p);
}

/* Encoder mode: the DP-PCA weights of the training rows, bias 0, frozen; the release cache. */
static int freeze_encoder(bbvfl_party *p, bbvfl_err *err) {
  const bbvfl_party_cfg *cfg = &p->cfg;
  if (cfg->mech.kind != BBVFL_MECH_PBM) return bbvfl_fail(err, BBVFL_E_ARG, "the encoder mode needs the PBM mechanism");
  if (!(cfg->rowdp.pca_noise > 0) || !isfinite(cfg->rowdp.pca_noise))
    return bbvfl_fail(err, BBVFL_E_ARG, "the encoder's DP-PCA noise multiplier must be > 0, got %g", cfg->rowdp.pca_noise);
  if (!cfg->train_rows || cfg->n_train < 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "the encoder mode needs the training rows");
  float *z = malloc(cfg->n_train * p->ncols * sizeof *z);
  p->qhave = calloc(p->nrows, 1);
  p->qcache = calloc(p->nrows, (size_t)cfg->P);
  if (!z || !p->qhave || !p->qcache) {
    free(z);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < cfg->n_train; i++) {
    if (cfg->train_rows[i] >= p->nrows) {
      free(z);
      return bbvfl_fail(err, BBVFL_E_ARG, "training row %zu out of range (%zu rows)", cfg->train_rows[i], p->nrows);
    }
    memcpy(z + i * p->ncols, p->x + cfg->train_rows[i] * p->ncols, p->ncols * sizeof *z);
  }
  bbvfl_rng r;
  int rc = bbvfl_rng_init_noise(&r, cfg->seeded_noise, cfg->seed, cfg->noise_key, bbvfl_rng_stream(BBVFL_STREAM_DPPCA, (uint32_t)cfg->index),
                                err);
  if (rc == 0) {
    rc = bbvfl_dp_pca_encoder(z, cfg->n_train, p->ncols, cfg->P, cfg->rowdp.pca_noise, &r, p->mlp.params + p->mlp.woff[0],
                              err);
    bbvfl_rng_wipe(&r);
  }
  free(z);
  if (rc != 0) return -1;
  memset(p->mlp.params + p->mlp.boff[0], 0, (size_t)cfg->P * sizeof(float));
  p->frozen = 1;
  return 0;
}

int bbvfl_party_init(bbvfl_party *p, const bbvfl_party_cfg *cfg, const float *cols, size_t nrows, size_t ncols,
                     bbvfl_err *err) {
  memset(p, 0, sizeof *p);
  if (ncols < 1) return bbvfl_fail(err, BBVFL_E_ARG, "client %d holds no columns", cfg->index);
  if (cfg->nhidden < 0 || cfg->nhidden > BBVFL_MAX_HIDDEN)
    return bbvfl_fail(err, BBVFL_E_ARG, "client model: 0..%d hidden layers, got %d", BBVFL_MAX_HIDDEN, cfg->nhidden);
  if (bbvfl_mech_check(&cfg->mech, err) != 0) return -1;
  if (bbvfl_afe_check(&cfg->afe, err) != 0) return -1;
  if (cfg->afe.on && (cfg->mech.kind == BBVFL_MECH_NPQ || cfg->rowdp.on))
    return bbvfl_fail(err, BBVFL_E_ARG, "--afe needs --mechanism gaussian or pbm (and not row mode)");
  if (cfg->afe.on && !(cfg->mech.clip > 0))
    return bbvfl_fail(err, BBVFL_E_ARG, "--afe: the clip threshold t must be > 0, got %g", cfg->mech.clip);
  p->cfg = *cfg;
  p->nrows = nrows;
  p->ncols = ncols;
  p->x = malloc(nrows * ncols * sizeof *p->x);
  if (!p->x) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  memcpy(p->x, cols, nrows * ncols * sizeof *p->x);
  const int enc = cfg->rowdp.on && cfg->rowdp.encoder, nh = enc ? 0 : cfg->nhidden;
  int dims[BBVFL_MAX_HIDDEN + 2];
  dims[0] = (int)ncols;
  for (int l = 0; l < nh; l++) dims[l + 1] = cfg->hidden[l];
  dims[nh + 1] = cfg->P;
  bbvfl_rng init;
  bbvfl_rng_init_seeded(&init, cfg->seed, bbvfl_rng_stream(BBVFL_STREAM_INIT, (uint32_t)cfg->index));
  if (bbvfl_mlp_init(&p->mlp, nh + 1, dims, &init, err) != 0) goto fail;
  if (bbvfl_optim_init(&p->opt, &cfg->opt, p->mlp.nparams, err) != 0) goto fail;
  if (enc && freeze_encoder(p, err) != 0) goto fail;
  if (cfg->rowdp.on && !enc) {
    if (!(cfg->rowdp.clip > 0) || !(cfg->rowdp.noise > 0) || !isfinite(cfg->rowdp.clip) || !isfinite(cfg->rowdp.noise)) {
      bbvfl_fail(err, BBVFL_E_ARG, "DP-SGD: clip and noise multiplier must be > 0, got %g and %g", cfg->rowdp.clip,
                 cfg->rowdp.noise);
      goto fail;
    }
    if (bbvfl_rng_init_noise(&p->dpnoise, cfg->seeded_noise, cfg->seed, cfg->noise_key,
                             bbvfl_rng_stream(BBVFL_STREAM_DPSGD, (uint32_t)cfg->index), err) != 0)
      goto fail;
    p->dpacc = malloc(p->mlp.nparams * sizeof *p->dpacc);
    p->dprow = malloc((size_t)cfg->P * sizeof *p->dprow);
    if (!p->dpacc || !p->dprow) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto fail;
    }
  }
  if (bbvfl_rng_init_noise(&p->noise, cfg->seeded_noise, cfg->seed, cfg->noise_key,
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

static void window_free(bbvfl_party_window *w) {
  free(w->acts);
  free(w->params);
  free(w->scale);
  memset(w, 0, sizeof *w);
}

/* Room in w for a window of rows rows (buffers reused when large enough); w->rows is set 0. */
static int window_reserve(const bbvfl_party *p, bbvfl_party_window *w, size_t rows, bbvfl_err *err) {
  w->rows = 0;
  if (rows <= w->cap) return 0;
  window_free(w);
  w->acts = malloc(bbvfl_mlp_cache_floats(&p->mlp, rows) * sizeof(float));
  w->params = malloc(p->mlp.nparams * sizeof(float));
  const int scaled = p->cfg.mech.kind == BBVFL_MECH_GAUSSIAN || p->cfg.afe.on;
  if (scaled) w->scale = malloc(rows * sizeof(float));
  if (!w->acts || !w->params || (scaled && !w->scale)) {
    window_free(w);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for a window of %zu rows", rows);
  }
  w->cap = rows;
  return 0;
}

/* Keeps the forward just run (nrows rows) in w (reserved for them). */
static void window_fill(const bbvfl_party *p, bbvfl_party_window *w, size_t nrows) {
  bbvfl_mlp_cache_copy(&p->mlp, w->acts);
  memcpy(w->params, p->mlp.params, p->mlp.nparams * sizeof(float));
  if (w->scale) memcpy(w->scale, p->scale, nrows * sizeof(float));
  w->rows = nrows;
}

/* VFL-AFE's local steps on nb rows in h: each row clipped to L2 norm t = mech.clip (scale[i] its
   factor), each batch of afe.B rows (the last one shorter) multiplied by Eq. 4's factor when
   rescaling (the factor joins scale[i]). The mechanism follows: Gaussian N(0, sigma^2) per
   coordinate (afe_release), or PBM's quantisation, which clamps each coordinate to [-C, C]. */
static void afe_shape(bbvfl_party *p, float *h, size_t nb) {
  const size_t P = (size_t)p->cfg.P;
  const double t = p->cfg.mech.clip;
  for (size_t i = 0; i < nb; i++) {
    float *row = h + i * P;
    double nrm = 0;
    for (size_t j = 0; j < P; j++) nrm += (double)row[j] * row[j];
    nrm = sqrt(nrm);
    double s = nrm > t ? t / nrm : 1.0;
    for (size_t j = 0; j < P; j++) row[j] = (float)(row[j] * s);
    p->scale[i] = (float)s;
  }
  if (p->cfg.afe.rescale)
    for (size_t i0 = 0; i0 < nb; i0 += p->cfg.afe.B) {
      size_t n = nb - i0 < p->cfg.afe.B ? nb - i0 : p->cfg.afe.B;
      double f = bbvfl_afe_rescale_factor(h + i0 * P, n, P, t, p->cfg.afe.p2);
      for (size_t i = i0; i < i0 + n; i++) {
        for (size_t j = 0; j < P; j++) h[i * P + j] = (float)(h[i * P + j] * f);
        p->scale[i] = (float)(p->scale[i] * f);
      }
    }
}

static void afe_release(bbvfl_party *p, float *h, size_t nb) {
  afe_shape(p, h, nb);
  for (size_t i = 0; i < nb * (size_t)p->cfg.P; i++)
    h[i] = (float)(h[i] + p->cfg.mech.sigma * bbvfl_rng_normal(&p->noise));
}

/* The forward of rows and the mechanism; keeps nothing but the model's own cache. */
static int forward_rows(bbvfl_party *p, const size_t *rows, size_t nb, uint8_t *q, float *hf, bbvfl_err *err) {
  if (nb == 0) return bbvfl_fail(err, BBVFL_E_ARG, "empty batch");
  switch (p->cfg.mech.kind) {
  case BBVFL_MECH_PBM:
    if (!q) return bbvfl_fail(err, BBVFL_E_ARG, "PBM forward needs a byte buffer");
    break;
  case BBVFL_MECH_NPQ:
    if (!hf) return bbvfl_fail(err, BBVFL_E_ARG, "NPQ forward needs a float buffer");
    break;
  case BBVFL_MECH_GAUSSIAN:
    if (!hf) return bbvfl_fail(err, BBVFL_E_ARG, "Gaussian forward needs a float buffer");
    break;
  }
  if (ensure(p, nb, err) != 0) return -1;
  for (size_t i = 0; i < nb; i++) {
    if (rows[i] >= p->nrows)
      return bbvfl_fail(err, BBVFL_E_ARG, "client %d: row %zu out of range (%zu rows)", p->cfg.index, rows[i], p->nrows);
    memcpy(p->xb + i * p->ncols, p->x + rows[i] * p->ncols, p->ncols * sizeof(float));
  }
  if (bbvfl_mlp_forward(&p->mlp, p->xb, nb, p->h, err) != 0) return -1;
  size_t n = nb * (size_t)p->cfg.P;
  switch (p->cfg.mech.kind) {
  case BBVFL_MECH_PBM:
    if (p->frozen) {
      /* each row is released once: a row seen before sends the bytes it sent then */
      size_t P = (size_t)p->cfg.P;
      for (size_t i = 0; i < nb; i++) {
        uint8_t *c = p->qcache + rows[i] * P;
        if (!p->qhave[rows[i]]) {
          bbvfl_pbm_quantize(&p->cfg.mech, p->h + i * P, P, &p->noise, c);
          p->qhave[rows[i]] = 1;
        }
        memcpy(q + i * P, c, P);
      }
    } else {
      if (p->cfg.afe.on) afe_shape(p, p->h, nb); /* PBM's guarantee holds for any input: clamped to [-C, C] */
      bbvfl_pbm_quantize(&p->cfg.mech, p->h, n, &p->noise, q);
    }
    break;
  case BBVFL_MECH_NPQ:
    memcpy(hf, p->h, n * sizeof(float));
    break;
  case BBVFL_MECH_GAUSSIAN:
    memcpy(hf, p->h, n * sizeof(float));
    if (p->cfg.afe.on)
      afe_release(p, hf, nb);
    else
      bbvfl_gauss_clip_noise(&p->cfg.mech, hf, nb, (size_t)p->cfg.P, &p->noise, p->scale);
    break;
  }
  return 0;
}

int bbvfl_party_forward(bbvfl_party *p, const size_t *rows, size_t nb, uint8_t *q, float *hf, bbvfl_err *err) {
  if (window_reserve(p, &p->last, nb, err) != 0) return -1;
  if (forward_rows(p, rows, nb, q, hf, err) != 0) return -1;
  window_fill(p, &p->last, nb);
  return 0;
}

int bbvfl_party_forward_eval(bbvfl_party *p, const size_t *rows, size_t nrows, uint8_t *q, float *hf,
                             bbvfl_err *err) {
  p->last.rows = 0;
  return forward_rows(p, rows, nrows, q, hf, err);
}

int bbvfl_party_forward_train(bbvfl_party *p, const size_t *rows, size_t nrows, uint8_t *q, float *hf,
                              bbvfl_err *err) {
  p->last.rows = 0;
  if (p->cfg.max_pending && p->npend >= p->cfg.max_pending)
    return bbvfl_fail(err, BBVFL_E_STATE, "client %d: %zu windows already wait for their gradients (at most %zu)",
                      p->cfg.index, p->npend, p->cfg.max_pending);
  if (p->npend == p->pend_cap) {
    size_t nc = p->pend_cap ? 2 * p->pend_cap : 2;
    bbvfl_party_window *np = realloc(p->pend, nc * sizeof *np);
    if (!np) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    memset(np + p->pend_cap, 0, (nc - p->pend_cap) * sizeof *np);
    p->pend = np;
    p->pend_cap = nc;
  }
  bbvfl_party_window *w = &p->pend[p->npend];
  if (window_reserve(p, w, nrows, err) != 0) return -1;
  if (forward_rows(p, rows, nrows, q, hf, err) != 0) return -1;
  window_fill(p, w, nrows);
  p->npend++;
  return 0;
}

size_t bbvfl_party_pending(const bbvfl_party *p) { return p->npend; }

/* DP-SGD (row mode) for one batch: rows first..first+nb-1 of the window's activations, g its
   mean-loss gradient dLoss/dh (nb x P): row i's own loss has gradient nb * g_i. The noisy mean of
   the clipped per-row gradients goes to p->dpacc. */
static int dpsgd_grad(bbvfl_party *p, const bbvfl_party_window *w, size_t first, size_t nb, const float *g,
                      bbvfl_err *err) {
  size_t P = (size_t)p->cfg.P, np = p->mlp.nparams;
  const double clip = p->cfg.rowdp.clip, sd = p->cfg.rowdp.noise * p->cfg.rowdp.clip;
  memset(p->dpacc, 0, np * sizeof *p->dpacc);
  for (size_t i = 0; i < nb; i++) {
    for (size_t k = 0; k < P; k++) p->dprow[k] = g[i * P + k] * (float)nb;
    if (bbvfl_mlp_backward_cached(&p->mlp, w->params, w->acts, w->rows, first + i, 1, p->dprow, err) != 0) return -1;
    double n2 = 0;
    for (size_t k = 0; k < np; k++) n2 += (double)p->mlp.grads[k] * p->mlp.grads[k];
    float f = n2 > clip * clip ? (float)(clip / sqrt(n2)) : 1.0f;
    for (size_t k = 0; k < np; k++) p->dpacc[k] += f * p->mlp.grads[k];
  }
  for (size_t k = 0; k < np; k++) p->dpacc[k] = (p->dpacc[k] + (float)(sd * bbvfl_rng_normal(&p->dpnoise))) / (float)nb;
  return 0;
}

/* VFL-AFE's distribution adjusting for one batch (Algorithm 1 lines 16-18): fuzzy c-means of the
   returned gradient grad (nb x P) into afe.nclasses clusters, and the adjusting loss of the
   batch's embeddings h (the tanh output of the window's forward) added to g (nb x P). */
static int afe_adjust(bbvfl_party *p, const bbvfl_party_window *w, size_t first, size_t nb, const float *grad,
                      float *g, bbvfl_err *err) {
  const size_t P = (size_t)p->cfg.P;
  const bbvfl_afe_cfg *a = &p->cfg.afe;
  if (nb < (size_t)a->nclasses) return 0;
  const float *h = w->acts + bbvfl_mlp_cache_floats(&p->mlp, w->rows) - w->rows * P + first * P;
  int *lab = malloc(nb * sizeof *lab);
  float *conf = malloc(nb * sizeof *conf), *ga = malloc(nb * P * sizeof *ga);
  int rc = -1;
  if (!lab || !conf || !ga) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  if (bbvfl_fcm(grad, nb, P, a->nclasses, 100, 1e-5, lab, conf, err) != 0) goto out;
  if (isnan(bbvfl_afe_adjust_loss(h, nb, P, lab, conf, a->conf, a->lambda, a->alpha, ga))) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < nb * P; i++) g[i] += ga[i];
  rc = 0;
out:
  free(lab);
  free(conf);
  free(ga);
  return rc;
}

/* One batch of a kept forward: rows first..first+nb-1 of w, grad its dLoss/dh_hat (nb x P); one
   optimizer step. Fails only before touching the model (out of memory on the first use). */
static int step_batch(bbvfl_party *p, const bbvfl_party_window *w, size_t first, size_t nb, const float *grad,
                      bbvfl_err *err) {
  if (p->frozen) return 0; /* the encoder mode: the model never steps */
  size_t P = (size_t)p->cfg.P, n = nb * P;
  const float *g = grad;
  if (w->scale) {
    /* Gaussian: the clip scale is treated as a constant of the row (straight-through for the norm) */
    if (n > p->gcap) {
      float *t = realloc(p->gtmp, n * sizeof *t);
      if (!t) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      p->gtmp = t;
      p->gcap = n;
    }
    for (size_t i = 0; i < n; i++) p->gtmp[i] = grad[i] * w->scale[first + i / P];
    g = p->gtmp;
    if (p->cfg.afe.adjust && afe_adjust(p, w, first, nb, grad, p->gtmp, err) != 0) return -1;
  }
  if (p->cfg.rowdp.on) {
    if (dpsgd_grad(p, w, first, nb, g, err) != 0) return -1;
    bbvfl_optim_step(&p->opt, p->mlp.params, p->dpacc);
  } else {
    if (bbvfl_mlp_backward_cached(&p->mlp, w->params, w->acts, w->rows, first, nb, g, err) != 0) return -1;
    bbvfl_optim_step(&p->opt, p->mlp.params, p->mlp.grads);
  }
  p->steps++;
  return 0;
}

int bbvfl_party_backward(bbvfl_party *p, const float *grad, bbvfl_err *err) {
  if (p->last.rows == 0) return bbvfl_fail(err, BBVFL_E_STATE, "client %d: backward without a forward", p->cfg.index);
  if (step_batch(p, &p->last, 0, p->last.rows, grad, err) != 0) return -1;
  p->last.rows = 0;
  return 0;
}

int bbvfl_party_apply(bbvfl_party *p, const float *grad, size_t nbatches, size_t B, bbvfl_err *err) {
  if (p->npend == 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "client %d: a gradient to apply but no window pending", p->cfg.index);
  bbvfl_party_window *w = &p->pend[0];
  if (nbatches < 1 || B < 1 || nbatches > w->rows / B || nbatches * B != w->rows)
    return bbvfl_fail(err, BBVFL_E_ARG, "client %d: a gradient of %zu batches of %zu rows for a window of %zu rows",
                      p->cfg.index, nbatches, B, w->rows);
  for (size_t k = 0; k < nbatches; k++)
    if (step_batch(p, w, k * B, B, grad + k * B * (size_t)p->cfg.P, err) != 0) return -1;
  /* pop: the oldest slot (its buffers kept) goes behind the pending ones */
  bbvfl_party_window done = *w;
  done.rows = 0;
  memmove(p->pend, p->pend + 1, (p->npend - 1) * sizeof *p->pend);
  p->npend--;
  p->pend[p->npend] = done;
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
  /* The generators' state (key and position) goes to disk only when it is regenerable anyway
     (reproducible noise) or keyed from the client's private noise key: the on-chain client's
     checkpoint lives in its own state dir beside that key, written mode 0600 (core/ckpt.h), so the
     file tells nobody else anything, and a restart must continue the stream where it stopped:
     restarting it from the key would repeat noise already released (correlated releases), a fresh
     OS key would be a second draw (both cost privacy the accountant does not count). A generator
     keyed by a one-off OS key (no noise key) is never written: nothing would use it. */
  const int keep = p->cfg.seeded_noise || p->cfg.noise_key;
  bbvfl_ckpt_put_bytes(&c, keep ? &p->noise : &none, sizeof none);
  if (p->cfg.rowdp.on && !p->frozen) bbvfl_ckpt_put_bytes(&c, keep ? &p->dpnoise : &none, sizeof none);
  /* the pending FIFO, oldest first: what each window's gradient will need */
  bbvfl_ckpt_put_u64(&c, (uint64_t)p->npend);
  for (size_t i = 0; i < p->npend; i++) {
    const bbvfl_party_window *w = &p->pend[i];
    bbvfl_ckpt_put_u64(&c, (uint64_t)w->rows);
    bbvfl_ckpt_put_floats(&c, w->acts, bbvfl_mlp_cache_floats(&p->mlp, w->rows));
    bbvfl_ckpt_put_floats(&c, w->params, p->mlp.nparams);
    if (w->scale) bbvfl_ckpt_put_floats(&c, w->scale, w->rows);
  }
  if (p->frozen) { /* the releases made so far: a restarted party must send the same bytes again */
    bbvfl_ckpt_put_bytes(&c, p->qhave, p->nrows);
    bbvfl_ckpt_put_bytes(&c, p->qcache, p->nrows * (size_t)p->cfg.P);
  }
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
  bbvfl_party_window *win = NULL;
  uint8_t *qh = NULL, *qc = NULL;
  uint64_t nwin = 0;
  int rc = -1;
  if (!params || !m || !v) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  if (bbvfl_ckpt_get_u64(&c, &idx, err) || bbvfl_ckpt_get_u64(&c, &steps, err) || bbvfl_ckpt_get_u64(&c, &t, err) ||
      bbvfl_ckpt_get_f64(&c, &lr, err) || bbvfl_ckpt_get_floats(&c, params, p->mlp.nparams, err) ||
      bbvfl_ckpt_get_floats(&c, m, p->opt.n, err) || bbvfl_ckpt_get_floats(&c, v, p->opt.n, err) ||
      bbvfl_ckpt_get_bytes(&c, &noise, sizeof noise, err) ||
      (p->cfg.rowdp.on && !p->frozen && bbvfl_ckpt_get_bytes(&c, &dpn, sizeof dpn, err))) {
    bbvfl_wrap(err, "%s", path);
    goto out;
  }
  if (idx != (uint64_t)p->cfg.index) {
    bbvfl_fail(err, BBVFL_E_STATE, "%s is the checkpoint of client %llu, not client %d", path, (unsigned long long)idx,
               p->cfg.index);
    goto out;
  }
  /* the pending FIFO (absent from checkpoints written before windows: none pending) */
  if (c.pos < c.len && bbvfl_ckpt_get_u64(&c, &nwin, err) != 0) {
    bbvfl_wrap(err, "%s", path);
    goto out;
  }
  if (nwin > (c.len - c.pos) / sizeof(float) || (p->cfg.max_pending && nwin > p->cfg.max_pending)) {
    bbvfl_fail(err, BBVFL_E_STATE, "%s: %llu pending windows (at most %zu)", path, (unsigned long long)nwin,
               p->cfg.max_pending);
    goto out;
  }
  if (nwin) {
    win = calloc((size_t)nwin, sizeof *win);
    if (!win) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
  }
  for (uint64_t i = 0; i < nwin; i++) {
    uint64_t r;
    if (bbvfl_ckpt_get_u64(&c, &r, err) != 0) {
      bbvfl_wrap(err, "%s", path);
      goto out;
    }
    if (r < 1 || r > (c.len - c.pos) / sizeof(float)) {
      bbvfl_fail(err, BBVFL_E_STATE, "%s: a pending window of %llu rows", path, (unsigned long long)r);
      goto out;
    }
    if (window_reserve(p, &win[i], (size_t)r, err) != 0 ||
        bbvfl_ckpt_get_floats(&c, win[i].acts, bbvfl_mlp_cache_floats(&p->mlp, (size_t)r), err) != 0 ||
        bbvfl_ckpt_get_floats(&c, win[i].params, p->mlp.nparams, err) != 0 ||
        (win[i].scale && bbvfl_ckpt_get_floats(&c, win[i].scale, (size_t)r, err) != 0)) {
      bbvfl_wrap(err, "%s", path);
      goto out;
    }
    win[i].rows = (size_t)r;
  }
  if (p->frozen) {
    size_t nq = p->nrows * (size_t)p->cfg.P;
    qh = malloc(p->nrows);
    qc = malloc(nq);
    if (!qh || !qc) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
    if (bbvfl_ckpt_get_bytes(&c, qh, p->nrows, err) != 0 || bbvfl_ckpt_get_bytes(&c, qc, nq, err) != 0) {
      bbvfl_wrap(err, "%s: the encoder's releases", path);
      goto out;
    }
    memcpy(p->qhave, qh, p->nrows);
    memcpy(p->qcache, qc, nq);
  }
  memcpy(p->mlp.params, params, p->mlp.nparams * sizeof(float));
  memcpy(p->opt.m, m, p->opt.n * sizeof(float));
  memcpy(p->opt.v, v, p->opt.n * sizeof(float));
  p->opt.t = (long long)t;
  p->opt.lr_now = lr;
  p->steps = steps;
  /* restored when reproducible or keyed from the client's private noise key (see bbvfl_party_save);
     a checkpoint written without them (all zero) leaves the fresh generators */
  const int keep = p->cfg.seeded_noise || p->cfg.noise_key;
  bbvfl_rng zero;
  memset(&zero, 0, sizeof zero);
  if (keep && memcmp(&noise, &zero, sizeof zero)) p->noise = noise;
  if (keep && p->cfg.rowdp.on && !p->frozen && memcmp(&dpn, &zero, sizeof zero)) p->dpnoise = dpn;
  bbvfl_rng_wipe(&noise);
  bbvfl_rng_wipe(&dpn);
  for (size_t i = 0; i < p->pend_cap; i++) window_free(&p->pend[i]);
  free(p->pend);
  p->pend = win;
  p->npend = p->pend_cap = (size_t)nwin;
  win = NULL;
  nwin = 0;
  p->last.rows = 0;
  rc = 0;
out:
  for (uint64_t i = 0; i < nwin && win; i++) window_free(&win[i]);
  free(win);
  free(qh);
  free(qc);
  bbvfl_rng_wipe(&noise);
  bbvfl_rng_wipe(&dpn);
  free(params);
  free(m);
  free(v);
  bbvfl_ckpt_free(&c);
  return rc;
}
