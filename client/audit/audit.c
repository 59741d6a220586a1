#include "audit/audit.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "audit/leak.h"
#include "dp/accountant.h"
#include "eth/abi.h"
#include "eth/deploy.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/rpc.h"
#include "eth/tx.h"
#include "vfl/schedule.h"

#define CHUNK 64           /* logs per prefetch batch */
#define MAX_WINDOW 100000  /* blocks per eth_getLogs call, upper bound of the adaptive window */
#define MAX_CLIENTS 64
#define RING 4 /* round slots the contract keeps (BbvflAggregator.RING) */
#define WINDOW_BYTES (1u << 20) /* hex characters of log data per eth_getLogs answer, target */

static const char *const CHECK_NAMES[BBVFL_AC_COUNT] = {
    "params", "registration", "election", "submissions", "sums",
    "contributors", "schedule", "gradients", "metrics", "rewards", "privacy"};

const char *bbvfl_audit_check_name(bbvfl_audit_check_id id) {
  return (id >= 0 && id < BBVFL_AC_COUNT) ? CHECK_NAMES[id] : "?";
}

const char *bbvfl_audit_status_name(bbvfl_audit_status s) {
  return s == BBVFL_AS_PASS ? "PASS" : s == BBVFL_AS_FAIL ? "FAIL" : "SKIP";
}

/* ------------------------------------------------------------------ state */

typedef struct {
  uint8_t addr[20];
  int committed, revealed, excluded, participant;
  uint8_t reason;
  uint8_t commitment[32], secret[32];
  uint64_t accepted, rewarded;
  bbvfl_u256 paid, transferred;
  uint64_t gas;
  int label_holder;        /* LabelHolder event: registered with registerLabelHolder */
} client_st;

/* What the prefetch batch brought for one log. */
typedef struct {
  int have_tx;            /* signer and calldata recovered */
  uint8_t from[20];
  int has_to; uint8_t to[20];
  uint8_t *input; size_t input_len;   /* owned */
  char tx_err[160];
  int have_gas; uint64_t gas;
  int have_ts; uint64_t ts;
} fetched;

/* One round the auditor is following: the head round (the oldest not done) and, in hashed mode,
 * the later rounds already submitted to (pipelining). */
typedef struct {
  int used;
  uint64_t round;
  bbvfl_round_layout L;
  uint64_t sub_mask;       /* client indexes that submitted validly */
  uint32_t nsub_valid, nsub_all;
  int sum_unknown;         /* some submission's bytes could not be recovered */
  uint32_t *sum;           /* L.coords lanes, exact (capacity: the largest round) */
  uint64_t gas;            /* submissions (+ aggregate, gradient, label posts for the head) */
  /* hashed mode: the sum is formed at aggregate() from the participants' payloads of that
     moment (an excluded client's earlier submission to a later round does not count) */
  uint64_t ev_mask;        /* registered clients with a Submitted event for the round */
  uint8_t *pay[MAX_CLIENTS]; /* each one's submitted bytes (owned; NULL: not recovered) */
} rslot;

#define MAX_SLOTS 64 /* rounds in flight at once (the hashed contract keeps a ring of HASH_RING) */
#define HASH_RING 8 /* round slots of BbvflHashAggregator: a submission goes to r < head + HASH_RING */

typedef struct {
  const bbvfl_audit_opts *o;
  bbvfl_audit_result *r;
  bbvfl_rpc *rpc;
  bbvfl_cparams p;         /* params(); T, V, totalRounds, maxCoords recomputed by the auditor */
  uint64_t per;            /* T + V */
  size_t max_coords;       /* values in the largest round */
  int hashed;
  int raw_ok;              /* node answers eth_getRawTransactionByHash */

  client_st cl[MAX_CLIENTS];
  size_t ncl;
  int closed; uint64_t close_block;
  int committed_n, revealed_n;
  int elected;
  uint8_t seed[32], eseed[32];
  int active; uint64_t active_since;

  /* the head round (h.round of the contract: the oldest round not done) */
  uint64_t round;
  uint64_t opened_at; int opened_ts_ok; uint64_t opened_ts;
  size_t min_reopen;       /* masked: smallest re-opened participant set (0: none) */
  int complete; uint64_t completed_at;
  int head_full; uint64_t head_full_at; /* hashed: every participant submitted to the head (since) */
  uint64_t head_base;      /* hashed: where the contract counts the active deadline from (its
                              roundState().completedAt): the block the head opened, re-opened or
                              was completed by an expiry, or, for a TRAIN head, was aggregated */
  int ended;
  /* the rounds in flight (head first in practice; a small set keyed by round) */
  rslot *slots; size_t nslots;
  /* labels split across clients: the holders that posted a label gradient for round lp_round */
  uint64_t lp_round, lp_mask;

  int epoch_done_any; uint64_t epoch_done_block;
  uint32_t unsettled;

  /* rewards: one payRewards call = the RewardsPaid events of one transaction */
  int rp_open; uint8_t rp_tx[32]; uint32_t rp_epoch; uint64_t rp_block;
  int pend; uint8_t pend_to[20]; bbvfl_u256 pend_amt; uint8_t pend_tx[32]; uint64_t pend_block;

  int first_log_seen;
  size_t *perm;            /* schedule scratch (trainRows) */
  int64_t perm_epoch;      /* the epoch perm holds (-1: none) */
  int *leak;               /* on_labels scratch (the largest window's rows) */
  /* the recomputed sums of the last RING complete rounds (lane mode): the contract still stores
     those, and roundSum() must return them */
  uint32_t *ring[RING];
  uint64_t ring_round[RING];
  size_t ring_coords[RING];
  int ring_have[RING];
} st_t;

__attribute__((format(printf, 8, 0))) static void failv(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev, int has_round, uint64_t round,
                  long long epoch, const uint8_t *client, const char *fmt, va_list ap) {
  bbvfl_audit_check *c = &S->r->checks[id];
  c->status = BBVFL_AS_FAIL;
  c->failures++;
  if (c->first.present) return;
  bbvfl_audit_failure *f = &c->first;
  f->present = 1;
  f->has_round = has_round;
  f->round = round;
  if (epoch >= 0) {
    f->has_epoch = 1;
    f->epoch = (uint32_t)epoch;
  }
  if (ev) {
    f->has_tx = 1;
    memcpy(f->tx, ev->tx_hash, 32);
    f->block = ev->block_number;
  }
  if (client) {
    f->has_client = 1;
    memcpy(f->client, client, 20);
  }
  vsnprintf(f->detail, sizeof f->detail, fmt, ap);
}

__attribute__((format(printf, 8, 9))) static void fail(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev,
                                                       int has_round, uint64_t round, long long epoch,
                                                       const uint8_t *client, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(S, id, ev, has_round, round, epoch, client, fmt, ap);
  va_end(ap);
}

/* A failure found in event ev about ev's client, outside any round. */
__attribute__((format(printf, 4, 5))) static void client_fail(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev,
                                                              const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(S, id, ev, 0, 0, -1, ev->client, fmt, ap);
  va_end(ap);
}

/* A failure found in event ev about ev's client in ev's round. */
__attribute__((format(printf, 4, 5))) static void round_client_fail(st_t *S, bbvfl_audit_check_id id,
                                                                    const bbvfl_cev *ev, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(S, id, ev, 1, ev->round, -1, ev->client, fmt, ap);
  va_end(ap);
}

static void ok(st_t *S, bbvfl_audit_check_id id) { S->r->checks[id].checked++; }

static int find_client(const st_t *S, const uint8_t a[20]) {
  for (size_t i = 0; i < S->ncl; i++)
    if (!memcmp(S->cl[i].addr, a, 20)) return (int)i;
  return -1;
}

static size_t n_participants(const st_t *S) {
  size_t n = 0;
  for (size_t i = 0; i < S->ncl; i++) n += S->cl[i].participant;
  return n;
}

static int is_train(const st_t *S, uint64_t r) { return r % S->per < S->p.cfg.train_rounds; }

/* The layout of round r (r below totalRounds: callers check). */
static bbvfl_round_layout layout(const st_t *S, uint64_t r) {
  bbvfl_round_layout L;
  bbvfl_err e = {0};
  if (bbvfl_cconfig_round(&S->p.cfg, r, &L, &e) < 0) memset(&L, 0, sizeof L);
  return L;
}

/* Forgets a slot's submissions (payload copies freed). */
static void slot_clear(rslot *sl) {
  for (size_t i = 0; i < MAX_CLIENTS; i++) {
    free(sl->pay[i]);
    sl->pay[i] = NULL;
  }
  sl->sub_mask = sl->ev_mask = 0;
  sl->nsub_valid = sl->nsub_all = 0;
  sl->sum_unknown = 0;
}

static uint64_t participant_mask(const st_t *S) {
  uint64_t m = 0;
  for (size_t i = 0; i < S->ncl; i++)
    if (S->cl[i].participant) m |= (uint64_t)1 << i;
  return m;
}

/* The slot of round r, or NULL; with create, a fresh one (sum zeroed) when r has none. */
static rslot *slot_of(st_t *S, uint64_t r, int create) {
  rslot *fr = NULL;
  for (size_t i = 0; i < S->nslots; i++) {
    if (S->slots[i].used && S->slots[i].round == r) return &S->slots[i];
    if (!S->slots[i].used && !fr) fr = &S->slots[i];
  }
  if (!create) return NULL;
  if (!fr) {
    if (S->nslots >= MAX_SLOTS) return NULL;
    rslot *n = realloc(S->slots, (S->nslots + 1) * sizeof *n);
    if (!n) return NULL;
    S->slots = n;
    fr = &S->slots[S->nslots];
    memset(fr, 0, sizeof *fr);
    if (!(fr->sum = calloc(S->max_coords ? S->max_coords : 1, sizeof *fr->sum))) return NULL;
    S->nslots++;
  }
  slot_clear(fr);
  uint32_t *sum = fr->sum;
  memset(fr, 0, sizeof *fr);
  fr->sum = sum;
  fr->used = 1;
  fr->round = r;
  fr->L = layout(S, r);
  memset(fr->sum, 0, (size_t)fr->L.coords * sizeof *fr->sum);
  return fr;
}

/* The head round's slot (created on first use). NULL only when out of memory. */
static rslot *head(st_t *S) { return slot_of(S, S->round, 1); }

/* TRAIN rounds in [from, to). */
static uint64_t train_between(const st_t *S, uint64_t from, uint64_t to) {
  uint64_t n = 0;
  for (uint64_t q = from; q < to; q++) n += is_train(S, q);
  return n;
}

/* Hashed mode: may a submission to round r be accepted now? r at or after the head round (the
 * head not complete when r is the head), before the end, and at most s TRAIN rounds in
 * [head, r) (EVAL rounds never gate). Lane mode: only the open (head) round. */
static int round_acceptable(const st_t *S, uint64_t r) {
  if (r < S->round || r >= S->p.total_rounds) return 0;
  if (r == S->round) return !S->complete;
  if (!S->hashed || r - S->round >= HASH_RING) return 0;
  return train_between(S, S->round, r) <= S->p.cfg.staleness;
}

static int epoch_complete(const st_t *S, uint64_t e) {
  if (!S->elected) return 0;
  uint64_t last = (e + 1) * S->per - 1;
  if (last < S->round) return 1;
  return last == S->round && S->complete;
}


/* ------------------------------------------------------------------ figures */

