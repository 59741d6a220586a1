/* JSON-RPC client: one reused libcurl handle, jansson for the JSON; the transport and batches.
 * See rpc.h; the answers are read in rpc_errors.c, the typed calls are in rpc_calls.c. */
#include "eth/rpc.h"

#include <curl/curl.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bbvfl_errors.h" /* generated from abi/: the contracts' custom errors */
#include "common/fsutil.h"
#include "eth/abi.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/rpc_int.h"

#define DEFAULT_TIMEOUT_S 30.0
#define DEFAULT_RETRIES 3
#define DEFAULT_MAX_RESPONSE ((size_t)64 << 20)
#define BACKOFF_FIRST_S 0.05
#define DEFAULT_RATE_WAIT_S 60.0
#define RATE_FIRST_S 0.25 /* back-off after a 429/503 without Retry-After: 0.25 s doubling, */
#define RATE_MAX_S 8.0    /* up to 8 s, each with jitter in [50 %, 100 %] */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;
static void curl_global(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *ud) {
  bbvfl_rpc *r = ud;
  size_t n = size * nmemb;
  if (r->len + n > r->max_response) {
    r->overflow = 1;
    return 0; /* makes curl fail with CURLE_WRITE_ERROR */
  }
  if (r->len + n + 1 > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + n + 1) cap *= 2;
    char *b = realloc(r->buf, cap);
    if (!b) {
      r->overflow = 2;
      return 0;
    }
    r->buf = b;
    r->cap = cap;
  }
  memcpy(r->buf + r->len, ptr, n);
  r->len += n;
  r->buf[r->len] = 0;
  return n;
}

