#include "ml/optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void bbvfl_optim_defaults(bbvfl_optim_cfg *c) {
  c->kind = BBVFL_OPT_ADAM;
  c->lr = 0.001;
  c->decay = 1.0;
  c->momentum = 0.0;
  c->beta1 = 0.9;
  c->beta2 = 0.999;
  c->eps = 1e-8;
}

int bbvfl_optim_parse_kind(const char *s, bbvfl_opt_kind *k) {
  if (strcmp(s, "sgd") == 0) *k = BBVFL_OPT_SGD;
  else if (strcmp(s, "adam") == 0) *k = BBVFL_OPT_ADAM;
  else if (strcmp(s, "sqn") == 0) *k = BBVFL_OPT_SQN;
  else return -1;
  return 0;
}

int bbvfl_optim_init(bbvfl_optim *o, const bbvfl_optim_cfg *c, size_t n, bbvfl_err *err) {
  memset(o, 0, sizeof *o);
  if (c->kind != BBVFL_OPT_SGD && c->kind != BBVFL_OPT_ADAM)
    return bbvfl_fail(err, BBVFL_E_ARG, "optimizer: only sgd and adam step here (sqn is the linear model's, --model lr)");
  if (!(c->lr > 0 && isfinite(c->lr))) return bbvfl_fail(err, BBVFL_E_ARG, "learning rate must be positive, got %g", c->lr);
  if (!(c->decay > 0 && c->decay <= 1))
    return bbvfl_fail(err, BBVFL_E_ARG, "learning-rate decay must be in (0, 1], got %g", c->decay);
  if (!(c->momentum >= 0 && c->momentum < 1))
    return bbvfl_fail(err, BBVFL_E_ARG, "momentum must be in [0, 1), got %g", c->momentum);
  o->cfg = *c;
  o->n = n;
  o->lr_now = c->lr;
  o->m = calloc(n ? n : 1, sizeof *o->m);
  o->v = calloc(n ? n : 1, sizeof *o->v);
  if (!o->m || !o->v) {
    bbvfl_optim_free(o);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for optimizer state");
  }
  return 0;
}

void bbvfl_optim_free(bbvfl_optim *o) {
  if (!o) return;
  free(o->m);
  free(o->v);
  o->m = o->v = NULL;
}

void bbvfl_optim_epoch(bbvfl_optim *o, int e) { o->lr_now = o->cfg.lr * pow(o->cfg.decay, e); }

void bbvfl_optim_step(bbvfl_optim *o, float *params, const float *grads) {
  o->t++;
  float lr = (float)o->lr_now;
  if (o->cfg.kind == BBVFL_OPT_SGD) {
    float mu = (float)o->cfg.momentum;
    if (mu == 0) {
      for (size_t i = 0; i < o->n; i++) params[i] -= lr * grads[i];
    } else {
      for (size_t i = 0; i < o->n; i++) {
        o->m[i] = mu * o->m[i] + grads[i];
        params[i] -= lr * o->m[i];
      }
    }
    return;
  }
  float b1 = (float)o->cfg.beta1, b2 = (float)o->cfg.beta2, eps = (float)o->cfg.eps;
  double c1 = 1 - pow(o->cfg.beta1, (double)o->t), c2 = 1 - pow(o->cfg.beta2, (double)o->t);
  float step = (float)(o->lr_now * sqrt(c2) / c1);
  float epsh = (float)(eps * sqrt(c2));
  for (size_t i = 0; i < o->n; i++) {
    float g = grads[i];
    o->m[i] = b1 * o->m[i] + (1 - b1) * g;
    o->v[i] = b2 * o->v[i] + (1 - b2) * g * g;
    params[i] -= step * o->m[i] / (sqrtf(o->v[i]) + epsh);
  }
}