void bbvfl_audit_push_round(bbvfl_audit_result *r, uint64_t round, uint64_t gas, uint64_t blocks, double secs,
                            uint32_t subs) {
  if (!r->rounds) return;
  if (r->bucket_width == 0) r->bucket_width = 1;
  r->gas_total += gas;
  r->seconds_total += secs;
  if (r->nrounds > 0) {
    bbvfl_audit_round_fig *l = &r->rounds[r->nrounds - 1];
    if (l->round_hi - l->round_lo + 1 < r->bucket_width) {
      l->round_hi = round;
      l->gas += gas;
      l->blocks += blocks;
      l->seconds += secs;
      l->submissions += subs;
      return;
    }
  }
  if (r->nrounds == BBVFL_AUDIT_MAX_BUCKETS) { /* halve the resolution: merge neighbours */
    size_t k = 0;
    for (size_t i = 0; i + 1 < r->nrounds; i += 2) {
      bbvfl_audit_round_fig a = r->rounds[i], b = r->rounds[i + 1];
      a.round_hi = b.round_hi;
      a.gas += b.gas;
      a.blocks += b.blocks;
      a.seconds += b.seconds;
      a.submissions += b.submissions;
      r->rounds[k++] = a;
    }
    r->nrounds = k;
    r->bucket_width *= 2;
  }
  bbvfl_audit_round_fig *f = &r->rounds[r->nrounds++];
  f->round_lo = f->round_hi = round;
  f->gas = gas;
  f->blocks = blocks;
  f->seconds = secs;
  f->submissions = subs;
}

static bbvfl_audit_epoch_fig *epoch_fig(st_t *S, uint32_t e, int create) {
  bbvfl_audit_result *r = S->r;
  if (e < r->nepochs) return &r->epochs[e];
  if (!create) return NULL;
  bbvfl_audit_epoch_fig *n = realloc(r->epochs, (size_t)(e + 1) * sizeof *n);
  if (!n) return NULL;
  for (size_t i = r->nepochs; i <= e; i++) {
    memset(&n[i], 0, sizeof n[i]);
    n[i].epoch = (uint32_t)i;
  }
  r->epochs = n;
  r->nepochs = (size_t)e + 1;
  return &n[e];
}

/* The head round is done (an EVAL round's sum, a TRAIN round's gradient): closes its figures and
 * opens the next one (or ends the session). Hashed mode credits the round's submitters here: a
 * participant's accepted count is the rounds done while it took part (lane mode credits at the
 * submission: the contract counts the open round's submitters). */
static void open_next(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  uint64_t blocks = ev->block_number >= S->opened_at ? ev->block_number - S->opened_at : 0;
  double secs = 0;
  if (fx->have_ts && S->opened_ts_ok && fx->ts >= S->opened_ts) secs = (double)(fx->ts - S->opened_ts);
  rslot *h = slot_of(S, S->round, 0);
  bbvfl_audit_push_round(S->r, S->round, h ? h->gas : 0, blocks, secs, h ? h->nsub_all : 0);
  if (S->hashed) /* every participant contributed to a done round (the contract counts rounds done) */
    for (size_t i = 0; i < S->ncl; i++) S->cl[i].accepted += S->cl[i].participant;
  if (h) {
    slot_clear(h);
    h->used = 0;
  }
  if (S->round + 1 == S->p.total_rounds) {
    S->ended = 1;
    return;
  }
  S->round++;
  S->opened_at = ev->block_number;
  S->head_base = ev->block_number;
  S->opened_ts_ok = fx->have_ts;
  S->opened_ts = fx->ts;
  S->complete = 0;
  S->head_full = 0;
  rslot *n = slot_of(S, S->round, 0);
  uint64_t part = participant_mask(S);
  if (n && (n->ev_mask & part) == part) { /* already submitted by everyone (pipelined) */
    S->head_full = 1;
    S->head_full_at = ev->block_number;
  }
}

/* ------------------------------------------------------------------ events */

static void on_registered(st_t *S, const bbvfl_cev *ev) {
  uint8_t a[20];
  /* a bad key is reported; the client still counts as registered (the contract says so), so the
     rest of the history is judged on its own terms */
  if (ev->data_len != 64) {
    client_fail(S, BBVFL_AC_REGISTRATION, ev, "public key is %zu bytes, not 64", ev->data_len);
  } else {
    bbvfl_pub_to_addr(ev->data, a);
    if (memcmp(a, ev->client, 20))
      client_fail(S, BBVFL_AC_REGISTRATION, ev, "public key does not hash to the client's address");
  }
  if (find_client(S, ev->client) >= 0) {
    client_fail(S, BBVFL_AC_REGISTRATION, ev, "registered twice");
    return;
  }
  if (S->ncl >= S->p.cfg.clients || S->ncl >= MAX_CLIENTS) {
    client_fail(S, BBVFL_AC_REGISTRATION, ev, "registration after it closed at M = %u clients",
         S->p.cfg.clients);
    return;
  }
  if (ev->index != S->ncl)
    client_fail(S, BBVFL_AC_REGISTRATION, ev, "index %u, expected %zu (registration order)",
         ev->index, S->ncl);
  client_st *c = &S->cl[S->ncl++];
  memset(c, 0, sizeof *c);
  memcpy(c->addr, ev->client, 20);
  if (S->ncl == S->p.cfg.clients) {
    S->closed = 1;
    S->close_block = ev->block_number;
  }
  ok(S, BBVFL_AC_REGISTRATION);
}

static void on_committed(st_t *S, const bbvfl_cev *ev) {
  int i = find_client(S, ev->client);
  if (i < 0) {
    client_fail(S, BBVFL_AC_ELECTION, ev, "commitment from an unregistered address");
    return;
  }
  client_st *c = &S->cl[i];
  if (!S->closed) client_fail(S, BBVFL_AC_ELECTION, ev, "commit while registration was open");
  else if (ev->block_number > S->close_block + S->p.cfg.commit_blocks)
    client_fail(S, BBVFL_AC_ELECTION, ev, "commit in block %llu after the deadline %llu",
         (unsigned long long)ev->block_number, (unsigned long long)(S->close_block + S->p.cfg.commit_blocks));
  if (c->committed) client_fail(S, BBVFL_AC_ELECTION, ev, "committed twice");
  c->committed = 1;
  memcpy(c->commitment, ev->word, 32);
  S->committed_n++;
  ok(S, BBVFL_AC_ELECTION);
}

static void on_revealed(st_t *S, const bbvfl_cev *ev) {
  int i = find_client(S, ev->client);
  if (i < 0) {
    client_fail(S, BBVFL_AC_ELECTION, ev, "reveal from an unregistered address");
    return;
  }
  client_st *c = &S->cl[i];
  uint64_t cd = S->close_block + S->p.cfg.commit_blocks;
  if (!c->committed) client_fail(S, BBVFL_AC_ELECTION, ev, "reveal without a commitment");
  if (c->revealed) client_fail(S, BBVFL_AC_ELECTION, ev, "revealed twice");
  if (S->elected) client_fail(S, BBVFL_AC_ELECTION, ev, "reveal after the election");
  if (!(S->committed_n == (int)S->p.cfg.clients || ev->block_number > cd))
    client_fail(S, BBVFL_AC_ELECTION, ev, "reveal before every client committed or the commit deadline");
  if (ev->block_number > cd + S->p.cfg.reveal_blocks)
    client_fail(S, BBVFL_AC_ELECTION, ev, "reveal after the reveal deadline");
  uint8_t cm[32];
  bbvfl_election_commitment(ev->word, ev->client, cm);
  if (c->committed && memcmp(cm, c->commitment, 32))
    client_fail(S, BBVFL_AC_ELECTION, ev,
         "keccak256(secret, client) does not match the commitment");
  c->revealed = 1;
  memcpy(c->secret, ev->word, 32);
  S->revealed_n++;
  ok(S, BBVFL_AC_ELECTION);
}

static void on_excluded(st_t *S, const bbvfl_cev *ev) {
  int i = find_client(S, ev->client);
  if (i < 0) {
    client_fail(S, BBVFL_AC_ELECTION, ev, "exclusion of an unregistered address");
    return;
  }
  client_st *c = &S->cl[i];
  if (c->excluded) client_fail(S, BBVFL_AC_ELECTION, ev, "excluded twice");
  if (ev->reason == 1 || ev->reason == 2) {
    int want = c->committed ? 2 : 1;
    if (S->elected) client_fail(S, BBVFL_AC_ELECTION, ev, "election exclusion after the election");
    if (c->revealed) client_fail(S, BBVFL_AC_ELECTION, ev, "excluded although it revealed");
    else if (ev->reason != want)
      client_fail(S, BBVFL_AC_ELECTION, ev, "exclusion reason %u, expected %d", ev->reason, want);
  } else if (ev->reason == 3) {
    const rslot *h = S->elected && !S->ended ? slot_of(S, S->round, 0) : NULL;
    if (!S->elected || S->ended || !c->participant)
      fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client, "round exclusion of a non-participant");
    else if (h && (h->sub_mask >> i & 1))
      fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client, "excluded for a missed round it submitted to");
    else if (!h || h->nsub_all == 0)
      fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client, "round expired with no submission");
    else if (ev->block_number <= S->opened_at + S->p.cfg.round_timeout_blocks)
      fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client,
           "round expired in block %llu, before its timeout (opened %llu + %llu blocks)",
           (unsigned long long)ev->block_number, (unsigned long long)S->opened_at,
           (unsigned long long)S->p.cfg.round_timeout_blocks);
    c->participant = 0;
    if (S->hashed && !S->p.cfg.masked && S->elected && !S->ended) { /* head is complete with the others */
      S->head_full = 1;
      S->head_full_at = ev->block_number;
      S->head_base = ev->block_number;
    }
  } else {
    client_fail(S, BBVFL_AC_ELECTION, ev, "unknown exclusion reason %u", ev->reason);
  }
  c->excluded = 1;
  c->reason = ev->reason;
  ok(S, BBVFL_AC_ELECTION);
}

static void schedule_digest(st_t *S, uint32_t e) {
  bbvfl_audit_epoch_fig *f = epoch_fig(S, e, 1);
  if (!f || !S->perm || !S->elected) return;
  size_t n = S->p.cfg.train_rows;
  bbvfl_schedule_perm(S->seed, e, n, S->perm);
  S->perm_epoch = e;
  bbvfl_keccak_ctx k;
  bbvfl_keccak_init(&k);
  for (size_t i = 0; i < n; i++) {
    uint8_t b[8];
    uint64_t v = S->perm[i];
    for (int j = 0; j < 8; j++) b[j] = (uint8_t)(v >> (56 - 8 * j));
    bbvfl_keccak_update(&k, b, 8);
  }
  bbvfl_keccak_final(&k, f->schedule_digest);
  f->has_digest = 1;
  ok(S, BBVFL_AC_SCHEDULE);
}

