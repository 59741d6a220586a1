/* One key's transactions: nonce manager, fees, signing, sending, waiting, and looking after what
 * it sent until the chain has it.
 *
 * A sender borrows an RPC connection and a key (both must outlive it) and keeps the next nonce
 * locally: it asks the node for the pending nonce once, then counts up, so one process can have
 * several transactions in flight without a round trip per nonce. When the node says "nonce too
 * low" (someone else used the key) it re-reads the pending nonce and re-signs once. When a send
 * fails in a way that leaves it unknown whether the node took the transaction, the next send
 * re-reads the nonce.
 *
 * Fees (EIP-1559): max fee = 2 x the next block's base fee + tip (eth_feeHistory and
 * eth_maxPriorityFeePerGas in one batched round trip), at most the cap (bbvfl_sender_set_max_fee);
 * a node whose blocks have no base fee gets legacy transactions at eth_gasPrice. Cached for a few
 * seconds (bbvfl_sender_set_fee_ttl). A refusal is explained from the chain (the next base fee
 * above the signed max fee: re-read the fees and re-sign), never from the node's words. With a
 * cap and the base fee (legacy: the gas price) above it, nothing is sent or replaced: the sender
 * waits, reports it through the status callback, and goes on when the fee falls.
 *
 * Looking after (the ring of the last 64 transactions: the call, its fees, every signed version's
 * hash): while waiting for a receipt (and whenever bbvfl_sender_check is called) the sender
 * compares the chain's latest and pending nonces with its own. A transaction the node's pool no
 * longer has (dropped, lost in a restart, removed by a reorg: its receipt is gone) is handed in
 * again, the same signed bytes while its fees are still valid, re-signed with fresh fees when not;
 * one unmined after `reprice_blocks` blocks (default 3) is replaced: same nonce, tip and max fee
 * each raised by 12.5 % at least (what geth and anvil require of a replacement) or to the current
 * fees if higher, re-signed. Every version's hash is kept: whichever is mined counts. Fees paid
 * (gasUsed x effectiveGasPrice of each receipt, once per nonce, a vanished receipt taken back)
 * are summed (bbvfl_sender_fees). Not thread-safe.
 */
#ifndef BBVFL_ETH_SENDER_H
#define BBVFL_ETH_SENDER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/rpc.h"
#include "eth/tx.h"
#include "eth/u256.h"
#include "eth/wallet.h"

typedef struct bbvfl_sender bbvfl_sender; /* borrows rpc and key; tracks the nonce locally */

/* chain_id 0: ask the node. A non-zero chain_id is used as given for signing (a wrong one makes
 * the node refuse the transactions, with an error naming both chain ids). */
bbvfl_sender *bbvfl_sender_new(bbvfl_rpc *rpc, const bbvfl_key *key, uint64_t chain_id,
                               bbvfl_err *err);
void bbvfl_sender_free(bbvfl_sender *s);

/* Transaction type for the next sends (default BBVFL_TX_EIP1559). */
int bbvfl_sender_set_type(bbvfl_sender *s, bbvfl_txtype type, bbvfl_err *err);
/* How long fetched fees are reused (seconds; default 5; 0: fetch for every transaction). */
void bbvfl_sender_set_fee_ttl(bbvfl_sender *s, double seconds);
/* Seconds transact waits for a receipt before it asks whether the node still knows the
 * transaction and re-sends the same bytes if not (default 5). */
void bbvfl_sender_set_drop_check(bbvfl_sender *s, double seconds);
/* on = 1: transact sends with eth_sendRawTransactionSync, which returns the receipt in the same
 * round trip (nodes without it are served the ordinary way); default 0. */
void bbvfl_sender_set_sync(bbvfl_sender *s, int on);
/* The sender's address (20 bytes, owned by the sender's key). */
const uint8_t *bbvfl_sender_address(const bbvfl_sender *s);
uint64_t bbvfl_sender_chain_id(const bbvfl_sender *s);
/* The nonce the next transaction will get (asks the node if not known yet). */
int bbvfl_sender_next_nonce(bbvfl_sender *s, uint64_t *nonce, bbvfl_err *err);
/* Forgets the local nonce and fee cache: the next send asks the node again. */
void bbvfl_sender_resync(bbvfl_sender *s);
/* After the node came back from an outage (bbvfl_rpc_outages changed since the last call): a node
 * restarted from a saved state may have lost the last blocks. The sender keeps its last 64
 * transactions; every one whose nonce the node's latest state has not reached yet is handed in
 * again (in nonce order; "already known" is fine; re-signed when its fees are no longer valid),
 * then the nonce is re-read. *resent (nullable) receives how many were sent again. Cheap when there was no outage
 * (no request). bbvfl_sender_transact calls it itself before each transaction. */
