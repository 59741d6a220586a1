#include "onchain/onchain_int.h"

#include "bbvfl_errors.h" /* generated from abi/: BBVFL_SEL_* */

#include "eth/abi.h"
#include "binding/fit.h"

/* ------------------------------------------------------------------ rounds */

/* The number of submissions round r's sum covers, as the round's RoundCompleted event states it
   (fewer than M after a dropout or an exclusion): the PBM estimate h_hat = C/(beta*b)*(sum - b*n/2)
   needs exactly that n. Never taken from a later read of the participant set, which may already
   reflect an exclusion after the round completed. Hashed mode: the number of payloads summed. */
int bbvfl_oc_take_contributors(cl *c, uint64_t r, unsigned n, bbvfl_err *err) {
  if (n == 0 || n > c->cp.cfg.clients)
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu: the sum covers %u submissions, outside 1..%u",
                      (unsigned long long)r, n, (unsigned)c->cp.cfg.clients);
  bbvfl_oc_lr_contributors(c, n);
  if (!c->have_head) return 0;
  if ((int)n != c->head.M)
    bbvfl_oc_log(c, "round %llu: the sum covers %u submissions (was %d)", (unsigned long long)r, n, c->head.M);
  c->head.M = (int)n;
  if (n < c->res->participants) c->res->participants = n;
  return 0;
}

/* A RoundCompleted event's sum into c->sum (coords values). */
int bbvfl_oc_sum_from_event(cl *c, const bbvfl_cev *ev, uint64_t coords, bbvfl_err *err) {
  if (bbvfl_oc_take_contributors(c, ev->round, ev->participants, err) < 0) return -1;
  return bbvfl_cdec_round_sum(&c->cp, ev->data, ev->data_len, c->sum, coords, err);
}

/* Masked hashed mode: the block of the latest RoundReopened(r) at or after from (0: none). The
   submissions before it were masked for the old set and no longer count: only those from that
   block on may be summed. */
static int reopened_at(cl *c, uint64_t r, uint64_t from, uint64_t *blk, bbvfl_err *err) {
  *blk = 0;
  uint8_t t1[32];
  bbvfl_cenc_word_u64(r, t1);
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(&c->agg, BBVFL_EV_ROUND_REOPENED, t1, from, BBVFL_BLOCK_LATEST, &logs, err) < 0) return -1;
  int rc = 0;
  size_t n = json_array_size(logs);
  bbvfl_cev ev;
  memset(&ev, 0, sizeof ev);
  if (n) {
    int k = bbvfl_cev_decode(json_array_get(logs, n - 1), &ev, err);
    if (k == 1 && ev.kind == BBVFL_EV_ROUND_REOPENED) *blk = ev.block_number;
    else rc = k < 0 ? bbvfl_wrap(err, "a RoundReopened log")
                    : bbvfl_fail(err, BBVFL_E_PARSE, "eth_getLogs for RoundReopened returned another event");
  }
  bbvfl_cev_clear(&ev);
  json_decref(logs);
  return rc;
}

/* Hashed mode: the payloads of round sl from the chain, once every participant has submitted
   (waited for within the round timeout), summed into c->sum; the active client sends the
   aggregate() call that makes the contract do the same sum (packed mode: the payloads are
   bit-packed; optimistic mode: the packed sum alone, postSum(), and after a dispute of the round
   the sum the dispute re-aggregated). */
