/* Private to the on-chain client (client/onchain/onchain*.c): the state of one client process and
 * the helpers its files share. Not a public header: nothing outside client/onchain/onchain*.c includes
 * it. The files by role (each sets up, frees and changes its own part of `cl`, below):
 *   onchain.c         setup (data, then the roles in order), registration and election, bbvfl_onchain_run
 *   onchain_summary.c the summary (summary.json), written once with the session's privacy
 *   onchain_wait.c    connection and sender: the node, transactions (submission gas and encoding, the
 *                     active client's transactions in flight), event queries, waiting (timeouts,
 *                     expiry, re-election nudges)
 *   onchain_rounds.c  rounds in flight: windows, pipelining (staleness), submissions, gradients
 *   onchain_sums.c    the round sums (lane: RoundCompleted; hashed: the payloads, aggregate())
 *   onchain_active.c  the active client's duties: the head, metrics, rewards, takeover
 *   onchain_labels.c  labels split across clients (label holders)
 *   onchain_ckpt.c    checkpoints and restart
 *   onchain_lr.c      the LR model's steps (`--model lr`): forward, the head, the gradient step
 *   onchain_hcheck.c  a passive client's check of the active client's posts (core/headcheck.h)
 *   onchain_dispute.c optimistic mode: a passive client's check of each posted sum, its dispute
 * Calls go one way (no ring): onchain.c -> every role; rounds -> active, labels, sums, lr, hcheck,
 * dispute, ckpt, wait; active -> labels, sums, lr, wait; labels -> sums, wait; sums -> lr, wait;
 * hcheck, dispute, ckpt -> wait; wait -> masked.c only. */
#ifndef BBVFL_VFL_ONCHAIN_INT_H
#define BBVFL_VFL_ONCHAIN_INT_H

#include "onchain/onchain.h"

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
#include "core/ckpt.h"
#include "binding/contract.h"
#include "core/head.h"
#include "core/lr_client.h"
#include "onchain/masked.h"
#include "binding/packing.h"
#include "core/party.h"
#include "core/schedule.h"
#include "core/setup.h"

#define POLL_MIN_S 0.0002
#define POLL_MAX_S 0.005

/* Hashed mode: the blocks where the latest rounds became done (a lower bound for the events of the
   rounds that follow them; the contract's ring is smaller than this). */
#define OC_DONE_RING 64

/* A round this client has submitted (or is about to) and not finished yet: with pipelining
   (staleness) or a pending evaluation round, more than one. */
typedef struct {
  uint64_t r;               /* the round; UINT64_MAX: the slot is free */
  bbvfl_round_layout L;
  size_t *rows;             /* L.rows table rows (capacity: the largest round) */
  uint8_t *q;               /* its q (a masked re-open re-masks the same q) */
  bbvfl_pending tx;         /* the submission, sent and not awaited yet (tx.raw NULL: none) */
  int submitted_before;     /* the chain had it before this process sent anything (a restart) */
  uint64_t sub_blk;         /* c->blk when it was submitted (RoundReopened events come after) */
} bbvfl_oc_slot;

/* A transaction of the active client sent and not awaited yet. */
/* What a transaction pays for, in the client's gas tally. */
enum { OC_GAS_OTHER = 0, OC_GAS_SUBMIT = 1, OC_GAS_AGGREGATE = 2, OC_GAS_GRADIENT = 3,
       OC_GAS_PAYOUT = 4 /* counted as other; waits cfg->confirmations blocks (cannot be undone) */ };

typedef struct {
  bbvfl_pending p;
  const char *what;
  int kind;              /* OC_GAS_* */
  uint64_t round;        /* aggregate(): its round (a revert is then judged by the chain) */
} bbvfl_oc_out;

/* Connection and sender (onchain_wait.c sets them up, frees them and changes them; the other files
   use rpc/snd through its functions). */
