/* Event replay: the dispatch of each log, and the session's setup history (registration, the
 * commit-reveal election, re-elections, exclusions, masked mode's re-opened rounds). */
#include <stdlib.h>
#include <string.h>

#include "audit/audit_int.h"
#include "eth/keccak.h"
#include "eth/wallet.h"
#include "binding/packing.h"

void bbvfl_au_on_registered(st_t *S, const bbvfl_cev *ev) {
  uint8_t a[20];
  /* a bad key is reported; the client still counts as registered (the contract says so), so the
     rest of the history is judged on its own terms */
  if (ev->data_len != 64) {
    bbvfl_au_client_fail(S, BBVFL_AC_REGISTRATION, ev, "public key is %zu bytes, not 64", ev->data_len);
  } else {
    bbvfl_pub_to_addr(ev->data, a);
    if (memcmp(a, ev->client, 20))
      bbvfl_au_client_fail(S, BBVFL_AC_REGISTRATION, ev, "public key does not hash to the client's address");
  }
  if (bbvfl_au_find_client(S, ev->client) >= 0) {
    bbvfl_au_client_fail(S, BBVFL_AC_REGISTRATION, ev, "registered twice");
    return;
  }
  if (S->ncl >= S->p.cfg.clients || S->ncl >= MAX_CLIENTS) {
    bbvfl_au_client_fail(S, BBVFL_AC_REGISTRATION, ev, "registration after it closed at M = %u clients",
         S->p.cfg.clients);
    return;
  }
  if (ev->index != S->ncl)
    bbvfl_au_client_fail(S, BBVFL_AC_REGISTRATION, ev, "index %u, expected %zu (registration order)",
         ev->index, S->ncl);
  if (S->r->has_members && !S->r->registration_open) {
    int member = 0;
    for (int i = 0; !member && i < S->r->nmembers; i++) member = !memcmp(S->r->members[i], ev->client, 20);
    if (!member)
      bbvfl_au_client_fail(S, BBVFL_AC_REGISTRATION, ev, "registered, but the session is closed to its %d members",
                           S->r->nmembers);
  }
  client_st *c = &S->cl[S->ncl++];
  memset(c, 0, sizeof *c);
  memcpy(c->addr, ev->client, 20);
  if (S->ncl == S->p.cfg.clients) {
    S->closed = 1;
    S->close_block = ev->block_number;
  }
  bbvfl_au_ok(S, BBVFL_AC_REGISTRATION);
}

void bbvfl_au_on_committed(st_t *S, const bbvfl_cev *ev) {
  int i = bbvfl_au_find_client(S, ev->client);
  if (i < 0) {
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "commitment from an unregistered address");
    return;
  }
  client_st *c = &S->cl[i];
  if (!S->closed) bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "commit while registration was open");
  else if (ev->block_number > S->close_block + S->p.cfg.commit_blocks)
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "commit in block %llu after the deadline %llu",
         (unsigned long long)ev->block_number, (unsigned long long)(S->close_block + S->p.cfg.commit_blocks));
  if (c->committed) bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "committed twice");
  c->committed = 1;
  memcpy(c->commitment, ev->word, 32);
  S->committed_n++;
  bbvfl_au_ok(S, BBVFL_AC_ELECTION);
}

void bbvfl_au_on_revealed(st_t *S, const bbvfl_cev *ev) {
  int i = bbvfl_au_find_client(S, ev->client);
  if (i < 0) {
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "reveal from an unregistered address");
    return;
  }
  client_st *c = &S->cl[i];
  uint64_t cd = S->close_block + S->p.cfg.commit_blocks;
  if (!c->committed) bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "reveal without a commitment");
  if (c->revealed) bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "revealed twice");
  if (S->elected) bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "reveal after the election");
  if (!(S->committed_n == (int)S->p.cfg.clients || ev->block_number > cd))
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "reveal before every client committed or the commit deadline");
  if (ev->block_number > cd + S->p.cfg.reveal_blocks)
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "reveal after the reveal deadline");
  uint8_t cm[32];
  bbvfl_election_commitment(ev->word, ev->client, S->r->contract, S->r->chain_id, cm);
  if (c->committed && memcmp(cm, c->commitment, 32))
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev,
         "keccak256(secret, client, contract, chain id) does not match the commitment");
  c->revealed = 1;
  memcpy(c->secret, ev->word, 32);
  S->revealed_n++;
  bbvfl_au_ok(S, BBVFL_AC_ELECTION);
}

