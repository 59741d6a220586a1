#include "core/headcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/head.h"
#include "core/lr_client.h"

#define NO_CLASS (-2)   /* class memory: not seen yet */
#define NONE_CLASS (-1) /* class memory: a zero row (labels split: a row nobody claimed) */
#define DECIDERS 65     /* class memories: client index 0..63, then an active client not named */

struct bbvfl_hcheck {
  int lr, sqn;
  int P, nclasses, K;
  size_t B, lb, n_rows;
  double rel_tol, label_tol;
  /* MLP: the session's head */
  bbvfl_vhead vh;
  int have_vh;
  /* LR: the session's setup and the head block (the biases) */
  bbvfl_lr_setup st;
  bbvfl_lr_block lrh;
  int have_lr;
  float *lr_dz; /* lb x K: the open logical batch's dLoss/dz */
  /* per client that decides rows' classes (a label holder for the rows it posts, the active
     client for the others: in->active, DECIDERS - 1 when not named), allocated at its first row:
     per training row the class it implied (NONE_CLASS: a zero row), and the round that showed
     it first. Kept across re-elections: a client elected again is held to its own earlier
     classes, a newly elected one starts its own memory (it trains on its own labels). */
  int16_t *cls[DECIDERS];
  uint64_t *cls_round[DECIDERS];
  /* scratch (grown to the largest round) */
  size_t cap_rows;
  float *hhat, *g, *dx, *post, *w0, *dlog, *cand;
  double *p0; /* rows x K: probabilities at the window's start (split) */
  int *y;
  unsigned char *held;
  size_t nparams;
  float *pp; /* nparams: the posted parameters */
  float *wk; /* nparams: the head of the moment, kept aside (split) */
  int any;
  uint64_t last_round;
  int latched;
  bbvfl_hcheck_result first;
  bbvfl_hcheck_stats stats;
};

const char *bbvfl_hcheck_verdict_name(bbvfl_hcheck_verdict v) {
  switch (v) {
  case BBVFL_HC_OK: return "ok";
  case BBVFL_HC_MALFORMED: return "malformed";
  case BBVFL_HC_SUM_INVALID: return "sum invalid";
  case BBVFL_HC_LABEL_NOT_CLASS: return "label not a class";
  case BBVFL_HC_LABEL_CHANGED: return "label changed between epochs";
  case BBVFL_HC_GRADIENT_MISMATCH: return "gradient mismatch";
  case BBVFL_HC_PARAMS_NOT_STEP: return "params not the step";
  case BBVFL_HC_HOLDER_NOT_CLASS: return "holder label not a class";
  case BBVFL_HC_HOLDER_CHANGED: return "holder label changed";
  case BBVFL_HC_ORDER: return "rounds out of order";
  }
  return "?";
}

void bbvfl_hcheck_describe(const bbvfl_hcheck_result *r, char *buf, size_t n) {
  if (!n) return;
  int w = snprintf(buf, n, "round %llu (epoch %d): %s", (unsigned long long)r->round, r->epoch + 1,
                   bbvfl_hcheck_verdict_name(r->verdict));
  size_t u = w < 0 ? 0 : (size_t)w;
#define ADD(...)                                                                                                       \
  do {                                                                                                                 \
    if (u < n) {                                                                                                       \
      int k = snprintf(buf + u, n - u, __VA_ARGS__);                                                                   \
      u += k < 0 ? 0 : (size_t)k;                                                                                      \
    }                                                                                                                  \
  } while (0)
  if (r->verdict == BBVFL_HC_OK) {
    ADD(r->exact ? ", exact" : ", within tolerance (max deviation %.3g)", r->max_dev);
    return;
  }
  if (r->holder >= 0) ADD(", label holder %d", r->holder);
  if (r->batch != SIZE_MAX) ADD(", batch %zu", r->batch);
  if (r->row != SIZE_MAX) ADD(", row %zu", r->row);
  if (r->train_row != SIZE_MAX) ADD(" (training row %zu)", r->train_row);
  switch (r->verdict) {
  case BBVFL_HC_LABEL_NOT_CLASS:
  case BBVFL_HC_HOLDER_NOT_CLASS:
    ADD(": the implied label is %.4g label units from class %d (tolerance %g)", r->label_dist, r->cls, r->tol);
    break;
  case BBVFL_HC_LABEL_CHANGED:
  case BBVFL_HC_HOLDER_CHANGED:
    if (r->cls < 0)
      ADD(": a zero row (no class: its gradient dropped), but class %d in round %llu", r->prev_cls,
          (unsigned long long)r->prev_round);
    else if (r->prev_cls < 0)
      ADD(": implies class %d, but a zero row (no class) in round %llu", r->cls, (unsigned long long)r->prev_round);
    else
      ADD(": implies class %d, but class %d in round %llu", r->cls, r->prev_cls, (unsigned long long)r->prev_round);
    break;
  case BBVFL_HC_GRADIENT_MISMATCH:
  case BBVFL_HC_PARAMS_NOT_STEP:
    if (r->coord != SIZE_MAX) ADD(", coordinate %zu", r->coord);
    ADD(": posted %.9g, replayed %.9g (max deviation %.3g, tolerance %.3g)", r->posted, r->expected, r->max_dev,
        r->tol);
    break;
  default: break;
  }
#undef ADD
}