typedef struct {
  bbvfl_rpc *rpc;
  bbvfl_sender *snd;
  uint64_t outages_seen; /* bbvfl_rpc_outages at the last check (after_outage) */
  double last_expire;
  /* the last expireRound() attempt of round exp_r - 1 reverted with RoundNotTimedOut: the chain
     has not reached the round's deadline (block exp_deadline, 0: not said); exp_head is the head
     seen then, exp_moved_t when the head last moved (a chain still heading for the deadline is
     not a reason to give up) */
  uint64_t exp_r, exp_deadline, exp_head;
  double exp_moved_t;
  uint64_t only_active_late; /* r + 1 once round r was seen with every submission in (waiting for
                                the active client only: re-election's business, not expiry's) */
  bbvfl_oc_out *out;     /* the active client's transactions in flight */
  size_t nout, capout;
  /* where the events are (changed through bbvfl_oc_set_ev_blk, _raise_ev_blk, _set_done_blk) */
  uint64_t ev_blk;       /* the events of unfinished rounds are at or after this block */
  uint64_t done_blk[OC_DONE_RING]; /* hashed: block where round r became done, at r % OC_DONE_RING (0: unknown) */
} bbvfl_oc_conn;

/* Rounds in flight (onchain_rounds.c): the round structure (binding/contract.h: windows, evaluation
   rounds, pipelining, hashed aggregation). */
typedef struct {
  unsigned stale;        /* staleness s */
  bbvfl_oc_slot *slots;
  size_t nslots;
} bbvfl_oc_rounds;

/* The active client's progress of the open epoch (onchain_active.c). */
typedef struct {
  double loss_sum, agg_sum;
  /* re-election: rounds trained in the epoch this client took the head over (its loss average) */
  size_t trained;
  int takeover_epoch;    /* -1: none */
  /* optimistic mode: epochs pay_lo..pay_hi-1 may still be unpaid, their payout waiting for the
     dispute window (onchain_payout.c); pay_after: the window of pay_lo ends at this block (0: not
     known) */
  uint32_t pay_lo, pay_hi;
  uint64_t pay_after;
} bbvfl_oc_active;

/* Labels split across clients (onchain_labels.c; Algorithm 2, lines 11-14; docs/ONCHAIN.md "Labels"). */
typedef struct {
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
} bbvfl_oc_labels;

/* A passive client's check of the active client (onchain_hcheck.c). */
typedef struct {
  struct bbvfl_hcheck *st; /* NULL until the first check */
  uint64_t next;           /* rounds below it were checked (a restarted process catches up from 0) */
  uint8_t poster[20];      /* who posted the last gradient checked (another one: a takeover) */
  int have_poster;
} bbvfl_oc_hcheck;

/* Optimistic mode's disputes (onchain_dispute.c). */
typedef struct {
  uint64_t round;        /* the latest round whose claim was disputed (UINT64_MAX: none) and */
  uint64_t blk;          /* the block of its SumDisputed (the corrected RoundCompleted is in it; the new
                            gradient after it) */
  /* the active client's side (bbvfl_oc_repost_rolled_back): its latest postGradient() calldata
     post_cd (post_len bytes, owned; freed by bbvfl_oc_dispute_free) of round posted, the latest
     round it claimed (postSum), each UINT64_MAX when none, and when it last read currentRound() */
  uint64_t posted, claimed;
  uint8_t *post_cd;
  size_t post_len;
  uint64_t post_gas, post_blk; /* its gas limit and the block it was mined in */
  double checked_at;
} bbvfl_oc_dispute;

/* This client's latest calls (onchain_repair.c): each call's calldata, kept to be sent again when a
   reorg took it out of the chain and the copy its sender re-sent did not take effect. */
#define OC_KEPT 32
typedef struct {
  struct {
    uint8_t *cd; /* owned */
    size_t len;
    uint64_t gas;
    const char *what; /* static */
    int kind;
  } e[OC_KEPT];
  size_t n;          /* oldest first */
  int replaying;     /* a repair's send in progress: not kept again */
  double checked_at; /* when the chain was last asked */
  double lost_at;    /* when the sender last reported a vanished transaction (a reorg; 0: never) */
} bbvfl_oc_kept;

/* The state of one client process. The role sub-structs are each set up, freed and changed by the
   file named at their type (others read them); the fields at the top level are the session's
   constants (set once by onchain.c), the learning state (data, party or LR, head, schedule) and
   the round buffers that the round loop hands from one role to the next. */
