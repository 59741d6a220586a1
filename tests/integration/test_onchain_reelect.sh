#!/usr/bin/env bash
# The active client killed with SIGKILL and never restarted: the other `bbvfl client` processes
# notice the missed deadline themselves (--takeover-after: after that long waiting they call
# reelect() when the round is complete without a gradient, expireRound() when the active client
# has not submitted; on this automining devnet each attempt is itself a transaction, so the
# attempts move the block deadline closer), one of them is elected, takes the fusion head over from
# the last GradientPosted and finishes the session. Checked:
#  - both survivors exit 0; the new active client's log says it was elected and took the head over
#    from GradientPosted;
#  - the chain: an Elected event with reason 1 (reelect) or 2 (active client excluded by
#    expireRound) naming a survivor; GradientPosted for every later training round, posted by the
#    new active client; metrics and rewards for every epoch; the session ended;
#  - bbvfl audit --session: exit 0 (re-election justified, sums, rewards).
# Window variant (ctest test_onchain_reelect_window_sh): BBVFL_TEST_WINDOW=K deploys windows of K
# minibatches per training round, BBVFL_TEST_AGG=hashed hashed aggregation (BBVFL_TEST_STALENESS=s
# with it); the kill is still right after every client submitted round 8 (a training window).
# ctest runs K=5 lane and K=5 hashed with staleness 1. Hashed with staleness 0 (BBVFL_TEST_AGG=hashed
# alone) fails the audit's election check as of this writing: the contract counts the hashed-mode
# activeBlocks deadline from the block head opened (BbvflHashAggregator.sol header), the audit from
# the head's last submission, so it calls the contract's legitimate reelect() unjustified.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/takeover.sh"
session_test reelect
EPOCHS=6
# every client frozen right after submitting round 8; the active one is killed there, the others go on
takeover_session $EPOCHS
kill_client "$victim"
resume_clients "$victim"
killed_at=$(chain_call "$BBVFL_RPC_URL" "$contract" 'currentRound()(uint64)')
echo "killed the active client $victim (${addrs[$victim]}) at round ${killed_at%% *}"
total=$(python3 -c 'import os,sys
from bbvfl_chain import Chain
p = Chain(os.environ["BBVFL_RPC_URL"], sys.argv[1]).params()
w, a, s = os.environ.get("BBVFL_TEST_WINDOW"), os.environ.get("BBVFL_TEST_AGG"), os.environ.get("BBVFL_TEST_STALENESS")
assert (not w or p["K"] == int(w)) and p["hashed"] == (a == "hashed") and p["staleness"] == int(s or 0), p
print(p["total"])' "$contract")
[ "${killed_at%% *}" -lt "$total" ] || fail "the session had ended (round ${killed_at%% *} of $total) before the kill"

wait_clients "$victim"
newact=-1
for m in 0 1 2; do
  [ "$m" = "$victim" ] && continue
  [ -s "$work/c$m/summary.json" ] || fail "client $m left no summary"
  if grep -q "was elected the new active client" "$work/c$m.out"; then newact=$m; fi
done
[ "$newact" -ge 0 ] || { cat "$work"/c*.out >&2; fail "no survivor says it was elected"; }
grep -qE "took over the fusion head from GradientPosted\(round [0-9]+\)" "$work/c$newact.out" \
  || { cat "$work/c$newact.out" >&2; fail "the new active client did not take the head over from GradientPosted"; }
grep -E "calling (reelect|expireRound)\(\)|elected|took over|active client is now" "$work"/c*.out | sed 's/^/  /'
python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["active"] and len(o["epochs"]) == int(sys.argv[2]), o' \
  "$work/c$newact/summary.json" $EPOCHS || fail "the new active client's summary does not report every epoch"

python3 - "$contract" "${addrs[$victim]}" "${addrs[$newact]}" "${killed_at%% *}" <<'PY' || fail "chain checks"
import os, sys
from bbvfl_chain import Chain, addr
contract, dead, new, killed_at = sys.argv[1:5]
dead, new, killed_at = dead.lower(), new.lower(), int(killed_at)
c = Chain(os.environ["BBVFL_RPC_URL"], contract)
el = c.logs("Elected(bytes32,address,uint64,uint8,uint8)")
assert len(el) >= 2, "no re-election on chain"
re = el[1:]
reasons = [int(l["data"][2 + 64 * 3:2 + 64 * 4], 16) for l in re]  # seed, fromRound, participants, reason
assert all(r in (1, 2) for r in reasons), reasons
# killed right after every client (itself included) had submitted round 8: the round was complete
# and only its gradient was missing, so the first re-election is reelect() (reason 1)
assert reasons[0] == 1, "the first re-election has reason %d, not 1 (reelect of a complete round)" % reasons[0]
assert addr(re[-1]["topics"][1]) == new, "the last Elected names %s, the log says %s" % (addr(re[-1]["topics"][1]), new)
assert addr(el[0]["topics"][1]) == dead
gp = c.logs("GradientPosted(uint64,address,bytes,bytes)")
later = [l for l in gp if int(l["topics"][1], 16) > killed_at]
assert later, "no gradient after the kill"
assert all(addr(l["topics"][2]) == new for l in later), "a later gradient was not posted by the new active client"
mp = c.logs("MetricsPosted(uint32,address,uint32,uint32,uint64)")
epochs = sorted(int(l["topics"][1], 16) for l in mp)
ended = c.logs("SessionEnded(uint64)")
assert ended, "the session did not end"
rp = {int(l["topics"][1], 16) for l in c.logs("RewardsPaid(uint32,address,uint256,uint32)")}
print("re-elections: reasons %s; gradients after round %d: %d, all by the new active client; metrics for epochs %s; "
      "rewards paid for %s" % (reasons, killed_at, len(later), epochs, sorted(rp)))
assert epochs == list(range(len(epochs))) and len(epochs) == len(rp), (epochs, rp)
PY
audit_passes
echo ok