/* The buffers sized by the rows of a round (grow's), freed. */
static void free_rows(bbvfl_hcheck *h) {
  free(h->hhat);
  free(h->g);
  free(h->dx);
  free(h->post);
  free(h->w0);
  free(h->dlog);
  free(h->cand);
  free(h->p0);
  free(h->y);
  free(h->held);
}

void bbvfl_hcheck_free(bbvfl_hcheck *h) {
  if (!h) return;
  if (h->have_vh) bbvfl_vhead_free(&h->vh);
  if (h->have_lr) bbvfl_lr_block_free(&h->lrh);
  free(h->lr_dz);
  for (int d = 0; d < DECIDERS; d++) {
    free(h->cls[d]);
    free(h->cls_round[d]);
  }
  free_rows(h);
  free(h->pp);
  free(h->wk);
  free(h);
}

/* The class memory of decider d (client index, or -1: the active client not named), allocated
   at first use (NO_CLASS everywhere); -1 out of memory. */
static int memory_of(bbvfl_hcheck *h, int d, bbvfl_err *err) {
  int k = d >= 0 && d < DECIDERS - 1 ? d : DECIDERS - 1;
  if (h->cls[k]) return k;
  h->cls[k] = malloc(h->n_rows * sizeof *h->cls[k]);
  h->cls_round[k] = calloc(h->n_rows, sizeof *h->cls_round[k]);
  if (!h->cls[k] || !h->cls_round[k]) {
    free(h->cls[k]);
    free(h->cls_round[k]);
    h->cls[k] = NULL;
    h->cls_round[k] = NULL;
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < h->n_rows; i++) h->cls[k][i] = NO_CLASS;
  return k;
}