typedef struct {
  const bbvfl_onchain_cfg *cfg;
  const bbvfl_session *sess;
  bbvfl_onchain_result *res;
  bbvfl_oc_conn conn;
  bbvfl_oc_rounds rd;
  bbvfl_oc_active act;
  bbvfl_oc_labels lab;
  bbvfl_oc_hcheck hck;
  bbvfl_oc_dispute disp;
  bbvfl_oc_kept kept;
  struct { int slot; } ck; /* checkpoints (onchain_ckpt.c): the slot of the latest one */
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
  /* the client's private noise key (dp/rng.h): read from dir/noise.key, else drawn from the OS
     and written there (mode 0600) once the state dir exists; unused with reproducible noise */
  uint8_t noise_key[32];
  int noise_key_new;     /* 1: drawn now, not yet on disk */
  /* buffers (c->n values: the largest round) */
  uint32_t *sum;
  float *grad, *probs;
  uint8_t *grad_be, *head_be;
  size_t head_len;
  int *yb, *yeval;
  /* masked mode (docs/MASKED.md): pair keys and participant set (a round's RoundReopened events are
     at or after its slot's sub_blk) */
  int masked;
  bbvfl_mclient mc;
  int hashed;
  int wire;              /* bbvfl_wire_mode (binding/packing.h): packed/optimistic submissions are bit-packed at
                            cp.value_bits, their sums at cp.sum_bits */
  struct bbvfl_oc_lr *lr;      /* model lr: its state (onchain_lr.c); NULL: the MLP (party, head) */
} cl;

void bbvfl_oc_log(const cl *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The sender's status callback: one progress line per event (fee waits with the base fee,
   replacements, re-sends, vanished receipts). */
void bbvfl_oc_sender_status(void *ctx, const bbvfl_sender_status *st);
int bbvfl_oc_tx(cl *c, const uint8_t *cd, size_t len, uint64_t gas, int is_submit, bbvfl_receipt *rc, const char *what,
          bbvfl_err *err);
int bbvfl_oc_receipt_event(const cl *c, const bbvfl_receipt *rc, bbvfl_cev_kind kind, uint64_t round, bbvfl_cev *ev,
                     bbvfl_err *err);
int bbvfl_oc_query_event(cl *c, bbvfl_cev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err);
int bbvfl_oc_missing_clients(cl *c, uint64_t round, char *out, size_t cap);
/* 1: round r takes a gradient (a training window or, LR with sqn, a curvature round), as the one
   round layout says (binding/contract.h bbvfl_cconfig_round; the rounds do not repeat every T + V
   once curvature rounds begin); 0: an evaluation round, or r past the session. */
int bbvfl_oc_is_train_round(const cl *c, uint64_t r);
/* The slot of round r (the ring of unfinished rounds). */
static inline bbvfl_oc_slot *bbvfl_oc_slot_of(const cl *c, uint64_t r) { return &c->rd.slots[r % c->rd.nslots]; }
/* Sends a transaction of the active client without waiting (its receipt is awaited by
   bbvfl_oc_out_wait): on a chain with a block time several of them land in one block. */
/* --submit-via-self: re-encodes submit calldata *cd (malloc'd, replaced) as execute(aggregator,
   calldata) and sets *to to this client's own address; otherwise *to = the aggregator. */
int bbvfl_oc_submit_via(const cl *c, uint8_t **cd, size_t *len, const uint8_t **to, bbvfl_err *err);
int bbvfl_oc_out_send(cl *c, const uint8_t *cd, size_t len, uint64_t gas, const char *what, int kind, bbvfl_err *err);
/* Awaits every transaction in flight, in nonce order. A revert is an error naming the call
   (err->code BBVFL_E_REVERT); the later ones are still awaited. */
int bbvfl_oc_out_wait(cl *c, bbvfl_err *err);
/* The round's sum into c->sum (sl->L.coords values) and the count it covers into the head: lane mode
   from RoundCompleted; hashed mode from the submitted payloads (read from the chain, checked
   against their Submitted hashes), whose aggregate() call it sends. */
