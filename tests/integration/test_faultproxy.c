/* The JSON-RPC client and the sender over a faulty network: tests/tools/faultproxy.py sits
 * between bbvfl and the test's anvil (BBVFL_RPC_URL) and injects slow answers, garbage,
 * truncated and enormous bodies, connection resets, HTTP 5xx and a transaction swallowed on its
 * way to the pool. Answers that are broken give a clear error at once (never re-asked, never a
 * crash or a hang); transport failures are retried and succeed once the fault passes; a
 * swallowed transaction is re-sent with the same bytes (same nonce) and mined. Also: a replayed
 * raw transaction and a different transaction with a used nonce are refused by the node and
 * change nothing. Hosted nodes' manners: HTTP 429/503 with and without Retry-After (back-off, bounded),
 * several endpoints with fail-over, eth_getLogs capped by range and by result count (paged by
 * halving, merged in order). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "devnet_fixture.h"
#include "test_skip.h"

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/tx.h"
#include "eth/wallet.h"

static const char *node_url;
static char tmpdir[256];

/* dev account 0 (*dev) sending through r (chain id asked from the node), and a fresh key *me. */
static bbvfl_sender *dev_sender(bbvfl_rpc *r, bbvfl_key *dev, bbvfl_key *me) {
  bbvfl_err err = {0};
  devnet_check(bbvfl_key_from_hex(BBVFL_ANVIL_DEV_KEY0, dev, &err), &err);
  devnet_check(bbvfl_key_generate(me, &err), &err);
  bbvfl_sender *s = bbvfl_sender_new(r, dev, 0, &err);
  devnet_check(s ? 0 : -1, &err);
  return s;
}

/* Asserts, straight at the node (no proxy), that addr holds `want` wei. */
static void assert_node_balance(const uint8_t addr[20], uint64_t want) {
  bbvfl_err err = {0};
  bbvfl_rpc *d = bbvfl_rpc_new(node_url, NULL, &err);
  devnet_check(d ? 0 : -1, &err);
  bbvfl_u256 bal, w = bbvfl_u256_from_u64(want);
  int rc = bbvfl_rpc_balance(d, addr, &bal, &err);
  bbvfl_rpc_free(d);
  devnet_check(rc, &err);
  assert_memory_equal(&bal, &w, sizeof bal);
}

/* ------------------------------------------------------------------ the proxy process */

typedef struct {
  pid_t pid;
  char url[64];
  char log[300];
} proxy;

/* Starts faultproxy.py with the extra arguments of ap (NULL-terminated); waits for its port. */
static void proxy_startv(proxy *p, va_list ap) {
  static int seq;
  const char *src = getenv("BBVFL_SOURCE_DIR");
  assert_non_null(src);
  char script[512], portf[300];
  snprintf(script, sizeof script, "%s/tests/tools/faultproxy.py", src);
  snprintf(portf, sizeof portf, "%s/port-%d", tmpdir, seq);
  snprintf(p->log, sizeof p->log, "%s/log-%d.jsonl", tmpdir, seq++);
  unlink(portf);
  const char *argv[40];
  int n = 0;
  argv[n++] = "python3";
  argv[n++] = script;
  argv[n++] = "--target";
  argv[n++] = node_url;
  argv[n++] = "--port-file";
  argv[n++] = portf;
  argv[n++] = "--log";
  argv[n++] = p->log;
  for (const char *a; (a = va_arg(ap, const char *)) != NULL && n < 38;) argv[n++] = a;
  argv[n] = NULL;
  p->pid = fork();
  assert_true(p->pid >= 0);
  if (p->pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* a failed assertion never leaves a proxy behind */
    if (!freopen("/dev/null", "w", stdout)) _exit(126);
    execvp("python3", (char *const *)argv);
    _exit(127);
  }
  double t0 = bbvfl_now();
  for (;;) {
    FILE *f = fopen(portf, "r");
    int port = 0;
    if (f) {
      if (fscanf(f, "%d", &port) != 1) port = 0;
      fclose(f);
    }
    if (port > 0) {
      snprintf(p->url, sizeof p->url, "http://127.0.0.1:%d", port);
      return;
    }
    int st;
    if (waitpid(p->pid, &st, WNOHANG) == p->pid) fail_msg("faultproxy.py exited early");
    if (bbvfl_now() - t0 > 20) fail_msg("faultproxy.py did not start");
    bbvfl_sleep(0.02);
  }
}

