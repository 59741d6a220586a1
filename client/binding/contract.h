/* C bindings for the aggregator contracts (contract/src/BbvflBase.sol and its two modes,
 * BbvflAggregator and BbvflHashAggregator) and their reward token.
 *
 * Three layers, usable separately:
 *  1. Pure encoders: calldata of every write call and of the views, and the constructor
 *     arguments (the Config tuple). Output buffers are malloc'd and owned by the caller (free()).
 *  2. Pure decoders: the views' return data (eth_call output) into plain structs, and event logs
 *     (the JSON objects of eth_getLogs / receipts) into a tagged struct through the event table
 *     (one decoder per event; contract_events.c). Decoded byte strings (sums, gradients, pubkeys)
 *     are malloc'd inside the struct: bbvfl_cev_clear frees them.
 *  3. bbvfl_aggc: a small handle that borrows an RPC connection and runs the views through
 *     eth_call, plus log queries built as an eth/rpc.h bbvfl_log_filter.
 *
 * Naming: one prefix per section of this header, named after what the function works on:
 *   bbvfl_cconfig_*   the Config and its round layout        bbvfl_cenc_*   calldata, ABI words
 *   bbvfl_election_*  the election's pure rules              bbvfl_cdec_*   view return data
 *   bbvfl_cev_*       events: table, decoder, log filters    bbvfl_aggc_*   calls through RPC
 *   bbvfl_token_*     the reward token's views
 * Event kinds are BBVFL_EV_* (type bbvfl_cev_kind).
 *
 * Nothing here signs or sends: a caller puts the calldata into a bbvfl_sender. */
#ifndef BBVFL_VFL_CONTRACT_H
#define BBVFL_VFL_CONTRACT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/rpc.h"
#include "eth/u256.h"

/* ------------------------------------------------------------------ config / params */

/* The constructor's Config tuple (all static fields), in its ABI order: clients, batch, dim,
 * levels, betaMicro, masked, batchesPerEpoch, window, evalRows, evalRowsPerRound, trainRows,
 * testRows, staleness, hashed, epochs, rewardPerSubmission, rewardPool, commitBlocks,
 * revealBlocks, activeBlocks, roundTimeoutBlocks, curvEvery, curvRows.
 *
 * Rounds: epoch e has T = ceil(R/K) training rounds (windows) then V = ceil(NE/ER) evaluation
 * rounds; round r = e*(T+V) + pos. Window w carries nb = min(K, R - w*K) minibatches of B rows
 * (a window never crosses an epoch); evaluation round v carries min(ER, NE - v*ER) test rows,
 * in test-set order from v*ER. A round's submission has rows*P values (bbvfl_cconfig_round).
 * Curvature rounds (model lr with sqn, docs/LR.md "On chain"; lane mode, B = 1): with
 * curv_every = L > 0, every epoch e with (e+1) % L == 0 and e+1 >= 2L has, between its T windows
 * and its V evaluation rounds, C = ceil(S/K) curvature rounds (S = curv_rows): curvature round c
 * carries positions c*K .. of the epoch's permutation, min(K, S - c*K) rows; it takes a gradient
 * like a window (train = 1, curv = 1, index T + c).
 * train_rounds / eval_rounds are derived (bbvfl_cconfig_derive): not part of the ABI. */
typedef struct {
  uint8_t clients;         /* M */
  uint32_t batch;          /* B */
  uint32_t dim;            /* P */
  uint8_t levels;          /* b */
  uint32_t beta_micro;     /* beta * 1e6 */
  int masked;
  uint32_t batches_per_epoch;   /* R: training minibatches per epoch */
  uint32_t window;              /* K: minibatches per training round, 1..R */
  uint32_t eval_rows;           /* NE: test rows evaluated per epoch (0: no evaluation rounds) */
  uint32_t eval_rows_per_round; /* ER */
  uint32_t train_rows;          /* N_train: the schedule's permutation size (>= R*B) */
  uint32_t test_rows;           /* N_test (>= NE) */
  uint8_t staleness;            /* s: training windows a client may run ahead of its gradients */
  int hashed;                   /* 1: submissions store only their keccak; aggregate() re-supplies them */
  int wire;                     /* bbvfl_wire_mode of binding/packing.h (not in the ABI: the contract's kind; a
                                   hashed contract with packing() is packed or optimistic) */
  uint32_t train_rounds;   /* T per epoch (derived) */
  uint32_t eval_rounds;    /* V per epoch (derived) */
  uint32_t epochs;
  bbvfl_u256 reward_per_submission;
  bbvfl_u256 reward_pool;
  uint64_t commit_blocks, reveal_blocks, active_blocks, round_timeout_blocks;
  uint32_t curv_every;     /* L: curvature rounds after every L-th epoch from the 2L-th (0: none) */
  uint32_t curv_rows;      /* S: rows of an epoch's curvature rounds */
  uint32_t curv_rounds;    /* C per curvature epoch (derived) */
} bbvfl_cconfig;

