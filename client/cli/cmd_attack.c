/* bbvfl attack: measures what a training run leaks (audit/attack.h): label inference from the
 * posted gradients, feature inversion of one client's releases, membership inference with shadow
 * models, each beside its chance level. One configuration from the train flags, or --sweep: the
 * table over NPQ, the PBM default and smaller betas, row mode, label DP and VFL-AFE at several
 * sigmas, written as attack.csv and attack.png (gnuplot) under --out. --session FILE: the same attacks on
 * that session's chain (audit/attack.h bbvfl_attack_chain), the attacker reading the chain alone. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/attack.h"
#include "cli/afe_flags.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/train_common.h"
#include "common/fsutil.h"
#include "eth/wallet.h"
#include "binding/session.h"

extern char **environ;

typedef struct {
  char name[48];
  bbvfl_attack_cfg a;
  bbvfl_attack_result r;      /* one run, or the mean over seeds */
  int nseeds;                 /* 0: one run (no interval) */
  bbvfl_attack_est inv, mia;  /* inversion gain and membership advantage over the seeds */
} attack_row;

static void print_header(void) {
  printf("%-26s %9s %9s %6s | %7s %7s %7s | %7s %7s | %7s %7s %7s\n", "configuration", "eps/party", "eps/person",
         "acc", "label", "chance", "RR", "inv", "+-95%", "MIA adv", "+-95%", "+-band");
}

/* membership advantage's chance band: 2 sd of TPR - FPR of a coin over the rows scored, for the
   mean over nseeds independent runs (each scoring as many rows) when nseeds > 1 */
static double mia_band(const bbvfl_attack_result *r, int nseeds) {
  double b = r->mia_in && r->mia_out ? 2 * sqrt(0.25 / (double)r->mia_in + 0.25 / (double)r->mia_out) : NAN;
  return nseeds > 1 ? b / sqrt((double)nseeds) : b;
}

static void print_row(const attack_row *w) {
  const bbvfl_attack_result *r = &w->r;
  printf("%-26s %9.3g %9.3g %6.3f | %7.3f %7.3f %7.3f | %7.3f %7.3f | %7.3f %7.3f %7.3f\n", w->name, r->epsilon,
         r->epsilon_person, r->test_accuracy, r->label_acc, r->label_chance, r->label_rr, r->inv.gain, w->inv.ci, r->mia.advantage,
         w->mia.ci, mia_band(r, w->nseeds));
  fflush(stdout);
}

static json_t *row_json(const attack_row *w) {
  const bbvfl_attack_result *r = &w->r;
  json_t *o = json_object();
  json_object_set_new(o, "configuration", json_string(w->name));
  json_object_set_new(o, "epsilon", train_json_num(r->epsilon));
  json_object_set_new(o, "epsilon_level", json_string("per_party"));
  /* the per-person headline the demo and the audit print (null: unbounded, labels unprotected) */
  json_object_set_new(o, "epsilon_person", train_json_num(r->epsilon_person));
  json_object_set_new(o, "test_accuracy", json_real(r->test_accuracy));
  json_object_set_new(o, "label_inference_accuracy", train_json_num(r->label_acc));
  json_object_set_new(o, "label_chance", train_json_num(r->label_chance));
  json_object_set_new(o, "label_rr_rate", train_json_num(r->label_rr));
  json_object_set_new(o, "inversion_mse", json_real(r->inv.mse));
  json_object_set_new(o, "inversion_mse_baseline", json_real(r->inv.mse_base));
  json_object_set_new(o, "inversion_gain", json_real(r->inv.gain));
  json_object_set_new(o, "membership_advantage", json_real(r->mia.advantage));
  json_object_set_new(o, "membership_accuracy", json_real(r->mia.accuracy));
  json_object_set_new(o, "membership_chance_band", train_json_num(mia_band(r, w->nseeds)));
  json_object_set_new(o, "seeds", json_integer(w->nseeds));
  json_object_set_new(o, "inversion_gain_ci95", train_json_num(w->inv.ci));
  json_object_set_new(o, "membership_advantage_ci95", train_json_num(w->mia.ci));
  return o;
}

