/* include/bbvfl/train.h over offchain/offchain.h: a config is a bbvfl_offchain_cfg plus what the public
 * API adds (an owned partition string, delta, whether a seed was set); a run is the trainer's
 * result plus a copy of the config. Value checks mirror the limits of `bbvfl train --offchain`. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "api/api_int.h"

_Static_assert(BBVFL_HIDDEN_LAYERS_MAX == BBVFL_MAX_HIDDEN, "include/bbvfl/train.h: hidden layer limit");

#define CHECK_CFG(fn)                                                                 \
  do {                                                                                \
    if (!cfg) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, fn ": the config is NULL"); \
  } while (0)

/* PBM sums clients x b per lane of the aggregator: ARG (with the product) above the widest lane,
 * 65535. */
static bbvfl_status lanes_fit(long clients, int b, bbvfl_error *err) {
  if (!bbvfl_pbm_lanes_fit(clients, b))
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "clients x b = %ld exceeds 65535, the widest lane of the aggregator",
                          clients * b);
  return BBVFL_STATUS_OK;
}

/* m (a changed copy of cfg's mechanism) checked (dp/mech.h; PBM: lanes_fit for cfg's clients)
 * and, when it passes, made cfg's; otherwise cfg is unchanged. */
static bbvfl_status set_mech(bbvfl_config *cfg, const bbvfl_mech *m, bbvfl_error *err) {
  bbvfl_err ierr = {0};
  if (bbvfl_mech_check(m, &ierr) != 0) return bbvfl_api_from(&ierr, err);
  if (m->kind == BBVFL_MECH_PBM && lanes_fit(cfg->off.M, m->b, err) != BBVFL_STATUS_OK) return BBVFL_STATUS_ARG;
  cfg->off.mech = *m;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_create(bbvfl_config **out, bbvfl_error *err) {
  if (!out) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_config_create: out is NULL");
  bbvfl_config *c = calloc(1, sizeof *c);
  *out = NULL;
  if (!c) return bbvfl_api_fail(err, BBVFL_STATUS_NOMEM, "out of memory");
  bbvfl_offchain_defaults(&c->off);
  c->off.seed = 0;
  c->off.seeded_noise = 0;
  c->delta = 1e-5;
  *out = c;
  return BBVFL_STATUS_OK;
}

void bbvfl_config_destroy(bbvfl_config *cfg) {
  if (!cfg) return;
  free(cfg->partition);
  free(cfg);
}

int bbvfl_api_config_copy(struct bbvfl_config *dst, const struct bbvfl_config *src) {
  *dst = *src;
  dst->partition = NULL;
  dst->off.partition = NULL;
  if (src->partition) {
    dst->partition = strdup(src->partition);
    if (!dst->partition) return -1;
    dst->off.partition = dst->partition;
  }
  return 0;
}

bbvfl_status bbvfl_config_set_clients(bbvfl_config *cfg, int clients, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_clients");
  if (clients < 1 || clients > 1000)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "clients must be in 1..1000, got %d", clients);
  if (cfg->off.mech.kind == BBVFL_MECH_PBM && lanes_fit(clients, cfg->off.mech.b, err) != BBVFL_STATUS_OK)
    return BBVFL_STATUS_ARG;
  cfg->off.M = clients;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_mechanism(bbvfl_config *cfg, bbvfl_mechanism mechanism, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_mechanism");
  switch (mechanism) {
    case BBVFL_MECHANISM_NPQ: cfg->off.mech.kind = BBVFL_MECH_NPQ; return BBVFL_STATUS_OK;
    case BBVFL_MECHANISM_PBM:
      if (lanes_fit(cfg->off.M, cfg->off.mech.b, err) != BBVFL_STATUS_OK) return BBVFL_STATUS_ARG;
      cfg->off.mech.kind = BBVFL_MECH_PBM;
      return BBVFL_STATUS_OK;
    case BBVFL_MECHANISM_GAUSSIAN: cfg->off.mech.kind = BBVFL_MECH_GAUSSIAN; return BBVFL_STATUS_OK;
  }
  return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "mechanism %d is not NPQ (0), PBM (1) or Gaussian (2)", (int)mechanism);
}

bbvfl_status bbvfl_config_set_pbm(bbvfl_config *cfg, int b, double beta, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_pbm");
  bbvfl_mech m = cfg->off.mech;
  m.kind = BBVFL_MECH_PBM;
  m.b = b;
  m.beta = beta;
  return set_mech(cfg, &m, err);
}