/* params() of a deployed contract: the Config plus derived values. */
typedef struct {
  bbvfl_cconfig cfg;
  uint8_t lane_bits;
  uint8_t value_bits, sum_bits; /* packed/optimistic (packing()): bits per value and per sum value; 0 otherwise */
  uint64_t dispute_blocks;      /* optimistic: blocks after a claim within which dispute() is accepted */
  uint8_t token[20];
  uint64_t total_rounds;
  uint32_t max_coords;     /* values in the largest round's submission */
} bbvfl_cparams;

/* One round's place in the session (roundLayout() of the contract, computed locally). */
typedef struct {
  int train;               /* 1: a training window (or a curvature round); 0: an evaluation round */
  int curv;                /* 1: a curvature round (train is 1 too) */
  uint32_t epoch;
  uint32_t index;          /* window index (train) or evaluation round index (eval) */
  uint32_t nb;             /* minibatches in the window (train); 0 for eval */
  uint32_t first;          /* train: first minibatch of the epoch in the window; eval: first test row */
  uint32_t rows;           /* rows submitted: nb*B (train) or the evaluation rows */
  uint64_t coords;         /* values per submission: rows*P */
} bbvfl_round_layout;

/* Fills train_rounds (T) and eval_rounds (V) from R, K, NE, ER. A configuration with
 * batches_per_epoch = 0 is taken as a K = 1 session of train_rounds batches and eval_rounds
 * evaluation rounds of B rows each (the protocol before windows): the input fields are set from
 * them. Returns -1 (BBVFL_E_ARG, naming the field) for an inconsistent configuration. */
int bbvfl_cconfig_derive(bbvfl_cconfig *c, bbvfl_err *err);
/* The layout of round r (c derived); -1 (BBVFL_E_ARG) when r is past the session. */
int bbvfl_cconfig_round(const bbvfl_cconfig *c, uint64_t r, bbvfl_round_layout *out, bbvfl_err *err);
/* Rounds of the whole session (totalRounds()); the first round of epoch e (e = epochs: the total). */
uint64_t bbvfl_cconfig_total(const bbvfl_cconfig *c);
uint64_t bbvfl_cconfig_epoch_start(const bbvfl_cconfig *c, uint64_t e);
/* 1 when round r is the last round of its epoch. */
int bbvfl_cconfig_epoch_end(const bbvfl_cconfig *c, uint64_t r);
/* Epochs among 0..e-1 that have curvature rounds under interval L (0: none). */
uint64_t bbvfl_cconfig_curv_epochs(uint64_t e, uint32_t L);
/* The values in the largest round (sizes the buffers of a client). */
uint64_t bbvfl_cconfig_max_coords(const bbvfl_cconfig *c);
/* Windows per epoch for R batches of window K: ceil(R/K). */
uint32_t bbvfl_cconfig_windows(uint32_t R, uint32_t K);

typedef enum {
  BBVFL_PHASE_REGISTRATION = 0,
  BBVFL_PHASE_COMMIT = 1,
  BBVFL_PHASE_REVEAL = 2,
  BBVFL_PHASE_TRAINING = 3,
  BBVFL_PHASE_ENDED = 4
} bbvfl_phase;

typedef struct {
  uint64_t round;
  uint8_t submitted, participants;
  int complete;
  uint64_t opened_at, completed_at;
} bbvfl_round_state;

typedef struct {
  int registered, excluded, committed, revealed;
  uint8_t index;
  uint64_t last_round_plus1;
  uint32_t accepted, rewarded;
} bbvfl_client_info;

