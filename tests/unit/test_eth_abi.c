/* Solidity ABI: selectors and topics, every ethers.js ABI vector (encode, decode, round trip),
 * the builder against the general encoder, event log decoding, type parsing errors, and the
 * decoder's handling of hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_skip.h"

#include "eth/abi.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/wallet.h"
#include "eth_vectors.h"

static void expect_hex(const uint8_t *got, size_t len, const char *hex) {
  char *g = malloc(2 * len + 3);
  bbvfl_hex_encode(got, len, g);
  if (strcmp(g, hex) != 0) fail_msg("got  %s\nwant %s", g, hex);
  free(g);
}

static void test_selectors(void **state) {
  (void)state;
  uint8_t sel[4], topic[32];
  bbvfl_abi_selector("transfer(address,uint256)", sel);
  expect_hex(sel, 4, "0xa9059cbb");
  bbvfl_abi_selector("balanceOf(address)", sel);
  expect_hex(sel, 4, "0x70a08231");
  bbvfl_abi_event_topic("Transfer(address,address,uint256)", topic);
  expect_hex(topic, 32, "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
}

/* Builds a value for type t from an ethers "verbose" JSON node. */
static void value_from_json(const bbvfl_abi_type *t, json_t *j, bbvfl_abi_value *v) {
  const char *kind = json_string_value(json_object_get(j, "type"));
  json_t *val = json_object_get(j, "value");
  assert_non_null(kind);
  switch (t->kind) {
    case BBVFL_ABI_UINT:
    case BBVFL_ABI_INT: {
      assert_string_equal(kind, "number");
      const char *s = json_string_value(val);
      int neg = s[0] == '-';
      bbvfl_u256 u;
      assert_int_equal(bbvfl_u256_from_string(s + neg, &u, NULL), 0);
      if (neg) {
        bbvfl_u256 zero = bbvfl_u256_from_u64(0);
        bbvfl_u256_sub(&u, &zero, &u);
      }
      bbvfl_abi_value_uint(v, &u);
      v->kind = t->kind;
      break;
    }
    case BBVFL_ABI_ADDRESS: {
      uint8_t a[20];
      assert_string_equal(kind, "address");
      assert_int_equal(bbvfl_addr_parse(json_string_value(val), a, NULL), 0);
      bbvfl_abi_value_address(v, a);
      break;
    }
    case BBVFL_ABI_BOOL:
      assert_string_equal(kind, "boolean");
      bbvfl_abi_value_bool(v, json_is_true(val));
      break;
    case BBVFL_ABI_FIXED_BYTES:
    case BBVFL_ABI_BYTES: {
      assert_string_equal(kind, "hexstring");
      uint8_t *b;
      size_t n;
      assert_int_equal(bbvfl_hex_decode_alloc(json_string_value(val), &b, &n, NULL), 0);
      if (t->kind == BBVFL_ABI_FIXED_BYTES) {
        assert_int_equal(n, t->size);
        bbvfl_abi_value_fixed_bytes(v, b, n);
      } else {
        assert_int_equal(bbvfl_abi_value_bytes(v, b, n, NULL), 0);
      }
      free(b);
      break;
    }
    case BBVFL_ABI_STRING:
      assert_string_equal(kind, "string");
      assert_int_equal(bbvfl_abi_value_string(v, json_string_value(val), NULL), 0);
      break;
    case BBVFL_ABI_ARRAY:
    case BBVFL_ABI_FIXED_ARRAY:
    case BBVFL_ABI_TUPLE: {
      assert_string_equal(kind, t->kind == BBVFL_ABI_TUPLE ? "object" : "array");
      size_t n = json_array_size(val), i;
      assert_int_equal(bbvfl_abi_value_list(v, t->kind, n, NULL), 0);
      json_t *x;
      json_array_foreach(val, i, x) value_from_json(t->kind == BBVFL_ABI_TUPLE ? t->fields[i] : t->elem, x, &v->items[i]);
      break;
    }
  }
}