/* attack.csv, attack.gp and attack.png under dir (gnuplot missing: the figure is skipped, said on stderr). */
static int write_outputs(const char *dir, const attack_row *rows, int n, bbvfl_err *err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/attack.csv", dir);
  FILE *f = fopen(path, "w");
  if (!f) return bbvfl_fail(err, BBVFL_E_IO, "cannot write %s: %s", path, strerror(errno));
  fprintf(f, "configuration,family,epsilon,test_accuracy,label_acc,label_chance,label_rr,inversion_mse,"
             "inversion_mse_baseline,inversion_gain,membership_advantage,membership_accuracy,membership_chance_band,"
             "inversion_gain_ci95,membership_advantage_ci95,seeds,epsilon_person\n");
  for (int i = 0; i < n; i++) {
    const bbvfl_attack_result *r = &rows[i].r;
    char fam[sizeof rows[i].name];
    memcpy(fam, rows[i].name, sizeof fam);
    char *sp = strchr(fam, ' ');
    if (sp) *sp = 0;
    fprintf(f, "%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%.6g\n", rows[i].name, fam,
            r->epsilon, r->test_accuracy, r->label_acc, r->label_chance, r->label_rr, r->inv.mse, r->inv.mse_base,
            r->inv.gain, r->mia.advantage, r->mia.accuracy, mia_band(r, rows[i].nseeds), rows[i].inv.ci,
            rows[i].mia.ci, rows[i].nseeds, r->epsilon_person);
  }
  if (fclose(f) != 0) return bbvfl_fail(err, BBVFL_E_IO, "cannot write %s", path);
  snprintf(path, sizeof path, "%s/attack.gp", dir);
  f = fopen(path, "w");
  if (!f) return bbvfl_fail(err, BBVFL_E_IO, "cannot write %s: %s", path, strerror(errno));
  fprintf(f,
          "set terminal pngcairo size 1100,420 noenhanced\nset output 'attack.png'\nset datafile separator ','\n"
          "set multiplot layout 1,2\nset logscale x\nset xrange [1:2e4]\nset xlabel 'epsilon (row level, one client; NPQ drawn at 1e4)'\n"
          "set key bottom right\nset grid\n"
          "e(x) = (x != x || x > 1e4) ? 1e4 : x\nci(x) = x == x ? x : 0\n"
          "set title 'inversion gain (below -0.5 not drawn)'\n"
          "set ylabel 'gain (chance 0)'\nset yrange [-0.5:1]\n"
          "plot for [fam in 'npq pbm row afe'] 'attack.csv' every ::1 using (strcol(2) eq fam ? e($3) : 1/0):10:(ci($14)) "
          "with yerrorlines title fam, 0 with lines dt 2 lc rgb 'black' title 'chance'\n"
          "set title 'membership advantage TPR - FPR (95%% CI)'\nset autoscale y\n"
          "set ylabel 'advantage (chance 0)'\n"
          "plot for [fam in 'npq pbm row afe'] 'attack.csv' every ::1 using (strcol(2) eq fam ? e($3) : 1/0):11:(ci($15)) "
          "with yerrorlines title fam, 0 with lines dt 2 lc rgb 'black' title 'chance'\nunset multiplot\n");
  if (fclose(f) != 0) return bbvfl_fail(err, BBVFL_E_IO, "cannot write %s", path);
  pid_t pid;
  char *const argv[] = {"gnuplot", "attack.gp", NULL};
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd) || chdir(dir) != 0) return bbvfl_fail(err, BBVFL_E_IO, "cannot enter %s", dir);
  int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
  int st = 0;
  if (rc == 0) waitpid(pid, &st, 0);
  if (chdir(cwd) != 0) return bbvfl_fail(err, BBVFL_E_IO, "cannot return to %s", cwd);
  if (rc != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fprintf(stderr, "bbvfl attack: no figure (gnuplot %s); the table is in %s/attack.csv\n",
            rc ? "not found: install gnuplot-nox" : "failed", dir);
  return 0;
}

