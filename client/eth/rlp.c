#include "eth/rlp.h"

#include <string.h>

/* Header for a payload of len bytes with short-form base (0x80 strings, 0xc0 lists). */
static size_t rlp_header(uint8_t base, size_t len, uint8_t hdr[9]) {
  if (len <= 55) {
    hdr[0] = (uint8_t)(base + len);
    return 1;
  }
  uint8_t tmp[8];
  size_t n = 0;
  for (size_t v = len; v; v >>= 8) tmp[n++] = (uint8_t)v;
  hdr[0] = (uint8_t)(base + 55 + n);
  for (size_t i = 0; i < n; i++) hdr[1 + i] = tmp[n - 1 - i];
  return 1 + n;
}

void bbvfl_rlp_put_bytes(bbvfl_buf *b, const uint8_t *data, size_t len) {
  if (len == 1 && data[0] < 0x80) {
    bbvfl_buf_byte(b, data[0]);
    return;
  }
  uint8_t hdr[9];
  bbvfl_buf_append(b, hdr, rlp_header(0x80, len, hdr));
  bbvfl_buf_append(b, data, len);
}

void bbvfl_rlp_put_u64(bbvfl_buf *b, uint64_t v) {
  bbvfl_u256 u = bbvfl_u256_from_u64(v);
  bbvfl_rlp_put_u256(b, &u);
}

void bbvfl_rlp_put_u256(bbvfl_buf *b, const bbvfl_u256 *v) {
  size_t n = bbvfl_u256_byte_len(v);
  bbvfl_rlp_put_bytes(b, v->be + 32 - n, n);
}

size_t bbvfl_rlp_list_begin(const bbvfl_buf *b) { return b->len; }

void bbvfl_rlp_list_end(bbvfl_buf *b, size_t mark) {
  if (b->oom || mark > b->len) return;
  uint8_t hdr[9];
  size_t h = rlp_header(0xc0, b->len - mark, hdr);
  bbvfl_buf_insert(b, mark, hdr, h);
}

/* Reads a big-endian length of n bytes (1..8), canonical: no leading zero, > 55. */
static int read_long_len(const uint8_t *p, size_t n, size_t avail, size_t *out, bbvfl_err *err) {
  if (n > avail)
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: length field of %zu bytes runs past the input", n);
  if (n > sizeof(size_t))
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: length field of %zu bytes is too large", n);
  if (p[0] == 0) return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: length with a leading zero byte");
  size_t v = 0;
  for (size_t i = 0; i < n; i++) v = (v << 8) | p[i];
  if (v <= 55)
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: long form used for a short length (%zu)", v);
  *out = v;
  return 0;
}

int bbvfl_rlp_decode(const uint8_t *in, size_t in_len, bbvfl_rlp_item *item, size_t *consumed,
                     bbvfl_err *err) {
  if (in_len == 0) return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: empty input");
  uint8_t b0 = in[0];
  size_t hdr, len = 0;
  int is_list = b0 >= 0xc0;
  if (b0 < 0x80) {
    item->is_list = 0;
    item->payload = in;
    item->len = 1;
    *consumed = 1;
    return 0;
  } else if (b0 <= 0xb7) {
    hdr = 1;
    len = (size_t)(b0 - 0x80);
  } else if (b0 < 0xc0) {
    hdr = 1 + (size_t)(b0 - 0xb7);
    if (read_long_len(in + 1, hdr - 1, in_len - 1, &len, err) < 0) return -1;
  } else if (b0 <= 0xf7) {
    hdr = 1;
    len = (size_t)(b0 - 0xc0);
  } else {
    hdr = 1 + (size_t)(b0 - 0xf7);
    if (read_long_len(in + 1, hdr - 1, in_len - 1, &len, err) < 0) return -1;
  }
  if (len > in_len - hdr)
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: item claims %zu bytes but only %zu remain", len,
                      in_len - hdr);
  if (!is_list && hdr == 1 && len == 1 && in[1] < 0x80)
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: single byte 0x%02x below 0x80 must not have a prefix",
                      in[1]);
  item->is_list = is_list;
  item->payload = in + hdr;
  item->len = len;
  *consumed = hdr + len;
  return 0;
}

int bbvfl_rlp_decode_exact(const uint8_t *in, size_t in_len, bbvfl_rlp_item *item, bbvfl_err *err) {
  size_t used = 0;
  if (bbvfl_rlp_decode(in, in_len, item, &used, err) < 0) return -1;
  if (used != in_len)
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: %zu trailing bytes after the item", in_len - used);
  return 0;
}

int bbvfl_rlp_iter_init(bbvfl_rlp_iter *it, const bbvfl_rlp_item *list, bbvfl_err *err) {
  if (!list->is_list) return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: expected a list, found a string");
  it->p = list->payload;
  it->left = list->len;
  return 0;
}

int bbvfl_rlp_next(bbvfl_rlp_iter *it, bbvfl_rlp_item *item, bbvfl_err *err) {
  if (it->left == 0) return 0;
  size_t used = 0;
  if (bbvfl_rlp_decode(it->p, it->left, item, &used, err) < 0) return -1;
  it->p += used;
  it->left -= used;
  return 1;
}

int bbvfl_rlp_item_u256(const bbvfl_rlp_item *item, bbvfl_u256 *out, bbvfl_err *err) {
  if (item->is_list) return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: expected an integer, found a list");
  if (item->len > 32)
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: integer of %zu bytes exceeds 256 bits", item->len);
  if (item->len > 0 && item->payload[0] == 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: integer with a leading zero byte");
  bbvfl_u256_from_be(item->payload, item->len, out);
  return 0;
}

int bbvfl_rlp_item_u64(const bbvfl_rlp_item *item, uint64_t *out, bbvfl_err *err) {
  bbvfl_u256 v;
  if (bbvfl_rlp_item_u256(item, &v, err) < 0) return -1;
  if (bbvfl_u256_to_u64(&v, out) < 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "RLP: integer of %zu bytes exceeds 64 bits", item->len);
  return 0;
}
