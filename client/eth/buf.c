#include "eth/buf.h"

#include <stdlib.h>
#include <string.h>

void bbvfl_buf_init(bbvfl_buf *b) { memset(b, 0, sizeof *b); }

void bbvfl_buf_free(bbvfl_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

uint8_t *bbvfl_buf_grow(bbvfl_buf *b, size_t n) {
  if (b->oom) return NULL;
  if (n > SIZE_MAX / 2 - b->len) {
    b->oom = 1;
    return NULL;
  }
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n) cap *= 2;
    uint8_t *np = realloc(b->p, cap);
    if (!np) {
      b->oom = 1;
      return NULL;
    }
    b->p = np;
    b->cap = cap;
  }
  uint8_t *at = b->p + b->len;
  b->len += n;
  return at;
}

void bbvfl_buf_append(bbvfl_buf *b, const void *data, size_t n) {
  if (n == 0) return;
  uint8_t *at = bbvfl_buf_grow(b, n);
  if (at) memcpy(at, data, n);
}

void bbvfl_buf_byte(bbvfl_buf *b, uint8_t c) { bbvfl_buf_append(b, &c, 1); }

void bbvfl_buf_insert(bbvfl_buf *b, size_t pos, const void *data, size_t n) {
  if (n == 0 || pos > b->len) return;
  size_t tail = b->len - pos;
  if (!bbvfl_buf_grow(b, n)) return;
  memmove(b->p + pos + n, b->p + pos, tail);
  memcpy(b->p + pos, data, n);
}

int bbvfl_buf_check(const bbvfl_buf *b, bbvfl_err *err) {
  if (b->oom) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory while encoding");
  return 0;
}

int bbvfl_buf_take(bbvfl_buf *b, uint8_t **out, size_t *len, bbvfl_err *err) {
  if (bbvfl_buf_check(b, err) < 0) {
    bbvfl_buf_free(b);
    return -1;
  }
  if (!b->p) {
    b->p = malloc(1);
    if (!b->p) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  *out = b->p;
  *len = b->len;
  memset(b, 0, sizeof *b);
  return 0;
}
