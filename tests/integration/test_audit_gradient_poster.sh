#!/usr/bin/env bash
# The audit's gradients check against a contract that lets anyone post the gradient
# (contract/testonly/make-tampered.sh, variant `gradient`): three `bbvfl client` processes freeze
# themselves after submitting round 2 (--pause-after-submit 3), a PASSIVE client's key then posts
# round 2's gradient (which the product contract refuses: NotActive()), the clients are stopped,
# and `bbvfl audit` must fail exactly the gradients check, at round 2, naming that client.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test audit-grad
"$BBVFL_SOURCE_DIR/contract/testonly/make-tampered.sh" "$work/tamper"
BBVFL_ABI_DIR="$work/tamper/gradient" session_deploy --clients 3 --epochs 1 --seed 5
session_keys 3
cols=("0-9" "10-19" "20-29")
client_flags=(--labels --seed 5 --round-timeout 60)
clients_start 3 --pause-after-submit 3
wait_paused "$run" "${pids[@]}" || fail "the clients did not all reach round 2"
pick_victim passive
poser=$victim
B=$(json_get "$work/session.json" contract_params batch)
P=$(json_get "$work/session.json" contract_params dim)
grad=0x$(python3 -c "print('00' * ($B * $P * 4))")
"$BBVFL_CAST" send --rpc-url "$BBVFL_RPC_URL" --private-key "$(cat "$work/k$poser.key")" "$contract" \
  'postGradient(uint64,bytes,bytes)' 2 "$grad" 0x >"$work/send.out" 2>&1 || { cat "$work/send.out" >&2; fail "the passive client's postGradient was refused"; }
for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
pids=()
set +e
"$BBVFL_BIN" audit --session "$work/session.json" --json --quiet >"$work/audit.json" 2>"$work/audit.err"
rc=$?
set -e
[ "$rc" = 3 ] || { cat "$work/audit.err" >&2; fail "audit exit $rc, expected 3"; }
python3 - "$work/audit.json" "${addrs[$poser]}" <<'PY'
import sys
import bbvfl_audit
a = bbvfl_audit.load(sys.argv[1]); poser = sys.argv[2].lower()
ff = bbvfl_audit.only_fails(a, "gradients")
assert ff["round"] == 2 and ff["client"].lower() == poser and ff["tx"], ff
assert "not active" in ff["detail"], ff
print("ok: only gradients fails, round 2, the passive poster:", ff["detail"])
PY
echo ok
