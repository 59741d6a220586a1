#!/usr/bin/env bash
# A short on-chain session in separate processes against the test's fresh anvil: `bbvfl deploy`,
# three `bbvfl client` processes (3 clients, 2 epochs), one of them killed with SIGKILL mid-session
# and restarted with the same key, session and state folder. Then, from the chain alone:
#  - every RoundCompleted sum equals the sum of the bytes submitted in that round (the submit
#    calldata of each Submitted event's transaction, fetched with eth_getTransactionByHash);
#  - the active client is participants[keccak256(revealed secrets in client order) mod n];
#  - every client's token balance equals rate x its accepted submissions (= its Submitted events);
#  - the killed-and-restarted client (the active one; BBVFL_TEST_KILL_PASSIVE=1: another one)
#    finished the session (exit 0, summary, "resuming" in its log).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test onchain
session_deploy --clients 3 --epochs 2 --seed 3
session_keys 3
cols=("0-9" "10-19" "20-29")
client_flags=(--labels --seed 3 --round-timeout 60)
# Every client freezes itself (SIGSTOP) right after submitting round 8: a 2-epoch session takes a
# second or two, too fast to catch by polling, so the test stops them at a known point instead.
clients_start 3 --pause-after-submit 9
wait_paused "$run" "${pids[@]}" || fail "the clients did not all reach round 8"
# the victim: the active client (the harder case: it holds the head) unless BBVFL_TEST_KILL_PASSIVE;
# SIGKILLed mid-round (it has submitted round 8; the sum and gradient are not yet read), restarted
if [ -n "${BBVFL_TEST_KILL_PASSIVE:-}" ]; then pick_victim passive; else pick_victim active; fi
kill_client "$victim"
resume_clients "$victim"
client_start "$victim"
wait_clients
grep -q "resuming at round" "$work/c$victim.out" || { cat "$work/c$victim.out" >&2; fail "client $victim did not resume from its checkpoint"; }
for m in 0 1 2; do [ -s "$work/c$m/summary.json" ] || fail "client $m left no summary"; done
logs_hold_no_secret

python3 - "$contract" <<'PY'
import os, sys
import bbvfl_params
from bbvfl_chain import Chain, addr, data, dyn_bytes, keccak, topic, word
c = Chain(os.environ["BBVFL_RPC_URL"], sys.argv[1])
pp = c.params()
M, levels = pp['M'], pp['levels']
rate, lane_bits, token, total = pp['rate'], pp['lane_bits'], pp['token'], pp['total']
assert M == 3 and lane_bits == 8, (M, lane_bits)

# sums = sums of the submitted bytes
subs = {}
count = {}
nsub = {}
for l in c.logs("Submitted(uint64,address,bytes32)"):
    r = int(l["topics"][1], 16); who = addr(l["topics"][2])
    cd = c.calldata(l)
    assert cd[:4].hex() == topic("submit(uint64,bytes)")[2:10]
    args = cd[4:]
    assert word(args, 0) == r
    q = dyn_bytes(args, 1)
    n = bbvfl_params.layout(pp, r)['coords']
    assert len(q) == n and max(q) <= levels
    assert keccak("0x" + q.hex()) == l["data"][:66], "dataHash"
    s = subs.setdefault(r, [0] * n)
    for i, v in enumerate(q): s[i] += v
    count[who] = count.get(who, 0) + 1
    nsub[r] = nsub.get(r, 0) + 1
done = c.completed()
assert len(done) == total, (len(done), total)
for r, n_subs, s, _ in done:
    assert n_subs == nsub[r], "round %d: RoundCompleted counts %d submissions, %d were made" % (r, n_subs, nsub[r])
    assert list(s) == subs[r], "round %d: stored sum differs from the submitted bytes" % r
assert len(subs) == total

# active client from the commit-reveal transcript
reg = c.registered()
rev = {addr(l["topics"][1]): l["data"][2:66] for l in c.logs("Revealed(address,bytes32)")}
order = sorted(rev, key=lambda a: reg[a])
S = keccak("0x" + "".join(rev[a] for a in order))
el = c.logs("Elected(bytes32,address,uint64,uint8,uint8)")
assert len(el) == 1
assert el[0]["data"][2:66] == S[2:], "Elected seed is not keccak of the revealed secrets"
expect = order[int(S, 16) % len(order)]
assert addr(el[0]["topics"][1]) == expect, "active client is not the one the transcript determines"
assert "0x" + c.call("active()")[12:32].hex() == expect

# balances = rate x accepted submissions
tok = "0x%040x" % token
for a in order:
    bal = int(c.rpc("eth_call", [{"to": tok, "data": "0x70a08231" + "0" * 24 + a[2:]}, "latest"]), 16)
    assert count[a] == total, (a, count[a], total)
    assert bal == rate * count[a], (a, bal, rate * count[a])
print("ok: %d rounds, sums match, active %s, balances = rate x accepted" % (total, expect))
PY
echo ok
