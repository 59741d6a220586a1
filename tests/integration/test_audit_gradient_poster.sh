#!/usr/bin/env bash
# The audit's gradients check against a contract that lets anyone post the gradient
# (contract/testonly/make-tampered.sh, variant `gradient`): three `bbvfl client` processes freeze
# themselves after submitting round 2 (--pause-after-submit 3), a PASSIVE client's key then posts
# round 2's gradient (which the product contract refuses: NotActive()), the clients are stopped,
# and `bbvfl audit` must fail exactly the gradients check, at round 2, naming that client.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/chain.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test audit-grad
"$BBVFL_SOURCE_DIR/contract/testonly/make-tampered.sh" "$work/tamper"
BBVFL_ABI_DIR="$work/tamper/gradient" "$BBVFL_BIN" deploy --rpc "$BBVFL_RPC_URL" --clients 3 --epochs 1 --seed 5 \
  --out "$work/session.json" --json >"$work/deploy.json" || fail deploy
contract=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract"])' "$work/deploy.json")
addrs=()
for m in 0 1 2; do
  addrs[$m]=$("$BBVFL_BIN" key new --out "$work/k$m.key" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"])')
  curl -sf -H 'content-type: application/json' -X POST "$BBVFL_RPC_URL" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"anvil_setBalance\",\"params\":[\"${addrs[$m]}\",\"0x56BC75E2D63100000\"]}" \
    >/dev/null || fail "funding ${addrs[$m]}"
done
cols=("0-9" "10-19" "20-29")
for m in 0 1 2; do
  "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k$m.key" --columns "${cols[$m]}" --labels \
    --state-dir "$work/c$m" --seed 5 --party "$m" --round-timeout 60 --pause-after-submit 3 >"$work/c$m.out" 2>&1 &
  pids[$m]=$!
done
wait_paused "$work" "${pids[@]}" || fail "the clients did not all reach round 2"
call() { chain_call "$BBVFL_RPC_URL" "$contract" "$@"; }
active=$(call 'active()(address)')
poser=-1
for m in 0 1 2; do
  [ "${addrs[$m],,}" != "${active,,}" ] && poser=$m && break
done
[ "$poser" -ge 0 ] || fail "no passive client"
B=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract_params"]["batch"])' "$work/session.json")
P=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract_params"]["dim"])' "$work/session.json")
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
import json, sys
a = json.load(open(sys.argv[1])); poser = sys.argv[2].lower()
st = {c["name"]: c for c in a["checks"]}
failed = [n for n, c in st.items() if c["status"] == "FAIL"]
assert failed == ["gradients"], failed
ff = st["gradients"]["first_failure"]
assert ff["round"] == 2 and ff["client"].lower() == poser and ff["tx"], ff
assert "not active" in ff["detail"], ff
print("ok: only gradients fails, round 2, the passive poster:", ff["detail"])
PY
echo ok
