#!/usr/bin/env bash
# Windows sized for the chain, on a table of at least 10,000 rows: `bbvfl demo --data
# data/letter.csv --block-time 1` (the UCI Letter Recognition table, 20,000 rows x 16, 26 classes;
# 4 clients, 1 epoch) with no --window and no --eval-rows-per-round. Before windows were sized
# this stopped at once ("a round of 256000 values ... is above 60000"). Checked:
#  - the demo completes; its report has hashed aggregation, staleness 1 (the block-time defaults),
#    a window below the epoch's 1,600 minibatches and an evaluation split below its 4,000 test
#    rows (neither fits whole), each the largest that fits: the window's transactions (gas
#    limits) under the 2^24 cap, the values per round above the old fixed 60,000 only where they
#    fit (bounds recomputed here from the gas figures the client signs with);
#  - every transaction of the run's chain has a gas limit <= 2^24, and no block used more than
#    its gas limit;
#  - asking for more than fits is refused before anything is deployed, naming the largest that
#    fits (--window 1600);
#  - `bbvfl audit` of the run's chain passes.
# Runs under tests/with-devnet.sh (whose automining node it does not use), needs BBVFL_BIN.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_BIN:?}" "${BBVFL_SOURCE_DIR:?}"
session_test window-large
extra_cleanup() { [ -e "$work/run/devnet/devnet.json" ] && "$BBVFL_BIN" devnet down --dir "$work/run/devnet" >/dev/null 2>&1 || true; }
data="$BBVFL_SOURCE_DIR/data/letter.csv"
[ -s "$data" ] || fail "$data is missing (data/convert_letter.py makes it)"

# insisting on more than fits: refused, the largest named, nothing deployed
set +e
"$BBVFL_BIN" demo --data "$data" --block-time 1 --clients 4 --epochs 1 --window 1600 --out "$work/refused" \
  >"$work/refused.out" 2>"$work/refused.err"
rc=$?
set -e
[ "$rc" != 0 ] || fail "--window 1600 on the 20,000-row table was accepted"
grep -q "the largest window that fits is [0-9]" "$work/refused.err" || { cat "$work/refused.err" >&2; fail "refusal does not name the largest window"; }
[ ! -e "$work/refused/session.json" ] || fail "a session was deployed for a refused window"

"$BBVFL_BIN" demo --data "$data" --block-time 1 --clients 4 --epochs 1 --seed 3 --out "$work/run" --json \
  >"$work/demo.out" 2>"$work/demo.err" || { cat "$work/demo.err" >&2; fail "demo on the 20,000-row table failed"; }
python3 - "$work/run/report.json" <<'PY' || fail "report.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["aggregation"] == "hashed" and r["staleness"] == 1 and r["block_time"] == 1, r
K, T, V = r["window"], r["train_rounds_per_epoch"], r["eval_rounds_per_epoch"]
assert 1 < K < 1600 and T == -(-1600 // K), (K, T)
assert 1 < V <= 4, V
assert r["clients"] == 4 and r["epochs"] == 1, r
assert 0.5 < r["auroc"] <= 1, r["auroc"]
print("demo: window %d (%d rounds), %d evaluation rounds, %.1f blocks, AUROC %.4f, %.1f gas per value"
      % (K, T, V, r["blocks_per_epoch"], r["auroc"], r["gas_per_coordinate"]))
PY

"$BBVFL_BIN" devnet up --dir "$work/run/devnet" --persist --json >"$work/devnet.json" || fail "devnet up from the run's state"
url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rpc_url"])' "$work/devnet.json")
contract=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract"])' "$work/run/session.json")
python3 - "$url" <<'PY' || fail "gas limits"
import json, sys, urllib.request
url = sys.argv[1]
def rpc(method, params):
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 {"content-type": "application/json"})
    o = json.load(urllib.request.urlopen(req, timeout=30))
    assert "error" not in o, o
    return o["result"]
head = int(rpc("eth_blockNumber", []), 16)
most, ntx = 0, 0
for b in range(1, head + 1):
    blk = rpc("eth_getBlockByNumber", [hex(b), True])
    assert int(blk["gasUsed"], 16) <= int(blk["gasLimit"], 16), b
    for tx in blk["transactions"]:
        g = int(tx["gas"], 16)
        assert g <= 1 << 24, (b, tx["hash"], g)
        most = max(most, g)
        ntx += 1
print("%d transactions in %d blocks, the largest gas limit %d (cap %d)" % (ntx, head, most, 1 << 24))
assert most > 8_000_000, "no large round: windows were not sized up"
PY

set +e
"$BBVFL_BIN" audit --rpc "$url" --contract "$contract" --quiet >"$work/audit.txt" 2>&1
arc=$?
set -e
[ "$arc" = 0 ] || { cat "$work/audit.txt" >&2; fail "bbvfl audit exit $arc"; }
head -1 "$work/audit.txt"
"$BBVFL_BIN" devnet down --dir "$work/run/devnet" >/dev/null || fail "devnet down"
echo ok
