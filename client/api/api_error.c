/* include/bbvfl/error.h and version.h over common/err.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"

bbvfl_status bbvfl_api_status(bbvfl_errcode code) {
  switch (code) {
    case BBVFL_OK: return BBVFL_STATUS_OK;
    case BBVFL_E_ARG: return BBVFL_STATUS_ARG;
    case BBVFL_E_IO: return BBVFL_STATUS_IO;
    case BBVFL_E_PARSE: return BBVFL_STATUS_PARSE;
    case BBVFL_E_NOMEM: return BBVFL_STATUS_NOMEM;
    case BBVFL_E_RPC: return BBVFL_STATUS_RPC;
    case BBVFL_E_REVERT: return BBVFL_STATUS_REVERT;
    case BBVFL_E_TIMEOUT: return BBVFL_STATUS_TIMEOUT;
    case BBVFL_E_CRYPTO: return BBVFL_STATUS_CRYPTO;
    case BBVFL_E_STATE: return BBVFL_STATUS_STATE;
    case BBVFL_E_VERIFY: return BBVFL_STATUS_VERIFY;
    default: return BBVFL_STATUS_INTERNAL;
  }
}

bbvfl_status bbvfl_api_from(const bbvfl_err *in, bbvfl_error *out) {
  bbvfl_status st = bbvfl_api_status(in->code);
  /* a failure reported without a code is still a failure */
  if (st == BBVFL_STATUS_OK) st = BBVFL_STATUS_INTERNAL;
  if (out) {
    out->code = st;
    snprintf(out->message, sizeof out->message, "%s", in->msg[0] ? in->msg : "unspecified failure");
  }
  return st;
}

bbvfl_status bbvfl_api_fail(bbvfl_error *out, bbvfl_status status, const char *fmt, ...) {
  if (out) {
    out->code = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof out->message, fmt, ap);
    va_end(ap);
  }
  return status;
}

const char *bbvfl_status_name(bbvfl_status status) {
  switch (status) {
    case BBVFL_STATUS_OK: return "ok";
    case BBVFL_STATUS_ARG: return "usage";
    case BBVFL_STATUS_IO: return "io";
    case BBVFL_STATUS_PARSE: return "parse";
    case BBVFL_STATUS_NOMEM: return "memory";
    case BBVFL_STATUS_RPC: return "rpc";
    case BBVFL_STATUS_REVERT: return "revert";
    case BBVFL_STATUS_TIMEOUT: return "timeout";
    case BBVFL_STATUS_CRYPTO: return "crypto";
    case BBVFL_STATUS_STATE: return "state";
    case BBVFL_STATUS_VERIFY: return "verify";
    case BBVFL_STATUS_INTERNAL: return "internal";
  }
  return "unknown";
}

void bbvfl_error_clear(bbvfl_error *err) {
  if (!err) return;
  err->code = BBVFL_STATUS_OK;
  err->message[0] = '\0';
}

const char *bbvfl_version_string(void) { return BBVFL_VERSION_STRING; }

int bbvfl_version_number(void) { return BBVFL_VERSION_NUMBER; }
