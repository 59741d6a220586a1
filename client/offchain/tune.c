/* The row-mode grid search (offchain/tune.h). */
#include "offchain/tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ml/metrics.h"

double bbvfl_auroc_ceiling(double eps, double delta) {
  if (!(eps >= 0) || !(delta >= 0 && delta < 1)) return NAN;
  if (isinf(eps)) return 1.0;
  /* e^eps / (1 + e^eps) written to stay finite for a large eps */
  double r = 1.0 / (1.0 + exp(-eps)); /* e^eps / (1 + e^eps) */
  double v = (1 - delta) * (r + delta / (1.0 + exp(eps))) + delta;
  return v < 1 ? v : 1;
}

int bbvfl_tune_grid(const bbvfl_offchain_cfg *base, const bbvfl_tune_in *in, bbvfl_tune_cand *c, int max) {
  int n = 0;
  const double lr = base->opt.lr;
  if (base->rowdp.encoder) {
    /* default: P 1 (the head sees one sum per row: its ranking is what the AUROC measures, so
       the head's epochs and step matter little and are not searched) */
    static const int B1[] = {1, 2}, P1[] = {1}, E1[] = {10};
    static const double S1[] = {0.2, 0.35, 0.5, 0.8, 1.2}, Z1[] = {8, 16, 32};
    static const int B2[] = {1, 2, 4}, P2[] = {1, 2, 3}, E2[] = {10, 30};
    static const double S2[] = {0.2, 0.3, 0.5, 0.8, 1.2, 2}, Z2[] = {8, 16, 32, 64}, L2[] = {0.01, 0.03};
    if (in->grid == BBVFL_TUNE_GRID_QUICK) {
      static const double SQ[] = {0.1, 0.2};
      for (int s = 0; s < 2 && n < max; s++)
        c[n++] = (bbvfl_tune_cand){.encoder = 1, .epochs = 10, .P = 1, .b = 1, .lr = lr, .scale_eps = SQ[s],
                                   .pca_noise = 16};
      return n;
    }
    const int wide = in->grid == BBVFL_TUNE_GRID_WIDE;
    const int *BB = wide ? B2 : B1, *PP = wide ? P2 : P1, *EE = wide ? E2 : E1;
    const double *SS = wide ? S2 : S1, *ZZ = wide ? Z2 : Z1, *LL = wide && !in->lr_given ? L2 : &lr;
    const int nb = wide ? 3 : 2, np = wide ? 3 : 1, ne = wide ? 2 : 1, ns = wide ? 6 : 5, nz = wide ? 4 : 3,
              nl = wide && !in->lr_given ? 2 : 1;
    for (int b = 0; b < nb; b++)
      for (int p = 0; p < np; p++)
        for (int s = 0; s < ns; s++)
          for (int z = 0; z < nz; z++)
            for (int e = 0; e < ne; e++)
              for (int l = 0; l < nl && n < max; l++)
                c[n++] = (bbvfl_tune_cand){.encoder = 1, .epochs = EE[e], .P = PP[p], .b = BB[b], .lr = LL[l],
                                           .scale_eps = SS[s], .pca_noise = ZZ[z]};
    return n;
  }
  static const int EP[] = {3, 5, 10}, PD[] = {2, 4};
  if (in->grid == BBVFL_TUNE_GRID_QUICK) {
    for (int m = 0; m < 2 && n < max; m++)
      c[n++] = (bbvfl_tune_cand){.epochs = 3, .P = 2, .b = base->mech.b, .masked = m, .lr = lr,
                                 .noise = in->nnoise > 0 ? in->noise[0] : base->rowdp.noise,
                                 .scale_eps = base->rowdp.scale_eps};
    return n;
  }
  for (int a = 0; a < 3; a++)
    for (int p = 0; p < 2; p++)
      for (int z = 0; z < in->nnoise; z++)
        for (int m = 0; m < 2 && n < max; m++)
          c[n++] = (bbvfl_tune_cand){.epochs = EP[a], .P = PD[p], .b = base->mech.b, .masked = m, .lr = lr,
                                     .noise = in->noise[z], .scale_eps = base->rowdp.scale_eps};
  return n;
}

