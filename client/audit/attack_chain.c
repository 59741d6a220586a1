/* The attacks on a session's chain (audit/attack.h bbvfl_attack_chain): the auditor reads the
 * chain and hands over what it verified (audit/audit.h on_labels, on_release, on_params); the
 * observer here keeps each training position's and test row's latest values (so, at the end,
 * its last epoch's), then the three attacks run on them beside their chance levels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audit/attack.h"
#include "audit/audit.h"
#include "core/head.h"
#include "core/setup.h"

typedef struct {
  size_t ntr, nte, P;
  int victim; /* registration index of the victim's address, -1 until seen */
  uint8_t victim_addr[20];
  int *label;                 /* ntr: the latest label read back per training position, -1: none */
  uint32_t *vtr, *vte;        /* the victim's latest release per training position / test row */
  unsigned char *hvtr, *hvte; /* 1: held */
  uint32_t *str, *ste;        /* the latest sum per training position / test row */
  unsigned *ctr, *cte;        /* its contributor count (0: none) */
  uint8_t *params;            /* the last posted head */
  size_t params_len;
  int nomem;
} chain_obs;

static void obs_labels(void *ctx, uint64_t round, uint64_t epoch, uint64_t batch, const int *labels,
                       const size_t *rows, size_t B) {
  (void)round, (void)epoch, (void)batch;
  chain_obs *o = ctx;
  if (!rows) return;
  for (size_t i = 0; i < B; i++)
    if (rows[i] < o->ntr) o->label[rows[i]] = labels[i];
}

static void keep(chain_obs *o, const bbvfl_round_layout *L, const uint32_t *v, const size_t *rows, uint32_t *tr,
                 uint32_t *te, unsigned char *htr, unsigned char *hte, unsigned *ctr, unsigned *cte, unsigned cnt) {
  size_t P = o->P;
  for (size_t i = 0; i < L->rows; i++) {
    size_t at;
    uint32_t *dst;
    if (L->train) {
      if (!rows || rows[i] >= o->ntr) continue;
      at = rows[i], dst = tr;
      if (htr) htr[at] = 1;
      if (ctr) ctr[at] = cnt;
    } else {
      at = (size_t)L->first + i;
      if (at >= o->nte) continue;
      dst = te;
      if (hte) hte[at] = 1;
      if (cte) cte[at] = cnt;
    }
    memcpy(dst + at * P, v + i * P, P * sizeof *v);
  }
}

static void obs_release(void *ctx, uint64_t round, const bbvfl_round_layout *L, int client, const uint8_t *addr,
                        unsigned contributors, const uint32_t *vals, const size_t *rows) {
  (void)round;
  chain_obs *o = ctx;
  if (client >= 0 && o->victim < 0 && addr && memcmp(addr, o->victim_addr, 20) == 0) o->victim = client;
  if (client < 0) {
    keep(o, L, vals, rows, o->str, o->ste, NULL, NULL, o->ctr, o->cte, contributors ? contributors : 1);
  } else if (client == o->victim) {
    keep(o, L, vals, rows, o->vtr, o->vte, o->hvtr, o->hvte, NULL, NULL, 0);
  }
}

static void obs_params(void *ctx, uint64_t round, const uint8_t *p, size_t len) {
  (void)round;
  chain_obs *o = ctx;
  uint8_t *n = realloc(o->params, len ? len : 1);
  if (!n) {
    o->nomem = 1;
    return;
  }
  memcpy(n, p, len);
  o->params = n;
  o->params_len = len;
}

static void obs_free(chain_obs *o) {
  free(o->label);
  free(o->vtr);
  free(o->vte);
  free(o->hvtr);
  free(o->hvte);
  free(o->str);
  free(o->ste);
  free(o->ctr);
  free(o->cte);
  free(o->params);
}

/* The loss -log p(y) at the final posted head of each row with a sum of `want` contributors
   (sums n x P, y the rows' true labels): into L (n entries; NAN: no sum). */
static int row_losses(const bbvfl_attack_chain_cfg *c, const chain_obs *o, const uint32_t *sums, const unsigned *cnt,
                      const int *y, size_t n, unsigned want, double *L, bbvfl_err *err) {
  bbvfl_vhead v;
  if (bbvfl_vhead_init(&v, (int)o->P, c->nclasses, (int)want, &c->train->mech, &c->train->opt, c->train->seed, err) !=
      0)
    return -1;
  int rc = bbvfl_vhead_load_params_be(&v, o->params, o->params_len, err);
  int K = bbvfl_vhead_outputs(&v);
  float *pr = malloc((size_t)(K > 0 ? K : 1) * sizeof *pr);
  if (rc == 0 && !pr) rc = bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t r = 0; r < n && rc == 0; r++) {
    L[r] = NAN;
    if (cnt[r] != want) continue;
    if (bbvfl_vhead_eval(&v, sums + r * o->P, NULL, 1, pr, err) != 0) {
      rc = -1;
      break;
    }
    double p = K == 1 ? (y[r] ? pr[0] : 1.0 - pr[0]) : pr[y[r]];
    L[r] = -log(p > 1e-7 ? p : 1e-7);
  }
  free(pr);
  bbvfl_vhead_free(&v);
  return rc;
}