static void on_elected(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  int ai = find_client(S, ev->client);
  if (ev->reason == 0) {
    if (S->elected) {
      client_fail(S, BBVFL_AC_ELECTION, ev, "second initial election");
      return;
    }
    uint64_t cd = S->close_block + S->p.cfg.commit_blocks;
    int early_ok = S->revealed_n == S->committed_n && (S->committed_n == (int)S->p.cfg.clients || ev->block_number > cd);
    if (!S->closed || (!early_ok && ev->block_number <= cd + S->p.cfg.reveal_blocks))
      fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "election before every reveal or the reveal deadline");
    uint8_t(*secrets)[32] = malloc((S->ncl ? S->ncl : 1) * 32);
    size_t n = 0;
    if (!secrets) return;
    for (size_t i = 0; i < S->ncl; i++) {
      if (S->cl[i].revealed) {
        memcpy(secrets[n++], S->cl[i].secret, 32);
        S->cl[i].participant = 1;
      } else if (!S->cl[i].excluded) {
        fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, S->cl[i].addr, "did not reveal but was not excluded");
      }
    }
    bbvfl_election_seed((const uint8_t(*)[32])secrets, n, S->seed);
    free(secrets);
    memcpy(S->eseed, S->seed, 32);
    memcpy(S->r->seed, S->seed, 32);
    S->r->has_seed = 1;
    S->elected = 1;
    if (n == 0) {
      fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "election with no reveal should have ended the session");
      return;
    }
    if (memcmp(S->seed, ev->word, 32))
      fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "seed is not keccak256 of the revealed secrets in client order");
    if (ev->participants != n)
      fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "%u participants announced, %zu revealed", ev->participants, n);
    uint64_t k = bbvfl_election_pick(S->seed, n);
    int want = -1;
    for (size_t i = 0; i < S->ncl; i++)
      if (S->cl[i].participant && k-- == 0) {
        want = (int)i;
        break;
      }
    if (ai != want)
      client_fail(S, BBVFL_AC_ELECTION, ev, "active client is not participants[S mod n]");
    if (ev->round != 0) fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "initial election from round %llu",
                             (unsigned long long)ev->round);
    /* a wrong pick is reported once, above; from here on the audit follows the client the chain
       made active, so the later checks judge the rest of the history on its own terms */
    S->active = ai >= 0 ? ai : want;
    S->active_since = ev->block_number;
    S->round = 0;
    S->opened_at = ev->block_number;
    S->head_base = ev->block_number;
    S->opened_ts_ok = fx->have_ts;
    S->opened_ts = fx->ts;
    ok(S, BBVFL_AC_ELECTION);
    return;
  }
  /* re-election (1: active overdue; 2: active excluded by expireRound) */
  if (!S->elected) {
    client_fail(S, BBVFL_AC_ELECTION, ev, "re-election before the election");
    return;
  }
  S->r->reelections++;
  if (ev->reason == 1) {
    int overdue = 0;
    if (!S->ended && S->hashed && S->head_full) {
      /* hashed: while the head has every participant's submission, counted as the contract does
         (BbvflHashAggregator: roundState().completedAt), not from the last submission */
      uint64_t from = S->head_base > S->active_since ? S->head_base : S->active_since;
      overdue = ev->block_number > from + S->p.cfg.active_blocks;
    } else if (!S->ended && !S->hashed && S->complete && is_train(S, S->round)) {
      uint64_t from = S->completed_at > S->active_since ? S->completed_at : S->active_since;
      overdue = ev->block_number > from + S->p.cfg.active_blocks;
    }
    if (!overdue && S->unsettled < S->p.cfg.epochs && epoch_complete(S, S->unsettled) && S->epoch_done_any) {
      uint64_t from = S->epoch_done_block > S->active_since ? S->epoch_done_block : S->active_since;
      overdue = ev->block_number > from + S->p.cfg.active_blocks;
    }
    if (!overdue)
      fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, S->active >= 0 ? S->cl[S->active].addr : NULL,
           "re-election in block %llu without a missed deadline of the active client",
           (unsigned long long)ev->block_number);
  } else if (ev->reason == 2) {
    if (S->active < 0 || S->cl[S->active].participant)
      fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, NULL, "re-election (reason 2) while the active client is in");
  } else {
    fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, NULL, "unknown election reason %u", ev->reason);
  }
  uint8_t buf[40], s[32];
  memcpy(buf, S->eseed, 32);
  for (int j = 0; j < 8; j++) buf[32 + j] = (uint8_t)(S->round >> (56 - 8 * j));
  bbvfl_keccak256(buf, 40, s);
  if (memcmp(s, ev->word, 32))
    fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, NULL, "re-election seed is not keccak256(previous seed, round)");
  if (ev->round != S->round)
    fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, NULL, "re-election names round %llu, the open round is %llu",
         (unsigned long long)ev->round, (unsigned long long)S->round);
  memcpy(S->eseed, s, 32);
  size_t np = n_participants(S);
  int want = -1;
  if (np > 0) {
    int cur_in = S->active >= 0 && S->cl[S->active].participant;
    uint64_t k;
    if (!cur_in || np == 1) {
      k = cur_in ? 0 : bbvfl_election_pick(s, np);
      for (size_t i = 0; i < S->ncl; i++)
        if (S->cl[i].participant && (cur_in ? (int)i == S->active : k-- == 0)) {
          want = (int)i;
          break;
        }
    } else {
      k = bbvfl_election_pick(s, np - 1);
      for (size_t i = 0; i < S->ncl; i++) {
        if (!S->cl[i].participant || (int)i == S->active) continue;
        if (k-- == 0) {
          want = (int)i;
          break;
        }
      }
    }
  }
  if (ai != want || ev->participants != np)
    fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client,
         "re-elected client is not the one the seed chain picks among the other participants");
  S->active = want;
  S->active_since = ev->block_number;
  ok(S, BBVFL_AC_ELECTION);
}

int bbvfl_audit_decode_submit(const uint8_t *in, size_t len, uint64_t *round, const uint8_t **q, size_t *qlen,
                              char *why, size_t whyn) {
  uint8_t sel[4];
  bbvfl_abi_selector("submit(uint64,bytes)", sel);
  if (len < 4 + 64 || memcmp(in, sel, 4)) {
    snprintf(why, whyn, "transaction is not a direct submit(uint64,bytes) call");
    return -1;
  }
  const uint8_t *a = in + 4;
  size_t alen = len - 4;
  for (int i = 0; i < 24; i++)
    if (a[i]) {
      snprintf(why, whyn, "round argument does not fit uint64");
      return -1;
    }
  uint64_t r = 0, off = 0, l = 0;
  for (int i = 24; i < 32; i++) r = r << 8 | a[i];
  for (int i = 32; i < 56; i++)
    if (a[i]) goto bad;
  for (int i = 56; i < 64; i++) off = off << 8 | a[i];
  if (off > alen || alen - off < 32) goto bad;
  for (size_t i = 0; i < 24; i++)
    if (a[off + i]) goto bad;
  for (size_t i = 24; i < 32; i++) l = l << 8 | a[off + i];
  if (l > alen - off - 32) goto bad;
  *round = r;
  *q = a + off + 32;
  *qlen = (size_t)l;
  return 0;
bad:
  snprintf(why, whyn, "malformed bytes argument in submit calldata");
  return -1;
}

static void on_submitted(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  int i = find_client(S, ev->client);
  S->r->submissions++;
  if (fx->have_gas && i >= 0) S->cl[i].gas += fx->gas;
  if (!S->elected || S->ended) {
    round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "submission outside training");
    return;
  }
  /* the round it goes to: the head round, or in hashed mode a later one within the staleness */
  rslot *sl = NULL;
  int valid = 1;
  /* a round not done yet keeps what was submitted to it, acceptable or not: its sum is then
     judged on its own terms (the contract may have counted a submission it should have refused) */
  if (ev->round >= S->round && ev->round < S->p.total_rounds && ev->round - S->round < MAX_SLOTS)
    sl = slot_of(S, ev->round, 1);
  if (!round_acceptable(S, ev->round)) {
    if (!S->hashed || ev->round <= S->round || ev->round >= S->p.total_rounds)
      round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "round %llu is not open (open: %llu%s)",
                        (unsigned long long)ev->round, (unsigned long long)S->round, S->complete ? ", complete" : "");
    else if (ev->round - S->round >= HASH_RING)
      round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "round %llu is %d or more rounds ahead of the oldest open round %llu",
                        (unsigned long long)ev->round, HASH_RING, (unsigned long long)S->round);
    else
      round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev,
                        "round %llu: %llu TRAIN rounds lie between it and the oldest open round %llu (staleness %u)",
                        (unsigned long long)ev->round, (unsigned long long)train_between(S, S->round, ev->round),
                        (unsigned long long)S->round, S->p.cfg.staleness);
    valid = 0;
  }
  if (sl && ev->round > S->round) {
    S->r->ahead++;
    if (ev->round - S->round > S->r->max_ahead) S->r->max_ahead = ev->round - S->round;
  }
  rslot *gs = sl ? sl : head(S);
  if (gs) {
    if (fx->have_gas) gs->gas += fx->gas;
    gs->nsub_all += sl != NULL; /* the Submitted events of the round */
  }
  /* recover the bytes from the signed transaction */
  const uint8_t *q = NULL;
  size_t qlen = 0;
  if (!fx->have_tx) {
    round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "transaction not recoverable: %s", fx->tx_err);
    valid = 0;
  } else {
    char why[128];
    uint64_t cr = 0;
    if (!fx->has_to || memcmp(fx->to, S->r->contract, 20)) {
      round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev,
           "transaction is not addressed to the aggregator (its bytes are not in calldata)");
      valid = 0;
    } else if (bbvfl_audit_decode_submit(fx->input, fx->input_len, &cr, &q, &qlen, why, sizeof why) < 0) {
      round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "%s", why);
      valid = 0;
      q = NULL;
    } else {
      uint8_t h[32];
      bbvfl_keccak256(q, qlen, h);
      if (memcmp(h, ev->word, 32)) {
        round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev,
             "Submitted dataHash is not keccak256 of the calldata bytes");
        valid = 0;
      }
      if (cr != ev->round) {
        round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "calldata round %llu, event round %llu",
             (unsigned long long)cr, (unsigned long long)ev->round);
        valid = 0;
      }
      if (memcmp(fx->from, ev->client, 20)) {
        round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev,
             "the transaction's signer is not the client the event names");
        valid = 0;
      }
    }
  }
  if (i < 0) {
    round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "submission from an unregistered address");
    valid = 0;
  } else if (!S->cl[i].participant) {
    round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "submission from an excluded client");
    valid = 0;
  } else if (sl && (sl->sub_mask >> i & 1)) {
    round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "second submission to the round");
    valid = 0;
  }
  if (!sl) return;
  if (S->hashed && i >= 0 && !(sl->ev_mask >> i & 1)) {
    sl->ev_mask |= (uint64_t)1 << i;
    size_t want = (size_t)sl->L.coords * (S->p.cfg.masked ? 2 : 1);
    if (q && qlen == want && (sl->pay[i] = malloc(want ? want : 1))) memcpy(sl->pay[i], q, want);
    uint64_t part = participant_mask(S);
    if (ev->round == S->round && !S->head_full && (sl->ev_mask & part) == part) {
      S->head_full = 1;
      S->head_full_at = ev->block_number;
    }
  }
  if (q) {
    size_t coords = (size_t)sl->L.coords;
    size_t want = S->p.cfg.masked ? 2 * coords : coords;
    if (qlen != want) {
      round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "%zu bytes, expected %zu (%u rows x P = %u%s)", qlen, want,
                        sl->L.rows, S->p.cfg.dim, S->p.cfg.masked ? ", 2 bytes each" : "");
      valid = 0;
      sl->sum_unknown = 1;
    } else if (S->p.cfg.masked) {
      for (size_t j = 0; j < coords; j++) sl->sum[j] += ((uint32_t)q[2 * j] << 8) | q[2 * j + 1];
    } else {
      size_t bad = SIZE_MAX;
      for (size_t j = 0; j < coords; j++) {
        if (q[j] > S->p.cfg.levels && bad == SIZE_MAX) bad = j;
        sl->sum[j] += q[j];
      }
      if (bad != SIZE_MAX) {
        round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "value %u at coordinate %zu is above b = %u",
             q[bad], bad, S->p.cfg.levels);
        valid = 0;
      }
    }
  } else {
    sl->sum_unknown = 1;
  }
  if (valid) {
    sl->sub_mask |= (uint64_t)1 << i;
    sl->nsub_valid++;
    if (!S->hashed) S->cl[i].accepted++;
    ok(S, BBVFL_AC_SUBMISSIONS);
  }
}

