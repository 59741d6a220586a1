/* A passive client checks the active client before it applies anything (issue 28, deliverable 5;
 * docs/ONCHAIN.md "Passive clients check the head").
 *
 * Every posted gradient of a training round and the head parameters posted with it must be what
 * the session's head computes from public data: the replay is core/headcheck.h's (the audit's check
 * `head` runs the same code); this file only feeds it what the client reads from the chain: the
 * round's sum and contributor count (RoundCompleted), the GradientPosted data, and the window's
 * training rows (the schedule of S, which every client derives). A post that deviates is refused:
 * the client stops with BBVFL_E_VERIFY naming the round and the deviation, never back-propagating
 * it, and its summary says so ("head_check").
 *
 * What it relies on: the replay is exact on the same code and within the documented tolerance
 * across machines (core/headcheck.h). The round is fed as the audit feeds it (client/audit/
 * audit_head.c): labels split across clients add the holders' LabelGradientPosted posts in chain
 * order; `--model lr` gives its rows in B-row blocks and its curvature rounds (counted, not
 * checked: core/headcheck.h). A restarted passive client first replays, from the chain, the training rounds before the one it
 * resumes at. A re-election (another address posts the gradients) restarts the replay's optimizer
 * state, as the new active client restarts its own (bbvfl_hcheck_takeover). */
#include "onchain/onchain_int.h"

#include "core/headcheck.h"

void bbvfl_oc_head_check_free(cl *c) {
  bbvfl_hcheck_free(c->hck.st);
  c->hck.st = NULL;
}

static int hc_create(cl *c, bbvfl_err *err) {
  const bbvfl_offchain_cfg *t = &c->sess->train;
  const bbvfl_cconfig *cc = &c->cp.cfg;
  bbvfl_hcheck_cfg hc = {.train = t,
                         .P = (int)cc->dim,
                         .nclasses = c->cfg->ds->nclasses,
                         .B = cc->batch,
                         .lb = c->lr && t->B == 0 ? (size_t)cc->batches_per_epoch * cc->batch : cc->batch,
                         .seed = t->seed, /* the session's head: what the audit replays too */
                         .n_rows = c->data.n_train};
  if (bbvfl_hcheck_new(&c->hck.st, &hc, err) < 0) return bbvfl_wrap(err, "the head check");
  c->hck.next = 0;
  c->hck.have_poster = 0;
  return 0;
}

/* One query for round r's RoundCompleted from block `from` on (1 found, 0 not, -1 error). */
static int rc_from(cl *c, uint64_t r, uint64_t from, bbvfl_cev *ev, bbvfl_err *err) {
  uint64_t keep = c->blk;
  c->blk = from;
  int f = bbvfl_oc_query_event(c, BBVFL_EV_ROUND_COMPLETED, r, ev, err);
  c->blk = keep;
  return f;
}

/* The round's RoundCompleted: from from_blk on, else from the session's deployment. The round's
   GradientPosted was read already, so the sum is on chain; when the node's logs do not hold it
   now, a reorg took its block out after that read, and its sender sends it again (this client's
   own transactions too: bbvfl_sender_check): waited for, up to the round timeout, as the other
   readers do, instead of stopping the session. */
static int round_completed_ev(cl *c, uint64_t r, uint64_t from_blk, bbvfl_cev *ev, bbvfl_err *err) {
  int f = rc_from(c, r, from_blk, ev, err);
  if (f == 0) f = rc_from(c, r, c->sess->deploy_block, ev, err);
  if (f != 0) return f < 0 ? -1 : 0;
  double t0 = bbvfl_now(), delay = 0.05;
  bbvfl_oc_log(c, "round %llu: the head check's RoundCompleted is gone from the node's logs (a reorg?): waiting for it",
               (unsigned long long)r);
  while (bbvfl_now() - t0 <= c->cfg->round_timeout_s) {
    bbvfl_sleep(delay);
    delay = delay * 1.5 > 1.0 ? 1.0 : delay * 1.5;
    if (bbvfl_sender_check(c->conn.snd, NULL, err) < 0) return -1;
    f = rc_from(c, r, c->sess->deploy_block, ev, err);
    if (f < 0) return -1;
    if (f == 1) {
      bbvfl_oc_log(c, "round %llu: RoundCompleted is back (block %llu)", (unsigned long long)r,
                   (unsigned long long)ev->block_number);
      return 0;
    }
  }
  return bbvfl_fail(err, BBVFL_E_STATE,
                    "RoundCompleted for round %llu left the node's logs after its GradientPosted was read (a reorg) "
                    "and did not come back within %.0f s",
                    (unsigned long long)r, c->cfg->round_timeout_s);
}

