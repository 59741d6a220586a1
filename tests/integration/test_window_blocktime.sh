#!/usr/bin/env bash
# A chain with a block time: `bbvfl demo --block-time 1 --epochs 3` (its embedded devnet mines a
# block every second; unless told otherwise the demo then runs a window of a whole epoch and hashed
# aggregation: each epoch is one training window and one evaluation round, and the evaluation round
# never holds the next epoch's window up). Checked:
#  - the demo completes (five `bbvfl client` processes), its report says window = the epoch's 45
#    minibatches, hashed aggregation, block time 1;
#  - from the chain (the run's devnet resumed from RUN/devnet/state.json with `bbvfl devnet up`,
#    stopped again by `bbvfl devnet down`): the blocks from the first SubmittedPayload to the last event of
#    epoch 3 (its RewardsPaid / SessionEnded), both counted, are at most 4 per epoch + 2 = 14;
#  - `bbvfl audit` of that chain passes.
# Runs under tests/with-devnet.sh (whose automining node it does not use), needs BBVFL_BIN.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_BIN:?}" "${BBVFL_SOURCE_DIR:?}"
session_test window-blocktime
EPOCHS=3
extra_cleanup() { [ -e "$work/run/devnet/devnet.json" ] && "$BBVFL_BIN" devnet down --dir "$work/run/devnet" >/dev/null 2>&1 || true; }

"$BBVFL_BIN" demo --block-time 1 --epochs $EPOCHS --seed 5 --out "$work/run" --json >"$work/demo.out" 2>"$work/demo.err" ||
  { cat "$work/demo.err" >&2; fail "demo --block-time 1 failed"; }
python3 - "$work/run/report.json" $EPOCHS <<'PY' || fail "report.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["block_time"] == 1 and r["window"] == 45 and r["aggregation"] == "hashed", (r["block_time"], r["window"], r["aggregation"])
assert r["train_rounds_per_epoch"] == 1 and r["eval_rounds_per_epoch"] == 1 and r["epochs"] == int(sys.argv[2]), r
assert 0.5 < r["auroc"] <= 1, r["auroc"]
print("demo: window %d, %s, AUROC %.4f, wall %.1f s" % (r["window"], r["aggregation"], r["auroc"], r["wall_s"]))
PY

# the run's chain again, from its saved state
"$BBVFL_BIN" devnet up --dir "$work/run/devnet" --persist --json >"$work/devnet.json" || fail "devnet up from the run's state"
url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rpc_url"])' "$work/devnet.json")
contract=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract"])' "$work/run/session.json")

python3 - "$url" "$contract" "$BBVFL_CAST" $EPOCHS <<'PY' || fail "blocks per epoch"
import json, os, subprocess, sys, urllib.request
url, contract, cast, epochs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, os.path.join(os.environ["BBVFL_SOURCE_DIR"], "tests", "support"))
import bbvfl_params
def rpc(method, params):
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 {"content-type": "application/json"})
    o = json.load(urllib.request.urlopen(req, timeout=30))
    assert "error" not in o, o
    return o["result"]
def topic(sig): return subprocess.check_output([cast, "keccak", "0x" + sig.encode().hex()], text=True).strip()
def logs(sig):
    return rpc("eth_getLogs", [{"address": contract, "fromBlock": "0x0", "toBlock": "latest", "topics": [topic(sig)]}])
def blk(l): return int(l["blockNumber"], 16)
sel = topic("params()")[:10]
pp = bbvfl_params.decode(bytes.fromhex(rpc("eth_call", [{"to": contract, "data": sel}, "latest"])[2:]))
assert pp["hashed"] == 1 and pp["K"] == pp["R"] == 45 and pp["T"] == 1 and pp["V"] == 1 and pp["epochs"] == epochs, pp
subs = logs("SubmittedPayload(uint64,address,bytes)")  # hashed mode's submissions
assert len(subs) == pp["M"] * pp["total"], (len(subs), pp["M"], pp["total"])
first = min(blk(l) for l in subs)
paid = {}
for l in logs("RewardsPaid(uint32,address,uint256,uint32)"):
    e = int(l["topics"][1], 16)
    paid[e] = max(paid.get(e, 0), blk(l))
assert sorted(paid) == list(range(epochs)), sorted(paid)
ended = logs("SessionEnded(uint64)")
assert len(ended) == 1
# the last event of the last epoch (its metrics, rewards, the session's end)
last_ev = max([paid[epochs - 1], blk(ended[0])] + [blk(l) for l in logs("MetricsPosted(uint32,address,uint32,uint32,uint64)")
                                                    if int(l["topics"][1], 16) == epochs - 1])
n = last_ev - first + 1
per = []
prev = first
for e in range(epochs):
    per.append(paid[e] - prev + (1 if e == 0 else 0))
    prev = paid[e]
print("blocks from the first submission (block %d) to the last event of epoch %d (block %d): %d (bound %d); per epoch %s"
      % (first, epochs, last_ev, n, 4 * epochs + 2, per))
assert n <= 4 * epochs + 2, "%d blocks for %d epochs: more than 4 per epoch + 2" % (n, epochs)
PY

set +e
"$BBVFL_BIN" audit --rpc "$url" --contract "$contract" --quiet >"$work/audit.txt" 2>&1
arc=$?
set -e
[ "$arc" = 0 ] || { cat "$work/audit.txt" >&2; fail "bbvfl audit exit $arc"; }
head -1 "$work/audit.txt"
"$BBVFL_BIN" devnet down --dir "$work/run/devnet" >/dev/null || fail "devnet down"
echo ok
