#!/usr/bin/env bash
# A live chain, on the anvil of tests/with-devnet.sh switched to 1 s blocks (evm_setIntervalMining),
# faults injected mid-session over anvil's RPC by tests/support/live_inject.py; each session is
# `bbvfl demo --rpc` with a window of a whole epoch, hashed aggregation and --compare, and must
# finish with its AUROC equal to its same-seed off-chain replay (auroc_gap 0) and fees reported:
#  1. reorgs of depth 1, 2 and 3 (anvil does not put the removed transactions back in its pool)
#     with --confirmations 3: the clients re-send what vanished (their logs say so), none acted on
#     an event a reorg took out (no submission had to be sent again), payouts are confirmed 3
#     blocks deep;
#  2. a reorg of depth 1 without --confirmations: clients that acted on events the reorg took out
#     see their next submission revert RoundNotOpen, wait for the round to open again (the active
#     client re-sends what vanished) and submit the same q again (reorgs of depth 2 and 3 without
#     --confirmations: the _deep variant, below);
#  3. the base fee at 100 gwei for 3 blocks, no cap: the session goes on through it;
#  4. the same spike with --max-fee-gwei 50: the demo says the base fee is above the cap and back
#     within it, a client says it waits, and the session resumes and finishes.
# Runs under tests/with-devnet.sh, needs BBVFL_BIN and BBVFL_CAST.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_BIN:?}" "${BBVFL_RPC_URL:?}"
session_test live-chain
inject=$(dirname "${BASH_SOURCE[0]}")/../support/live_inject.py
rpc evm_setAutomine '[false]' >/dev/null || fail "automine off"
rpc evm_setIntervalMining '[1]' >/dev/null || fail "1 s blocks"

# demo NAME FAULT... -- DEMO_FLAGS...: one session with the fault injected beside it
demo() {
  local name=$1; shift
  local fault=()
  while [ "$1" != -- ]; do fault+=("$1"); shift; done
  shift
  python3 "$inject" "$BBVFL_RPC_URL" "$work/$name/session.json" "${fault[@]}" >"$work/$name.inject" 2>&1 &
  pids+=($!)
  local inj=$!
  "$BBVFL_BIN" demo --rpc "$BBVFL_RPC_URL" --epochs 5 --window 45 --aggregation hashed --compare --round-timeout 120 \
    --out "$work/$name" --json "$@" >"$work/$name.out" 2>"$work/$name.err" ||
    { cat "$work/$name.err" "$work/$name.inject" >&2; tail -5 "$work/$name"/clients/*/client.log >&2; fail "$name: the demo failed"; }
  wait "$inj" || { cat "$work/$name.inject" >&2; fail "$name: the fault was not injected (the session ended first?)"; }
  cat "$work/$name.inject"
  python3 - "$work/$name/report.json" "$name" <<'PY' || fail "$name: report.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["auroc_gap"] == 0, ("on chain %s, off chain %s" % (r["auroc"], r["auroc_offchain_same_seed"]))
f = r["fees"]
assert f["gas_used"] > 0 and int(f["eth_paid_wei"]) > 0 and f["eth_paid"] > 0, f
per = [c["fees"] for c in r["client_summaries"]]
assert sum(p["gas_used"] for p in per) == f["gas_used"], (per, f)
print("%s: AUROC %.4f = replay, %.1f blocks per epoch, training %.1f s, fees %.6f ETH for %d gas"
      % (sys.argv[2], r["auroc"], r["blocks_per_epoch"], r["training_wall_s"], f["eth_paid"], f["gas_used"]))
PY
}

if [ -n "${BBVFL_TEST_DEEP_REORG:-}" ]; then
  demo reorg23 reorg 2 3 -- --staleness 0
  echo "PASS"
  exit 0
fi

demo reorg reorg 1 2 3 -- --confirmations 3
grep -q "had a receipt but the chain no longer has it" "$work"/reorg/clients/*/client.log || fail "reorg: no client saw a vanished transaction"
grep -q "sent the same bytes again" "$work"/reorg/clients/*/client.log || fail "reorg: no client re-sent a transaction"
grep -q "payRewards(): 3 confirmations" "$work"/reorg/clients/*/client.log || fail "reorg: payouts not confirmed"
# acting only on events 3 blocks deep, no client built on an event the reorgs took out
! grep -q "submitted again after the round reopened" "$work"/reorg/clients/*/client.log || fail "reorg: a client acted on an event a reorg took out"

# staleness 0 pinned: this case is the path of a client that submits the next round after the
# event the reorg took out (with the default staleness 1 on a block-time chain a window is submitted
# before its predecessor's gradient, so the reorg may take out nothing a client acted on)
demo reorg1 reorg 1 -- --staleness 0
grep -q "submitted again after the round reopened" "$work"/reorg1/clients/*/client.log || fail "reorg1: no client submitted again"

# BBVFL_TEST_DEEP_REORG=1 (the _deep variant, label slow): reorgs of depth 2 and 3 without
# --confirmations: re-sent copies can land out of order (an aggregate before the submissions it
# sums); each client sends again what did not take effect (client/onchain/onchain_repair.c) and
# the head check waits for the sums the reorg took out; the session finishes with AUROC equal to
# its replay. Only that case runs then.

demo spike spike 100000000000 3 --
demo capped spike 100000000000 3 -- --max-fee-gwei 50
grep -q "is above --max-fee-gwei 50" "$work/capped.err" || { cat "$work/capped.err" >&2; fail "capped: the demo did not say the base fee is above the cap"; }
grep -q "is back within --max-fee-gwei 50" "$work/capped.err" || fail "capped: the demo did not say the base fee fell"
grep -q "above --max-fee-gwei 50.000: waiting for it to fall" "$work"/capped/clients/*/client.log || fail "capped: no client said it waits"
grep -q "within --max-fee-gwei 50.000 again: sending resumes" "$work"/capped/clients/*/client.log || fail "capped: no client resumed"
echo "PASS"
