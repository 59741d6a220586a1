/* The auditor: verifies a BbvflAggregator session's whole history from the chain alone
 * (events, transaction calldata, signatures, receipts, block headers), re-implementing the
 * contract's rules instead of trusting its views (views are read only for the session
 * parameters, and those are cross-checked against the deployment transaction's calldata).
 *
 * Streaming: logs are read with eth_getLogs over adaptive block windows and processed in
 * (block, logIndex) order in chunks; the transactions, receipts and blocks a chunk needs are
 * fetched in one JSON-RPC batch. State is O(M) plus the sums of the rounds in flight (the head
 * round, the oldest not done; in hashed mode also the rounds already submitted to ahead of it,
 * fewer than 8, with the participants' payloads until aggregate()), the last RING (4) complete
 * rounds' sums (lane mode), the permutation of one epoch, plus O(epochs) small per-epoch records;
 * per-round figures are kept in a fixed number of buckets (adjacent rounds are merged when a long
 * history fills them), so memory stays flat in the number of rounds.
 *
 * Rounds follow params(): epoch e has T = ceil(R/K) TRAIN windows then V = ceil(NE/ER) EVAL
 * rounds, each with its own length (bbvfl_cconfig_round): submissions rows*P values, sums rows*P
 * lanes, gradients 4*rows*P bytes, label gradients a non-zero multiple of 4*rows. Hashed mode
 * (params().hashed): a submission may go to a round r ahead of the head as long as at most
 * `staleness` TRAIN rounds lie in [head, r) (and r < head + 8); aggregate() forms the sum of the
 * participants' payloads of that moment, which the auditor recomputes from the SubmittedPayload
 * logs (so a submission through an EIP-7702 delegate or a contract wallet is audited alike; lane
 * mode's submissions are still read from the submit() calldata);
 * a participant is credited each round done (lane mode: each accepted submission).
 *
 * Ownership: bbvfl_audit_run fills a caller-owned bbvfl_audit_result whose arrays are malloc'd
 * inside it; bbvfl_audit_result_free releases them. Nothing here prints: progress goes to an
 * optional callback, reports are written by audit/report.h. */
#ifndef BBVFL_AUDIT_AUDIT_H
#define BBVFL_AUDIT_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/privacy.h"
#include "eth/u256.h"
#include "binding/contract.h"
#include "binding/session.h"
#include "core/config.h"

/* The checks, in report order. */
typedef enum {
  BBVFL_AC_PARAMS = 0,   /* params() against the deployment calldata; token deployed by it */
  BBVFL_AC_REGISTRATION, /* Registered: index order, pubkey -> address, at most M, closes at M */
  BBVFL_AC_ELECTION,     /* commits/reveals/deadlines, seed, active, every re-election/exclusion justified */
  BBVFL_AC_SUBMISSIONS,  /* signer = registered participant, once, open round, length, range; hash = calldata
                            (lane mode; hashed mode: the payload from its SubmittedPayload log) */
  BBVFL_AC_SUMS,         /* every RoundCompleted sum, and every sum still stored (roundSum), = sum of
                            the submitted bytes (mod 2^16 masked); SessionEnded after the last round */
  BBVFL_AC_CONTRIBUTORS, /* every RoundCompleted's contributor count = the Submitted events of the
                            round (of its last attempt, masked) */
  BBVFL_AC_SCHEDULE,     /* minibatch permutation per epoch from S and params().trainRows (>= R*B); an
                            expected row count given by the caller must agree */
  BBVFL_AC_GRADIENTS,    /* GradientPosted by the active client, complete TRAIN rounds, once, length
                            4*rows*P of the window; LabelGradientPosted */
  BBVFL_AC_METRICS,      /* MetricsPosted by the active client, complete epochs, once, in range */
  BBVFL_AC_REWARDS,      /* RewardsPaid + Transfer = rate x new accepted submissions; nobody left out */
  BBVFL_AC_BALANCES,     /* the token's ledger rebuilt from every Transfer since its mint: balanceOf of
                            every account that ever appeared (and every client, the aggregator) at the
                            last block read = its ledger balance; no Transfer moves more than its
                            sender's ledger balance; totalSupply = minted - burned = params().rewardPool */
  BBVFL_AC_PRIVACY,      /* the accountant's epsilon for the parameters actually used */
  BBVFL_AC_HEAD,         /* the active client replayed (core/headcheck.h): every TRAIN round's posted gradient
                            is the session head's at the previously posted parameters for a class per row,
                            the same class for a training row in every epoch, and the posted parameters are
                            the optimizer's step; needs the session's training setup (opts.head_train) */
  BBVFL_AC_COUNT
} bbvfl_audit_check_id;