void bbvfl_au_on_excluded(st_t *S, const bbvfl_cev *ev) {
  int i = bbvfl_au_find_client(S, ev->client);
  if (i < 0) {
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "exclusion of an unregistered address");
    return;
  }
  client_st *c = &S->cl[i];
  if (c->excluded) bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "excluded twice");
  if (ev->reason == 1 || ev->reason == 2) {
    int want = c->committed ? 2 : 1;
    if (S->elected) bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "election exclusion after the election");
    if (c->revealed) bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "excluded although it revealed");
    else if (ev->reason != want)
      bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "exclusion reason %u, expected %d", ev->reason, want);
  } else if (ev->reason == 3) {
    const rslot *h = S->elected && !S->ended ? bbvfl_au_slot_of(S, S->round, 0) : NULL;
    if (!S->elected || S->ended || !c->participant)
      bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client, "round exclusion of a non-participant");
    else if (h && (h->sub_mask >> i & 1))
      bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client, "excluded for a missed round it submitted to");
    else if (!h || h->nsub_all == 0)
      bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client, "round expired with no submission");
    else if (ev->block_number <= S->opened_at + S->p.cfg.round_timeout_blocks)
      bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client,
           "round expired in block %llu, before its timeout (opened %llu + %llu blocks)",
           (unsigned long long)ev->block_number, (unsigned long long)S->opened_at,
           (unsigned long long)S->p.cfg.round_timeout_blocks);
    c->participant = 0;
    if (S->hashed && !S->p.cfg.masked && S->elected && !S->ended) { /* head is complete with the others */
      S->head_full = 1;
      S->head_full_at = ev->block_number;
      S->head_base = ev->block_number;
    }
  } else if (ev->reason == 4 && S->p.cfg.wire == BBVFL_WIRE_OPTIMISTIC) {
    /* optimistic mode: the claimer of a disputed sum (SumDisputed follows in the same transaction;
       the wrong claim itself fails `sums`) */
    if (!S->elected || S->ended || !c->participant)
      bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client, "dispute exclusion of a non-participant");
    c->participant = 0;
  } else {
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "unknown exclusion reason %u", ev->reason);
  }
  c->excluded = 1;
  c->reason = ev->reason;
  bbvfl_au_ok(S, BBVFL_AC_ELECTION);
}

/* The initial election's timing: after registration closed, once every committed client revealed
 * (and all M committed, or the commit deadline passed), or after the reveal deadline. */
static void check_election_time(st_t *S, const bbvfl_cev *ev) {
  uint64_t cd = S->close_block + S->p.cfg.commit_blocks;
  int early_ok = S->revealed_n == S->committed_n && (S->committed_n == (int)S->p.cfg.clients || ev->block_number > cd);
  if (!S->closed || (!early_ok && ev->block_number <= cd + S->p.cfg.reveal_blocks))
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "election before every reveal or the reveal deadline");
}

/* The revealed clients become the participants; S = keccak256 of their secrets in client order.
 * Returns how many revealed, -1 when out of memory. */
