/* The lean on-chain aggregation driver behind `bbvfl bench`: it runs the aggregation part of the
 * protocol against a deployed contract with M clients sending in parallel (one thread per client,
 * each with its own key, RPC connection and nonce), and times every round.
 *
 * What a round is here (the definition the benchmark reports):
 *   on-chain aggregation time of round r = from the moment the first of the M clients starts
 *   signing its submission (all M start together, released by one barrier; the quantized vectors
 *   are ready before) to the moment the receipt of the submission that completed the round (the
 *   one carrying RoundCompleted with the sum) is in the hands of its client: the sum is available
 *   to every reader from then on. Transactions go out with eth_sendRawTransactionSync (receipt in
 *   the send's round trip; ordinary send + receipt polling on nodes without it).
 * Between TRAIN rounds the active client posts a gradient (random binary32 values, B x P, and the
 * fusion parameters of a binary head, P + 1 floats) exactly as the protocol does, so the next round
 * opens; that post is timed separately and is not part of the aggregation time. EVAL rounds open
 * the next round at once. The session is set up before timing starts (deploy, register,
 * commit-reveal election, with filler transfers to pass the election's block deadlines).
 *
 * Values: plain mode sends PBM-quantized random embeddings (h uniform in [-1, 1], b, beta); masked
 * mode sends uniform random 16-bit lanes, which is what masked values look like to the contract.
 * Naive mode runs the same rounds against NaiveAggregator (one uint256 per value, then one
 * aggregate() call by client 0, included in the round's time and gas).
 *
 * Ownership: a bbvfl_cbench_pool owns its keys (wiped on free), connections and senders; results
 * own their round array (bbvfl_cbench_result_free). Nothing is printed. */
#ifndef BBVFL_BENCH_CHAINBENCH_H
#define BBVFL_BENCH_CHAINBENCH_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/wallet.h"

/* EIP-7825: the most gas one transaction may use after Osaka. */
#define BBVFL_TX_GAS_CAP (1ull << 24)

/* n funded client keys with one connection and one sender each. */
typedef struct bbvfl_cbench_pool bbvfl_cbench_pool;

/* Generates n fresh keys (getrandom) and funds each with `fund_eth` ether from funder (a key
 * with enough balance, e.g. anvil's dev account 0; borrowed only during the call). */
bbvfl_cbench_pool *bbvfl_cbench_pool_new(const char *rpc_url, const bbvfl_key *funder, int n,
                                         unsigned fund_eth, bbvfl_err *err);
void bbvfl_cbench_pool_free(bbvfl_cbench_pool *p);
int bbvfl_cbench_pool_size(const bbvfl_cbench_pool *p);
/* The node's block gas limit (latest block) and chain id, read when the pool was made. */
uint64_t bbvfl_cbench_pool_block_gas_limit(const bbvfl_cbench_pool *p);

typedef enum { BBVFL_CBENCH_PLAIN = 0, BBVFL_CBENCH_MASKED = 1, BBVFL_CBENCH_NAIVE = 2 } bbvfl_cbench_kind;

typedef struct {
  bbvfl_cbench_kind kind;
  int M;                 /* clients, 1..64 and <= pool size */
  uint32_t B, P;         /* batch and embedding size */
  int b;                 /* PBM trials (plain: values 0..b; sets the lane width M*b) */
  double beta;           /* PBM bias for the random embeddings */
  uint32_t T, V;         /* training / evaluation rounds per epoch (naive: only T is used) */
  uint32_t epochs;
  uint64_t seed;         /* random embeddings (mixed with a fresh random word per run) */
  /* Keeping the chain short on anvil, whose time per block grows with the length of its chain
   * unless it runs with pruned history (docs/ONCHAIN.md):
   * 0: nothing; the configuration's blocks stay on the chain.
   * 1: evm_snapshot before the deployment, evm_revert to it at the end: the node is left as it
   *    was, so every configuration of a benchmark starts on the same chain.
   * 2: as 1, and also evm_revert to the post-setup state after every epoch: each epoch then
   *    replays the session's first epoch on a chain of the same length (for a node with full
   *    history, where later epochs would otherwise pay for the earlier ones' blocks). */
  int reset;
  /* 1: after every round (outside its time) the driver times one bare signed 1-wei transfer to
   * receipt from its own key: the floor on the chain as it is at that round */
  int floor_each_round;
  /* called after every round (nullable) */
  void (*on_round)(void *ctx, uint64_t done, uint64_t total);
  void *ctx;
} bbvfl_cbench_cfg;

typedef struct {
  uint64_t round;          /* 0.. in the order run */
  uint64_t contract_round; /* the contract's round number (differs from round with reset) */
  uint32_t epoch;
  int train;             /* 1 TRAIN, 0 EVAL */
  double agg_ms;         /* aggregation time of the round (see above) */
  double post_ms;        /* the gradient post after a TRAIN round (0 for EVAL / naive) */
  uint64_t gas;          /* gasUsed of the M submissions (naive: + aggregate()) */
  uint64_t max_tx_gas;   /* the largest single transaction of the round */
  uint64_t post_gas;     /* the gradient post */
  double floor_ms;       /* the interleaved floor transfer after this round (floor_each_round) */
} bbvfl_cbench_round;

typedef struct {
  bbvfl_cbench_round *rounds; /* nrounds entries, owned */
  size_t nrounds;
  uint32_t lane_bits;         /* 8 or 16 (naive: 256) */
  uint64_t submit_gas_limit;  /* gas limit the submissions were sent with */
  uint64_t deploy_gas;
  double setup_s;             /* deploy + registration + election */
  int stalls;                 /* rounds in which a submission sat unmined for 2 s until the driver
                                 asked the node to mine a block (evm_mine); 0 on a healthy node */
} bbvfl_cbench_result;

/* Deploys a fresh contract and runs cfg->epochs * (T + V) rounds (naive: epochs * T). Fails with
 * BBVFL_E_STATE when a transaction of the configuration would need more gas than the
 * per-transaction cap or the block gas limit allows (the message says which and how much). */
int bbvfl_cbench_run(bbvfl_cbench_pool *p, const bbvfl_cbench_cfg *cfg, bbvfl_cbench_result *res,
                     bbvfl_err *err);
void bbvfl_cbench_result_free(bbvfl_cbench_result *r);

#endif