static int is_http_url(const char *url) {
  return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

/* 1 when libcurl's URL parser accepts url and finds a host in it ("http://" alone has none). */
static int url_has_host(const char *url) {
  CURLU *h = curl_url();
  if (!h) return 1; /* out of memory: let the transfer report it */
  char *host = NULL;
  int ok = curl_url_set(h, CURLUPART_URL, url, 0) == CURLUE_OK &&
           curl_url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK && host && *host;
  curl_free(host);
  curl_url_cleanup(h);
  return ok;
}

/* Checks one endpoint's URL (err names it). */
static int check_url(const char *url, bbvfl_err *err) {
  if (!*url) return bbvfl_fail(err, BBVFL_E_ARG, "no JSON-RPC URL given (use --rpc http://127.0.0.1:PORT)");
  if (!is_http_url(url))
    return bbvfl_fail(err, BBVFL_E_ARG, "'%.200s' is not a JSON-RPC URL: only http:// and https:// are supported",
                      url);
  if (curl_init_rc == CURLE_OK && !url_has_host(url))
    return bbvfl_fail(err, BBVFL_E_ARG, "'%.200s' is not a JSON-RPC URL: no host in it (expected http://HOST:PORT)",
                      url);
  return 0;
}

/* Splits a comma-separated list of endpoints (white space around each trimmed) into r->urls. */
static int split_urls(bbvfl_rpc *r, const char *list, bbvfl_err *err) {
  size_t n = 1;
  for (const char *p = list; *p; p++) n += *p == ',';
  r->urls = calloc(n, sizeof *r->urls);
  if (!r->urls) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory creating the JSON-RPC client");
  const char *p = list;
  for (size_t i = 0; i < n; i++) {
    const char *e = strchr(p, ',');
    if (!e) e = p + strlen(p);
    const char *a = p, *b = e;
    while (a < b && isspace((unsigned char)*a)) a++;
    while (b > a && isspace((unsigned char)b[-1])) b--;
    r->urls[i] = strndup(a, (size_t)(b - a));
    if (!r->urls[i]) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory creating the JSON-RPC client");
    r->nurls = i + 1;
    if (check_url(r->urls[i], err) < 0) {
      if (n > 1) bbvfl_wrap(err, "endpoint %zu of %zu in the --rpc list", i + 1, n);
      return -1;
    }
    p = *e ? e + 1 : e;
  }
  return 0;
}

bbvfl_rpc *bbvfl_rpc_new(const char *url, const bbvfl_rpc_opts *opts, bbvfl_err *err) {
  if (!url || !*url) {
    bbvfl_fail(err, BBVFL_E_ARG, "no JSON-RPC URL given (use --rpc http://127.0.0.1:PORT)");
    return NULL;
  }
  pthread_once(&curl_once, curl_global);
  if (curl_init_rc != CURLE_OK) {
    bbvfl_fail(err, BBVFL_E_INTERNAL, "libcurl initialisation failed: %s",
               curl_easy_strerror(curl_init_rc));
    return NULL;
  }
  bbvfl_rpc *r = calloc(1, sizeof *r);
  if (!r) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory creating the JSON-RPC client");
    return NULL;
  }
  if (split_urls(r, url, err) < 0) {
    bbvfl_rpc_free(r);
    return NULL;
  }
  r->url = r->urls[0];
  r->timeout_s = opts && opts->timeout_s > 0 ? opts->timeout_s : DEFAULT_TIMEOUT_S;
  r->retries = opts && opts->retries != 0 ? (opts->retries < 0 ? 0 : opts->retries) : DEFAULT_RETRIES;
  r->max_response = opts && opts->max_response ? opts->max_response : DEFAULT_MAX_RESPONSE;
  r->rate_wait_s = opts && opts->rate_wait_s > 0 ? opts->rate_wait_s : DEFAULT_RATE_WAIT_S;
  r->max_log_range = opts ? opts->max_log_range : 0;
  r->jitter = (uint64_t)(bbvfl_now() * 1e9) ^ (uint64_t)(uintptr_t)r ^ 0x9e3779b97f4a7c15ull;
  if (!r->jitter) r->jitter = 1;
  if (opts && opts->down_timeout_s > 0) {
    r->down_timeout_s = opts->down_timeout_s;
  }
  if (opts) { /* also reports fail-overs and rate limits */
    r->on_wait = opts->on_wait;
    r->on_wait_ctx = opts->on_wait_ctx;
  }
  r->next_id = 1;
  r->curl = curl_easy_init();
  r->headers = curl_slist_append(NULL, "Content-Type: application/json");
  if (r->headers) {
    struct curl_slist *h = curl_slist_append(r->headers, "Expect:");
    if (h) r->headers = h;
  }
  if (!r->url || !r->curl || !r->headers) {
    bbvfl_rpc_free(r);
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory creating the JSON-RPC client");
    return NULL;
  }
  CURL *c = r->curl;
  CURLcode cr = CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500
  cr = curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_URL, r->url);
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->curl_err);
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(r->timeout_s * 1000));
  if (cr == CURLE_OK)
    cr = curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                          (long)((r->timeout_s < 10 ? r->timeout_s : 10) * 1000));
  if (cr == CURLE_OK) cr = curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->max_response);
  if (cr != CURLE_OK) {
    bbvfl_fail(err, BBVFL_E_INTERNAL, "configuring libcurl: %s", curl_easy_strerror(cr));
    bbvfl_rpc_free(r);
    return NULL;
  }
  return r;
}

void bbvfl_rpc_free(bbvfl_rpc *r) {
  if (!r) return;
  if (r->curl) curl_easy_cleanup(r->curl);
  curl_slist_free_all(r->headers);
  for (size_t i = 0; i < r->nurls; i++) free(r->urls[i]);
  free(r->urls);
  free(r->buf);
  free(r);
}

