/* bbvfl privacy: the exact RDP accountant (PBM local/masked mode, Gaussian baseline) and its
 * calibration (given a target epsilon, solve beta for a given b, or b for a given beta). */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "dp/accountant.h"
#include "dp/privacy.h"

static json_t *jarr(const double *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, json_real(v[i]));
  return a;
}

/* One accountant result's fields into o: both levels' epsilons (tighter conversion) and orders, the
 * feature level's standard-conversion epsilon, the sample level's too when sample_std, and
 * at_grid_edge. */
static void set_acct_out(json_t *o, const bbvfl_acct_out *a, int sample_std) {
  json_object_set_new(o, "epsilon_feature", json_real(a->epsilon_feature));
  json_object_set_new(o, "alpha_feature", json_real(a->alpha_feature));
  json_object_set_new(o, "epsilon_sample", json_real(a->epsilon_sample));
  json_object_set_new(o, "alpha_sample", json_real(a->alpha_sample));
  json_object_set_new(o, "epsilon_feature_std", json_real(a->epsilon_feature_std));
  if (sample_std) json_object_set_new(o, "epsilon_sample_std", json_real(a->epsilon_sample_std));
  json_object_set_new(o, "at_grid_edge", json_boolean(a->at_grid_edge));
}

static void print_row(const bbvfl_acct_curve *c, size_t i, const double *masked) {
  printf("  %8g  %14.6g  %14.6g", c->alpha[i], c->feature[i], c->sample[i]);
  if (masked) printf("  %14.6g", masked[i]);
  printf("\n");
}

