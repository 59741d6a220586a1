#include "core/cfgprivacy.h"

#include <limits.h>
#include <math.h>


int bbvfl_cfg_privacy(const bbvfl_offchain_cfg *c, size_t rows, int masked, int participants, double delta,
                      bbvfl_privacy *out, bbvfl_err *err) {
  if (rows > INT_MAX) return bbvfl_fail(err, BBVFL_E_ARG, "privacy: %zu training rows is too many", rows);
  int epochs = c->epochs;
  if (c->model == BBVFL_MODEL_LR) { /* the curvature rounds release the subsampled rows again */
    int P;
    bbvfl_lr_releases(c, rows, c->P > 1 ? c->P : 2, &P, &epochs);
  }
  bbvfl_privacy_in in = {.kind = c->mech.kind, .b = c->mech.b, .beta = c->mech.beta, .clip = c->mech.clip,
                         .sigma = c->mech.sigma, .P = c->P, .M = c->M, .epochs = epochs, .rows = (int)rows,
                         .delta = delta, .masked = masked, .participants = participants,
                         .colluding = participants > 1 ? BBVFL_ACCT_COLLUDING_DEFAULT : 0,
                         .label_eps = c->label_eps,
                         .rowdp = c->rowdp,
                         .reproducible = c->seeded_noise};
  return bbvfl_privacy_compute(&in, out, NULL, err);
}

json_t *bbvfl_json_num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }
