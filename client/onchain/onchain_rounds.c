#include "onchain/onchain_int.h"

#include "bbvfl_errors.h" /* generated from abi/: BBVFL_SEL_* */
#include "eth/abi.h"
#include "binding/fit.h"
#include "core/rounds.h"

/* The round steps of one client; the loop that orders them is core/rounds.h's (the off-chain
 * trainer runs the same loop with its in-process steps). For round r: the rounds the schedule
 * says must be finished first are finished, the checkpoint is written, then r starts: its forward
 * (the window's minibatches from the schedule of S, or the evaluation round's test rows), the
 * submission sent without waiting for its receipt. Finishing a round: the submission's receipt;
 * for a passive client the window's gradients (GradientPosted), applied through the activations
 * of the forward that made the submission; for the active client the sum, the head's steps, the
 * gradient post (and in hashed mode the aggregate() call), the evaluation scores and, after an
 * epoch, its metrics and rewards. Lane storage keeps one round open (every earlier round is
 * finished before the next starts); hashed aggregation pipelines within the staleness, and its
 * evaluation rounds hold nothing up: the next epoch's first window is submitted next to the
 * evaluation round, in the same block on a chain with a block time. */

static int bbvfl_oc_dump_q(cl *c, const bbvfl_oc_slot *sl, bbvfl_err *err) {
  char p[1300];
  snprintf(p, sizeof p, "%s/q-%d-%llu.bin", c->cfg->dump_q_dir, c->res->index, (unsigned long long)sl->r);
  if (bbvfl_write_file_atomic(p, sl->q, sl->L.coords, 0600, err) < 0) return bbvfl_wrap(err, "test hook: writing q");
  return 0;
}

/* submit(r, ...) calldata: q itself in plain mode (bit-packed in packed and optimistic modes), q
   masked for the current set in masked mode. */
static int encode_submission(cl *c, bbvfl_oc_slot *sl, uint8_t **cd, size_t *len, bbvfl_err *err) {
  if (c->cfg->dump_q_dir && bbvfl_oc_dump_q(c, sl, err) < 0) return -1;
  if (c->wire >= BBVFL_WIRE_PACKED) { /* packed and optimistic modes: value_bits per value */
    size_t n = sl->L.coords, plen = bbvfl_packed_len(n, c->cp.value_bits);
    uint32_t *v = malloc((n ? n : 1) * sizeof *v);
    uint8_t *p = malloc(plen ? plen : 1);
    int rc = v && p ? 0 : bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) v[i] = sl->q[i];
    if (rc == 0) rc = bbvfl_pack(v, n, c->cp.value_bits, p, plen, err);
    if (rc == 0) rc = bbvfl_cenc_submit(sl->r, p, plen, cd, len, err);
    free(v);
    free(p);
    return rc;
  }
  if (!c->masked) return bbvfl_cenc_submit(sl->r, sl->q, sl->L.coords, cd, len, err);
  sl->sub_blk = c->blk;
  c->mc.n = sl->L.coords;
  if (bbvfl_mclient_mask(&c->mc, sl->r, sl->q, err) < 0) return -1;
  return bbvfl_cenc_submit(sl->r, c->mc.lanes, 2 * sl->L.coords, cd, len, err);
}

/* The table rows of round r into sl->rows. */
static void round_rows(cl *c, bbvfl_oc_slot *sl) {
  const bbvfl_round_layout *L = &sl->L;
  if (L->train) {
    for (uint32_t k = 0; k < L->nb; k++) {
      const size_t *p = bbvfl_schedule_batch(&c->sched, L->epoch, L->first + k);
      for (size_t i = 0; i < c->B; i++) sl->rows[k * c->B + i] = c->data.train[p[i]];
    }
  } else {
    memcpy(sl->rows, c->data.test + L->first, L->rows * sizeof *sl->rows);
  }
}