bbvfl_status bbvfl_config_set_gaussian(bbvfl_config *cfg, double clip, double sigma, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_gaussian");
  if (!(clip > 0) || !isfinite(clip) || !(sigma > 0) || !isfinite(sigma))
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "Gaussian clip and sigma must be > 0 and finite, got %g and %g", clip,
                          sigma);
  bbvfl_mech m = cfg->off.mech;
  m.kind = BBVFL_MECH_GAUSSIAN;
  m.clip = clip;
  m.sigma = sigma;
  return set_mech(cfg, &m, err);
}

bbvfl_status bbvfl_config_set_embedding(bbvfl_config *cfg, int P, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_embedding");
  if (P < 1 || P > 4096) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "embedding size P must be in 1..4096, got %d", P);
  cfg->off.P = P;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_batch(bbvfl_config *cfg, int batch, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_batch");
  if (batch < 1 || batch > 1 << 20)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "batch size must be in 1..%d, got %d", 1 << 20, batch);
  cfg->off.B = (size_t)batch;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_epochs(bbvfl_config *cfg, int epochs, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_epochs");
  if (epochs < 1 || epochs > 100000)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "epochs must be in 1..100000, got %d", epochs);
  cfg->off.epochs = epochs;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_seed(bbvfl_config *cfg, uint64_t seed, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_seed");
  cfg->off.seed = seed;
  cfg->off.seeded_noise = 1;
  cfg->seeded = 1;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_hidden(bbvfl_config *cfg, const int *widths, size_t n, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_hidden");
  if (n > BBVFL_HIDDEN_LAYERS_MAX)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "at most %d hidden layers, got %zu", BBVFL_HIDDEN_LAYERS_MAX, n);
  if (n > 0 && !widths) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_config_set_hidden: widths is NULL");
  for (size_t i = 0; i < n; i++)
    if (widths[i] < 1 || widths[i] > 65536)
      return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "hidden layer %zu: width must be in 1..65536, got %d", i + 1,
                            widths[i]);
  cfg->off.nhidden = (int)n;
  for (size_t i = 0; i < n; i++) cfg->off.hidden[i] = widths[i];
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_optimizer(bbvfl_config *cfg, bbvfl_optimizer optimizer, double lr, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_optimizer");
  bbvfl_opt_kind k;
  switch (optimizer) {
    case BBVFL_OPTIMIZER_SGD: k = BBVFL_OPT_SGD; break;
    case BBVFL_OPTIMIZER_ADAM: k = BBVFL_OPT_ADAM; break;
    default:
      return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "optimizer %d is not SGD (0) or Adam (1)", (int)optimizer);
  }
  if (!(lr > 0) || !isfinite(lr))
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "learning rate must be > 0 and finite, got %g", lr);
  cfg->off.opt.kind = k;
  cfg->off.opt.lr = lr;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_test_fraction(bbvfl_config *cfg, double fraction, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_test_fraction");
  if (!(fraction > 0 && fraction < 1))
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "test fraction must be in (0, 1), got %g", fraction);
  cfg->off.test_frac = fraction;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_partition(bbvfl_config *cfg, const char *spec, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_partition");
  char *copy = NULL;
  if (spec) {
    if (!*spec) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "partition: empty (NULL selects the even split)");
    copy = strdup(spec);
    if (!copy) return bbvfl_api_fail(err, BBVFL_STATUS_NOMEM, "out of memory");
  }
  free(cfg->partition);
  cfg->partition = copy;
  cfg->off.partition = copy;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_label_epsilon(bbvfl_config *cfg, double epsilon, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_label_epsilon");
  if (!(epsilon >= 0) || !isfinite(epsilon) || (epsilon > 0 && epsilon < 1e-6))
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "label epsilon must be 0 (off) or in [1e-6, inf), got %g", epsilon);
  cfg->off.label_eps = epsilon;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_config_set_delta(bbvfl_config *cfg, double delta, bbvfl_error *err) {
  CHECK_CFG("bbvfl_config_set_delta");
  if (!(delta > 0 && delta < 1)) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "delta must be in (0, 1), got %g", delta);
  cfg->delta = delta;
  return BBVFL_STATUS_OK;
}

/* The trainer's per-epoch callback, translated to the public one. */
typedef struct {
  bbvfl_epoch_fn fn;
  void *ctx;
} epoch_relay;

