/* bbvfl public API: errors.
 *
 * Every fallible function returns a bbvfl_status: BBVFL_STATUS_OK (0) on success, else the
 * category of the failure. It also takes a `bbvfl_error *err` as its last argument, which may be
 * NULL when the caller needs only the status; when non-NULL, on failure it receives the same
 * status and a message for people (what was wrong and, where possible, what to do), and on
 * success it is left untouched. Branch on the status, never on the message: its wording may
 * change between versions.
 *
 * bbvfl_error is a fixed-size struct the caller owns (on the stack is fine); the library never
 * allocates for errors and never keeps a pointer to one. The library never prints. */
#ifndef BBVFL_PUBLIC_ERROR_H
#define BBVFL_PUBLIC_ERROR_H

#include "bbvfl/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Categories of failure. The numbers are stable (part of the ABI); new ones may be added. */
typedef enum {
  BBVFL_STATUS_OK = 0,
  BBVFL_STATUS_ARG = 1,      /* a bad argument or configuration value (named in the message) */
  BBVFL_STATUS_IO = 2,       /* the file system: a file missing, unreadable or unwritable */
  BBVFL_STATUS_PARSE = 3,    /* malformed input, e.g. a CSV (the message names line and column) */
  BBVFL_STATUS_NOMEM = 4,    /* an allocation failed */
  BBVFL_STATUS_RPC = 5,      /* a node answered with an error, or the transport failed */
  BBVFL_STATUS_REVERT = 6,   /* a contract call or transaction reverted */
  BBVFL_STATUS_TIMEOUT = 7,  /* waited too long */
  BBVFL_STATUS_CRYPTO = 8,   /* a key, signature or random source failed */
  BBVFL_STATUS_STATE = 9,    /* the object is not in the state this call needs */
  BBVFL_STATUS_VERIFY = 10,  /* a verification found a discrepancy */
  BBVFL_STATUS_INTERNAL = 11 /* a bug in bbvfl: please report it with the message */
} bbvfl_status;

#define BBVFL_ERROR_MESSAGE_SIZE 512

typedef struct {
  bbvfl_status code;                       /* the same value the function returned */
  char message[BBVFL_ERROR_MESSAGE_SIZE];  /* NUL-terminated, for people */
} bbvfl_error;

/* A short lowercase name of a status ("ok", "usage", "io", "parse", ...): a static string, never
 * NULL ("unknown" for a value outside the enum). */
BBVFL_API const char *bbvfl_status_name(bbvfl_status status);

/* Resets *err to BBVFL_STATUS_OK and an empty message. err may be NULL (nothing happens). */
BBVFL_API void bbvfl_error_clear(bbvfl_error *err);

#ifdef __cplusplus
}
#endif

#endif