static bbvfl_privacy_in priv_in(const bbvfl_offchain_cfg *base, const bbvfl_tune_cand *c, double delta, int masked) {
  return (bbvfl_privacy_in){.kind = BBVFL_MECH_PBM,
                            .b = c->b,
                            .beta = c->beta,
                            .P = c->P,
                            .M = base->M,
                            .epochs = c->epochs,
                            .delta = delta,
                            .masked = masked,
                            .colluding = base->M > 1 ? 1 : 0,
                            .rowdp = {1, base->rowdp.clip, c->encoder ? base->rowdp.noise : c->noise, c->scale_eps, c->encoder,
                                      c->pca_noise}};
}

int bbvfl_tune_epsilon(const bbvfl_offchain_cfg *base, const bbvfl_tune_cand *c, double delta, double *person,
                       double *party, bbvfl_privacy *pv, bbvfl_err *err) {
  bbvfl_privacy_in in = priv_in(base, c, delta, c->masked);
  bbvfl_privacy p;
  if (bbvfl_privacy_compute(&in, &p, NULL, err) != 0) return -1;
  if (person) *person = p.row_sample.epsilon;
  if (party) *party = c->masked ? p.masked_row_feature.epsilon : p.row_feature.epsilon;
  if (pv) *pv = p;
  return 0;
}

/* The epsilon of c (its beta replaced by beta) at level; the person level skips the masked bound
   (not used there, and the slow part). */
static int eps_at(const bbvfl_offchain_cfg *base, const bbvfl_tune_cand *c, double beta, int level, double delta,
                  double *eps, bbvfl_err *err) {
  bbvfl_tune_cand t = *c;
  t.beta = beta;
  bbvfl_privacy_in in = priv_in(base, &t, delta, level == BBVFL_TUNE_PARTY ? c->masked : 0);
  bbvfl_privacy p;
  if (bbvfl_privacy_compute(&in, &p, NULL, err) != 0) return -1;
  *eps = level == BBVFL_TUNE_PERSON ? p.row_sample.epsilon
                                    : (c->masked ? p.masked_row_feature.epsilon : p.row_feature.epsilon);
  return 0;
}

/* The largest beta in [1e-6, 0.499] (to a relative 1e-6) whose epsilon at level is at most
   target: 1, or 0 when even 1e-6 exceeds it. */
static int calibrate(const bbvfl_offchain_cfg *base, bbvfl_tune_cand *c, const bbvfl_tune_in *in, bbvfl_err *err) {
  double lo = 1e-6, hi = 0.499, e;
  if (eps_at(base, c, lo, in->level, in->delta, &e, err) != 0) return -1;
  if (e > in->target) return 0;
  if (eps_at(base, c, hi, in->level, in->delta, &e, err) != 0) return -1;
  if (e <= in->target) {
    c->beta = hi;
    return 1;
  }
  while (hi - lo > 1e-6 * hi) {
    double mid = 0.5 * (lo + hi);
    if (eps_at(base, c, mid, in->level, in->delta, &e, err) != 0) return -1;
    if (e <= in->target) lo = mid;
    else hi = mid;
  }
  c->beta = lo;
  return 1;
}

/* Whether a and b have the same privacy parameters (then the same calibrated beta). */
static int same_privacy(const bbvfl_tune_cand *a, const bbvfl_tune_cand *b, int level) {
  if (a->encoder != b->encoder || a->P != b->P || a->b != b->b || a->scale_eps != b->scale_eps) return 0;
  if (a->encoder) return a->pca_noise == b->pca_noise;
  return a->epochs == b->epochs && a->noise == b->noise && (level == BBVFL_TUNE_PERSON || a->masked == b->masked);
}