static void stats_of(const bbvfl_epoch_metrics *m, bbvfl_epoch_stats *s) {
  s->epoch = m->epoch;
  s->train_loss = m->train_loss;
  s->test_loss = m->test_loss;
  s->auroc = m->auroc;
  s->accuracy = m->accuracy;
  s->f1 = m->f1;
  s->seconds = m->wall_s;
}

static void relay_epoch(void *ctx, const bbvfl_epoch_metrics *m) {
  const epoch_relay *r = ctx;
  bbvfl_epoch_stats s;
  stats_of(m, &s);
  r->fn(r->ctx, &s);
}

/* What bbvfl_offchain_train does not check against the table itself: the partition names M
 * clients, and (even split) every client gets a column. */
static bbvfl_status check_against(const bbvfl_table *table, const struct bbvfl_config *c, bbvfl_error *err) {
  if (c->partition) {
    bbvfl_partition part;
    bbvfl_err ierr = {0};
    if (bbvfl_partition_for(c->partition, table->ds.d, c->off.M, "the partition", "the config has", &part, &ierr) != 0)
      return bbvfl_api_from(&ierr, err);
    bbvfl_partition_free(&part);
  } else if ((size_t)c->off.M > table->ds.d) {
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG,
                          "%d clients but the data has only %zu feature columns: every client needs at least one",
                          c->off.M, table->ds.d);
  }
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_train(const bbvfl_table *table, const bbvfl_config *cfg, bbvfl_epoch_fn on_epoch, void *ctx,
                         bbvfl_run **out, bbvfl_error *err) {
  if (!out) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_train: out is NULL");
  *out = NULL;
  if (!table) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_train: the table is NULL");
  if (!cfg) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_train: the config is NULL");
  bbvfl_status st = check_against(table, cfg, err);
  if (st != BBVFL_STATUS_OK) return st;
  bbvfl_run *run = calloc(1, sizeof *run);
  if (!run || bbvfl_api_config_copy(&run->cfg, cfg) != 0) {
    if (run) free(run->cfg.partition);
    free(run);
    return bbvfl_api_fail(err, BBVFL_STATUS_NOMEM, "out of memory");
  }
  bbvfl_offchain_cfg off = run->cfg.off;
  if (!cfg->seeded) {
    /* a fresh seed for the split and the weights; the noise from the OS (seeded_noise 0) */
    if (getrandom(&off.seed, sizeof off.seed, 0) != (ssize_t)sizeof off.seed) {
      int e = errno;
      bbvfl_run_destroy(run);
      return bbvfl_api_fail(err, BBVFL_STATUS_CRYPTO, "the OS random source (getrandom) failed: errno %d", e);
    }
    off.seeded_noise = 0;
  }
  epoch_relay relay = {on_epoch, ctx};
  off.on_round = NULL;
  off.on_epoch = on_epoch ? relay_epoch : NULL;
  off.ctx = on_epoch ? &relay : NULL;
  off.session_seed = NULL;
  bbvfl_err ierr = {0};
  if (bbvfl_offchain_train(&table->ds, &off, &run->res, &ierr) != 0) {
    bbvfl_run_destroy(run);
    return bbvfl_api_from(&ierr, err);
  }
  run->seed = off.seed;
  run->repeatable = off.seeded_noise;
  run->cfg.off.seed = off.seed;
  run->cfg.off.seeded_noise = off.seeded_noise;
  *out = run;
  return BBVFL_STATUS_OK;
}

void bbvfl_run_destroy(bbvfl_run *run) {
  if (!run) return;
  bbvfl_offchain_result_free(&run->res);
  free(run->cfg.partition);
  free(run);
}

int bbvfl_run_epochs(const bbvfl_run *run) { return run ? run->res.epochs : 0; }

bbvfl_status bbvfl_run_epoch(const bbvfl_run *run, int epoch, bbvfl_epoch_stats *out, bbvfl_error *err) {
  if (!run || !out) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_run_epoch: %s is NULL", run ? "out" : "the run");
  if (epoch < 1 || epoch > run->res.epochs)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "epoch %d is not in 1..%d", epoch, run->res.epochs);
  stats_of(&run->res.per_epoch[epoch - 1], out);
  return BBVFL_STATUS_OK;
}

size_t bbvfl_run_train_rows(const bbvfl_run *run) { return run ? run->res.n_train : 0; }

size_t bbvfl_run_test_rows(const bbvfl_run *run) { return run ? run->res.n_test : 0; }

uint64_t bbvfl_run_seed(const bbvfl_run *run, int *repeatable) {
  if (repeatable) *repeatable = run ? run->repeatable : 0;
  return run ? run->seed : 0;
}
