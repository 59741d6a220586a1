#!/usr/bin/env bash
# A masked session (docs/MASKED.md) through real `bbvfl client` processes against the test's fresh
# anvil: `bbvfl deploy --masked`, four clients (3 epochs), one passive client (with
# BBVFL_TEST_KILL_ACTIVE=1 the active client: test_masked_session_active.sh) killed with SIGKILL
# mid-session and NOT restarted. The others time out, call expireRound(), the contract voids the
# round and re-opens it for the three that submitted (RoundReopened), they submit the same q masked
# for the new set, and the session finishes with M-1 participants. The clients write their unmasked
# q per round through the test hook BBVFL_TEST_DUMP_Q (never through the chain). Then:
#  - no Submitted event's calldata equals the client's unmasked q (as 16-bit lanes);
#  - every RoundCompleted sum equals the sum of the dumped q of the clients of that round's last
#    attempt, and the lane sum mod 2^16 of their submissions; the voided attempt had all four;
#  - exactly one RoundReopened, announcing the three survivors; participants() has three (a killed
#    active client: the contract elects a new one, which takes the head over from the chain);
#  - the active client's summary reports the masked bound for 3 participants next to the local one;
#  - `bbvfl audit --session` passes (exit 0) and reports the masked bound for 3 participants.
# Window variants (ctest test_masked_session_window_sh, _hashed_sh): BBVFL_TEST_WINDOW=K deploys
# windows of K minibatches per training round, BBVFL_TEST_AGG=hashed hashed aggregation (the
# active client re-supplies the masked payloads to aggregate()); the kill is still after round 6.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/dropout.sh"
session_test masked
session_variant
dropout_session --masked ${BBVFL_TEST_KILL_ACTIVE:+--active-blocks 12} ${variant[@]+"${variant[@]}"}
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["contract_params"]["masked"] is True' \
  "$work/session.json" || fail "the session file does not say masked"
grep -q "re-opened for 3 participants" "$work"/c*.out || fail "no client logged the re-opened round"

python3 - "$contract" "$work" "$victim" "${addrs[@]}" <<'PY'
import glob, json, os, sys
import bbvfl_dropout, bbvfl_params
from bbvfl_chain import addr, data, keccak, pos, topic, word, dyn_bytes
D = bbvfl_dropout.load(sys.argv)
c, pp, work, index, vidx = D.c, D.pp, D.work, D.index, D.vidx
M, levels, masked = pp['M'], pp['levels'], pp['masked']
lane_bits, total = pp['lane_bits'], pp['total']
def ncoords(r): return bbvfl_params.layout(pp, r)['coords']
assert M == 4 and masked == 1 and lane_bits == 16, (M, masked, lane_bits)
w, agg = os.environ.get("BBVFL_TEST_WINDOW"), os.environ.get("BBVFL_TEST_AGG")
assert (not w or pp["K"] == int(w)) and pp["hashed"] == (agg == "hashed"), pp

def q_of(i, r):
    q = D.q(i, r)
    assert len(q) == ncoords(r) and max(q) <= levels, (i, r)
    return list(q)

reopened = c.logs("RoundReopened(uint64,uint64,uint8)")
assert len(reopened) == 1, "expected one re-opened round, got %d" % len(reopened)
ro = reopened[0]
ro_round = int(ro["topics"][1], 16)
d = data(ro)
ro_set, ro_n = word(d, 0), word(d, 1)
assert ro_n == M - 1 and ro_set == ((1 << M) - 1) & ~(1 << vidx), (hex(ro_set), ro_n, vidx)

attempts = {}   # round -> list of (client index, lanes) of the attempt that completed
voided = []
checked = 0
sel = topic("submit(uint64,bytes)")[2:10]
hashed = pp["hashed"] == 1
# hashed mode: the submitted lanes are in the SubmittedPayload log; lane mode: in the calldata
for l in c.logs("SubmittedPayload(uint64,address,bytes)" if hashed else "Submitted(uint64,address,bytes32)"):
    r = int(l["topics"][1], 16); i = index[addr(l["topics"][2])]
    if hashed:
        y = dyn_bytes(data(l), 0)
    else:
        cd = c.calldata(l)
        assert cd[:4].hex() == sel and word(cd[4:], 0) == r
        y = dyn_bytes(cd[4:], 1)
        assert keccak("0x" + y.hex()) == l["data"][:66], "dataHash"
    n = ncoords(r)
    assert len(y) == 2 * n
    q = q_of(i, r)
    plain = b"".join(v.to_bytes(2, "big") for v in q)
    assert y != plain, "round %d: client %d's submission equals its unmasked q" % (r, i)
    # and not merely shifted: most lanes differ from q
    lanes = [int.from_bytes(y[2 * j:2 * j + 2], "big") for j in range(n)]
    assert sum(a != b for a, b in zip(lanes, q)) > n // 2, "round %d client %d: lanes mostly equal q" % (r, i)
    checked += 1
    if r == ro_round and pos(l) < pos(ro):
        voided.append(i)
    else:
        attempts.setdefault(r, []).append((i, lanes))
assert sorted(voided) == sorted(set(range(M)) - {vidx}), ("the voided attempt's submitters", voided)

done = c.completed()
assert len(done) == total, (len(done), total)
for r, n_subs, s, _ in done:
    n = ncoords(r)
    s = [int.from_bytes(s[2 * j:2 * j + 2], "big") for j in range(n)]
    subs = attempts[r]
    who = sorted(i for i, _ in subs)
    assert n_subs == len(who), "round %d: RoundCompleted counts %d submissions, %d were made" % (r, n_subs, len(who))
    expect_who = list(range(M)) if r < ro_round else sorted(set(range(M)) - {vidx})
    assert who == expect_who, ("round %d contributors" % r, who, expect_who)
    lane_sum = [sum(ls[j] for _, ls in subs) % 65536 for j in range(n)]
    q_sum = [sum(q_of(i, r)[j] for i in who) for j in range(n)]
    assert s == lane_sum, "round %d: sum differs from the lane sum of the submissions" % r
    assert s == q_sum, "round %d: sum differs from the sum of the unmasked q" % r
parts = c.call("participants()")
assert word(parts, 1) == M - 1, ("participants()", word(parts, 1))
assert len(c.logs("SessionEnded(uint64)")) == 1

act = [json.load(open(f)) for f in glob.glob(os.path.join(work, "c*", "summary.json"))]
act = [a for a in act if a.get("active")]
assert len(act) == 1
pr = act[0]["privacy"]
assert act[0]["participants"] == M - 1 and pr["participants"] == M - 1 and pr["masked"] is True, pr
assert 0 < pr["epsilon_feature_masked"] < pr["epsilon_feature"], pr
print("ok: %d submissions checked, %d rounds, round %d re-opened for 0x%x, masked bound %.3g vs local %.3g"
      % (checked, total, ro_round, ro_set, pr["epsilon_feature_masked"], pr["epsilon_feature"]))
PY

audit_passes --json >/dev/null
python3 - "$work/audit.txt" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
def find(o, k):
    if isinstance(o, dict):
        if k in o: return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None: return r
    if isinstance(o, list):
        for v in o:
            r = find(v, k)
            if r is not None: return r
    return None
assert find(a, "masked_participants") == 3, find(a, "masked_participants")
assert find(a, "masked_feature") > 0
print("ok: audit passed; masked bound for 3 participants")
PY
echo ok
