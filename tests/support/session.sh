# Sourced by the multi-process shell tests: fail(), the test's work folder and the clean-up of the
# processes it starts.
#   session_test NAME  creates $work (a new folder bbvfl-NAME.XXXXXX under TMPDIR) and an empty
#                      pids array, and installs an EXIT trap that runs extra_cleanup (when the test
#                      defines it), SIGKILLs every process in pids and removes $work (kept, and
#                      named on stderr, when BBVFL_KEEP_TEST_DIR is set).
fail() { echo "FAIL: $*" >&2; exit 1; }

session_cleanup() {
  if declare -F extra_cleanup >/dev/null; then extra_cleanup; fi
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [ -n "${BBVFL_KEEP_TEST_DIR:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}

session_test() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-$1.XXXXXX")
  pids=()
  trap session_cleanup EXIT
  export OPENBLAS_NUM_THREADS=1
}
