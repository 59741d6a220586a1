/* Solidity ABI values, the encoder and the hostile-input decoder, event logs (eth/abi.h). The type
 * parser is in abi_type.c, the flat builder in abi_builder.c, what they share in abi_int.h. */
#include "eth/abi.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eth/abi_int.h"
#include "eth/buf.h"
#include "eth/keccak.h"

void bbvfl_abi_selector(const char *signature, uint8_t out[4]) {
  uint8_t h[32];
  bbvfl_keccak256(signature, strlen(signature), h);
  memcpy(out, h, 4);
}

void bbvfl_abi_event_topic(const char *signature, uint8_t out[32]) {
  bbvfl_keccak256(signature, strlen(signature), out);
}

/* ---------------------------------------------------------------- values */

void bbvfl_abi_value_clear(bbvfl_abi_value *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) bbvfl_abi_value_clear(&v->items[i]);
  free(v->items);
  free(v->bytes);
  memset(v, 0, sizeof *v);
}

void bbvfl_abi_value_uint(bbvfl_abi_value *v, const bbvfl_u256 *x) {
  memset(v, 0, sizeof *v);
  v->kind = BBVFL_ABI_UINT;
  memcpy(v->word, x->be, 32);
}

void bbvfl_abi_value_u64(bbvfl_abi_value *v, uint64_t x) {
  bbvfl_u256 u = bbvfl_u256_from_u64(x);
  bbvfl_abi_value_uint(v, &u);
}

void bbvfl_abi_value_i64(bbvfl_abi_value *v, int64_t x) {
  bbvfl_u256 u = bbvfl_u256_from_u64((uint64_t)x);
  if (x < 0) memset(u.be, 0xff, 24);
  bbvfl_abi_value_uint(v, &u);
  v->kind = BBVFL_ABI_INT;
}

void bbvfl_abi_value_address(bbvfl_abi_value *v, const uint8_t addr[20]) {
  memset(v, 0, sizeof *v);
  v->kind = BBVFL_ABI_ADDRESS;
  memcpy(v->word + 12, addr, 20);
}

void bbvfl_abi_value_bool(bbvfl_abi_value *v, int b) {
  memset(v, 0, sizeof *v);
  v->kind = BBVFL_ABI_BOOL;
  v->word[31] = b ? 1 : 0;
}

void bbvfl_abi_value_fixed_bytes(bbvfl_abi_value *v, const uint8_t *b, size_t n) {
  memset(v, 0, sizeof *v);
  v->kind = BBVFL_ABI_FIXED_BYTES;
  if (n > 32) n = 32;
  if (n) memcpy(v->word, b, n);
}

static int value_blob(bbvfl_abi_value *v, bbvfl_abi_kind kind, const uint8_t *b, size_t n,
                      bbvfl_err *err) {
  memset(v, 0, sizeof *v);
  v->kind = kind;
  v->bytes = malloc(n + 1);
  if (!v->bytes) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for a %zu-byte ABI value", n);
  if (n) memcpy(v->bytes, b, n);
  v->bytes[n] = 0;
  v->len = n;
  return 0;
}

int bbvfl_abi_value_bytes(bbvfl_abi_value *v, const uint8_t *b, size_t n, bbvfl_err *err) {
  return value_blob(v, BBVFL_ABI_BYTES, b, n, err);
}

int bbvfl_abi_value_string(bbvfl_abi_value *v, const char *s, bbvfl_err *err) {
  return value_blob(v, BBVFL_ABI_STRING, (const uint8_t *)s, strlen(s), err);
}

int bbvfl_abi_value_list(bbvfl_abi_value *v, bbvfl_abi_kind kind, size_t n, bbvfl_err *err) {
  memset(v, 0, sizeof *v);
  v->kind = kind;
  if (n) {
    v->items = calloc(n, sizeof *v->items);
    if (!v->items) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for %zu ABI values", n);
  }
  v->n = n;
  return 0;
}

