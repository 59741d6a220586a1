#!/usr/bin/env bash
# Optimistic sums (issue 26, Deliver 3): the active client posts each round's packed sum alone
# (postSum) and every passive client checks it against the payloads in the SubmittedPayload logs.
#
# Honest session (3 clients, Breast Cancer, --aggregation optimistic, windows of 5): every client
# finishes, none disputes, `bbvfl audit` passes (its check `sums` recomputes every claimed sum from
# the logged payloads).
# Tampered session: every client runs the test-only bbvfl-tamper with BBVFL_TAMPER=sum:R (the
# tamper acts on the active client's path only, so whichever client the election picks posts a
# wrong sum for training round R). Then:
#  - the claimer's log says it tampered; a passive client's log says it disputed round R's sum and
#    that the claimer is excluded; the claimer is no longer among participants() on chain;
#  - the two other clients carry the session to its end (one of them elected active for the redone
#    round) and exit 0; SessionEnded is on chain;
#  - `bbvfl audit --json` exits 3 with check `sums` failing first at round R (the claimed sum is
#    not the sum of the payloads in calldata);
#  - both honest clients sent a dispute() of the claim (each checks every claim itself); exactly one
#    was accepted (one SumDisputed), the other reverted, and its sender carried on all the same.
# BBVFL_TEST_BLOCK_TIME=S (the _blocktime variant): the tampered session runs on S-second blocks
# (the test's devnet switched to interval mining), so both disputes are sent while one block is
# being built and mostly land in that one block (printed): the later one then reverts on the state
# the earlier one left (NoClaim), which replaying it on the state before the block cannot show.
# BBVFL_TEST_DISPUTE_ROUND=last (the _last variant): the wrong sum is the claim of epoch 0's last
# round, which the claimer follows at once with postMetrics(0) and its payout: the payout waits
# for the claim's dispute window (the contract refuses it before), so the honest dispute lands,
# rolls epoch 0's metrics back, excludes the claimer, and the session finishes with every epoch's
# metrics and rewards on chain (the active client pays the last epoch once its window has closed).
# Every session here is deployed with --round-timeout-blocks 40 (also the dispute window), so the
# last payout waits 40 blocks, not the default 100000 of a chain without a block time.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/optimistic.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}"
tamper_bin=${BBVFL_TAMPER_BIN:-$(dirname "$BBVFL_BIN")/tests/bbvfl-tamper}
[ -x "$tamper_bin" ] || fail "no test-only bbvfl-tamper at $tamper_bin (built with the tests)"
session_test optimistic
cols=("0-9" "10-19" "20-29")
client_flags=(--labels --seed 5 --round-timeout 120 --takeover-after 0)

# --- honest
run=$work/honest
mkdir -p "$run"
session_deploy --clients 3 --epochs 2 --seed 5 --window 5 --aggregation optimistic --round-timeout-blocks 40
[ "$(json_get "$run/session.json" contract_params aggregation)" = optimistic ] || fail "session file: aggregation is not optimistic"
session_keys 3
clients_start 3
wait_clients
grep -q "disputing" "$run"/c*.out && { cat "$run"/c*.out >&2; fail "honest session: a client disputed a sum"; }
audit_passes --json >/dev/null
python3 -c 'import sys, bbvfl_audit; a = bbvfl_audit.load(sys.argv[1]); bbvfl_audit.all_pass(a); assert bbvfl_audit.check(a, "sums")["status"] == "PASS"' "$run/audit.txt"
echo "honest optimistic session: audit PASS"

# --- tampered
run=$work/tampered
mkdir -p "$run"
if [ -n "${BBVFL_TEST_BLOCK_TIME:-}" ]; then
  python3 -c 'import sys; from bbvfl_chain import Chain; c = Chain(sys.argv[1]); c.rpc("evm_setAutomine", [False]); c.rpc("evm_setIntervalMining", [int(sys.argv[2])])' \
    "$BBVFL_RPC_URL" "$BBVFL_TEST_BLOCK_TIME" || fail "could not switch the devnet to ${BBVFL_TEST_BLOCK_TIME} s blocks"
fi
session_deploy --clients 3 --epochs 2 --seed 5 --window 5 --aggregation optimistic --round-timeout-blocks 40
T=$(json_get "$run/session.json" contract_params train_rounds)
V=$(json_get "$run/session.json" contract_params eval_rounds)
if [ "${BBVFL_TEST_DISPUTE_ROUND:-}" = last ]; then
  R=$((T + V - 1))
  echo "the wrong sum: round $R, the last of epoch 0 ($T training and $V evaluation rounds)"
