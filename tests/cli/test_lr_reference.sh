#!/usr/bin/env bash
# bbvfl train --model lr --optimizer sqn, full batch, Breast Cancer, M = 5, NPQ, 30 rounds, with the
# L2 strength of scikit-learn's default (C = 1, --l2 1/(C n_train)): test AUROC >= 0.99 and within
# 0.005 of centralised logistic regression on the pooled columns of the same split (computed here
# by tests/reference/lr_reference.py, never typed in); test_rows.csv and the report name the model.
# Skips (77) without Debian's python3-sklearn.
set -euo pipefail
: "${BBVFL_BIN:?}" "${BBVFL_SOURCE_DIR:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
PY=/usr/bin/python3
if ! "$PY" -c 'import sklearn' 2>/dev/null; then
  [ "${BBVFL_REQUIRE_SETUP:-0}" = 1 ] && fail "python3-sklearn missing"
  echo "skip: python3-sklearn is not installed"; exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-lr.XXXXXX")
trap 'rm -rf "$work"' EXIT
data="$BBVFL_SOURCE_DIR/data/breast_cancer.csv"

# the split first (one round), so that --l2 can be sklearn's 1/(C n_train)
"$BBVFL_BIN" train --offchain --model lr --batch 0 --epochs 1 --mechanism npq --seed 1 --lr 1 --out "$work/s" --quiet \
  >/dev/null || fail "the split run failed"
"$PY" "$BBVFL_SOURCE_DIR/tests/reference/lr_reference.py" --data "$data" --test-rows "$work/s/test_rows.csv" \
  >"$work/ref.json" || fail "the reference failed"
l2=$("$PY" -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["l2"]))' "$work/ref.json")
# no --lr: the linear model's default step (2/(M+1) = 1/3 with sqn), not the MLP's 0.001
"$BBVFL_BIN" train --offchain --model lr --optimizer sqn --l2 "$l2" --batch 0 --epochs 30 --mechanism npq \
  --seed 1 --out "$work/q" --quiet >/dev/null || fail "the sqn run failed"
cmp -s "$work/s/test_rows.csv" "$work/q/test_rows.csv" || fail "the same seed gave another split"
"$PY" - "$work/q/report.json" "$work/ref.json" <<'PY' || fail "lr vs the centralised reference"
import json, sys
r, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert r["model"] == "lr" and r["optimizer"] == "sqn" and r["P"] == 1 and r["epochs"] == 30, r
assert r["rounds_per_epoch"] == 1 and r["batch"] == r["n_train"] == ref["n_train"], (r, ref)
assert abs(r["lr"] - 1 / 3) < 1e-9, r["lr"]  # the linear model's default step with sqn
assert r["curvature_rounds"] == 0 and r["sqn_pairs"] == "local" and r["sqn_cap"] == 0, r  # defaults
assert r["auroc"] >= 0.99, r["auroc"]
assert abs(r["auroc"] - ref["auroc"]) <= 0.005, (r["auroc"], ref["auroc"])
print("lr+sqn AUROC %.4f, centralised %.4f" % (r["auroc"], ref["auroc"]))
PY

# refusals: sqn without lr, Taylor with more than two classes is checked by the unit test
set +e
"$BBVFL_BIN" train --offchain --optimizer sqn --out "$work/x" >"$work/x.out" 2>&1; rc=$?
set -e
[ "$rc" != 0 ] || fail "--optimizer sqn with the MLP was accepted"
grep -q -- "--optimizer sqn needs --model lr" "$work/x.out" || fail "unclear message: $(cat "$work/x.out")"
[ ! -e "$work/x/report.json" ] || fail "a refused run wrote a report"

# bench lr: every table x method once, lr.csv and lr.json; LR+SQN (lr 0.5, local pairs: no curvature
# round) needs at least 2x fewer rounds than LR+SGD at lr 1 (an untuned SGD: tools/sqn_rounds.py tunes)
"$BBVFL_BIN" bench lr --no-plot --out "$work/b" >"$work/b.out" 2>&1 ||
  { cat "$work/b.out" >&2; fail "bench lr failed"; }
[ -s "$work/b/lr.csv" ] || fail "no lr.csv"
"$PY" - "$work/b/lr.json" <<'PY' || fail "bench lr JSON"
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
assert sorted({r["method"] for r in rows}) == ["lr+adam", "lr+sgd", "lr+sqn", "mlp"], rows
assert len({r["data"] for r in rows}) == 2, rows
for d in {r["data"] for r in rows}:
    by = {r["method"]: r for r in rows if r["data"] == d}
    q, s = by["lr+sqn"], by["lr+sgd"]
    assert q["rounds_to_target"] is not None and s["rounds_to_target"] is not None, (q, s)
    assert q["rounds_to_target"] == q["train_rounds_to_target"] + q["curvature_rounds_to_target"], q
    assert q["curvature_rounds_to_target"] == 0, q
    assert 2 * q["rounds_to_target"] <= s["rounds_to_target"], (d, q["rounds_to_target"], s["rounds_to_target"])
    assert all(r["final_auroc"] >= 0.95 for r in by.values() if r["model"] == "lr"), by
PY