/* --session: the attacks on the session's chain (audit/attack.h bbvfl_attack_chain). */
static int attack_session(const char *session, const char *rpc, const char *data, const char *victim_addr,
                          int victim, int shadows, double delta, int as_json) {
  bbvfl_err err = {0};
  static bbvfl_session s;
  if (bbvfl_session_load(session, &s, &err) != 0) {
    bbvfl_wrap(&err, "--session");
    return cli_report(&err);
  }
  bbvfl_attack_chain_cfg c;
  memset(&c, 0, sizeof c);
  c.rpc_url = rpc ? rpc : s.rpc_url;
  memcpy(c.contract, s.contract, 20);
  c.from_block = s.deploy_block;
  c.train = &s.train;
  c.victim_party = victim;
  c.shadows = shadows;
  c.delta = delta;
  if (!victim_addr) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--session needs --victim-address ADDR: the victim's address on chain (the client "
                                  "whose columns --victim names; report.json lists each client's)");
    return cli_report(&err);
  }
  if (bbvfl_addr_parse(victim_addr, c.victim_addr, &err) != 0) {
    bbvfl_wrap(&err, "--victim-address");
    return cli_report(&err);
  }
  const char *path = data ? data : s.data;
  if (!path[0]) {
    bbvfl_fail(&err, BBVFL_E_ARG, "the session file names no table: say --data CSV (rows like the victim's)");
    return cli_report(&err);
  }
  bbvfl_dataset ds;
  bbvfl_csv_opts co = {.label = s.label[0] ? s.label : NULL};
  if (bbvfl_csv_load(path, &co, &ds, &err) != 0) {
    bbvfl_wrap(&err, "--data %s", path);
    return cli_report(&err);
  }
  c.nclasses = ds.nclasses;
  bbvfl_attack_chain_result r;
  int rc = bbvfl_attack_chain(&ds, &c, &r, &err);
  bbvfl_dataset_free(&ds);
  if (rc != 0) return cli_report(&err);
  attack_row w;
  memset(&w, 0, sizeof w);
  snprintf(w.name, sizeof w.name, "chain %s%s", s.train.afe.on ? "afe " : "", bbvfl_mech_name(s.train.mech.kind));
  w.r = r.r;
  if (as_json) {
    json_t *o = json_object();
    json_t *arr = json_array();
    json_t *row = row_json(&w);
    json_object_set_new(row, "label_rows", json_integer((json_int_t)r.label_rows));
    json_object_set_new(row, "inversion_aux_rows", json_integer((json_int_t)r.inv_aux));
    json_object_set_new(row, "inversion_victim_rows", json_integer((json_int_t)r.inv_victims));
    json_object_set_new(row, "membership_in_rows", json_integer((json_int_t)r.mia_in));
    json_object_set_new(row, "membership_out_rows", json_integer((json_int_t)r.mia_out));
    json_array_append_new(arr, row);
    json_object_set_new(o, "source", json_string("chain"));
    json_object_set_new(o, "audit_verdict_fail", json_boolean(!r.audit_ok));
    json_object_set_new(o, "attacks", arr);
    char *t = json_dumps(o, JSON_INDENT(2));
    if (t) puts(t);
    free(t);
    json_decref(o);
  } else {
    printf("attacks on the chain of %s (read by the auditor%s), victim party %d; %zu training rows' labels read, "
           "inversion on %zu aux / %zu victim rows, membership on %zu in / %zu out rows, %d shadow models\n",
           session, r.audit_ok ? "" : "; the audit FAILED: figures from a tampered history", victim, r.label_rows,
           r.inv_aux, r.inv_victims, r.mia_in, r.mia_out, shadows);
    print_header();
    print_row(&w);
  }
  return 0;
}

/* Row w over seeds 1..nseeds (nseeds 0: its own seed once): each figure the mean over the seeds,
   with the 95% interval of the inversion gain's and the membership advantage's means. */