int bbvfl_hcheck_new(bbvfl_hcheck **out, const bbvfl_hcheck_cfg *cfg, bbvfl_err *err) {
  *out = NULL;
  if (!cfg->train) return bbvfl_fail(err, BBVFL_E_ARG, "head check: no training setup");
  if (cfg->P < 1 || cfg->nclasses < 2 || cfg->B < 1 || cfg->n_rows < 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "head check: P %d, %d classes, batch %zu, %zu rows", cfg->P, cfg->nclasses,
                      cfg->B, cfg->n_rows);
  if (cfg->nclasses > 256) return bbvfl_fail(err, BBVFL_E_ARG, "head check: %d classes, at most 256", cfg->nclasses);
  if (cfg->rel_tol < 0 || cfg->label_tol < 0 || !isfinite(cfg->rel_tol) || !isfinite(cfg->label_tol))
    return bbvfl_fail(err, BBVFL_E_ARG, "head check: tolerances must be finite and >= 0");
  bbvfl_hcheck *h = calloc(1, sizeof *h);
  if (!h) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  h->lr = cfg->train->model == BBVFL_MODEL_LR;
  h->P = cfg->P;
  h->nclasses = cfg->nclasses;
  h->K = cfg->nclasses == 2 ? 1 : cfg->nclasses;
  h->B = cfg->B;
  h->lb = cfg->lb ? cfg->lb : cfg->B;
  h->n_rows = cfg->n_rows;
  h->rel_tol = cfg->rel_tol > 0 ? cfg->rel_tol : BBVFL_HCHECK_REL_TOL;
  h->label_tol = cfg->label_tol > 0 ? cfg->label_tol : BBVFL_HCHECK_LABEL_TOL;
  if (h->lr) {
    if (bbvfl_lr_setup_init(&h->st, cfg->train, cfg->nclasses, err) < 0) goto fail;
    if (h->st.K != cfg->P) {
      bbvfl_fail(err, BBVFL_E_ARG, "head check: --model lr releases %d values per row, the session's P is %d", h->st.K,
                 cfg->P);
      goto fail;
    }
    if (bbvfl_lr_block_init(&h->lrh, (size_t)h->K, cfg->train, err) < 0) goto fail;
    h->have_lr = 1;
    h->sqn = cfg->train->opt.kind == BBVFL_OPT_SQN;
    h->nparams = (size_t)h->K;
    h->lr_dz = calloc(h->lb * (size_t)h->K, sizeof *h->lr_dz);
    if (!h->lr_dz) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto fail;
    }
  } else {
    if (bbvfl_vhead_init(&h->vh, cfg->P, cfg->nclasses, cfg->train->M, &cfg->train->mech, &cfg->train->opt,
                         cfg->seed, err) < 0)
      goto fail;
    h->have_vh = 1;
    h->nparams = bbvfl_vhead_nparams(&h->vh);
  }
  h->pp = malloc(h->nparams * sizeof *h->pp);
  h->wk = malloc(h->nparams * sizeof *h->wk);
  if (!h->pp || !h->wk) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto fail;
  }
  *out = h;
  return 0;
fail:
  bbvfl_hcheck_free(h);
  return bbvfl_wrap(err, "head check");
}

void bbvfl_hcheck_takeover(bbvfl_hcheck *h) {
  bbvfl_optim *o = h->lr ? &h->lrh.opt : &h->vh.opt;
  o->t = 0;
  memset(o->m, 0, o->n * sizeof *o->m);
  memset(o->v, 0, o->n * sizeof *o->v);
}

void bbvfl_hcheck_get_stats(const bbvfl_hcheck *h, bbvfl_hcheck_stats *st) { *st = h->stats; }

static int grow(bbvfl_hcheck *h, size_t rows, bbvfl_err *err) {
  if (rows <= h->cap_rows) return 0;
  size_t P = (size_t)h->P, K = (size_t)h->K, C = (size_t)h->nclasses, PK = P > K ? P : K;
  float *a[7];
  size_t sz[7] = {rows * P, rows * P, rows * PK, rows * PK, h->nparams, rows * K, C * rows * K};
  for (int i = 0; i < 7; i++) a[i] = malloc((sz[i] ? sz[i] : 1) * sizeof(float));
  double *p0 = malloc(rows * K * sizeof *p0);
  int *y = malloc(rows * sizeof *y);
  unsigned char *held = malloc(rows);
  int bad = !p0 || !y || !held;
  for (int i = 0; i < 7; i++) bad |= !a[i];
  if (bad) {
    for (int i = 0; i < 7; i++) free(a[i]);
    free(p0);
    free(y);
    free(held);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  free_rows(h);
  h->hhat = a[0];
  h->g = a[1];
  h->dx = a[2];
  h->post = a[3];
  h->w0 = a[4];
  h->dlog = a[5];
  h->cand = a[6];
  h->p0 = p0;
  h->y = y;
  h->held = held;
  h->cap_rows = rows;
  return 0;
}

static void res_init(bbvfl_hcheck_result *r, const bbvfl_hcheck_input *in) {
  memset(r, 0, sizeof *r);
  r->verdict = BBVFL_HC_OK;
  r->round = in->round;
  r->epoch = in->epoch;
  r->batch = r->row = r->train_row = r->coord = SIZE_MAX;
  r->holder = -1;
  r->cls = r->prev_cls = -1;
}

static int decode_checked(const uint8_t *in, size_t n, float *out) {
  bbvfl_f32_from_be(in, n, out);
  for (size_t i = 0; i < n; i++)
    if (!isfinite(out[i])) return -1;
  return 0;
}

/* Compares posted with replayed (n values): max deviation, tolerance rel_tol * max|replayed|, the
   first coordinate beyond it (SIZE_MAX: none); *exact 0 when any value differs. */
static size_t compare(const bbvfl_hcheck *h, const float *posted, const float *rep, size_t n, double *maxdev,
                      double *tol, int *exact) {
  double mx = 0, dev = 0;
  for (size_t i = 0; i < n; i++) {
    double a = fabs((double)rep[i]);
    if (a > mx) mx = a;
  }
  *tol = h->rel_tol * mx;
  size_t first = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)posted[i] - (double)rep[i]);
    if (posted[i] != rep[i]) *exact = 0;
    if (d > dev) dev = d;
    if (d > *tol && first == SIZE_MAX) first = i;
  }
  *maxdev = dev;
  return first;
}

