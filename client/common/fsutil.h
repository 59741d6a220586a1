/* Small file-system helpers shared by every module. */
#ifndef BBVFL_COMMON_FSUTIL_H
#define BBVFL_COMMON_FSUTIL_H

#include <stddef.h>

#include "common/err.h"

/* Writes len bytes to path atomically: a temporary file in the same folder, fsync, rename.
 * Either the old content or the whole new content is there afterwards, never half of it. */
int bbvfl_write_file_atomic(const char *path, const void *data, size_t len, int mode,
                            bbvfl_err *err);

/* Reads a whole file. On success *out is a NUL-terminated heap buffer owned by the caller
 * (free()), *len its length without the NUL. Files larger than max_len are refused. */
int bbvfl_read_file(const char *path, size_t max_len, char **out, size_t *len, bbvfl_err *err);

/* mkdir -p; mode for created folders. */
int bbvfl_mkdirs(const char *path, int mode, bbvfl_err *err);

/* Monotonic clock in seconds. */
double bbvfl_now(void);

/* Sleeps for the given number of seconds (fractions allowed). */
void bbvfl_sleep(double seconds);

/* The current UTC time as a folder-name stamp, e.g. "20261125T095012Z" (run folders such as
 * runs/demo-<stamp>); out needs 17 bytes. */
void bbvfl_utc_stamp(char *out, size_t n);

#endif
