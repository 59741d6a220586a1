/* Optimizers over one flat parameter vector: SGD (optional momentum) and Adam, with a per-epoch
 * learning-rate decay lr_e = lr * decay^e. The optimizer owns its moment arrays
 * (bbvfl_optim_free); params and grads are borrowed for each step. */
#ifndef BBVFL_ML_OPTIM_H
#define BBVFL_ML_OPTIM_H

#include <stddef.h>

#include "common/err.h"

/* BBVFL_OPT_SQN is the quasi-Newton optimizer of the linear model (ml/sqn.h, offchain/lr_train.h), not
 * a step of this file: bbvfl_optim_init refuses it. */
typedef enum { BBVFL_OPT_SGD = 0, BBVFL_OPT_ADAM = 1, BBVFL_OPT_SQN = 2 } bbvfl_opt_kind;

typedef struct {
  bbvfl_opt_kind kind;
  double lr, decay, momentum;   /* decay: per-epoch multiplier (1 = none); momentum: SGD only */
  double beta1, beta2, eps;     /* Adam */
} bbvfl_optim_cfg;

typedef struct {
  bbvfl_optim_cfg cfg;
  size_t n;
  long long t;     /* steps taken */
  double lr_now;   /* lr for the current epoch */
  float *m, *v;    /* moments (v: Adam only) */
} bbvfl_optim;

/* Fills defaults: Adam, lr 0.001, decay 1, momentum 0, beta1 0.9, beta2 0.999, eps 1e-8. */
void bbvfl_optim_defaults(bbvfl_optim_cfg *c);
int bbvfl_optim_parse_kind(const char *s, bbvfl_opt_kind *k); /* "sgd" | "adam" | "sqn" */
int bbvfl_optim_init(bbvfl_optim *o, const bbvfl_optim_cfg *c, size_t n, bbvfl_err *err);
void bbvfl_optim_free(bbvfl_optim *o);
/* Sets the learning rate for epoch e (0-based). */
void bbvfl_optim_epoch(bbvfl_optim *o, int e);
/* One step: params -= update(grads). */
void bbvfl_optim_step(bbvfl_optim *o, float *params, const float *grads);

#endif
