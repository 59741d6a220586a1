#!/usr/bin/env bash
# Fails when abi/ does not match what contract/ compiles to. Fix: cmake --build build --target abi
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
