#include "core/ckpt.h"

#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"

static void put(bbvfl_ckpt *c, const void *p, size_t n) {
  if (c->oom) return;
  if (c->len + n > c->cap) {
    size_t nc = c->cap ? c->cap : 4096;
    while (nc < c->len + n) nc *= 2;
    uint8_t *nb = realloc(c->buf, nc);
    if (!nb) {
      c->oom = 1;
      return;
    }
    c->buf = nb;
    c->cap = nc;
  }
  memcpy(c->buf + c->len, p, n);
  c->len += n;
}

void bbvfl_ckpt_put_u64(bbvfl_ckpt *c, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
  put(c, b, 8);
}

void bbvfl_ckpt_put_f64(bbvfl_ckpt *c, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  bbvfl_ckpt_put_u64(c, u);
}

void bbvfl_ckpt_put_floats(bbvfl_ckpt *c, const float *v, size_t n) {
  bbvfl_ckpt_put_u64(c, n);
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &v[i], 4);
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    put(c, b, 4);
  }
}

void bbvfl_ckpt_put_bytes(bbvfl_ckpt *c, const void *v, size_t n) {
  bbvfl_ckpt_put_u64(c, n);
  put(c, v, n);
}

int bbvfl_ckpt_save(bbvfl_ckpt *c, const char *path, const char *kind, bbvfl_err *err) {
  if (c->oom) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory building checkpoint %s", path);
  size_t total = 16 + c->len;
  uint8_t *out = malloc(total);
  if (!out) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  memcpy(out, "BBVFLCK1", 8);
  memset(out + 8, 0, 8);
  strncpy((char *)out + 8, kind, 8);
  memcpy(out + 16, c->buf, c->len);
  int rc = bbvfl_write_file_atomic(path, out, total, 0600, err);
  free(out);
  return rc;
}

int bbvfl_ckpt_open(bbvfl_ckpt *c, const char *path, const char *kind, bbvfl_err *err) {
  memset(c, 0, sizeof *c);
  char *data;
  size_t len;
  if (bbvfl_read_file(path, (size_t)1 << 30, &data, &len, err) != 0) return bbvfl_wrap(err, "reading checkpoint");
  char k[9] = {0};
  if (len < 16 || memcmp(data, "BBVFLCK1", 8) != 0) {
    free(data);
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s is not a bbvfl checkpoint (bad magic)", path);
  }
  memcpy(k, data + 8, 8);
  if (strcmp(k, kind) != 0) {
    free(data);
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s is a '%s' checkpoint, expected '%s'", path, k, kind);
  }
  c->buf = (uint8_t *)data;
  c->len = len;
  c->cap = len;
  c->pos = 16;
  return 0;
}

static int take(bbvfl_ckpt *c, void *p, size_t n, bbvfl_err *err) {
  if (c->len - c->pos < n) return bbvfl_fail(err, BBVFL_E_PARSE, "checkpoint is truncated");
  memcpy(p, c->buf + c->pos, n);
  c->pos += n;
  return 0;
}

int bbvfl_ckpt_get_u64(bbvfl_ckpt *c, uint64_t *v, bbvfl_err *err) {
  uint8_t b[8] = {0};
  if (take(c, b, 8, err) != 0) return -1;
  uint64_t u = 0;
  for (int i = 0; i < 8; i++) u |= (uint64_t)b[i] << (8 * i);
  *v = u;
  return 0;
}

int bbvfl_ckpt_get_f64(bbvfl_ckpt *c, double *v, bbvfl_err *err) {
  uint64_t u;
  if (bbvfl_ckpt_get_u64(c, &u, err) != 0) return -1;
  memcpy(v, &u, 8);
  return 0;
}

int bbvfl_ckpt_get_floats(bbvfl_ckpt *c, float *v, size_t n, bbvfl_err *err) {
  uint64_t m;
  if (bbvfl_ckpt_get_u64(c, &m, err) != 0) return -1;
  if (m != n)
    return bbvfl_fail(err, BBVFL_E_PARSE, "checkpoint holds %llu values where the model has %zu: different model shape",
                      (unsigned long long)m, n);
  for (size_t i = 0; i < n; i++) {
    uint8_t b[4] = {0};
    if (take(c, b, 4, err) != 0) return -1;
    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    memcpy(&v[i], &u, 4);
  }
  return 0;
}

int bbvfl_ckpt_get_bytes(bbvfl_ckpt *c, void *v, size_t n, bbvfl_err *err) {
  uint64_t m;
  if (bbvfl_ckpt_get_u64(c, &m, err) != 0) return -1;
  if (m != n) return bbvfl_fail(err, BBVFL_E_PARSE, "checkpoint section has %llu bytes, expected %zu", (unsigned long long)m, n);
  return take(c, v, n, err);
}

void bbvfl_ckpt_free(bbvfl_ckpt *c) {
  if (!c) return;
  free(c->buf);
  memset(c, 0, sizeof *c);
}