typedef enum { BBVFL_AS_PASS = 0, BBVFL_AS_FAIL = 1, BBVFL_AS_SKIP = 2 } bbvfl_audit_status;

/* The audit's verdict: FAIL when any check failed (whatever else), else INCOMPLETE when the session
 * has not finished (result.missing says what it lacks), else PASS. */
typedef enum { BBVFL_AV_PASS = 0, BBVFL_AV_FAIL = 1, BBVFL_AV_INCOMPLETE = 2 } bbvfl_audit_verdict;

typedef struct {
  int present;
  int has_round;  uint64_t round;
  int has_epoch;  uint32_t epoch;
  int has_tx;     uint8_t tx[32];
  int has_client; uint8_t client[20];
  uint64_t block;
  char detail[256];
} bbvfl_audit_failure;

typedef struct {
  bbvfl_audit_status status;
  uint64_t checked;   /* items verified (submissions, rounds, payments ...) */
  uint64_t failures;  /* discrepancies found */
  bbvfl_audit_failure first;
  char note[640];     /* why skipped, or what was checked */
} bbvfl_audit_check;

/* One bucket of rounds [round_lo, round_hi] (one round each unless the history was long). */
typedef struct {
  uint64_t round_lo, round_hi;
  uint64_t gas;          /* submissions + gradient post of these rounds */
  uint64_t blocks;       /* blocks from opening to completion, summed */
  double seconds;        /* block-timestamp seconds from opening to completion, summed */
  uint32_t submissions;
} bbvfl_audit_round_fig;

typedef struct {
  uint8_t addr[20];
  uint8_t index;
  int excluded; uint8_t excluded_reason;
  uint64_t accepted;          /* submissions the auditor accepted */
  uint64_t rewarded;          /* submissions covered by RewardsPaid */
  bbvfl_u256 paid;            /* sum of RewardsPaid amounts */
  bbvfl_u256 transferred;     /* sum of token Transfers from the aggregator */
  uint64_t gas;               /* gas of its submissions */
} bbvfl_audit_client_fig;

typedef struct {
  uint32_t epoch;
  int has_metrics;
  uint32_t auroc_micro, accuracy_micro;
  uint64_t loss_micro;
  int rewards_paid;
  int has_digest; uint8_t schedule_digest[32]; /* keccak256 of the permutation as uint64be */
} bbvfl_audit_epoch_fig;

#define BBVFL_AUDIT_MAX_BUCKETS 4096

#define BBVFL_AUDIT_MAX_MISSING 8

