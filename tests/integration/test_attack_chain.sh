#!/usr/bin/env bash
# `bbvfl attack --session`: the attacks on a session's chain, the attacker reading the chain alone
# (audit/attack.h bbvfl_attack_chain, docs/PRIVACY.md "Attacks").
#  1. `bbvfl demo` (3 clients, 2 epochs, PBM default, no label DP) on the test's devnet; then
#     `bbvfl attack --session ... --victim-address <client 0's address> --json`: the output has the
#     configuration's row with every figure (epsilon, label inference and its chance, inversion MSE
#     against its baseline, membership advantage) and the row counts it used; label inference reads
#     every training label read back correctly (1.0) and beats chance (the majority class); the
#     inversion ran on the victim's releases (aux = test rows, victims = training rows, each
#     covering the whole split) and its gain is finite; membership scored every row.
#  2. The same with --label-epsilon 1: the label figure falls to randomized response's rate (within
#     5 standard deviations of e/(e+1) over the rows read).
#  3. VFL-AFE on chain (--afe --afe-clip 4 --afe-rescale --afe-adjust): the session file carries the
#     steps, the attack names "chain afe pbm", the audit passes, every label still reads back; with
#     three evaluation rounds (--eval-rows-per-round 40) every test row is held once, at its place.
#  4. Refusals: an address that is not a client of the session; --victim-address missing; --rpc
#     without --session. Each a clear error, exit status 2 (argument) or the error's own, no output
#     on stdout.
# Runs under tests/with-devnet.sh (BBVFL_RPC_URL), needs BBVFL_BIN.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}"
session_test attack-chain

demo() { # name [demo flags...]
  local name=$1; shift
  "$BBVFL_BIN" demo --rpc "$BBVFL_RPC_URL" --clients 3 --epochs 2 --seed 7 --out "$work/$name" "$@" \
    >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; fail "demo $name failed"; }
}
attack() { # name: the attack on run name's chain, JSON in $work/name.attack.json
  local addr
  addr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["client_summaries"][0]["address"])' "$work/$1/report.json")
  "$BBVFL_BIN" attack --session "$work/$1/session.json" --victim-address "$addr" --victim 0 --shadows 1 --json \
    >"$work/$1.attack.json" 2>"$work/$1.attack.err" || { cat "$work/$1.attack.err" >&2; fail "attack $1 failed"; }
}

demo plain
attack plain
python3 - "$work/plain.attack.json" <<'PY'
import json, math, sys
o = json.load(open(sys.argv[1]))
assert o["source"] == "chain", o
assert o["audit_verdict_fail"] is False, o
(r,) = o["attacks"]
for k in ("configuration", "epsilon", "test_accuracy", "label_inference_accuracy", "label_chance", "label_rr_rate",
          "inversion_mse", "inversion_mse_baseline", "inversion_gain", "membership_advantage", "membership_accuracy",
          "label_rows", "inversion_aux_rows", "inversion_victim_rows", "membership_in_rows", "membership_out_rows"):
    assert k in r, k
assert r["configuration"] == "chain pbm", r["configuration"]
assert r["epsilon"] is not None and r["epsilon"] > 0, r["epsilon"]
# Breast Cancer, test fraction 0.2: 455 training rows, 114 test rows; B-sized windows cover all but a ragged tail
assert 400 <= r["label_rows"] <= 455, r["label_rows"]
assert r["label_inference_accuracy"] == 1.0, r["label_inference_accuracy"]
assert r["label_inference_accuracy"] > r["label_chance"] + 0.2, (r["label_inference_accuracy"], r["label_chance"])
assert 0.5 <= r["label_chance"] < 0.8, r["label_chance"]
assert r["label_rr_rate"] is None, r["label_rr_rate"]
assert r["inversion_aux_rows"] == 114 and 400 <= r["inversion_victim_rows"] <= 455, r
assert r["inversion_mse_baseline"] > 0 and math.isfinite(r["inversion_mse"]), r
assert r["inversion_gain"] == 1 - r["inversion_mse"] / r["inversion_mse_baseline"] or abs(
    r["inversion_gain"] - (1 - r["inversion_mse"] / r["inversion_mse_baseline"])) < 1e-9, r
assert r["membership_in_rows"] == r["label_rows"] and r["membership_out_rows"] == 114, r
assert -1 <= r["membership_advantage"] <= 1 and 0 <= r["membership_accuracy"] <= 1, r
print("plain: label %.3f (chance %.3f) on %d rows, inversion gain %.3f, membership advantage %.3f" % (
    r["label_inference_accuracy"], r["label_chance"], r["label_rows"], r["inversion_gain"], r["membership_advantage"]))
PY

demo labeldp --label-epsilon 1
attack labeldp
python3 - "$work/labeldp.attack.json" <<'PY'
import json, math, sys
(r,) = json.load(open(sys.argv[1]))["attacks"]
p = math.e / (math.e + 1)
assert abs(r["label_rr_rate"] - p) < 1e-9, r["label_rr_rate"]
n = r["label_rows"]
sd = math.sqrt(p * (1 - p) / n)
assert abs(r["label_inference_accuracy"] - p) < 5 * sd, (r["label_inference_accuracy"], p, sd)
print("label DP eps 1: label %.3f against randomized response's %.3f (+-%.3f) on %d rows" % (
    r["label_inference_accuracy"], p, 5 * sd, n))
PY

# 3. VFL-AFE on chain: --afe --afe-clip 4 --afe-rescale --afe-adjust before PBM; the session file
#    carries the steps, the attack names the configuration, the audit passes, labels still leak.
demo afe --afe --afe-clip 4 --afe-rescale --afe-adjust --eval-rows-per-round 40
attack afe
python3 - "$work/afe/session.json" "$work/afe.attack.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["training"]["afe"]
assert a["clip"] == 4 and a["rescale"] is True and a["adjust"] is True, a
o = json.load(open(sys.argv[2]))
assert o["audit_verdict_fail"] is False, o
(r,) = o["attacks"]
assert r["configuration"] == "chain afe pbm", r["configuration"]
assert r["label_inference_accuracy"] == 1.0, r
# three evaluation rounds (40, 40, 34 test rows): each row kept at its own place
assert r["inversion_aux_rows"] == 114 and r["membership_out_rows"] == 114, r
print("afe on chain: accuracy %.3f, epsilon %.4g, inversion gain %.3f, membership advantage %.3f" % (
    r["test_accuracy"], r["epsilon"], r["inversion_gain"], r["membership_advantage"]))
PY

refused() { # what expected-status message-pattern args...: no stdout, that message on stderr
  local what=$1 want=$2 pattern=$3; shift 3
  set +e
  "$BBVFL_BIN" attack "$@" >"$work/ref.out" 2>"$work/ref.err"
  local rc=$?
  set -e
  [ "$rc" = "$want" ] || { cat "$work/ref.err" >&2; fail "$what: exit $rc, expected $want"; }
  [ ! -s "$work/ref.out" ] || fail "$what: wrote to stdout"
  grep -q "^bbvfl: error: .*$pattern" "$work/ref.err" || { cat "$work/ref.err" >&2; fail "$what: not the message '$pattern'"; }
  echo "ok: $what refused ($(head -c 160 "$work/ref.err"))"
}
refused "an address that is not a client" 2 "not a registered client of the session" --session "$work/plain/session.json" \
  --victim-address 0x000000000000000000000000000000000000dEaD --shadows 0
refused "no --victim-address" 2 "needs --victim-address" --session "$work/plain/session.json"
refused "--rpc without --session" 2 "go with --session" --rpc "$BBVFL_RPC_URL"
echo "PASS"
