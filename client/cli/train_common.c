#include "cli/train_common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml/lr.h"
#include "offchain/lr_train.h"

#define BBVFL_STR_(x) #x
#define BBVFL_STR(x) BBVFL_STR_(x)

void train_common_defaults(train_common *t) {
  memset(t, 0, sizeof *t);
  /* the trainer's own defaults (offchain/offchain.h), spelled as the flags take them */
  bbvfl_offchain_cfg d;
  bbvfl_offchain_defaults(&d);
  t->optimizer = "adam";
  t->hidden = "32,32";
  t->lr = NAN; /* not given: the model's default (train_common_apply) */
  t->lr_decay = d.opt.decay;
  t->momentum = d.opt.momentum;
  t->delta = 1e-5;
  t->test_frac = d.test_frac;
  t->privacy = "paper";
  t->dpsgd_clip = BBVFL_ROWDP_CLIP;
  t->dpsgd_noise = BBVFL_ROWDP_NOISE;
  t->scale_eps = BBVFL_ROWDP_SCALE_EPS;
  t->encoder = "dpsgd";
  t->pca_noise = BBVFL_ROWDP_PCA_NOISE;
  t->batch = (int)d.B;
  t->P = d.P;
  t->epochs = d.epochs;
  t->window = (int)d.window;
  t->staleness = d.staleness;
  t->eval_rows = (int)d.eval_rows_per_round;
  t->model = bbvfl_model_name(d.model);
  t->loss = "logistic";
  t->logit_clip = d.logit_clip;
  t->sqn_memory = d.sqn_memory;
  t->sqn_interval = d.sqn_interval;
  t->sqn_sample = (int)d.sqn_sample;
  t->sqn_pairs = "local";
  t->sqn_cap = 0;
}

