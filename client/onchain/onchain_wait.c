#include "bbvfl_errors.h" /* generated from abi/: BBVFL_SEL_* */
#include "onchain/onchain_int.h"

#include "eth/abi.h"
#include "binding/fit.h"

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
  cl *c = ctx;
  /* a transaction of this client's with a receipt vanished: a reorg, which may leave a re-sent copy
     that does not take effect (onchain_repair.c); a drop from the pool (a fee spike) is not one */
  if (st->kind == BBVFL_SENDER_VANISHED) c->kept.lost_at = bbvfl_now();
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
  int ok = bbvfl_sender_transact(c->conn.snd, to, NULL, cd, len, gas, c->cfg->round_timeout_s, r, err);
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
  bbvfl_oc_slot *sl = c->rd.slots ? bbvfl_oc_slot_of(c, r) : NULL;
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
  if (waited > 2 * c->cfg->round_timeout_s && c->conn.exp_r == r + 1) {
    /* expireRound() said "not timed out yet" (RoundNotTimedOut): the deadline is in blocks, and
       while blocks are still coming it will be reached; give up only when the head stood still
       for round_timeout_s (a stalled chain or a deadline no block will reach). */
    uint64_t head;
    if (bbvfl_rpc_block_number(c->conn.rpc, &head, err) < 0) return -1;
    double t = bbvfl_now();
    if (head > c->conn.exp_head) {
      c->conn.exp_head = head;
      c->conn.exp_moved_t = t;
    }
    heading = t - c->conn.exp_moved_t <= c->cfg->round_timeout_s;
  }
  if (waited > 2 * c->cfg->round_timeout_s && !heading) {
    /* Every participant submitted and only the active client's post is late: expiry cannot help,
       re-election (takeover_after_s) does; give it time before giving up. */
    double grace = 2 * c->cfg->round_timeout_s + 10 * c->cfg->takeover_after_s + 30;
    if (c->cfg->takeover_after_s > 0 && c->conn.only_active_late == r + 1 && waited <= grace) return 0;
    char miss[1024];
    int nmiss = bbvfl_oc_missing_clients(c, r, miss, sizeof miss);
    if (nmiss == 0 && c->cfg->takeover_after_s > 0 && waited <= grace) {
      c->conn.only_active_late = r + 1;
      return 0;
    }
    char why[400] = "";
    if (c->conn.exp_r == r + 1 && c->conn.exp_deadline)
      snprintf(why, sizeof why, "expireRound() says the round's deadline is block %llu and the head stood at %llu for %.0f s",
               (unsigned long long)c->conn.exp_deadline, (unsigned long long)c->conn.exp_head, bbvfl_now() - c->conn.exp_moved_t);
    else if (!bbvfl_sender_stall_cause(c->conn.snd, why, sizeof why))
      snprintf(why, sizeof why, "blocks are coming and this client has nothing unmined");
    return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                      "round %llu did not complete%s within %.0f s although expireRound() was tried (not "
                      "submitted: %s; on chain: %s); is the session's round_timeout_blocks reachable?",
                      (unsigned long long)r, c->masked ? " or re-open" : "", 2 * c->cfg->round_timeout_s, miss, why);
  }
  double now = bbvfl_now();
  if (now - c->conn.last_expire < 0.3) return 0;
  c->conn.last_expire = now;
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
    if (c->conn.exp_r != r + 1) { /* the first "not yet" of this round: the head moves from here */
      c->conn.exp_r = r + 1;
      c->conn.exp_head = 0;
      c->conn.exp_moved_t = now;
    }
    c->conn.exp_deadline = e2.revert.nargs ? e2.revert.args[0] : 0;
  } else if (rc < 0) {
    c->conn.exp_r = 0; /* another reason (someone else expired it, no submission yet): the usual rule */
  }
  if (rc == 0) bbvfl_oc_log(c, "round %llu: no sum after %.1f s; expireRound() accepted", (unsigned long long)r, waited);
  return 0;
}

/* After the node came back from an outage (restarted from a saved state, it may have lost the last
   blocks): the event cursor is pulled back to the node's head (re-mined events land after it) and
   the sender hands in again this client's transactions the node no longer has. */
