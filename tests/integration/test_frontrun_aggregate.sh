#!/usr/bin/env bash
# Anyone may aggregate: a stranger (a funded key that is no participant) front-runs every
# aggregate() of a hashed session on a chain with 1 s blocks: it watches the node's pending pool
# and copies each aggregate() it sees there with a higher tip than the clients pay (so it lands
# first in the block both land in). The stranger must have sent at least one copy.
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
EPOCHS=3
extra_cleanup() { [ -e "$work/devnet/devnet.json" ] && "$BBVFL_BIN" devnet down --dir "$work/devnet" >/dev/null 2>&1 || true; }

"$BBVFL_BIN" devnet up --dir "$work/devnet" --block-time 1 --json >"$work/devnet.json" || fail "devnet up --block-time 1"
rpc_url=$(json_get "$work/devnet.json" rpc_url)
"$BBVFL_CAST" wallet new --json >"$work/stranger.json" || fail "cast wallet new"
saddr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["address"])' "$work/stranger.json")
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["private_key"])' "$work/stranger.json" >"$work/stranger.key"
chmod 600 "$work/stranger.key"
fund "$saddr"

# the stranger: waits for the demo's session file, then watches the node's pending pool
# (txpool_content) and copies every aggregate() it sees there with a higher tip
python3 - "$rpc_url" "$work/run/session.json" "$BBVFL_CAST" "$work/stranger.key" "$mode" "${saddr,,}" >"$work/stranger.out" 2>&1 <<'PY' &
import json, os, subprocess, sys, time
from bbvfl_chain import Chain, topic
url, session, cast, keyfile, mode, me = sys.argv[1:7]
key = open(keyfile).read().strip()
while not os.path.exists(session):
    time.sleep(0.05)
contract = json.load(open(session))["contract"].lower()
c = Chain(url, contract)
sel = topic("aggregate(uint64,bytes[])")[:10]
ended = topic("SessionEnded(uint64)")
def flip_last_payload_byte(data):
    # aggregate(uint64 round, bytes[] payloads): the array's head is at 4 + 64, its last
    # element's offset is relative to the word after the array's length
    b = bytearray(data)
    arr = 4 + int.from_bytes(b[36:68], "big")
    n = int.from_bytes(b[arr:arr + 32], "big")
    el = arr + 32 + int.from_bytes(b[arr + 32 * n:arr + 32 * n + 32], "big")
    ln = int.from_bytes(b[el:el + 32], "big")
    b[el + 32 + ln - 1] ^= 1
    return bytes(b)
seen = set()
sent = 0
# everything cast would ask the node for is given, so a copy goes out without a round trip
chain_id = str(int(c.rpc("eth_chainId", []), 16))
nonce = int(c.rpc("eth_getTransactionCount", [me, "pending"]), 16)
while not c.rpc("eth_getLogs", [{"address": contract, "fromBlock": "0x0", "toBlock": "latest", "topics": [ended]}]):
    pool = c.rpc("txpool_content", [])
    for frm, txs in pool.get("pending", {}).items():
        for tx in txs.values():
            if (tx.get("to") or "").lower() != contract or not tx["input"].startswith(sel) or frm.lower() == me \
               or tx["hash"] in seen:
                continue
            seen.add(tx["hash"])
            data = bytes.fromhex(tx["input"][2:])
            if mode == "wrong":
                data = flip_last_payload_byte(data)
            r = subprocess.run([cast, "send", "--async", "--rpc-url", url, "--private-key", key, "--gas-limit",
                                "5000000", "--priority-gas-price", "50gwei", "--gas-price", "500gwei", "--nonce",
                                str(nonce), "--chain", chain_id, contract, "--data", "0x" + data.hex()],
                               capture_output=True, text=True)
            if r.returncode == 0:
                sent += 1
                nonce += 1
                print("round %d: copied %s's aggregate() (%s payloads), higher tip" %
                      (int.from_bytes(data[4:36], "big"), frm, mode), flush=True)
            else:
                print("send failed: %s" % r.stderr.strip(), flush=True)
    time.sleep(0.03)
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
[ "${sent:-0}" -ge 1 ] || { cat "$work/stranger.out" >&2; fail "the stranger saw no pending aggregate() to copy"; }
echo "the stranger sent $sent aggregate() copies"

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
