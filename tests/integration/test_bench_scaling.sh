#!/usr/bin/env bash
# `bbvfl bench scaling` (tiny) and `bbvfl bench plots` on the test's anvil: the JSON/CSV shape,
# gas that must fall per coordinate as a submission grows, a naive configuration over the
# per-transaction gas cap reported as not runnable (not as a crash), and the figures drawn as PNG
# files from the JSON files (and from a small sweep.json). No timing is asserted.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$("$BBVFL_BIN" bench scaling --rpc "$BBVFL_RPC_URL" --clients 2,3 --dims 16 --batches 10,100 --rounds 5 \
      --naive-rounds 1 --floor-n 5 --out "$tmp/sc" --json 2>"$tmp/err")
[ -s "$tmp/sc/scaling.csv" ] && [ -s "$tmp/sc/scaling.json" ] || fail "scaling files not written"
python3 - "$out" "$tmp/sc/scaling.csv" <<'PY'
import csv, json, sys
o = json.loads(sys.argv[1])
assert o["mode"] == "scaling" and o["tx_gas_cap"] == 1 << 24 and o["block_gas_limit"] > 0 and o["floor_ms"] > 0, o
rows = o["rows"]
assert [(r["sweep"], r["M"], r["B"], r["P"]) for r in rows] == [
    ("M", 2, 10, 16), ("M", 3, 10, 16), ("P", 5, 10, 16), ("B", 5, 10, 16), ("B", 5, 100, 16)], rows
for r in rows:
    assert r["status"] == "ok", r
    for k in ("round_ms", "gas_per_round", "gas_per_submission", "gas_per_coordinate", "lane_bits",
              "submission_under_tx_cap", "round_fits_one_block", "coords_at_tx_cap", "naive_status",
              "floor_interleaved_ms", "floor_ratio", "node_stalls"):
        assert k in r, (k, r)
    assert r["lane_bits"] == 8 and r["submission_under_tx_cap"] and r["round_fits_one_block"], r
    assert abs(r["gas_per_coordinate"] * r["M"] * r["B"] * r["P"] - r["gas_per_round"]) < 1e-3 * r["gas_per_round"], r
    assert r["gas_per_coordinate_round0"] > r["gas_per_coordinate"], r
small, big = rows[3], rows[4]
# the 21000 base of a transaction is shared by more coordinates in a bigger submission
assert big["gas_per_coordinate"] < small["gas_per_coordinate"], (small, big)
assert small["coords_at_tx_cap"] > 16000, small
# naive: fine at B*P=160, but one submission of 1600 values needs more than the 2^24 cap allows
assert small["naive_status"] == "ok" and small["naive_gas_per_coordinate"] >= 25 * small["gas_per_coordinate"], small
assert big["naive_status"] != "ok" and "gas" in big["naive_status"], big
assert big["naive_gas_per_coordinate"] is None, big
rd = list(csv.DictReader(open(sys.argv[2])))
assert len(rd) == 5 and rd[4]["B"] == "100" and rd[4]["naive_status"] == big["naive_status"], rd
PY
# figures from the JSON files, and from a minimal sweep.json in the shape `bbvfl sweep` writes
"$BBVFL_BIN" bench table1 --rpc "$BBVFL_RPC_URL" --clients 2 --b 2,4 --epochs 1 --masked-epochs 0 \
  --naive-rounds 0 --floor-n 5 --no-demo --out "$tmp/t1" >/dev/null 2>&1 || fail "tiny table1 run"
python3 - "$tmp/sweep.json" <<'PY'
import json, sys
cells = [{"clients": 3, "mechanism": "npq", "auroc_median": 0.99, "epsilon_feature": None,
          "runs": [{"seed": s, "auroc_per_epoch": [0.9, 0.95, 0.99]} for s in (1, 2)]}]
for b in (2, 4):
    for beta in (0.1, 0.2):
        cells.append({"clients": 3, "mechanism": "pbm", "b": b, "beta": beta, "auroc_median": 0.9 + beta / 2,
                      "epsilon_feature": 100.0 * b * beta,
                      "runs": [{"seed": s, "auroc_per_epoch": [0.8, 0.85, 0.9 + beta / 2]} for s in (1, 2)]})
json.dump({"epochs": 3, "seeds": 2, "delta": 1e-5, "cells": cells}, open(sys.argv[1], "w"))
PY
pj=$("$BBVFL_BIN" bench plots --table1 "$tmp/t1/table1.json" --scaling "$tmp/sc/scaling.json" \
     --sweep "$tmp/sweep.json" --out "$tmp/fig" --json)
python3 - "$pj" "$tmp/fig" <<'PY'
import json, os, sys
o = json.loads(sys.argv[1])
want = ["table1.png", "scaling.png", "fig2_auroc_by_epoch.png", "auroc_vs_epsilon.png"]
assert o["figures"] == want, o
for f in want:
    data = open(os.path.join(sys.argv[2], f), "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, (f, len(data))
    assert os.path.exists(os.path.join(sys.argv[2], "plotdata")), "plotdata kept"
PY
# bad input
if "$BBVFL_BIN" bench plots --out "$tmp/x" 2>"$tmp/err"; then fail "plots without input accepted"; fi
grep -q "nothing to draw" "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo '{"cells": []}' >"$tmp/empty.json"
if "$BBVFL_BIN" bench plots --sweep "$tmp/empty.json" --out "$tmp/x" 2>"$tmp/err"; then fail "empty sweep accepted"; fi
grep -q "no \"cells\"" "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo 'not json' >"$tmp/bad.json"
if "$BBVFL_BIN" bench plots --table1 "$tmp/bad.json" --out "$tmp/x" 2>"$tmp/err"; then fail "bad JSON accepted"; fi
grep -q "bad.json" "$tmp/err" || fail "message: $(cat "$tmp/err")"
if "$BBVFL_BIN" bench scaling --rpc "$BBVFL_RPC_URL" --rounds 0 --no-files 2>"$tmp/err"; then fail "--rounds 0 accepted"; fi
grep -q -- "--rounds must be" "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo ok
