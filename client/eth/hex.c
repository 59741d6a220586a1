#include "eth/hex.h"

#include <stdlib.h>
#include <string.h>

int bbvfl_hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void bbvfl_hex_encode(const uint8_t *in, size_t len, char *out) {
  static const char digits[] = "0123456789abcdef";
  out[0] = '0';
  out[1] = 'x';
  for (size_t i = 0; i < len; i++) {
    out[2 + 2 * i] = digits[in[i] >> 4];
    out[3 + 2 * i] = digits[in[i] & 15];
  }
  out[2 + 2 * len] = '\0';
}

static const char *skip_prefix(const char *hex) {
  if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) return hex + 2;
  return hex;
}

/* Decodes ndigits (even) digits of h into out; returns -1 with a message on a bad digit. */
static int decode_digits(const char *h, size_t ndigits, uint8_t *out, bbvfl_err *err) {
  for (size_t i = 0; i < ndigits; i += 2) {
    int hi = bbvfl_hex_digit(h[i]), lo = bbvfl_hex_digit(h[i + 1]);
    if (hi < 0 || lo < 0)
      return bbvfl_fail(err, BBVFL_E_PARSE, "bad hex digit at position %zu", i + (hi < 0 ? 0 : 1));
    out[i / 2] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}

int bbvfl_hex_decode_alloc(const char *hex, uint8_t **out, size_t *len, bbvfl_err *err) {
  *out = NULL;
  *len = 0;
  if (!hex) return bbvfl_fail(err, BBVFL_E_PARSE, "missing hex string");
  const char *h = skip_prefix(hex);
  size_t n = strlen(h);
  if (n % 2) return bbvfl_fail(err, BBVFL_E_PARSE, "hex string has an odd number of digits (%zu)", n);
  uint8_t *buf = malloc(n / 2 ? n / 2 : 1);
  if (!buf) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory decoding %zu hex digits", n);
  if (decode_digits(h, n, buf, err) < 0) {
    free(buf);
    return -1;
  }
  *out = buf;
  *len = n / 2;
  return 0;
}

int bbvfl_hex_decode_fixed(const char *hex, uint8_t *out, size_t n, bbvfl_err *err) {
  if (!hex) return bbvfl_fail(err, BBVFL_E_PARSE, "missing hex string");
  const char *h = skip_prefix(hex);
  size_t digits = strlen(h);
  if (digits != 2 * n)
    return bbvfl_fail(err, BBVFL_E_PARSE, "expected %zu bytes (%zu hex digits), got %zu hex digits",
                      n, 2 * n, digits);
  return decode_digits(h, digits, out, err);
}
