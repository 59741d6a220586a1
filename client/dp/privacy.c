/* The privacy of one configuration (dp/privacy.h). */
#include "dp/privacy.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void set_eps(bbvfl_privacy_eps *e, double rdp, double pld) {
  e->rdp = rdp;
  e->pld = pld;
  if (!isnan(pld) && (isnan(rdp) || pld <= rdp)) {
    e->epsilon = pld;
    e->method = "pld";
  } else {
    e->epsilon = rdp;
    e->method = "rdp";
  }
}

static void set_none(bbvfl_privacy_eps *e, double v) {
  e->epsilon = e->rdp = e->pld = v;
  e->method = "none";
}

/* The headline: one person's whole record, every party's features of the row (row_sample) and
   its label (labels), composed: basic composition adds the epsilons (the label's randomized
   response is pure, delta 0), each method's figure with the label's. Unprotected labels (or no
   noise): unbounded, method "none". */
static void set_person(bbvfl_privacy *out) {
  const bbvfl_privacy_eps *f = &out->row_sample, *l = &out->labels;
  if (!isfinite(l->epsilon) || !isfinite(f->epsilon)) {
    set_none(&out->person, INFINITY);
    return;
  }
  out->person.epsilon = f->epsilon + l->epsilon;
  out->person.rdp = f->rdp + l->epsilon; /* NAN stays NAN */
  out->person.pld = f->pld + l->epsilon;
  out->person.method = !strcmp(f->method, "pld") ? "pld+rr" : "rdp+rr";
}

/* Row mode: what DP-SGD (encoder mode: the DP-PCA instead) and the DP scaling add to one party's
   RDP of one row at order alpha. Scaling: pure scale_eps is (scale_eps^2 / 2)-zCDP (Bun-Steinke
   2016), and pure DP bounds every order. DP-SGD: epochs Gaussian steps of sensitivity 2 clip
   (replace one row), noise noise x clip: 2 alpha / noise^2 each. DP-PCA: one Gaussian release of
   noise multiplier pca_noise (sensitivity and noise in dp/dppca.h): alpha / (2 pca_noise^2). */
static double row_extra(const bbvfl_privacy_in *in, double alpha) {
  double z = in->rowdp.noise, s = in->rowdp.scale_eps, zp = in->rowdp.pca_noise;
  double scale = fmin(s, alpha * s * s / 2);
  if (in->rowdp.encoder) return alpha / (2 * zp * zp) + scale;
  return in->epochs * 2.0 * alpha / (z * z) + scale;
}

/* Standard normal tail Phi(x), accurate in both tails. */
static double Phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* The Gaussian privacy curve of mu at a (possibly negative) x: E[(1 - e^(x - G))_+], G ~
   N(mu^2/2, mu^2) (Balle & Wang 2018, Theorem 8). */
static double gauss_delta(double x, double mu) {
  double a = Phi(-x / mu + mu / 2), b = Phi(-x / mu - mu / 2);
  double d = a - (b > 0 ? exp(x + log(b)) : 0);
  return d > 0 ? d : 0;
}

/* Encoder mode, the exact epsilon of the composition, for m parties' uses of one row (1: row
   level; M: sample level). Dominating pairs, composed exactly (the privacy loss of a product is
   the sum of independent losses): the DP scaling (pure scale_eps per party) by binary randomized
   response with scale_eps (every pure-DP mechanism is a post-processing of it: Kairouz, Oh &
   Viswanath 2015), m of them; the DP-PCA by the Gaussian pair of mu = sqrt(m) / pca_noise; the one
   PBM release of P coordinates by Binomial(N, p) against Binomial(N, q), N = m P b, loss
   (2K - N) ln(p/q). delta(eps) = sum_J sum_K P(J) P(K) gauss_delta(eps - l_J - l_K), solved for
   eps by bisection. NAN when N is too large to sum (the RDP number stands). */
