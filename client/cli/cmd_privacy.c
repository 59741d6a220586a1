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
#include "core/cfgprivacy.h"
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

/* The flags. */
typedef struct {
  int b, P, M, epochs, as_json, masked, colluding, rows;
  double beta, delta, target, clip, sigma, label_eps;
  const char *mechanism, *level_s;
  bbvfl_acct_level level;
  int gaussian;
} priv_flags;

/* What the accountant said. */
typedef struct {
  bbvfl_acct_curve curve;
  bbvfl_acct_out out, mout;
  const char *solved; /* "b", "beta" or NULL: what --target calibrated */
  double masked_rdp[BBVFL_ACCT_NGRID];
  double pld_feature, pld_sample, set_rdp, set_pld;
  double sum_std;
  bbvfl_privacy pv;
} priv_res;

/* --level, --mechanism, --colluding and --rows; fills f->level, f->gaussian and the colluding
   default. */
static int check_flags(priv_flags *f, bbvfl_err *err) {
  if (!(f->label_eps >= 0) || !isfinite(f->label_eps))
    return bbvfl_fail(err, BBVFL_E_ARG, "bbvfl privacy: --label-epsilon must be a finite number >= 0 (0: labels unprotected), got %g",
                      f->label_eps);
  if (strcmp(f->level_s, "feature") == 0) f->level = BBVFL_ACCT_FEATURE;
  else if (strcmp(f->level_s, "sample") == 0) f->level = BBVFL_ACCT_SAMPLE;
  else return bbvfl_fail(err, BBVFL_E_ARG, "bbvfl privacy: --level must be feature or sample, got '%s'", f->level_s);
  if (strcmp(f->mechanism, "pbm") == 0) f->gaussian = 0;
  else if (strcmp(f->mechanism, "gaussian") == 0) f->gaussian = 1;
  else
    return bbvfl_fail(err, BBVFL_E_ARG, "bbvfl privacy: --mechanism must be pbm or gaussian, got '%s'", f->mechanism);
  if (f->colluding != INT_MIN && !f->masked)
    return bbvfl_fail(err, BBVFL_E_ARG, "bbvfl privacy: --colluding applies to --masked only");
  if (f->colluding == INT_MIN) f->colluding = f->M > 1 ? BBVFL_ACCT_COLLUDING_DEFAULT : 0;
  if (f->masked && (f->colluding < 0 || f->colluding > f->M - 1))
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "bbvfl privacy: --colluding must be in 0..M-1 = %d (the changed client is not one of them), got %d",
                      f->M - 1, f->colluding);
  if (f->rows < 1) return bbvfl_fail(err, BBVFL_E_ARG, "bbvfl privacy: --rows must be >= 1, got %d", f->rows);
  return 0;
}

static int compute_gaussian(const priv_flags *f, priv_res *r, bbvfl_err *err) {
  if (f->b != INT_MIN || !isnan(f->beta) || f->masked || !isnan(f->target))
    return bbvfl_fail(err, BBVFL_E_ARG, "bbvfl privacy: --b, --beta, --masked and --target apply to --mechanism pbm only");
  if (isnan(f->clip) || isnan(f->sigma))
    return bbvfl_fail(err, BBVFL_E_ARG, "bbvfl privacy: --mechanism gaussian needs --clip C and --sigma S");
  if (bbvfl_acct_gaussian(f->clip, f->sigma, f->M, f->epochs, f->delta, &r->out, err) ||
      bbvfl_acct_gaussian_curve(f->clip, f->sigma, f->M, f->epochs, &r->curve, err))
    return -1;
  return 0;
}

/* PBM: the calibration (--target) if asked, then every level and method; f->b and f->beta become
   the values used. */
