#!/usr/bin/env bash
# Stress runner for the multi-process tests: runs each one N times, two copies side by side, with a
# CPU-burning process in the background (a loaded machine), and prints the pass count per test.
#   tests/stress.sh N [REGEX] [--build DIR] [--keep DIR]
#     N        runs per test, two at a time (an odd N runs its last one alone)
#     REGEX    the tests whose ctest name matches, multi-process or not (default: every multi-process test)
#     --build  the build folder whose tests run (default: build; build-asan for the sanitizer build)
#     --keep   where the logs of failed runs are kept (default: a new folder under /tmp)
# The multi-process tests are those labelled multiprocess in tests/CMakeLists.txt (several bbvfl
# processes on one chain at once, or a client the test freezes, kills or restarts mid-session;
# `ctest -L multiprocess` lists them). Each run is the test's own ctest command and environment
# (read from `ctest --show-only=json-v1`), run directly
# so the copies do not share ctest's files. Exit status 0 only when every run passed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec python3 "$root/tests/tools/stress.py" "$root" "$@"