int bbvfl_oc_after_outage(cl *c, uint64_t round, bbvfl_err *err) {
  uint64_t o = bbvfl_rpc_outages(c->conn.rpc);
  if (o == c->conn.outages_seen) return 0;
  c->conn.outages_seen = o;
  uint64_t head;
  if (bbvfl_rpc_block_number(c->conn.rpc, &head, err) < 0) return -1;
  if (c->blk > head) {
    bbvfl_oc_log(c, "round %llu: the node is back at block %llu, before block %llu this client had seen: blocks were lost",
          (unsigned long long)round, (unsigned long long)head, (unsigned long long)c->blk);
    c->blk = head;
  }
  unsigned resent = 0;
  if (bbvfl_sender_recover(c->conn.snd, &resent, err) < 0) return -1;
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
  int found = bbvfl_sender_stall_cause(c->conn.snd, why, cap);
  if (c->cfg->max_fee_gwei <= 0 || !bbvfl_sender_fee_above_cap(c->conn.snd)) return 0;
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
    if (bbvfl_sender_check(c->conn.snd, NULL, err) < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)round);
    /* after a reorg: a call of this client's that its re-sent copy did not redo (onchain_repair.c) */
    if (bbvfl_oc_repair_lost(c, err) < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)round);
    uint64_t o = bbvfl_rpc_outages(c->conn.rpc);
    int f = bbvfl_oc_query_event(c, kind, round, ev, err);
    if (f < 0 && bbvfl_rpc_outages(c->conn.rpc) != o) {
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

/* ------------------------------------------------------------------ submissions: gas and the way in */

uint64_t bbvfl_oc_submit_gas(const cl *c, uint64_t coords) {
  /* the one gas model the window sizing uses too (binding/fit.h) */
  bbvfl_fit_setup fs = {.hashed = c->hashed, .masked = c->masked, .M = c->cp.cfg.clients, .levels = c->cp.cfg.levels,
                        .wire = c->wire};
  return bbvfl_fit_submit_gas(&fs, coords, c->cfg->submit_via_self);
}

int bbvfl_oc_submit_via(const cl *c, uint8_t **cd, size_t *len, const uint8_t **to, bbvfl_err *err) {
  *to = c->agg.address;
  if (!c->cfg->submit_via_self) return 0;
  /* execute(address to, bytes data): selector, to, offset 0x40, length, data zero-padded */
  size_t pad = (*len + 31) / 32 * 32, n = 4 + 32 * 3 + pad;
  uint8_t *w = calloc(n, 1);
  if (!w) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  bbvfl_abi_selector("execute(address,bytes)", w);
  bbvfl_cenc_word_address(c->agg.address, w + 4);
  bbvfl_cenc_word_u64(0x40, w + 36);
  bbvfl_cenc_word_u64(*len, w + 68);
  memcpy(w + 100, *cd, *len);
  free(*cd);
  *cd = w;
  *len = n;
  *to = c->me;
  return 0;
}

/* ------------------------------------------------------------------ the active client's transactions in flight */

int bbvfl_oc_out_send(cl *c, const uint8_t *cd, size_t len, uint64_t gas, const char *what, int kind, bbvfl_err *err) {
  if (c->conn.nout == c->conn.capout) {
    size_t cap = c->conn.capout ? 2 * c->conn.capout : 8;
    bbvfl_oc_out *o = realloc(c->conn.out, cap * sizeof *o);
    if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    c->conn.out = o;
    c->conn.capout = cap;
  }
  double t0 = bbvfl_now();
  bbvfl_oc_out *o = &c->conn.out[c->conn.nout];
  int rc = bbvfl_sender_send_tracked(c->conn.snd, c->agg.address, NULL, cd, len, gas, &o->p, err);
  c->res->send_s += bbvfl_now() - t0;
  if (rc < 0) return bbvfl_wrap(err, "%s", what);
  /* kept: a reorg may take it out and its re-sent copy fail (onchain_repair.c) */
  if (bbvfl_oc_keep_call(c, cd, len, gas, what, kind, err) < 0) return -1;
  o->what = what;
  o->kind = kind;
  o->round = UINT64_MAX;
  c->conn.nout++;
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
  for (size_t i = 0; i < c->conn.nout; i++) {
    bbvfl_receipt r;
    bbvfl_err e = {0};
    int ok = bbvfl_sender_wait_tracked(c->conn.snd, &c->conn.out[i].p, c->cfg->round_timeout_s, &r, &e);
    if (ok == 0 && c->conn.out[i].kind == OC_GAS_PAYOUT && c->cfg->confirmations) {
      /* a payout cannot be undone: it counts once it is confirmations deep in a block still canonical */
      ok = bbvfl_sender_confirm(c->conn.snd, &r, c->cfg->confirmations, 2 * c->cfg->round_timeout_s, &e);
      if (ok == 0)
        bbvfl_oc_log(c, "%s: %u confirmations (block %llu)", c->conn.out[i].what, c->cfg->confirmations,
               (unsigned long long)r.block_number);
    }
    switch (c->conn.out[i].kind) {
    case OC_GAS_SUBMIT: c->res->gas_submit += r.gas_used; break;
    case OC_GAS_AGGREGATE: c->res->gas_aggregate += r.gas_used; break;
    case OC_GAS_GRADIENT: c->res->gas_gradient += r.gas_used; break;
    default: c->res->gas_other += r.gas_used; break;
    }
    if (r.block_number > c->blk) c->blk = r.block_number;
    bbvfl_receipt_clear(&r);
    if (ok < 0 && c->conn.out[i].kind == OC_GAS_AGGREGATE && e.code == BBVFL_E_REVERT) {
      /* Anyone may aggregate: when another sender's aggregate() of the round landed first (a
         stranger with a higher tip in the same block, a demoted or a new active client), this one
         reverts, and replaying it as a call on the block before does not even say why. The chain
         decides: the round's RoundCompleted exists. Its sum is the one this client computed (the
         contract checked every payload against its stored hash). */
      bbvfl_err e3 = {0};
      if (round_completed(c, c->conn.out[i].round, &e3) == 1) { /* an RPC error keeps the revert */
        bbvfl_oc_log(c, "round %llu: %s reverted; the round was aggregated by another sender (RoundCompleted on chain)",
               (unsigned long long)c->conn.out[i].round, c->conn.out[i].what);
        ok = 0;
      }
    }
    if (ok < 0 && e.code == BBVFL_E_REVERT &&
        (bbvfl_err_revert_sel_is(&e, BBVFL_SEL_RoundNotOpen) || bbvfl_err_revert_sel_is(&e, BBVFL_SEL_EpochNotComplete))) {
      /* the chain went back behind the round or epoch this call is for (a reorg took out what it
         followed): kept, it is sent again once the chain is there (onchain_repair.c) */
      bbvfl_oc_log(c, "%s reverted (%s): the chain went back behind it (a reorg); it is sent again when the chain is "
                      "there",
                   c->conn.out[i].what, e.revert.error[0] ? e.revert.error : "RoundNotOpen");
      ok = 0;
    }
    if (ok < 0 && rc == 0) {
      rc = -1;
      *err = e;
      bbvfl_wrap(err, "%s", c->conn.out[i].what);
    }
    bbvfl_pending_clear(&c->conn.out[i].p);
  }
  c->conn.nout = 0;
  c->res->send_s += bbvfl_now() - t0;
  return rc;
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

/* ------------------------------------------------------------------ the connection and the sender */

int bbvfl_oc_conn_open(cl *c, uint64_t *chain_id, bbvfl_err *err) {
  const bbvfl_onchain_cfg *cfg = c->cfg;
  const bbvfl_session *s = c->sess;
  const char *url = cfg->rpc_url ? cfg->rpc_url : s->rpc_url;
  bbvfl_rpc_opts ro = {.timeout_s = cfg->round_timeout_s + 5,
                       .retries = 3,
                       .down_timeout_s = cfg->node_down_timeout_s,
                       .rate_wait_s = cfg->rate_limit_wait_s,
                       .max_log_range = cfg->max_log_range,
                       .on_wait = bbvfl_oc_rpc_wait_log,
                       .on_wait_ctx = c};
  c->conn.rpc = bbvfl_rpc_new(url, &ro, err);
  if (!c->conn.rpc) return -1;
  if (bbvfl_rpc_chain_id(c->conn.rpc, chain_id, err) < 0) return bbvfl_wrap(err, "connecting to %s", url);
  if (*chain_id != s->chain_id)
    return bbvfl_fail(err, BBVFL_E_STATE, "the node at %s has chain id %llu, the session was deployed on %llu", url,
                      (unsigned long long)*chain_id, (unsigned long long)s->chain_id);
  bbvfl_aggc_init(&c->agg, c->conn.rpc, s->contract);
  c->agg.depth = cfg->confirmations; /* act on events only once they are this deep (a reorg no deeper keeps them) */
  if (bbvfl_aggc_params(&c->agg, &c->cp, err) < 0)
    return bbvfl_wrap(err, "reading the aggregator's parameters (is %s the session's contract?)", "the contract address");
  return 0;
}

int bbvfl_oc_sender_open(cl *c, uint64_t chain_id, bbvfl_err *err) {
  const bbvfl_onchain_cfg *cfg = c->cfg;
  if (cfg->submit_via_self) {
    /* the account must carry code (an EIP-7702 delegation): a call to a plain EOA would succeed
       and submit nothing */
    json_t *code = NULL;
    char me[43];
    bbvfl_addr_checksum(c->me, me);
    if (bbvfl_rpc_call(c->conn.rpc, "eth_getCode", json_pack("[s,s]", me, "latest"), &code, err) < 0) return -1;
    const char *hx = json_string_value(code);
    int empty = !hx || !strcmp(hx, "0x") || !strcmp(hx, "0x0");
    json_decref(code);
    if (empty)
      return bbvfl_fail(err, BBVFL_E_STATE,
                        "--submit-via-self: the account %s has no code (set its EIP-7702 delegation to a contract "
                        "with execute(address,bytes), e.g. with cast send --auth DELEGATE, before starting the client)",
                        me);
  }
  c->blk = c->sess->deploy_block;
  c->conn.ev_blk = c->sess->deploy_block;
  c->conn.snd = bbvfl_sender_new(c->conn.rpc, cfg->key, chain_id, err);
  if (!c->conn.snd) return -1;
  bbvfl_sender_set_sync(c->conn.snd, 1);
  bbvfl_sender_set_fee_ttl(c->conn.snd, 600);
  bbvfl_sender_set_status(c->conn.snd, bbvfl_oc_sender_status, c);
  if (cfg->reprice_blocks)
    bbvfl_sender_set_reprice_blocks(c->conn.snd, cfg->reprice_blocks > 0 ? (unsigned)cfg->reprice_blocks : 0);
  if (cfg->max_fee_gwei > 0) {
    bbvfl_u256 cap = bbvfl_u256_from_u64((uint64_t)(cfg->max_fee_gwei * 1e9 + 0.5));
    bbvfl_sender_set_max_fee(c->conn.snd, &cap);
  }
  return 0;
}

void bbvfl_oc_conn_close(cl *c) {
  if (c->conn.snd && c->res) {
    bbvfl_u256 wei;
    bbvfl_sender_fees(c->conn.snd, &c->res->fee_gas, &wei);
    bbvfl_u256_to_dec(&wei, c->res->fee_wei);
  }
  bbvfl_sender_free(c->conn.snd);
  bbvfl_rpc_free(c->conn.rpc);
  c->conn.snd = NULL;
  c->conn.rpc = NULL;
}

void bbvfl_oc_out_free(cl *c) {
  for (size_t i = 0; i < c->conn.nout; i++) bbvfl_pending_clear(&c->conn.out[i].p);
  free(c->conn.out);
  c->conn.out = NULL;
  c->conn.nout = c->conn.capout = 0;
}

/* ------------------------------------------------------------------ event cursors */

void bbvfl_oc_set_ev_blk(cl *c, uint64_t b) { c->conn.ev_blk = b; }

void bbvfl_oc_raise_ev_blk(cl *c, uint64_t b) {
  if (b > c->conn.ev_blk) c->conn.ev_blk = b;
}

void bbvfl_oc_set_done_blk(cl *c, uint64_t r, uint64_t b) { c->conn.done_blk[r % OC_DONE_RING] = b; }
