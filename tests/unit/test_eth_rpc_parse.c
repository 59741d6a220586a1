/* JSON-RPC response parsing and error decoding, without a node; plus the transport's behaviour
 * (size cap, malformed answers, retries, batch matching, URL checks) against a tiny canned HTTP
 * server on 127.0.0.1 run by the test itself. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_skip.h"

#include "bbvfl_errors.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "bbvfl_errors.h"
#include "eth/rpc.h"

/* ------------------------------------------------------------ canned HTTP server */

typedef struct {
  int fd;
  int port;
  const char *const *bodies; /* one answer per connection, in order */
  const int *status;         /* HTTP status per answer (NULL: all 200) */
  int n;
  int served;
  char last_request[8192];
  pthread_t th;
} canned;

static void *serve(void *arg) {
  canned *c = arg;
  for (int i = 0; i < c->n; i++) {
    int fd = accept(c->fd, NULL, NULL);
    if (fd < 0) break;
    /* read headers + body (Content-Length) */
    char buf[8192];
    size_t got = 0;
    long want = -1;
    for (;;) {
      ssize_t k = read(fd, buf + got, sizeof buf - 1 - got);
      if (k <= 0) break;
      got += (size_t)k;
      buf[got] = 0;
      char *end = strstr(buf, "\r\n\r\n");
      if (end) {
        if (want < 0) {
          char *cl = strcasestr(buf, "Content-Length:");
          want = (long)((end + 4) - buf) + (cl ? strtol(cl + 15, NULL, 10) : 0);
        }
        if ((long)got >= want) break;
      }
      if (got >= sizeof buf - 1) break;
    }
    memcpy(c->last_request, buf, got < sizeof c->last_request ? got : sizeof c->last_request - 1);
    c->last_request[got < sizeof c->last_request ? got : sizeof c->last_request - 1] = 0;
    const char *body = c->bodies[i];
    int st = c->status ? c->status[i] : 200;
    /* count before answering: the client may check the count as soon as it has the answer */
    c->served++;
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n",
                      st, strlen(body));
    ssize_t w = write(fd, head, (size_t)hl);
    size_t off = 0, bl = strlen(body);
    while (w >= 0 && off < bl) {
      w = write(fd, body + off, bl - off);
      if (w > 0) off += (size_t)w;
    }
    close(fd);
  }
  return NULL;
}

static void canned_start(canned *c, const char *const *bodies, const int *status, int n) {
  memset(c, 0, sizeof *c);
  c->bodies = bodies;
  c->status = status;
  c->n = n;
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(c->fd >= 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(c->fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(c->fd, 8), 0);
  socklen_t al = sizeof a;
  assert_int_equal(getsockname(c->fd, (struct sockaddr *)&a, &al), 0);
  c->port = ntohs(a.sin_port);
  assert_int_equal(pthread_create(&c->th, NULL, serve, c), 0);
}

static void canned_stop(canned *c) {
  shutdown(c->fd, SHUT_RDWR);
  pthread_join(c->th, NULL);
  close(c->fd);
}

static bbvfl_rpc *canned_rpc(const canned *c, int retries, size_t cap) {
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d", c->port);
  bbvfl_rpc_opts o = {.timeout_s = 5, .retries = retries, .max_response = cap};
  bbvfl_err err = {0};
  bbvfl_rpc *r = bbvfl_rpc_new(url, &o, &err);
  assert_non_null(r);
  return r;
}

/* ------------------------------------------------------------ revert data builders */

static size_t put_word_u64(uint8_t *w, uint64_t v) {
  memset(w, 0, 32);
  for (int i = 0; i < 8; i++) w[31 - i] = (uint8_t)(v >> (8 * i));
  return 32;
}

/* Error(string) with the given text: selector, offset 0x20, length, padded bytes */
static size_t error_string(uint8_t *out, const char *text) {
  static const uint8_t sel[4] = {0x08, 0xc3, 0x79, 0xa0};
  size_t n = strlen(text), o = 0;
  memcpy(out, sel, 4);
  o += 4;
  o += put_word_u64(out + o, 32);
  o += put_word_u64(out + o, n);
  memset(out + o, 0, (n + 31) / 32 * 32);
  memcpy(out + o, text, n);
  return o + (n + 31) / 32 * 32;
}

static char *hexstr(const uint8_t *d, size_t n) {
  char *s = malloc(2 * n + 3);
  bbvfl_hex_encode(d, n, s);
  return s;
}

/* ------------------------------------------------------------ parse tests */

static void test_result_ok(void **state) {
  (void)state;
  const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"0x7a69\"}";
  json_t *res = NULL;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_parse_response(body, strlen(body), &res, &err), 0);
  uint64_t v = 0;
  assert_int_equal(bbvfl_rpc_parse_u64(res, &v, &err), 0);
  assert_int_equal(v, 31337);
  json_decref(res);
  /* a null result is a result (e.g. a receipt not mined yet) */
  body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}";
  assert_int_equal(bbvfl_rpc_parse_response(body, strlen(body), &res, &err), 0);
  assert_true(json_is_null(res));
  json_decref(res);
}