int bbvfl_oc_round_sum(cl *c, bbvfl_oc_slot *sl, const bbvfl_receipt *rc, bbvfl_err *err);
/* The active client's step for a training window: the head through its nb batches (or, with
   labels split, from the holders' dLoss/dlogits), c->grad = the nb gradients. */
int bbvfl_oc_active_train(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err);
/* Evaluation scores of an evaluation round into c->probs. */
int bbvfl_oc_active_eval(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err);
void bbvfl_oc_path_in(const cl *c, char *out, size_t cap, const char *name);
void bbvfl_oc_rpc_wait_log(void *ctx, const char *msg);

/* A client that has waited too long for round r: a passive client calls reelect() when r is
   complete without a gradient; expireRound() when r is incomplete and either the active client has
   not submitted it or this client is the active client (then the missing ones are excluded). A revert
   means "not overdue yet" (on an automining devnet the attempt itself mined a block). 1: this client
   is now the active client; 0: not (*reset = 1 when another client became active: the wait starts
   over); -1: error. */
int bbvfl_oc_nudge_active(cl *c, uint64_t round, int *reset, bbvfl_err *err);
int bbvfl_oc_expire_wait_step(cl *c, uint64_t r, double waited, bbvfl_err *err);
int bbvfl_oc_after_outage(cl *c, uint64_t round, bbvfl_err *err);
int bbvfl_oc_wait_event(cl *c, bbvfl_cev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err);
int bbvfl_oc_wait_phase(cl *c, bbvfl_phase want, bbvfl_phase *got, const char *what, bbvfl_err *err);
/* Checkpoint at the start of round next_round: every round below first_open is finished, the
   rounds first_open..next_round-1 are submitted and unfinished (their activations are in the
   party's checkpoint). */
int bbvfl_oc_save_progress(cl *c, uint64_t next_round, uint64_t first_open, bbvfl_err *err);
int bbvfl_oc_load_progress(cl *c, uint64_t *next, uint64_t *first_open, bbvfl_err *err);
int bbvfl_oc_take_contributors(cl *c, uint64_t r, unsigned n, bbvfl_err *err);
int bbvfl_oc_sum_from_event(cl *c, const bbvfl_cev *ev, uint64_t coords, bbvfl_err *err);
uint64_t bbvfl_oc_submit_gas(const cl *c, uint64_t coords);
int bbvfl_oc_fill_metrics(cl *c, uint32_t e, bbvfl_err *err);
int bbvfl_oc_post_epoch(cl *c, uint32_t e, bbvfl_err *err);
/* This client's calls to the aggregator kept for a repair (onchain_repair.c): keeps a copy of cd
   (the oldest of OC_KEPT dropped); 0 or -1 (out of memory). */
int bbvfl_oc_keep_call(cl *c, const uint8_t *cd, size_t len, uint64_t gas, const char *what, int kind, bbvfl_err *err);
/* After a reorg (within 10 minutes of the sender reporting a vanished transaction): when nothing
   of this client's own is on its way (the sender's next nonce = the chain's) and one of its kept
   calls would now go through (asked as a call, oldest first), that call is sent again and waited
   for. 1 sent, 0 nothing to do (or asked less than 0.5 s ago), -1 error. */
int bbvfl_oc_repair_lost(cl *c, bbvfl_err *err);
void bbvfl_oc_kept_free(cl *c);
/* Optimistic mode (onchain_payout.c): epochs below `upto` are due for payment (queued). */
void bbvfl_oc_payout_queue(cl *c, uint32_t upto);
/* Pays the queued epochs whose dispute windows have closed, in order (a call first: a transaction
   only when it goes through); wait = 0 stops at the first epoch still inside its window, wait = 1
   (the session's end) waits for each window (asking a node that makes blocks only for
   transactions to mine). Nothing to do when this client is not active. 0, or -1 with err. */
