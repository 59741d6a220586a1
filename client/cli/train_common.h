/* Flags and helpers shared by `bbvfl train --offchain` and `bbvfl sweep`. */
#ifndef BBVFL_CLI_TRAIN_COMMON_H
#define BBVFL_CLI_TRAIN_COMMON_H

#include <jansson.h>

#include "cli/args.h"
#include "dp/accountant.h"
#include "dp/privacy.h"
#include "ml/data.h"
#include "core/cfgprivacy.h"
#include "offchain/offchain.h"

typedef struct {
  const char *data, *label, *id_column, *optimizer, *hidden, *privacy, *encoder;
  double lr, lr_decay, momentum, delta, test_frac, label_eps, dpsgd_clip, dpsgd_noise, scale_eps, pca_noise;
  int batch, P, epochs;
  int window, staleness, eval_rows; /* K, s, E (0: all test rows in one round) */
  const char *model, *loss;         /* mlp | lr; logistic | taylor */
  double logit_clip, l2;
  int sqn_memory, sqn_interval, sqn_sample;
  int reproducible_noise;           /* --reproducible-noise: every DP draw from the seed (no epsilon holds) */
  const char *sqn_pairs;
  double sqn_cap;
} train_common;

void train_common_defaults(train_common *t);
/* Appends the shared options to opts (room for TRAIN_COMMON_NOPTS), returns how many. */
#define TRAIN_COMMON_NOPTS 32 /* exactly the o[n++] of train_common_opts: callers size their arrays with it (the ASan run of cli_test_hostile_input catches a count that falls short) */
size_t train_common_opts(train_common *t, cli_opt *opts);
/* Applies the shared flags to cfg (model family, loss, model, optimizer, batch, P, epochs, split, window, staleness,
 * evaluation rows per round); a bad value is refused with the value named. */
int train_common_apply(const train_common *t, bbvfl_offchain_cfg *cfg, bbvfl_err *err);
/* With reproducible noise: one loud line on stderr saying that every DP draw can be regenerated
 * from the seed (the session file), so every epsilon is reported as none. why: what asked for it
 * ("--reproducible-noise", "--compare implies --reproducible-noise"). */
void train_noise_warning(int reproducible, const char *why);
/* Loads --data (default: the bundled Breast Cancer table). */
int train_common_load(const train_common *t, bbvfl_dataset *ds, bbvfl_err *err);
/* JSON number, or null when not finite (bbvfl_json_num_or_null). */
json_t *train_json_num(double v);
/* Default path of the bundled table. */
const char *train_default_data(void);

#endif
