/* The attacks that measure what a run leaks (VFL-AFE, seed 004, Section 4.3; docs/PRIVACY.md
 * "Attacks"): label inference from the posted gradients (audit/leak.h), feature inversion of one
 * client's released embeddings, and membership inference with shadow models. Each is scored
 * beside its chance level. Off chain the observer's view comes from the trainer's tap
 * (vfl/offchain.h bbvfl_offchain_tap): exactly what the chain would carry (every client's
 * submissions, the posted gradients with the head's parameters), plus the final model's scores
 * for the membership attack (the active client's view of its own model).
 *
 * Never prints. Buffers are the caller's unless a field says otherwise. */
#ifndef BBVFL_AUDIT_ATTACK_H
#define BBVFL_AUDIT_ATTACK_H

#include <stddef.h>

#include "common/err.h"
#include "ml/data.h"
#include "vfl/offchain.h"

/* Feature inversion: a ridge-regression decoder from a release (P values) to the victim's d
 * columns, fitted on n_aux rows the attacker holds (their releases and their columns), applied to
 * n_vic other rows' releases. mse: mean squared error per column against the victim's columns;
 * mse_base: the same for the baseline that ignores the releases (the aux rows' column means);
 * gain = 1 - mse / mse_base (0: nothing learnt; 1: exact). ridge <= 0: the attacker picks it
 * (1e-4, 1e-2, 1 or 100) by fitting on the first half of its rows and scoring on the second, and
 * falls back to the means (gain 0 up to sampling) when no decoder beats them there. Errors: fewer
 * than 2 aux rows, a singular system, out of memory. */
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

/* The whole off-chain measurement of one configuration. */
typedef struct {
  bbvfl_offchain_cfg cfg; /* the run attacked (its tap is the attack's own) */
  int victim;             /* the client whose columns are inverted (0) */
  int shadows;            /* shadow models (3): the same configuration on other splits and seeds */
  double delta;           /* of the epsilon reported (1e-5) */
} bbvfl_attack_cfg;

typedef struct {
  double epsilon;          /* feature-level epsilon of the run (INFINITY: NPQ) */
  double test_accuracy;    /* of the target model */
  double label_acc;        /* label inference over the last epoch's training rows */
  double label_chance;     /* the majority class's share of those rows */
  double label_rr;         /* randomized response's rate e^eps/(e^eps + K - 1) with label DP; NAN without */
  bbvfl_inversion inv;     /* aux rows: the test rows' last evaluation releases; victims: the training
                              rows' last-epoch releases */
  bbvfl_membership mia;
} bbvfl_attack_result;

void bbvfl_attack_defaults(bbvfl_attack_cfg *a);
int bbvfl_attack_offchain(const bbvfl_dataset *ds, const bbvfl_attack_cfg *a, bbvfl_attack_result *out,
                          bbvfl_err *err);

#endif
