#!/usr/bin/env bash
# The active client frozen (SIGSTOP) long enough to miss its deadline, then resumed (SIGCONT): the
# other clients re-elect as in test_onchain_reelect.sh. Checked: the two others finish (exit 0);
# the resumed client either carries on as a passive client (it was re-elected away by reelect():
# its postGradient reverts NotActive(), it logs "carrying on as a passive client", takes the new
# active client's gradients and exits 0) or, when it had not submitted the open round,
# expireRound() excluded it and it stops with a clear error; either way the audit passes.
# Every client freezes itself right after submitting round 8 (--pause-after-submit); the others are
# resumed at once, the active client only once the chain names another one.
# Window variants (ctest test_onchain_slow_active_window_sh, _hashed_sh): BBVFL_TEST_WINDOW=K,
# BBVFL_TEST_AGG=hashed, BBVFL_TEST_STALENESS=s shape the session (round 8 is then a window).
# Hashed with staleness 0 fails the audit's election check as of this writing (see
# test_onchain_reelect.sh: the audit and the contract count the hashed activeBlocks deadline from
# different blocks).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/chain.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test slow-active
EPOCHS=4
variant=()
[ -n "${BBVFL_TEST_WINDOW:-}" ] && variant+=(--window "$BBVFL_TEST_WINDOW")
[ -n "${BBVFL_TEST_AGG:-}" ] && variant+=(--aggregation "$BBVFL_TEST_AGG")
[ -n "${BBVFL_TEST_STALENESS:-}" ] && variant+=(--staleness "$BBVFL_TEST_STALENESS")
[ ${#variant[@]} = 0 ] || echo "variant: ${variant[*]}"

"$BBVFL_BIN" deploy --rpc "$BBVFL_RPC_URL" --clients 3 --epochs $EPOCHS --seed 5 --active-blocks 4 \
  --round-timeout-blocks 4 ${variant[@]+"${variant[@]}"} --out "$work/session.json" --json >"$work/deploy.json" || fail "deploy"
contract=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract"])' "$work/deploy.json")

addrs=()
for m in 0 1 2; do
  addr=$("$BBVFL_BIN" key new --out "$work/k$m.key" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"])')
  addrs[$m]=$addr
  curl -sf -H 'content-type: application/json' -X POST "$BBVFL_RPC_URL" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"anvil_setBalance\",\"params\":[\"$addr\",\"0x56BC75E2D63100000\"]}" >/dev/null \
    || fail "funding $addr"
done
cols=("0-9" "10-19" "20-29")
# Every client freezes itself (SIGSTOP) right after submitting round 8 (--pause-after-submit 9):
# the active client is then frozen at a known point (its round submitted, the gradient not yet
# posted) however fast or slow the machine is; the test waits on what it can observe.
for m in 0 1 2; do
  "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k$m.key" --columns "${cols[$m]}" --labels \
    --state-dir "$work/c$m" --seed 5 --party "$m" --round-timeout 90 --takeover-after 3 --pause-after-submit 9 \
    >>"$work/c$m.out" 2>&1 &
  pids[$m]=$!
done
wait_paused "$work" "${pids[@]}" || fail "the clients did not all reach round 8"

call() { chain_call "$BBVFL_RPC_URL" "$contract" "$@"; }
active=$(call 'active()(address)')
victim=-1
for m in 0 1 2; do
  same=$(python3 -c 'import sys; print(int(sys.argv[1].lower() == sys.argv[2].lower()))' "${addrs[$m]}" "$active")
  [ "$same" = 1 ] && victim=$m
done
[ "$victim" -ge 0 ] || fail "active client $active is none of ours"
# the active client stays frozen (round 8 submitted by all, its gradient never posted); the two
# others go on and, after --takeover-after, call reelect()
for m in 0 1 2; do [ "$m" = "$victim" ] || kill -CONT "${pids[$m]}"; done
echo "froze the active client $victim at round $(call 'currentRound()(uint64)')"
for _ in $(seq 1 3000); do
  now=$(call 'active()(address)')
  [ "${now,,}" != "${active,,}" ] && break
  for m in 0 1 2; do [ "$m" = "$victim" ] || kill -0 "${pids[$m]}" 2>/dev/null || { cat "$work/c$m.out" >&2; fail "client $m exited while the active client was frozen"; }; done
  sleep 0.1
done
[ "${now,,}" != "${active,,}" ] || fail "nobody was elected within 5 minutes while the active client was frozen"
kill -CONT "${pids[$victim]}"
for m in 0 1 2; do
  [ "$m" = "$victim" ] && continue
  wait "${pids[$m]}" || { cat "$work/c$m.out" >&2; fail "client $m exited with an error"; }
done
set +e
wait "${pids[$victim]}"
vrc=$?
set -e
pids=()
if [ "$vrc" = 0 ]; then
  grep -q "carrying on as a passive client" "$work/c$victim.out" || { cat "$work/c$victim.out" >&2; fail "the resumed client exited 0 without saying it was demoted"; }
  echo "the resumed client carried on as a passive client: $(grep "carrying on" "$work/c$victim.out")"
else
  grep -qiE "excluded|not a participant|not ?registered" "$work/c$victim.out" || { cat "$work/c$victim.out" >&2; fail "the resumed client failed without a clear reason"; }
  echo "the resumed client had been excluded (expireRound) and stopped: $(tail -1 "$work/c$victim.out")"
fi
set +e
"$BBVFL_BIN" audit --session "$work/session.json" --quiet >"$work/audit.txt" 2>&1
arc=$?
set -e
[ "$arc" = 0 ] || { cat "$work/audit.txt" >&2; fail "bbvfl audit exit $arc"; }
head -1 "$work/audit.txt"
echo ok
