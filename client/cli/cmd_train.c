/* bbvfl train --offchain: the whole VFL loop with the in-process aggregator. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cli/afe_flags.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/train_common.h"
#include "common/fsutil.h"
#include "ml/lr.h"
#include "offchain/lr_train.h"

typedef struct {
  int tty, quiet, epochs;
  double t0, last_draw;
} progress;

static void on_round(void *ctx, int epoch, size_t done, size_t total) {
  progress *p = ctx;
  if (!p->tty || p->quiet) return;
  double now = bbvfl_now();
  if (done != total && now - p->last_draw < 0.05) return;
  p->last_draw = now;
  double frac = ((epoch - 1) + (double)done / (double)total) / p->epochs;
  double el = now - p->t0, rate = el > 0 ? frac * p->epochs / el : 0;
  double eta = frac > 0 ? el * (1 - frac) / frac : 0;
  int w = 30, fill = (int)(frac * w);
  char bar[64];
  for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : '.';
  bar[w] = '\0';
  fprintf(stderr, "\r[%s] %5.1f%%  epoch %d/%d  %.1f epochs/s  ETA %.1fs ", bar, 100 * frac, epoch, p->epochs, rate, eta);
  fflush(stderr);
}

static void on_epoch(void *ctx, const bbvfl_epoch_metrics *m) {
  progress *p = ctx;
  if (p->quiet) return;
  if (p->tty) fprintf(stderr, "\r%*s\r", 90, "");
  printf("epoch %3d/%d  train loss %.4f  test loss %.4f  AUROC %.4f  acc %.4f  F1 %.4f  agg %.2f us\n", m->epoch,
         p->epochs, m->train_loss, m->test_loss, m->auroc, m->accuracy, m->f1, m->agg_train_s * 1e6);
  fflush(stdout);
}

static int write_metrics_csv(const char *dir, const bbvfl_offchain_result *r, bbvfl_err *err) {
  size_t cap = 256 + (size_t)r->epochs * 200;
  char *buf = malloc(cap);
  if (!buf) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  size_t n = (size_t)snprintf(buf, cap, "epoch,train_loss,test_loss,auroc,accuracy,f1,offchain_agg_s,epoch_wall_s\n");
  for (int e = 0; e < r->epochs; e++) {
    const bbvfl_epoch_metrics *m = &r->per_epoch[e];
    n += (size_t)snprintf(buf + n, cap - n, "%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.9f,%.6f\n", m->epoch, m->train_loss,
                          m->test_loss, m->auroc, m->accuracy, m->f1, m->agg_train_s, m->wall_s);
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/metrics.csv", dir);
  int rc = bbvfl_write_file_atomic(path, buf, n, 0644, err);
  free(buf);
  return rc;
}

/* test_rows.csv: the test rows (0-based data rows of the table), so a reference can score the
   same split (tests/reference/lr_reference.py). */
static int write_test_rows(const char *dir, const bbvfl_offchain_result *r, bbvfl_err *err) {
  size_t cap = 16 + r->n_test * 24, n = 0;
  char *buf = malloc(cap);
  if (!buf) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  n += (size_t)snprintf(buf, cap, "row\n");
  for (size_t i = 0; i < r->n_test; i++) n += (size_t)snprintf(buf + n, cap - n, "%zu\n", r->test_rows[i]);
  char path[4200];
  snprintf(path, sizeof path, "%s/test_rows.csv", dir);
  int rc = bbvfl_write_file_atomic(path, buf, n, 0644, err);
  free(buf);
  return rc;
}

static int parse_seed(const char *s, uint64_t *out, bbvfl_err *err) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (!*s || *end || errno || s[0] == '-')
    return bbvfl_fail(err, BBVFL_E_ARG, "--seed: '%s' is not an unsigned 64-bit integer", s);
  *out = v;
  return 0;
}

