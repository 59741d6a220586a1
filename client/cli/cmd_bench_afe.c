/* bbvfl bench afe: the VFL-AFE ablation (bench/afe.h) printed as a table. */
#include <math.h>
#include <stdio.h>

#include "bench/afe.h"
#include "cli/afe_flags.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/train_common.h"

static void on_run(void *ctx, int level, int seed, double acc) {
  (void)ctx;
  fprintf(stderr, "  %-22s seed %d: accuracy %.4f\n", bbvfl_bench_afe_level(level), seed, acc);
}

int cmd_bench_afe(int argc, char **argv) {
  train_common tc;
  train_common_defaults(&tc);
  tc.epochs = 10;
  afe_flags af;
  afe_flags_defaults(&af);
  int clients = 5, seeds = 5, quiet = 0;
  double clip = 1.0, sigma = 2.0, beta = 0.2;
  int b = 16;
  const char *mechanism = "gaussian";
  cli_opt opts[12 + TRAIN_COMMON_NOPTS + AFE_FLAGS_NOPTS];
  size_t no = 0;
  opts[no++] = (cli_opt){"clients", OPT_INT, &clients, "M", "number of clients (default 5)"};
  opts[no++] = (cli_opt){"clip", OPT_DBL, &clip, "T", "clip threshold t of every level (default 1)"};
  opts[no++] = (cli_opt){"sigma", OPT_DBL, &sigma, "S", "noise standard deviation of every level (default 2)"};
  opts[no++] = (cli_opt){"mechanism", OPT_STR, &mechanism, "NAME",
                         "gaussian (default: the paper's) or pbm (the on-chain mechanism after the same local steps)"};
  opts[no++] = (cli_opt){"b", OPT_INT, &b, "N", "pbm: trials per coordinate (default 16)"};
  opts[no++] = (cli_opt){"beta", OPT_DBL, &beta, "X", "pbm: bias (default 0.2)"};
  opts[no++] = (cli_opt){"seeds", OPT_INT, &seeds, "N", "seeds 1..N per level, the median reported (default 5)"};
  opts[no++] = (cli_opt){"quiet", OPT_FLAG, &quiet, NULL, "no line per run"};
  no += train_common_opts(&tc, opts + no);
  no += afe_flags_opts(&af, opts + no);
  cli_spec spec = {"bbvfl bench afe", "the VFL-AFE ablation: vanilla, +rescaling, +adjusting, both", "[OPTIONS]",
                   "Trains off chain with the gaussian mechanism at one clip t and sigma (so one epsilon and\n"
                   "delta for every level) four times per seed: vanilla VFL-AFE (clip + noise), with adaptive\n"
                   "rescaling, with distribution adjusting, with both; prints each level's median test accuracy\n"
                   "over the seeds (10 epochs by default). --afe* flags set the weights; the levels set the rest.",
                   opts, no};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  bbvfl_offchain_cfg cfg;
  bbvfl_offchain_defaults(&cfg);
  cfg.M = clients;
  if (bbvfl_mech_parse(mechanism, &cfg.mech.kind) != 0 || cfg.mech.kind == BBVFL_MECH_NPQ) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--mechanism '%s': gaussian or pbm", mechanism);
    return cli_report(&err);
  }
  cfg.mech.b = b;
  cfg.mech.beta = beta;
  cfg.mech.clip = clip;
  cfg.mech.sigma = sigma;
  af.afe = 1;
  if (train_common_apply(&tc, &cfg, &err) != 0 || afe_flags_apply(&af, &cfg.afe, &cfg.mech.clip, &err) != 0 ||
      bbvfl_mech_check(&cfg.mech, &err) != 0)
    return cli_report(&err);
  bbvfl_dataset ds;
  if (train_common_load(&tc, &ds, &err) != 0) return cli_report(&err);
  bbvfl_afe_ablation ab;
  int rc = bbvfl_bench_afe(&ds, &cfg, seeds, &ab, quiet ? NULL : on_run, NULL, &err);
  bbvfl_privacy pv;
  size_t ntr = ds.n - (size_t)llround(cfg.test_frac * (double)ds.n);
  if (rc == 0) rc = bbvfl_cfg_privacy(&cfg, ntr, 0, 0, tc.delta, &pv, &err);
  if (rc == 0) {
    printf("VFL-AFE ablation (%s) on %s: M=%d, %d epochs, clip t=%g, sigma=%g (pbm: b=%d, beta=%g), epsilon %.4g (row level, one client, "
           "delta %g, before p1 + p2 = %g), median of %d seeds\n",
           bbvfl_mech_name(cfg.mech.kind), tc.data ? tc.data : "breast_cancer.csv", cfg.M, cfg.epochs, cfg.mech.clip, cfg.mech.sigma, cfg.mech.b,
           cfg.mech.beta, pv.row_feature.epsilon, tc.delta, cfg.afe.p1 + cfg.afe.p2, seeds);
    printf("%-22s %8s %8s   per seed\n", "level", "median", "vs van.");
    for (int l = 0; l < BBVFL_AFE_LEVELS; l++) {
      printf("%-22s %8.4f %+8.4f  ", bbvfl_bench_afe_level(l), ab.median[l], ab.median[l] - ab.median[0]);
      for (int s = 0; s < seeds; s++) printf(" %.3f", ab.acc[l][s]);
      printf("\n");
    }
  }
  bbvfl_dataset_free(&ds);
  return rc == 0 ? 0 : cli_report(&err);
}
