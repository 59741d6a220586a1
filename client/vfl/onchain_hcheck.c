/* A passive client checks the active client before it applies anything (issue 28, deliverable 5;
 * docs/ONCHAIN.md "Passive clients check the head").
 *
 * Every posted gradient of a training round and the head parameters posted with it must be what
 * the session's head computes from public data: the replay is vfl/headcheck.h's (the audit's check
 * `head` runs the same code); this file only feeds it what the client reads from the chain: the
 * round's sum and contributor count (RoundCompleted), the GradientPosted data, and the window's
 * training rows (the schedule of S, which every client derives). A post that deviates is refused:
 * the client stops with BBVFL_E_VERIFY naming the round and the deviation, never back-propagating
 * it, and its summary says so ("head_check").
 *
 * What it relies on: the replay is exact on the same code and within the documented tolerance
 * across machines (vfl/headcheck.h). Not checked here (yet): sessions with labels split across
 * clients and `--model lr` (res->head_skipped says so; the audit's check `head` covers them). A
 * restarted passive client first replays, from the chain, the training rounds before the one it
 * resumes at. A re-election (another address posts the gradients) restarts the replay's optimizer
 * state, as the new active client restarts its own (bbvfl_hcheck_takeover). */
#include "vfl/onchain_int.h"

#include "vfl/headcheck.h"

void oc_head_check_free(cl *c) {
  bbvfl_hcheck_free(c->hc);
  c->hc = NULL;
}

static int hc_create(cl *c, bbvfl_err *err) {
  bbvfl_hcheck_cfg hc = {.train = &c->sess->train,
                         .P = (int)c->cp.cfg.dim,
                         .nclasses = c->cfg->ds->nclasses,
                         .B = c->B,
                         .seed = c->cfg->seed, /* the head's initialisation, as oc_init_head's */
                         .n_rows = c->data.n_train};
  if (bbvfl_hcheck_new(&c->hc, &hc, err) < 0) return bbvfl_wrap(err, "the head check");
  c->hc_next = 0;
  c->hc_have_poster = 0;
  return 0;
}

/* The round's RoundCompleted: from from_blk on, else from the session's deployment. */
static int round_completed_ev(cl *c, uint64_t r, uint64_t from_blk, bbvfl_cev *ev, bbvfl_err *err) {
  uint64_t keep = c->blk;
  c->blk = from_blk;
  int f = oc_query_event(c, BBVFL_EV_ROUND_COMPLETED, r, ev, err);
  c->blk = keep;
  if (f < 0) return -1;
  if (f == 1) return 0;
  return oc_find_event(c, BBVFL_EV_ROUND_COMPLETED, r, ev, err);
}

/* One training round through the replay. *ok: 1 consistent, 0 refused (res fields set). */
static int check_one(cl *c, uint64_t r, const bbvfl_cev *gp, uint64_t from_blk, int *ok, bbvfl_err *err) {
  *ok = 1;
  bbvfl_round_layout L;
  if (bbvfl_cconfig_round(&c->cp.cfg, r, &L, err) < 0) return -1;
  bbvfl_cev rc;
  if (round_completed_ev(c, r, from_blk, &rc, err) < 0)
    return bbvfl_wrap(err, "round %llu: the head check needs the round's sum", (unsigned long long)r);
  size_t nrows = (size_t)L.nb * c->B;
  size_t *rows = malloc((nrows ? nrows : 1) * sizeof *rows);
  int ret = -1;
  if (!rows) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  for (uint32_t k = 0; k < L.nb; k++) {
    const size_t *p = bbvfl_schedule_batch(&c->sched, L.epoch, L.first + k);
    memcpy(rows + (size_t)k * c->B, p, c->B * sizeof *rows);
  }
  if (bbvfl_cdec_sum(rc.data, rc.data_len, c->cp.lane_bits, c->sum, L.coords, err) < 0) {
    bbvfl_wrap(err, "round %llu: the RoundCompleted sum", (unsigned long long)r);
    goto out;
  }
  if (c->hc_have_poster && memcmp(c->hc_poster, gp->client, 20)) bbvfl_hcheck_takeover(c->hc); /* re-election */
  memcpy(c->hc_poster, gp->client, 20);
  c->hc_have_poster = 1;
  bbvfl_hcheck_input in = {.round = r,
                           .epoch = (int)L.epoch,
                           .nb = L.nb,
                           .rows = rows,
                           .contributors = rc.participants,
                           .sum_q = c->sum,
                           .grad = gp->data,
                           .grad_len = gp->data_len,
                           .params = gp->data2,
                           .params_len = gp->data2_len};
  bbvfl_hcheck_result res;
  if (bbvfl_hcheck_round(c->hc, &in, &res, err) < 0) {
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
  free(rows);
  bbvfl_cev_clear(&rc);
  return ret;
}

static int refuse(cl *c, bbvfl_err *err) {
  oc_log(c, "round %llu: REFUSED the active client's gradient: %s (%s); not applied", (unsigned long long)c->res->head_round,
         c->res->head_verdict, c->res->head_detail);
  return bbvfl_fail(err, BBVFL_E_VERIFY,
                    "round %llu: the active client's posted gradient and head are not the session head's (%s: %s); "
                    "refused, not applied: stopping",
                    (unsigned long long)c->res->head_round, c->res->head_verdict, c->res->head_detail);
}

int oc_head_check(cl *c, const oc_slot *sl, const bbvfl_cev *gp, uint64_t from_blk, bbvfl_err *err) {
  if (c->cfg->no_head_check) {
    snprintf(c->res->head_skipped, sizeof c->res->head_skipped, "turned off (--no-head-check: unsafe)");
    return 0;
  }
  if (c->is_active || !sl->L.train) return 0;
  if (c->lr || c->split) {
    snprintf(c->res->head_skipped, sizeof c->res->head_skipped, "not done by the client for %s (the audit's check "
             "`head` covers it)", c->lr ? "--model lr" : "labels split across clients");
    return 0;
  }
  if (c->res->head_refused) return refuse(c, err);
  double t0 = bbvfl_now();
  int rc = -1, ok = 1;
  if (!c->hc && hc_create(c, err) < 0) goto out;
  /* rounds this process has not checked (a restart resumes mid-session): from the chain first */
  for (uint64_t q = c->hc_next; q < sl->r && ok; q++) {
    if (!oc_is_train_round(c, q)) continue;
    bbvfl_cev g;
    if (oc_find_event(c, BBVFL_EV_GRADIENT_POSTED, q, &g, err) < 0) {
      bbvfl_wrap(err, "the head check, catching up");
      goto out;
    }
    int k = check_one(c, q, &g, c->sess->deploy_block, &ok, err);
    bbvfl_cev_clear(&g);
    if (k < 0) goto out;
    c->hc_next = q + 1;
  }
  if (ok && check_one(c, sl->r, gp, from_blk, &ok, err) < 0) goto out;
  if (ok) c->hc_next = sl->r + 1;
  rc = 0;
out:
  c->res->head_s += bbvfl_now() - t0;
  if (rc == 0 && !ok) return refuse(c, err);
  return rc;
}
