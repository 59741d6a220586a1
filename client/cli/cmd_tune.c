/* bbvfl tune: the best row-mode setting at a target epsilon (off-chain); flags and printing only,
 * the search and the measurement are offchain/tune.h.
 *
 * The target is per person by default (one person's whole row across all the parties: the
 * relation row_sample), per party with --level party (one party's columns: row_feature). The
 * default design is the frozen DP-PCA encoder (each row released once: the best design measured,
 * docs/PRIVACY.md), --encoder dpsgd the DP-SGD one. Every run draws its noise privately (the OS
 * random source); the seeds fix the splits and the initialisation only. The chosen setting's
 * median test AUROC over --splits splits is printed with the ceiling any classifier obeys at the
 * per-person epsilon (bbvfl_auroc_ceiling), and the demo command that runs it on chain. The
 * tuning itself is not private (it looks at the rows many times): the output says so. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/train_common.h"
#include "common/fsutil.h"
#include "offchain/tune.h"

static void on_cand(void *ctx, const bbvfl_tune_cand *c, double val) {
  (void)ctx;
  if (c->encoder)
    fprintf(stderr,
            "tune: P %d b %d beta %.5f scale-epsilon %g pca-noise %g epochs %d lr %g: validation AUROC %.4f\n", c->P,
            c->b, c->beta, c->scale_eps, c->pca_noise, c->epochs, c->lr, val);
  else
    fprintf(stderr, "tune: epochs %2d P %d noise %g %-6s beta %.5f: validation AUROC %.4f\n", c->epochs, c->P,
            c->noise, c->masked ? "masked" : "local", c->beta, val);
}

static json_t *config_json(const bbvfl_tune_cand *w) {
  json_t *c = json_pack("{s:s, s:i, s:i, s:i, s:f, s:f, s:f}", "encoder", w->encoder ? "pca" : "dpsgd", "epochs",
                        w->epochs, "P", w->P, "b", w->b, "beta", w->beta, "lr", w->lr, "scale_epsilon", w->scale_eps);
  if (!c) return NULL;
  if (w->encoder) {
    json_object_set_new(c, "pca_noise", json_real(w->pca_noise));
  } else {
    json_object_set_new(c, "dpsgd_noise", json_real(w->noise));
    json_object_set_new(c, "masked", json_boolean(w->masked));
  }
  return c;
}

/* The flags. */
typedef struct {
  train_common tc;
  double target;
  int clients, splits, tune_seeds, as_json;
  unsigned long long split_seed;
  const char *out_dir, *noise_s, *level_s, *grid_s;
  int level, grid;   /* BBVFL_TUNE_PERSON/PARTY, BBVFL_TUNE_GRID_* from level_s, grid_s */
  double noise[8];   /* from noise_s */
  int nnoise;
} tune_flags;

static size_t tune_opts(tune_flags *f, cli_opt *opts) {
  size_t no = 0;
  opts[no++] = (cli_opt){"target-epsilon", OPT_DBL, &f->target, "E",
                         "end-to-end epsilon to calibrate to, at --level (required)"};
  opts[no++] = (cli_opt){"level", OPT_STR, &f->level_s, "L",
                         "person (default: one person's whole row across all the parties) or party (one\n"
                         "party's columns of one row)"};
  opts[no++] = (cli_opt){"clients", OPT_INT, &f->clients, "M", "number of clients (default 5)"};
  opts[no++] = (cli_opt){"splits", OPT_INT, &f->splits, "N",
                         "train/test splits the setting is measured on, split seeds S..S+N-1 (default 5)"};
  opts[no++] = (cli_opt){"split-seed", OPT_U64, &f->split_seed, "S", "the first split seed (default 1)"};
  opts[no++] = (cli_opt){"tune-seeds", OPT_INT, &f->tune_seeds, "N",
                         "runs per candidate and split while selecting (default 3)"};
  opts[no++] = (cli_opt){"grid", OPT_STR, &f->grid_s, "G",
                         "default, wide (several times the runs) or quick (two candidates, for tests)"};
  opts[no++] = (cli_opt){"out", OPT_STR, &f->out_dir, "DIR", "folder for tune.json (default runs/tune)"};
  opts[no++] = (cli_opt){"noise", OPT_STR, &f->noise_s, "LIST",
                         "--encoder dpsgd: DP-SGD noise multipliers to try (default 2,4,8,16)"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &f->as_json, NULL, "print tune.json instead of the table"};
  no += train_common_opts(&f->tc, opts + no);
  return no;
}