static double encoder_pld_eps(const bbvfl_privacy_in *in, int m, double hi) {
  const double s = in->rowdp.scale_eps, mu = sqrt((double)m) / in->rowdp.pca_noise;
  const double p = 0.5 + in->beta, lr = log((0.5 + in->beta) / (0.5 - in->beta));
  const long N = (long)m * in->P * in->b;
  if (N > 200000 || m > 4096) return NAN;
  const double pr = 1 / (1 + exp(-s)); /* P(the randomized response's loss is +s) */
  double lo = 0;
  for (int it = 0; it < 200 && hi - lo > 1e-9 * fmax(1, hi); it++) {
    double eps = it == 0 ? lo : 0.5 * (lo + hi), d = 0;
    for (int J = 0; J <= m; J++) {
      double lj = lgamma(m + 1.0) - lgamma(J + 1.0) - lgamma(m - J + 1.0) + J * log(pr) + (m - J) * log1p(-pr);
      for (long K = 0; K <= N; K++) {
        double lk = lgamma(N + 1.0) - lgamma(K + 1.0) - lgamma((double)(N - K) + 1.0) + K * log(p) +
                    (double)(N - K) * log1p(-p);
        double w = exp(lj + lk);
        if (w < 1e-300) continue;
        d += w * gauss_delta(eps - (2.0 * J - m) * s - (2.0 * K - N) * lr, mu);
      }
    }
    if (it == 0) {
      if (d <= in->delta) return 0;
      continue;
    }
    if (d > in->delta) lo = eps;
    else hi = eps;
  }
  return hi;
}

/* The feature-set level, paper's mode: every row's releases of the party compose. */
static int feature_set(const bbvfl_privacy_in *in, bbvfl_privacy *out, bbvfl_err *err) {
  bbvfl_acct_out so;
  double sp = NAN;
  if (in->kind == BBVFL_MECH_GAUSSIAN) {
    /* rows x epochs releases of one P-vector */
    if ((double)in->rows * in->epochs > INT_MAX)
      return bbvfl_fail(err, BBVFL_E_ARG, "privacy: rows x epochs must stay below %d", INT_MAX);
    if (bbvfl_acct_gaussian(in->clip, in->sigma, in->M, in->rows * in->epochs, in->delta, &so, err) < 0) return -1;
  } else {
    if ((double)in->rows * in->P > INT_MAX)
      return bbvfl_fail(err, BBVFL_E_ARG, "privacy: rows x P must stay below %d", INT_MAX);
    /* each row's P coordinates, every row: one long release per epoch */
    bbvfl_pbm_acct_in set = {in->b, in->beta, in->rows * in->P, in->M, in->epochs, in->delta, 0};
    if (bbvfl_acct_pbm(&set, &so, err) < 0 ||
        bbvfl_acct_pbm_pld_eps(in->b, in->beta, (uint64_t)in->rows * in->epochs * in->P, in->delta, &sp, err) < 0)
      return -1;
  }
  set_eps(&out->feature_set, so.epsilon_feature, sp);
  return 0;
}