/* proxy_startv with the arguments after p. */
static void proxy_start(proxy *p, ...) {
  va_list ap;
  va_start(ap, p);
  proxy_startv(p, ap);
  va_end(ap);
}

static void proxy_stop(proxy *p) {
  if (p->pid > 0) {
    kill(p->pid, SIGTERM);
    int st;
    double t0 = bbvfl_now();
    while (waitpid(p->pid, &st, WNOHANG) == 0) {
      if (bbvfl_now() - t0 > 5) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &st, 0);
        break;
      }
      bbvfl_sleep(0.02);
    }
  }
  p->pid = 0;
}

/* Number of logged requests whose action (and, if given, method) match. */
static int proxy_count(const proxy *p, const char *method, const char *action) {
  FILE *f = fopen(p->log, "r");
  if (!f) return 0;
  char line[65536];
  int n = 0;
  char want_a[64], want_m[96];
  snprintf(want_a, sizeof want_a, "\"action\": \"%s\"", action ? action : "");
  snprintf(want_m, sizeof want_m, "\"method\": \"%s\"", method ? method : "");
  while (fgets(line, sizeof line, f))
    if ((!action || strstr(line, want_a)) && (!method || strstr(line, want_m))) n++;
  fclose(f);
  return n;
}

static bbvfl_rpc *rpc_via(const proxy *p, double timeout_s, int retries) {
  bbvfl_err err = {0};
  bbvfl_rpc_opts o = {.timeout_s = timeout_s, .retries = retries};
  bbvfl_rpc *r = bbvfl_rpc_new(p->url, &o, &err);
  devnet_check(r ? 0 : -1, &err);
  return r;
}

/* The dev account sending to a fresh key through a proxy: the proxy, its client, the keys, the
 * sender. */
typedef struct {
  proxy p;
  bbvfl_rpc *r;
  bbvfl_key dev, me;
  bbvfl_sender *s;
} sending;

/* Starts x->p with the arguments after drop_check (NULL-terminated) and the dev account's sender
 * through it (a client with timeout_s and retries; bbvfl_sender_set_drop_check drop_check). */
static void sending_open(sending *x, double timeout_s, int retries, double drop_check, ...) {
  va_list ap;
  va_start(ap, drop_check);
  proxy_startv(&x->p, ap);
  va_end(ap);
  x->r = rpc_via(&x->p, timeout_s, retries);
  x->s = dev_sender(x->r, &x->dev, &x->me);
  bbvfl_sender_set_drop_check(x->s, drop_check);
}

/* Frees the sender and the client and stops the proxy; x->p keeps its log and the keys stay (the
 * caller wipes them once it no longer needs their addresses). */
static void sending_close(sending *x) {
  bbvfl_sender_free(x->s);
  bbvfl_rpc_free(x->r);
  proxy_stop(&x->p);
}

/* One call through a proxy: its outcome, its error and how long it took. */
typedef struct {
  int rc;
  bbvfl_err err;
  double dt;
  uint64_t value;
} call_out;

/* Starts *p with the arguments after out (NULL-terminated), asks it once through a client with
 * timeout_s and retries for eth_blockNumber (block) or eth_chainId, timed, then stops the client
 * and the proxy (*p keeps its log for proxy_count). */
static void call_via(proxy *p, double timeout_s, int retries, int block, call_out *out, ...) {
  va_list ap;
  va_start(ap, out);
  proxy_startv(p, ap);
  va_end(ap);
  bbvfl_rpc *r = rpc_via(p, timeout_s, retries);
  memset(out, 0, sizeof *out);
  double t0 = bbvfl_now();
  out->rc = block ? bbvfl_rpc_block_number(r, &out->value, &out->err) : bbvfl_rpc_chain_id(r, &out->value, &out->err);
  out->dt = bbvfl_now() - t0;
  bbvfl_rpc_free(r);
  proxy_stop(p);
}

/* ------------------------------------------------------------------ broken answers */

/* A broken answer is reported at once as malformed (BBVFL_E_PARSE), not re-asked. */
static void broken_answer(const char *mode, const char *extra, const char *extra_val,
                          double max_s) {
  proxy p;
  call_out c;
  call_via(&p, 20, 3, 0, &c, "--mode", mode, extra, extra_val, (const char *)NULL);
  print_message("%s: %.2f s: %s\n", mode, c.dt, c.err.msg);
  assert_int_equal(c.rc, -1);
  assert_int_equal(c.err.code, BBVFL_E_PARSE);
  assert_non_null(strstr(c.err.msg, "eth_chainId"));
  assert_true(c.dt < max_s);
  assert_int_equal(proxy_count(&p, "eth_chainId", NULL), 1); /* asked once */
}

