/* bbvfl tune: the best row-mode setting at a target epsilon (off-chain).
 *
 * For every candidate of a small grid (epochs x P x DP-SGD noise x masked), beta is calibrated so
 * that the end-to-end row-level epsilon of one party equals the target (dp/privacy.h,
 * bbvfl_privacy_solve_beta; masked: the masked bound against one participant); candidates whose
 * DP-SGD and scaling terms alone exceed the target are skipped. Each remaining candidate trains on
 * the training rows of a fixed split only (an inner split holds out validation rows) for a few
 * seeds; the best median validation AUROC wins. The winner then trains on the whole training set
 * with 5 (--seeds) seeds on the same split and its median test AUROC is reported, with the demo
 * command that runs it on chain. The tuning itself is not private (it looks at the rows many
 * times): the output says so. */
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
#include "vfl/offchain.h"


typedef struct {
  int epochs, P, masked, b;
  double noise, beta, val_auroc;
  int ok;
  double scale_eps, pca_noise; /* per candidate (the encoder grid searches them) */
} cand;

/* The training rows of the split (seed split_seed) as a dataset of their own (x and y copied;
   names not carried: training does not need them). */
static int train_rows_only(const bbvfl_dataset *ds, double test_frac, uint64_t split_seed, bbvfl_dataset *out,
                           bbvfl_err *err) {
  size_t *tr = NULL, *te = NULL, ntr = 0, nte = 0;
  if (bbvfl_split(ds->n, test_frac, split_seed, &tr, &ntr, &te, &nte, err) != 0) return -1;
  memset(out, 0, sizeof *out);
  out->n = ntr;
  out->d = ds->d;
  out->nclasses = ds->nclasses;
  out->x = malloc(ntr * ds->d * sizeof *out->x);
  out->y = malloc(ntr * sizeof *out->y);
  if (!out->x || !out->y) {
    free(out->x);
    free(out->y);
    free(tr);
    free(te);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < ntr; i++) {
    memcpy(out->x + i * ds->d, ds->x + tr[i] * ds->d, ds->d * sizeof *out->x);
    out->y[i] = ds->y[tr[i]];
  }
  free(tr);
  free(te);
  return 0;
}

/* The training configuration of candidate c with the given seed. */
static bbvfl_offchain_cfg cand_cfg(const bbvfl_offchain_cfg *base, const cand *c, uint64_t seed) {
  bbvfl_offchain_cfg cfg = *base;
  cfg.epochs = c->epochs;
  cfg.P = c->P;
  cfg.mech.beta = c->beta;
  cfg.mech.b = c->b;
  cfg.rowdp.noise = c->noise;
  cfg.rowdp.scale_eps = c->scale_eps;
  cfg.rowdp.pca_noise = c->pca_noise;
  cfg.seed = seed;
  return cfg;
}

static int run_auroc(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *c, double *auroc, bbvfl_err *err) {
  bbvfl_offchain_result res;
  if (bbvfl_offchain_train(ds, c, &res, err) != 0) return -1;
  *auroc = res.per_epoch[res.epochs - 1].auroc;
  bbvfl_offchain_result_free(&res);
  return 0;
}