static void assert_value_equal(const bbvfl_abi_value *a, const bbvfl_abi_value *b) {
  assert_int_equal(a->kind, b->kind);
  assert_memory_equal(a->word, b->word, 32);
  assert_int_equal(a->len, b->len);
  if (a->len) assert_memory_equal(a->bytes, b->bytes, a->len);
  assert_int_equal(a->n, b->n);
  for (size_t i = 0; i < a->n; i++) assert_value_equal(&a->items[i], &b->items[i]);
}

static void test_ethers_abi(void **state) {
  (void)state;
  json_t *root = bbvfl_test_vectors_or_skip("abi.json.gz");
  size_t i, n = 0;
  json_t *tc;
  json_array_foreach(root, i, tc) {
    const char *type = json_string_value(json_object_get(tc, "type"));
    const char *enc = json_string_value(json_object_get(tc, "encoded"));
    /* the encoding is the return data of a function returning one value of this type */
    size_t tl = strlen(type);
    char *wrapped = malloc(tl + 3);
    snprintf(wrapped, tl + 3, "(%s)", type);
    bbvfl_abi_type *t;
    bbvfl_err err;
    if (bbvfl_abi_type_parse(wrapped, &t, &err) != 0) fail_msg("%s: %s", type, err.msg);
    char canon[1024];
    assert_int_equal(bbvfl_abi_type_format(t->fields[0], canon, sizeof canon), 0);
    if (!strstr(type, "int,") && !strstr(type, "int)") && !strstr(type, "int[") && strcmp(type + tl - 3, "int"))
      assert_string_equal(canon, type); /* canonical already, unless it uses the "int"/"uint" aliases */
    bbvfl_abi_value v;
    assert_int_equal(bbvfl_abi_value_list(&v, BBVFL_ABI_TUPLE, 1, NULL), 0);
    value_from_json(t->fields[0], json_object_get(tc, "verbose"), &v.items[0]);
    uint8_t *out;
    size_t len;
    if (bbvfl_abi_encode(t, &v, &out, &len, &err) != 0) fail_msg("%s: %s", type, err.msg);
    char *hex = malloc(2 * len + 3);
    bbvfl_hex_encode(out, len, hex);
    if (strcmp(hex, enc) != 0) fail_msg("%s\n got  %s\n want %s", type, hex, enc);
    free(hex);
    bbvfl_abi_value back;
    if (bbvfl_abi_decode(t, out, len, &back, &err) != 0) fail_msg("%s: decode: %s", type, err.msg);
    assert_value_equal(&v, &back);
    /* every strict prefix of the encoding must be rejected, never read out of bounds */
    if (i % 16 == 0) {
      for (size_t cut = 0; cut < len; cut += (len > 512 ? 29 : 1)) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, out, cut);
        bbvfl_abi_value junk;
        assert_int_equal(bbvfl_abi_decode(t, copy, cut, &junk, NULL), -1);
        free(copy);
      }
    }
    bbvfl_abi_value_clear(&back);
    bbvfl_abi_value_clear(&v);
    free(out);
    bbvfl_abi_type_free(t);
    free(wrapped);
    n++;
  }
  print_message("checked %zu ABI vectors\n", n);
  assert_true(n >= 1000);
  json_decref(root);
}