static void test_garbage_body(void **state) {
  (void)state;
  broken_answer("garbage", NULL, NULL, 5);
}

static void test_truncated_json(void **state) {
  (void)state;
  broken_answer("truncate", NULL, NULL, 5);
}

static void test_enormous_answer(void **state) {
  (void)state;
  /* 100 MB announced and streamed; the client stops at its 64 MiB cap */
  broken_answer("huge", "--size", "100000000", 30);
  bbvfl_err err = {0};
  proxy p;
  proxy_start(&p, "--mode", "huge", "--size", "100000000", (const char *)NULL);
  bbvfl_rpc_opts o = {.timeout_s = 20, .retries = 3, .max_response = 1 << 20};
  bbvfl_rpc *r = bbvfl_rpc_new(p.url, &o, &err);
  uint64_t id;
  int rc = bbvfl_rpc_chain_id(r, &id, &err);
  bbvfl_rpc_free(r);
  proxy_stop(&p);
  assert_int_equal(rc, -1);
  assert_int_equal(err.code, BBVFL_E_PARSE);
  assert_non_null(strstr(err.msg, "larger than the 1048576-byte limit"));
}

/* ------------------------------------------------------------------ transport faults */

/* The first `count` requests fail in transport; with enough retries the call succeeds. */
static void transient_then_ok(const char *mode, const char *count, int expect_requests) {
  proxy p;
  call_out c;
  call_via(&p, 1, 3, 0, &c, "--mode", mode, "--count", count, "--delay", "3", (const char *)NULL);
  devnet_check(c.rc, &c.err);
  assert_int_equal(c.value, strtoull(getenv("BBVFL_CHAIN_ID") ? getenv("BBVFL_CHAIN_ID") : "31337", NULL, 10));
  assert_int_equal(proxy_count(&p, "eth_chainId", NULL), expect_requests);
  assert_int_equal(proxy_count(&p, "eth_chainId", mode), atoi(count));
}

static void test_reset_is_retried(void **state) {
  (void)state;
  transient_then_ok("reset", "2", 3);
}

static void test_http_5xx_is_retried(void **state) {
  (void)state;
  transient_then_ok("status", "2", 3);
}

static void test_cut_connection_is_retried(void **state) {
  (void)state;
  transient_then_ok("cut", "1", 2);
}

static void test_slow_node_is_retried(void **state) {
  (void)state;
  transient_then_ok("delay", "1", 2); /* 3 s delay against a 1 s timeout */
}

/* A node that never answers in time: a clear timeout error, bounded by (retries + 1) x timeout
 * plus the backoff, never a hang. */
static void test_slow_node_gives_up(void **state) {
  (void)state;
  proxy p;
  call_out c;
  call_via(&p, 0.5, 2, 1, &c, "--mode", "hang", "--delay", "30", (const char *)NULL);
  print_message("hang: %.2f s: %s\n", c.dt, c.err.msg);
  assert_int_equal(c.rc, -1);
  assert_int_equal(c.err.code, BBVFL_E_RPC);
  assert_non_null(strstr(c.err.msg, "after 3 attempts"));
  assert_non_null(strstr(c.err.msg, "imed out")); /* curl: "Operation timed out ..." */
  assert_true(c.dt >= 1.5 && c.dt < 10);
}

/* HTTP 5xx that persists: a clear error naming the status after the retries. */
static void test_http_5xx_persistent(void **state) {
  (void)state;
  proxy p;
  call_out c;
  call_via(&p, 2, 2, 0, &c, "--mode", "status", "--status", "502", (const char *)NULL);
  assert_int_equal(c.rc, -1);
  assert_int_equal(c.err.code, BBVFL_E_RPC);
  assert_non_null(strstr(c.err.msg, "HTTP 502"));
  assert_int_equal(proxy_count(&p, "eth_chainId", "status"), 3);
}

/* ------------------------------------------------------------------ hosted nodes' manners */

/* eth_chainId through a fresh proxy started with the arguments after out, by a client whose
 * back-off for 429/503 is bounded by rate_wait_s; timed. */