static long take_participants(st_t *S, const bbvfl_cev *ev) {
  uint8_t(*secrets)[32] = malloc((S->ncl ? S->ncl : 1) * 32);
  size_t n = 0;
  if (!secrets) return -1;
  for (size_t i = 0; i < S->ncl; i++) {
    if (S->cl[i].revealed) {
      memcpy(secrets[n++], S->cl[i].secret, 32);
      S->cl[i].participant = 1;
    } else if (!S->cl[i].excluded) {
      bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, S->cl[i].addr, "did not reveal but was not excluded");
    }
  }
  bbvfl_election_seed((const uint8_t(*)[32])secrets, n, S->seed);
  free(secrets);
  memcpy(S->eseed, S->seed, 32);
  memcpy(S->r->seed, S->seed, 32);
  S->r->has_seed = 1;
  S->elected = 1;
  return (long)n;
}

/* The k-th participant (client index order), skipping client `skip` (-1: none); -1 when none. */
static int nth_participant(const st_t *S, uint64_t k, int skip) {
  for (size_t i = 0; i < S->ncl; i++) {
    if (!S->cl[i].participant || (int)i == skip) continue;
    if (k-- == 0) return (int)i;
  }
  return -1;
}

/* Elected(seed, active, 0, n, 0): the first election. */
static void initial_election(st_t *S, const bbvfl_cev *ev, const fetched *fx, int ai) {
  if (S->elected) {
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "second initial election");
    return;
  }
  check_election_time(S, ev);
  long n = take_participants(S, ev);
  if (n < 0) return;
  if (n == 0) {
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "election with no reveal should have ended the session");
    return;
  }
  if (memcmp(S->seed, ev->word, 32))
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "seed is not keccak256 of the revealed secrets in client order");
  if (ev->participants != n)
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "%u participants announced, %ld revealed", ev->participants, n);
  int want = nth_participant(S, bbvfl_election_pick(S->seed, (uint64_t)n), -1);
  if (ai != want)
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "active client is not participants[S mod n]");
  if (ev->round != 0) bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 0, 0, -1, NULL, "initial election from round %llu",
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
  bbvfl_au_ok(S, BBVFL_AC_ELECTION);
}

/* Reason 1 of a re-election: the active client missed a deadline (activeBlocks after the head
 * had everything it needed, or after an epoch's completion for its metrics and payout). */
static int active_overdue(const st_t *S, uint64_t block) {
  uint64_t ab = S->p.cfg.active_blocks;
  if (!S->ended && S->hashed && S->head_full) {
    /* hashed: while the head has every participant's submission, counted as the contract does
       (BbvflHashAggregator: roundState().completedAt), not from the last submission */
    uint64_t from = S->head_base > S->active_since ? S->head_base : S->active_since;
    if (block > from + ab) return 1;
  } else if (!S->ended && !S->hashed && S->complete && bbvfl_au_is_train(S, S->round)) {
    uint64_t from = S->completed_at > S->active_since ? S->completed_at : S->active_since;
    if (block > from + ab) return 1;
  }
  if (S->unsettled < S->p.cfg.epochs && bbvfl_au_epoch_complete(S, S->unsettled) && S->epoch_done_any) {
    uint64_t from = S->epoch_done_block > S->active_since ? S->epoch_done_block : S->active_since;
    return block > from + ab;
  }
  return 0;
}

/* Why a re-election happened: 1 the active client overdue, 2 it was excluded by expireRound. */
static void check_reelection_reason(st_t *S, const bbvfl_cev *ev) {
  if (ev->reason == 1) {
    if (!active_overdue(S, ev->block_number))
      bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, S->active >= 0 ? S->cl[S->active].addr : NULL,
              "re-election in block %llu without a missed deadline of the active client",
              (unsigned long long)ev->block_number);
  } else if (ev->reason == 2) {
    if (S->active < 0 || S->cl[S->active].participant)
      bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, NULL, "re-election (reason 2) while the active client is in");
  } else {
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, NULL, "unknown election reason %u", ev->reason);
  }
}

/* The client the seed chain picks: s = keccak256(previous seed, round); among the participants
 * other than the current active one (or, when it is out or alone, as the contract does). */
