/* The VFL-AFE flags (ml/afe.h) of `bbvfl train` and `bbvfl attack`. */
#ifndef BBVFL_CLI_AFE_FLAGS_H
#define BBVFL_CLI_AFE_FLAGS_H

#include "cli/args.h"
#include "ml/afe.h"

typedef struct {
  int afe, rescale, adjust;
  double lambda, kl, conf, p1, p2, clip;
} afe_flags;

#define AFE_FLAGS_NOPTS 9
void afe_flags_defaults(afe_flags *f);
/* Appends the flags to opts (room for AFE_FLAGS_NOPTS), returns how many. */
size_t afe_flags_opts(afe_flags *f, cli_opt *opts);
/* Into a: on, rescale, adjust, weights; *clip = --afe-clip when given (> 0). Checks the values. */
int afe_flags_apply(const afe_flags *f, bbvfl_afe_cfg *a, double *clip, bbvfl_err *err);

#endif