/* RoundCompleted: only for the head round (rounds complete in order, also when pipelined), with
 * the sum of the round's submitted bytes and their count. In hashed mode it is aggregate()'s. */
static void on_round_completed(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  rslot *h = NULL;
  if (!S->elected || S->ended || ev->round != S->round || S->complete || !(h = head(S))) {
    fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "completion of round %llu, which is not the open round",
         (unsigned long long)ev->round);
    return;
  }
  if (fx->have_gas) h->gas += fx->gas; /* hashed: the aggregate() call */
  size_t np = n_participants(S), coords = (size_t)h->L.coords;
  if (S->hashed && is_train(S, ev->round)) S->head_base = ev->block_number; /* aggregated, gradient pending */
  if (S->hashed) {
    /* aggregate(): the sum of the current participants' payloads, each checked against its hash
       by the contract; recomputed here from the submit() calldata */
    uint64_t part = participant_mask(S), in = h->ev_mask & part;
    unsigned n = (unsigned)__builtin_popcountll(in);
    if (ev->participants != n)
      fail(S, BBVFL_AC_CONTRIBUTORS, ev, 1, ev->round, -1, NULL,
           "RoundCompleted says its sum covers %u submissions; the round has %u Submitted events of participants",
           (unsigned)ev->participants, n);
    else
      ok(S, BBVFL_AC_CONTRIBUTORS);
    if ((h->sub_mask & part) != part)
      fail(S, BBVFL_AC_SUBMISSIONS, ev, 1, ev->round, -1, NULL,
           "round aggregated with %d valid submissions from %zu participants", __builtin_popcountll(h->sub_mask & part),
           np);
    memset(h->sum, 0, coords * sizeof *h->sum);
    h->sum_unknown = 0;
    for (size_t i = 0; i < S->ncl; i++) {
      if (!(in >> i & 1)) continue;
      const uint8_t *q = h->pay[i];
      if (!q) {
        h->sum_unknown = 1;
        continue;
      }
      if (S->p.cfg.masked)
        for (size_t j = 0; j < coords; j++) h->sum[j] += ((uint32_t)q[2 * j] << 8) | q[2 * j + 1];
      else
        for (size_t j = 0; j < coords; j++) h->sum[j] += q[j];
    }
  } else {
    if (ev->participants != h->nsub_all)
      fail(S, BBVFL_AC_CONTRIBUTORS, ev, 1, ev->round, -1, NULL,
           "RoundCompleted says its sum covers %u submissions; the round has %u Submitted events",
           (unsigned)ev->participants, h->nsub_all);
    else
      ok(S, BBVFL_AC_CONTRIBUTORS);
    if (h->nsub_valid != np)
      fail(S, BBVFL_AC_SUBMISSIONS, ev, 1, ev->round, -1, NULL,
           "round completed with %u valid submissions from %zu participants", h->nsub_valid, np);
  }
  if (h->sum_unknown) {
    fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "a submission's bytes could not be recovered: sum unverifiable");
  } else {
    uint32_t *got = malloc((coords ? coords : 1) * sizeof *got);
    bbvfl_err e = {0};
    size_t lane = S->p.lane_bits / 8;
    if (!got) {
      fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "out of memory");
    } else if (ev->data_len != coords * lane) {
      fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "sum is %zu bytes, expected %zu (%u rows x P = %u, %zu-byte lanes)",
           ev->data_len, coords * lane, h->L.rows, S->p.cfg.dim, lane);
    } else if (bbvfl_cdec_sum(ev->data, ev->data_len, S->p.lane_bits, got, coords, &e) < 0) {
      fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "%s", e.msg);
    } else {
      uint32_t mask = S->p.cfg.masked ? 0xFFFFu : 0xFFFFFFFFu;
      size_t bad = SIZE_MAX;
      for (size_t j = 0; j < coords; j++)
        if ((h->sum[j] & mask) != got[j]) {
          bad = j;
          break;
        }
      if (bad != SIZE_MAX)
        fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL,
             "lane %zu: emitted %u, the submitted bytes add up to %u", bad, got[bad], h->sum[bad] & mask);
      else
        ok(S, BBVFL_AC_SUMS);
    }
    free(got);
  }
  if (!h->sum_unknown && !S->hashed) {
    size_t k = (size_t)(ev->round % RING);
    memcpy(S->ring[k], h->sum, coords * sizeof *h->sum);
    S->ring_round[k] = ev->round;
    S->ring_coords[k] = coords;
    S->ring_have[k] = 1;
  }
  S->complete = 1;
  S->completed_at = ev->block_number;
  S->r->rounds_completed++;
  if ((ev->round + 1) % S->per == 0) {
    uint32_t e = (uint32_t)(ev->round / S->per);
    S->epoch_done_any = 1;
    S->epoch_done_block = ev->block_number;
    S->r->epochs_completed = (uint64_t)e + 1;
    epoch_fig(S, e, 1);
    if (S->perm) schedule_digest(S, e);
  }
  if (!is_train(S, ev->round)) open_next(S, ev, fx);
}

/* What the gradient gives away: each row's label (audit/leak.h), handed to opts->on_labels batch by
   batch (a window's gradient is its nb batches' gradients in batch order) with the batch's
   training-row positions from the schedule. */
static void read_labels(st_t *S, const bbvfl_cev *ev, const bbvfl_round_layout *L) {
  size_t B = S->p.cfg.batch, P = S->p.cfg.dim, rows = L->rows;
  if (!S->leak) S->leak = malloc((S->max_coords / (P ? P : 1) + 1) * sizeof *S->leak);
  bbvfl_err e = {0};
  if (!S->leak || bbvfl_leak_labels(ev->data, ev->data_len, rows, P, ev->data2, ev->data2_len, S->leak, &e) < 0) {
    S->r->labels_unread += rows;
    return;
  }
  uint64_t epoch = L->epoch;
  for (uint32_t k = 0; k < L->nb; k++) {
    uint64_t batch = (uint64_t)L->first + k;
    const size_t *pos = NULL;
    if (S->perm && (batch + 1) * B <= S->p.cfg.train_rows) {
      if (S->perm_epoch != (int64_t)epoch) {
        bbvfl_schedule_perm(S->seed, epoch, (size_t)S->p.cfg.train_rows, S->perm);
        S->perm_epoch = (int64_t)epoch;
      }
      pos = S->perm + batch * B;
    }
    S->r->labels_read += B;
    S->o->on_labels(S->o->labels_ctx, ev->round, epoch, batch, S->leak + (size_t)k * B, pos, B);
  }
}

static void on_gradient(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  rslot *h = S->elected && !S->ended ? head(S) : NULL;
  if (fx->have_gas && h) h->gas += fx->gas;
  int ai = find_client(S, ev->client);
  if (!S->elected || S->ended) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient outside training");
    return;
  }
  int bad = 0;
  if (ai < 0 || ai != S->active) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient posted by a client that is not active");
    bad = 1;
  }
  if (ev->round != S->round) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient for round %llu, the open round is %llu",
         (unsigned long long)ev->round, (unsigned long long)S->round);
    return;
  }
  if (!is_train(S, ev->round)) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient for an EVAL round");
    bad = 1;
  }
  if (!S->complete) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient for an incomplete round");
    bad = 1;
  }
  bbvfl_round_layout L = layout(S, ev->round);
  if (ev->data_len != L.coords * 4) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient is %zu bytes, expected %llu (%u batches x B = %u x P = %u, binary32)",
         ev->data_len, (unsigned long long)(L.coords * 4), L.nb, S->p.cfg.batch, S->p.cfg.dim);
    bad = 1;
  }
  if (!bad) ok(S, BBVFL_AC_GRADIENTS);
  if (!bad && S->o->on_labels) read_labels(S, ev, &L);
  S->r->gradients++;
  if (S->complete) open_next(S, ev, fx);
}

/* LabelHolder(client, index): emitted with the client's Registered event by registerLabelHolder. */
static void on_label_holder(st_t *S, const bbvfl_cev *ev) {
  int i = find_client(S, ev->client);
  if (i < 0) {
    client_fail(S, BBVFL_AC_REGISTRATION, ev, "label holder that is not registered");
    return;
  }
  if (ev->index != (uint8_t)i || S->cl[i].label_holder) {
    client_fail(S, BBVFL_AC_REGISTRATION, ev, "LabelHolder event %s",
         S->cl[i].label_holder ? "twice for one client" : "with an index other than the registration's");
    return;
  }
  S->cl[i].label_holder = 1;
  ok(S, BBVFL_AC_REGISTRATION);
}

/* LabelGradientPosted(round, client, grad): from a declared label holder that is not excluded,
   once per round, for the open TRAIN round once it is complete (so before its gradient), rows x C
   binary32 (rows: the round's, nb*B for a window) with 1 <= C <= 256. */
static void on_label_gradient(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  rslot *h = S->elected && !S->ended ? head(S) : NULL;
  if (fx->have_gas && h) h->gas += fx->gas;
  int i = find_client(S, ev->client);
  if (!S->elected || S->ended) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "label gradient outside training");
    return;
  }
  int bad = 0;
  if (i < 0 || !S->cl[i].label_holder || S->cl[i].excluded) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "label gradient from a client that is %s",
         i < 0 || !S->cl[i].label_holder ? "not a declared label holder" : "excluded");
    bad = 1;
  }
  if (ev->round != S->round || !is_train(S, ev->round) || !S->complete) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev,
         "label gradient for round %llu while the open round is %llu (%s, %s)", (unsigned long long)ev->round,
         (unsigned long long)S->round, is_train(S, S->round) ? "TRAIN" : "EVAL",
         S->complete ? "complete" : "not complete");
    bad = 1;
  }
  /* rows x C binary32 of the round's rows (the head round's when the post names another) */
  bbvfl_round_layout L = layout(S, ev->round < S->p.total_rounds ? ev->round : S->round);
  size_t unit = 4 * (size_t)L.rows;
  if (unit == 0 || ev->data_len == 0 || ev->data_len % unit || ev->data_len > 256 * unit) {
    round_client_fail(S, BBVFL_AC_GRADIENTS, ev,
         "label gradient is %zu bytes, not rows x C binary32 (a non-zero multiple of %zu, C <= 256)", ev->data_len, unit);
    bad = 1;
  }
  if (S->lp_round != ev->round) {
    S->lp_round = ev->round;
    S->lp_mask = 0;
  }
  if (i >= 0 && i < 64) {
    if (S->lp_mask >> i & 1) {
      round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "second label gradient of this holder for the round");
      bad = 1;
    }
    S->lp_mask |= 1ULL << i;
  }
  if (!bad) ok(S, BBVFL_AC_GRADIENTS);
}

