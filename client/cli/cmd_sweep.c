/* bbvfl sweep: the paper's privacy-utility grid off-chain; flags and printing only, the grid runs
 * in offchain/sweep.h. For each number of clients, the NPQ baseline and PBM over b x beta, several
 * seeds each; prints the median test AUROC with the exact feature-level epsilon of each cell,
 * writes sweep.csv (one row per run) and sweep.json (cells, per-seed results and per-epoch AUROC
 * curves, for the paper's Figure 2). */
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
#include "offchain/sweep.h"

#define MAX_LIST BBVFL_SWEEP_MAX_LIST

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
  int tty;
  double t0;
} sweep_progress;

/* The progress line on a terminal (stderr), before each run. */
static void on_run(void *ctx, const bbvfl_sweep_progress *p) {
  const sweep_progress *pr = ctx;
  if (!pr->tty) return;
  double el = bbvfl_now() - pr->t0;
  double eta = p->done ? el / p->done * (p->total - p->done) : 0;
  fprintf(stderr, "\r%*s\r[%d/%d runs] %.1f runs/s  ETA %.0fs  M=%d %s b=%d beta=%g seed %llu", 90, "", p->done,
          p->total, el > 0 ? p->done / el : 0.0, eta, p->M, bbvfl_mech_name(p->mech), p->b, p->beta,
          (unsigned long long)p->seed);
  fflush(stderr);
}

/* The flags: the grid's strings and counts, then the trainer's (train_common). */
typedef struct {
  train_common tc;
  const char *clients_s, *b_s, *beta_s, *out_dir;
  int seeds, as_json;
  unsigned long long seed0;
  double Ms[MAX_LIST], bs[MAX_LIST], betas[MAX_LIST];
  int nM, nb, nbeta;
} sweep_flags;

static size_t sweep_opts(sweep_flags *f, cli_opt *opts) {
  size_t no = 0;
  opts[no++] = (cli_opt){"clients", OPT_STR, &f->clients_s, "LIST", "numbers of clients (default 5,10)"};
  opts[no++] = (cli_opt){"b", OPT_STR, &f->b_s, "LIST", "PBM trials (default 2,4,8,16)"};
  opts[no++] = (cli_opt){"beta", OPT_STR, &f->beta_s, "LIST", "PBM bias (default 0.05,0.1,0.15,0.2)"};
  opts[no++] = (cli_opt){"seeds", OPT_INT, &f->seeds, "N", "runs per cell, seeds SEED..SEED+N-1; the median is reported (default 5)"};
  opts[no++] = (cli_opt){"seed", OPT_U64, &f->seed0, "N", "first seed (default 1)"};
  opts[no++] = (cli_opt){"out", OPT_STR, &f->out_dir, "DIR", "folder for sweep.csv and sweep.json (default runs/sweep)"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &f->as_json, NULL, "print sweep.json's summary on stdout instead of the table"};
  no += train_common_opts(&f->tc, opts + no);
  return no;
}

/* sweep.csv: one row per run. Returns the text (caller frees) or NULL when out of memory. */
static char *sweep_csv(const bbvfl_sweep_out *r, size_t *len) {
  size_t cap = 256 + (size_t)r->runs * 200, n = 0;
  char *csv = malloc(cap);
  if (!csv) return NULL;
  n += (size_t)snprintf(csv, cap,
                        "clients,mechanism,b,beta,seed,auroc,accuracy,f1,loss,epsilon_feature,epsilon_sample,"
                        "offchain_agg_s_per_epoch,wall_s\n");
  for (int c = 0; c < r->ncells; c++) {
    const bbvfl_sweep_cell *cl = &r->cells[c];
    for (int s = 0; s < cl->nruns && n < cap; s++) {
      const bbvfl_sweep_run *u = &cl->runs[s];
      n += (size_t)snprintf(csv + n, cap - n, "%d,%s,%d,%g,%llu,%.6f,%.6f,%.6f,%.6f,%.6g,%.6g,%.9f,%.4f\n", cl->M,
                            bbvfl_mech_name(cl->mech), cl->b, cl->beta, (unsigned long long)u->seed, u->auroc,
                            u->accuracy, u->f1, u->loss, cl->eps_party, cl->eps_person, u->agg_s_per_epoch, u->wall_s);
    }
  }
  *len = n < cap ? n : cap - 1;
  return csv;
}

