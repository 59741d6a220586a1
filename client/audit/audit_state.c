/* The verifier's state (audit_int.h): failures, clients, the rounds in flight, per-round and
 * per-epoch figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_int.h"
#include "eth/keccak.h"
#include "core/schedule.h"

/* ------------------------------------------------------------------ failures */

__attribute__((format(printf, 8, 0))) void bbvfl_au_failv(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev, int has_round, uint64_t round,
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

__attribute__((format(printf, 8, 9))) void bbvfl_au_fail(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev,
                                                       int has_round, uint64_t round, long long epoch,
                                                       const uint8_t *client, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bbvfl_au_failv(S, id, ev, has_round, round, epoch, client, fmt, ap);
  va_end(ap);
}

/* A failure found in event ev about ev's client, outside any round. */
__attribute__((format(printf, 4, 5))) void bbvfl_au_client_fail(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev,
                                                              const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bbvfl_au_failv(S, id, ev, 0, 0, -1, ev->client, fmt, ap);
  va_end(ap);
}

/* A failure found in event ev about ev's client in ev's round. */
__attribute__((format(printf, 4, 5))) void bbvfl_au_round_client_fail(st_t *S, bbvfl_audit_check_id id,
                                                                    const bbvfl_cev *ev, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bbvfl_au_failv(S, id, ev, 1, ev->round, -1, ev->client, fmt, ap);
  va_end(ap);
}

void bbvfl_au_ok(st_t *S, bbvfl_audit_check_id id) { S->r->checks[id].checked++; }

int bbvfl_au_find_client(const st_t *S, const uint8_t a[20]) {
  for (size_t i = 0; i < S->ncl; i++)
    if (!memcmp(S->cl[i].addr, a, 20)) return (int)i;
  return -1;
}

size_t bbvfl_au_n_participants(const st_t *S) {
  size_t n = 0;
  for (size_t i = 0; i < S->ncl; i++) n += S->cl[i].participant;
  return n;
}

int bbvfl_au_is_train(const st_t *S, uint64_t r) {
  bbvfl_round_layout L;
  bbvfl_err e = {0};
  return bbvfl_cconfig_round(&S->p.cfg, r, &L, &e) == 0 && L.train; /* curvature rounds take a gradient too */
}

/* The layout of round r (r below totalRounds: callers check). */
bbvfl_round_layout bbvfl_au_layout(const st_t *S, uint64_t r) {
  bbvfl_round_layout L;
  bbvfl_err e = {0};
  if (bbvfl_cconfig_round(&S->p.cfg, r, &L, &e) < 0) memset(&L, 0, sizeof L);
  return L;
}

/* Forgets a slot's submissions (payload copies freed). */
void bbvfl_au_slot_clear(rslot *sl) {
  for (size_t i = 0; i < MAX_CLIENTS; i++) {
    free(sl->pay[i]);
    sl->pay[i] = NULL;
  }
  sl->sub_mask = sl->ev_mask = 0;
  sl->nsub_valid = sl->nsub_all = 0;
  sl->sum_unknown = 0;
}

uint64_t bbvfl_au_participant_mask(const st_t *S) {
  uint64_t m = 0;
  for (size_t i = 0; i < S->ncl; i++)
    if (S->cl[i].participant) m |= (uint64_t)1 << i;
  return m;
}

/* The slot of round r, or NULL; with create, a fresh one (sum zeroed) when r has none. */
rslot *bbvfl_au_slot_of(st_t *S, uint64_t r, int create) {
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
  bbvfl_au_slot_clear(fr);
  uint32_t *sum = fr->sum;
  memset(fr, 0, sizeof *fr);
  fr->sum = sum;
  fr->used = 1;
  fr->round = r;
  fr->L = bbvfl_au_layout(S, r);
  memset(fr->sum, 0, (size_t)fr->L.coords * sizeof *fr->sum);
  return fr;
}

/* The head round's slot (created on first use). NULL only when out of memory. */
rslot *bbvfl_au_head(st_t *S) { return bbvfl_au_slot_of(S, S->round, 1); }

/* TRAIN rounds in [from, to). */
uint64_t bbvfl_au_train_between(const st_t *S, uint64_t from, uint64_t to) {
  uint64_t n = 0;
  for (uint64_t q = from; q < to; q++) n += bbvfl_au_is_train(S, q);
  return n;
}

/* Hashed mode: may a submission to round r be accepted now? r at or after the head round (the
 * head not complete when r is the head), before the end, and at most s TRAIN rounds in
 * [head, r) (EVAL rounds never gate). Lane mode: only the open (head) round. */
int bbvfl_au_round_acceptable(const st_t *S, uint64_t r) {
  if (r < S->round || r >= S->p.total_rounds) return 0;
  if (r == S->round) return !S->complete;
  if (!S->hashed || r - S->round >= HASH_RING) return 0;
  return bbvfl_au_train_between(S, S->round, r) <= S->p.cfg.staleness;
}

int bbvfl_au_epoch_complete(const st_t *S, uint64_t e) {
  if (!S->elected) return 0;
  uint64_t last = bbvfl_cconfig_epoch_start(&S->p.cfg, e + 1) - 1; /* the one round layout (curvature rounds) */
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

bbvfl_audit_epoch_fig *bbvfl_au_epoch_fig(st_t *S, uint32_t e, int create) {
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
void bbvfl_au_open_next(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  uint64_t blocks = ev->block_number >= S->opened_at ? ev->block_number - S->opened_at : 0;
  double secs = 0;
  if (fx->have_ts && S->opened_ts_ok && fx->ts >= S->opened_ts) secs = (double)(fx->ts - S->opened_ts);
  rslot *h = bbvfl_au_slot_of(S, S->round, 0);
  bbvfl_audit_push_round(S->r, S->round, h ? h->gas : 0, blocks, secs, h ? h->nsub_all : 0);
  if (S->hashed) /* every participant contributed to a done round (the contract counts rounds done) */
    for (size_t i = 0; i < S->ncl; i++) S->cl[i].accepted += S->cl[i].participant;
  if (h) {
    bbvfl_au_slot_clear(h);
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
  rslot *n = bbvfl_au_slot_of(S, S->round, 0);
  uint64_t part = bbvfl_au_participant_mask(S);
  if (n && (n->ev_mask & part) == part) { /* already submitted by everyone (pipelined) */
    S->head_full = 1;
    S->head_full_at = ev->block_number;
  }
}

void bbvfl_au_schedule_digest(st_t *S, uint32_t e) {
  bbvfl_audit_epoch_fig *f = bbvfl_au_epoch_fig(S, e, 1);
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
  bbvfl_au_ok(S, BBVFL_AC_SCHEDULE);
}