static void test_malformed(void **state) {
  (void)state;
  const char *bad[] = {"", "{", "[1,2", "nonsense", "{\"jsonrpc\":\"2.0\",\"id\":1}", "42",
                       "\"str\"", "[]"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *res = (json_t *)1;
    bbvfl_err err = {0};
    assert_int_equal(bbvfl_rpc_parse_response(bad[i], strlen(bad[i]), &res, &err), -1);
    assert_null(res);
    assert_int_equal(err.code, BBVFL_E_PARSE);
    assert_non_null(strstr(err.msg, "malformed JSON-RPC response"));
  }
}

static void test_node_error(void **state) {
  (void)state;
  const char *body =
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32003,\"message\":\"nonce too low\"}}";
  json_t *res = NULL;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_parse_response(body, strlen(body), &res, &err), -1);
  assert_int_equal(err.code, BBVFL_E_RPC);
  assert_non_null(strstr(err.msg, "nonce too low"));
  assert_non_null(strstr(err.msg, "-32003"));
  /* the node's answer as data: its code and its own message, kept through a wrap */
  bbvfl_wrap(&err, "sending");
  assert_true(bbvfl_err_node_refused(&err));
  assert_int_equal(err.rpc.code, -32003);
  assert_string_equal(err.rpc.message, "nonce too low");
  assert_false(err.revert.present);
  /* the words are for people: the code says nothing more than "refused" (the sender asks the
     chain why) */
  assert_int_equal(err.rpc.kind, BBVFL_NODE_OTHER);
  bbvfl_fail(&err, BBVFL_E_RPC, "the node refused: a message of ours");
  assert_false(bbvfl_err_node_refused(&err)); /* our own text is not the node's answer */
  /* a reworded message of ours, even one quoting the node's words, classifies nothing */
  bbvfl_fail(&err, BBVFL_E_RPC, "sending: nonce too low (JSON-RPC error -32003)");
  assert_false(bbvfl_err_node_refused_is(&err, BBVFL_NODE_NONCE_TOO_LOW));
}

/* What a node's refusal says: its code only. geth's and anvil's wordings of the same refusals,
   and the same refusals reworded, classify alike: the message is never read (the sender asks
   the chain instead, eth/sender.c). -32601 is the one code with a meaning. */
