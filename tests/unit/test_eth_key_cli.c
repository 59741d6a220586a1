/* `bbvfl key new|address` ($BBVFL_BIN): the key file is created 0600, the printed address is the
 * key's, the key never appears in the output, existing files are not overwritten, and
 * group-readable key files are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_skip.h"

#include "eth/hex.h"
#include "eth/wallet.h"

/* Runs a shell command line, returns its exit status and its stdout+stderr in out. */
static int run(const char *cmd, char *out, size_t cap) {
  char full[2048];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  assert_non_null(p);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_key_cli(void **state) {
  (void)state;
  const char *bin = getenv("BBVFL_BIN");
  if (!bin || !*bin) {
    bbvfl_test_skip(BBVFL_SKIP_SETUP, "BBVFL_BIN is not set (run through ctest)");
  }
  char dir[] = "/tmp/bbvfl-test-keycli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256], cmd[1024], out[4096];
  snprintf(path, sizeof path, "%s/client.key", dir);
  snprintf(cmd, sizeof cmd, "'%s' key new --out '%s'", bin, path);
  assert_int_equal(run(cmd, out, sizeof out), 0);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  bbvfl_key k;
  assert_int_equal(bbvfl_key_load_file(path, &k, NULL), 0);
  char addr[43], keyhex[67];
  bbvfl_addr_checksum(k.addr, addr);
  bbvfl_hex_encode(k.priv, 32, keyhex);
  assert_non_null(strstr(out, addr));
  assert_null(strstr(out, keyhex + 2));
  /* no overwrite without --force */
  assert_int_equal(run(cmd, out, sizeof out), 2);
  assert_non_null(strstr(out, "already exists"));
  /* address from the file and from the environment */
  snprintf(cmd, sizeof cmd, "'%s' key address --key-file '%s' --json", bin, path);
  assert_int_equal(run(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, addr));
  assert_null(strstr(out, keyhex + 2));
  setenv("BBVFL_TEST_CLI_KEY", keyhex, 1);
  snprintf(cmd, sizeof cmd, "'%s' key address --key-env BBVFL_TEST_CLI_KEY", bin);
  assert_int_equal(run(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, addr));
  unsetenv("BBVFL_TEST_CLI_KEY");
  /* a group-readable file is refused */
  assert_int_equal(chmod(path, 0640), 0);
  snprintf(cmd, sizeof cmd, "'%s' key address --key-file '%s'", bin, path);
  assert_int_not_equal(run(cmd, out, sizeof out), 0);
  assert_non_null(strstr(out, "chmod 600"));
  /* neither or both sources */
  snprintf(cmd, sizeof cmd, "'%s' key address", bin);
  assert_int_equal(run(cmd, out, sizeof out), 2);
  unlink(path);
  rmdir(dir);
  bbvfl_key_wipe(&k);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_key_cli)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
