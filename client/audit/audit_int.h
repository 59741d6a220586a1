/* Private to client/audit: the verifier's state and the functions its files share. Not a public
 * interface (audit/audit.h is): only audit*.c include it.
 *
 * The files, one concern each:
 *   audit.c          the entry: params() checked, buffers, the run, clean-up
 *   audit_fetch.c    chain fetching: eth_getLogs windows, decoding, the batched transactions,
 *                    receipts and blocks a chunk of logs needs, the deployment check
 *   audit_state.c    the verifier state: failures, clients, rounds in flight, round figures
 *   audit_replay.c   event replay: the dispatch, registration, election, exclusions, re-opens
 *   audit_rounds.c   event replay: submissions, sums, gradients, label gradients, session end
 *   audit_rewards.c  event replay: metrics, payouts and their token transfers
 *   audit_balances.c the token's ledger from every Transfer, reconciled with balanceOf/totalSupply
 *   audit_finish.c   end of stream: stored sums, unpaid epochs, client figures, skips, privacy
 * (report.c writes the result; leak.c reads labels back from gradients.)
 *
 * Ownership: st_t is the run's state, owned by bbvfl_audit_run; the handlers borrow the decoded
 * event (bbvfl_cev) and what was fetched for it (fetched) for the call only. Failures are recorded
 * in S->r->checks (the first one of each check with its place), never returned. */
#ifndef BBVFL_AUDIT_INT_H
#define BBVFL_AUDIT_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "eth/rpc.h"
#include "binding/contract.h"
#include "core/headcheck.h"

#define AU_CHUNK 64             /* logs per prefetch batch */
#define AU_MAX_WINDOW 100000    /* blocks per eth_getLogs call, upper bound of the adaptive window */
#define AU_WINDOW_BYTES (1u << 20) /* hex characters of log data per eth_getLogs answer, target */
#define MAX_CLIENTS 64
#define RING 4 /* round slots the contract keeps (BbvflAggregator.RING) */

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

/* One account of the token's ledger (every address a Transfer named, every client, the aggregator). */
typedef struct {
  uint8_t addr[20];
  bbvfl_u256 bal;          /* balance from the Transfer events */
} holder_st;

#define MAX_SLOTS 64 /* rounds in flight at once (the hashed contract keeps a ring of HASH_RING) */
#define HASH_RING 8 /* round slots of BbvflHashAggregator: a submission goes to r < head + HASH_RING */

typedef struct {
  const bbvfl_audit_opts *o;
  bbvfl_audit_result *r;
  bbvfl_rpc *rpc;
  bbvfl_cparams p;         /* params(); T, V, totalRounds, maxCoords recomputed by the auditor */
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

  /* the token's ledger (audit_balances.c): sorted by address, owned */
  holder_st *hold; size_t nhold, caphold;
  int ledger_nomem;        /* the ledger could not grow: the balances check is skipped */

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
  /* the check `head` (audit_head.c): the replay, the open TRAIN round's emitted sum and count, its
     label-gradient posts in chain order (owned copies) */
  bbvfl_hcheck *hc;
  int hc_off, hc_failed, hc_active, hc_stopped;
  uint64_t hc_stop_round;
  uint32_t *hc_sum;
  uint64_t hc_sum_round;
  unsigned hc_contributors;
  uint8_t *hc_lp[MAX_CLIENTS];
  size_t hc_lplen[MAX_CLIENTS];
  int hc_lpwho[MAX_CLIENTS];
  size_t hc_nlp;
  /* optimistic mode: the latest SumClaimed (its round and sumHash), checked at the claim's
     RoundCompleted, which follows it in the same transaction and carries no sum */
  int claim_have;
  uint64_t claim_round;
  uint8_t claim_hash[32];
} st_t;

/* ------------------------------------------------------------------ audit_state.c */

/* Records a failure of check id (the first one with its place: ev's transaction and block, the
 * round, the epoch when >= 0, the client), counts the others. */
__attribute__((format(printf, 8, 0))) void bbvfl_au_failv(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev,
                                                    int has_round, uint64_t round, long long epoch,
                                                    const uint8_t *client, const char *fmt, va_list ap);
__attribute__((format(printf, 8, 9))) void bbvfl_au_fail(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev,
                                                   int has_round, uint64_t round, long long epoch,
                                                   const uint8_t *client, const char *fmt, ...);
/* A failure found in event ev about ev's client, outside any round / in ev's round. */
__attribute__((format(printf, 4, 5))) void bbvfl_au_client_fail(st_t *S, bbvfl_audit_check_id id, const bbvfl_cev *ev,
                                                          const char *fmt, ...);
__attribute__((format(printf, 4, 5))) void bbvfl_au_round_client_fail(st_t *S, bbvfl_audit_check_id id,
                                                                const bbvfl_cev *ev, const char *fmt, ...);
/* One more item of check id verified. */
void bbvfl_au_ok(st_t *S, bbvfl_audit_check_id id);

