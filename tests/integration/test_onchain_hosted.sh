#!/usr/bin/env bash
# A whole on-chain session the way a hosted node serves it, with a key kept as a real user keeps
# it: three `bbvfl client` processes talk to anvil through tests/tools/faultproxy.py, which caps
# eth_getLogs at 500 blocks and 1,000 results (answering a JSON-RPC error as hosted nodes do) and
# answers about 1 % of the requests HTTP 429 without Retry-After and 0.2 % with "Retry-After: 1";
# 1,200 empty blocks mined after the deployment make the clients' queries from the deployment span
# more than the cap. Each client is given two endpoints, the first one dead (the flag repeated:
# --rpc DEAD --rpc PROXY; the comma list is test_faultproxy.c's): it fails over at its first
# request. Client 2's key is an encrypted keystore made by the pinned `cast wallet new` (its address
# checked against `cast wallet address` and `bbvfl key address`). Checked: every client exits 0, the range cap refused queries and 429s
# were answered, every client fell over to the proxy, the keystore client registered under the
# cast address, and bbvfl audit passes, also through the proxy.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_CAST:?}"
proxy=""
extra_cleanup() { [ -n "$proxy" ] && kill "$proxy" 2>/dev/null && wait "$proxy" 2>/dev/null || true; }
session_test hosted
session_deploy --clients 3 --epochs 2 --seed 5
session_keys 2
pw="hosted node $$"
"$BBVFL_CAST" wallet new "$work" k2.keystore --unsafe-password "$pw" >/dev/null || fail "cast wallet new"
printf '%s\n' "$pw" >"$work/k2.pw"
chmod 600 "$work/k2.pw"
addrs[2]=$("$BBVFL_CAST" wallet address --keystore "$work/k2.keystore" --password "$pw")
ours=$("$BBVFL_BIN" key address --keystore "$work/k2.keystore" --password-file "$work/k2.pw")
[ "$ours" = "${addrs[2]}" ] || fail "bbvfl reads the cast keystore as $ours, cast as ${addrs[2]}"
fund "${addrs[2]}"
rpc anvil_mine '["0x4b0"]' >/dev/null

python3 "$BBVFL_SOURCE_DIR/tests/tools/faultproxy.py" --target "$BBVFL_RPC_URL" --port-file "$work/port" \
  --log "$work/proxy.log" --logs-max-range 500 --logs-max-results 1000 --seed 4 \
  --mix ratelimit=0.01,ratelimit_ra=0.002 --retry-after 1 >/dev/null &
proxy=$!
wait_until 10 "faultproxy did not start" test -s "$work/port"
purl="http://127.0.0.1:$(cat "$work/port")"

cols=("0-9" "10-19" "20-29")
client_flags=(--rpc http://127.0.0.1:1 --rpc "$purl" --labels --seed 5 --round-timeout 120)
t0=$(date +%s.%N)
clients_start 3
wait_clients
t1=$(date +%s.%N)
for m in 0 1 2; do
  grep -q "switching to $purl" "$work/c$m.out" || { cat "$work/c$m.out" >&2; fail "client $m did not fail over to the proxy"; }
done
audit_passes --rpc "$purl"
kill "$proxy" 2>/dev/null || true
wait "$proxy" 2>/dev/null || true
proxy=""

python3 - "$work/proxy.log" "$contract" "${addrs[2]}" "$t0" "$t1" <<'PY'
import collections, json, os, sys
from bbvfl_chain import Chain, addr
log, contract, ks_addr, t0, t1 = sys.argv[1:6]
acts = collections.Counter(json.loads(l)["action"] for l in open(log))
print("proxy: %d requests: %s; session %.1f s" % (sum(acts.values()), dict(acts), float(t1) - float(t0)))
for a in ("logs_range", "ratelimit", "ratelimit_ra"):
    assert acts[a] > 0, "no %s was answered" % a
regs = Chain(os.environ["BBVFL_RPC_URL"], contract).logs("Registered(address,uint8,bytes)")
who = {addr(l["topics"][1]) for l in regs}
assert ks_addr.lower() in who, (ks_addr, who)
print("the cast keystore's address %s registered and took part" % ks_addr)
PY
audit_passes
echo ok