static void test_builder_matches_encoder(void **state) {
  (void)state;
  uint8_t q[77], addr[20], b32[32];
  for (size_t i = 0; i < sizeof q; i++) q[i] = (uint8_t)(i * 13);
  memset(addr, 0xab, 20);
  memset(b32, 0x5c, 32);
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, "f(uint64,bytes,address,string,int64,bool,bytes32)");
  bbvfl_abi_put_u64(&b, 42);
  bbvfl_abi_put_bytes(&b, q, sizeof q);
  bbvfl_abi_put_address(&b, addr);
  bbvfl_abi_put_string(&b, "hello");
  bbvfl_abi_put_i64(&b, -5);
  bbvfl_abi_put_bool(&b, 1);
  bbvfl_abi_put_fixed_bytes(&b, b32, 32);
  uint8_t *built, *general;
  size_t blen, glen;
  assert_int_equal(bbvfl_abi_builder_finish(&b, &built, &blen, NULL), 0);

  bbvfl_abi_value args;
  assert_int_equal(bbvfl_abi_value_list(&args, BBVFL_ABI_TUPLE, 7, NULL), 0);
  bbvfl_abi_value_u64(&args.items[0], 42);
  assert_int_equal(bbvfl_abi_value_bytes(&args.items[1], q, sizeof q, NULL), 0);
  bbvfl_abi_value_address(&args.items[2], addr);
  assert_int_equal(bbvfl_abi_value_string(&args.items[3], "hello", NULL), 0);
  bbvfl_abi_value_i64(&args.items[4], -5);
  bbvfl_abi_value_bool(&args.items[5], 1);
  bbvfl_abi_value_fixed_bytes(&args.items[6], b32, 32);
  assert_int_equal(bbvfl_abi_encode_call("f(uint64,bytes,address,string,int64,bool,bytes32)", &args, &general, &glen, NULL), 0);
  assert_int_equal(blen, glen);
  assert_memory_equal(built, general, blen);
  assert_int_equal(blen, 4 + 7 * 32 + 32 + 96 + 32 + 32);
  /* decode it back and read the integers */
  bbvfl_abi_type *t;
  assert_int_equal(bbvfl_abi_type_parse("(uint64,bytes,address,string,int64,bool,bytes32)", &t, NULL), 0);
  bbvfl_abi_value back;
  assert_int_equal(bbvfl_abi_decode(t, built + 4, blen - 4, &back, NULL), 0);
  uint64_t u;
  int64_t s;
  assert_int_equal(bbvfl_abi_value_get_u64(&back.items[0], &u, NULL), 0);
  assert_true(u == 42);
  assert_int_equal(bbvfl_abi_value_get_i64(&back.items[4], &s, NULL), 0);
  assert_true(s == -5);
  assert_string_equal((const char *)back.items[3].bytes, "hello");
  assert_value_equal(&args, &back);
  bbvfl_abi_value_clear(&back);
  bbvfl_abi_value_clear(&args);
  bbvfl_abi_type_free(t);
  free(built);
  free(general);
}

static void test_encode_rejects_bad_values(void **state) {
  (void)state;
  bbvfl_abi_type *t;
  assert_int_equal(bbvfl_abi_type_parse("(uint8,bool)", &t, NULL), 0);
  bbvfl_abi_value v;
  assert_int_equal(bbvfl_abi_value_list(&v, BBVFL_ABI_TUPLE, 2, NULL), 0);
  bbvfl_abi_value_u64(&v.items[0], 256);
  bbvfl_abi_value_bool(&v.items[1], 1);
  uint8_t *out;
  size_t len;
  bbvfl_err err;
  assert_int_equal(bbvfl_abi_encode(t, &v, &out, &len, &err), -1);
  assert_non_null(strstr(err.msg, "does not fit"));
  bbvfl_abi_value_u64(&v.items[0], 255);
  assert_int_equal(bbvfl_abi_encode(t, &v, &out, &len, &err), 0);
  free(out);
  bbvfl_abi_value_string(&v.items[1], "x", NULL);
  assert_int_equal(bbvfl_abi_encode(t, &v, &out, &len, &err), -1);
  assert_non_null(strstr(err.msg, "kind"));
  bbvfl_abi_value_clear(&v);
  bbvfl_abi_type_free(t);
}

static void test_type_parse_errors(void **state) {
  (void)state;
  static const char *bad[] = {"uint7", "uint264", "int0", "bytes0", "bytes33", "uint256[0]", "(uint256",
                              "(uint256,)", "foo", "uint256[", "uint256[]]", "()[]", "((),uint8)", "uint08",
                              "uint256[99999999999]", "", "(uint8)x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bbvfl_abi_type *t;
    bbvfl_err err;
    bbvfl_err_clear(&err);
    if (bbvfl_abi_type_parse(bad[i], &t, &err) == 0) fail_msg("\"%s\" parsed", bad[i]);
    assert_int_equal(err.code, BBVFL_E_PARSE);
  }
  /* 40 nested arrays is too deep; canonical names */
  char deep[200] = "uint8";
  for (int i = 0; i < 40; i++) strcat(deep, "[]");
  bbvfl_abi_type *t;
  assert_int_equal(bbvfl_abi_type_parse(deep, &t, NULL), -1);
  assert_int_equal(bbvfl_abi_type_parse("(uint,int,bytes1[2][],(string,address)[])", &t, NULL), 0);
  char canon[128];
  assert_int_equal(bbvfl_abi_type_format(t, canon, sizeof canon), 0);
  assert_string_equal(canon, "(uint256,int256,bytes1[2][],(string,address)[])");
  assert_int_equal(bbvfl_abi_type_format(t, canon, 10), -1);
  bbvfl_abi_type_free(t);
}

