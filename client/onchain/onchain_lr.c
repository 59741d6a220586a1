#include "onchain/onchain_int.h"

/* Vertical logistic regression on chain (`--model lr`, docs/LR.md "On chain"): this client's steps
 * of the one round loop (onchain_rounds.c) when the session's model is LR. The arithmetic is
 * core/lr_client.h's, the off-chain trainer's, so the same seed gives the same numbers.
 *
 * The contract's rounds carry windows of minibatches of B_c rows. With minibatches (--batch B)
 * B_c = B and a window is the off-chain trainer's window. With the full batch (--batch 0)
 * B_c = 1: the epoch's one batch (every training row, in the permutation's order) is spread over
 * the epoch's windows, each as many rows as one submission carries (binding/session.c). The state
 * is kept by position in the epoch's permutation: the partial logits before the clip, the table
 * rows and the gradients (dLoss/dz) of the positions seen so far; a logical batch (lb rows: B, or
 * N_train) is stepped once its last position is in, exactly as the off-chain trainer steps it.
 * The active client's dLoss/dz of a chunk is scaled by 1/lb (the mean over the whole batch), so
 * what it posts for a chunk is the off-chain gradient's rows.
 *
 * sqn with local pairs (the default): after the logical batch's step that completes an average from
 * the second on, every block pushes its own pair y_b = H_bb s_b from its columns and the batch's
 * posted gradient (the off-chain trainer's rule); the layout has no curvature round.
 * sqn with --sqn-pairs round: the curvature rounds are rounds of the contract's layout (binding/contract.h: after every L-th
 * epoch from the 2L-th, ceil(S/K) of them on the epoch's first S positions). After each logical
 * batch's step every block (the head too, on the active client) takes its iterate into the
 * average (bbvfl_lr_block_tick), so s is set when the layout's curvature rounds come; their
 * forward releases X s_m, the active client posts r (from the logits z of the epoch's training
 * step, kept by position), and once the last of them is in every block pushes its pair, as the
 * off-chain trainer's curvature round does. */

struct bbvfl_oc_lr {
  bbvfl_lr_setup st;
  bbvfl_lr_client cl;
  int have_cl;
  bbvfl_lr_block head;
  int have_head;
  int M;              /* submissions the latest sum covers (the PBM estimate's n) */
  size_t lb;          /* rows of a logical batch */
  size_t nbatch;      /* logical batches per epoch */
  size_t npos;        /* positions of an epoch (R_c * B_c) */
  float *u, *g, *zp;  /* npos x K: partial logits before the clip, dLoss/dz (curvature: r), the head's z */
  size_t *rows;       /* npos: the table rows */
  float *v, *hsum, *z, *dz; /* scratch (a round's values; dz: one logical batch) */
  double loss_acc;    /* the open logical batch's loss sum (active client) */
  uint64_t done;      /* sqn: logical batches stepped */
  int L;              /* sqn: the curvature interval (0: not sqn) */
};

void bbvfl_oc_lr_free(cl *c) {
  struct bbvfl_oc_lr *l = c->lr;
  if (!l) return;
  if (l->have_cl) bbvfl_lr_client_free(&l->cl);
  if (l->have_head) bbvfl_lr_block_free(&l->head);
  free(l->u);
  free(l->g);
  free(l->zp);
  free(l->rows);
  free(l->v);
  free(l->hsum);
  free(l->z);
  free(l->dz);
  free(l);
  c->lr = NULL;
}

