#!/usr/bin/env bash
# A short on-chain session in separate processes against the test's fresh anvil: `bbvfl deploy`,
# three `bbvfl client` processes (3 clients, 2 epochs), one of them killed with SIGKILL mid-session
# and restarted with the same key, session and state folder. Then, from the chain alone:
#  - every RoundCompleted sum equals the sum of the bytes submitted in that round (the submit
#    calldata of each Submitted event's transaction, fetched with eth_getTransactionByHash);
#  - the active client is participants[keccak256(revealed secrets in client order) mod n];
#  - every client's token balance equals rate x its accepted submissions (= its Submitted events);
#  - the killed-and-restarted client (the active one; BBVFL_TEST_KILL_PASSIVE=1: another one)
#    finished the session (exit 0, summary, "resuming" in its log).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/chain.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test onchain

"$BBVFL_BIN" deploy --rpc "$BBVFL_RPC_URL" --clients 3 --epochs 2 --seed 3 --out "$work/session.json" --json \
  >"$work/deploy.json" || fail "deploy"
contract=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract"])' "$work/deploy.json")

# keys, funded with anvil_setBalance (a devnet cheat method: no key on any command line)
addrs=()
for m in 0 1 2; do
  addr=$("$BBVFL_BIN" key new --out "$work/k$m.key" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"])')
  addrs[$m]=$addr
  curl -sf -H 'content-type: application/json' -X POST "$BBVFL_RPC_URL" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"anvil_setBalance\",\"params\":[\"$addr\",\"0x56BC75E2D63100000\"]}" >/dev/null \
    || fail "funding $addr"
done

cols=("0-9" "10-19" "20-29")
start_client() { # m [extra flags]
  local m=$1; shift
  "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k$m.key" --columns "${cols[$m]}" --labels \
    --state-dir "$work/c$m" --seed 3 --party "$m" --round-timeout 60 "$@" >>"$work/c$m.out" 2>&1 &
  pids[$m]=$!
}
# Every client freezes itself (SIGSTOP) right after submitting round 8: a 2-epoch session takes a
# second or two, too fast to catch by polling, so the test stops them at a known point instead.
for m in 0 1 2; do start_client "$m" --pause-after-submit 9; done
wait_paused "$work" "${pids[@]}" || fail "the clients did not all reach round 8"

# the victim: the active client (the harder case: it holds the head) unless BBVFL_TEST_KILL_PASSIVE
call() { chain_call "$BBVFL_RPC_URL" "$contract" "$@"; }
active=$(call 'active()(address)')
victim=-1
for m in 0 1 2; do
  same=$(python3 -c 'import sys; print(int(sys.argv[1].lower() == sys.argv[2].lower()))' "${addrs[$m]}" "$active")
  if [ -n "${BBVFL_TEST_KILL_PASSIVE:-}" ]; then [ "$same" = 0 ] && victim=$m; else [ "$same" = 1 ] && victim=$m; fi
done
[ "$victim" -ge 0 ] || fail "active client $active is none of ours"
# SIGKILL the victim mid-round (it has submitted round 8; the sum and gradient are not yet read)
kill -9 "${pids[$victim]}"
wait "${pids[$victim]}" 2>/dev/null || true
for m in 0 1 2; do [ "$m" = "$victim" ] || kill -CONT "${pids[$m]}"; done
sleep 0.3
start_client "$victim"

for m in 0 1 2; do
  wait "${pids[$m]}" || { cat "$work/c$m.out" >&2; fail "client $m exited with an error"; }
done
grep -q "resuming at round" "$work/c$victim.out" || { cat "$work/c$victim.out" >&2; fail "client $victim did not resume from its checkpoint"; }
for m in 0 1 2; do [ -s "$work/c$m/summary.json" ] || fail "client $m left no summary"; done
if grep -iE "[0-9a-f]{64}" "$work"/c*.out | grep -vi "session_seed" >/dev/null; then fail "a client log holds a 32-byte hex value"; fi

python3 - "$BBVFL_RPC_URL" "$contract" "$BBVFL_CAST" <<'PY'
import json, subprocess, sys, urllib.request
url, contract, cast = sys.argv[1:4]
def rpc(method, params):
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 {"content-type": "application/json"})
    o = json.load(urllib.request.urlopen(req))
    assert "error" not in o, o
    return o["result"]