int bbvfl_abi_value_get_u64(const bbvfl_abi_value *v, uint64_t *out, bbvfl_err *err) {
  if (v->kind != BBVFL_ABI_UINT && v->kind != BBVFL_ABI_BOOL)
    return bbvfl_fail(err, BBVFL_E_PARSE, "ABI value is not an unsigned integer");
  bbvfl_u256 u;
  memcpy(u.be, v->word, 32);
  if (bbvfl_u256_to_u64(&u, out) < 0) return bbvfl_fail(err, BBVFL_E_PARSE, "ABI value does not fit in 64 bits");
  return 0;
}

int bbvfl_abi_value_get_i64(const bbvfl_abi_value *v, int64_t *out, bbvfl_err *err) {
  if (v->kind != BBVFL_ABI_INT) return bbvfl_fail(err, BBVFL_E_PARSE, "ABI value is not a signed integer");
  uint8_t fill = (v->word[24] & 0x80) ? 0xff : 0x00;
  for (int i = 0; i < 24; i++)
    if (v->word[i] != fill) return bbvfl_fail(err, BBVFL_E_PARSE, "ABI value does not fit in 64 bits");
  uint64_t u = 0;
  for (int i = 24; i < 32; i++) u = (u << 8) | v->word[i];
  memcpy(out, &u, sizeof u);
  return 0;
}

/* Is word a clean value of static type t? NULL = yes, otherwise why not. */
static const char *word_problem(const bbvfl_abi_type *t, const uint8_t w[32]) {
  switch (t->kind) {
    case BBVFL_ABI_UINT:
      for (unsigned i = 0; i < 32 - t->bits / 8; i++)
        if (w[i]) return "unsigned integer does not fit its width";
      return NULL;
    case BBVFL_ABI_INT: {
      unsigned first = 32 - t->bits / 8; /* first significant byte */
      uint8_t fill = (w[first] & 0x80) ? 0xff : 0x00;
      for (unsigned i = 0; i < first; i++)
        if (w[i] != fill) return "signed integer does not fit its width";
      return NULL;
    }
    case BBVFL_ABI_ADDRESS:
      for (int i = 0; i < 12; i++)
        if (w[i]) return "address word has non-zero high bytes";
      return NULL;
    case BBVFL_ABI_BOOL:
      for (int i = 0; i < 31; i++)
        if (w[i]) return "bool word is not 0 or 1";
      return w[31] > 1 ? "bool word is not 0 or 1" : NULL;
    case BBVFL_ABI_FIXED_BYTES:
      for (size_t i = t->size; i < 32; i++)
        if (w[i]) return "bytesN word has non-zero padding";
      return NULL;
    default: return "not a word type";
  }
}

static const char *kind_name(bbvfl_abi_kind k) {
  switch (k) {
    case BBVFL_ABI_UINT: return "uint";
    case BBVFL_ABI_INT: return "int";
    case BBVFL_ABI_ADDRESS: return "address";
    case BBVFL_ABI_BOOL: return "bool";
    case BBVFL_ABI_FIXED_BYTES: return "bytesN";
    case BBVFL_ABI_BYTES: return "bytes";
    case BBVFL_ABI_STRING: return "string";
    case BBVFL_ABI_ARRAY: return "T[]";
    case BBVFL_ABI_FIXED_ARRAY: return "T[k]";
    case BBVFL_ABI_TUPLE: return "tuple";
  }
  return "?";
}

/* ---------------------------------------------------------------- encoding */

static void put_len_word(bbvfl_buf *b, size_t n) {
  uint8_t w[32] = {0};
  for (int i = 0; i < 8; i++) w[31 - i] = (uint8_t)((uint64_t)n >> (8 * i));
  bbvfl_buf_append(b, w, 32);
}

static int enc(const bbvfl_abi_type *t, const bbvfl_abi_value *v, bbvfl_buf *out, bbvfl_err *err);