int bbvfl_oc_payout_due(cl *c, int wait, bbvfl_err *err);
int bbvfl_oc_demoted(cl *c, uint64_t r, bbvfl_err *err);
int bbvfl_oc_init_head(cl *c, bbvfl_err *err);
int bbvfl_oc_find_event(cl *c, bbvfl_cev_kind kind, uint64_t round, bbvfl_cev *ev, bbvfl_err *err);
int bbvfl_oc_rebuild_eval(cl *c, uint64_t e, size_t count, bbvfl_err *err);
int bbvfl_oc_take_over(cl *c, uint64_t r, bbvfl_err *err);
int bbvfl_oc_init_label_rows(cl *c, bbvfl_err *err);
int bbvfl_oc_label_dp(cl *c, bbvfl_err *err);
int bbvfl_oc_own_label_grad(cl *c, const bbvfl_oc_slot *sl, bbvfl_err *err);
/* Calls fn(ctx, holder, ev, err) for each LabelGradientPosted(r) of this session's aggregator from
   block from_blk on, in chain order, whose poster is a session label holder (holder: its index in
   c->lab.addrs). ev is valid during the call only. Stops at fn's first negative return. 0 or -1. */
typedef int (*bbvfl_oc_label_post_fn)(void *ctx, int holder, const bbvfl_cev *ev, bbvfl_err *err);
int bbvfl_oc_each_label_post(cl *c, uint64_t r, uint64_t from_blk, bbvfl_oc_label_post_fn fn, void *ctx,
                             bbvfl_err *err);
int bbvfl_oc_scan_label_posts(cl *c, uint64_t r, size_t nk, uint64_t need, uint64_t *got, int add, bbvfl_err *err);
int bbvfl_oc_active_split_step(cl *c, const bbvfl_oc_slot *sl, double *loss, bbvfl_err *err);
int bbvfl_oc_holder_post(cl *c, bbvfl_oc_slot *sl, const bbvfl_receipt *rc, int check_chain, bbvfl_err *err);
int bbvfl_oc_holder_eval(cl *c, bbvfl_oc_slot *sl, const bbvfl_cev *rcev, bbvfl_err *err);
/* Model lr (onchain_lr.c). bbvfl_oc_lr_init takes x (the client's columns, ownership taken) and builds
   this client's LR state as the off-chain trainer builds client `index`; bbvfl_oc_lr_init_head the
   head (K biases) and c->head_be. */
int bbvfl_oc_lr_init(cl *c, float *x, size_t ncols, int index, bbvfl_err *err);
int bbvfl_oc_lr_init_head(cl *c, bbvfl_err *err);
void bbvfl_oc_lr_free(cl *c);
/* The sum's contributor count for the PBM estimate. */
void bbvfl_oc_lr_contributors(cl *c, unsigned n);
/* Logical batches per epoch (1 with the full batch): the training loss is their mean. */
size_t bbvfl_oc_lr_batches(const cl *c);
/* Round sl's partial logits released into sl->q. */
int bbvfl_oc_lr_forward(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err);
/* The active client: the head on training round sl's sum (c->grad: the rows' dLoss/dz, c->head_be:
   the biases after it), or the scores of evaluation round sl into c->probs. */
int bbvfl_oc_lr_active_train(cl *c, bbvfl_oc_slot *sl, double *loss, size_t *batches, bbvfl_err *err);
int bbvfl_oc_lr_active_eval(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err);
/* Training round sl's gradient (c->grad) kept; the logical batches it completes stepped. */
int bbvfl_oc_lr_apply(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err);
int bbvfl_oc_run_rounds(cl *c, uint64_t start, uint64_t first_open, int resumed, bbvfl_err *err);
/* A passive client's check, before it applies anything, of the gradient and head parameters the
   active client posted for training round sl (gp: its GradientPosted; from_blk: a block at or
   before the round's RoundCompleted) with the replay of core/headcheck.h, on the round's public sum.
   Rounds not checked yet by this process (a restart) are checked first, from the chain. 0: consistent
   (or the check is off, or not done for this kind of session: res->head_skipped says why); -1: an
   error, or BBVFL_E_VERIFY when the post deviates (res->head_refused, round and verdict set): the
   caller must not apply it. */