static int hashed_sum(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->is_active && sl->submitted_before) {
    /* a restart: the round may have been aggregated before (aggregate() again reverts "round
       closed"); then its sum is in its RoundCompleted */
    bbvfl_cev ev;
    uint64_t blk = c->blk;
    c->blk = c->sess->deploy_block;
    int f = bbvfl_oc_query_event(c, BBVFL_EV_ROUND_COMPLETED, sl->r, &ev, err);
    c->blk = blk;
    if (f < 0) return -1;
    if (f == 1) {
      int ok = bbvfl_oc_sum_from_event(c, &ev, sl->L.coords, err);
      if (ok == 0 && !sl->L.train) c->done_blk[sl->r % OC_DONE_RING] = ev.block_number;
      bbvfl_cev_clear(&ev);
      return ok;
    }
  }
  if (c->wire == BBVFL_WIRE_OPTIMISTIC && sl->r == c->disputed_round) {
    /* the dispute re-aggregated the round: its sum is the RoundCompleted in the SumDisputed block */
    bbvfl_cev ev;
    uint64_t blk = c->blk;
    c->blk = c->disputed_blk;
    int f = bbvfl_oc_query_event(c, BBVFL_EV_ROUND_COMPLETED, sl->r, &ev, err);
    c->blk = blk;
    if (f <= 0) return f < 0 ? -1 : bbvfl_fail(err, BBVFL_E_STATE, "round %llu: no RoundCompleted with the dispute",
                                               (unsigned long long)sl->r);
    int ok = bbvfl_oc_sum_from_event(c, &ev, sl->L.coords, err);
    if (ok == 0 && !sl->L.train) c->done_blk[sl->r % OC_DONE_RING] = ev.block_number;
    bbvfl_cev_clear(&ev);
    return ok;
  }
  int packed = c->wire >= BBVFL_WIRE_PACKED;
  size_t n = c->naddrs;
  uint8_t **pl = calloc(n ? n : 1, sizeof *pl);
  size_t *plen = calloc(n ? n : 1, sizeof *plen);
  uint8_t(*parts)[20] = NULL;
  size_t np = 0, got = 0;
  int rc = -1;
  if (!pl || !plen) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  uint64_t back = sl->r >= OC_DONE_RING - 1 ? sl->r - (OC_DONE_RING - 1) : UINT64_MAX;
  uint64_t from = back != UINT64_MAX && c->done_blk[back % OC_DONE_RING] ? c->done_blk[back % OC_DONE_RING]
                                                                         : c->sess->deploy_block;
  double t0 = bbvfl_now(), delay = POLL_MIN_S, last_parts = -1, last_nudge = 0;
  for (;;) {
    if (bbvfl_now() - last_parts >= 1.0) {
      free(parts);
      parts = NULL;
      if (bbvfl_aggc_participants(&c->agg, &parts, &np, err) < 0) goto out;
      last_parts = bbvfl_now();
    }
    for (size_t i = 0; i < n; i++) free(pl[i]);
    if (c->masked) { /* after a re-open only the submissions masked for the new set count */
      uint64_t ro = 0;
      if (reopened_at(c, sl->r, from, &ro, err) < 0) goto out;
      if (ro > from) from = ro;
    }
    if (bbvfl_aggc_round_payloads(&c->agg, sl->r, from, (const uint8_t(*)[20])c->addrs, n,
                                  packed ? bbvfl_packed_len(sl->L.coords, c->cp.value_bits)
                                         : (size_t)sl->L.coords * (c->masked ? 2 : 1),
                                  pl, plen, &got, err) < 0)
      goto out;
    size_t have = 0;
    for (size_t k = 0; k < np; k++)
      for (size_t i = 0; i < n; i++)
        if (!memcmp(parts[k], c->addrs[i], 20) && pl[i]) have++;
    if (have == np && np > 0) {
      /* only the participants' payloads are summed (an excluded client may have submitted ahead) */
      for (size_t i = 0; i < n; i++) {
        int in = 0;
        for (size_t k = 0; k < np && !in; k++) in = !memcmp(parts[k], c->addrs[i], 20);
        if (!in && pl[i]) {
          free(pl[i]);
          pl[i] = NULL;
          got--;
        }
      }
      break;
    }
    /* as bbvfl_oc_wait_event: dropouts (masked re-open, --expire) and, for the active client, expireRound()
       for the clients that stopped submitting after --takeover-after */
    double now = bbvfl_now();
    if (c->masked || c->cfg->expire) {
      int k = bbvfl_oc_expire_wait_step(c, sl->r, now - t0, err);
      if (k < 0) goto out;
      if (k == 1) {
        t0 = bbvfl_now();
        last_parts = -1;
        continue;
      }
    }
    if (c->is_active && c->cfg->takeover_after_s > 0 && now - t0 > c->cfg->takeover_after_s && now - last_nudge >= 1.0) {
      last_nudge = now;
      int reset = 0;
      if (bbvfl_oc_nudge_active(c, sl->r, &reset, err) < 0) goto out;
      last_parts = -1; /* an exclusion shrinks the participants */
      continue;
    }
    if (!c->cfg->expire && bbvfl_now() - t0 > c->cfg->round_timeout_s) {
      bbvfl_fail(err, BBVFL_E_TIMEOUT,
                 "round %llu: %zu of %zu participants submitted within %.0f s; restart the missing clients",
                 (unsigned long long)sl->r, have, np, c->cfg->round_timeout_s);
      goto out;
    }
    bbvfl_sleep(delay);
    delay *= 1.5;
    if (delay > POLL_MAX_S) delay = POLL_MAX_S;
  }
  c->res->wait_s += bbvfl_now() - t0;
  uint64_t coords = sl->L.coords, lane = c->masked ? 2 : 1;
  memset(c->sum, 0, coords * sizeof *c->sum);
  const uint8_t **list = calloc(got ? got : 1, sizeof *list);
  size_t *lens = calloc(got ? got : 1, sizeof *lens), k = 0;
  if (!list || !lens) {
    free(list);
    free(lens);
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  uint32_t *tmp = packed ? malloc((coords ? coords : 1) * sizeof *tmp) : NULL;
  size_t slen = packed ? bbvfl_packed_len(coords, c->cp.sum_bits) : 0;
  uint8_t *psum = packed ? calloc(slen ? slen : 1, 1) : NULL;
  if (packed && (!tmp || !psum)) {
    free(list);
    free(lens);
    free(tmp);
    free(psum);
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    if (!pl[i]) continue;
    if (packed) { /* bit-packed at value_bits: the contract's sum of the packing, and the plain values */
      if (bbvfl_unpack(pl[i], plen[i], coords, c->cp.value_bits, tmp, err) < 0 ||
          bbvfl_packed_add(psum, slen, pl[i], plen[i], coords, c->cp.value_bits, c->cp.sum_bits, err) < 0) {
        free(list);
        free(lens);
        free(tmp);
        free(psum);
        bbvfl_wrap(err, "round %llu: client %zu's payload", (unsigned long long)sl->r, i);
        goto out;
      }
      for (uint64_t j = 0; j < coords; j++) c->sum[j] += tmp[j];
      list[k] = pl[i];
      lens[k++] = plen[i];
      continue;
    }
    if (plen[i] != coords * lane) {
      free(list);
      free(lens);
      free(tmp);
      free(psum);
      bbvfl_fail(err, BBVFL_E_VERIFY, "round %llu: client %zu submitted %zu bytes, expected %llu",
                 (unsigned long long)sl->r, i, plen[i], (unsigned long long)(coords * lane));
      goto out;
    }
    for (uint64_t j = 0; j < coords; j++)
      c->sum[j] += lane == 1 ? pl[i][j] : (uint32_t)((pl[i][2 * j] << 8) | pl[i][2 * j + 1]);
    list[k] = pl[i];
    lens[k++] = plen[i];
  }
  if (lane == 2)
    for (uint64_t j = 0; j < coords; j++) c->sum[j] &= 0xFFFF; /* the masks cancel mod 2^16 */
  int ok = bbvfl_oc_take_contributors(c, sl->r, (unsigned)got, err);
  if (ok == 0 && c->is_active) {
    uint8_t *cd = NULL;
    size_t len = 0;
    const char *what = "aggregate()";
    if (c->wire == BBVFL_WIRE_OPTIMISTIC) { /* the sum alone; any participant may dispute it */
      what = "postSum()";
      if (c->cfg->tamper) { /* test-only (bbvfl-tamper): NULL in release builds */
        struct bbvfl_onchain_tamper t = {.stage = BBVFL_TAMPER_SUM, .round = sl->r, .epoch = sl->L.epoch,
                                         .psum = psum, .psum_len = slen};
        if (c->cfg->tamper(c->cfg->tamper_ctx, &t, err) != 0) ok = bbvfl_wrap(err, "test tamper hook");
      }
      if (ok == 0) ok = bbvfl_cenc_post_sum(sl->r, psum, slen, &cd, &len, err);
    } else {
      ok = bbvfl_cenc_aggregate(sl->r, list, lens, got, &cd, &len, err);
    }
    if (ok == 0) ok = bbvfl_oc_out_send(c, cd, len, bbvfl_fit_aggregate_call_gas(len, got), what, OC_GAS_AGGREGATE, err);
    if (ok == 0) c->out[c->nout - 1].round = sl->r;
    free(cd);
    if (ok == 0 && !sl->L.train) c->done_blk[sl->r % OC_DONE_RING] = c->blk;
  }
  free(list);
  free(lens);
  free(tmp);
  free(psum);
  rc = ok;
out:
  for (size_t i = 0; pl && i < n; i++) free(pl[i]);
  free(pl);
  free(plen);
  free(parts);
  return rc;
}