static int enc_seq(const bbvfl_abi_type *const *fields, const bbvfl_abi_type *elem, const bbvfl_abi_value *items,
                   size_t n, bbvfl_buf *out, bbvfl_err *err) {
  size_t hsize = 0;
  for (size_t i = 0; i < n; i++) hsize += bbvfl_abi_head_size(fields ? fields[i] : elem);
  bbvfl_buf head, tail;
  bbvfl_buf_init(&head);
  bbvfl_buf_init(&tail);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    const bbvfl_abi_type *t = fields ? fields[i] : elem;
    if (bbvfl_abi_type_is_dynamic(t)) {
      put_len_word(&head, hsize + tail.len);
      rc = enc(t, &items[i], &tail, err);
    } else {
      rc = enc(t, &items[i], &head, err);
    }
    if (rc < 0) bbvfl_wrap(err, "item %zu", i);
  }
  if (rc == 0) {
    bbvfl_buf_append(out, head.p, head.len);
    bbvfl_buf_append(out, tail.p, tail.len);
    if (head.oom || tail.oom) out->oom = 1;
  }
  bbvfl_buf_free(&head);
  bbvfl_buf_free(&tail);
  return rc;
}

static int enc(const bbvfl_abi_type *t, const bbvfl_abi_value *v, bbvfl_buf *out, bbvfl_err *err) {
  int kind_ok = v->kind == t->kind || (t->kind == BBVFL_ABI_UINT && v->kind == BBVFL_ABI_INT) ||
                (t->kind == BBVFL_ABI_INT && v->kind == BBVFL_ABI_UINT);
  if (!kind_ok)
    return bbvfl_fail(err, BBVFL_E_ARG, "ABI value of kind %s given for a %s", kind_name(v->kind),
                      kind_name(t->kind));
  switch (t->kind) {
    case BBVFL_ABI_UINT:
    case BBVFL_ABI_INT:
    case BBVFL_ABI_ADDRESS:
    case BBVFL_ABI_BOOL:
    case BBVFL_ABI_FIXED_BYTES: {
      const char *why = word_problem(t, v->word);
      if (why) return bbvfl_fail(err, BBVFL_E_ARG, "ABI value: %s", why);
      bbvfl_buf_append(out, v->word, 32);
      return 0;
    }
    case BBVFL_ABI_BYTES:
    case BBVFL_ABI_STRING: {
      put_len_word(out, v->len);
      bbvfl_buf_append(out, v->bytes, v->len);
      size_t pad = (32 - v->len % 32) % 32;
      uint8_t *z = bbvfl_buf_grow(out, pad);
      if (z) memset(z, 0, pad);
      return 0;
    }
    case BBVFL_ABI_ARRAY:
      put_len_word(out, v->n);
      return enc_seq(NULL, t->elem, v->items, v->n, out, err);
    case BBVFL_ABI_FIXED_ARRAY:
      if (v->n != t->size)
        return bbvfl_fail(err, BBVFL_E_ARG, "ABI fixed array needs %zu items, got %zu", t->size, v->n);
      return enc_seq(NULL, t->elem, v->items, v->n, out, err);
    case BBVFL_ABI_TUPLE:
      if (v->n != t->nfields)
        return bbvfl_fail(err, BBVFL_E_ARG, "ABI tuple needs %zu items, got %zu", t->nfields, v->n);
      return enc_seq((const bbvfl_abi_type *const *)t->fields, NULL, v->items, v->n, out, err);
  }
  return bbvfl_fail(err, BBVFL_E_INTERNAL, "unknown ABI kind");
}

int bbvfl_abi_encode(const bbvfl_abi_type *t, const bbvfl_abi_value *v, uint8_t **out, size_t *len,
                     bbvfl_err *err) {
  *out = NULL;
  *len = 0;
  bbvfl_buf b;
  bbvfl_buf_init(&b);
  if (enc(t, v, &b, err) < 0) {
    bbvfl_buf_free(&b);
    return bbvfl_wrap(err, "ABI encoding");
  }
  return bbvfl_buf_take(&b, out, len, err);
}

/* Splits "name(types)" into the parameter tuple; name must be an identifier. */
static int signature_params(const char *sig, const char **params, bbvfl_err *err) {
  const char *p = sig;
  if (!(isalpha((unsigned char)*p) || *p == '_' || *p == '$'))
    return bbvfl_fail(err, BBVFL_E_PARSE, "signature \"%.200s\" must start with a name", sig);
  while (isalnum((unsigned char)*p) || *p == '_' || *p == '$') p++;
  if (*p != '(') return bbvfl_fail(err, BBVFL_E_PARSE, "signature \"%.200s\": expected '(' after the name", sig);
  *params = p;
  return 0;
}

