/* The ABI builder of eth/abi.h: flat calldata (an optional selector, static words, dynamic
 * bytes and strings) without a type tree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eth/abi.h"

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

/* A dynamic parameter: its head word (an offset, fixed up by finish) and its tail, a length word
   `count` then n bytes of data (NULL: n zero bytes) zero-padded to a whole word. */
static uint8_t *put_dyn(bbvfl_abi_builder *b, uint64_t count, const uint8_t *data, size_t n) {
  if (b->oom) return NULL;
  size_t pad = (32 - n % 32) % 32;
  if (n > SIZE_MAX / 4 || grow_bytes(&b->tail, &b->tail_cap, b->tail_len + 32 + n + pad) < 0) {
    b->oom = 1;
    return NULL;
  }
  if (b->ndyn == b->dyn_cap) {
    size_t nc = b->dyn_cap ? 2 * b->dyn_cap : 8;
    size_t *nd = realloc(b->dyn, nc * sizeof *nd);
    if (!nd) {
      b->oom = 1;
      return NULL;
    }
    b->dyn = nd;
    b->dyn_cap = nc;
  }
  b->dyn[b->ndyn++] = b->head_len;
  bbvfl_abi_put_u64(b, b->tail_len); /* fixed up by finish: + head size */
  uint8_t *t = b->tail + b->tail_len;
  memset(t, 0, 32);
  for (int i = 0; i < 8; i++) t[31 - i] = (uint8_t)(count >> (8 * i));
  if (n && data) memcpy(t + 32, data, n);
  else memset(t + 32, 0, n);
  memset(t + 32 + n, 0, pad);
  b->tail_len += 32 + n + pad;
  return t + 32;
}

void bbvfl_abi_put_bytes(bbvfl_abi_builder *b, const uint8_t *data, size_t n) { put_dyn(b, (uint64_t)n, data, n); }

void bbvfl_abi_put_address_array(bbvfl_abi_builder *b, const uint8_t (*addrs)[20], size_t n) {
  if (n > SIZE_MAX / 64) {
    b->oom = 1;
    return;
  }
  uint8_t *t = put_dyn(b, (uint64_t)n, NULL, 32 * n);
  for (size_t i = 0; t && i < n; i++) memcpy(t + 32 * i + 12, addrs[i], 20);
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