static int take_slot(cl *c, uint64_t r, bbvfl_oc_slot **out, bbvfl_err *err) {
  bbvfl_oc_slot *sl = bbvfl_oc_slot_of(c, r);
  if (sl->r != UINT64_MAX)
    return bbvfl_fail(err, BBVFL_E_INTERNAL, "round %llu: its slot still holds round %llu", (unsigned long long)r,
                      (unsigned long long)sl->r);
  if (bbvfl_cconfig_round(&c->cp.cfg, r, &sl->L, err) < 0) return -1;
  sl->r = r;
  sl->submitted_before = 0;
  round_rows(c, sl);
  *out = sl;
  return 0;
}

static void free_slot(bbvfl_oc_slot *sl) {
  bbvfl_pending_clear(&sl->tx);
  sl->r = UINT64_MAX;
}

/* Whether the chain already has this client's submission to round r (after a restart). */
static int already_submitted(cl *c, uint64_t r, int *yes, bbvfl_err *err) {
  if (c->hashed) return bbvfl_aggc_has_submitted(&c->agg, r, c->me, yes, err);
  bbvfl_client_info ci;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  *yes = ci.accepted > r;
  return 0;
}

/* A submission to round r reverted RoundNotOpen: the chain is behind the events this client acted
   on (a reorg took them out; their senders hand them in again). Waits, looking after this client's
   own transactions, until the submission would be accepted (asked as an eth_call from this key:
   no transaction until then), then sends the same submission again and takes its receipt. 0: the
   new submission is mined; -1: error (the round does not open within round_timeout_s). */
static int resubmit_after_reorg(cl *c, bbvfl_oc_slot *sl, bbvfl_receipt *rc, bbvfl_err *err) {
  bbvfl_oc_log(c, "round %llu: the round is not open (a reorg, or a dispute that rolled the session back): waiting for "
         "it to open again, then submitting the same q again", (unsigned long long)sl->r);
  uint8_t *cd;
  size_t len;
  if (encode_submission(c, sl, &cd, &len, err) < 0) return -1;
  double t0 = bbvfl_now();
  for (;;) {
    if (bbvfl_sender_check(c->conn.snd, NULL, err) < 0) break;
    uint8_t *out = NULL;
    size_t olen = 0;
    bbvfl_err e = {0};
    int crc = bbvfl_rpc_eth_call(c->conn.rpc, c->me, c->agg.address, cd, len, NULL, &out, &olen, &e);
    free(out);
    if (crc == 0) {
      int ok = bbvfl_sender_send_tracked(c->conn.snd, c->agg.address, NULL, cd, len, bbvfl_oc_submit_gas(c, sl->L.coords), &sl->tx,
                                         err);
      if (ok < 0) break;
      ok = bbvfl_sender_wait_tracked(c->conn.snd, &sl->tx, c->cfg->round_timeout_s, rc, err);
      bbvfl_pending_clear(&sl->tx);
      if (rc->gas_used) c->res->gas_submit += rc->gas_used;
      if (ok == 0) {
        bbvfl_oc_log(c, "round %llu: submitted again after the round reopened", (unsigned long long)sl->r);
        free(cd);
        return 0;
      }
      if (!bbvfl_err_revert_sel_is(err, BBVFL_SEL_RoundNotOpen)) break;
      /* another reorg took the round back out while this submission was on its way: wait again */
      bbvfl_receipt_clear(rc);
      memset(err, 0, sizeof *err);
      bbvfl_oc_log(c, "round %llu: the submission sent again reverted RoundNotOpen too (another reorg): waiting again",
                   (unsigned long long)sl->r);
      t0 = bbvfl_now();
      continue;
    }
    if (e.code != BBVFL_E_REVERT || !bbvfl_err_revert_sel_is(&e, BBVFL_SEL_RoundNotOpen)) {
      *err = e; /* another reason now: the caller explains it */
      break;
    }
    /* optimistic, the active client: the round opens once the gradient of a round a dispute
       rolled back is posted again, which is this client's to do */
    int k = bbvfl_oc_repost_rolled_back(c, err);
    /* the active client: a call of its own a reorg took out and its re-sent copy did not redo */
    if (k == 0) k = bbvfl_oc_repair_lost(c, err);
    if (k < 0) break;
    if (k == 1) t0 = bbvfl_now();
    if (bbvfl_now() - t0 > c->cfg->round_timeout_s) {
      char why[400];
      if (!bbvfl_sender_stall_cause(c->conn.snd, why, sizeof why)) snprintf(why, sizeof why, "no client re-sent them");
      bbvfl_fail(err, BBVFL_E_TIMEOUT, "round %llu did not open again within %.0f s after the chain went back (a reorg or a dispute): %s",
                 (unsigned long long)sl->r, c->cfg->round_timeout_s, why);
      break;
    }
    bbvfl_sleep(0.1);
  }
  free(cd);
  return -1;
}

