/* The public API's implementation layer (client/api/): the definitions of the opaque handles of
 * include/bbvfl/ and the conversion of the library's errors to the public ones. Private: never
 * installed, included only by the client/api sources and the library's own tests.
 *
 * Layering: api -> vfl -> ml -> dp -> common. The api files hold no logic of their own beyond
 * checking arguments and translating types: training is offchain/offchain.h, the CSV loader ml/data.h,
 * the accountant dp/privacy.h. */
#ifndef BBVFL_API_INT_H
#define BBVFL_API_INT_H

#include <stdint.h>

#include "bbvfl/bbvfl.h"
#include "common/err.h"
#include "ml/data.h"
#include "offchain/offchain.h"

struct bbvfl_table {
  bbvfl_dataset ds; /* owned */
};

struct bbvfl_config {
  bbvfl_offchain_cfg off; /* callbacks and session_seed unset; off.partition points at partition */
  char *partition;        /* owned, NULL: even split */
  double delta;
  int seeded;             /* 1: off.seed was set by bbvfl_config_set_seed */
};

struct bbvfl_run {
  struct bbvfl_config cfg;   /* a deep copy of the configuration trained with */
  bbvfl_offchain_result res; /* owned */
  uint64_t seed;             /* the seed used */
  int repeatable;            /* 1: the noise came from the seed */
};

/* The public status of a library error code (an unknown one: BBVFL_STATUS_INTERNAL). */
bbvfl_status bbvfl_api_status(bbvfl_errcode code);
/* Copies a library error into out (nullable) and returns its public status. */
bbvfl_status bbvfl_api_from(const bbvfl_err *in, bbvfl_error *out);
/* Fills out (nullable) with status and a printf-style message; returns status. */
bbvfl_status bbvfl_api_fail(bbvfl_error *out, bbvfl_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Deep copy of a config into dst (partition string duplicated). -1 when out of memory. */
int bbvfl_api_config_copy(struct bbvfl_config *dst, const struct bbvfl_config *src);

#endif
