/* JSON-RPC client: one reused libcurl handle, jansson for the JSON. See rpc.h. */
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

#define DEFAULT_TIMEOUT_S 30.0
#define DEFAULT_RETRIES 3
#define DEFAULT_MAX_RESPONSE ((size_t)64 << 20)
#define BACKOFF_FIRST_S 0.05

struct bbvfl_rpc {
  CURL *curl;
  struct curl_slist *headers;
  char *url;
  double timeout_s;
  int retries;
  size_t max_response;
  uint64_t next_id;
  /* response buffer, reused between calls */
  char *buf;
  size_t len, cap;
  int overflow;
  int no_sync; /* the node has no eth_sendRawTransactionSync */
  int ever_ok;  /* the node answered at least once */
  uint64_t outages; /* down_timeout_s waits that ended with the node back */
  double down_timeout_s;
  void (*on_wait)(void *ctx, const char *msg);
  void *on_wait_ctx;
  char curl_err[CURL_ERROR_SIZE];
};

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

bbvfl_rpc *bbvfl_rpc_new(const char *url, const bbvfl_rpc_opts *opts, bbvfl_err *err) {
  if (!url || !*url) {
    bbvfl_fail(err, BBVFL_E_ARG, "no JSON-RPC URL given (use --rpc http://127.0.0.1:PORT)");
    return NULL;
  }
  if (!is_http_url(url)) {
    bbvfl_fail(err, BBVFL_E_ARG,
               "'%.200s' is not a JSON-RPC URL: only http:// and https:// are supported", url);
    return NULL;
  }
  pthread_once(&curl_once, curl_global);
  if (curl_init_rc == CURLE_OK && !url_has_host(url)) {
    bbvfl_fail(err, BBVFL_E_ARG,
               "'%.200s' is not a JSON-RPC URL: no host in it (expected http://HOST:PORT)", url);
    return NULL;
  }
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
  r->timeout_s = opts && opts->timeout_s > 0 ? opts->timeout_s : DEFAULT_TIMEOUT_S;
  r->retries = opts && opts->retries != 0 ? (opts->retries < 0 ? 0 : opts->retries) : DEFAULT_RETRIES;
  r->max_response = opts && opts->max_response ? opts->max_response : DEFAULT_MAX_RESPONSE;
  if (opts && opts->down_timeout_s > 0) {
    r->down_timeout_s = opts->down_timeout_s;
    r->on_wait = opts->on_wait;
    r->on_wait_ctx = opts->on_wait_ctx;
  }
  r->next_id = 1;
  r->url = strdup(url);
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
  free(r->url);
  free(r->buf);
  free(r);
}

const char *bbvfl_rpc_url(const bbvfl_rpc *r) { return r ? r->url : ""; }
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