static double rel(double dev, const float *rep, size_t n) {
  double mx = 0;
  for (size_t i = 0; i < n; i++) mx = fabs((double)rep[i]) > mx ? fabs((double)rep[i]) : mx;
  return mx > 0 ? dev / mx : dev;
}

/* The row's class in decider d's memory (c: a class, or -1 a zero row, remembered too): 0
   consistent (and noted), 1 changed (r filled), -1 error. */
static int remember(bbvfl_hcheck *h, const bbvfl_hcheck_input *in, size_t row, int c, int d, bbvfl_hcheck_result *r,
                    bbvfl_err *err) {
  if (!in->rows) return 0;
  size_t t = in->rows[row];
  if (t >= h->n_rows) return 0;
  int k = memory_of(h, d, err);
  if (k < 0) return -1;
  int16_t *m = h->cls[k];
  if (c < 0) c = NONE_CLASS;
  if (m[t] == NO_CLASS) {
    m[t] = (int16_t)c;
    h->cls_round[k][t] = in->round;
    return 0;
  }
  if (m[t] == c) return 0;
  r->cls = c;
  r->prev_cls = m[t];
  r->prev_round = h->cls_round[k][t];
  return 1;
}

static void set_row(const bbvfl_hcheck *h, const bbvfl_hcheck_input *in, size_t row, bbvfl_hcheck_result *r) {
  r->batch = row / h->B;
  r->row = row;
  r->train_row = in->rows ? in->rows[row] : SIZE_MAX;
}

/* A training row's class c (-1: a zero row, labels split), implied at distance dist by its
   posted gradient (holder < 0: the active client, in->active, decides) or by label holder
   `holder`'s post: 1 refused (r filled, the holder named: not a class within the tolerance, or
   not the class, or zero row, the same decider gave the row before), 0 accepted (a class from the
   posted gradient noted in h->y), -1 error. */
static int row_class(bbvfl_hcheck *h, const bbvfl_hcheck_input *in, size_t row, int c, double dist, int holder,
                     bbvfl_hcheck_result *r, bbvfl_err *err) {
  if (dist > h->label_tol) {
    r->verdict = holder < 0 ? BBVFL_HC_LABEL_NOT_CLASS : BBVFL_HC_HOLDER_NOT_CLASS;
    r->holder = holder;
    r->cls = c;
    r->label_dist = dist;
    r->tol = h->label_tol;
    set_row(h, in, row, r);
    return 1;
  }
  int ch = remember(h, in, row, c, holder < 0 ? in->active : holder, r, err);
  if (ch < 0) return -1;
  if (ch) {
    r->verdict = holder < 0 ? BBVFL_HC_LABEL_CHANGED : BBVFL_HC_HOLDER_CHANGED;
    r->holder = holder;
    set_row(h, in, row, r);
    return 1;
  }
  if (holder < 0) h->y[row] = c;
  return 0;
}

