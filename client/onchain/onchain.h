/* One organisation's client in an on-chain session (DESIGN.md "One round of training").
 *
 * bbvfl_onchain_run registers the key with the aggregator (skipped when already registered),
 * takes part in the commit-reveal election (the secret is saved in the state folder before the
 * commit is sent, so a restarted client can still reveal), then runs every round: forward of its
 * own columns, PBM, submit; as the elected active client it reads the round's sum, trains the
 * fusion head, posts gradient + head parameters, evaluates, posts the epoch metrics and pays the
 * rewards. Other clients wait for the gradient (eth_getLogs filtered by event and round, polled with
 * a backoff from 0.2 ms to 5 ms: no busy loop) and back-propagate it.
 *
 * The learning is the off-chain trainer's code (core/party, core/head, core/schedule, core/setup): with
 * the same seed, party index and session seed S both modes compute the same numbers.
 *
 * Restart: after each round the party (and, for the active client, the head) is checkpointed
 * atomically into two alternating slots, and then a progress file naming the slot and the next
 * round. A restarted client loads it, recomputes the forward pass of the round in progress, does
 * not resubmit what the chain says it already submitted, and reads gradients already posted from
 * the chain.
 *
 * Re-election: a passive client that has waited takeover_after_s for the active client calls
 * reelect() / expireRound() (each attempt is a transaction, so on a devnet that mines only on
 * transactions the attempts themselves move the block deadline closer; a reverted attempt means
 * "not overdue yet"). When the chain names this client the new active client, it builds the head
 * from the session seed, loads the parameters of the last GradientPosted (the optimizer's moments
 * are not on chain: they restart from zero), re-evaluates the epoch's earlier evaluation rounds
 * from their RoundCompleted sums, settles an unpaid previous epoch, and carries on.
 *
 * Masked mode (a session whose contract has masked set; docs/MASKED.md): after the election the
 * client derives the pair keys from the Registered events (onchain/masked), masks each round's q for
 * the current participant set, and, while waiting for a round, watches for RoundReopened: it then
 * masks the SAME q for the announced set and submits again. With cfg->expire, a client whose round
 * has not completed after round_timeout_s calls expireRound() (repeatedly, a revert is fine) so a
 * dropout voids and re-runs the round instead of stalling; the active client estimates h_hat with
 * the number of clients that contributed.
 *
 * Labels: without declared label holders only the elected active client uses labels and must hold
 * them all (checked: a client without --labels that gets elected stops with a clear error). Labels
 * split across clients (Algorithm 2, lines 11-14; cfg->label_rows): a holder registers with
 * registerLabelHolder; in each TRAIN round every holder other than the active client computes
 * h_hat from the public sum, the head's logits with the parameters of the last GradientPosted (the
 * seed-derived initial head before the first), dLoss/dlogits of its rows (mean over the batch,
 * zero elsewhere) and posts it (postLabelGradient); the active client adds its own rows', waits
 * for every other holder's post (round timeout), back-propagates the sum through the head, updates
 * and posts the gradient as usual. Metrics then cover only the rows whose labels the client holds.
 *
 * The active client is checked: before a passive client applies a training round's gradient it
 * replays the session's head on the round's public sum (core/headcheck.h, onchain_hcheck.c); a
 * gradient or head that is not the head's is refused: the run stops with BBVFL_E_VERIFY naming the
 * round, res->head_refused set, nothing of it applied (cfg->no_head_check: unsafe, off).
 *
 * Ownership: the cfg's pointers are borrowed for the call; the result owns its arrays
 * (bbvfl_onchain_result_free). The library never prints: progress lines go to cfg->log when set. */
#ifndef BBVFL_VFL_ONCHAIN_H
#define BBVFL_VFL_ONCHAIN_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "common/err.h"
#include "dp/privacy.h"
#include "eth/wallet.h"
#include "ml/data.h"
#include "core/head.h"
#include "core/config.h"
#include "binding/session.h"

/* What the test-only tamper hook (bbvfl_onchain_cfg.tamper) sees of an active client's training
   window. Stage BBVFL_TAMPER_TRAIN: before the head's steps of round `round` (y mutable: the labels
   it is about to train on). Stage BBVFL_TAMPER_POST: after them, before postGradient is encoded
   (grad and head_be mutable: what is posted). Stage BBVFL_TAMPER_SUM (optimistic mode): the packed
   sum of round `round` before postSum is encoded (psum mutable; no head, y, grad). The head is the client's own (the hook may read it
   and must leave it as it found it). Buffers are the client's, valid for the call only. */