static void on_metrics(st_t *S, const bbvfl_cev *ev) {
  int ai = find_client(S, ev->client);
  int bad = 0;
  if (ai < 0 || ai != S->active) {
    fail(S, BBVFL_AC_METRICS, ev, 0, 0, ev->epoch, ev->client, "metrics posted by a client that is not active");
    bad = 1;
  }
  if (ev->epoch >= S->p.cfg.epochs || !epoch_complete(S, ev->epoch)) {
    fail(S, BBVFL_AC_METRICS, ev, 0, 0, ev->epoch, ev->client, "metrics for an epoch that is not complete");
    return;
  }
  bbvfl_audit_epoch_fig *f = epoch_fig(S, ev->epoch, 1);
  if (!f) return;
  if (f->has_metrics) {
    fail(S, BBVFL_AC_METRICS, ev, 0, 0, ev->epoch, ev->client, "metrics posted twice");
    return;
  }
  if (ev->auroc_micro > 1000000 || ev->accuracy_micro > 1000000) {
    fail(S, BBVFL_AC_METRICS, ev, 0, 0, ev->epoch, ev->client, "metric above 1");
    bad = 1;
  }
  f->has_metrics = 1;
  f->auroc_micro = ev->auroc_micro;
  f->accuracy_micro = ev->accuracy_micro;
  f->loss_micro = ev->loss_micro;
  if (!bad) ok(S, BBVFL_AC_METRICS);
}

static void settle(st_t *S) {
  while (S->unsettled < S->p.cfg.epochs) {
    bbvfl_audit_epoch_fig *f = epoch_fig(S, S->unsettled, 0);
    if (!f || !f->has_metrics || !f->rewards_paid) break;
    S->unsettled++;
  }
}

static void check_pending_transfer(st_t *S) {
  if (!S->pend) return;
  bbvfl_cev fake;
  memset(&fake, 0, sizeof fake);
  memcpy(fake.tx_hash, S->pend_tx, 32);
  fake.block_number = S->pend_block;
  char dec[80];
  bbvfl_u256_to_dec(&S->pend_amt, dec);
  fail(S, BBVFL_AC_REWARDS, &fake, 0, 0, S->rp_epoch, S->pend_to, "RewardsPaid of %s without its token transfer", dec);
  S->pend = 0;
}

/* End of one payRewards call: nobody due may be left out. */
static void close_rewards_group(st_t *S) {
  if (!S->rp_open) return;
  check_pending_transfer(S);
  S->rp_open = 0;
  bbvfl_cev fake;
  memset(&fake, 0, sizeof fake);
  memcpy(fake.tx_hash, S->rp_tx, 32);
  fake.block_number = S->rp_block;
  for (size_t i = 0; i < S->ncl; i++)
    if (S->cl[i].accepted > S->cl[i].rewarded)
      fail(S, BBVFL_AC_REWARDS, &fake, 0, 0, S->rp_epoch, S->cl[i].addr,
           "left out of the payout: %llu accepted submissions, %llu rewarded",
           (unsigned long long)S->cl[i].accepted, (unsigned long long)S->cl[i].rewarded);
  settle(S);
}

static void on_rewards_paid(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  if (S->rp_open && memcmp(S->rp_tx, ev->tx_hash, 32)) close_rewards_group(S);
  check_pending_transfer(S);
  if (!S->rp_open) { /* first event of a payRewards call */
    S->rp_open = 1;
    memcpy(S->rp_tx, ev->tx_hash, 32);
    S->rp_epoch = ev->epoch;
    S->rp_block = ev->block_number;
    if (fx->have_tx && (S->active < 0 || memcmp(fx->from, S->cl[S->active].addr, 20)))
      fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, fx->from, "payout triggered by a client that is not active");
    bbvfl_audit_epoch_fig *f = NULL;
    if (ev->epoch >= S->p.cfg.epochs || !epoch_complete(S, ev->epoch))
      fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, NULL, "payout for an epoch that is not complete");
    else if ((f = epoch_fig(S, ev->epoch, 1)) && f->rewards_paid)
      fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, NULL, "second payout for the epoch");
    if (f) f->rewards_paid = 1;
  } else if (ev->epoch != S->rp_epoch) {
    fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, ev->client, "one payout names two epochs");
  }
  static const uint8_t zero[20];
  if (!memcmp(ev->client, zero, 20)) { /* the "nobody was due" marker */
    bbvfl_u256 z = bbvfl_u256_from_u64(0);
    if (bbvfl_u256_cmp(&ev->amount, &z) || ev->submissions)
      fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, NULL, "payout to the zero address");
    return;
  }
  int i = find_client(S, ev->client);
  if (i < 0) {
    fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, ev->client, "payout to an unregistered address");
    return;
  }
  client_st *c = &S->cl[i];
  uint64_t due = c->accepted - c->rewarded;
  bbvfl_u256 want;
  int bad = 0;
  if (ev->submissions != due) {
    fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, ev->client,
         "paid for %u submissions, %llu accepted and not yet rewarded", ev->submissions, (unsigned long long)due);
    bad = 1;
  }
  if (bbvfl_u256_mul_u64(&want, &S->p.cfg.reward_per_submission, due) || bbvfl_u256_cmp(&want, &ev->amount)) {
    char a[80], b[80];
    bbvfl_u256_to_dec(&ev->amount, a);
    bbvfl_u256_to_dec(&want, b);
    fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, ev->client, "paid %s, rate x %llu new submissions = %s", a,
         (unsigned long long)due, b);
    bad = 1;
  }
  c->rewarded += ev->submissions;
  bbvfl_u256_add(&c->paid, &c->paid, &ev->amount);
  S->pend = 1;
  memcpy(S->pend_to, ev->client, 20);
  S->pend_amt = ev->amount;
  memcpy(S->pend_tx, ev->tx_hash, 32);
  S->pend_block = ev->block_number;
  if (!bad) ok(S, BBVFL_AC_REWARDS);
}

static void on_transfer(st_t *S, const bbvfl_cev *ev) {
  static const uint8_t zero[20];
  if (!memcmp(ev->client, zero, 20)) { /* mint */
    if (memcmp(ev->to, S->r->contract, 20) || bbvfl_u256_cmp(&ev->amount, &S->p.cfg.reward_pool))
      fail(S, BBVFL_AC_PARAMS, ev, 0, 0, -1, ev->to, "token mint is not the reward pool to the aggregator");
    else
      ok(S, BBVFL_AC_PARAMS);
    return;
  }
  if (memcmp(ev->client, S->r->contract, 20)) return; /* clients moving their own tokens */
  if (!S->pend || memcmp(S->pend_tx, ev->tx_hash, 32)) {
    fail(S, BBVFL_AC_REWARDS, ev, 0, 0, -1, ev->to, "token transfer from the aggregator without a RewardsPaid");
    return;
  }
  S->pend = 0;
  if (memcmp(S->pend_to, ev->to, 20) || bbvfl_u256_cmp(&S->pend_amt, &ev->amount)) {
    fail(S, BBVFL_AC_REWARDS, ev, 0, 0, S->rp_epoch, ev->to, "token transfer does not match its RewardsPaid");
    return;
  }
  int i = find_client(S, ev->to);
  if (i >= 0) bbvfl_u256_add(&S->cl[i].transferred, &S->cl[i].transferred, &ev->amount);
}

static void on_session_ended(st_t *S, const bbvfl_cev *ev) {
  if (!S->ended || ev->round != S->p.total_rounds)
    fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "SessionEnded(%llu) but the auditor counts %llu completed rounds",
         (unsigned long long)ev->round, (unsigned long long)S->r->rounds_completed);
  S->r->session_ended = 1;
}

/* Masked mode: expireRound voided the open round and re-opened it for the clients that
 * submitted (RoundReopened(round, bitmap, n); not in vfl/contract's table, decoded here). */
#define REOPENED_MARK 0xEE
static const char REOPENED_SIG[] = "RoundReopened(uint64,uint64,uint8)";

static void on_reopened(st_t *S, const bbvfl_cev *ev) {
  uint64_t bitmap = 0;
  for (int j = 0; j < 8; j++) bitmap = bitmap << 8 | ev->word[24 + j];
  /* lane mode: the open round; hashed mode: the head and every later round already submitted to */
  rslot *sl = NULL;
  int at_head = S->elected && !S->ended && ev->round == S->round && !S->complete;
  if (S->p.cfg.masked && S->elected && !S->ended) {
    if (at_head) sl = head(S);
    else if (S->hashed && ev->round > S->round) sl = slot_of(S, ev->round, 0);
  }
  if (!sl) {
    fail(S, BBVFL_AC_ELECTION, ev, 1, ev->round, -1, NULL, "round re-opened outside an open masked round");
    return;
  }
  size_t np = n_participants(S);
  uint64_t part = participant_mask(S);
  /* re-opened for the participants left, who (at the head) are exactly the valid submitters */
  if (bitmap != part || (at_head && bitmap != (sl->sub_mask & (S->hashed ? part : ~(uint64_t)0))) ||
      ev->participants != np || (uint64_t)__builtin_popcountll(bitmap) != np)
    fail(S, BBVFL_AC_ELECTION, ev, 1, ev->round, -1, NULL,
         "re-opened for clients 0x%llx (n = %u), the valid submitters were 0x%llx (%zu participants)",
         (unsigned long long)bitmap, ev->participants, (unsigned long long)sl->sub_mask, np);
  else
    ok(S, BBVFL_AC_ELECTION);
  if (!S->min_reopen || np < S->min_reopen) S->min_reopen = np;
  if (!S->hashed)
    for (size_t i = 0; i < S->ncl; i++) /* the voided submissions are not accepted */
      if (sl->sub_mask >> i & 1) S->cl[i].accepted--;
  slot_clear(sl);
  memset(sl->sum, 0, (size_t)sl->L.coords * sizeof *sl->sum);
  if (at_head) {
    S->opened_at = ev->block_number;
    S->head_base = ev->block_number;
    S->head_full = 0;
  }
}

static int decode_reopened(const json_t *log, bbvfl_cev *ev) {
  uint8_t topic[32];
  bbvfl_abi_event_topic(REOPENED_SIG, topic);
  const json_t *t = json_object_get(log, "topics");
  const json_t *d = json_object_get(log, "data");
  if (json_array_size(t) != 2 || !json_is_string(d)) return 0;
  uint8_t t0[32], t1[32], data[64];
  if (bbvfl_hex_decode_fixed(json_string_value(json_array_get(t, 0)), t0, 32, NULL) < 0 || memcmp(t0, topic, 32))
    return 0;
  if (bbvfl_hex_decode_fixed(json_string_value(json_array_get(t, 1)), t1, 32, NULL) < 0 ||
      bbvfl_hex_decode_fixed(json_string_value(d), data, 64, NULL) < 0)
    return 0;
  uint64_t r = 0;
  for (int j = 24; j < 32; j++) r = r << 8 | t1[j];
  ev->kind = BBVFL_EV_NONE;
  ev->reason = REOPENED_MARK;
  ev->round = r;
  memcpy(ev->word, data, 32);
  ev->participants = data[63];
  return 1;
}

