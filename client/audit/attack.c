#include "audit/attack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audit/leak.h"
#include "core/cfgprivacy.h"
#include "core/head.h"
#include "offchain/offchain.h"

void bbvfl_attack_defaults(bbvfl_attack_cfg *a) {
  memset(a, 0, sizeof *a);
  bbvfl_offchain_defaults(&a->cfg);
  a->victim = 0;
  a->shadows = 3;
  a->delta = 1e-5;
}

/* Cholesky solve of the k x k SPD system A X = B (B: k x d, overwritten with X). */
static int chol_solve(double *A, double *B, size_t k, size_t d) {
  for (size_t j = 0; j < k; j++) {
    double s = A[j * k + j];
    for (size_t q = 0; q < j; q++) s -= A[j * k + q] * A[j * k + q];
    if (!(s > 0)) return -1;
    A[j * k + j] = sqrt(s);
    for (size_t i = j + 1; i < k; i++) {
      double v = A[i * k + j];
      for (size_t q = 0; q < j; q++) v -= A[i * k + q] * A[j * k + q];
      A[i * k + j] = v / A[j * k + j];
    }
  }
  for (size_t c = 0; c < d; c++) {
    for (size_t i = 0; i < k; i++) { /* L y = b */
      double v = B[i * d + c];
      for (size_t q = 0; q < i; q++) v -= A[i * k + q] * B[q * d + c];
      B[i * d + c] = v / A[i * k + i];
    }
    for (size_t i = k; i-- > 0;) { /* L^T x = y */
      double v = B[i * d + c];
      for (size_t q = i + 1; q < k; q++) v -= A[q * k + i] * B[q * d + c];
      B[i * d + c] = v / A[i * k + i];
    }
  }
  return 0;
}

/* The ridge decoder [rel, 1] -> x fitted on n rows into W ((P+1) x d), the column means into mean. */
static int fit_decoder(const float *rel, const float *x, size_t n, size_t P, size_t d, double ridge, double *A,
                       double *W, double *mean) {
  size_t k = P + 1;
  memset(A, 0, k * k * sizeof *A);
  memset(W, 0, k * d * sizeof *W);
  memset(mean, 0, d * sizeof *mean);
  for (size_t r = 0; r < n; r++) {
    const float *z = rel + r * P, *xr = x + r * d;
    for (size_t i = 0; i < k; i++) {
      double zi = i < P ? z[i] : 1.0;
      for (size_t j = 0; j < k; j++) A[i * k + j] += zi * (j < P ? z[j] : 1.0);
      for (size_t c = 0; c < d; c++) W[i * d + c] += zi * xr[c];
    }
    for (size_t c = 0; c < d; c++) mean[c] += xr[c] / (double)n;
  }
  for (size_t i = 0; i < P; i++) A[i * k + i] += ridge * (double)n;
  return chol_solve(A, W, k, d);
}

/* The attacker's guards around its decoder, learnt from the rows it fits on (never the victim's
   columns): releases are centred at the coordinate-wise median of the fitting rows' releases; a
   release farther from that centre than any fitting row's is taken as one the mechanism scaled up
   (VFL-AFE's rescaling multiplies a batch by 2t / its estimated disparity, a data-dependent factor
   that can reach hundreds on a batch of similar rows) and is brought back to the fitting rows'
   median distance, its direction kept, so the decoder is never applied outside the range it was
   fitted on; and each decoded column is clamped to the fitting rows' range of that column. */
typedef struct {
  double *centre;      /* P */
  double rmax, rmed;   /* the fitting rows' largest and median distance from centre */
  double *lo, *hi;     /* d: each column's range over the fitting rows */
} guard;

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* g's arrays are the caller's (centre: P, lo and hi: d); tmp holds n doubles. */
static void guard_fit(guard *g, const float *rel, const float *x, size_t n, size_t P, size_t d, double *tmp) {
  for (size_t i = 0; i < P; i++) {
    for (size_t r = 0; r < n; r++) tmp[r] = rel[r * P + i];
    qsort(tmp, n, sizeof *tmp, cmp_dbl);
    g->centre[i] = n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
  }
  g->rmax = 0;
  for (size_t r = 0; r < n; r++) {
    double q = 0;
    for (size_t i = 0; i < P; i++) q += (rel[r * P + i] - g->centre[i]) * (rel[r * P + i] - g->centre[i]);
    tmp[r] = sqrt(q);
    if (tmp[r] > g->rmax) g->rmax = tmp[r];
  }
  qsort(tmp, n, sizeof *tmp, cmp_dbl);
  g->rmed = n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
  for (size_t c = 0; c < d; c++) g->lo[c] = INFINITY, g->hi[c] = -INFINITY;
  for (size_t r = 0; r < n; r++)
    for (size_t c = 0; c < d; c++) {
      if (x[r * d + c] < g->lo[c]) g->lo[c] = x[r * d + c];
      if (x[r * d + c] > g->hi[c]) g->hi[c] = x[r * d + c];
    }
}