/* The receipt of a round's submission: a revert is explained (AlreadySubmitted, or RoundClosed once
   the round completed, after a send that looked lost is fine when the chain has this client's
   submission; ClientExcluded says why). rc receives the receipt (cleared by the caller). */
static int submission_receipt(cl *c, bbvfl_oc_slot *sl, bbvfl_receipt *rc, int *have, bbvfl_err *err) {
  *have = 0;
  memset(rc, 0, sizeof *rc);
  if (!sl->tx.raw) return 0;
  double t0 = bbvfl_now();
  int ok = bbvfl_sender_wait_tracked(c->conn.snd, &sl->tx, c->cfg->round_timeout_s, rc, err);
  c->res->send_s += bbvfl_now() - t0;
  if (rc->gas_used) c->res->gas_submit += rc->gas_used;
  bbvfl_pending_clear(&sl->tx);
  if (ok == 0) {
    *have = 1;
    return 0;
  }
  bbvfl_receipt_clear(rc);
  if (err->code == BBVFL_E_REVERT && bbvfl_err_revert_sel_is(err, BBVFL_SEL_RoundNotOpen)) {
    memset(err, 0, sizeof *err);
    if (resubmit_after_reorg(c, sl, rc, err) == 0) {
      *have = 1;
      return 0;
    }
    bbvfl_receipt_clear(rc);
    if (err->code != BBVFL_E_REVERT) return bbvfl_wrap(err, "round %llu: submit()", (unsigned long long)sl->r);
  }
  if (err->code != BBVFL_E_REVERT) return bbvfl_wrap(err, "round %llu: submit()", (unsigned long long)sl->r);
  bbvfl_err e2 = {0};
  int yes = 0;
  /* the revert's selector says which case this is; without revert data (the replay could not
     tell) the chain decides alone */
  int maybe_ours = !err->revert.present || bbvfl_err_revert_sel_is(err, BBVFL_SEL_AlreadySubmitted) ||
                   bbvfl_err_revert_sel_is(err, BBVFL_SEL_RoundClosed);
  if (maybe_ours && already_submitted(c, sl->r, &yes, &e2) == 0 && yes) {
    bbvfl_oc_log(c, "round %llu: the contract already has this client's submission (an earlier send that looked lost)",
           (unsigned long long)sl->r);
    memset(err, 0, sizeof *err);
    return 0;
  }
  bbvfl_client_info ci;
  /* whatever the revert (ClientExcluded, or RoundClosed when the others moved on past an excluded
     client's round), the chain says whether this client is still in the session */
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, &e2) == 0 && ci.excluded)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "round %llu: this client was excluded from the session after %u accepted rounds (it missed a "
                      "round's deadline and someone called expireRound(), or a sum it posted was disputed)",
                      (unsigned long long)sl->r, (unsigned)ci.accepted);
  return bbvfl_wrap(err, "round %llu: submit()", (unsigned long long)sl->r);
}

/* The gradient of window sl from the chain (GradientPosted) into c->grad; a label holder also
   follows the head. check: a passive client's head check first (bbvfl_oc_head_check: a deviating post
   is refused, an error). 0 done, 2 this client was elected active while waiting. */