static void dispatch(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  S->r->logs++;
  if (ev->kind == BBVFL_EV_NONE) {
    if (ev->reason == REOPENED_MARK && !memcmp(ev->emitter, S->r->contract, 20)) {
      close_rewards_group(S);
      on_reopened(S, ev);
    }
    return;
  }
  if (ev->kind != BBVFL_EV_REWARDS_PAID && ev->kind != BBVFL_EV_TRANSFER) close_rewards_group(S);
  int from_agg = !memcmp(ev->emitter, S->r->contract, 20);
  int from_tok = !memcmp(ev->emitter, S->r->token, 20);
  if ((ev->kind == BBVFL_EV_TRANSFER) != from_tok || (!from_agg && !from_tok)) return;
  switch (ev->kind) {
    case BBVFL_EV_REGISTERED: on_registered(S, ev); break;
    case BBVFL_EV_COMMITTED: on_committed(S, ev); break;
    case BBVFL_EV_REVEALED: on_revealed(S, ev); break;
    case BBVFL_EV_EXCLUDED: on_excluded(S, ev); break;
    case BBVFL_EV_ELECTED: on_elected(S, ev, fx); break;
    case BBVFL_EV_SUBMITTED: on_submitted(S, ev, fx); break;
    case BBVFL_EV_ROUND_COMPLETED: on_round_completed(S, ev, fx); break;
    case BBVFL_EV_GRADIENT_POSTED: on_gradient(S, ev, fx); break;
    case BBVFL_EV_METRICS_POSTED: on_metrics(S, ev); settle(S); break;
    case BBVFL_EV_REWARDS_PAID: on_rewards_paid(S, ev, fx); break;
    case BBVFL_EV_TRANSFER: on_transfer(S, ev); break;
    case BBVFL_EV_SESSION_ENDED: on_session_ended(S, ev); break;
    case BBVFL_EV_LABEL_HOLDER: on_label_holder(S, ev); break;
    case BBVFL_EV_LABEL_GRADIENT_POSTED: on_label_gradient(S, ev, fx); break;
    default: break;
  }
}

/* ------------------------------------------------------------------ fetching */

static void fetched_clear(fetched *f) {
  free(f->input);
  memset(f, 0, sizeof *f);
}

static void take_raw_tx(st_t *S, const bbvfl_cev *ev, const json_t *res, fetched *f) {
  uint8_t *raw = NULL;
  size_t len = 0;
  bbvfl_err e = {0};
  if (!json_is_string(res) || bbvfl_hex_decode_alloc(json_string_value(res), &raw, &len, &e) < 0) {
    snprintf(f->tx_err, sizeof f->tx_err, "the node returned no raw transaction");
    free(raw);
    return;
  }
  bbvfl_tx_decoded d;
  if (bbvfl_tx_decode(raw, len, &d, &e) < 0) {
    snprintf(f->tx_err, sizeof f->tx_err, "raw transaction does not decode: %.120s", e.msg);
    free(raw);
    return;
  }
  if (memcmp(d.hash, ev->tx_hash, 32)) {
    snprintf(f->tx_err, sizeof f->tx_err, "raw transaction does not hash to the log's transaction hash");
    free(raw);
    return;
  }
  if (d.tx.chain_id && S->r->chain_id && d.tx.chain_id != S->r->chain_id) {
    snprintf(f->tx_err, sizeof f->tx_err, "signed for chain %llu, the node is chain %llu",
             (unsigned long long)d.tx.chain_id, (unsigned long long)S->r->chain_id);
    free(raw);
    return;
  }
  memcpy(f->from, d.from, 20);
  f->has_to = d.tx.has_to;
  memcpy(f->to, d.tx.to, 20);
  f->input = malloc(d.tx.data_len ? d.tx.data_len : 1);
  if (!f->input) {
    snprintf(f->tx_err, sizeof f->tx_err, "out of memory");
    free(raw);
    return;
  }
  if (d.tx.data_len) memcpy(f->input, d.tx.data, d.tx.data_len);
  f->input_len = d.tx.data_len;
  f->have_tx = 1;
  free(raw);
}

/* Fallback for nodes without eth_getRawTransactionByHash: the node's "from" and "input". */
static void take_json_tx(const json_t *res, fetched *f) {
  bbvfl_err e = {0};
  const json_t *from = json_object_get(res, "from"), *to = json_object_get(res, "to"),
               *in = json_object_get(res, "input");
  if (!json_is_string(from) || !json_is_string(in) ||
      bbvfl_hex_decode_fixed(json_string_value(from), f->from, 20, &e) < 0 ||
      bbvfl_hex_decode_alloc(json_string_value(in), &f->input, &f->input_len, &e) < 0) {
    snprintf(f->tx_err, sizeof f->tx_err, "the node returned no transaction");
    return;
  }
  f->has_to = json_is_string(to) && bbvfl_hex_decode_fixed(json_string_value(to), f->to, 20, &e) == 0;
  f->have_tx = 1;
}

enum { NEED_TX = 1, NEED_GAS = 2, NEED_TS = 4 };

static int needs(const st_t *S, const bbvfl_cev *ev) {
  switch (ev->kind) {
    case BBVFL_EV_SUBMITTED: return NEED_TX | NEED_GAS;
    case BBVFL_EV_GRADIENT_POSTED: return NEED_GAS | NEED_TS;
    case BBVFL_EV_LABEL_GRADIENT_POSTED: return NEED_GAS;
    case BBVFL_EV_ROUND_COMPLETED: return S->hashed ? NEED_TS | NEED_GAS : NEED_TS; /* hashed: aggregate()'s gas */
    case BBVFL_EV_ELECTED: return NEED_TS;
    case BBVFL_EV_REWARDS_PAID: return NEED_TX;
    default: return 0;
  }
}

static int prefetch(st_t *S, const bbvfl_cev *evs, size_t n, fetched *fx, bbvfl_err *err) {
  bbvfl_rpc_req reqs[CHUNK * 3];
  int owner[CHUNK * 3], what[CHUNK * 3];
  size_t nr = 0;
  char hx[67];
  for (size_t i = 0; i < n; i++) {
    int w = needs(S, &evs[i]);
    bbvfl_hex_encode(evs[i].tx_hash, 32, hx);
    if (w & NEED_TX) {
      reqs[nr] = (bbvfl_rpc_req){S->raw_ok ? "eth_getRawTransactionByHash" : "eth_getTransactionByHash",
                                 json_pack("[s]", hx), NULL, {0}};
      owner[nr] = (int)i, what[nr++] = NEED_TX;
    }
    if (w & NEED_GAS) {
      reqs[nr] = (bbvfl_rpc_req){"eth_getTransactionReceipt", json_pack("[s]", hx), NULL, {0}};
      owner[nr] = (int)i, what[nr++] = NEED_GAS;
    }
    if (w & NEED_TS) {
      reqs[nr] = (bbvfl_rpc_req){"eth_getBlockByNumber", json_pack("[o,b]", bbvfl_json_quantity(evs[i].block_number), 0),
                                 NULL, {0}};
      owner[nr] = (int)i, what[nr++] = NEED_TS;
    }
  }
  if (nr == 0) return 0;
  if (bbvfl_rpc_batch(S->rpc, reqs, nr, err) < 0) return bbvfl_wrap(err, "fetching transactions");
  int retry_json = 0;
  const bbvfl_cev *gone = NULL;
  for (size_t k = 0; k < nr; k++) {
    fetched *f = &fx[owner[k]];
    const bbvfl_cev *ev = &evs[owner[k]];
    if (!reqs[k].err.code && json_is_null(reqs[k].result) && !gone) gone = ev;
    if (reqs[k].err.code) {
      if (what[k] == NEED_TX && S->raw_ok && reqs[k].err.code == BBVFL_E_RPC) retry_json = 1;
      if (what[k] == NEED_TX) snprintf(f->tx_err, sizeof f->tx_err, "%.150s", reqs[k].err.msg);
      continue;
    }
    if (what[k] == NEED_TX) {
      if (S->raw_ok) take_raw_tx(S, ev, reqs[k].result, f);
      else take_json_tx(reqs[k].result, f);
    } else if (what[k] == NEED_GAS) {
      const json_t *g = json_object_get(reqs[k].result, "gasUsed");
      if (g && bbvfl_rpc_parse_u64(g, &f->gas, NULL) == 0) f->have_gas = 1;
    } else {
      const json_t *t = json_object_get(reqs[k].result, "timestamp");
      if (t && bbvfl_rpc_parse_u64(t, &f->ts, NULL) == 0) f->have_ts = 1;
    }
  }
  bbvfl_rpc_batch_clear(reqs, nr);
  if (gone) {
    char h[67];
    bbvfl_hex_encode(gone->tx_hash, 32, h);
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "the node no longer has transaction %s of block %llu although it still has its log: it keeps "
                      "a pruned history (e.g. anvil --prune-history / --transaction-block-keeper); audit against a "
                      "node with the full history",
                      h, (unsigned long long)gone->block_number);
  }
  if (retry_json) { /* the node lacks eth_getRawTransactionByHash: ask for the JSON form */
    S->raw_ok = 0;
    for (size_t i = 0; i < n; i++) fetched_clear(&fx[i]);
    return prefetch(S, evs, n, fx, err);
  }
  return 0;
}

/* The deployment: the first log in range must come from the transaction that created the
 * aggregator (the token's mint in its constructor); its calldata ends with the Config tuple. */
static int check_deployment(st_t *S, const bbvfl_cev *ev, bbvfl_err *err) {
  bbvfl_receipt rc;
  memset(&rc, 0, sizeof rc);
  int got = bbvfl_rpc_receipt(S->rpc, ev->tx_hash, &rc, err);
  if (got < 0) return bbvfl_wrap(err, "receipt of the first transaction");
  int is_deploy = got == 1 && rc.has_contract && !memcmp(rc.contract, S->r->contract, 20);
  bbvfl_receipt_clear(&rc);
  if (got == 0) {
    char h[67];
    bbvfl_hex_encode(ev->tx_hash, 32, h);
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "the node has no receipt for transaction %s of block %llu, the contract's first log: it keeps a "
                      "pruned history (e.g. anvil --prune-history / --transaction-block-keeper); audit against a node "
                      "with the full history",
                      h, (unsigned long long)ev->block_number);
  }
  if (!is_deploy) {
    int late = S->o->from_block > 0 && ev->block_number == S->o->from_block;
    return bbvfl_fail(err, late ? BBVFL_E_ARG : BBVFL_E_STATE,
                      "the first log of the contract from block %llu on (in block %llu) is not from its deployment: "
                      "start the audit at or before the deploy block (--from-block, or --session with the deploy "
                      "block)%s",
                      (unsigned long long)S->o->from_block, (unsigned long long)ev->block_number,
                      late ? "" : ", on a node that keeps the full history (anvil --prune-history drops old logs)");
  }
  S->r->has_deploy = 1;
  S->r->deploy_block = ev->block_number;
  json_t *tx = NULL;
  if (bbvfl_rpc_get_tx(S->rpc, ev->tx_hash, &tx, err) != 1) {
    json_decref(tx);
    return bbvfl_wrap(err, "deployment transaction");
  }
  uint8_t *in = NULL, *cfg = NULL;
  size_t inlen = 0, cfglen = 0;
  const json_t *j = json_object_get(tx, "input");
  int rcode = 0;
  if (!json_is_string(j) || bbvfl_hex_decode_alloc(json_string_value(j), &in, &inlen, err) < 0) {
    rcode = bbvfl_fail(err, BBVFL_E_PARSE, "deployment transaction without input");
  } else if (bbvfl_cenc_config(&S->p.cfg, &cfg, &cfglen, err) == 0) {
    if (inlen < cfglen || memcmp(in + inlen - cfglen, cfg, cfglen))
      fail(S, BBVFL_AC_PARAMS, ev, 0, 0, -1, NULL,
           "params() does not match the constructor arguments of the deployment transaction");
    else
      ok(S, BBVFL_AC_PARAMS);
    /* informational: is the creation code the product's artifact? (the checks verify behaviour) */
    uint8_t *code = NULL;
    size_t clen = 0;
    bbvfl_err ce = {0};
    if (inlen >= cfglen && bbvfl_artifact_bytecode(S->hashed ? "BbvflHashAggregator" : "BbvflAggregator", &code, &clen, &ce) == 0) {
      S->r->code_known = 1;
      S->r->code_matches = clen == inlen - cfglen && !memcmp(code, in, clen);
    }
    free(code);
  } else {
    rcode = -1;
  }
  free(in);
  free(cfg);
  json_decref(tx);
  return rcode;
}

