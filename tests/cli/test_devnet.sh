#!/usr/bin/env bash
# bbvfl devnet up/status/down: answers JSON-RPC, stops by pid with no stray process, and with
# --persist resumes the chain with its history after a stop.
set -euo pipefail
: "${BBVFL_BIN:?}" "${BBVFL_CAST:?}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-devnet-test.XXXXXX")
trap '"$BBVFL_BIN" devnet down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
field() { sed -n "s/.*\"$1\": *\"\{0,1\}\([^\",}]*\).*/\1/p"; }

info=$("$BBVFL_BIN" devnet up --dir "$dir" --persist --json)
url=$(printf '%s' "$info" | field rpc_url)
pid=$(printf '%s' "$info" | field pid)
case "$url" in http://127.0.0.1:*) ;; *) fail "rpc_url not on loopback: $url" ;; esac
[ "$("$BBVFL_CAST" chain-id --rpc-url "$url")" = 31337 ] || fail "eth_chainId did not answer 31337"
"$BBVFL_BIN" devnet status --dir "$dir" >/dev/null || fail "status says not running"

# a second up on the same folder is refused while the first runs
if "$BBVFL_BIN" devnet up --dir "$dir" >/dev/null 2>&1; then fail "second up was not refused"; fi

# change the chain: a transfer from the first dev account (unlocked: no key on the command line)
from=0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266
to=0x000000000000000000000000000000000000bEEF
"$BBVFL_CAST" send --rpc-url "$url" --unlocked --from "$from" "$to" --value 12345 >/dev/null
blocks=$("$BBVFL_CAST" block-number --rpc-url "$url")
[ "$blocks" -ge 1 ] || fail "no block mined"

"$BBVFL_BIN" devnet down --dir "$dir" >/dev/null
if kill -0 "$pid" 2>/dev/null && [ -s "/proc/$pid/cmdline" ]; then fail "anvil pid $pid still alive after down"; fi
set +e; "$BBVFL_BIN" devnet status --dir "$dir" >/dev/null 2>&1; st=$?; set -e
[ $st -eq 3 ] || fail "status after down should exit 3 (none recorded), got $st"
[ -s "$dir/state.json" ] || fail "no state file written"

# resume: same history
info=$("$BBVFL_BIN" devnet up --dir "$dir" --persist --json)
url=$(printf '%s' "$info" | field rpc_url)
bal=$("$BBVFL_CAST" balance --rpc-url "$url" "$to")
[ "$bal" = 12345 ] || fail "state not resumed: balance $bal"
b2=$("$BBVFL_CAST" block-number --rpc-url "$url")
[ "$b2" -ge "$blocks" ] || fail "block number went back: $b2 < $blocks"
"$BBVFL_BIN" devnet down --dir "$dir" >/dev/null
echo "devnet up/status/down/resume: ok"