static void test_node_refusal_kinds(void **state) {
  (void)state;
  static const struct {
    int code;
    const char *message;
    bbvfl_node_refusal kind;
  } cases[] = {
      {-32601, "the method eth_sendRawTransactionSync does not exist/is not available", BBVFL_NODE_METHOD_NOT_FOUND},
      {-32601, "no such thing", BBVFL_NODE_METHOD_NOT_FOUND},
      {-32000, "method not found", BBVFL_NODE_OTHER},
      {-32000, "already known", BBVFL_NODE_OTHER},
      {-32003, "transaction already imported", BBVFL_NODE_OTHER},
      {-32000, "nonce too low: next nonce 5, tx nonce 4", BBVFL_NODE_OTHER},
      {-32003, "La nonce est trop basse", BBVFL_NODE_OTHER},
      {-32000, "replacement transaction underpriced", BBVFL_NODE_OTHER},
      {-32000, "insufficient funds for gas * price + value: balance 0", BBVFL_NODE_OTHER},
      {-32000, "invalid chain id for signer", BBVFL_NODE_OTHER},
      {-32000, "execution reverted", BBVFL_NODE_OTHER}, /* no revert data: a refusal, not a revert */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char body[512];
    snprintf(body, sizeof body, "{\"id\":1,\"error\":{\"code\":%d,\"message\":\"%s\"}}", cases[i].code,
             cases[i].message);
    bbvfl_err err = {0};
    json_t *res = NULL;
    assert_int_equal(bbvfl_rpc_parse_response(body, strlen(body), &res, &err), -1);
    assert_int_equal(err.code, BBVFL_E_RPC);
    bbvfl_wrap(&err, "sending the transaction"); /* a wrap keeps the kind */
    if (err.rpc.kind != cases[i].kind) fail_msg("'%s' classified %d, want %d", cases[i].message, (int)err.rpc.kind, (int)cases[i].kind);
    assert_true(bbvfl_err_node_refused_is(&err, cases[i].kind));
    assert_string_equal(err.rpc.message, cases[i].message); /* kept for people */
  }
}

/* body = head + the hex of Error(string) revert data carrying text + tail. */
static void error_string_body(char *body, size_t cap, const char *head, const char *text, const char *tail) {
  uint8_t d[256];
  size_t n = error_string(d, text);
  char *h = hexstr(d, n);
  snprintf(body, cap, "%s%s%s", head, h, tail);
  free(h);
}

/* body must parse as a revert whose message contains want; err receives the error. */
static void expect_revert(const char *body, const char *want, bbvfl_err *err) {
  json_t *res = NULL;
  assert_int_equal(bbvfl_rpc_parse_response(body, strlen(body), &res, err), -1);
  assert_int_equal(err->code, BBVFL_E_REVERT);
  assert_non_null(strstr(err->msg, want));
}

static void test_revert_error_string(void **state) {
  (void)state;
  char body[1024];
  error_string_body(body, sizeof body,
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":3,\"message\":\"execution reverted: "
                    "probe says no\",\"data\":\"",
                    "probe says no", "\"}}");
  bbvfl_err err = {0};
  expect_revert(body, "Error(string): probe says no", &err);
}

static void test_revert_nested_data(void **state) {
  (void)state;
  /* some nodes nest the revert data one level down */
  char body[1024];
  error_string_body(body, sizeof body,
                    "{\"id\":1,\"error\":{\"code\":-32015,\"message\":\"VM execution error: reverted\","
                    "\"data\":{\"data\":\"",
                    "nested", "\"}}}");
  bbvfl_err err = {0};
  expect_revert(body, "Error(string): nested", &err);
}

static void test_revert_custom_with_nul_message(void **state) {
  (void)state;
  /* anvil appends the raw error bytes, NULs included, to the message */
  const char *body =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":3,\"message\":\"execution reverted: "
      "custom error 0x6ad9cdfc: \\u0000\\u0000\\u000b\\n\",\"data\":\"0x6ad9cdfc0000000000000000000000000000"
      "00000000000000000000000000000000000b\"}}";
  bbvfl_err err = {0};
  expect_revert(body, "custom error 0x6ad9cdfc (arguments 0x", &err);
  assert_non_null(strstr(err.msg, "(node: execution reverted: custom error 0x6ad9cdfc)"));
  for (const char *p = err.msg; *p; p++) assert_true((unsigned char)*p >= 0x20);
}