/* The run's opening lines (unless quiet): the model for --model lr, then the setup. */
static void print_train_header(const train_common *tc, const bbvfl_offchain_cfg *cfg, const bbvfl_dataset *ds) {
  char mdesc[96];
  if (cfg->mech.kind == BBVFL_MECH_PBM)
    snprintf(mdesc, sizeof mdesc, "pbm b=%d beta=%g", cfg->mech.b, cfg->mech.beta);
  else if (cfg->mech.kind == BBVFL_MECH_GAUSSIAN)
    snprintf(mdesc, sizeof mdesc, "gaussian clip=%g sigma=%g", cfg->mech.clip, cfg->mech.sigma);
  else
    snprintf(mdesc, sizeof mdesc, "npq (no noise)");
  if (cfg->model == BBVFL_MODEL_LR)
    printf("model: vertical logistic regression (%s loss, %s%s), P = %d per client\n", bbvfl_loss_name(cfg->loss),
           tc->optimizer, cfg->opt.kind == BBVFL_OPT_SQN ? " with curvature rounds" : "", cfg->P);
  printf("off-chain VFL: %zu rows x %zu features, %d classes, M=%d, B=%zu, window K=%zu, staleness %d, P=%d, %d epochs, "
         "%s, seed %" PRIu64 "%s\n",
         ds->n, ds->d, ds->nclasses, cfg->M, cfg->B, cfg->window, cfg->staleness, cfg->P, cfg->epochs, mdesc, cfg->seed,
         cfg->seeded_noise ? " (REPRODUCIBLE noise from the seed: no epsilon holds)" : " (private noise from the OS)");
}

/* report.json's --model lr fields: the loss, the curvature (and sqn) rounds, the objective. */
static void report_lr_fields(json_t *o, const bbvfl_offchain_cfg *cfg, const bbvfl_offchain_result *res) {
  json_object_set_new(o, "loss_kind", json_string(bbvfl_loss_name(cfg->loss)));
  json_object_set_new(o, "curvature_rounds", json_integer((json_int_t)res->curv_rounds));
  if (cfg->opt.kind == BBVFL_OPT_SQN) {
    json_object_set_new(o, "sqn_memory", json_integer(cfg->sqn_memory));
    json_object_set_new(o, "sqn_interval", json_integer(cfg->sqn_interval));
    json_object_set_new(o, "sqn_sample", json_integer((json_int_t)cfg->sqn_sample));
    json_object_set_new(o, "sqn_pairs", json_string(cfg->sqn_pairs == BBVFL_SQN_PAIRS_GLOBAL  ? "global"
                                                    : cfg->sqn_pairs == BBVFL_SQN_PAIRS_ROUND ? "round"
                                                                                              : "local"));
    json_object_set_new(o, "sqn_cap", json_real(cfg->sqn_cap));
    json_object_set_new(o, "scalar_rounds", json_integer((json_int_t)res->scalar_rounds));
  }
  /* entry k: the regularised training objective after k training, curvature and dot-product
     rounds (evaluation rounds not counted); entry 0 at the start */
  json_t *ob = json_array();
  for (size_t k = 0; k < res->n_objective; k++) json_array_append_new(ob, json_real(res->objective[k]));
  json_object_set_new(o, "objective_per_round", ob);
}