size_t train_common_opts(train_common *t, cli_opt *o) {
  size_t n = 0;
  o[n++] = (cli_opt){"data", OPT_STR, &t->data, "FILE", "CSV table (default: the bundled Breast Cancer data)"};
  o[n++] = (cli_opt){"label", OPT_STR, &t->label, "NAME", "label column (default: the last column)"};
  o[n++] = (cli_opt){"id-column", OPT_STR, &t->id_column, "NAME", "a row id column to ignore"};
  o[n++] = (cli_opt){"epochs", OPT_INT, &t->epochs, "N", "training epochs (default 30)"};
  o[n++] = (cli_opt){"batch", OPT_INT, &t->batch, "B", "batch size (default 10; 0: full batch, every training row)"};
  o[n++] = (cli_opt){"P", OPT_INT, &t->P, "N", "embedding size per client (default 16)"};
  o[n++] = (cli_opt){"window", OPT_INT, &t->window, "K",
                     "minibatches per training round, >= 1: one forward of the K*B rows, K optimizer steps\n"
                     "(default " BBVFL_STR(BBVFL_DEFAULT_WINDOW) "; larger than an epoch's minibatches: clamped to them, and said)"};
  o[n++] = (cli_opt){"staleness", OPT_INT, &t->staleness, "S",
                     "training rounds a client may forward ahead of its applied gradients, 0..8 (default 0)"};
  o[n++] = (cli_opt){"eval-rows-per-round", OPT_INT, &t->eval_rows, "E",
                     "test rows per evaluation round (default 0: all test rows in one round)"};
  o[n++] = (cli_opt){"hidden", OPT_STR, &t->hidden, "LIST", "hidden layer widths of each client's MLP (default 32,32)"};
  o[n++] = (cli_opt){"model", OPT_STR, &t->model, "NAME",
                     "mlp (default: each client's MLP, tanh embedding of size P, fusion head) or lr (vertical\n"
                     "logistic regression: each client linear on its columns, P = 1, softmax with P = K for K > 2\n"
                     "classes; the head is the sum plus a bias; PBM clips the partial logits to [-C, C])"};
  o[n++] = (cli_opt){"loss", OPT_STR, &t->loss, "NAME",
                     "lr: logistic (default) or taylor (log 2 - y z/2 + z^2/8, two classes)"};
  o[n++] = (cli_opt){"logit-clip", OPT_DBL, &t->logit_clip, "C",
                     "lr: clip each client's partial logit to [-C, C] (default 0: 4 under pbm, else none)"};
  o[n++] = (cli_opt){"l2", OPT_DBL, &t->l2, "X",
                     "lr: L2 penalty (X/2)|w|^2 on the weights, biases free (default 0; 1/(C n) is\n"
                     "sklearn's LogisticRegression(C))"};
  o[n++] = (cli_opt){"optimizer", OPT_STR, &t->optimizer, "NAME",
                     "adam (default), sgd, or sqn (lr only: stochastic quasi-Newton, a block-diagonal inverse-\n"
                     "Hessian estimate per client from curvature rounds; docs/LR.md)"};
  o[n++] = (cli_opt){"sqn-memory", OPT_INT, &t->sqn_memory, "M", "sqn: curvature pairs kept (default 5)"};
  o[n++] = (cli_opt){"sqn-interval", OPT_INT, &t->sqn_interval, "L",
                     "sqn: a curvature update every L training rounds, one extra aggregation round (default 3)"};
  o[n++] = (cli_opt){"sqn-sample", OPT_INT, &t->sqn_sample, "S",
                     "sqn: rows of the curvature subsample, the first S of the window (default 0: all)"};
  o[n++] = (cli_opt){"sqn-pairs", OPT_STR, &t->sqn_pairs, "local|round|global",
                     "sqn: local (default): each block's own y = H_bb s, no curvature round; round: y from a\n"
                     "curvature round, one H per block; global: one H over all blocks (off chain only, a round\n"
                     "of dot products per step; docs/LR.md)"};
  o[n++] = (cli_opt){"sqn-cap", OPT_DBL, &t->sqn_cap, "X",
                     "sqn: cap each block's step H g at X times |g| (default 0: no cap)"};
  o[n++] = (cli_opt){"lr", OPT_DBL, &t->lr, "X",
                     "learning rate (default 0.001 for the MLP, the paper's; --model lr: 1 with sgd, 0.1 with adam,\n"
                     "sqn 2/(clients+1) (--loss taylor: 1/(clients+1)), as measured in docs/LR.md)"};
  o[n++] = (cli_opt){"lr-decay", OPT_DBL, &t->lr_decay, "X", "per-epoch learning-rate multiplier (default 1)"};
  o[n++] = (cli_opt){"momentum", OPT_DBL, &t->momentum, "X", "sgd momentum (default 0)"};
  o[n++] = (cli_opt){"delta", OPT_DBL, &t->delta, "X", "delta for the reported epsilon (default 1e-5)"};
  o[n++] = (cli_opt){"label-epsilon", OPT_DBL, &t->label_eps, "E",
                     "label DP: train on randomized-response labels, E-label-DP (default 0: true labels,\n"
                     "which any chain reader can read back from the posted gradients)"};
  o[n++] = (cli_opt){"privacy", OPT_STR, &t->privacy, "MODE",
                     "paper (default: PBM releases accounted per row as the papers do, not end-to-end) or row\n"
                     "(end-to-end at row level: DP feature scaling, DP-SGD on each client's network, PBM)"};
  o[n++] = (cli_opt){"dpsgd-clip", OPT_DBL, &t->dpsgd_clip, "C", "row mode: per-row gradient clip norm (default 1)"};
  o[n++] = (cli_opt){"dpsgd-noise", OPT_DBL, &t->dpsgd_noise, "Z", "row mode: DP-SGD noise multiplier (default 2)"};
  o[n++] = (cli_opt){"scale-epsilon", OPT_DBL, &t->scale_eps, "E",
                     "row mode: pure epsilon of each client's DP feature scaling (default 0.25)"};
  o[n++] = (cli_opt){"encoder", OPT_STR, &t->encoder, "KIND",
                     "row mode: dpsgd (default: each client's network trained by DP-SGD, every row released\n"
                     "every epoch) or pca (a frozen DP-PCA encoder of sign features, each row released once;\n"
                     "the head trains every epoch on the same sums: docs/PRIVACY.md)"};
  o[n++] = (cli_opt){"pca-noise", OPT_DBL, &t->pca_noise, "Z",
                     "row mode, --encoder pca: noise multiplier of the DP covariance (default 3)"};
  o[n++] = (cli_opt){"reproducible-noise", OPT_FLAG, &t->reproducible_noise, NULL,
                     "experiments only: draw every DP noise (PBM, Gaussian, DP-SGD, DP-PCA, DP scaling, label\n"
                     "randomized response) from --seed instead of the OS, so a run can be repeated bit for bit;\n"
                     "anyone with the seed (the session file) regenerates the noise: NO epsilon holds, every\n"
                     "epsilon is reported as none (default: private noise; --seed fixes only the split, the\n"
                     "schedule and the initialisation)"};
  return n;
}

void train_noise_warning(int reproducible, const char *why) {
  if (!reproducible) return;
  fprintf(stderr, "WARNING: %s: every DP draw is a function of the seed, which the session file carries: anyone "
                  "holding it regenerates the noise, so NO epsilon holds (every epsilon is reported as none). "
                  "For experiments only.\n", why);
}

