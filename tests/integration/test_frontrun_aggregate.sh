#!/usr/bin/env bash
# Anyone may aggregate: a stranger (a funded key that is no participant) front-runs every
# aggregate() of a hashed session on a chain with 1 s blocks: as soon as a round's payloads are
# all in its SubmittedPayload logs it sends aggregate(round, payloads) built from them with a
# higher tip than the clients pay, holding the next block meanwhile (evm_setIntervalMining), so it
# lands first in the block the active client's aggregate() lands in. It must have sent at least one.
#   BBVFL_FRONTRUN=correct (default): the stranger's payloads are right. Checked: the demo
#     finishes with the on-chain AUROC equal to its off-chain replay with the same seeds
#     (--compare), the stranger's aggregate() produced at least one RoundCompleted, and every
#     round the stranger aggregated that the active client had also sent aggregate() for was taken
#     from the chain ("aggregated by another sender" in the active client's log), and the audit
#     of the session passes.
#   BBVFL_FRONTRUN=wrong: one byte of the last payload changed: every such aggregate() reverts
#     (PayloadHashMismatch), the session is unaffected (finishes, same AUROC as its replay, the
#     audit passes, no RoundCompleted from the stranger).
# Starts its own anvil with --block-time 1 (`bbvfl devnet up`, stopped by `bbvfl devnet down`);
# needs BBVFL_BIN and BBVFL_CAST.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_BIN:?}" "${BBVFL_CAST:?}"
mode=${BBVFL_FRONTRUN:-correct}
session_test frontrun-$mode
EPOCHS=5
extra_cleanup() { [ -e "$work/devnet/devnet.json" ] && "$BBVFL_BIN" devnet down --dir "$work/devnet" >/dev/null 2>&1 || true; }

"$BBVFL_BIN" devnet up --dir "$work/devnet" --block-time 1 --json >"$work/devnet.json" || fail "devnet up --block-time 1"
rpc_url=$(json_get "$work/devnet.json" rpc_url)
"$BBVFL_CAST" wallet new --json >"$work/stranger.json" || fail "cast wallet new"
saddr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["address"])' "$work/stranger.json")
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["private_key"])' "$work/stranger.json" >"$work/stranger.key"
chmod 600 "$work/stranger.key"
fund "$saddr"

# the stranger: waits for the demo's session file; once a round's payloads are all in its
# SubmittedPayload logs it sends aggregate(round, payloads) with a higher tip, holding the next
# block (evm_setIntervalMining 0, then 1 again) while it goes out
python3 - "$rpc_url" "$work/run/session.json" "$BBVFL_CAST" "$work/stranger.key" "$mode" "${saddr,,}" >"$work/stranger.out" 2>&1 <<'PY' &
import json, os, subprocess, sys, time
from bbvfl_chain import Chain, addr, topic
url, session, cast, keyfile, mode, me = sys.argv[1:7]
import bbvfl_params
key = open(keyfile).read().strip()
# everything that needs no contract first (topic() runs cast), so the race starts at round 0
T = {s: topic(s) for s in ("SessionEnded(uint64)", "Registered(address,uint8,bytes)",
                           "SubmittedPayload(uint64,address,bytes)", "RoundCompleted(uint64,uint8,bytes)")}
psel = topic("params()")[:10]
while not os.path.exists(session):
    time.sleep(0.02)
contract = json.load(open(session))["contract"].lower()
c = Chain(url, contract)
pp = bbvfl_params.decode(bytes.fromhex(c.rpc("eth_call", [{"to": contract, "data": psel}, "latest"])[2:]))
M, total = pp["M"], pp["total"]
def logs(sig, r=None):
    t = [T[sig]] + ([] if r is None else ["0x%064x" % r])
    return c.rpc("eth_getLogs", [{"address": contract, "fromBlock": "0x0", "toBlock": "latest", "topics": t}])
# everything cast would ask the node for is given, so the transaction goes out at once
chain_id = str(int(c.rpc("eth_chainId", []), 16))
nonce = int(c.rpc("eth_getTransactionCount", [me, "pending"]), 16)
clients = {}
while len(clients) < M:
    for l in logs("Registered(address,uint8,bytes)"):
        clients[addr(l["topics"][1])] = int(l["data"][2:66], 16)
    time.sleep(0.05)
