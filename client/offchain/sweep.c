/* The privacy-utility grid (offchain/sweep.h). */
#include "offchain/sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ml/metrics.h"
#include "core/cfgprivacy.h"

int bbvfl_sweep_check(const bbvfl_sweep_in *in, bbvfl_err *err) {
  if (in->seeds < 1 || in->seeds > BBVFL_SWEEP_MAX_SEEDS)
    return bbvfl_fail(err, BBVFL_E_ARG, "--seeds must be in 1..%d, got %d", BBVFL_SWEEP_MAX_SEEDS, in->seeds);
  if (in->nclients < 1 || in->nclients > BBVFL_SWEEP_MAX_LIST || in->nb < 1 || in->nb > BBVFL_SWEEP_MAX_LIST ||
      in->nbeta < 1 || in->nbeta > BBVFL_SWEEP_MAX_LIST || !in->clients || !in->b || !in->beta)
    return bbvfl_fail(err, BBVFL_E_ARG, "--clients, --b and --beta each need 1..%d values", BBVFL_SWEEP_MAX_LIST);
  for (int i = 0; i < in->nclients; i++)
    if (!(in->clients[i] >= 1 && in->clients[i] <= 1e6) || in->clients[i] != floor(in->clients[i]))
      return bbvfl_fail(err, BBVFL_E_ARG, "--clients: %g is not a positive integer", in->clients[i]);
  for (int i = 0; i < in->nb; i++)
    if (!(in->b[i] >= 1 && in->b[i] <= 255) || in->b[i] != floor(in->b[i]))
      return bbvfl_fail(err, BBVFL_E_ARG, "--b: %g is not an integer in 1..255", in->b[i]);
  for (int i = 0; i < in->nbeta; i++)
    if (!(in->beta[i] > 0 && in->beta[i] < 0.5))
      return bbvfl_fail(err, BBVFL_E_ARG, "--beta: %g is not in (0, 0.5): at 0.5 there is no privacy", in->beta[i]);
  if (!(in->delta > 0 && in->delta < 1)) return bbvfl_fail(err, BBVFL_E_ARG, "sweep: delta must be in (0, 1)");
  return 0;
}

void bbvfl_sweep_free(bbvfl_sweep_out *out) {
  if (!out) return;
  for (int c = 0; out->cells && c < out->ncells; c++) {
    for (int r = 0; out->cells[c].runs && r < out->cells[c].nruns; r++) free(out->cells[c].runs[r].auroc_per_epoch);
    free(out->cells[c].runs);
  }
  free(out->cells);
  memset(out, 0, sizeof *out);
}

/* The configuration of cell index cidx (0: NPQ; then b major, beta minor) for M clients. */
static bbvfl_offchain_cfg cell_cfg(const bbvfl_offchain_cfg *base, const bbvfl_sweep_in *in, int M, int cidx) {
  bbvfl_offchain_cfg cfg = *base;
  cfg.M = M;
  if (cidx == 0) {
    cfg.mech.kind = BBVFL_MECH_NPQ;
  } else {
    cfg.mech.kind = BBVFL_MECH_PBM;
    cfg.mech.b = (int)in->b[(cidx - 1) / in->nbeta];
    cfg.mech.beta = in->beta[(cidx - 1) % in->nbeta];
  }
  return cfg;
}

/* The cell's epsilons from pv: NAN when reproducible, INFINITY without a guarantee. */
static void cell_eps(bbvfl_sweep_cell *cell) {
  const bbvfl_privacy *pv = &cell->pv;
  cell->eps_party = bbvfl_privacy_shown(pv, &pv->row_feature);
  cell->eps_person = bbvfl_privacy_shown(pv, &pv->row_sample); /* features only: the table's column */
}

/* One run of cfg into *run (its per-epoch curve allocated); the first run of a cell (first) also
   settles the cell's accounting with the training row count. */