static void test_revert_panic_and_custom(void **state) {
  (void)state;
  uint8_t d[68] = {0x4e, 0x48, 0x7b, 0x71};
  put_word_u64(d + 4, 0x11);
  char out[512];
  bbvfl_revert_describe(d, 36, out, sizeof out);
  assert_string_equal(out, "Panic(0x11): arithmetic overflow or underflow");
  put_word_u64(d + 4, 0x12);
  bbvfl_revert_describe(d, 36, out, sizeof out);
  assert_string_equal(out, "Panic(0x12): division or modulo by zero");
  /* custom error: selector and its arguments shown */
  uint8_t c[36] = {0xde, 0xad, 0xbe, 0xef};
  put_word_u64(c + 4, 5);
  bbvfl_revert_describe(c, 36, out, sizeof out);
  assert_non_null(strstr(out, "custom error 0xdeadbeef"));
  assert_non_null(strstr(out, "0000000000000005"));
  bbvfl_revert_describe(c, 4, out, sizeof out);
  assert_string_equal(out, "custom error 0xdeadbeef");
  bbvfl_revert_describe(NULL, 0, out, sizeof out);
  assert_string_equal(out, "no reason given");
  bbvfl_revert_describe(c, 3, out, sizeof out);
  assert_non_null(strstr(out, "malformed revert data"));
}

/* The revert travels as data: callers branch on the contract's custom error (its selector,
   bbvfl_err_revert_sel_is, and arguments), which a reworded node message, a wrapped error or a
   reason string of the same words do not change. */
static void test_revert_as_data(void **state) {
  (void)state;
  /* BadLength(uint256 expected, uint256 got) = (10, 11), the node wording things its own way */
  const char *body =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":3,\"message\":\"the node words this its own "
      "way\",\"data\":\"0x2e728bb2"
      "000000000000000000000000000000000000000000000000000000000000000a"
      "000000000000000000000000000000000000000000000000000000000000000b\"}}";
  bbvfl_err err = {0};
  json_t *res = NULL;
  assert_int_equal(bbvfl_rpc_parse_response(body, strlen(body), &res, &err), -1);
  assert_int_equal(err.code, BBVFL_E_REVERT);
  assert_true(err.revert.present);
  assert_true(bbvfl_err_revert_sel_is(&err, BBVFL_SEL_BadLength));
  assert_false(bbvfl_err_revert_sel_is(&err, BBVFL_SEL_NotActive));
  assert_string_equal(err.revert.error, "BadLength(expected=10, got=11)");
  assert_int_equal(err.revert.nargs, 2);
  assert_int_equal(err.revert.args[0], 10);
  assert_int_equal(err.revert.args[1], 11);
  assert_non_null(strstr(err.msg, "BadLength(expected=10, got=11)")); /* named for people */
  bbvfl_wrap(&err, "submit() of round %d", 7);                        /* context added for people */
  assert_true(bbvfl_err_revert_sel_is(&err, BBVFL_SEL_BadLength));
  bbvfl_fail(&err, BBVFL_E_STATE, "something else, mentioning BadLength(expected=10, got=11)");
  assert_false(bbvfl_err_revert_sel_is(&err, BBVFL_SEL_BadLength)); /* a new error carries no stale revert */

  /* a reason string that reads like the error is not the error: no recovery path fires on words */
  char b2[1024];
  error_string_body(b2, sizeof b2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":3,\"message\":\"execution reverted: NotActive()\",\"data\":\"",
                    "NotActive()", "\"}}");
  assert_int_equal(bbvfl_rpc_parse_response(b2, strlen(b2), &res, &err), -1);
  assert_int_equal(err.code, BBVFL_E_REVERT);
  assert_string_equal(err.revert.reason, "NotActive()");
  assert_false(bbvfl_err_revert_sel_is(&err, BBVFL_SEL_NotActive));

  /* NotActive() itself, whatever the node's words */
  const char *b3 = "{\"id\":1,\"error\":{\"code\":-32000,\"message\":\"execution reverted\",\"data\":\"0x80cb55e2\"}}";
  assert_int_equal(bbvfl_rpc_parse_response(b3, strlen(b3), &res, &err), -1);
  assert_true(bbvfl_err_revert_sel_is(&err, BBVFL_SEL_NotActive));
  assert_string_equal(err.revert.error, "NotActive()");
  assert_int_equal(err.revert.nargs, 0);

  /* a custom error: the selector, no reason */
  uint8_t c[36] = {0xde, 0xad, 0xbe, 0xef};
  bbvfl_revert rv;
  bbvfl_revert_decode(c, sizeof c, &rv);
  assert_true(rv.present);
  assert_memory_equal(rv.selector, c, 4);
  assert_string_equal(rv.reason, "");
  bbvfl_revert_decode(c, 3, &rv);
  assert_false(rv.present);
}

