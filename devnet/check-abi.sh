#!/usr/bin/env bash
# Fails when abi/ does not match what contract/ compiles to (fix: cmake --build build --target abi),
# or when a _revert(Error.selector, ...) site does not match its error (devnet/check-revert-sites.mjs).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-abicheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$root/devnet/gen-abi.sh" "$tmp/abi"
if ! diff -r -q "$root/abi" "$tmp/abi"; then
  echo "abi/ is stale: it does not match contract/. Regenerate with: cmake --build build --target abi" >&2
  exit 1
fi
echo "abi/ matches contract/"
# the reverts through BbvflBase's _revert helper, which the compiler does not check
node "$root/devnet/check-revert-sites.mjs" "$root/contract/src" "$root/abi"