/* report.json: the final metrics, the privacy of the run and its settings. New reference. */
static json_t *train_report_json(const train_common *tc, const bbvfl_offchain_cfg *cfg, const bbvfl_offchain_result *res,
                                 const bbvfl_privacy *priv) {
  const bbvfl_epoch_metrics *last = &res->per_epoch[res->epochs - 1];
  json_t *o = json_object();
  json_object_set_new(o, "auroc", json_real(last->auroc));
  json_object_set_new(o, "accuracy", json_real(last->accuracy));
  json_object_set_new(o, "f1", json_real(last->f1));
  json_object_set_new(o, "loss", json_real(last->test_loss));
  json_object_set_new(o, "train_loss", json_real(last->train_loss));
  /* the epsilons as printed, per person first (names kept for scripts); "privacy" has every level and method */
  bbvfl_privacy_json_top(o, priv);
  json_object_set_new(o, "privacy", bbvfl_privacy_json(priv));
  json_object_set_new(o, "delta", json_real(tc->delta));
  json_object_set_new(o, "offchain_agg_s_per_epoch", json_real(res->agg_train_s_per_epoch));
  json_object_set_new(o, "epochs", json_integer(res->epochs));
  json_object_set_new(o, "clients", json_integer(cfg->M));
  json_object_set_new(o, "mechanism", json_string(bbvfl_mech_name(cfg->mech.kind)));
  if (cfg->mech.kind == BBVFL_MECH_PBM) {
    json_object_set_new(o, "b", json_integer(cfg->mech.b));
    json_object_set_new(o, "beta", json_real(cfg->mech.beta));
  } else if (cfg->mech.kind == BBVFL_MECH_GAUSSIAN) {
    json_object_set_new(o, "clip", json_real(cfg->mech.clip));
    json_object_set_new(o, "sigma", json_real(cfg->mech.sigma));
  }
  json_object_set_new(o, "batch", json_integer((json_int_t)(cfg->B ? cfg->B : res->n_train)));
  json_object_set_new(o, "P", json_integer(cfg->P));
  json_object_set_new(o, "seed", json_integer((json_int_t)cfg->seed));
  json_object_set_new(o, "seeded_noise", json_boolean(cfg->seeded_noise));
  json_object_set_new(o, "reproducible_noise", json_boolean(cfg->seeded_noise));
  json_object_set_new(o, "optimizer", json_string(tc->optimizer));
  json_object_set_new(o, "model", json_string(bbvfl_model_name(cfg->model)));
  if (cfg->model == BBVFL_MODEL_LR) report_lr_fields(o, cfg, res);
  {
    json_t *lc = json_array();
    for (int e = 0; e < res->epochs; e++) json_array_append_new(lc, json_real(res->per_epoch[e].test_loss));
    json_object_set_new(o, "test_loss_per_epoch", lc);
  }
  json_object_set_new(o, "lr", json_real(cfg->opt.lr));
  json_object_set_new(o, "n_train", json_integer((json_int_t)res->n_train));
  json_object_set_new(o, "n_test_evaluated", json_integer((json_int_t)res->n_eval_rows));
  json_object_set_new(o, "minibatches_per_epoch", json_integer((json_int_t)res->R));
  json_object_set_new(o, "window", json_integer((json_int_t)res->window));
  json_object_set_new(o, "window_clamped", json_boolean(res->window_clamped));
  json_object_set_new(o, "staleness", json_integer(cfg->staleness));
  json_object_set_new(o, "rounds_per_epoch", json_integer((json_int_t)res->T));
  json_object_set_new(o, "eval_rounds_per_epoch", json_integer((json_int_t)res->V));
  json_object_set_new(o, "wall_s", json_real(res->wall_s));
  json_t *curve = json_array();
  for (int e = 0; e < res->epochs; e++) json_array_append_new(curve, json_real(res->per_epoch[e].auroc));
  json_object_set_new(o, "auroc_per_epoch", curve);
  return o;
}

/* The run folder: metrics.csv (and test_rows.csv) first, report.json (js, one line) last. */
static int write_run_folder(const char *out_dir, const bbvfl_offchain_result *res, const char *js, bbvfl_err *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/report.json", out_dir);
  /* metrics.csv first, report.json last: a report.json newer than the run start marks a
   * complete run folder (each file is replaced atomically; a failed write leaves the old one). */
  int wrc = js ? write_metrics_csv(out_dir, res, err) : bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  if (wrc == 0 && res->test_rows) wrc = write_test_rows(out_dir, res, err);
  if (wrc == 0) {
    size_t l = strlen(js);
    char *line = malloc(l + 2);
    if (line) {
      memcpy(line, js, l);
      line[l] = '\n';
      wrc = bbvfl_write_file_atomic(path, line, l + 1, 0644, err);
      free(line);
    } else {
      wrc = bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    }
  }
  return wrc;
}

/* The closing lines of the table output. */
static void print_final(const char *out_dir, const bbvfl_offchain_cfg *cfg, const bbvfl_offchain_result *res,
                        const bbvfl_privacy *priv, int wrote) {
  const int finite = priv->finite;
  const bbvfl_epoch_metrics *last = &res->per_epoch[res->epochs - 1];
  printf("final: test AUROC %.4f  accuracy %.4f  F1 %.4f  loss %.4f\n", last->auroc, last->accuracy, last->f1,
         last->test_loss);
  char line[1024];
  bbvfl_privacy_line(priv, line, sizeof line);
  if (finite || priv->reproducible) printf("privacy: %s\n", line);
  if (finite && !priv->reproducible) printf("privacy scope: %s\n", bbvfl_privacy_scope(priv));
  else if (!finite)
    printf("privacy: none (NPQ releases the embeddings unprotected)\n");
  printf("off-chain aggregation: %.3g s per epoch (%zu training rounds of M=%d vectors of up to %zu values); run %.2f s\n",
         res->agg_train_s_per_epoch, res->T, cfg->M, res->window * (cfg->B ? cfg->B : res->n_train) * (size_t)cfg->P,
         res->wall_s);
  if (wrote) printf("wrote %s/metrics.csv and %s/report.json\n", out_dir, out_dir);
}