int bbvfl_oc_round_sum(cl *c, bbvfl_oc_slot *sl, const bbvfl_receipt *rc, bbvfl_err *err) {
  if (c->hashed) return hashed_sum(c, sl, err);
  bbvfl_cev ev;
  int f = rc ? bbvfl_oc_receipt_event(c, rc, BBVFL_EV_ROUND_COMPLETED, sl->r, &ev, err) : 0;
  if (f < 0) return -1;
  if (!f) {
    c->blk = c->ev_blk;
    if (bbvfl_oc_wait_event(c, BBVFL_EV_ROUND_COMPLETED, sl->r, &ev, err) != 0) return -1;
  }
  if (ev.block_number > c->ev_blk) c->ev_blk = ev.block_number;
  int ok = bbvfl_oc_sum_from_event(c, &ev, sl->L.coords, err);
  bbvfl_cev_clear(&ev);
  return ok;
}

/* Test hook (cfg->dump_q_dir): the active client's labels of training round r as y-<round>.bin,
   the window's true labels then the labels trained on (they differ under label DP), int32
   little-endian. Plaintext labels: never in production. */
static int dump_y(cl *c, const bbvfl_oc_slot *sl, bbvfl_err *err) {
  char p[1300];
  size_t m = sl->L.rows;
  snprintf(p, sizeof p, "%s/y-%llu.bin", c->cfg->dump_q_dir, (unsigned long long)sl->r);
  uint8_t *b = malloc(8 * m);
  if (!b) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < 2 * m; i++) {
    uint32_t v = (uint32_t)(i < m ? c->cfg->ds->y[sl->rows[i]] : c->yb[i - m]);
    for (int k = 0; k < 4; k++) b[4 * i + (size_t)k] = (uint8_t)(v >> (8 * k));
  }
  int rc = bbvfl_write_file_atomic(p, b, 8 * m, 0600, err);
  free(b);
  return rc < 0 ? bbvfl_wrap(err, "test hook: writing y") : 0;
}

