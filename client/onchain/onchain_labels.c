#include "onchain/onchain_int.h"

/* ------------------------------------------------------------------ labels split across clients */

/* c->lab.ylab from cfg: every row's label (--labels), the rows of --label-rows, or none. */
int bbvfl_oc_init_label_rows(cl *c, bbvfl_err *err) {
  const bbvfl_dataset *ds = c->cfg->ds;
  c->lab.ylab = malloc((ds->n + 1) * sizeof *c->lab.ylab);
  if (!c->lab.ylab) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < ds->n; i++) c->lab.ylab[i] = c->cfg->has_labels && !c->cfg->label_rows ? ds->y[i] : -1;
  if (!c->cfg->label_rows) return 0;
  if (strchr(c->cfg->label_rows, '/'))
    return bbvfl_fail(err, BBVFL_E_ARG, "--label-rows '%s': one list of row indices and ranges (no '/')",
                      c->cfg->label_rows);
  bbvfl_partition p;
  if (bbvfl_partition_parse(c->cfg->label_rows, ds->n, &p, err) < 0)
    return bbvfl_wrap(err, "--label-rows (row indices 0..%zu of the data file)", ds->n - 1);
  for (size_t k = 0; k < p.off[1]; k++) c->lab.ylab[p.cols[k]] = ds->y[p.cols[k]];
  size_t nrows = p.off[1];
  bbvfl_partition_free(&p);
  if (nrows == 0) return bbvfl_fail(err, BBVFL_E_ARG, "--label-rows '%s' names no rows", c->cfg->label_rows);
  return 0;
}

/* Label DP (session label_epsilon > 0): the labels this client holds for training rows are replaced
   once, before any transaction, by their randomized response (dp/labeldp.h); the evaluation rows
   keep their true labels (they only score the model). The responses come from this client's
   private noise key (c->noise_key, kept in its state dir), so a restarted client trains on the very
   same labels (no second draw) and nobody else can regenerate the flips; a re-elected label holder
   draws its own (docs/PRIVACY.md: each holder's draw counts). With --reproducible-noise they come
   from (seed, LABELS) instead: the same for every holder, and regenerable from the session file,
   so the labels are unprotected. */
int bbvfl_oc_label_dp(cl *c, bbvfl_err *err) {
  double eps = c->sess->train.label_eps;
  if (!(eps > 0)) return 0;
  if (bbvfl_rr_labels_keyed(c->lab.ylab, c->data.train, c->data.n_train, c->cfg->ds->nclasses, eps, c->cfg->seeded_noise,
                            c->cfg->seed, c->cfg->seeded_noise ? NULL : c->noise_key, err) < 0)
    return bbvfl_wrap(err, "label randomized response");
  return 0;
}

/* dLoss/dlogits of this client's labelled rows of each batch of the window (zeros elsewhere, the
   mean over each batch of B) into c->lab.dlog, all with the head's current parameters (those of the
   window's start: a label holder sees the head only at window boundaries); their loss goes to the
   epoch's tally. */
int bbvfl_oc_own_label_grad(cl *c, const bbvfl_oc_slot *sl, bbvfl_err *err) {
  size_t B = c->B, P = c->cp.cfg.dim, K = (size_t)c->K;
  for (size_t i = 0; i < sl->L.rows; i++) c->yb[i] = c->lab.ylab[sl->rows[i]];
  double t1 = bbvfl_now();
  for (size_t k = 0; k < sl->L.nb; k++) {
    double ls = 0;
    size_t nheld = 0;
    if (bbvfl_vhead_label_grad(&c->head, c->sum + k * B * P, NULL, c->yb + k * B, B, &ls, &nheld,
                               c->lab.dlog + k * B * K, err) < 0)
      return -1;
    c->lab.lrows_loss += ls;
    c->lab.lrows_n += (double)nheld;
  }
  c->res->learn_s += bbvfl_now() - t1;
  return 0;
}

static int holder_of(const cl *c, const uint8_t a[20]) {
  for (size_t i = 0; i < c->lab.naddrs; i++)
    if (!memcmp(c->lab.addrs[i], a, 20)) return (int)i;
  return -1;
}

int bbvfl_oc_each_label_post(cl *c, uint64_t r, uint64_t from_blk, bbvfl_oc_label_post_fn fn, void *ctx,
                             bbvfl_err *err) {
  uint8_t t1[32];
  bbvfl_cenc_word_u64(r, t1);
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(&c->agg, BBVFL_EV_LABEL_GRADIENT_POSTED, t1, from_blk, UINT64_MAX, &logs, err) < 0) return -1;
  size_t i;
  json_t *lg;
  int rc = 0;
  json_array_foreach(logs, i, lg) {
    bbvfl_cev ev;
    int k = bbvfl_cev_decode(lg, &ev, err);
    if (k < 0) {
      rc = -1;
      break;
    }
    int h = k == 1 && ev.kind == BBVFL_EV_LABEL_GRADIENT_POSTED && ev.round == r &&
                    !memcmp(ev.emitter, c->agg.address, 20)
                ? holder_of(c, ev.client)
                : -1;
    if (h >= 0) rc = fn(ctx, h, &ev, err);
    bbvfl_cev_clear(&ev);
    if (rc < 0) break;
  }
  json_decref(logs);
  return rc;
}

