/* The privacy of one configuration: every neighbouring relation, every accounting method, in one
 * library function. Every command that prints an epsilon (train, demo, client, sweep, privacy,
 * audit) takes it from here, so they cannot disagree, and each prints the relation it is for and
 * whether it is end-to-end (docs/PRIVACY.md).
 *
 * Relations (one party = one client's columns):
 *   row_feature  row level, one party's features of one row change: that client's epochs x P
 *                releases of the row compose;
 *   row_sample   sample level, one row changes for every party: epochs x M x P releases compose
 *                (local mode: every client's output is public);
 *   feature_set  one party's whole column set changes: every release of that client composes,
 *                rows x epochs x P (no parallel composition across rows);
 *   masked_row_feature  masked mode, row level, one party: only the sum is public, against
 *                `colluding` participants who subtract their own outputs;
 *   labels       one row's label: with label DP (randomized response, dp/labeldp.h) pure
 *                label_eps; without it the labels are unprotected (infinite; the posted
 *                gradients give them back, audit/leak.h).
 * In the paper's mode none of them is end-to-end (BBVFL_ACCT_SCOPE): each client's network and
 * feature scaling are fitted on its rows, so one row also moves the other rows' releases.
 *
 * Methods: "rdp" (Renyi DP, tighter conversion, dp/accountant.h) and "pld" (the exact privacy loss
 * distribution of PBM in local mode); `epsilon` is the smaller, `method` names it. Gaussian and
 * masked bounds are RDP only. NPQ: no guarantee, every epsilon infinite, method "none".
 *
 * Row mode (rowdp.on; end_to_end = 1): every use of a training row by its party composes, by RDP
 * at each order alpha of the grid:
 *   releases   the PBM (or Gaussian) curve of epochs x P coordinates (masked: the masked curve);
 *   DP-SGD     epochs steps (a row is in one batch per epoch; the schedule is public, so no
 *              amplification by sampling), each a Gaussian mechanism on the sum of clipped
 *              gradients whose sensitivity is 2 clip when the row's features change (replace
 *              one): 2 alpha / noise^2 per step;
 *   scaling    pure scale_eps, which is (scale_eps^2 / 2)-zCDP: min(scale_eps, alpha scale_eps^2 / 2).
 * Encoder mode (rowdp.encoder): no DP-SGD; the DP-PCA adds alpha / (2 pca_noise^2); the releases
 * are ONE release of P coordinates whatever the epochs (each row's output is drawn once and
 * re-sent); "pld" is then the exact composition of the three (dominating pairs, see privacy.c).
 * A test row is used only by its releases (fewer), so a training row is the worst case. Sample
 * level: M times the party's curve (every party's uses of the row). feature_set is not computed
 * in row mode (group privacy over every row gives no useful bound).
 *
 * Pure computation; no printing. Output structs are caller-owned; strings in them are static. */
#ifndef BBVFL_DP_PRIVACY_H
#define BBVFL_DP_PRIVACY_H

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"
#include "dp/accountant.h"
#include "dp/mech.h"
#include "dp/rowdp.h"

typedef struct {
  bbvfl_mech_kind kind; /* NPQ: no guarantee */
  int b;                /* PBM: trials per coordinate */
  double beta;          /* PBM: in (0, 1/2) */
  double clip, sigma;   /* Gaussian */
  int P, M, epochs;     /* embedding width, clients, epochs */
  int rows;             /* training rows of one party, for feature_set; 0: not computed (NAN) */
  double delta;         /* of the (epsilon, delta) guarantee, in (0, 1) */
  int masked;           /* masked mode (PBM only): compute masked_row_feature */
  int colluding;        /* masked: participants pooling their knowledge, 0..participants-1 */
  int participants;     /* masked: clients whose outputs the sums cover (after dropouts; 0: M) */
  double label_eps;     /* > 0: randomized response on the training labels; 0: labels unprotected */
  bbvfl_rowdp rowdp;    /* on: row mode (dp/rowdp.h): the row levels are end-to-end */
  int reproducible;     /* 1: the noise was drawn from a seed others hold (--reproducible-noise):
                           the figures are computed, but no epsilon holds and none is shown */
} bbvfl_privacy_in;

typedef struct {
  double epsilon;     /* the smaller of rdp and pld (INFINITY for NPQ, NAN when not computed) */
  const char *method; /* "pld", "rdp" or "none" */
  double rdp, pld;    /* each method's epsilon; NAN where a method does not apply */
} bbvfl_privacy_eps;

typedef struct {
  int finite;   /* 0: NPQ, no guarantee */
  int end_to_end; /* 1 in row mode (BBVFL_ACCT_SCOPE_ROW / _ENCODER), 0 in the paper's (BBVFL_ACCT_SCOPE) */
  int encoder;    /* row mode with the frozen DP-PCA encoder: each row released once */
  double delta;
  int rows, masked, colluding, participants;
  bbvfl_privacy_eps row_feature, row_sample, feature_set, masked_row_feature;
  bbvfl_privacy_eps labels; /* method "rr" (pure, delta 0) or "none" (infinite: unprotected) */
  /* the headline, per person: row_sample and labels composed (epsilons added; method "pld+rr" or
     "rdp+rr"); INFINITY, method "none", when the labels are unprotected or there is no noise */
  bbvfl_privacy_eps person;
  bbvfl_acct_out rdp; /* local-mode RDP details (alphas, standard conversion, grid edge) */
  bbvfl_acct_out masked_rdp; /* masked mode RDP details (zeroed otherwise) */
  int reproducible; /* in->reproducible: every epsilon above is what private noise would give; the
                       JSON and the line show none (BBVFL_PRIVACY_VOID) */
} bbvfl_privacy;