/* One cell of sweep.json, with its runs and their per-epoch AUROC curves. */
static json_t *cell_json(const bbvfl_sweep_cell *cl) {
  json_t *runs = json_array();
  for (int s = 0; s < cl->nruns; s++) {
    const bbvfl_sweep_run *u = &cl->runs[s];
    json_t *curve = json_array();
    for (int e = 0; e < u->epochs; e++) json_array_append_new(curve, json_real(u->auroc_per_epoch[e]));
    json_array_append_new(runs, json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:o}", "seed", (json_int_t)u->seed, "auroc",
                                          u->auroc, "accuracy", u->accuracy, "f1", u->f1, "loss", u->loss,
                                          "offchain_agg_s_per_epoch", u->agg_s_per_epoch, "auroc_per_epoch", curve));
  }
  json_t *cell = json_object();
  json_object_set_new(cell, "clients", json_integer(cl->M));
  json_object_set_new(cell, "mechanism", json_string(bbvfl_mech_name(cl->mech)));
  if (cl->mech == BBVFL_MECH_PBM) {
    json_object_set_new(cell, "b", json_integer(cl->b));
    json_object_set_new(cell, "beta", json_real(cl->beta));
  }
  json_object_set_new(cell, "auroc_median", json_real(cl->auroc_median));
  json_object_set_new(cell, "accuracy_median", json_real(cl->accuracy_median));
  json_object_set_new(cell, "loss_median", json_real(cl->loss_median));
  /* as printed; per person (epsilon_sample, the label included) first, per party after */
  bbvfl_privacy_json_top(cell, &cl->pv);
  json_object_set_new(cell, "privacy", bbvfl_privacy_json(&cl->pv));
  json_object_set_new(cell, "runs", runs);
  return cell;
}

/* sweep.json: the run's settings and every cell. */
static json_t *sweep_json(const sweep_flags *f, const bbvfl_offchain_cfg *base, const bbvfl_sweep_out *r) {
  json_t *cells = json_array();
  for (int c = 0; c < r->ncells; c++) json_array_append_new(cells, cell_json(&r->cells[c]));
  json_t *top = json_object();
  json_object_set_new(top, "epochs", json_integer(base->epochs));
  json_object_set_new(top, "seeds", json_integer(f->seeds));
  json_object_set_new(top, "first_seed", json_integer((json_int_t)f->seed0));
  json_object_set_new(top, "delta", json_real(f->tc.delta));
  json_object_set_new(top, "batch", json_integer((json_int_t)base->B));
  json_object_set_new(top, "P", json_integer(base->P));
  json_object_set_new(top, "window", json_integer((json_int_t)base->window));
  json_object_set_new(top, "staleness", json_integer(base->staleness));
  json_object_set_new(top, "eval_rows_per_round", json_integer((json_int_t)base->eval_rows_per_round));
  json_object_set_new(top, "optimizer", json_string(f->tc.optimizer));
  json_object_set_new(top, "lr", json_real(base->opt.lr));
  json_object_set_new(top, "mean_run_wall_s", json_real(r->mean_run_wall_s));
  json_object_set_new(top, "cells", cells);
  return top;
}

/* --json: the summary without per-run curves, on stdout. */
static void print_json_summary(const sweep_flags *f, const bbvfl_offchain_cfg *base, json_t *cells) {
  json_t *sum = json_array();
  size_t i;
  json_t *c;
  json_array_foreach(cells, i, c) {
    json_t *cc = json_deep_copy(c);
    json_object_del(cc, "runs");
    json_array_append_new(sum, cc);
  }
  json_t *o = json_pack("{s:i, s:i, s:f, s:o}", "epochs", base->epochs, "seeds", f->seeds, "delta", f->tc.delta, "cells",
                        sum);
  char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(8));
  if (s) printf("%s\n", s);
  free(s);
  json_decref(o);
}

/* The b x beta table of one number of clients, NPQ above it; cells from cl (NPQ first). */
static void print_clients_table(const sweep_flags *f, const bbvfl_sweep_cell *cl) {
  printf("\nM = %d clients   NPQ (no noise): AUROC %.4f, epsilon inf\n", cl[0].M, cl[0].auroc_median);
  printf("  %-6s", "b\\beta");
  for (int j = 0; j < f->nbeta; j++) printf("  %-24g", f->betas[j]);
  printf("\n");
  size_t ci = 1;
  for (int ib = 0; ib < f->nb; ib++) {
    printf("  %-6d", (int)f->bs[ib]);
    for (int j = 0; j < f->nbeta; j++) {
      const bbvfl_sweep_cell *c = &cl[ci++];
      char cellbuf[64];
      if (!c->pv.reproducible && isfinite(c->eps_person))
        snprintf(cellbuf, sizeof cellbuf, "%.4f (%.3g / %.3g)", c->auroc_median, c->eps_person, c->eps_party);
      else
        snprintf(cellbuf, sizeof cellbuf, "%.4f (eps none)", c->auroc_median);
      printf("  %-24s", cellbuf);
    }
    printf("\n");
  }
}

/* The acceptance check of the paper's setting, when the grid holds b = 16, beta = 0.2. */
static void print_acceptance(const bbvfl_sweep_out *r) {
  for (int c0 = 0; c0 < r->ncells; c0 += r->cells_per_M) {
    double npq_auc = r->cells[c0].auroc_median;
    for (int c2 = 1; c2 < r->cells_per_M; c2++) {
      const bbvfl_sweep_cell *c = &r->cells[c0 + c2];
      if (c->b == 16 && fabs(c->beta - 0.2) < 1e-12) {
        double a = c->auroc_median;
        printf("\nM = %d: NPQ %.4f %s 0.99; PBM b=16 beta=0.2 %.4f %s NPQ - 0.01 = %.4f", c->M, npq_auc,
               npq_auc >= 0.99 ? ">=" : "<", a, a >= npq_auc - 0.01 ? ">=" : "<", npq_auc - 0.01);
      }
    }
  }
  printf("\n");
}