/* POSTs body; on success r->buf/r->len hold the answer (HTTP 200..299 or a JSON body). */
static int post(bbvfl_rpc *r, const char *body, size_t body_len, const char *what,
                bbvfl_err *err) {
  double delay = BACKOFF_FIRST_S, down_since = 0;
  for (int attempt = 0;; attempt++) {
    r->len = 0;
    r->overflow = 0;
    r->curl_err[0] = 0;
    if (r->buf) r->buf[0] = 0;
    curl_easy_setopt(r->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(r->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    double t_attempt = bbvfl_now();
    CURLcode cr = curl_easy_perform(r->curl);
    long status = 0;
    if (cr == CURLE_OK) curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &status);
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
    int transient;
    if (cr == CURLE_OK) {
      /* Some nodes answer JSON-RPC errors with HTTP 4xx/5xx and a JSON body: let the caller
       * parse it when it looks like JSON. */
      if (r->len > 0 && (r->buf[0] == '{' || r->buf[0] == '[') && status != 429 &&
          status != 502 && status != 503 && status != 504)
        return 0;
      /* overload (429) and server-side failures without a JSON-RPC answer (5xx: a crashed
       * or restarting node, a proxy in front of it) are worth another attempt */
      transient = status == 429 || (status >= 500 && status <= 599);
    } else {
      transient = transient_curl(cr);
    }
    if (transient && r->ever_ok && r->down_timeout_s > 0) {
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

/* ---------------------------------------------------------------- parsing */

static const char *panic_meaning(uint64_t code) {
  switch (code) {
    case 0x00: return "generic compiler panic";
    case 0x01: return "assert failed";
    case 0x11: return "arithmetic overflow or underflow";
    case 0x12: return "division or modulo by zero";
    case 0x21: return "invalid enum value";
    case 0x22: return "bad storage byte array encoding";
    case 0x31: return "pop on an empty array";
    case 0x32: return "array index out of bounds";
    case 0x41: return "out of memory";
    case 0x51: return "call to an uninitialised function";
    default: return "unknown panic code";
  }
}

static void hex_into(const uint8_t *d, size_t len, char *out, size_t n) {
  /* bounded lower-case hex with 0x prefix, "..." when truncated */
  static const char digits[] = "0123456789abcdef";
  size_t o = 0;
  if (n < 4) {
    if (n) out[0] = 0;
    return;
  }
  out[o++] = '0';
  out[o++] = 'x';
  for (size_t i = 0; i < len; i++) {
    if (o + 2 + 4 > n) {
      memcpy(out + o, "...", 3);
      o += 3;
      break;
    }
    out[o++] = digits[d[i] >> 4];
    out[o++] = digits[d[i] & 15];
  }
  out[o] = 0;
}

/* Reads a big-endian 256-bit word as size_t; -1 when it does not fit into max. */
static int word_to_size(const uint8_t *w, size_t max, size_t *out) {
  for (int i = 0; i < 24; i++)
    if (w[i]) return -1;
  uint64_t v = 0;
  for (int i = 24; i < 32; i++) v = v << 8 | w[i];
  if (v > max) return -1;
  *out = (size_t)v;
  return 0;
}

/* Appends one decoded argument to out (at *o, capacity n), in words for people. */
static void put_arg(const bbvfl_abi_value *v, char *out, size_t n, size_t *o) {
  char buf[120];
  uint64_t u;
  int64_t i;
  switch (v->kind) {
    case BBVFL_ABI_UINT:
      if (bbvfl_abi_value_get_u64(v, &u, NULL) == 0) snprintf(buf, sizeof buf, "%" PRIu64, u);
      else hex_into(v->word, 32, buf, sizeof buf);
      break;
    case BBVFL_ABI_INT:
      if (bbvfl_abi_value_get_i64(v, &i, NULL) == 0) snprintf(buf, sizeof buf, "%" PRId64, i);
      else hex_into(v->word, 32, buf, sizeof buf);
      break;
    case BBVFL_ABI_BOOL: snprintf(buf, sizeof buf, "%s", v->word[31] ? "true" : "false"); break;
    case BBVFL_ABI_ADDRESS: hex_into(v->word + 12, 20, buf, sizeof buf); break;
    case BBVFL_ABI_FIXED_BYTES: hex_into(v->word, 32, buf, sizeof buf); break;
    case BBVFL_ABI_STRING: {
      size_t k = 0;
      buf[k++] = '"';
      for (size_t j = 0; j < v->len && k + 5 < sizeof buf; j++)
        buf[k++] = (v->bytes[j] >= 0x20 && v->bytes[j] != 0x7f) ? (char)v->bytes[j] : '?';
      if (k + 5 >= sizeof buf) { /* cut: the last three characters become "..." */
        memcpy(buf + k - 3, "...", 3);
      }
      buf[k++] = '"';
      buf[k] = 0;
      break;
    }
    case BBVFL_ABI_BYTES: hex_into(v->bytes, v->len, buf, sizeof buf); break;
    default: snprintf(buf, sizeof buf, "(...)"); break;
  }
  int w = snprintf(out + *o, n - *o, "%s", buf);
  if (w > 0) *o += (size_t)w < n - *o ? (size_t)w : n - *o - 1;
}

/* A custom error the contracts declare (bbvfl_errors.h): "Name(param=value, ...)" into out and
 * its leading integer arguments into rv (when non-NULL). Returns 0, or -1 when the selector is
 * not one of them. Arguments that do not decode are shown as their hex. */
static int describe_known_error(const uint8_t *data, size_t len, char *out, size_t n, bbvfl_revert *rv) {
  uint32_t sel = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
  const bbvfl_contract_error *ce = bbvfl_contract_error_find(sel);
  if (!ce || n < 8) return -1;
  size_t o = 0;
  int w = snprintf(out, n, "%s(", ce->name);
  o = w > 0 && (size_t)w < n ? (size_t)w : n - 1;
  bbvfl_abi_type *t = NULL;
  bbvfl_abi_value v;
  memset(&v, 0, sizeof v);
  if (bbvfl_abi_type_parse(ce->types, &t, NULL) == 0 &&
      bbvfl_abi_decode(t, data + 4, len - 4, &v, NULL) == 0) {
    const char *pn = ce->params;
    int ints = 1;
    for (size_t k = 0; k < v.n; k++) {
      size_t pl = strcspn(pn, ",");
      w = snprintf(out + o, n - o, "%s%.*s=", k ? ", " : "", (int)pl, pn);
      if (w > 0) o += (size_t)w < n - o ? (size_t)w : n - o - 1;
      pn += pl + (pn[pl] == ',');
      put_arg(&v.items[k], out, n, &o);
      uint64_t u;
      if (ints && rv && rv->nargs < sizeof rv->args / sizeof rv->args[0] &&
          bbvfl_abi_value_get_u64(&v.items[k], &u, NULL) == 0 && v.items[k].kind == BBVFL_ABI_UINT)
        rv->args[rv->nargs++] = u;
      else
        ints = 0;
    }
  } else if (len > 4) {
    char h[120];
    hex_into(data + 4, len - 4, h, sizeof h);
    w = snprintf(out + o, n - o, "malformed arguments %s", h);
    if (w > 0) o += (size_t)w < n - o ? (size_t)w : n - o - 1;
  }
  bbvfl_abi_value_clear(&v);
  bbvfl_abi_type_free(t);
  snprintf(out + o, n - o, ")");
  return 0;
}

void bbvfl_revert_decode(const uint8_t *data, size_t len, bbvfl_revert *out) {
  memset(out, 0, sizeof *out);
  if (!data || len < 4) return;
  out->present = 1;
  memcpy(out->selector, data, 4);
  if (describe_known_error(data, len, out->error, sizeof out->error, out) == 0) return;
  static const uint8_t ERROR_SEL[4] = {0x08, 0xc3, 0x79, 0xa0}; /* Error(string) */
  const uint8_t *p = data + 4;
  size_t plen = len - 4, off, slen;
  if (memcmp(data, ERROR_SEL, 4) || plen < 32 || word_to_size(p, plen, &off) != 0 || off > plen - 32 ||
      word_to_size(p + off, plen - off - 32, &slen) != 0 || slen > plen - off - 32)
    return;
  const uint8_t *s = p + off + 32;
  size_t o = 0;
  for (size_t i = 0; i < slen && o + 1 < sizeof out->reason; i++)
    out->reason[o++] = (s[i] >= 0x20 && s[i] != 0x7f) ? (char)s[i] : '?';
  out->reason[o] = 0;
}

void bbvfl_revert_describe(const uint8_t *data, size_t len, char *out, size_t n) {
  if (!n) return;
  out[0] = 0;
  if (!data || len == 0) {
    snprintf(out, n, "no reason given");
    return;
  }
  if (len < 4) {
    char h[80];
    hex_into(data, len, h, sizeof h);
    snprintf(out, n, "malformed revert data %s", h);
    return;
  }
  static const uint8_t ERROR_SEL[4] = {0x08, 0xc3, 0x79, 0xa0}; /* Error(string) */
  static const uint8_t PANIC_SEL[4] = {0x4e, 0x48, 0x7b, 0x71}; /* Panic(uint256) */
  const uint8_t *p = data + 4;
  size_t plen = len - 4;
  if (memcmp(data, ERROR_SEL, 4) == 0) {
    size_t off, slen;
    if (plen >= 32 && word_to_size(p, plen, &off) == 0 && off <= plen - 32 &&
        word_to_size(p + off, plen - off - 32, &slen) == 0) {
      const uint8_t *s = p + off + 32;
      /* printable rendering: control bytes as '?' */
      size_t o = 0;
      char txt[400];
      for (size_t i = 0; i < slen && o + 1 < sizeof txt; i++)
        txt[o++] = (s[i] >= 0x20 && s[i] != 0x7f) ? (char)s[i] : '?';
      txt[o] = 0;
      snprintf(out, n, "Error(string): %s%s", txt, o < slen ? "..." : "");
      return;
    }
    snprintf(out, n, "malformed Error(string) revert data");
    return;
  }
  if (memcmp(data, PANIC_SEL, 4) == 0) {
    size_t code;
    if (plen == 32 && word_to_size(p, SIZE_MAX, &code) == 0) {
      snprintf(out, n, "Panic(0x%02zx): %s", code, panic_meaning(code));
      return;
    }
    snprintf(out, n, "malformed Panic(uint256) revert data");
    return;
  }
  if (describe_known_error(data, len, out, n, NULL) == 0) return;
  char sel[16], args[300];
  hex_into(data, 4, sel, sizeof sel);
  if (plen) {
    hex_into(p, plen, args, sizeof args);
    snprintf(out, n, "custom error %s (arguments %s)", sel, args);
  } else {
    snprintf(out, n, "custom error %s", sel);
  }
}

/* Finds revert data in a JSON-RPC error's "data": a hex string, or an object holding one under
 * "data" (some nodes nest it). Returns the string or NULL. */
static const char *revert_data_of(const json_t *error) {
  const json_t *d = json_object_get(error, "data");
  for (int depth = 0; d && depth < 3; depth++) {
    if (json_is_string(d)) {
      const char *s = json_string_value(d);
      if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return s;
      return NULL;
    }
    if (json_is_object(d)) d = json_object_get(d, "data");
    else return NULL;
  }
  return NULL;
}

/* What a node's refusal says, from its code and its own words (see bbvfl_node_refusal in
 * common/err.h: JSON-RPC gives transaction refusals no code of their own, so the message is the
 * only data; geth's and anvil's wordings). The one place in the client that reads a message. */
static bbvfl_node_refusal classify_refusal(long long code, const char *m) {
  if (code == -32601 || strcasestr(m, "method not found") || strcasestr(m, "not supported") ||
      strcasestr(m, "unsupported") || (strcasestr(m, "method") && strcasestr(m, "not found")))
    return BBVFL_NODE_METHOD_NOT_FOUND;
  if (strcasestr(m, "already known") || strcasestr(m, "already imported") || strcasestr(m, "known transaction"))
    return BBVFL_NODE_ALREADY_KNOWN;
  if (strcasestr(m, "nonce too low")) return BBVFL_NODE_NONCE_TOO_LOW;
  if (strcasestr(m, "nonce too high") || strcasestr(m, "invalid nonce")) return BBVFL_NODE_NONCE_TOO_HIGH;
  if (strcasestr(m, "insufficient funds")) return BBVFL_NODE_INSUFFICIENT_FUNDS;
  if (strcasestr(m, "underpriced") || strcasestr(m, "base fee") || strcasestr(m, "fee cap") || strcasestr(m, "max fee"))
    return BBVFL_NODE_UNDERPRICED;
  if (strcasestr(m, "chain id") || strcasestr(m, "chainid") || strcasestr(m, "chain-id")) return BBVFL_NODE_WRONG_CHAIN;
  if (strcasestr(m, "timeout") || strcasestr(m, "timed out")) return BBVFL_NODE_TIMEOUT;
  return BBVFL_NODE_OTHER;
}

int bbvfl_rpc_error_from_json(const json_t *error, bbvfl_err *err) {
  if (!json_is_object(error))
    return bbvfl_fail(err, BBVFL_E_PARSE, "malformed JSON-RPC error (not an object)");
  json_int_t code = json_integer_value(json_object_get(error, "code"));
  /* The node's message, cut at the first control character: some nodes append the raw revert
   * bytes to it (NULs included), which we decode properly below instead. */
  const json_t *jm = json_object_get(error, "message");
  char msg[256];
  if (json_is_string(jm)) {
    const char *m = json_string_value(jm);
    size_t ml = json_string_length(jm), o = 0;
    for (size_t i = 0; i < ml && o + 1 < sizeof msg && (unsigned char)m[i] >= 0x20; i++)
      msg[o++] = m[i];
    while (o > 0 && (msg[o - 1] == ' ' || msg[o - 1] == ':')) o--;
    msg[o] = 0;
  } else {
    snprintf(msg, sizeof msg, "(no message)");
  }
  const char *data = revert_data_of(error);
  int is_revert = code == 3 || strstr(msg, "revert") != NULL;
  if (is_revert) {
    char reason[400];
    uint8_t *bytes = NULL;
    size_t blen = 0;
    bbvfl_revert rv;
    memset(&rv, 0, sizeof rv);
    if (data && bbvfl_hex_decode_alloc(data, &bytes, &blen, NULL) == 0) {
      bbvfl_revert_describe(bytes, blen, reason, sizeof reason);
      bbvfl_revert_decode(bytes, blen, &rv);
      free(bytes);
    } else {
      snprintf(reason, sizeof reason, "no revert data");
    }
    bbvfl_fail(err, BBVFL_E_REVERT, "execution reverted: %s (node: %s)", reason, msg);
    if (err) err->revert = rv;
    return -1;
  }
  bbvfl_fail(err, BBVFL_E_RPC, "the node refused: %s (JSON-RPC error %lld)", msg, (long long)code);
  if (err) {
    err->rpc.present = 1;
    err->rpc.code = (long long)code;
    err->rpc.kind = classify_refusal((long long)code, msg);
    size_t ml = strnlen(msg, sizeof err->rpc.message - 1); /* the node's words, cut to fit */
    memcpy(err->rpc.message, msg, ml);
    err->rpc.message[ml] = 0;
  }
  return -1;
}

static int parse_one(const json_t *resp, json_t **result, bbvfl_err *err) {
  if (!json_is_object(resp))
    return bbvfl_fail(err, BBVFL_E_PARSE, "malformed JSON-RPC response: not an object");
  const json_t *e = json_object_get(resp, "error");
  if (e && !json_is_null(e)) return bbvfl_rpc_error_from_json(e, err);
  json_t *res = json_object_get(resp, "result");
  if (!res)
    return bbvfl_fail(err, BBVFL_E_PARSE,
                      "malformed JSON-RPC response: neither \"result\" nor \"error\"");
  *result = json_incref(res);
  return 0;
}

int bbvfl_rpc_parse_response(const char *body, size_t len, json_t **result, bbvfl_err *err) {
  *result = NULL;
  if (!body || len == 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "malformed JSON-RPC response: empty answer");
  json_error_t je;
  json_t *resp = json_loadb(body, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
  if (!resp)
    return bbvfl_fail(err, BBVFL_E_PARSE, "malformed JSON-RPC response (line %d column %d: %s)",
                      je.line, je.column, je.text);
  int rc = parse_one(resp, result, err);
  json_decref(resp);
  return rc;
}

int bbvfl_rpc_parse_u64(const json_t *v, uint64_t *out, bbvfl_err *err) {
  const char *s = json_string_value(v);
  if (!s) {
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
      *out = (uint64_t)json_integer_value(v);
      return 0;
    }
    return bbvfl_fail(err, BBVFL_E_PARSE, "expected a hex quantity string");
  }
  if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
    return bbvfl_fail(err, BBVFL_E_PARSE, "'%.80s' is not a hex quantity (0x...)", s);
  uint64_t v64 = 0;
  for (const char *p = s + 2; *p; p++) {
    int d;
    if (*p >= '0' && *p <= '9') d = *p - '0';
    else if (*p >= 'a' && *p <= 'f') d = *p - 'a' + 10;
    else if (*p >= 'A' && *p <= 'F') d = *p - 'A' + 10;
    else return bbvfl_fail(err, BBVFL_E_PARSE, "'%.80s' is not a hex quantity", s);
    if (v64 >> 60) return bbvfl_fail(err, BBVFL_E_PARSE, "quantity %.80s does not fit in 64 bits", s);
    v64 = v64 << 4 | (uint64_t)d;
  }
  *out = v64;
  return 0;
}

static int parse_u256(const json_t *v, bbvfl_u256 *out, bbvfl_err *err) {
  const char *s = json_string_value(v);
  if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
    return bbvfl_fail(err, BBVFL_E_PARSE, "expected a hex quantity string");
  return bbvfl_u256_from_string(s, out, err);
}

static int parse_fixed(const json_t *v, uint8_t *out, size_t n, const char *what, bbvfl_err *err) {
  const char *s = json_string_value(v);
  if (!s) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: expected a hex string", what);
  if (bbvfl_hex_decode_fixed(s, out, n, err) != 0) return bbvfl_wrap(err, "%s", what);
  return 0;
}

void bbvfl_receipt_clear(bbvfl_receipt *rc) {
  if (!rc) return;
  json_decref(rc->logs);
  memset(rc, 0, sizeof *rc);
}

int bbvfl_rpc_parse_receipt(const json_t *obj, bbvfl_receipt *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (!json_is_object(obj)) return bbvfl_fail(err, BBVFL_E_PARSE, "receipt is not a JSON object");
  uint64_t status = 0;
  if (bbvfl_rpc_parse_u64(json_object_get(obj, "status"), &status, err) != 0)
    return bbvfl_wrap(err, "receipt status");
  if (status > 1) return bbvfl_fail(err, BBVFL_E_PARSE, "receipt status %" PRIu64 " is not 0 or 1", status);
  out->status = (int)status;
  if (bbvfl_rpc_parse_u64(json_object_get(obj, "blockNumber"), &out->block_number, err) != 0)
    return bbvfl_wrap(err, "receipt blockNumber");
  if (bbvfl_rpc_parse_u64(json_object_get(obj, "gasUsed"), &out->gas_used, err) != 0)
    return bbvfl_wrap(err, "receipt gasUsed");
  const json_t *egp = json_object_get(obj, "effectiveGasPrice");
  if (egp && !json_is_null(egp) &&
      bbvfl_rpc_parse_u64(egp, &out->effective_gas_price, err) != 0)
    return bbvfl_wrap(err, "receipt effectiveGasPrice");
  if (parse_fixed(json_object_get(obj, "transactionHash"), out->hash, 32,
                  "receipt transactionHash", err) != 0)
    return -1;
  const json_t *ca = json_object_get(obj, "contractAddress");
  if (ca && !json_is_null(ca)) {
    if (parse_fixed(ca, out->contract, 20, "receipt contractAddress", err) != 0) return -1;
    out->has_contract = 1;
  }
  json_t *logs = json_object_get(obj, "logs");
  if (!json_is_array(logs)) return bbvfl_fail(err, BBVFL_E_PARSE, "receipt logs is not an array");
  out->logs = json_incref(logs);
  return 0;
}

json_t *bbvfl_json_hex(const uint8_t *data, size_t len) {
  char *s = malloc(2 * len + 3);
  if (!s) return NULL;
  bbvfl_hex_encode(data, len, s);
  json_t *j = json_string(s);
  free(s);
  return j;
}

json_t *bbvfl_json_quantity(uint64_t v) {
  char s[24];
  snprintf(s, sizeof s, "0x%" PRIx64, v);
  return json_string(s);
}

static json_t *json_u256(const bbvfl_u256 *v) {
  char s[67];
  bbvfl_u256_to_hex(v, s);
  return json_string(s);
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
    if (json_is_object(resp) && parse_one(resp, &dummy, err) != 0) {
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
    if (parse_one(el, &reqs[k].result, &reqs[k].err) != 0) {
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

/* ---------------------------------------------------------------- typed calls */

static int call_u64(bbvfl_rpc *r, const char *method, json_t *params, uint64_t *out,
                    bbvfl_err *err) {
  json_t *res;
  if (bbvfl_rpc_call(r, method, params, &res, err) != 0) return -1;
  int rc = bbvfl_rpc_parse_u64(res, out, err);
  json_decref(res);
  return rc ? bbvfl_wrap(err, "%s", method) : 0;
}

static int call_u256(bbvfl_rpc *r, const char *method, json_t *params, bbvfl_u256 *out,
                     bbvfl_err *err) {
  json_t *res;
  if (bbvfl_rpc_call(r, method, params, &res, err) != 0) return -1;
  int rc = parse_u256(res, out, err);
  json_decref(res);
  return rc ? bbvfl_wrap(err, "%s", method) : 0;
}

int bbvfl_rpc_chain_id(bbvfl_rpc *r, uint64_t *out, bbvfl_err *err) {
  return call_u64(r, "eth_chainId", NULL, out, err);
}

int bbvfl_rpc_block_number(bbvfl_rpc *r, uint64_t *out, bbvfl_err *err) {
  return call_u64(r, "eth_blockNumber", NULL, out, err);
}

int bbvfl_rpc_nonce(bbvfl_rpc *r, const uint8_t addr[20], const char *block, uint64_t *out,
                    bbvfl_err *err) {
  return call_u64(r, "eth_getTransactionCount",
                  json_pack("[o,s]", bbvfl_json_hex(addr, 20), block ? block : "latest"), out,
                  err);
}

int bbvfl_rpc_balance(bbvfl_rpc *r, const uint8_t addr[20], bbvfl_u256 *out, bbvfl_err *err) {
  return call_u256(r, "eth_getBalance", json_pack("[o,s]", bbvfl_json_hex(addr, 20), "latest"),
                   out, err);
}

int bbvfl_rpc_gas_price(bbvfl_rpc *r, bbvfl_u256 *out, bbvfl_err *err) {
  return call_u256(r, "eth_gasPrice", NULL, out, err);
}

int bbvfl_rpc_max_priority_fee(bbvfl_rpc *r, bbvfl_u256 *out, bbvfl_err *err) {
  return call_u256(r, "eth_maxPriorityFeePerGas", NULL, out, err);
}

int bbvfl_rpc_fee_history(bbvfl_rpc *r, unsigned blocks, double percentile,
                          bbvfl_u256 *base_fee_next, bbvfl_u256 *reward, bbvfl_err *err) {
  if (blocks == 0 || blocks > 1024 || !(percentile >= 0 && percentile <= 100))
    return bbvfl_fail(err, BBVFL_E_ARG, "eth_feeHistory: need 1..1024 blocks and a percentile in 0..100");
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_feeHistory",
                     json_pack("[o,s,[f]]", bbvfl_json_quantity(blocks), "latest", percentile),
                     &res, err) != 0)
    return -1;
  json_t *base = json_object_get(res, "baseFeePerGas");
  json_t *rew = json_object_get(res, "reward");
  int rc = -1;
  if (!json_is_array(base) || json_array_size(base) == 0) {
    bbvfl_fail(err, BBVFL_E_PARSE, "eth_feeHistory: no baseFeePerGas array in the answer");
    goto out;
  }
  if (parse_u256(json_array_get(base, json_array_size(base) - 1), base_fee_next, err) != 0) {
    bbvfl_wrap(err, "eth_feeHistory baseFeePerGas");
    goto out;
  }
  memset(reward, 0, sizeof *reward);
  if (json_is_array(rew) && json_array_size(rew) > 0) {
    /* median of the per-block percentile tips (as u64: tips beyond 2^64 wei are not real) */
    size_t n = json_array_size(rew);
    uint64_t *v = calloc(n, sizeof *v);
    if (!v) {
      bbvfl_fail(err, BBVFL_E_NOMEM, "eth_feeHistory: out of memory");
      goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      uint64_t x;
      if (bbvfl_rpc_parse_u64(json_array_get(json_array_get(rew, i), 0), &x, NULL) == 0) v[k++] = x;
    }
    for (size_t i = 1; i < k; i++)
      for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
        uint64_t t = v[j];
        v[j] = v[j - 1];
        v[j - 1] = t;
      }
    if (k) *reward = bbvfl_u256_from_u64(v[k / 2]);
    free(v);
  }
  rc = 0;
out:
  json_decref(res);
  return rc;
}

static json_t *call_object(const uint8_t *from, const uint8_t *to, const bbvfl_u256 *value,
                           const uint8_t *data, size_t len) {
  json_t *o = json_object();
  if (!o) return NULL;
  int bad = 0;
  if (from) bad |= json_object_set_new(o, "from", bbvfl_json_hex(from, 20));
  if (to) bad |= json_object_set_new(o, "to", bbvfl_json_hex(to, 20));
  if (value) bad |= json_object_set_new(o, "value", json_u256(value));
  if (len) bad |= json_object_set_new(o, "input", bbvfl_json_hex(data, len));
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

int bbvfl_rpc_estimate_gas(bbvfl_rpc *r, const uint8_t *from, const uint8_t *to,
                           const bbvfl_u256 *value, const uint8_t *data, size_t len,
                           uint64_t *gas, bbvfl_err *err) {
  json_t *o = call_object(from, to, value, data, len);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_estimateGas: out of memory");
  return call_u64(r, "eth_estimateGas", json_pack("[o]", o), gas, err);
}

int bbvfl_rpc_get_block(bbvfl_rpc *r, const char *block, int full_txs, json_t **out,
                        bbvfl_err *err) {
  *out = NULL;
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_getBlockByNumber",
                     json_pack("[s,b]", block ? block : "latest", full_txs), &res, err) != 0)
    return -1;
  if (!json_is_object(res)) {
    json_decref(res);
    return bbvfl_fail(err, BBVFL_E_STATE, "eth_getBlockByNumber: block %s does not exist",
                      block ? block : "latest");
  }
  *out = res;
  return 0;
}

int bbvfl_rpc_get_tx(bbvfl_rpc *r, const uint8_t hash[32], json_t **out, bbvfl_err *err) {
  if (out) *out = NULL;
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_getTransactionByHash", json_pack("[o]", bbvfl_json_hex(hash, 32)),
                     &res, err) != 0)
    return -1;
  if (json_is_null(res)) {
    json_decref(res);
    return 0;
  }
  if (out) *out = res;
  else json_decref(res);
  return 1;
}

static int already_sent(bbvfl_rpc *r, const bbvfl_err *e, const uint8_t hash[32]);

int bbvfl_rpc_send_raw(bbvfl_rpc *r, const uint8_t *raw, size_t len, uint8_t hash[32],
                       bbvfl_err *err) {
  bbvfl_keccak256(raw, len, hash);
  json_t *res;
  bbvfl_err e = {0};
  if (bbvfl_rpc_call(r, "eth_sendRawTransaction", json_pack("[o]", bbvfl_json_hex(raw, len)),
                     &res, &e) == 0) {
    uint8_t got[32];
    int ok = json_is_string(res) && bbvfl_hex_decode_fixed(json_string_value(res), got, 32, NULL) == 0;
    json_decref(res);
    if (!ok)
      return bbvfl_fail(err, BBVFL_E_PARSE, "eth_sendRawTransaction: the answer is not a 32-byte hash");
    if (memcmp(got, hash, 32) != 0)
      return bbvfl_fail(err, BBVFL_E_RPC,
                        "eth_sendRawTransaction: the node reports a different transaction hash "
                        "than keccak256 of the bytes sent");
    return 0;
  }
  /* The node may already have these very bytes (e.g. our earlier attempt got through but the
   * answer was lost): same bytes, same hash, so that is success. */
  if (already_sent(r, &e, hash)) return 0;
  if (err) *err = e;
  return -1;
}

static int already_sent(bbvfl_rpc *r, const bbvfl_err *e, const uint8_t hash[32]) {
  if (bbvfl_err_node_refused_is(e, BBVFL_NODE_ALREADY_KNOWN)) return 1;
  if (bbvfl_err_node_refused_is(e, BBVFL_NODE_NONCE_TOO_LOW)) { /* ours, mined, or someone else's */
    bbvfl_err e2 = {0};
    return bbvfl_rpc_get_tx(r, hash, NULL, &e2) == 1;
  }
  return 0;
}

int bbvfl_rpc_send_raw_sync(bbvfl_rpc *r, const uint8_t *raw, size_t len, double timeout_s,
                            bbvfl_receipt *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (timeout_s <= 0) timeout_s = 60;
  uint8_t hash[32];
  uint64_t outages0 = r->outages;
  if (r->no_sync) {
    if (bbvfl_rpc_send_raw(r, raw, len, hash, err) != 0) return -1;
    return bbvfl_rpc_wait_receipt(r, hash, timeout_s, out, err);
  }
  bbvfl_keccak256(raw, len, hash);
  json_t *res;
  bbvfl_err e = {0};
  /* Only the raw bytes: the optional timeout argument of EIP-7966 is not accepted everywhere
   * (anvil 1.7 refuses it); the HTTP timeout bounds the wait. */
  if (bbvfl_rpc_call(r, "eth_sendRawTransactionSync", json_pack("[o]", bbvfl_json_hex(raw, len)),
                     &res, &e) == 0) {
    int rc = bbvfl_rpc_parse_receipt(res, out, err);
    json_decref(res);
    if (rc != 0) {
      bbvfl_receipt_clear(out);
      return bbvfl_wrap(err, "eth_sendRawTransactionSync");
    }
    if (memcmp(out->hash, hash, 32) != 0) {
      bbvfl_receipt_clear(out);
      return bbvfl_fail(err, BBVFL_E_RPC,
                        "eth_sendRawTransactionSync: the receipt is for another transaction");
    }
    return 0;
  }
  if (bbvfl_err_node_refused_is(&e, BBVFL_NODE_METHOD_NOT_FOUND)) {
    r->no_sync = 1; /* and send the ordinary way */
    if (bbvfl_rpc_send_raw(r, raw, len, hash, err) != 0) return -1;
    return bbvfl_rpc_wait_receipt(r, hash, timeout_s, out, err);
  }
  /* Sent earlier (a retried request whose first answer was lost), or the node gave up waiting
   * while the transaction is in its pool: fetch the receipt the ordinary way. */
  /* the node restarted during this call: it may have lost earlier transactions of this account, so
     this one may wait behind a nonce gap; the caller (bbvfl_sender_transact) re-sends those first */
  if (r->outages != outages0)
    return bbvfl_fail(err, BBVFL_E_RPC, "eth_sendRawTransactionSync: the node at %s restarted during the call (%s)",
                      r->url, e.msg);
  if (already_sent(r, &e, hash) ||
      (bbvfl_err_node_refused_is(&e, BBVFL_NODE_TIMEOUT) && bbvfl_rpc_get_tx(r, hash, NULL, NULL) == 1))
    return bbvfl_rpc_wait_receipt(r, hash, timeout_s, out, err);
  if (err) *err = e;
  return -1;
}

int bbvfl_rpc_eth_call_value(bbvfl_rpc *r, const uint8_t *from, const uint8_t to[20],
                             const bbvfl_u256 *value, const uint8_t *data, size_t len,
                             const char *block, uint8_t **out, size_t *out_len, bbvfl_err *err) {
  *out = NULL;
  *out_len = 0;
  json_t *o = call_object(from, to, value, data, len);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_call: out of memory");
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_call", json_pack("[o,s]", o, block ? block : "latest"), &res, err) != 0)
    return -1;
  const char *s = json_string_value(res);
  int rc;
  if (!s) rc = bbvfl_fail(err, BBVFL_E_PARSE, "eth_call: the answer is not a hex string");
  else if (bbvfl_hex_decode_alloc(s, out, out_len, err) != 0) rc = bbvfl_wrap(err, "eth_call result");
  else rc = 0;
  json_decref(res);
  return rc;
}

int bbvfl_rpc_eth_call(bbvfl_rpc *r, const uint8_t *from, const uint8_t to[20],
                       const uint8_t *data, size_t len, const char *block, uint8_t **out,
                       size_t *out_len, bbvfl_err *err) {
  return bbvfl_rpc_eth_call_value(r, from, to, NULL, data, len, block, out, out_len, err);
}

int bbvfl_rpc_receipt(bbvfl_rpc *r, const uint8_t hash[32], bbvfl_receipt *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_getTransactionReceipt", json_pack("[o]", bbvfl_json_hex(hash, 32)),
                     &res, err) != 0)
    return -1;
  if (json_is_null(res)) {
    json_decref(res);
    return 0;
  }
  int rc = bbvfl_rpc_parse_receipt(res, out, err);
  json_decref(res);
  if (rc != 0) {
    bbvfl_receipt_clear(out);
    return -1;
  }
  return 1;
}

