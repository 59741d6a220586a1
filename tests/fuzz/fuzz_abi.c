/* Fuzz target: the ABI decoder (and the type parser). The first byte picks a type from a list
 * covering every kind; the rest is decoded. Properties: no out-of-bounds access, errors have a
 * message, and a decoded value re-encodes to a canonical form that decodes to the same value
 * and re-encodes identically. With the first byte 0xff the rest is parsed as a type string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eth/abi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

static const char *const types[] = {
    "(uint256)",
    "(uint8,int16,bool,address,bytes3)",
    "(bytes)",
    "(string,bytes)",
    "(uint256[])",
    "(bytes[])",
    "(string[2])",
    "(uint64,bytes)",
    "((uint8,string)[])",
    "(uint16[][],bool)",
    "((bytes,(uint32[],string)[2])[],int256)",
    "(address[3][],bytes32)",
    "(int8[2][2])",
    "((string)[][])",
};
#define NTYPES (sizeof types / sizeof types[0])

static int same(const bbvfl_abi_value *a, const bbvfl_abi_value *b) {
  if (a->kind != b->kind || memcmp(a->word, b->word, 32) || a->len != b->len || a->n != b->n) return 0;
  if (a->len && memcmp(a->bytes, b->bytes, a->len)) return 0;
  for (size_t i = 0; i < a->n; i++)
    if (!same(&a->items[i], &b->items[i])) return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  bbvfl_err err;
  bbvfl_abi_type *t;
  if (data[0] == 0xff) { /* the type parser */
    char *s = malloc(size);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = 0;
    if (bbvfl_abi_type_parse(s, &t, &err) == 0) {
      char canon[4096];
      if (bbvfl_abi_type_format(t, canon, sizeof canon) == 0) {
        bbvfl_abi_type *t2;
        if (bbvfl_abi_type_parse(canon, &t2, NULL) != 0) abort();
        char again[4096];
        if (bbvfl_abi_type_format(t2, again, sizeof again) != 0 || strcmp(canon, again)) abort();
        bbvfl_abi_type_free(t2);
      }
      bbvfl_abi_type_free(t);
    } else if (!err.msg[0]) {
      abort();
    }
    free(s);
    return 0;
  }
  if (bbvfl_abi_type_parse(types[data[0] % NTYPES], &t, NULL) != 0) abort();
  bbvfl_abi_value v;
  if (bbvfl_abi_decode(t, data + 1, size - 1, &v, &err) == 0) {
    uint8_t *enc;
    size_t len;
    if (bbvfl_abi_encode(t, &v, &enc, &len, NULL) != 0) abort();
    bbvfl_abi_value v2;
    if (bbvfl_abi_decode(t, enc, len, &v2, NULL) != 0) abort();
    if (!same(&v, &v2)) abort();
    uint8_t *enc2;
    size_t len2;
    if (bbvfl_abi_encode(t, &v2, &enc2, &len2, NULL) != 0) abort();
    if (len2 != len || memcmp(enc, enc2, len)) abort();
    free(enc);
    free(enc2);
    bbvfl_abi_value_clear(&v2);
    bbvfl_abi_value_clear(&v);
  } else {
    if (!err.msg[0] || v.items || v.bytes) abort();
  }
  bbvfl_abi_type_free(t);
  return 0;
}

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  /* a valid encoding of (uint64,bytes) and of ((uint8,string)[]) to mutate from */
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, NULL);
  bbvfl_abi_put_u64(&b, 7);
  bbvfl_abi_put_bytes(&b, (const uint8_t *)"hello, world", 12);
  uint8_t *enc;
  size_t len;
  if (bbvfl_abi_builder_finish(&b, &enc, &len, NULL) != 0) return;
  uint8_t *s = malloc(len + 1);
  s[0] = 7;
  memcpy(s + 1, enc, len);
  add(s, len + 1);
  free(s);
  free(enc);
  bbvfl_abi_type *t;
  if (bbvfl_abi_type_parse(types[8], &t, NULL) != 0) return;
  bbvfl_abi_value v;
  bbvfl_abi_value_list(&v, BBVFL_ABI_TUPLE, 1, NULL);
  bbvfl_abi_value_list(&v.items[0], BBVFL_ABI_ARRAY, 2, NULL);
  for (int i = 0; i < 2; i++) {
    bbvfl_abi_value_list(&v.items[0].items[i], BBVFL_ABI_TUPLE, 2, NULL);
    bbvfl_abi_value_u64(&v.items[0].items[i].items[0], (uint64_t)(i + 1));
    bbvfl_abi_value_string(&v.items[0].items[i].items[1], i ? "second" : "first", NULL);
  }
  if (bbvfl_abi_encode(t, &v, &enc, &len, NULL) == 0) {
    s = malloc(len + 1);
    s[0] = 8;
    memcpy(s + 1, enc, len);
    add(s, len + 1);
    free(s);
    free(enc);
  }
  bbvfl_abi_value_clear(&v);
  bbvfl_abi_type_free(t);
  static const char ty[] = "\xff((bytes,(uint32[],string)[2])[],int256)";
  add((const uint8_t *)ty, sizeof ty - 1);
}
