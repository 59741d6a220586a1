#include "bbvfl_errors.h" /* generated from abi/: BBVFL_SEL_* */
#include "onchain/onchain_int.h"

void bbvfl_oc_log(const cl *c, const char *fmt, ...) {
  if (!c->cfg->log) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(c->cfg->log, fmt, ap);
  va_end(ap);
  fputc('\n', c->cfg->log);
  fflush(c->cfg->log);
}

void bbvfl_oc_path_in(const cl *c, char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", c->dir, name);
}

int bbvfl_oc_is_train_round(const cl *c, uint64_t r) {
  bbvfl_round_layout L;
  bbvfl_err e = {0};
  return bbvfl_cconfig_round(&c->cp.cfg, r, &L, &e) == 0 && L.train;
}

void bbvfl_oc_rpc_wait_log(void *ctx, const char *msg) { bbvfl_oc_log((const cl *)ctx, "%s", msg); }

void bbvfl_oc_sender_status(void *ctx, const bbvfl_sender_status *st) {
  const cl *c = ctx;
  bbvfl_oc_log(c, "block %llu: %s (base fee %.3f gwei)", (unsigned long long)st->head, st->msg, st->base_fee_gwei);
}

/* ------------------------------------------------------------------ transactions */

int bbvfl_oc_tx(cl *c, const uint8_t *cd, size_t len, uint64_t gas, int is_submit, bbvfl_receipt *rc, const char *what,
              bbvfl_err *err) {
  double t0 = bbvfl_now();
  bbvfl_receipt local;
  bbvfl_receipt *r = rc ? rc : &local;
  memset(r, 0, sizeof *r);
  const uint8_t *to = c->agg.address;
  uint8_t *wrapped = NULL;
  if (is_submit && c->cfg->submit_via_self) {
    size_t wl = len;
    if (!(wrapped = malloc(len ? len : 1))) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    memcpy(wrapped, cd, len);
    if (bbvfl_oc_submit_via(c, &wrapped, &wl, &to, err) < 0) {
      free(wrapped);
      return -1;
    }
    cd = wrapped;
    len = wl;
  }
  int ok = bbvfl_sender_transact(c->snd, to, NULL, cd, len, gas, c->cfg->round_timeout_s, r, err);
  free(wrapped);
  c->res->send_s += bbvfl_now() - t0;
  if (r->gas_used) {
    if (is_submit)
      c->res->gas_submit += r->gas_used;
    else
      c->res->gas_other += r->gas_used;
  }
  if (r->block_number > c->blk) c->blk = r->block_number;
  if (!rc || ok != 0) bbvfl_receipt_clear(r);
  if (ok != 0) return bbvfl_wrap(err, "%s", what);
  return 0;
}

/* Finds the event of `kind` for `round` (topic1) among a receipt's logs. 1 found, 0 not. */
int bbvfl_oc_receipt_event(const cl *c, const bbvfl_receipt *rc, bbvfl_cev_kind kind, uint64_t round, bbvfl_cev *ev,
                         bbvfl_err *err) {
  size_t i;
  json_t *log;
  json_array_foreach(rc->logs, i, log) {
    bbvfl_cev e;
    int k = bbvfl_cev_decode(log, &e, err);
    if (k < 0) return -1;
    if (k == 1 && e.kind == kind && e.round == round && !memcmp(e.emitter, c->agg.address, 20)) {
      *ev = e;
      return 1;
    }
    bbvfl_cev_clear(&e);
  }
  return 0;
}

/* One query for the event of `kind` with topic1 = round. 1 found (*ev filled), 0 not yet. */
int bbvfl_oc_query_event(cl *c, bbvfl_cev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err) {
  uint8_t t1[32];
  bbvfl_cenc_word_u64(round, t1);
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(&c->agg, kind, t1, c->blk, UINT64_MAX, &logs, err) < 0) return -1;
  int found = 0;
  if (json_array_size(logs) > 0) {
    int k = bbvfl_cev_decode(json_array_get(logs, 0), ev, err);
    if (k < 0) {
      json_decref(logs);
      return -1;
    }
    found = k == 1 && ev->kind == kind;
    if (!found) bbvfl_cev_clear(ev);
  }
  json_decref(logs);
  return found;
}

/* Names the participants that have not submitted the open round, into out; returns how many
   (-1: the participants could not be read). */