static void test_revert_malformed_error_string(void **state) {
  (void)state;
  uint8_t d[256];
  size_t n = error_string(d, "abc");
  char out[512];
  /* offset pointing past the end */
  d[4 + 31] = 0xff;
  bbvfl_revert_describe(d, n, out, sizeof out);
  assert_string_equal(out, "malformed Error(string) revert data");
  /* length longer than the data */
  n = error_string(d, "abc");
  d[4 + 32 + 31] = 0xff;
  bbvfl_revert_describe(d, n, out, sizeof out);
  assert_string_equal(out, "malformed Error(string) revert data");
  /* truncated */
  n = error_string(d, "abc");
  bbvfl_revert_describe(d, 40, out, sizeof out);
  assert_string_equal(out, "malformed Error(string) revert data");
  /* control characters are not passed through */
  n = error_string(d, "a\nb");
  bbvfl_revert_describe(d, n, out, sizeof out);
  assert_string_equal(out, "Error(string): a?b");
}

static void test_parse_u64(void **state) {
  (void)state;
  struct {
    const char *s;
    int ok;
    uint64_t v;
  } cases[] = {{"0x0", 1, 0},
               {"0x1a", 1, 26},
               {"0xffffffffffffffff", 1, UINT64_MAX},
               {"0x10000000000000000", 0, 0},
               {"0x", 0, 0},
               {"12", 0, 0},
               {"0xg1", 0, 0},
               {"", 0, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *j = json_string(cases[i].s);
    uint64_t v = 12345;
    bbvfl_err err = {0};
    int rc = bbvfl_rpc_parse_u64(j, &v, &err);
    json_decref(j);
    if (cases[i].ok) {
      assert_int_equal(rc, 0);
      assert_int_equal(v, cases[i].v);
    } else {
      assert_int_equal(rc, -1);
      assert_int_equal(err.code, BBVFL_E_PARSE);
    }
  }
  json_t *j = json_true();
  uint64_t v;
  assert_int_equal(bbvfl_rpc_parse_u64(j, &v, NULL), -1);
}

static const char *RECEIPT =
    "{\"status\":\"0x1\",\"blockNumber\":\"0x2a\",\"gasUsed\":\"0x5208\","
    "\"effectiveGasPrice\":\"0x3b9aca00\",\"contractAddress\":"
    "\"0x5fbdb2315678afecb367f032d93f642f64180aa3\",\"transactionHash\":"
    "\"0x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\",\"logs\":[{\"a\":1}]}";

static void test_parse_receipt(void **state) {
  (void)state;
  json_t *o = json_loads(RECEIPT, 0, NULL);
  assert_non_null(o);
  bbvfl_receipt rc;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_parse_receipt(o, &rc, &err), 0);
  assert_int_equal(rc.status, 1);
  assert_int_equal(rc.block_number, 42);
  assert_int_equal(rc.gas_used, 21000);
  assert_int_equal(rc.effective_gas_price, 1000000000);
  assert_int_equal(rc.has_contract, 1);
  assert_int_equal(rc.contract[0], 0x5f);
  assert_int_equal(rc.contract[19], 0xa3);
  assert_int_equal(rc.hash[1], 0x11);
  assert_int_equal(json_array_size(rc.logs), 1);
  bbvfl_receipt_clear(&rc);
  assert_null(rc.logs);
  /* status 0x2, a missing logs array, a short hash: each is an error */
  const char *keys[] = {"status", "logs", "transactionHash"};
  json_t *vals[] = {json_string("0x2"), json_integer(3), json_string("0x1234")};
  for (int i = 0; i < 3; i++) {
    json_t *c = json_deep_copy(o);
    json_object_set_new(c, keys[i], vals[i]);
    bbvfl_err e = {0};
    assert_int_equal(bbvfl_rpc_parse_receipt(c, &rc, &e), -1);
    assert_int_equal(e.code, BBVFL_E_PARSE);
    assert_null(rc.logs);
    json_decref(c);
  }
  /* contractAddress null: no contract */
  json_object_set_new(o, "contractAddress", json_null());
  assert_int_equal(bbvfl_rpc_parse_receipt(o, &rc, &err), 0);
  assert_int_equal(rc.has_contract, 0);
  bbvfl_receipt_clear(&rc);
  json_decref(o);
}

