#!/usr/bin/env bash
# `bbvfl bench floor` and devnet/bench-cast-send.sh against the test's anvil: they run, report
# the fields they promise, and refuse bad input. (No timing is asserted: speed is what the
# benchmark reports, not what a test checks.)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
errf=$(mktemp)
trap 'rm -f "$errf"' EXIT
out=$("$BBVFL_BIN" bench floor --rpc "$BBVFL_RPC_URL" --n 5 --warmup 1 --json)
python3 - "$out" <<'PY'
import json, sys
o = json.loads(sys.argv[1])
assert o["mode"] == "floor" and o["n"] == 5 and o["method"] == "eth_sendRawTransaction", o
for part in ("total", "send", "receipt"):
    s = o[part]
    assert 0 < s["min_ms"] <= s["median_ms"] <= s["p90_ms"] <= s["max_ms"], (part, s)
assert o["floor_ms"] == o["total"]["median_ms"], o
# the parts add up: send + receipt medians cannot exceed the total's maximum
assert o["send"]["min_ms"] + o["receipt"]["min_ms"] <= o["total"]["max_ms"] + 1e-9, o
PY
sj=$("$BBVFL_BIN" bench floor --rpc "$BBVFL_RPC_URL" --n 3 --warmup 0 --sync --json)
python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert o["method"]=="eth_sendRawTransactionSync" and "send" not in o and o["floor_ms"]==o["total"]["median_ms"]>0, o' "$sj"
human=$("$BBVFL_BIN" bench floor --rpc "$BBVFL_RPC_URL" --n 3 --warmup 0)
grep -q "total (the floor)" <<<"$human" || fail "human output: $human"
# bad input: clear errors, usage exit status
if "$BBVFL_BIN" bench floor --rpc "$BBVFL_RPC_URL" --n 0 2>"$errf"; then fail "--n 0 accepted"; fi
grep -q -- "--n must be" "$errf" || fail "no clear message for --n 0: $(cat "$errf")"
if "$BBVFL_BIN" bench floor --rpc ws://127.0.0.1:1 --n 1 2>"$errf"; then fail "ws URL accepted"; fi
grep -q "not a JSON-RPC URL" "$errf" || fail "no clear message for a ws URL: $(cat "$errf")"
set +e
"$BBVFL_BIN" bench floor --rpc http://127.0.0.1:1 --n 1 2>"$errf"; st=$?
"$BBVFL_BIN" bench nosuchmode 2>/dev/null; st2=$?
set -e
[ "$st" -ne 0 ] && grep -q "cannot reach" "$errf" || fail "unreachable node: status $st, $(cat "$errf")"
[ "$st2" -eq 2 ] || fail "unknown mode exit status $st2"
# the cast comparison script
cj=$("$BBVFL_SOURCE_DIR/devnet/bench-cast-send.sh" --rpc "$BBVFL_RPC_URL" --n 2 --json)
python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert o["n"]==2 and 0<o["min_ms"]<=o["median_ms"]<=o["p90_ms"], o' "$cj"
echo "ok"
