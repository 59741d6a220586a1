#include "cli/afe_flags.h"

#include <math.h>

void afe_flags_defaults(afe_flags *f) {
  bbvfl_afe_cfg d;
  bbvfl_afe_defaults(&d);
  *f = (afe_flags){0, 0, 0, d.lambda, d.alpha, d.conf, d.p1, d.p2, 0};
}

size_t afe_flags_opts(afe_flags *f, cli_opt *o) {
  size_t n = 0;
  o[n++] = (cli_opt){"afe", OPT_FLAG, &f->afe, NULL,
                     "VFL-AFE (--mechanism gaussian or pbm): each embedding row clipped at t (--clip), then the mechanism"};
  o[n++] = (cli_opt){"afe-rescale", OPT_FLAG, &f->rescale, NULL,
                     "VFL-AFE adaptive rescaling: each batch scaled by 2t / its estimated maximum disparity (Eqs. 3-5)"};
  o[n++] = (cli_opt){"afe-adjust", OPT_FLAG, &f->adjust, NULL,
                     "VFL-AFE distribution adjusting: fuzzy c-means soft labels from the returned gradients, contrastive + KL loss"};
  o[n++] = (cli_opt){"afe-lambda", OPT_DBL, &f->lambda, "W", "weight of the contrastive loss (default 0.1)"};
  o[n++] = (cli_opt){"afe-kl", OPT_DBL, &f->kl, "W", "weight of the KL term (default 0.01)"};
  o[n++] = (cli_opt){"afe-conf", OPT_DBL, &f->conf, "C", "confidence threshold of the soft labels, 0..1 (default 0.8)"};
  o[n++] = (cli_opt){"afe-p1", OPT_DBL, &f->p1, "P", "failure probability of the minibatch estimate, added to delta (default 0.001)"};
  o[n++] = (cli_opt){"afe-p2", OPT_DBL, &f->p2, "P", "failure probability of the quantile estimate, added to delta (default 0.001)"};
  o[n++] = (cli_opt){"afe-clip", OPT_DBL, &f->clip, "T", "VFL-AFE clip threshold t (the same as --clip)"};
  return n;
}

int afe_flags_apply(const afe_flags *f, bbvfl_afe_cfg *a, double *clip, bbvfl_err *err) {
  a->on = f->afe;
  a->rescale = f->rescale;
  a->adjust = f->adjust;
  a->lambda = f->lambda;
  a->alpha = f->kl;
  a->conf = f->conf;
  a->p1 = f->p1;
  a->p2 = f->p2;
  if (f->clip != 0) {
    if (!(f->clip > 0) || !isfinite(f->clip)) return bbvfl_fail(err, BBVFL_E_ARG, "--afe-clip must be > 0, got %g", f->clip);
    if (!f->afe) return bbvfl_fail(err, BBVFL_E_ARG, "--afe-clip needs --afe");
    *clip = f->clip;
  }
  return bbvfl_afe_check(a, err);
}
