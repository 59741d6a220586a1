/* Windows sized for the chain: the largest training window K and evaluation split E whose
 * transactions fit the per-transaction gas cap (EIP-7825: 2^24) and whose steady-state block fits
 * the node's block gas limit (with a margin), for any table, M, P and b.
 *
 * The gas figures are the gas LIMITS the on-chain client signs its transactions with (a node
 * refuses a transaction whose limit is above the cap, and a block builder counts limits against
 * the block's remaining gas), so the fit is what the client can actually send:
 *   submit(n)      one client's submission of n values (bbvfl_fit_submit_gas),
 *   aggregate(n)   hashed mode: the M payloads of n values re-supplied (bbvfl_fit_aggregate_gas),
 *   gradient(n)    the window's n binary32 gradients and the head's parameters (bbvfl_fit_gradient_gas),
 *   dispute(n)     optimistic mode: a dispute() of the round re-supplying all M packed payloads
 *                  (bbvfl_fit_dispute_gas), its own transaction, at most the cap and margin x the
 *                  block gas limit (bbvfl_fit_dispute_limit): a round whose dispute does not fit
 *                  could never be disputed, so the window shrinks until it does.
 * The bytes a value takes on the wire come from one function (bbvfl_fit_wire_bytes): another
 * encoding (packed values) plugs in there and every figure follows.
 * Block rule, one block per window in steady state (docs/ONCHAIN.md "Windows sized for the chain"):
 * the window's transactions in one block, its M submissions, in hashed mode its aggregate(), and
 * (training) its gradient post. A block takes a transaction while the transaction's LIMIT fits
 * what the earlier ones USED, so: the gas they use (an upper estimate under Cancun and Prague
 * rules, bbvfl_fit_block_gas) plus the largest limit-minus-used <= margin x block gas limit;
 * and each transaction's limit <= the cap. n = K x B x P (training), E x P (evaluation).
 * Pure functions: no I/O, nothing owned (bbvfl_fit_read_chain asks the node). */
#ifndef BBVFL_VFL_FIT_H
#define BBVFL_VFL_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* EIP-7825: the most gas one transaction may carry (2^24). */
#define BBVFL_FIT_TX_CAP 16777216ULL
/* The share of the block gas limit one window's transactions may take (the rest: other traffic,
 * evaluation rounds, metrics and payouts). */
#define BBVFL_BLOCK_GAS_MARGIN 0.9
/* Used when the node does not say (anvil's and Ethereum's long-standing 30 M). */
#define BBVFL_DEFAULT_BLOCK_GAS 30000000ULL

typedef struct {
  int hashed;          /* 1: hashed aggregation (an aggregate() per round); 0: lane storage */
  int masked;          /* 1: masked mode (16-bit values on the wire) */
  unsigned M;          /* clients */
  unsigned levels;     /* b: values are 0..b */
  size_t head_len;     /* bytes of the head's parameters in postGradient */
  int wire;            /* bbvfl_wire_mode (binding/packing.h), read for BBVFL_WIRE_PACKED (values
                          bit-packed at bbvfl_pack_bits(b) bits, twice: submit and aggregate()) and
                          BBVFL_WIRE_OPTIMISTIC (packed once; the round's postSum() carries only the
                          32-byte hash of the sum); any other value: a byte per
                          value (two when masked), as hashed/masked say */
} bbvfl_fit_setup;

typedef struct {
  uint64_t tx_cap;     /* per-transaction gas cap (BBVFL_FIT_TX_CAP) */
  uint64_t block_gas;  /* the node's block gas limit */
  double margin;       /* share of it a window may take, (0, 1] */
} bbvfl_fit_chain;

/* Bytes n values take in a submission's calldata. */
uint64_t bbvfl_fit_wire_bytes(const bbvfl_fit_setup *s, uint64_t n);
/* Bytes an optimistic round's postSum() carries for its sum (the 32-byte hash; 0 in every other
 * mode). */
uint64_t bbvfl_fit_sum_bytes(const bbvfl_fit_setup *s, uint64_t n);
/* Gas limits the client signs with (onchain/onchain_*.c call these). via_self: the submission goes
 * through the account's own execute() (bbvfl client --submit-via-self). */