typedef struct {
  cl *c;
  uint64_t r, need, *got;
  size_t nk;
  int add;
} scan_ctx;

static int scan_one(void *ctx, int h, const bbvfl_cev *ev, bbvfl_err *err) {
  scan_ctx *x = ctx;
  cl *c = x->c;
  if (!(x->need >> h & 1) || (*x->got >> h & 1)) return 0;
  if (x->add && ev->data_len != 4 * x->nk) {
    char a[43];
    bbvfl_addr_checksum(ev->client, a);
    return bbvfl_fail(err, BBVFL_E_PARSE,
                      "round %llu: label holder %s posted a %zu-byte label gradient, expected %zu (rows x K binary32)",
                      (unsigned long long)x->r, a, ev->data_len, 4 * x->nk);
  }
  if (x->add) {
    bbvfl_f32_from_be(ev->data, x->nk, c->lab.dlog_in);
    for (size_t j = 0; j < x->nk; j++) c->lab.dlog[j] += c->lab.dlog_in[j];
  }
  *x->got |= 1ULL << h;
  return 0;
}

/* LabelGradientPosted(r) logs from c->blk on: adds those of the holders in `need` not yet in *got
   into c->dlog (add = 1), or only notes who posted (add = 0). */
int bbvfl_oc_scan_label_posts(cl *c, uint64_t r, size_t nk, uint64_t need, uint64_t *got, int add, bbvfl_err *err) {
  scan_ctx x = {.c = c, .r = r, .need = need, .got = got, .nk = nk, .add = add};
  return bbvfl_oc_each_label_post(c, r, c->blk, scan_one, &x, err);
}

/* The active client, TRAIN round r: its own rows' dLoss/dlogits plus every other label holder's
   post (waited for within the round timeout), then the head's step from the sum; *loss: the mean
   over its own labelled rows of the batch (0 when none). */
int bbvfl_oc_active_split_step(cl *c, const bbvfl_oc_slot *sl, double *loss, bbvfl_err *err) {
  uint64_t r = sl->r;
  size_t nk = sl->L.rows * (size_t)c->K;
  double l0 = c->lab.lrows_loss, n0 = c->lab.lrows_n;
  if (bbvfl_oc_own_label_grad(c, sl, err) < 0) return -1;
  *loss = c->lab.lrows_n > n0 ? (c->lab.lrows_loss - l0) / (c->lab.lrows_n - n0) : 0;
  uint64_t need = c->lab.holders & ~(1ULL << c->res->index), got = 0;
  double t0 = bbvfl_now(), delay = POLL_MIN_S;
  c->blk = c->conn.ev_blk; /* the posts come after the round's submissions */
  while (need) {
    if (bbvfl_oc_scan_label_posts(c, r, nk, need, &got, 1, err) < 0) return -1;
    if (got == need) break;
    if (bbvfl_now() - t0 > c->cfg->round_timeout_s) {
      c->res->wait_s += bbvfl_now() - t0;
      char miss[1024];
      size_t used = 0;
      miss[0] = 0;
      for (size_t i = 0; i < c->lab.naddrs && i < 64; i++) {
        if (!((need & ~got) >> i & 1)) continue;
        char a[43];
        bbvfl_addr_checksum(c->lab.addrs[i], a);
        int w = snprintf(miss + used, sizeof miss - used, "%s%s (index %zu)", used ? ", " : "", a, i);
        if (w < 0 || (size_t)w >= sizeof miss - used) break;
        used += (size_t)w;
      }
      return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                        "round %llu: no label gradient within %.0f s from label holder(s) %s; the active client needs "
                        "every holder's dLoss/dlogits: restart the missing holders",
                        (unsigned long long)r, c->cfg->round_timeout_s, miss);
    }
    bbvfl_sleep(delay);
    delay *= 1.5;
    if (delay > POLL_MAX_S) delay = POLL_MAX_S;
  }
  if (need) c->res->wait_s += bbvfl_now() - t0;
  double t1 = bbvfl_now();
  size_t B = c->B, P = c->cp.cfg.dim;
  int rc = 0;
  for (size_t k = 0; rc == 0 && k < sl->L.nb; k++)
    rc = bbvfl_vhead_train_dlogits(&c->head, c->sum + k * B * P, NULL, B, c->lab.dlog + k * B * (size_t)c->K,
                                   c->grad + k * B * P, err);
  c->res->learn_s += bbvfl_now() - t1;
  return rc < 0 ? bbvfl_wrap(err, "the summed label gradients") : 0;
}

/* A label holder that is not active, TRAIN round r: the round's sum, dLoss/dlogits of its rows
   with the head of the last GradientPosted, and postLabelGradient (unless, after a restart, the
   chain already has it). 0 done, 2 this client was elected active while waiting for the sum. */