/* Labels split across clients: the round's LabelGradientPosted posts by the session's clients, in
   chain order (the contract takes one per holder and round), from block from_blk on (the round's
   RoundCompleted: they follow it). */
typedef struct {
  size_t n;
  uint8_t *d[64];
  size_t len[64];
  int who[64];
} label_posts;

static void label_posts_free(label_posts *lp) {
  for (size_t i = 0; i < lp->n; i++) free(lp->d[i]);
  lp->n = 0;
}

static int keep_post(void *ctx, int who, const bbvfl_cev *ev, bbvfl_err *err) {
  label_posts *lp = ctx;
  if (lp->n >= 64) return 0;
  lp->d[lp->n] = malloc(ev->data_len ? ev->data_len : 1);
  if (!lp->d[lp->n]) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  memcpy(lp->d[lp->n], ev->data, ev->data_len);
  lp->len[lp->n] = ev->data_len;
  lp->who[lp->n++] = who;
  return 0;
}

static int read_label_posts(cl *c, uint64_t r, uint64_t from_blk, label_posts *lp, bbvfl_err *err) {
  return bbvfl_oc_each_label_post(c, r, from_blk, keep_post, lp, err);
}

/* One training round through the replay. *ok: 1 consistent, 0 refused (res fields set). */
/* The client index of addr in clients() (the head check's class memory of the poster), -1 when
   not found (one shared memory then). */
static int poster_index(const cl *c, const uint8_t addr[20]) {
  for (size_t i = 0; i < c->lab.naddrs; i++)
    if (!memcmp(c->lab.addrs[i], addr, 20)) return (int)i;
  return -1;
}

static int check_one(cl *c, uint64_t r, const bbvfl_cev *gp, uint64_t from_blk, int *ok, bbvfl_err *err) {
  *ok = 1;
  bbvfl_round_layout L;
  if (bbvfl_cconfig_round(&c->cp.cfg, r, &L, err) < 0) return -1;
  bbvfl_cev rc;
  if (round_completed_ev(c, r, from_blk, &rc, err) < 0)
    return bbvfl_wrap(err, "round %llu: the head check needs the round's sum", (unsigned long long)r);
  label_posts lp = {0};
  int ret = -1;
  size_t B = c->cp.cfg.batch;
  size_t nb = L.rows / B ? L.rows / B : 1; /* a window's minibatches; lr: its rows in B-row blocks */
  const size_t *rows = NULL;               /* the window's training rows: positions of the epoch's schedule */
  if (!L.curv && ((uint64_t)L.first + nb) * B <= c->cp.cfg.train_rows) rows = bbvfl_schedule_batch(&c->sched, L.epoch, L.first);
  if (c->wire == BBVFL_WIRE_OPTIMISTIC && rc.data_len == 0 ? bbvfl_oc_claimed_sum(c, &rc, L.coords, err) < 0 /* a claim */
                                                           : bbvfl_cdec_round_sum(&c->cp, rc.data, rc.data_len, c->sum,
                                                                                  L.coords, err) < 0) {
    bbvfl_wrap(err, "round %llu: the RoundCompleted sum", (unsigned long long)r);
    goto out;
  }
  if (c->lab.split && read_label_posts(c, r, rc.block_number, &lp, err) < 0) {
    bbvfl_wrap(err, "round %llu: the label holders' posts", (unsigned long long)r);
    goto out;
  }
  if (c->hck.have_poster && memcmp(c->hck.poster, gp->client, 20)) bbvfl_hcheck_takeover(c->hck.st); /* re-election */
  memcpy(c->hck.poster, gp->client, 20);
  c->hck.have_poster = 1;
  bbvfl_hcheck_input in = {.round = r,
                           .epoch = (int)L.epoch,
                           .nb = nb,
                           .first_pos = (size_t)L.first * B,
                           .rows = rows,
                           .contributors = rc.participants,
                           .sum_q = c->sum,
                           .grad = gp->data,
                           .grad_len = gp->data_len,
                           .params = gp->data2,
                           .params_len = gp->data2_len,
                           .nlabel = lp.n,
                           .label = (const uint8_t *const *)lp.d,
                           .label_len = lp.len,
                           .label_holder = lp.who,
                           .curv = L.curv,
                           .active = poster_index(c, gp->client)};
  bbvfl_hcheck_result res;
  if (bbvfl_hcheck_round(c->hck.st, &in, &res, err) < 0) {
    bbvfl_wrap(err, "round %llu: the head check", (unsigned long long)r);
    goto out;
  }
  c->res->head_rounds++;
  if (res.verdict != BBVFL_HC_OK) {
    *ok = 0;
    c->res->head_refused = 1;
    c->res->head_round = r;
    snprintf(c->res->head_verdict, sizeof c->res->head_verdict, "%s", bbvfl_hcheck_verdict_name(res.verdict));
    bbvfl_hcheck_describe(&res, c->res->head_detail, sizeof c->res->head_detail);
  }
  ret = 0;
out:
  label_posts_free(&lp);
  bbvfl_cev_clear(&rc);
  return ret;
}