/* Probabilities (K values; binary: P(class 1)) of row x under the head's parameters W (P x K) and
   bias, in double. */
static void probs_at(const bbvfl_hcheck *h, const float *W, const float *x, double *p) {
  int K = h->K, P = h->P;
  const float *b = W + (size_t)P * K;
  double z[256 + 1];
  double *zz = K <= 256 ? z : NULL;
  if (!zz) return; /* nclasses is bounded by the session (BBVFL_SESSION_MAX_CLASSES) */
  for (int k = 0; k < K; k++) {
    double s = b[k];
    for (int j = 0; j < P; j++) s += (double)x[j] * W[(size_t)j * K + k];
    zz[k] = s;
  }
  if (K == 1) {
    p[0] = zz[0] >= 0 ? 1 / (1 + exp(-zz[0])) : exp(zz[0]) / (1 + exp(zz[0]));
    return;
  }
  double mx = zz[0], s = 0;
  for (int k = 1; k < K; k++) mx = zz[k] > mx ? zz[k] : mx;
  for (int k = 0; k < K; k++) s += exp(zz[k] - mx);
  for (int k = 0; k < K; k++) p[k] = exp(zz[k] - mx) / s;
}

/* The class a posted gradient row g (P values) implies: the candidate (classes, and with
   allow_none the zero row) whose dl W^T is nearest; *dist in label units (B |g - dl W^T| / |W|_F). */
static int implied_class(const bbvfl_hcheck *h, const float *W, const double *p, const float *g, int allow_none,
                         double *dist) {
  int K = h->K, P = h->P;
  double wf = 0;
  for (size_t i = 0; i < (size_t)P * K; i++) wf += (double)W[i] * W[i];
  wf = sqrt(wf);
  int best = -1;
  double bestr = INFINITY, pw[256];
  /* dl of class c is (p - onehot(c)) / B (K = 1: (p - c) / B), so its row dl W^T is
     (p W^T - W[., c]) / B: p W^T once per row, not once per class */
  for (int j = 0; j < P; j++) {
    double s = 0;
    for (int k = 0; k < K; k++) s += p[k] * W[(size_t)j * K + k];
    pw[j] = s;
  }
  for (int c = allow_none ? -1 : 0; c < h->nclasses; c++) {
    double r2 = 0;
    for (int j = 0; j < P; j++) {
      double s = c < 0 ? 0 : K == 1 ? (pw[j] - c * (double)W[j]) / (double)h->B : (pw[j] - W[(size_t)j * K + c]) / (double)h->B;
      double d = (double)g[j] - s;
      r2 += d * d;
    }
    if (r2 < bestr) {
      bestr = r2;
      best = c;
    }
  }
  *dist = wf > 0 ? (double)h->B * sqrt(bestr) / wf : (bestr == 0 ? 0 : INFINITY);
  return best;
}

/* A label holder's dLoss/dlogits row d (K values) at probabilities p: its class and distance
   (label units, max over K); -1 for a zero row (not the holder's). */
static int holder_class(const bbvfl_hcheck *h, const double *p, const float *d, double *dist) {
  int K = h->K, zero = 1;
  for (int k = 0; k < K; k++) zero &= d[k] == 0;
  *dist = 0;
  if (zero) return -1;
  double y[256];
  for (int k = 0; k < K; k++) y[k] = p[k] - (double)h->B * d[k];
  if (K == 1) {
    int c = y[0] >= 0.5;
    *dist = fabs(y[0] - c);
    return c;
  }
  int c = 0;
  for (int k = 1; k < K; k++) c = y[k] > y[c] ? k : c;
  for (int k = 0; k < K; k++) {
    double e = fabs(y[k] - (k == c));
    if (e > *dist) *dist = e;
  }
  return c;
}

/* ------------------------------------------------------------------ MLP */