typedef struct {
  int complete, metrics_posted, rewards_paid;
} bbvfl_epoch_state;

/* ------------------------------------------------------------------ encoders (pure) */

/* The ABI word of a uint64 / an address: a calldata argument or the topic of an indexed one. */
void bbvfl_cenc_word_u64(uint64_t v, uint8_t out[32]);
void bbvfl_cenc_word_address(const uint8_t addr[20], uint8_t out[32]);

/* ABI encoding of the Config tuple alone (no selector): the head of the constructor arguments. */
int bbvfl_cenc_config(const bbvfl_cconfig *c, uint8_t **out, size_t *len, bbvfl_err *err);
/* The aggregators' constructor arguments (Config, address[] members): `members` the n (0..64)
   addresses that may register (the caller's buffer, read only), n 0 a session open to anyone.
   *out is allocated (the caller frees it). */
int bbvfl_cenc_ctor(const bbvfl_cconfig *c, const uint8_t (*members)[20], size_t n, uint8_t **out, size_t *len,
                    bbvfl_err *err);

int bbvfl_cenc_register(const uint8_t pubkey[64], uint8_t **out, size_t *len, bbvfl_err *err);
/* registerLabelHolder(bytes): register() for a client that holds labels (fixed for the session). */
int bbvfl_cenc_register_label_holder(const uint8_t pubkey[64], uint8_t **out, size_t *len, bbvfl_err *err);
/* postLabelGradient(uint64,bytes): grad is dLoss/dlogits of the holder's rows, B*K big-endian
 * binary32 (zeros for rows it does not hold). */
int bbvfl_cenc_post_label_gradient(uint64_t round, const uint8_t *grad, size_t grad_len, uint8_t **out,
                                   size_t *len, bbvfl_err *err);
int bbvfl_cenc_commit(const uint8_t commitment[32], uint8_t **out, size_t *len, bbvfl_err *err);
int bbvfl_cenc_reveal(const uint8_t secret[32], uint8_t **out, size_t *len, bbvfl_err *err);
int bbvfl_cenc_finalize_election(uint8_t **out, size_t *len, bbvfl_err *err);
int bbvfl_cenc_reelect(uint8_t **out, size_t *len, bbvfl_err *err);
int bbvfl_cenc_expire_round(uint8_t **out, size_t *len, bbvfl_err *err);
int bbvfl_cenc_submit(uint64_t round, const uint8_t *q, size_t n, uint8_t **out, size_t *len,
                      bbvfl_err *err);
/* aggregate(uint64,bytes[]) (hashed mode): the submitted payloads of the round's submitters in
 * client index order; anyone may call it, the contract checks each against its stored hash. */
/* postSum(uint64,bytes32) (optimistic mode): keccak256 of the round's packed sum `sum` (n bytes,
 * hashed here), without the sum or the payloads. */
int bbvfl_cenc_post_sum(uint64_t round, const uint8_t *sum, size_t n, uint8_t **out, size_t *len, bbvfl_err *err);
/* dispute(uint64,address,bytes32,bytes[]) (optimistic mode): the claimed sum hash (SumClaimed's
 * sumHash) and the round's payloads. */
int bbvfl_cenc_dispute(uint64_t round, const uint8_t claimer[20], const uint8_t sum_hash[32],
                       const uint8_t *const *payloads, const size_t *lens, size_t n, uint8_t **out, size_t *len,
                       bbvfl_err *err);
int bbvfl_cenc_aggregate(uint64_t round, const uint8_t *const *payloads, const size_t *lens, size_t n,
                         uint8_t **out, size_t *len, bbvfl_err *err);
/* grad: big-endian binary32 bytes (4*coords of the round); params: the fusion parameters (opaque bytes). */
int bbvfl_cenc_post_gradient(uint64_t round, const uint8_t *grad, size_t grad_len,
                             const uint8_t *params, size_t params_len, uint8_t **out, size_t *len,
                             bbvfl_err *err);
int bbvfl_cenc_post_metrics(uint32_t epoch, uint32_t auroc_micro, uint32_t accuracy_micro,
                            uint64_t loss_micro, uint8_t **out, size_t *len, bbvfl_err *err);