int bbvfl_oc_active_train(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->lr) return bbvfl_oc_lr_active_train(c, sl, err);
  size_t B = c->B, P = c->cp.cfg.dim, nb = sl->L.nb;
  for (size_t i = 0; i < sl->L.rows; i++) c->yb[i] = c->ylab[sl->rows[i]]; /* the labels trained on */
  if (c->cfg->dump_q_dir && !c->split && dump_y(c, sl, err) < 0) return -1;
  if (c->split && !c->own_all) {
    double loss = 0;
    if (bbvfl_oc_active_split_step(c, sl, &loss, err) < 0) return -1; /* labels split across clients */
    c->loss_sum += loss * (double)nb;
    c->trained += nb;
    return 0;
  }
  if (c->cfg->tamper) { /* test-only (bbvfl-tamper): NULL in release builds */
    struct bbvfl_onchain_tamper t = {.stage = BBVFL_TAMPER_TRAIN, .round = sl->r, .epoch = sl->L.epoch, .nb = nb,
                                     .B = B, .P = P, .y = c->yb, .sum = c->sum, .head = &c->head};
    if (c->cfg->tamper(c->cfg->tamper_ctx, &t, err) != 0) return bbvfl_wrap(err, "test tamper hook");
  }
  double t1 = bbvfl_now();
  for (size_t k = 0; k < nb; k++) {
    double loss = 0;
    if (bbvfl_vhead_train(&c->head, c->sum + k * B * P, NULL, c->yb + k * B, B, &loss, c->grad + k * B * P, NULL,
                          err) < 0)
      return bbvfl_wrap(err, "batch %zu of the window", k);
    c->loss_sum += loss;
    c->trained++;
  }
  c->res->learn_s += bbvfl_now() - t1;
  return 0;
}

int bbvfl_oc_active_eval(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->lr) return bbvfl_oc_lr_active_eval(c, sl, err);
  double t1 = bbvfl_now();
  int rc = bbvfl_vhead_eval(&c->head, c->sum, NULL, sl->L.rows, c->probs + (size_t)sl->L.first * (size_t)c->K, err);
  c->res->learn_s += bbvfl_now() - t1;
  return rc;
}

