/* The session file: everything the clients of one on-chain session must agree on, written by
 * `bbvfl deploy` (atomically) and read by `bbvfl client` and `bbvfl demo`.
 *
 * JSON object: rpc_url, chain_id, contract, token, deploy_block, the contract parameters
 * ("contract_params": clients, batch, dim, levels, beta_micro, train_rounds, eval_rounds, epochs,
 * reward_per_submission, reward_pool, lane_bits, deadlines in blocks) and the training setup
 * ("training": seed, test_frac, label, data, hidden, optimizer, lr, lr_decay, momentum, mechanism,
 * b, beta, C, n_rows). A client's own columns are not in the session: they are its business.
 * Ownership: a bbvfl_session is plain data with fixed-size strings; nothing to free. */
#ifndef BBVFL_VFL_SESSION_H
#define BBVFL_VFL_SESSION_H

#include <stdint.h>

#include "common/err.h"
#include "eth/rpc.h"
#include "eth/wallet.h"
#include "binding/contract.h"
#include "ml/data.h"
#include "core/config.h"

#define BBVFL_SESSION_MAX_CLASSES 64

typedef struct {
  char rpc_url[512];
  uint64_t chain_id;
  uint8_t contract[20];
  uint8_t token[20];
  uint64_t deploy_block;
  bbvfl_cconfig cparams;
  unsigned lane_bits;
  /* training setup (shared with the off-chain trainer: M, B, P, epochs, hidden, mech, opt, seed,
     test_frac; partition is unused here) */
  bbvfl_offchain_cfg train;
  char label[256];   /* label column name; empty: the last column */
  char data[1024];   /* the table the session was set up with (a hint; each client names its own) */
  uint64_t n_rows;   /* rows of that table (a client checks its file has as many) */
  /* the label classes of that table, in the trainer's order (a client checks its labels against
     them before any transaction); n_classes 0: a session file written before they were recorded */
  int n_classes;
  char classes[BBVFL_SESSION_MAX_CLASSES][64];
  /* deadlines in seconds (the caller's, 0: not given) and the chain's block time measured at
     deploy (0: blocks come with transactions, or too few blocks to tell); written to the session
     file's "deadlines" object, informational (the contract counts blocks) */
  double round_timeout_s, active_timeout_s, block_time_s;
  /* windows sized for the chain (binding/fit.h): 1 when the user named --window (LR full batch:
     --round-rows) / --eval-rows-per-round, so a value above what fits is refused (naming the
     largest that fits) instead of lowered to it; the block gas limit read at deploy */
  int window_insist, eval_insist;
  /* 1: --staleness not given: hashed sessions (not LR) on a chain with a block time get
     staleness 1 (one block per window; README "A chain with a block time") */
  int staleness_auto;
  uint64_t block_gas_limit;
  /* who may register: open_registration 1, anyone (asked for at deploy); else the nmembers
     addresses in members (nmembers == cparams.clients), the constructor's member list. Written to
     the session file as "registration": "open" | "members" and "members": [addresses]. */
  int open_registration;
  int nmembers;
  uint8_t members[64][20];
} bbvfl_session;

/* Parses a comma-separated list of 0x addresses into s->members (BBVFL_E_ARG naming `flag` and
   the bad entry; at most 64, no duplicates). */
int bbvfl_session_parse_members(bbvfl_session *s, const char *list, const char *flag, bbvfl_err *err);

/* 1 when addr may register in the session (open, or a member), else 0. */
int bbvfl_session_may_register(const bbvfl_session *s, const uint8_t addr[20]);

/* Default deadlines in seconds, turned into blocks at deploy on a chain with a block time. */
#define BBVFL_DEFAULT_ROUND_TIMEOUT_S 600.0
#define BBVFL_DEFAULT_ACTIVE_TIMEOUT_S 600.0

/* The chain's block time in seconds from the timestamps of its last (up to) 16 blocks: 0 when
 * it cannot tell (fewer than 3 blocks) or when two consecutive blocks share a timestamp (blocks
 * made per transaction, an automining devnet). */
int bbvfl_session_block_time(bbvfl_rpc *rpc, double *out, bbvfl_err *err);

/* Seconds -> blocks at block time bt (ceil, at least 8); bt 0 (no block time): `instant`. */
uint64_t bbvfl_session_blocks_for(double seconds, double bt, uint64_t instant);