static void limited_call(proxy *p, double rate_wait_s, call_out *out, ...) {
  va_list ap;
  va_start(ap, out);
  proxy_startv(p, ap);
  va_end(ap);
  bbvfl_err err = {0};
  bbvfl_rpc_opts o = {.timeout_s = 5, .retries = 2, .rate_wait_s = rate_wait_s};
  bbvfl_rpc *r = bbvfl_rpc_new(p->url, &o, &err);
  devnet_check(r ? 0 : -1, &err);
  memset(out, 0, sizeof *out);
  double t0 = bbvfl_now();
  out->rc = bbvfl_rpc_chain_id(r, &out->value, &out->err);
  out->dt = bbvfl_now() - t0;
  bbvfl_rpc_free(r);
  proxy_stop(p);
}

/* HTTP 429 with Retry-After: the client waits what the node asks (seconds, or an HTTP date), then
 * succeeds; without it, a short back-off; persistent, a clear error naming endpoint and status
 * once the bounded wait is over. */
static void test_rate_limit_retry_after(void **state) {
  (void)state;
  proxy p;
  call_out c;
  limited_call(&p, 30, &c, "--mode", "ratelimit_ra", "--count", "1", "--retry-after", "2", (const char *)NULL);
  devnet_check(c.rc, &c.err);
  print_message("Retry-After 2: %.2f s\n", c.dt);
  assert_true(c.dt >= 1.9 && c.dt < 6);
  assert_int_equal(proxy_count(&p, "eth_chainId", NULL), 2);
  limited_call(&p, 30, &c, "--mode", "ratelimit_ra", "--count", "1", "--retry-after", "3", "--retry-after-date",
               (const char *)NULL);
  devnet_check(c.rc, &c.err);
  print_message("Retry-After as an HTTP date 3 s ahead: %.2f s\n", c.dt);
  assert_true(c.dt >= 1.0 && c.dt < 7); /* the date has whole seconds */
  limited_call(&p, 30, &c, "--mode", "ratelimit", "--count", "2", (const char *)NULL);
  devnet_check(c.rc, &c.err);
  print_message("429 twice, no Retry-After: %.2f s\n", c.dt);
  assert_true(c.dt >= 0.3 && c.dt < 1.6); /* 0.25 s then 0.5 s, each with jitter in [50 %, 100 %] */
  assert_int_equal(proxy_count(&p, "eth_chainId", NULL), 3);
  limited_call(&p, 2, &c, "--mode", "status", "--status", "503", (const char *)NULL);
  print_message("503 for ever: %.2f s: %s\n", c.dt, c.err.msg);
  assert_int_equal(c.rc, -1);
  assert_int_equal(c.err.code, BBVFL_E_RPC);
  assert_non_null(strstr(c.err.msg, "HTTP 503"));
  assert_non_null(strstr(c.err.msg, p.url));
  assert_true(c.dt < 4);
  assert_true(proxy_count(&p, "eth_chainId", "status") >= 3);
  /* Retry-After beyond the bound: refused at once, saying so */
  limited_call(&p, 2, &c, "--mode", "ratelimit_ra", "--retry-after", "30", (const char *)NULL);
  assert_int_equal(c.rc, -1);
  assert_non_null(strstr(c.err.msg, "HTTP 429"));
  assert_non_null(strstr(c.err.msg, "Retry-After"));
  assert_true(c.dt < 2);
}

/* Several endpoints: the first refuses connections (or answers 503 past the bound); the request
 * moves to the next one and stays there. A bad URL in the list is named. */