static int read_gradient(cl *c, bbvfl_oc_slot *sl, int check, bbvfl_err *err) {
  bbvfl_cev gp;
  uint64_t from = c->conn.ev_blk; /* the round's RoundCompleted is at or after it */
  c->blk = c->conn.ev_blk;
  if (sl->r == c->disp.round) { /* optimistic: the corrected sum is in the dispute's block, the gradient after */
    from = c->disp.blk;
    c->blk = c->disp.blk + 1;
  }
  int w = bbvfl_oc_wait_event(c, BBVFL_EV_GRADIENT_POSTED, sl->r, &gp, err);
  if (w != 0) return w;
  bbvfl_oc_set_ev_blk(c, gp.block_number);
  int rc = 0;
  if (gp.data_len != 4 * sl->L.coords) {
    rc = bbvfl_fail(err, BBVFL_E_PARSE, "round %llu: posted gradient has %zu bytes, expected %llu",
                    (unsigned long long)sl->r, gp.data_len, (unsigned long long)(4 * sl->L.coords));
  } else if (check && bbvfl_oc_head_check(c, sl, &gp, from, err) < 0) {
    rc = -1; /* refused (or not checkable): nothing of it is taken */
  } else {
    bbvfl_f32_from_be(gp.data, sl->L.coords, c->grad);
    /* a label holder (or an active client that lost its post) follows the head */
    if (c->have_head && gp.data2_len && bbvfl_vhead_load_params_be(&c->head, gp.data2, gp.data2_len, err) < 0) rc = -1;
  }
  bbvfl_cev_clear(&gp);
  return rc;
}

static int apply_gradient(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->lr) return bbvfl_oc_lr_apply(c, sl, err);
  double t1 = bbvfl_now();
  bbvfl_party_epoch(&c->party, (int)sl->L.epoch);
  int rc = bbvfl_party_apply(&c->party, c->grad, sl->L.nb, c->B, err);
  c->res->learn_s += bbvfl_now() - t1;
  return rc < 0 ? bbvfl_wrap(err, "round %llu: applying the gradients", (unsigned long long)sl->r) : 0;
}

/* The active client: the window's gradients already on chain (a restart after the post)? Then
   they and the head come from GradientPosted. 1 taken, 0 not posted yet. */
static int posted_before(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  bbvfl_cev gp;
  c->blk = c->conn.ev_blk;
  int f = bbvfl_oc_query_event(c, BBVFL_EV_GRADIENT_POSTED, sl->r, &gp, err);
  if (f <= 0) return f;
  int rc = 1;
  if (gp.data_len != 4 * sl->L.coords || bbvfl_vhead_load_params_be(&c->head, gp.data2, gp.data2_len, err) < 0) {
    if (!err->code) bbvfl_fail(err, BBVFL_E_PARSE, "posted gradient has the wrong length");
    rc = -1;
  } else {
    bbvfl_f32_from_be(gp.data, sl->L.coords, c->grad);
    bbvfl_oc_set_ev_blk(c, gp.block_number);
  }
  bbvfl_cev_clear(&gp);
  return rc;
}

/* The active client finishes a training window: sum, head, post; 2 when it was demoted meanwhile
   (then c->grad holds the new active client's gradient). */