sent = 0
r = 0
while r < total and not logs("SessionEnded(uint64)"):
    if logs("RoundCompleted(uint64,uint8,bytes)", r):
        r += 1
        continue
    pay = {}
    for l in logs("SubmittedPayload(uint64,address,bytes)", r):
        d = bytes.fromhex(l["data"][2:])
        pay[clients[addr(l["topics"][2])]] = d[64:64 + int.from_bytes(d[32:64], "big")]
    if len(pay) < M:
        time.sleep(0.03)
        continue
    # every payload of round r is on chain, so nobody has aggregated it in an earlier block: hold
    # the next block (anvil's own RPC) while this aggregate() goes out with a higher tip, so it
    # lands first in the block the active client's lands in, however slow this machine is
    c.rpc("evm_setIntervalMining", [0])
    ps = [pay[i] for i in sorted(pay)]
    if mode == "wrong":
        ps[-1] = ps[-1][:-1] + bytes([ps[-1][-1] ^ 1])
    arg = "[" + ",".join("0x" + p.hex() for p in ps) + "]"
    res = subprocess.run([cast, "send", "--async", "--rpc-url", url, "--private-key", key, "--gas-limit", "5000000",
                          "--priority-gas-price", "50gwei", "--gas-price", "500gwei", "--nonce", str(nonce),
                          "--chain", chain_id, contract, "aggregate(uint64,bytes[])", str(r), arg],
                         capture_output=True, text=True)
    c.rpc("evm_setIntervalMining", [1])
    if res.returncode == 0:
        sent += 1
        nonce += 1
        print("round %d: aggregate() sent (%s payloads), higher tip" % (r, mode), flush=True)
    else:
        print("round %d: send failed: %s" % (r, res.stderr.strip()), flush=True)
    # the round's sum (the stranger's or the active client's) before the next round
    while not logs("RoundCompleted(uint64,uint8,bytes)", r) and not logs("SessionEnded(uint64)"):
        time.sleep(0.03)
    r += 1
print("sent", sent, flush=True)
PY
spid=$!
pids+=("$spid")

"$BBVFL_BIN" demo --rpc "$rpc_url" --epochs $EPOCHS --seed 5 --compare --aggregation hashed --window 45 \
  --out "$work/run" --json >"$work/demo.out" 2>"$work/demo.err" ||
  { cat "$work/demo.err" "$work/stranger.out" >&2; fail "demo with a $mode front-runner failed"; }
wait "$spid" || { cat "$work/stranger.out" >&2; fail "the stranger's script failed"; }
pids=()
sent=$(sed -n 's/^sent //p' "$work/stranger.out")
[ "${sent:-0}" -ge 1 ] || { cat "$work/stranger.out" >&2; fail "the stranger sent no aggregate()"; }
echo "the stranger sent $sent aggregate() calls"

python3 - "$work/run/report.json" "$rpc_url" "$(json_get "$work/run/session.json" contract)" "$saddr" "$mode" "$work/run" <<'PY' || fail "checks"
import glob, json, sys
from bbvfl_chain import Chain
rep = json.load(open(sys.argv[1]))
c = Chain(sys.argv[2], sys.argv[3])
stranger, mode, run = sys.argv[4].lower(), sys.argv[5], sys.argv[6]
assert rep["aggregation"] == "hashed", rep["aggregation"]
assert rep["auroc"] == rep["auroc_offchain_same_seed"], (rep["auroc"], rep["auroc_offchain_same_seed"])
by_stranger = []
for l in c.logs("RoundCompleted(uint64,uint8,bytes)"):
    tx = c.rpc("eth_getTransactionByHash", [l["transactionHash"]])
    if tx["from"].lower() == stranger:
        by_stranger.append(int(l["topics"][1], 16))
logs = "".join(open(f).read() for f in glob.glob(run + "/clients/*/client.log"))
taken = logs.count("aggregated by another sender")
if mode == "correct":
    assert by_stranger, "the stranger aggregated no round"
else:
    assert not by_stranger, "a wrong aggregate() was accepted: rounds %s" % by_stranger
print("%s front-runner: AUROC %.4f = its replay; rounds aggregated by the stranger %s; the active client took %d "
      "from the chain" % (mode, rep["auroc"], by_stranger, taken))
PY
run=$work/run audit_passes
echo ok
