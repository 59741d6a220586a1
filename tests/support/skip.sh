# Sourced by shell tests: skips that ctest can see (the rules of tests/support/test_skip.h).
#   bbvfl_skip_setup WHY    something the set-up provides is missing: a failure under
#                           BBVFL_REQUIRE_SETUP=1 (./run.sh test, CI), else a recorded skip
#   bbvfl_skip_machine WHY  the machine forbids the case (e.g. no permission to mount a tmpfs):
#                           always a recorded skip
#   bbvfl_skip_exit         at the very end of a test that passed: exit 77 (ctest's
#                           SKIP_RETURN_CODE) when some part was skipped, with the reasons
BBVFL_SKIPPED=()
bbvfl_skip_setup() {
  if [ "${BBVFL_REQUIRE_SETUP:-}" = 1 ]; then
    echo "FAIL: required by the set-up (BBVFL_REQUIRE_SETUP=1), missing: $*" >&2
    exit 1
  fi
  echo "SKIP: $*"
  BBVFL_SKIPPED+=("$*")
}
bbvfl_skip_machine() {
  echo "SKIP: $*"
  BBVFL_SKIPPED+=("$*")
}
bbvfl_skip_exit() {
  if [ ${#BBVFL_SKIPPED[@]} -gt 0 ]; then
    printf 'skipped part(s): %s\n' "${BBVFL_SKIPPED[@]}"
    exit 77
  fi
}
