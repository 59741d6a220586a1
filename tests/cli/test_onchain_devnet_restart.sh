#!/usr/bin/env bash
# The devnet stopped and restarted from its state file in the middle of an on-chain session:
# `bbvfl devnet up --persist` on its own folder, `bbvfl deploy`, three `bbvfl client` processes;
# at round 20 `bbvfl devnet down` (anvil dumps its state on the way out), an outage until every
# client has logged that the node is unreachable, `bbvfl devnet up` again on THE SAME PORT from the
# same state. Checked: every client logs that it
# is waiting for the node and that the node answers again, every client exits 0, and `bbvfl audit`
# finds the whole history complete and correct (every round's sum, gradients, metrics, rewards).
# The devnet is stopped by its recorded pid on every exit path.
# Window variants (ctest cli_test_onchain_devnet_restart_window, _hashed): BBVFL_TEST_WINDOW=K,
# BBVFL_TEST_AGG=hashed, BBVFL_TEST_STALENESS=s shape the session; with windows it has 8 epochs
# (80 rounds of K=5) and the node is stopped once every client has submitted round 12 (each
# freezes itself there, --pause-after-submit, and is resumed while the node is down: a pipelined
# session is too fast to catch by polling).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
dn=""
extra_cleanup() { [ -n "$dn" ] && "$BBVFL_BIN" devnet down --dir "$dn" >/dev/null 2>&1 || true; }
session_test devnet-restart
dn="$work/devnet"
session_variant
epochs=4 stop_at=20
[ -n "${BBVFL_TEST_WINDOW:-}" ] && epochs=8 stop_at=12

"$BBVFL_BIN" devnet up --dir "$dn" --persist --json >"$work/devnet.json" || fail "devnet up"
rpc_url=$(json_get "$work/devnet.json" rpc_url)
port=$(json_get "$work/devnet.json" port)
session_deploy --clients 3 --epochs $epochs --seed 8 ${variant[@]+"${variant[@]}"}
session_keys 3
cols=("0-9" "10-19" "20-29")
client_flags=(--labels --seed 8 --round-timeout 120 --node-down-timeout 60)
clients_start 3 ${BBVFL_TEST_WINDOW:+--pause-after-submit $((stop_at + 1))}
round_now() { chain_call "$rpc_url" "$contract" 'currentRound()(uint64)' 2>/dev/null || echo 0; }
r=0
if [ -n "${BBVFL_TEST_WINDOW:-}" ]; then
  wait_paused "$run" "${pids[@]}" || fail "the clients did not all reach round $stop_at"
  r=$stop_at # every client submitted it (the head may be a round behind: pipelining)
else
  reached() { r=$(round_now); [ "${r%% *}" -ge $stop_at ]; }
  wait_until 30 "the session did not reach round $stop_at" reached
fi
# an operator's clean stop: mining paused first, so anvil's state dump (on SIGTERM) is not taken
# in the middle of a block (anvil can then keep a block's state without the block, an inconsistent
# history the audit reports); transactions sent meanwhile wait in the pool and are lost with it:
# the clients must notice and send them again
curl -sf -H 'content-type: application/json' -X POST "$rpc_url" \
  -d '{"jsonrpc":"2.0","id":1,"method":"evm_setAutomine","params":[false]}' >/dev/null || fail "pausing mining"
sleep 0.3 # a block being mined when automine went off: nothing on the node says when it is done
"$BBVFL_BIN" devnet down --dir "$dn" >/dev/null || fail "devnet down"
echo "devnet stopped at round ${r%% *}"
if [ -n "${BBVFL_TEST_WINDOW:-}" ]; then resume_clients; fi
# the outage lasts until every client has noticed it
all_waiting() { [ "$(grep -l "is unreachable .*waiting up to 60 s" "$run"/c*.out | wc -l)" = 3 ]; }
wait_until 50 "not every client noticed the node was down" all_waiting
# the bound on anvil's start (its "Listening on" line, after it has loaded the state) is generous:
# under the stress runner (burners beside two copies) it once did not listen within 30 s (why is not
# known: its log was not kept then; it is printed below now)
"$BBVFL_BIN" devnet up --dir "$dn" --port "$port" --persist --timeout 120 --json >/dev/null ||
  { tail -n 30 "$dn/anvil.log" >&2 2>/dev/null; fail "devnet up again on port $port"; }
r2=$(chain_call "$rpc_url" "$contract" 'currentRound()(uint64)') || fail "the restarted devnet does not answer"
echo "devnet restarted from its state at round ${r2%% *}"

wait_clients
for m in 0 1 2; do
  grep -q "is unreachable .*waiting up to 60 s" "$work/c$m.out" || { cat "$work/c$m.out" >&2; fail "client $m did not say it waits for the node"; }
  grep -q "answers again" "$work/c$m.out" || fail "client $m did not say the node is back"
done
grep -hE "unreachable|answers again|re-sen|lost" "$work"/c*.out | sed 's/^/  /'
audit_passes
echo ok
