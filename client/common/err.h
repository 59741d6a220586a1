/* Error reporting for the bbvfl library.
 *
 * Library functions never print. A function that can fail takes a `bbvfl_err *` (which may be
 * NULL when the caller does not care), returns 0 on success and a negative value on failure, and
 * on failure fills the error with a category and a message meant for a human: what was wrong
 * and, where possible, what to do. The struct is caller-owned and fixed-size: no allocation.
 */
#ifndef BBVFL_COMMON_ERR_H
#define BBVFL_COMMON_ERR_H

#include <stddef.h>

typedef enum {
  BBVFL_OK = 0,
  BBVFL_E_ARG = 1,      /* bad argument, flag or configuration */
  BBVFL_E_IO = 2,       /* file system */
  BBVFL_E_PARSE = 3,    /* malformed input (CSV, JSON, RLP, ABI, hex ...) */
  BBVFL_E_NOMEM = 4,    /* allocation failed */
  BBVFL_E_RPC = 5,      /* the node answered with an error, or the transport failed */
  BBVFL_E_REVERT = 6,   /* a call or transaction reverted */
  BBVFL_E_TIMEOUT = 7,  /* waited too long */
  BBVFL_E_CRYPTO = 8,   /* key or signature problem */
  BBVFL_E_STATE = 9,    /* the protocol or chain is not in the state this step needs */
  BBVFL_E_VERIFY = 10,  /* a verification (audit) found a discrepancy */
  BBVFL_E_INTERNAL = 11
} bbvfl_errcode;

/* A contract's revert, as data (code BBVFL_E_REVERT): the 4-byte selector of the revert data
 * and, for Error(string), the reason string itself. Callers that recover from a particular
 * revert branch on these (bbvfl_err_revert_is), never on the message, which is for people and
 * may be reworded or wrapped. */
typedef struct {
  int present;               /* 1: the revert data was seen and decoded */
  unsigned char selector[4]; /* Error(string) = 08c379a0, Panic(uint256) = 4e487b71, custom errors */
  char reason[128];          /* Error(string)'s text (printable, cut at 127 bytes); "" otherwise */
} bbvfl_revert;

/* A JSON-RPC error object the node answered with (code BBVFL_E_RPC): its code and its own
 * message, apart from bbvfl_err.msg (ours, for people). */
typedef struct {
  int present;               /* 1: the node answered with an error object */
  long long code;            /* e.g. -32601 method not found, -32000 (geth) server error */
  char message[160];         /* the node's message, control characters cut */
} bbvfl_rpc_error;

typedef struct {
  bbvfl_errcode code;
  char msg[512];
  bbvfl_revert revert;       /* with code BBVFL_E_REVERT when the node returned revert data */
  bbvfl_rpc_error rpc;       /* with code BBVFL_E_RPC when the node refused a request */
} bbvfl_err;

/* Sets err (if non-NULL) and returns -1. printf-style message. */
int bbvfl_fail(bbvfl_err *err, bbvfl_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the existing message with context ("loading data: <old message>"); returns -1. */
int bbvfl_wrap(bbvfl_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void bbvfl_err_clear(bbvfl_err *err);

/* 1 when err is a revert whose Error(string) reason is exactly `reason` (the contract's own
 * text, not the message), else 0. */
int bbvfl_err_revert_is(const bbvfl_err *err, const char *reason);
/* 1 when the node refused the request with a JSON-RPC error object (err->rpc), else 0. */
int bbvfl_err_node_refused(const bbvfl_err *err);

/* A short name for an error category, e.g. "rpc". */
const char *bbvfl_errcode_name(bbvfl_errcode code);

/* Process exit status for an error category (see README "Exit codes"). */
int bbvfl_exit_code(bbvfl_errcode code);

#endif