const char *train_default_data(void) { return bbvfl_default_data_path(); }

int train_common_apply(const train_common *t, bbvfl_offchain_cfg *c, bbvfl_err *err) {
  if (t->epochs < 1 || t->epochs > 100000) return bbvfl_fail(err, BBVFL_E_ARG, "--epochs must be in 1..100000, got %d", t->epochs);
  if (t->batch < 0 || t->batch > 1 << 20)
    return bbvfl_fail(err, BBVFL_E_ARG, "--batch must be >= 1 (or 0: full batch), got %d", t->batch);
  if (t->P < 1 || t->P > 4096) return bbvfl_fail(err, BBVFL_E_ARG, "--P must be in 1..4096, got %d", t->P);
  if (!(t->delta > 0 && t->delta < 1)) return bbvfl_fail(err, BBVFL_E_ARG, "--delta must be in (0, 1), got %g", t->delta);
  if (t->window < 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "--window must be >= 1 minibatch per round, got %d", t->window);
  if (t->staleness < 0 || t->staleness > BBVFL_MAX_STALENESS)
    return bbvfl_fail(err, BBVFL_E_ARG, "--staleness must be in 0..%d, got %d", BBVFL_MAX_STALENESS, t->staleness);
  if (t->eval_rows < 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "--eval-rows-per-round must be >= 1 (or 0: all test rows), got %d", t->eval_rows);
  c->window = (size_t)t->window;
  c->staleness = t->staleness;
  c->eval_rows_per_round = (size_t)t->eval_rows;
  c->epochs = t->epochs;
  c->B = (size_t)t->batch;
  c->P = t->P;
  if (bbvfl_optim_parse_kind(t->optimizer, &c->opt.kind) != 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "--optimizer: '%s' is not adam, sgd or sqn", t->optimizer);
  if (bbvfl_model_parse(t->model, &c->model) != 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "--model: '%s' is not mlp or lr", t->model);
  bbvfl_loss_kind lk;
  if (bbvfl_loss_parse(t->loss, &lk) != 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "--loss: '%s' is not logistic or taylor", t->loss);
  c->loss = (int)lk;
  if (c->model != BBVFL_MODEL_LR && (lk != BBVFL_LOSS_LOGISTIC || t->logit_clip != 0))
    return bbvfl_fail(err, BBVFL_E_ARG, "--loss and --logit-clip are for --model lr");
  if (c->opt.kind == BBVFL_OPT_SQN && c->model != BBVFL_MODEL_LR)
    return bbvfl_fail(err, BBVFL_E_ARG, "--optimizer sqn needs --model lr (the MLP trains with adam or sgd)");
  if (!(t->logit_clip >= 0) || !isfinite(t->logit_clip))
    return bbvfl_fail(err, BBVFL_E_ARG, "--logit-clip must be >= 0, got %g", t->logit_clip);
  if (t->sqn_memory < 1 || t->sqn_memory > 1000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-memory must be in 1..1000, got %d", t->sqn_memory);
  if (t->sqn_interval < 1 || t->sqn_interval > 100000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-interval must be in 1..100000, got %d", t->sqn_interval);
  if (t->sqn_sample < 0) return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-sample must be >= 0, got %d", t->sqn_sample);
  c->logit_clip = t->logit_clip;
  if (!(t->l2 >= 0) || !isfinite(t->l2)) return bbvfl_fail(err, BBVFL_E_ARG, "--l2 must be >= 0, got %g", t->l2);
  if (t->l2 > 0 && c->model != BBVFL_MODEL_LR) return bbvfl_fail(err, BBVFL_E_ARG, "--l2 is for --model lr");
  c->l2 = t->l2;
  c->sqn_memory = t->sqn_memory;
  c->sqn_interval = t->sqn_interval;
  c->sqn_sample = (size_t)t->sqn_sample;
  if (!strcmp(t->sqn_pairs, "local")) c->sqn_pairs = BBVFL_SQN_PAIRS_LOCAL;
  else if (!strcmp(t->sqn_pairs, "round")) c->sqn_pairs = BBVFL_SQN_PAIRS_ROUND;
  else if (!strcmp(t->sqn_pairs, "global")) c->sqn_pairs = BBVFL_SQN_PAIRS_GLOBAL;
  else return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-pairs: '%s' is not local, round or global", t->sqn_pairs);
  if (!(t->sqn_cap >= 0) || !isfinite(t->sqn_cap))
    return bbvfl_fail(err, BBVFL_E_ARG, "--sqn-cap must be >= 0 (0: no cap), got %g", t->sqn_cap);
  c->sqn_cap = t->sqn_cap;
  if (c->model == BBVFL_MODEL_LR) c->P = 1; /* K once the classes are known (the caller) */
  if (isnan(t->lr)) { /* not given */
    if (c->model == BBVFL_MODEL_LR) c->opt.lr = c->opt.kind == BBVFL_OPT_ADAM ? 0.1 : 1.0;
    /* sqn: 2/(M+1), taylor 1/(M+1) (offchain/lr_train.h, docs/LR.md "Step") */
    if (c->model == BBVFL_MODEL_LR && c->opt.kind == BBVFL_OPT_SQN)
      c->opt.lr = bbvfl_lr_sqn_default_lr(c->loss, c->M > 0 ? c->M : 5);
  } else {
    c->opt.lr = t->lr;
  }
  c->opt.decay = t->lr_decay;
  c->opt.momentum = t->momentum;
  c->test_frac = t->test_frac;
  if (!(t->label_eps >= 0) || !isfinite(t->label_eps) || (t->label_eps > 0 && t->label_eps < 1e-6))
    return bbvfl_fail(err, BBVFL_E_ARG, "--label-epsilon must be 0 (off) or in [1e-6, inf), got %g", t->label_eps);
  c->label_eps = t->label_eps;
  c->seeded_noise = t->reproducible_noise;
  memset(&c->rowdp, 0, sizeof c->rowdp);
  if (strcmp(t->privacy, "row") == 0) {
    if (!(t->dpsgd_clip > 0) || !isfinite(t->dpsgd_clip))
      return bbvfl_fail(err, BBVFL_E_ARG, "--dpsgd-clip must be > 0, got %g", t->dpsgd_clip);
    if (!(t->dpsgd_noise >= 0.1) || !(t->dpsgd_noise <= 1000))
      return bbvfl_fail(err, BBVFL_E_ARG, "--dpsgd-noise must be in [0.1, 1000], got %g", t->dpsgd_noise);
    if (!(t->scale_eps > 0) || !isfinite(t->scale_eps))
      return bbvfl_fail(err, BBVFL_E_ARG, "--scale-epsilon must be > 0, got %g", t->scale_eps);
    c->rowdp = (bbvfl_rowdp){1, t->dpsgd_clip, t->dpsgd_noise, t->scale_eps, 0, 0};
    if (strcmp(t->encoder, "pca") == 0) {
      if (!(t->pca_noise >= 0.1) || !(t->pca_noise <= 1000))
        return bbvfl_fail(err, BBVFL_E_ARG, "--pca-noise must be in [0.1, 1000], got %g", t->pca_noise);
      c->rowdp.encoder = 1;
      c->rowdp.pca_noise = t->pca_noise;
    } else if (strcmp(t->encoder, "dpsgd") != 0) {
      return bbvfl_fail(err, BBVFL_E_ARG, "--encoder must be dpsgd or pca, got '%s'", t->encoder);
    }
  } else if (strcmp(t->privacy, "paper") != 0) {
    return bbvfl_fail(err, BBVFL_E_ARG, "--privacy must be paper or row, got '%s'", t->privacy);
  } else if (strcmp(t->encoder, "dpsgd") != 0) {
    return bbvfl_fail(err, BBVFL_E_ARG, "--encoder %s needs --privacy row", t->encoder);
  }
  /* hidden widths */
  c->nhidden = 0;
  const char *s = t->hidden;
  if (strcmp(s, "none") != 0 && *s) {
    for (;;) {
      char *end;
      errno = 0;
      long w = strtol(s, &end, 10);
      if (end == s || errno || w < 1 || w > 65536)
        return bbvfl_fail(err, BBVFL_E_ARG, "--hidden '%s': expected widths like 32,32 (each 1..65536) or 'none'", t->hidden);
      if (c->nhidden == BBVFL_MAX_HIDDEN)
        return bbvfl_fail(err, BBVFL_E_ARG, "--hidden: at most %d hidden layers", BBVFL_MAX_HIDDEN);
      c->hidden[c->nhidden++] = (int)w;
      s = end;
      if (*s == '\0') break;
      if (*s != ',') return bbvfl_fail(err, BBVFL_E_ARG, "--hidden '%s': expected widths like 32,32", t->hidden);
      s++;
    }
  }
  return 0;
}

int train_common_load(const train_common *t, bbvfl_dataset *ds, bbvfl_err *err) {
  bbvfl_csv_opts o = {.label = t->label, .id_column = t->id_column};
  return bbvfl_csv_load(t->data ? t->data : train_default_data(), &o, ds, err);
}

json_t *train_json_num(double v) { return bbvfl_json_num_or_null(v); }


