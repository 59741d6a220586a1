/* 256-bit unsigned integers for Ethereum quantities (wei amounts, gas prices, ABI words).
 * Plain value type, big-endian bytes, no allocation. */
#ifndef BBVFL_ETH_U256_H
#define BBVFL_ETH_U256_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct {
  uint8_t be[32];
} bbvfl_u256; /* big-endian 256-bit unsigned */

bbvfl_u256 bbvfl_u256_from_u64(uint64_t v);
/* "0x..." hex (1..64 digits) or decimal (up to 2^256-1); anything else, or overflow, is an error. */
int bbvfl_u256_from_string(const char *s, bbvfl_u256 *out, bbvfl_err *err);
int bbvfl_u256_to_u64(const bbvfl_u256 *v, uint64_t *out); /* -1 if it does not fit */
void bbvfl_u256_to_dec(const bbvfl_u256 *v, char out[80]);

/* Added helpers. */
/* From up to 32 big-endian bytes (shorter inputs are left-padded with zeros); -1 if len > 32. */
int bbvfl_u256_from_be(const uint8_t *b, size_t len, bbvfl_u256 *out);
/* Minimal JSON-RPC quantity: "0x0", "0x1f" (no leading zeros). out >= 67 bytes. */
void bbvfl_u256_to_hex(const bbvfl_u256 *v, char out[67]);
int bbvfl_u256_is_zero(const bbvfl_u256 *v);
int bbvfl_u256_cmp(const bbvfl_u256 *a, const bbvfl_u256 *b); /* -1, 0, 1 */
/* r = a + b mod 2^256; returns the carry (1 on overflow). r may alias a or b. */
int bbvfl_u256_add(bbvfl_u256 *r, const bbvfl_u256 *a, const bbvfl_u256 *b);
/* r = a - b mod 2^256; returns the borrow (1 when b > a). */
int bbvfl_u256_sub(bbvfl_u256 *r, const bbvfl_u256 *a, const bbvfl_u256 *b);
/* r = a * m mod 2^256; returns 1 on overflow. */
int bbvfl_u256_mul_u64(bbvfl_u256 *r, const bbvfl_u256 *a, uint64_t m);
/* a mod m for m > 0 (m = 0 returns 0). */
uint64_t bbvfl_u256_mod_u64(const bbvfl_u256 *a, uint64_t m);
/* q = a / m, returns a mod m; m must be > 0. q may alias a. */
uint64_t bbvfl_u256_divmod_u64(bbvfl_u256 *q, const bbvfl_u256 *a, uint64_t m);
/* Number of significant bytes (0 for zero): the length of the minimal big-endian form. */
size_t bbvfl_u256_byte_len(const bbvfl_u256 *v);

#endif
