/* RLP (Ethereum's Recursive Length Prefix encoding).
 *
 * Encoding appends to a caller-owned bbvfl_buf. Integers are written minimally (zero is 0x80,
 * no leading zero bytes). A list is written as: mark = bbvfl_rlp_list_begin(b); items...;
 * bbvfl_rlp_list_end(b, mark).
 *
 * Decoding is zero-copy and treats its input as hostile: every length is checked against the
 * bytes actually there, non-canonical forms (a single byte < 0x80 wrapped in 0x81, long forms
 * for short payloads, leading zeros in lengths) are rejected, and errors say what was wrong.
 * Items point into the caller's input buffer (borrowed: valid as long as it is). */
#ifndef BBVFL_ETH_RLP_H
#define BBVFL_ETH_RLP_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/buf.h"
#include "eth/u256.h"

void bbvfl_rlp_put_bytes(bbvfl_buf *b, const uint8_t *data, size_t len);
void bbvfl_rlp_put_u64(bbvfl_buf *b, uint64_t v);
void bbvfl_rlp_put_u256(bbvfl_buf *b, const bbvfl_u256 *v);
size_t bbvfl_rlp_list_begin(const bbvfl_buf *b);
void bbvfl_rlp_list_end(bbvfl_buf *b, size_t mark);

typedef struct {
  int is_list;
  const uint8_t *payload; /* borrowed from the input */
  size_t len;             /* payload length */
} bbvfl_rlp_item;

/* Decodes the item at the start of in; *consumed = its total encoded length. */
int bbvfl_rlp_decode(const uint8_t *in, size_t in_len, bbvfl_rlp_item *item, size_t *consumed,
                     bbvfl_err *err);
/* Decodes in as exactly one item (trailing bytes are an error). */
int bbvfl_rlp_decode_exact(const uint8_t *in, size_t in_len, bbvfl_rlp_item *item, bbvfl_err *err);

typedef struct {
  const uint8_t *p;
  size_t left;
} bbvfl_rlp_iter;
/* Iterates over the items of a list item. next: 1 = an item, 0 = end, -1 = error. */
int bbvfl_rlp_iter_init(bbvfl_rlp_iter *it, const bbvfl_rlp_item *list, bbvfl_err *err);
int bbvfl_rlp_next(bbvfl_rlp_iter *it, bbvfl_rlp_item *item, bbvfl_err *err);

/* Integer items: a byte string, minimal (no leading zero), of at most 8 / 32 bytes. */
int bbvfl_rlp_item_u64(const bbvfl_rlp_item *item, uint64_t *out, bbvfl_err *err);
int bbvfl_rlp_item_u256(const bbvfl_rlp_item *item, bbvfl_u256 *out, bbvfl_err *err);

#endif
