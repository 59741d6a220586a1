#!/usr/bin/env bash
# bbvfl: one entry point for set-up, the main job and the tests.
#
#   ./run.sh setup          install Debian packages + the pinned node toolchain, build (idempotent)
#   ./run.sh demo [ARGS]    setup, then `bbvfl demo ARGS` (embedded devnet, bundled data)
#   ./run.sh test           setup, then every test: unit + integration (normal and ASan/UBSan
#                           builds), the Foundry contract tests and the abi/ freshness check
#                           (all but the chaos and slow suites)
#   ./run.sh slow           setup, then the slow suite (ctest -L slow: gas per coordinate from
#                           receipts of whole cast-driven sessions, about 8-15 minutes)
#   ./run.sh chaos          setup, then the chaos suite (ctest -L chaos, one case at a time: faults
#                           injected into live 1 s-block sessions, about 10 minutes) and its table
#
# Every step is idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$root"

APT_PACKAGES=(build-essential cmake pkg-config libsecp256k1-dev libsodium-dev libcurl4-openssl-dev libjansson-dev libssl-dev
              libopenblas-dev libcmocka-dev python3-sklearn gnuplot-nox valgrind nodejs npm
              chromium clang)
JOBS=${BBVFL_JOBS:-$(nproc 2>/dev/null || echo 2)}

log() { printf '[run.sh] %s\n' "$*" >&2; }

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then echo sudo; else
      log "installing Debian packages needs root (or sudo): missing: $*"; exit 1; fi
  fi
}

setup_apt() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    # node/npm may come from elsewhere (e.g. a newer nodejs); accept any working binary
    case "$p" in
      nodejs) command -v node >/dev/null 2>&1 && continue ;;
      npm) command -v npm >/dev/null 2>&1 && continue ;;
    esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then log "Debian packages: all present"; return; fi
  local sudo; sudo=$(need_root "${missing[@]}")
  log "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

setup_npm() {
  local stamp=devnet/node_modules/.bbvfl-lock-stamp
  if [ -f "$stamp" ] && cmp -s devnet/package-lock.json "$stamp"; then
    log "node toolchain: up to date"
  else
    log "installing the pinned node toolchain (devnet/package-lock.json)"
    # --ignore-scripts: the Foundry packages' postinstall would try to download binaries; the
    # platform packages they depend on already carry them. `npm install` rather than `npm ci`:
    # the lock file lists only the platform packages the registry serves (linux builds), which
    # `npm ci` rejects as out of sync; `npm install` follows the lock exactly all the same.
    (cd devnet && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp devnet/package-lock.json "$stamp"
  fi
}

build_one() { # dir, extra cmake args...
  local dir=$1; shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "$@" >/dev/null
  fi
  cmake --build "$dir" -j "$JOBS"
}

setup_build() {
  log "building (build/ and the sanitizer build build-asan/)"
  build_one build -DCMAKE_BUILD_TYPE=RelWithDebInfo
  build_one build-asan -DCMAKE_BUILD_TYPE=Debug -DBBVFL_SANITIZE=ON
}

setup() { setup_apt; setup_npm; setup_build; }

# A test that is killed (e.g. by ctest's timeout) cannot run its own clean-up: stop any devnet
# it left behind, by the pid recorded in its devnet.json, and say so.
stop_stray_devnets() {
  local f
  while IFS= read -r f; do
    log "a test left a devnet running in $(dirname "$f"): stopping it by its recorded pid"
    build/bbvfl devnet down --dir "$(dirname "$f")" >/dev/null 2>&1 || true
  done < <(find "$1" -name devnet.json 2>/dev/null)
}

# The other build types CI must keep clean (warnings are errors in every one): gcc Release and the
# default build with clang. A build only: the tests run on build/ and build-asan/.
build_others() {
  log "building: gcc Release (build-release/) and clang (build-clang/), warnings as errors"
  build_one build-release -DCMAKE_BUILD_TYPE=Release
  CC=clang build_one build-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo
}

# One ctest pass: ctest_in DIR TMP ARGS... runs `ctest --output-on-failure ARGS` in DIR with every
# temporary file (and devnet) of its tests under TMP, then stops any devnet a killed test left
# there. Returns ctest's verdict (0 or 1).
ctest_in() {
  local dir=$1 tmp=$2 rc=0
  shift 2
  # shellcheck disable=SC2086 # BBVFL_CTEST_ARGS is a list of ctest arguments
  (cd "$dir" && TMPDIR="$tmp" ctest --output-on-failure "$@" ${BBVFL_CTEST_ARGS:-}) || rc=1
  stop_stray_devnets "$tmp"
  return $rc
}

# verdict RC WHAT: the last line of a suite, and its exit status.
verdict() {
  if [ "$1" -ne 0 ]; then log "SOME $2 FAILED"; else log "all $2 passed"; fi
  return "$1"
}

run_tests() {
  export OPENBLAS_NUM_THREADS=1
  # a test that skips for something the set-up provides (a package, a file, a binary) fails here
  export BBVFL_REQUIRE_SETUP=1
  local rc=0 tmp
  build_others
  # every test's temporary files (and devnets) live under one folder of this run
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-tests.XXXXXX")
  log "tests: normal build"
  ctest_in build "$tmp" -j "$JOBS" -LE 'chaos|slow' || rc=1
  log "tests: ASan + UBSan build (unit and integration; contract tests and the noasan sessions run once above)"
  ctest_in build-asan "$tmp" -j "$JOBS" -LE 'contract|chaos|slow|noasan' || rc=1
  rm -rf "$tmp"
  verdict $rc TESTS
}

# The chaos suite alone, one case at a time (each case measures its session's extra blocks and wall
# time against the baseline case: running them side by side would measure the contention), then
# the table of its results (tests/chaos/README.md).
run_chaos() {
  export OPENBLAS_NUM_THREADS=1
  local rc=0 tmp results="$root/build/chaos-results"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-chaos.XXXXXX")
  rm -rf "$results"; mkdir -p "$results"
  BBVFL_CHAOS_RESULTS="$results" ctest_in build "$tmp" -j 1 -L chaos || rc=1
  rm -rf "$tmp"
  python3 tests/chaos/chaos.py summary "$results" | tee "$results/SUMMARY.md"
  verdict $rc "CHAOS CASES"
}

# The slow suite: tests too long for ./run.sh test's 30-minute budget that no code path of the
# client needs under the sanitizer (normal build only).
run_slow() {
  export OPENBLAS_NUM_THREADS=1 BBVFL_REQUIRE_SETUP=1
  local rc=0 tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-slow.XXXXXX")
  ctest_in build "$tmp" -j "$JOBS" -L slow || rc=1
  rm -rf "$tmp"
  verdict $rc "SLOW TESTS"
}

cmd=${1:-help}; shift || true
case "$cmd" in
  setup) setup ;;
  demo) setup; exec build/bbvfl demo "$@" ;;
  test) setup; run_tests ;;
  chaos) setup; run_chaos ;;
  slow) setup; run_slow ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