static int reelection_pick(const st_t *S, const uint8_t s[32], size_t np) {
  if (np == 0) return -1;
  int cur_in = S->active >= 0 && S->cl[S->active].participant;
  if (cur_in && np == 1) return S->active;
  if (!cur_in) return nth_participant(S, bbvfl_election_pick(s, np), -1);
  return nth_participant(S, bbvfl_election_pick(s, np - 1), S->active);
}

/* Elected(seed', active', round, n, reason 1|2): a re-election. */
static void reelection(st_t *S, const bbvfl_cev *ev, int ai) {
  if (!S->elected) {
    bbvfl_au_client_fail(S, BBVFL_AC_ELECTION, ev, "re-election before the election");
    return;
  }
  S->r->reelections++;
  check_reelection_reason(S, ev);
  uint8_t buf[40], s[32];
  memcpy(buf, S->eseed, 32);
  for (int j = 0; j < 8; j++) buf[32 + j] = (uint8_t)(S->round >> (56 - 8 * j));
  bbvfl_keccak256(buf, 40, s);
  if (memcmp(s, ev->word, 32))
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, NULL, "re-election seed is not keccak256(previous seed, round)");
  if (ev->round != S->round)
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, NULL, "re-election names round %llu, the open round is %llu",
            (unsigned long long)ev->round, (unsigned long long)S->round);
  memcpy(S->eseed, s, 32);
  size_t np = bbvfl_au_n_participants(S);
  int want = reelection_pick(S, s, np);
  if (ai != want || ev->participants != np)
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, S->round, -1, ev->client,
            "re-elected client is not the one the seed chain picks among the other participants");
  S->active = want;
  S->active_since = ev->block_number;
  bbvfl_au_ok(S, BBVFL_AC_ELECTION);
}

void bbvfl_au_on_elected(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  int ai = bbvfl_au_find_client(S, ev->client);
  if (ev->reason == 0) initial_election(S, ev, fx, ai);
  else reelection(S, ev, ai);
}

/* LabelHolder(client, index): emitted with the client's Registered event by registerLabelHolder. */
void bbvfl_au_on_label_holder(st_t *S, const bbvfl_cev *ev) {
  int i = bbvfl_au_find_client(S, ev->client);
  if (i < 0) {
    bbvfl_au_client_fail(S, BBVFL_AC_REGISTRATION, ev, "label holder that is not registered");
    return;
  }
  if (ev->index != (uint8_t)i || S->cl[i].label_holder) {
    bbvfl_au_client_fail(S, BBVFL_AC_REGISTRATION, ev, "LabelHolder event %s",
         S->cl[i].label_holder ? "twice for one client" : "with an index other than the registration's");
    return;
  }
  S->cl[i].label_holder = 1;
  bbvfl_au_ok(S, BBVFL_AC_REGISTRATION);
}

/* Masked mode: expireRound voided the open round and re-opened it for the clients that
 * submitted (RoundReopened(round, bitmap, n)). */