/* One release z (P) as the decoder sees it, into out (P). */
static void guard_release(const guard *g, const float *z, size_t P, double *out) {
  double q = 0;
  for (size_t i = 0; i < P; i++) {
    out[i] = z[i] - g->centre[i];
    q += out[i] * out[i];
  }
  q = sqrt(q);
  double f = q > g->rmax ? g->rmed / q : 1.0;
  for (size_t i = 0; i < P; i++) out[i] = g->centre[i] + out[i] * f;
}

/* Mean squared error per column of the decoder (W, behind g's guards) and of the means on n rows;
   zt holds P doubles. */
static void score_decoder(const double *W, const double *mean, const guard *g, const float *rel, const float *x,
                          size_t n, size_t P, size_t d, double *zt, double *mse, double *base) {
  double se = 0, sb = 0;
  for (size_t r = 0; r < n; r++) {
    const float *xr = x + r * d;
    guard_release(g, rel + r * P, P, zt);
    for (size_t c = 0; c < d; c++) {
      double y = W[P * d + c];
      for (size_t i = 0; i < P; i++) y += zt[i] * W[i * d + c];
      if (y < g->lo[c]) y = g->lo[c];
      if (y > g->hi[c]) y = g->hi[c];
      se += (y - xr[c]) * (y - xr[c]);
      sb += (mean[c] - xr[c]) * (mean[c] - xr[c]);
    }
  }
  *mse = se / (double)(n * d);
  *base = sb / (double)(n * d);
}

int bbvfl_attack_inversion(const float *aux_rel, const float *aux_x, size_t n_aux, const float *vic_rel,
                           const float *vic_x, size_t n_vic, size_t P, size_t d, double ridge, bbvfl_inversion *out,
                           bbvfl_err *err) {
  if (n_aux < 2 || n_vic < 1 || P < 1 || d < 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "inversion: %zu aux rows, %zu victim rows (at least 2 and 1)", n_aux, n_vic);
  size_t k = P + 1;
  double *A = calloc(k * k, sizeof *A), *W = calloc(k * d, sizeof *W), *mean = calloc(d, sizeof *mean);
  double *gb = calloc(P + 2 * d + P + n_aux, sizeof *gb);
  int rc = -1, use_mean = 0;
  if (!A || !W || !mean || !gb) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  guard g = {.centre = gb, .lo = gb + P, .hi = gb + P + d};
  double *zt = gb + P + 2 * d, *tmp = zt + P;
  if (ridge <= 0) {
    /* the attacker's own choice: the ridge that predicts the second half of its rows best from
       the first (guards learnt on the first half), or no decoder at all (the means) when none
       beats them there */
    static const double grid[] = {1e-4, 1e-2, 1, 100};
    size_t h = n_aux / 2;
    double best = INFINITY, base = INFINITY;
    ridge = grid[0];
    guard_fit(&g, aux_rel, aux_x, h, P, d, tmp);
    for (size_t q = 0; q < sizeof grid / sizeof grid[0]; q++) {
      double mse;
      if (fit_decoder(aux_rel, aux_x, h, P, d, grid[q], A, W, mean) != 0) continue;
      score_decoder(W, mean, &g, aux_rel + h * P, aux_x + h * d, n_aux - h, P, d, zt, &mse, &base);
      if (mse < best) best = mse, ridge = grid[q];
    }
    use_mean = !(best < base);
  }
  if (fit_decoder(aux_rel, aux_x, n_aux, P, d, ridge, A, W, mean) != 0) {
    bbvfl_fail(err, BBVFL_E_ARG, "inversion: the decoder's system is singular (constant releases?)");
    goto out;
  }
  if (use_mean) {
    memset(W, 0, k * d * sizeof *W);
    memcpy(W + P * d, mean, d * sizeof *W);
  }
  guard_fit(&g, aux_rel, aux_x, n_aux, P, d, tmp);
  score_decoder(W, mean, &g, vic_rel, vic_x, n_vic, P, d, zt, &out->mse, &out->mse_base);
  out->gain = out->mse_base > 0 ? 1.0 - out->mse / out->mse_base : 0;
  rc = 0;
out:
  free(A);
  free(W);
  free(mean);
  free(gb);
  return rc;
}

