/* Ethereum transactions: legacy (with or without EIP-155 replay protection; 64-bit chain ids)
 * and EIP-1559 (type 2), signed with a bbvfl_key and serialized for eth_sendRawTransaction;
 * and a strict decoder for signed raw transactions that recovers the sender (for audits). */
#ifndef BBVFL_ETH_TX_H
#define BBVFL_ETH_TX_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/u256.h"
#include "eth/wallet.h"

typedef enum { BBVFL_TX_LEGACY = 0, BBVFL_TX_EIP1559 = 2 } bbvfl_txtype;

/* One EIP-2930 access list entry (type 2 only). Borrowed. */
typedef struct {
  uint8_t address[20];
  const uint8_t (*keys)[32];
  size_t nkeys;
} bbvfl_access_entry;

typedef struct {
  bbvfl_txtype type;
  uint64_t chain_id;            /* legacy: 0 = pre-EIP-155 signature (v = 27/28) */
  uint64_t nonce;
  bbvfl_u256 gas_price;         /* legacy */
  bbvfl_u256 max_priority_fee;  /* type 2 */
  bbvfl_u256 max_fee;           /* type 2 */
  uint64_t gas_limit;
  int has_to; uint8_t to[20];   /* has_to = 0: contract creation */
  bbvfl_u256 value;
  const uint8_t *data; size_t data_len;  /* borrowed */
  /* Added: type 2 access list (borrowed; NULL/0 = empty list, encoded 0xc0). */
  const bbvfl_access_entry *access_list; size_t access_len;
} bbvfl_tx;

/* Signs and serializes (legacy: rlp; type 2: 0x02 || rlp, empty access list). *raw is
 * malloc'd and owned by the caller; hash = keccak256(raw) = the transaction hash. */
int bbvfl_tx_sign(const bbvfl_tx *tx, const bbvfl_key *k, uint8_t **raw, size_t *raw_len,
                  uint8_t hash[32], bbvfl_err *err);

/* Added. The unsigned serialization whose keccak256 is signed (legacy EIP-155: with chain id, 0,
 * 0; type 2: 0x02 || rlp without the signature). *out malloc'd, caller frees. */
int bbvfl_tx_encode_unsigned(const bbvfl_tx *tx, uint8_t **out, size_t *len, bbvfl_err *err);

/* A decoded signed transaction. tx.data points into the raw input (borrowed); the access list
 * is validated but left as its raw RLP (access_rlp, borrowed) and tx.access_list is NULL. */
typedef struct {
  bbvfl_tx tx;
  uint8_t from[20];       /* recovered sender */
  uint8_t r[32], s[32];
  int recid;              /* 0 or 1 */
  const uint8_t *access_rlp; size_t access_rlp_len;
  size_t access_count;
  uint8_t hash[32];       /* keccak256 of the raw bytes */
} bbvfl_tx_decoded;

/* Decodes a raw signed legacy or type 2 transaction. Input is hostile: every field is checked
 * (canonical RLP, integer widths, 20-byte or empty `to`, low S) and errors say which field. */
int bbvfl_tx_decode(const uint8_t *raw, size_t len, bbvfl_tx_decoded *out, bbvfl_err *err);

#endif
