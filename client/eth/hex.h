/* Hex conversion for Ethereum data ("0x"-prefixed, two digits per byte). */
#ifndef BBVFL_ETH_HEX_H
#define BBVFL_ETH_HEX_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* "0x"-prefixed lower-case hex of len bytes into out (caller-owned, size >= 2*len+3). */
void bbvfl_hex_encode(const uint8_t *in, size_t len, char *out);
/* Decodes hex (optional 0x, even length) into a malloc'd buffer owned by the caller (free()).
 * "0x" / "" give *len = 0 and a non-NULL 1-byte buffer. */
int bbvfl_hex_decode_alloc(const char *hex, uint8_t **out, size_t *len, bbvfl_err *err);
/* Decodes exactly n bytes into out (caller-owned); any other length is an error. */
int bbvfl_hex_decode_fixed(const char *hex, uint8_t *out, size_t n, bbvfl_err *err);
/* Value of one hex digit, or -1. */
int bbvfl_hex_digit(char c);

#endif
