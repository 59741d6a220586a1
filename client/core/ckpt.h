/* A small binary checkpoint container used by the party and the head: a magic, a kind tag, then
 * length-prefixed little-endian sections. Written atomically (temp file + fsync + rename).
 * Buffers: a bbvfl_ckpt owns its growing byte buffer (bbvfl_ckpt_free). */
#ifndef BBVFL_VFL_CKPT_H
#define BBVFL_VFL_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct {
  uint8_t *buf;
  size_t len, cap, pos;
  int oom;
} bbvfl_ckpt;

void bbvfl_ckpt_put_u64(bbvfl_ckpt *c, uint64_t v);
void bbvfl_ckpt_put_f64(bbvfl_ckpt *c, double v);
void bbvfl_ckpt_put_floats(bbvfl_ckpt *c, const float *v, size_t n);
void bbvfl_ckpt_put_bytes(bbvfl_ckpt *c, const void *v, size_t n);
/* Writes "BBVFLCK1" || kind(8 bytes, NUL padded) || body to path atomically (mode 0600). */
int bbvfl_ckpt_save(bbvfl_ckpt *c, const char *path, const char *kind, bbvfl_err *err);
/* Reads path, checks magic and kind; the reader then takes sections in order. */
int bbvfl_ckpt_open(bbvfl_ckpt *c, const char *path, const char *kind, bbvfl_err *err);
int bbvfl_ckpt_get_u64(bbvfl_ckpt *c, uint64_t *v, bbvfl_err *err);
int bbvfl_ckpt_get_f64(bbvfl_ckpt *c, double *v, bbvfl_err *err);
int bbvfl_ckpt_get_floats(bbvfl_ckpt *c, float *v, size_t n, bbvfl_err *err);
int bbvfl_ckpt_get_bytes(bbvfl_ckpt *c, void *v, size_t n, bbvfl_err *err);
void bbvfl_ckpt_free(bbvfl_ckpt *c);

#endif