static void print_table(const sweep_flags *f, const bbvfl_offchain_cfg *base, const bbvfl_sweep_out *r, int wrote) {
  printf("median test AUROC after %d epochs over %d seeds, %s noise (epsilon: per person / per party, delta %g)\n",
         base->epochs, f->seeds, base->seeded_noise ? "REPRODUCIBLE" : "private", f->tc.delta);
  for (int c0 = 0; c0 < r->ncells; c0 += r->cells_per_M) print_clients_table(f, &r->cells[c0]);
  if (base->seeded_noise)
    printf("\neps: %s", BBVFL_PRIVACY_VOID);
  else
    printf("\n(eps a / b): a per person, features only (one person's whole row, every party; the label is not in it: "
           "without --label-epsilon it is unprotected and the per-person headline unbounded), b per party (one "
           "party's columns of a row), the smaller of RDP and PLD at delta %g (every level and method: \"privacy\" in "
           "the JSON)", f->tc.delta);
  printf("; %s.\n", strcmp(f->tc.privacy, "row") == 0 ? BBVFL_ACCT_SCOPE_ROW : "not end-to-end: " BBVFL_ACCT_SCOPE);
  print_acceptance(r);
  printf("\nmean wall time of one %d-epoch run: %.3f s\n", base->epochs, r->mean_run_wall_s);
  if (wrote) printf("wrote %s/sweep.csv and %s/sweep.json\n", f->out_dir, f->out_dir);
}

/* Writes sweep.csv then sweep.json into --out and prints the summary or the table. */
static int sweep_write_print(const sweep_flags *f, const bbvfl_offchain_cfg *base, const bbvfl_sweep_out *r,
                             bbvfl_err *err) {
  size_t csv_len = 0;
  char *csv = sweep_csv(r, &csv_len);
  json_t *top = sweep_json(f, base, r);
  char *js = top ? json_dumps(top, JSON_INDENT(1) | JSON_REAL_PRECISION(8)) : NULL;
  char path[4200];
  int wrc = csv ? 0 : bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  if (wrc == 0) {
    snprintf(path, sizeof path, "%s/sweep.csv", f->out_dir);
    wrc = bbvfl_write_file_atomic(path, csv, csv_len, 0644, err);
  }
  if (wrc == 0 && js) {
    snprintf(path, sizeof path, "%s/sweep.json", f->out_dir);
    wrc = bbvfl_write_file_atomic(path, js, strlen(js), 0644, err);
  }
  if (f->as_json) print_json_summary(f, base, json_object_get(top, "cells"));
  else print_table(f, base, r, wrc == 0);
  free(js);
  free(csv);
  json_decref(top);
  return wrc;
}

int cmd_sweep(int argc, char **argv) {
  sweep_flags f = {.clients_s = "5,10", .b_s = "2,4,8,16", .beta_s = "0.05,0.1,0.15,0.2", .out_dir = "runs/sweep",
                   .seeds = 5, .seed0 = 1};
  train_common_defaults(&f.tc);
  cli_opt opts[8 + TRAIN_COMMON_NOPTS];
  size_t no = sweep_opts(&f, opts);
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
  if (parse_list("clients", f.clients_s, f.Ms, &f.nM, &err) || parse_list("b", f.b_s, f.bs, &f.nb, &err) ||
      parse_list("beta", f.beta_s, f.betas, &f.nbeta, &err))
    return cli_report(&err);
  sweep_progress pr = {.tty = cli_isatty_err()};
  bbvfl_sweep_in in = {.clients = f.Ms, .nclients = f.nM, .b = f.bs, .nb = f.nb, .beta = f.betas, .nbeta = f.nbeta,
                       .seeds = f.seeds, .first_seed = f.seed0, .delta = f.tc.delta, .on_run = on_run, .ctx = &pr};
  bbvfl_offchain_cfg base;
  bbvfl_offchain_defaults(&base);
  if (bbvfl_sweep_check(&in, &err) != 0 || train_common_apply(&f.tc, &base, &err) != 0) return cli_report(&err);
  train_noise_warning(base.seeded_noise, "--reproducible-noise"); /* else: private noise, medians over seeds */
  bbvfl_dataset ds;
  if (train_common_load(&f.tc, &ds, &err) != 0) return cli_report(&err);
  if (bbvfl_mkdirs(f.out_dir, 0755, &err) != 0) {
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  bbvfl_sweep_out r;
  pr.t0 = bbvfl_now();
  int rc = bbvfl_sweep(&ds, &base, &in, &r, &err);
  bbvfl_dataset_free(&ds);
  if (pr.tty) fprintf(stderr, "\r%*s\r", 100, "");
  if (rc == 0) rc = sweep_write_print(&f, &base, &r, &err);
  bbvfl_sweep_free(&r);
  return rc != 0 ? cli_report(&err) : 0;
}