int cmd_privacy(int argc, char **argv) {
  int b = INT_MIN, P = 16, M = 5, epochs = 30, as_json = 0, masked = 0, colluding = INT_MIN, rows = 455;
  double beta = NAN, delta = 1e-5, target = NAN, clip = NAN, sigma = NAN;
  const char *mechanism = "pbm", *level_s = "feature";
  const cli_opt opts[] = {
      {"b", OPT_INT, &b, "N", "PBM binomial trials per coordinate, 1..255 (default 16)"},
      {"beta", OPT_DBL, &beta, "X", "PBM bias, 0 < beta < 0.5: p = 1/2 + beta*x/C (default 0.2)"},
      {"P", OPT_INT, &P, "N", "embedding dimension (coordinates per release, default 16)"},
      {"M", OPT_INT, &M, "N", "number of clients (default 5)"},
      {"epochs", OPT_INT, &epochs, "N", "training epochs: each row is released once per epoch (default 30)"},
      {"delta", OPT_DBL, &delta, "X", "delta of the (epsilon, delta) guarantee (default 1e-5)"},
      {"mechanism", OPT_STR, &mechanism, "NAME", "pbm (default) or gaussian"},
      {"clip", OPT_DBL, &clip, "C", "gaussian: L2 clipping norm of one embedding"},
      {"sigma", OPT_DBL, &sigma, "S", "gaussian: noise standard deviation per coordinate"},
      {"rows", OPT_INT, &rows, "N",
       "pbm: training rows, for the feature-set level (every row's releases; default 455, Breast Cancer)"},
      {"masked", OPT_FLAG, &masked, NULL, "pbm: also the masked-mode feature bound (only the sum is public)"},
      {"colluding", OPT_INT, &colluding, "T",
       "masked: participants pooling what they know, the observer included (0: a chain reader; default 1)"},
      {"target", OPT_DBL, &target, "EPS", "calibrate: with --b solve beta, with --beta solve b"},
      {"level", OPT_STR, &level_s, "L", "level the --target applies to: feature (default) or sample"},
      {"json", OPT_FLAG, &as_json, NULL, "print a JSON object"},
  };
  cli_spec spec = {
      "bbvfl privacy", "exact Renyi-DP accounting for PBM (and the Gaussian baseline)", "[OPTIONS]",
      "Feature level accounts one client's releases of one row; sample level one row across all\n"
      "clients. In local mode every client's PBM output is public on chain, so the sample level\n"
      "composes over the M clients. These count one row's releases as the papers do: not an\n"
      "end-to-end guarantee (docs/PRIVACY.md, \"What these numbers do not guarantee\"). RDP is exact (no constants), composed over the\n"
      "P coordinates and the epochs, converted to (epsilon, delta) over the alpha grid 1.1..1024.\n"
      "Defaults are the paper's setup: b=16, beta=0.2, P=16, M=5, epochs=30, delta=1e-5.",
      opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};

  bbvfl_acct_level level;
  if (strcmp(level_s, "feature") == 0) level = BBVFL_ACCT_FEATURE;
  else if (strcmp(level_s, "sample") == 0) level = BBVFL_ACCT_SAMPLE;
  else {
    bbvfl_fail(&err, BBVFL_E_ARG, "bbvfl privacy: --level must be feature or sample, got '%s'", level_s);
    return cli_report(&err);
  }

  int gaussian;
  if (strcmp(mechanism, "pbm") == 0) gaussian = 0;
  else if (strcmp(mechanism, "gaussian") == 0) gaussian = 1;
  else {
    bbvfl_fail(&err, BBVFL_E_ARG, "bbvfl privacy: --mechanism must be pbm or gaussian, got '%s'", mechanism);
    return cli_report(&err);
  }

  if (colluding != INT_MIN && !masked) {
    bbvfl_fail(&err, BBVFL_E_ARG, "bbvfl privacy: --colluding applies to --masked only");
    return cli_report(&err);
  }
  if (colluding == INT_MIN) colluding = M > 1 ? BBVFL_ACCT_COLLUDING_DEFAULT : 0;
  if (masked && (colluding < 0 || colluding > M - 1)) {
    bbvfl_fail(&err, BBVFL_E_ARG,
               "bbvfl privacy: --colluding must be in 0..M-1 = %d (the changed client is not one of them), got %d",
               M - 1, colluding);
    return cli_report(&err);
  }

  if (rows < 1) {
    bbvfl_fail(&err, BBVFL_E_ARG, "bbvfl privacy: --rows must be >= 1, got %d", rows);
    return cli_report(&err);
  }

  bbvfl_acct_curve curve;
  bbvfl_acct_out out = {0};
  const char *solved = NULL;
  double masked_rdp[BBVFL_ACCT_NGRID];
  bbvfl_acct_out mout = {0};
  double pld_feature = NAN, pld_sample = NAN, set_rdp = NAN, set_pld = NAN;
  bbvfl_privacy pv;
  memset(&pv, 0, sizeof pv);

  if (gaussian) {
    if (b != INT_MIN || !isnan(beta) || masked || !isnan(target)) {
      bbvfl_fail(&err, BBVFL_E_ARG,
                 "bbvfl privacy: --b, --beta, --masked and --target apply to --mechanism pbm only");
      return cli_report(&err);
    }
    if (isnan(clip) || isnan(sigma)) {
      bbvfl_fail(&err, BBVFL_E_ARG, "bbvfl privacy: --mechanism gaussian needs --clip C and --sigma S");
      return cli_report(&err);
    }
    if (bbvfl_acct_gaussian(clip, sigma, M, epochs, delta, &out, &err) ||
        bbvfl_acct_gaussian_curve(clip, sigma, M, epochs, &curve, &err))
      return cli_report(&err);
  } else {
    if (!isnan(clip) || !isnan(sigma)) {
      bbvfl_fail(&err, BBVFL_E_ARG, "bbvfl privacy: --clip and --sigma apply to --mechanism gaussian only");
      return cli_report(&err);
    }
    bbvfl_pbm_acct_in in = {b == INT_MIN ? 16 : b, isnan(beta) ? 0.2 : beta, P, M, epochs, delta, masked ? colluding : 0};
    if (!isnan(target)) {
      int have_b = b != INT_MIN, have_beta = !isnan(beta);
      if (have_b == have_beta) {
        bbvfl_fail(&err, BBVFL_E_ARG,
                   "bbvfl privacy: with --target give exactly one of --b (to solve beta) or --beta (to solve b)");
        return cli_report(&err);
      }
      if (have_b) {
        if (bbvfl_acct_solve_beta(&in, level, target, &in.beta, &err)) return cli_report(&err);
        solved = "beta";
      } else {
        if (bbvfl_acct_solve_b(&in, level, target, &in.b, &err)) return cli_report(&err);
        solved = "b";
      }
    }
    if (bbvfl_acct_pbm_curve(&in, &curve, &err)) return cli_report(&err);
    b = in.b;
    beta = in.beta;
    /* every level and method from the one accountant (dp/privacy.h): RDP and the exact PLD of the
       same releases; the feature-set level composes all rows x epochs x P coordinates of a client */
    bbvfl_privacy_in pin = {.kind = BBVFL_MECH_PBM, .b = b, .beta = beta, .P = P, .M = M, .epochs = epochs,
                            .rows = rows, .delta = delta, .masked = masked, .colluding = colluding};
    if (bbvfl_privacy_compute(&pin, &pv, masked ? masked_rdp : NULL, &err)) return cli_report(&err);
    out = pv.rdp;
    mout = pv.masked_rdp;
    pld_feature = pv.row_feature.pld;
    pld_sample = pv.row_sample.pld;
    set_pld = pv.feature_set.pld;
    set_rdp = pv.feature_set.rdp;
  }
  /* PBM-VFL Theorem 2.3: the unbiased sum estimate has variance C^2 M / (4 beta^2 b) (worst
   * case, inputs at 0); its standard deviation per coordinate in units of C. */
  double sum_std = gaussian ? sigma * sqrt((double)M) : sqrt((double)M / (4.0 * beta * beta * b));

  if (as_json) {
    json_t *o = json_object();
    json_object_set_new(o, "mechanism", json_string(gaussian ? "gaussian" : "pbm"));
    if (gaussian) {
      json_object_set_new(o, "clip", json_real(clip));
      json_object_set_new(o, "sigma", json_real(sigma));
    } else {
      json_object_set_new(o, "b", json_integer(b));
      json_object_set_new(o, "beta", json_real(beta));
      json_object_set_new(o, "P", json_integer(P));
    }
    json_object_set_new(o, "M", json_integer(M));
    json_object_set_new(o, "epochs", json_integer(epochs));
    json_object_set_new(o, "delta", json_real(delta));
    json_object_set_new(o, "scope", json_string(BBVFL_ACCT_SCOPE));
    /* the levels of the top-level figures (names kept for scripts): per person first */
    json_object_set_new(o, "headline", json_string(BBVFL_PRIVACY_HEADLINE));
    json_object_set_new(o, "epsilon_sample_level", json_string("per_person"));
    json_object_set_new(o, "epsilon_feature_level", json_string("per_party"));
    if (!gaussian) json_object_set_new(o, "epsilon_feature_set_level", json_string("per_party_column_set"));
    set_acct_out(o, &out, 1);
    if (!gaussian) {
      /* the exact PLD epsilons, and the smaller of the two methods per level */
      json_object_set_new(o, "pld", json_pack("{s:f, s:f, s:f}", "epsilon_feature", pld_feature, "epsilon_sample",
                                              pld_sample, "epsilon_feature_set", set_pld));
      json_object_set_new(o, "rows", json_integer(rows));
      json_object_set_new(o, "epsilon_feature_set", json_real(set_rdp));
      int pf = pld_feature <= out.epsilon_feature, ps = pld_sample <= out.epsilon_sample;
      json_object_set_new(o, "best",
                          json_pack("{s:f, s:s, s:f, s:s}", "epsilon_feature", pf ? pld_feature : out.epsilon_feature,
                                    "method_feature", pf ? "pld" : "rdp", "epsilon_sample",
                                    ps ? pld_sample : out.epsilon_sample, "method_sample", ps ? "pld" : "rdp"));
    }
    if (!gaussian) json_object_set_new(o, "privacy", bbvfl_privacy_json(&pv));
    json_object_set_new(o, "alpha", jarr(curve.alpha, BBVFL_ACCT_NGRID));
    json_object_set_new(o, "rdp_feature", jarr(curve.feature, BBVFL_ACCT_NGRID));
    json_object_set_new(o, "rdp_sample", jarr(curve.sample, BBVFL_ACCT_NGRID));
    json_object_set_new(o, gaussian ? "sum_noise_std" : "sum_noise_std_over_C", json_real(sum_std));
    if (masked && !gaussian) {
      json_t *m = json_object();
      json_object_set_new(m, "colluding", json_integer(colluding));
      set_acct_out(m, &mout, 0);
      json_object_set_new(m, "rdp_feature", jarr(masked_rdp, BBVFL_ACCT_NGRID));
      json_object_set_new(o, "masked", m);
    }
    if (solved) {
      json_t *s = json_object();
      json_object_set_new(s, "parameter", json_string(solved));
      json_object_set_new(s, "target_epsilon", json_real(target));
      json_object_set_new(s, "level", json_string(level_s));
      json_object_set_new(o, "solved", s);
    }
    if (cli_print_json(o, JSON_REAL_PRECISION(12)) != 0) {
      fprintf(stderr, "bbvfl: error: out of memory while writing JSON\n");
      return 1;
    }
    return 0;
  }

  if (gaussian)
    printf("Gaussian local DP: clip %g, sigma %g, M=%d clients, %d epochs, delta=%g\n", clip, sigma, M,
           epochs, delta);
  else
    printf("PBM: b=%d, beta=%.6g, P=%d, M=%d clients, %d epochs, delta=%g\n", b, beta, P, M, epochs, delta);
  if (solved)
    printf("calibrated: %s = %.6g is the largest value meeting %s-level epsilon <= %g\n", solved,
           strcmp(solved, "b") == 0 ? (double)b : beta, level_s, target);
  printf("\nRDP curve (composed over %s%d epochs):\n", gaussian ? "" : "P coordinates and ", epochs);
  printf("  %8s  %14s  %14s%s\n", "alpha", "feature", "sample", masked ? "  masked feature" : "");
  static const double SHOW[] = {1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 63, 128, 256, 512, 1024};
  size_t si = 0;
  for (size_t i = 0; i < BBVFL_ACCT_NGRID; i++) {
    int show = curve.alpha[i] == out.alpha_feature || curve.alpha[i] == out.alpha_sample ||
               (masked && curve.alpha[i] == mout.alpha_feature);
    while (si < sizeof SHOW / sizeof SHOW[0] && SHOW[si] < curve.alpha[i] - 1e-9) si++;
    if (si < sizeof SHOW / sizeof SHOW[0] && fabs(SHOW[si] - curve.alpha[i]) < 1e-9) show = 1;
    if (show) print_row(&curve, i, masked ? masked_rdp : NULL);
  }
  printf("\n(epsilon, delta=%g)-DP        tighter conversion          standard conversion\n", delta);
  printf("  per person (sample level)  epsilon = %-10.4g (alpha %-6g)   epsilon = %.4g\n", out.epsilon_sample,
         out.alpha_sample, out.epsilon_sample_std);
  printf("  per party (feature level)   epsilon = %-10.4g (alpha %-6g)   epsilon = %.4g\n", out.epsilon_feature,
         out.alpha_feature, out.epsilon_feature_std);
  if (masked)
    printf("  per party, masked           epsilon = %-10.4g (alpha %-6g)   epsilon = %.4g\n", mout.epsilon_feature,
           mout.alpha_feature, mout.epsilon_feature_std);
  if (!gaussian) {
    printf("\nexact (privacy loss distribution of the same releases; local mode, no alpha grid)\n");
    printf("  per person (sample level) epsilon = %-10.4g   per party (feature level) epsilon = %.4g\n", pld_sample,
           pld_feature);
    printf("per party, feature-set level (one client's whole column set: all %d rows' releases compose)\n"
           "  epsilon = %.4g (PLD; RDP %.4g)\n",
           rows, set_pld, set_rdp);
    printf("reported (the smaller of the two methods): per person %.4g (%s), per party %.4g (%s)\n",
           fmin(pld_sample, out.epsilon_sample), pld_sample <= out.epsilon_sample ? "PLD" : "RDP",
           fmin(pld_feature, out.epsilon_feature), pld_feature <= out.epsilon_feature ? "PLD" : "RDP");
  }
  if (out.at_grid_edge || (masked && mout.at_grid_edge))
    printf("warning: an RDP optimum sits at an end of the alpha grid (1.01 or 1024): the RDP epsilon may be "
           "somewhat lower than shown%s.\n", gaussian ? "" : " (the PLD epsilon is exact)");
  printf("\nPer person (sample level, the headline): how much the releases reveal about one person's whole\n"
         "row, whose embeddings every client releases. Per party (feature level): how much one client's\n"
         "releases of one row reveal about its features of that row. This is local\n"
         "DP: each client's %s output is public on chain, so no trusted aggregator is assumed.\n",
         gaussian ? "noisy" : "PBM");
  if (masked)
    printf("Masked mode: only the sum of the M outputs is public; that helps the feature level, not the\n"
           "sample level (a changed row moves every client's output).\n"
           "The masked bound is against %d colluding participant(s), the observer included\n"
           "(--colluding; 0: a chain reader): %d other client(s)' noise hides the changed one.\n",
           colluding, M - 1 - colluding);
  printf("Larger epsilon is weaker protection; values far above ~10 give little formal protection.\n");
  printf("Scope: %s.\n", BBVFL_ACCT_SCOPE);
  if (gaussian)
    printf("Accuracy: the sum of the M embeddings has noise std %.4g per coordinate.\n", sum_std);
  else
    printf("Accuracy: the unbiased estimate of the sum of the M embeddings has noise std up to %.4g * C\n"
           "per coordinate (PBM-VFL Theorem 2.3: variance C^2 M / (4 beta^2 b)).\n", sum_std);
  return 0;
}