/* ------------------------------------------------------------ transport tests */

static void test_url_refused(void **state) {
  (void)state;
  const char *bad[] = {"ws://127.0.0.1:8545", "file:///etc/passwd", "127.0.0.1:8545", ""};
  for (size_t i = 0; i < 4; i++) {
    bbvfl_err err = {0};
    assert_null(bbvfl_rpc_new(bad[i], NULL, &err));
    assert_int_equal(err.code, BBVFL_E_ARG);
  }
  bbvfl_err err = {0};
  assert_null(bbvfl_rpc_new("ws://127.0.0.1:8545", NULL, &err));
  assert_non_null(strstr(err.msg, "not a JSON-RPC URL"));
}

static void test_unreachable(void **state) {
  (void)state;
  bbvfl_rpc_opts o = {.timeout_s = 2, .retries = 1};
  bbvfl_err err = {0};
  bbvfl_rpc *r = bbvfl_rpc_new("http://127.0.0.1:1", &o, &err);
  assert_non_null(r);
  uint64_t id;
  assert_int_equal(bbvfl_rpc_chain_id(r, &id, &err), -1);
  assert_int_equal(err.code, BBVFL_E_RPC);
  assert_non_null(strstr(err.msg, "cannot reach the node at http://127.0.0.1:1"));
  assert_non_null(strstr(err.msg, "2 attempts"));
  bbvfl_rpc_free(r);
}

static void test_size_cap(void **state) {
  (void)state;
  size_t big = 5000;
  char *body = malloc(big + 64);
  int o = sprintf(body, "{\"id\":1,\"result\":\"0x");
  memset(body + o, 'a', big);
  strcpy(body + o + big, "\"}");
  const char *bodies[] = {body};
  canned c;
  canned_start(&c, bodies, NULL, 1);
  bbvfl_rpc *r = canned_rpc(&c, -1, 1024);
  json_t *res = NULL;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_call(r, "eth_x", NULL, &res, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  assert_non_null(strstr(err.msg, "larger than the 1024-byte limit"));
  bbvfl_rpc_free(r);
  canned_stop(&c);
  free(body);
}

static void test_malformed_over_wire_and_request_shape(void **state) {
  (void)state;
  const char *bodies[] = {"{\"id\":1,\"result\":", "{\"id\":2,\"result\":\"0x10\"}"};
  canned c;
  canned_start(&c, bodies, NULL, 2);
  bbvfl_rpc *r = canned_rpc(&c, -1, 0);
  json_t *res = NULL;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_call(r, "eth_blockNumber", NULL, &res, &err), -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  assert_non_null(strstr(err.msg, "eth_blockNumber"));
  assert_non_null(strstr(err.msg, "malformed"));
  uint8_t addr[20];
  memset(addr, 0xab, 20);
  uint64_t n = 0;
  assert_int_equal(bbvfl_rpc_nonce(r, addr, "pending", &n, &err), 0);
  assert_int_equal(n, 16);
  /* the request the server saw: a JSON-RPC 2.0 object with the hex address and block tag */
  char *b = strstr(c.last_request, "\r\n\r\n");
  assert_non_null(b);
  json_t *req = json_loads(b + 4, 0, NULL);
  assert_non_null(req);
  assert_string_equal(json_string_value(json_object_get(req, "jsonrpc")), "2.0");
  assert_string_equal(json_string_value(json_object_get(req, "method")), "eth_getTransactionCount");
  json_t *p = json_object_get(req, "params");
  assert_string_equal(json_string_value(json_array_get(p, 0)),
                      "0xabababababababababababababababababababab");
  assert_string_equal(json_string_value(json_array_get(p, 1)), "pending");
  json_decref(req);
  bbvfl_rpc_free(r);
  canned_stop(&c);
}

static void test_retry_on_503(void **state) {
  (void)state;
  const char *bodies[] = {"busy", "busy", "{\"id\":1,\"result\":\"0x7a69\"}"};
  const int status[] = {503, 503, 200};
  canned c;
  canned_start(&c, bodies, status, 3);
  bbvfl_rpc *r = canned_rpc(&c, 2, 0);
  uint64_t id = 0;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_chain_id(r, &id, &err), 0);
  assert_int_equal(id, 31337);
  assert_int_equal(c.served, 3);
  bbvfl_rpc_free(r);
  canned_stop(&c);
}