void bbvfl_au_on_reopened(st_t *S, const bbvfl_cev *ev) {
  uint64_t bitmap = ev->bitmap;
  /* lane mode: the open round; hashed mode: the head and every later round already submitted to */
  rslot *sl = NULL;
  int at_head = S->elected && !S->ended && ev->round == S->round && !S->complete;
  if (S->p.cfg.masked && S->elected && !S->ended) {
    if (at_head) sl = bbvfl_au_head(S);
    else if (S->hashed && ev->round > S->round) sl = bbvfl_au_slot_of(S, ev->round, 0);
  }
  if (!sl) {
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, ev->round, -1, NULL, "round re-opened outside an open masked round");
    return;
  }
  size_t np = bbvfl_au_n_participants(S);
  uint64_t part = bbvfl_au_participant_mask(S);
  /* re-opened for the participants left, who (at the head) are exactly the valid submitters */
  if (bitmap != part || (at_head && bitmap != (sl->sub_mask & (S->hashed ? part : ~(uint64_t)0))) ||
      ev->participants != np || (uint64_t)__builtin_popcountll(bitmap) != np)
    bbvfl_au_fail(S, BBVFL_AC_ELECTION, ev, 1, ev->round, -1, NULL,
         "re-opened for clients 0x%llx (n = %u), the valid submitters were 0x%llx (%zu participants)",
         (unsigned long long)bitmap, ev->participants, (unsigned long long)sl->sub_mask, np);
  else
    bbvfl_au_ok(S, BBVFL_AC_ELECTION);
  if (!S->min_reopen || np < S->min_reopen) S->min_reopen = np;
  if (!S->hashed)
    for (size_t i = 0; i < S->ncl; i++) /* the voided submissions are not accepted */
      if (sl->sub_mask >> i & 1) S->cl[i].accepted--;
  bbvfl_au_slot_clear(sl);
  memset(sl->sum, 0, (size_t)sl->L.coords * sizeof *sl->sum);
  if (at_head) {
    S->opened_at = ev->block_number;
    S->head_base = ev->block_number;
    S->head_full = 0;
  }
}

/* One log of the contract or its token, in (block, logIndex) order. A payout is the RewardsPaid
 * and Transfer events of one transaction: any other event closes it. */
void bbvfl_au_dispatch(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  S->r->logs++;
  if (ev->kind != BBVFL_EV_REWARDS_PAID && ev->kind != BBVFL_EV_TRANSFER) bbvfl_au_close_rewards_group(S);
  int from_agg = !memcmp(ev->emitter, S->r->contract, 20);
  int from_tok = !memcmp(ev->emitter, S->r->token, 20);
  if ((ev->kind == BBVFL_EV_TRANSFER) != from_tok || (!from_agg && !from_tok)) return;
  switch (ev->kind) {
    case BBVFL_EV_REGISTERED: bbvfl_au_on_registered(S, ev); break;
    case BBVFL_EV_COMMITTED: bbvfl_au_on_committed(S, ev); break;
    case BBVFL_EV_REVEALED: bbvfl_au_on_revealed(S, ev); break;
    case BBVFL_EV_EXCLUDED: bbvfl_au_on_excluded(S, ev); break;
    case BBVFL_EV_ELECTED: bbvfl_au_on_elected(S, ev, fx); break;
    case BBVFL_EV_SUBMITTED:
    case BBVFL_EV_SUBMITTED_PAYLOAD: bbvfl_au_on_submitted(S, ev, fx); break;
    case BBVFL_EV_SUM_CLAIMED: bbvfl_au_on_sum_claimed(S, ev); break;
    case BBVFL_EV_ROUND_COMPLETED: bbvfl_au_on_round_completed(S, ev, fx); break;
    case BBVFL_EV_GRADIENT_POSTED: bbvfl_au_on_gradient(S, ev, fx); break;
    case BBVFL_EV_METRICS_POSTED: bbvfl_au_on_metrics(S, ev); bbvfl_au_settle(S); break;
    case BBVFL_EV_REWARDS_PAID: bbvfl_au_on_rewards_paid(S, ev, fx); break;
    case BBVFL_EV_TRANSFER: bbvfl_au_on_transfer(S, ev); break;
    case BBVFL_EV_SESSION_ENDED: bbvfl_au_on_session_ended(S, ev); break;
    case BBVFL_EV_LABEL_HOLDER: bbvfl_au_on_label_holder(S, ev); break;
    case BBVFL_EV_LABEL_GRADIENT_POSTED: bbvfl_au_on_label_gradient(S, ev, fx); break;
    case BBVFL_EV_ROUND_REOPENED: bbvfl_au_on_reopened(S, ev); break;
    default: break; /* the token's Approval: a holder's allowance, not the session's history */
  }
}
