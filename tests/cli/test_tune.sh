#!/usr/bin/env bash
# bbvfl tune: the winner is calibrated to the target (its reported end-to-end epsilon at the
# calibrated level is the target, to 1e-4, never above it), tune.json carries the interface fields
# and an on-chain command with the winner's flags, the output says the tuning is not private; an
# unreachable target and a missing one are refused with a clear message and nothing written.
set -euo pipefail
: "${BBVFL_BIN:?}"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test tune

"$BBVFL_BIN" tune --target-epsilon 30 --noise 2,4 --seeds 2 --tune-seeds 1 --out "$work/t" >"$work/t.out" 2>"$work/t.err" ||
  { cat "$work/t.err" >&2; fail "tune failed"; }
grep -q "the tuning itself is not private" "$work/t.out" || fail "no warning that tuning is not private"
grep -q "end-to-end (row mode)" "$work/t.out" || fail "no end-to-end privacy line"
python3 - "$work/t/tune.json" <<'PY' || fail "tune.json"
import json, sys
o = json.load(open(sys.argv[1]))
p = o["privacy"]
assert p["end_to_end"] is True, p
lvl = p["masked_row_feature"] if o["masked"] else p["row_feature"]
assert 30 * (1 - 1e-4) <= lvl["epsilon"] <= 30 * (1 + 1e-9), lvl
assert 0 < o["beta"] < 0.5 and o["epochs"] in (3, 5, 10) and o["P"] in (2, 4), o
assert 0 <= o["test_auroc_median"] <= 1 and 0 <= o["validation_auroc"] <= 1, o
for flag in ("--privacy row", "--epochs %d" % o["epochs"], "--P %d" % o["P"], "--dpsgd-noise %g" % o["dpsgd_noise"]):
    assert flag in o["demo"], (flag, o["demo"])
assert ("--masked" in o["demo"]) == bool(o["masked"]), o["demo"]
assert "not itself private" in o["note"]
PY

# the encoder mode (--encoder pca): calibrated through the exact composition, each row released once
"$BBVFL_BIN" tune --target-epsilon 8 --encoder pca --lr 0.01 --seeds 2 --tune-seeds 1 --out "$work/e" >"$work/e.out" 2>"$work/e.err" ||
  { cat "$work/e.err" >&2; fail "tune --encoder pca failed"; }
grep -q "DP-PCA encoder, each row released once" "$work/e.out" || fail "the encoder tune does not name its mode"
grep -q "the tuning itself is not private" "$work/e.out" || fail "no warning that tuning is not private (encoder)"
python3 - "$work/e/tune.json" <<'PY' || fail "tune.json (encoder)"
import json, sys
o = json.load(open(sys.argv[1]))
p = o["privacy"]
assert o["encoder"] == "pca" and p["encoder"] == "pca" and p["end_to_end"] is True, o
lvl = p["row_feature"]
assert 8 * (1 - 1e-4) <= lvl["epsilon"] <= 8 * (1 + 1e-9) and lvl["method"] == "pld", lvl
assert o["b"] in (1, 2, 4, 8) and o["P"] in (1, 2) and o["pca_noise"] in (2, 4, 8, 16), o
for flag in ("--privacy row", "--encoder pca", "--b %d" % o["b"], "--P %d" % o["P"], "--pca-noise %g" % o["pca_noise"],
             "--scale-epsilon %g" % o["scale_epsilon"]):
    assert flag in o["demo"], (flag, o["demo"])
assert o["test_auroc_median"] > 0.9, o
PY

set +e
"$BBVFL_BIN" tune --target-epsilon 0.01 --noise 4 --tune-seeds 1 --out "$work/u" >"$work/u.out" 2>&1; rc=$?
set -e
[ "$rc" != 0 ] || fail "an unreachable target was accepted"
grep -q "no candidate reaches epsilon 0.01" "$work/u.out" || fail "unclear message: $(cat "$work/u.out")"
[ ! -e "$work/u" ] || fail "a refused tune left $work/u behind"
set +e
"$BBVFL_BIN" tune --out "$work/m" >"$work/m.out" 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "a missing target gave exit $rc"
grep -q -- "--target-epsilon E is required" "$work/m.out" || fail "unclear message: $(cat "$work/m.out")"
set +e
"$BBVFL_BIN" tune --target-epsilon 8 --noise 2,x --out "$work/n" >"$work/n.out" 2>&1; rc=$?
set -e
[ "$rc" = 2 ] && grep -q -- "--noise '2,x'" "$work/n.out" || fail "a bad --noise list: exit $rc, $(cat "$work/n.out")"
[ ! -e "$work/n" ] || fail "a refused tune left $work/n behind"
echo "tune: ok"