static int compute_pbm(priv_flags *f, priv_res *r, bbvfl_err *err) {
  if (!isnan(f->clip) || !isnan(f->sigma))
    return bbvfl_fail(err, BBVFL_E_ARG, "bbvfl privacy: --clip and --sigma apply to --mechanism gaussian only");
  bbvfl_pbm_acct_in in = {f->b == INT_MIN ? 16 : f->b, isnan(f->beta) ? 0.2 : f->beta, f->P, f->M, f->epochs, f->delta,
                          f->masked ? f->colluding : 0};
  if (!isnan(f->target)) {
    int have_b = f->b != INT_MIN, have_beta = !isnan(f->beta);
    if (have_b == have_beta)
      return bbvfl_fail(err, BBVFL_E_ARG,
                        "bbvfl privacy: with --target give exactly one of --b (to solve beta) or --beta (to solve b)");
    if (have_b) {
      if (bbvfl_acct_solve_beta(&in, f->level, f->target, &in.beta, err)) return -1;
      r->solved = "beta";
    } else {
      if (bbvfl_acct_solve_b(&in, f->level, f->target, &in.b, err)) return -1;
      r->solved = "b";
    }
  }
  if (bbvfl_acct_pbm_curve(&in, &r->curve, err)) return -1;
  f->b = in.b;
  f->beta = in.beta;
  /* every level and method from the one accountant (dp/privacy.h): RDP and the exact PLD of the
     same releases; the feature-set level composes all rows x epochs x P coordinates of a client */
  bbvfl_privacy_in pin = {.kind = BBVFL_MECH_PBM, .b = f->b, .beta = f->beta, .P = f->P, .M = f->M,
                          .epochs = f->epochs, .rows = f->rows, .delta = f->delta, .masked = f->masked,
                          .colluding = f->colluding, .label_eps = f->label_eps};
  if (bbvfl_privacy_compute(&pin, &r->pv, f->masked ? r->masked_rdp : NULL, err)) return -1;
  r->out = r->pv.rdp;
  r->mout = r->pv.masked_rdp;
  r->pld_feature = r->pv.row_feature.pld;
  r->pld_sample = r->pv.row_sample.pld;
  r->set_pld = r->pv.feature_set.pld;
  r->set_rdp = r->pv.feature_set.rdp;
  return 0;
}