/* Deploys the aggregator (which deploys its reward token) for the training setup in s->train and
 * the table ds, and fills the rest of *s (chain id, addresses, deploy block, contract
 * parameters: R = floor(N_train/B) minibatches per epoch in windows of s->train.window (clamped
 * to R; T = ceil(R/K) rounds), every test row evaluated each epoch in rounds of s->train.eval_rows_per_round
 * rows (0: one round), both lowered to the largest that fit the chain (binding/fit.h: the 2^24 gas cap
 * per transaction and the block gas limit read from the node, s->block_gas_limit) unless
 * s->window_insist / s->eval_insist (then BBVFL_E_ARG naming the largest that fits), s->train.staleness, 1 token (1e18 units) per accepted
 * submission, the pool exactly rate * M * total rounds). Deadlines: commit/reveal 1000 blocks;
 * the active and round timeouts: s->cparams.active_blocks / round_timeout_blocks when set, else
 * s->active_timeout_s / round_timeout_s (0: BBVFL_DEFAULT_*_S, 10 minutes) turned into blocks from
 * the block time measured now (bbvfl_session_block_time), or 100000 blocks on a chain whose blocks
 * come with transactions (an automining devnet: a stalled session makes no blocks there). s->rpc_url, label and data are the caller's. The caller may set s->cparams.masked
 * (masked mode, docs/MASKED.md), s->cparams.hashed (hashed aggregation) and s->cparams.round_timeout_blocks (0: 100000) before the call,
 * and, for model lr with the full batch (s->train.B 0), s->cparams.window: the training rows per round (0: as many as
 * fit the chain); every other contract parameter is derived. Model lr: P = K (1 for two classes, else the
 * class count); the full batch has contract batch 1 and windows of those rows (docs/LR.md "On chain"). rpc, sender: the deployer's (borrowed). */
struct bbvfl_sender;
int bbvfl_session_deploy(bbvfl_rpc *rpc, struct bbvfl_sender *sender, const bbvfl_dataset *ds, bbvfl_session *s, bbvfl_err *err);

/* ---- validation: every check of a session's setup, file and chain lives here; the commands
 * only pass what they were given. Each returns 0, or -1 with err: BBVFL_E_ARG for a setup or a
 * flag that cannot work (the flag named), BBVFL_E_PARSE for text that is not what it should be,
 * BBVFL_E_STATE where the node or the session disagrees with what was asked. */

/* The aggregation mode by name: "lane", "hashed", "packed" or "optimistic" (*mode: the
   bbvfl_wire_mode of binding/packing.h, 0..3; hashed aggregation for every mode but lane). */
int bbvfl_session_parse_aggregation(const char *name, int *mode, bbvfl_err *err);
/* The name of a bbvfl_wire_mode ("unknown" outside 0..3). */
const char *bbvfl_session_aggregation_name(int mode);
/* s's aggregation by name (bbvfl_session_parse_aggregation): the contract's kind (cparams.wire) and
   whether rounds are hashed (cparams.hashed: every mode but lane), the one place both are set from
   a name. s is left alone on an error. */
int bbvfl_session_set_aggregation(bbvfl_session *s, const char *name, bbvfl_err *err);

/* A session seed given as text: decimal 0..2^63-1 (what the session file can hold). */
int bbvfl_session_parse_seed(const char *text, uint64_t *seed, bbvfl_err *err);

/* The setup of s before anything is deployed: s->train's mechanism (only pbm: the contract sums
 * integers) and its b and beta, 1..64 clients, M*b within the widest lane (65535; in masked mode,
 * s->cparams.masked, the masked lanes are 16 bits), staleness 0..8 and above 0 only with
 * s->cparams.hashed; the model's constraints on chain: --batch 0 only for model lr, model lr with
 * staleness 0, its sqn with the full batch and lane aggregation. bbvfl_session_deploy runs it
 * first. */
int bbvfl_session_check_setup(const bbvfl_session *s, bbvfl_err *err);

/* addr (text, as a user typed it) names the session's aggregator. */
int bbvfl_session_check_contract(const bbvfl_session *s, const char *addr, bbvfl_err *err);

/* The table ds can carry the session: at least as many feature columns as clients. */
int bbvfl_session_check_table(const bbvfl_session *s, const bbvfl_dataset *ds, bbvfl_err *err);

/* anvil's well-known development account 0 (BBVFL_ANVIL_DEV_KEY0, eth/wallet.h) as *k, only when
 * the node rpc is a devnet (chain id BBVFL_ANVIL_CHAIN_ID): on any other chain it is refused
 * (BBVFL_E_ARG) and the message asks for `flag FILE` with a funded key. */
int bbvfl_session_devnet_key(bbvfl_rpc *rpc, const char *flag, bbvfl_key *k, bbvfl_err *err);

int bbvfl_session_save(const bbvfl_session *s, const char *path, bbvfl_err *err);

/* Where a session's history is: its rpc_url, aggregator (the address as written) and deploy block,
 * read from the session file without the rest (what an audit needs: the chain holds the
 * parameters). BBVFL_E_PARSE when one of the three is missing. */
typedef struct {
  char rpc_url[512];
  char contract[64];
  uint64_t deploy_block;
} bbvfl_session_loc;
int bbvfl_session_locate(const char *path, bbvfl_session_loc *out, bbvfl_err *err);
int bbvfl_session_load(const char *path, bbvfl_session *s, bbvfl_err *err);

#endif