int bbvfl_rpc_wait_receipt(bbvfl_rpc *r, const uint8_t hash[32], double timeout_s,
                           bbvfl_receipt *out, bbvfl_err *err) {
  if (timeout_s <= 0) timeout_s = 60;
  double t0 = bbvfl_now(), delay = 0.0002;
  for (;;) {
    int rc = bbvfl_rpc_receipt(r, hash, out, err);
    if (rc < 0) return -1;
    if (rc == 1) return 0;
    double left = timeout_s - (bbvfl_now() - t0);
    if (left <= 0) {
      char h[67];
      bbvfl_hex_encode(hash, 32, h);
      return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                        "no receipt for transaction %s after %.1f s (is the node mining?)", h,
                        timeout_s);
    }
    bbvfl_sleep(delay < left ? delay : left);
    delay *= 2;
    if (delay > 0.02) delay = 0.02;
  }
}

void bbvfl_log_filter_init(bbvfl_log_filter *f, uint64_t from_block, uint64_t to_block) {
  memset(f, 0, sizeof *f);
  f->from_block = from_block;
  f->to_block = to_block;
}

int bbvfl_log_filter_address(bbvfl_log_filter *f, const uint8_t address[20], bbvfl_err *err) {
  if (f->naddresses >= BBVFL_LOGF_MAX_ADDRESSES)
    return bbvfl_fail(err, BBVFL_E_ARG, "log filter: more than %d addresses", BBVFL_LOGF_MAX_ADDRESSES);
  memcpy(f->addresses[f->naddresses++], address, 20);
  return 0;
}