int bbvfl_oc_lr_init(cl *c, float *x, size_t ncols, int index, bbvfl_err *err) {
  const bbvfl_session *s = c->sess;
  struct bbvfl_oc_lr *l = calloc(1, sizeof *l);
  if (!l) {
    free(x);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  c->lr = l;
  bbvfl_offchain_cfg t = s->train;
  t.seed = c->cfg->seed;
  t.seeded_noise = c->cfg->seeded_noise;
  t.noise_key = c->cfg->seeded_noise ? NULL : c->noise_key;
  if (bbvfl_lr_setup_init(&l->st, &t, c->cfg->ds->nclasses, err) < 0) {
    free(x);
    return -1;
  }
  if ((uint32_t)l->st.K != s->cparams.dim) {
    free(x);
    return bbvfl_fail(err, BBVFL_E_STATE, "the session's P = %u, but LR on this table releases %d values per row",
                      s->cparams.dim, l->st.K);
  }
  size_t K = (size_t)l->st.K;
  l->npos = (size_t)s->cparams.batches_per_epoch * c->B;
  l->lb = s->train.B ? c->B : l->npos;
  l->nbatch = l->npos / l->lb;
  size_t maxrows = c->n / K + 1;
  l->M = (int)s->cparams.clients;
  l->have_cl = 1; /* freed by bbvfl_oc_lr_free also when the init fails part way */
  if (bbvfl_lr_client_init(&l->cl, &l->st, &t, x, ncols, index, l->lb, err) < 0) return -1;
  l->u = malloc(l->npos * K * sizeof *l->u);
  l->g = malloc(l->npos * K * sizeof *l->g);
  l->zp = malloc(l->npos * K * sizeof *l->zp);
  l->L = s->train.opt.kind == BBVFL_OPT_SQN ? s->train.sqn_interval : 0;
  l->rows = malloc(l->npos * sizeof *l->rows);
  l->v = malloc(maxrows * K * sizeof *l->v);
  l->hsum = malloc(maxrows * K * sizeof *l->hsum);
  l->z = malloc(maxrows * K * sizeof *l->z);
  l->dz = malloc(l->lb * K * sizeof *l->dz);
  if (!l->u || !l->g || !l->zp || !l->rows || !l->v || !l->hsum || !l->z || !l->dz)
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

int bbvfl_oc_lr_init_head(cl *c, bbvfl_err *err) {
  struct bbvfl_oc_lr *l = c->lr;
  if (l->have_head) return 0;
  bbvfl_offchain_cfg t = c->sess->train;
  if (bbvfl_lr_block_init(&l->head, (size_t)l->st.K, &t, err) < 0) return -1;
  l->have_head = 1;
  c->head_len = 4 * (size_t)l->st.K;
  c->head_be = malloc(c->head_len);
  if (!c->head_be) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

void bbvfl_oc_lr_contributors(cl *c, unsigned n) {
  if (c->lr) c->lr->M = (int)n;
}

size_t bbvfl_oc_lr_batches(const cl *c) { return c->lr->nbatch; }

/* The first epoch position of training round sl. */
static size_t first_pos(const cl *c, const bbvfl_oc_slot *sl) { return (size_t)sl->L.first * c->B; }

int bbvfl_oc_lr_forward(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  (void)err;
  struct bbvfl_oc_lr *l = c->lr;
  size_t K = (size_t)l->st.K, n = sl->L.rows;
  if (sl->L.curv) bbvfl_lr_client_curv_logits(&l->cl, sl->rows, n, l->v);
  else bbvfl_lr_client_logits(&l->cl, sl->rows, n, l->v);
  if (sl->L.train && !sl->L.curv) {
    size_t a = first_pos(c, sl);
    memcpy(l->u + a * K, l->v, n * K * sizeof *l->v);
    memcpy(l->rows + a, sl->rows, n * sizeof *sl->rows);
  }
  bbvfl_lr_client_release(&l->cl, l->v, n, NULL, sl->q);
  return 0;
}

/* The round's public sum (its PBM estimate) into l->hsum. */
static void estimate(cl *c, const bbvfl_oc_slot *sl) {
  struct bbvfl_oc_lr *l = c->lr;
  bbvfl_pbm_estimate(&l->st.mech, l->M, c->sum, sl->L.coords, l->hsum);
}

int bbvfl_oc_lr_active_train(cl *c, bbvfl_oc_slot *sl, double *loss, size_t *batches, bbvfl_err *err) {
  *loss = 0;
  *batches = 0;
  (void)err;
  struct bbvfl_oc_lr *l = c->lr;
  size_t K = (size_t)l->st.K, a = first_pos(c, sl), end = a + sl->L.rows;
  double t1 = bbvfl_now(), inv = 1.0 / (double)l->lb;
  bbvfl_optim_epoch(&l->head.opt, (int)sl->L.epoch);
  estimate(c, sl);
  if (sl->L.curv) { /* r of the curvature round's rows: the biases do not move */
    bbvfl_lr_head_curv_r(&l->st, &l->head, l->hsum, l->zp + a * K, sl->L.rows, c->cp.cfg.curv_rows, c->grad);
    bbvfl_f32_to_be(l->head.w, K, c->head_be);
    return 0;
  }
  for (size_t i = 0; i < sl->L.rows; i++) c->yb[i] = c->lab.ylab[sl->rows[i]]; /* the labels trained on */
  /* batch by batch, as the off-chain trainer: z with the biases of the moment, one step per batch */
  for (size_t pos = a; pos < end;) {
    size_t j = pos / l->lb, bend = (j + 1) * l->lb < end ? (j + 1) * l->lb : end, off = pos - a;
    l->loss_acc += bbvfl_lr_head_rows(&l->st, &l->head, l->hsum + off * K, c->yb + off, bend - pos, inv,
                                      l->zp + pos * K, c->grad + off * K, NULL);
    memcpy(l->dz + (pos - j * l->lb) * K, c->grad + off * K, (bend - pos) * K * sizeof *l->dz);
    if (bend == (j + 1) * l->lb) {
      bbvfl_lr_head_step(&l->head, l->st.K, l->dz, l->lb);
      *loss += l->loss_acc * inv;
      l->loss_acc = 0;
      (*batches)++;
    }
    pos = bend;
  }
  bbvfl_f32_to_be(l->head.w, K, c->head_be);
  c->res->learn_s += bbvfl_now() - t1;
  return 0;
}

int bbvfl_oc_lr_active_eval(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  (void)err;
  struct bbvfl_oc_lr *l = c->lr;
  size_t K = (size_t)l->st.K;
  estimate(c, sl);
  bbvfl_lr_head_rows(&l->st, &l->head, l->hsum, c->yeval + sl->L.first, sl->L.rows, 1.0, l->z, NULL,
                     c->probs + (size_t)sl->L.first * K);
  return 0;
}

int bbvfl_oc_lr_apply(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  (void)err;
  struct bbvfl_oc_lr *l = c->lr;
  size_t K = (size_t)l->st.K, a = first_pos(c, sl), end = a + sl->L.rows;
  double t1 = bbvfl_now();
  bbvfl_optim_epoch(&l->cl.bl.opt, (int)sl->L.epoch);
  memcpy(l->g + a * K, c->grad, sl->L.rows * K * sizeof *l->g);
  if (sl->L.curv) { /* r of the curvature rows so far; after the last of them, the pairs */
    size_t S = c->cp.cfg.curv_rows;
    if (end == S) {
      bbvfl_lr_client_curv_pair(&l->cl, l->rows, S, l->g);
      if (l->have_head) bbvfl_lr_head_curv_pair(&l->head, l->st.K, l->g, S);
    }
    c->res->learn_s += bbvfl_now() - t1;
    return 0;
  }
  /* every logical batch whose last position this round carries */
  for (size_t j = a / l->lb; (j + 1) * l->lb <= end; j++) {
    size_t p = j * l->lb;
    bbvfl_lr_client_step(&l->cl, l->rows + p, l->lb, l->u + p * K, NULL, l->g + p * K);
    if (!l->L) continue;
    l->done++;
    int due = bbvfl_lr_block_tick(&l->cl.bl, l->done, l->L);
    if (l->have_head) bbvfl_lr_block_tick(&l->head, l->done, l->L);
    if (due && l->st.pairs == BBVFL_SQN_PAIRS_LOCAL) { /* each block's own H_bb s_b: no round */
      size_t S = c->sess->train.sqn_sample;
      if (S == 0 || S > l->lb) S = l->lb;
      bbvfl_lr_client_local_pair(&l->cl, l->rows + p, S, l->g + p * K, (double)l->lb);
      if (l->have_head) bbvfl_lr_head_local_pair(&l->st, &l->head, l->g + p * K, (double)l->lb, S);
    }
  }
  c->res->learn_s += bbvfl_now() - t1;
  return 0;
}
