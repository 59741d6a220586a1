#include "eth/abi.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eth/buf.h"
#include "eth/keccak.h"

#define ABI_MAX_DEPTH 32
#define ABI_MAX_STATIC_HEAD ((size_t)1 << 24) /* bytes; larger static types are refused */

void bbvfl_abi_selector(const char *signature, uint8_t out[4]) {
  uint8_t h[32];
  bbvfl_keccak256(signature, strlen(signature), h);
  memcpy(out, h, 4);
}

void bbvfl_abi_event_topic(const char *signature, uint8_t out[32]) {
  bbvfl_keccak256(signature, strlen(signature), out);
}

/* ---------------------------------------------------------------- types */

void bbvfl_abi_type_free(bbvfl_abi_type *t) {
  if (!t) return;
  bbvfl_abi_type_free(t->elem);
  for (size_t i = 0; i < t->nfields; i++) bbvfl_abi_type_free(t->fields[i]);
  free(t->fields);
  free(t);
}

int bbvfl_abi_type_is_dynamic(const bbvfl_abi_type *t) {
  switch (t->kind) {
    case BBVFL_ABI_BYTES:
    case BBVFL_ABI_STRING:
    case BBVFL_ABI_ARRAY: return 1;
    case BBVFL_ABI_FIXED_ARRAY: return bbvfl_abi_type_is_dynamic(t->elem);
    case BBVFL_ABI_TUPLE:
      for (size_t i = 0; i < t->nfields; i++)
        if (bbvfl_abi_type_is_dynamic(t->fields[i])) return 1;
      return 0;
    default: return 0;
  }
}

/* Bytes the type takes in the head of its enclosing tuple. Bounded by the parser. */
static size_t head_size(const bbvfl_abi_type *t) {
  if (bbvfl_abi_type_is_dynamic(t)) return 32;
  if (t->kind == BBVFL_ABI_FIXED_ARRAY) return t->size * head_size(t->elem);
  if (t->kind == BBVFL_ABI_TUPLE) {
    size_t s = 0;
    for (size_t i = 0; i < t->nfields; i++) s += head_size(t->fields[i]);
    return s;
  }
  return 32;
}

typedef struct {
  const char *text;
  const char *p;
  bbvfl_err *err;
} type_parser;

static int tp_fail(type_parser *tp, const char *what) {
  return bbvfl_fail(tp->err, BBVFL_E_PARSE, "ABI type \"%.200s\" at position %zu: %s", tp->text,
                    (size_t)(tp->p - tp->text), what);
}

static bbvfl_abi_type *new_type(bbvfl_abi_kind kind) {
  bbvfl_abi_type *t = calloc(1, sizeof *t);
  if (t) t->kind = kind;
  return t;
}

static int parse_width(const char *s, size_t n, unsigned *out) {
  if (n == 0) return 1; /* default */
  if (n > 3 || s[0] == '0') return -1;
  unsigned v = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i])) return -1;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  *out = v;
  return 0;
}

static bbvfl_abi_type *parse_type(type_parser *tp, int depth, int top);