int bbvfl_cenc_pay_rewards(uint32_t epoch, uint8_t **out, size_t *len, bbvfl_err *err);
/* roundSum(uint64): the view's call data, fixed size (the caller picks the block to ask at). */
#define BBVFL_CENC_ROUND_SUM_LEN 36
void bbvfl_cenc_round_sum(uint64_t round, uint8_t out[BBVFL_CENC_ROUND_SUM_LEN]);

/* NaiveAggregator (contract/src, the baseline bench/chainbench measures): its constructor
 * arguments (uint256 m, uint256 coordinates) followed by a salt word the ABI decoder ignores (it
 * makes each deployment's bytes unique), register(), submit(uint256,uint256[]) of the n values
 * q[0..n) and aggregate(uint256). */
#define BBVFL_CENC_NAIVE_ARGS_LEN 96
void bbvfl_cenc_naive_args(uint64_t m, uint64_t coords, uint64_t salt, uint8_t out[BBVFL_CENC_NAIVE_ARGS_LEN]);
int bbvfl_cenc_naive_register(uint8_t **out, size_t *len, bbvfl_err *err);
int bbvfl_cenc_naive_submit(uint64_t round, const uint8_t *q, size_t n, uint8_t **out, size_t *len, bbvfl_err *err);
int bbvfl_cenc_naive_aggregate(uint64_t round, uint8_t **out, size_t *len, bbvfl_err *err);

/* The election commitment keccak256(abi.encodePacked(secret, sender, contract, chain_id)) (chain_id
 * a uint256): bound to one session, the aggregator at `contract` on chain `chain_id`, whose
 * reveal() refuses any other (SecretMismatch). */
void bbvfl_election_commitment(const uint8_t secret[32], const uint8_t sender[20], const uint8_t contract[20],
                               uint64_t chain_id, uint8_t out[32]);
/* The session seed keccak256(secret_0 || ... || secret_{n-1}) of the revealed secrets in client
 * index order, and the active index uint256(S) mod n. */
void bbvfl_election_seed(const uint8_t (*secrets)[32], size_t n, uint8_t S[32]);
uint64_t bbvfl_election_pick(const uint8_t S[32], uint64_t n);

/* ------------------------------------------------------------------ view decoders (pure) */

int bbvfl_cdec_params(const uint8_t *data, size_t len, bbvfl_cparams *out, bbvfl_err *err);
int bbvfl_cdec_round_state(const uint8_t *data, size_t len, bbvfl_round_state *out, bbvfl_err *err);
int bbvfl_cdec_client_info(const uint8_t *data, size_t len, bbvfl_client_info *out, bbvfl_err *err);
int bbvfl_cdec_epoch_state(const uint8_t *data, size_t len, bbvfl_epoch_state *out, bbvfl_err *err);
/* address[]: *addrs malloc'd (n x 20 bytes), caller frees (non-NULL even when n = 0). */
int bbvfl_cdec_addresses(const uint8_t *data, size_t len, uint8_t (**addrs)[20], size_t *n,
                         bbvfl_err *err);
/* bytes: *out malloc'd, caller frees. */
int bbvfl_cdec_bytes(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len, bbvfl_err *err);
/* One static word as uint64 (checked to fit), bytes32, or address. */
int bbvfl_cdec_u64(const uint8_t *data, size_t len, uint64_t *out, bbvfl_err *err);
int bbvfl_cdec_word(const uint8_t *data, size_t len, uint8_t out[32], bbvfl_err *err);
int bbvfl_cdec_address(const uint8_t *data, size_t len, uint8_t out[20], bbvfl_err *err);

/* submit(uint64,bytes) call data (a client's transaction input, as bbvfl_cenc_submit writes it)
 * back to its round and payload: *q points into cd (not copied), *qlen bytes. Returns 0, or -1
 * with err (BBVFL_E_PARSE: not a submit call, a round over uint64, a malformed bytes argument). */
int bbvfl_cdec_submit(const uint8_t *cd, size_t len, uint64_t *round, const uint8_t **q, size_t *qlen,
                      bbvfl_err *err);

/* A plain-mode (8-bit or 16-bit lanes) sum as bytes -> n uint32 values. */
int bbvfl_cdec_sum(const uint8_t *sum, size_t sum_len, unsigned lane_bits, uint32_t *out, size_t n,
                     bbvfl_err *err);