typedef struct {
  int ok;                       /* every check passed or was skipped (the verdict is not FAIL) */
  /* what a finished session has and this one lacks as of to_block (rounds not done, SessionEnded
     absent, epochs without metrics or payout, no election yet); nmissing = 0: it finished */
  unsigned nmissing;
  char missing[BBVFL_AUDIT_MAX_MISSING][160];
  bbvfl_audit_check checks[BBVFL_AC_COUNT];
  /* where */
  uint8_t contract[20], token[20];
  uint64_t from_block, to_block, deploy_block;
  int has_deploy;
  /* informational, not a check: the deployment's creation code against the product artifact
   * abi/BbvflAggregator.json ($BBVFL_ABI_DIR); the checks verify behaviour whatever the code */
  int code_known, code_matches;
  /* who could register, from the deployment's constructor arguments (has_members 0: not read, no
     deployment in range): registration_open 1, anyone (deployed so on purpose); else the
     nmembers addresses in members, and the registration check fails a Registered of anyone else */
  int has_members, registration_open, nmembers;
  uint8_t members[64][20];
  uint64_t chain_id;
  /* session */
  bbvfl_cparams params;
  uint8_t seed[32]; int has_seed;
  uint8_t active[20]; int has_active;
  uint64_t reelections;
  /* figures */
  uint64_t logs, rounds_completed, submissions, gradients, epochs_completed;
  uint64_t curv_rounds;     /* curvature rounds (model lr with sqn) whose post was checked */
  uint64_t labels_read;     /* on_labels: rows whose label was read back from a gradient */
  uint64_t labels_unread;   /* on_labels: gradients it could not be read from (rows) */
  uint64_t ahead;           /* submissions to a round after the head (hashed mode's pipelining) */
  uint64_t max_ahead;       /* the furthest such round, in rounds after the head */
  int session_ended;
  uint64_t gas_total;
  double seconds_total;
  bbvfl_audit_round_fig *rounds; size_t nrounds; uint64_t bucket_width;
  bbvfl_audit_client_fig *clients; size_t nclients;
  bbvfl_audit_epoch_fig *epochs; size_t nepochs;
  /* privacy */
  double delta, eps_feature, eps_sample, eps_masked_feature;
  int has_eps, has_masked_eps, eps_at_edge;
  bbvfl_privacy priv;           /* has_eps: every level and method (dp/privacy.h); eps_* above are its
                                   figures as printed (eps_sample: the per-person headline, the label
                                   composed in, INFINITY when the labels are unprotected) */
  int has_declared;             /* opts.declared_rowdp was given (row mode): declared below */
  bbvfl_privacy declared;       /* the same releases under the row mode the session file declares
                                   (end to end if that declaration is true: the chain cannot show it) */
  unsigned masked_participants; /* masked: the smallest participant set of the session (M minus the
                                   clients dropped by re-opened rounds); the masked bound is for it */
  uint64_t train_rows;          /* params().trainRows: the schedule's permutation size */
  /* the token (balances check) */
  int has_supply; bbvfl_u256 minted, burned, total_supply; /* from the Transfer events; totalSupply() */
  uint64_t holders;             /* accounts whose balanceOf was reconciled */
  /* the check `head` (core/headcheck.h): TRAIN rounds replayed, of them bit for bit, the largest
     deviations relative to each vector's largest value (0 when every round was exact) */
  uint64_t head_rounds, head_exact, head_batches, head_curv_skipped;
  double head_max_dev_grad, head_max_dev_params;
  double elapsed_s;
} bbvfl_audit_result;

/* Progress callback: blocks read so far out of the range, logs and rounds seen. */
typedef void (*bbvfl_audit_progress_fn)(void *ctx, uint64_t block, uint64_t from, uint64_t to, uint64_t logs,
                                         uint64_t rounds);

typedef struct {
  const char *rpc_url;
  uint8_t contract[20];
  uint64_t from_block;        /* first block to read (at or before the deployment) */
  uint64_t to_block;          /* 0: the latest block at start */
  uint64_t window;            /* initial eth_getLogs window in blocks (0: 500; adapts to the answers) */
  uint64_t train_rows;        /* expected N_train, cross-checked against params().trainRows (0: none; the
                                 schedule is always re-derived from the chain's count) */
  double delta;               /* for the epsilon (0: 1e-5) */
  /* Nullable, borrowed: the row mode (dp/rowdp.h) a session file declares. The chain records the
   * PBM releases but not how each client fitted its scaling, trained or encoded its rows, so the
   * audit's own figures are the releases' accounting (not end to end); with this it also reports
   * the accountant's end-to-end figures for the declared mode, labelled as declared. */
  const bbvfl_rowdp *declared_rowdp;
  /* What else a session file declares (0: nothing): label DP (randomized response once per
   * training row, this epsilon; the chain cannot show the draw, so it is reported as declared) and
   * reproducible noise (every DP draw regenerable from the file: no epsilon holds, none shown). */
  double declared_label_eps;
  int declared_reproducible;
  /* Nullable: called for every batch of every training window's valid GradientPosted with the
   * batch's labels as read back from the chain (audit/leak.h): labels[B], and rows[B] the batch's
   * training-row positions from the schedule (batch = the epoch's minibatch index; rows NULL
   * when the schedule cannot be derived). Borrowed for the call only. */
  void (*on_labels)(void *ctx, uint64_t round, uint64_t epoch, uint64_t batch, const int *labels,
                    const size_t *rows, size_t B);
  void *labels_ctx;
  /* Nullable (the attacks on a session's chain, audit/attack.h): on_release gets every valid
   * submission of a plain (not masked) round (client = its registration index, addr its address, contributors 0,
   * vals its L->coords values) and every RoundCompleted sum (client = -1, addr NULL, contributors its count;
   * masked: the lanes mod 2^16), with the round's layout and, for a TRAIN window whose schedule is
   * derivable, rows = the training-row positions of its L->rows rows (NULL otherwise; an EVAL
   * round's rows are the test rows L->first.. in order). on_params gets each TRAIN round's posted
   * head parameters (GradientPosted data2; curvature rounds excluded). Borrowed for the call. */
  void (*on_release)(void *ctx, uint64_t round, const bbvfl_round_layout *L, int client, const uint8_t *addr,
                     unsigned contributors, const uint32_t *vals, const size_t *rows);
  void (*on_params)(void *ctx, uint64_t round, const uint8_t *params_be, size_t len);
  void *release_ctx;
  /* Nullable, borrowed: the session's public training setup (the session file's "training": seed,
   * model, optimizer and schedule, mechanism, label DP) for the check `head`; NULL: `head` is
   * skipped. head_nclasses: the table's class count (0: read from the first posted head). */
  const bbvfl_offchain_cfg *head_train;
  int head_nclasses;
  bbvfl_audit_progress_fn progress; void *progress_ctx;
} bbvfl_audit_opts;

