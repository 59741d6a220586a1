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
session_deploy --clients 3 --epochs 2 --seed 6
session_keys 3

python3 "$BBVFL_SOURCE_DIR/tests/tools/faultproxy.py" --target "$BBVFL_RPC_URL" --port-file "$work/port" \
  --log "$work/proxy.log" --mode swallow --count 3 --skip 40 --no-sync --seed 9 \
  --mix reset=0.03,status=0.03,delay=0.02 --status 503 --delay 0.3 >/dev/null &
proxy=$!
wait_until 10 "faultproxy did not start" test -s "$work/port"
purl="http://127.0.0.1:$(cat "$work/port")"

cols=("0-9" "10-19" "20-29")
client_flags=(--rpc "$purl" --labels --seed 6 --round-timeout 120)
clients_start 3
wait_clients
kill "$proxy" 2>/dev/null || true
wait "$proxy" 2>/dev/null || true
proxy=""

python3 - "$work/proxy.log" "$contract" "${addrs[@]}" <<'PY'
import collections, json, os, sys
from bbvfl_chain import Chain, addr
log, contract = sys.argv[1:3]
addrs = [a.lower() for a in sys.argv[3:]]
acts = collections.Counter(json.loads(l)["action"] for l in open(log))
print("proxy: %d requests: %s" % (sum(acts.values()), dict(acts)))
for a in ("reset", "status", "delay", "nosync"):
    assert acts[a] > 0, "no %s fault was injected" % a
assert acts["swallow"] == 3, acts
subs = Chain(os.environ["BBVFL_RPC_URL"], contract).logs("Submitted(uint64,address,bytes32)")
per = collections.Counter((addr(l["topics"][2]), int(l["topics"][1], 16)) for l in subs)
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
audit_passes
echo ok