enum { BBVFL_TAMPER_TRAIN = 0, BBVFL_TAMPER_POST = 1, BBVFL_TAMPER_SUM = 2 };
struct bbvfl_onchain_tamper {
  int stage;
  uint64_t round;
  uint32_t epoch;
  size_t nb, B, P;        /* minibatches of the window, rows per minibatch, embedding width */
  int *y;                 /* nb*B labels trained on */
  const uint32_t *sum;    /* the window's round sum (nb*B*P) */
  float *grad;            /* POST: the nb*B*P gradients about to be posted */
  uint8_t *head_be;       /* POST: the head parameters about to be posted (head_len bytes) */
  size_t head_len;
  bbvfl_vhead *head;      /* NULL at stage BBVFL_TAMPER_SUM */
  uint8_t *psum;          /* SUM (optimistic mode): the packed sum about to be posted by postSum (mutable) */
  size_t psum_len;
};

typedef struct {
  const bbvfl_session *sess;
  const char *rpc_url;        /* NULL: the session's */
  const bbvfl_key *key;
  const bbvfl_dataset *ds;    /* this client's table: same rows as the session's, a label column */
  const char *columns;        /* this client's feature columns of ds, e.g. "0-5" */
  int has_labels;             /* may act as active client */
  const char *label_rows;     /* labels split across clients (Algorithm 2, lines 11-14): the rows of
                                 ds whose labels this client holds, e.g. "0-284" (0-based row
                                 indices, ranges, commas); the label cells of other rows are not
                                 read. Non-NULL: registers as a label holder (registerLabelHolder)
                                 and posts dLoss/dlogits for its rows each TRAIN round when another
                                 client is active. NULL: has_labels means every row's label */
  int party;                  /* stream index of init/noise (-1: the registration index) */
  uint64_t seed;              /* model init seed (the session's training seed by default) */
  int seeded_noise;           /* 1: noise from (seed, NOISE, party); 0: getrandom */
  const char *state_dir;      /* checkpoints, secret, summary.json */
  double round_timeout_s;     /* a round that does not complete in time is an error (0: 120 s) */
  int expire;                 /* on a round timeout, call expireRound() before giving up */
  int submit_via_self;        /* hashed mode: each submit(round, q) goes out as execute(aggregator,
                                 submit calldata) sent to this client's own address, which must
                                 carry code with that function (an EIP-7702 delegation, e.g.
                                 contract/testonly/SelfExecutor.sol); the contract sees this
                                 address as the sender */
  double node_down_timeout_s; /* the node unreachable mid-session (restart, outage): retry with
                                 backoff this long, with a log line, before failing (0: no wait) */
  double rate_limit_wait_s;   /* HTTP 429/503: back off at most this long per request (0: 60 s) */
  uint64_t max_log_range;     /* eth_getLogs: at most this many blocks per query (0: no cap) */
  double takeover_after_s;    /* a client waiting this long for the active client's gradient or
                                 submission starts calling reelect() (round complete, no gradient)
                                 or expireRound() (the active client did not submit), about once a
                                 second until the contract accepts; a newly elected client takes
                                 the head over from the last GradientPosted. 0: off */
  int pause_after_submit;     /* testing: after submitting round N-1 (the N-th round), stop the
                                process with SIGSTOP (a test then kills or continues it); 0: off */
  int exit_after_round;       /* testing: return (as if killed) after this many rounds done; 0: off */
  const char *dump_q_dir;     /* TEST HOOK (NULL: off): write each round's unmasked q to
                                 DIR/q-<index>-<round>.bin; plaintext embeddings, never in production */
  FILE *log;                  /* progress lines (nullable); never holds key material */
  /* TEST-ONLY HOOK (NULL: off, and NULL in every release build): the release `bbvfl` never sets
     it; only the test-only executable `bbvfl-tamper` (tests/support/tamper.c, built with the tests,
     never installed) does, to make an active client deviate for the passive check's and the
     audit's tests (docs/ONCHAIN.md "A tampering active client"). Called on the active client's path
     only (MLP, labels not split): see bbvfl_onchain_tamper. Non-zero return: the client stops. */
  int no_head_check;          /* UNSAFE (1): a passive client applies whatever gradient the active
                                 client posts, unchecked. 0 (default): each posted gradient and head is
                                 checked against the replay of the session's head before it is applied
                                 (core/headcheck.h; docs/ONCHAIN.md "Passive clients check the head") */
  int (*tamper)(void *ctx, struct bbvfl_onchain_tamper *t, bbvfl_err *err);
  void *tamper_ctx;
  /* a live chain (eth/sender.h): fee cap, re-pricing, confirmations */
  double max_fee_gwei;        /* the max fee per gas signed is at most this; while the base fee is
                                 above it the client sends nothing, says so and waits (0: no cap) */
  int reprice_blocks;         /* a transaction unmined this many blocks is replaced with higher fees
                                 (0: the sender's default, 3; < 0: never) */
  unsigned confirmations;     /* steps that cannot be undone (payRewards) wait this many blocks on
                                 top of their receipt's block and re-check it (0: none) */
} bbvfl_onchain_cfg;