static int cmp_log(const void *a, const void *b) {
  const bbvfl_cev *x = a, *y = b;
  if (x->block_number != y->block_number) return x->block_number < y->block_number ? -1 : 1;
  return x->log_index < y->log_index ? -1 : x->log_index > y->log_index;
}

static int get_logs(st_t *S, uint64_t from, uint64_t to, json_t **logs, bbvfl_err *err) {
  json_t *addr = json_pack("[o,o]", bbvfl_json_hex(S->r->contract, 20), bbvfl_json_hex(S->r->token, 20));
  json_t *f = json_pack("{s:o,s:o,s:o}", "address", addr, "fromBlock", bbvfl_json_quantity(from), "toBlock",
                        bbvfl_json_quantity(to));
  if (!f) return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_getLogs: out of memory");
  return bbvfl_rpc_call(S->rpc, "eth_getLogs", json_pack("[o]", f), logs, err);
}

static int process_window(st_t *S, json_t *logs, bbvfl_err *err) {
  size_t n = json_array_size(logs);
  bbvfl_cev *evs = calloc(n ? n : 1, sizeof *evs);
  if (!evs) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  size_t m = 0;
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    int d = bbvfl_cev_decode(json_array_get(logs, i), &evs[m], err);
    if (d < 0) {
      rc = bbvfl_wrap(err, "log %zu", i);
      break;
    }
    if (d == 1 || decode_reopened(json_array_get(logs, i), &evs[m])) m++;
    else bbvfl_cev_clear(&evs[m]);
  }
  json_decref(logs);
  if (rc == 0) qsort(evs, m, sizeof *evs, cmp_log);
  fetched fx[CHUNK];
  memset(fx, 0, sizeof fx);
  for (size_t at = 0; rc == 0 && at < m; at += CHUNK) {
    size_t k = m - at < CHUNK ? m - at : CHUNK;
    if (!S->first_log_seen) {
      S->first_log_seen = 1;
      if (check_deployment(S, &evs[at], err) < 0) {
        rc = -1;
        break;
      }
    }
    if (prefetch(S, evs + at, k, fx, err) < 0) {
      rc = -1;
      break;
    }
    for (size_t i = 0; i < k; i++) {
      dispatch(S, &evs[at + i], &fx[i]);
      fetched_clear(&fx[i]);
      bbvfl_cev_clear(&evs[at + i]);
    }
  }
  for (size_t i = 0; i < m; i++) bbvfl_cev_clear(&evs[i]);
  for (size_t i = 0; i < CHUNK; i++) fetched_clear(&fx[i]);
  free(evs);
  return rc;
}

/* ------------------------------------------------------------------ end of stream */

/* The sums the contract still stores (roundSum(r) for the last RING complete rounds, as of the
 * last block read) against the sums recomputed from the submitted bytes. */
static void check_stored_sums(st_t *S) {
  if (!S->elected || S->hashed) return; /* hashed mode stores hashes, not sums */
  char blk[24];
  snprintf(blk, sizeof blk, "0x%llx", (unsigned long long)S->r->to_block);
  uint32_t *got = malloc((S->max_coords ? S->max_coords : 1) * sizeof *got);
  if (!got) return;
  for (size_t k = 0; k < RING; k++) {
    uint64_t rr = S->ring_round[k];
    size_t coords = S->ring_coords[k];
    if (!S->ring_have[k] || rr + RING <= S->round) continue;
    if (rr == S->round && !S->complete) continue;
    uint8_t cd[36], *out = NULL, *sum = NULL;
    size_t olen = 0, slen = 0;
    bbvfl_abi_selector("roundSum(uint64)", cd);
    memset(cd + 4, 0, 32);
    for (int j = 0; j < 8; j++) cd[35 - j] = (uint8_t)(rr >> (8 * j));
    bbvfl_err e = {0};
    if (bbvfl_rpc_eth_call(S->rpc, NULL, S->r->contract, cd, sizeof cd, blk, &out, &olen, &e) < 0) {
      if (e.code == BBVFL_E_REVERT)
        fail(S, BBVFL_AC_SUMS, NULL, 1, rr, -1, NULL, "roundSum(%llu) reverted for a stored round: %s",
             (unsigned long long)rr, e.msg);
      else
        snprintf(S->r->checks[BBVFL_AC_SUMS].note, sizeof S->r->checks[BBVFL_AC_SUMS].note,
                 "stored sums not compared: %.200s", e.msg);
      free(out);
      continue;
    }
    if (bbvfl_cdec_bytes(out, olen, &sum, &slen, &e) < 0 ||
        bbvfl_cdec_sum(sum, slen, S->p.lane_bits, got, coords, &e) < 0) {
      fail(S, BBVFL_AC_SUMS, NULL, 1, rr, -1, NULL, "roundSum(%llu): %s", (unsigned long long)rr, e.msg);
    } else if (slen != coords * (S->p.lane_bits / 8)) {
      fail(S, BBVFL_AC_SUMS, NULL, 1, rr, -1, NULL, "roundSum(%llu) is %zu bytes, the round's sum has %zu",
           (unsigned long long)rr, slen, coords * (S->p.lane_bits / 8));
    } else {
      uint32_t mask = S->p.cfg.masked ? 0xFFFFu : 0xFFFFFFFFu;
      size_t bad = SIZE_MAX;
      for (size_t j = 0; j < coords && bad == SIZE_MAX; j++)
        if ((S->ring[k][j] & mask) != got[j]) bad = j;
      if (bad != SIZE_MAX)
        fail(S, BBVFL_AC_SUMS, NULL, 1, rr, -1, NULL, "stored sum (roundSum) lane %zu: %u, the submitted bytes add up to %u",
             bad, got[bad], S->ring[k][bad] & mask);
      else
        ok(S, BBVFL_AC_SUMS);
    }
    free(out);
    free(sum);
  }
  free(got);
}

static void finish(st_t *S) {
  bbvfl_audit_result *r = S->r;
  check_stored_sums(S);
  close_rewards_group(S);
  bbvfl_cev none;
  memset(&none, 0, sizeof none);
  /* every complete epoch paid, unless its payout is not due yet: the active client has
     activeBlocks blocks from the later of the epoch's completion (the latest completion is used,
     so never too early) and its own election */
  uint32_t pending = 0, first_pending = 0;
  for (uint32_t e = 0; e < r->epochs_completed && e < S->p.cfg.epochs; e++) {
    bbvfl_audit_epoch_fig *f = epoch_fig(S, e, 0);
    if (f && f->rewards_paid) continue;
    uint64_t from = S->epoch_done_block > S->active_since ? S->epoch_done_block : S->active_since;
    if (r->to_block > from + S->p.cfg.active_blocks) {
      fail(S, BBVFL_AC_REWARDS, NULL, 0, 0, e, S->active >= 0 ? S->cl[S->active].addr : NULL,
           "epoch %u's rewards were not paid by block %llu (activeBlocks after it completed)", e,
           (unsigned long long)(from + S->p.cfg.active_blocks));
    } else if (pending++ == 0) {
      first_pending = e;
    }
  }
  if (pending)
    snprintf(r->checks[BBVFL_AC_REWARDS].note, sizeof r->checks[BBVFL_AC_REWARDS].note,
             "%u complete epoch(s) from epoch %u not paid yet (not overdue at block %llu)", pending, first_pending,
             (unsigned long long)r->to_block);
  r->nclients = S->ncl;
  r->clients = calloc(S->ncl ? S->ncl : 1, sizeof *r->clients);
  for (size_t i = 0; r->clients && i < S->ncl; i++) {
    client_st *c = &S->cl[i];
    bbvfl_audit_client_fig *f = &r->clients[i];
    memcpy(f->addr, c->addr, 20);
    f->index = (uint8_t)i;
    f->excluded = c->excluded;
    f->excluded_reason = c->reason;
    f->accepted = c->accepted;
    f->rewarded = c->rewarded;
    f->paid = c->paid;
    f->transferred = c->transferred;
    f->gas = c->gas;
    bbvfl_u256 want;
    bbvfl_u256_mul_u64(&want, &S->p.cfg.reward_per_submission, c->rewarded);
    if (bbvfl_u256_cmp(&want, &c->transferred))
      fail(S, BBVFL_AC_REWARDS, NULL, 0, 0, -1, c->addr, "received tokens != rate x %llu rewarded submissions",
           (unsigned long long)c->rewarded);
  }
  if (S->active >= 0 && (size_t)S->active < S->ncl) {
    memcpy(r->active, S->cl[S->active].addr, 20);
    r->has_active = 1;
  }
  /* notes and skips */
  if (!S->elected) {
    for (int c = BBVFL_AC_ELECTION; c < BBVFL_AC_COUNT; c++)
      if (c != BBVFL_AC_PRIVACY && c != BBVFL_AC_ELECTION && r->checks[c].status == BBVFL_AS_PASS &&
          !r->checks[c].checked) {
        r->checks[c].status = BBVFL_AS_SKIP;
        snprintf(r->checks[c].note, sizeof r->checks[c].note, "no election yet: nothing to check");
      }
  }
  if (r->checks[BBVFL_AC_SCHEDULE].status == BBVFL_AS_PASS && !r->checks[BBVFL_AC_SCHEDULE].note[0])
    snprintf(r->checks[BBVFL_AC_SCHEDULE].note, sizeof r->checks[BBVFL_AC_SCHEDULE].note,
             "permutation of the %u training rows (params) per epoch from S; window w = batches w*%u.. of it%s",
             S->p.cfg.train_rows, S->p.cfg.window, S->o->train_rows ? "; --train-rows agrees" : "");
  /* privacy */
  bbvfl_err e = {0};
  /* after dropouts the masked sums cover fewer clients: the masked bound for the smallest set,
     against one of its participants; the feature-set level needs the training row count */
  unsigned M = S->p.cfg.clients;
  unsigned parts = S->p.cfg.masked && S->min_reopen && S->min_reopen < M ? (unsigned)S->min_reopen : M;
  bbvfl_privacy_in pin = {.kind = BBVFL_MECH_PBM, .b = S->p.cfg.levels, .beta = S->p.cfg.beta_micro / 1e6,
                          .P = (int)S->p.cfg.dim, .M = (int)M, .epochs = (int)S->p.cfg.epochs, .delta = r->delta,
                          .rows = S->p.cfg.train_rows <= INT_MAX ? (int)S->p.cfg.train_rows : 0,
                          .masked = S->p.cfg.masked, .participants = (int)parts,
                          .colluding = parts > 1 ? BBVFL_ACCT_COLLUDING_DEFAULT : 0};
  if (pin.beta <= 0) {
    r->checks[BBVFL_AC_PRIVACY].status = BBVFL_AS_SKIP;
    snprintf(r->checks[BBVFL_AC_PRIVACY].note, sizeof r->checks[BBVFL_AC_PRIVACY].note,
             "beta = 0: the outputs carry no information about the inputs");
  } else if (bbvfl_privacy_compute(&pin, &r->priv, NULL, &e) < 0) {
    fail(S, BBVFL_AC_PRIVACY, NULL, 0, 0, -1, NULL, "accountant: %s", e.msg);
  } else {
    r->has_eps = 1;
    r->eps_feature = r->priv.rdp.epsilon_feature;
    r->eps_sample = r->priv.rdp.epsilon_sample;
    r->eps_at_edge = r->priv.rdp.at_grid_edge;
    ok(S, BBVFL_AC_PRIVACY);
    if (S->p.cfg.masked) {
      r->masked_participants = parts;
      r->has_masked_eps = 1;
      r->eps_masked_feature = r->priv.masked_row_feature.epsilon;
    }
    snprintf(r->checks[BBVFL_AC_PRIVACY].note, sizeof r->checks[BBVFL_AC_PRIVACY].note,
             "PBM b=%u beta=%.6g P=%u M=%u epochs=%u, not end-to-end: row level, one party %.4g (%s), one row, all "
             "parties %.4g (%s) at delta %g%s",
             S->p.cfg.levels, pin.beta, S->p.cfg.dim, S->p.cfg.clients, S->p.cfg.epochs, r->priv.row_feature.epsilon,
             r->priv.row_feature.method, r->priv.row_sample.epsilon, r->priv.row_sample.method, r->delta,
             S->p.cfg.masked ? " (local mode; masked bound in figures)" : "");
  }
  if (!S->p.cfg.masked && !r->checks[BBVFL_AC_SUBMISSIONS].note[0])
    snprintf(r->checks[BBVFL_AC_SUBMISSIONS].note, sizeof r->checks[BBVFL_AC_SUBMISSIONS].note,
             "signer recovered from each signed transaction; values checked <= b");
  else if (S->p.cfg.masked)
    snprintf(r->checks[BBVFL_AC_SUBMISSIONS].note, sizeof r->checks[BBVFL_AC_SUBMISSIONS].note,
             "masked mode: values cannot be range-checked; sums verified mod 2^16");
  if (!r->has_deploy && r->checks[BBVFL_AC_PARAMS].status == BBVFL_AS_PASS) {
    r->checks[BBVFL_AC_PARAMS].status = BBVFL_AS_SKIP;
    snprintf(r->checks[BBVFL_AC_PARAMS].note, sizeof r->checks[BBVFL_AC_PARAMS].note, "no log in range");
  }
  r->ok = 1;
  for (int c = 0; c < BBVFL_AC_COUNT; c++)
    if (r->checks[c].status == BBVFL_AS_FAIL) r->ok = 0;
}

