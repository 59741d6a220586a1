#!/usr/bin/env bash
# Row mode on chain (`--privacy row`: DP feature scaling, DP-SGD in every client, PBM releases):
# `bbvfl demo` with real client processes, 3 clients, 2 epochs, --compare. The session file carries
# the row-mode parameters to every client, so the on-chain run trains bit-identically to the
# off-chain trainer replaying the session (same seed, same session seed S; --compare implies
# --reproducible-noise, so the demo's epsilons are void and the accounting is checked on the
# off-chain runs, which use private noise): equal AUROC, whatever
# order the client processes happen to run their forwards and DP-SGD steps in (the DP-SGD noise has
# its own stream). The report says end-to-end and gives the same epsilons as
# `bbvfl train --offchain` with the same flags, and they compose more than the releases alone (the
# paper's mode, same PBM parameters). Then the same for the encoder mode, and its audit.
# Runs under tests/with-devnet.sh (BBVFL_RPC_URL), needs BBVFL_BIN.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}"
session_test row-privacy

flags=(--clients 3 --epochs 2 --seed 5 --privacy row --dpsgd-noise 2 --dpsgd-clip 1 --scale-epsilon 0.25)
"$BBVFL_BIN" demo --rpc "$BBVFL_RPC_URL" --out "$work/run" --compare "${flags[@]}" >"$work/demo.log" 2>&1 ||
  { cat "$work/demo.log" >&2; fail "row-mode demo failed"; }
grep -q "every epsilon is none: the noise can be regenerated" "$work/demo.log" || fail "demo --compare summary shows an epsilon"
grep -q "WARNING: --compare implies --reproducible-noise" "$work/demo.log" || fail "demo --compare: no warning"
python3 - "$work/run/session.json" <<'PY' || fail "session.json: row_privacy"
import json, sys
rp = json.load(open(sys.argv[1]))["training"]["row_privacy"]
assert rp == {"dpsgd_clip": 1, "dpsgd_noise": 2, "scale_epsilon": 0.25}, rp
PY
"$BBVFL_BIN" train --offchain --quiet --json "${flags[@]}" --out "$work/off" >"$work/off.json" ||
  fail "off-chain row-mode run failed"
"$BBVFL_BIN" train --offchain --quiet --json --clients 3 --epochs 2 --seed 5 --out "$work/paper" >"$work/paper.json" ||
  fail "off-chain paper-mode run failed"
python3 - "$work/run/report.json" "$work/off.json" "$work/paper.json" <<'PY' || fail "report.json against the off-chain runs"
import json, sys
r, o, p = (json.load(open(f)) for f in sys.argv[1:4])
assert r["auroc"] == r["auroc_offchain_same_seed"], (r["auroc"], r["auroc_offchain_same_seed"])
rp, op, pp = r["privacy"], o["privacy"], p["privacy"]
assert rp["end_to_end"] is True and op["end_to_end"] is True and pp["end_to_end"] is False
# the demo ran with reproducible noise (--compare): no epsilon; the private off-chain runs have them
assert rp["reproducible_noise"] is True and rp["row_sample"]["epsilon"] is None and rp["row_feature"]["epsilon"] is None
for lvl in ("row_feature", "row_sample"):
    assert op[lvl]["epsilon"] > pp[lvl]["rdp"], (lvl, op[lvl], pp[lvl])
assert rp["feature_set"] is None
print("row mode on chain: AUROC %.4f (= off chain), off chain per person %.1f, per party %.1f (releases alone %.1f)"
      % (r["auroc"], op["row_sample"]["epsilon"], op["row_feature"]["epsilon"], pp["row_feature"]["rdp"]))
PY
# The encoder mode (`--encoder pca`: sign features around DP medians, a frozen DP-PCA layer, each row
# released once and re-sent): on chain as off chain (equal AUROC), the session carries the encoder,
# the report's exact composition equals the off-chain one, and the audit of the chain passes.
eflags=(--clients 3 --epochs 3 --seed 5 --privacy row --encoder pca --pca-noise 4 --scale-epsilon 1 --P 1 --b 2
        --beta 0.4 --lr 0.01)
"$BBVFL_BIN" demo --rpc "$BBVFL_RPC_URL" --out "$work/enc" --compare "${eflags[@]}" >"$work/enc.log" 2>&1 ||
  { cat "$work/enc.log" >&2; fail "encoder demo failed"; }
grep -q "every epsilon is none" "$work/enc.log" || fail "encoder demo --compare summary shows an epsilon"
"$BBVFL_BIN" train --offchain --quiet --json "${eflags[@]}" --out "$work/encoff" >"$work/encoff.json" ||
  fail "off-chain encoder run failed"
"$BBVFL_BIN" audit --session "$work/enc/session.json" --json --quiet >"$work/enc.audit.json" 2>"$work/enc.audit.err" ||
  { cat "$work/enc.audit.err" >&2; fail "the audit of the encoder session failed"; }
python3 - "$work/enc/session.json" "$work/enc/report.json" "$work/encoff.json" "$work/enc.audit.json" <<'PY' || fail "encoder session against the off-chain run"
import json, sys
s, r, o, a = (json.load(open(f)) for f in sys.argv[1:5])
rp = s["training"]["row_privacy"]
assert rp["encoder"] == "pca" and rp["pca_noise"] == 4 and rp["scale_epsilon"] == 1, rp
assert r["auroc"] == r["auroc_offchain_same_seed"], (r["auroc"], r["auroc_offchain_same_seed"])
assert r["auroc"] > 0.8, r["auroc"]
pr, po = r["privacy"], o["privacy"]
assert pr["encoder"] == "pca" and pr["end_to_end"] is True
for lvl in ("row_feature", "row_sample"):
    assert pr[lvl]["epsilon"] is None and pr[lvl]["epsilon_void"], pr[lvl]  # --compare: reproducible noise
    assert po[lvl]["method"] == "pld" and po[lvl]["epsilon"] <= po[lvl]["rdp"], po[lvl]
# the audit: the chain's releases (not end to end); the session file declares reproducible noise,
# so the audit shows no epsilon (and no declared row-mode figures) either
ae = a["figures"]["epsilon"]
assert ae["levels"]["end_to_end"] is False and ae["levels"]["reproducible_noise"] is True, ae["levels"]
assert ae["declared_by_session"] is None and ae["sample"] is None and ae["epsilon_void"], ae
print("encoder on chain: AUROC %.4f (= off chain); off chain per person %.3f, per party %.3f (pld)"
      % (r["auroc"], po["row_sample"]["epsilon"], po["row_feature"]["epsilon"]))
PY
echo "row privacy: ok"
