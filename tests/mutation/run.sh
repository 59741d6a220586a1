#!/usr/bin/env bash
# Mutation check: does the test suite notice small deliberate bugs?
#   tests/mutation/run.sh [NAME-REGEX]
# For each line of tests/mutation/mutations.tsv (or those whose name matches NAME-REGEX): applies
# the one change to a scratch copy of the tree (the tracked files, beside a link to ../shared),
# rebuilds incrementally, runs the tests the line names, and reports `caught` when at least one of
# them fails, `MISSED` when they all pass, `invalid` when the change does not apply or does not
# build. The working tree is never touched. Exit status 0 only when every mutation was caught.
# Not part of CI (a full run rebuilds and re-runs tests 25 times); its result goes in the notes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exec python3 "$root/tests/mutation/run.py" "$root" "$@"
