/* Fuzz target: the RLP decoder. Property: whatever decodes is canonical, so re-encoding the
 * decoded tree reproduces the input exactly; integer accessors agree with the bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eth/rlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

/* Re-encodes item into b; returns 0, or -1 if the decoder reported an error inside. */
static int reencode(const bbvfl_rlp_item *item, bbvfl_buf *b, int depth) {
  if (!item->is_list) {
    bbvfl_rlp_put_bytes(b, item->payload, item->len);
    uint64_t v;
    bbvfl_u256 u;
    int r64 = bbvfl_rlp_item_u64(item, &v, NULL), r256 = bbvfl_rlp_item_u256(item, &u, NULL);
    if (r64 == 0 && r256 != 0) abort(); /* fits 64 bits but not 256? */
    if (r256 == 0 && item->len && item->payload[0] == 0) abort(); /* leading zero accepted */
    return 0;
  }
  if (depth > 10000) return -1;
  size_t m = bbvfl_rlp_list_begin(b);
  bbvfl_rlp_iter it;
  bbvfl_rlp_item child;
  if (bbvfl_rlp_iter_init(&it, item, NULL) != 0) abort();
  int rc;
  while ((rc = bbvfl_rlp_next(&it, &child, NULL)) == 1) {
    if (child.payload < item->payload || child.payload + child.len > item->payload + item->len) abort();
    if (reencode(&child, b, depth + 1) < 0) return -1;
  }
  if (rc < 0) return -1;
  bbvfl_rlp_list_end(b, m);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bbvfl_rlp_item item;
  bbvfl_err err;
  if (bbvfl_rlp_decode_exact(data, size, &item, &err) != 0) {
    if (err.code != BBVFL_E_PARSE || !err.msg[0]) abort();
    return 0;
  }
  bbvfl_buf b;
  bbvfl_buf_init(&b);
  if (reencode(&item, &b, 0) == 0) {
    if (b.oom) abort();
    if (b.len != size || memcmp(b.p, data, size) != 0) abort(); /* non-canonical input accepted */
  }
  bbvfl_buf_free(&b);
  return 0;
}

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  static const uint8_t s1[] = {0xc8, 0x83, 'c', 'a', 't', 0x83, 'd', 'o', 'g'};
  static const uint8_t s2[] = {0xc7, 0xc0, 0xc1, 0xc0, 0xc3, 0xc0, 0xc1, 0xc0};
  static const uint8_t s3[] = {0xb8, 0x38, 'L', 'o', 'r', 'e', 'm', ' ', 'i', 'p', 's', 'u', 'm', ' ', 'd', 'o', 'l',
                               'o', 'r', ' ', 's', 'i', 't', ' ', 'a', 'm', 'e', 't', ',', ' ', 'c', 'o', 'n', 's',
                               'e', 'c', 't', 'e', 't', 'u', 'r', ' ', 'a', 'd', 'i', 'p', 'i', 's', 'i', 'c', 'i',
                               'n', 'g', ' ', 'e', 'l', 'i', 't'};
  add(s1, sizeof s1);
  add(s2, sizeof s2);
  add(s3, sizeof s3);
  bbvfl_buf b;
  bbvfl_buf_init(&b);
  size_t m = bbvfl_rlp_list_begin(&b);
  for (int i = 0; i < 40; i++) bbvfl_rlp_put_u64(&b, (uint64_t)i * 0x10101u);
  bbvfl_rlp_list_end(&b, m);
  add(b.p, b.len);
  bbvfl_buf_free(&b);
}