int bbvfl_sender_recover(bbvfl_sender *s, unsigned *resent, bbvfl_err *err);

/* What the sender tells its user while it looks after its transactions (never printed by the
 * library): the kind, the nonce and hash concerned, the fees, and a one-line message for people. */
typedef enum {
  BBVFL_SENDER_FEE_WAIT = 1, /* the base fee (legacy: gas price) is above the cap: not sending */
  BBVFL_SENDER_FEE_OK,       /* it fell to the cap or below again: sending resumes */
  BBVFL_SENDER_REPRICED,     /* a transaction was replaced with higher fees (same nonce) */
  BBVFL_SENDER_RESENT,       /* a transaction the node had lost was handed in again */
  BBVFL_SENDER_VANISHED,     /* a transaction with a receipt is no longer mined (a reorg) */
  BBVFL_SENDER_GAS_LIMIT_WAIT, /* the block gas limit is below a transaction's gas: not sending */
  BBVFL_SENDER_GAS_LIMIT_OK    /* it came back up: sending resumes */
} bbvfl_sender_event;

typedef struct {
  bbvfl_sender_event kind;
  uint64_t nonce;          /* REPRICED, RESENT, VANISHED */
  uint8_t hash[32];        /* the version now in the pool (REPRICED, RESENT), or the one gone */
  double base_fee_gwei;    /* the next block's base fee (legacy: the gas price) */
  double max_fee_gwei;     /* the transaction's max fee (legacy: gas price); FEE_*: 0 */
  double tip_gwei;
  double cap_gwei;         /* 0: no cap */
  uint64_t head;           /* the chain's latest block */
  char msg[256];
} bbvfl_sender_status;
typedef void (*bbvfl_sender_status_fn)(void *ctx, const bbvfl_sender_status *st);
void bbvfl_sender_set_status(bbvfl_sender *s, bbvfl_sender_status_fn fn, void *ctx);

/* The fee cap (wei per gas; NULL or zero: none): the max fee (legacy: gas price) signed is at most
 * this, and while the base fee (legacy: gas price) is above it nothing is sent or replaced. */
void bbvfl_sender_set_max_fee(bbvfl_sender *s, const bbvfl_u256 *cap);
/* How long a send waits for the block gas limit to come back up to the transaction's gas after
 * the node refused it for that (seconds; default 120; reported as GAS_LIMIT_WAIT every 5 s). Past
 * that the send fails with BBVFL_E_RPC, the refusal kind BBVFL_NODE_GAS_LIMIT and both limits. */
void bbvfl_sender_set_gas_limit_wait(bbvfl_sender *s, double seconds);
/* A transaction unmined this many blocks after it was handed in is replaced (0: never; default 3). */
void bbvfl_sender_set_reprice_blocks(bbvfl_sender *s, unsigned blocks);
/* Looks after every transaction this key has in flight (see the header): reads the chain's head
 * and nonces (one batched request), re-sends what the node lost, replaces what is overdue. Cheap
 * enough to call on every poll of a wait (it acts at most every 0.25 s). *acted (nullable): how
 * many transactions it handed in again or replaced. */
int bbvfl_sender_check(bbvfl_sender *s, unsigned *acted, bbvfl_err *err);
/* Why nothing of this key is being mined, for people (into out, "" when nothing is pending): no
 * new block for T s, a nonce gap (the chain's nonce and the first missing one), a transaction not
 * included (its nonce, hash, fees against the base fee), the base fee above the cap. Asks the
 * node (errors are part of the text). 1 when a cause was found, 0 when not. */
int bbvfl_sender_stall_cause(bbvfl_sender *s, char *out, size_t cap);
/* 1 when a cap is set and the base fee (legacy: gas price) last seen is above it. */
int bbvfl_sender_fee_above_cap(const bbvfl_sender *s);
/* The fees this sender's mined transactions paid: gas used and wei (gasUsed x effectiveGasPrice
 * of every receipt it saw, once per nonce). */