static void test_endpoint_failover(void **state) {
  (void)state;
  bbvfl_err err = {0};
  char list[300];
  snprintf(list, sizeof list, "http://127.0.0.1:1, %s", node_url);
  bbvfl_rpc_opts o = {.timeout_s = 5, .retries = 2};
  bbvfl_rpc *r = bbvfl_rpc_new(list, &o, &err);
  devnet_check(r ? 0 : -1, &err);
  assert_int_equal(bbvfl_rpc_endpoints(r), 2);
  uint64_t id, bn;
  devnet_check(bbvfl_rpc_chain_id(r, &id, &err), &err);
  devnet_check(bbvfl_rpc_block_number(r, &bn, &err), &err);
  assert_int_equal(bbvfl_rpc_failovers(r), 1); /* once, then it stays */
  assert_string_equal(bbvfl_rpc_url(r), node_url);
  assert_true(bbvfl_rpc_outages(r) >= 1);      /* the sender re-checks its transactions */
  bbvfl_rpc_free(r);

  proxy p;
  proxy_start(&p, "--mode", "status", "--status", "503", (const char *)NULL);
  snprintf(list, sizeof list, "%s,%s", p.url, node_url);
  o.rate_wait_s = 1;
  r = bbvfl_rpc_new(list, &o, &err);
  devnet_check(r ? 0 : -1, &err);
  devnet_check(bbvfl_rpc_chain_id(r, &id, &err), &err);
  assert_int_equal(bbvfl_rpc_failovers(r), 1);
  bbvfl_rpc_free(r);
  proxy_stop(&p);

  /* every endpoint down: the error names the last one tried */
  r = bbvfl_rpc_new("http://127.0.0.1:1,http://127.0.0.1:2", &o, &err);
  devnet_check(r ? 0 : -1, &err);
  assert_int_equal(bbvfl_rpc_chain_id(r, &id, &err), -1);
  assert_non_null(strstr(err.msg, "127.0.0.1:2"));
  bbvfl_rpc_free(r);
  assert_null(bbvfl_rpc_new("http://127.0.0.1:1,ws://x", &o, &err));
  assert_non_null(strstr(err.msg, "endpoint 2 of 2"));
}

/* Creation transactions whose init code is LOG0 (60006000a0: one log, no topic, no data), with
 * empty blocks mined between them: `n` logs spread over about n * gap blocks. */
static void spread_logs(int n, unsigned gap) {
  bbvfl_err err = {0};
  bbvfl_rpc *d = bbvfl_rpc_new(node_url, NULL, &err);
  devnet_check(d ? 0 : -1, &err);
  bbvfl_key dev, me;
  bbvfl_sender *s = dev_sender(d, &dev, &me);
  uint8_t code[] = {0x60, 0x00, 0x60, 0x00, 0xa0};
  for (int i = 0; i < n; i++) {
    bbvfl_receipt rc;
    int st = bbvfl_sender_transact(s, NULL, NULL, code, sizeof code, 100000, 30, &rc, &err);
    bbvfl_receipt_clear(&rc);
    devnet_check(st, &err);
    json_t *res = NULL;
    devnet_check(bbvfl_rpc_call(d, "anvil_mine", json_pack("[o]", bbvfl_json_quantity(gap)), &res, &err), &err);
    json_decref(res);
  }
  bbvfl_sender_free(s);
  bbvfl_rpc_free(d);
  bbvfl_key_wipe(&me);
  bbvfl_key_wipe(&dev);
}

/* eth_getLogs through a node capping the range at 500 blocks and the answer at 2 logs: the query is
 * halved until the node takes it, and the merged answer is exactly the node's own, in order. */
static void test_get_logs_paged(void **state) {
  (void)state;
  spread_logs(24, 150);
  bbvfl_err err = {0};
  bbvfl_rpc *d = bbvfl_rpc_new(node_url, NULL, &err);
  devnet_check(d ? 0 : -1, &err);
  bbvfl_log_filter f;
  bbvfl_log_filter_init(&f, 0, BBVFL_BLOCK_LATEST);
  json_t *want = NULL, *got = NULL;
  uint64_t head;
  devnet_check(bbvfl_rpc_block_number(d, &head, &err), &err);
  f.to_block = head;
  devnet_check(bbvfl_rpc_get_logs(d, &f, &want, &err), &err);
  bbvfl_rpc_free(d);
  assert_true(json_array_size(want) >= 24);
  proxy p;
  proxy_start(&p, "--logs-max-range", "500", "--logs-max-results", "2", (const char *)NULL);
  bbvfl_rpc *r = rpc_via(&p, 10, 2);
  int rc = bbvfl_rpc_get_logs(r, &f, &got, &err);
  if (rc < 0) {
    bbvfl_rpc_free(r);
    proxy_stop(&p);
  }
  devnet_check(rc, &err);
  char *a = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS), *b = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(a, b);
  free(a);
  free(b);
  json_decref(got);
  uint64_t span = bbvfl_rpc_log_span(r);
  print_message("%zu logs over %llu blocks; span found %llu; %d range and %d result refusals\n", json_array_size(want),
                (unsigned long long)head, (unsigned long long)span, proxy_count(&p, NULL, "logs_range"),
                proxy_count(&p, NULL, "logs_results"));
  assert_true(span > 0 && span <= 500);
  assert_true(proxy_count(&p, NULL, "logs_range") > 0);
  assert_true(proxy_count(&p, NULL, "logs_results") > 0);
  /* "latest" as the end, and a second query: the span found is used from the start */
  int before = proxy_count(&p, NULL, "logs_range");
  f.to_block = BBVFL_BLOCK_LATEST;
  devnet_check(bbvfl_rpc_get_logs(r, &f, &got, &err), &err);
  assert_true(json_array_size(got) >= json_array_size(want));
  json_decref(got);
  assert_int_equal(proxy_count(&p, NULL, "logs_range"), before);
  bbvfl_rpc_free(r);
  proxy_stop(&p);
  /* --max-log-range: paged from the start, never refused */
  proxy_start(&p, "--logs-max-range", "500", (const char *)NULL);
  bbvfl_rpc_opts o = {.timeout_s = 10, .retries = 2, .max_log_range = 300};
  r = bbvfl_rpc_new(p.url, &o, &err);
  f.to_block = head;
  devnet_check(bbvfl_rpc_get_logs(r, &f, &got, &err), &err);
  assert_int_equal(json_array_size(got), json_array_size(want));
  json_decref(got);
  json_decref(want);
  bbvfl_rpc_free(r);
  proxy_stop(&p);
  assert_int_equal(proxy_count(&p, NULL, "logs_range"), 0);
  assert_int_equal(proxy_count(&p, "eth_getLogs", NULL), (int)((head + 1 + 299) / 300));
}