/* the finite entries of L, compacted in place; returns their count */
static size_t finite_only(double *L, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(L[i])) L[k++] = L[i];
  return k;
}

/* Label inference: the latest read of each training position against its true label, beside the
   majority class and randomized response's rate. */
static int label_figures(const bbvfl_dataset *ds, const bbvfl_attack_chain_cfg *c, const chain_obs *o,
                         const bbvfl_vfl_data *vd, bbvfl_attack_chain_result *out, bbvfl_err *err) {
  bbvfl_attack_result *R = &out->r;
  size_t *cls = calloc((size_t)(c->nclasses > 0 ? c->nclasses : 1), sizeof *cls), ok = 0, n = 0, maj = 0;
  if (!cls) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < o->ntr; i++) {
    if (o->label[i] < 0) continue;
    int y = ds->y[vd->train[i]];
    ok += o->label[i] == y;
    if (y >= 0 && y < c->nclasses) cls[y]++;
    n++;
  }
  for (int k = 0; k < c->nclasses; k++)
    if (cls[k] > maj) maj = cls[k];
  free(cls);
  out->label_rows = n;
  R->label_acc = n ? (double)ok / (double)n : NAN;
  R->label_chance = n ? (double)maj / (double)n : NAN;
  R->label_rr = c->train->label_eps > 0 ? exp(c->train->label_eps) / (exp(c->train->label_eps) + c->nclasses - 1) : NAN;
  return 0;
}

/* Feature inversion: aux = the test rows' last evaluation releases with their columns (cols, d per
   row), victims = the training rows' last-epoch releases. */
static int inversion(const chain_obs *o, const bbvfl_vfl_data *vd, const float *cols, size_t d,
                     bbvfl_attack_chain_result *out, bbvfl_err *err) {
  size_t P = o->P, na = 0, nv = 0;
  for (size_t i = 0; i < o->nte; i++) na += o->hvte[i];
  for (size_t i = 0; i < o->ntr; i++) nv += o->hvtr[i];
  float *ar_rel = malloc((na + 1) * P * sizeof *ar_rel), *ar_x = malloc((na + 1) * d * sizeof *ar_x);
  float *vr = malloc((nv + 1) * P * sizeof *vr), *vx = malloc((nv + 1) * d * sizeof *vx);
  int rc = -1;
  if (!ar_rel || !ar_x || !vr || !vx) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  na = nv = 0;
  for (size_t i = 0; i < o->nte; i++) {
    if (!o->hvte[i]) continue;
    for (size_t k = 0; k < P; k++) ar_rel[na * P + k] = (float)o->vte[i * P + k];
    memcpy(ar_x + na * d, cols + vd->test[i] * d, d * sizeof *ar_x);
    na++;
  }
  for (size_t i = 0; i < o->ntr; i++) {
    if (!o->hvtr[i]) continue;
    for (size_t k = 0; k < P; k++) vr[nv * P + k] = (float)o->vtr[i * P + k];
    memcpy(vx + nv * d, cols + vd->train[i] * d, d * sizeof *vx);
    nv++;
  }
  out->inv_aux = na, out->inv_victims = nv;
  if (bbvfl_attack_inversion(ar_rel, ar_x, na, vr, vx, nv, P, d, 0, &out->r.inv, err) != 0)
    bbvfl_wrap(err, "inversion (the victim's releases on chain)");
  else
    rc = 0;
out:
  free(ar_rel);
  free(ar_x);
  free(vr);
  free(vx);
  return rc;
}

