#!/usr/bin/env bash
# bbvfl privacy: the issue's command prints the curve and both epsilons; --json carries the
# interface fields with the values pinned in tests/unit/test_dp_accountant.c (computed
# independently by tests/reference/pbm_rdp.py); calibration round-trips; bad input exits 2.
set -euo pipefail
: "${BBVFL_BIN:?}"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
num() { python3 -c 'import json,sys; d=json.load(sys.stdin); v=d
for k in sys.argv[1].split("."): v=v[k]
print(v)' "$1"; }
near() { python3 -c 'import sys; a,b,t=map(float,sys.argv[1:]); sys.exit(0 if abs(a-b)<=t*abs(b) else 1)' "$1" "$2" "$3"; }

human=$("$BBVFL_BIN" privacy --b 16 --beta 0.2 --P 16 --M 5 --epochs 30 --delta 1e-5)
grep -q "RDP curve" <<<"$human" || fail "no RDP curve in the human output"
grep -q "per party (feature level)   epsilon = 2923" <<<"$human" || fail "feature epsilon missing: $human"
grep -q "per person (sample level)  epsilon = 1.374e+04" <<<"$human" || fail "sample epsilon missing"
# per person first (issue 28)
[ "$(grep -n "per person (sample level)  epsilon" <<<"$human" | cut -d: -f1)" -lt \
  "$(grep -n "per party (feature level)   epsilon" <<<"$human" | cut -d: -f1)" ] || fail "the per-party epsilon is printed first"
! grep -q "^warning: an RDP optimum sits at an end" <<<"$human" || fail "a grid-edge warning, but the optimum (alpha 1.07) is inside the grid"
grep -q "false" <<<"$("$BBVFL_BIN" privacy --json | python3 -c "import json,sys; print(str(json.load(sys.stdin)[\"at_grid_edge\"]).lower())")" || fail "at_grid_edge should be false"
# the numbers come with what they do not guarantee (docs/PRIVACY.md)
grep -q "^Scope: .*not an end-to-end guarantee.*labels are not protected" <<<"$human" || fail "no scope line"

j=$("$BBVFL_BIN" privacy --b 16 --beta 0.2 --P 16 --M 5 --epochs 30 --delta 1e-5 --json)
grep -q "not an end-to-end guarantee" <<<"$(num scope <<<"$j")" || fail "JSON scope missing"
for f in epsilon_feature epsilon_sample alpha_feature alpha_sample delta epsilon_feature_std \
         epsilon_sample_std alpha rdp_feature rdp_sample at_grid_edge; do
  num "$f" <<<"$j" >/dev/null || fail "JSON field $f missing"
done
near "$(num epsilon_feature <<<"$j")" 2923.1646037228599 1e-9 || fail "epsilon_feature"
near "$(num epsilon_sample <<<"$j")" 13738.719758754085 1e-9 || fail "epsilon_sample"
near "$(num epsilon_feature_std <<<"$j")" 2926.8580745293209 1e-9 || fail "epsilon_feature_std"
near "$(num alpha_feature <<<"$j")" 1.07 1e-12 || fail "alpha_feature"
near "$(num delta <<<"$j")" 1e-5 1e-12 || fail "delta"
# the exact PLD epsilons (pinned against the 60-digit reference in tests/unit/test_dp_accountant.c)
# lie between the composed KL divergence and the RDP conversion; the reported one is the smaller
python3 - "$j" <<'PY' || fail "PLD fields"
import json, sys
o = json.loads(sys.argv[1])
assert 2602.9 < o["pld"]["epsilon_feature"] < o["epsilon_feature"], o["pld"]
assert 5 * 2602.9 < o["pld"]["epsilon_sample"] < o["epsilon_sample"], o["pld"]
assert o["best"] == {"epsilon_feature": o["pld"]["epsilon_feature"], "method_feature": "pld",
                     "epsilon_sample": o["pld"]["epsilon_sample"], "method_sample": "pld"}, o["best"]
PY
grep -q "^reported (the smaller of the two methods): per person, features only 1.3[0-9]*e+04 (PLD), per party 2890 (PLD)" <<<"$human" || fail "no reported PLD line: $(grep reported <<<"$human")"
grep -q "^per person, the headline: unbounded: the labels are unprotected" <<<"$human" || fail "no unbounded per-person headline: $(grep headline <<<"$human")"
"$BBVFL_BIN" privacy --label-epsilon 1 --json | python3 -c 'import json,sys; o = json.load(sys.stdin); h = o["per_person"]; b = o["best"]["epsilon_sample"]; assert h["labels_protected"] and abs(h["epsilon"] - (b + 1)) < 1e-9 * h["epsilon"], (h, b)' || fail "privacy --label-epsilon 1: the headline is not the features figure plus 1"
# feature-set level: every one of the 455 rows' releases composes (the RDP number is the feature
# level with P = 455 x 16; the PLD one sits between 455 x KL and it)
big=$("$BBVFL_BIN" privacy --b 16 --beta 0.2 --P 7280 --epochs 30 --json)
near "$(num epsilon_feature_set <<<"$j")" "$(num epsilon_feature <<<"$big")" 1e-12 || fail "feature-set RDP"
python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert o["rows"] == 455 and 455 * 2602.9 < o["pld"]["epsilon_feature_set"] < o["epsilon_feature_set"], o["pld"]' "$j" ||
  fail "feature-set PLD"
grep -q "feature-set level (one client's whole column set: all 455 rows' releases compose)" <<<"$human" ||
  fail "no feature-set line"
[ "$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["rdp_feature"]))' <<<"$j")" = 165 ] ||
  fail "curve should have 165 orders"

# defaults are the paper's setup
near "$("$BBVFL_BIN" privacy --json | num epsilon_feature)" 2923.1646037228599 1e-9 || fail "defaults"

# masked mode: pinned against the reference too
# (against a chain reader: --colluding 0)
m=$("$BBVFL_BIN" privacy --masked --colluding 0 --json)
near "$(num masked.epsilon_feature <<<"$m")" 786.10451950973253 1e-8 || fail "masked epsilon"
# by default against one participant (it knows its own output): the sum of the 4 others
m1=$("$BBVFL_BIN" privacy --masked --json)
m4=$("$BBVFL_BIN" privacy --masked --M 4 --colluding 0 --json)
[ "$(num masked.colluding <<<"$m1")" = 1 ] || fail "default --colluding is not 1"
near "$(num masked.epsilon_feature <<<"$m1")" "$(num masked.epsilon_feature <<<"$m4")" 1e-12 ||
  fail "masked against one participant differs from 4 clients against a chain reader"
near "$(num masked.epsilon_feature <<<"$m1")" 958 0.002 || fail "masked epsilon against a participant"
grep -q "against 1.*colluding participant" <<<"$("$BBVFL_BIN" privacy --masked)" || fail "masked text does not name the observer"

# calibration: solve beta for a target, then the target is met with that beta
jb=$("$BBVFL_BIN" privacy --b 16 --target 50 --json)
beta=$(num beta <<<"$jb")
near "$("$BBVFL_BIN" privacy --b 16 --beta "$beta" --json | num epsilon_feature)" 50 1e-6 ||
  fail "beta $beta does not give epsilon 50"
[ "$("$BBVFL_BIN" privacy --beta 0.2 --target 2941 --json | num b)" = 16 ] || fail "solve b"

# gaussian baseline: alpha (2c)^2 / (2 sigma^2) per release, 30 epochs: alpha=2 -> 30*2*4/18
g=$("$BBVFL_BIN" privacy --mechanism gaussian --clip 1 --sigma 3 --json)
near "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["rdp_feature"][d["alpha"].index(2.0)])' <<<"$g")" \
  13.333333333333334 1e-10 || fail "gaussian curve"

# bad input: exit 2 with a message naming the problem
expect_err() {
  local want=$1; shift
  set +e; out=$("$BBVFL_BIN" privacy "$@" 2>&1); st=$?; set -e
  [ "$st" = 2 ] || fail "privacy $* exited $st, want 2"
  grep -q -- "$want" <<<"$out" || fail "privacy $*: message lacks '$want': $out"
}
expect_err "beta must be in" --beta 0.5
expect_err "b (binomial trials)" --b 300
expect_err "delta must be" --delta 0
expect_err "unreachable" --beta 0.3 --target 8
expect_err "exactly one of" --target 8
expect_err "mechanism must be" --mechanism laplace
expect_err "needs --clip" --mechanism gaussian
expect_err "needs a number" --beta abc
expect_err "colluding must be in 0..M-1 = 4" --masked --colluding 5
expect_err "colluding applies to --masked only" --colluding 1
expect_err "rows must be >= 1" --rows 0
echo "ok"
