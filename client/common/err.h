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
#include <stdint.h>

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

/* A contract's revert, as data (code BBVFL_E_REVERT): the 4-byte selector of the revert data,
 * for a custom error the contract declares (abi/, generated into bbvfl_errors.h as
 * BBVFL_SEL_<Name>) its name and integer arguments, for Error(string) the reason text. Callers
 * that recover from a particular revert branch on the selector (bbvfl_err_revert_sel_is) and,
 * where it matters, the arguments; never on a message, which is for people and may be reworded
 * or wrapped. */
typedef struct {
  int present;               /* 1: the revert data was seen and decoded */
  unsigned char selector[4]; /* Error(string) = 08c379a0, Panic(uint256) = 4e487b71, custom errors */
  char reason[128];          /* Error(string)'s text (printable, cut at 127 bytes); "" otherwise */
  char error[160];           /* a known custom error with its arguments, for people:
                                "BadLength(expected=10, got=11)"; "" otherwise */
  unsigned nargs;            /* leading arguments of a known custom error that are integers of
                                at most 64 bits, in args[] (decoding stops at any other) */
  unsigned long long args[4];
} bbvfl_revert;

/* Why a node refused a request. JSON-RPC has codes only for malformed requests
 * (-32700..-32600) and a missing method (-32601); every refusal of a transaction comes with a
 * generic code (geth -32000, anvil -32003 or -32000) and words that differ from node to node and
 * release to release. bbvfl never reads those words: where the answer enters (eth/rpc_errors.c)
 * only the code is classified (-32601: BBVFL_NODE_METHOD_NOT_FOUND, anything else
 * BBVFL_NODE_OTHER), and the sender (eth/sender.c) finds out the rest by asking the chain what
 * is true of the transaction it sent: is this hash known (sent already), the account's pending
 * nonce (too low, a gap), the chain id, the balance against gas * fee + value, the current fees.
 * The node's message is kept for people (bbvfl_rpc_error.message) and never branched on. */
typedef enum {
  BBVFL_NODE_OTHER = 0,          /* none of the below (or not asked yet): see code and message */
  BBVFL_NODE_METHOD_NOT_FOUND,   /* -32601 */
  BBVFL_NODE_NONCE_TOO_LOW,      /* the account's pending nonce is past this one */
  BBVFL_NODE_NONCE_TOO_HIGH,     /* a gap: this nonce is past the account's pending nonce */
  BBVFL_NODE_UNDERPRICED,        /* the node's current fees are above the ones signed */
  BBVFL_NODE_INSUFFICIENT_FUNDS, /* the account cannot pay gas * price + value */
  BBVFL_NODE_WRONG_CHAIN,        /* signed for another chain id */
  BBVFL_NODE_GAS_LIMIT           /* the transaction's gas limit is above the next block's */
} bbvfl_node_refusal;

/* A JSON-RPC error object the node answered with (code BBVFL_E_RPC): its code, its own
 * message, and what that says (kind), apart from bbvfl_err.msg (ours, for people). */
typedef struct {
  int present;               /* 1: the node answered with an error object */
  long long code;            /* e.g. -32601 method not found, -32000 (geth) server error */
  bbvfl_node_refusal kind;   /* from the code where the error entered; refined by the sender
                                from the chain's state (never from the message) */
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

/* 1 when err is a revert whose selector is `selector` (BBVFL_SEL_<Name> of bbvfl_errors.h:
 * the first byte of the revert data in the high byte), else 0. A wrap keeps it. */
int bbvfl_err_revert_sel_is(const bbvfl_err *err, uint32_t selector);
/* 1 when the node refused the request with a JSON-RPC error object (err->rpc), else 0. */
int bbvfl_err_node_refused(const bbvfl_err *err);
/* 1 when the node refused the request for reason `kind` (err->rpc.kind), else 0. */
int bbvfl_err_node_refused_is(const bbvfl_err *err, bbvfl_node_refusal kind);

/* A short name for an error category, e.g. "rpc". */
const char *bbvfl_errcode_name(bbvfl_errcode code);

/* Process exit status for an error category (see README "Exit codes"). */
int bbvfl_exit_code(bbvfl_errcode code);

#endif