/* A refusal that persists down to one block is returned (HTTP 413 here, no JSON): 4 blocks, then
 * 2, then 1, then the error. A transport failure is not a refusal: never halved. A start past the
 * head of a node that lags, up to "latest", is no log yet. */
static void test_get_logs_refused_to_one_block(void **state) {
  (void)state;
  proxy p;
  proxy_start(&p, "--mode", "status", "--status", "413", "--methods", "eth_getLogs", (const char *)NULL);
  bbvfl_rpc *r = rpc_via(&p, 5, 1);
  bbvfl_log_filter f;
  bbvfl_log_filter_init(&f, 1, 4);
  json_t *got = NULL;
  bbvfl_err err = {0};
  int rc = bbvfl_rpc_get_logs(r, &f, &got, &err);
  bbvfl_rpc_free(r);
  proxy_stop(&p);
  json_decref(got);
  assert_int_equal(rc, -1);
  print_message("%s\n", err.msg);
  assert_non_null(strstr(err.msg, "HTTP 413"));
  assert_non_null(strstr(err.msg, "blocks 1..1"));
  assert_int_equal(proxy_count(&p, "eth_getLogs", NULL), 3);
  proxy_start(&p, "--mode", "reset", "--methods", "eth_getLogs", (const char *)NULL);
  r = rpc_via(&p, 5, 1);
  assert_int_equal(bbvfl_rpc_get_logs(r, &f, &got, &err), -1);
  bbvfl_rpc_free(r);
  proxy_stop(&p);
  assert_int_equal(proxy_count(&p, "eth_getLogs", NULL), 2); /* one request and its one retry */
  /* a node behind this client's cursor (load-balanced nodes, a block or two apart) refuses a start
     past its head (anvil: -32602): up to "latest" that is no log yet, not an error */
  bbvfl_rpc *d = bbvfl_rpc_new(node_url, NULL, &err);
  uint64_t head;
  devnet_check(bbvfl_rpc_block_number(d, &head, &err), &err);
  bbvfl_log_filter_init(&f, head + 2, BBVFL_BLOCK_LATEST);
  devnet_check(bbvfl_rpc_get_logs(d, &f, &got, &err), &err);
  assert_int_equal(json_array_size(got), 0);
  json_decref(got);
  bbvfl_rpc_free(d);
}

/* Random faults of every retried kind on 30 % of the requests: a run of transfers through the
 * sender still completes, every transfer mined once with consecutive nonces. */