static int refuse(cl *c, bbvfl_err *err) {
  bbvfl_oc_log(c, "round %llu: REFUSED the active client's gradient: %s (%s); not applied", (unsigned long long)c->res->head_round,
         c->res->head_verdict, c->res->head_detail);
  return bbvfl_fail(err, BBVFL_E_VERIFY,
                    "round %llu: the active client's posted gradient and head are not the session head's (%s: %s); "
                    "refused, not applied: stopping",
                    (unsigned long long)c->res->head_round, c->res->head_verdict, c->res->head_detail);
}

int bbvfl_oc_head_check(cl *c, const bbvfl_oc_slot *sl, const bbvfl_cev *gp, uint64_t from_blk, bbvfl_err *err) {
  if (c->cfg->no_head_check) {
    snprintf(c->res->head_skipped, sizeof c->res->head_skipped, "turned off (--no-head-check: unsafe)");
    return 0;
  }
  if (c->is_active || !sl->L.train) return 0;
  if (c->res->head_refused) return refuse(c, err);
  double t0 = bbvfl_now();
  int rc = -1, ok = 1;
  if (!c->hck.st && hc_create(c, err) < 0) goto out;
  /* rounds this process has not checked (a restart resumes mid-session): from the chain first */
  for (uint64_t q = c->hck.next; q < sl->r && ok; q++) {
    bbvfl_round_layout Lq;
    if (bbvfl_cconfig_round(&c->cp.cfg, q, &Lq, err) < 0) goto out;
    if (!Lq.train) continue; /* the layout's: curvature rounds (--model lr) move the evaluation rounds */
    bbvfl_cev g;
    if (bbvfl_oc_find_event(c, BBVFL_EV_GRADIENT_POSTED, q, &g, err) < 0) {
      bbvfl_wrap(err, "the head check, catching up");
      goto out;
    }
    int k = check_one(c, q, &g, c->sess->deploy_block, &ok, err);
    bbvfl_cev_clear(&g);
    if (k < 0) goto out;
    c->hck.next = q + 1;
  }
  if (ok && check_one(c, sl->r, gp, from_blk, &ok, err) < 0) goto out;
  if (ok) c->hck.next = sl->r + 1;
  rc = 0;
out:
  c->res->head_s += bbvfl_now() - t0;
  if (rc == 0 && !ok) return refuse(c, err);
  return rc;
}