int bbvfl_privacy_compute(const bbvfl_privacy_in *in, bbvfl_privacy *out, double *masked_curve, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  out->delta = in->delta;
  out->reproducible = in->reproducible;
  out->rows = in->rows;
  out->masked = in->masked;
  out->colluding = in->masked ? in->colluding : 0;
  out->participants = in->masked && in->participants ? in->participants : in->M;
  set_none(&out->feature_set, NAN);
  set_none(&out->masked_row_feature, NAN);
  if (in->label_eps > 0 && isfinite(in->label_eps)) {
    out->labels.epsilon = in->label_eps;
    out->labels.method = "rr";
    out->labels.rdp = out->labels.pld = NAN;
  } else {
    set_none(&out->labels, INFINITY);
  }
  if (in->rows < 0) return bbvfl_fail(err, BBVFL_E_ARG, "privacy: rows must be >= 0, got %d", in->rows);
  if (in->kind == BBVFL_MECH_NPQ) {
    set_none(&out->row_feature, INFINITY);
    set_none(&out->row_sample, INFINITY);
    if (in->rows) set_none(&out->feature_set, INFINITY);
    if (in->masked) set_none(&out->masked_row_feature, INFINITY);
    set_person(out);
    return 0;
  }
  const int pbm = in->kind == BBVFL_MECH_PBM, row = in->rowdp.on;
  if (in->masked && !pbm) return bbvfl_fail(err, BBVFL_E_ARG, "privacy: masked mode needs the PBM mechanism");
  if (row && (!(in->rowdp.noise > 0) || !(in->rowdp.scale_eps > 0) || !(in->rowdp.clip > 0)))
    return bbvfl_fail(err, BBVFL_E_ARG, "privacy: row mode needs clip, noise and scale_epsilon > 0");

  /* the releases of one row (row mode: plus its DP-SGD steps and the DP scaling), by RDP */
  bbvfl_acct_curve c;
  if (row && in->rowdp.encoder && (!pbm || !(in->rowdp.pca_noise > 0)))
    return bbvfl_fail(err, BBVFL_E_ARG, "privacy: the encoder mode needs PBM and a DP-PCA noise multiplier > 0");
  /* encoder mode: each row is released once, whatever the epochs (later rounds re-send its bytes) */
  const int enc = row && in->rowdp.encoder, releases = enc ? 1 : in->epochs;
  bbvfl_pbm_acct_in a = {in->b, in->beta, in->P, in->M, releases, in->delta, 0};
  if (pbm ? bbvfl_acct_pbm_curve(&a, &c, err) : bbvfl_acct_gaussian_curve(in->clip, in->sigma, in->M, releases, &c, err))
    return -1;
  if (row)
    for (size_t k = 0; k < BBVFL_ACCT_NGRID; k++) {
      double x = row_extra(in, c.alpha[k]);
      c.feature[k] += x;
      c.sample[k] += in->M * x;
    }
  bbvfl_acct_curve_to_out(&c, in->delta, &out->rdp);
  /* the exact PLD of the releases alone: only for PBM in the paper's mode */
  double pf = NAN, ps = NAN;
  if (pbm && !row &&
      (bbvfl_acct_pbm_pld_eps(in->b, in->beta, (uint64_t)in->epochs * in->P, in->delta, &pf, err) < 0 ||
       bbvfl_acct_pbm_pld_eps(in->b, in->beta, (uint64_t)in->epochs * in->M * in->P, in->delta, &ps, err) < 0))
    return -1;
  if (enc) { /* the exact composition of the scaling, the DP-PCA and the one release */
    pf = encoder_pld_eps(in, 1, out->rdp.epsilon_feature + 1);
    ps = encoder_pld_eps(in, in->M, out->rdp.epsilon_sample + 1);
  }
  set_eps(&out->row_feature, out->rdp.epsilon_feature, pf);
  set_eps(&out->row_sample, out->rdp.epsilon_sample, ps);
  /* row mode: no feature-set level (group privacy over every row gives no useful bound) */
  if (in->rows && !row && feature_set(in, out, err) < 0) return -1;
  if (in->masked) {
    bbvfl_pbm_acct_in m = a;
    m.M = out->participants;
    m.colluding = in->colluding;
    double mc[BBVFL_ACCT_NGRID];
    if (bbvfl_acct_pbm_masked_feature(&m, &out->masked_rdp, mc, err) < 0) return -1;
    if (row) {
      bbvfl_acct_curve mcv = c; /* the masked releases plus the same DP-SGD and scaling terms */
      for (size_t k = 0; k < BBVFL_ACCT_NGRID; k++) mcv.feature[k] = mc[k] += row_extra(in, c.alpha[k]);
      bbvfl_acct_out mo;
      bbvfl_acct_curve_to_out(&mcv, in->delta, &mo);
      out->masked_rdp.epsilon_feature = mo.epsilon_feature;
      out->masked_rdp.alpha_feature = mo.alpha_feature;
      out->masked_rdp.epsilon_feature_std = mo.epsilon_feature_std;
    }
    set_eps(&out->masked_row_feature, out->masked_rdp.epsilon_feature, NAN);
    /* the sum is a function of the outputs: the local-mode bound holds for it too (post-processing),
       so the masked figure is never the larger one */
    if (out->row_feature.epsilon < out->masked_row_feature.epsilon) {
      out->masked_row_feature.epsilon = out->row_feature.epsilon;
      out->masked_row_feature.method = out->row_feature.method;
      out->masked_row_feature.pld = out->row_feature.pld;
    }
    if (masked_curve) memcpy(masked_curve, mc, sizeof mc);
  }
  out->finite = 1;
  out->end_to_end = row;
  out->encoder = enc;
  set_person(out);
  return 0;
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

double bbvfl_privacy_shown(const bbvfl_privacy *p, const bbvfl_privacy_eps *e) {
  return p->reproducible ? NAN : e->epsilon;
}

static json_t *eps_json(const bbvfl_privacy *p, const bbvfl_privacy_eps *e, const char *level, const char *relation) {
  if (isnan(e->epsilon)) return json_null();
  if (p->reproducible)
    return json_pack("{s:s, s:n, s:s, s:n, s:n, s:s, s:s}", "level", level, "epsilon", "method", "none", "rdp", "pld",
                     "epsilon_void", BBVFL_PRIVACY_VOID, "relation", relation);
  return json_pack("{s:s, s:o, s:s, s:o, s:o, s:s}", "level", level, "epsilon", num(e->epsilon), "method", e->method,
                   "rdp", num(e->rdp), "pld", num(e->pld), "relation", relation);
}

static int eps_at(const bbvfl_privacy_in *in, double beta, double *eps, bbvfl_err *err) {
  bbvfl_privacy_in t = *in;
  t.beta = beta;
  t.rows = 0; /* the feature-set level is not what is calibrated */
  bbvfl_privacy p;
  if (bbvfl_privacy_compute(&t, &p, NULL, err) < 0) return -1;
  *eps = in->masked ? p.masked_row_feature.epsilon : p.row_feature.epsilon;
  return 0;
}

int bbvfl_privacy_solve_beta(const bbvfl_privacy_in *in, double target, double *beta, bbvfl_err *err) {
  if (in->kind != BBVFL_MECH_PBM) return bbvfl_fail(err, BBVFL_E_ARG, "calibration: beta is a PBM parameter");
  if (!(target > 0)) return bbvfl_fail(err, BBVFL_E_ARG, "calibration: the target epsilon must be > 0, got %g", target);
  double lo = 1e-6, hi = 0.499, e;
  if (eps_at(in, lo, &e, err) < 0) return -1;
  if (e > target)
    return bbvfl_fail(err, BBVFL_E_ARG, "calibration: even beta = %g gives epsilon %.4g > %g", lo, e, target);
  if (eps_at(in, hi, &e, err) < 0) return -1;
  if (e <= target) {
    *beta = hi;
    return 0;
  }
  while (hi - lo > 1e-6 * hi) {
    double mid = 0.5 * (lo + hi);
    if (eps_at(in, mid, &e, err) < 0) return -1;
    if (e <= target) lo = mid;
    else hi = mid;
  }
  *beta = lo;
  return 0;
}

const char *bbvfl_privacy_scope(const bbvfl_privacy *p) {
  return p->end_to_end ? (p->encoder ? BBVFL_ACCT_SCOPE_ENCODER : BBVFL_ACCT_SCOPE_ROW) : BBVFL_ACCT_SCOPE;
}

double bbvfl_privacy_headline(const bbvfl_privacy *p) { return bbvfl_privacy_shown(p, &p->person); }

int bbvfl_privacy_labels_protected(const bbvfl_privacy *p) { return isfinite(p->labels.epsilon); }

void bbvfl_privacy_json_top(json_t *o, const bbvfl_privacy *p) {
  json_object_set_new(o, "headline", json_string(BBVFL_PRIVACY_HEADLINE));
  json_object_set_new(o, "epsilon_sample", p->reproducible ? json_null() : num(p->person.epsilon));
  json_object_set_new(o, "epsilon_sample_level", json_string(BBVFL_PRIVACY_HEADLINE));
  json_object_set_new(o, "epsilon_sample_method", json_string(p->reproducible ? "none" : p->person.method));
  json_object_set_new(o, "labels_protected", json_boolean(bbvfl_privacy_labels_protected(p)));
  json_object_set_new(o, "epsilon_sample_features", p->reproducible ? json_null() : num(p->row_sample.epsilon));
  json_object_set_new(o, "epsilon_sample_features_level", json_string("per_person_features"));
  json_object_set_new(o, "epsilon_feature", p->reproducible ? json_null() : num(p->row_feature.epsilon));
  json_object_set_new(o, "epsilon_feature_level", json_string("per_party"));
  if (p->reproducible) json_object_set_new(o, "epsilon_void", json_string(BBVFL_PRIVACY_VOID));
}

json_t *bbvfl_privacy_json(const bbvfl_privacy *p) {
  /* the per-person level first (insertion order is kept in the output) */
  json_t *o = json_pack("{s:s, s:s, s:f, s:b, s:b, s:b, s:s, s:o, s:o, s:o}", "headline", BBVFL_PRIVACY_HEADLINE,
                        "headline_relation", "person", "delta", p->delta, "finite", p->finite, "labels_protected",
                        bbvfl_privacy_labels_protected(p), "end_to_end", p->end_to_end, "scope",
                        bbvfl_privacy_scope(p), "person",
                        eps_json(p, &p->person, BBVFL_PRIVACY_HEADLINE,
                                 bbvfl_privacy_labels_protected(p)
                                     ? "per person: one person's whole record, every party's features of the row "
                                       "and its label (the label's randomized response composed in)"
                                     : "per person: one person's whole record; unbounded: its label is unprotected "
                                       "(the posted gradients give the training labels back)"),
                        "row_sample",
                        eps_json(p, &p->row_sample, "per_person_features",
                                 "per person, features only: every party's features of one row, not its label"),
                        "row_feature",
                        eps_json(p, &p->row_feature, "per_party", "per party: one party's features of one row"));
  if (!o) return NULL;
  json_object_set_new(o, "reproducible_noise", json_boolean(p->reproducible));
  if (p->reproducible) json_object_set_new(o, "epsilon_void", json_string(BBVFL_PRIVACY_VOID));
  if (p->end_to_end) json_object_set_new(o, "encoder", json_string(p->encoder ? "pca" : "dpsgd"));
  json_t *fs = eps_json(p, &p->feature_set, "per_party_column_set",
                        "per party, column set: one party's whole column set, every row");
  if (json_is_object(fs)) json_object_set_new(fs, "rows", json_integer(p->rows));
  json_t *mk = eps_json(p, &p->masked_row_feature, "per_party_masked",
                        "per party, masked: one party's features of one row, against colluding participants");
  if (json_is_object(mk)) {
    json_object_set_new(mk, "colluding", json_integer(p->colluding));
    json_object_set_new(mk, "participants", json_integer(p->participants));
  }
  json_t *lb = json_pack("{s:s, s:o, s:s, s:s}", "level", "labels", "epsilon",
                         num(bbvfl_privacy_shown(p, &p->labels)), "method",
                         p->reproducible && isfinite(p->labels.epsilon) ? "none" : p->labels.method, "relation",
                         isfinite(p->labels.epsilon)
                             ? "label level: one row's label; randomized response once per training row (pure, delta 0)"
                             : "label level: unprotected; the posted gradients give the training labels back");
  if (lb && p->reproducible && isfinite(p->labels.epsilon))
    json_object_set_new(lb, "epsilon_void", json_string(BBVFL_PRIVACY_VOID));
  if (json_object_set_new(o, "feature_set", fs) || json_object_set_new(o, "masked_row_feature", mk) ||
      json_object_set_new(o, "labels", lb)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Appends to buf like snprintf; returns the length the whole line needs. */
static size_t add(char *buf, size_t n, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static size_t add(char *buf, size_t n, size_t at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = at < n ? vsnprintf(buf + at, n - at, fmt, ap) : vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  return k > 0 ? at + (size_t)k : at;
}

size_t bbvfl_privacy_line(const bbvfl_privacy *p, char *buf, size_t n) {
  if (n) buf[0] = 0;
  if (p->reproducible)
    return add(buf, n, 0, "every epsilon is %s: per person none; per party none; labels %s", BBVFL_PRIVACY_VOID,
               isfinite(p->labels.epsilon) ? "none (their randomized response is regenerable too)" : "unprotected");
  if (!p->finite)
    return add(buf, n, 0, "no privacy guarantee for the features (no noise: every epsilon is infinite); labels %s",
               isfinite(p->labels.epsilon) ? "protected by randomized response (see JSON)" : "unprotected");
  const char *scope = p->end_to_end ? (p->encoder ? "end-to-end (row mode, DP-PCA encoder, each row released once)"
                                                  : "end-to-end (row mode)")
                                    : "not end-to-end";
  size_t at = isfinite(p->person.epsilon)
                  ? add(buf, n, 0, "epsilon at delta %g, %s: per person (one person's whole record: every party's "
                        "columns of the row and its label) %.4g (%s)", p->delta, scope, p->person.epsilon,
                        p->person.method)
                  : add(buf, n, 0, "epsilon at delta %g, %s: per person unbounded (the labels are unprotected: the "
                        "posted gradients give them back; --label-epsilon protects them)", p->delta, scope);
  at = add(buf, n, at, "; per person, features only %.4g (%s); per party (one party's columns of a row) %.4g (%s)",
           p->row_sample.epsilon, p->row_sample.method, p->row_feature.epsilon, p->row_feature.method);
  if (!isnan(p->feature_set.epsilon))
    at = add(buf, n, at, "; per party, whole column set of %d rows %.4g (%s)", p->rows, p->feature_set.epsilon,
             p->feature_set.method);
  if (!isnan(p->masked_row_feature.epsilon))
    at = add(buf, n, at, "; per party, masked, against %d colluding of %d participants %.4g (%s)",
             p->colluding, p->participants, p->masked_row_feature.epsilon, p->masked_row_feature.method);
  if (isfinite(p->labels.epsilon))
    at = add(buf, n, at, "; labels (one row's label) %.4g (randomized response, pure)", p->labels.epsilon);
  else
    at = add(buf, n, at, "; labels unprotected (read back from the posted gradients)");
  return at;
}
