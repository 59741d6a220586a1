#!/usr/bin/env bash
# A round deadline in blocks that outlasts the client's patience in seconds: a 2-client, 1-epoch
# session deployed with --round-timeout-blocks 40; both clients freeze right after submitting round
# 0 (--pause-after-submit 1), the passive one is killed and never restarted. The survivor runs with
# --expire --round-timeout 1: after 1 s it calls expireRound(), which reverts with
# RoundNotTimedOut(deadline) until the chain passes the deadline block (on the automining devnet each
# attempt mines one block, so that is about 40 attempts, far past twice the 1 s timeout). The client
# must keep trying while the head moves toward the deadline, have its expireRound() accepted, and
# finish the session alone (exit 0). A client that gave up at twice its timeout "although
# expireRound() was tried" fails this test.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test expire_deadline
session_deploy --clients 2 --epochs 1 --seed 2 --round-timeout-blocks 40
session_keys 2
cols=("0-14" "15-29")
client_flags=(--labels --round-timeout 1 --expire)
client_party=0
clients_start 2 --pause-after-submit 1
wait_paused "$run" "${pids[@]}" || fail "the clients did not both reach round 0"
pick_victim passive
survivor=$((1 - victim))
kill_client "$victim"
resume_clients "$victim"
wait_clients "$victim"
grep -q "expireRound() accepted" "$run/c$survivor.out" || fail "no accepted expireRound() in the survivor's log"
python3 - "$run/c$survivor.out" <<'PY'
import re, sys
log = open(sys.argv[1]).read()
# the accepted expiry came after more than twice the client's 1 s timeout
t = [float(x) for x in re.findall(r"no sum after ([0-9.]+) s; expireRound\(\) accepted", log)]
assert t and max(t) > 2.0, ("expected an expiry accepted after more than 2 s", t)
print("ok: expireRound() accepted after %.1f s (timeout 1 s, deadline 40 blocks)" % max(t))
PY
echo ok
