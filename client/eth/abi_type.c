/* Solidity ABI types: the parser of canonical type text, its inverse (format), and the type
 * tree's helpers. Part of eth/abi.h; the encoder, decoder and log decoder are in abi.c, the flat
 * builder in abi_builder.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eth/abi.h"
#include "eth/abi_int.h"

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

size_t bbvfl_abi_head_size(const bbvfl_abi_type *t) {
  if (bbvfl_abi_type_is_dynamic(t)) return 32;
  if (t->kind == BBVFL_ABI_FIXED_ARRAY) return t->size * bbvfl_abi_head_size(t->elem);
  if (t->kind == BBVFL_ABI_TUPLE) {
    size_t s = 0;
    for (size_t i = 0; i < t->nfields; i++) s += bbvfl_abi_head_size(t->fields[i]);
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
      if (bbvfl_abi_head_size(t->elem) > ABI_MAX_STATIC_HEAD / k) {
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
  if (t && t->kind == BBVFL_ABI_TUPLE && bbvfl_abi_head_size(t) > ABI_MAX_STATIC_HEAD) {
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