/* --target-epsilon, --level, --grid, the counts and --noise; fills f->level, f->grid, f->noise. */
static int check_flags(tune_flags *f, bbvfl_err *err) {
  if (!(f->target > 0) || !isfinite(f->target))
    return bbvfl_fail(err, BBVFL_E_ARG, "--target-epsilon E is required and must be > 0");
  if (strcmp(f->level_s, "person") == 0) f->level = BBVFL_TUNE_PERSON;
  else if (strcmp(f->level_s, "party") == 0) f->level = BBVFL_TUNE_PARTY;
  else return bbvfl_fail(err, BBVFL_E_ARG, "--level must be person or party, got '%s'", f->level_s);
  if (strcmp(f->grid_s, "default") == 0) f->grid = BBVFL_TUNE_GRID_DEFAULT;
  else if (strcmp(f->grid_s, "wide") == 0) f->grid = BBVFL_TUNE_GRID_WIDE;
  else if (strcmp(f->grid_s, "quick") == 0) f->grid = BBVFL_TUNE_GRID_QUICK;
  else return bbvfl_fail(err, BBVFL_E_ARG, "--grid must be default, wide or quick, got '%s'", f->grid_s);
  if (f->clients < 1 || f->clients > 64 || f->splits < 1 || f->splits > BBVFL_TUNE_MAX_SPLITS || f->tune_seeds < 1 ||
      f->tune_seeds > 64 || f->split_seed < 1 || f->split_seed > 1000000000ULL)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "--clients must be in 1..64, --splits in 1..%d, --tune-seeds in 1..64, --split-seed in 1..1e9",
                      BBVFL_TUNE_MAX_SPLITS);
  return 0;
}

static int parse_noise(tune_flags *f, bbvfl_err *err) {
  f->nnoise = 0;
  for (const char *s = f->noise_s; *s && f->nnoise < 8;) {
    char *end;
    double z = strtod(s, &end);
    if (end == s || !(z >= 0.1 && z <= 1000) || (*end && *end != ','))
      return bbvfl_fail(err, BBVFL_E_ARG, "--noise '%s': expected up to 8 multipliers in [0.1, 1000] like 2,4",
                        f->noise_s);
    f->noise[f->nnoise++] = z;
    s = *end ? end + 1 : end;
  }
  return 0;
}

/* The demo command that runs the winner w on chain, into cmd. */
static void demo_cmd(const tune_flags *f, const bbvfl_offchain_cfg *base, const bbvfl_tune_cand *w, char *cmd,
                     size_t cap) {
  if (w->encoder)
    snprintf(cmd, cap,
             "bbvfl demo --privacy row --encoder pca --clients %d --epochs %d --P %d --b %d --beta %.6g "
             "--scale-epsilon %g --pca-noise %g --lr %g",
             f->clients, w->epochs, w->P, w->b, w->beta, w->scale_eps, w->pca_noise, w->lr);
  else
    snprintf(cmd, cap,
             "bbvfl demo --privacy row --clients %d --epochs %d --P %d --b %d --beta %.6g --dpsgd-noise %g "
             "--dpsgd-clip %g --scale-epsilon %g --lr %g%s",
             f->clients, w->epochs, w->P, w->b, w->beta, w->noise, base->rowdp.clip, w->scale_eps, w->lr,
             w->masked ? " --masked" : "");
}