static int active_window(cl *c, bbvfl_oc_slot *sl, const bbvfl_receipt *rc, int resumed, bbvfl_err *err) {
  if (sl->L.index == 0) {
    bbvfl_oc_active_epoch_start(c);
    bbvfl_oc_labels_epoch_start(c);
  }
  if (!c->lr) bbvfl_vhead_epoch(&c->head, (int)sl->L.epoch); /* the epoch's learning rate (idempotent) */
  double t_agg0 = bbvfl_now();
  if (bbvfl_oc_round_sum(c, sl, rc, err) < 0) return -1;
  bbvfl_oc_active_agg_time(c, bbvfl_now() - t_agg0);
  if (resumed) {
    /* A restart: the window's head steps again from the checkpoint (so the optimizer state is the
       one an uninterrupted run has; the chain holds the parameters, not the moments; with labels
       split across clients too: the holders' posts are on chain before the gradient), then, when
       the gradient was posted before the restart, the post is not sent again: it must be the
       same, else the chain's is taken. (In hashed mode with staleness the checkpoint is always a
       window behind the finished ones, so every restart of the active client comes here.) Taking
       the chain's parameters without the step would leave the optimizer a step behind, which the
       passive clients' head check refuses at the next round. */
    if (bbvfl_oc_active_train(c, sl, err) < 0) return -1;
    bbvfl_f32_to_be(c->grad, sl->L.coords, c->grad_be);
    bbvfl_vhead_params_be(&c->head, c->head_be);
    bbvfl_cev gp;
    c->blk = c->conn.ev_blk;
    int q = bbvfl_oc_query_event(c, BBVFL_EV_GRADIENT_POSTED, sl->r, &gp, err);
    if (q < 0) return -1;
    if (q == 1) {
      int same = gp.data_len == 4 * sl->L.coords && !memcmp(gp.data, c->grad_be, gp.data_len) &&
                 gp.data2_len == c->head_len && !memcmp(gp.data2, c->head_be, c->head_len);
      int bad = 0;
      if (!same) {
        bbvfl_oc_log(c, "round %llu: the recomputed gradient differs from the one posted before the restart; taking the chain's",
               (unsigned long long)sl->r);
        if (gp.data_len != 4 * sl->L.coords || bbvfl_vhead_load_params_be(&c->head, gp.data2, gp.data2_len, err) < 0) {
          if (!err->code) bbvfl_fail(err, BBVFL_E_PARSE, "posted gradient has the wrong length");
          bad = 1;
        } else {
          bbvfl_f32_from_be(gp.data, sl->L.coords, c->grad);
        }
      }
      bbvfl_oc_set_ev_blk(c, gp.block_number);
      bbvfl_cev_clear(&gp);
      return bad ? -1 : bbvfl_oc_out_wait(c, err);
    }
  } else {
    int f = resumed ? posted_before(c, sl, err) : 0;
    if (f < 0) return -1;
    if (f == 1) return bbvfl_oc_out_wait(c, err);
    if (bbvfl_oc_active_train(c, sl, err) < 0) return -1;
    if (!c->lr) bbvfl_vhead_params_be(&c->head, c->head_be); /* LR: bbvfl_oc_lr_active_train wrote its biases */
    if (c->cfg->tamper && !c->lr && !(c->lab.split && !c->lab.own_all)) { /* test-only (bbvfl-tamper): NULL in release builds */
      struct bbvfl_onchain_tamper t = {.stage = BBVFL_TAMPER_POST, .round = sl->r, .epoch = sl->L.epoch,
                                       .nb = sl->L.nb, .B = c->B, .P = c->cp.cfg.dim, .y = c->yb, .sum = c->sum,
                                       .grad = c->grad, .head_be = c->head_be, .head_len = c->head_len,
                                       .head = &c->head};
      if (c->cfg->tamper(c->cfg->tamper_ctx, &t, err) != 0) return bbvfl_wrap(err, "test tamper hook");
    }
    bbvfl_f32_to_be(c->grad, sl->L.coords, c->grad_be);
  }
  uint8_t *cd;
  size_t len;
  if (bbvfl_cenc_post_gradient(sl->r, c->grad_be, 4 * sl->L.coords, c->head_be, c->head_len, &cd, &len, err) < 0)
    return -1;
  uint64_t gas = bbvfl_fit_gradient_gas(sl->L.coords, c->head_len);
  int ok = bbvfl_oc_out_send(c, cd, len, gas, "postGradient()", OC_GAS_GRADIENT, err);
  if (ok == 0) ok = bbvfl_oc_out_wait(c, err);
  /* optimistic: kept to be posted again should a dispute roll the round back after it */
  if (ok == 0 && bbvfl_oc_note_post(c, sl->r, cd, len, gas, err) < 0) ok = -2;
  free(cd);
  if (ok == -2) return -1;
  if (ok == 0) {
    if (c->hashed) bbvfl_oc_set_done_blk(c, sl->r, c->blk);
    return 0;
  }
  if (c->lab.split || !bbvfl_oc_demoted(c, sl->r, err)) return -1;
  /* re-elected away while slow: take the new active client's gradient like the others */
  int w = read_gradient(c, sl, 0, err);
  if (w == 2) return bbvfl_fail(err, BBVFL_E_STATE, "elected again while waiting for the new active client");
  return w < 0 ? -1 : 2;
}

