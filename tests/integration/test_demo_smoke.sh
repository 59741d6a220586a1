#!/usr/bin/env bash
# `bbvfl demo --epochs 2 --json --compare` against the test's node (--rpc: nothing is started):
# it completes, report.json and the last stdout line carry the promised fields, metrics.csv has
# one row per epoch, the run folder's keys are 0600 and no client log or report holds a key;
# bad flags get clear errors. report.json's last-epoch metrics (auroc, accuracy, test_loss) equal
# the last row of metrics.csv, also for `demo --clients 3 --epochs 2 --seed 11` (an early version
# read them from a freed summary and wrote 0.0).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test demo
"$BBVFL_BIN" demo --epochs 2 --seed 5 --compare --json --rpc "$BBVFL_RPC_URL" --out "$work/run" >"$work/out" 2>"$work/err" \
  || { cat "$work/err" >&2; fail "demo failed"; }
# the same run folder again: refused before anything touches the chain (its clients' state dirs
# belong to the first session: their noise keys and election secrets must not serve a second)
b0=$(rpc eth_blockNumber "[]")
if "$BBVFL_BIN" demo --epochs 1 --rpc "$BBVFL_RPC_URL" --out "$work/run" >/dev/null 2>"$work/again.err"; then
  fail "a second demo into the same run folder ran"
fi
grep -q "already holds client 0's state of an earlier session" "$work/again.err" ||
  fail "unclear refusal of a reused run folder: $(cat "$work/again.err")"
[ "$(rpc eth_blockNumber "[]")" = "$b0" ] || fail "the refused demo sent transactions"
python3 - "$work/run" "$(tail -n 1 "$work/out")" <<'PY'
import json, os, stat, sys
run, last = sys.argv[1], json.loads(sys.argv[2])
rep = json.load(open(os.path.join(run, "report.json")))
assert rep == last, "the last stdout line differs from report.json"
for k in ("auroc", "auroc_offchain_same_seed", "epsilon_feature", "onchain_agg_s_per_epoch", "offchain_agg_s_per_epoch",
          "gas_per_round", "gas_per_coordinate", "wall_s", "rpc_url", "contract", "token", "rewards"):
    assert k in rep, k
# the on-chain run and its off-chain replay with the same seed compute the same numbers: the
# contract's integer sum is the in-process sum, so the AUROC is equal (not merely close)
assert 0.5 < rep["auroc"] <= 1, rep["auroc"]
assert rep["auroc"] == rep["auroc_offchain_same_seed"], (rep["auroc"], rep["auroc_offchain_same_seed"])
assert rep["onchain_agg_s_per_epoch"] > 0 and rep["offchain_agg_s_per_epoch"] > 0
assert 0 < rep["gas_per_coordinate"] < 1000 and rep["gas_per_round"] > 0
# --compare implies --reproducible-noise: the noise comes from the seed in session.json, so no
# epsilon holds and none is shown (null, with the reason); the session file records it
assert rep["reproducible_noise"] is True, rep.get("reproducible_noise")
assert rep["epsilon_feature"] is None and rep["epsilon_sample"] is None and "session file" in rep["epsilon_void"], rep
assert rep["privacy"]["row_sample"]["epsilon"] is None and rep["privacy"]["epsilon_void"], rep["privacy"]
assert json.load(open(os.path.join(run, "session.json")))["training"]["reproducible_noise"] is True
rounds = rep["rounds"]
assert len(rep["rewards"]) == 5
for a, bal in rep["rewards"].items():
    assert int(bal) == rounds * 10**18, (a, bal)
rows = open(os.path.join(run, "metrics.csv")).read().strip().splitlines()
assert rows[0].startswith("epoch,") and len(rows) == 3, rows
lastrow = dict(zip(rows[0].split(","), map(float, rows[-1].split(","))))
for k in ("auroc", "accuracy", "test_loss"):
    assert abs(rep[k] - lastrow[k]) <= 1e-6 and rep[k] > 0, (k, rep[k], lastrow[k])
for m in range(5):
    st = os.stat(os.path.join(run, "keys", "client-%d.key" % m))
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert os.path.exists(os.path.join(run, "clients", str(m), "client.log"))
    assert os.path.exists(os.path.join(run, "clients", str(m), "summary.json"))
print("ok", rep["auroc"], rep["auroc_offchain_same_seed"])
PY
grep -q "WARNING: --compare implies --reproducible-noise" "$work/err" || fail "demo --compare: no warning that the noise is reproducible"

# the report's metrics are the last epoch's, as in metrics.csv (3 clients, seed 11)
"$BBVFL_BIN" demo --clients 3 --epochs 2 --seed 11 --rpc "$BBVFL_RPC_URL" --out "$work/run3" >"$work/out3" 2>"$work/err3" \
  || { cat "$work/err3" >&2; fail "demo --clients 3 failed"; }
python3 - "$work/run3" <<'PY'
import json, os, sys
run = sys.argv[1]
rep = json.load(open(os.path.join(run, "report.json")))
rows = open(os.path.join(run, "metrics.csv")).read().strip().splitlines()
assert len(rows) == 3, rows
last = dict(zip(rows[0].split(","), map(float, rows[-1].split(","))))
for k in ("auroc", "accuracy", "test_loss"):
    assert abs(rep[k] - last[k]) <= 1e-6 and rep[k] > 0, ("report.json %s = %r, metrics.csv %r" % (k, rep[k], last[k]))
