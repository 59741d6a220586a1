/* bbvfl public API: the privacy of a training configuration.
 *
 * The same accountant every bbvfl command reports from (`bbvfl train`, `bbvfl privacy`, the audit),
 * so the numbers agree with theirs. A guarantee is an (epsilon, delta) pair for one neighbouring
 * relation, the level:
 *   BBVFL_LEVEL_ROW_FEATURE  one party's features of one row change: that client's epochs x P
 *                            releases of the row compose (the papers' figure, the headline);
 *   BBVFL_LEVEL_ROW_SAMPLE   one row changes for every party: epochs x M x P releases compose;
 *   BBVFL_LEVEL_FEATURE_SET  one party's whole column set changes: every release of that client,
 *                            over every training row, composes (needs the training row count);
 *   BBVFL_LEVEL_LABELS       one row's label: pure epsilon with label DP
 *                            (bbvfl_config_set_label_epsilon), else infinite (unprotected);
 *   BBVFL_LEVEL_PERSON       one person's whole record, every party's features of the row and its
 *                            label: ROW_SAMPLE and LABELS composed (epsilons added), the per-person
 *                            figure every command prints first; infinite without label DP.
 * With the default (the papers') accounting none of these is end-to-end: each client's network and
 * feature scaling are fitted on its rows, so one row also moves the other rows' releases
 * (`scope` says so in words; docs/PRIVACY.md in the source tree has the details). NPQ has no
 * guarantee: epsilon is infinite. The epsilon is the smaller of two exact accountings, Renyi DP
 * and (PBM) the privacy loss distribution; `method` names the one that gave it.
 *
 * Pure computation (milliseconds); nothing printed, nothing allocated the caller must free. */
#ifndef BBVFL_PUBLIC_PRIVACY_H
#define BBVFL_PUBLIC_PRIVACY_H

#include <stddef.h>

#include "bbvfl/common.h"
#include "bbvfl/error.h"
#include "bbvfl/train.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  BBVFL_LEVEL_ROW_FEATURE = 0,
  BBVFL_LEVEL_ROW_SAMPLE = 1,
  BBVFL_LEVEL_FEATURE_SET = 2,
  BBVFL_LEVEL_LABELS = 3,
  BBVFL_LEVEL_PERSON = 4
} bbvfl_level;

/* One guarantee. The strings are static (they outlive every object). The layout is part of the
 * ABI (fields are only added with a new SONAME). */
typedef struct {
  bbvfl_level level;
  double epsilon;     /* INFINITY: no guarantee at this level (NPQ; labels without label DP; a
                         seeded configuration, whose noise the seed regenerates: method "none") */
  double delta;       /* the configured delta; 0 for a pure guarantee (labels with label DP) */
  const char *method; /* "pld", "rdp", "rr" (randomized response: labels), "pld+rr" or "rdp+rr"
                         (person: the features' method and the label's), "none" (no guarantee) */
  int end_to_end;     /* 1: covers every use of the data at this level; 0: the releases only */
  const char *scope;  /* what the number covers and what it does not, in words */
} bbvfl_epsilon;

/* The level's name as bbvfl's JSON reports use it ("row_feature", "row_sample", "feature_set",
 * "labels", "person"), or its description for people ("row level, one party's features", ...). Static
 * strings; "unknown" for a value outside the enum. */
BBVFL_API const char *bbvfl_level_name(bbvfl_level level);
BBVFL_API const char *bbvfl_level_description(bbvfl_level level);

/* The guarantee of cfg at level into *out, before any training.
 *   train_rows  the training rows of one party (only BBVFL_LEVEL_FEATURE_SET needs it; 0 there
 *               is an ARG error, elsewhere it is ignored).
 * Returns OK; ARG (a NULL argument, an unknown level, train_rows 0 for FEATURE_SET, a
 * configuration the accountant refuses, named); NOMEM. *out is written on success only. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_config_epsilon(const bbvfl_config *cfg, bbvfl_level level,
                                                                    size_t train_rows, bbvfl_epsilon *out,
                                                                    bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(4);

/* The guarantee of a finished run at level (its configuration and its training row count). Same
 * returns as bbvfl_config_epsilon. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_run_epsilon(const bbvfl_run *run, bbvfl_level level,
                                                                 bbvfl_epsilon *out, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(3);

#ifdef __cplusplus
}
#endif

#endif