/* A RoundCompleted sum of the contract p describes: bit-sliced at p->sum_bits (packed and
 * optimistic modes, binding/packing.h) or in lanes of p->lane_bits. */
int bbvfl_cdec_round_sum(const bbvfl_cparams *p, const uint8_t *sum, size_t sum_len, uint32_t *out, size_t n,
                         bbvfl_err *err);

/* ------------------------------------------------------------------ events */

/* Every event the session's contracts emit: BbvflBase.sol (both aggregators) and the reward
 * token's ERC-20 events. NaiveAggregator (a gas baseline, never in a session) is not here. The
 * unit test test_vfl_contract checks the list against abi/. To add one: a kind before
 * BBVFL_EV_COUNT, its row in the EV table of contract_events.c (signature, declaration with
 * "indexed", decoder) and the bbvfl_cev fields it fills. */
typedef enum {
  BBVFL_EV_NONE = 0,
  BBVFL_EV_REGISTERED,            /* Registered(address indexed client, uint8 index, bytes pubkey) */
  BBVFL_EV_COMMITTED,             /* Committed(address indexed client, bytes32 commitment) */
  BBVFL_EV_REVEALED,              /* Revealed(address indexed client, bytes32 secret) */
  BBVFL_EV_EXCLUDED,              /* Excluded(address indexed client, uint8 reason) */
  BBVFL_EV_ELECTED,               /* Elected(bytes32 seed, address indexed active, uint64 fromRound,
                                     uint8 participants, uint8 reason) */
  BBVFL_EV_SUBMITTED,             /* Submitted(uint64 indexed round, address indexed client, bytes32 dataHash) */
  BBVFL_EV_ROUND_COMPLETED,       /* RoundCompleted(uint64 indexed round, uint8 contributors, bytes sum) */
  BBVFL_EV_GRADIENT_POSTED,       /* GradientPosted(uint64 indexed round, address indexed active, bytes gradient,
                                     bytes fusionParams) */
  BBVFL_EV_METRICS_POSTED,        /* MetricsPosted(uint32 indexed epoch, address indexed active, uint32 aurocMicro,
                                     uint32 accuracyMicro, uint64 lossMicro) */
  BBVFL_EV_REWARDS_PAID,          /* RewardsPaid(uint32 indexed epoch, address indexed client, uint256 amount,
                                     uint32 submissions) */
  BBVFL_EV_SESSION_ENDED,         /* SessionEnded(uint64 rounds) */
  BBVFL_EV_LABEL_HOLDER,          /* LabelHolder(address indexed client, uint8 index) */
  BBVFL_EV_LABEL_GRADIENT_POSTED, /* LabelGradientPosted(uint64 indexed round, address indexed client, bytes grad) */
  BBVFL_EV_TRANSFER,              /* the token's Transfer(address indexed from, address indexed to, uint256) */
  BBVFL_EV_ROUND_REOPENED,        /* RoundReopened(uint64 indexed round, uint64 participants, uint8 n): masked
                                     mode's expireRound voided the round and re-opened it for that bitmap */
  BBVFL_EV_APPROVAL,              /* the token's Approval(address indexed owner, address indexed spender, uint256) */
  BBVFL_EV_SUBMITTED_PAYLOAD,     /* SubmittedPayload(uint64 indexed round, address indexed client, bytes q): the
                                     hashed mode's submission (instead of Submitted), the payload in the log; the
                                     decoder also fills word = keccak256(q) (what the contract stored) */
  BBVFL_EV_SUM_CLAIMED,           /* SumClaimed(uint64 indexed round, address indexed claimer, bytes32
                                     sumHash): optimistic mode's postSum (client = the claimer, word =
                                     keccak256 of the claimed packed sum) */
  BBVFL_EV_SUM_DISPUTED,          /* SumDisputed(uint64 indexed round, address indexed claimer, address indexed
                                     disputer): client = the claimer, to = the disputer */
  BBVFL_EV_MEMBERS,               /* Members(address[] members): the constructor's member list (data = the
                                     addresses, 20 bytes each; none: open registration) */
  BBVFL_EV_COUNT
} bbvfl_cev_kind;

/* The canonical signature ("Submitted(uint64,address,bytes32)"), the declaration with its
 * "indexed" markers, and topic0 of an event (NULL / zeros for NONE or an unknown kind). */