/* Finishes round sl (see the top of the file). */
static int finish(cl *c, bbvfl_oc_slot *sl, int resumed, bbvfl_err *err) {
  bbvfl_receipt rc;
  int have_rc = 0;
  if (submission_receipt(c, sl, &rc, &have_rc, err) < 0) return -1;
  const bbvfl_receipt *rcp = have_rc ? &rc : NULL;
  int fail = 0;
  if (!c->is_active) {
    int w = 0;
    /* optimistic mode: the posted sum checked against the payloads (a wrong one disputed) first */
    if (c->wire == BBVFL_WIRE_OPTIMISTIC) w = bbvfl_oc_check_claim(c, sl, err);
    if (w != 0) {
      /* 2: the dispute elected this client (below); -1: failed */
    } else if (sl->L.train) {
      /* a label holder posts dLoss/dlogits for its rows first */
      if (c->lab.split && c->lab.holder) w = bbvfl_oc_holder_post(c, sl, rcp, resumed, err);
      if (w == 0) w = read_gradient(c, sl, 1, err);
    } else if (!c->hashed || (c->lab.split && c->lab.holder)) {
      /* lane mode: the next round opens when this one completes; a label holder scores it */
      bbvfl_cev rcev;
      int f = rcp ? bbvfl_oc_receipt_event(c, rcp, BBVFL_EV_ROUND_COMPLETED, sl->r, &rcev, err) : 0;
      if (f < 0) w = -1;
      if (f == 0 && !c->hashed) {
        c->blk = c->conn.ev_blk;
        w = bbvfl_oc_wait_event(c, BBVFL_EV_ROUND_COMPLETED, sl->r, &rcev, err);
        if (w == 0) bbvfl_oc_set_ev_blk(c, rcev.block_number);
        f = w == 0;
      }
      if (f == 1) {
        if (c->lab.split && c->have_head && bbvfl_oc_holder_eval(c, sl, &rcev, err) < 0) w = -1;
        bbvfl_cev_clear(&rcev);
      } else if (w == 0 && c->hashed && c->lab.split && c->have_head && bbvfl_oc_holder_eval(c, sl, NULL, err) < 0) {
        w = -1;
      }
    }
    if (w < 0) fail = 1;
    /* elected while waiting: this client carries the round on as the active client */
    if (!fail && w == 2 && bbvfl_oc_take_over(c, sl->r, err) < 0) fail = 1;
  }
  int demoted = 0;
  if (!fail && c->is_active) {
    if (sl->L.train) {
      int k = active_window(c, sl, rcp, resumed, err);
      fail = k < 0;
      demoted = k == 2;
    } else {
      fail = bbvfl_oc_round_sum(c, sl, rcp, err) < 0 || bbvfl_oc_active_eval(c, sl, err) < 0;
    }
  }
  bbvfl_receipt_clear(&rc);
  if (fail) return bbvfl_wrap(err, "round %llu", (unsigned long long)sl->r);
  (void)demoted;
  if (sl->L.train && apply_gradient(c, sl, err) < 0) return -1;
  int epoch_end = bbvfl_cconfig_epoch_end(&c->cp.cfg, sl->r);
  if (c->is_active && epoch_end && bbvfl_oc_post_epoch(c, sl->L.epoch, err) < 0) return -1;
  if (!c->is_active && c->lab.split && c->have_head && epoch_end) {
    if (bbvfl_oc_fill_metrics(c, sl->L.epoch, err) < 0) return -1;
    const bbvfl_epoch_metrics *em = &c->res->per_epoch[sl->L.epoch];
    bbvfl_oc_log(c, "epoch %u (this label holder's %zu labelled test rows): train loss %.4f, test loss %.4f, AUROC %.4f",
           sl->L.epoch + 1, c->res->labelled_test_rows, em->train_loss, em->test_loss, em->auroc);
  }
  /* optimistic: an earlier epoch's payout whose dispute window has closed since */
  if (c->is_active && c->wire == BBVFL_WIRE_OPTIMISTIC && bbvfl_oc_payout_due(c, 0, err) < 0) return -1;
  c->res->rounds++;
  return 0;
}