/* Runs the audit. Returns 0 when the audit ran to the end (res->ok says whether everything
 * holds), -1 when it could not (node unreachable, not a bbvfl aggregator ...; err filled and
 * *res freed). */
int bbvfl_audit_run(const bbvfl_audit_opts *opts, bbvfl_audit_result *res, bbvfl_err *err);
/* The options that audit the session s describes (its contract from its deployment block, what it
 * declares: row mode, label DP, reproducible noise, the training setup the check `head` replays)
 * on rpc_url (NULL: the session's node); delta 1e-5. s is borrowed for as long as *o is used. */
void bbvfl_audit_opts_for_session(const bbvfl_session *s, const char *rpc_url, bbvfl_audit_opts *o);
/* The checks r ran (not skipped) into *checks, how many failed into *failed, and the first failure
 * as "check: detail" into first (n bytes, "" when none). */
void bbvfl_audit_count(const bbvfl_audit_result *r, int *checks, int *failed, char *first, size_t n);
void bbvfl_audit_result_free(bbvfl_audit_result *res);

/* Appends one completed round's figures to res->rounds (an array of BBVFL_AUDIT_MAX_BUCKETS
 * entries allocated by the caller or by bbvfl_audit_run). When it is full, neighbouring buckets
 * are merged pairwise and bucket_width doubles, so memory stays fixed however long the history. */
void bbvfl_audit_push_round(bbvfl_audit_result *res, uint64_t round, uint64_t gas, uint64_t blocks, double secs,
                            uint32_t submissions);

/* Decodes the calldata of submit(uint64 round, bytes q) (hostile input: any offset the ABI
 * allows, every length checked). *q points into `in` (borrowed). Returns 0, or -1 with a
 * reason in why (size whyn). */
int bbvfl_audit_decode_submit(const uint8_t *in, size_t len, uint64_t *round, const uint8_t **q, size_t *qlen,
                              char *why, size_t whyn);

/* What the chain cannot show and the audit therefore trusts (the report lists it): i = 0, 1, ...
 * until NULL. */
const char *bbvfl_audit_trusted(size_t i);

/* "params", "registration", ... (the JSON names). */
const char *bbvfl_audit_check_name(bbvfl_audit_check_id id);
const char *bbvfl_audit_status_name(bbvfl_audit_status s); /* "PASS", "FAIL", "SKIP" */

/* The verdict of a result (FAIL wins over INCOMPLETE) and its name: "PASS", "FAIL", "INCOMPLETE". */
bbvfl_audit_verdict bbvfl_audit_verdict_of(const bbvfl_audit_result *r);
const char *bbvfl_audit_verdict_name(bbvfl_audit_verdict v);
/* The exit status of `bbvfl audit` for a verdict: PASS 0, FAIL 3, INCOMPLETE 8. */
#define BBVFL_AUDIT_EXIT_FAIL 3
#define BBVFL_AUDIT_EXIT_INCOMPLETE 8
int bbvfl_audit_exit_status(bbvfl_audit_verdict v);

#endif