static void test_no_retry_on_node_error(void **state) {
  (void)state;
  /* An HTTP 500 with a JSON-RPC error is an answer: reported, never re-asked. */
  const char *bodies[] = {"{\"id\":1,\"error\":{\"code\":-32000,\"message\":\"boom\"}}",
                          "{\"id\":2,\"result\":\"0x1\"}"};
  const int status[] = {500, 200};
  canned c;
  canned_start(&c, bodies, status, 2);
  bbvfl_rpc *r = canned_rpc(&c, 3, 0);
  uint64_t id = 0;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_chain_id(r, &id, &err), -1);
  assert_int_equal(err.code, BBVFL_E_RPC);
  assert_non_null(strstr(err.msg, "boom"));
  assert_int_equal(c.served, 1);
  /* let the server finish */
  assert_int_equal(bbvfl_rpc_chain_id(r, &id, &err), 0);
  bbvfl_rpc_free(r);
  canned_stop(&c);
}

static void test_batch_matching(void **state) {
  (void)state;
  /* answers out of order, one error, one missing */
  const char *bodies[] = {
      "[{\"id\":3,\"error\":{\"code\":-1,\"message\":\"nope\"}},{\"id\":1,\"result\":\"0x1\"}]"};
  canned c;
  canned_start(&c, bodies, NULL, 1);
  bbvfl_rpc *r = canned_rpc(&c, -1, 0);
  bbvfl_rpc_req q[3] = {{.method = "a", .params = json_array()},
                        {.method = "b", .params = NULL},
                        {.method = "c", .params = json_pack("[i]", 1)}};
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_batch(r, q, 3, &err), 0);
  assert_int_equal(q[0].err.code, BBVFL_OK);
  assert_string_equal(json_string_value(q[0].result), "0x1");
  assert_int_equal(q[1].err.code, BBVFL_E_PARSE);
  assert_null(q[1].result);
  assert_int_equal(q[2].err.code, BBVFL_E_RPC);
  assert_non_null(strstr(q[2].err.msg, "nope"));
  bbvfl_rpc_batch_clear(q, 3);
  bbvfl_rpc_free(r);
  canned_stop(&c);
}

