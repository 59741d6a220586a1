/* A node's answers read into structure: responses, JSON-RPC errors and refusals, revert data
 * decoded against the contracts' custom errors, receipts, JSON encodings of quantities. See rpc.h. */
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

/* What a node's refusal says by its code alone (see bbvfl_node_refusal in common/err.h): only
 * -32601 has a standard meaning; the sender asks the chain about the rest. */
static bbvfl_node_refusal classify_refusal(long long code) {
  return code == -32601 ? BBVFL_NODE_METHOD_NOT_FOUND : BBVFL_NODE_OTHER;
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
  /* A revert: code 3 (EIP-1474's execution error, what anvil and geth answer for a revert with
   * data) or any error that carries revert data. */
  int is_revert = code == 3 || data != NULL;
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
    err->rpc.kind = classify_refusal((long long)code);
    size_t ml = strnlen(msg, sizeof err->rpc.message - 1); /* the node's words, cut to fit */
    memcpy(err->rpc.message, msg, ml);
    err->rpc.message[ml] = 0;
  }
  return -1;
}

int bbvfl_rpc_parse_one(const json_t *resp, json_t **result, bbvfl_err *err) {
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
  int rc = bbvfl_rpc_parse_one(resp, result, err);
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

int bbvfl_rpc_parse_u256(const json_t *v, bbvfl_u256 *out, bbvfl_err *err) {
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
  const json_t *bh = json_object_get(obj, "blockHash");
  if (bh && !json_is_null(bh)) {
    if (parse_fixed(bh, out->block_hash, 32, "receipt blockHash", err) != 0) return -1;
    out->has_block_hash = 1;
  }
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

json_t *bbvfl_rpc_json_u256(const bbvfl_u256 *v) {
  char s[67];
  bbvfl_u256_to_hex(v, s);
  return json_string(s);
}

