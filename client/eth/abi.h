/* Solidity ABI: selectors, event topics, a general encoder/decoder over parsed types and value
 * trees, a builder for the common flat case, and event log decoding.
 *
 * Types are parsed from their canonical text, e.g. "(uint256,bytes[],string)", "uint8[3][]",
 * "(address,(bool,bytes32)[2])". Supported: uint<N>/int<N> (N = 8..256 step 8; "uint"/"int"
 * mean 256), address, bool, bytes<N> (1..32), bytes, string, T[], T[k] (k >= 1), tuples.
 *
 * Ownership: a parsed bbvfl_abi_type is owned by the caller (bbvfl_abi_type_free). A value tree
 * owns its children and byte strings (bbvfl_abi_value_clear frees them; the struct itself is the
 * caller's). Encoded output buffers are malloc'd and owned by the caller.
 *
 * The decoder treats its input as hostile: every offset, length and count is checked against
 * the input, words must be clean for their type (e.g. uint8 with high bits set is an error, as
 * in Solidity), and the total size of the decoded tree is bounded by a multiple of the input
 * size, so overlapping offsets cannot blow up memory. Errors say where (path) and what. */
#ifndef BBVFL_ETH_ABI_H
#define BBVFL_ETH_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/u256.h"

void bbvfl_abi_selector(const char *signature, uint8_t out[4]);   /* "submit(uint64,bytes)" */
void bbvfl_abi_event_topic(const char *signature, uint8_t out[32]);

typedef enum {
  BBVFL_ABI_UINT,
  BBVFL_ABI_INT,
  BBVFL_ABI_ADDRESS,
  BBVFL_ABI_BOOL,
  BBVFL_ABI_FIXED_BYTES, /* bytes1..bytes32 */
  BBVFL_ABI_BYTES,
  BBVFL_ABI_STRING,
  BBVFL_ABI_ARRAY,       /* T[] */
  BBVFL_ABI_FIXED_ARRAY, /* T[k] */
  BBVFL_ABI_TUPLE
} bbvfl_abi_kind;

typedef struct bbvfl_abi_type {
  bbvfl_abi_kind kind;
  unsigned bits;                    /* UINT/INT: width in bits */
  size_t size;                      /* FIXED_BYTES: N; FIXED_ARRAY: k */
  struct bbvfl_abi_type *elem;      /* ARRAY/FIXED_ARRAY: element type (owned) */
  struct bbvfl_abi_type **fields;   /* TUPLE: component types (owned) */
  size_t nfields;
} bbvfl_abi_type;

/* Parses a type; *out owned by the caller. */
int bbvfl_abi_type_parse(const char *text, bbvfl_abi_type **out, bbvfl_err *err);
void bbvfl_abi_type_free(bbvfl_abi_type *t);
int bbvfl_abi_type_is_dynamic(const bbvfl_abi_type *t);
/* Canonical text of a type ("uint" -> "uint256") into out (size cap); -1 if it does not fit. */
int bbvfl_abi_type_format(const bbvfl_abi_type *t, char *out, size_t cap);

typedef struct bbvfl_abi_value {
  bbvfl_abi_kind kind;
  uint8_t word[32];   /* UINT: big-endian; INT: 256-bit two's complement; ADDRESS: right-aligned
                         20 bytes; BOOL: 0/1 in word[31]; FIXED_BYTES: left-aligned N bytes */
  uint8_t *bytes;     /* BYTES/STRING: owned, len bytes (+ a NUL terminator for convenience) */
  size_t len;
  struct bbvfl_abi_value *items; /* ARRAY/FIXED_ARRAY/TUPLE: owned array of n values */
  size_t n;
} bbvfl_abi_value;

/* Value constructors: fill *v (previous content is not freed). Those that allocate return -1
 * with BBVFL_E_NOMEM on failure. */
void bbvfl_abi_value_uint(bbvfl_abi_value *v, const bbvfl_u256 *x);
void bbvfl_abi_value_u64(bbvfl_abi_value *v, uint64_t x);
void bbvfl_abi_value_i64(bbvfl_abi_value *v, int64_t x);
void bbvfl_abi_value_address(bbvfl_abi_value *v, const uint8_t addr[20]);
void bbvfl_abi_value_bool(bbvfl_abi_value *v, int b);
void bbvfl_abi_value_fixed_bytes(bbvfl_abi_value *v, const uint8_t *b, size_t n); /* n <= 32 */
int bbvfl_abi_value_bytes(bbvfl_abi_value *v, const uint8_t *b, size_t n, bbvfl_err *err);
int bbvfl_abi_value_string(bbvfl_abi_value *v, const char *s, bbvfl_err *err);
/* kind ARRAY, FIXED_ARRAY or TUPLE with n zeroed children to fill in. */
int bbvfl_abi_value_list(bbvfl_abi_value *v, bbvfl_abi_kind kind, size_t n, bbvfl_err *err);
void bbvfl_abi_value_clear(bbvfl_abi_value *v);