int bbvfl_oc_missing_clients(cl *c, uint64_t round, char *out, size_t cap) {
  out[0] = 0;
  bbvfl_err e = {0};
  uint8_t(*parts)[20] = NULL;
  size_t np = 0;
  if (bbvfl_aggc_participants(&c->agg, &parts, &np, &e) < 0) {
    snprintf(out, cap, "(could not read the participants: %s)", e.msg);
    return -1;
  }
  size_t used = 0;
  int n = 0;
  for (size_t i = 0; i < np; i++) {
    bbvfl_client_info ci;
    if (bbvfl_aggc_client_info(&c->agg, parts[i], &ci, &e) < 0) continue;
    if (ci.accepted > round) continue;
    n++;
    char a[43];
    bbvfl_addr_checksum(parts[i], a);
    int w = snprintf(out + used, cap - used, "%s%s (index %u)", used ? ", " : "", a, (unsigned)ci.index);
    if (w < 0 || (size_t)w >= cap - used) break;
    used += (size_t)w;
  }
  free(parts);
  if (!used) snprintf(out, cap, "none (every participant submitted; the active client has not posted)");
  return n;
}


/* A client that has waited too long for round r: a passive client calls reelect() when r is
   complete without a gradient; expireRound() when r is incomplete and either the active client has
   not submitted it or this client is the active client (then the missing ones are excluded). A revert
   means "not overdue yet" (on an automining devnet the attempt itself mined a block). 1: this client
   is now the active client; 0: not (*reset = 1 when another client became active: the wait starts
   over); -1: error. */
int bbvfl_oc_nudge_active(cl *c, uint64_t round, int *reset, bbvfl_err *err) {
  uint8_t act[20];
  char a[43];
  if (bbvfl_aggc_active(&c->agg, act, err) < 0) return -1;
  if (memcmp(act, c->active, 20)) {
    memcpy(c->active, act, 20);
    if (!memcmp(act, c->me, 20)) {
      bbvfl_oc_log(c, "round %llu: this client was elected the new active client", (unsigned long long)round);
      return 1;
    }
    bbvfl_addr_checksum(act, a);
    bbvfl_oc_log(c, "round %llu: the active client is now %s", (unsigned long long)round, a);
    *reset = 1;
    return 0;
  }
  bbvfl_round_state rs;
  if (bbvfl_aggc_round_state(&c->agg, &rs, err) < 0) return -1;
  if (rs.round != round) return 0; /* the chain moved on: the event is on its way */
  uint8_t *cd = NULL;
  size_t len = 0;
  const char *what;
  uint64_t gas;
  if (rs.complete) {
    if (c->is_active || !bbvfl_oc_is_train_round(c, round)) return 0;
    what = "reelect()";
    gas = 150000 + 30000 * (uint64_t)c->cp.cfg.clients;
    if (bbvfl_cenc_reelect(&cd, &len, err) < 0) return -1;
  } else {
    bbvfl_client_info ci;
    if (bbvfl_aggc_client_info(&c->agg, act, &ci, err) < 0) return -1;
    if (!c->is_active && ci.accepted > round) return 0; /* the active client submitted: not its delay */
    what = "expireRound()";
    gas = 300000 + 60000 * (uint64_t)c->cp.cfg.clients;
    if (bbvfl_cenc_expire_round(&cd, &len, err) < 0) return -1;
  }
  bbvfl_addr_checksum(act, a);
  if (c->is_active)
    bbvfl_oc_log(c, "round %llu: waited %.1f s for the missing submissions; calling %s", (unsigned long long)round,
          c->cfg->takeover_after_s, what);
  else
    bbvfl_oc_log(c, "round %llu: waited %.1f s for the active client %s; calling %s", (unsigned long long)round,
          c->cfg->takeover_after_s, a, what);
  uint64_t blk = c->blk; /* the awaited event may be in a block before this attempt's */
  bbvfl_err e2 = {0};
  int rc = bbvfl_oc_tx(c, cd, len, gas, 0, NULL, what, &e2);
  c->blk = blk;
  free(cd);
  if (rc < 0) {
    if (e2.code != BBVFL_E_REVERT) {
      *err = e2;
      return -1;
    }
    return 0; /* not overdue yet */
  }
  bbvfl_oc_log(c, "round %llu: %s accepted", (unsigned long long)round, what);
  return bbvfl_oc_nudge_active(c, round, reset, err);
}

