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
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/takeover.sh"
session_test slow-active
# every client frozen (SIGSTOP) right after submitting round 8: the active client is then frozen at
# a known point (its round submitted, the gradient not yet posted) however fast or slow the machine is
takeover_session 4
# the active client stays frozen (round 8 submitted by all, its gradient never posted); the two
# others go on and, after --takeover-after, call reelect()
resume_clients "$victim"
echo "froze the active client $victim at round $(chain_call "$BBVFL_RPC_URL" "$contract" 'currentRound()(uint64)')"
# The chain first: on a fast machine the others may re-elect and finish the whole session between
# two polls, so a client that has exited counts as a failure only while the chain still names the
# frozen client (read again after seeing the exit).
someone_else_elected() {
  local m
  is_active "$victim" || return 0
  for m in "${!pids[@]}"; do
    [ "$m" != "$victim" ] || continue
    ! kill -0 "${pids[$m]}" 2>/dev/null || continue
    is_active "$victim" || return 0
    cat "$work/c$m.out" >&2
    fail "client $m exited while the active client was frozen"
  done
  return 1
}
wait_until 300 "nobody was elected while the active client was frozen" someone_else_elected
kill -CONT "${pids[$victim]}"
vpid=${pids[$victim]}
wait_clients "$victim"
set +e
wait "$vpid"
vrc=$?
set -e
if [ "$vrc" = 0 ]; then
  grep -q "carrying on as a passive client" "$work/c$victim.out" || { cat "$work/c$victim.out" >&2; fail "the resumed client exited 0 without saying it was demoted"; }
  echo "the resumed client carried on as a passive client: $(grep "carrying on" "$work/c$victim.out")"
else
  grep -qiE "excluded|not a participant|not ?registered" "$work/c$victim.out" || { cat "$work/c$victim.out" >&2; fail "the resumed client failed without a clear reason"; }
  echo "the resumed client had been excluded (expireRound) and stopped: $(tail -1 "$work/c$victim.out")"
fi
audit_passes
echo ok