void bbvfl_sender_fees(const bbvfl_sender *s, uint64_t *gas_used, bbvfl_u256 *wei);
/* For a step that cannot be undone: waits until `confirmations` blocks are on top of the block of
 * *rc (a receipt of this sender's), then re-reads the receipt and checks its block is still the
 * canonical one at that height. A receipt that vanished or moved (a reorg) is awaited again (the
 * sender re-sends the transaction) and confirmed again; *rc is then replaced by the new receipt
 * (a revert there is BBVFL_E_REVERT). confirmations 0: returns at once. timeout_s 0: 120 s. */
int bbvfl_sender_confirm(bbvfl_sender *s, bbvfl_receipt *rc, unsigned confirmations, double timeout_s,
                         bbvfl_err *err);

/* Signs (EIP-1559, fees from the node, cached) and sends; does not wait. gas_limit 0: estimate
 * (+20 %). value NULL = 0. */
int bbvfl_sender_send(bbvfl_sender *s, const uint8_t *to /*NULL = create*/, const bbvfl_u256 *value,
                      const uint8_t *data, size_t len, uint64_t gas_limit, uint8_t hash[32],
                      bbvfl_err *err);
/* send + wait for the receipt (timeout_s 0: 60 s); status 0 (reverted) is an error
 * BBVFL_E_REVERT with the reason (re-run as eth_call on the state before the transaction's block
 * to decode it, or, when that call succeeds because a transaction ahead of it in the same block
 * changed the state, on the block's final state); then *out still holds the receipt. The caller always bbvfl_receipt_clear()s
 * *out (it is zeroed on other failures). */
int bbvfl_sender_transact(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                          const uint8_t *data, size_t len, uint64_t gas_limit, double timeout_s,
                          bbvfl_receipt *out, bbvfl_err *err);

/* Funds n addresses with `value` wei each from s's key (eth/fund.c): every plain transfer is sent
 * first (consecutive nonces, no wait between them: on a chain with a block time they land in one
 * block), then each receipt is awaited (timeout_s each). Returns 0, or -1 with err; *failed
 * (nullable) is then the index of the transfer that was not sent or not mined (transfers sent
 * before it stay sent). */
int bbvfl_sender_fund(bbvfl_sender *s, const uint8_t (*to)[20], size_t n, const bbvfl_u256 *value, double timeout_s,
                      size_t *failed, bbvfl_err *err);

/* A transaction sent but not yet awaited: its hash and what the wait needs (the signed bytes for
 * the drop check, the call for decoding a revert). Owned: bbvfl_pending_clear. */
typedef struct {
  uint8_t hash[32];
  uint64_t nonce;
  uint8_t *raw; size_t raw_len;
  uint8_t to[20]; int has_to;
  bbvfl_u256 value; int has_value;
  uint8_t *data; size_t len;
  uint64_t gas;
} bbvfl_pending;
void bbvfl_pending_clear(bbvfl_pending *p);
/* Signs and sends (gas must be non-zero; value NULL = 0) without waiting; *p is filled (cleared
 * on failure). */
int bbvfl_sender_send_tracked(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value, const uint8_t *data,
                              size_t len, uint64_t gas, bbvfl_pending *p, bbvfl_err *err);
/* Waits for p's receipt (any of its versions) as transact does (looking after it; a revert is BBVFL_E_REVERT with its
 * reason, *out keeping the receipt). p stays owned by the caller. */
int bbvfl_sender_wait_tracked(bbvfl_sender *s, bbvfl_pending *p, double timeout_s, bbvfl_receipt *out,
                              bbvfl_err *err);
/* Several calls to `to` from this key sent back to back (consecutive nonces, no wait between
 * them: on a chain with a block time they can land in one block), then each receipt awaited in
 * order (with transact's drop check). gas[i] must be non-zero. out: n receipts, each zeroed
 * first; the caller clears all n. On failure *failed (nullable) is the index of the first call
 * that was not sent or reverted (its revert is decoded into err as transact does). */
int bbvfl_sender_transact_many(bbvfl_sender *s, const uint8_t *to, size_t n, const uint8_t *const *data,
                               const size_t *len, const uint64_t *gas, double timeout_s, bbvfl_receipt *out,
                               size_t *failed, bbvfl_err *err);

#endif