/* One step of a wait for round r, for dropouts (docs/MASKED.md, "Dropouts"). Masked mode: when
   the contract voided the round and re-opened it for a smaller set (RoundReopened), masks the SAME
   q for the announced set and submits again. Both modes: when the round has been waiting longer
   than round_timeout_s and cfg->expire is set, calls expireRound() (at most every 0.3 s: a revert
   means "not overdue in blocks yet" or "someone else did it", and on an automining devnet each
   attempt mines a block); plain mode then completes the round with the submissions it has, masked
   mode re-opens it. 1: the round was re-opened and this client submitted again (the wait starts
   over); 0: keep waiting; -1: error (incl. giving up after twice the timeout, unless expireRound()
   said the round's deadline block is not reached yet and the head is still moving toward it). */
int bbvfl_oc_expire_wait_step(cl *c, uint64_t r, double waited, bbvfl_err *err) {
  bbvfl_oc_slot *sl = c->slots ? bbvfl_oc_slot_of(c, r) : NULL;
  if (sl && sl->r != r) sl = NULL; /* not a round this client has the q of */
  int k = c->masked && sl ? bbvfl_mclient_poll_reopened(&c->mc, &c->agg, r, sl->sub_blk, err) : 0;
  if (k < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
  if (k == 1) {
    bbvfl_oc_log(c, "round %llu: re-opened for %u participants (set 0x%llx); submitting the same q masked for them",
          (unsigned long long)r, c->mc.nparts, (unsigned long long)c->mc.set);
    c->mc.n = sl->L.coords;
    if (bbvfl_mclient_mask(&c->mc, r, sl->q, err) < 0) return -1;
    uint8_t *cd;
    size_t len;
    if (bbvfl_cenc_submit(r, c->mc.lanes, 2 * sl->L.coords, &cd, &len, err) < 0) return -1;
    uint64_t gas = bbvfl_oc_submit_gas(c, sl->L.coords);
    uint64_t blk = c->blk;
    int ok = bbvfl_oc_tx(c, cd, len, gas, 1, NULL, "submit() to the re-opened round", err);
    c->blk = blk;
    free(cd);
    if (ok < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
    c->res->submissions++;
    return 1;
  }
  if (!c->cfg->expire || waited <= c->cfg->round_timeout_s) return 0;
  int heading = 0; /* the chain is still heading for the round's deadline */
  if (waited > 2 * c->cfg->round_timeout_s && c->exp_r == r + 1) {
    /* expireRound() said "not timed out yet" (RoundNotTimedOut): the deadline is in blocks, and
       while blocks are still coming it will be reached; give up only when the head stood still
       for round_timeout_s (a stalled chain or a deadline no block will reach). */
    uint64_t head;
    if (bbvfl_rpc_block_number(c->rpc, &head, err) < 0) return -1;
    double t = bbvfl_now();
    if (head > c->exp_head) {
      c->exp_head = head;
      c->exp_moved_t = t;
    }
    heading = t - c->exp_moved_t <= c->cfg->round_timeout_s;
  }
  if (waited > 2 * c->cfg->round_timeout_s && !heading) {
    /* Every participant submitted and only the active client's post is late: expiry cannot help,
       re-election (takeover_after_s) does; give it time before giving up. */
    double grace = 2 * c->cfg->round_timeout_s + 10 * c->cfg->takeover_after_s + 30;
    if (c->cfg->takeover_after_s > 0 && c->only_active_late == r + 1 && waited <= grace) return 0;
    char miss[1024];
    int nmiss = bbvfl_oc_missing_clients(c, r, miss, sizeof miss);
    if (nmiss == 0 && c->cfg->takeover_after_s > 0 && waited <= grace) {
      c->only_active_late = r + 1;
      return 0;
    }
    char why[400] = "";
    if (c->exp_r == r + 1 && c->exp_deadline)
      snprintf(why, sizeof why, "expireRound() says the round's deadline is block %llu and the head stood at %llu for %.0f s",
               (unsigned long long)c->exp_deadline, (unsigned long long)c->exp_head, bbvfl_now() - c->exp_moved_t);
    else if (!bbvfl_sender_stall_cause(c->snd, why, sizeof why))
      snprintf(why, sizeof why, "blocks are coming and this client has nothing unmined");
    return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                      "round %llu did not complete%s within %.0f s although expireRound() was tried (not "
                      "submitted: %s; on chain: %s); is the session's round_timeout_blocks reachable?",
                      (unsigned long long)r, c->masked ? " or re-open" : "", 2 * c->cfg->round_timeout_s, miss, why);
  }
  double now = bbvfl_now();
  if (now - c->last_expire < 0.3) return 0;
  c->last_expire = now;
  uint8_t *cd;
  size_t len;
  if (bbvfl_cenc_expire_round(&cd, &len, err) < 0) return -1;
  uint64_t blk = c->blk;
  bbvfl_err e2 = {0};
  int rc = bbvfl_oc_tx(c, cd, len, 300000 + 60000 * (uint64_t)c->cp.cfg.clients, 0, NULL, "expireRound()", &e2);
  c->blk = blk;
  free(cd);
  if (rc < 0 && e2.code != BBVFL_E_REVERT) {
    *err = e2;
    return -1;
  }
  if (rc < 0 && bbvfl_err_revert_sel_is(&e2, BBVFL_SEL_RoundNotTimedOut)) {
    if (c->exp_r != r + 1) { /* the first "not yet" of this round: the head moves from here */
      c->exp_r = r + 1;
      c->exp_head = 0;
      c->exp_moved_t = now;
    }
    c->exp_deadline = e2.revert.nargs ? e2.revert.args[0] : 0;
  } else if (rc < 0) {
    c->exp_r = 0; /* another reason (someone else expired it, no submission yet): the usual rule */
  }
  if (rc == 0) bbvfl_oc_log(c, "round %llu: no sum after %.1f s; expireRound() accepted", (unsigned long long)r, waited);
  return 0;
}

/* After the node came back from an outage (restarted from a saved state, it may have lost the last
   blocks): the event cursor is pulled back to the node's head (re-mined events land after it) and
   the sender hands in again this client's transactions the node no longer has. */
int bbvfl_oc_after_outage(cl *c, uint64_t round, bbvfl_err *err) {
  uint64_t o = bbvfl_rpc_outages(c->rpc);
  if (o == c->outages_seen) return 0;
  c->outages_seen = o;
  uint64_t head;
  if (bbvfl_rpc_block_number(c->rpc, &head, err) < 0) return -1;
  if (c->blk > head) {
    bbvfl_oc_log(c, "round %llu: the node is back at block %llu, before block %llu this client had seen: blocks were lost",
          (unsigned long long)round, (unsigned long long)head, (unsigned long long)c->blk);
    c->blk = head;
  }
  unsigned resent = 0;
  if (bbvfl_sender_recover(c->snd, &resent, err) < 0) return -1;
  if (resent)
    bbvfl_oc_log(c, "round %llu: the node no longer had %u of this client's transactions; sent the same bytes again",
          (unsigned long long)round, resent);
  return 0;
}

/* A wait that has run out of time while the base fee is above this client's --max-fee-gwei is not
   overdue: everyone is waiting for the fee to fall (said once per wait). 1: hold on, 0: overdue
   (*why names the stall's cause when one is found). */
static int fee_hold(cl *c, uint64_t round, int *said, char *why, size_t cap) {
  why[0] = 0;
  int found = bbvfl_sender_stall_cause(c->snd, why, cap);
  if (c->cfg->max_fee_gwei <= 0 || !bbvfl_sender_fee_above_cap(c->snd)) return 0;
  if (!*said) bbvfl_oc_log(c, "round %llu: still waiting: %s", (unsigned long long)round, found ? why : "the base fee is above the cap");
  *said = 1;
  return 1;
}

/* Waits for the event of `kind` for `round`, polling with a growing backoff. A passive client
   with takeover_after_s set nudges an overdue active client (nudge_active); returns 2 when this
   client became the active client instead. */
int bbvfl_oc_wait_event(cl *c, bbvfl_cev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err) {
  double t0 = bbvfl_now(), delay = POLL_MIN_S, t_wait = t0, last_nudge = 0;
  int said = 0;
  char why[512] = "";
  for (;;) {
    if (bbvfl_oc_after_outage(c, round, err) < 0) return -1;
    /* this client's own transactions: re-sent when the node lost them (a reorg, a drop), replaced
       when overdue (at most every 0.25 s) */
    if (bbvfl_sender_check(c->snd, NULL, err) < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)round);
    uint64_t o = bbvfl_rpc_outages(c->rpc);
    int f = bbvfl_oc_query_event(c, kind, round, ev, err);
    if (f < 0 && bbvfl_rpc_outages(c->rpc) != o) {
      memset(err, 0, sizeof *err); /* the node came back during the query (maybe shorter): again */
      continue;
    }
    if (f < 0) return -1;
    if (f == 1) {
      if (ev->block_number > c->blk) c->blk = ev->block_number;
      c->res->wait_s += bbvfl_now() - t_wait;
      return 0;
    }
    double now = bbvfl_now();
    if (now - t0 > c->cfg->round_timeout_s && fee_hold(c, round, &said, why, sizeof why)) {
      t0 = now; /* the fee, not a client, holds the round up */
      continue;
    }
    if (c->masked || c->cfg->expire) {
      int k = bbvfl_oc_expire_wait_step(c, round, now - t0, err);
      if (k < 0) return -1;
      if (k == 1) {
        t0 = bbvfl_now();
        continue;
      }
    }
    if (c->cfg->takeover_after_s > 0 && now - t0 > c->cfg->takeover_after_s &&
        now - last_nudge >= 1.0) {
      last_nudge = now;
      int reset = 0;
      int k = bbvfl_oc_nudge_active(c, round, &reset, err);
      if (k < 0) return -1;
      if (k == 1) {
        c->res->wait_s += bbvfl_now() - t_wait;
        return 2;
      }
      if (reset) t0 = bbvfl_now();
      continue;
    }
    if (!c->cfg->expire && bbvfl_now() - t0 > c->cfg->round_timeout_s) break; /* expire: see above */
    bbvfl_sleep(delay);
    delay *= 1.5;
    if (delay > POLL_MAX_S) delay = POLL_MAX_S;
  }
  c->res->wait_s += bbvfl_now() - t_wait;
  char miss[1024];
  bbvfl_oc_missing_clients(c, round, miss, sizeof miss);
  if (why[0]) {
    size_t l = strlen(miss);
    snprintf(miss + l, sizeof miss - l, "; on chain: %s", why);
  }
  if (c->cfg->expire) {
    uint8_t *cd;
    size_t len;
    bbvfl_err e2 = {0};
    if (bbvfl_cenc_expire_round(&cd, &len, &e2) == 0) {
      int rc = bbvfl_oc_tx(c, cd, len, 300000 + 60000 * (uint64_t)c->cp.cfg.clients, 0, NULL, "expireRound()", &e2);
      free(cd);
      if (rc == 0)
        return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                          "round %llu did not complete within %.0f s; called expireRound(), which excluded: %s",
                          (unsigned long long)round, c->cfg->round_timeout_s, miss);
    }
    return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                      "round %llu did not complete within %.0f s (waiting for %s); expireRound() failed: %s",
                      (unsigned long long)round, c->cfg->round_timeout_s, bbvfl_cev_signature(kind), e2.msg);
  }
  return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                    "round %llu did not complete within %.0f s (waiting for %s). Not submitted yet: %s. Restart the "
                    "missing clients, or run again with --expire to exclude them",
                    (unsigned long long)round, c->cfg->round_timeout_s, bbvfl_cev_signature(kind), miss);
}

/* Waits until phase() is at least `want`. */
int bbvfl_oc_wait_phase(cl *c, bbvfl_phase want, bbvfl_phase *got, const char *what, bbvfl_err *err) {
  double t0 = bbvfl_now(), delay = 0.001;
  for (;;) {
    bbvfl_phase ph;
    if (bbvfl_aggc_phase(&c->agg, &ph, err) < 0) return -1;
    if (ph >= want) {
      *got = ph;
      c->res->wait_s += bbvfl_now() - t0;
      return 0;
    }
    if (bbvfl_now() - t0 > c->cfg->round_timeout_s)
      return bbvfl_fail(err, BBVFL_E_TIMEOUT, "%s: still waiting after %.0f s (phase %d); are all %u clients running?",
                        what, c->cfg->round_timeout_s, (int)ph, (unsigned)c->cp.cfg.clients);
    bbvfl_sleep(delay);
    delay *= 1.5;
    if (delay > 0.02) delay = 0.02;
  }
}
