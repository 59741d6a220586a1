/* A growable byte buffer used by the RLP and ABI encoders.
 * The buffer owns p (free with bbvfl_buf_free). Allocation failure is sticky: later appends are
 * ignored and `oom` stays set, so encoders check once at the end (bbvfl_buf_check). */
#ifndef BBVFL_ETH_BUF_H
#define BBVFL_ETH_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct {
  uint8_t *p;
  size_t len, cap;
  int oom;
} bbvfl_buf;

void bbvfl_buf_init(bbvfl_buf *b);
void bbvfl_buf_free(bbvfl_buf *b);
/* Makes room for n more bytes; returns a pointer to them (NULL after an allocation failure). */
uint8_t *bbvfl_buf_grow(bbvfl_buf *b, size_t n);
void bbvfl_buf_append(bbvfl_buf *b, const void *data, size_t n);
void bbvfl_buf_byte(bbvfl_buf *b, uint8_t c);
/* Inserts n bytes at offset pos (pos <= len), moving the rest up. */
void bbvfl_buf_insert(bbvfl_buf *b, size_t pos, const void *data, size_t n);
/* 0, or -1 with BBVFL_E_NOMEM if an allocation failed. */
int bbvfl_buf_check(const bbvfl_buf *b, bbvfl_err *err);
/* Hands the bytes to the caller (malloc'd, caller frees; never NULL on success) and resets b. */
int bbvfl_buf_take(bbvfl_buf *b, uint8_t **out, size_t *len, bbvfl_err *err);

#endif