static void expect_decode_fail(const char *type, const char *hex, const char *fragment) {
  bbvfl_abi_type *t;
  assert_int_equal(bbvfl_abi_type_parse(type, &t, NULL), 0);
  uint8_t *data;
  size_t len;
  assert_int_equal(bbvfl_hex_decode_alloc(hex, &data, &len, NULL), 0);
  bbvfl_abi_value v;
  bbvfl_err err;
  bbvfl_err_clear(&err);
  if (bbvfl_abi_decode(t, data, len, &v, &err) == 0) fail_msg("%s %s decoded", type, hex);
  if (!strstr(err.msg, fragment)) fail_msg("%s: \"%s\" lacks \"%s\"", type, err.msg, fragment);
  assert_int_equal(v.n, 0);
  assert_null(v.items);
  free(data);
  bbvfl_abi_type_free(t);
}

#define W0 "0000000000000000000000000000000000000000000000000000000000000000"
#define W1 "0000000000000000000000000000000000000000000000000000000000000001"
#define W2 "0000000000000000000000000000000000000000000000000000000000000002"
#define W20 "0000000000000000000000000000000000000000000000000000000000000020"
#define WFF "00000000000000000000000000000000000000000000000000000000000000ff"
#define WBIG "00000000000000000000000000000000000000000000000000000000ffffffff"
#define WHUGE "0100000000000000000000000000000000000000000000000000000000000000"

static void test_decode_hostile(void **state) {
  (void)state;
  expect_decode_fail("(uint256)", "0x00", "ends inside");
  expect_decode_fail("(uint8)", "0x" "0000000000000000000000000000000000000000000000000000000000000100", "does not fit");
  expect_decode_fail("(int8)", "0x" "0000000000000000000000000000000000000000000000000000000000000080", "does not fit");
  expect_decode_fail("(bool)", "0x" W2, "bool");
  expect_decode_fail("(address)", "0x" "0000000000000000000000010000000000000000000000000000000000000000", "address");
  expect_decode_fail("(bytes1)", "0x" "0001000000000000000000000000000000000000000000000000000000000000", "padding");
  expect_decode_fail("(bytes)", "0x" WBIG, "past the end");
  expect_decode_fail("(bytes)", "0x" WHUGE, "64 bits");
  expect_decode_fail("(bytes)", "0x" W20 WBIG, "length runs past");
  expect_decode_fail("(uint256[])", "0x" W20 WBIG, "larger than the input");
  expect_decode_fail("(string[])", "0x" W20 W1 WFF, "past the end");
  expect_decode_fail("(uint256[2])", "0x" W1, "ends inside");
  /* 300 elements all pointing at the same 300-element array: refused by the size bound
   * instead of allocating 90,000 values */
  {
    size_t n = 300;
    size_t len = 32 + 32 + n * 32;
    uint8_t *d = calloc(1, len);
    d[31] = 0x20;         /* offset of the outer array */
    d[62] = (uint8_t)(n >> 8);
    d[63] = (uint8_t)n;   /* outer count */
    for (size_t i = 0; i < n; i++) d[64 + 32 * i + 31] = 0; /* every inner offset 0 -> the count word itself */
    bbvfl_abi_type *t;
    assert_int_equal(bbvfl_abi_type_parse("(uint256[][][])", &t, NULL), 0);
    bbvfl_abi_value v;
    bbvfl_err err;
    int rc = bbvfl_abi_decode(t, d, len, &v, &err);
    if (rc == 0) bbvfl_abi_value_clear(&v);
    else assert_int_equal(err.code, BBVFL_E_PARSE);
    bbvfl_abi_type_free(t);
    free(d);
  }
  /* a valid empty dynamic array and trailing bytes are fine */
  bbvfl_abi_type *t;
  assert_int_equal(bbvfl_abi_type_parse("(uint256[])", &t, NULL), 0);
  uint8_t *data;
  size_t len;
  assert_int_equal(bbvfl_hex_decode_alloc("0x" W20 W0 W1, &data, &len, NULL), 0);
  bbvfl_abi_value v;
  assert_int_equal(bbvfl_abi_decode(t, data, len, &v, NULL), 0);
  assert_int_equal(v.items[0].n, 0);
  bbvfl_abi_value_clear(&v);
  free(data);
  bbvfl_abi_type_free(t);
}