/* Levels, by their names in every JSON and line (the headline first):
 *   per_person   = person: one person's whole record, every party's columns of the row AND its
 *                  label (row_sample composed with labels; unbounded when the labels are not
 *                  protected by --label-epsilon: the posted gradients give them back);
 *   per_person_features = row_sample: every party's columns of the row, not its label;
 *   per_party    = row_feature: one party's columns of one row;
 *   per_party_masked = masked_row_feature; per_party_column_set = feature_set; labels. */
#define BBVFL_PRIVACY_HEADLINE "per_person"
/* What every epsilon is, with reproducible noise. */
#define BBVFL_PRIVACY_VOID "none: the noise can be regenerated from the session file (reproducible noise, --reproducible-noise)"

/* The epsilon to show for e of p: e->epsilon, or NAN when p->reproducible (shown as none). */
double bbvfl_privacy_shown(const bbvfl_privacy *p, const bbvfl_privacy_eps *e);
/* The headline (per person, label included) as shown: NAN with reproducible noise, INFINITY when
 * unbounded. Every command prints this one figure as the per-person epsilon. */
double bbvfl_privacy_headline(const bbvfl_privacy *p);
/* 1 when the labels are protected (label DP), else 0. */
int bbvfl_privacy_labels_protected(const bbvfl_privacy *p);
/* The top-level figures every JSON report carries (names kept for scripts) into o: "headline"
 * ("per_person"), "epsilon_sample" (the headline, null when unbounded or not shown),
 * "epsilon_sample_level", "epsilon_sample_method", "labels_protected", "epsilon_sample_features"
 * (every party's features, without the label), "epsilon_feature" (per party), their levels, and
 * "epsilon_void" with reproducible noise. Each figure is the smaller method's, as printed. */
void bbvfl_privacy_json_top(json_t *o, const bbvfl_privacy *p);

/* Fills *out for *in. masked_curve (nullable, BBVFL_ACCT_NGRID doubles, masked mode only)
 * receives the composed masked RDP orders. Errors: bad parameters (named), an unreachable
 * accounting. Cost: the masked worst-case search dominates (dp/accountant.h); the rest is
 * milliseconds. */
int bbvfl_privacy_compute(const bbvfl_privacy_in *in, bbvfl_privacy *out, double *masked_curve, bbvfl_err *err);

/* Calibration: the largest PBM beta in [1e-6, 0.499] whose reported epsilon at the row level of
 * one party (masked_row_feature when in->masked, else row_feature) is at most target; in->beta is
 * ignored. Bisection to a relative 1e-6. Error when even beta = 1e-6 exceeds the target (in row
 * mode the DP-SGD and scaling terms alone may). */
int bbvfl_privacy_solve_beta(const bbvfl_privacy_in *in, double target, double *beta, bbvfl_err *err);

/* The privacy as a JSON object (new reference, NULL when out of memory): "headline" (the level
 * printed first: "per_person"), "headline_relation" ("person"), delta, labels_protected, end_to_end, scope, and
 * per relation, the per-person one first, {level, epsilon, method, rdp, pld, relation}; null for
 * what does not apply. Reproducible noise: "reproducible_noise": true, every epsilon, rdp and pld
 * null, and "epsilon_void" (BBVFL_PRIVACY_VOID) at the top and in each relation. */
json_t *bbvfl_privacy_json(const bbvfl_privacy *p);

/* What the epsilons of p are, in words (a static string): BBVFL_ACCT_SCOPE in the paper's mode,
 * BBVFL_ACCT_SCOPE_ROW in row mode, BBVFL_ACCT_SCOPE_ENCODER with the encoder. */
const char *bbvfl_privacy_scope(const bbvfl_privacy *p);
#define BBVFL_ACCT_SCOPE_ROW                                                                          \
  "row mode: the row-level epsilons are end-to-end for the features: they compose every use of a " \
  "row by its party (DP feature scaling, one DP-SGD step per epoch, every PBM release), under the " \
  "assumptions in docs/PRIVACY.md (a public batch schedule, private noise, rows in the table once); " \
  "the labels are covered only by --label-epsilon"

#define BBVFL_ACCT_SCOPE_ENCODER                                                                      \
  "row mode, DP-PCA encoder: the row-level epsilons are end-to-end for the features: they compose "  \
  "every use of a row by its party (the DP medians of its columns, the DP covariance of its sign "   \
  "features, the one PBM release of the row; every later round re-sends the same bytes), under the " \
  "assumptions in docs/PRIVACY.md (private noise, rows in the table once, the release cache kept); "  \
  "the labels are covered only by --label-epsilon"

/* One line for people, into buf (always NUL-terminated when n > 0): every relation that was
 * computed, each named by its level, per person first, with its epsilon and method, and "not
 * end-to-end"; with reproducible noise "none: ..." for every level. Returns the length it needed. */
size_t bbvfl_privacy_line(const bbvfl_privacy *p, char *buf, size_t n);

#endif