const char *bbvfl_cev_signature(bbvfl_cev_kind k);
/* The event a submission emits: SubmittedPayload in hashed mode, Submitted in lane mode. */
bbvfl_cev_kind bbvfl_cev_submission(int hashed);
const char *bbvfl_cev_declaration(bbvfl_cev_kind k);
void bbvfl_cev_topic(bbvfl_cev_kind k, uint8_t out[32]);

/* One decoded log. Fields are filled according to kind (see the event declarations in the
 * contract); bytes fields are malloc'd and owned by the struct (bbvfl_cev_clear). */
typedef struct {
  bbvfl_cev_kind kind;
  uint8_t emitter[20];      /* the log's address */
  uint64_t block_number;
  uint64_t log_index;
  uint8_t tx_hash[32];
  uint8_t client[20];       /* Registered, Committed, Revealed, Excluded, Submitted(Payload), RewardsPaid,
                               LabelHolder, LabelGradientPosted (client); Elected, GradientPosted, MetricsPosted (active);
                               Transfer (from); Approval (owner) */
  uint8_t to[20];           /* Transfer (to); Approval (spender) */
  uint64_t round;           /* Submitted(Payload), RoundCompleted, GradientPosted, LabelGradientPosted, RoundReopened;
                               Elected fromRound; SessionEnded rounds */
  uint32_t epoch;           /* MetricsPosted, RewardsPaid */
  uint8_t index;            /* Registered, LabelHolder index */
  uint8_t reason;           /* Excluded, Elected */
  uint8_t participants;     /* Elected: the participant count; RoundCompleted: the number of
                               submissions the sum covers; RoundReopened: n */
  uint64_t bitmap;          /* RoundReopened: the participants' client indexes */
  uint8_t word[32];         /* Committed commitment, Revealed secret, Elected seed, Submitted dataHash,
                               SubmittedPayload keccak256(q), SumClaimed sumHash */
  uint32_t auroc_micro, accuracy_micro, submissions;
  uint64_t loss_micro;
  bbvfl_u256 amount;        /* RewardsPaid amount, Transfer and Approval value */
  uint8_t *data;  size_t data_len;   /* Registered pubkey, RoundCompleted sum, GradientPosted gradient,
                                        LabelGradientPosted grad, SubmittedPayload q, Members addresses */
  uint8_t *data2; size_t data2_len;  /* GradientPosted fusionParams */
} bbvfl_cev;

/* Decodes one log JSON object ({address, topics, data, blockNumber, transactionHash, logIndex})
 * with its event's decoder. Returns 1 when decoded, 0 when topic0 is none of the known events
 * (out->kind = NONE), -1 on a malformed log. *out is overwritten (clear it before reuse). */
int bbvfl_cev_decode(const json_t *log, bbvfl_cev *out, bbvfl_err *err);
void bbvfl_cev_clear(bbvfl_cev *ev);

/* Log filters (eth/rpc.h's bbvfl_log_filter): accept event `kind` (adds its topic0; -1 when the
 * kind is unknown or the filter full), and require the first indexed argument (a round or an
 * epoch) to be v. */
int bbvfl_cev_filter_event(bbvfl_log_filter *f, bbvfl_cev_kind kind, bbvfl_err *err);
void bbvfl_cev_filter_index(bbvfl_log_filter *f, uint64_t v);

/* ------------------------------------------------------------------ RPC-backed handle */

typedef struct {
  bbvfl_rpc *rpc;        /* borrowed */
  uint8_t address[20];   /* the aggregator */
  unsigned depth;        /* bbvfl_aggc_logs reads events only up to the head minus depth blocks: a
                            reorg no deeper than that never takes an event read out (0: to latest) */
} bbvfl_aggc;

void bbvfl_aggc_init(bbvfl_aggc *a, bbvfl_rpc *rpc, const uint8_t address[20]);

