#!/usr/bin/env bash
# Plain mode with a dropout, through real `bbvfl client` processes against the test's fresh anvil:
# four clients with --expire (3 epochs), one passive client killed with SIGKILL mid-session and
# not restarted. The others time out and call expireRound(), which in plain mode excludes the
# missing client and completes the round with the three submissions it has; training goes on with
# M-1 (the active client re-reads participants() and estimates h_hat for three). Then:
#  - the test hook's dumped q (BBVFL_TEST_DUMP_Q) equals each Submitted event's calldata (plain
#    mode publishes q as it is), and every RoundCompleted sum is the sum of its round's submissions;
#  - exactly one Excluded(victim, 3); rounds from the expired one on have three contributors;
#  - participants() has three; the active client's summary says 3 participants;
#  - `bbvfl audit --session` passes (exit 0).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/chain.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test plaindrop
M=4

"$BBVFL_BIN" deploy --rpc "$BBVFL_RPC_URL" --clients $M --epochs 3 --seed 5 --round-timeout-blocks 12 \
  --out "$work/session.json" --json >"$work/deploy.json" || fail "deploy"
contract=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract"])' "$work/deploy.json")
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["contract_params"]["masked"] is False' \
  "$work/session.json" || fail "the session file says masked"

addrs=()
for m in $(seq 0 $((M - 1))); do
  addr=$("$BBVFL_BIN" key new --out "$work/k$m.key" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"])')
  addrs[$m]=$addr
  curl -sf -H 'content-type: application/json' -X POST "$BBVFL_RPC_URL" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"anvil_setBalance\",\"params\":[\"$addr\",\"0x56BC75E2D63100000\"]}" >/dev/null \
    || fail "funding $addr"
done

cols=("0-7" "8-15" "16-23" "24-29")
for m in $(seq 0 $((M - 1))); do
  BBVFL_TEST_DUMP_Q="$work/q" "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k$m.key" \
    --columns "${cols[$m]}" --labels --state-dir "$work/c$m" --round-timeout 2 --expire --takeover-after 3 --pause-after-submit 7 >>"$work/c$m.out" 2>&1 &
  pids[$m]=$!
done

call() { chain_call "$BBVFL_RPC_URL" "$contract" "$@"; }
# Every client freezes itself right after submitting round 6 (--pause-after-submit 7): the victim
# is then killed at a known point however fast or slow the session runs.
wait_paused "$work" "${pids[@]}" || fail "the clients did not all reach round 6"
# the victim: a passive client (BBVFL_TEST_KILL_ACTIVE=1: the active one)
active=$(call 'active()(address)')
victim=-1
for m in $(seq 0 $((M - 1))); do
  same=$(python3 -c 'import sys; print(int(sys.argv[1].lower() == sys.argv[2].lower()))' "${addrs[$m]}" "$active")
  if [ -n "${BBVFL_TEST_KILL_ACTIVE:-}" ]; then [ "$same" = 1 ] && victim=$m; else [ "$same" = 0 ] && victim=$m; fi
done
[ "$victim" -ge 0 ] || fail "no client to kill"
kill -9 "${pids[$victim]}"
wait "${pids[$victim]}" 2>/dev/null || true
for m in $(seq 0 $((M - 1))); do [ "$m" = "$victim" ] || kill -CONT "${pids[$m]}"; done

for m in $(seq 0 $((M - 1))); do
  [ "$m" = "$victim" ] && continue
  wait "${pids[$m]}" || { cat "$work/c$m.out" >&2; fail "client $m exited with an error"; }
done
grep -q "WARNING: BBVFL_TEST_DUMP_Q is set" "$work/c0.out" || fail "no warning about the test hook in the client log"
grep -q "the sum covers 3 submissions (was 4)" "$work"/c*.out || fail "the active client did not take the round's contributor count"
if grep -iE "[0-9a-f]{64}" "$work"/c*.out | grep -vi "session_seed" >/dev/null; then fail "a client log holds a 32-byte hex value"; fi

python3 - "$BBVFL_RPC_URL" "$contract" "$BBVFL_CAST" "$work" "$victim" "${addrs[@]}" <<'PY'
import glob, json, os, subprocess, sys, urllib.request
url, contract, cast, work, victim = sys.argv[1:6]
victim = int(victim)
addrs = [a.lower() for a in sys.argv[6:]]
def rpc(method, params):
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 {"content-type": "application/json"})
    o = json.load(urllib.request.urlopen(req))
    assert "error" not in o, o
    return o["result"]
