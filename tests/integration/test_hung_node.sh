#!/usr/bin/env bash
# A node that keeps the connection open and never answers (here: the test's anvil frozen with
# SIGSTOP mid-session) is a node that is down: the clients give up within --node-down-timeout plus
# one RPC timeout (the client's HTTP timeout is --round-timeout + 5 s), with a message that says
# the node has not answered, instead of first spending `retries` whole HTTP timeouts.
# Checked: both clients exit non-zero within that bound (plus a margin for a loaded machine, far
# below the 51 s the clients took before the node-down clock started at the first failure) and
# say the node did not answer.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
anvil_pid=$(json_get "$BBVFL_DEVNET_DIR/devnet.json" pid)
extra_cleanup() { kill -CONT "$anvil_pid" 2>/dev/null || true; }
session_test hung-node
ROUND_TIMEOUT=5 DOWN=5
session_deploy --clients 2 --epochs 3 --seed 2
session_keys 2
cols=("0-14" "15-29")
client_flags=(--labels --round-timeout $ROUND_TIMEOUT --node-down-timeout $DOWN)
client_party=0
clients_start 2 --pause-after-submit 4
# both clients freeze themselves after submitting round 3: the session is under way
wait_paused "$run" "${pids[@]}" || fail "the clients did not reach round 3"
kill -STOP "$anvil_pid"
t0=$(date +%s.%N)
for m in 0 1; do kill -CONT "${pids[$m]}"; done
codes=()
for m in 0 1; do
  set +e
  wait "${pids[$m]}"
  codes[$m]=$?
  set -e
done
t1=$(date +%s.%N)
pids=()
kill -CONT "$anvil_pid"
elapsed=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1")
# bound: node-down timeout + one HTTP timeout (round timeout + 5) + a margin for a loaded machine
bound=$((DOWN + ROUND_TIMEOUT + 5 + 10))
for m in 0 1; do
  [ "${codes[$m]}" != 0 ] || { cat "$work/c$m.out" >&2; fail "client $m exited 0 with the node frozen"; }
  grep -q "has not answered for" "$work/c$m.out" || { cat "$work/c$m.out" >&2; fail "client $m: no clear node-down message"; }
done
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)" "$elapsed" "$bound" ||
  { cat "$work/c0.out" "$work/c1.out" >&2; fail "the clients took $elapsed s to give up on a hung node (bound $bound s)"; }
echo "both clients gave up on the hung node after $elapsed s (bound $bound s): $(grep -h "has not answered" "$work/c0.out" | tail -1)"
echo ok