int bbvfl_abi_encode_call(const char *signature, const bbvfl_abi_value *args, uint8_t **out,
                          size_t *len, bbvfl_err *err) {
  *out = NULL;
  *len = 0;
  const char *params;
  if (signature_params(signature, &params, err) < 0) return -1;
  bbvfl_abi_type *t;
  if (bbvfl_abi_type_parse(params, &t, err) < 0) return -1;
  if (t->kind != BBVFL_ABI_TUPLE) {
    bbvfl_abi_type_free(t);
    return bbvfl_fail(err, BBVFL_E_PARSE, "signature \"%.200s\": parameters must be a list", signature);
  }
  bbvfl_buf b;
  bbvfl_buf_init(&b);
  uint8_t sel[4];
  bbvfl_abi_selector(signature, sel);
  bbvfl_buf_append(&b, sel, 4);
  int rc = enc(t, args, &b, err);
  bbvfl_abi_type_free(t);
  if (rc < 0) {
    bbvfl_buf_free(&b);
    return bbvfl_wrap(err, "encoding a call to %.200s", signature);
  }
  return bbvfl_buf_take(&b, out, len, err);
}

/* ---------------------------------------------------------------- decoding */

typedef struct {
  const uint8_t *start; /* whole input, for error positions */
  size_t budget;        /* bytes of decoded tree still allowed */
  bbvfl_err *err;
} dec_ctx;

static int dfail(dec_ctx *c, const uint8_t *at, const char *what) {
  return bbvfl_fail(c->err, BBVFL_E_PARSE, "ABI decoding at byte %zu: %s", (size_t)(at - c->start), what);
}

static int spend(dec_ctx *c, const uint8_t *at, size_t n) {
  if (n > c->budget) return dfail(c, at, "decoded value too large for its input (overlapping offsets?)");
  c->budget -= n;
  return 0;
}

/* Reads a word that must hold a size (offset, length, count) below 2^63. */
static int read_size(dec_ctx *c, const uint8_t *w, size_t *out) {
  for (int i = 0; i < 24; i++)
    if (w[i]) return dfail(c, w, "offset or length does not fit in 64 bits");
  uint64_t v = 0;
  for (int i = 24; i < 32; i++) v = (v << 8) | w[i];
  if (v > (uint64_t)SIZE_MAX / 2) return dfail(c, w, "offset or length too large");
  *out = (size_t)v;
  return 0;
}

static int dec_content(dec_ctx *c, const bbvfl_abi_type *t, const uint8_t *p, size_t n, bbvfl_abi_value *v);

/* A sequence (tuple / array items) whose head starts at p; offsets are relative to p. */
static int dec_seq(dec_ctx *c, const bbvfl_abi_type *const *fields, const bbvfl_abi_type *elem, size_t count,
                   const uint8_t *p, size_t n, bbvfl_abi_value *v) {
  if (elem && count > n / bbvfl_abi_head_size(elem)) return dfail(c, p, "input ends inside an array head");
  if (spend(c, p, count * sizeof(bbvfl_abi_value)) < 0) return -1;
  if (count) {
    v->items = calloc(count, sizeof *v->items);
    if (!v->items) return bbvfl_fail(c->err, BBVFL_E_NOMEM, "out of memory decoding %zu ABI values", count);
  }
  v->n = count;
  size_t off = 0;
  for (size_t i = 0; i < count; i++) {
    const bbvfl_abi_type *t = fields ? fields[i] : elem;
    size_t hs = bbvfl_abi_head_size(t);
    if (hs > n - off) return dfail(c, p + off, "input ends inside a tuple or array head");
    if (bbvfl_abi_type_is_dynamic(t)) {
      size_t o;
      if (read_size(c, p + off, &o) < 0) return -1;
      if (o > n) return dfail(c, p + off, "offset points past the end of the input");
      if (dec_content(c, t, p + o, n - o, &v->items[i]) < 0) return -1;
    } else {
      if (dec_content(c, t, p + off, n - off, &v->items[i]) < 0) return -1;
    }
    off += hs;
  }
  return 0;
}

