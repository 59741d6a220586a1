/* Test helper: the one set-up of the unit tests that train on the Breast Cancer table and run the
 * `bbvfl train` command (test_vfl_train.c, test_vfl_window.c). The helpers fail the current cmocka
 * test on any error.
 *
 * bbvfl_test_ds is the table $BBVFL_SOURCE_DIR/data/breast_cancer.csv (./data/ without
 * BBVFL_SOURCE_DIR), loaded by bbvfl_test_ds_setup and freed by bbvfl_test_ds_teardown: a cmocka
 * group set-up and tear-down pair (setup returns -1, with the loader's message on stderr, when the
 * file does not load). */
#ifndef BBVFL_TEST_TRAIN_FIXTURE_H
#define BBVFL_TEST_TRAIN_FIXTURE_H

#include <stddef.h>

#include <jansson.h>

#include "ml/data.h"
#include "offchain/offchain.h"

extern bbvfl_dataset bbvfl_test_ds;
int bbvfl_test_ds_setup(void **st);
int bbvfl_test_ds_teardown(void **st);

/* bbvfl_offchain_train on bbvfl_test_ds; fails the test (with the error) unless it succeeds. The
 * caller frees *r (bbvfl_offchain_result_free). */
void bbvfl_test_train(const bbvfl_offchain_cfg *c, bbvfl_offchain_result *r);

/* The bbvfl binary (BBVFL_BIN, which ctest sets); skips the test (BBVFL_SKIP_SETUP) without it. */
const char *bbvfl_test_bin(void);

/* Runs the shell command cmd, asserts it exits 0 and that its stdout is one JSON document, and
 * returns that (caller json_decref()s). */
json_t *bbvfl_test_run_json(const char *cmd);

/* The file's first cap - 1 bytes into buf, NUL-terminated; fails the test when it cannot be read.
 * Returns buf. */
char *bbvfl_test_read_file(const char *path, char *buf, size_t cap);

/* Removes a `bbvfl train --out DIR` run folder: its metrics.csv, report.json and err files, then
 * the (then empty) folder. */
void bbvfl_test_rm_run_dir(const char *dir);

#endif
