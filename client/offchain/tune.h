/* The row-mode grid search behind `bbvfl tune` (the CLI, client/cli/cmd_tune.c, parses flags and
 * prints; this module searches and measures, and never prints).
 *
 * Level: the target is the end-to-end epsilon of one person's whole row across all M parties
 * (BBVFL_TUNE_PERSON, dp/privacy.h `row_sample`: M times the party's curve) by default, or of one
 * party's columns (BBVFL_TUNE_PARTY, `row_feature`; masked DP-SGD candidates: `masked_row_feature`).
 * For every candidate of the grid, PBM's beta is calibrated (bisection) to the largest value whose
 * epsilon at that level is at most the target; a candidate whose other terms alone exceed the
 * target is skipped. At the person level a masked candidate is accounted as in local mode (the
 * sums are a post-processing of the submissions: an upper bound).
 *
 * Noise: private (seeded_noise 0, the OS random source) in every run; the seeds fix only the public
 * parts (the split, the model initialisation, the schedule).
 *
 * Selection and measurement: `splits` train/test splits (split seeds first_split ..
 * first_split + splits - 1). A candidate's score is the median validation AUROC over the splits x
 * tune_seeds runs, each trained on the split's training rows less an inner validation part (its
 * test rows are never used). The winner then trains once on each split's training rows and its
 * test AUROC is measured on that split's test rows: auroc[] per split and their median. A row that
 * is a test row of one split is a training or validation row of another, so the selection (a few
 * hyperparameters) has seen every row; the figure is not a fresh-holdout one.
 *
 * Designs: the DP-PCA encoder (each row released once, rowdp.encoder) and DP-SGD (each row
 * released every epoch); which one base->rowdp.encoder says. Grids: see bbvfl_tune_grid. */
#ifndef BBVFL_VFL_TUNE_H
#define BBVFL_VFL_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/privacy.h"
#include "ml/data.h"
#include "offchain/offchain.h"

#define BBVFL_TUNE_PERSON 0 /* one person's whole row across all parties (row_sample) */
#define BBVFL_TUNE_PARTY 1  /* one party's columns of one row (row_feature / masked_row_feature) */

#define BBVFL_TUNE_GRID_DEFAULT 0
#define BBVFL_TUNE_GRID_WIDE 1  /* a larger grid (several times the runs) */
#define BBVFL_TUNE_GRID_QUICK 2 /* two candidates, for tests */

#define BBVFL_TUNE_MAX_SPLITS 64
#define BBVFL_TUNE_MAX_CANDS 2048

typedef struct {
  int encoder;      /* 1: the DP-PCA encoder; 0: DP-SGD */
  int epochs, P, b; /* encoder: epochs are the head's epochs on the released sums */
  int masked;       /* DP-SGD only */
  double lr;        /* the head's (and, DP-SGD, the clients') Adam step */
  double noise;     /* DP-SGD noise multiplier */
  double scale_eps; /* per party: the DP scaling (encoder: the DP medians) */
  double pca_noise; /* encoder: the DP covariance's noise multiplier */
  double beta;      /* calibrated */
} bbvfl_tune_cand;

typedef struct {
  double target;          /* > 0, at `level` */
  int level;              /* BBVFL_TUNE_PERSON or BBVFL_TUNE_PARTY */
  double delta;           /* (0, 1) */
  int grid;               /* BBVFL_TUNE_GRID_* */
  int splits;             /* 1..BBVFL_TUNE_MAX_SPLITS */
  uint64_t first_split;   /* >= 1 */
  int tune_seeds;         /* runs per candidate and split while selecting, 1..64 */
  const double *noise;    /* DP-SGD noise multipliers to try (nnoise of them, 1..8); encoder: unused */
  int nnoise;
  int lr_given;           /* 1: every candidate uses base->opt.lr; 0: the wide encoder grid searches 0.01, 0.03 */
  /* progress (nullable): each scored candidate with its validation AUROC */
  void (*on_cand)(void *ctx, const bbvfl_tune_cand *c, double val_auroc);
  void *ctx;
} bbvfl_tune_in;

typedef struct {
  bbvfl_tune_cand best;
  double val_auroc;                          /* the winner's selection score */
  int nsplits;
  uint64_t split_seed[BBVFL_TUNE_MAX_SPLITS];
  double auroc[BBVFL_TUNE_MAX_SPLITS];       /* the winner's test AUROC per split */
  double auroc_median;
  double eps_person, eps_party;              /* the winner's epsilons (row_sample; row_feature or masked) */
  double ceiling;                            /* bbvfl_auroc_ceiling(eps_person, delta) */
  bbvfl_privacy pv;                          /* the winner's full accounting */
  int candidates, reachable;                 /* grid size; candidates the target admits */
} bbvfl_tune_out;

/* The highest test AUROC any classifier can reach when every test row's features are released
 * under (eps, delta)-DP for one person and each row's score depends on its own row only through
 * that release: the ROC curve between any two rows' score distributions lies under the
 * hypothesis-testing region TPR <= e^eps FPR + delta, 1 - FPR <= e^eps (1 - TPR) + delta, whose
 * area is (1 - delta)(e^eps + delta) / (1 + e^eps) + delta: e^eps / (1 + e^eps) at delta 0 (0.731
 * at eps 1, 0.881 at 2, 0.982 at 4), delta adding at most 2 delta. NAN for eps < 0 or delta
 * outside [0, 1); 1 for eps infinite. */
double bbvfl_auroc_ceiling(double eps, double delta);

/* The candidates of the grid for the design base->rowdp.encoder says (beta not yet calibrated)
 * into c[0..max); base's lr where the grid does not vary it. Encoder: P 1 x b {1,2} x scale_eps
 * {0.2,0.35,0.5,0.8,1.2} x pca_noise {8,16,32}, 10 head epochs (wide: P {1,2,3} x b {1,2,4} x
 * scale_eps {0.2,0.3,0.5,0.8,1.2,2} x pca_noise {8,16,32,64} x head epochs {10,30} x lr
 * {0.01,0.03}, or base's lr when in->lr_given; quick: P 1, b 1, scale_eps {0.1,0.2}, pca_noise 16,
 * 10 epochs). DP-SGD: epochs {3,5,10} x P {2,4} x noise (in->noise) x masked {no,yes} (quick: 3
 * epochs, P 2, the first noise, masked {no,yes}). Returns how many (<= max). */
int bbvfl_tune_grid(const bbvfl_offchain_cfg *base, const bbvfl_tune_in *in, bbvfl_tune_cand *c, int max);

/* The epsilon of candidate c (beta set) at level for base's M and delta; *person and *party
 * receive both (nullable). */
int bbvfl_tune_epsilon(const bbvfl_offchain_cfg *base, const bbvfl_tune_cand *c, double delta, double *person,
                       double *party, bbvfl_privacy *pv, bbvfl_err *err);

/* Searches (see the top of this file). base: the trainer's configuration (M, mechanism PBM, row
 * mode on, encoder or not, B, hidden, test_frac); seeds, split seed and seeded_noise are set here.
 * Errors: bad parameters (named), no candidate reaching the target (BBVFL_E_ARG, saying which
 * terms exceed it), training errors. ds is borrowed. */
int bbvfl_tune(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *base, const bbvfl_tune_in *in, bbvfl_tune_out *out,
               bbvfl_err *err);

#endif