const char *bbvfl_rpc_url(const bbvfl_rpc *r) { return r ? r->url : ""; }
size_t bbvfl_rpc_endpoints(const bbvfl_rpc *r) { return r ? r->nurls : 0; }
uint64_t bbvfl_rpc_failovers(const bbvfl_rpc *r) { return r ? r->failovers : 0; }
uint64_t bbvfl_rpc_log_span(const bbvfl_rpc *r) { return r ? r->log_span : 0; }
int bbvfl_rpc_has_sync(const bbvfl_rpc *r) { return r && !r->no_sync; }
uint64_t bbvfl_rpc_outages(const bbvfl_rpc *r) { return r ? r->outages : 0; }

/* ---------------------------------------------------------------- transport */

static int transient_curl(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return 1;
    default:
      return 0;
  }
}

/* One line about an answer that is not JSON-RPC: its size, content type and the first characters
   (white space folded, anything unprintable as '?'), so an HTML page or a binary blob never reaches
   the user whole. */
static void body_summary(bbvfl_rpc *r, char *out, size_t n) {
  const char *ct = NULL;
  if (curl_easy_getinfo(r->curl, CURLINFO_CONTENT_TYPE, &ct) != CURLE_OK) ct = NULL;
  char pre[64];
  size_t k = 0;
  int space = 0;
  for (size_t i = 0; i < r->len && k + 1 < sizeof pre; i++) {
    unsigned char ch = (unsigned char)r->buf[i];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      if (k > 0) space = 1;
      continue;
    }
    if (space && k + 2 < sizeof pre) pre[k++] = ' ';
    space = 0;
    pre[k++] = (ch >= 0x20 && ch < 0x7f && ch != '"') ? (char)ch : '?';
  }
  pre[k] = 0;
  snprintf(out, n, "%zu bytes%s%.60s, starting \"%s%s\"", r->len, ct ? " of " : "", ct ? ct : "", pre,
           r->len > k ? "..." : "");
}

/* Whether the answer body starts (after white space) like JSON. */
static int looks_like_json(const bbvfl_rpc *r) {
  for (size_t i = 0; i < r->len; i++) {
    char ch = r->buf[i];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') continue;
    return ch == '{' || ch == '[';
  }
  return 0;
}

/* A factor in [0.5, 1) for the back-off's jitter (xorshift64; spreads clients that were refused
   together, nothing secret). */
static double jitter(bbvfl_rpc *r) {
  uint64_t x = r->jitter;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  r->jitter = x;
  return 0.5 + 0.5 * (double)(x >> 11) / 9007199254740992.0;
}

/* Moves to the next endpoint of the list (the caller checked there is another one to try). */
static void fail_over(bbvfl_rpc *r, const char *why) {
  const char *from = r->url;
  r->cur = (r->cur + 1) % r->nurls;
  r->url = r->urls[r->cur];
  curl_easy_setopt(r->curl, CURLOPT_URL, r->url);
  r->failovers++;
  r->outages++; /* another node: its pool may not hold what was sent to the last one */
  if (r->on_wait) {
    char m[800];
    snprintf(m, sizeof m, "the node at %.200s failed (%.200s): switching to %.200s", from, why, r->url);
    r->on_wait(r->on_wait_ctx, m);
  }
}