int bbvfl_aggc_params(bbvfl_aggc *a, bbvfl_cparams *out, bbvfl_err *err);
int bbvfl_aggc_phase(bbvfl_aggc *a, bbvfl_phase *out, bbvfl_err *err);
int bbvfl_aggc_current_round(bbvfl_aggc *a, uint64_t *out, bbvfl_err *err);
int bbvfl_aggc_round_state(bbvfl_aggc *a, bbvfl_round_state *out, bbvfl_err *err);
/* *sum malloc'd (caller frees). */
int bbvfl_aggc_round_sum(bbvfl_aggc *a, uint64_t round, uint8_t **sum, size_t *len, bbvfl_err *err);
int bbvfl_aggc_client_info(bbvfl_aggc *a, const uint8_t addr[20], bbvfl_client_info *out, bbvfl_err *err);
/* hasSubmitted(round, client) (hashed mode): whether the contract holds that client's submission
 * to a pending round (a restarted client asks before it resubmits). */
int bbvfl_aggc_has_submitted(bbvfl_aggc *a, uint64_t round, const uint8_t addr[20], int *out, bbvfl_err *err);
/* *addrs malloc'd (caller frees). */
int bbvfl_aggc_clients(bbvfl_aggc *a, uint8_t (**addrs)[20], size_t *n, bbvfl_err *err);
int bbvfl_aggc_participants(bbvfl_aggc *a, uint8_t (**addrs)[20], size_t *n, bbvfl_err *err);
int bbvfl_aggc_seed(bbvfl_aggc *a, uint8_t S[32], bbvfl_err *err);
int bbvfl_aggc_election_seed(bbvfl_aggc *a, uint8_t S[32], bbvfl_err *err);
int bbvfl_aggc_active(bbvfl_aggc *a, uint8_t addr[20], bbvfl_err *err);
int bbvfl_aggc_last_fusion_round(bbvfl_aggc *a, uint64_t *out, bbvfl_err *err);
int bbvfl_aggc_last_fusion_hash(bbvfl_aggc *a, uint8_t h[32], bbvfl_err *err);
int bbvfl_aggc_epoch_state(bbvfl_aggc *a, uint32_t epoch, bbvfl_epoch_state *out, bbvfl_err *err);
int bbvfl_aggc_token(bbvfl_aggc *a, uint8_t token[20], bbvfl_err *err);
/* labelHolders(): bit i set when client index i registered as a label holder. */
int bbvfl_aggc_label_holders(bbvfl_aggc *a, uint64_t *bitmap, bbvfl_err *err);
/* ERC-20 balanceOf(holder) on token. */
int bbvfl_token_balance(bbvfl_rpc *rpc, const uint8_t token[20], const uint8_t holder[20], bbvfl_u256 *out,
                        bbvfl_err *err);

/* The filter for `kind` events of the aggregator in blocks [from, to] (to BBVFL_BLOCK_LATEST:
 * "latest"), optionally with the first indexed argument topic1 (a 32-byte word; NULL: any). */
int bbvfl_aggc_filter(const bbvfl_aggc *a, bbvfl_cev_kind kind, const uint8_t *topic1, uint64_t from_block,
                      uint64_t to_block, bbvfl_log_filter *f, bbvfl_err *err);
/* eth_getLogs with that filter: *logs is a new JSON array reference (caller decrefs). */
int bbvfl_aggc_logs(bbvfl_aggc *a, bbvfl_cev_kind kind, const uint8_t *topic1, uint64_t from_block,
                    uint64_t to_block, json_t **logs, bbvfl_err *err);
/* Hashed mode: the submissions to `round`, read back from the chain's logs alone: for each
 * SubmittedPayload(round) log of the aggregator at or after from_block (the latest one per client),
 * its q, the bytes the contract hashed and stored; so a submission sent through an EIP-7702
 * delegate, a contract wallet or a multicall is read like any other. clients: the session's
 * clients in index order (clients()); out[i] (n entries, zeroed first) receives client i's
 * payload (malloc'd, caller frees each; NULL when it has not submitted) and its length. *count:
 * how many clients have submitted. want_len: the round's payload length (0: any); a payload of
 * another length is an error (BBVFL_E_VERIFY): the contract refuses such a submission, so the
 * node's answer is not the chain's. aggregate() re-checks every payload against its stored hash. */
int bbvfl_aggc_round_payloads(bbvfl_aggc *a, uint64_t round, uint64_t from_block, const uint8_t (*clients)[20],
                              size_t n, size_t want_len, uint8_t **out, size_t *out_len, size_t *count,
                              bbvfl_err *err);

#endif
