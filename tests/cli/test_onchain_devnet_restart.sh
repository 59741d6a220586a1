#!/usr/bin/env bash
# The devnet stopped and restarted from its state file in the middle of an on-chain session:
# `bbvfl devnet up --persist` on its own folder, `bbvfl deploy`, three `bbvfl client` processes;
# at round 20 `bbvfl devnet down` (anvil dumps its state on the way out), a few seconds of outage,
# `bbvfl devnet up` again on THE SAME PORT from the same state. Checked: every client logs that it
# is waiting for the node and that the node answers again, every client exits 0, and `bbvfl audit`
# finds the whole history complete and correct (every round's sum, gradients, metrics, rewards).
# The devnet is stopped by its recorded pid on every exit path.
# Window variants (ctest cli_test_onchain_devnet_restart_window, _hashed): BBVFL_TEST_WINDOW=K,
# BBVFL_TEST_AGG=hashed, BBVFL_TEST_STALENESS=s shape the session; with windows it has 8 epochs
# (80 rounds of K=5) and the node is stopped once every client has submitted round 12 (each
# freezes itself there, --pause-after-submit, and is resumed while the node is down: a pipelined
# session is too fast to catch by polling).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/chain.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-devnet-restart.XXXXXX")
dn="$work/devnet"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  "$BBVFL_BIN" devnet down --dir "$dn" >/dev/null 2>&1 || true
  if [ -n "${BBVFL_KEEP_TEST_DIR:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
export OPENBLAS_NUM_THREADS=1
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
variant=()
[ -n "${BBVFL_TEST_WINDOW:-}" ] && variant+=(--window "$BBVFL_TEST_WINDOW")
[ -n "${BBVFL_TEST_AGG:-}" ] && variant+=(--aggregation "$BBVFL_TEST_AGG")
[ -n "${BBVFL_TEST_STALENESS:-}" ] && variant+=(--staleness "$BBVFL_TEST_STALENESS")
[ ${#variant[@]} = 0 ] || echo "variant: ${variant[*]}"
epochs=4 stop_at=20
[ -n "${BBVFL_TEST_WINDOW:-}" ] && epochs=8 stop_at=12

info=$("$BBVFL_BIN" devnet up --dir "$dn" --persist --json) || fail "devnet up"
url=$(field "$info" rpc_url)
port=$(field "$info" port)
"$BBVFL_BIN" deploy --rpc "$url" --clients 3 --epochs $epochs --seed 8 ${variant[@]+"${variant[@]}"} --out "$work/session.json" --json \
  >"$work/deploy.json" || fail "deploy"
contract=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract"])' "$work/deploy.json")
for m in 0 1 2; do
  addr=$("$BBVFL_BIN" key new --out "$work/k$m.key" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"])')
  curl -sf -H 'content-type: application/json' -X POST "$url" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"anvil_setBalance\",\"params\":[\"$addr\",\"0x56BC75E2D63100000\"]}" >/dev/null \
    || fail "funding $addr"
done
# mine the funding and deployment into the persisted state before the session starts
cols=("0-9" "10-19" "20-29")
for m in 0 1 2; do
  "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k$m.key" --columns "${cols[$m]}" --labels \
    --state-dir "$work/c$m" --seed 8 --party "$m" --round-timeout 120 --node-down-timeout 60 \
    ${BBVFL_TEST_WINDOW:+--pause-after-submit $((stop_at + 1))} >>"$work/c$m.out" 2>&1 &
  pids[$m]=$!
done
r=0
if [ -n "${BBVFL_TEST_WINDOW:-}" ]; then
  wait_paused "$work" "${pids[@]}" || fail "the clients did not all reach round $stop_at"
  r=$stop_at # every client submitted it (the head may be a round behind: pipelining)
else
  for _ in $(seq 1 600); do
    r=$(chain_call "$url" "$contract" 'currentRound()(uint64)' 2>/dev/null || echo 0)
    [ "${r%% *}" -ge $stop_at ] && break
    sleep 0.05
  done
fi
[ "${r%% *}" -ge $stop_at ] || fail "the session did not reach round $stop_at (round $r)"
# an operator's clean stop: mining paused first, so anvil's state dump (on SIGTERM) is not taken
# in the middle of a block (anvil can then keep a block's state without the block, an inconsistent
# history the audit reports); transactions sent meanwhile wait in the pool and are lost with it:
# the clients must notice and send them again
curl -sf -H 'content-type: application/json' -X POST "$url" \
  -d '{"jsonrpc":"2.0","id":1,"method":"evm_setAutomine","params":[false]}' >/dev/null || fail "pausing mining"
sleep 0.3
"$BBVFL_BIN" devnet down --dir "$dn" >/dev/null || fail "devnet down"
echo "devnet stopped at round ${r%% *}"
if [ -n "${BBVFL_TEST_WINDOW:-}" ]; then for m in 0 1 2; do kill -CONT "${pids[$m]}"; done; fi
sleep 3
"$BBVFL_BIN" devnet up --dir "$dn" --port "$port" --persist --json >/dev/null || fail "devnet up again on port $port"
r2=$(chain_call "$url" "$contract" 'currentRound()(uint64)')
echo "devnet restarted from its state at round ${r2%% *}"

for m in 0 1 2; do
  wait "${pids[$m]}" || { cat "$work/c$m.out" >&2; fail "client $m exited with an error"; }
  grep -q "is unreachable .*waiting up to 60 s" "$work/c$m.out" || { cat "$work/c$m.out" >&2; fail "client $m did not say it waits for the node"; }
  grep -q "answers again" "$work/c$m.out" || fail "client $m did not say the node is back"
done
pids=()
grep -hE "unreachable|answers again|re-sen|lost" "$work"/c*.out | sed 's/^/  /'
set +e
"$BBVFL_BIN" audit --session "$work/session.json" --quiet >"$work/audit.txt" 2>&1
arc=$?
set -e
[ "$arc" = 0 ] || { cat "$work/audit.txt" >&2; fail "bbvfl audit exit $arc"; }
head -1 "$work/audit.txt"
echo ok