static bbvfl_abi_type *parse_base(type_parser *tp, int depth, int top) {
  if (*tp->p == '(') {
    tp->p++;
    bbvfl_abi_type *t = new_type(BBVFL_ABI_TUPLE);
    if (!t) {
      bbvfl_fail(tp->err, BBVFL_E_NOMEM, "out of memory parsing an ABI type");
      return NULL;
    }
    if (*tp->p == ')') {
      if (!top) {
        tp_fail(tp, "empty tuples are only allowed as an empty parameter list");
        bbvfl_abi_type_free(t);
        return NULL;
      }
      tp->p++;
      return t;
    }
    for (;;) {
      bbvfl_abi_type *f = parse_type(tp, depth + 1, 0);
      if (!f) {
        bbvfl_abi_type_free(t);
        return NULL;
      }
      bbvfl_abi_type **nf = realloc(t->fields, (t->nfields + 1) * sizeof *nf);
      if (!nf) {
        bbvfl_abi_type_free(f);
        bbvfl_abi_type_free(t);
        bbvfl_fail(tp->err, BBVFL_E_NOMEM, "out of memory parsing an ABI type");
        return NULL;
      }
      t->fields = nf;
      t->fields[t->nfields++] = f;
      if (*tp->p == ',') {
        tp->p++;
        continue;
      }
      if (*tp->p == ')') {
        tp->p++;
        return t;
      }
      tp_fail(tp, "expected ',' or ')' in a tuple");
      bbvfl_abi_type_free(t);
      return NULL;
    }
  }
  const char *s = tp->p;
  while (isalnum((unsigned char)*tp->p)) tp->p++;
  size_t n = (size_t)(tp->p - s);
  bbvfl_abi_type *t = NULL;
  unsigned w = 0;
  if (n == 0) {
    tp_fail(tp, "expected a type name or '('");
    return NULL;
  }
  if ((n >= 4 && !strncmp(s, "uint", 4)) || (n >= 3 && !strncmp(s, "int", 3))) {
    int is_uint = s[0] == 'u';
    size_t name_len = is_uint ? 4 : 3;
    w = 256;
    if (parse_width(s + name_len, n - name_len, &w) < 0 || w == 0 || w > 256 || w % 8) {
      tp->p = s;
      tp_fail(tp, is_uint ? "uint width must be 8..256 in steps of 8" : "int width must be 8..256 in steps of 8");
      return NULL;
    }
    t = new_type(is_uint ? BBVFL_ABI_UINT : BBVFL_ABI_INT);
    if (t) t->bits = w;
  } else if (n == 7 && !strncmp(s, "address", 7)) {
    t = new_type(BBVFL_ABI_ADDRESS);
  } else if (n == 4 && !strncmp(s, "bool", 4)) {
    t = new_type(BBVFL_ABI_BOOL);
  } else if (n == 6 && !strncmp(s, "string", 6)) {
    t = new_type(BBVFL_ABI_STRING);
  } else if (n == 5 && !strncmp(s, "bytes", 5)) {
    t = new_type(BBVFL_ABI_BYTES);
  } else if (n > 5 && !strncmp(s, "bytes", 5)) {
    if (parse_width(s + 5, n - 5, &w) < 0 || w == 0 || w > 32) {
      tp->p = s;
      tp_fail(tp, "bytesN needs N in 1..32");
      return NULL;
    }
    t = new_type(BBVFL_ABI_FIXED_BYTES);
    if (t) t->size = w;
  } else {
    tp->p = s;
    tp_fail(tp, "unknown type name");
    return NULL;
  }
  if (!t) bbvfl_fail(tp->err, BBVFL_E_NOMEM, "out of memory parsing an ABI type");
  return t;
}

static bbvfl_abi_type *parse_type(type_parser *tp, int depth, int top) {
  if (depth > ABI_MAX_DEPTH) {
    tp_fail(tp, "nested too deeply");
    return NULL;
  }
  bbvfl_abi_type *t = parse_base(tp, depth, top);
  if (t && t->kind == BBVFL_ABI_TUPLE && t->nfields == 0 && *tp->p == '[') {
    tp_fail(tp, "arrays of empty tuples are not allowed");
    bbvfl_abi_type_free(t);
    return NULL;
  }
  while (t && *tp->p == '[') {
    tp->p++;
    bbvfl_abi_type *a = new_type(BBVFL_ABI_ARRAY);
    if (!a) {
      bbvfl_abi_type_free(t);
      bbvfl_fail(tp->err, BBVFL_E_NOMEM, "out of memory parsing an ABI type");
      return NULL;
    }
    a->elem = t;
    t = a;
    if (*tp->p != ']') {
      if (!isdigit((unsigned char)*tp->p) || *tp->p == '0') {
        tp_fail(tp, "array length must be a positive decimal number");
        bbvfl_abi_type_free(t);
        return NULL;
      }
      size_t k = 0;
      while (isdigit((unsigned char)*tp->p)) {
        k = k * 10 + (size_t)(*tp->p++ - '0');
        if (k > ABI_MAX_STATIC_HEAD) {
          tp_fail(tp, "array length too large");
          bbvfl_abi_type_free(t);
          return NULL;
        }
      }
      t->kind = BBVFL_ABI_FIXED_ARRAY;
      t->size = k;
      if (head_size(t->elem) > ABI_MAX_STATIC_HEAD / k) {
        tp_fail(tp, "fixed-size type too large");
        bbvfl_abi_type_free(t);
        return NULL;
      }
    }
    if (*tp->p != ']') {
      tp_fail(tp, "expected ']'");
      bbvfl_abi_type_free(t);
      return NULL;
    }
    tp->p++;
    depth++;
    if (depth > ABI_MAX_DEPTH) {
      tp_fail(tp, "nested too deeply");
      bbvfl_abi_type_free(t);
      return NULL;
    }
  }
  if (t && t->kind == BBVFL_ABI_TUPLE && head_size(t) > ABI_MAX_STATIC_HEAD) {
    tp_fail(tp, "fixed-size type too large");
    bbvfl_abi_type_free(t);
    return NULL;
  }
  return t;
}

