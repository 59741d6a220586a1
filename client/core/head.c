#include "core/head.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ckpt.h"

int bbvfl_vhead_init(bbvfl_vhead *v, int P, int nclasses, int M, const bbvfl_mech *mech, const bbvfl_optim_cfg *opt,
                     uint64_t seed, bbvfl_err *err) {
  memset(v, 0, sizeof *v);
  if (M < 1) return bbvfl_fail(err, BBVFL_E_ARG, "need at least one client");
  if (bbvfl_mech_check(mech, err) != 0) return -1;
  v->M = M;
  v->P = P;
  v->mech = *mech;
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, seed, bbvfl_rng_stream(BBVFL_STREAM_HEAD, 0));
  if (bbvfl_fhead_init(&v->fh, P, nclasses, &r, err) != 0) return -1;
  if (bbvfl_optim_init(&v->opt, opt, v->fh.nparams, err) != 0) {
    bbvfl_fhead_free(&v->fh);
    return -1;
  }
  return 0;
}

void bbvfl_vhead_free(bbvfl_vhead *v) {
  if (!v) return;
  bbvfl_fhead_free(&v->fh);
  bbvfl_optim_free(&v->opt);
  free(v->hhat);
  memset(v, 0, sizeof *v);
}

void bbvfl_vhead_epoch(bbvfl_vhead *v, int e) { bbvfl_optim_epoch(&v->opt, e); }

int bbvfl_vhead_estimate(const bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, size_t nb, float *hhat,
                         bbvfl_err *err) {
  size_t n = nb * (size_t)v->P;
  if (v->mech.kind == BBVFL_MECH_PBM) {
    if (!sum_q) return bbvfl_fail(err, BBVFL_E_ARG, "PBM head needs the integer sums");
    uint32_t maxs = (uint32_t)v->M * (uint32_t)v->mech.b;
    for (size_t i = 0; i < n; i++)
      if (sum_q[i] > maxs)
        return bbvfl_fail(err, BBVFL_E_VERIFY, "aggregate value %u at %zu exceeds M*b = %u: the sum is corrupt",
                          sum_q[i], i, maxs);
    bbvfl_pbm_estimate(&v->mech, v->M, sum_q, n, hhat);
    return 0;
  }
  if (!sum_f) return bbvfl_fail(err, BBVFL_E_ARG, "%s head needs the float sums", bbvfl_mech_name(v->mech.kind));
  for (size_t i = 0; i < n; i++)
    if (!isfinite(sum_f[i])) return bbvfl_fail(err, BBVFL_E_VERIFY, "aggregate value %zu is not finite", i);
  memcpy(hhat, sum_f, n * sizeof(float));
  return 0;
}

static int ensure(bbvfl_vhead *v, size_t nb, bbvfl_err *err) {
  if (nb <= v->cap) return 0;
  free(v->hhat);
  v->hhat = malloc(nb * (size_t)v->P * sizeof(float));
  if (!v->hhat) {
    v->cap = 0;
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  v->cap = nb;
  return 0;
}

int bbvfl_vhead_train(bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, const int *y, size_t nb,
                      double *loss, float *grad, float *probs, bbvfl_err *err) {
  if (ensure(v, nb, err) != 0 || bbvfl_vhead_estimate(v, sum_q, sum_f, nb, v->hhat, err) != 0) return -1;
  if (bbvfl_fhead_train_batch(&v->fh, v->hhat, y, nb, loss, grad, probs, err) != 0) return -1;
  bbvfl_optim_step(&v->opt, v->fh.params, v->fh.grads);
  v->steps++;
  return 0;
}

int bbvfl_vhead_label_grad(bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, const int *y, size_t nb,
                           double *loss_sum, size_t *nheld, float *dlog, bbvfl_err *err) {
  if (ensure(v, nb, err) != 0 || bbvfl_vhead_estimate(v, sum_q, sum_f, nb, v->hhat, err) != 0) return -1;
  return bbvfl_fhead_label_grad(&v->fh, v->hhat, y, nb, nb, loss_sum, nheld, dlog, err);
}

int bbvfl_vhead_train_dlogits(bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, size_t nb,
                              const float *dlog, float *grad, bbvfl_err *err) {
  if (ensure(v, nb, err) != 0 || bbvfl_vhead_estimate(v, sum_q, sum_f, nb, v->hhat, err) != 0) return -1;
  if (bbvfl_fhead_backward(&v->fh, v->hhat, dlog, nb, grad, err) != 0) return -1;
  bbvfl_optim_step(&v->opt, v->fh.params, v->fh.grads);
  v->steps++;
  return 0;
}

int bbvfl_vhead_outputs(const bbvfl_vhead *v) { return v->fh.K; }

int bbvfl_vhead_eval(bbvfl_vhead *v, const uint32_t *sum_q, const float *sum_f, size_t nb, float *probs,
                     bbvfl_err *err) {
  if (ensure(v, nb, err) != 0 || bbvfl_vhead_estimate(v, sum_q, sum_f, nb, v->hhat, err) != 0) return -1;
  return bbvfl_fhead_predict(&v->fh, v->hhat, nb, probs, err);
}

size_t bbvfl_vhead_nparams(const bbvfl_vhead *v) { return v->fh.nparams; }

void bbvfl_f32_to_be(const float *v, size_t n, uint8_t *out) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    out[4 * i] = (uint8_t)(u >> 24);
    out[4 * i + 1] = (uint8_t)(u >> 16);
    out[4 * i + 2] = (uint8_t)(u >> 8);
    out[4 * i + 3] = (uint8_t)u;
  }
}