/* params(): the values the contract derives (T, V, totalRounds, maxCoords, lane width) recomputed
 * from its Config fields; the audit then runs on its own figures. Returns -1 only for a session no
 * contract could run (err filled). */
static int check_params(st_t *S, bbvfl_err *err) {
  bbvfl_cparams *p = &S->p;
  bbvfl_cconfig d = p->cfg;
  bbvfl_err e = {0};
  if (p->cfg.batches_per_epoch == 0 || bbvfl_cconfig_derive(&d, &e) < 0 || p->cfg.clients == 0 ||
      p->cfg.clients > MAX_CLIENTS || p->cfg.batch == 0 || p->cfg.dim == 0 || p->cfg.epochs == 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "params() returned an impossible session (M = %u, B = %u, P = %u, R = %u, "
                      "K = %u, epochs = %u%s%s)", p->cfg.clients, p->cfg.batch, p->cfg.dim, p->cfg.batches_per_epoch,
                      p->cfg.window, p->cfg.epochs, e.msg[0] ? ": " : "", e.msg);
  uint64_t per = (uint64_t)d.train_rounds + d.eval_rounds, total = per * d.epochs;
  uint64_t maxc = bbvfl_cconfig_max_coords(&d);
  unsigned sum_max = (unsigned)d.clients * d.levels;
  unsigned bits = d.masked ? 16 : sum_max < 256 ? 8 : 16;
  if (maxc == 0 || maxc > (1u << 20) || (!d.masked && sum_max >= 65536))
    return bbvfl_fail(err, BBVFL_E_STATE, "params() returned an impossible session (%llu values in the largest round, "
                      "M*b = %u)", (unsigned long long)maxc, sum_max);
  if (d.train_rounds != p->cfg.train_rounds || d.eval_rounds != p->cfg.eval_rounds || total != p->total_rounds ||
      maxc != p->max_coords || bits != p->lane_bits)
    fail(S, BBVFL_AC_PARAMS, NULL, 0, 0, -1, NULL,
         "params() derives T = %u, V = %u, %llu rounds, %u values at most, %u-bit lanes; from its Config they are "
         "T = %u, V = %u, %llu, %llu, %u", p->cfg.train_rounds, p->cfg.eval_rounds, (unsigned long long)p->total_rounds,
         p->max_coords, p->lane_bits, d.train_rounds, d.eval_rounds, (unsigned long long)total,
         (unsigned long long)maxc, bits);
  if (!d.hashed && d.staleness)
    fail(S, BBVFL_AC_PARAMS, NULL, 0, 0, -1, NULL, "staleness %u without hashed aggregation", d.staleness);
  p->cfg = d;
  p->total_rounds = total;
  p->max_coords = (uint32_t)maxc;
  p->lane_bits = (uint8_t)bits;
  return 0;
}

/* ------------------------------------------------------------------ entry */

void bbvfl_audit_result_free(bbvfl_audit_result *res) {
  if (!res) return;
  free(res->rounds);
  free(res->clients);
  free(res->epochs);
  res->rounds = NULL;
  res->clients = NULL;
  res->epochs = NULL;
  res->nrounds = res->nclients = res->nepochs = 0;
}

int bbvfl_audit_run(const bbvfl_audit_opts *o, bbvfl_audit_result *res, bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  double t0 = bbvfl_now();
  st_t *S = calloc(1, sizeof *S);
  if (!S) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  S->o = o;
  S->r = res;
  S->active = -1;
  S->raw_ok = 1;
  memcpy(res->contract, o->contract, 20);
  res->delta = o->delta > 0 ? o->delta : 1e-5;
  res->bucket_width = 1;
  res->train_rows = o->train_rows;
  int rc = -1;
  S->rpc = bbvfl_rpc_new(o->rpc_url, NULL, err);
  if (!S->rpc) goto out;
  if (bbvfl_rpc_chain_id(S->rpc, &res->chain_id, err) < 0) goto out;
  bbvfl_aggc ag;
  bbvfl_aggc_init(&ag, S->rpc, o->contract);
  if (bbvfl_aggc_params(&ag, &S->p, err) < 0) {
    bbvfl_wrap(err, "reading params() of the contract (is it a bbvfl aggregator?)");
    goto out;
  }
  res->params = S->p;
  memcpy(res->token, S->p.token, 20);
  if (check_params(S, err) < 0) goto out;
  S->hashed = S->p.cfg.hashed;
  S->per = (uint64_t)S->p.cfg.train_rounds + S->p.cfg.eval_rounds;
  S->max_coords = (size_t)bbvfl_cconfig_max_coords(&S->p.cfg);
  res->train_rows = S->p.cfg.train_rows;
  for (size_t k = 0; k < RING && !S->hashed; k++)
    if (!(S->ring[k] = calloc(S->max_coords, sizeof *S->ring[k]))) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
  res->rounds = calloc(BBVFL_AUDIT_MAX_BUCKETS, sizeof *res->rounds);
  if (!res->rounds) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  /* the schedule from the chain alone: params() records the training row count */
  if (o->train_rows && o->train_rows != S->p.cfg.train_rows)
    fail(S, BBVFL_AC_SCHEDULE, NULL, 0, 0, -1, NULL,
         "--train-rows %llu, but the session's params() record %u training rows (the permutation's size)",
         (unsigned long long)o->train_rows, S->p.cfg.train_rows);
  if ((uint64_t)S->p.cfg.batches_per_epoch * S->p.cfg.batch > S->p.cfg.train_rows) {
    fail(S, BBVFL_AC_SCHEDULE, NULL, 0, 0, -1, NULL,
         "%u training rows cannot fill R = %u minibatches of B = %u", S->p.cfg.train_rows,
         S->p.cfg.batches_per_epoch, S->p.cfg.batch);
  } else if (S->p.cfg.train_rows > (1u << 28)) {
    S->r->checks[BBVFL_AC_SCHEDULE].status = BBVFL_AS_SKIP;
    snprintf(S->r->checks[BBVFL_AC_SCHEDULE].note, sizeof S->r->checks[BBVFL_AC_SCHEDULE].note,
             "%u training rows: too many to re-derive the permutation here", S->p.cfg.train_rows);
  } else {
    S->perm = malloc((size_t)S->p.cfg.train_rows * sizeof *S->perm);
    S->perm_epoch = -1;
    if (!S->perm) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
  }
  uint64_t to = o->to_block;
  if (to == 0 && bbvfl_rpc_block_number(S->rpc, &to, err) < 0) goto out;
  res->from_block = o->from_block;
  res->to_block = to;
  uint64_t win = o->window ? o->window : 500;
  for (uint64_t b = o->from_block; b <= to;) {
    uint64_t e = (to - b >= win - 1) ? b + win - 1 : to;
    json_t *logs = NULL;
    bbvfl_err le = {0};
    if (get_logs(S, b, e, &logs, &le) < 0) {
      if (win > 1 && le.code != BBVFL_E_REVERT) { /* too many results or too large: smaller window */
        win /= 2;
        continue;
      }
      *err = le;
      bbvfl_wrap(err, "eth_getLogs blocks %llu..%llu", (unsigned long long)b, (unsigned long long)e);
      goto out;
    }
    size_t n = json_array_size(logs), bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += json_string_length(json_object_get(json_array_get(logs, i), "data"));
    if (process_window(S, logs, err) < 0) goto out;
    if (o->progress) o->progress(o->progress_ctx, e, o->from_block, to, res->logs, res->rounds_completed);
    b = e + 1;
    if (e == to) break;
    /* keep one answer near a few hundred logs and well under a few MB of data: memory stays flat */
    if (n < 256 && bytes < WINDOW_BYTES / 4 && win < MAX_WINDOW) win *= 2;
    else if ((n > 1024 || bytes > WINDOW_BYTES) && win > 1) win /= 2;
  }
  finish(S);
  res->elapsed_s = bbvfl_now() - t0;
  rc = 0;
out:
  if (rc < 0) bbvfl_audit_result_free(res);
  bbvfl_rpc_free(S->rpc);
  for (size_t i = 0; i < S->nslots; i++) free(S->slots[i].sum);
  free(S->slots);
  for (size_t k = 0; k < RING; k++) free(S->ring[k]);
  free(S->perm);
  free(S->leak);
  free(S);
  return rc;
}