static int run_row(const bbvfl_dataset *ds, attack_row *w, int nseeds, bbvfl_err *err) {
  w->nseeds = nseeds;
  if (nseeds <= 0) {
    if (bbvfl_attack_offchain(ds, &w->a, &w->r, err) != 0) return -1;
    bbvfl_attack_estimate(&w->r.inv.gain, 1, &w->inv);
    bbvfl_attack_estimate(&w->r.mia.advantage, 1, &w->mia);
    return 0;
  }
  enum { NF = 10 };
  double f[NF][64];
  bbvfl_attack_result r;
  for (int s = 0; s < nseeds; s++) {
    bbvfl_attack_cfg a = w->a;
    a.cfg.seed = (uint64_t)s + 1;
    a.cfg.split_seed = 0;
    if (bbvfl_attack_offchain(ds, &a, &r, err) != 0) return -1;
    if (s == 0) w->r = r;
    double v[NF] = {r.epsilon,         r.test_accuracy,   r.label_acc, r.label_chance, r.inv.mse, r.inv.mse_base,
                    r.inv.gain,        r.mia.advantage,   r.mia.accuracy, r.label_rr};
    for (int k = 0; k < NF; k++) f[k][s] = v[k];
  }
  double *dst[NF] = {&w->r.epsilon, &w->r.test_accuracy, &w->r.label_acc,    &w->r.label_chance, &w->r.inv.mse,
                     &w->r.inv.mse_base, &w->r.inv.gain, &w->r.mia.advantage, &w->r.mia.accuracy, &w->r.label_rr};
  bbvfl_attack_est e;
  for (int k = 0; k < NF; k++) {
    bbvfl_attack_estimate(f[k], nseeds, &e);
    *dst[k] = e.mean;
  }
  bbvfl_attack_estimate(f[6], nseeds, &w->inv);
  bbvfl_attack_estimate(f[7], nseeds, &w->mia);
  return 0;
}

/* The attack table's configurations (--sweep) into rows (room for 16); returns how many. bench: the
   row-mode rows at DP-SGD noise 1, 2 and 4 (else one, at --dpsgd-noise). */
static int table_rows(const bbvfl_attack_cfg *base, const train_common *tc, int bench, attack_row *rows) {
  int n = 0;
  const double betas[] = {0.2, 0.1, 0.05}, sigmas[] = {0.5, 1, 2, 4};
  attack_row *w = &rows[n++];
  w->a = *base, w->a.cfg.mech.kind = BBVFL_MECH_NPQ, w->a.cfg.rowdp.on = 0, w->a.cfg.label_eps = 0;
  snprintf(w->name, sizeof w->name, "npq");
  for (int i = 0; i < 3; i++) {
    w = &rows[n++];
    w->a = *base, w->a.cfg.mech.kind = BBVFL_MECH_PBM, w->a.cfg.mech.beta = betas[i], w->a.cfg.rowdp.on = 0;
    w->a.cfg.label_eps = 0;
    snprintf(w->name, sizeof w->name, "pbm beta=%g", betas[i]);
  }
  /* row mode along epsilon: its releases' beta sets it (the DP-SGD noise adds little: README) */
  const double row_betas[] = {0.2, 0.05, 0.01};
  for (int i = 0; i < (bench ? 3 : 1); i++) {
    double rb = row_betas[i], z = tc->dpsgd_noise;
    w = &rows[n++];
    w->a = *base, w->a.cfg.mech.kind = BBVFL_MECH_PBM, w->a.cfg.mech.beta = rb, w->a.cfg.label_eps = 0;
    w->a.cfg.rowdp = (bbvfl_rowdp){1, tc->dpsgd_clip, z, tc->scale_eps, 0, 0};
    if (bench)
      snprintf(w->name, sizeof w->name, "row beta=%g noise=%g", rb, z);
    else
      snprintf(w->name, sizeof w->name, "row dpsgd noise=%g", z);
  }
  w = &rows[n++];
  w->a = *base, w->a.cfg.mech.kind = BBVFL_MECH_PBM, w->a.cfg.mech.beta = 0.2, w->a.cfg.rowdp.on = 0;
  w->a.cfg.label_eps = 1.0;
  snprintf(w->name, sizeof w->name, "pbm+labeldp label_eps=1");
  for (int i = 0; i < 4; i++) {
    w = &rows[n++];
    w->a = *base, w->a.cfg.mech.kind = BBVFL_MECH_GAUSSIAN, w->a.cfg.mech.clip = 1, w->a.cfg.mech.sigma = sigmas[i];
    w->a.cfg.rowdp.on = 0, w->a.cfg.label_eps = 0;
    w->a.cfg.afe.on = w->a.cfg.afe.rescale = w->a.cfg.afe.adjust = 1;
    snprintf(w->name, sizeof w->name, "afe sigma=%g", sigmas[i]);
  }
  return n;
}

