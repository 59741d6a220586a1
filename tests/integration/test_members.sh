#!/usr/bin/env bash
# A session closed to its members (`bbvfl deploy --members`): the session file and the deploy's
# JSON say so; a stranger's client stops before any transaction (its nonce does not move) with a
# message naming the member list; a stranger's own register() reverts NotMember on chain; the
# members run the session to the end and the audit passes, reporting the registration closed to
# the two members. Open registration (session_deploy's default in the other tests) is asked for.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/chain.sh"
session_test members
session_keys 3 # 0 and 1 are the members, 2 a stranger
url=${rpc_url:-$BBVFL_RPC_URL}
session_deploy --clients 2 --epochs 1 --seed 1 --members "${addrs[0]},${addrs[1]}"
[ "$(json_get "$run/deploy.json" registration)" = members ] || fail "deploy --json does not say registration: members"
python3 - "$run/session.json" "${addrs[0]}" "${addrs[1]}" <<'PY' || fail "the session file does not list the members"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["registration"] == "members", s.get("registration")
assert [a.lower() for a in s["members"]] == [a.lower() for a in sys.argv[2:4]], s["members"]
PY

# a stranger's client: refused before any transaction
nonce0=$(rpc eth_getTransactionCount "[\"${addrs[2]}\",\"latest\"]")
if "$BBVFL_BIN" client --session "$run/session.json" --key-file "$work/k2.key" --columns 20-29 --labels \
  --state-dir "$work/stranger" --round-timeout 5 2>"$work/stranger.err"; then
  fail "a stranger's client ran in a closed session"
fi
grep -q "is not one of the session's 2 members" "$work/stranger.err" ||
  fail "unclear refusal of a stranger: $(cat "$work/stranger.err")"
nonce1=$(rpc eth_getTransactionCount "[\"${addrs[2]}\",\"latest\"]")
[ "$nonce0" = "$nonce1" ] || fail "the stranger's client sent a transaction ($nonce0 -> $nonce1)"

# a stranger's own register(): NotMember on chain
sel=$("$BBVFL_CAST" sig "NotMember()")
pub=0x$(python3 -c 'print("11" * 64)')
out=$("$BBVFL_CAST" call --rpc-url "$url" --from "${addrs[2]}" "$contract" "register(bytes)" "$pub" 2>&1 || true)
echo "$out" | grep -qi "${sel#0x}" || fail "a stranger's register() did not revert NotMember ($sel): $out"

# the members run the session
cols=("0-14" "15-29")
client_flags=(--labels --seed 1 --round-timeout 60)
clients_start 2
wait_clients
audit_passes --json
python3 - "$run/audit.txt" "${addrs[0]}" "${addrs[1]}" <<'PY' || fail "the audit does not report the member list"
import json, sys
a = json.loads(open(sys.argv[1]).read())
assert a["registration"] == "members", a.get("registration")
assert [m.lower() for m in a["members"]] == [m.lower() for m in sys.argv[2:4]], a.get("members")
PY
echo ok