/* The round loop is core/rounds.h's (the off-chain trainer runs the same one); these are this
   client's steps. */
typedef struct {
  cl *c;
  int resumed;      /* after a restart, until this process submits something itself */
  uint64_t done;    /* rounds finished by this process */
} run_ctx;

static int step_finish(void *ctx, uint64_t r, bbvfl_err *err) {
  run_ctx *x = ctx;
  cl *c = x->c;
  bbvfl_oc_slot *sl = bbvfl_oc_slot_of(c, r);
  if (sl->r != r) return bbvfl_fail(err, BBVFL_E_INTERNAL, "round %llu: not open", (unsigned long long)r);
  if (finish(c, sl, x->resumed && sl->submitted_before, err) < 0) return -1;
  free_slot(sl);
  x->done++;
  if (c->cfg->exit_after_round && x->done >= (uint64_t)c->cfg->exit_after_round)
    return bbvfl_fail(err, BBVFL_E_STATE, "stopped after %llu rounds as asked (testing)", (unsigned long long)x->done);
  return 0;
}

/* the state before round r's forward, with every round before first_open finished */
static int step_checkpoint(void *ctx, uint64_t r, uint64_t first_open, bbvfl_err *err) {
  run_ctx *x = ctx;
  if (bbvfl_oc_save_progress(x->c, r, first_open, err) < 0)
    return bbvfl_wrap(err, "checkpoint of round %llu", (unsigned long long)r);
  return 0;
}

