/* onchain/statedir.h: a client's state dir belongs to one session (chain id + aggregator).
 *  - a missing or empty state dir is fresh; bind writes the binding (0600) and a second bind
 *    leaves it alone; the same session then passes, with its secrets and checkpoints 0600;
 *  - another chain id or another aggregator in the binding: refused, the message naming the state
 *    dir, the session it belongs to, and what to do;
 *  - secrets without a binding (an older bbvfl's state dir, or a copied secret): refused;
 *  - each secret file and checkpoint with a group or other mode bit: refused, naming the file, its
 *    mode and chmod 600;
 *  - progress.ckpt naming another aggregator behind this session's binding: refused;
 *  - a binding that is not one: a parse error.
 * The client calls the check before anything is sent: tests/integration/test_state_dir_session.sh
 * shows that on a devnet (the account's nonce does not move). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fsutil.h"
#include "core/ckpt.h"
#include "onchain/statedir.h"

static const uint64_t CHAIN = 31337;
static const uint8_t A[20] = {0x5f, 0xbd, 0xb2, 0x31, 0x56, 0x78, 0xaf, 0xec, 0xb3, 0x67,
                              0xf0, 0x32, 0xd9, 0x3f, 0x64, 0x2f, 0x64, 0x18, 0x0a, 0xa3};

typedef struct {
  char dir[200];
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  const char *tmp = getenv("TMPDIR");
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "%s/bbvfl-test-statedir-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(f->dir)) {
    free(f);
    return -1;
  }
  *state = f;
  return 0;
}

/* the state dir holds files only */
static int teardown(void **state) {
  fx *f = *state;
  DIR *d = opendir(f->dir);
  int rc = d ? 0 : -1;
  for (struct dirent *e; d && (e = readdir(d));) {
    char p[512];
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(p, sizeof p, "%s/%s", f->dir, e->d_name);
    if (unlink(p) != 0) rc = -1;
  }
  if (d) closedir(d);
  if (rmdir(f->dir) != 0) rc = -1;
  free(f);
  return rc;
}

static void put(const fx *f, const char *name, const char *text, int mode) {
  char p[300];
  bbvfl_err err = {0};
  snprintf(p, sizeof p, "%s/%s", f->dir, name);
  assert_int_equal(bbvfl_write_file_atomic(p, text, strlen(text), mode, &err), 0);
  assert_int_equal(chmod(p, (mode_t)mode), 0); /* whatever the umask */
}

/* progress.ckpt as onchain_ckpt.c writes it: the aggregator first */
static void put_progress(const fx *f, const uint8_t addr[20]) {
  char p[300];
  bbvfl_err err = {0};
  snprintf(p, sizeof p, "%s/progress.ckpt", f->dir);
  bbvfl_ckpt k = {0};
  bbvfl_ckpt_put_bytes(&k, addr, 20);
  uint8_t S[32] = {1};
  bbvfl_ckpt_put_bytes(&k, S, 32);
  bbvfl_ckpt_put_u64(&k, 7);
  assert_int_equal(bbvfl_ckpt_save(&k, p, BBVFL_STATEDIR_PROGRESS_KIND, &err), 0);
  bbvfl_ckpt_free(&k);
}

static void expect_refused(const fx *f, uint64_t chain, const uint8_t addr[20], bbvfl_errcode code,
                           const char *const *words) {
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_statedir_check(f->dir, chain, addr, &err), -1);
  assert_int_equal(err.code, code);
  for (; *words; words++)
    if (!strstr(err.msg, *words)) fail_msg("'%s' missing from: %s", *words, err.msg);
  print_message("refused: %s\n", err.msg);
}

static void test_fresh_and_bound(void **state) {
  fx *f = *state;
  bbvfl_err err = {0};
  char missing[300], p[300];
  snprintf(missing, sizeof missing, "%s/not-yet", f->dir);
  assert_int_equal(bbvfl_statedir_check(missing, CHAIN, A, &err), 0);
  assert_int_equal(bbvfl_statedir_check(f->dir, CHAIN, A, &err), 0);
  put(f, "summary.json", "{}", 0644); /* not a secret: no binding needed, any mode */
  assert_int_equal(bbvfl_statedir_check(f->dir, CHAIN, A, &err), 0);
  assert_int_equal(bbvfl_statedir_bind(f->dir, CHAIN, A, &err), 0);
  snprintf(p, sizeof p, "%s/%s", f->dir, BBVFL_STATEDIR_BINDING);
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  char *text = NULL;
  size_t len = 0;
  assert_int_equal(bbvfl_read_file(p, 4096, &text, &len, &err), 0);
  assert_non_null(strstr(text, "\"chain_id\": 31337"));
  assert_non_null(strstr(text, "0x5FbDB2315678afecb367f032d93F642f64180aa3")); /* EIP-55 */
  free(text);
  /* a second bind (a restart) keeps the binding */
  assert_int_equal(bbvfl_statedir_bind(f->dir, CHAIN, A, &err), 0);
  put(f, "noise.key", "00\n", 0600);
  put(f, "election-secret.hex", "00\n", 0600);
  put(f, "party-0.ckpt", "x", 0600);
  put(f, "head-1.ckpt", "x", 0600);
  put_progress(f, A);
  assert_int_equal(bbvfl_statedir_check(f->dir, CHAIN, A, &err), 0);
}