int bbvfl_abi_type_parse(const char *text, bbvfl_abi_type **out, bbvfl_err *err) {
  *out = NULL;
  if (!text) return bbvfl_fail(err, BBVFL_E_PARSE, "missing ABI type");
  type_parser tp = {text, text, err};
  bbvfl_abi_type *t = parse_type(&tp, 0, 1);
  if (!t) return -1;
  if (*tp.p) {
    tp_fail(&tp, "unexpected characters after the type");
    bbvfl_abi_type_free(t);
    return -1;
  }
  *out = t;
  return 0;
}

static int fmt_append(char *out, size_t cap, size_t *pos, const char *s) {
  size_t n = strlen(s);
  if (*pos + n + 1 > cap) return -1;
  memcpy(out + *pos, s, n + 1);
  *pos += n;
  return 0;
}

static int type_format(const bbvfl_abi_type *t, char *out, size_t cap, size_t *pos) {
  char tmp[32];
  switch (t->kind) {
    case BBVFL_ABI_UINT: snprintf(tmp, sizeof tmp, "uint%u", t->bits); return fmt_append(out, cap, pos, tmp);
    case BBVFL_ABI_INT: snprintf(tmp, sizeof tmp, "int%u", t->bits); return fmt_append(out, cap, pos, tmp);
    case BBVFL_ABI_ADDRESS: return fmt_append(out, cap, pos, "address");
    case BBVFL_ABI_BOOL: return fmt_append(out, cap, pos, "bool");
    case BBVFL_ABI_FIXED_BYTES: snprintf(tmp, sizeof tmp, "bytes%zu", t->size); return fmt_append(out, cap, pos, tmp);
    case BBVFL_ABI_BYTES: return fmt_append(out, cap, pos, "bytes");
    case BBVFL_ABI_STRING: return fmt_append(out, cap, pos, "string");
    case BBVFL_ABI_ARRAY:
      if (type_format(t->elem, out, cap, pos) < 0) return -1;
      return fmt_append(out, cap, pos, "[]");
    case BBVFL_ABI_FIXED_ARRAY:
      if (type_format(t->elem, out, cap, pos) < 0) return -1;
      snprintf(tmp, sizeof tmp, "[%zu]", t->size);
      return fmt_append(out, cap, pos, tmp);
    case BBVFL_ABI_TUPLE:
      if (fmt_append(out, cap, pos, "(") < 0) return -1;
      for (size_t i = 0; i < t->nfields; i++) {
        if (i && fmt_append(out, cap, pos, ",") < 0) return -1;
        if (type_format(t->fields[i], out, cap, pos) < 0) return -1;
      }
      return fmt_append(out, cap, pos, ")");
  }
  return -1;
}

