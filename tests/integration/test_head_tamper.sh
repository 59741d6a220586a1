#!/usr/bin/env bash
# The active client is checked (issue 28): passive clients replay the head before they apply a
# gradient, and the audit's check `head` replays it from the chain.
#
# BBVFL_TAMPER_KIND unset: an honest session (3 clients, 2 epochs, Breast Cancer) with the release
# binary: every client finishes, each passive client's summary says head_check ok over every
# training round (and the time it took), the audit passes.
# BBVFL_TAMPER_KIND=label|scale|skip|stale (ctest test_head_tamper_<kind>_sh): every client runs
# the test-only bbvfl-tamper (tests/tamper/tamper.h; the tamper acts on the active client's path
# only, so whichever client the election picks deviates) with BBVFL_TAMPER=<kind>:R, R the third
# training round of epoch 2 (a flipped label needs the row's label from epoch 1). Then:
#  - both passive clients stop on their own (observed: their processes end), exit status 3 (a
#    verification failed), with an error naming round R, their summary.json has head_check {ok: false, round: R}, and they did not apply R
#    (summary "rounds" = R: rounds 0..R-1 finished, R not);
#  - the active client's log says it tampered; it is then stopped (it waits for the next round);
#  - `bbvfl audit --session --json` fails exactly the check `head`, its first failure at round R.
# BBVFL_TEST_WINDOW / _AGG / _STALENESS: the same with windows, hashed aggregation, staleness.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}"
kind=${BBVFL_TAMPER_KIND:-}
tamper_bin=${BBVFL_TAMPER_BIN:-$(dirname "$BBVFL_BIN")/tests/bbvfl-tamper}
session_test "head-${kind:-honest}"
session_variant
session_deploy --clients 3 --epochs 2 --seed 5 ${variant[@]+"${variant[@]}"}
session_keys 3
cols=("0-9" "10-19" "20-29")
client_flags=(--labels --seed 5 --round-timeout 120 --takeover-after 0)
T=$(json_get "$work/session.json" contract_params train_rounds)
V=$(json_get "$work/session.json" contract_params eval_rounds)
total=$(( 2 * (T + V) ))

if [ -z "$kind" ]; then
  clients_start 3
  wait_clients
  pick_victim active
  python3 - "$work" "$victim" "$T" <<'PY'
import json, sys
work, active, T = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for m in range(3):
    s = json.load(open("%s/c%d/summary.json" % (work, m)))
    hc = s["head_check"]
    if m == active:
        assert hc["ok"] is None and hc["rounds_checked"] == 0, hc
        continue
    assert hc["ok"] is True and hc["rounds_checked"] == 2 * T, hc
    print("client %d: head check ok over %d training rounds, %.2f ms per round" % (m, hc["rounds_checked"], hc["ms_per_round"]))
PY
  audit_passes --json >/dev/null
  python3 -c 'import sys, bbvfl_audit; a = bbvfl_audit.load(sys.argv[1]); bbvfl_audit.all_pass(a); assert bbvfl_audit.check(a, "head")["status"] == "PASS"' "$run/audit.txt"
  echo ok
  exit 0
fi

[ -x "$tamper_bin" ] || fail "no test-only bbvfl-tamper at $tamper_bin (built with the tests)"
R=$(( T + V + 2 ))
echo "tamper: $kind at round $R (T $T, V $V)"
release_bin=$BBVFL_BIN
BBVFL_BIN=$tamper_bin
client_env=("BBVFL_TAMPER=$kind:$R")
clients_start 3
BBVFL_BIN=$release_bin
# a client has stopped when its process is gone or a zombie
stopped() {
  local st
  st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 0
  [ "$st" = Z ]
}
two_stopped() {
  local n=0 m
  for m in "${!pids[@]}"; do stopped "${pids[$m]}" && n=$((n + 1)); done
  [ "$n" -ge 2 ]
}
wait_until 600 "two clients stopped" two_stopped
pick_victim active
active=$victim
stopped "${pids[$active]}" && { cat "$run/c$active.out" >&2; fail "the active client stopped"; }
grep -q "TAMPER (test only): round $R" "$run/c$active.out" || { cat "$run/c$active.out" >&2; fail "the active client did not tamper"; }
kill_client "$active"
unset "pids[$active]"
for m in "${!pids[@]}"; do
  set +e
  wait "${pids[$m]}"
  rc=$?
  set -e
  [ "$rc" = 3 ] || { cat "$run/c$m.out" >&2; fail "passive client $m exited $rc, not 3 (verification failed)"; }
  grep -q "round $R: the active client's posted gradient and head are not the session head's" "$run/c$m.out" ||
    { cat "$run/c$m.out" >&2; fail "passive client $m did not stop naming round $R"; }
  grep -q "TAMPER (test only): round" "$run/c$m.out" && { cat "$run/c$m.out" >&2; fail "passive client $m tampered"; }
done
pids=()
python3 - "$work" "$active" "$R" <<'PY'
import json, sys
work, active, R = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for m in range(3):
    if m == active:
        continue
    s = json.load(open("%s/c%d/summary.json" % (work, m)))
    hc = s["head_check"]
    assert hc["ok"] is False and hc["round"] == R, hc
    assert s["rounds"] == R, "client %d finished %d rounds: round %d was applied" % (m, s["rounds"], R)
    print("client %d refused round %d: %s (%s)" % (m, R, hc["verdict"], hc["detail"]))
PY
set +e
"$BBVFL_BIN" audit --session "$run/session.json" --json --quiet >"$work/audit.json" 2>"$work/audit.err"
arc=$?
set -e
[ "$arc" = 3 ] || { cat "$work/audit.err" >&2; fail "audit exit $arc, expected 3 (a check fails)"; }
python3 - "$work/audit.json" "$R" <<'PY'
import sys
import bbvfl_audit
a = bbvfl_audit.load(sys.argv[1]); R = int(sys.argv[2])
ff = bbvfl_audit.only_fails(a, "head")
assert ff["round"] == R, ff
print("audit: only head fails, at round %d: %s" % (R, ff["detail"]))
PY
echo ok