int bbvfl_oc_out_send(cl *c, const uint8_t *cd, size_t len, uint64_t gas, const char *what, int kind, bbvfl_err *err) {
  if (c->nout == c->capout) {
    size_t cap = c->capout ? 2 * c->capout : 8;
    bbvfl_oc_out *o = realloc(c->out, cap * sizeof *o);
    if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    c->out = o;
    c->capout = cap;
  }
  double t0 = bbvfl_now();
  bbvfl_oc_out *o = &c->out[c->nout];
  int rc = bbvfl_sender_send_tracked(c->snd, c->agg.address, NULL, cd, len, gas, &o->p, err);
  c->res->send_s += bbvfl_now() - t0;
  if (rc < 0) return bbvfl_wrap(err, "%s", what);
  o->what = what;
  o->kind = kind;
  o->round = UINT64_MAX;
  c->nout++;
  return 0;
}

/* 1 when the chain holds round r's RoundCompleted (from the session's deployment on: one log
   query by round), 0 when not, -1 on an RPC error. */
static int round_completed(cl *c, uint64_t r, bbvfl_err *err) {
  uint8_t t1[32];
  bbvfl_cenc_word_u64(r, t1);
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(&c->agg, BBVFL_EV_ROUND_COMPLETED, t1, c->sess->deploy_block, BBVFL_BLOCK_LATEST, &logs, err) <
      0)
    return bbvfl_wrap(err, "round %llu: was it aggregated by another sender?", (unsigned long long)r);
  int found = 0;
  for (size_t k = 0; k < json_array_size(logs) && !found; k++) {
    bbvfl_cev ev;
    int d = bbvfl_cev_decode(json_array_get(logs, k), &ev, err);
    if (d < 0) {
      json_decref(logs);
      return -1;
    }
    found = d == 1 && ev.kind == BBVFL_EV_ROUND_COMPLETED && ev.round == r && !memcmp(ev.emitter, c->agg.address, 20);
    bbvfl_cev_clear(&ev);
  }
  json_decref(logs);
  return found;
}

int bbvfl_oc_out_wait(cl *c, bbvfl_err *err) {
  int rc = 0;
  double t0 = bbvfl_now();
  for (size_t i = 0; i < c->nout; i++) {
    bbvfl_receipt r;
    bbvfl_err e = {0};
    int ok = bbvfl_sender_wait_tracked(c->snd, &c->out[i].p, c->cfg->round_timeout_s, &r, &e);
    if (ok == 0 && c->out[i].kind == OC_GAS_PAYOUT && c->cfg->confirmations) {
      /* a payout cannot be undone: it counts once it is confirmations deep in a block still canonical */
      ok = bbvfl_sender_confirm(c->snd, &r, c->cfg->confirmations, 2 * c->cfg->round_timeout_s, &e);
      if (ok == 0)
        bbvfl_oc_log(c, "%s: %u confirmations (block %llu)", c->out[i].what, c->cfg->confirmations,
               (unsigned long long)r.block_number);
    }
    switch (c->out[i].kind) {
    case OC_GAS_SUBMIT: c->res->gas_submit += r.gas_used; break;
    case OC_GAS_AGGREGATE: c->res->gas_aggregate += r.gas_used; break;
    case OC_GAS_GRADIENT: c->res->gas_gradient += r.gas_used; break;
    default: c->res->gas_other += r.gas_used; break;
    }
    if (r.block_number > c->blk) c->blk = r.block_number;
    bbvfl_receipt_clear(&r);
    if (ok < 0 && c->out[i].kind == OC_GAS_AGGREGATE && e.code == BBVFL_E_REVERT) {
      /* Anyone may aggregate: when another sender's aggregate() of the round landed first (a
         stranger with a higher tip in the same block, a demoted or a new active client), this one
         reverts, and replaying it as a call on the block before does not even say why. The chain
         decides: the round's RoundCompleted exists. Its sum is the one this client computed (the
         contract checked every payload against its stored hash). */
      bbvfl_err e3 = {0};
      if (round_completed(c, c->out[i].round, &e3) == 1) { /* an RPC error keeps the revert */
        bbvfl_oc_log(c, "round %llu: %s reverted; the round was aggregated by another sender (RoundCompleted on chain)",
               (unsigned long long)c->out[i].round, c->out[i].what);
        ok = 0;
      }
    }
    if (ok < 0 && rc == 0) {
      rc = -1;
      *err = e;
      bbvfl_wrap(err, "%s", c->out[i].what);
    }
    bbvfl_pending_clear(&c->out[i].p);
  }
  c->nout = 0;
  c->res->send_s += bbvfl_now() - t0;
  return rc;
}