static int dec_content(dec_ctx *c, const bbvfl_abi_type *t, const uint8_t *p, size_t n, bbvfl_abi_value *v) {
  memset(v, 0, sizeof *v);
  v->kind = t->kind;
  switch (t->kind) {
    case BBVFL_ABI_UINT:
    case BBVFL_ABI_INT:
    case BBVFL_ABI_ADDRESS:
    case BBVFL_ABI_BOOL:
    case BBVFL_ABI_FIXED_BYTES: {
      if (n < 32) return dfail(c, p, "input ends inside a word");
      const char *why = word_problem(t, p);
      if (why) return dfail(c, p, why);
      memcpy(v->word, p, 32);
      return 0;
    }
    case BBVFL_ABI_BYTES:
    case BBVFL_ABI_STRING: {
      size_t len;
      if (n < 32) return dfail(c, p, "input ends before a length word");
      if (read_size(c, p, &len) < 0) return -1;
      /* the padded length must be there, as every conforming encoder writes it */
      if (len > n - 32 || (len + 31) / 32 * 32 > n - 32)
        return dfail(c, p, "byte string length runs past the end of the input");
      if (spend(c, p, len + 1) < 0) return -1;
      v->bytes = malloc(len + 1);
      if (!v->bytes) return bbvfl_fail(c->err, BBVFL_E_NOMEM, "out of memory decoding %zu bytes", len);
      if (len) memcpy(v->bytes, p + 32, len);
      v->bytes[len] = 0;
      v->len = len;
      return 0;
    }
    case BBVFL_ABI_ARRAY: {
      size_t count;
      if (n < 32) return dfail(c, p, "input ends before an array length");
      if (read_size(c, p, &count) < 0) return -1;
      size_t hs = bbvfl_abi_head_size(t->elem);
      if (count > (n - 32) / hs) return dfail(c, p, "array length larger than the input can hold");
      return dec_seq(c, NULL, t->elem, count, p + 32, n - 32, v);
    }
    case BBVFL_ABI_FIXED_ARRAY:
      return dec_seq(c, NULL, t->elem, t->size, p, n, v);
    case BBVFL_ABI_TUPLE:
      return dec_seq(c, (const bbvfl_abi_type *const *)t->fields, NULL, t->nfields, p, n, v);
  }
  return bbvfl_fail(c->err, BBVFL_E_INTERNAL, "unknown ABI kind");
}

