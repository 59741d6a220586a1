#!/usr/bin/env bash
# Stress runner for the multi-process tests: runs each one N times, two copies side by side, with a
# CPU-burning process in the background (a loaded machine), and prints the pass count per test.
#   tests/stress.sh N [REGEX] [--build DIR] [--keep DIR]
#     N        rounds per test (each round runs two copies at once: 2N runs per test)
#     REGEX    only the tests whose ctest name matches (default: every multi-process test)
#     --build  the build folder whose tests run (default: build; build-asan for the sanitizer build)
#     --keep   where the logs of failed runs are kept (default: a new folder under /tmp)
# The multi-process tests are the integration shell tests (label integration, name *_sh: each
# starts a devnet and several client processes) and the CLI devnet restart test. Each run is the
# test's own ctest command and environment (read from `ctest --show-only=json-v1`), run directly
# so the copies do not share ctest's files. Exit status 0 only when every run passed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec python3 "$root/tests/tools/stress.py" "$root" "$@"