/* Test metrics of the scores in probs over the rows with a label (y >= 0). */
static void bbvfl_oc_metrics_of(const cl *c, const float *probs, const int *y, size_t n, bbvfl_epoch_metrics *em) {
  em->test_loss = bbvfl_loss_from_probs(probs, y, n, c->cfg->ds->nclasses);
  bbvfl_err merr = {0};
  if (c->K == 1) {
    if (bbvfl_auroc(probs, y, n, &em->auroc, &merr) != 0) em->auroc = 0.5;
    em->accuracy = bbvfl_accuracy_bin(probs, y, n, 0.5);
    em->f1 = bbvfl_f1_bin(probs, y, n, 0.5);
  } else {
    if (bbvfl_auroc_multi(probs, y, n, c->K, &em->auroc, &merr) != 0) em->auroc = 0.5;
    em->accuracy = bbvfl_accuracy_multi(probs, y, n, c->K);
    em->f1 = bbvfl_f1_macro(probs, y, n, c->K);
  }
}

/* The epoch's metrics into per_epoch[e]. Labels split across clients: over the rows whose labels
   this client holds (training loss: its labelled training rows; test metrics: its labelled test
   rows; all zero when it holds none, labelled_test_rows says so). */
int bbvfl_oc_fill_metrics(cl *c, uint32_t e, bbvfl_err *err) {
  bbvfl_epoch_metrics *em = &c->res->per_epoch[e];
  memset(em, 0, sizeof *em);
  em->epoch = (int)e + 1;
  em->agg_train_s = c->agg_sum;
  c->res->agg_s[e] = c->agg_sum;
  if (!c->split || c->own_all) {
    /* an epoch this client took over mid-way: the mean over the rounds it trained */
    size_t nt = c->takeover_epoch == (int)e ? c->trained : c->lr ? bbvfl_oc_lr_batches(c) : c->cp.cfg.batches_per_epoch;
    em->train_loss = nt ? c->loss_sum / (double)nt : 0;
    bbvfl_oc_metrics_of(c, c->probs, c->yeval, c->neval, em);
    return 0;
  }
  em->train_loss = c->lrows_n > 0 ? c->lrows_loss / c->lrows_n : 0;
  size_t m = c->res->labelled_test_rows, K = (size_t)c->K, j = 0;
  if (m == 0) return 0;
  float *p = malloc(m * K * sizeof *p);
  int *y = malloc(m * sizeof *y);
  if (!p || !y) {
    free(p);
    free(y);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < c->neval; i++) {
    if (c->yeval[i] < 0) continue;
    memcpy(p + j * K, c->probs + i * K, K * sizeof *p);
    y[j++] = c->yeval[i];
  }
  bbvfl_oc_metrics_of(c, p, y, m, em);
  free(p);
  free(y);
  return 0;
}

int bbvfl_oc_post_epoch(cl *c, uint32_t e, bbvfl_err *err) {
  bbvfl_epoch_metrics *em = &c->res->per_epoch[e];
  if (bbvfl_oc_fill_metrics(c, e, err) < 0) return -1;
  if (c->split && !c->own_all && c->res->labelled_test_rows == 0)
    bbvfl_oc_log(c, "epoch %u: this active client holds no test labels: the metrics it posts are zeros", e + 1);
  bbvfl_epoch_state st;
  if (bbvfl_aggc_epoch_state(&c->agg, e, &st, err) < 0) return -1;
  uint8_t *cd;
  size_t len;
  if (!st.metrics_posted) {
    double loss = em->test_loss < 0 ? 0 : em->test_loss;
    if (loss > 1e12) loss = 1e12;
    if (bbvfl_cenc_post_metrics(e, (uint32_t)(em->auroc * 1e6 + 0.5), (uint32_t)(em->accuracy * 1e6 + 0.5),
                                (uint64_t)(loss * 1e6 + 0.5), &cd, &len, err) < 0)
      return -1;
    int rc = bbvfl_oc_out_send(c, cd, len, 150000, "postMetrics()", 0, err);
    free(cd);
    if (rc < 0) return -1;
  }
  if (!st.rewards_paid) {
    if (bbvfl_cenc_pay_rewards(e, &cd, &len, err) < 0) return -1;
    int rc = bbvfl_oc_out_send(c, cd, len, 150000 + 80000 * (uint64_t)c->cp.cfg.clients, "payRewards()", OC_GAS_PAYOUT, err);
    free(cd);
    if (rc < 0) return -1;
  }
  bbvfl_oc_log(c, "epoch %u: train loss %.4f, test loss %.4f, AUROC %.4f, accuracy %.4f, on-chain aggregation %.4f s", e + 1,
        em->train_loss, em->test_loss, em->auroc, em->accuracy, c->agg_sum);
  return 0;
}