int bbvfl_au_find_client(const st_t *S, const uint8_t a[20]); /* client index, -1: not registered */
size_t bbvfl_au_n_participants(const st_t *S);
uint64_t bbvfl_au_participant_mask(const st_t *S);
int bbvfl_au_is_train(const st_t *S, uint64_t r);
bbvfl_round_layout bbvfl_au_layout(const st_t *S, uint64_t r); /* r below totalRounds: callers check */
uint64_t bbvfl_au_train_between(const st_t *S, uint64_t from, uint64_t to); /* TRAIN rounds in [from, to) */
int bbvfl_au_round_acceptable(const st_t *S, uint64_t r);
int bbvfl_au_epoch_complete(const st_t *S, uint64_t e);

/* Rounds in flight: the slot of round r (NULL: none; with create a fresh one, NULL only when out
 * of memory or MAX_SLOTS are in use), the head round's (created on first use), and forgetting a
 * slot's submissions. */
rslot *bbvfl_au_slot_of(st_t *S, uint64_t r, int create);
rslot *bbvfl_au_head(st_t *S);
void bbvfl_au_slot_clear(rslot *sl);

/* Per-epoch figures (NULL when e has none and create is 0, or out of memory). */
bbvfl_audit_epoch_fig *bbvfl_au_epoch_fig(st_t *S, uint32_t e, int create);
/* The head round is done: its figures closed, the next one opened (or the session ended). */
void bbvfl_au_open_next(st_t *S, const bbvfl_cev *ev, const fetched *fx);
/* Epoch e's permutation from the seed and its digest into the epoch's figures. */
void bbvfl_au_schedule_digest(st_t *S, uint32_t e);

/* ------------------------------------------------------------------ event replay */

/* audit_replay.c: one decoded log of the contract or its token, in (block, logIndex) order. */
void bbvfl_au_dispatch(st_t *S, const bbvfl_cev *ev, const fetched *fx);
void bbvfl_au_on_sum_claimed(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_on_registered(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_on_committed(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_on_revealed(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_on_excluded(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_on_elected(st_t *S, const bbvfl_cev *ev, const fetched *fx);
void bbvfl_au_on_label_holder(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_on_reopened(st_t *S, const bbvfl_cev *ev);
/* audit_rounds.c */
void bbvfl_au_on_submitted(st_t *S, const bbvfl_cev *ev, const fetched *fx);
void bbvfl_au_on_round_completed(st_t *S, const bbvfl_cev *ev, const fetched *fx);
void bbvfl_au_on_gradient(st_t *S, const bbvfl_cev *ev, const fetched *fx);
void bbvfl_au_on_label_gradient(st_t *S, const bbvfl_cev *ev, const fetched *fx);
void bbvfl_au_on_session_ended(st_t *S, const bbvfl_cev *ev);
/* audit_rewards.c */
void bbvfl_au_on_metrics(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_on_rewards_paid(st_t *S, const bbvfl_cev *ev, const fetched *fx);
void bbvfl_au_on_transfer(st_t *S, const bbvfl_cev *ev);
/* Epochs whose metrics and payout are both in: S->unsettled moves past them. */
void bbvfl_au_settle(st_t *S);
/* End of one payRewards call (its RewardsPaid events): nobody due may be left out. */
void bbvfl_au_close_rewards_group(st_t *S);

/* audit_balances.c: one Transfer into the ledger (any sender, any receiver); after the last log,
 * every account's balanceOf and the totalSupply at the last block read against it. */
void bbvfl_au_ledger_transfer(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_check_balances(st_t *S);

/* audit_head.c: the check `head` (core/headcheck.h). init after params() (skipped without the
 * session's training setup); sum at a TRAIN round's RoundCompleted; label for each valid
 * LabelGradientPosted; gradient for each valid GradientPosted (ai: the poster's index); finish
 * at the end (the figures and the note); clear frees. */
int bbvfl_au_head_init(st_t *S, bbvfl_err *err);
void bbvfl_au_head_sum(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_head_label(st_t *S, const bbvfl_cev *ev, int i);
void bbvfl_au_head_gradient(st_t *S, const bbvfl_cev *ev, int ai);
/* A GradientPosted that failed `gradients` (its poster, round or length): the replay cannot follow
 * the head past it and stops there (noted; `gradients` carries the failure). */
void bbvfl_au_head_stop(st_t *S, const bbvfl_cev *ev);
void bbvfl_au_head_finish(st_t *S);
void bbvfl_au_head_clear(st_t *S);

/* ------------------------------------------------------------------ audit_fetch.c, audit_finish.c */

/* Reads blocks [from, to] in adaptive eth_getLogs windows and replays every log; -1 when the node
 * fails (err filled). */
int bbvfl_au_read_range(st_t *S, uint64_t from, uint64_t to, bbvfl_err *err);
void bbvfl_au_fetched_clear(fetched *f);
/* After the last log: the end-of-stream checks and the result's figures. */
void bbvfl_au_finish(st_t *S);

#endif