/* Value accessors (check the kind and range; error otherwise). */
int bbvfl_abi_value_get_u64(const bbvfl_abi_value *v, uint64_t *out, bbvfl_err *err);
int bbvfl_abi_value_get_i64(const bbvfl_abi_value *v, int64_t *out, bbvfl_err *err);

/* Encodes v as type t (a top-level tuple encodes as a parameter list). The value must match the
 * type (kinds, widths, array lengths); otherwise an error names the offending path. */
int bbvfl_abi_encode(const bbvfl_abi_type *t, const bbvfl_abi_value *v, uint8_t **out, size_t *len,
                     bbvfl_err *err);
/* Decodes data (the encoding of t, byte strings padded to 32; trailing bytes are allowed) into
 * *out (cleared first; on error *out is left empty). */
int bbvfl_abi_decode(const bbvfl_abi_type *t, const uint8_t *data, size_t len, bbvfl_abi_value *out,
                     bbvfl_err *err);

/* Calldata: selector(signature) || encode(params). signature like "submit(uint64,bytes)";
 * args must be a TUPLE value with one item per parameter. */
int bbvfl_abi_encode_call(const char *signature, const bbvfl_abi_value *args, uint8_t **out,
                          size_t *len, bbvfl_err *err);

/* Event logs. decl lists the parameters with "indexed" where it applies, e.g.
 * "RoundCompleted(uint64 indexed,uint16[])" (parameter names are not allowed). topics[0] must be
 * the event topic; indexed static parameters come from topics, indexed dynamic parameters are
 * given as their 32-byte hash (a FIXED_BYTES value of 32 bytes); the rest are decoded from data.
 * *out becomes a TUPLE with one item per parameter, in declaration order. */
int bbvfl_abi_decode_log(const char *decl, const uint8_t (*topics)[32], size_t ntopics,
                         const uint8_t *data, size_t len, bbvfl_abi_value *out, bbvfl_err *err);

/* Builder for the common case: a flat parameter list of static words and dynamic bytes/string.
 *   bbvfl_abi_builder b; bbvfl_abi_builder_init(&b, "submit(uint64,bytes)");
 *   bbvfl_abi_put_u64(&b, round); bbvfl_abi_put_bytes(&b, q, n);
 *   bbvfl_abi_builder_finish(&b, &calldata, &len, &err);   (frees the builder's memory)
 * signature NULL: no selector (e.g. constructor arguments). */
typedef struct {
  uint8_t selector[4];
  int has_selector;
  uint8_t *head; size_t head_len, head_cap;
  uint8_t *tail; size_t tail_len, tail_cap;
  size_t *dyn; size_t ndyn, dyn_cap; /* head positions holding tail-relative offsets */
  int oom;
} bbvfl_abi_builder;

void bbvfl_abi_builder_init(bbvfl_abi_builder *b, const char *signature);
void bbvfl_abi_put_word(bbvfl_abi_builder *b, const uint8_t word[32]);
void bbvfl_abi_put_u64(bbvfl_abi_builder *b, uint64_t v);
void bbvfl_abi_put_u256(bbvfl_abi_builder *b, const bbvfl_u256 *v);
void bbvfl_abi_put_i64(bbvfl_abi_builder *b, int64_t v);
void bbvfl_abi_put_address(bbvfl_abi_builder *b, const uint8_t addr[20]);
void bbvfl_abi_put_bool(bbvfl_abi_builder *b, int v);
void bbvfl_abi_put_fixed_bytes(bbvfl_abi_builder *b, const uint8_t *data, size_t n); /* bytesN, n <= 32 */
void bbvfl_abi_put_bytes(bbvfl_abi_builder *b, const uint8_t *data, size_t n);
void bbvfl_abi_put_string(bbvfl_abi_builder *b, const char *s);
/* address[]: n addresses of 20 bytes each (the caller's buffer, copied; n 0 is an empty array) */
void bbvfl_abi_put_address_array(bbvfl_abi_builder *b, const uint8_t (*addrs)[20], size_t n);
int bbvfl_abi_builder_finish(bbvfl_abi_builder *b, uint8_t **out, size_t *len, bbvfl_err *err);
void bbvfl_abi_builder_free(bbvfl_abi_builder *b);

#endif