/* tune.json. New reference (NULL when out of memory). */
static json_t *tune_json(const tune_flags *f, const bbvfl_tune_out *r, const char *cmd) {
  const int level = f->level;
  const double eps_level = level == BBVFL_TUNE_PERSON ? r->eps_person : r->eps_party;
  json_t *per = json_array(), *seeds = json_array();
  for (int s = 0; per && seeds && s < r->nsplits; s++) {
    json_array_append_new(per, json_real(r->auroc[s]));
    json_array_append_new(seeds, json_integer((json_int_t)r->split_seed[s]));
  }
  json_t *o = json_pack(
      "{s:s, s:f, s:f, s:f, s:f, s:o*, s:f, s:o*, s:f, s:f, s:f, s:o*, s:i, s:s, s:o*, s:s, s:s}", "level",
      level == BBVFL_TUNE_PERSON ? "person" : "party", "epsilon", eps_level, "target_epsilon", f->target, "delta",
      f->tc.delta, "auroc_median", r->auroc_median, "auroc_per_split", per, "ceiling", r->ceiling, "config",
      config_json(&r->best), "epsilon_person", r->eps_person, "epsilon_party", r->eps_party, "validation_auroc",
      r->val_auroc, "split_seeds", seeds, "clients", f->clients, "noise", "private (OS random source)", "privacy",
      bbvfl_privacy_json(&r->pv), "demo", cmd, "note",
      "the tuning looked at the rows many times and is not itself private; a row that is a test row of one "
      "split is a training or validation row of another");
  if (o) {
    json_object_set_new(o, "ceiling_formula",
                        json_string("(1 - delta)(e^eps + delta)/(1 + e^eps) + delta at the per-person epsilon: "
                                    "e^eps/(1 + e^eps), delta adding at most 2 delta"));
    json_object_set_new(o, "candidates", json_integer(r->candidates));
    json_object_set_new(o, "candidates_reachable", json_integer(r->reachable));
  }
  return o;
}

static void print_table(const tune_flags *f, const bbvfl_tune_out *r, const char *cmd, const char *path) {
  const bbvfl_tune_cand *w = &r->best;
  const char *lv = f->level == BBVFL_TUNE_PERSON ? "per person, features (one person's whole row across all the parties; its label is covered only by --label-epsilon)"
                                                 : "per party (one party's columns of one row)";
  printf("best at epsilon %g %s, delta %g:\n", f->target, lv, f->tc.delta);
  if (w->encoder)
    printf("  DP-PCA encoder, each row released once: P %d, b %d, beta %.6g, scale epsilon %g per party, DP-PCA "
           "noise %g, head epochs %d, lr %g, local\n",
           w->P, w->b, w->beta, w->scale_eps, w->pca_noise, w->epochs, w->lr);
  else
    printf("  DP-SGD: epochs %d, P %d, b %d, beta %.6g, DP-SGD noise %g, lr %g, %s\n", w->epochs, w->P, w->b, w->beta,
           w->noise, w->lr, w->masked ? "masked" : "local");
  printf("  epsilon per person %.4g (%d parties); per party %.4g%s (delta %g, end to end)\n", r->eps_person, f->clients,
         r->eps_party, w->masked ? " (masked, against one participant)" : "", f->tc.delta);
  printf("  test AUROC %.4f (median over %d splits, split seeds %llu..%llu, private noise):", r->auroc_median,
         r->nsplits, f->split_seed, f->split_seed + (unsigned long long)r->nsplits - 1);
  for (int s = 0; s < r->nsplits; s++) printf(" %.4f", r->auroc[s]);
  printf("\n");
  printf("  ceiling %.4f: no classifier exceeds e^eps/(1+e^eps) at the per-person epsilon %.4g (delta adds at "
         "most %.2g)\n",
         r->ceiling, r->eps_person, 2 * f->tc.delta);
  printf("  validation AUROC %.4f (median over the splits' held-out training rows; %d of %d candidates reach the "
         "target)\n",
         r->val_auroc, r->reachable, r->candidates);
  printf("  on chain: %s\n", cmd);
  printf("  the tuning itself is not private: it looked at the rows many times.\n");
  printf("wrote %s\n", path);
}