int bbvfl_abi_decode(const bbvfl_abi_type *t, const uint8_t *data, size_t len, bbvfl_abi_value *out,
                     bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  static const uint8_t empty[1] = {0};
  if (!data) {
    if (len) return bbvfl_fail(err, BBVFL_E_ARG, "ABI decoding: NULL data");
    data = empty;
  }
  dec_ctx c = {data, 0, err};
  size_t lim = SIZE_MAX / 128 - 65536;
  c.budget = (len > lim ? lim : len) * 64 + 65536;
  if (dec_content(&c, t, data, len, out) < 0) {
    bbvfl_abi_value_clear(out);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- logs */

int bbvfl_abi_decode_log(const char *decl, const uint8_t (*topics)[32], size_t ntopics,
                         const uint8_t *data, size_t len, bbvfl_abi_value *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  const char *params;
  if (signature_params(decl, &params, err) < 0) return -1;
  size_t dlen = strlen(decl);
  if (dlen < 2 || decl[dlen - 1] != ')')
    return bbvfl_fail(err, BBVFL_E_PARSE, "event declaration \"%.200s\" must end with ')'", decl);
  /* Build the canonical signature and the tuple of non-indexed types by splitting the
   * parameter list at top-level commas. */
  char *canon = malloc(dlen + 1), *rest = malloc(dlen + 3);
  unsigned char *indexed = calloc(dlen + 1, 1);
  bbvfl_abi_type *all = NULL, *data_t = NULL;
  int rc = -1;
  if (!canon || !rest || !indexed) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto done;
  }
  size_t name_len = (size_t)(params - decl);
  memcpy(canon, decl, name_len);
  size_t cp = name_len, rp = 0, nparams = 0;
  canon[cp++] = '(';
  rest[rp++] = '(';
  const char *p = params + 1, *end = decl + dlen - 1;
  while (p < end) {
    const char *s = p;
    int depth = 0;
    while (p < end && (depth > 0 || *p != ',')) {
      if (*p == '(' || *p == '[') depth++;
      if (*p == ')' || *p == ']') depth--;
      p++;
    }
    const char *e = p;
    while (e > s && e[-1] == ' ') e--;
    int is_indexed = 0;
    if ((size_t)(e - s) > 8 && !strncmp(e - 8, " indexed", 8)) {
      is_indexed = 1;
      e -= 8;
      while (e > s && e[-1] == ' ') e--;
    }
    while (s < e && *s == ' ') s++;
    if (s == e) {
      bbvfl_fail(err, BBVFL_E_PARSE, "event declaration \"%.200s\": empty parameter", decl);
      goto done;
    }
    if (nparams) canon[cp++] = ',';
    memcpy(canon + cp, s, (size_t)(e - s));
    cp += (size_t)(e - s);
    if (!is_indexed) {
      if (rp > 1) rest[rp++] = ',';
      memcpy(rest + rp, s, (size_t)(e - s));
      rp += (size_t)(e - s);
    }
    indexed[nparams++] = (unsigned char)is_indexed;
    if (p < end) p++; /* the comma */
  }
  canon[cp++] = ')';
  canon[cp] = '\0';
  rest[rp++] = ')';
  rest[rp] = '\0';
  if (bbvfl_abi_type_parse(canon + name_len, &all, err) < 0 || bbvfl_abi_type_parse(rest, &data_t, err) < 0) {
    bbvfl_wrap(err, "event declaration");
    goto done;
  }
  uint8_t topic0[32];
  bbvfl_abi_event_topic(canon, topic0);
  if (ntopics < 1 || memcmp(topics[0], topic0, 32) != 0) {
    bbvfl_fail(err, BBVFL_E_PARSE, "log is not a %.200s event (topic 0 differs)", canon);
    goto done;
  }
  size_t nindexed = 0;
  for (size_t i = 0; i < nparams; i++) nindexed += indexed[i];
  if (ntopics != 1 + nindexed) {
    bbvfl_fail(err, BBVFL_E_PARSE, "%.200s log has %zu topics, expected %zu", canon, ntopics, 1 + nindexed);
    goto done;
  }
  bbvfl_abi_value datav;
  if (bbvfl_abi_decode(data_t, data, len, &datav, err) < 0) {
    bbvfl_wrap(err, "%.200s log data", canon);
    goto done;
  }
  if (bbvfl_abi_value_list(out, BBVFL_ABI_TUPLE, nparams, err) < 0) {
    bbvfl_abi_value_clear(&datav);
    goto done;
  }
  size_t ti = 1, di = 0;
  rc = 0;
  for (size_t i = 0; i < nparams && rc == 0; i++) {
    const bbvfl_abi_type *ft = all->fields[i];
    if (!indexed[i]) {
      out->items[i] = datav.items[di];
      memset(&datav.items[di], 0, sizeof datav.items[di]);
      di++;
    } else if (ft->kind <= BBVFL_ABI_FIXED_BYTES) {
      const char *why = word_problem(ft, topics[ti]);
      if (why) {
        rc = bbvfl_fail(err, BBVFL_E_PARSE, "%.200s log topic %zu: %s", canon, ti, why);
      } else {
        out->items[i].kind = ft->kind;
        memcpy(out->items[i].word, topics[ti], 32);
      }
      ti++;
    } else {
      bbvfl_abi_value_fixed_bytes(&out->items[i], topics[ti], 32);
      ti++;
    }
  }
  bbvfl_abi_value_clear(&datav);
  if (rc < 0) bbvfl_abi_value_clear(out);
done:
  bbvfl_abi_type_free(all);
  bbvfl_abi_type_free(data_t);
  free(canon);
  free(rest);
  free(indexed);
  return rc;
}