int bbvfl_log_filter_topic0(bbvfl_log_filter *f, const uint8_t topic[32], bbvfl_err *err) {
  if (f->ntopic0 >= BBVFL_LOGF_MAX_TOPIC0)
    return bbvfl_fail(err, BBVFL_E_ARG, "log filter: more than %d events", BBVFL_LOGF_MAX_TOPIC0);
  memcpy(f->topic0[f->ntopic0++], topic, 32);
  return 0;
}

void bbvfl_log_filter_topic1(bbvfl_log_filter *f, const uint8_t topic[32]) {
  f->has_topic1 = 1;
  memcpy(f->topic1, topic, 32);
}

/* One entry of the filter's address or topic position: a single value stays a string, several
   become an array ("one of"). */
static json_t *logf_one_of(const uint8_t *vals, size_t n, size_t w) {
  if (n == 1) return bbvfl_json_hex(vals, w);
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++)
    if (json_array_append_new(a, bbvfl_json_hex(vals + i * w, w))) {
      json_decref(a);
      return NULL;
    }
  return a;
}

json_t *bbvfl_log_filter_json(const bbvfl_log_filter *f) {
  json_t *o = json_object();
  if (!o) return NULL;
  int bad = 0;
  if (f->naddresses) bad |= json_object_set_new(o, "address", logf_one_of(&f->addresses[0][0], f->naddresses, 20));
  bad |= json_object_set_new(o, "fromBlock", bbvfl_json_quantity(f->from_block));
  bad |= json_object_set_new(o, "toBlock", f->to_block == BBVFL_BLOCK_LATEST ? json_string("latest")
                                                                            : bbvfl_json_quantity(f->to_block));
  if (f->ntopic0 || f->has_topic1) {
    json_t *t = json_array();
    bad |= !t;
    if (t) bad |= json_array_append_new(t, f->ntopic0 ? logf_one_of(&f->topic0[0][0], f->ntopic0, 32) : json_null());
    if (t && f->has_topic1) bad |= json_array_append_new(t, bbvfl_json_hex(f->topic1, 32));
    bad |= json_object_set_new(o, "topics", t);
  }
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}

int bbvfl_rpc_get_logs(bbvfl_rpc *r, const bbvfl_log_filter *f, json_t **logs, bbvfl_err *err) {
  *logs = NULL;
  json_t *o = bbvfl_log_filter_json(f);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "eth_getLogs: out of memory");
  json_t *res;
  if (bbvfl_rpc_call(r, "eth_getLogs", json_pack("[o]", o), &res, err) != 0) return -1;
  if (!json_is_array(res)) {
    json_decref(res);
    return bbvfl_fail(err, BBVFL_E_PARSE, "eth_getLogs: the answer is not an array");
  }
  *logs = res;
  return 0;
}