/* --json: one object on stdout. Returns the command's exit status. */
static int print_json(const priv_flags *f, const priv_res *r) {
  const int gaussian = f->gaussian;
  json_t *o = json_object();
  json_object_set_new(o, "mechanism", json_string(gaussian ? "gaussian" : "pbm"));
  if (gaussian) {
    json_object_set_new(o, "clip", json_real(f->clip));
    json_object_set_new(o, "sigma", json_real(f->sigma));
  } else {
    json_object_set_new(o, "b", json_integer(f->b));
    json_object_set_new(o, "beta", json_real(f->beta));
    json_object_set_new(o, "P", json_integer(f->P));
  }
  json_object_set_new(o, "M", json_integer(f->M));
  json_object_set_new(o, "epochs", json_integer(f->epochs));
  json_object_set_new(o, "delta", json_real(f->delta));
  json_object_set_new(o, "scope", json_string(BBVFL_ACCT_SCOPE));
  /* the levels of the top-level figures (names kept for scripts): per person first */
  json_object_set_new(o, "headline", json_string(BBVFL_PRIVACY_HEADLINE));
  json_object_set_new(o, "epsilon_sample_level", json_string("per_person"));
  json_object_set_new(o, "epsilon_feature_level", json_string("per_party"));
  if (!gaussian) json_object_set_new(o, "epsilon_feature_set_level", json_string("per_party_column_set"));
  set_acct_out(o, &r->out, 1);
  if (!gaussian) {
    /* the exact PLD epsilons, and the smaller of the two methods per level */
    json_object_set_new(o, "pld", json_pack("{s:f, s:f, s:f}", "epsilon_feature", r->pld_feature, "epsilon_sample",
                                            r->pld_sample, "epsilon_feature_set", r->set_pld));
    json_object_set_new(o, "rows", json_integer(f->rows));
    json_object_set_new(o, "epsilon_feature_set", json_real(r->set_rdp));
    int pf = r->pld_feature <= r->out.epsilon_feature, ps = r->pld_sample <= r->out.epsilon_sample;
    json_object_set_new(o, "best",
                        json_pack("{s:f, s:s, s:f, s:s}", "epsilon_feature", pf ? r->pld_feature : r->out.epsilon_feature,
                                  "method_feature", pf ? "pld" : "rdp", "epsilon_sample",
                                  ps ? r->pld_sample : r->out.epsilon_sample, "method_sample", ps ? "pld" : "rdp"));
  }
  if (!gaussian) {
    json_object_set_new(o, "privacy", bbvfl_privacy_json(&r->pv));
    /* the headline every command prints: per person, the label composed in (null: unbounded) */
    json_object_set_new(o, "per_person", json_pack("{s:o, s:s, s:b, s:f}", "epsilon",
                                                   bbvfl_json_num_or_null(r->pv.person.epsilon), "method",
                                                   r->pv.person.method, "labels_protected",
                                                   bbvfl_privacy_labels_protected(&r->pv), "label_epsilon",
                                                   f->label_eps));
  }
  json_object_set_new(o, "alpha", jarr(r->curve.alpha, BBVFL_ACCT_NGRID));
  json_object_set_new(o, "rdp_feature", jarr(r->curve.feature, BBVFL_ACCT_NGRID));
  json_object_set_new(o, "rdp_sample", jarr(r->curve.sample, BBVFL_ACCT_NGRID));
  json_object_set_new(o, gaussian ? "sum_noise_std" : "sum_noise_std_over_C", json_real(r->sum_std));
  if (f->masked && !gaussian) {
    json_t *m = json_object();
    json_object_set_new(m, "colluding", json_integer(f->colluding));
    set_acct_out(m, &r->mout, 0);
    json_object_set_new(m, "rdp_feature", jarr(r->masked_rdp, BBVFL_ACCT_NGRID));
    json_object_set_new(o, "masked", m);
  }
  if (r->solved) {
    json_t *s = json_object();
    json_object_set_new(s, "parameter", json_string(r->solved));
    json_object_set_new(s, "target_epsilon", json_real(f->target));
    json_object_set_new(s, "level", json_string(f->level_s));
    json_object_set_new(o, "solved", s);
  }
  if (cli_print_json(o, JSON_REAL_PRECISION(12)) != 0) {
    fprintf(stderr, "bbvfl: error: out of memory while writing JSON\n");
    return 1;
  }
  return 0;
}

/* The RDP curve at the orders worth showing: the optima and a fixed ladder. */
static void print_curve(const priv_flags *f, const priv_res *r) {
  printf("\nRDP curve (composed over %s%d epochs):\n", f->gaussian ? "" : "P coordinates and ", f->epochs);
  printf("  %8s  %14s  %14s%s\n", "alpha", "feature", "sample", f->masked ? "  masked feature" : "");
  static const double SHOW[] = {1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 63, 128, 256, 512, 1024};
  size_t si = 0;
  for (size_t i = 0; i < BBVFL_ACCT_NGRID; i++) {
    int show = r->curve.alpha[i] == r->out.alpha_feature || r->curve.alpha[i] == r->out.alpha_sample ||
               (f->masked && r->curve.alpha[i] == r->mout.alpha_feature);
    while (si < sizeof SHOW / sizeof SHOW[0] && SHOW[si] < r->curve.alpha[i] - 1e-9) si++;
    if (si < sizeof SHOW / sizeof SHOW[0] && fabs(SHOW[si] - r->curve.alpha[i]) < 1e-9) show = 1;
    if (show) print_row(&r->curve, i, f->masked ? r->masked_rdp : NULL);
  }
}

