#!/usr/bin/env bash
# A whole on-chain session through tests/tools/faultproxy.py: three `bbvfl client` processes talk
# to anvil only through the proxy, which resets about 3 % of the connections, answers about 3 %
# with HTTP 503, delays about 2 % by 0.3 s, refuses eth_sendRawTransactionSync (so the clients
# send the ordinary way and poll for receipts) and swallows 3 eth_sendRawTransaction (answered with
# the right hash, never forwarded: "dropped from the pool"). Checked: the session completes (every
# client exits 0), every kind of fault was injected, every client's Submitted events are exactly
# one per round (no double submission: the contract would revert a second one), and bbvfl audit
# passes.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
proxy=""
extra_cleanup() { [ -n "$proxy" ] && kill "$proxy" 2>/dev/null && wait "$proxy" 2>/dev/null || true; }
session_test faults

"$BBVFL_BIN" deploy --rpc "$BBVFL_RPC_URL" --clients 3 --epochs 2 --seed 6 --out "$work/session.json" --json \
  >"$work/deploy.json" || fail "deploy"
contract=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract"])' "$work/deploy.json")
addrs=()
for m in 0 1 2; do
  addr=$("$BBVFL_BIN" key new --out "$work/k$m.key" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"])')
  addrs[$m]=$addr
  curl -sf -H 'content-type: application/json' -X POST "$BBVFL_RPC_URL" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"anvil_setBalance\",\"params\":[\"$addr\",\"0x56BC75E2D63100000\"]}" >/dev/null \
    || fail "funding $addr"
done

python3 "$BBVFL_SOURCE_DIR/tests/tools/faultproxy.py" --target "$BBVFL_RPC_URL" --port-file "$work/port" \
  --log "$work/proxy.log" --mode swallow --count 3 --skip 40 --no-sync --seed 9 \
  --mix reset=0.03,status=0.03,delay=0.02 --status 503 --delay 0.3 >/dev/null &
proxy=$!
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "faultproxy did not start"
purl="http://127.0.0.1:$(cat "$work/port")"

cols=("0-9" "10-19" "20-29")
for m in 0 1 2; do
  "$BBVFL_BIN" client --session "$work/session.json" --rpc "$purl" --key-file "$work/k$m.key" --columns "${cols[$m]}" \
    --labels --state-dir "$work/c$m" --seed 6 --party "$m" --round-timeout 120 >>"$work/c$m.out" 2>&1 &
  pids[$m]=$!
done
for m in 0 1 2; do
  wait "${pids[$m]}" || { tail -5 "$work/c$m.out" >&2; fail "client $m exited with an error"; }
done
pids=()
kill "$proxy" 2>/dev/null || true
wait "$proxy" 2>/dev/null || true
proxy=""

python3 - "$work/proxy.log" "$BBVFL_RPC_URL" "$contract" "$BBVFL_CAST" "${addrs[@]}" <<'PY'
import collections, json, subprocess, sys, urllib.request
log, url, contract, cast = sys.argv[1:5]
addrs = [a.lower() for a in sys.argv[5:]]
acts = collections.Counter(json.loads(l)["action"] for l in open(log))
print("proxy: %d requests: %s" % (sum(acts.values()), dict(acts)))
for a in ("reset", "status", "delay", "nosync"):
    assert acts[a] > 0, "no %s fault was injected" % a
assert acts["swallow"] == 3, acts
def rpc(method, params):
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 {"content-type": "application/json"})
    o = json.load(urllib.request.urlopen(req))
    assert "error" not in o, o
    return o["result"]
topic = subprocess.check_output([cast, "keccak", "0x" + b"Submitted(uint64,address,bytes32)".hex()], text=True).strip()
subs = rpc("eth_getLogs", [{"address": contract, "fromBlock": "0x0", "toBlock": "latest", "topics": [topic]}])
per = collections.Counter(("0x" + l["topics"][2][-40:], int(l["topics"][1], 16)) for l in subs)
assert max(per.values()) == 1, "a round was submitted twice"
rounds = sorted({r for _, r in per})
total = len(rounds)
assert rounds == list(range(total)), "a round is missing"
for a in addrs:
    n = sum(1 for (who, _) in per if who == a)
    assert n == total, (a, n, total)
print("every client submitted each of the %d rounds exactly once" % total)
PY
grep -hiE "re-sen|dropped|not known|swallow" "$work"/c*.out | head -5 | sed 's/^/  /' || true
set +e
"$BBVFL_BIN" audit --session "$work/session.json" --quiet >"$work/audit.txt" 2>&1
arc=$?
set -e
[ "$arc" = 0 ] || { cat "$work/audit.txt" >&2; fail "bbvfl audit exit $arc"; }
head -1 "$work/audit.txt"
echo ok