static void random_faults(const char *mode) {
  sending x;
  sending_open(&x, 1, 8, 0.5, "--mode", mode, "--prob", "0.3", "--seed", "7", "--delay", "2", (const char *)NULL);
  bbvfl_err err = {0};
  uint64_t n0;
  bbvfl_sender_resync(x.s);
  devnet_check(bbvfl_sender_next_nonce(x.s, &n0, &err), &err);
  for (int i = 0; i < 6; i++) {
    bbvfl_receipt rc;
    bbvfl_u256 v = bbvfl_u256_from_u64(1000 + (uint64_t)i);
    int st = bbvfl_sender_transact(x.s, x.me.addr, &v, NULL, 0, 21000, 30, &rc, &err);
    bbvfl_receipt_clear(&rc);
    devnet_check(st, &err);
  }
  sending_close(&x);
  int faults = proxy_count(&x.p, NULL, mode);
  /* straight to the node: the recipient got exactly the six transfers */
  assert_node_balance(x.me.addr, 1000 + 1001 + 1002 + 1003 + 1004 + 1005);
  bbvfl_rpc *d = bbvfl_rpc_new(node_url, NULL, &err);
  uint64_t n1;
  devnet_check(bbvfl_rpc_nonce(d, x.dev.addr, "latest", &n1, &err), &err);
  bbvfl_rpc_free(d);
  assert_true(n1 - n0 == 6);
  print_message("%s: %d faults injected\n", mode, faults);
  assert_true(faults > 0);
  bbvfl_key_wipe(&x.me);
  bbvfl_key_wipe(&x.dev);
}

static void test_random_resets(void **state) {
  (void)state;
  random_faults("reset");
}

static void test_random_5xx(void **state) {
  (void)state;
  random_faults("status");
}

/* ------------------------------------------------------------------ dropped transaction */

static void test_swallowed_tx_is_resent_same_nonce(void **state) {
  (void)state;
  sending x;
  sending_open(&x, 10, 3, 0.3, "--mode", "swallow", "--count", "1", (const char *)NULL);
  bbvfl_err err = {0};
  uint64_t before;
  devnet_check(bbvfl_sender_next_nonce(x.s, &before, &err), &err);
  bbvfl_u256 v = bbvfl_u256_from_u64(777);
  bbvfl_receipt rc;
  int st = bbvfl_sender_transact(x.s, x.me.addr, &v, NULL, 0, 21000, 30, &rc, &err);
  devnet_check(st, &err);
  assert_int_equal(rc.status, 1);
  json_t *tx = NULL;
  assert_int_equal(bbvfl_rpc_get_tx(x.r, rc.hash, &tx, &err), 1);
  uint64_t nonce;
  devnet_check(bbvfl_rpc_parse_u64(json_object_get(tx, "nonce"), &nonce, &err), &err);
  assert_int_equal(nonce, before);
  json_decref(tx);
  bbvfl_receipt_clear(&rc);
  sending_close(&x);
  /* the proxy saw the same raw bytes twice: swallowed once, then forwarded */
  assert_int_equal(proxy_count(&x.p, "eth_sendRawTransaction", "swallow"), 1);
  assert_int_equal(proxy_count(&x.p, "eth_sendRawTransaction", "pass"), 1);
  FILE *f = fopen(x.p.log, "r");
  char line[8192], raw[2][4096];
  int k = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, "eth_sendRawTransaction") && k < 2) {
      char *a = strstr(line, "\"params\": [\"");
      assert_non_null(a);
      snprintf(raw[k++], sizeof raw[0], "%s", a);
    }
  if (f) fclose(f);
  assert_int_equal(k, 2);
  assert_string_equal(raw[0], raw[1]);
  /* exactly one transfer arrived */
  assert_node_balance(x.me.addr, 777);
  bbvfl_key_wipe(&x.me);
  bbvfl_key_wipe(&x.dev);
}

/* ------------------------------------------------------------------ replayed transactions */

/* tx signed by dev and sent through r is refused with want in the message (printed after what). */
static void send_refused(bbvfl_rpc *r, const bbvfl_tx *tx, const bbvfl_key *dev, const char *what, const char *want) {
  bbvfl_err err = {0};
  uint8_t *raw = NULL, hash[32], h2[32];
  size_t raw_len = 0;
  devnet_check(bbvfl_tx_sign(tx, dev, &raw, &raw_len, hash, &err), &err);
  int st = bbvfl_rpc_send_raw(r, raw, raw_len, h2, &err);
  print_message("%s: %s\n", what, err.msg);
  assert_int_equal(st, -1);
  assert_non_null(strstr(err.msg, want));
  free(raw);
}