static int mlp_round(bbvfl_hcheck *h, const bbvfl_hcheck_input *in, bbvfl_hcheck_result *r, bbvfl_err *err) {
  size_t B = h->B, P = (size_t)h->P, K = (size_t)h->K, rows = in->nb * B;
  bbvfl_fhead *fh = &h->vh.fh;
  /* h_hat: the active client's estimate with the round's contributor count */
  h->vh.M = (int)in->contributors;
  bbvfl_err e2 = {0};
  if (bbvfl_vhead_estimate(&h->vh, in->sum_q, in->sum_f, rows, h->hhat, &e2) < 0) {
    if (e2.code != BBVFL_E_VERIFY) {
      *err = e2;
      return -1;
    }
    r->verdict = BBVFL_HC_SUM_INVALID;
    return 0;
  }
  bbvfl_vhead_epoch(&h->vh, in->epoch);
  int split = in->nlabel > 0;
  memcpy(h->w0, fh->params, h->nparams * sizeof(float)); /* the window's start */
  if (split) {
    /* every holder's rows: a class each, at the window's start */
    for (size_t i = 0; i < rows; i++) probs_at(h, h->w0, h->hhat + i * P, h->p0 + i * K);
    memset(h->held, 0, rows);
    for (size_t q = 0; q < in->nlabel; q++) {
      int who = in->label_holder ? in->label_holder[q] : (int)q;
      if (in->label_len[q] != 4 * rows * K || decode_checked(in->label[q], rows * K, h->dx) < 0) {
        r->verdict = BBVFL_HC_MALFORMED;
        r->holder = who;
        return 0;
      }
      for (size_t i = 0; i < rows; i++) {
        double dist;
        int c = holder_class(h, h->p0 + i * K, h->dx + i * K, &dist);
        if (c < 0) continue;
        h->held[i] = 1;
        int rc = row_class(h, in, i, c, dist, who, r, err);
        if (rc) return rc < 0 ? -1 : 0;
      }
    }
  }
  double maxdev = 0;
  for (size_t k = 0; k < in->nb; k++) {
    const float *x = h->hhat + k * B * P, *gk = h->g + k * B * P;
    /* each row's class from its posted gradient, at the head of the moment */
    for (size_t i = 0; i < B; i++) {
      size_t row = k * B + i;
      double p[256], dist;
      int c;
      if (split) {
        if (h->held[row]) {
          h->y[row] = -1;
          continue;
        }
        c = implied_class(h, fh->params, h->p0 + row * K, gk + i * P, 1, &dist);
      } else {
        probs_at(h, fh->params, x + i * P, p);
        c = implied_class(h, fh->params, p, gk + i * P, 0, &dist);
      }
      int rc = row_class(h, in, row, c, dist, -1, r, err);
      if (rc) return rc < 0 ? -1 : 0;
    }
    /* the gradient as the session's head computes it for those classes */
    if (split) {
      /* own rows' dLoss/dlogits at the window's start, then the posts added in chain order */
      float *dk = h->dlog + k * B * K;
      memcpy(h->wk, fh->params, h->nparams * sizeof(float)); /* the head of the moment, kept */
      memcpy(fh->params, h->w0, h->nparams * sizeof(float));
      double ls;
      size_t nheld;
      int rc = bbvfl_fhead_label_grad(fh, x, h->y + k * B, B, B, &ls, &nheld, dk, err);
      memcpy(fh->params, h->wk, h->nparams * sizeof(float));
      if (rc < 0) return -1;
      for (size_t q = 0; q < in->nlabel; q++) {
        bbvfl_f32_from_be(in->label[q] + 4 * k * B * K, B * K, h->post);
        for (size_t j = 0; j < B * K; j++) dk[j] += h->post[j];
      }
      if (bbvfl_fhead_backward(fh, x, dk, B, h->dx, err) < 0) return -1;
    } else {
      double loss;
      if (bbvfl_fhead_train_batch(fh, x, h->y + k * B, B, &loss, h->dx, NULL, err) < 0) return -1;
    }
    double dev, tol;
    size_t at = compare(h, gk, h->dx, B * P, &dev, &tol, &r->exact);
    double rd = rel(dev, h->dx, B * P);
    if (rd > h->stats.max_dev_grad) h->stats.max_dev_grad = rd;
    if (dev > maxdev) maxdev = dev;
    if (at != SIZE_MAX) {
      r->verdict = BBVFL_HC_GRADIENT_MISMATCH;
      set_row(h, in, k * B + at / P, r);
      r->coord = at % P;
      r->posted = gk[at];
      r->expected = h->dx[at];
      r->max_dev = dev;
      r->tol = tol;
      return 0;
    }
    bbvfl_optim_step(&h->vh.opt, fh->params, fh->grads);
    h->vh.steps++;
    h->stats.batches++;
  }
  double dev, tol;
  size_t at = compare(h, h->pp, fh->params, h->nparams, &dev, &tol, &r->exact);
  double rd = rel(dev, fh->params, h->nparams);
  if (rd > h->stats.max_dev_params) h->stats.max_dev_params = rd;
  if (at != SIZE_MAX) {
    r->verdict = BBVFL_HC_PARAMS_NOT_STEP;
    r->coord = at;
    r->posted = h->pp[at];
    r->expected = fh->params[at];
    r->max_dev = dev;
    r->tol = tol;
    return 0;
  }
  r->max_dev = dev > maxdev ? dev : maxdev;
  /* the next round starts from what was posted (what the active client holds) */
  memcpy(fh->params, h->pp, h->nparams * sizeof(float));
  return 0;
}