static void test_sync_fallback(void **state) {
  (void)state;
  /* A node without eth_sendRawTransactionSync: the client sends the ordinary way, polls the
   * receipt, and does not ask for the sync method again on this connection. */
  const uint8_t raw[3] = {1, 2, 3};
  uint8_t h[32];
  bbvfl_keccak256(raw, 3, h);
  char hx[67], b1[256], b2[512];
  bbvfl_hex_encode(h, 32, hx);
  snprintf(b1, sizeof b1, "{\"id\":2,\"result\":\"%s\"}", hx);
  snprintf(b2, sizeof b2,
           "{\"id\":3,\"result\":{\"status\":\"0x1\",\"blockNumber\":\"0x5\",\"gasUsed\":"
           "\"0x5208\",\"transactionHash\":\"%s\",\"logs\":[]}}",
           hx);
  const char *bodies[] = {
      "{\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}", b1, b2, b1, b2};
  canned c;
  canned_start(&c, bodies, NULL, 5);
  bbvfl_rpc *r = canned_rpc(&c, -1, 0);
  bbvfl_receipt rc;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_send_raw_sync(r, raw, 3, 5, &rc, &err), 0);
  assert_int_equal(rc.block_number, 5);
  assert_memory_equal(rc.hash, h, 32);
  bbvfl_receipt_clear(&rc);
  assert_int_equal(bbvfl_rpc_send_raw_sync(r, raw, 3, 5, &rc, &err), 0);
  assert_int_equal(c.served, 5);
  assert_non_null(strstr(c.last_request, "eth_getTransactionReceipt"));
  bbvfl_receipt_clear(&rc);
  bbvfl_rpc_free(r);
  canned_stop(&c);
}

/* A refused send is "sent" when the node has the bytes, asked by the hash
   (eth_getTransactionByHash), whatever the refusal's words: "already known", anvil's
   "transaction already imported", or words never seen before. A refusal whose hash the node does
   not know stays an error, with the node's words for people. */
static void test_send_raw_already_known(void **state) {
  (void)state;
  const uint8_t raw[3] = {1, 2, 3};
  const char *known = "{\"id\":2,\"result\":{\"hash\":\"0x00\"}}", *unknown = "{\"id\":2,\"result\":null}";
  const char *bodies[] = {"{\"id\":1,\"error\":{\"code\":-32000,\"message\":\"already known\"}}", known,
                          "{\"id\":1,\"error\":{\"code\":-32003,\"message\":\"Schon bekannt\"}}", known,
                          "{\"id\":1,\"error\":{\"code\":-32000,\"message\":\"already known\"}}", unknown};
  canned c;
  canned_start(&c, bodies, NULL, 6);
  bbvfl_rpc *r = canned_rpc(&c, -1, 0);
  uint8_t h[32];
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_rpc_send_raw(r, raw, 3, h, &err), 0);
  assert_non_null(strstr(c.last_request, "eth_getTransactionByHash"));
  assert_int_equal(bbvfl_rpc_send_raw(r, raw, 3, h, &err), 0);
  /* the same words, but the node does not have the bytes: not sent */
  assert_int_equal(bbvfl_rpc_send_raw(r, raw, 3, h, &err), -1);
  assert_int_equal(c.served, 6);
  assert_true(bbvfl_err_node_refused(&err));
  assert_int_equal(err.rpc.kind, BBVFL_NODE_OTHER);
  assert_non_null(strstr(err.msg, "already known"));
  bbvfl_rpc_free(r);
  canned_stop(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_result_ok),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_node_error),
      cmocka_unit_test(test_node_refusal_kinds),
      cmocka_unit_test(test_revert_error_string),
      cmocka_unit_test(test_revert_nested_data),
      cmocka_unit_test(test_revert_custom_with_nul_message),
      cmocka_unit_test(test_revert_panic_and_custom),
      cmocka_unit_test(test_revert_malformed_error_string),
      cmocka_unit_test(test_revert_as_data),
      cmocka_unit_test(test_parse_u64),
      cmocka_unit_test(test_parse_receipt),
      cmocka_unit_test(test_url_refused),
      cmocka_unit_test(test_unreachable),
      cmocka_unit_test(test_size_cap),
      cmocka_unit_test(test_malformed_over_wire_and_request_shape),
      cmocka_unit_test(test_retry_on_503),
      cmocka_unit_test(test_no_retry_on_node_error),
      cmocka_unit_test(test_batch_matching),
      cmocka_unit_test(test_sync_fallback),
      cmocka_unit_test(test_send_raw_already_known),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