int bbvfl_oc_holder_post(cl *c, bbvfl_oc_slot *sl, const bbvfl_receipt *rc, int check_chain, bbvfl_err *err) {
  uint64_t r = sl->r;
  /* Both modes from the round's RoundCompleted: postLabelGradient() needs the round complete, which
     in hashed mode is the active client's aggregate() (the payloads alone are there earlier, and a
     post made then reverts "round not complete") */
  {
    bbvfl_cev ev;
    int f = rc ? bbvfl_oc_receipt_event(c, rc, BBVFL_EV_ROUND_COMPLETED, r, &ev, err) : 0;
    if (f < 0) return -1;
    if (!f) {
      c->blk = c->conn.ev_blk;
      int w = bbvfl_oc_wait_event(c, BBVFL_EV_ROUND_COMPLETED, r, &ev, err);
      if (w != 0) return w;
    }
    /* h_hat must be the active client's: the count the round's own event states */
    int ok = bbvfl_oc_sum_from_event(c, &ev, sl->L.coords, err);
    bbvfl_cev_clear(&ev);
    if (ok < 0) return -1;
  }
  if (bbvfl_oc_own_label_grad(c, sl, err) < 0) return -1;
  size_t nk = sl->L.rows * (size_t)c->K;
  if (check_chain) {
    uint64_t me = 1ULL << c->res->index, got = 0;
    uint64_t blk = c->blk;
    c->blk = c->conn.ev_blk;
    int k = bbvfl_oc_scan_label_posts(c, r, nk, me, &got, 0, err);
    c->blk = blk;
    if (k < 0) return -1;
    if (got) {
      bbvfl_oc_log(c, "round %llu: label gradient already posted before the restart", (unsigned long long)r);
      return 0;
    }
  }
  bbvfl_f32_to_be(c->lab.dlog, nk, c->lab.dlog_be);
  uint8_t *cd;
  size_t len;
  if (bbvfl_cenc_post_label_gradient(r, c->lab.dlog_be, 4 * nk, &cd, &len, err) < 0) return -1;
  int sent = bbvfl_oc_tx(c, cd, len, 120000 + 40 * (uint64_t)(4 * nk), 0, NULL, "postLabelGradient()", err);
  free(cd);
  if (sent < 0) return -1;
  c->res->label_posts++;
  return 0;
}

/* ------------------------------------------------------------------ the label state */

int bbvfl_oc_labels_init(cl *c, bbvfl_err *err) {
  if (bbvfl_oc_init_label_rows(c, err) < 0 || bbvfl_oc_label_dp(c, err) < 0) return -1;
  for (size_t i = 0; i < c->neval; i++) c->yeval[i] = c->lab.ylab[c->data.test[i]]; /* -1: not labelled here */
  size_t maxrows = c->n / c->sess->cparams.dim;
  c->lab.dlog = calloc(maxrows * (size_t)c->K, sizeof *c->lab.dlog);
  c->lab.dlog_in = calloc(maxrows * (size_t)c->K, sizeof *c->lab.dlog_in);
  c->lab.dlog_be = malloc(4 * maxrows * (size_t)c->K);
  if (!c->lab.dlog || !c->lab.dlog_in || !c->lab.dlog_be) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

int bbvfl_oc_labels_holders(cl *c, bbvfl_err *err) {
  const bbvfl_onchain_cfg *cfg = c->cfg;
  bbvfl_onchain_result *res = c->res;
  if (bbvfl_aggc_label_holders(&c->agg, &c->lab.holders, err) < 0 || bbvfl_aggc_clients(&c->agg, &c->lab.addrs, &c->lab.naddrs, err) < 0)
    return -1;
  c->lab.split = c->lab.holders != 0;
  c->lab.holder = (int)(c->lab.holders >> res->index & 1);
  c->lab.own_all = cfg->has_labels && !cfg->label_rows;
  res->label_split = c->lab.split;
  res->label_holder = c->lab.holder;
  if (!c->lab.holder != !cfg->label_rows)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "this client registered %s a label holder but now runs %s --label-rows: restart it with the "
                      "flags it registered with",
                      c->lab.holder ? "as" : "not as", cfg->label_rows ? "with" : "without");
  if (c->lab.split && c->sess->train.model == BBVFL_MODEL_LR)
    return bbvfl_fail(err, BBVFL_E_STATE, "labels split across clients (--label-rows) are not built for --model lr");
  for (size_t i = 0; i < c->neval; i++) res->labelled_test_rows += c->yeval[i] >= 0;
  if (c->lab.split)
    bbvfl_oc_log(c, "labels split across clients: label holders (bitmap) 0x%llx; this client %s; %zu of %zu test rows "
                 "labelled here",
                 (unsigned long long)c->lab.holders,
                 c->lab.holder ? "holds some labels" : (c->lab.own_all ? "holds every label" : "holds none"),
                 res->labelled_test_rows, c->neval);
  return 0;
}

void bbvfl_oc_labels_free(cl *c) {
  free(c->lab.ylab);
  free(c->lab.dlog);
  free(c->lab.dlog_in);
  free(c->lab.dlog_be);
  free(c->lab.addrs);
}

void bbvfl_oc_labels_epoch_start(cl *c) { c->lab.lrows_loss = c->lab.lrows_n = 0; }