/* POSTs body; on success r->buf/r->len hold the answer (HTTP 200..299 or a JSON body). */
static int post(bbvfl_rpc *r, const char *body, size_t body_len, const char *what,
                bbvfl_err *err) {
  double delay = BACKOFF_FIRST_S, down_since = 0, rate_since = 0, rate_delay = RATE_FIRST_S;
  size_t tried = 1; /* endpoints tried for this request */
  for (int attempt = 0;; attempt++) {
    r->len = 0;
    r->overflow = 0;
    r->curl_err[0] = 0;
    r->last_status = 0;
    if (r->buf) r->buf[0] = 0;
    curl_easy_setopt(r->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(r->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    double t_attempt = bbvfl_now();
    CURLcode cr = curl_easy_perform(r->curl);
    long status = 0;
    if (cr == CURLE_OK) curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &status);
    r->last_status = status;
    if (cr == CURLE_OK && status >= 200 && status < 300) {
      if (down_since > 0) r->outages++;
      if (down_since > 0 && r->on_wait) {
        char m[300];
        snprintf(m, sizeof m, "the node at %.200s answers again after %.1f s", r->url, bbvfl_now() - down_since);
        r->on_wait(r->on_wait_ctx, m);
      }
      r->ever_ok = 1;
      return 0;
    }
    if (r->overflow == 1 || cr == CURLE_FILESIZE_EXCEEDED)
      return bbvfl_fail(err, BBVFL_E_PARSE,
                        "%s: the node's answer is larger than the %zu-byte limit (raise "
                        "max_response if this is expected)",
                        what, r->max_response);
    if (r->overflow == 2)
      return bbvfl_fail(err, BBVFL_E_NOMEM, "%s: out of memory reading the node's answer", what);
    int transient, limited = 0;
    if (cr == CURLE_OK) {
      /* Some nodes answer JSON-RPC errors with HTTP 4xx/5xx and a JSON body: let the caller
       * parse it when it looks like JSON. */
      if (r->len > 0 && (r->buf[0] == '{' || r->buf[0] == '[') && status != 429 &&
          status != 502 && status != 503 && status != 504)
        return 0;
      /* overload (429) and server-side failures without a JSON-RPC answer (5xx: a crashed
       * or restarting node, a proxy in front of it) are worth another attempt */
      transient = status == 429 || (status >= 500 && status <= 599);
      limited = status == 429 || status == 503; /* rate limited or unavailable: back off */
    } else {
      transient = transient_curl(cr);
    }
    if (limited) {
      /* wait what the node asks (Retry-After: seconds or an HTTP date, libcurl reads both), else an
         exponential back-off with jitter; all of it bounded by rate_wait_s */
      double now = bbvfl_now();
      if (rate_since == 0) rate_since = t_attempt;
      curl_off_t ra = 0;
      if (curl_easy_getinfo(r->curl, CURLINFO_RETRY_AFTER, &ra) != CURLE_OK) ra = 0;
      double wait = ra > 0 ? (double)ra : rate_delay * jitter(r);
      if (ra <= 0) rate_delay = rate_delay * 2 > RATE_MAX_S ? RATE_MAX_S : rate_delay * 2;
      if (now + wait - rate_since <= r->rate_wait_s) {
        bbvfl_sleep(wait);
        attempt = -1; /* the back-off's bound, not the retry count, ends this */
        continue;
      }
      if (tried < r->nurls) {
        char why[64];
        snprintf(why, sizeof why, "HTTP %ld for %.0f s", status, now - rate_since);
        fail_over(r, why);
        tried++;
        rate_since = 0;
        rate_delay = RATE_FIRST_S;
        delay = BACKOFF_FIRST_S;
        attempt = -1;
        continue;
      }
      return bbvfl_fail(err, BBVFL_E_RPC,
                        "%s: the node at %s answered HTTP %ld (%s) for %.0f s%s; gave up after the %.0f s "
                        "back-off bound",
                        what, r->url, status, status == 429 ? "too many requests" : "service unavailable",
                        now - rate_since,
                        ra > 0 ? " and asks to wait longer (Retry-After)" : "", r->rate_wait_s);
    }
    if (transient && tried < r->nurls && attempt >= r->retries) {
      /* this endpoint failed its retries: the next one (and stay there) */
      char why[240];
      if (cr == CURLE_OK) snprintf(why, sizeof why, "HTTP %ld", status);
      else snprintf(why, sizeof why, "%.200s", r->curl_err[0] ? r->curl_err : curl_easy_strerror(cr));
      fail_over(r, why);
      tried++;
      delay = BACKOFF_FIRST_S;
      attempt = -1;
      continue;
    }
    if (transient && r->ever_ok && r->down_timeout_s > 0 && tried >= r->nurls) {
      /* the node was there before: wait for it (restart, outage) up to down_timeout_s, counted
         from the start of the first failed attempt whatever the failure (a refused connection
         fails at once, a hung node only after the whole HTTP timeout): the last attempt starts
         before the deadline, so the call gives up within down_timeout_s plus one timeout_s */
      double now = bbvfl_now();
      if (down_since == 0) {
        down_since = t_attempt;
        if (r->on_wait) {
          char m[600];
          snprintf(m, sizeof m, "the node at %.200s is unreachable (%.200s); waiting up to %.0f s for it", r->url,
                   cr == CURLE_OK ? "HTTP error" : (r->curl_err[0] ? r->curl_err : curl_easy_strerror(cr)),
                   r->down_timeout_s);
          r->on_wait(r->on_wait_ctx, m);
        }
      }
      if (now - down_since < r->down_timeout_s) {
        if (delay > 1.0) delay = 1.0;
        if (delay > r->down_timeout_s - (now - down_since)) delay = r->down_timeout_s - (now - down_since);
        bbvfl_sleep(delay);
        delay *= 2;
        if (r->nurls > 1) { /* every endpoint failed: try them in turn while waiting */
          r->cur = (r->cur + 1) % r->nurls;
          r->url = r->urls[r->cur];
          curl_easy_setopt(r->curl, CURLOPT_URL, r->url);
        }
        continue;
      }
      attempt = attempt > r->retries ? attempt : r->retries; /* waited long enough: give up now */
    }
    if (!transient || attempt >= r->retries) {
      if (down_since > 0)
        return bbvfl_fail(err, BBVFL_E_RPC,
                          "%s: the node at %s has not answered for %.0f s (node-down timeout %.0f s): %s", what,
                          r->url, bbvfl_now() - down_since, r->down_timeout_s,
                          cr == CURLE_OK ? "HTTP error" : (r->curl_err[0] ? r->curl_err : curl_easy_strerror(cr)));
      if (cr == CURLE_OK) {
        char sum[200];
        body_summary(r, sum, sizeof sum);
        return bbvfl_fail(err, BBVFL_E_RPC, "%s: the server at %s answered HTTP %ld, not JSON-RPC (%s)", what,
                          r->url, status, sum);
      }
      return bbvfl_fail(err, BBVFL_E_RPC,
                        "%s: cannot reach the node at %s: %s (after %d attempt%s; is the node "
                        "running?)",
                        what, r->url, r->curl_err[0] ? r->curl_err : curl_easy_strerror(cr),
                        attempt + 1, attempt ? "s" : "");
    }
    bbvfl_sleep(delay);
    delay *= 2;
  }
}

static json_t *make_request(bbvfl_rpc *r, const char *method, json_t *params) {
  json_t *req = json_object();
  json_t *p = params ? json_incref(params) : json_array();
  if (!req || !p || json_object_set_new(req, "jsonrpc", json_string("2.0")) ||
      json_object_set_new(req, "id", json_integer((json_int_t)r->next_id++)) ||
      json_object_set_new(req, "method", json_string(method)) ||
      json_object_set_new(req, "params", p)) {
    json_decref(req);
    return NULL;
  }
  return req;
}

int bbvfl_rpc_call(bbvfl_rpc *r, const char *method, json_t *params, json_t **result,
                   bbvfl_err *err) {
  *result = NULL;
  if (params && !json_is_array(params) && !json_is_object(params)) {
    json_decref(params);
    return bbvfl_fail(err, BBVFL_E_ARG, "%s: params must be a JSON array or object", method);
  }
  json_t *req = make_request(r, method, params);
  json_decref(params);
  if (!req) return bbvfl_fail(err, BBVFL_E_NOMEM, "%s: out of memory building the request", method);
  char *body = json_dumps(req, JSON_COMPACT);
  json_decref(req);
  if (!body) return bbvfl_fail(err, BBVFL_E_NOMEM, "%s: out of memory building the request", method);
  int rc = post(r, body, strlen(body), method, err);
  free(body);
  if (rc != 0) return -1;
  if (r->len > 0 && !looks_like_json(r)) {
    char sum[200];
    body_summary(r, sum, sizeof sum);
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s: the server at %s did not answer JSON-RPC (%s)", method, r->url, sum);
  }
  if (bbvfl_rpc_parse_response(r->buf, r->len, result, err) != 0)
    return bbvfl_wrap(err, "%s", method);
  return 0;
}

/* ---------------------------------------------------------------- batch */

int bbvfl_rpc_batch(bbvfl_rpc *r, bbvfl_rpc_req *reqs, size_t n, bbvfl_err *err) {
  json_t *arr = json_array();
  uint64_t first_id = r->next_id;
  int oom = !arr;
  for (size_t i = 0; i < n; i++) {
    reqs[i].result = NULL;
    memset(&reqs[i].err, 0, sizeof reqs[i].err);
    json_t *p = reqs[i].params;
    reqs[i].params = NULL;
    if (!oom) {
      json_t *q = make_request(r, reqs[i].method, p);
      if (!q || json_array_append_new(arr, q)) oom = 1;
    }
    json_decref(p);
  }
  if (oom) {
    json_decref(arr);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "batch: out of memory building the request");
  }
  char *body = json_dumps(arr, JSON_COMPACT);
  json_decref(arr);
  if (!body) return bbvfl_fail(err, BBVFL_E_NOMEM, "batch: out of memory building the request");
  int rc = post(r, body, strlen(body), "batch request", err);
  free(body);
  if (rc != 0) return -1;
  json_error_t je;
  json_t *resp = json_loadb(r->buf, r->len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
  if (!resp)
    return bbvfl_fail(err, BBVFL_E_PARSE, "batch: malformed JSON-RPC response (line %d column %d: %s)",
                      je.line, je.column, je.text);
  if (!json_is_array(resp)) {
    /* a single error object answers a batch the node refused as a whole */
    json_t *dummy = NULL;
    if (json_is_object(resp) && bbvfl_rpc_parse_one(resp, &dummy, err) != 0) {
      json_decref(resp);
      return bbvfl_wrap(err, "batch request");
    }
    json_decref(dummy);
    json_decref(resp);
    return bbvfl_fail(err, BBVFL_E_PARSE, "batch: the node's answer is not a JSON array");
  }
  int *seen = calloc(n ? n : 1, sizeof *seen);
  if (!seen) {
    json_decref(resp);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "batch: out of memory");
  }
  size_t idx;
  json_t *el;
  json_array_foreach(resp, idx, el) {
    json_t *id = json_object_get(el, "id");
    if (!json_is_integer(id)) continue;
    json_int_t v = json_integer_value(id);
    if (v < (json_int_t)first_id || (uint64_t)v >= first_id + n) continue;
    size_t k = (size_t)((uint64_t)v - first_id);
    if (seen[k]) continue;
    seen[k] = 1;
    if (bbvfl_rpc_parse_one(el, &reqs[k].result, &reqs[k].err) != 0) {
      if (reqs[k].err.code == BBVFL_OK) reqs[k].err.code = BBVFL_E_RPC;
      bbvfl_wrap(&reqs[k].err, "%s", reqs[k].method);
    }
  }
  json_decref(resp);
  for (size_t k = 0; k < n; k++)
    if (!seen[k])
      bbvfl_fail(&reqs[k].err, BBVFL_E_PARSE, "%s: the node's batch answer has no element for it",
                 reqs[k].method);
  free(seen);
  return 0;
}

void bbvfl_rpc_batch_clear(bbvfl_rpc_req *reqs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    json_decref(reqs[i].result);
    reqs[i].result = NULL;
    json_decref(reqs[i].params);
    reqs[i].params = NULL;
  }
}