static void test_another_session(void **state) {
  fx *f = *state;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_statedir_bind(f->dir, CHAIN, A, &err), 0);
  put(f, "noise.key", "00\n", 0600);
  uint8_t other[20];
  memcpy(other, A, 20);
  other[19] ^= 1;
  expect_refused(f, CHAIN, other, BBVFL_E_STATE,
                 (const char *[]){f->dir, "belongs to another session", "chain id 31337",
                                  "aggregator 0x5FbDB2315678afecb367f032d93F642f64180aa3", "fresh --state-dir", "delete",
                                  NULL});
  expect_refused(f, 1, A, BBVFL_E_STATE,
                 (const char *[]){f->dir, "belongs to another session", "chain id 31337", "not to this one (chain id 1",
                                  NULL});
  /* a binding, even without a secret yet, names its session */
  char p[300];
  snprintf(p, sizeof p, "%s/noise.key", f->dir);
  assert_int_equal(unlink(p), 0);
  expect_refused(f, CHAIN, other, BBVFL_E_STATE, (const char *[]){"belongs to another session", NULL});
}

static void test_secret_without_binding(void **state) {
  fx *f = *state;
  put(f, "election-secret.hex", "00\n", 0600);
  expect_refused(f, CHAIN, A, BBVFL_E_STATE,
                 (const char *[]){f->dir, "election-secret.hex", BBVFL_STATEDIR_BINDING, "fresh --state-dir", NULL});
}

static void test_modes(void **state) {
  fx *f = *state;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_statedir_bind(f->dir, CHAIN, A, &err), 0);
  static const char *const names[] = {"noise.key",    "election-secret.hex", "progress.ckpt", "party-0.ckpt",
                                      "party-1.ckpt", "head-0.ckpt",         "head-1.ckpt"};
  static const int modes[] = {0644, 0640, 0604, 0620, 0602, 0660, 0700 | 010};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char p[300], mode[8];
    snprintf(p, sizeof p, "%s/%s", f->dir, names[i]);
    if (!strcmp(names[i], "progress.ckpt")) put_progress(f, A);
    else put(f, names[i], "00\n", 0600);
    assert_int_equal(bbvfl_statedir_check(f->dir, CHAIN, A, &err), 0);
    assert_int_equal(chmod(p, (mode_t)modes[i]), 0);
    snprintf(mode, sizeof mode, "%04o", modes[i]);
    expect_refused(f, CHAIN, A, BBVFL_E_STATE, (const char *[]){p, mode, "open to group or others", "chmod 600", NULL});
    assert_int_equal(chmod(p, 0600), 0);
    assert_int_equal(bbvfl_statedir_check(f->dir, CHAIN, A, &err), 0);
  }
}

static void test_progress_of_another_aggregator(void **state) {
  fx *f = *state;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_statedir_bind(f->dir, CHAIN, A, &err), 0);
  uint8_t other[20] = {0xaa};
  put_progress(f, other);
  expect_refused(f, CHAIN, A, BBVFL_E_STATE,
                 (const char *[]){"progress.ckpt belongs to another session", "fresh --state-dir", NULL});
}

static void test_bad_binding(void **state) {
  fx *f = *state;
  put(f, BBVFL_STATEDIR_BINDING, "{\"chain_id\": 31337}\n", 0600);
  expect_refused(f, CHAIN, A, BBVFL_E_PARSE, (const char *[]){BBVFL_STATEDIR_BINDING, "\"contract\"", NULL});
  put(f, BBVFL_STATEDIR_BINDING, "{\"chain_id\": 31337, \"contract\": \"0x12\"}\n", 0600);
  expect_refused(f, CHAIN, A, BBVFL_E_PARSE, (const char *[]){BBVFL_STATEDIR_BINDING, NULL});
  put(f, BBVFL_STATEDIR_BINDING, "not json", 0600);
  expect_refused(f, CHAIN, A, BBVFL_E_PARSE, (const char *[]){"is not a session binding", NULL});
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_fresh_and_bound, setup, teardown),
      cmocka_unit_test_setup_teardown(test_another_session, setup, teardown),
      cmocka_unit_test_setup_teardown(test_secret_without_binding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_progress_of_another_aggregator, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_binding, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