/* After an active client's call reverted with NotActive(), or with NotTraining() (the session
   ended while this client was stopped: the client elected in its place finished it): 1 when the
   chain has elected another client (this one was slow, not dead): it carries on as a passive
   client (err cleared); 0 when not (err kept). */
int bbvfl_oc_demoted(cl *c, uint64_t r, bbvfl_err *err) {
  if (!bbvfl_err_revert_sel_is(err, BBVFL_SEL_NotActive) && !bbvfl_err_revert_sel_is(err, BBVFL_SEL_NotTraining))
    return 0;
  uint8_t act[20];
  bbvfl_err e2 = {0};
  if (bbvfl_aggc_active(&c->agg, act, &e2) < 0 || !memcmp(act, c->me, 20)) return 0;
  char a[43];
  bbvfl_addr_checksum(act, a);
  bbvfl_oc_log(c, "round %llu: the chain elected %s while this client was slow; carrying on as a passive client",
        (unsigned long long)r, a);
  memcpy(c->active, act, 20);
  c->is_active = 0;
  memset(err, 0, sizeof *err);
  return 1;
}

/* The head as the off-chain trainer initialises it (session seed) and its parameter buffer. */
int bbvfl_oc_init_head(cl *c, bbvfl_err *err) {
  const bbvfl_session *s = c->sess;
  if (bbvfl_vhead_init(&c->head, (int)s->cparams.dim, c->cfg->ds->nclasses, s->cparams.clients, &s->train.mech,
                       &s->train.opt, c->cfg->seed, err) < 0)
    return -1;
  c->have_head = 1;
  c->head_len = 4 * bbvfl_vhead_nparams(&c->head);
  c->head_be = malloc(c->head_len ? c->head_len : 1);
  if (!c->head_be) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

/* One event of the session for `round`, searched from the deploy block. 0 found, -1 missing/error. */
int bbvfl_oc_find_event(cl *c, bbvfl_cev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err) {
  uint64_t blk = c->blk;
  c->blk = c->sess->deploy_block;
  int f = bbvfl_oc_query_event(c, kind, round, ev, err);
  c->blk = blk;
  if (f < 0) return -1;
  if (f == 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "%s for round %llu is not in the node's logs", bbvfl_cev_signature(kind),
                      (unsigned long long)round);
  return 0;
}

/* Evaluates the head on the first `count` evaluation rounds of epoch e from their RoundCompleted
   sums (into c->probs). */
int bbvfl_oc_rebuild_eval(cl *c, uint64_t e, size_t count, bbvfl_err *err) {
  uint64_t r0 = bbvfl_cconfig_epoch_start(&c->cp.cfg, e), r1 = bbvfl_cconfig_epoch_start(&c->cp.cfg, e + 1);
  for (uint64_t r = r0; r < r1; r++) {
    bbvfl_round_layout L;
    if (bbvfl_cconfig_round(&c->cp.cfg, r, &L, err) < 0) return -1;
    if (L.train) continue;
    if (L.index >= count) break;
    bbvfl_cev ev;
    if (bbvfl_oc_find_event(c, BBVFL_EV_ROUND_COMPLETED, r, &ev, err) < 0) return -1;
    int ok = bbvfl_oc_sum_from_event(c, &ev, L.coords, err);
    bbvfl_cev_clear(&ev);
    if (ok < 0 ||
        bbvfl_vhead_eval(&c->head, c->sum, NULL, L.rows, c->probs + (size_t)L.first * (size_t)c->K, err) < 0)
      return bbvfl_wrap(err, "re-evaluating round %llu", (unsigned long long)r);
  }
  return 0;
}

/* This client was elected during the session (reelect() or expireRound()) while at round r: it
   takes the head over from the last GradientPosted (checked against lastFusionParamsHash), settles
   the previous epoch if its metrics or rewards are missing, and re-evaluates the evaluation rounds
   of r's epoch that are already complete. */
int bbvfl_oc_take_over(cl *c, uint64_t r, bbvfl_err *err) {
  if (c->lr)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "round %llu: this client was elected the new active client, but taking the head over is not "
                      "built for --model lr (docs/LR.md)",
                      (unsigned long long)r);
  if (!c->cfg->has_labels && !c->split)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "round %llu: this client was elected the new active client but holds no labels (--labels)",
                      (unsigned long long)r);
  c->is_active = 1;
  uint64_t blk0 = c->blk; /* the round's events may precede the settling transactions below */
  bbvfl_round_layout Lr; /* r's place: its epoch, and the evaluation rounds of it before r */
  if (bbvfl_cconfig_round(&c->cp.cfg, r, &Lr, err) < 0) return -1;
  uint64_t e = Lr.epoch;
  if (!c->have_head && bbvfl_oc_init_head(c, err) < 0) return -1;
  bbvfl_vhead_epoch(&c->head, (int)e);
  static const uint8_t zero[32];
  uint8_t h[32];
  uint64_t fr = 0;
  if (bbvfl_aggc_last_fusion_hash(&c->agg, h, err) < 0) return -1;
  int have_fr = memcmp(h, zero, 32) != 0;
  int rolled = 0;
  if (have_fr && bbvfl_aggc_last_fusion_round(&c->agg, &fr, err) < 0) return -1;
  if (have_fr && fr >= r) {
    /* optimistic mode after a dispute rolled the session back to r: the last post is the disputed
       round's (or a later one's); the head is the one the latest training round before r posted */
    rolled = 1;
    have_fr = 0;
    for (uint64_t p = r; p-- > 0;)
      if (bbvfl_oc_is_train_round(c, p)) {
        fr = p;
        have_fr = 1;
        break;
      }
  }
  if (have_fr) {
    bbvfl_cev gp;
    if (bbvfl_oc_find_event(c, BBVFL_EV_GRADIENT_POSTED, fr, &gp, err) < 0) return -1;
    uint8_t got[32];
    bbvfl_keccak256(gp.data2, gp.data2_len, got);
    int rc = !rolled && memcmp(got, h, 32) ? bbvfl_fail(err, BBVFL_E_STATE,
                                             "GradientPosted(%llu)'s parameters do not match lastFusionParamsHash()",
                                             (unsigned long long)fr)
                                : bbvfl_vhead_load_params_be(&c->head, gp.data2, gp.data2_len, err);
    bbvfl_cev_clear(&gp);
    if (rc < 0) return bbvfl_wrap(err, "taking over the head");
    bbvfl_oc_log(c, "round %llu: took over the fusion head from GradientPosted(round %llu) (%zu parameters; the optimizer "
          "state starts afresh)", (unsigned long long)r, (unsigned long long)fr, c->head_len / 4);
  } else {
    bbvfl_oc_log(c, "round %llu: no gradient posted yet: the head starts from the session's initialisation",
          (unsigned long long)r);
  }
  if (e > 0 && (!have_fr || fr < bbvfl_cconfig_epoch_start(&c->cp.cfg, e))) {
    /* no training round of epoch e was posted: the head is the one epoch e-1 ended with */
    bbvfl_epoch_state st;
    if (bbvfl_aggc_epoch_state(&c->agg, (uint32_t)(e - 1), &st, err) < 0) return -1;
    if (!st.metrics_posted || !st.rewards_paid) {
      bbvfl_oc_log(c, "epoch %llu: metrics or rewards missing; settling it", (unsigned long long)e);
      if (bbvfl_oc_rebuild_eval(c, e - 1, c->V, err) < 0) return -1;
      c->loss_sum = c->agg_sum = 0;
      c->trained = 0;
      c->takeover_epoch = (int)(e - 1);
      if (bbvfl_oc_post_epoch(c, (uint32_t)(e - 1), err) < 0) return -1;
    }
  }
  c->loss_sum = c->agg_sum = 0;
  c->trained = 0;
  c->takeover_epoch = (int)e;
  if (!Lr.train && Lr.index > 0 && bbvfl_oc_rebuild_eval(c, e, Lr.index, err) < 0) return -1;
  c->blk = blk0;
  return 0;
}