typedef struct {
  int index;                  /* registration index */
  int masked;                 /* the session is in masked mode */
  unsigned participants;      /* masked: the smallest participant set this client saw (M - dropouts);
                                 plain: M */
  int was_active;             /* active client at the end of the session */
  size_t n_train;             /* training rows of the session (the feature-set privacy level) */
  uint8_t S[32];
  uint64_t rounds;            /* rounds this process went through */
  uint64_t submissions;       /* submissions this process sent */
  uint64_t gas_submit, gas_other;
  uint64_t gas_aggregate, gas_gradient; /* aggregate() calls (hashed mode), postGradient() calls */
  double wall_s, send_s, wait_s, learn_s, ckpt_s;
  /* active client only (epochs entries each, NULL otherwise) */
  int epochs;
  bbvfl_epoch_metrics *per_epoch;
  double *agg_s;              /* on-chain aggregation time of each epoch's training rounds */
  /* labels split across clients: per_epoch/agg_s are also kept for a label holder that was not
     active (its metrics over its own labelled rows); the metrics cover only labelled rows */
  int label_split;            /* the session has declared label holders */
  int label_holder;           /* this client is one of them */
  uint64_t label_posts;       /* postLabelGradient transactions this process sent */
  size_t labelled_test_rows;  /* test rows whose labels this client holds (what its metrics cover) */
  uint64_t fee_gas;           /* gas used by this process's mined transactions (their receipts) */
  char fee_wei[80];           /* and what they paid: sum of gasUsed x effectiveGasPrice, decimal wei */
  /* the passive client's head check (summary.json "head_check") */
  int head_refused;           /* a posted gradient failed the check: the client stopped, not applying it */
  uint64_t head_round;        /* that round */
  char head_verdict[48];      /* bbvfl_hcheck_verdict_name of it */
  char head_detail[512];      /* where and by how much (bbvfl_hcheck_describe) */
  uint64_t head_rounds;       /* training rounds checked by this process */
  double head_s;              /* wall time of the checks (events read, replay) */
  char head_skipped[160];     /* why this client checked nothing ("" when it checked) */
} bbvfl_onchain_result;

int bbvfl_onchain_run(const bbvfl_onchain_cfg *cfg, bbvfl_onchain_result *res, bbvfl_err *err);
void bbvfl_onchain_result_free(bbvfl_onchain_result *r);

/* The client's summary (summary.json in the state folder), complete and written once
 * (atomically; onchain_summary.c). JSON fields, an interface for scripts and `bbvfl demo`:
 * index, active, session_seed, rounds, submissions, gas_submit, gas_other, wall_s, send_s,
 * wait_s, learn_s, checkpoint_s, masked, gas_aggregate, gas_gradient, participants, label_split
 * (with labels split: label_holder, label_posts, labelled_test_rows), epochs (per-epoch metrics of
 * the active client or a label holder: epoch, train_loss, test_loss, auroc, accuracy, f1,
 * onchain_agg_s; null where this process measured nothing) and, for the client active at the end,
 * privacy (delta, epsilon_feature, epsilon_sample, masked, participants, levels and, masked,
 * epsilon_feature_masked): the session's privacy from core/cfgprivacy.h for the participants this
 * client saw; fees {gas_used, eth_paid_wei (decimal string), eth_paid (ether, a number)}: what this
 * process's mined transactions paid (gasUsed x effectiveGasPrice of their receipts). */
typedef struct {
  int privacy_done;       /* 1: "privacy" is in the summary and `privacy` holds it */
  bbvfl_privacy privacy;
  bbvfl_err privacy_err;  /* the active client's privacy could not be computed: why (the summary
                             is written without it; not an error of the call) */
  json_t *json;           /* the summary as written (owned: bbvfl_onchain_summary_free) */
} bbvfl_onchain_summary;

/* Builds the summary of res for session s (delta: of the privacy figures) and writes it to path.
 * *out is filled (free with bbvfl_onchain_summary_free, also after a failure). Returns 0, or -1
 * with err (out of memory, or the write failed: nothing half-written). */
int bbvfl_onchain_summary_write(const bbvfl_session *s, const bbvfl_onchain_result *res, double delta,
                                const char *path, bbvfl_onchain_summary *out, bbvfl_err *err);
void bbvfl_onchain_summary_free(bbvfl_onchain_summary *sm);

#endif