/* The rows of one split (split seed s): the training rows as a data set of their own (x, y
   copied) when train, else nothing (the trainer splits the full table itself). */
static int train_rows_only(const bbvfl_dataset *ds, double test_frac, uint64_t split_seed, bbvfl_dataset *out,
                           bbvfl_err *err) {
  size_t *tr = NULL, *te = NULL, ntr = 0, nte = 0;
  if (bbvfl_split(ds->n, test_frac, split_seed, &tr, &ntr, &te, &nte, err) != 0) return -1;
  memset(out, 0, sizeof *out);
  out->n = ntr;
  out->d = ds->d;
  out->nclasses = ds->nclasses;
  out->x = malloc(ntr * ds->d * sizeof *out->x);
  out->y = malloc(ntr * sizeof *out->y);
  free(te);
  if (!out->x || !out->y) {
    free(out->x);
    free(out->y);
    free(tr);
    memset(out, 0, sizeof *out);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < ntr; i++) {
    memcpy(out->x + i * ds->d, ds->x + tr[i] * ds->d, ds->d * sizeof *out->x);
    out->y[i] = ds->y[tr[i]];
  }
  free(tr);
  return 0;
}

/* The configuration of candidate c: private noise, public init seed `seed`, split `split`. */
static bbvfl_offchain_cfg cand_cfg(const bbvfl_offchain_cfg *base, const bbvfl_tune_cand *c, uint64_t seed,
                                   uint64_t split) {
  bbvfl_offchain_cfg cfg = *base;
  cfg.epochs = c->epochs;
  cfg.P = c->P;
  cfg.mech.kind = BBVFL_MECH_PBM;
  cfg.mech.beta = c->beta;
  cfg.mech.b = c->b;
  cfg.opt.lr = c->lr;
  cfg.rowdp.on = 1;
  cfg.rowdp.encoder = c->encoder;
  if (!c->encoder) cfg.rowdp.noise = c->noise; /* the encoder has no DP-SGD: base's (unused) value */
  cfg.rowdp.scale_eps = c->scale_eps;
  cfg.rowdp.pca_noise = c->pca_noise;
  cfg.seed = seed;
  cfg.seeded_noise = 0; /* private noise: the OS random source */
  cfg.split_seed = split;
  cfg.on_round = NULL;
  cfg.on_epoch = NULL;
  cfg.ctx = NULL;
  cfg.session_seed = NULL;
  return cfg;
}

static int run_auroc(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *c, double *auroc, bbvfl_err *err) {
  bbvfl_offchain_result res;
  if (bbvfl_offchain_train(ds, c, &res, err) != 0) return -1;
  *auroc = res.per_epoch[res.epochs - 1].auroc;
  bbvfl_offchain_result_free(&res);
  return 0;
}