static int step_start(void *ctx, uint64_t r, bbvfl_err *err) {
  run_ctx *x = ctx;
  cl *c = x->c;
  bbvfl_oc_slot *sl;
  if (take_slot(c, r, &sl, err) < 0) return -1;
  double tl = bbvfl_now();
  int frc = c->lr          ? bbvfl_oc_lr_forward(c, sl, err)
            : sl->L.train ? bbvfl_party_forward_train(&c->party, sl->rows, sl->L.rows, sl->q, NULL, err)
                        : bbvfl_party_forward_eval(&c->party, sl->rows, sl->L.rows, sl->q, NULL, err);
  c->res->learn_s += bbvfl_now() - tl;
  if (frc < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
  int yes = 0;
  if (x->resumed && already_submitted(c, r, &yes, err) < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
  if (yes) {
    bbvfl_oc_log(c, "round %llu: already submitted before the restart", (unsigned long long)r);
    sl->submitted_before = 1;
    return 0;
  }
  x->resumed = 0;
  uint8_t *cd;
  size_t len;
  const uint8_t *to;
  if (encode_submission(c, sl, &cd, &len, err) < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
  if (bbvfl_oc_submit_via(c, &cd, &len, &to, err) < 0) {
    free(cd);
    return -1;
  }
  double t0 = bbvfl_now();
  int ok = bbvfl_sender_send_tracked(c->conn.snd, to, NULL, cd, len, bbvfl_oc_submit_gas(c, sl->L.coords), &sl->tx, err);
  c->res->send_s += bbvfl_now() - t0;
  /* kept for a repair after a reorg (onchain_repair.c; a submission through the client's own
     EIP-7702 account goes to another address: not kept) */
  if (ok == 0 && !c->cfg->submit_via_self &&
      bbvfl_oc_keep_call(c, cd, len, bbvfl_oc_submit_gas(c, sl->L.coords), "submit()", OC_GAS_SUBMIT, err) < 0)
    ok = -1;
  free(cd);
  if (ok < 0) return bbvfl_wrap(err, "round %llu: submit()", (unsigned long long)r);
  c->res->submissions++;
  if (c->cfg->pause_after_submit && r + 1 == (uint64_t)c->cfg->pause_after_submit) {
    /* testing: freeze mid-round (submitted, sum and gradient not yet read) so a test can
       SIGKILL this process at a known point however fast the session runs */
    bbvfl_receipt rc;
    int have = 0;
    if (submission_receipt(c, sl, &rc, &have, err) < 0) return -1;
    bbvfl_receipt_clear(&rc);
    bbvfl_oc_log(c, "round %llu: submitted; pausing (SIGSTOP) as asked (testing)", (unsigned long long)r);
    raise(SIGSTOP);
  }
  return 0;
}

int bbvfl_oc_run_rounds(cl *c, uint64_t start, uint64_t first_open, int resumed, bbvfl_err *err) {
  /* after a restart: the rounds between the checkpoint's oldest unfinished round and its next
     round were submitted before it (their activations are in the checkpoint) */
  for (uint64_t p = first_open; p < start; p++) {
    bbvfl_oc_slot *sl;
    if (take_slot(c, p, &sl, err) < 0) return -1;
    sl->submitted_before = 1;
  }
  /* lane storage keeps one round open; hashed aggregation pipelines within the staleness */
  bbvfl_rounds_sched sched = {.T = (uint32_t)c->T, .V = (uint32_t)c->V, .staleness = c->rd.stale,
                              .one_open = !c->hashed, .slots = c->rd.nslots, .epochs = c->cp.cfg.epochs};
  bbvfl_rounds_ops ops = {.finish = step_finish, .checkpoint = step_checkpoint, .start = step_start};
  run_ctx x = {.c = c, .resumed = resumed};
  if (c->wire == BBVFL_WIRE_OPTIMISTIC) { /* the epochs before first_open: paid, or paid by this client */
    bbvfl_round_layout L;
    uint32_t e = c->cp.cfg.epochs;
    if (first_open < c->cp.total_rounds && bbvfl_cconfig_round(&c->cp.cfg, first_open, &L, err) == 0) e = L.epoch;
    else bbvfl_err_clear(err);
    bbvfl_oc_payout_queue(c, e);
  }
  if (bbvfl_rounds_run(&sched, start, first_open, c->cp.total_rounds, &ops, &x, err) < 0) return -1;
  if (bbvfl_oc_out_wait(c, err) < 0) return bbvfl_wrap(err, "the last transactions");
  /* optimistic: the last epochs' payouts wait for their dispute windows */
  if (c->is_active && c->wire == BBVFL_WIRE_OPTIMISTIC &&
      (bbvfl_oc_payout_due(c, 1, err) < 0 || bbvfl_oc_out_wait(c, err) < 0))
    return bbvfl_wrap(err, "the session's last payouts");
  uint64_t total = c->cp.total_rounds;
  if (bbvfl_oc_save_progress(c, total, total, err) < 0) return bbvfl_wrap(err, "final checkpoint");
  return 0;
}

/* ------------------------------------------------------------------ the slots of the rounds in flight */

int bbvfl_oc_rounds_init(cl *c, size_t maxrows, bbvfl_err *err) {
  c->rd.stale = c->sess->cparams.staleness;
  /* the unfinished rounds: s windows ahead, the evaluation rounds beside them, the one in hand */
  c->rd.nslots = (size_t)c->rd.stale + c->V + 2;
  c->rd.slots = calloc(c->rd.nslots, sizeof *c->rd.slots);
  if (!c->rd.slots) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < c->rd.nslots; i++) {
    c->rd.slots[i].r = UINT64_MAX;
    c->rd.slots[i].rows = malloc(maxrows * sizeof *c->rd.slots[i].rows);
    c->rd.slots[i].q = malloc(c->n);
    if (!c->rd.slots[i].rows || !c->rd.slots[i].q) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  return 0;
}

void bbvfl_oc_rounds_free(cl *c) {
  for (size_t i = 0; c->rd.slots && i < c->rd.nslots; i++) {
    bbvfl_pending_clear(&c->rd.slots[i].tx);
    free(c->rd.slots[i].rows);
    free(c->rd.slots[i].q);
  }
  free(c->rd.slots);
  c->rd.slots = NULL;
}