def keccak(hexdata):
    return subprocess.check_output([cast, "keccak", hexdata], text=True).strip()
def logs(sig):
    t = keccak("0x" + sig.encode().hex())
    return rpc("eth_getLogs", [{"address": contract, "fromBlock": "0x0", "toBlock": "latest", "topics": [t]}])
def call(sig):
    sel = keccak("0x" + sig.encode().hex())[:10]
    return bytes.fromhex(rpc("eth_call", [{"to": contract, "data": sel}, "latest"])[2:])
def word(b, i): return int.from_bytes(b[32 * i:32 * i + 32], "big")
def dyn_bytes(b, i):
    off = word(b, i); n = word(b, off // 32); return b[off + 32:off + 32 + n]

p = call("params()")
import os as _os, sys as _sys; _sys.path.insert(0, _os.path.join(_os.environ["BBVFL_SOURCE_DIR"], "tests", "support")); import bbvfl_params
pp = bbvfl_params.decode(p)
M, B, P, levels, masked = pp['M'], pp['B'], pp['P'], pp['levels'], pp['masked']
total = pp['total']
assert M == 4 and masked == 0, (M, masked)
index = {"0x" + l["topics"][1][-40:]: word(bytes.fromhex(l["data"][2:]), 0) for l in logs("Registered(address,uint8,bytes)")}
vidx = index[addrs[victim]]
ex = logs("Excluded(address,uint8)")
assert len(ex) == 1 and "0x" + ex[0]["topics"][1][-40:] == addrs[victim], ex
assert word(bytes.fromhex(ex[0]["data"][2:]), 0) == 3, "exclusion reason"
subs = {}
for l in logs("Submitted(uint64,address,bytes32)"):
    r = int(l["topics"][1], 16); i = index["0x" + l["topics"][2][-40:]]
    data = bytes.fromhex(rpc("eth_getTransactionByHash", [l["transactionHash"]])["input"][2:])
    q = dyn_bytes(data[4:], 1)
    dumped = open(os.path.join(work, "q", "q-%d-%d.bin" % (i, r)), "rb").read()
    assert q == dumped, "round %d client %d: calldata differs from the dumped q" % (r, i)
    subs.setdefault(r, {})[i] = list(q)
done = logs("RoundCompleted(uint64,uint8,bytes)")
assert len(done) == total, (len(done), total)
ex_round = None
for l in done:
    r = int(l["topics"][1], 16)
    d = bytes.fromhex(l["data"][2:])
    s = list(dyn_bytes(d, 1))
    who = sorted(subs[r])
    assert word(d, 0) == len(who), "round %d: RoundCompleted counts %d submissions, %d were made" % (r, word(d, 0), len(who))
    if len(who) == M - 1 and ex_round is None: ex_round = r
    assert who == (list(range(M)) if ex_round is None else sorted(set(range(M)) - {vidx})), (r, who)
    n = bbvfl_params.layout(pp, r)['coords']
    assert s == [sum(subs[r][i][j] for i in who) for j in range(n)], "round %d: sum" % r
assert ex_round is not None
assert word(call("participants()"), 1) == M - 1
act = [json.load(open(f)) for f in glob.glob(os.path.join(work, "c*", "summary.json"))]
act = [a for a in act if a.get("active")]
assert len(act) == 1 and act[0]["participants"] == M - 1 and act[0]["privacy"]["masked"] is False, act
print("ok: %d rounds, round %d expired without client %d, sums = sums of the submitted q" % (total, ex_round, vidx))
PY

"$BBVFL_BIN" audit --session "$work/session.json" --json --quiet >"$work/audit.json" || {
  cat "$work/audit.json" >&2
  fail "the audit of the plain session with a dropout did not pass"
}
echo ok