static int one_run(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *cfg, const bbvfl_sweep_in *in, int first,
                   bbvfl_sweep_cell *cell, bbvfl_sweep_run *run, bbvfl_err *err) {
  bbvfl_offchain_result res;
  if (bbvfl_offchain_train(ds, cfg, &res, err) != 0) return -1;
  int rc = -1;
  if (first) {
    if (bbvfl_cfg_privacy(cfg, res.n_train, 0, 0, in->delta, &cell->pv, err) != 0) goto out;
    if (cell->pv.finite && !cell->pv.reproducible) cell_eps(cell); /* lr with minibatches: needs the row count */
  }
  const bbvfl_epoch_metrics *last = &res.per_epoch[res.epochs - 1];
  run->seed = cfg->seed;
  run->auroc = last->auroc;
  run->accuracy = last->accuracy;
  run->f1 = last->f1;
  run->loss = last->test_loss;
  run->agg_s_per_epoch = res.agg_train_s_per_epoch;
  run->wall_s = res.wall_s;
  run->auroc_per_epoch = malloc((size_t)res.epochs * sizeof *run->auroc_per_epoch);
  if (!run->auroc_per_epoch) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  run->epochs = res.epochs;
  for (int e = 0; e < res.epochs; e++) run->auroc_per_epoch[e] = res.per_epoch[e].auroc;
  rc = 0;
out:
  bbvfl_offchain_result_free(&res);
  return rc;
}

/* Trains cell (already holding M, mechanism and the accounting before the runs) once per seed. */
static int run_cell(const bbvfl_dataset *ds, bbvfl_offchain_cfg *cfg, const bbvfl_sweep_in *in,
                    bbvfl_sweep_cell *cell, bbvfl_sweep_out *out, bbvfl_err *err) {
  double v[3][BBVFL_SWEEP_MAX_SEEDS];
  for (int s = 0; s < in->seeds; s++) {
    cfg->seed = in->first_seed + (uint64_t)s;
    bbvfl_sweep_progress p = {out->runs, out->ncells * in->seeds, cfg->M, cfg->mech.kind,
                              cfg->mech.b, cfg->mech.beta, cfg->seed};
    if (in->on_run) in->on_run(in->ctx, &p);
    if (one_run(ds, cfg, in, s == 0, cell, &cell->runs[s], err) != 0)
      return bbvfl_wrap(err, "M=%d %s b=%d beta=%g seed %llu", cfg->M, bbvfl_mech_name(cfg->mech.kind), cfg->mech.b,
                        cfg->mech.beta, (unsigned long long)cfg->seed);
    cell->nruns = s + 1;
    v[0][s] = cell->runs[s].auroc;
    v[1][s] = cell->runs[s].accuracy;
    v[2][s] = cell->runs[s].loss;
    out->mean_run_wall_s += cell->runs[s].wall_s; /* the sum until the end */
    out->runs++;
  }
  cell->auroc_median = bbvfl_median(v[0], (size_t)in->seeds);
  cell->accuracy_median = bbvfl_median(v[1], (size_t)in->seeds);
  cell->loss_median = bbvfl_median(v[2], (size_t)in->seeds);
  return 0;
}

int bbvfl_sweep(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *base, const bbvfl_sweep_in *in,
                bbvfl_sweep_out *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (bbvfl_sweep_check(in, err) != 0) return -1;
  const int per_M = 1 + in->nb * in->nbeta, ncells = in->nclients * per_M;
  out->cells = calloc((size_t)ncells, sizeof *out->cells);
  if (!out->cells) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  out->ncells = ncells;
  out->cells_per_M = per_M;
  for (int im = 0; im < in->nclients; im++)
    for (int cidx = 0; cidx < per_M; cidx++) {
      bbvfl_sweep_cell *cell = &out->cells[im * per_M + cidx];
      bbvfl_offchain_cfg cfg = cell_cfg(base, in, (int)in->clients[im], cidx);
      cell->M = cfg.M;
      cell->mech = cfg.mech.kind;
      cell->b = cfg.mech.kind == BBVFL_MECH_PBM ? cfg.mech.b : 0;
      cell->beta = cfg.mech.kind == BBVFL_MECH_PBM ? cfg.mech.beta : 0;
      cell->runs = calloc((size_t)in->seeds, sizeof *cell->runs);
      if (!cell->runs) {
        bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
        goto fail;
      }
      /* checked before the runs; the feature-set level once the row count is known */
      if (bbvfl_cfg_privacy(&cfg, 0, 0, 0, in->delta, &cell->pv, err) != 0) goto fail;
      cell_eps(cell);
      if (run_cell(ds, &cfg, in, cell, out, err) != 0) goto fail;
    }
  out->mean_run_wall_s = out->runs ? out->mean_run_wall_s / out->runs : 0;
  return 0;
fail:
  bbvfl_sweep_free(out);
  return -1;
}