def keccak(hexdata):
    return subprocess.check_output([cast, "keccak", hexdata], text=True).strip()
def topic(sig):
    return keccak("0x" + sig.encode().hex())
def logs(sig):
    return rpc("eth_getLogs", [{"address": contract, "fromBlock": "0x0", "toBlock": "latest", "topics": [topic(sig)]}])
def call(sig, args=""):
    sel = keccak("0x" + sig.encode().hex())[:10]
    return bytes.fromhex(rpc("eth_call", [{"to": contract, "data": sel + args}, "latest"])[2:])
def word(b, i): return int.from_bytes(b[32 * i:32 * i + 32], "big")
def dyn_bytes(b, i):  # i-th head word is an offset to a length-prefixed byte string
    off = word(b, i); n = word(b, off // 32); return b[off + 32:off + 32 + n]

p = call("params()")
import os as _os, sys as _sys; _sys.path.insert(0, _os.path.join(_os.environ["BBVFL_SOURCE_DIR"], "tests", "support")); import bbvfl_params
pp = bbvfl_params.decode(p)
M, B, P, levels = pp['M'], pp['B'], pp['P'], pp['levels']
rate, lane_bits, token, total = pp['rate'], pp['lane_bits'], pp['token'], pp['total']
assert M == 3 and lane_bits == 8, (M, lane_bits)

# sums = sums of the submitted bytes
subs = {}
count = {}
nsub = {}
for l in logs("Submitted(uint64,address,bytes32)"):
    r = int(l["topics"][1], 16); who = "0x" + l["topics"][2][-40:]
    tx = rpc("eth_getTransactionByHash", [l["transactionHash"]])
    data = bytes.fromhex(tx["input"][2:])
    assert data[:4].hex() == keccak("0x" + b"submit(uint64,bytes)".hex())[2:10]
    args = data[4:]
    assert word(args, 0) == r
    q = dyn_bytes(args, 1)
    n = bbvfl_params.layout(pp, r)['coords']
    assert len(q) == n and max(q) <= levels
    assert keccak("0x" + q.hex()) == l["data"][:66], "dataHash"
    s = subs.setdefault(r, [0] * n)
    for i, v in enumerate(q): s[i] += v
    count[who] = count.get(who, 0) + 1
    nsub[r] = nsub.get(r, 0) + 1
done = logs("RoundCompleted(uint64,uint8,bytes)")
assert len(done) == total, (len(done), total)
for l in done:
    r = int(l["topics"][1], 16)
    d = bytes.fromhex(l["data"][2:])
    s = dyn_bytes(d, 1)
    assert word(d, 0) == nsub[r], "round %d: RoundCompleted counts %d submissions, %d were made" % (r, word(d, 0), nsub[r])
    assert list(s) == subs[r], "round %d: stored sum differs from the submitted bytes" % r
assert len(subs) == total

# active client from the commit-reveal transcript
reg = {("0x" + l["topics"][1][-40:]): word(bytes.fromhex(l["data"][2:]), 0) for l in logs("Registered(address,uint8,bytes)")}
rev = {("0x" + l["topics"][1][-40:]): l["data"][2:66] for l in logs("Revealed(address,bytes32)")}
order = sorted(rev, key=lambda a: reg[a])
S = keccak("0x" + "".join(rev[a] for a in order))
el = logs("Elected(bytes32,address,uint64,uint8,uint8)")
assert len(el) == 1
assert el[0]["data"][2:66] == S[2:], "Elected seed is not keccak of the revealed secrets"
expect = order[int(S, 16) % len(order)]
assert "0x" + el[0]["topics"][1][-40:] == expect, "active client is not the one the transcript determines"
assert "0x" + call("active()")[12:32].hex() == expect

# balances = rate x accepted submissions
tok = "0x%040x" % token
for a in order:
    bal = int(rpc("eth_call", [{"to": tok, "data": "0x70a08231" + "0" * 24 + a[2:]}, "latest"]), 16)
    assert count[a] == total, (a, count[a], total)
    assert bal == rate * count[a], (a, bal, rate * count[a])
print("ok: %d rounds, sums match, active %s, balances = rate x accepted" % (total, expect))
PY
echo ok
