# Checks shared by the optimistic-mode dispute tests (sourced after session.sh).
#   claimer_out_session_ended M   fails unless client M (the wrong claim's sender) is no longer a
#                                 participant and the session's phase() is Ended (4)
#   audit_fails_sums_at R         runs `bbvfl audit --json` on the session and fails unless it exits
#                                 3 with the check `sums` failing first at round R against the claim
#                                 (the audit does not model a dispute's roll-back: a wrong claim
#                                 fails `sums` at its round, disputed or not); prints the other
#                                 failing checks, if any

claimer_out_session_ended() {
  local parts a phase
  parts=$(chain_call "$BBVFL_RPC_URL" "$contract" 'participants()(address[])') || fail "participants()"
  a=${addrs[$1],,}
  case "${parts,,}" in *"${a#0x}"*) fail "the claimer is still a participant" ;; esac
  phase=$(chain_call "$BBVFL_RPC_URL" "$contract" 'phase()(uint8)') || fail "phase()"
  [ "$phase" = 4 ] || fail "the session did not end (phase $phase)"
}

audit_fails_sums_at() {
  local arc
  set +e
  "$BBVFL_BIN" audit --session "$run/session.json" --json --quiet >"$work/audit.json" 2>"$work/audit.err"
  arc=$?
  set -e
  [ "$arc" = 3 ] || { cat "$work/audit.err" "$work/audit.json" >&2; fail "audit: exit $arc, expected 3"; }
  python3 - "$work/audit.json" "$1" <<'PY'
import sys
import bbvfl_audit
a = bbvfl_audit.load(sys.argv[1]); R = int(sys.argv[2])
s = bbvfl_audit.check(a, "sums")
assert s["status"] == "FAIL", s
ff = s["first_failure"]
assert ff["round"] == R, ff
assert "claimed (postSum)" in ff["detail"], ff  # the claim itself against the logged payloads
print("audit: sums FAIL at round %d: %s" % (R, ff["detail"]))
for c in a["checks"]:
    if c["status"] == "FAIL" and c["name"] != "sums":
        print("  also FAIL: %s: %s" % (c["name"], c.get("first_failure")))
PY
}