int cmd_tune(int argc, char **argv) {
  train_common tc;
  train_common_defaults(&tc);
  double target = NAN;
  int clients = 5, seeds = 5, tune_seeds = 3, as_json = 0;
  unsigned long long split_seed = 1;
  const char *out_dir = "runs/tune", *noise_s = "2,4,8,16";
  cli_opt opts[9 + TRAIN_COMMON_NOPTS];
  size_t no = 0;
  opts[no++] = (cli_opt){"target-epsilon", OPT_DBL, &target, "E",
                         "end-to-end row-level epsilon of one party to calibrate to (required)"};
  opts[no++] = (cli_opt){"clients", OPT_INT, &clients, "M", "number of clients (default 5)"};
  opts[no++] = (cli_opt){"seeds", OPT_INT, &seeds, "N", "seeds of the final test runs, 1..N (default 5)"};
  opts[no++] = (cli_opt){"tune-seeds", OPT_INT, &tune_seeds, "N", "seeds per candidate while tuning (default 3)"};
  opts[no++] = (cli_opt){"split-seed", OPT_U64, &split_seed, "N", "the train/test split used throughout (default 1)"};
  opts[no++] = (cli_opt){"out", OPT_STR, &out_dir, "DIR", "folder for tune.json (default runs/tune)"};
  opts[no++] = (cli_opt){"noise", OPT_STR, &noise_s, "LIST", "DP-SGD noise multipliers to try (default 2,4,8,16)"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &as_json, NULL, "print tune.json instead of the table"};
  no += train_common_opts(&tc, opts + no);
  cli_spec spec = {"bbvfl tune", "the best row-mode setting at a target epsilon (off-chain)", "--target-epsilon E [OPTIONS]",
                   "Searches epochs {3,5,10} x P {2,4} x DP-SGD noise (--noise) x masked {no,yes}, with beta\n"
                   "calibrated per candidate to the target (end-to-end row level, one party; masked: against\n"
                   "one participant), for the best median validation AUROC on held-out training rows; then\n"
                   "reports the winner's median test AUROC over --seeds seeds and the demo command that runs it\n"
                   "on chain. With --encoder pca (the frozen DP-PCA encoder, each row released once) it\n"
                   "searches b {1,2,4,8} x --scale-epsilon {0.1,0.25,0.5,1,2} x P {1,2} x --pca-noise {2,4,8,16} in\n"
                   "local "
                   "mode, the head trained --epochs (default 10) epochs on the released sums. --privacy is\n"
                   "always row here. The tuning itself is not private.",
                   opts, no};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (!(target > 0) || !isfinite(target)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--target-epsilon E is required and must be > 0");
    return cli_report(&err);
  }
  if (clients < 1 || clients > 64 || seeds < 1 || seeds > 64 || tune_seeds < 1 || tune_seeds > 64) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--clients must be in 1..64 and --seeds, --tune-seeds in 1..64");
    return cli_report(&err);
  }
  tc.privacy = "row";
  bbvfl_offchain_cfg base;
  bbvfl_offchain_defaults(&base);
  if (train_common_apply(&tc, &base, &err) != 0) return cli_report(&err);
  base.M = clients;
  base.mech.kind = BBVFL_MECH_PBM;
  base.mech.b = 16;
  if (isnan(tc.lr)) base.opt.lr = 0.01; /* not given: DP-SGD wants a larger step than the paper's default */
  base.split_seed = split_seed;
  bbvfl_dataset ds, dtr;
  if (train_common_load(&tc, &ds, &err) != 0) return cli_report(&err);
  if (train_rows_only(&ds, base.test_frac, split_seed, &dtr, &err) != 0) {
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  const int enc = strcmp(tc.encoder, "pca") == 0;
  if (enc && tc.epochs == 30) base.epochs = 10; /* the head's epochs on the released sums (30: the flag's default) */
  static const int EP[] = {3, 5, 10}, PP[] = {2, 4};
  double NZ[8];
  int nnz = 0;
  for (const char *s = noise_s; *s && nnz < 8;) {
    char *end;
    double z = strtod(s, &end);
    if (end == s || !(z >= 0.1 && z <= 1000) || (*end && *end != ',')) {
      bbvfl_dataset_free(&ds);
      bbvfl_dataset_free(&dtr);
      bbvfl_fail(&err, BBVFL_E_ARG, "--noise '%s': expected up to 8 multipliers in [0.1, 1000] like 2,4", noise_s);
      return cli_report(&err);
    }
    NZ[nnz++] = z;
    s = *end ? end + 1 : end;
  }
  cand cs[3 * 2 * 8 * 2 + 160];
  int nc = 0, best = -1, rc = 0;
  if (enc) {
    static const int EB[] = {1, 2, 4, 8}, EPP[] = {1, 2};
    static const double ES[] = {0.1, 0.25, 0.5, 1, 2}, EZ[] = {2, 4, 8, 16};
    for (int b = 0; b < 4; b++)
      for (int se = 0; se < 5; se++)
        for (int pp = 0; pp < 2; pp++)
          for (int z = 0; z < 4; z++)
            cs[nc++] = (cand){.epochs = base.epochs, .P = EPP[pp], .b = EB[b], .noise = base.rowdp.noise,
                              .scale_eps = ES[se], .pca_noise = EZ[z]};
  } else {
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 2; b++)
        for (int z = 0; z < nnz; z++)
          for (int m = 0; m < 2; m++)
            cs[nc++] = (cand){.epochs = EP[a], .P = PP[b], .masked = m, .b = base.mech.b, .noise = NZ[z],
                              .scale_eps = base.rowdp.scale_eps, .pca_noise = base.rowdp.pca_noise};
  }
  for (int i = 0; i < nc && rc == 0; i++) {
    cand *c = &cs[i];
    bbvfl_privacy_in in = {.kind = BBVFL_MECH_PBM, .b = c->b, .P = c->P, .M = clients, .epochs = c->epochs,
                           .delta = tc.delta, .masked = c->masked, .colluding = clients > 1 ? 1 : 0,
                           .rowdp = {1, base.rowdp.clip, c->noise, c->scale_eps, enc, c->pca_noise}};
    bbvfl_err e = {0};
    if (bbvfl_privacy_solve_beta(&in, target, &c->beta, &e) < 0) continue; /* the target is out of reach */
    double v[64];
    for (int s = 0; s < tune_seeds && rc == 0; s++) {
      bbvfl_offchain_cfg cfg = cand_cfg(&base, c, 1000 + (uint64_t)s);
      cfg.split_seed = 0; /* the inner split of the training rows: validation rows */
      if (run_auroc(&dtr, &cfg, &v[s], &err) != 0) rc = -1;
    }
    if (rc != 0) break;
    c->val_auroc = bbvfl_median(v, (size_t)tune_seeds);
    c->ok = 1;
    if (!as_json && enc)
      fprintf(stderr, "tune: b %d scale-epsilon %g P %d pca-noise %g beta %.5f: validation AUROC %.4f\n", c->b,
              c->scale_eps, c->P, c->pca_noise, c->beta, c->val_auroc);
    else if (!as_json)
      fprintf(stderr, "tune: epochs %2d P %d noise %g %-6s beta %.5f: validation AUROC %.4f\n", c->epochs, c->P,
              c->noise, c->masked ? "masked" : "local", c->beta, c->val_auroc);
    if (best < 0 || c->val_auroc > cs[best].val_auroc) best = i;
  }
  bbvfl_dataset_free(&dtr);
  if (rc != 0) {
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  if (best < 0) {
    bbvfl_dataset_free(&ds);
    bbvfl_fail(&err, BBVFL_E_ARG,
               "no candidate reaches epsilon %g: the DP-SGD and scaling terms alone exceed it (try a larger "
               "target or --scale-epsilon)", target);
    return cli_report(&err);
  }
  const cand *w = &cs[best];
  double t[64];
  bbvfl_privacy pv;
  for (int s = 0; s < seeds && rc == 0; s++) {
    bbvfl_offchain_cfg cfg = cand_cfg(&base, w, (uint64_t)s + 1);
    if (run_auroc(&ds, &cfg, &t[s], &err) != 0) rc = -1;
    if (rc == 0 && s == 0 && bbvfl_cfg_privacy(&cfg, 0, w->masked, clients, tc.delta, &pv, &err) != 0) rc = -1;
  }
  bbvfl_dataset_free(&ds);
  if (rc != 0) return cli_report(&err);
  double test_auroc = bbvfl_median(t, (size_t)seeds);
  char cmd[512];
  if (enc)
    snprintf(cmd, sizeof cmd,
             "bbvfl demo --privacy row --encoder pca --clients %d --epochs %d --P %d --b %d --beta %.6g "
             "--scale-epsilon %g --pca-noise %g --lr %g",
             clients, w->epochs, w->P, w->b, w->beta, w->scale_eps, w->pca_noise, base.opt.lr);
  else
    snprintf(cmd, sizeof cmd,
             "bbvfl demo --privacy row --clients %d --epochs %d --P %d --b %d --beta %.6g --dpsgd-noise %g "
             "--dpsgd-clip %g --scale-epsilon %g --lr %g%s",
             clients, w->epochs, w->P, w->b, w->beta, w->noise, base.rowdp.clip, w->scale_eps, base.opt.lr,
             w->masked ? " --masked" : "");
  json_t *o = json_pack("{s:f, s:f, s:i, s:i, s:i, s:f, s:f, s:b, s:f, s:f, s:i, s:I, s:s, s:o, s:s}", "target_epsilon",
                        target, "delta", tc.delta, "epochs", w->epochs, "P", w->P, "b", w->b, "beta", w->beta,
                        "dpsgd_noise", w->noise, "masked", w->masked, "validation_auroc", w->val_auroc,
                        "test_auroc_median", test_auroc, "seeds", seeds, "split_seed", (json_int_t)split_seed,
                        "demo", cmd, "privacy", bbvfl_privacy_json(&pv), "note",
                        "the tuning looked at the training rows many times and is not itself private");
  if (!o) return cli_report(&err);
  json_object_set_new(o, "encoder", json_string(enc ? "pca" : "dpsgd"));
  json_object_set_new(o, "scale_epsilon", json_real(w->scale_eps));
  if (enc) json_object_set_new(o, "pca_noise", json_real(w->pca_noise));
  char path[1100];
  snprintf(path, sizeof path, "%s/tune.json", out_dir);
  char *text = json_dumps(o, JSON_INDENT(2));
  int wr = text && bbvfl_mkdirs(out_dir, 0755, &err) == 0 ? bbvfl_write_file_atomic(path, text, strlen(text), 0644, &err)
                                                         : -1;
  if (as_json && text) printf("%s\n", text);
  free(text);
  json_decref(o);
  if (wr < 0) {
    if (!err.code) bbvfl_fail(&err, BBVFL_E_NOMEM, "out of memory");
    return cli_report(&err);
  }
  if (!as_json) {
    char line[1024];
    bbvfl_privacy_line(&pv, line, sizeof line);
    if (enc)
      printf("best at row-level epsilon %g (delta %g): DP-PCA encoder, each row released once; P %d, b %d, beta "
             "%.5f, scale epsilon %g, DP-PCA noise %g, head epochs %d, local\n",
             target, tc.delta, w->P, w->b, w->beta, w->scale_eps, w->pca_noise, w->epochs);
    else
      printf("best at row-level epsilon %g (delta %g): epochs %d, P %d, b %d, beta %.5f, DP-SGD noise %g, %s\n", target,
             tc.delta, w->epochs, w->P, w->b, w->beta, w->noise, w->masked ? "masked" : "local");
    printf("  validation AUROC %.4f (median of %d seeds); test AUROC %.4f (median of %d seeds, split seed %llu)\n",
           w->val_auroc, tune_seeds, test_auroc, seeds, split_seed);
    printf("  privacy: %s\n", line);
    printf("  on chain: %s\n", cmd);
    printf("  the tuning itself is not private: it looked at the training rows many times.\n");
    printf("wrote %s\n", path);
  }
  return 0;
}
