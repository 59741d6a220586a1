#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int bbvfl_fail(bbvfl_err *err, bbvfl_errcode code, const char *fmt, ...) {
  if (!err) return -1;
  err->code = code;
  memset(&err->revert, 0, sizeof err->revert); /* a new error: no revert or node data unless set after */
  memset(&err->rpc, 0, sizeof err->rpc);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return -1;
}

int bbvfl_wrap(bbvfl_err *err, const char *fmt, ...) {
  if (!err) return -1;
  char prefix[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  char old[sizeof err->msg];
  memcpy(old, err->msg, sizeof old);
  size_t plen = strlen(prefix);
  if (plen + 2 >= sizeof err->msg) plen = sizeof err->msg - 3;
  memcpy(err->msg, prefix, plen);
  memcpy(err->msg + plen, ": ", 2);
  size_t room = sizeof err->msg - plen - 3;
  size_t olen = strnlen(old, room);
  memcpy(err->msg + plen + 2, old, olen);
  err->msg[plen + 2 + olen] = '\0';
  if (err->code == BBVFL_OK) err->code = BBVFL_E_INTERNAL;
  return -1;
}

void bbvfl_err_clear(bbvfl_err *err) {
  if (!err) return;
  err->code = BBVFL_OK;
  err->msg[0] = '\0';
  memset(&err->revert, 0, sizeof err->revert);
  memset(&err->rpc, 0, sizeof err->rpc);
}

int bbvfl_err_node_refused(const bbvfl_err *err) { return err && err->code == BBVFL_E_RPC && err->rpc.present; }

int bbvfl_err_node_refused_is(const bbvfl_err *err, bbvfl_node_refusal kind) {
  return bbvfl_err_node_refused(err) && err->rpc.kind == kind;
}

int bbvfl_err_revert_sel_is(const bbvfl_err *err, uint32_t selector) {
  if (!err || err->code != BBVFL_E_REVERT || !err->revert.present) return 0;
  const unsigned char *s = err->revert.selector;
  return ((uint32_t)s[0] << 24 | (uint32_t)s[1] << 16 | (uint32_t)s[2] << 8 | s[3]) == selector;
}

const char *bbvfl_errcode_name(bbvfl_errcode code) {
  switch (code) {
    case BBVFL_OK: return "ok";
    case BBVFL_E_ARG: return "usage";
    case BBVFL_E_IO: return "io";
    case BBVFL_E_PARSE: return "parse";
    case BBVFL_E_NOMEM: return "memory";
    case BBVFL_E_RPC: return "rpc";
    case BBVFL_E_REVERT: return "revert";
    case BBVFL_E_TIMEOUT: return "timeout";
    case BBVFL_E_CRYPTO: return "crypto";
    case BBVFL_E_STATE: return "state";
    case BBVFL_E_VERIFY: return "verify";
    case BBVFL_E_INTERNAL: return "internal";
  }
  return "unknown";
}

int bbvfl_exit_code(bbvfl_errcode code) {
  switch (code) {
    case BBVFL_OK: return 0;
    case BBVFL_E_ARG: return 2;
    case BBVFL_E_VERIFY: return 3;
    case BBVFL_E_RPC:
    case BBVFL_E_TIMEOUT: return 4;
    case BBVFL_E_REVERT: return 5;
    case BBVFL_E_IO: return 6;
    case BBVFL_E_PARSE: return 7;
    default: return 1;
  }
}
