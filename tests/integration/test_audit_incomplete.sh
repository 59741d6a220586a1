#!/usr/bin/env bash
# The audit of a session that has not finished: three real `bbvfl client` processes freeze right
# after submitting their 4th round (--pause-after-submit 4: an observable stop, no sleep), are
# killed with SIGKILL, and the session is audited where it stopped. Checked:
#  - exit status 8, first line "bbvfl audit: INCOMPLETE", never "PASS - every check holds";
#  - JSON: "verdict": "INCOMPLETE", "ok" false, no check failed, "missing" names the rounds not done
#    (fewer than all), the absent SessionEnded, the epoch's metrics and payout;
#  - the HTML report says INCOMPLETE and lists what is missing;
# then the same clients restarted with their key and state folder finish the session: the audit
# of the finished session exits 0 with "PASS - every check holds" (check `balances` among them).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}"
session_test audit-incomplete
session_keys 3
cols=("0-9" "10-19" "20-29")
client_flags=(--labels --seed 5 --round-timeout 90)
session_deploy --clients 3 --epochs 1 --seed 5
clients_start 3 --pause-after-submit 4
wait_paused "$run" "${pids[@]}" || fail "the clients did not all reach their 4th submission"
for m in 0 1 2; do kill_client "$m"; done
pids=()
round=$(chain_call "$BBVFL_RPC_URL" "$contract" 'currentRound()(uint64)')
echo "clients killed after their 4th submission; the chain's current round is $round"

set +e
"$BBVFL_BIN" audit --session "$run/session.json" --quiet --json --html "$work/stopped.html" >"$work/stopped.json" \
  2>"$work/stopped.err"
rc=$?
"$BBVFL_BIN" audit --session "$run/session.json" --quiet >"$work/stopped.txt" 2>>"$work/stopped.err"
rc_text=$?
set -e
[ "$rc" = 8 ] && [ "$rc_text" = 8 ] ||
  { cat "$work/stopped.txt" "$work/stopped.err" >&2; fail "audit of the stopped session: exit $rc / $rc_text, not 8"; }
head -1 "$work/stopped.txt" | grep -q "^bbvfl audit: INCOMPLETE" || { cat "$work/stopped.txt" >&2; fail "first line"; }
! grep -q "PASS - every check holds" "$work/stopped.txt" || fail "the stopped session is called PASS"
grep -q "INCOMPLETE: the session has not finished" "$work/stopped.html" || fail "the HTML report does not say INCOMPLETE"
grep -q "<li>no SessionEnded event</li>" "$work/stopped.html" || fail "the HTML report does not list what is missing"
python3 - "$work/stopped.json" <<'PY'
import re, sys
import bbvfl_audit
a = bbvfl_audit.load(sys.argv[1])
assert a["verdict"] == "INCOMPLETE" and a["ok"] is False and a["complete"] is False, (a["verdict"], a["ok"])
assert a["exit_status"] == 8, a["exit_status"]
assert bbvfl_audit.failed(a) == [], bbvfl_audit.failed(a)
miss = a["missing"]
m = [re.match(r"rounds: (\d+) of (\d+) done", x) for x in miss]
m = [x for x in m if x]
assert len(m) == 1 and 0 < int(m[0].group(1)) < int(m[0].group(2)), miss
assert "no SessionEnded event" in miss, miss
assert any(x.startswith("metrics: 1 of 1 epochs not posted") for x in miss), miss
assert any(x.startswith("rewards: 1 of 1 epochs not paid") for x in miss), miss
print("ok: INCOMPLETE, missing: " + "; ".join(miss))
PY

# the same clients, restarted, finish the session: now it passes
clients_start 3
wait_clients
verdict=$(audit_passes)
echo "$verdict" | grep -q "^bbvfl audit: PASS - every check holds" || fail "finished session: $verdict"
grep -q "^PASS balances" "$run/audit.txt" || { cat "$run/audit.txt" >&2; fail "balances not checked"; }
echo "ok: the stopped session audits INCOMPLETE (exit 8), the finished one PASS (exit 0)"