/* Writes tune.json into --out and prints it (--json) or the table. */
static int tune_write_print(const tune_flags *f, const bbvfl_offchain_cfg *base, const bbvfl_tune_out *r,
                            bbvfl_err *err) {
  char cmd[512];
  demo_cmd(f, base, &r->best, cmd, sizeof cmd);
  json_t *o = tune_json(f, r, cmd);
  char path[1100];
  snprintf(path, sizeof path, "%s/tune.json", f->out_dir);
  char *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
  int wr = text && bbvfl_mkdirs(f->out_dir, 0755, err) == 0
               ? bbvfl_write_file_atomic(path, text, strlen(text), 0644, err)
               : -1;
  if (f->as_json && wr == 0) printf("%s\n", text);
  free(text);
  json_decref(o);
  if (wr < 0) {
    if (!err->code) bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    return -1;
  }
  if (!f->as_json) print_table(f, r, cmd, path);
  return 0;
}

int cmd_tune(int argc, char **argv) {
  tune_flags f = {.target = NAN, .clients = 5, .splits = 5, .tune_seeds = 3, .split_seed = 1, .out_dir = "runs/tune",
                  .noise_s = "2,4,8,16", .level_s = "person", .grid_s = "default"};
  train_common_defaults(&f.tc);
  f.tc.encoder = "pca"; /* tune's default design: each row released once */
  cli_opt opts[11 + TRAIN_COMMON_NOPTS];
  size_t no = tune_opts(&f, opts);
  cli_spec spec = {
      "bbvfl tune", "the best row-mode setting at a target epsilon (off-chain)", "--target-epsilon E [OPTIONS]",
      "The target is the end-to-end epsilon of one person's whole row across all the parties (per\n"
      "person; --level party: one party's columns), delta --delta (default 1e-5). The default design\n"
      "is the frozen DP-PCA encoder, each row released once (--encoder pca; the default here): it\n"
      "searches P 1 x b {1,2} x --scale-epsilon {0.2,0.35,0.5,0.8,1.2} x --pca-noise {8,16,32}, head\n"
      "epochs 10 (--grid wide: P, b, epochs and --lr too), beta calibrated per candidate to the target.\n"
      "--encoder dpsgd searches epochs {3,5,10} x P {2,4} x DP-SGD noise (--noise) x masked {no,yes}.\n"
      "A candidate's score is its median validation AUROC on rows held out of the training rows of\n"
      "each split; the winner is then trained on each of --splits splits and its median test AUROC is\n"
      "printed beside the ceiling e^eps/(1+e^eps) that no classifier exceeds at that per-person\n"
      "epsilon, with the demo command that runs it on chain. Every run draws its noise privately\n"
      "(the OS random source): the seeds fix the splits and the initialisation only, so the figures\n"
      "vary from run to run. --privacy is always row here. The tuning itself is not private.",
      opts, no};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (check_flags(&f, &err) != 0) return cli_report(&err);
  f.tc.privacy = "row";
  bbvfl_offchain_cfg base;
  bbvfl_offchain_defaults(&base);
  if (train_common_apply(&f.tc, &base, &err) != 0) return cli_report(&err);
  base.M = f.clients;
  base.mech.kind = BBVFL_MECH_PBM;
  base.mech.b = 16;
  if (isnan(f.tc.lr)) base.opt.lr = 0.01; /* not given: the step the head (and DP-SGD) wants here */
  if (parse_noise(&f, &err) != 0) return cli_report(&err);
  bbvfl_dataset ds;
  if (train_common_load(&f.tc, &ds, &err) != 0) return cli_report(&err);
  bbvfl_tune_in in = {.target = f.target,
                      .level = f.level,
                      .delta = f.tc.delta,
                      .grid = f.grid,
                      .splits = f.splits,
                      .first_split = f.split_seed,
                      .tune_seeds = f.tune_seeds,
                      .noise = f.noise,
                      .nnoise = f.nnoise,
                      .lr_given = !isnan(f.tc.lr),
                      .on_cand = f.as_json ? NULL : on_cand};
  bbvfl_tune_out *r = malloc(sizeof *r);
  if (!r) {
    bbvfl_dataset_free(&ds);
    bbvfl_fail(&err, BBVFL_E_NOMEM, "out of memory");
    return cli_report(&err);
  }
  int rc = bbvfl_tune(&ds, &base, &in, r, &err);
  bbvfl_dataset_free(&ds);
  if (rc == 0) rc = tune_write_print(&f, &base, r, &err);
  free(r);
  return rc != 0 ? cli_report(&err) : 0;
}
