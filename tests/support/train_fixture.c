#include "train_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_skip.h"

bbvfl_dataset bbvfl_test_ds;

int bbvfl_test_ds_setup(void **st) {
  (void)st;
  const char *src = getenv("BBVFL_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/breast_cancer.csv", src ? src : ".");
  bbvfl_err err = {0};
  if (bbvfl_csv_load(path, NULL, &bbvfl_test_ds, &err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  return 0;
}

int bbvfl_test_ds_teardown(void **st) {
  (void)st;
  bbvfl_dataset_free(&bbvfl_test_ds);
  return 0;
}

void bbvfl_test_train(const bbvfl_offchain_cfg *c, bbvfl_offchain_result *r) {
  bbvfl_err err = {0};
  int rc = bbvfl_offchain_train(&bbvfl_test_ds, c, r, &err);
  if (rc != 0) print_error("%s\n", err.msg);
  assert_int_equal(rc, 0);
}

const char *bbvfl_test_bin(void) {
  const char *bin = getenv("BBVFL_BIN");
  if (!bin) bbvfl_test_skip(BBVFL_SKIP_SETUP, "BBVFL_BIN is not set (run through ctest)");
  return bin;
}

json_t *bbvfl_test_run_json(const char *cmd) {
  FILE *f = popen(cmd, "r");
  assert_non_null(f);
  static char out[1 << 16];
  size_t n = fread(out, 1, sizeof out - 1, f);
  out[n] = '\0';
  assert_int_equal(pclose(f), 0);
  json_error_t je;
  json_t *o = json_loads(out, 0, &je);
  if (!o) fail_msg("%s printed no JSON (%s): %s", cmd, je.text, out);
  return o;
}

char *bbvfl_test_read_file(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot read %s", path);
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

void bbvfl_test_rm_run_dir(const char *dir) {
  const char *files[] = {"metrics.csv", "report.json", "err"};
  char path[4096];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
}
