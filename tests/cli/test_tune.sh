#!/usr/bin/env bash
# bbvfl tune: the target is per person by default (row_sample, never above the target, to 1e-4
# below it), per party with --level party; tune.json has the interface fields (level, epsilon,
# delta, auroc_median, auroc_per_split with 5 splits, ceiling, config), the ceiling is
# e^eps/(1+e^eps) at the per-person epsilon, the noise is private (the same command twice gives
# different per-split AUROCs), the default design is the DP-PCA encoder; the output leads with
# per person and says the tuning is not private; an unreachable target, a missing one and bad
# flags are refused with a clear message and nothing written. --grid quick keeps it short.
set -euo pipefail
: "${BBVFL_BIN:?}"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test tune

# the default level and design, as a user types it (but the quick grid)
"$BBVFL_BIN" tune --target-epsilon 8 --grid quick --out "$work/p" >"$work/p.out" 2>"$work/p.err" ||
  { cat "$work/p.err" >&2; fail "tune failed"; }
grep -q "the tuning itself is not private" "$work/p.out" || fail "no warning that tuning is not private"
grep -q "^best at epsilon 8 per person" "$work/p.out" || fail "the output does not lead with per person: $(head -1 "$work/p.out")"
grep -q "epsilon per person 8 (5 parties); per party" "$work/p.out" || fail "no per-person then per-party line"
grep -q "ceiling 0.9997" "$work/p.out" || fail "no ceiling printed"
"$BBVFL_BIN" tune --target-epsilon 8 --grid quick --json --out "$work/p2" >"$work/p2.json" 2>"$work/p2.err" ||
  { cat "$work/p2.err" >&2; fail "tune --json failed"; }
python3 - "$work/p/tune.json" "$work/p2.json" <<'PY' || fail "tune.json (person)"
import json, math, statistics, sys
o = json.load(open(sys.argv[1]))
o2 = json.load(open(sys.argv[2]))
for k in ("level", "epsilon", "delta", "auroc_median", "auroc_per_split", "ceiling", "config"):
    assert k in o, k
assert o["level"] == "person" and o["delta"] == 1e-5, o
assert o["config"]["encoder"] == "pca", o["config"]          # the default design
e = o["epsilon"]
assert e == o["epsilon_person"] and 8 * (1 - 1e-4) <= e <= 8, o  # calibrated, never above
assert o["privacy"]["row_sample"]["epsilon"] == e, o["privacy"]["row_sample"]
assert o["epsilon_party"] < e, o
per = o["auroc_per_split"]
assert len(per) == 5 and all(0 <= a <= 1 for a in per), per
assert o["split_seeds"] == [1, 2, 3, 4, 5], o["split_seeds"]
assert abs(o["auroc_median"] - statistics.median(per)) < 1e-12, o
assert abs(o["ceiling"] - math.exp(e) / (1 + math.exp(e))) <= 2e-5 and o["ceiling"] >= math.exp(e) / (1 + math.exp(e)), o
assert o["noise"].startswith("private"), o["noise"]
c = o["config"]
for flag in ("--privacy row", "--encoder pca", "--b %d" % c["b"], "--P %d" % c["P"], "--pca-noise %g" % c["pca_noise"],
             "--scale-epsilon %g" % c["scale_epsilon"], "--epochs %d" % c["epochs"]):
    assert flag in o["demo"], (flag, o["demo"])
assert "not itself private" in o["note"]
# private noise: the same command again (same splits, same seeds) draws other noise, so the
# selection or the per-split AUROCs differ (with noise from the seeds both would repeat exactly)
assert o2["split_seeds"] == o["split_seeds"], (o2, o)
assert (o2["config"], o2["auroc_per_split"], o2["validation_auroc"]) != (o["config"], per, o["validation_auroc"]), \
    ("the same selection and per-split AUROCs twice: the noise is not private", per)
PY

# per party on request
"$BBVFL_BIN" tune --target-epsilon 2 --level party --grid quick --json --out "$work/f" >"$work/f.json" 2>"$work/f.err" ||
  { cat "$work/f.err" >&2; fail "tune --level party failed"; }
python3 - "$work/f.json" <<'PY' || fail "tune.json (party)"
import json, math, sys
o = json.load(open(sys.argv[1]))
assert o["level"] == "party", o
e = o["epsilon"]
assert e == o["epsilon_party"] == o["privacy"]["row_feature"]["epsilon"] and 2 * (1 - 1e-4) <= e <= 2, o
p = o["epsilon_person"]
assert p > e and abs(o["ceiling"] - math.exp(p) / (1 + math.exp(p))) <= 2e-5, o  # the ceiling is per person
assert len(o["auroc_per_split"]) == 5
PY

# the DP-SGD design on request (masked candidates: the masked bound at the party level)
"$BBVFL_BIN" tune --target-epsilon 30 --encoder dpsgd --level party --noise 4 --grid quick --splits 2 --json \
  --out "$work/d" >"$work/d.json" 2>"$work/d.err" || { cat "$work/d.err" >&2; fail "tune --encoder dpsgd failed"; }
python3 - "$work/d.json" <<'PY' || fail "tune.json (dpsgd)"
import json, sys
o = json.load(open(sys.argv[1]))
c = o["config"]
assert c["encoder"] == "dpsgd" and c["dpsgd_noise"] == 4 and len(o["auroc_per_split"]) == 2, o
lvl = o["privacy"]["masked_row_feature"] if c["masked"] else o["privacy"]["row_feature"]
assert 30 * (1 - 1e-4) <= lvl["epsilon"] <= 30 and lvl["epsilon"] == o["epsilon"], (lvl, o["epsilon"])
assert ("--masked" in o["demo"]) == bool(c["masked"]) and "--dpsgd-noise 4" in o["demo"], o["demo"]
PY

refused() { # refused EXIT-CODE MESSAGE-REGEX ARGS...: refused with that message, nothing written
  local want=$1 msg=$2 rc
  shift 2
  set +e
  "$BBVFL_BIN" tune "$@" --out "$work/x" >"$work/x.out" 2>&1
  rc=$?
  set -e
  [ "$rc" = "$want" ] || fail "tune $*: exit $rc, not $want: $(cat "$work/x.out")"
  grep -q -- "$msg" "$work/x.out" || fail "tune $*: unclear message: $(cat "$work/x.out")"
  [ ! -e "$work/x" ] || fail "a refused tune ($*) left $work/x behind"
}
refused 2 "no candidate reaches epsilon 0.01 at the person level" --target-epsilon 0.01 --grid quick
refused 2 -- "--target-epsilon E is required"
refused 2 -- "--noise '2,x'" --target-epsilon 8 --noise 2,x
refused 2 -- "--level must be person or party, got 'row'" --target-epsilon 8 --level row
refused 2 -- "--grid must be default, wide or quick" --target-epsilon 8 --grid huge
refused 2 -- "--splits in 1..64" --target-epsilon 8 --splits 0
echo "tune: ok"