/* Student's t, two-sided 95% (the 0.975 quantile), at df degrees of freedom: the table to 30, then
   the Cornish-Fisher expansion in 1/df (within 1e-3 of the exact value from 30 on). */
static double t975(int df) {
  static const double t[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                               2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df <= 30) return t[df - 1];
  double z = 1.959964, g = (double)df;
  return z + (z * z * z + z) / (4 * g) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * g * g);
}

void bbvfl_attack_estimate(const double *v, int n, bbvfl_attack_est *out) {
  double s = 0, ss = 0;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!isnan(v[i])) s += v[i], k++;
  out->n = k;
  out->mean = k ? s / k : NAN;
  out->sd = out->ci = NAN;
  if (k < 2) return;
  for (int i = 0; i < n; i++)
    if (!isnan(v[i])) ss += (v[i] - out->mean) * (v[i] - out->mean);
  out->sd = sqrt(ss / (k - 1));
  out->ci = t975(k - 1) * out->sd / sqrt((double)k);
}

/* members: loss <= thr */
static double balanced(const double *in, size_t nin, const double *o, size_t nout, double thr, double *tpr,
                       double *fpr) {
  size_t tp = 0, fp = 0;
  for (size_t i = 0; i < nin; i++) tp += in[i] <= thr;
  for (size_t i = 0; i < nout; i++) fp += o[i] <= thr;
  *tpr = (double)tp / (double)nin;
  *fpr = (double)fp / (double)nout;
  return 0.5 * (*tpr + 1.0 - *fpr);
}

int bbvfl_attack_membership(const double *sh_in, size_t n_sh_in, const double *sh_out, size_t n_sh_out,
                            const double *tg_in, size_t n_tg_in, const double *tg_out, size_t n_tg_out,
                            bbvfl_membership *out, bbvfl_err *err) {
  if (!n_sh_in || !n_sh_out || !n_tg_in || !n_tg_out) return bbvfl_fail(err, BBVFL_E_ARG, "membership: an empty set of rows");
  double best = -1, thr = -INFINITY, tpr, fpr;
  for (size_t i = 0; i < n_sh_in + n_sh_out; i++) {
    double c = i < n_sh_in ? sh_in[i] : sh_out[i - n_sh_in];
    double a = balanced(sh_in, n_sh_in, sh_out, n_sh_out, c, &tpr, &fpr);
    if (a > best) best = a, thr = c;
  }
  out->threshold = thr;
  out->accuracy = balanced(tg_in, n_tg_in, tg_out, n_tg_out, thr, &tpr, &fpr);
  out->advantage = tpr - fpr;
  return 0;
}

/* ---- the observer of one run ---- */
typedef struct {
  const bbvfl_dataset *ds;
  const int *ytrue;
  int victim, last_epoch, P, nclasses;
  size_t d;
  float *x;            /* the victim's columns, n x d */
  float *rel;          /* the victim's last release of each row, n x P */
  unsigned char *has;  /* 1: released in a training round, 2: in an evaluation round */
  size_t label_ok, label_n, *label_class;
  double *loss_in, *loss_out;
  size_t n_in, n_out;
  bbvfl_err err;       /* the first failure inside a callback */
} observer;

static void on_features(void *ctx, int m, const float *x, size_t nrows, size_t ncols) {
  observer *o = ctx;
  if (m != o->victim || o->x || o->err.code) return;
  o->x = malloc(nrows * ncols * sizeof *o->x);
  if (!o->x) {
    bbvfl_fail(&o->err, BBVFL_E_NOMEM, "out of memory");
    return;
  }
  memcpy(o->x, x, nrows * ncols * sizeof *o->x);
  o->d = ncols;
}

static void on_release(void *ctx, int m, int train, int epoch, const size_t *rows, size_t nrows, const float *hf,
                       const uint8_t *q) {
  observer *o = ctx;
  if (m != o->victim || epoch != o->last_epoch) return;
  size_t P = (size_t)o->P;
  for (size_t i = 0; i < nrows; i++) {
    float *r = o->rel + rows[i] * P;
    for (size_t k = 0; k < P; k++) r[k] = hf ? hf[i * P + k] : (float)q[i * P + k];
    o->has[rows[i]] = train ? 1 : 2;
  }
}

