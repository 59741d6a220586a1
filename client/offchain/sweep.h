/* The privacy-utility grid behind `bbvfl sweep` (the paper's Figure 2), off-chain: for each number
 * of clients, the NPQ baseline (no noise) and PBM over b x beta, each cell trained once per seed.
 * This module runs the grid and measures it; it never prints. The CLI (client/cli/cmd_sweep.c)
 * parses the flags, draws the progress line from on_run, writes sweep.csv and sweep.json from the
 * result and prints the table.
 *
 * Cells, in order: for each clients[i], NPQ first, then PBM b[j] x beta[k] (b major, beta minor):
 * nclients * (1 + nb * nbeta) cells. Each cell trains `seeds` times (seeds first_seed ..
 * first_seed + seeds - 1 fix the split, the schedule and the initialisation; the noise is private
 * unless base->seeded_noise) and reports the medians of the final epoch's test metrics.
 *
 * Epsilon of a cell: bbvfl_cfg_privacy of the cell's configuration (the one home of a
 * configuration's epsilon), with the training row count of the first run (model lr with
 * minibatches needs it). eps_person is the per-person features-only (row_sample) figure, the smaller method,
 * eps_party the per-party (feature) one; INFINITY for NPQ (no guarantee), NAN when the noise is
 * reproducible (pv.reproducible: no epsilon holds).
 *
 * Ownership: bbvfl_sweep_out owns every array in it; free it with bbvfl_sweep_free (also safe on
 * a zeroed or failed result). The inputs are borrowed for the call. */
#ifndef BBVFL_OFFCHAIN_SWEEP_H
#define BBVFL_OFFCHAIN_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/privacy.h"
#include "ml/data.h"
#include "offchain/offchain.h"

#define BBVFL_SWEEP_MAX_LIST 16  /* values per list (clients, b, beta) */
#define BBVFL_SWEEP_MAX_SEEDS 64

/* What on_run receives before each run starts: done of total runs finished, and the run's cell
   and seed (b and beta: the configuration's values, whatever the mechanism). */
typedef struct {
  int done, total;
  int M;
  bbvfl_mech_kind mech;
  int b;
  double beta;
  uint64_t seed;
} bbvfl_sweep_progress;

typedef struct {
  const double *clients; /* nclients numbers of clients, each a positive integer */
  int nclients;          /* 1..BBVFL_SWEEP_MAX_LIST */
  const double *b;       /* nb PBM trial counts, each an integer in 1..255 */
  int nb;
  const double *beta;    /* nbeta PBM biases, each in (0, 0.5) */
  int nbeta;
  int seeds;             /* runs per cell, 1..BBVFL_SWEEP_MAX_SEEDS */
  uint64_t first_seed;
  double delta;          /* (0, 1): the delta of every epsilon */
  /* progress (nullable): called before each run */
  void (*on_run)(void *ctx, const bbvfl_sweep_progress *p);
  void *ctx;
} bbvfl_sweep_in;

typedef struct {
  uint64_t seed;
  double auroc, accuracy, f1, loss;  /* the final epoch's test metrics */
  double agg_s_per_epoch, wall_s;    /* the trainer's aggregation time per epoch and wall time */
  int epochs;
  double *auroc_per_epoch;           /* epochs entries, owned */
} bbvfl_sweep_run;

typedef struct {
  int M;
  bbvfl_mech_kind mech;              /* BBVFL_MECH_NPQ or BBVFL_MECH_PBM */
  int b;                             /* PBM: trials; NPQ: 0 */
  double beta;                       /* PBM: bias; NPQ: 0 */
  double eps_person, eps_party;      /* see the top of this file */
  bbvfl_privacy pv;                  /* the cell's full accounting */
  double auroc_median, accuracy_median, loss_median;
  int nruns;                         /* = seeds */
  bbvfl_sweep_run *runs;             /* nruns entries, owned */
} bbvfl_sweep_cell;

typedef struct {
  int ncells;
  int cells_per_M;                   /* 1 + nb * nbeta */
  bbvfl_sweep_cell *cells;           /* ncells entries, owned */
  int runs;                          /* runs trained (ncells * seeds on success) */
  double mean_run_wall_s;
} bbvfl_sweep_out;

/* Checks in's lists and counts (the messages name the command's flags: --clients, --b, --beta,
   --seeds). Returns 0 or -1 with err (BBVFL_E_ARG). */
int bbvfl_sweep_check(const bbvfl_sweep_in *in, bbvfl_err *err);

/* Runs the grid on ds (borrowed) with base's training configuration (M, mechanism and seed are
   set per run here). On success *out holds every cell; on error (bad input, a training error
   wrapped with the run's cell and seed, out of memory) *out is freed and zeroed and -1 returned. */
int bbvfl_sweep(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *base, const bbvfl_sweep_in *in,
                bbvfl_sweep_out *out, bbvfl_err *err);

void bbvfl_sweep_free(bbvfl_sweep_out *out);

#endif