static void test_replayed_tx_refused(void **state) {
  (void)state;
  bbvfl_err err = {0};
  bbvfl_rpc *r = bbvfl_rpc_new(node_url, NULL, &err);
  devnet_check(r ? 0 : -1, &err);
  bbvfl_key dev, me;
  devnet_check(bbvfl_key_from_hex(BBVFL_ANVIL_DEV_KEY0, &dev, &err), &err);
  devnet_check(bbvfl_key_generate(&me, &err), &err);
  uint64_t chain, nonce;
  devnet_check(bbvfl_rpc_chain_id(r, &chain, &err), &err);
  devnet_check(bbvfl_rpc_nonce(r, dev.addr, "pending", &nonce, &err), &err);
  bbvfl_u256 fee;
  devnet_check(bbvfl_rpc_gas_price(r, &fee, &err), &err);
  bbvfl_tx tx;
  memset(&tx, 0, sizeof tx);
  tx.type = BBVFL_TX_EIP1559;
  tx.chain_id = chain;
  tx.nonce = nonce;
  tx.max_priority_fee = bbvfl_u256_from_u64(1);
  bbvfl_u256_add(&tx.max_fee, &fee, &fee);
  tx.gas_limit = 21000;
  tx.has_to = 1;
  memcpy(tx.to, me.addr, 20);
  tx.value = bbvfl_u256_from_u64(5);
  uint8_t *raw = NULL, hash[32], h2[32];
  size_t raw_len = 0;
  devnet_check(bbvfl_tx_sign(&tx, &dev, &raw, &raw_len, hash, &err), &err);
  bbvfl_receipt rc;
  devnet_check(bbvfl_rpc_send_raw(r, raw, raw_len, h2, &err), &err);
  devnet_check(bbvfl_rpc_wait_receipt(r, hash, 30, &rc, &err), &err);
  assert_int_equal(rc.status, 1);
  bbvfl_receipt_clear(&rc);

  /* The same signed bytes again, straight through eth_sendRawTransaction: the node refuses
   * ("nonce too low"); the transfer happens once. */
  json_t *res = NULL;
  int st = bbvfl_rpc_call(r, "eth_sendRawTransaction", json_pack("[o]", bbvfl_json_hex(raw, raw_len)),
                          &res, &err);
  print_message("replay: %s\n", err.msg);
  assert_int_equal(st, -1);
  json_decref(res);
  assert_int_equal(err.code, BBVFL_E_RPC);
  assert_non_null(strstr(err.msg, "nonce"));
  /* bbvfl's own send treats it as the already-mined transaction it is (no second transfer) */
  devnet_check(bbvfl_rpc_send_raw(r, raw, raw_len, h2, &err), &err);
  assert_memory_equal(h2, hash, 32);
  free(raw);

  /* A different transaction with the used nonce: refused, "nonce too low". */
  tx.value = bbvfl_u256_from_u64(6);
  send_refused(r, &tx, &dev, "old nonce", "nonce too low");

  /* The same transfer signed for another chain: refused (EIP-155 replay protection). */
  tx.chain_id = chain + 1;
  tx.nonce = nonce + 1;
  send_refused(r, &tx, &dev, "other chain", "chain");

  assert_node_balance(me.addr, 5);
  uint64_t after;
  devnet_check(bbvfl_rpc_nonce(r, dev.addr, "pending", &after, &err), &err);
  assert_int_equal(after, nonce + 1);
  bbvfl_rpc_free(r);
  bbvfl_key_wipe(&me);
  bbvfl_key_wipe(&dev);
}

static int setup(void **state) {
  (void)state;
  node_url = getenv("BBVFL_RPC_URL");
  if (!node_url) {
    fprintf(stderr, "BBVFL_RPC_URL is not set: run under tests/with-devnet.sh\n");
    return -1;
  }
  snprintf(tmpdir, sizeof tmpdir, "/tmp/bbvfl-faultproxy-XXXXXX");
  if (!mkdtemp(tmpdir)) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_garbage_body),
      cmocka_unit_test(test_truncated_json),
      cmocka_unit_test(test_enormous_answer),
      cmocka_unit_test(test_reset_is_retried),
      cmocka_unit_test(test_http_5xx_is_retried),
      cmocka_unit_test(test_cut_connection_is_retried),
      cmocka_unit_test(test_slow_node_is_retried),
      cmocka_unit_test(test_slow_node_gives_up),
      cmocka_unit_test(test_http_5xx_persistent),
      cmocka_unit_test(test_rate_limit_retry_after),
      cmocka_unit_test(test_endpoint_failover),
      cmocka_unit_test(test_get_logs_paged),
      cmocka_unit_test(test_get_logs_refused_to_one_block),
      cmocka_unit_test(test_random_resets),
      cmocka_unit_test(test_random_5xx),
      cmocka_unit_test(test_swallowed_tx_is_resent_same_nonce),
      cmocka_unit_test(test_replayed_tx_refused),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