int bbvfl_oc_head_check(cl *c, const bbvfl_oc_slot *sl, const bbvfl_cev *gp, uint64_t from_blk, bbvfl_err *err);
void bbvfl_oc_head_check_free(cl *c);
/* Optimistic mode, a passive client (onchain_dispute.c): waits for round sl's claimed sum
   (RoundCompleted with SumClaimed), recomputes it from the round's payloads in the SubmittedPayload
   logs and, when it differs, disputes it (or finds the dispute another client sent), then records
   the roll-back in c->disputed_round/_blk. 0: the sum stands (or was corrected and another client is
   active); 2: corrected and this client is now the active client (the caller takes over); -1: error.
   Other modes: 0 at once. */
int bbvfl_oc_check_claim(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err);
/* Optimistic mode (onchain_dispute.c): the sum of a claimed round (its RoundCompleted rc, which
   carries no sum) into c->sum (coords values): the sum of the payloads the claim covers, read from
   the round's SubmittedPayload logs. Whether the claimed hash matches is bbvfl_oc_check_claim's
   business (a wrong claim is disputed and the round redone with this same sum). 0 or -1. */
int bbvfl_oc_claimed_sum(cl *c, const bbvfl_cev *rc, uint64_t coords, bbvfl_err *err);
/* Optimistic mode, the active client (onchain_dispute.c): bbvfl_oc_note_claim records that it
   sent round r's postSum(); bbvfl_oc_note_post keeps a copy of the postGradient() calldata cd (len
   bytes, sent with gas limit gas) of round r it got mined (in block c->blk) (0 or -1 NOMEM). bbvfl_oc_repost_rolled_back, called from the
   active client's waits (at most one read of currentRound() per 0.2 s): when a dispute rolled the
   session back to the round whose gradient this client posted last (another participant's wrong
   claim, disputed after the post), sends that same postGradient() again (its gradient came from the
   payloads' sum, which the dispute's RoundCompleted restates) and waits for it. 0: no roll-back
   (or other modes, or not active); 1: posted again; -1: error (BBVFL_E_STATE when the roll-back
   goes back before rounds this client already claimed or posted: redoing those is not built). */
void bbvfl_oc_note_claim(cl *c, uint64_t r);
int bbvfl_oc_note_post(cl *c, uint64_t r, const uint8_t *cd, size_t len, uint64_t gas, bbvfl_err *err);
int bbvfl_oc_repost_rolled_back(cl *c, bbvfl_err *err);
void bbvfl_oc_dispute_free(cl *c);

/* Role set-up and tear-down, each in the file that owns the state (docs/ARCHITECTURE.md "On-chain
   client roles"): the connection (node, contract parameters) and the sender (onchain_wait.c);
   the slots of the rounds in flight (onchain_rounds.c; maxrows: rows of the largest round); the
   label state (onchain_labels.c: the rows' labels, label DP, the dLoss/dlogits buffers; after the
   election, the declared holders and the client list). The *_free/close functions take a
   half-built state. */
int bbvfl_oc_conn_open(cl *c, uint64_t *chain_id, bbvfl_err *err);
int bbvfl_oc_sender_open(cl *c, uint64_t chain_id, bbvfl_err *err);
void bbvfl_oc_conn_close(cl *c);
void bbvfl_oc_out_free(cl *c);
int bbvfl_oc_rounds_init(cl *c, size_t maxrows, bbvfl_err *err);
void bbvfl_oc_rounds_free(cl *c);
int bbvfl_oc_labels_init(cl *c, bbvfl_err *err);
int bbvfl_oc_labels_holders(cl *c, bbvfl_err *err);
void bbvfl_oc_labels_free(cl *c);

/* The event cursors (onchain_wait.c): the events of unfinished rounds from block b on (set; raise:
   only forward); hashed mode: round r became done in block b. */
void bbvfl_oc_set_ev_blk(cl *c, uint64_t b);
void bbvfl_oc_raise_ev_blk(cl *c, uint64_t b);
void bbvfl_oc_set_done_blk(cl *c, uint64_t r, uint64_t b);
/* The open epoch's tallies start afresh (a training window of index 0): the active client's
   (onchain_active.c; dt: time spent on a round's sum) and a label holder's (onchain_labels.c). */
void bbvfl_oc_active_epoch_start(cl *c);
void bbvfl_oc_active_agg_time(cl *c, double dt);
void bbvfl_oc_labels_epoch_start(cl *c);

#endif
