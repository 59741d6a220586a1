#include "eth/u256.h"

#include <string.h>

#include "eth/hex.h"

bbvfl_u256 bbvfl_u256_from_u64(uint64_t v) {
  bbvfl_u256 r;
  memset(&r, 0, sizeof r);
  for (int i = 0; i < 8; i++) r.be[31 - i] = (uint8_t)(v >> (8 * i));
  return r;
}

int bbvfl_u256_from_be(const uint8_t *b, size_t len, bbvfl_u256 *out) {
  if (len > 32) return -1;
  memset(out->be, 0, 32);
  if (len) memcpy(out->be + 32 - len, b, len);
  return 0;
}

int bbvfl_u256_is_zero(const bbvfl_u256 *v) {
  uint8_t acc = 0;
  for (int i = 0; i < 32; i++) acc |= v->be[i];
  return acc == 0;
}

size_t bbvfl_u256_byte_len(const bbvfl_u256 *v) {
  size_t i = 0;
  while (i < 32 && v->be[i] == 0) i++;
  return 32 - i;
}

int bbvfl_u256_cmp(const bbvfl_u256 *a, const bbvfl_u256 *b) {
  int c = memcmp(a->be, b->be, 32);
  return (c > 0) - (c < 0);
}

int bbvfl_u256_add(bbvfl_u256 *r, const bbvfl_u256 *a, const bbvfl_u256 *b) {
  unsigned carry = 0;
  for (int i = 31; i >= 0; i--) {
    unsigned s = (unsigned)a->be[i] + b->be[i] + carry;
    r->be[i] = (uint8_t)s;
    carry = s >> 8;
  }
  return (int)carry;
}

int bbvfl_u256_sub(bbvfl_u256 *r, const bbvfl_u256 *a, const bbvfl_u256 *b) {
  int borrow = 0;
  for (int i = 31; i >= 0; i--) {
    int d = (int)a->be[i] - b->be[i] - borrow;
    borrow = d < 0;
    r->be[i] = (uint8_t)(d + (borrow ? 256 : 0));
  }
  return borrow;
}

int bbvfl_u256_mul_u64(bbvfl_u256 *r, const bbvfl_u256 *a, uint64_t m) {
  /* 32-bit limbs, least significant first, so that limb * limb + carry fits in 64 bits */
  uint32_t limbs[8], f[2] = {(uint32_t)m, (uint32_t)(m >> 32)};
  uint64_t acc[10] = {0};
  for (int i = 0; i < 8; i++) {
    const uint8_t *p = a->be + 28 - 4 * i;
    limbs[i] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
  }
  for (int j = 0; j < 2; j++) {
    uint64_t carry = 0;
    for (int i = 0; i < 8; i++) {
      uint64_t t = (uint64_t)limbs[i] * f[j] + (acc[i + j] & 0xffffffffu) + carry;
      acc[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
    acc[8 + j] += carry;
  }
  for (int i = 0; i < 8; i++) {
    uint8_t *p = r->be + 28 - 4 * i;
    p[0] = (uint8_t)(acc[i] >> 24);
    p[1] = (uint8_t)(acc[i] >> 16);
    p[2] = (uint8_t)(acc[i] >> 8);
    p[3] = (uint8_t)acc[i];
  }
  return acc[8] != 0 || acc[9] != 0;
}

uint64_t bbvfl_u256_divmod_u64(bbvfl_u256 *q, const bbvfl_u256 *a, uint64_t m) {
  /* bitwise long division (m may use all 64 bits) */
  bbvfl_u256 quot;
  memset(&quot, 0, sizeof quot);
  uint64_t rem = 0; /* always < m */
  for (int i = 0; i < 256; i++) {
    uint64_t bit = (uint64_t)(a->be[i / 8] >> (7 - i % 8)) & 1;
    int carry = (int)(rem >> 63); /* the shifted value is >= 2^64 > m: subtract (mod 2^64) */
    rem = (rem << 1) | bit;
    if (carry || rem >= m) {
      rem -= m;
      quot.be[i / 8] |= (uint8_t)(1u << (7 - i % 8));
    }
  }
  if (q) *q = quot;
  return (uint64_t)rem;
}

uint64_t bbvfl_u256_mod_u64(const bbvfl_u256 *a, uint64_t m) {
  if (m == 0) return 0;
  return bbvfl_u256_divmod_u64(NULL, a, m);
}

int bbvfl_u256_to_u64(const bbvfl_u256 *v, uint64_t *out) {
  for (int i = 0; i < 24; i++)
    if (v->be[i]) return -1;
  uint64_t r = 0;
  for (int i = 24; i < 32; i++) r = (r << 8) | v->be[i];
  *out = r;
  return 0;
}

void bbvfl_u256_to_dec(const bbvfl_u256 *v, char out[80]) {
  char tmp[80];
  size_t n = 0;
  bbvfl_u256 x = *v;
  do {
    uint64_t d = bbvfl_u256_divmod_u64(&x, &x, 10);
    tmp[n++] = (char)('0' + d);
  } while (!bbvfl_u256_is_zero(&x));
  for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
  out[n] = '\0';
}

void bbvfl_u256_to_hex(const bbvfl_u256 *v, char out[67]) {
  static const char digits[] = "0123456789abcdef";
  size_t o = 0;
  out[o++] = '0';
  out[o++] = 'x';
  int started = 0;
  for (int i = 0; i < 64; i++) {
    int d = (v->be[i / 2] >> (i % 2 ? 0 : 4)) & 15;
    if (!started && d == 0 && i < 63) continue;
    started = 1;
    out[o++] = digits[d];
  }
  out[o] = '\0';
}

int bbvfl_u256_from_string(const char *s, bbvfl_u256 *out, bbvfl_err *err) {
  if (!s || !*s) return bbvfl_fail(err, BBVFL_E_PARSE, "empty number");
  bbvfl_u256 r;
  memset(&r, 0, sizeof r);
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    const char *h = s + 2;
    size_t n = strlen(h);
    if (n == 0) return bbvfl_fail(err, BBVFL_E_PARSE, "\"%.40s\": no hex digits after 0x", s);
    while (n > 1 && h[0] == '0') {
      h++;
      n--;
    }
    if (n > 64) return bbvfl_fail(err, BBVFL_E_PARSE, "\"%.40s...\" does not fit in 256 bits", s);
    for (size_t i = 0; i < n; i++) {
      int d = bbvfl_hex_digit(h[i]);
      if (d < 0) return bbvfl_fail(err, BBVFL_E_PARSE, "\"%.80s\": bad hex digit '%c'", s, h[i]);
      size_t pos = 63 - (n - 1 - i); /* nibble index from the most significant */
      r.be[pos / 2] |= (uint8_t)(pos % 2 ? d : d << 4);
    }
  } else {
    for (const char *p = s; *p; p++) {
      if (*p < '0' || *p > '9')
        return bbvfl_fail(err, BBVFL_E_PARSE, "\"%.80s\" is not a decimal or 0x-hex number", s);
      bbvfl_u256 digit = bbvfl_u256_from_u64((uint64_t)(*p - '0'));
      if (bbvfl_u256_mul_u64(&r, &r, 10) || bbvfl_u256_add(&r, &r, &digit))
        return bbvfl_fail(err, BBVFL_E_PARSE, "\"%.80s\" does not fit in 256 bits", s);
    }
  }
  *out = r;
  return 0;
}