/* The epsilons: both conversions, then (PBM) the exact PLD and the feature-set level. */
static void print_epsilons(const priv_flags *f, const priv_res *r) {
  const bbvfl_acct_out *out = &r->out, *mout = &r->mout;
  printf("\n(epsilon, delta=%g)-DP        tighter conversion          standard conversion\n", f->delta);
  printf("  per person (sample level)  epsilon = %-10.4g (alpha %-6g)   epsilon = %.4g\n", out->epsilon_sample,
         out->alpha_sample, out->epsilon_sample_std);
  printf("  per party (feature level)   epsilon = %-10.4g (alpha %-6g)   epsilon = %.4g\n", out->epsilon_feature,
         out->alpha_feature, out->epsilon_feature_std);
  if (f->masked)
    printf("  per party, masked           epsilon = %-10.4g (alpha %-6g)   epsilon = %.4g\n", mout->epsilon_feature,
           mout->alpha_feature, mout->epsilon_feature_std);
  if (!f->gaussian) {
    printf("\nexact (privacy loss distribution of the same releases; local mode, no alpha grid)\n");
    printf("  per person (sample level) epsilon = %-10.4g   per party (feature level) epsilon = %.4g\n", r->pld_sample,
           r->pld_feature);
    printf("per party, feature-set level (one client's whole column set: all %d rows' releases compose)\n"
           "  epsilon = %.4g (PLD; RDP %.4g)\n",
           f->rows, r->set_pld, r->set_rdp);
    printf("reported (the smaller of the two methods): per person, features only %.4g (%s), per party %.4g (%s)\n",
           fmin(r->pld_sample, out->epsilon_sample), r->pld_sample <= out->epsilon_sample ? "PLD" : "RDP",
           fmin(r->pld_feature, out->epsilon_feature), r->pld_feature <= out->epsilon_feature ? "PLD" : "RDP");
    if (isfinite(r->pv.person.epsilon))
      printf("per person, the headline (every party's features and the label, randomized response at %g): %.4g "
             "(%s)\n", f->label_eps, r->pv.person.epsilon, r->pv.person.method);
    else
      printf("per person, the headline: unbounded: the labels are unprotected (the posted gradients give them back); "
             "--label-epsilon E adds E to the features' figure\n");
  }
  if (out->at_grid_edge || (f->masked && mout->at_grid_edge))
    printf("warning: an RDP optimum sits at an end of the alpha grid (1.01 or 1024): the RDP epsilon may be "
           "somewhat lower than shown%s.\n", f->gaussian ? "" : " (the PLD epsilon is exact)");
}

/* What the levels mean, the scope and the accuracy cost. */
static void print_explanation(const priv_flags *f, const priv_res *r) {
  printf("\nPer person, features only (sample level): how much the releases reveal about one person's whole\n"
         "row, whose embeddings every client releases. The headline per person adds the label, part of the\n"
         "person's record: unbounded unless label DP protects it (--label-epsilon). Per party (feature\n"
         "level): how much one client's releases of one row reveal about its features of that row. This is local\n"
         "DP: each client's %s output is public on chain, so no trusted aggregator is assumed.\n",
         f->gaussian ? "noisy" : "PBM");
  if (f->masked)
    printf("Masked mode: only the sum of the M outputs is public; that helps the feature level, not the\n"
           "sample level (a changed row moves every client's output).\n"
           "The masked bound is against %d colluding participant(s), the observer included\n"
           "(--colluding; 0: a chain reader): %d other client(s)' noise hides the changed one.\n",
           f->colluding, f->M - 1 - f->colluding);
  printf("Larger epsilon is weaker protection; values far above ~10 give little formal protection.\n");
  printf("Scope: %s.\n", BBVFL_ACCT_SCOPE);
  if (f->gaussian)
    printf("Accuracy: the sum of the M embeddings has noise std %.4g per coordinate.\n", r->sum_std);
  else
    printf("Accuracy: the unbiased estimate of the sum of the M embeddings has noise std up to %.4g * C\n"
           "per coordinate (PBM-VFL Theorem 2.3: variance C^2 M / (4 beta^2 b)).\n", r->sum_std);
}

