#!/usr/bin/env bash
# Regenerates the contract artifacts: for every contract defined in contract/src/*.sol writes
# OUTDIR/<Contract>.json = {contractName, source, abi, bytecode, deployedBytecode}.
# Usage: devnet/gen-abi.sh [OUTDIR]   (default: abi/). Compiles with the pinned solc-js, offline.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
outdir=${1:-$root/abi}
cd "$root"
forge="$root/devnet/node_modules/.bin/forge"
[ -x "$forge" ] || { echo "gen-abi: forge not installed; run ./run.sh setup" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$forge" build --offline --use "$root/devnet/solc-wrapper" --skip test --out "$tmp/out" \
  --cache-path "$tmp/cache" >"$tmp/forge.log" 2>&1 || { cat "$tmp/forge.log" >&2; exit 1; }
mkdir -p "$tmp/abi"
node "$root/devnet/extract-abi.mjs" "$root/contract/src" "$tmp/out" "$tmp/abi"
mkdir -p "$outdir"
# replace atomically-ish: write new files, then drop stale ones
for f in "$tmp"/abi/*.json; do cp "$f" "$outdir/$(basename "$f").tmp" && mv "$outdir/$(basename "$f").tmp" "$outdir/$(basename "$f")"; done
for f in "$outdir"/*.json; do [ -e "$tmp/abi/$(basename "$f")" ] || rm -f "$f"; done