uint64_t bbvfl_fit_submit_gas(const bbvfl_fit_setup *s, uint64_t n, int via_self);
/* aggregate(round, payloads): calldata_len = the encoded call's length, got = payloads. */
uint64_t bbvfl_fit_aggregate_call_gas(uint64_t calldata_len, uint64_t got);
/* The same for the round's aggregate() of M payloads of n values, or in optimistic mode its
 * postSum(round, packed sum) (the encoding's length computed). */
uint64_t bbvfl_fit_aggregate_gas(const bbvfl_fit_setup *s, uint64_t n);
uint64_t bbvfl_fit_gradient_gas(uint64_t n, size_t head_len);

/* Optimistic mode's dispute(round, claimer, sumHash, payloads) (BbvflOptimisticAggregator), the gas
 * limit the client signs it with and the window sizing checks: an upper estimate of the gas it uses
 * under Cancun rules (every calldata byte non-zero, 16 gas, plus the execution with a 25 % margin)
 * and under Prague's EIP-7623 floor (40 gas per non-zero byte), whichever is higher. The execution
 * model (the claim check hashing each payload, the bit-sliced sum of the payloads at
 * bbvfl_pack_bits(M*b) planes, the roll-back, the RoundCompleted log of the sum, memory) is fitted
 * to measurements (fit.c, contract/GAS.md "Dispute gas").
 *   _exec:      the execution of a dispute of `payloads` payloads of n values each;
 *   _call_gas:  the whole transaction for an encoded call of calldata_len bytes (the client's limit);
 *   _gas:       the round's dispute with all M payloads (0 when the mode has no dispute). */
uint64_t bbvfl_fit_dispute_exec(const bbvfl_fit_setup *s, uint64_t n, uint64_t payloads);
uint64_t bbvfl_fit_dispute_call_gas(const bbvfl_fit_setup *s, uint64_t calldata_len, uint64_t payloads, uint64_t n);
uint64_t bbvfl_fit_dispute_gas(const bbvfl_fit_setup *s, uint64_t n);
/* Bytes of the encoded dispute() of `payloads` payloads of n values. */
uint64_t bbvfl_fit_dispute_calldata(const bbvfl_fit_setup *s, uint64_t n, uint64_t payloads);
/* The most gas a dispute may need: min(the per-transaction cap, margin x the block gas limit). */
uint64_t bbvfl_fit_dispute_limit(const bbvfl_fit_chain *ch);

/* The gas a round's transactions use (M submissions, hashed: the aggregate(), training: the
 * gradient post), the upper estimate of the block rule. */
uint64_t bbvfl_fit_round_used_gas(const bbvfl_fit_setup *s, uint64_t n, int train);
/* The gas a round of n values needs of its block (the block rule above). */
uint64_t bbvfl_fit_block_gas(const bbvfl_fit_setup *s, uint64_t n, int train);
/* 1 when a round of n values fits the cap and the block (optimistic mode: and its dispute fits
 * bbvfl_fit_dispute_limit). */
int bbvfl_fit_ok(const bbvfl_fit_setup *s, const bbvfl_fit_chain *ch, uint64_t n, int train);
/* The most values a training (train 1) or evaluation round may carry (0: not even one). */
uint64_t bbvfl_fit_max_values(const bbvfl_fit_setup *s, const bbvfl_fit_chain *ch, int train);

/* The window and the evaluation split of a session. R minibatches of B rows per epoch, n_test
 * test rows, P values per row. *K in: the requested window (>= 1; above R: R); *E in: the
 * requested rows per evaluation round (0 or above n_test: n_test). A request above what fits is
 * lowered to the largest that fits, unless insist_K / insist_E (the user named the flag): then
 * BBVFL_E_ARG saying the largest that fits. BBVFL_E_ARG too when not even one minibatch (one test
 * row) fits; when the dispute is what does not fit (optimistic mode), the message names the
 * dispute's gas, its limit and what to change (fewer clients or levels, a smaller batch or P). */
int bbvfl_fit_window(const bbvfl_fit_setup *s, const bbvfl_fit_chain *ch, size_t R, size_t B, size_t n_test, size_t P,
                     size_t *K, int insist_K, size_t *E, int insist_E, bbvfl_err *err);

/* The chain's limits: the latest block's gasLimit (eth_getBlockByNumber), the EIP-7825 cap and
 * BBVFL_BLOCK_GAS_MARGIN. */
struct bbvfl_rpc;
int bbvfl_fit_read_chain(struct bbvfl_rpc *rpc, bbvfl_fit_chain *ch, bbvfl_err *err);

#endif
