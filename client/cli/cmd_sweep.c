/* bbvfl sweep: the paper's privacy-utility grid off-chain. For each number of clients, the NPQ
 * baseline and PBM over b x beta, several seeds each; prints the median test AUROC with the exact
 * feature-level epsilon of each cell, writes sweep.csv (one row per run) and sweep.json (cells,
 * per-seed results and per-epoch AUROC curves, for the paper's Figure 2). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/train_common.h"
#include "common/fsutil.h"
#include "ml/metrics.h"

#define MAX_LIST 16

static int parse_list(const char *flag, const char *s, double *v, int *n, bbvfl_err *err) {
  *n = 0;
  const char *p = s;
  for (;;) {
    char *end;
    errno = 0;
    double x = strtod(p, &end);
    if (end == p || errno || !isfinite(x))
      return bbvfl_fail(err, BBVFL_E_ARG, "--%s '%s': expected a comma-separated list of numbers", flag, s);
    if (*n == MAX_LIST) return bbvfl_fail(err, BBVFL_E_ARG, "--%s: at most %d values", flag, MAX_LIST);
    v[(*n)++] = x;
    p = end;
    if (!*p) return 0;
    if (*p != ',') return bbvfl_fail(err, BBVFL_E_ARG, "--%s '%s': expected a comma-separated list of numbers", flag, s);
    p++;
  }
}


typedef struct {
  int tty, done, total;
  double t0;
} sweep_progress;

static void progress_draw(sweep_progress *p, const char *what) {
  if (!p->tty) return;
  double el = bbvfl_now() - p->t0, frac = (double)p->done / p->total;
  double eta = p->done ? el / p->done * (p->total - p->done) : 0;
  fprintf(stderr, "\r%*s\r[%d/%d runs] %.1f runs/s  ETA %.0fs  %s", 90, "", p->done, p->total,
          el > 0 ? p->done / el : 0.0, eta, what);
  (void)frac;
  fflush(stderr);
}

int cmd_sweep(int argc, char **argv) {
  train_common tc;
  train_common_defaults(&tc);
  const char *clients_s = "5,10", *b_s = "2,4,8,16", *beta_s = "0.05,0.1,0.15,0.2", *out_dir = "runs/sweep";
  int seeds = 5, as_json = 0;
  unsigned long long seed0 = 1;
  cli_opt opts[8 + TRAIN_COMMON_NOPTS];
  size_t no = 0;
  opts[no++] = (cli_opt){"clients", OPT_STR, &clients_s, "LIST", "numbers of clients (default 5,10)"};
  opts[no++] = (cli_opt){"b", OPT_STR, &b_s, "LIST", "PBM trials (default 2,4,8,16)"};
  opts[no++] = (cli_opt){"beta", OPT_STR, &beta_s, "LIST", "PBM bias (default 0.05,0.1,0.15,0.2)"};
  opts[no++] = (cli_opt){"seeds", OPT_INT, &seeds, "N", "runs per cell, seeds SEED..SEED+N-1; the median is reported (default 5)"};
  opts[no++] = (cli_opt){"seed", OPT_U64, &seed0, "N", "first seed (default 1)"};
  opts[no++] = (cli_opt){"out", OPT_STR, &out_dir, "DIR", "folder for sweep.csv and sweep.json (default runs/sweep)"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &as_json, NULL, "print sweep.json's summary on stdout instead of the table"};
  no += train_common_opts(&tc, opts + no);
  cli_spec spec = {"bbvfl sweep", "test AUROC and epsilon over the paper's b x beta grid (off-chain)", "[OPTIONS]",
                   "Every cell trains SEEDS times (seeds fix the split, schedule and initialisation; the noise\n"
                   "is private, from the OS, unless --reproducible-noise) and reports the median final test\n"
                   "AUROC. epsilon: the exact (epsilon, delta)-DP of the cell's whole training run, per person\n"
                   "(one person's whole row across every party) first, per party after (RDP, delta from\n"
                   "--delta). NPQ has no privacy (inf).",
                   opts, no};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  double Ms[MAX_LIST], bs[MAX_LIST], betas[MAX_LIST];
  int nM, nb, nbeta;
  if (parse_list("clients", clients_s, Ms, &nM, &err) || parse_list("b", b_s, bs, &nb, &err) ||
      parse_list("beta", beta_s, betas, &nbeta, &err))
    return cli_report(&err);
  if (seeds < 1 || seeds > 64) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--seeds must be in 1..64, got %d", seeds);
    return cli_report(&err);
  }
  for (int i = 0; i < nM; i++)
    if (Ms[i] < 1 || Ms[i] != floor(Ms[i])) {
      bbvfl_fail(&err, BBVFL_E_ARG, "--clients: %g is not a positive integer", Ms[i]);
      return cli_report(&err);
    }
  for (int i = 0; i < nb; i++)
    if (bs[i] < 1 || bs[i] > 255 || bs[i] != floor(bs[i])) {
      bbvfl_fail(&err, BBVFL_E_ARG, "--b: %g is not an integer in 1..255", bs[i]);
      return cli_report(&err);
    }
  for (int i = 0; i < nbeta; i++)
    if (!(betas[i] > 0 && betas[i] < 0.5)) {
      bbvfl_fail(&err, BBVFL_E_ARG, "--beta: %g is not in (0, 0.5): at 0.5 there is no privacy", betas[i]);
      return cli_report(&err);
    }
  bbvfl_offchain_cfg base;
  bbvfl_offchain_defaults(&base);
  if (train_common_apply(&tc, &base, &err) != 0) return cli_report(&err);
  train_noise_warning(base.seeded_noise, "--reproducible-noise"); /* else: private noise, medians over seeds */
  bbvfl_dataset ds;
  if (train_common_load(&tc, &ds, &err) != 0) return cli_report(&err);
  if (bbvfl_mkdirs(out_dir, 0755, &err) != 0) {
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  int ncell_per_M = 1 + nb * nbeta;
  sweep_progress pr = {.tty = cli_isatty_err(), .total = nM * ncell_per_M * seeds, .t0 = bbvfl_now()};
  json_t *cells = json_array();
  size_t csv_cap = 256 + (size_t)pr.total * 160, csv_len = 0;
  char *csv = malloc(csv_cap);
  if (!csv) {
    bbvfl_dataset_free(&ds);
    bbvfl_fail(&err, BBVFL_E_NOMEM, "out of memory");
    return cli_report(&err);
  }
  csv_len += (size_t)snprintf(csv, csv_cap,
                              "clients,mechanism,b,beta,seed,auroc,accuracy,f1,loss,epsilon_feature,epsilon_sample,"
                              "offchain_agg_s_per_epoch,wall_s\n");
  int status = 0;
  double run_wall_sum = 0;
  int run_count = 0;
  for (int im = 0; im < nM && status == 0; im++) {
    int M = (int)Ms[im];
    for (int cidx = 0; cidx < ncell_per_M && status == 0; cidx++) {
      bbvfl_offchain_cfg cfg = base;
      cfg.M = M;
      if (cidx == 0) {
        cfg.mech.kind = BBVFL_MECH_NPQ;
      } else {
        cfg.mech.kind = BBVFL_MECH_PBM;
        cfg.mech.b = (int)bs[(cidx - 1) / nbeta];
        cfg.mech.beta = betas[(cidx - 1) % nbeta];
      }
      bbvfl_privacy pv; /* checked before the runs; the feature-set level once the row count is known */
      if (bbvfl_cfg_privacy(&cfg, 0, 0, 0, tc.delta, &pv, &err) != 0) {
        status = -1;
        break;
      }
      double eps_f = pv.reproducible ? NAN : pv.finite ? pv.rdp.epsilon_feature : INFINITY;
      double eps_s = pv.reproducible ? NAN : pv.finite ? pv.rdp.epsilon_sample : INFINITY;
      double aucs[64], accs[64], losses[64];
      json_t *runs = json_array();
      for (int s = 0; s < seeds; s++) {
        cfg.seed = seed0 + (uint64_t)s;
        char what[96];
        snprintf(what, sizeof what, "M=%d %s b=%d beta=%g seed %llu", M, bbvfl_mech_name(cfg.mech.kind),
                 cfg.mech.b, cfg.mech.beta, (unsigned long long)cfg.seed);
        progress_draw(&pr, what);
        bbvfl_offchain_result res;
        if (bbvfl_offchain_train(&ds, &cfg, &res, &err) != 0) {
          bbvfl_wrap(&err, "%s", what);
          status = -1;
          break;
        }
        if (s == 0 && bbvfl_cfg_privacy(&cfg, res.n_train, 0, 0, tc.delta, &pv, &err) != 0) {
          bbvfl_offchain_result_free(&res);
          status = -1;
          break;
        }
        if (s == 0 && pv.finite && !pv.reproducible) { /* --model lr with minibatches: the curvature rounds need the row count */
          eps_f = pv.rdp.epsilon_feature;
          eps_s = pv.rdp.epsilon_sample;
        }
        const bbvfl_epoch_metrics *last = &res.per_epoch[res.epochs - 1];
        aucs[s] = last->auroc;
        accs[s] = last->accuracy;
        losses[s] = last->test_loss;
        run_wall_sum += res.wall_s;
        run_count++;
        json_t *curve = json_array();
        for (int e = 0; e < res.epochs; e++) json_array_append_new(curve, json_real(res.per_epoch[e].auroc));
        json_array_append_new(runs, json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:o}", "seed", (json_int_t)cfg.seed,
                                              "auroc", last->auroc, "accuracy", last->accuracy, "f1", last->f1, "loss",
                                              last->test_loss, "offchain_agg_s_per_epoch", res.agg_train_s_per_epoch,
                                              "auroc_per_epoch", curve));
        if (csv_len + 200 > csv_cap) {
          char *nc = realloc(csv, csv_cap * 2);
          if (!nc) {
            bbvfl_offchain_result_free(&res);
            bbvfl_fail(&err, BBVFL_E_NOMEM, "out of memory");
            status = -1;
            break;
          }
          csv = nc;
          csv_cap *= 2;
        }
        csv_len += (size_t)snprintf(csv + csv_len, csv_cap - csv_len, "%d,%s,%d,%g,%llu,%.6f,%.6f,%.6f,%.6f,%.6g,%.6g,%.9f,%.4f\n",
                                    M, bbvfl_mech_name(cfg.mech.kind), cfg.mech.kind == BBVFL_MECH_PBM ? cfg.mech.b : 0,
                                    cfg.mech.kind == BBVFL_MECH_PBM ? cfg.mech.beta : 0, (unsigned long long)cfg.seed,
                                    last->auroc, last->accuracy, last->f1, last->test_loss, eps_f,
                                    eps_s, res.agg_train_s_per_epoch, res.wall_s);
        bbvfl_offchain_result_free(&res);
        pr.done++;
      }
      if (status != 0) {
        json_decref(runs);
        break;
      }
      json_t *cell = json_object();
      json_object_set_new(cell, "clients", json_integer(M));
      json_object_set_new(cell, "mechanism", json_string(bbvfl_mech_name(cfg.mech.kind)));
      if (cfg.mech.kind == BBVFL_MECH_PBM) {
        json_object_set_new(cell, "b", json_integer(cfg.mech.b));
        json_object_set_new(cell, "beta", json_real(cfg.mech.beta));
      }
      json_object_set_new(cell, "auroc_median", json_real(bbvfl_median(aucs, (size_t)seeds)));
      json_object_set_new(cell, "accuracy_median", json_real(bbvfl_median(accs, (size_t)seeds)));
      json_object_set_new(cell, "loss_median", json_real(bbvfl_median(losses, (size_t)seeds)));
      /* RDP; per person (epsilon_sample) first, per party after, each with its level named */
      train_json_eps(cell, &pv, eps_s, eps_f);
      json_object_set_new(cell, "privacy", bbvfl_privacy_json(&pv));
      json_object_set_new(cell, "runs", runs);
      json_array_append_new(cells, cell);
    }
  }
  if (pr.tty) fprintf(stderr, "\r%*s\r", 100, "");
  if (status != 0) {
    free(csv);
    json_decref(cells);
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  json_t *top = json_object();
  json_object_set_new(top, "epochs", json_integer(base.epochs));
  json_object_set_new(top, "seeds", json_integer(seeds));
  json_object_set_new(top, "first_seed", json_integer((json_int_t)seed0));
  json_object_set_new(top, "delta", json_real(tc.delta));
  json_object_set_new(top, "batch", json_integer((json_int_t)base.B));
  json_object_set_new(top, "P", json_integer(base.P));
  json_object_set_new(top, "window", json_integer((json_int_t)base.window));
  json_object_set_new(top, "staleness", json_integer(base.staleness));
  json_object_set_new(top, "eval_rows_per_round", json_integer((json_int_t)base.eval_rows_per_round));
  json_object_set_new(top, "optimizer", json_string(tc.optimizer));
  json_object_set_new(top, "lr", json_real(base.opt.lr));
  json_object_set_new(top, "mean_run_wall_s", json_real(run_count ? run_wall_sum / run_count : 0));
  json_object_set_new(top, "cells", cells);
  char *js = json_dumps(top, JSON_INDENT(1) | JSON_REAL_PRECISION(8));
  char path[4200];
  int wrc = 0;
  snprintf(path, sizeof path, "%s/sweep.csv", out_dir);
  wrc = bbvfl_write_file_atomic(path, csv, csv_len, 0644, &err);
  if (wrc == 0 && js) {
    snprintf(path, sizeof path, "%s/sweep.json", out_dir);
    wrc = bbvfl_write_file_atomic(path, js, strlen(js), 0644, &err);
  }
  if (as_json) {
    /* the summary without per-run curves */
    json_t *sum = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(cells, i, c) {
      json_t *cc = json_deep_copy(c);
      json_object_del(cc, "runs");
      json_array_append_new(sum, cc);
    }
    json_t *o = json_pack("{s:i, s:i, s:f, s:o}", "epochs", base.epochs, "seeds", seeds, "delta", tc.delta, "cells", sum);
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(8));
    if (s) printf("%s\n", s);
    free(s);
    json_decref(o);
  } else {
    printf("median test AUROC after %d epochs over %d seeds, %s noise (epsilon: per person / per party, delta %g)\n",
           base.epochs, seeds, base.seeded_noise ? "REPRODUCIBLE" : "private", tc.delta);
    size_t ci = 0;
    for (int im = 0; im < nM; im++) {
      json_t *npq = json_array_get(cells, ci++);
      double npq_auc = json_real_value(json_object_get(npq, "auroc_median"));
      printf("\nM = %d clients   NPQ (no noise): AUROC %.4f, epsilon inf\n", (int)Ms[im], npq_auc);
      printf("  %-6s", "b\\beta");
      for (int j = 0; j < nbeta; j++) printf("  %-24g", betas[j]);
      printf("\n");
      for (int ib = 0; ib < nb; ib++) {
        printf("  %-6d", (int)bs[ib]);
        for (int j = 0; j < nbeta; j++) {
          json_t *c = json_array_get(cells, ci++);
          char cellbuf[64];
          const json_t *es = json_object_get(c, "epsilon_sample"), *ef = json_object_get(c, "epsilon_feature");
          if (json_is_number(es))
            snprintf(cellbuf, sizeof cellbuf, "%.4f (%.3g / %.3g)", json_real_value(json_object_get(c, "auroc_median")),
                     json_number_value(es), json_number_value(ef));
          else
            snprintf(cellbuf, sizeof cellbuf, "%.4f (eps none)", json_real_value(json_object_get(c, "auroc_median")));
          printf("  %-24s", cellbuf);
        }
        printf("\n");
      }
    }
    if (base.seeded_noise)
      printf("\neps: %s", BBVFL_PRIVACY_VOID);
    else
      printf("\n(eps a / b): a per person (one person's whole row, every party), b per party (one party's columns of "
             "a row), RDP at delta %g (every level and method: \"privacy\" in the JSON)", tc.delta);
    printf("; %s.\n",
           strcmp(tc.privacy, "row") == 0 ? BBVFL_ACCT_SCOPE_ROW : "not end-to-end: " BBVFL_ACCT_SCOPE);
    /* the acceptance check of the paper's setting, when the grid holds b = 16, beta = 0.2 */
    ci = 0;
    for (int im = 0; im < nM; im++) {
      double npq_auc = json_real_value(json_object_get(json_array_get(cells, ci), "auroc_median"));
      for (int c2 = 1; c2 < ncell_per_M; c2++) {
        json_t *c = json_array_get(cells, ci + (size_t)c2);
        if (json_integer_value(json_object_get(c, "b")) == 16 &&
            fabs(json_real_value(json_object_get(c, "beta")) - 0.2) < 1e-12) {
          double a = json_real_value(json_object_get(c, "auroc_median"));
          printf("\nM = %d: NPQ %.4f %s 0.99; PBM b=16 beta=0.2 %.4f %s NPQ - 0.01 = %.4f", (int)Ms[im], npq_auc,
                 npq_auc >= 0.99 ? ">=" : "<", a, a >= npq_auc - 0.01 ? ">=" : "<", npq_auc - 0.01);
        }
      }
      ci += (size_t)ncell_per_M;
    }
    printf("\n");
    printf("\nmean wall time of one %d-epoch run: %.3f s\n", base.epochs, run_count ? run_wall_sum / run_count : 0);
    if (wrc == 0) printf("wrote %s/sweep.csv and %s/sweep.json\n", out_dir, out_dir);
  }
  free(js);
  free(csv);
  json_decref(top);
  bbvfl_dataset_free(&ds);
  return wrc != 0 ? cli_report(&err) : 0;
}
