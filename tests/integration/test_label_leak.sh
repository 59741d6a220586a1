#!/usr/bin/env bash
# The labels leak through the chain, and label DP bounds the leak (docs/PRIVACY.md, "Labels").
#  1. `bbvfl demo` (real client processes, 3 clients, 2 epochs) on the test's devnet; the active
#     client dumps each training round's true labels (test hook BBVFL_TEST_DUMP_Q, y-<round>.bin).
#     `bbvfl audit --recover-labels` reads the labels back from the chain alone (the posted
#     gradients and head): every one of them must equal the true label, for every training round.
#  2. The same session with --label-epsilon 1 (randomized response once per training row): the
#     audit reads back exactly the labels trained on, and those agree with the true labels about as
#     often as randomized response keeps them, e/(1+e) = 0.731: within [0.62, 0.84] (five standard
#     deviations over the ~455 distinct rows; the draw is seeded, so the figure is the same each run).
#     Recovery falls from 100 % to what the label epsilon allows.
# Runs under tests/with-devnet.sh (BBVFL_RPC_URL), needs BBVFL_BIN.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}"
session_test label-leak

run() { # name [demo flags...]: demo with the label dump, then the audit's read-back
  local name=$1; shift
  mkdir -p "$work/$name.dump"
  BBVFL_TEST_DUMP_Q="$work/$name.dump" "$BBVFL_BIN" demo --rpc "$BBVFL_RPC_URL" --clients 3 --epochs 2 --seed 7 \
    --out "$work/$name" "$@" >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; fail "demo $name failed"; }
  "$BBVFL_BIN" audit --session "$work/$name/session.json" --quiet --recover-labels "$work/$name.csv" \
    >"$work/$name.audit" 2>&1 || { cat "$work/$name.audit" >&2; fail "audit $name failed"; }
  grep -q "labels read back from the posted gradients" "$work/$name.audit" || fail "audit $name: no read-back line"
}

compare() { # name lo hi: prints the agreement figures, fails outside [lo, hi] for true labels
  python3 - "$work/$1.csv" "$work/$1.dump" "$2" "$3" <<'PY'
import csv, os, struct, sys
rows = list(csv.DictReader(open(sys.argv[1])))
lo, hi = float(sys.argv[3]), float(sys.argv[4])
assert rows, "no labels read back"
by_round = {}
for r in rows:
    by_round.setdefault(int(r["round"]), []).append(r)
n = same_true = same_used = 0
for rnd, rs in sorted(by_round.items()):
    path = os.path.join(sys.argv[2], "y-%d.bin" % rnd)
    assert os.path.exists(path), "round %d: the active client dumped no labels" % rnd
    raw = open(path, "rb").read()
    B = len(raw) // 8
    vals = struct.unpack("<%di" % (2 * B), raw)
    true, used = vals[:B], vals[B:]
    assert len(rs) == B, "round %d: %d labels read back, batch of %d" % (rnd, len(rs), B)
    for r in rs:
        i = int(r["position"])
        assert r["train_row"] != "", "round %d: no training row (the session file gives the row count)" % rnd
        n += 1
        same_true += int(r["label"]) == true[i]
        same_used += int(r["label"]) == used[i]
dumped = len([f for f in os.listdir(sys.argv[2]) if f.startswith("y-")])
assert dumped == len(by_round), "%d training rounds dumped, %d read back" % (dumped, len(by_round))
print("%d labels read back over %d training rounds: %.4f equal the true labels, %.4f the labels trained on"
      % (n, len(by_round), same_true / n, same_used / n))
assert same_used == n, "the read-back must give exactly the labels trained on"
assert lo <= same_true / n <= hi, "agreement with the true labels %.4f outside [%g, %g]" % (same_true / n, lo, hi)
PY
}

run plain
compare plain 1 1 || fail "without label DP every label must be read back"
grep -q "labels unprotected" "$work/plain/report.json" "$work/plain.log" || fail "demo does not say the labels are unprotected"

run rr --label-epsilon 1
compare rr 0.62 0.84 || fail "with --label-epsilon 1 the read-back must match randomized response"
python3 - "$work/rr/report.json" <<'PY' || fail "report.json: the label epsilon"
import json, sys
p = json.load(open(sys.argv[1]))["privacy"]["labels"]
assert p["epsilon"] == 1 and p["method"] == "rr", p
PY
echo "label leak: ok"