static void on_gradient(void *ctx, int epoch, const size_t *rows, size_t nrows, const float *grad,
                        const uint8_t *params_be, size_t params_len) {
  observer *o = ctx;
  if (epoch != o->last_epoch || o->err.code) return;
  size_t P = (size_t)o->P, n = nrows * P;
  uint8_t *gbe = malloc(n * 4);
  int *lab = malloc(nrows * sizeof *lab);
  if (!gbe || !lab) {
    bbvfl_fail(&o->err, BBVFL_E_NOMEM, "out of memory");
  } else {
    bbvfl_f32_to_be(grad, n, gbe);
    if (bbvfl_leak_labels(gbe, n * 4, nrows, P, params_be, params_len, lab, &o->err) == 0)
      for (size_t i = 0; i < nrows; i++) {
        o->label_ok += lab[i] == o->ytrue[rows[i]];
        o->label_class[o->ytrue[rows[i]]]++;
        o->label_n++;
      }
  }
  free(gbe);
  free(lab);
}

static void on_scores(void *ctx, int train, const size_t *rows, size_t n, const float *probs, int K) {
  observer *o = ctx;
  double *L = malloc(n * sizeof *L);
  if (!L) {
    bbvfl_fail(&o->err, BBVFL_E_NOMEM, "out of memory");
    return;
  }
  for (size_t i = 0; i < n; i++) {
    int y = o->ytrue[rows[i]];
    double p = K == 1 ? (y ? probs[i] : 1.0 - probs[i]) : probs[i * (size_t)K + (size_t)y];
    L[i] = -log(p > 1e-7 ? p : 1e-7);
  }
  if (train) {
    free(o->loss_in);
    o->loss_in = L;
    o->n_in = n;
  } else {
    free(o->loss_out);
    o->loss_out = L;
    o->n_out = n;
  }
}

static void observer_free(observer *o) {
  free(o->x);
  free(o->rel);
  free(o->has);
  free(o->label_class);
  free(o->loss_in);
  free(o->loss_out);
}

/* One run of cfg watched by *o (allocated here; the caller frees it with observer_free). */
static int watch(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *cfg, int victim, observer *o,
                 bbvfl_offchain_result *res, bbvfl_err *err) {
  memset(o, 0, sizeof *o);
  o->ds = ds;
  o->ytrue = ds->y;
  o->victim = victim;
  o->last_epoch = cfg->epochs - 1;
  o->P = cfg->P;
  o->nclasses = ds->nclasses;
  o->rel = calloc(ds->n * (size_t)cfg->P, sizeof *o->rel);
  o->has = calloc(ds->n, 1);
  o->label_class = calloc((size_t)ds->nclasses, sizeof *o->label_class);
  if (!o->rel || !o->has || !o->label_class) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  bbvfl_offchain_tap tap = {.ctx = o, .release = on_release, .gradient = on_gradient, .features = on_features,
                            .scores = on_scores};
  bbvfl_offchain_cfg c = *cfg;
  c.tap = &tap;
  c.on_round = NULL;
  c.on_epoch = NULL;
  if (bbvfl_offchain_train(ds, &c, res, err) != 0) return -1;
  if (o->err.code || !o->x || !o->loss_in || !o->loss_out) {
    bbvfl_offchain_result_free(res);
    if (o->err.code) {
      *err = o->err;
      return -1;
    }
    return bbvfl_fail(err, BBVFL_E_STATE, "attack: the run showed no releases or scores");
  }
  return 0;
}

int bbvfl_attack_shadow_losses(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *cfg, int shadows, double **in,
                               size_t *n_in, double **out, size_t *n_out, bbvfl_err *err) {
  *in = *out = NULL;
  *n_in = *n_out = 0;
  observer sh;
  bbvfl_offchain_result res;
  for (int s = 0; s < shadows; s++) {
    bbvfl_offchain_cfg sc = *cfg;
    sc.seed = cfg->seed + 7919u * (uint64_t)(s + 1);
    sc.split_seed = sc.seed;
    sc.session_seed = NULL;
    if (watch(ds, &sc, 0, &sh, &res, err) != 0) {
      observer_free(&sh);
      return -1;
    }
    bbvfl_offchain_result_free(&res);
    double *t1 = realloc(*in, (*n_in + sh.n_in) * sizeof **in), *t2;
    if (t1) *in = t1;
    t2 = realloc(*out, (*n_out + sh.n_out) * sizeof **out);
    if (t2) *out = t2;
    if (!t1 || !t2) {
      observer_free(&sh);
      return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    }
    memcpy(*in + *n_in, sh.loss_in, sh.n_in * sizeof **in);
    memcpy(*out + *n_out, sh.loss_out, sh.n_out * sizeof **out);
    *n_in += sh.n_in;
    *n_out += sh.n_out;
    observer_free(&sh);
  }
  return 0;
}