/* ------------------------------------------------------------------ LR */

static int lr_round(bbvfl_hcheck *h, const bbvfl_hcheck_input *in, bbvfl_hcheck_result *r, bbvfl_err *err) {
  (void)err;
  size_t K = (size_t)h->K, rows = in->nb * h->B, C = (size_t)h->nclasses;
  if (in->curv) { /* sqn's curvature round: r, not a gradient; the biases do not move */
    h->stats.skipped_curv++;
    return 0;
  }
  if (in->sum_q) bbvfl_pbm_estimate(&h->st.mech, (int)in->contributors, in->sum_q, rows * K, h->hhat);
  else memcpy(h->hhat, in->sum_f, rows * K * sizeof(float));
  bbvfl_optim_epoch(&h->lrh.opt, in->epoch);
  double inv = 1.0 / (double)h->lb, maxdev = 0;
  size_t a = in->first_pos, end = a + rows;
  float *z = h->dx; /* rows x K is within rows x P (P = K) */
  for (size_t pos = a; pos < end;) {
    size_t j = pos / h->lb, bend = (j + 1) * h->lb < end ? (j + 1) * h->lb : end, off = pos - a, n = bend - pos;
    /* every class for every row of the chunk, with the biases of the moment */
    for (size_t c = 0; c < C; c++) {
      for (size_t i = 0; i < n; i++) h->y[off + i] = (int)c;
      bbvfl_lr_head_rows(&h->st, &h->lrh, h->hhat + off * K, h->y + off, n, inv, z, h->cand + c * n * K, NULL);
    }
    const float *gp = h->g + off * K;
    for (size_t i = 0; i < n; i++) {
      int best = 0;
      double bd = INFINITY;
      for (size_t c = 0; c < C; c++) {
        double d = 0;
        for (size_t k = 0; k < K; k++) {
          double e = fabs((double)gp[i * K + k] - h->cand[(c * n + i) * K + k]);
          d = e > d ? e : d;
        }
        if (d < bd) {
          bd = d;
          best = (int)c;
        }
      }
      double dist = bd * (double)h->lb;
      size_t row = off + i;
      int rc = row_class(h, in, row, best, dist, -1, r, err);
      if (rc) return rc < 0 ? -1 : 0;
    }
    float *dz = h->post + off * K;
    bbvfl_lr_head_rows(&h->st, &h->lrh, h->hhat + off * K, h->y + off, n, inv, z, dz, NULL);
    double dev, tol;
    size_t at = compare(h, gp, dz, n * K, &dev, &tol, &r->exact);
    double rd = rel(dev, dz, n * K);
    if (rd > h->stats.max_dev_grad) h->stats.max_dev_grad = rd;
    if (dev > maxdev) maxdev = dev;
    if (at != SIZE_MAX) {
      r->verdict = BBVFL_HC_GRADIENT_MISMATCH;
      set_row(h, in, off + at / K, r);
      r->coord = at % K;
      r->posted = gp[at];
      r->expected = dz[at];
      r->max_dev = dev;
      r->tol = tol;
      return 0;
    }
    /* the posted rows (what the active client stepped with) into the logical batch */
    memcpy(h->lr_dz + (pos - j * h->lb) * K, gp, n * K * sizeof(float));
    if (bend == (j + 1) * h->lb) {
      if (!h->sqn) bbvfl_lr_head_step(&h->lrh, h->K, h->lr_dz, h->lb);
      h->stats.batches++;
    }
    pos = bend;
  }
  if (!h->sqn) {
    double dev, tol;
    size_t at = compare(h, h->pp, h->lrh.w, K, &dev, &tol, &r->exact);
    double rd = rel(dev, h->lrh.w, K);
    if (rd > h->stats.max_dev_params) h->stats.max_dev_params = rd;
    if (at != SIZE_MAX) {
      r->verdict = BBVFL_HC_PARAMS_NOT_STEP;
      r->coord = at;
      r->posted = h->pp[at];
      r->expected = h->lrh.w[at];
      r->max_dev = dev;
      r->tol = tol;
      return 0;
    }
    if (dev > maxdev) maxdev = dev;
  }
  r->max_dev = maxdev;
  memcpy(h->lrh.w, h->pp, K * sizeof(float));
  return 0;
}

