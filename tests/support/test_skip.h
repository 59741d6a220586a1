/* Test helper: skips that ctest can see.
 *
 * A cmocka skip() alone leaves the process exit status 0, which ctest reports as "Passed". Tests
 * that can skip call bbvfl_test_skip() instead, and return bbvfl_test_exit(...) from main: the
 * process then exits with BBVFL_TEST_SKIP_CODE (77, the SKIP_RETURN_CODE tests/CMakeLists.txt
 * sets on every test) when something was skipped and nothing failed, and ctest reports the test
 * as skipped with the printed reason.
 *
 * Skips come in two kinds:
 *  - BBVFL_SKIP_SETUP: something the project's set-up provides is missing (a package, a file, a
 *    binary, an environment variable ctest sets). Under BBVFL_REQUIRE_SETUP=1 (`./run.sh test`,
 *    hence CI) this is a test failure, not a skip: CI never passes a test that did not run.
 *  - BBVFL_SKIP_MACHINE: the machine itself forbids the case (no permission to mount a tmpfs, say);
 *    always a reported skip.
 * Shell tests follow the same rules through tests/support/skip.sh. */
#ifndef BBVFL_TEST_SKIP_H
#define BBVFL_TEST_SKIP_H

#define BBVFL_TEST_SKIP_CODE 77

typedef enum { BBVFL_SKIP_SETUP = 0, BBVFL_SKIP_MACHINE = 1 } bbvfl_skip_kind;

/* For use inside a cmocka test: prints "SKIP: <why>" and skips the current test, or fails it
 * ("required by the set-up: <why>") for a BBVFL_SKIP_SETUP skip under BBVFL_REQUIRE_SETUP=1.
 * Does not return. `why` is copied before use. */
void bbvfl_test_skip(bbvfl_skip_kind kind, const char *why);

/* The process exit status for cmocka_run_group_tests' result `failed`: `failed` when non-zero,
 * else BBVFL_TEST_SKIP_CODE when bbvfl_test_skip skipped a test in this process, else 0. */
int bbvfl_test_exit(int failed);

#endif
