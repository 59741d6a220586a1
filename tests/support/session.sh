# Sourced by the shell tests: the one copy of their set-up, so that a test script holds only what
# it is about. Sourcing defines functions and nothing else runs, except that it also sources
# chain.sh (chain_call, wait_paused) and puts tests/support on PYTHONPATH (inline Python imports
# bbvfl_chain and bbvfl_params from there).
#
# Failing and the work folder
#   fail MSG...          prints "FAIL: MSG" on stderr and exits 1
#   session_test NAME    creates $work (a new folder bbvfl-NAME.XXXXXX under TMPDIR), an empty pids
#                        array and run=$work, and installs an EXIT trap that runs extra_cleanup (when
#                        the test defines it), SIGKILLs every process in pids and removes $work (kept,
#                        and named on stderr, when BBVFL_KEEP_TEST_DIR is set)
#   json_get FILE KEY... the value at that path of keys in a JSON file (printed as Python prints it)
#
# The helpers below read these variables (set them before a call where the default does not fit):
#   rpc_url       the node (default $BBVFL_RPC_URL)
#   run           the folder of one session's files: session.json, deploy.json, audit.txt, the
#                 clients' state folders c<m>/ and logs c<m>.out (default $work)
#   cols          array: the --columns of client m
#   client_flags  array: flags every client of the test gets (e.g. --labels --seed 5)
#   client_env    array: NAME=VALUE pairs in the clients' environment only
#   client_party  1 (default): each client gets --party m; 0: none
# and set these: contract (deploy), addrs (keys), pids (clients), victim (pick_victim), variant.
#
# Devnet and chain
#   session_variant      variant=(--window K --aggregation A --staleness S) from BBVFL_TEST_WINDOW,
#                        BBVFL_TEST_AGG, BBVFL_TEST_STALENESS (the window variants of a script), and
#                        says which on stdout; an empty array when none is set
#   session_deploy FLAGS...  `bbvfl deploy --rpc $rpc_url FLAGS --out $run/session.json --json`
#                        (--open-registration added unless FLAGS name --members)
#                        (output in $run/deploy.json); sets contract; fails the test on an error
#   rpc METHOD PARAMS    one JSON-RPC call (PARAMS: a JSON array) to $rpc_url; prints the result (a
#                        string as it is, anything else as JSON); non-zero status on an error answer
#   fund ADDR            gives ADDR 100 ether on the devnet (anvil_setBalance: a devnet cheat
#                        method, no key on any command line)
#   session_keys N       N new keys $work/k<m>.key (m = 0..N-1), each funded; addrs[m] their addresses
#   is_active M          succeeds when client M's address is active() on chain now
# Clients
#   client_start M [FLAGS...]  `bbvfl client` for key M with the session in $run, in the background
#                        (pids[M]), appending to $run/c<M>.out (the key: $work/kM.key, or the
#                        keystore $work/kM.keystore with the password file $work/kM.pw if there)
#   clients_start N [FLAGS...] client_start for m = 0..N-1
#   pick_victim active|passive victim = the (last) client whose address is (is not) active() now
#   kill_client M        SIGKILL client M and reap it
#   resume_clients [SKIP]      SIGCONT every client in pids but SKIP
#   wait_clients [SKIP]  waits for every client in pids but SKIP; fails, with its log, when one
#                        exits non-zero; empties pids
#   wait_until SECS WHAT CMD...  runs CMD every 50 ms until it succeeds; fails "WHAT" after SECS
#   logs_hold_no_secret  fails when a client log in $run holds a 32-byte hex value (the session
#                        seed aside)
#   audit_passes [FLAGS...]    `bbvfl audit --session $run/session.json --quiet FLAGS` (stdout in
#                        $run/audit.txt, stderr in $run/audit.err); fails with both unless it exits
#                        0, else prints the first line (the verdict; `{` with --json)
. "$(dirname "${BASH_SOURCE[0]}")/chain.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }

session_cleanup() {
  if declare -F extra_cleanup >/dev/null; then extra_cleanup; fi
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [ -n "${BBVFL_KEEP_TEST_DIR:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}

session_test() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-$1.XXXXXX")
  run=$work
  pids=()
  trap session_cleanup EXIT
  export OPENBLAS_NUM_THREADS=1
}

json_get() {
  python3 - "$@" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v)
PY
}