int bbvfl_hcheck_round(bbvfl_hcheck *h, const bbvfl_hcheck_input *in, bbvfl_hcheck_result *res, bbvfl_err *err) {
  if (h->latched) {
    *res = h->first;
    return 0;
  }
  res_init(res, in);
  if (h->any && in->round <= h->last_round) {
    res->verdict = BBVFL_HC_ORDER;
    goto out;
  }
  if (in->nb < 1 || (!in->sum_q) == (!in->sum_f) || (in->nlabel && (!in->label || !in->label_len)))
    return bbvfl_fail(err, BBVFL_E_ARG, "head check: round %llu: %zu batches, %s", (unsigned long long)in->round,
                      in->nb, (!in->sum_q) == (!in->sum_f) ? "exactly one of the integer or float sums" : "label posts");
  if (h->lr && in->nlabel)
    return bbvfl_fail(err, BBVFL_E_ARG, "head check: labels split across clients are not built for --model lr");
  size_t rows = in->nb * h->B, vals = rows * (size_t)h->P;
  if (in->rows)
    for (size_t i = 0; i < rows; i++)
      if (in->rows[i] >= h->n_rows)
        return bbvfl_fail(err, BBVFL_E_ARG, "head check: training row %zu of round %llu is beyond the %zu rows",
                          in->rows[i], (unsigned long long)in->round, h->n_rows);
  if (grow(h, rows, err) < 0) return -1;
  h->any = 1;
  h->last_round = in->round;
  res->exact = 1;
  if (in->curv && h->lr) {
    if (lr_round(h, in, res, err) < 0) return -1;
    goto out;
  }
  if (in->grad_len != 4 * vals || decode_checked(in->grad, vals, h->g) < 0 || in->params_len != 4 * h->nparams ||
      decode_checked(in->params, h->nparams, h->pp) < 0) {
    res->verdict = BBVFL_HC_MALFORMED;
    res->exact = 0;
    goto out;
  }
  if ((h->lr ? lr_round(h, in, res, err) : mlp_round(h, in, res, err)) < 0) return -1;
  if (res->verdict == BBVFL_HC_OK) {
    h->stats.rounds++;
    h->stats.rows += rows;
    if (res->exact) h->stats.exact_rounds++;
  }
out:
  if (res->verdict != BBVFL_HC_OK) {
    res->exact = 0;
    h->latched = 1;
    h->first = *res;
  }
  return 0;
}
