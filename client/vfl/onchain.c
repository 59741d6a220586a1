#include "vfl/onchain.h"

#include <jansson.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "dp/labeldp.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "ml/head.h"
#include "ml/metrics.h"
#include "vfl/ckpt.h"
#include "vfl/contract.h"
#include "vfl/head.h"
#include "vfl/masked.h"
#include "vfl/party.h"
#include "vfl/schedule.h"
#include "vfl/setup.h"

#define POLL_MIN_S 0.0002
#define POLL_MAX_S 0.005

typedef struct {
  const bbvfl_onchain_cfg *cfg;
  const bbvfl_session *sess;
  bbvfl_onchain_result *res;
  bbvfl_rpc *rpc;
  bbvfl_sender *snd;
  bbvfl_aggc agg;
  bbvfl_cparams cp;
  bbvfl_vfl_data data;
  int have_data;
  bbvfl_party party;
  int have_party;
  bbvfl_vhead head;
  int have_head;
  bbvfl_schedule sched;
  int have_sched;
  uint8_t me[20];
  uint8_t active[20];
  int is_active;
  int K;                 /* head outputs: 1 for binary */
  size_t B, n, T, V, neval;
  uint64_t blk;          /* events of the coming rounds are at or after this block */
  char dir[1024];
  /* buffers */
  uint8_t *q;
  uint32_t *sum;
  float *grad, *probs;
  uint8_t *grad_be, *head_be;
  size_t head_len;
  int *yb, *yeval;
  size_t *rows;
  /* progress of the open epoch (active client) */
  double loss_sum, agg_sum;
  int slot;
  /* masked mode (docs/MASKED.md): pair keys and participant set; round_blk: the block before this
     round's first submission (RoundReopened events of the round are at or after it) */
  int masked;
  bbvfl_mclient mc;
  uint64_t round_blk;
  double last_expire;
  uint64_t only_active_late; /* r + 1 once round r was seen with every submission in (waiting for
                                the active client only: re-election's business, not expiry's) */
  /* re-election: rounds trained in the epoch this client took the head over (its loss average) */
  size_t trained;
  int takeover_epoch;    /* -1: none */
  uint64_t outages_seen; /* bbvfl_rpc_outages at the last check (after_outage) */
  /* labels split across clients (Algorithm 2, lines 11-14; docs/ONCHAIN.md "Labels") */
  int split;             /* the session has declared label holders */
  int holder;            /* this client is one of them */
  int own_all;           /* this client holds every row's label (--labels without --label-rows) */
  uint64_t holders;      /* labelHolders() bitmap */
  uint8_t (*addrs)[20];  /* clients() in index order */
  size_t naddrs;
  int *ylab;             /* per table row: the label this client holds, or -1 */
  float *dlog, *dlog_in; /* B x K dLoss/dlogits */
  uint8_t *dlog_be;
  double lrows_loss, lrows_n; /* open epoch: loss sum and count over this client's labelled training rows */
} cl;

