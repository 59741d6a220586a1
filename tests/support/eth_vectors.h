/* Test helper: loads one of the ethers.js vector files (gzipped JSON) from
 * $BBVFL_SHARED_DIR/vectors/<file>.
 * Returns 1 with *out a new jansson reference (the caller json_decref's it); 0 when the folder is
 * absent (the test should skip: *why says why); -1 when the file is there but unreadable (the
 * test should fail: *why says why). *why points to static storage. */
#ifndef BBVFL_TEST_ETH_VECTORS_H
#define BBVFL_TEST_ETH_VECTORS_H

#include <jansson.h>

int bbvfl_test_vectors(const char *file, json_t **out, const char **why);

/* For use inside a cmocka test: loads <file> as above and returns the new reference (the caller
 * json_decref's it); when the folder is absent it prints "SKIP: <why>" and skips the test, when
 * the file is unreadable it fails the test (neither returns). */
json_t *bbvfl_test_vectors_or_skip(const char *file);

/* Runs the cast binary ($BBVFL_CAST) with argv (NULL-terminated, argv[0] is the first argument
 * after "cast") and returns its trimmed stdout in a malloc'd string (caller frees), or NULL if it
 * failed (then *why says why). No shell is involved. */
char *bbvfl_test_run_cast(const char *const *args, const char **why);

#endif