static void test_decode_log(void **state) {
  (void)state;
  /* Transfer(address indexed from, address indexed to, uint256 value) */
  uint8_t topics[3][32] = {{0}};
  bbvfl_abi_event_topic("Transfer(address,address,uint256)", topics[0]);
  memset(topics[1] + 12, 0x11, 20);
  memset(topics[2] + 12, 0x22, 20);
  uint8_t data[32] = {0};
  data[31] = 7;
  bbvfl_abi_value v;
  bbvfl_err err;
  if (bbvfl_abi_decode_log("Transfer(address indexed,address indexed,uint256)", (const uint8_t(*)[32])topics, 3,
                           data, 32, &v, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(v.n, 3);
  assert_int_equal(v.items[0].kind, BBVFL_ABI_ADDRESS);
  assert_int_equal(v.items[0].word[12], 0x11);
  assert_int_equal(v.items[1].word[31], 0x22);
  uint64_t val;
  assert_int_equal(bbvfl_abi_value_get_u64(&v.items[2], &val, NULL), 0);
  assert_true(val == 7);
  bbvfl_abi_value_clear(&v);
  /* wrong event, wrong topic count, dirty indexed word */
  assert_int_equal(bbvfl_abi_decode_log("Approval(address indexed,address indexed,uint256)",
                                        (const uint8_t(*)[32])topics, 3, data, 32, &v, &err), -1);
  assert_non_null(strstr(err.msg, "topic 0"));
  assert_int_equal(bbvfl_abi_decode_log("Transfer(address indexed,address indexed,uint256)",
                                        (const uint8_t(*)[32])topics, 2, data, 32, &v, &err), -1);
  assert_non_null(strstr(err.msg, "topics"));
  topics[1][0] = 1;
  assert_int_equal(bbvfl_abi_decode_log("Transfer(address indexed,address indexed,uint256)",
                                        (const uint8_t(*)[32])topics, 3, data, 32, &v, &err), -1);
  assert_non_null(strstr(err.msg, "address"));
  /* a dynamic non-indexed parameter after an indexed one */
  uint8_t t2[2][32] = {{0}};
  bbvfl_abi_event_topic("RoundCompleted(uint64,uint16[])", t2[0]);
  t2[1][31] = 9;
  bbvfl_abi_builder b;
  bbvfl_abi_builder_init(&b, NULL);
  uint8_t arr[32 * 3] = {0};
  arr[31] = 2;
  arr[63] = 5;
  arr[95] = 6;
  /* (uint16[]) = offset word + the array: build by hand with put_word */
  uint8_t off[32] = {0};
  off[31] = 0x20;
  bbvfl_abi_put_word(&b, off);
  for (int i = 0; i < 3; i++) bbvfl_abi_put_word(&b, arr + 32 * i);
  uint8_t *d;
  size_t dl;
  assert_int_equal(bbvfl_abi_builder_finish(&b, &d, &dl, NULL), 0);
  if (bbvfl_abi_decode_log("RoundCompleted(uint64 indexed, uint16[])", (const uint8_t(*)[32])t2, 2, d, dl, &v, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(v.items[1].n, 2);
  assert_int_equal(v.items[1].items[1].word[31], 6);
  assert_int_equal(v.items[0].word[31], 9);
  bbvfl_abi_value_clear(&v);
  free(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_selectors),
      cmocka_unit_test(test_ethers_abi),
      cmocka_unit_test(test_builder_matches_encoder),
      cmocka_unit_test(test_encode_rejects_bad_values),
      cmocka_unit_test(test_type_parse_errors),
      cmocka_unit_test(test_decode_hostile),
      cmocka_unit_test(test_decode_log),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