else
  R=2
  [ "$R" -lt "$T" ] || fail "round $R is not a training round (T $T)"
fi
release_bin=$BBVFL_BIN
BBVFL_BIN=$tamper_bin
client_env=("BBVFL_TAMPER=sum:$R")
clients_start 3
BBVFL_BIN=$release_bin
client_env=()
# a client has stopped when its process is gone or a zombie
stopped() {
  local st
  st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 0
  [ "$st" = Z ]
}
claimer_known() { grep -l "TAMPER (test only): round $R: posting a wrong sum" "$run"/c*.out >/dev/null 2>&1; }
wait_until 600 "a client posted the wrong sum" claimer_known
claimer=$(grep -l "TAMPER (test only): round $R: posting a wrong sum" "$run"/c*.out | head -1)
claimer=${claimer##*/c}
claimer=${claimer%.out}
echo "claimer: client $claimer"
for m in 0 1 2; do
  [ "$m" = "$claimer" ] && continue
  set +e
  wait "${pids[$m]}"
  rc=$?
  set -e
  [ "$rc" = 0 ] || { cat "$run/c$m.out" >&2; other_logs "$m"; fail "honest client $m exited $rc"; }
  unset "pids[$m]"
done
# the claimer, excluded, stops on its own (its next call reverts) or waits: stopped here either way
stopped "${pids[$claimer]}" || kill_client "$claimer"
pids=()
grep -q "round $R: the sum .* is not the sum of the 3 payloads: disputing it" "$run"/c*.out ||
  { cat "$run"/c*.out >&2; fail "no client disputed round $R's sum"; }
grep -qi "round $R: sum disputed by .*: the claimer ${addrs[$claimer]} is excluded and the round is redone" "$run"/c*.out ||
  { cat "$run"/c*.out >&2; fail "the clients did not see the dispute exclude client $claimer (${addrs[$claimer]})"; }
grep -q "TAMPER" "$run/c$claimer.out" || fail "the claimer's log does not say it tampered"
claimer_out_session_ended "$claimer"
# settled: every epoch's metrics and rewards on chain, after the dispute
python3 - "$BBVFL_RPC_URL" "$contract" "$("$BBVFL_CAST" sig 'epochState(uint32)')" 2 <<'PY' || { cat "$run"/c*.out >&2; fail "an epoch is not settled"; }
import sys
from bbvfl_chain import Chain
url, contract, sel, E = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = Chain(url)
for e in range(E):
    d = c.rpc("eth_call", [{"to": contract, "data": sel + "%064x" % e}, "latest"])[2:]
    st = [int(d[64 * k:64 * k + 64], 16) for k in range(3)]
    assert st == [1, 1, 1], "epoch %d: epochState (complete, metrics posted, rewards paid) = %s" % (e, st)
print("every epoch settled after the dispute")
PY
audit_fails_sums_at "$R"
# the two dispute() transactions of round R: one accepted, one reverted
python3 - "$BBVFL_RPC_URL" "$contract" "$("$BBVFL_CAST" sig 'dispute(uint64,address,bytes32,bytes[])')" "$R" <<'PY' || fail "dispute transactions"
import sys
from bbvfl_chain import Chain
url, contract, sel, R = sys.argv[1], sys.argv[2].lower(), sys.argv[3], int(sys.argv[4])
c = Chain(url)
head = int(c.rpc("eth_blockNumber", []), 16)
found = []
for b in range(1, head + 1):
    blk = c.rpc("eth_getBlockByNumber", [hex(b), True])
    for tx in blk["transactions"]:
        if (tx.get("to") or "").lower() == contract and tx["input"].startswith(sel) and int(tx["input"][10:74], 16) == R:
            st = int(c.rpc("eth_getTransactionReceipt", [tx["hash"]])["status"], 16)
            found.append((b, st))
assert len(found) == 2, "dispute() transactions of round %d: %s (expected one from each honest client)" % (R, found)
assert sorted(st for _, st in found) == [0, 1], "expected one accepted and one reverted: %s" % found
same = found[0][0] == found[1][0]
print("disputes of round %d: %s" % (R, "both in block %d" % found[0][0] if same else "in blocks %d and %d" % (found[0][0], found[1][0])))
PY
echo ok