/* --only: keeps the rows named (in table order); *n becomes how many. */
static int keep_only(const char *only, attack_row *rows, int *np, bbvfl_err *err) {
  int n = *np;
  int keep[16] = {0}, k = 0;
  const char *c = only;
  while (*c) {
    char *end;
    long v = strtol(c, &end, 10);
    if (end == c || v < 0 || v >= n || (*end && *end != ','))
      return bbvfl_fail(err, BBVFL_E_ARG, "--only '%s': comma-separated row indices 0..%d", only, n - 1);
    keep[v] = 1;
    c = *end ? end + 1 : end;
  }
  for (int i = 0; i < n; i++)
    if (keep[i]) rows[k++] = rows[i];
  *np = k;
  return 0;
}

/* --json: the rows as one object on stdout. */
static void print_rows_json(const attack_row *rows, int n) {
  json_t *arr = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(arr, row_json(&rows[i]));
  json_t *o = json_object();
  json_object_set_new(o, "attacks", arr);
  char *s = json_dumps(o, JSON_INDENT(2));
  if (s) puts(s);
  free(s);
  json_decref(o);
}

static int attack_main(int argc, char **argv, int bench) {
  train_common tc;
  train_common_defaults(&tc);
  tc.epochs = bench ? 30 : 10;
  afe_flags af;
  afe_flags_defaults(&af);
  int clients = 5, b = 16, shadows = 2, victim = 0, sweep = bench, as_json = 0, nseeds = bench ? 10 : 0;
  double beta = 0.2, clip = 1.0, sigma = 1.0, test_frac = bench ? 0.8 : 0.2;
  const char *mechanism = "pbm", *out_dir = bench ? "runs/bench-attacks" : "runs/attack", *session = NULL, *rpc = NULL, *victim_addr = NULL,
             *only = NULL;
  uint64_t seed = 1;
  cli_opt opts[20 + TRAIN_COMMON_NOPTS + AFE_FLAGS_NOPTS];
  size_t no = 0;
  opts[no++] = (cli_opt){"mechanism", OPT_STR, &mechanism, "NAME", "pbm (default), npq or gaussian"};
  opts[no++] = (cli_opt){"clients", OPT_INT, &clients, "M", "number of clients (default 5)"};
  opts[no++] = (cli_opt){"b", OPT_INT, &b, "N", "PBM trials per coordinate (default 16)"};
  opts[no++] = (cli_opt){"beta", OPT_DBL, &beta, "X", "PBM bias (default 0.2)"};
  opts[no++] = (cli_opt){"clip", OPT_DBL, &clip, "C", "gaussian: L2 clip norm per embedding row (default 1)"};
  opts[no++] = (cli_opt){"sigma", OPT_DBL, &sigma, "S", "gaussian: noise standard deviation (default 1)"};
  opts[no++] = (cli_opt){"seed", OPT_U64, &seed, "N", "the attacked run's seed (default 1; shadows use others)"};
  opts[no++] = (cli_opt){"shadows", OPT_INT, &shadows, "N", "shadow models of the membership attack (default 2)"};
  opts[no++] = (cli_opt){"test-frac", OPT_DBL, &test_frac, "F",
                         "share of the rows held out as test (non-members), 0..1 (default 0.2; larger: fewer training\n"
                         "rows, a more overfit model, a stronger membership attack)"};
  opts[no++] = (cli_opt){"victim", OPT_INT, &victim, "M", "the client whose columns are inverted (default 0)"};
  opts[no++] = (cli_opt){"sweep", OPT_FLAG, &sweep, NULL,
                         "the table: npq, pbm beta 0.2/0.1/0.05, row mode, pbm with label DP, afe sigma 0.5/1/2/4"};
  opts[no++] = (cli_opt){"out", OPT_STR, &out_dir, "DIR", "--sweep: folder of attack.csv and attack.png (default runs/attack)"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &as_json, NULL, "one JSON object on stdout"};
  opts[no++] = (cli_opt){"only", OPT_STR, &only, "LIST",
                         "--sweep: run only these rows of the table, 0-based indices separated by commas (default: all)"};
  opts[no++] = (cli_opt){"seeds", OPT_INT, &nseeds, "N",
                         bench ? "seeds 1..N per configuration, each figure the mean, with 95% intervals (default 10)"
                               : "seeds 1..N per configuration, each figure the mean, with 95% intervals (default 0:\n"
                                 "--seed once)"};
  opts[no++] = (cli_opt){"session", OPT_STR, &session, "FILE",
                         "attack that session's chain (the file bbvfl deploy/demo wrote) instead of a run off chain"};
  opts[no++] = (cli_opt){"rpc", OPT_STR, &rpc, "URL", "--session: the chain's JSON-RPC endpoint (default: the file's)"};
  opts[no++] = (cli_opt){"victim-address", OPT_STR, &victim_addr, "ADDR",
                         "--session: the victim client's address (its columns: --victim's block of the partition)"};
  no += train_common_opts(&tc, opts + no);
  no += afe_flags_opts(&af, opts + no);
  cli_spec spec = {bench ? "bbvfl bench attacks" : "bbvfl attack", "measure a run's leakage: label inference, feature inversion, membership inference",
                   "[OPTIONS]",
                   "Trains off chain (the train flags; 10 epochs by default) and attacks what an observer of the\n"
                   "chain would see: the posted gradients with the head's parameters (label inference, audit's\n"
                   "leak), the victim client's releases (a ridge decoder fitted on the test rows' releases and\n"
                   "columns, applied to the training rows' releases, a release beyond every test row's brought\n"
                   "back to their median distance, outputs clamped to their range; gain = 1 - MSE / MSE of the\n"
                   "column means), and the final model's scores (a loss threshold learnt on shadow runs over\n"
                   "other splits; advantage = TPR - FPR). Chance: the majority class, gain 0, advantage 0.\n"
                   "--session FILE --victim-address ADDR [--victim M] [--data CSV]: the same attacks on that\n"
                   "session's chain, read by the auditor (the victim's submitted integers, the sums, the posted\n"
                   "gradients and heads); the table (--data, default the file's) scores them.",
                   opts, no};
  int cli_st;
  if (bench)
    spec.details = "The attack table (bbvfl attack --sweep) with the membership attack given a chance: an\n"
                "overfit target (30 epochs, learning rate 0.01, 80% of the rows held out: --test-frac 0.8),\n"
                "each figure the mean over seeds 1..N (--seeds, default 10), the inversion gain and the\n"
                "membership advantage with the 95% interval of their mean (Student's t over the seeds).\n"
                "Configurations: npq, pbm beta 0.2/0.1/0.05, row mode at beta 0.2/0.05/0.01 (DP-SGD noise\n"
                "--dpsgd-noise, default 2), pbm with label DP, afe sigma 0.5/1/2/4. Chance: label inference\n"
                "the majority class, inversion gain 0, membership advantage 0 (+-band: 2 sd of a coin's\n"
                "advantage, for the mean over the seeds). Writes attack.csv and attack.png under --out.";
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  if (bench && !(tc.lr > 0)) tc.lr = 0.01;
  if (nseeds < 0 || nseeds > 64) {
    bbvfl_err e = {0};
    bbvfl_fail(&e, BBVFL_E_ARG, "--seeds %d: 0..64", nseeds);
    return cli_report(&e);
  }
  if (session) return attack_session(session, rpc, tc.data, victim_addr, victim, shadows, tc.delta, as_json);
  if (rpc || victim_addr) {
    bbvfl_err e = {0};
    bbvfl_fail(&e, BBVFL_E_ARG, "--rpc and --victim-address go with --session");
    return cli_report(&e);
  }
  bbvfl_err err = {0};
  bbvfl_attack_cfg base;
  bbvfl_attack_defaults(&base);
  base.cfg.M = clients;
  base.cfg.mech.b = b;
  base.cfg.mech.beta = beta;
  base.cfg.mech.clip = clip;
  base.cfg.mech.sigma = sigma;
  base.cfg.seed = seed;
  base.cfg.seeded_noise = 1;
  base.shadows = shadows;
  base.victim = victim;
  base.delta = tc.delta;
  if (bbvfl_mech_parse(mechanism, &base.cfg.mech.kind) != 0) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--mechanism: '%s' is not npq, pbm or gaussian", mechanism);
    return cli_report(&err);
  }
  if (train_common_apply(&tc, &base.cfg, &err) != 0 || afe_flags_apply(&af, &base.cfg.afe, &base.cfg.mech.clip, &err) != 0)
    return cli_report(&err);
  if (bbvfl_mech_check(&base.cfg.mech, &err) != 0) return cli_report(&err);
  if (!(test_frac > 0 && test_frac < 1)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--test-frac %g: must be in (0, 1)", test_frac);
    return cli_report(&err);
  }
  base.cfg.test_frac = test_frac;
  bbvfl_dataset ds;
  if (train_common_load(&tc, &ds, &err) != 0) return cli_report(&err);
  attack_row rows[16];
  int n = 0;
  if (!sweep) {
    rows[0].a = base;
    snprintf(rows[0].name, sizeof rows[0].name, "%s%s", base.cfg.afe.on ? "afe " : "", bbvfl_mech_name(base.cfg.mech.kind));
    n = 1;
  } else {
    n = table_rows(&base, &tc, bench, rows);
  }
  if (only && keep_only(only, rows, &n, &err) != 0) {
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  if (!as_json) {
    printf("attacks on %s (%zu rows), %d clients, %d epochs, %d shadow models; victim client %d\n",
           tc.data ? tc.data : "the bundled Breast Cancer table", ds.n, base.cfg.M, base.cfg.epochs, shadows, victim);
    print_header();
  }
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    rc = run_row(&ds, &rows[i], nseeds, &err);
    if (rc == 0 && !as_json) print_row(&rows[i]);
    if (rc != 0) bbvfl_wrap(&err, "%s", rows[i].name);
  }
  if (rc == 0 && sweep && (bbvfl_mkdirs(out_dir, 0755, &err) != 0 || write_outputs(out_dir, rows, n, &err) != 0)) rc = -1;
  if (rc == 0 && as_json) {
    print_rows_json(rows, n);
  } else if (rc == 0 && !as_json) {
    printf("label: inference accuracy over the last epoch's training rows (chance: the majority class; RR: randomized\n"
           "response's rate with label DP); inv: inversion gain (chance 0); MIA adv: TPR - FPR (chance 0, +-band: 2 sd\n"
           "of a coin's advantage over the rows scored).\n");
    if (sweep) printf("written: %s/attack.csv, %s/attack.png\n", out_dir, out_dir);
  }
  bbvfl_dataset_free(&ds);
  return rc == 0 ? 0 : cli_report(&err);
}

int cmd_attack(int argc, char **argv) { return attack_main(argc, argv, 0); }
int cmd_bench_attacks(int argc, char **argv) { return attack_main(argc, argv, 1); }