assert rep["clients"] == 3 and rep["epochs"] == 2 and rep["seed"] == 11, rep
# --seed without --reproducible-noise: private noise, the epsilons hold; per person first, named
assert rep["reproducible_noise"] is False and "epsilon_void" not in rep, rep
assert rep["headline"] == "per_person" and rep["epsilon_sample_level"] == "per_person", rep
# no label DP: the labels are unprotected, so no finite per-person figure; features only beside it
assert rep["epsilon_sample"] is None and rep["labels_protected"] is False, rep
assert rep["epsilon_feature_level"] == "per_party" and rep["epsilon_sample_features"] > rep["epsilon_feature"] > 0, rep
keys = list(rep["privacy"].keys())
assert keys.index("person") < keys.index("row_sample") < keys.index("row_feature"), keys
assert rep["privacy"]["person"]["level"] == "per_person" and rep["privacy"]["row_sample"]["level"] == "per_person_features", keys
assert "reproducible_noise" not in json.load(open(os.path.join(run, "session.json")))["training"]
print("ok: report metrics = metrics.csv last row", rep["accuracy"], rep["test_loss"])
PY
grep -q "privacy  *per person unbounded (labels unprotected: .*; features only [0-9.e+]* (.*), per party [0-9.e+]* (.*); not end-to-end" "$work/out3" ||
  fail "demo: the privacy line does not lead with the per-person epsilon: $(grep privacy "$work/out3")"
grep -q "WARNING" "$work/err3" && fail "demo without --reproducible-noise warned: $(grep WARNING "$work/err3")"
# the demo leads to its audit: run before the chain stops, its verdict in the summary and in
# report.json, audit.json and audit.html in the run folder, the next commands printed; the
# per-person figure is the audit's (both unbounded here: no label DP), the features-only one too
grep -q "^  audit                 PASS (" "$work/out3" || fail "demo: no audit verdict in the summary: $(tail -8 "$work/out3")"
grep -q "^    client [0-2]  0x[0-9a-fA-F]\{40\}  [0-9]* \*$" "$work/out3" || fail "demo: no active client marked among the rewards: $(grep -A4 rewards "$work/out3")"
grep -q "on chain [0-9.e+]*x the off-chain time" "$work/out3" || fail "demo: no on/off-chain ratio: $(grep aggregation "$work/out3")"
grep -q "^next$" "$work/out3" && grep -q "bbvfl audit --session $work/run3/session.json" "$work/out3" ||
  fail "demo: the summary does not end with the next commands: $(tail -6 "$work/out3")"
[ -s "$work/run3/audit.html" ] || fail "demo: no audit.html"
python3 - "$work/run3" <<'PY' || fail "demo: audit.json / report.json"
import json, os, sys
run = sys.argv[1]
rep = json.load(open(os.path.join(run, "report.json")))
aud = json.load(open(os.path.join(run, "audit.json")))
assert rep["audit"]["verdict"] == "PASS" and rep["audit"]["failed"] == 0 and rep["audit"]["json"] == "audit.json", rep["audit"]
assert aud["verdict"] == "PASS", aud["verdict"]
e = aud["figures"]["epsilon"]
assert e["sample"] == rep["epsilon_sample"] and e["labels_protected"] == rep["labels_protected"], (e, rep["epsilon_sample"])
assert abs(e["sample_features"] - rep["epsilon_sample_features"]) <= 1e-9 * rep["epsilon_sample_features"], e
print("demo audit: PASS, per person %s, features only %.6g (the same in report.json and audit.json)"
      % (e["sample"], e["sample_features"]))
PY
for m in 0 1 2; do
  f="$work/run3/clients/$m/noise.key"
  [ -f "$f" ] || fail "client $m: no private noise key in its state dir"
  [ "$(stat -c %a "$f")" = 600 ] || fail "client $m: noise.key is not mode 0600"
done
# no key material in logs, report or session
for m in 0 1 2 3 4; do
  k=$(tr -d '\n' <"$work/run/keys/client-$m.key" | sed 's/^0x//')
  if grep -rqi -- "$k" "$work/run/clients" "$work/run/report.json" "$work/run/session.json" "$work/out" "$work/err"; then
    fail "client $m's key appears in the run folder's logs or report"
  fi
done
# bad input
if "$BBVFL_BIN" demo --mechanism npq --rpc "$BBVFL_RPC_URL" --out "$work/bad" 2>"$work/e2"; then fail "npq accepted"; fi
grep -q "only pbm" "$work/e2" || fail "no clear message for --mechanism npq: $(cat "$work/e2")"
if "$BBVFL_BIN" demo --clients 0 --rpc "$BBVFL_RPC_URL" --out "$work/bad" 2>"$work/e2"; then fail "--clients 0 accepted"; fi
grep -q -- "--clients" "$work/e2" || fail "no clear message for --clients 0"
echo ok
