/* The attacks that measure what a run leaks (VFL-AFE, seed 004, Section 4.3; docs/PRIVACY.md
 * "Attacks"): label inference from the posted gradients (audit/leak.h), feature inversion of one
 * client's released embeddings, and membership inference with shadow models. Each is scored
 * beside its chance level. Off chain the observer's view comes from the trainer's tap
 * (offchain/offchain.h bbvfl_offchain_tap): exactly what the chain would carry (every client's
 * submissions, the posted gradients with the head's parameters), plus the final model's scores
 * for the membership attack (the active client's view of its own model).
 *
 * Never prints. Buffers are the caller's unless a field says otherwise. */
#ifndef BBVFL_AUDIT_ATTACK_H
#define BBVFL_AUDIT_ATTACK_H

#include <stddef.h>

#include "common/err.h"
#include <stdint.h>

#include "ml/data.h"
#include "core/config.h"

/* Feature inversion: a ridge-regression decoder from a release (P values) to the victim's d
 * columns, fitted on n_aux rows the attacker holds (their releases and their columns), applied to
 * n_vic other rows' releases. mse: mean squared error per column against the victim's columns;
 * mse_base: the same for the baseline that ignores the releases (the aux rows' column means);
 * gain = 1 - mse / mse_base (0: nothing learnt; 1: exact). The decoder is guarded by what the
 * attacker learns from its own rows alone: a release farther from the aux releases' coordinate-wise
 * median than any aux release (VFL-AFE's rescaling can multiply a batch by hundreds) is brought
 * back to the aux releases' median distance, direction kept, and each decoded column is clamped to
 * the aux rows' range of it. ridge <= 0: the attacker picks it (1e-4, 1e-2, 1 or 100) by fitting
 * on the first half of its rows and scoring on the second (guards learnt on the first half), and
 * falls back to the means (gain exactly 0) when no decoder beats them there. Errors: fewer than 2
 * aux rows, a singular system, out of memory. */
typedef struct {
  double mse, mse_base, gain;
} bbvfl_inversion;
int bbvfl_attack_inversion(const float *aux_rel, const float *aux_x, size_t n_aux, const float *vic_rel,
                           const float *vic_x, size_t n_vic, size_t P, size_t d, double ridge, bbvfl_inversion *out,
                           bbvfl_err *err);

/* Membership inference by a loss threshold learnt on shadow models: loss = -log of the score of
 * the row's true class. The threshold maximising in/out accuracy on the shadows' training (in) and
 * test (out) rows is applied to the target's rows: advantage = TPR - FPR (0 by chance), acc the
 * balanced accuracy (0.5 by chance). */
typedef struct {
  double threshold, advantage, accuracy;
} bbvfl_membership;
int bbvfl_attack_membership(const double *sh_in, size_t n_sh_in, const double *sh_out, size_t n_sh_out,
                            const double *tg_in, size_t n_tg_in, const double *tg_out, size_t n_tg_out,
                            bbvfl_membership *out, bbvfl_err *err);

/* One figure over seeds: mean, sample standard deviation (n - 1) and the half-width of the mean's
 * 95% confidence interval, Student's t at n - 1 degrees of freedom times sd / sqrt(n). NAN values
 * are skipped (n counts the rest); fewer than 2 values: sd and ci NAN (one value: its mean). */
typedef struct {
  double mean, sd, ci;
  int n;
} bbvfl_attack_est;
void bbvfl_attack_estimate(const double *v, int n, bbvfl_attack_est *out);

/* The whole off-chain measurement of one configuration. */
typedef struct {
  bbvfl_offchain_cfg cfg; /* the run attacked (its tap is the attack's own) */
  int victim;             /* the client whose columns are inverted (0) */
  int shadows;            /* shadow models (3): the same configuration on other splits and seeds */
  double delta;           /* of the epsilon reported (1e-5) */
} bbvfl_attack_cfg;

typedef struct {
  double epsilon;          /* per party: feature-level epsilon of the run (INFINITY: NPQ) */
  double epsilon_person;   /* the per-person headline every command prints: every party's features
                              and the label composed (INFINITY: unbounded, labels unprotected) */
  double test_accuracy;    /* of the target model */
  double label_acc;        /* label inference over the last epoch's training rows */
  double label_chance;     /* the majority class's share of those rows */
  double label_rr;         /* randomized response's rate e^eps/(e^eps + K - 1) with label DP; NAN without */
  bbvfl_inversion inv;     /* aux rows: the test rows' last evaluation releases; victims: the training
                              rows' last-epoch releases */
  bbvfl_membership mia;
  size_t mia_in, mia_out;  /* target rows the membership attack scored (members, non-members) */
} bbvfl_attack_result;

/* Membership's shadow side: `shadows` runs of cfg on other splits and seeds (the attacker's own
 * simulation on rows like the victim's), each watched like the target; the final model's losses
 * on each shadow's training rows appended to *in (n_in) and on its test rows to *out (n_out),
 * both malloc'd here (the caller frees them, also on error). */
int bbvfl_attack_shadow_losses(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *cfg, int shadows, double **in,
                               size_t *n_in, double **out, size_t *n_out, bbvfl_err *err);

/* The attack on a session's chain: the observer reads only the chain (through the auditor,
 * audit/audit.h opts.on_labels/on_release/on_params) and holds the session's public setup (the
 * session file: split seed, test fraction, model and mechanism) and a table of rows like the
 * victim's (ds). What it reads: every posted gradient and head (label inference), the victim's
 * submitted integers of its last epoch's training windows and last evaluation rounds (inversion:
 * aux = the test rows, whose columns the attacker holds; victims = the training rows), every
 * round's sum with the final posted head (membership: each row's loss at the final head, the
 * training rows' from their last epoch's sums, the test rows' from the last evaluation's, against
 * a threshold learnt on shadow runs off chain). Scoring uses ds's true labels and columns. */
typedef struct {
  const char *rpc_url;
  uint8_t contract[20];
  uint64_t from_block;
  const bbvfl_offchain_cfg *train; /* the session's training setup (session file "training") */
  int nclasses;                    /* the table's */
  int victim_party;                /* whose columns (the partition's block) are inverted */
  uint8_t victim_addr[20];         /* its address on chain */
  int shadows;                     /* 1..20 (0: no membership attack) */
  double delta;
} bbvfl_attack_chain_cfg;

typedef struct {
  bbvfl_attack_result r;       /* epsilon: the audit's feature-level figure for the releases */
  size_t label_rows;           /* distinct training rows whose label was read back */
  size_t inv_aux, inv_victims; /* rows of the inversion */
  size_t mia_in, mia_out;      /* target rows scored by the membership attack */
  int audit_ok;                /* the audit's verdict was not FAIL */
} bbvfl_attack_chain_result;

int bbvfl_attack_chain(const bbvfl_dataset *ds, const bbvfl_attack_chain_cfg *c, bbvfl_attack_chain_result *out,
                       bbvfl_err *err);

void bbvfl_attack_defaults(bbvfl_attack_cfg *a);
int bbvfl_attack_offchain(const bbvfl_dataset *ds, const bbvfl_attack_cfg *a, bbvfl_attack_result *out,
                          bbvfl_err *err);

#endif
