#!/usr/bin/env bash
# Plain mode with a dropout, through real `bbvfl client` processes against the test's fresh anvil:
# four clients with --expire (3 epochs), one passive client killed with SIGKILL mid-session and
# not restarted. The others time out and call expireRound(), which in plain mode excludes the
# missing client and completes the round with the three submissions it has; training goes on with
# M-1 (the active client re-reads participants() and estimates h_hat for three). Then:
#  - the test hook's dumped q (BBVFL_TEST_DUMP_Q) equals each Submitted event's calldata (plain
#    mode publishes q as it is), and every RoundCompleted sum is the sum of its round's submissions;
#  - exactly one Excluded(victim, 3); rounds from the expired one on have three contributors;
#  - participants() has three; the active client's summary says 3 participants;
#  - `bbvfl audit --session` passes (exit 0).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/dropout.sh"
session_test plaindrop
dropout_session
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["contract_params"]["masked"] is False' \
  "$work/session.json" || fail "the session file says masked"
grep -q "the sum covers 3 submissions (was 4)" "$work"/c*.out || fail "the active client did not take the round's contributor count"

python3 - "$contract" "$work" "$victim" "${addrs[@]}" <<'PY'
import glob, json, os, sys
import bbvfl_dropout, bbvfl_params
from bbvfl_chain import addr, data, dyn_bytes, word
D = bbvfl_dropout.load(sys.argv)
c, pp, addrs, victim, index, vidx = D.c, D.pp, D.addrs, D.victim, D.index, D.vidx
M, masked, total = pp['M'], pp['masked'], pp['total']
assert M == 4 and masked == 0, (M, masked)
ex = c.logs("Excluded(address,uint8)")
assert len(ex) == 1 and "0x" + ex[0]["topics"][1][-40:] == addrs[victim], ex
assert word(data(ex[0]), 0) == 3, "exclusion reason"
subs = {}
for l in c.logs("Submitted(uint64,address,bytes32)"):
    r = int(l["topics"][1], 16); i = index[addr(l["topics"][2])]
    q = dyn_bytes(c.calldata(l)[4:], 1)
    assert q == D.q(i, r), "round %d client %d: calldata differs from the dumped q" % (r, i)
    subs.setdefault(r, {})[i] = list(q)
done = c.completed()
assert len(done) == total, (len(done), total)
ex_round = None
for r, n_subs, s, _ in done:
    s = list(s)
    who = sorted(subs[r])
    assert n_subs == len(who), "round %d: RoundCompleted counts %d submissions, %d were made" % (r, n_subs, len(who))
    if len(who) == M - 1 and ex_round is None: ex_round = r
    assert who == (list(range(M)) if ex_round is None else sorted(set(range(M)) - {vidx})), (r, who)
    n = bbvfl_params.layout(pp, r)['coords']
    assert s == [sum(subs[r][i][j] for i in who) for j in range(n)], "round %d: sum" % r
assert ex_round is not None
assert word(c.call("participants()"), 1) == M - 1
act = [json.load(open(f)) for f in glob.glob(os.path.join(D.work, "c*", "summary.json"))]
act = [a for a in act if a.get("active")]
assert len(act) == 1 and act[0]["participants"] == M - 1 and act[0]["privacy"]["masked"] is False, act
print("ok: %d rounds, round %d expired without client %d, sums = sums of the submitted q" % (total, ex_round, vidx))
PY

audit_passes
echo ok