void bbvfl_f32_from_be(const uint8_t *in, size_t n, float *v) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u = (uint32_t)in[4 * i] << 24 | (uint32_t)in[4 * i + 1] << 16 | (uint32_t)in[4 * i + 2] << 8 | in[4 * i + 3];
    memcpy(&v[i], &u, 4);
  }
}

void bbvfl_vhead_params_be(const bbvfl_vhead *v, uint8_t *out) { bbvfl_f32_to_be(v->fh.params, v->fh.nparams, out); }

int bbvfl_vhead_load_params_be(bbvfl_vhead *v, const uint8_t *in, size_t len, bbvfl_err *err) {
  if (len != 4 * v->fh.nparams)
    return bbvfl_fail(err, BBVFL_E_PARSE, "fusion head parameters: %zu bytes, expected %zu (%zu binary32 values)", len,
                      4 * v->fh.nparams, v->fh.nparams);
  float *tmp = malloc(v->fh.nparams * sizeof(float));
  if (!tmp) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  bbvfl_f32_from_be(in, v->fh.nparams, tmp);
  for (size_t i = 0; i < v->fh.nparams; i++)
    if (!isfinite(tmp[i])) {
      free(tmp);
      return bbvfl_fail(err, BBVFL_E_PARSE, "fusion head parameter %zu is not finite", i);
    }
  memcpy(v->fh.params, tmp, v->fh.nparams * sizeof(float));
  free(tmp);
  return 0;
}

int bbvfl_vhead_save(const bbvfl_vhead *v, const char *path, bbvfl_err *err) {
  bbvfl_ckpt c = {0};
  bbvfl_ckpt_put_u64(&c, v->steps);
  bbvfl_ckpt_put_u64(&c, (uint64_t)v->opt.t);
  bbvfl_ckpt_put_f64(&c, v->opt.lr_now);
  bbvfl_ckpt_put_floats(&c, v->fh.params, v->fh.nparams);
  bbvfl_ckpt_put_floats(&c, v->opt.m, v->opt.n);
  bbvfl_ckpt_put_floats(&c, v->opt.v, v->opt.n);
  int rc = bbvfl_ckpt_save(&c, path, "head", err);
  bbvfl_ckpt_free(&c);
  return rc;
}

int bbvfl_vhead_load(bbvfl_vhead *v, const char *path, bbvfl_err *err) {
  bbvfl_ckpt c;
  if (bbvfl_ckpt_open(&c, path, "head", err) != 0) return -1;
  size_t n = v->fh.nparams;
  float *buf = malloc(3 * n * sizeof(float));
  uint64_t steps, t;
  double lr;
  int rc = -1;
  if (!buf) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  if (bbvfl_ckpt_get_u64(&c, &steps, err) || bbvfl_ckpt_get_u64(&c, &t, err) || bbvfl_ckpt_get_f64(&c, &lr, err) ||
      bbvfl_ckpt_get_floats(&c, buf, n, err) || bbvfl_ckpt_get_floats(&c, buf + n, n, err) ||
      bbvfl_ckpt_get_floats(&c, buf + 2 * n, n, err)) {
    bbvfl_wrap(err, "%s", path);
    goto out;
  }
  memcpy(v->fh.params, buf, n * sizeof(float));
  memcpy(v->opt.m, buf + n, n * sizeof(float));
  memcpy(v->opt.v, buf + 2 * n, n * sizeof(float));
  v->steps = steps;
  v->opt.t = (long long)t;
  v->opt.lr_now = lr;
  rc = 0;
out:
  free(buf);
  bbvfl_ckpt_free(&c);
  return rc;
}
