#include "test_skip.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int g_skipped;

void bbvfl_test_skip(bbvfl_skip_kind kind, const char *why) {
  const char *req = getenv("BBVFL_REQUIRE_SETUP");
  if (kind == BBVFL_SKIP_SETUP && req && strcmp(req, "1") == 0)
    fail_msg("required by the set-up (BBVFL_REQUIRE_SETUP=1), missing: %s", why);
  print_message("SKIP: %s\n", why);
  g_skipped++;
  skip();
}

int bbvfl_test_exit(int failed) {
  if (failed) return failed;
  return g_skipped ? BBVFL_TEST_SKIP_CODE : 0;
}