int bbvfl_attack_offchain(const bbvfl_dataset *ds, const bbvfl_attack_cfg *a, bbvfl_attack_result *out,
                          bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (a->cfg.model != BBVFL_MODEL_MLP) return bbvfl_fail(err, BBVFL_E_ARG, "attack: the MLP model only");
  if (a->victim < 0 || a->victim >= a->cfg.M)
    return bbvfl_fail(err, BBVFL_E_ARG, "attack: victim client %d of %d", a->victim, a->cfg.M);
  if (a->shadows < 1 || a->shadows > 20) return bbvfl_fail(err, BBVFL_E_ARG, "attack: 1..20 shadow models, got %d", a->shadows);
  observer tg;
  bbvfl_offchain_result res;
  double *sin = NULL, *sout = NULL;
  float *ar = NULL, *ax = NULL, *vr = NULL, *vx = NULL;
  int rc = -1;
  if (watch(ds, &a->cfg, a->victim, &tg, &res, err) != 0) goto out;
  out->test_accuracy = res.per_epoch[res.epochs - 1].accuracy;
  bbvfl_privacy pv;
  if (bbvfl_cfg_privacy(&a->cfg, res.n_train, 0, 0, a->delta, &pv, err) != 0) {
    bbvfl_offchain_result_free(&res);
    goto out;
  }
  bbvfl_offchain_result_free(&res);
  out->epsilon = pv.finite ? pv.row_feature.epsilon : INFINITY;
  out->epsilon_person = pv.person.epsilon;
  /* labels */
  size_t maj = 0;
  for (int k = 0; k < ds->nclasses; k++)
    if (tg.label_class[k] > maj) maj = tg.label_class[k];
  out->label_acc = tg.label_n ? (double)tg.label_ok / (double)tg.label_n : NAN;
  out->label_chance = tg.label_n ? (double)maj / (double)tg.label_n : NAN;
  out->label_rr = a->cfg.label_eps > 0 ? exp(a->cfg.label_eps) / (exp(a->cfg.label_eps) + ds->nclasses - 1) : NAN;
  /* inversion: aux = rows released in evaluation rounds, victims = rows released in training rounds */
  size_t na = 0, nv = 0, P = (size_t)a->cfg.P, d = tg.d;
  for (size_t r = 0; r < ds->n; r++) na += tg.has[r] == 2, nv += tg.has[r] == 1;
  ar = malloc((na + 1) * P * sizeof *ar);
  ax = malloc((na + 1) * d * sizeof *ax);
  vr = malloc((nv + 1) * P * sizeof *vr);
  vx = malloc((nv + 1) * d * sizeof *vx);
  if (!ar || !ax || !vr || !vx) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  na = nv = 0;
  for (size_t r = 0; r < ds->n; r++) {
    if (tg.has[r] == 2) {
      memcpy(ar + na * P, tg.rel + r * P, P * sizeof *ar);
      memcpy(ax + na * d, tg.x + r * d, d * sizeof *ax);
      na++;
    } else if (tg.has[r] == 1) {
      memcpy(vr + nv * P, tg.rel + r * P, P * sizeof *vr);
      memcpy(vx + nv * d, tg.x + r * d, d * sizeof *vx);
      nv++;
    }
  }
  if (bbvfl_attack_inversion(ar, ax, na, vr, vx, nv, P, d, 0, &out->inv, err) != 0) goto out;
  /* membership: shadows on other splits and seeds */
  size_t nsi = 0, nso = 0;
  if (bbvfl_attack_shadow_losses(ds, &a->cfg, a->shadows, &sin, &nsi, &sout, &nso, err) != 0) goto out;
  if (bbvfl_attack_membership(sin, nsi, sout, nso, tg.loss_in, tg.n_in, tg.loss_out, tg.n_out, &out->mia, err) != 0)
    goto out;
  out->mia_in = tg.n_in, out->mia_out = tg.n_out;
  rc = 0;
out:
  observer_free(&tg);
  free(sin);
  free(sout);
  free(ar);
  free(ax);
  free(vr);
  free(vx);
  return rc;
}
