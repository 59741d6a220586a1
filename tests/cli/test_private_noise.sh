#!/usr/bin/env bash
# Private noise (issue 28): `--seed` fixes the public parts only (split, schedule, initialisation);
# every DP draw comes from the OS unless --reproducible-noise, which warns and voids every epsilon.
#  - two `train --offchain --seed 7` runs: NPQ (no noise) gives the same numbers (same split,
#    schedule and initialisation); PBM gives different ones (the noise differs); NPQ with
#    --label-epsilon 1 differs too (the randomized labels are redrawn); every epsilon shown, per
#    person first, each level named;
#  - the same two runs with --reproducible-noise: equal, a WARNING on stderr, and every epsilon
#    printed or in the JSON is none (null + epsilon_void);
#  - sweep: the same, per cell.
set -euo pipefail
: "${BBVFL_BIN:?}"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test private-noise

t() { # name [flags...]: one short off-chain run, its JSON on stdout into $work/name.json
  local name=$1; shift
  "$BBVFL_BIN" train --offchain --json --quiet --epochs 2 --clients 3 --seed 7 --out "$work/$name" "$@" \
    >"$work/$name.json" 2>"$work/$name.err" || { cat "$work/$name.err" >&2; fail "train $name failed"; }
}
curve() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["test_loss_per_epoch"])' "$work/$1.json"; }

t npq1 --mechanism npq
t npq2 --mechanism npq
[ "$(curve npq1)" = "$(curve npq2)" ] || fail "NPQ with the same --seed differs: the split, schedule or initialisation is not the seed's"
t pbm1
t pbm2
[ "$(curve pbm1)" != "$(curve pbm2)" ] || fail "PBM with the same --seed gave the same losses: the noise comes from the seed"
t pbm_rr --label-epsilon 1
t rr1 --mechanism npq --label-epsilon 1
t rr2 --mechanism npq --label-epsilon 1
[ "$(curve rr1)" != "$(curve rr2)" ] || fail "--label-epsilon 1 with the same --seed: the same labels were drawn"
grep -q WARNING "$work/pbm1.err" && fail "a private run warned: $(cat "$work/pbm1.err")"
t rep1 --label-epsilon 1 --reproducible-noise
t rep2 --label-epsilon 1 --reproducible-noise
[ "$(curve rep1)" = "$(curve rep2)" ] || fail "--reproducible-noise runs differ"
grep -q "WARNING: --reproducible-noise: .*NO epsilon holds" "$work/rep1.err" || fail "--reproducible-noise: no warning"
python3 - "$work/pbm1.json" "$work/rep1.json" "$work/pbm_rr.json" <<'PY' || fail "report.json epsilons"
import json, sys
p, r, q = (json.load(open(f)) for f in sys.argv[1:4])
# private: per person first, each named; without label DP the labels are unprotected, so there is
# no finite per-person figure (null), only the features-only one
assert p["reproducible_noise"] is False and p["headline"] == "per_person", p
assert p["epsilon_sample_level"] == "per_person" and p["epsilon_feature_level"] == "per_party", p
assert p["epsilon_sample"] is None and p["labels_protected"] is False and p["epsilon_sample_method"] == "none", p
assert p["epsilon_sample_features"] > p["epsilon_feature"] > 0, p
keys = list(p["privacy"])
assert keys.index("person") < keys.index("row_sample") < keys.index("row_feature"), keys
for k, lvl in (("person", "per_person"), ("row_sample", "per_person_features"), ("row_feature", "per_party"),
               ("feature_set", "per_party_column_set"), ("labels", "labels")):
    assert p["privacy"][k]["level"] == lvl, (k, p["privacy"][k])
# with --label-epsilon 1: the headline is the features' figure plus 1, the same in every place
assert q["labels_protected"] is True and q["epsilon_sample_method"].endswith("+rr"), q
assert abs(q["epsilon_sample"] - (q["epsilon_sample_features"] + 1)) < 1e-9 * q["epsilon_sample"], q
assert abs(q["privacy"]["person"]["epsilon"] - q["epsilon_sample"]) < 1e-9 * q["epsilon_sample"], q["privacy"]["person"]
# reproducible: every epsilon null with the reason, wherever it appears
assert r["reproducible_noise"] is True and r["epsilon_sample"] is None and r["epsilon_feature"] is None, r
assert r["epsilon_sample_features"] is None, r
assert "regenerated from the session file" in r["epsilon_void"], r
def walk(o, path=""):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("epsilon", "rdp", "pld") or k.startswith("epsilon_") and k not in ("epsilon_void",) and not k.endswith(("_level", "_method")):
                assert v is None, (path + "." + k, v)
            walk(v, path + "." + k)
walk(r)
for k in ("row_sample", "row_feature", "labels"):
    assert r["privacy"][k]["epsilon_void"], (k, r["privacy"][k])
print("private: per person unbounded (features only %.4g), per party %.4g; with --label-epsilon 1 per person %.4g; "
      "reproducible: none" % (p["epsilon_sample_features"], p["epsilon_feature"], q["epsilon_sample"]))
PY
# the printed line: per person first; reproducible: none
"$BBVFL_BIN" train --offchain --epochs 1 --clients 3 --seed 7 --out "$work/h1" >"$work/h1.out" 2>&1 || fail "train (text)"
grep -q "^privacy: epsilon at delta 1e-05, not end-to-end: per person unbounded (the labels are unprotected.*; per person, features only [0-9.e+]* (pld); per party" "$work/h1.out" ||
  fail "train: the privacy line does not lead with the per-person level: $(grep privacy "$work/h1.out")"
"$BBVFL_BIN" train --offchain --epochs 1 --clients 3 --seed 7 --reproducible-noise --out "$work/h2" >"$work/h2.out" 2>&1 || fail "train (text, reproducible)"
grep -q "^privacy: every epsilon is none: the noise can be regenerated from the session file" "$work/h2.out" ||
  fail "train --reproducible-noise: the privacy line shows an epsilon: $(grep privacy "$work/h2.out")"
grep -q "(pld)" "$work/h2.out" && fail "train --reproducible-noise printed an epsilon"

# sweep: per person first in the table; reproducible: none
"$BBVFL_BIN" sweep --epochs 1 --seeds 1 --clients 2 --b 4 --beta 0.1 --out "$work/sw" >"$work/sw.out" 2>&1 || fail "sweep"
grep -q "(eps a / b): a per person" "$work/sw.out" || fail "sweep: no per-person legend: $(cat "$work/sw.out")"
"$BBVFL_BIN" sweep --epochs 1 --seeds 1 --clients 2 --b 4 --beta 0.1 --reproducible-noise --out "$work/sw2" >"$work/sw2.out" 2>&1 || fail "sweep (reproducible)"
grep -q "eps none" "$work/sw2.out" || fail "sweep --reproducible-noise: cells show an epsilon: $(cat "$work/sw2.out")"
python3 - "$work/sw/sweep.json" "$work/sw2/sweep.json" <<'PY' || fail "sweep.json epsilons"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
pbm = [c for c in a["cells"] if c["mechanism"] == "pbm"][0]
assert pbm["headline"] == "per_person" and pbm["epsilon_sample"] is None and not pbm["labels_protected"], pbm
assert pbm["epsilon_sample_features"] > pbm["epsilon_feature"] > 0, pbm
pbm2 = [c for c in b["cells"] if c["mechanism"] == "pbm"][0]
assert pbm2["epsilon_sample"] is None and pbm2["epsilon_feature"] is None and pbm2["epsilon_void"], pbm2
PY
echo "private noise: ok"
