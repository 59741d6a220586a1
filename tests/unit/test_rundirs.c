/* common/rundirs.h from the build tree: the source tree's folders, each environment override in
 * its order of precedence (the installed layout is tested by tests/install/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rundirs.h"
#include "eth/deploy.h"
#include "ml/data.h"

static const char *const VARS[] = {"BBVFL_ABI_DIR", "BBVFL_DATA_DIR", "BBVFL_TOOLCHAIN_DIR", "BBVFL_SHARE_DIR"};

static int clear_env(void **st) {
  (void)st;
  for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++) unsetenv(VARS[i]);
  return 0;
}

/* the source tree as ctest names it (BBVFL_SOURCE_DIR), symlinks resolved, plus "/sub" */
static void source_path(char *out, size_t n, const char *sub) {
  const char *src = getenv("BBVFL_SOURCE_DIR");
  assert_non_null(src);
  char real[PATH_MAX];
  assert_non_null(realpath(src, real));
  snprintf(out, n, "%s/%s", real, sub);
}

static void test_build_tree(void **st) {
  (void)st;
  char want[PATH_MAX + 16];
  assert_int_equal(bbvfl_rundir_in_build_tree(), 1);
  assert_null(bbvfl_rundir_share());
  source_path(want, sizeof want, "abi");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_ABI), want);
  assert_string_equal(bbvfl_abi_dir(), want);
  source_path(want, sizeof want, "data");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_DATA), want);
  strcat(want, "/breast_cancer.csv");
  assert_string_equal(bbvfl_default_data_path(), want);
  source_path(want, sizeof want, "devnet");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_TOOLCHAIN), want);
}

static void test_overrides(void **st) {
  (void)st;
  char want[PATH_MAX + 16];
  /* an empty variable counts as unset */
  setenv("BBVFL_SHARE_DIR", "", 1);
  setenv("BBVFL_ABI_DIR", "", 1);
  source_path(want, sizeof want, "abi");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_ABI), want);
  assert_null(bbvfl_rundir_share());
  /* BBVFL_SHARE_DIR: abi/ and data/ beneath it; the toolchain is not part of share/bbvfl */
  setenv("BBVFL_SHARE_DIR", "/opt/x/share/bbvfl", 1);
  assert_string_equal(bbvfl_rundir_share(), "/opt/x/share/bbvfl");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_ABI), "/opt/x/share/bbvfl/abi");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_DATA), "/opt/x/share/bbvfl/data");
  source_path(want, sizeof want, "devnet");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_TOOLCHAIN), want);
  /* the folder's own variable wins over BBVFL_SHARE_DIR */
  setenv("BBVFL_ABI_DIR", "/a", 1);
  setenv("BBVFL_DATA_DIR", "/d", 1);
  setenv("BBVFL_TOOLCHAIN_DIR", "/t", 1);
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_ABI), "/a");
  assert_string_equal(bbvfl_abi_dir(), "/a");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_DATA), "/d");
  assert_string_equal(bbvfl_default_data_path(), "/d/breast_cancer.csv");
  assert_string_equal(bbvfl_rundir_path(BBVFL_RUNDIR_TOOLCHAIN), "/t");
  assert_int_equal(bbvfl_rundir_in_build_tree(), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_build_tree, clear_env, clear_env),
      cmocka_unit_test_setup_teardown(test_overrides, clear_env, clear_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