int bbvfl_abi_type_format(const bbvfl_abi_type *t, char *out, size_t cap) {
  size_t pos = 0;
  if (cap == 0) return -1;
  out[0] = '\0';
  return type_format(t, out, cap, &pos);
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
  for (size_t i = 0; i < n; i++) hsize += head_size(fields ? fields[i] : elem);
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
  if (elem && count > n / head_size(elem)) return dfail(c, p, "input ends inside an array head");
  if (spend(c, p, count * sizeof(bbvfl_abi_value)) < 0) return -1;
  if (count) {
    v->items = calloc(count, sizeof *v->items);
    if (!v->items) return bbvfl_fail(c->err, BBVFL_E_NOMEM, "out of memory decoding %zu ABI values", count);
  }
  v->n = count;
  size_t off = 0;
  for (size_t i = 0; i < count; i++) {
    const bbvfl_abi_type *t = fields ? fields[i] : elem;
    size_t hs = head_size(t);
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
      size_t hs = head_size(t->elem);
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

/* ---------------------------------------------------------------- builder */

void bbvfl_abi_builder_init(bbvfl_abi_builder *b, const char *signature) {
  memset(b, 0, sizeof *b);
  if (signature) {
    bbvfl_abi_selector(signature, b->selector);
    b->has_selector = 1;
  }
}

static int grow_bytes(uint8_t **p, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t nc = *cap ? *cap : 256;
  while (nc < need) {
    if (nc > SIZE_MAX / 2) return -1;
    nc *= 2;
  }
  uint8_t *np = realloc(*p, nc);
  if (!np) return -1;
  *p = np;
  *cap = nc;
  return 0;
}

void bbvfl_abi_put_word(bbvfl_abi_builder *b, const uint8_t word[32]) {
  if (b->oom || grow_bytes(&b->head, &b->head_cap, b->head_len + 32) < 0) {
    b->oom = 1;
    return;
  }
  memcpy(b->head + b->head_len, word, 32);
  b->head_len += 32;
}

void bbvfl_abi_put_u256(bbvfl_abi_builder *b, const bbvfl_u256 *v) { bbvfl_abi_put_word(b, v->be); }

void bbvfl_abi_put_u64(bbvfl_abi_builder *b, uint64_t v) {
  bbvfl_u256 u = bbvfl_u256_from_u64(v);
  bbvfl_abi_put_word(b, u.be);
}

void bbvfl_abi_put_i64(bbvfl_abi_builder *b, int64_t v) {
  bbvfl_u256 u = bbvfl_u256_from_u64((uint64_t)v);
  if (v < 0) memset(u.be, 0xff, 24);
  bbvfl_abi_put_word(b, u.be);
}

void bbvfl_abi_put_address(bbvfl_abi_builder *b, const uint8_t addr[20]) {
  uint8_t w[32] = {0};
  memcpy(w + 12, addr, 20);
  bbvfl_abi_put_word(b, w);
}

void bbvfl_abi_put_bool(bbvfl_abi_builder *b, int v) { bbvfl_abi_put_u64(b, v ? 1 : 0); }

void bbvfl_abi_put_fixed_bytes(bbvfl_abi_builder *b, const uint8_t *data, size_t n) {
  uint8_t w[32] = {0};
  if (n > 32) {
    b->oom = 1; /* caller error; reported by finish */
    return;
  }
  if (n) memcpy(w, data, n);
  bbvfl_abi_put_word(b, w);
}

void bbvfl_abi_put_bytes(bbvfl_abi_builder *b, const uint8_t *data, size_t n) {
  if (b->oom) return;
  size_t pad = (32 - n % 32) % 32;
  if (n > SIZE_MAX / 4 || grow_bytes(&b->tail, &b->tail_cap, b->tail_len + 32 + n + pad) < 0) {
    b->oom = 1;
    return;
  }
  if (b->ndyn == b->dyn_cap) {
    size_t nc = b->dyn_cap ? 2 * b->dyn_cap : 8;
    size_t *nd = realloc(b->dyn, nc * sizeof *nd);
    if (!nd) {
      b->oom = 1;
      return;
    }
    b->dyn = nd;
    b->dyn_cap = nc;
  }
  b->dyn[b->ndyn++] = b->head_len;
  bbvfl_abi_put_u64(b, b->tail_len); /* fixed up by finish: + head size */
  uint8_t *t = b->tail + b->tail_len;
  memset(t, 0, 32);
  for (int i = 0; i < 8; i++) t[31 - i] = (uint8_t)((uint64_t)n >> (8 * i));
  if (n) memcpy(t + 32, data, n);
  memset(t + 32 + n, 0, pad);
  b->tail_len += 32 + n + pad;
}

void bbvfl_abi_put_string(bbvfl_abi_builder *b, const char *s) {
  bbvfl_abi_put_bytes(b, (const uint8_t *)s, strlen(s));
}

void bbvfl_abi_builder_free(bbvfl_abi_builder *b) {
  free(b->head);
  free(b->tail);
  free(b->dyn);
  memset(b, 0, sizeof *b);
}

int bbvfl_abi_builder_finish(bbvfl_abi_builder *b, uint8_t **out, size_t *len, bbvfl_err *err) {
  *out = NULL;
  *len = 0;
  if (b->oom) {
    bbvfl_abi_builder_free(b);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "ABI builder: out of memory (or a bytesN longer than 32)");
  }
  size_t sel = b->has_selector ? 4 : 0;
  size_t total = sel + b->head_len + b->tail_len;
  uint8_t *r = malloc(total ? total : 1);
  if (!r) {
    bbvfl_abi_builder_free(b);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "ABI builder: out of memory");
  }
  memcpy(r, b->selector, sel);
  if (b->head_len) memcpy(r + sel, b->head, b->head_len);
  if (b->tail_len) memcpy(r + sel + b->head_len, b->tail, b->tail_len);
  for (size_t i = 0; i < b->ndyn; i++) {
    uint8_t *w = r + sel + b->dyn[i];
    uint64_t v = 0;
    for (int k = 24; k < 32; k++) v = (v << 8) | w[k];
    v += b->head_len;
    for (int k = 0; k < 8; k++) w[31 - k] = (uint8_t)(v >> (8 * k));
  }
  *out = r;
  *len = total;
  bbvfl_abi_builder_free(b);
  return 0;
}