int bbvfl_attack_chain(const bbvfl_dataset *ds, const bbvfl_attack_chain_cfg *c, bbvfl_attack_chain_result *out,
                       bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  bbvfl_attack_result *R = &out->r;
  if (c->train->model != BBVFL_MODEL_MLP) return bbvfl_fail(err, BBVFL_E_ARG, "attack: the MLP model only");
  if (c->victim_party < 0 || c->victim_party >= c->train->M)
    return bbvfl_fail(err, BBVFL_E_ARG, "attack: victim party %d of %d", c->victim_party, c->train->M);
  if (c->shadows < 0 || c->shadows > 20) return bbvfl_fail(err, BBVFL_E_ARG, "attack: 0..20 shadow models, got %d", c->shadows);
  bbvfl_vfl_data vd;
  memset(&vd, 0, sizeof vd);
  chain_obs o;
  memset(&o, 0, sizeof o);
  bbvfl_audit_result ar;
  memset(&ar, 0, sizeof ar);
  int have_ar = 0, rc = -1;
  float *cols = NULL;
  double *Lin = NULL, *Lout = NULL, *sin = NULL, *sout = NULL;
  int *ytr = NULL, *yte = NULL;
  size_t d = 0;
  if (bbvfl_vfl_data_prepare(ds, c->train->split_seed ? c->train->split_seed : c->train->seed, c->train->test_frac,
                             c->train->M, c->train->partition, &vd, err) != 0 ||
      bbvfl_vfl_data_client_cols(&vd, c->victim_party, &cols, &d, err) != 0)
    goto out;
  o.ntr = vd.n_train, o.nte = vd.n_test, o.P = (size_t)c->train->P, o.victim = -1;
  size_t P = o.P;
  o.label = malloc((o.ntr + 1) * sizeof *o.label);
  o.vtr = calloc(o.ntr * P + 1, sizeof *o.vtr), o.vte = calloc(o.nte * P + 1, sizeof *o.vte);
  o.hvtr = calloc(o.ntr + 1, 1), o.hvte = calloc(o.nte + 1, 1);
  o.str = calloc(o.ntr * P + 1, sizeof *o.str), o.ste = calloc(o.nte * P + 1, sizeof *o.ste);
  o.ctr = calloc(o.ntr + 1, sizeof *o.ctr), o.cte = calloc(o.nte + 1, sizeof *o.cte);
  if (!o.label || !o.vtr || !o.vte || !o.hvtr || !o.hvte || !o.str || !o.ste || !o.ctr || !o.cte) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < o.ntr; i++) o.label[i] = -1;
  memcpy(o.victim_addr, c->victim_addr, 20);
  /* the chain, read by the auditor; the victim's registration index is found from its address at
     its first submission */
  bbvfl_audit_opts ao;
  memset(&ao, 0, sizeof ao);
  ao.rpc_url = c->rpc_url;
  memcpy(ao.contract, c->contract, 20);
  ao.from_block = c->from_block;
  ao.delta = c->delta > 0 ? c->delta : 1e-5;
  ao.on_labels = obs_labels;
  ao.labels_ctx = &o;
  ao.on_release = obs_release;
  ao.on_params = obs_params;
  ao.release_ctx = &o;
  if (bbvfl_audit_run(&ao, &ar, err) != 0) goto out;
  have_ar = 1;
  out->audit_ok = ar.ok;
  if (o.nomem) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  if (o.victim < 0) {
    bbvfl_fail(err, BBVFL_E_ARG, "attack: the victim's address is not a registered client of the session");
    goto out;
  }
  R->epsilon = ar.has_eps ? ar.priv.row_feature.epsilon : INFINITY;
  R->epsilon_person = ar.has_eps ? ar.priv.person.epsilon : INFINITY;
  R->test_accuracy = NAN;
  for (size_t e = ar.nepochs; e-- > 0;)
    if (ar.epochs[e].has_metrics) {
      R->test_accuracy = ar.epochs[e].accuracy_micro / 1e6;
      break;
    }
  if (label_figures(ds, c, &o, &vd, out, err) != 0 || inversion(&o, &vd, cols, d, out, err) != 0) goto out;
  /* membership: each row's loss at the final posted head from its latest sum */
  R->mia.advantage = R->mia.accuracy = NAN;
  if (c->shadows > 0) {
    if (!o.params) {
      bbvfl_fail(err, BBVFL_E_STATE, "attack: the session posted no head: no membership attack");
      goto out;
    }
    unsigned want = (unsigned)c->train->M;
    Lin = malloc((o.ntr + 1) * sizeof *Lin), Lout = malloc((o.nte + 1) * sizeof *Lout);
    ytr = malloc((o.ntr + 1) * sizeof *ytr), yte = malloc((o.nte + 1) * sizeof *yte);
    if (!Lin || !Lout || !ytr || !yte) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
    for (size_t i = 0; i < o.ntr; i++) ytr[i] = ds->y[vd.train[i]];
    for (size_t i = 0; i < o.nte; i++) yte[i] = ds->y[vd.test[i]];
    if (row_losses(c, &o, o.str, o.ctr, ytr, o.ntr, want, Lin, err) != 0 ||
        row_losses(c, &o, o.ste, o.cte, yte, o.nte, want, Lout, err) != 0)
      goto out;
    size_t nin = finite_only(Lin, o.ntr), nout = finite_only(Lout, o.nte), nsi = 0, nso = 0;
    out->mia_in = R->mia_in = nin, out->mia_out = R->mia_out = nout;
    bbvfl_offchain_cfg sc = *c->train;
    sc.seeded_noise = 0;
    sc.noise_key = NULL;
    if (bbvfl_attack_shadow_losses(ds, &sc, c->shadows, &sin, &nsi, &sout, &nso, err) != 0 ||
        bbvfl_attack_membership(sin, nsi, sout, nso, Lin, nin, Lout, nout, &R->mia, err) != 0)
      goto out;
  }
  rc = 0;
out:
  if (have_ar) bbvfl_audit_result_free(&ar);
  obs_free(&o);
  bbvfl_vfl_data_free(&vd);
  free(cols);
  free(Lin);
  free(Lout);
  free(sin);
  free(sout);
  free(ytr);
  free(yte);
  return rc;
}