int bbvfl_tune(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *base, const bbvfl_tune_in *in, bbvfl_tune_out *out,
               bbvfl_err *err) {
  if (!(in->target > 0) || !isfinite(in->target))
    return bbvfl_fail(err, BBVFL_E_ARG, "tune: the target epsilon must be > 0 and finite, got %g", in->target);
  if (in->level != BBVFL_TUNE_PERSON && in->level != BBVFL_TUNE_PARTY)
    return bbvfl_fail(err, BBVFL_E_ARG, "tune: level %d is not person (0) or party (1)", in->level);
  if (!(in->delta > 0 && in->delta < 1)) return bbvfl_fail(err, BBVFL_E_ARG, "tune: delta must be in (0, 1)");
  if (in->splits < 1 || in->splits > BBVFL_TUNE_MAX_SPLITS || in->tune_seeds < 1 || in->tune_seeds > 64 ||
      in->first_split < 1 || in->first_split > UINT64_MAX - BBVFL_TUNE_MAX_SPLITS)
    return bbvfl_fail(err, BBVFL_E_ARG, "tune: splits must be in 1..%d, tune seeds in 1..64, the first split >= 1",
                      BBVFL_TUNE_MAX_SPLITS);
  if (!base->rowdp.encoder && in->grid != BBVFL_TUNE_GRID_QUICK && (in->nnoise < 1 || !in->noise))
    return bbvfl_fail(err, BBVFL_E_ARG, "tune: the DP-SGD grid needs at least one noise multiplier");
  memset(out, 0, sizeof *out);
  bbvfl_tune_cand *cs = calloc(BBVFL_TUNE_MAX_CANDS, sizeof *cs);
  double *score = calloc(BBVFL_TUNE_MAX_CANDS, sizeof *score);
  signed char *ok = calloc(BBVFL_TUNE_MAX_CANDS, 1);
  double *v = malloc((size_t)in->splits * (size_t)in->tune_seeds * sizeof *v);
  bbvfl_dataset *tr = calloc((size_t)in->splits, sizeof *tr);
  int rc = -1, best = -1;
  if (!cs || !score || !ok || !v || !tr) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  const int nc = bbvfl_tune_grid(base, in, cs, BBVFL_TUNE_MAX_CANDS);
  out->candidates = nc;
  for (int s = 0; s < in->splits; s++)
    if (train_rows_only(ds, base->test_frac, in->first_split + (uint64_t)s, &tr[s], err) != 0) goto out;
  for (int i = 0; i < nc; i++) {
    int j = 0;
    while (j < i && !same_privacy(&cs[j], &cs[i], in->level)) j++;
    if (j < i) {
      ok[i] = ok[j];
      cs[i].beta = cs[j].beta;
    } else {
      int k = calibrate(base, &cs[i], in, err);
      if (k < 0) goto out;
      ok[i] = (signed char)k;
    }
    if (!ok[i]) continue; /* the target is out of reach for this candidate */
    out->reachable++;
    size_t nv = 0;
    for (int s = 0; s < in->splits; s++)
      for (int t = 0; t < in->tune_seeds; t++) {
        /* the inner split of split s's training rows: its validation part is scored */
        bbvfl_offchain_cfg cfg = cand_cfg(base, &cs[i], 1000 + (uint64_t)t, 7919 + (uint64_t)s);
        if (run_auroc(&tr[s], &cfg, &v[nv++], err) != 0) goto out;
      }
    score[i] = bbvfl_median(v, nv);
    if (in->on_cand) in->on_cand(in->ctx, &cs[i], score[i]);
    if (best < 0 || score[i] > score[best]) best = i;
  }
  if (best < 0) {
    bbvfl_fail(err, BBVFL_E_ARG,
               "no candidate reaches epsilon %g at the %s level: the %s and scaling terms alone exceed it (try a "
               "larger target)",
               in->target, in->level == BBVFL_TUNE_PERSON ? "person" : "party",
               base->rowdp.encoder ? "DP-PCA" : "DP-SGD");
    goto out;
  }
  out->best = cs[best];
  out->val_auroc = score[best];
  out->nsplits = in->splits;
  for (int s = 0; s < in->splits; s++) {
    out->split_seed[s] = in->first_split + (uint64_t)s;
    bbvfl_offchain_cfg cfg = cand_cfg(base, &out->best, out->split_seed[s], out->split_seed[s]);
    if (run_auroc(ds, &cfg, &out->auroc[s], err) != 0) goto out;
    v[s] = out->auroc[s];
  }
  out->auroc_median = bbvfl_median(v, (size_t)in->splits);
  if (bbvfl_tune_epsilon(base, &out->best, in->delta, &out->eps_person, &out->eps_party, &out->pv, err) != 0)
    goto out;
  out->ceiling = bbvfl_auroc_ceiling(out->eps_person, in->delta);
  rc = 0;
out:
  if (tr)
    for (int s = 0; s < in->splits; s++) bbvfl_dataset_free(&tr[s]);
  free(tr);
  free(v);
  free(ok);
  free(score);
  free(cs);
  return rc;
}
