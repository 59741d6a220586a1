# Sourced by shell tests: read-only contract calls over plain JSON-RPC (eth_call through python).
# Not `cast call`: cast also sends anvil_nodeInfo, and anvil 1.7.1 was seen to stop answering for
# good when that request arrived while a client's eth_sendRawTransactionSync was being mined (a CI
# run under load: every client then timed out on a node that never came back). `cast sig` only
# hashes the signature offline. Needs BBVFL_CAST.
#   chain_call URL CONTRACT 'name()(uint64)'   -> the value in decimal
#   chain_call URL CONTRACT 'name()(address)'  -> 0x + 40 hex digits (lower case)
#   chain_call URL CONTRACT 'name()'           -> the raw return data (0x...)
# Functions without arguments only (no test needs more). Non-zero exit status when the node does
# not answer within 30 s or the call reverts.
# Sourcing this file puts tests/support on PYTHONPATH (bbvfl_chain, bbvfl_params).
export PYTHONPATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
chain_call() {
  local url=$1 contract=$2 sig=$3
  local fn="${sig%%)*})"
  local sel
  sel=$("$BBVFL_CAST" sig "$fn") || return 1
  python3 - "$url" "$contract" "$sel" "${sig#"$fn"}" <<'PY'
import sys
from bbvfl_chain import Chain
url, contract, sel, ret = sys.argv[1:5]
try:
    data = Chain(url).rpc("eth_call", [{"to": contract, "data": sel}, "latest"])
except AssertionError as e:
    sys.exit("eth_call %s: %s" % (sel, e))
if ret == "(address)":
    print("0x" + data[-40:])
elif ret.startswith("(uint"):
    print(int(data, 16))
else:
    print(data)
PY
}

# wait_paused WORK PID...: waits (up to 5 minutes) until every client process PID has frozen
# itself (`bbvfl client --pause-after-submit N` stops with SIGSTOP right after submitting its N-th
# round), so a test acts at a known point of the session however fast or slow the machine is.
# The i-th PID logs to WORK/c<i>.out. Returns 0 when all are stopped; 1 (after printing the log)
# when one exited first; 2 at the deadline.
wait_paused() {
  local work=$1; shift
  local pids=("$@") n m _
  for _ in $(seq 1 6000); do
    n=0
    for m in "${!pids[@]}"; do
      [ "$(awk '{print $3}' "/proc/${pids[$m]}/stat" 2>/dev/null)" = T ] && n=$((n + 1))
    done
    [ "$n" -eq ${#pids[@]} ] && return 0
    for m in "${!pids[@]}"; do
      kill -0 "${pids[$m]}" 2>/dev/null || { cat "$work/c$m.out" >&2; echo "client $m exited before pausing" >&2; return 1; }
    done
    sleep 0.05
  done
  return 2
}