static void print_text(const priv_flags *f, const priv_res *r) {
  if (f->gaussian)
    printf("Gaussian local DP: clip %g, sigma %g, M=%d clients, %d epochs, delta=%g\n", f->clip, f->sigma, f->M,
           f->epochs, f->delta);
  else
    printf("PBM: b=%d, beta=%.6g, P=%d, M=%d clients, %d epochs, delta=%g\n", f->b, f->beta, f->P, f->M, f->epochs,
           f->delta);
  if (r->solved)
    printf("calibrated: %s = %.6g is the largest value meeting %s-level epsilon <= %g\n", r->solved,
           strcmp(r->solved, "b") == 0 ? (double)f->b : f->beta, f->level_s, f->target);
  print_curve(f, r);
  print_epsilons(f, r);
  print_explanation(f, r);
}

int cmd_privacy(int argc, char **argv) {
  priv_flags f = {.b = INT_MIN, .P = 16, .M = 5, .epochs = 30, .colluding = INT_MIN, .rows = 455, .beta = NAN,
                  .delta = 1e-5, .target = NAN, .clip = NAN, .sigma = NAN, .mechanism = "pbm", .level_s = "feature"};
  const cli_opt opts[] = {
      {"b", OPT_INT, &f.b, "N", "PBM binomial trials per coordinate, 1..255 (default 16)"},
      {"beta", OPT_DBL, &f.beta, "X", "PBM bias, 0 < beta < 0.5: p = 1/2 + beta*x/C (default 0.2)"},
      {"P", OPT_INT, &f.P, "N", "embedding dimension (coordinates per release, default 16)"},
      {"M", OPT_INT, &f.M, "N", "number of clients (default 5)"},
      {"epochs", OPT_INT, &f.epochs, "N", "training epochs: each row is released once per epoch (default 30)"},
      {"delta", OPT_DBL, &f.delta, "X", "delta of the (epsilon, delta) guarantee (default 1e-5)"},
      {"mechanism", OPT_STR, &f.mechanism, "NAME", "pbm (default) or gaussian"},
      {"clip", OPT_DBL, &f.clip, "C", "gaussian: L2 clipping norm of one embedding"},
      {"sigma", OPT_DBL, &f.sigma, "S", "gaussian: noise standard deviation per coordinate"},
      {"rows", OPT_INT, &f.rows, "N",
       "pbm: training rows, for the feature-set level (every row's releases; default 455, Breast Cancer)"},
      {"masked", OPT_FLAG, &f.masked, NULL, "pbm: also the masked-mode feature bound (only the sum is public)"},
      {"colluding", OPT_INT, &f.colluding, "T",
       "masked: participants pooling what they know, the observer included (0: a chain reader; default 1)"},
      {"target", OPT_DBL, &f.target, "EPS", "calibrate: with --b solve beta, with --beta solve b"},
      {"level", OPT_STR, &f.level_s, "L", "level the --target applies to: feature (default) or sample"},
      {"label-epsilon", OPT_DBL, &f.label_eps, "E",
       "label DP (randomized response) epsilon: the per-person headline composes it (default 0: labels unprotected)"},
      {"json", OPT_FLAG, &f.as_json, NULL, "print a JSON object"},
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
  if (check_flags(&f, &err) != 0) return cli_report(&err);
  static priv_res r;
  memset(&r, 0, sizeof r);
  r.pld_feature = r.pld_sample = r.set_rdp = r.set_pld = NAN;
  if ((f.gaussian ? compute_gaussian(&f, &r, &err) : compute_pbm(&f, &r, &err)) != 0) return cli_report(&err);
  /* PBM-VFL Theorem 2.3: the unbiased sum estimate has variance C^2 M / (4 beta^2 b) (worst
   * case, inputs at 0); its standard deviation per coordinate in units of C. */
  r.sum_std = f.gaussian ? f.sigma * sqrt((double)f.M) : sqrt((double)f.M / (4.0 * f.beta * f.beta * f.b));
  if (f.as_json) return print_json(&f, &r);
  print_text(&f, &r);
  return 0;
}
