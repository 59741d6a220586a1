#!/usr/bin/env bash
# Runs one integration test against its own fresh anvil:
#   tests/with-devnet.sh BBVFL_BINARY TEST_COMMAND [ARGS...]
# Starts `bbvfl devnet up` on a free loopback port in a temporary run folder, exports
# BBVFL_RPC_URL, BBVFL_DEVNET_DIR and BBVFL_CHAIN_ID, runs the test, and always stops the devnet
# by its recorded pid (also when the test fails or is interrupted).
set -uo pipefail
bbvfl=$1; shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-test-devnet.XXXXXX")
cleanup() {
  "$bbvfl" devnet down --dir "$dir" >/dev/null 2>&1 || true
  if [ -n "${BBVFL_KEEP_TEST_DIR:-}" ]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
info=$("$bbvfl" devnet up --dir "$dir" --json) || { echo "with-devnet: could not start anvil" >&2; cat "$dir/anvil.log" >&2 2>/dev/null; exit 1; }
export BBVFL_DEVNET_DIR="$dir"
BBVFL_RPC_URL=$(printf '%s' "$info" | sed -n 's/.*"rpc_url": *"\([^"]*\)".*/\1/p')
BBVFL_CHAIN_ID=$(printf '%s' "$info" | sed -n 's/.*"chain_id": *\([0-9]*\).*/\1/p')
export BBVFL_RPC_URL BBVFL_CHAIN_ID
"$@"
