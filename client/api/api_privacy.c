/* include/bbvfl/privacy.h over dp/privacy.h (bbvfl_privacy_compute, the one accountant). */
#include <limits.h>
#include <math.h>

#include "api/api_int.h"
#include "dp/privacy.h"
#include "core/cfgprivacy.h"

const char *bbvfl_level_name(bbvfl_level level) {
  switch (level) {
    case BBVFL_LEVEL_ROW_FEATURE: return "row_feature";
    case BBVFL_LEVEL_ROW_SAMPLE: return "row_sample";
    case BBVFL_LEVEL_FEATURE_SET: return "feature_set";
    case BBVFL_LEVEL_LABELS: return "labels";
    case BBVFL_LEVEL_PERSON: return "person";
  }
  return "unknown";
}

const char *bbvfl_level_description(bbvfl_level level) {
  switch (level) {
    case BBVFL_LEVEL_ROW_FEATURE: return "row level, one party's features";
    case BBVFL_LEVEL_ROW_SAMPLE: return "row level, every party's features (sample level)";
    case BBVFL_LEVEL_FEATURE_SET: return "one party's whole column set";
    case BBVFL_LEVEL_LABELS: return "one row's label";
    case BBVFL_LEVEL_PERSON: return "one person's whole record: every party's features and the label";
  }
  return "unknown";
}

static bbvfl_status epsilon_of(const struct bbvfl_config *c, bbvfl_level level, size_t rows, bbvfl_epsilon *out,
                               bbvfl_error *err) {
  if (level != BBVFL_LEVEL_ROW_FEATURE && level != BBVFL_LEVEL_ROW_SAMPLE && level != BBVFL_LEVEL_FEATURE_SET &&
      level != BBVFL_LEVEL_LABELS && level != BBVFL_LEVEL_PERSON)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "level %d is not a bbvfl_level", (int)level);
  if (level == BBVFL_LEVEL_FEATURE_SET && rows == 0)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "the feature-set level needs the training row count (0 given)");
  if (rows > INT_MAX) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "%zu training rows is too many", rows);
  const bbvfl_offchain_cfg *o = &c->off;
  /* the one place a training setup becomes the accountant's input (core/cfgprivacy.h): LR's
     curvature rounds count as further releases there, as in `bbvfl train` */
  bbvfl_privacy p;
  bbvfl_err ierr = {0};
  if (bbvfl_cfg_privacy(o, rows, 0, 0, c->delta, &p, &ierr) != 0) return bbvfl_api_from(&ierr, err);
  const bbvfl_privacy_eps *e = level == BBVFL_LEVEL_ROW_FEATURE  ? &p.row_feature
                               : level == BBVFL_LEVEL_ROW_SAMPLE ? &p.row_sample
                               : level == BBVFL_LEVEL_FEATURE_SET ? &p.feature_set
                               : level == BBVFL_LEVEL_PERSON      ? &p.person
                                                                  : &p.labels;
  out->level = level;
  out->epsilon = e->epsilon;
  out->method = e->method;
  if (o->seeded_noise && isfinite(e->epsilon)) {
    /* a seeded configuration draws its noise from the seed (bbvfl_config_set_seed): whoever knows
       the seed regenerates it, so no epsilon holds */
    out->epsilon = INFINITY;
    out->method = "none";
    out->delta = p.delta;
    out->end_to_end = 0;
    out->scope = BBVFL_PRIVACY_VOID;
    return BBVFL_STATUS_OK;
  }
  if (level == BBVFL_LEVEL_LABELS) {
    /* randomized response is drawn once per training row before training: pure and end-to-end */
    out->delta = isfinite(e->epsilon) ? 0.0 : c->delta;
    out->end_to_end = isfinite(e->epsilon);
    out->scope = isfinite(e->epsilon) ? "label level: randomized response on every training label, pure epsilon"
                                      : "label level: unprotected; the posted gradients give the training labels back";
  } else {
    out->delta = p.delta;
    out->end_to_end = p.end_to_end;
    out->scope = bbvfl_privacy_scope(&p);
  }
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_epsilon(const bbvfl_config *cfg, bbvfl_level level, size_t train_rows, bbvfl_epsilon *out,
                                  bbvfl_error *err) {
  if (!cfg || !out)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_config_epsilon: %s is NULL", cfg ? "out" : "the config");
  return epsilon_of(cfg, level, train_rows, out, err);
}

bbvfl_status bbvfl_run_epsilon(const bbvfl_run *run, bbvfl_level level, bbvfl_epsilon *out, bbvfl_error *err) {
  if (!run || !out)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_run_epsilon: %s is NULL", run ? "out" : "the run");
  return epsilon_of(&run->cfg, level, run->res.n_train, out, err);
}