session_variant() {
  variant=()
  [ -n "${BBVFL_TEST_WINDOW:-}" ] && variant+=(--window "$BBVFL_TEST_WINDOW")
  [ -n "${BBVFL_TEST_AGG:-}" ] && variant+=(--aggregation "$BBVFL_TEST_AGG")
  [ -n "${BBVFL_TEST_STALENESS:-}" ] && variant+=(--staleness "$BBVFL_TEST_STALENESS")
  [ ${#variant[@]} = 0 ] || echo "variant: ${variant[*]}"
}

session_deploy() {
  # the clients' keys come after the deployment here (session_keys): an open session, unless the
  # caller names its members (--members)
  local reg=(--open-registration)
  case " $* " in *" --members "*) reg=() ;; esac
  "$BBVFL_BIN" deploy --rpc "${rpc_url:-$BBVFL_RPC_URL}" "$@" ${reg[@]+"${reg[@]}"} --out "$run/session.json" --json \
    >"$run/deploy.json" || fail "deploy ${run#"$work"}"
  contract=$(json_get "$run/deploy.json" contract)
}

rpc() {
  python3 -c 'import json, sys
from bbvfl_chain import Chain
try:
    r = Chain(sys.argv[1]).rpc(sys.argv[2], json.loads(sys.argv[3]))
except AssertionError as e:
    sys.exit("%s: %s" % (sys.argv[2], e))
print(r if isinstance(r, str) else json.dumps(r))' "${rpc_url:-$BBVFL_RPC_URL}" "$1" "$2"
}

fund() {
  rpc anvil_setBalance "[\"$1\",\"0x56BC75E2D63100000\"]" >/dev/null || fail "funding $1"
}

session_keys() {
  local m
  addrs=()
  for m in $(seq 0 $(($1 - 1))); do
    "$BBVFL_BIN" key new --out "$work/k$m.key" --json >"$work/k$m.json" || fail "key new"
    addrs[$m]=$(json_get "$work/k$m.json" address)
    fund "${addrs[$m]}"
  done
}

is_active() {
  local a
  a=$(chain_call "${rpc_url:-$BBVFL_RPC_URL}" "$contract" 'active()(address)') || fail "active()"
  [ "${a,,}" = "${addrs[$1],,}" ]
}

client_start() {
  local m=$1
  shift
  local party=() key=(--key-file "$work/k$m.key")
  [ "${client_party:-1}" = 1 ] && party=(--party "$m")
  # a client whose key is a keystore ($work/kM.keystore, password in $work/kM.pw)
  [ -f "$work/k$m.keystore" ] && key=(--keystore "$work/k$m.keystore" --password-file "$work/k$m.pw")
  env ${client_env[@]+"${client_env[@]}"} "$BBVFL_BIN" client --session "$run/session.json" "${key[@]}" \
    --columns "${cols[$m]}" --state-dir "$run/c$m" ${client_flags[@]+"${client_flags[@]}"} ${party[@]+"${party[@]}"} \
    "$@" >>"$run/c$m.out" 2>&1 &
  pids[$m]=$!
}

clients_start() {
  local n=$1 m
  shift
  for m in $(seq 0 $((n - 1))); do client_start "$m" "$@"; done
}

pick_victim() {
  local m a
  a=$(chain_call "${rpc_url:-$BBVFL_RPC_URL}" "$contract" 'active()(address)') || fail "active()"
  victim=-1
  for m in "${!addrs[@]}"; do
    if [ "${addrs[$m],,}" = "${a,,}" ]; then [ "$1" = active ] && victim=$m; else [ "$1" = passive ] && victim=$m; fi
  done
  [ "$victim" -ge 0 ] || fail "no $1 client among ours (active() is $a)"
}

kill_client() {
  kill -9 "${pids[$1]}"
  wait "${pids[$1]}" 2>/dev/null || true
}

resume_clients() {
  local m
  for m in "${!pids[@]}"; do [ "$m" = "${1:-}" ] || kill -CONT "${pids[$m]}"; done
}

wait_clients() {
  local m
  for m in "${!pids[@]}"; do
    [ "$m" = "${1:-}" ] && continue
    wait "${pids[$m]}" || { cat "$run/c$m.out" >&2; other_logs "$m"; fail "client $m exited with an error"; }
  done
  pids=()
}

# The last lines of every client log but client $1's (a client that fails often does so because
# another one stopped first).
other_logs() {
  local f
  for f in "$run"/c*.out; do
    [ "$f" = "$run/c$1.out" ] && continue
    echo "--- the last lines of $(basename "$f"):" >&2
    tail -n 12 "$f" >&2
  done
}

wait_until() {
  local secs=$1 what=$2 i
  shift 2
  for i in $(seq 1 $((secs * 20))); do
    "$@" && return 0
    sleep 0.05
  done
  fail "$what (waited $secs s)"
}

logs_hold_no_secret() {
  if grep -iE "[0-9a-f]{64}" "$run"/c*.out | grep -vi "session_seed" >/dev/null; then
    fail "a client log holds a 32-byte hex value"
  fi
}

audit_passes() {
  local arc
  set +e
  "$BBVFL_BIN" audit --session "$run/session.json" --quiet "$@" >"$run/audit.txt" 2>"$run/audit.err"
  arc=$?
  set -e
  [ "$arc" = 0 ] || { cat "$run/audit.txt" "$run/audit.err" >&2; fail "bbvfl audit ${run#"$work"} exit $arc"; }
  head -1 "$run/audit.txt"
}