static void logf_(const cl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(const cl *c, const char *fmt, ...) {
  if (!c->cfg->log) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(c->cfg->log, fmt, ap);
  va_end(ap);
  fputc('\n', c->cfg->log);
  fflush(c->cfg->log);
}

static void path_in(const cl *c, char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", c->dir, name);
}

static void rpc_wait_log(void *ctx, const char *msg) { logf_((const cl *)ctx, "%s", msg); }

/* ------------------------------------------------------------------ transactions */

static int tx(cl *c, const uint8_t *cd, size_t len, uint64_t gas, int is_submit, bbvfl_receipt *rc, const char *what,
              bbvfl_err *err) {
  double t0 = bbvfl_now();
  bbvfl_receipt local;
  bbvfl_receipt *r = rc ? rc : &local;
  memset(r, 0, sizeof *r);
  int ok = bbvfl_sender_transact(c->snd, c->agg.address, NULL, cd, len, gas, c->cfg->round_timeout_s, r, err);
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
static int receipt_event(const cl *c, const bbvfl_receipt *rc, bbvfl_ev_kind kind, uint64_t round, bbvfl_cev *ev,
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
static int query_event(cl *c, bbvfl_ev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err) {
  uint8_t t1[32];
  bbvfl_topic_u64(round, t1);
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
static int missing_clients(cl *c, uint64_t round, char *out, size_t cap) {
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

static int is_train_round(const cl *c, uint64_t r) { return r % (c->T + c->V) < c->T; }

/* A client that has waited too long for round r: a passive client calls reelect() when r is
   complete without a gradient; expireRound() when r is incomplete and either the active client has
   not submitted it or this client is the active client (then the missing ones are excluded). A revert
   means "not overdue yet" (on an automining devnet the attempt itself mined a block). 1: this client
   is now the active client; 0: not (*reset = 1 when another client became active: the wait starts
   over); -1: error. */
static int nudge_active(cl *c, uint64_t round, int *reset, bbvfl_err *err) {
  uint8_t act[20];
  char a[43];
  if (bbvfl_aggc_active(&c->agg, act, err) < 0) return -1;
  if (memcmp(act, c->active, 20)) {
    memcpy(c->active, act, 20);
    if (!memcmp(act, c->me, 20)) {
      logf_(c, "round %llu: this client was elected the new active client", (unsigned long long)round);
      return 1;
    }
    bbvfl_addr_checksum(act, a);
    logf_(c, "round %llu: the active client is now %s", (unsigned long long)round, a);
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
    if (c->is_active || !is_train_round(c, round)) return 0;
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
    logf_(c, "round %llu: waited %.1f s for the missing submissions; calling %s", (unsigned long long)round,
          c->cfg->takeover_after_s, what);
  else
    logf_(c, "round %llu: waited %.1f s for the active client %s; calling %s", (unsigned long long)round,
          c->cfg->takeover_after_s, a, what);
  uint64_t blk = c->blk; /* the awaited event may be in a block before this attempt's */
  bbvfl_err e2 = {0};
  int rc = tx(c, cd, len, gas, 0, NULL, what, &e2);
  c->blk = blk;
  free(cd);
  if (rc < 0) {
    if (e2.code != BBVFL_E_REVERT) {
      *err = e2;
      return -1;
    }
    return 0; /* not overdue yet */
  }
  logf_(c, "round %llu: %s accepted", (unsigned long long)round, what);
  return nudge_active(c, round, reset, err);
}

/* One step of a wait for round r, for dropouts (docs/MASKED.md, "Dropouts"). Masked mode: when
   the contract voided the round and re-opened it for a smaller set (RoundReopened), masks the SAME
   q for the announced set and submits again. Both modes: when the round has been waiting longer
   than round_timeout_s and cfg->expire is set, calls expireRound() (at most every 0.3 s: a revert
   means "not overdue in blocks yet" or "someone else did it", and on an automining devnet each
   attempt mines a block); plain mode then completes the round with the submissions it has, masked
   mode re-opens it. 1: the round was re-opened and this client submitted again (the wait starts
   over); 0: keep waiting; -1: error (incl. giving up after twice the timeout). */
static int expire_wait_step(cl *c, uint64_t r, double waited, bbvfl_err *err) {
  int k = c->masked ? bbvfl_mclient_poll_reopened(&c->mc, &c->agg, r, c->round_blk, err) : 0;
  if (k < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
  if (k == 1) {
    logf_(c, "round %llu: re-opened for %u participants (set 0x%llx); submitting the same q masked for them",
          (unsigned long long)r, c->mc.nparts, (unsigned long long)c->mc.set);
    if (bbvfl_mclient_mask(&c->mc, r, c->q, err) < 0) return -1;
    uint8_t *cd;
    size_t len;
    if (bbvfl_cenc_submit(r, c->mc.lanes, 2 * c->n, &cd, &len, err) < 0) return -1;
    uint64_t gas = 21000 + 64 * (uint64_t)c->cp.data_length + 25000 * (((uint64_t)c->cp.sum_length + 31) / 32 + 4);
    uint64_t blk = c->blk;
    int ok = tx(c, cd, len, gas, 1, NULL, "submit() to the re-opened round", err);
    c->blk = blk;
    free(cd);
    if (ok < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
    c->res->submissions++;
    return 1;
  }
  if (!c->cfg->expire || waited <= c->cfg->round_timeout_s) return 0;
  if (waited > 2 * c->cfg->round_timeout_s) {
    /* Every participant submitted and only the active client's post is late: expiry cannot help,
       re-election (takeover_after_s) does; give it time before giving up. */
    double grace = 2 * c->cfg->round_timeout_s + 10 * c->cfg->takeover_after_s + 30;
    if (c->cfg->takeover_after_s > 0 && c->only_active_late == r + 1 && waited <= grace) return 0;
    char miss[1024];
    int nmiss = missing_clients(c, r, miss, sizeof miss);
    if (nmiss == 0 && c->cfg->takeover_after_s > 0 && waited <= grace) {
      c->only_active_late = r + 1;
      return 0;
    }
    return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                      "round %llu did not complete%s within %.0f s although expireRound() was tried (not "
                      "submitted: %s); is the session's round_timeout_blocks reachable?",
                      (unsigned long long)r, c->masked ? " or re-open" : "", 2 * c->cfg->round_timeout_s, miss);
  }
  double now = bbvfl_now();
  if (now - c->last_expire < 0.3) return 0;
  c->last_expire = now;
  uint8_t *cd;
  size_t len;
  if (bbvfl_cenc_expire_round(&cd, &len, err) < 0) return -1;
  uint64_t blk = c->blk;
  bbvfl_err e2 = {0};
  int rc = tx(c, cd, len, 300000 + 60000 * (uint64_t)c->cp.cfg.clients, 0, NULL, "expireRound()", &e2);
  c->blk = blk;
  free(cd);
  if (rc < 0 && e2.code != BBVFL_E_REVERT) {
    *err = e2;
    return -1;
  }
  if (rc == 0) logf_(c, "round %llu: no sum after %.1f s; expireRound() accepted", (unsigned long long)r, waited);
  return 0;
}

/* After the node came back from an outage (restarted from a saved state, it may have lost the last
   blocks): the event cursor is pulled back to the node's head (re-mined events land after it) and
   the sender hands in again this client's transactions the node no longer has. */
static int after_outage(cl *c, uint64_t round, bbvfl_err *err) {
  uint64_t o = bbvfl_rpc_outages(c->rpc);
  if (o == c->outages_seen) return 0;
  c->outages_seen = o;
  uint64_t head;
  if (bbvfl_rpc_block_number(c->rpc, &head, err) < 0) return -1;
  if (c->blk > head) {
    logf_(c, "round %llu: the node is back at block %llu, before block %llu this client had seen: blocks were lost",
          (unsigned long long)round, (unsigned long long)head, (unsigned long long)c->blk);
    c->blk = head;
  }
  unsigned resent = 0;
  if (bbvfl_sender_recover(c->snd, &resent, err) < 0) return -1;
  if (resent)
    logf_(c, "round %llu: the node no longer had %u of this client's transactions; sent the same bytes again",
          (unsigned long long)round, resent);
  return 0;
}

/* Waits for the event of `kind` for `round`, polling with a growing backoff. A passive client
   with takeover_after_s set nudges an overdue active client (nudge_active); returns 2 when this
   client became the active client instead. */
static int wait_event(cl *c, bbvfl_ev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err) {
  double t0 = bbvfl_now(), delay = POLL_MIN_S, t_wait = t0, last_nudge = 0;
  for (;;) {
    if (after_outage(c, round, err) < 0) return -1;
    uint64_t o = bbvfl_rpc_outages(c->rpc);
    int f = query_event(c, kind, round, ev, err);
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
    if (c->masked || c->cfg->expire) {
      int k = expire_wait_step(c, round, now - t0, err);
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
      int k = nudge_active(c, round, &reset, err);
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
  missing_clients(c, round, miss, sizeof miss);
  if (c->cfg->expire) {
    uint8_t *cd;
    size_t len;
    bbvfl_err e2 = {0};
    if (bbvfl_cenc_expire_round(&cd, &len, &e2) == 0) {
      int rc = tx(c, cd, len, 300000 + 60000 * (uint64_t)c->cp.cfg.clients, 0, NULL, "expireRound()", &e2);
      free(cd);
      if (rc == 0)
        return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                          "round %llu did not complete within %.0f s; called expireRound(), which excluded: %s",
                          (unsigned long long)round, c->cfg->round_timeout_s, miss);
    }
    return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                      "round %llu did not complete within %.0f s (waiting for %s); expireRound() failed: %s",
                      (unsigned long long)round, c->cfg->round_timeout_s, bbvfl_ev_signature(kind), e2.msg);
  }
  return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                    "round %llu did not complete within %.0f s (waiting for %s). Not submitted yet: %s. Restart the "
                    "missing clients, or run again with --expire to exclude them",
                    (unsigned long long)round, c->cfg->round_timeout_s, bbvfl_ev_signature(kind), miss);
}

/* Waits until phase() is at least `want`. */
static int wait_phase(cl *c, bbvfl_phase want, bbvfl_phase *got, const char *what, bbvfl_err *err) {
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

/* ------------------------------------------------------------------ registration and election */

static int load_or_make_secret(cl *c, uint8_t secret[32], bbvfl_err *err) {
  char p[1100];
  path_in(c, p, sizeof p, "election-secret.hex");
  if (access(p, F_OK) == 0) {
    char *text = NULL;
    size_t len = 0;
    if (bbvfl_read_file(p, 4096, &text, &len, err) < 0) return -1;
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' ')) text[--len] = 0;
    int rc = bbvfl_hex_decode_fixed(text, secret, 32, err);
    free(text);
    return rc < 0 ? bbvfl_wrap(err, "%s", p) : 0;
  }
  if (getrandom(secret, 32, 0) != 32) return bbvfl_fail(err, BBVFL_E_IO, "getrandom failed");
  char hex[70];
  bbvfl_hex_encode(secret, 32, hex);
  size_t l = strlen(hex);
  hex[l] = '\n';
  return bbvfl_write_file_atomic(p, hex, l + 1, 0600, err);
}

static int election(cl *c, bbvfl_err *err) {
  const bbvfl_key *k = c->cfg->key;
  bbvfl_client_info ci;
  uint8_t *cd = NULL;
  size_t len = 0;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  bbvfl_phase ph;
  if (!ci.registered) {
    if (bbvfl_aggc_phase(&c->agg, &ph, err) < 0) return -1;
    if (ph != BBVFL_PHASE_REGISTRATION)
      return bbvfl_fail(err, BBVFL_E_STATE, "registration is closed: the session already has its %u clients",
                        (unsigned)c->cp.cfg.clients);
    if ((c->cfg->label_rows ? bbvfl_cenc_register_label_holder(k->pub, &cd, &len, err)
                            : bbvfl_cenc_register(k->pub, &cd, &len, err)) < 0)
      return -1;
    int rc = tx(c, cd, len, 300000, 0, NULL, c->cfg->label_rows ? "registerLabelHolder()" : "register()", err);
    free(cd);
    if (rc < 0) return -1;
    logf_(c, "registered");
  }
  if (wait_phase(c, BBVFL_PHASE_COMMIT, &ph, "waiting for every client to register", err) < 0) return -1;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  c->res->index = ci.index;
  uint8_t secret[32];
  if (load_or_make_secret(c, secret, err) < 0) return -1;
  if (!ci.committed && ph == BBVFL_PHASE_COMMIT) {
    uint8_t com[32];
    bbvfl_commitment(secret, c->me, com);
    if (bbvfl_cenc_commit(com, &cd, &len, err) < 0) return -1;
    int rc = tx(c, cd, len, 120000, 0, NULL, "commit()", err);
    free(cd);
    if (rc < 0) return -1;
    ci.committed = 1;
  }
  if (wait_phase(c, BBVFL_PHASE_REVEAL, &ph, "waiting for every client to commit", err) < 0) return -1;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  if (ph == BBVFL_PHASE_REVEAL && ci.committed && !ci.revealed) {
    if (bbvfl_cenc_reveal(secret, &cd, &len, err) < 0) return -1;
    int rc = tx(c, cd, len, 200000 + 90000 * (uint64_t)c->cp.cfg.clients, 0, NULL, "reveal()", err);
    free(cd);
    if (rc < 0) return -1;
  }
  memset(secret, 0, sizeof secret);
  if (wait_phase(c, BBVFL_PHASE_TRAINING, &ph, "waiting for every client to reveal", err) < 0) return -1;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  if (ci.excluded) return bbvfl_fail(err, BBVFL_E_STATE, "this client was excluded from the session");
  if (bbvfl_aggc_seed(&c->agg, c->res->S, err) < 0 || bbvfl_aggc_active(&c->agg, c->active, err) < 0) return -1;
  c->is_active = !memcmp(c->active, c->me, 20);
  return 0;
}

/* ------------------------------------------------------------------ checkpoints */

static int save_progress(cl *c, uint64_t next_round, bbvfl_err *err) {
  double t0 = bbvfl_now();
  char p[1100], name[32];
  int slot = c->slot ^ 1;
  snprintf(name, sizeof name, "party-%d.ckpt", slot);
  path_in(c, p, sizeof p, name);
  if (bbvfl_party_save(&c->party, p, err) < 0) return -1;
  if (c->have_head) {
    snprintf(name, sizeof name, "head-%d.ckpt", slot);
    path_in(c, p, sizeof p, name);
    if (bbvfl_vhead_save(&c->head, p, err) < 0) return -1;
  }
  bbvfl_ckpt k = {0};
  bbvfl_ckpt_put_bytes(&k, c->agg.address, 20);
  bbvfl_ckpt_put_bytes(&k, c->res->S, 32);
  bbvfl_ckpt_put_u64(&k, next_round);
  bbvfl_ckpt_put_u64(&k, (uint64_t)slot);
  bbvfl_ckpt_put_u64(&k, (uint64_t)c->have_head);
  bbvfl_ckpt_put_f64(&k, c->loss_sum);
  bbvfl_ckpt_put_f64(&k, c->agg_sum);
  bbvfl_ckpt_put_floats(&k, c->probs, c->neval * (size_t)c->K);
  path_in(c, p, sizeof p, "progress.ckpt");
  int rc = bbvfl_ckpt_save(&k, p, "PROGRESS", err);
  bbvfl_ckpt_free(&k);
  if (rc == 0) c->slot = slot;
  c->res->ckpt_s += bbvfl_now() - t0;
  return rc;
}

/* 1 resumed (next round in *next), 0 nothing to resume. */
static int load_progress(cl *c, uint64_t *next, bbvfl_err *err) {
  char p[1100], name[32];
  path_in(c, p, sizeof p, "progress.ckpt");
  if (access(p, F_OK) != 0) return 0;
  bbvfl_ckpt k = {0};
  if (bbvfl_ckpt_open(&k, p, "PROGRESS", err) < 0) return -1;
  uint8_t addr[20], S[32];
  uint64_t slot, hh;
  int rc = -1;
  if (bbvfl_ckpt_get_bytes(&k, addr, 20, err) || bbvfl_ckpt_get_bytes(&k, S, 32, err) ||
      bbvfl_ckpt_get_u64(&k, next, err) || bbvfl_ckpt_get_u64(&k, &slot, err) || bbvfl_ckpt_get_u64(&k, &hh, err) ||
      bbvfl_ckpt_get_f64(&k, &c->loss_sum, err) || bbvfl_ckpt_get_f64(&k, &c->agg_sum, err) ||
      bbvfl_ckpt_get_floats(&k, c->probs, c->neval * (size_t)c->K, err)) {
    bbvfl_wrap(err, "%s", p);
    goto out;
  }
  if (memcmp(addr, c->agg.address, 20) || memcmp(S, c->res->S, 32)) {
    bbvfl_fail(err, BBVFL_E_STATE, "%s belongs to another session: use a fresh --state-dir", p);
    goto out;
  }
  c->slot = (int)(slot & 1);
  snprintf(name, sizeof name, "party-%d.ckpt", c->slot);
  path_in(c, p, sizeof p, name);
  if (bbvfl_party_load(&c->party, p, err) < 0) goto out;
  if (hh && c->have_head) {
    snprintf(name, sizeof name, "head-%d.ckpt", c->slot);
    path_in(c, p, sizeof p, name);
    if (bbvfl_vhead_load(&c->head, p, err) < 0) goto out;
  }
  rc = 1;
out:
  bbvfl_ckpt_free(&k);
  return rc;
}

/* ------------------------------------------------------------------ rounds */

/* The number of submissions round r's sum covers, as the round's RoundCompleted event states it
   (fewer than M after a dropout or an exclusion): the PBM estimate h_hat = C/(beta*b)*(sum - b*n/2)
   needs exactly that n. Never taken from a later read of the participant set, which may already
   reflect an exclusion after the round completed. */
static int take_contributors(cl *c, uint64_t r, const bbvfl_cev *ev, bbvfl_err *err) {
  unsigned n = ev->participants;
  if (n == 0 || n > c->cp.cfg.clients)
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu: RoundCompleted covers %u submissions, outside 1..%u",
                      (unsigned long long)r, n, (unsigned)c->cp.cfg.clients);
  if (!c->have_head) return 0;
  if ((int)n != c->head.M)
    logf_(c, "round %llu: the sum covers %u submissions (was %d)", (unsigned long long)r, n, c->head.M);
  c->head.M = (int)n;
  if (n < c->res->participants) c->res->participants = n;
  return 0;
}

static int get_sum(cl *c, uint64_t r, const bbvfl_receipt *rc, bbvfl_err *err) {
  bbvfl_cev ev;
  int f = rc ? receipt_event(c, rc, BBVFL_EV_ROUND_COMPLETED, r, &ev, err) : 0;
  if (f < 0) return -1;
  if (!f && wait_event(c, BBVFL_EV_ROUND_COMPLETED, r, &ev, err) < 0) return -1;
  int ok = take_contributors(c, r, &ev, err);
  if (ok == 0) ok = bbvfl_sum_unpack(ev.data, ev.data_len, c->cp.lane_bits, c->sum, c->n, err);
  bbvfl_cev_clear(&ev);
  return ok;
}

/* Test metrics of the scores in probs over the rows with a label (y >= 0). */
static void metrics_of(const cl *c, const float *probs, const int *y, size_t n, bbvfl_epoch_metrics *em) {
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
static int fill_metrics(cl *c, uint32_t e, bbvfl_err *err) {
  bbvfl_epoch_metrics *em = &c->res->per_epoch[e];
  memset(em, 0, sizeof *em);
  em->epoch = (int)e + 1;
  em->agg_train_s = c->agg_sum;
  c->res->agg_s[e] = c->agg_sum;
  if (!c->split || c->own_all) {
    /* an epoch this client took over mid-way: the mean over the rounds it trained */
    size_t nt = c->takeover_epoch == (int)e ? c->trained : c->T;
    em->train_loss = nt ? c->loss_sum / (double)nt : 0;
    metrics_of(c, c->probs, c->yeval, c->neval, em);
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
  metrics_of(c, p, y, m, em);
  free(p);
  free(y);
  return 0;
}

static int post_epoch(cl *c, uint32_t e, bbvfl_err *err) {
  bbvfl_epoch_metrics *em = &c->res->per_epoch[e];
  if (fill_metrics(c, e, err) < 0) return -1;
  if (c->split && !c->own_all && c->res->labelled_test_rows == 0)
    logf_(c, "epoch %u: this active client holds no test labels: the metrics it posts are zeros", e + 1);
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
    int rc = tx(c, cd, len, 150000, 0, NULL, "postMetrics()", err);
    free(cd);
    if (rc < 0) return -1;
  }
  if (!st.rewards_paid) {
    if (bbvfl_cenc_pay_rewards(e, &cd, &len, err) < 0) return -1;
    int rc = tx(c, cd, len, 150000 + 80000 * (uint64_t)c->cp.cfg.clients, 0, NULL, "payRewards()", err);
    free(cd);
    if (rc < 0) return -1;
  }
  logf_(c, "epoch %u: train loss %.4f, test loss %.4f, AUROC %.4f, accuracy %.4f, on-chain aggregation %.4f s", e + 1,
        em->train_loss, em->test_loss, em->auroc, em->accuracy, c->agg_sum);
  return 0;
}

/* Checkpoints the state before round r's forward: parameters and optimizer are untouched by a
   forward, only the noise generator moved, so the saved generator is the one from before it. */
static int checkpoint_round(cl *c, uint64_t r, const bbvfl_rng *noise_before, bbvfl_err *err) {
  bbvfl_rng after = c->party.noise;
  c->party.noise = *noise_before;
  int ck = save_progress(c, r, err);
  c->party.noise = after;
  bbvfl_rng_wipe(&after);
  return ck < 0 ? bbvfl_wrap(err, "checkpoint of round %llu", (unsigned long long)r) : 0;
}

/* After an active-only call reverted with "not active": 1 when the chain has elected another
   client (this one was slow, not dead): it carries on as a passive client (err cleared); 0 when
   not (err kept). */
static int demoted(cl *c, uint64_t r, bbvfl_err *err) {
  if (err->code != BBVFL_E_REVERT || !strstr(err->msg, "not active")) return 0;
  uint8_t act[20];
  bbvfl_err e2 = {0};
  if (bbvfl_aggc_active(&c->agg, act, &e2) < 0 || !memcmp(act, c->me, 20)) return 0;
  char a[43];
  bbvfl_addr_checksum(act, a);
  logf_(c, "round %llu: the chain elected %s while this client was slow; carrying on as a passive client",
        (unsigned long long)r, a);
  memcpy(c->active, act, 20);
  c->is_active = 0;
  memset(err, 0, sizeof *err);
  return 1;
}

/* The head as the off-chain trainer initialises it (session seed) and its parameter buffer. */
static int init_head(cl *c, bbvfl_err *err) {
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
static int find_event(cl *c, bbvfl_ev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err) {
  uint64_t blk = c->blk;
  c->blk = c->sess->deploy_block;
  int f = query_event(c, kind, round, ev, err);
  c->blk = blk;
  if (f < 0) return -1;
  if (f == 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "%s for round %llu is not in the node's logs", bbvfl_ev_signature(kind),
                      (unsigned long long)round);
  return 0;
}

/* Evaluates the head on the first `count` evaluation rounds of epoch e from their RoundCompleted
   sums (into c->probs). */
static int rebuild_eval(cl *c, uint64_t e, size_t count, bbvfl_err *err) {
  uint64_t per = c->T + c->V;
  for (size_t k = 0; k < count; k++) {
    uint64_t r = e * per + c->T + k;
    bbvfl_cev ev;
    if (find_event(c, BBVFL_EV_ROUND_COMPLETED, r, &ev, err) < 0) return -1;
    int ok = take_contributors(c, r, &ev, err);
    if (ok == 0) ok = bbvfl_sum_unpack(ev.data, ev.data_len, c->cp.lane_bits, c->sum, c->n, err);
    bbvfl_cev_clear(&ev);
    if (ok < 0 || bbvfl_vhead_eval(&c->head, c->sum, NULL, c->B, c->probs + k * c->B * (size_t)c->K, err) < 0)
      return bbvfl_wrap(err, "re-evaluating round %llu", (unsigned long long)r);
  }
  return 0;
}

/* This client was elected during the session (reelect() or expireRound()) while at round r: it
   takes the head over from the last GradientPosted (checked against lastFusionParamsHash), settles
   the previous epoch if its metrics or rewards are missing, and re-evaluates the evaluation rounds
   of r's epoch that are already complete. */
static int take_over(cl *c, uint64_t r, bbvfl_err *err) {
  if (!c->cfg->has_labels && !c->split)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "round %llu: this client was elected the new active client but holds no labels (--labels)",
                      (unsigned long long)r);
  c->is_active = 1;
  uint64_t blk0 = c->blk; /* the round's events may precede the settling transactions below */
  uint64_t per = c->T + c->V, e = r / per, pos = r % per;
  if (!c->have_head && init_head(c, err) < 0) return -1;
  bbvfl_vhead_epoch(&c->head, (int)e);
  static const uint8_t zero[32];
  uint8_t h[32];
  uint64_t fr = 0;
  if (bbvfl_aggc_last_fusion_hash(&c->agg, h, err) < 0) return -1;
  int have_fr = memcmp(h, zero, 32) != 0;
  if (have_fr) {
    if (bbvfl_aggc_last_fusion_round(&c->agg, &fr, err) < 0) return -1;
    bbvfl_cev gp;
    if (find_event(c, BBVFL_EV_GRADIENT_POSTED, fr, &gp, err) < 0) return -1;
    uint8_t got[32];
    bbvfl_keccak256(gp.data2, gp.data2_len, got);
    int rc = memcmp(got, h, 32) ? bbvfl_fail(err, BBVFL_E_STATE,
                                             "GradientPosted(%llu)'s parameters do not match lastFusionParamsHash()",
                                             (unsigned long long)fr)
                                : bbvfl_vhead_load_params_be(&c->head, gp.data2, gp.data2_len, err);
    bbvfl_cev_clear(&gp);
    if (rc < 0) return bbvfl_wrap(err, "taking over the head");
    logf_(c, "round %llu: took over the fusion head from GradientPosted(round %llu) (%zu parameters; the optimizer "
          "state starts afresh)", (unsigned long long)r, (unsigned long long)fr, c->head_len / 4);
  } else {
    logf_(c, "round %llu: no gradient posted yet: the head starts from the session's initialisation",
          (unsigned long long)r);
  }
  if (e > 0 && (!have_fr || fr < e * per)) {
    /* no training round of epoch e was posted: the head is the one epoch e-1 ended with */
    bbvfl_epoch_state st;
    if (bbvfl_aggc_epoch_state(&c->agg, (uint32_t)(e - 1), &st, err) < 0) return -1;
    if (!st.metrics_posted || !st.rewards_paid) {
      logf_(c, "epoch %llu: metrics or rewards missing; settling it", (unsigned long long)e);
      if (rebuild_eval(c, e - 1, c->V, err) < 0) return -1;
      c->loss_sum = c->agg_sum = 0;
      c->trained = 0;
      c->takeover_epoch = (int)(e - 1);
      if (post_epoch(c, (uint32_t)(e - 1), err) < 0) return -1;
    }
  }
  c->loss_sum = c->agg_sum = 0;
  c->trained = 0;
  c->takeover_epoch = (int)e;
  if (pos > c->T && rebuild_eval(c, e, pos - c->T, err) < 0) return -1;
  c->blk = blk0;
  return 0;
}

/* ------------------------------------------------------------------ labels split across clients */

/* c->ylab from cfg: every row's label (--labels), the rows of --label-rows, or none. */
static int init_label_rows(cl *c, bbvfl_err *err) {
  const bbvfl_dataset *ds = c->cfg->ds;
  c->ylab = malloc((ds->n + 1) * sizeof *c->ylab);
  if (!c->ylab) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < ds->n; i++) c->ylab[i] = c->cfg->has_labels && !c->cfg->label_rows ? ds->y[i] : -1;
  if (!c->cfg->label_rows) return 0;
  if (strchr(c->cfg->label_rows, '/'))
    return bbvfl_fail(err, BBVFL_E_ARG, "--label-rows '%s': one list of row indices and ranges (no '/')",
                      c->cfg->label_rows);
  bbvfl_partition p;
  if (bbvfl_partition_parse(c->cfg->label_rows, ds->n, &p, err) < 0)
    return bbvfl_wrap(err, "--label-rows (row indices 0..%zu of the data file)", ds->n - 1);
  for (size_t k = 0; k < p.off[1]; k++) c->ylab[p.cols[k]] = ds->y[p.cols[k]];
  size_t nrows = p.off[1];
  bbvfl_partition_free(&p);
  if (nrows == 0) return bbvfl_fail(err, BBVFL_E_ARG, "--label-rows '%s' names no rows", c->cfg->label_rows);
  return 0;
}

/* Label DP (session label_epsilon > 0): the labels this client holds for training rows are replaced
   once, before any transaction, by their randomized response (dp/labeldp.h); the evaluation rows
   keep their true labels (they only score the model). With seeded noise every label holder draws
   the same responses (seed, LABELS), so a restart or a re-elected active client trains on the very
   same labels; with getrandom each process draws afresh (docs/PRIVACY.md: each draw counts). */
static int label_dp(cl *c, bbvfl_err *err) {
  double eps = c->sess->train.label_eps;
  if (!(eps > 0)) return 0;
  if (bbvfl_rr_labels_keyed(c->ylab, c->data.train, c->data.n_train, c->cfg->ds->nclasses, eps, c->cfg->seeded_noise,
                            c->cfg->seed, err) < 0)
    return bbvfl_wrap(err, "label randomized response");
  return 0;
}

/* dLoss/dlogits of this client's labelled rows of the batch (zeros elsewhere, the mean over the
   whole batch) into c->dlog, with the head's current parameters; their loss goes to the epoch's
   tally. */
static int own_label_grad(cl *c, const size_t *rows, bbvfl_err *err) {
  for (size_t i = 0; i < c->B; i++) c->yb[i] = c->ylab[rows[i]];
  double ls = 0, t1 = bbvfl_now();
  size_t nheld = 0;
  int rc = bbvfl_vhead_label_grad(&c->head, c->sum, NULL, c->yb, c->B, &ls, &nheld, c->dlog, err);
  c->res->learn_s += bbvfl_now() - t1;
  if (rc < 0) return -1;
  c->lrows_loss += ls;
  c->lrows_n += (double)nheld;
  return 0;
}

static int holder_of(const cl *c, const uint8_t a[20]) {
  for (size_t i = 0; i < c->naddrs; i++)
    if (!memcmp(c->addrs[i], a, 20)) return (int)i;
  return -1;
}

/* LabelGradientPosted(r) logs from c->blk on: adds those of the holders in `need` not yet in *got
   into c->dlog (add = 1), or only notes who posted (add = 0). */
static int scan_label_posts(cl *c, uint64_t r, uint64_t need, uint64_t *got, int add, bbvfl_err *err) {
  uint8_t t1[32];
  bbvfl_topic_u64(r, t1);
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(&c->agg, BBVFL_EV_LABEL_GRADIENT_POSTED, t1, c->blk, UINT64_MAX, &logs, err) < 0) return -1;
  size_t i, nk = c->B * (size_t)c->K;
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
    if (h >= 0 && (need >> h & 1) && !(*got >> h & 1)) {
      if (add && ev.data_len != 4 * nk) {
        char a[43];
        bbvfl_addr_checksum(ev.client, a);
        rc = bbvfl_fail(err, BBVFL_E_PARSE,
                        "round %llu: label holder %s posted a %zu-byte label gradient, expected %zu (B x K binary32)",
                        (unsigned long long)r, a, ev.data_len, 4 * nk);
      } else if (add) {
        bbvfl_f32_from_be(ev.data, nk, c->dlog_in);
        for (size_t j = 0; j < nk; j++) c->dlog[j] += c->dlog_in[j];
      }
      if (rc == 0) *got |= 1ULL << h;
    }
    bbvfl_cev_clear(&ev);
    if (rc < 0) break;
  }
  json_decref(logs);
  return rc;
}

/* The active client, TRAIN round r: its own rows' dLoss/dlogits plus every other label holder's
   post (waited for within the round timeout), then the head's step from the sum; *loss: the mean
   over its own labelled rows of the batch (0 when none). */
static int active_split_step(cl *c, uint64_t r, const size_t *rows, double *loss, bbvfl_err *err) {
  double l0 = c->lrows_loss, n0 = c->lrows_n;
  if (own_label_grad(c, rows, err) < 0) return -1;
  *loss = c->lrows_n > n0 ? (c->lrows_loss - l0) / (c->lrows_n - n0) : 0;
  uint64_t need = c->holders & ~(1ULL << c->res->index), got = 0;
  double t0 = bbvfl_now(), delay = POLL_MIN_S;
  while (need) {
    if (scan_label_posts(c, r, need, &got, 1, err) < 0) return -1;
    if (got == need) break;
    if (bbvfl_now() - t0 > c->cfg->round_timeout_s) {
      c->res->wait_s += bbvfl_now() - t0;
      char miss[1024];
      size_t used = 0;
      miss[0] = 0;
      for (size_t i = 0; i < c->naddrs && i < 64; i++) {
        if (!((need & ~got) >> i & 1)) continue;
        char a[43];
        bbvfl_addr_checksum(c->addrs[i], a);
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
  int rc = bbvfl_vhead_train_dlogits(&c->head, c->sum, NULL, c->B, c->dlog, c->grad, err);
  c->res->learn_s += bbvfl_now() - t1;
  return rc < 0 ? bbvfl_wrap(err, "the summed label gradients") : 0;
}

/* A label holder that is not active, TRAIN round r: the round's sum, dLoss/dlogits of its rows
   with the head of the last GradientPosted, and postLabelGradient (unless, after a restart, the
   chain already has it). 0 done, 2 this client was elected active while waiting for the sum. */
static int holder_post(cl *c, uint64_t r, const size_t *rows, const bbvfl_receipt *rc, int check_chain,
                       bbvfl_err *err) {
  bbvfl_cev ev;
  int f = rc ? receipt_event(c, rc, BBVFL_EV_ROUND_COMPLETED, r, &ev, err) : 0;
  if (f < 0) return -1;
  if (!f) {
    int w = wait_event(c, BBVFL_EV_ROUND_COMPLETED, r, &ev, err);
    if (w != 0) return w;
  }
  /* h_hat must be the active client's: the count the round's own event states */
  int ok = take_contributors(c, r, &ev, err);
  if (ok == 0) ok = bbvfl_sum_unpack(ev.data, ev.data_len, c->cp.lane_bits, c->sum, c->n, err);
  bbvfl_cev_clear(&ev);
  if (ok < 0) return -1;
  if (own_label_grad(c, rows, err) < 0) return -1;
  if (check_chain) {
    uint64_t me = 1ULL << c->res->index, got = 0;
    if (scan_label_posts(c, r, me, &got, 0, err) < 0) return -1;
    if (got) {
      logf_(c, "round %llu: label gradient already posted before the restart", (unsigned long long)r);
      return 0;
    }
  }
  size_t nk = c->B * (size_t)c->K;
  bbvfl_f32_to_be(c->dlog, nk, c->dlog_be);
  uint8_t *cd;
  size_t len;
  if (bbvfl_cenc_post_label_gradient(r, c->dlog_be, 4 * nk, &cd, &len, err) < 0) return -1;
  int sent = tx(c, cd, len, 120000 + 40 * (uint64_t)(4 * nk), 0, NULL, "postLabelGradient()", err);
  free(cd);
  if (sent < 0) return -1;
  c->res->label_posts++;
  return 0;
}

/* A label holder that is not active, EVAL round (k-th of its epoch): its scores with the head of
   the last GradientPosted, from the RoundCompleted sum. */
static int holder_eval(cl *c, size_t k, const bbvfl_cev *rcev, bbvfl_err *err) {
  if (take_contributors(c, rcev->round, rcev, err) < 0) return -1;
  if (bbvfl_sum_unpack(rcev->data, rcev->data_len, c->cp.lane_bits, c->sum, c->n, err) < 0) return -1;
  double t1 = bbvfl_now();
  int rc = bbvfl_vhead_eval(&c->head, c->sum, NULL, c->B, c->probs + k * c->B * (size_t)c->K, err);
  c->res->learn_s += bbvfl_now() - t1;
  return rc;
}

/* Test hook (cfg->dump_q_dir): the unmasked q of round r as q-<index>-<round>.bin. Plaintext
   embeddings: never in production. */
static int dump_q(cl *c, uint64_t r, bbvfl_err *err) {
  char p[1300];
  snprintf(p, sizeof p, "%s/q-%d-%llu.bin", c->cfg->dump_q_dir, c->res->index, (unsigned long long)r);
  if (bbvfl_write_file_atomic(p, c->q, c->n, 0600, err) < 0) return bbvfl_wrap(err, "test hook: writing q");
  return 0;
}

/* Test hook (cfg->dump_q_dir): the active client's labels of training round r as y-<round>.bin,
   B true labels then the B labels trained on (they differ under label DP), int32 little-endian.
   Plaintext labels: never in production. */
static int dump_y(cl *c, uint64_t r, const size_t *rows, bbvfl_err *err) {
  char p[1300];
  snprintf(p, sizeof p, "%s/y-%llu.bin", c->cfg->dump_q_dir, (unsigned long long)r);
  uint8_t *b = malloc(8 * c->B);
  if (!b) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < 2 * c->B; i++) {
    uint32_t v = (uint32_t)(i < c->B ? c->cfg->ds->y[rows[i]] : c->yb[i - c->B]);
    for (int k = 0; k < 4; k++) b[4 * i + (size_t)k] = (uint8_t)(v >> (8 * k));
  }
  int rc = bbvfl_write_file_atomic(p, b, 8 * c->B, 0600, err);
  free(b);
  return rc < 0 ? bbvfl_wrap(err, "test hook: writing y") : 0;
}

/* submit(r, ...) calldata: q itself in plain mode, q masked for the current set in masked mode. */
static int encode_submission(cl *c, uint64_t r, uint8_t **cd, size_t *len, bbvfl_err *err) {
  if (c->cfg->dump_q_dir && dump_q(c, r, err) < 0) return -1;
  if (!c->masked) return bbvfl_cenc_submit(r, c->q, c->n, cd, len, err);
  c->round_blk = c->blk;
  if (bbvfl_mclient_mask(&c->mc, r, c->q, err) < 0) return -1;
  return bbvfl_cenc_submit(r, c->mc.lanes, 2 * c->n, cd, len, err);
}

static int run_rounds(cl *c, uint64_t start, int resumed, bbvfl_err *err) {
  uint64_t per = c->T + c->V, total = c->cp.total_rounds;
  uint64_t gas_submit = 21000 + 64 * (uint64_t)c->cp.data_length +
                        25000 * (((uint64_t)c->cp.sum_length + 31) / 32 + 4);
  uint64_t gas_grad = 150000 + 40 * (uint64_t)(4 * c->n + c->head_len);
  int check_submitted = resumed;
  uint64_t accepted_at_resume = 0;
  uint64_t done = 0;
  for (uint64_t r = start; r < total; r++) {
    uint64_t e = r / per, pos = r % per;
    int train = pos < c->T;
    if (pos == 0 || r == start) {
      bbvfl_party_epoch(&c->party, (int)e);
      if (c->have_head) bbvfl_vhead_epoch(&c->head, (int)e);
    }
    if (pos == 0) {
      c->loss_sum = c->agg_sum = 0;
      c->trained = 0;
      c->lrows_loss = c->lrows_n = 0;
    }
    const size_t *rows;
    if (train) {
      const size_t *p = bbvfl_schedule_batch(&c->sched, e, pos);
      for (size_t i = 0; i < c->B; i++) c->rows[i] = c->data.train[p[i]];
      rows = c->rows;
    } else {
      rows = c->data.test + (pos - c->T) * c->B;
    }
    bbvfl_rng noise_before = c->party.noise; /* the checkpoint of round r is the state before its forward */
    double tl = bbvfl_now();
    if (bbvfl_party_forward(&c->party, rows, c->B, c->q, NULL, err) < 0) return -1;
    c->res->learn_s += bbvfl_now() - tl;

    /* after a restart: the chain says which rounds this client already submitted (a client that
       was killed right after a submission may be one round past its checkpoint) */
    if (check_submitted) {
      bbvfl_client_info ci;
      if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
      accepted_at_resume = ci.accepted;
      check_submitted = 0;
    }
    int submitted = r < accepted_at_resume;
    if (submitted) logf_(c, "round %llu: already submitted before the restart", (unsigned long long)r);
    if (submitted) resumed = 1;
    double t_agg0 = bbvfl_now();
    bbvfl_receipt rc;
    memset(&rc, 0, sizeof rc);
    int have_rc = 0;
    if (!submitted) {
      uint8_t *cd;
      size_t len;
      if (encode_submission(c, r, &cd, &len, err) < 0) return -1;
      int ok = tx(c, cd, len, gas_submit, 1, &rc, "submit()", err);
      free(cd);
      have_rc = ok == 0;
      if (ok < 0 && err->code == BBVFL_E_REVERT && strstr(err->msg, "already submitted")) {
        /* an earlier send of this round's submission landed although it looked lost (a re-signed
           copy was refused): the chain has it, which is all that matters */
        bbvfl_client_info ci;
        if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
        if (ci.accepted > r) {
          logf_(c, "round %llu: the contract already has this client's submission (an earlier send that looked lost)",
                (unsigned long long)r);
          memset(err, 0, sizeof *err);
          ok = 0;
        } else {
          bbvfl_fail(err, BBVFL_E_STATE, "submit() reverted with \"already submitted\" but clientInfo says round %llu "
                     "is not accepted", (unsigned long long)r);
        }
      }
      if (ok < 0 && err->code == BBVFL_E_REVERT) {
        /* excluded while stopped or slow (expireRound): say so rather than "round closed" */
        bbvfl_client_info ci;
        bbvfl_err e2 = {0};
        if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, &e2) == 0 && ci.excluded)
          return bbvfl_fail(err, BBVFL_E_STATE,
                            "round %llu: this client was excluded from the session after %u accepted rounds (it "
                            "missed a round's deadline and someone called expireRound())",
                            (unsigned long long)r, (unsigned)ci.accepted);
      }
      if (ok < 0) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
      c->res->submissions++;
      if (c->cfg->pause_after_submit && r + 1 == (uint64_t)c->cfg->pause_after_submit) {
        /* testing: freeze mid-round (submitted, sum and gradient not yet read) so a test can
           SIGKILL this process at a known point however fast the session runs */
        logf_(c, "round %llu: submitted; pausing (SIGSTOP) as asked (testing)", (unsigned long long)r);
        raise(SIGSTOP);
      }
    }
    /* Checkpoint (state before this round's forward: parameters and optimizer are untouched by the
       forward, only the noise generator moved) while the other clients submit: off the critical path. */
    if (!c->is_active && checkpoint_round(c, r, &noise_before, err) < 0) {
      bbvfl_receipt_clear(&rc);
      return -1;
    }
    int fail = 0;
    if (!c->is_active) {
      int w = 0;
      if (train) {
        bbvfl_cev gp;
        /* a label holder posts dLoss/dlogits for its rows first */
        w = c->split && c->holder ? holder_post(c, r, rows, have_rc ? &rc : NULL, resumed, err) : 0;
        if (w == 0) w = wait_event(c, BBVFL_EV_GRADIENT_POSTED, r, &gp, err);
        if (w < 0) fail = 1;
        if (w == 0) {
          if (gp.data_len != 4 * c->n) {
            fail = 1;
            bbvfl_fail(err, BBVFL_E_PARSE, "round %llu: posted gradient has %zu bytes, expected %zu",
                       (unsigned long long)r, gp.data_len, 4 * c->n);
          } else {
            bbvfl_f32_from_be(gp.data, c->n, c->grad);
            /* a label holder follows the head: its next label gradient uses these parameters */
            if (c->split && c->have_head && bbvfl_vhead_load_params_be(&c->head, gp.data2, gp.data2_len, err) < 0)
              fail = 1;
          }
          bbvfl_cev_clear(&gp);
        }
      } else {
        bbvfl_cev rcev;
        int f = have_rc ? receipt_event(c, &rc, BBVFL_EV_ROUND_COMPLETED, r, &rcev, err) : 0;
        if (f < 0) fail = 1;
        else if (f == 0) w = wait_event(c, BBVFL_EV_ROUND_COMPLETED, r, &rcev, err);
        if (w < 0) fail = 1;
        if (!fail && w == 0) {
          if (c->split && c->have_head && holder_eval(c, pos - c->T, &rcev, err) < 0) fail = 1;
          bbvfl_cev_clear(&rcev);
        }
      }
      /* elected while waiting: this client carries the round on as the active client */
      if (!fail && w == 2 && take_over(c, r, err) < 0) fail = 1;
    }
    if (!fail && c->is_active) {
      fail = get_sum(c, r, have_rc ? &rc : NULL, err) < 0;
      double agg = bbvfl_now() - t_agg0;
      if (!fail && train) {
        c->agg_sum += agg;
        for (size_t i = 0; i < c->B; i++) c->yb[i] = c->ylab[rows[i]]; /* the labels trained on */
        if (c->cfg->dump_q_dir && !c->split && dump_y(c, r, rows, err) < 0) fail = 1;
        /* already posted before a restart? then take the gradient and head from the chain */
        bbvfl_cev gp;
        int f = fail ? -1 : resumed ? query_event(c, BBVFL_EV_GRADIENT_POSTED, r, &gp, err) : 0;
        if (f < 0) {
          fail = 1;
        } else if (f == 1) {
          if (gp.data_len != 4 * c->n || bbvfl_vhead_load_params_be(&c->head, gp.data2, gp.data2_len, err) < 0) {
            if (!err->code) bbvfl_fail(err, BBVFL_E_PARSE, "posted gradient has the wrong length");
            fail = 1;
          } else {
            bbvfl_f32_from_be(gp.data, c->n, c->grad);
          }
          bbvfl_cev_clear(&gp);
        } else {
          double t1 = bbvfl_now(), loss = 0;
          if (c->split && !c->own_all) {
            fail = active_split_step(c, r, rows, &loss, err) < 0; /* labels split across clients */
          } else {
            fail = bbvfl_vhead_train(&c->head, c->sum, NULL, c->yb, c->B, &loss, c->grad, NULL, err) < 0;
            c->res->learn_s += bbvfl_now() - t1;
          }
          if (!fail) {
            c->loss_sum += loss;
            c->trained++;
            bbvfl_f32_to_be(c->grad, c->n, c->grad_be);
            bbvfl_vhead_params_be(&c->head, c->head_be);
            uint8_t *cd;
            size_t len;
            fail = bbvfl_cenc_post_gradient(r, c->grad_be, 4 * c->n, c->head_be, c->head_len, &cd, &len, err) < 0;
            if (!fail) {
              uint64_t blk_post = c->blk;
              fail = tx(c, cd, len, gas_grad, 0, NULL, "postGradient()", err) < 0;
              free(cd);
              if (fail && !c->split && demoted(c, r, err)) {
                c->blk = blk_post; /* the new active client's post may precede this reverted one */
                /* re-elected away while slow: take the new active client's gradient like the others */
                int w = wait_event(c, BBVFL_EV_GRADIENT_POSTED, r, &gp, err);
                fail = w != 0;
                if (w == 2) bbvfl_fail(err, BBVFL_E_STATE, "elected again while waiting for the new active client");
                if (!fail && gp.data_len != 4 * c->n) {
                  fail = 1;
                  bbvfl_fail(err, BBVFL_E_PARSE, "posted gradient has the wrong length");
                }
                if (!fail) bbvfl_f32_from_be(gp.data, c->n, c->grad);
                if (w == 0) bbvfl_cev_clear(&gp);
              }
            }
          }
        }
      } else if (!fail) {
        size_t k = pos - c->T;
        double t1 = bbvfl_now();
        fail = bbvfl_vhead_eval(&c->head, c->sum, NULL, c->B, c->probs + k * c->B * (size_t)c->K, err) < 0;
        c->res->learn_s += bbvfl_now() - t1;
      }
    }
    bbvfl_receipt_clear(&rc);
    if (fail) return bbvfl_wrap(err, "round %llu", (unsigned long long)r);
    /* The active client checkpoints after its post (its critical path is the wait for the sum).
       Its head is then already updated; a restart redoes round r, finds GradientPosted(r) and
       takes the gradient and head parameters from the chain, so the state stays consistent. */
    if (c->is_active && checkpoint_round(c, r, &noise_before, err) < 0) return -1;
    bbvfl_rng_wipe(&noise_before);
    if (train) {
      double t1 = bbvfl_now();
      if (bbvfl_party_backward(&c->party, c->grad, err) < 0) return -1;
      c->res->learn_s += bbvfl_now() - t1;
    }
    resumed = 0;
    if (c->is_active && pos == per - 1 && post_epoch(c, (uint32_t)e, err) < 0) return -1;
    if (!c->is_active && c->split && c->have_head && pos == per - 1) {
      if (fill_metrics(c, (uint32_t)e, err) < 0) return -1;
      const bbvfl_epoch_metrics *em = &c->res->per_epoch[e];
      logf_(c, "epoch %llu (this label holder's %zu labelled test rows): train loss %.4f, test loss %.4f, AUROC %.4f",
            (unsigned long long)e + 1, c->res->labelled_test_rows, em->train_loss, em->test_loss, em->auroc);
    }
    if (r + 1 == total && save_progress(c, r + 1, err) < 0) return bbvfl_wrap(err, "final checkpoint");
    c->res->rounds++;
    done++;
    if (c->cfg->exit_after_round && done >= (uint64_t)c->cfg->exit_after_round)
      return bbvfl_fail(err, BBVFL_E_STATE, "stopped after %llu rounds as asked (testing)", (unsigned long long)done);
  }
  return 0;
}

/* ------------------------------------------------------------------ setup */

static void cl_free(cl *c) {
  if (c->have_party) bbvfl_party_free(&c->party);
  if (c->have_head) bbvfl_vhead_free(&c->head);
  if (c->have_sched) bbvfl_schedule_free(&c->sched);
  if (c->have_data) bbvfl_vfl_data_free(&c->data);
  bbvfl_sender_free(c->snd);
  bbvfl_rpc_free(c->rpc);
  free(c->q);
  if (c->masked) bbvfl_mclient_free(&c->mc);
  free(c->sum);
  free(c->grad);
  free(c->probs);
  free(c->grad_be);
  free(c->head_be);
  free(c->yb);
  free(c->yeval);
  free(c->rows);
  free(c->ylab);
  free(c->dlog);
  free(c->dlog_in);
  free(c->dlog_be);
  free(c->addrs);
}

void bbvfl_onchain_result_free(bbvfl_onchain_result *r) {
  if (!r) return;
  free(r->per_epoch);
  free(r->agg_s);
  memset(r, 0, sizeof *r);
}

static int check_params(const cl *c, bbvfl_err *err) {
  const bbvfl_cconfig *a = &c->cp.cfg, *b = &c->sess->cparams;
  if (a->clients != b->clients || a->batch != b->batch || a->dim != b->dim || a->levels != b->levels ||
      a->beta_micro != b->beta_micro || a->train_rounds != b->train_rounds || a->eval_rounds != b->eval_rounds ||
      a->epochs != b->epochs || !a->masked != !b->masked)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "the contract's parameters (M %u, B %u, P %u, b %u, T %u, V %u, epochs %u%s) do not match the "
                      "session file's (M %u, B %u, P %u, b %u, T %u, V %u, epochs %u%s)",
                      a->clients, a->batch, a->dim, a->levels, a->train_rounds, a->eval_rounds, a->epochs,
                      a->masked ? ", masked" : "", b->clients, b->batch, b->dim, b->levels, b->train_rounds,
                      b->eval_rounds, b->epochs, b->masked ? ", masked" : "");
  return 0;
}

int bbvfl_onchain_run(const bbvfl_onchain_cfg *cfg, bbvfl_onchain_result *res, bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  cl c;
  memset(&c, 0, sizeof c);
  c.cfg = cfg;
  c.sess = cfg->sess;
  c.res = res;
  c.slot = 1;
  c.takeover_epoch = -1;
  double t_start = bbvfl_now();
  int rc = -1;
  bbvfl_onchain_cfg local = *cfg;
  if (local.round_timeout_s <= 0) local.round_timeout_s = 120;
  c.cfg = &local;
  const bbvfl_session *s = c.sess;
  if (snprintf(c.dir, sizeof c.dir, "%s", cfg->state_dir) >= (int)sizeof c.dir)
    return bbvfl_fail(err, BBVFL_E_ARG, "--state-dir is too long");
  memcpy(c.me, cfg->key->addr, 20);

  /* the data first: a bad file, column list or label column is reported before anything touches
     the chain (and before --state-dir is created: a refused start leaves nothing behind) */
  if (cfg->ds->n != s->n_rows) {
    return bbvfl_fail(err, BBVFL_E_ARG, "the data file has %zu rows but the session was set up for %llu", cfg->ds->n,
                      (unsigned long long)s->n_rows);
  }
  if (s->n_classes > 0) {
    int same = cfg->ds->nclasses == s->n_classes;
    for (int k = 0; same && k < s->n_classes; k++) same = strcmp(cfg->ds->class_names[k], s->classes[k]) == 0;
    if (!same) {
      char have[256] = "", want[256] = "";
      for (int k = 0; k < cfg->ds->nclasses; k++)
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s'%.20s'", k ? ", " : "", cfg->ds->class_names[k]);
      for (int k = 0; k < s->n_classes; k++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s'%.20s'", k ? ", " : "", s->classes[k]);
      return bbvfl_fail(err, BBVFL_E_ARG,
                        "the data file's label column holds the classes %s, but the session's table has %s: "
                        "nothing was sent",
                        have, want);
    }
  }
  if (bbvfl_vfl_data_prepare_dp(cfg->ds, s->train.seed, s->train.test_frac, 1, cfg->columns, &s->train.rowdp,
                                cfg->seeded_noise, &c.data, err) < 0)
    return bbvfl_wrap(err, "--columns");
  c.have_data = 1;
  c.B = s->cparams.batch;
  c.n = c.B * s->cparams.dim;
  c.T = c.data.n_train / c.B;
  c.V = c.data.n_test / c.B;
  if (c.T != s->cparams.train_rounds || c.V != s->cparams.eval_rounds) {
    bbvfl_fail(err, BBVFL_E_ARG,
               "with this data file the split gives %zu training / %zu evaluation batches per epoch, but the session "
               "has %u / %u: is it the session's table?",
               c.T, c.V, s->cparams.train_rounds, s->cparams.eval_rounds);
    goto out;
  }
  c.K = cfg->ds->nclasses == 2 ? 1 : cfg->ds->nclasses;
  c.neval = c.V * c.B;

  const char *url = cfg->rpc_url ? cfg->rpc_url : s->rpc_url;
  bbvfl_rpc_opts ro = {.timeout_s = local.round_timeout_s + 5,
                       .retries = 3,
                       .down_timeout_s = cfg->node_down_timeout_s,
                       .on_wait = rpc_wait_log,
                       .on_wait_ctx = &c};
  c.rpc = bbvfl_rpc_new(url, &ro, err);
  if (!c.rpc) goto out;
  uint64_t chain_id;
  if (bbvfl_rpc_chain_id(c.rpc, &chain_id, err) < 0) {
    bbvfl_wrap(err, "connecting to %s", url);
    goto out;
  }
  if (chain_id != s->chain_id) {
    bbvfl_fail(err, BBVFL_E_STATE, "the node at %s has chain id %llu, the session was deployed on %llu", url,
               (unsigned long long)chain_id, (unsigned long long)s->chain_id);
    goto out;
  }
  bbvfl_aggc_init(&c.agg, c.rpc, s->contract);
  if (bbvfl_aggc_params(&c.agg, &c.cp, err) < 0) {
    bbvfl_wrap(err, "reading the aggregator's parameters (is %s the session's contract?)", "the contract address");
    goto out;
  }
  if (check_params(&c, err) < 0) goto out;
  c.blk = s->deploy_block;
  c.snd = bbvfl_sender_new(c.rpc, cfg->key, chain_id, err);
  if (!c.snd) goto out;
  bbvfl_sender_set_sync(c.snd, 1);
  bbvfl_sender_set_fee_ttl(c.snd, 600);

  c.q = malloc(c.n);
  c.sum = malloc(c.n * sizeof *c.sum);
  c.grad = malloc(c.n * sizeof *c.grad);
  c.grad_be = malloc(4 * c.n);
  c.probs = calloc(c.neval * (size_t)c.K + 1, sizeof *c.probs);
  c.yb = malloc(c.B * sizeof *c.yb);
  c.yeval = malloc((c.neval + 1) * sizeof *c.yeval);
  c.rows = malloc(c.B * sizeof *c.rows);
  res->epochs = (int)s->cparams.epochs;
  res->per_epoch = calloc((size_t)res->epochs, sizeof *res->per_epoch);
  res->agg_s = calloc((size_t)res->epochs, sizeof *res->agg_s);
  if (!c.q || !c.sum || !c.grad || !c.grad_be || !c.probs || !c.yb || !c.yeval || !c.rows || !res->per_epoch ||
      !res->agg_s) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  if (init_label_rows(&c, err) < 0 || label_dp(&c, err) < 0) goto out;
  for (size_t i = 0; i < c.neval; i++) c.yeval[i] = c.ylab[c.data.test[i]]; /* -1: not labelled here */
  c.dlog = calloc(c.B * (size_t)c.K, sizeof *c.dlog);
  c.dlog_in = calloc(c.B * (size_t)c.K, sizeof *c.dlog_in);
  c.dlog_be = malloc(4 * c.B * (size_t)c.K);
  if (!c.dlog || !c.dlog_in || !c.dlog_be) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }

  if (bbvfl_mkdirs(c.dir, 0700, err) < 0) {
    bbvfl_wrap(err, "--state-dir");
    goto out;
  }
  if (election(&c, err) < 0) goto out;
  res->participants = c.cp.cfg.clients;
  res->n_train = c.data.n_train;
  if (c.cp.cfg.masked) {
    if (bbvfl_mclient_init(&c.mc, &c.agg, cfg->key, chain_id, s->deploy_block, (unsigned)res->index, c.n,
                           c.cp.cfg.levels, err) < 0)
      goto out;
    c.masked = 1;
    res->masked = 1;
    logf_(&c, "masked mode: pair keys derived for %u registered clients; %u participants", c.mc.mk.nclients,
          c.mc.nparts);
  }
  if (cfg->dump_q_dir)
    logf_(&c, "WARNING: BBVFL_TEST_DUMP_Q is set: this client writes its unmasked q of every round to %s (a test "
              "hook: plaintext embeddings, never use it in production)",
          cfg->dump_q_dir);
  char me[43], act[43];
  bbvfl_addr_checksum(c.me, me);
  bbvfl_addr_checksum(c.active, act);
  logf_(&c, "client %s index %d; active client %s%s", me, res->index, act, c.is_active ? " (this client)" : "");
  /* labels split across clients: the declared holders (fixed at registration) */
  if (bbvfl_aggc_label_holders(&c.agg, &c.holders, err) < 0 || bbvfl_aggc_clients(&c.agg, &c.addrs, &c.naddrs, err) < 0)
    goto out;
  c.split = c.holders != 0;
  c.holder = (int)(c.holders >> res->index & 1);
  c.own_all = cfg->has_labels && !cfg->label_rows;
  res->label_split = c.split;
  res->label_holder = c.holder;
  if (!c.holder != !cfg->label_rows) {
    bbvfl_fail(err, BBVFL_E_STATE,
               "this client registered %s a label holder but now runs %s --label-rows: restart it with the flags it "
               "registered with",
               c.holder ? "as" : "not as", cfg->label_rows ? "with" : "without");
    goto out;
  }
  for (size_t i = 0; i < c.neval; i++) res->labelled_test_rows += c.yeval[i] >= 0;
  if (c.split)
    logf_(&c, "labels split across clients: label holders (bitmap) 0x%llx; this client %s; %zu of %zu test rows "
              "labelled here",
          (unsigned long long)c.holders, c.holder ? "holds some labels" : (c.own_all ? "holds every label" : "holds none"),
          res->labelled_test_rows, c.neval);
  if (c.is_active && !cfg->has_labels && !c.split) {
    bbvfl_fail(err, BBVFL_E_STATE,
               "this client was elected active client but holds no labels (--labels): in this session every client "
               "that may be elected must hold the label column");
    goto out;
  }

  /* the learning state, exactly as the off-chain trainer builds it */
  float *cols = NULL;
  size_t ncols = 0;
  if (bbvfl_vfl_data_client_cols(&c.data, 0, &cols, &ncols, err) < 0) goto out;
  bbvfl_party_cfg pc = {.index = cfg->party >= 0 ? cfg->party : res->index,
                        .P = (int)s->cparams.dim,
                        .nhidden = s->train.nhidden,
                        .mech = s->train.mech,
                        .opt = s->train.opt,
                        .seed = cfg->seed,
                        .seeded_noise = cfg->seeded_noise,
                        .rowdp = s->train.rowdp};
  memcpy(pc.hidden, s->train.hidden, sizeof pc.hidden);
  int prc = bbvfl_party_init(&c.party, &pc, cols, cfg->ds->n, ncols, err);
  free(cols);
  if (prc < 0) goto out;
  c.have_party = 1;
  if ((c.is_active || (c.split && c.holder)) && init_head(&c, err) < 0) goto out;
  if (bbvfl_schedule_init(&c.sched, res->S, c.data.n_train, c.B, err) < 0) goto out;
  c.have_sched = 1;

  uint64_t start = 0;
  int resumed = load_progress(&c, &start, err);
  if (resumed < 0) goto out;
  if (resumed) logf_(&c, "resuming at round %llu from the checkpoint", (unsigned long long)start);
  if (run_rounds(&c, start, resumed, err) < 0) goto out;
  res->was_active = c.is_active;
  if (c.masked) res->participants = c.mc.min_parts;
  logf_(&c, "session complete");
  rc = 0;
out:
  res->wall_s = bbvfl_now() - t_start;
  if (!c.is_active && !(c.split && c.holder)) {
    free(res->per_epoch);
    free(res->agg_s);
    res->per_epoch = NULL;
    res->agg_s = NULL;
  }
  cl_free(&c);
  return rc;
}

int bbvfl_onchain_result_save(const bbvfl_onchain_result *r, const char *path, bbvfl_err *err) {
  char S[70];
  bbvfl_hex_encode(r->S, 32, S);
  json_t *o = json_pack("{s:i, s:b, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f}", "index", r->index, "active",
                        r->was_active, "session_seed", S, "rounds", (json_int_t)r->rounds, "submissions",
                        (json_int_t)r->submissions, "gas_submit", (json_int_t)r->gas_submit, "gas_other",
                        (json_int_t)r->gas_other, "wall_s", r->wall_s, "send_s", r->send_s, "wait_s", r->wait_s,
                        "learn_s", r->learn_s, "checkpoint_s", r->ckpt_s);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  json_object_set_new(o, "masked", json_boolean(r->masked));
  json_object_set_new(o, "participants", json_integer((json_int_t)r->participants));
  json_object_set_new(o, "label_split", json_boolean(r->label_split));
  if (r->label_split) {
    json_object_set_new(o, "label_holder", json_boolean(r->label_holder));
    json_object_set_new(o, "label_posts", json_integer((json_int_t)r->label_posts));
    json_object_set_new(o, "labelled_test_rows", json_integer((json_int_t)r->labelled_test_rows));
  }
  if (r->per_epoch) {
    json_t *arr = json_array();
    for (int e = 0; arr && e < r->epochs; e++) {
      const bbvfl_epoch_metrics *m = &r->per_epoch[e];
      json_t *ep = json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f}", "epoch", m->epoch, "train_loss", m->train_loss,
                             "test_loss", m->test_loss, "auroc", m->auroc, "accuracy", m->accuracy, "f1", m->f1,
                             "onchain_agg_s", r->agg_s[e]);
      /* nothing measured: an epoch that ended before this process started (a restart), or, with
         labels split across clients, no labelled test rows here */
      int unmeasured = m->epoch == 0, nolab = r->label_split && r->labelled_test_rows == 0;
      if (ep && (unmeasured || nolab)) {
        static const char *const none[] = {"train_loss", "test_loss", "auroc", "accuracy", "f1"};
        json_object_set_new(ep, "epoch", json_integer(e + 1));
        for (size_t k = unmeasured ? 0 : 1; k < sizeof none / sizeof none[0]; k++)
          json_object_set_new(ep, none[k], json_null());
      }
      json_array_append_new(arr, ep);
    }
    json_object_set_new(o, "epochs", arr);
  }
  char *text = json_dumps(o, JSON_INDENT(2));
  json_decref(o);
  if (!text) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  int rc = bbvfl_write_file_atomic(path, text, strlen(text), 0644, err);
  free(text);
  return rc;
}