int cmd_train(int argc, char **argv) {
  train_common tc;
  train_common_defaults(&tc);
  int offchain = 0, as_json = 0, clients = 5, b = 16, quiet = 0;
  double beta = 0.2, clip = 1.0, sigma = 1.0;
  const char *mechanism = "pbm", *seed_s = NULL, *out_dir = "runs/offchain", *partition = NULL;
  cli_opt opts[16 + TRAIN_COMMON_NOPTS + AFE_FLAGS_NOPTS];
  size_t no = 0;
  afe_flags af;
  afe_flags_defaults(&af);
  opts[no++] = (cli_opt){"offchain", OPT_FLAG, &offchain, NULL, "aggregate in-process (required: on-chain training is `bbvfl demo`)"};
  opts[no++] = (cli_opt){"mechanism", OPT_STR, &mechanism, "NAME", "pbm (default), npq (no noise, no quantization) or gaussian"};
  opts[no++] = (cli_opt){"clients", OPT_INT, &clients, "M", "number of clients (default 5)"};
  opts[no++] = (cli_opt){"b", OPT_INT, &b, "N", "PBM trials per coordinate, 1..255 (default 16)"};
  opts[no++] = (cli_opt){"beta", OPT_DBL, &beta, "X", "PBM bias in (0, 0.5) (default 0.2)"};
  opts[no++] = (cli_opt){"clip", OPT_DBL, &clip, "C", "gaussian: L2 clip norm per embedding row (default 1)"};
  opts[no++] = (cli_opt){"sigma", OPT_DBL, &sigma, "S", "gaussian: noise standard deviation (default 1)"};
  opts[no++] = (cli_opt){"partition", OPT_STR, &partition, "SPEC", "columns per client, e.g. 0-5/6-11/... (default: even split)"};
  opts[no++] = (cli_opt){"seed", OPT_STR, &seed_s, "N", "split, initialisation and minibatches from N (default: random, reported); the noise stays private (OS) unless --reproducible-noise"};
  opts[no++] = (cli_opt){"out", OPT_STR, &out_dir, "DIR", "run folder for metrics.csv and report.json (default runs/offchain)"};
  opts[no++] = (cli_opt){"quiet", OPT_FLAG, &quiet, NULL, "no per-epoch lines"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &as_json, NULL, "print one JSON object at the end on stdout"};
  no += train_common_opts(&tc, opts + no);
  no += afe_flags_opts(&af, opts + no);
  cli_spec spec = {
      "bbvfl train", "vertical federated training with an in-process aggregator", "--offchain [OPTIONS]",
      "Runs M clients (each an MLP on its columns, tanh embedding of size P) and the active\n"
      "client's fusion head in one process. Every round each client quantizes its embedding with\n"
      "the mechanism and submits it to the in-process aggregator, which sums the M vectors (the\n"
      "only step timed as 'aggregation'); the head trains on the estimated sum and posts the\n"
      "gradient back. A training round carries a window of K minibatches (one forward of K*B rows;\n"
      "the head steps through them and posts K gradients; each client takes K optimizer steps\n"
      "through that forward); with --staleness S a client forwards up to S rounds ahead of its\n"
      "applied gradients. After each epoch all test rows go through the same aggregation.\n"
      "Defaults: the paper's Breast Cancer setup, M=5, B=10, P=16, 30 epochs, lr 0.001 (Adam),\n"
      "PBM b=16 beta=0.2. epsilon is the exact feature-level (epsilon, delta) of the run.\n"
      "--model lr: vertical logistic regression instead (each client linear on its columns, P = 1,\n"
      "or K for K > 2 classes; under PBM the partial logits are clipped to [-C, C], --logit-clip);\n"
      "with --optimizer sqn every --sqn-interval rounds one extra curvature round (docs/LR.md), and\n"
      "the run folder also gets test_rows.csv (the split, for a centralised reference).",
      opts, no};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (!offchain) {
    bbvfl_fail(&err, BBVFL_E_ARG, "bbvfl train runs off-chain only: pass --offchain (on-chain training is `bbvfl demo`)");
    return cli_report(&err);
  }
  bbvfl_offchain_cfg cfg;
  bbvfl_offchain_defaults(&cfg);
  cfg.M = clients;
  cfg.mech.b = b;
  cfg.mech.beta = beta;
  cfg.mech.clip = clip;
  cfg.mech.sigma = sigma;
  cfg.partition = partition;
  if (bbvfl_mech_parse(mechanism, &cfg.mech.kind) != 0) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--mechanism: '%s' is not npq, pbm or gaussian", mechanism);
    return cli_report(&err);
  }
  if (train_common_apply(&tc, &cfg, &err) != 0) return cli_report(&err);
  if (afe_flags_apply(&af, &cfg.afe, &cfg.mech.clip, &err) != 0) return cli_report(&err);
  if (cfg.afe.on && cfg.mech.kind == BBVFL_MECH_NPQ) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--afe needs --mechanism gaussian or pbm");
    return cli_report(&err);
  }
  if (cfg.afe.on && !(cfg.mech.clip > 0)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--afe: the clip threshold t must be > 0, got %g (--clip / --afe-clip)", cfg.mech.clip);
    return cli_report(&err);
  }
  if (seed_s) {
    if (parse_seed(seed_s, &cfg.seed, &err) != 0) return cli_report(&err);
  } else {
    if (getrandom(&cfg.seed, sizeof cfg.seed, 0) != (ssize_t)sizeof cfg.seed) {
      bbvfl_fail(&err, BBVFL_E_CRYPTO, "getrandom failed: %s", strerror(errno));
      return cli_report(&err);
    }
  }
  /* the seed fixes the public parts (split, schedule, initialisation); the noise is private (OS)
     unless --reproducible-noise (train_common_apply: cfg.seeded_noise) */
  train_noise_warning(cfg.seeded_noise, "--reproducible-noise");
  if (clients < 1 || clients > 1000) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--clients must be in 1..1000, got %d", clients);
    return cli_report(&err);
  }
  bbvfl_privacy priv; /* checked here, before training; recomputed with the training row count below */
  if (bbvfl_mech_check(&cfg.mech, &err) != 0 || bbvfl_cfg_privacy(&cfg, 0, 0, 0, tc.delta, &priv, &err) != 0)
    return cli_report(&err);
  bbvfl_dataset ds;
  if (train_common_load(&tc, &ds, &err) != 0) return cli_report(&err);
  if (cfg.model == BBVFL_MODEL_LR) cfg.P = ds.nclasses > 2 ? ds.nclasses : 1; /* lr: P = K */
  cfg.track_objective = cfg.model == BBVFL_MODEL_LR && as_json; /* objective_per_round */
  bbvfl_partition part; /* checked here (the one home of the client count), built again by the trainer */
  if (bbvfl_partition_for(partition, ds.d, cfg.M, "--partition", "--clients is", &part, &err) == 0)
    bbvfl_partition_free(&part);
  if (err.code != BBVFL_OK || bbvfl_mkdirs(out_dir, 0755, &err) != 0) {
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  progress pr = {.tty = cli_isatty_err(), .quiet = quiet || as_json, .epochs = cfg.epochs, .t0 = bbvfl_now()};
  cfg.on_round = on_round;
  cfg.on_epoch = on_epoch;
  cfg.ctx = &pr;
  if (!pr.quiet) print_train_header(&tc, &cfg, &ds);
  if (cfg.model == BBVFL_MODEL_LR && cfg.opt.lr < 0.01 && !pr.quiet)
    fprintf(stderr, "note: --lr %g is small for --model lr (0.001 is the MLP's default): lr 1 for sgd and sqn, 0.1 for "
                    "adam (docs/LR.md)\n", cfg.opt.lr);
  bbvfl_offchain_result res;
  int rc = bbvfl_offchain_train(&ds, &cfg, &res, &err);
  if (pr.tty && !pr.quiet) fprintf(stderr, "\r%*s\r", 90, "");
  if (rc != 0) {
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  if (res.window_clamped)
    fprintf(stderr, "note: --window %zu exceeds the %zu minibatches of an epoch: clamped to %zu (one training round per epoch)\n",
            cfg.window, res.R, res.window);
  if (bbvfl_cfg_privacy(&cfg, res.n_train, 0, 0, tc.delta, &priv, &err) != 0) {
    bbvfl_offchain_result_free(&res);
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  json_t *o = train_report_json(&tc, &cfg, &res, &priv);
  char *js = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
  int wrc = write_run_folder(out_dir, &res, js, &err);
  if (as_json) {
    if (js) printf("%s\n", js);
  } else {
    print_final(out_dir, &cfg, &res, &priv, wrc == 0);
  }
  free(js);
  json_decref(o);
  bbvfl_offchain_result_free(&res);
  bbvfl_dataset_free(&ds);
  if (wrc != 0) return cli_report(&err);
  return 0;
}
