#!/usr/bin/env bash
# Times N bare `cast send` 1-wei transfers against a fresh anvil and prints the median, so the
# floor measured by `bbvfl bench floor` can be compared with the stock Foundry client.
#
#   devnet/bench-cast-send.sh [--rpc URL] [--n N] [--json]
#
# Without --rpc it starts the pinned anvil on a free loopback port and stops it afterwards.
# Each sample is the wall time of one `cast send --unlocked --from <dev account 0> <dev account 1>
# --value 1` process: start-up, chain id / nonce / gas / fee queries, eth_sendTransaction and
# the receipt poll. Signing is done by anvil (--unlocked) so no private key ever appears on a
# command line; local signing would only add to cast's time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rpc="" n=50 json=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rpc) rpc=${2:?--rpc needs a URL}; shift 2 ;;
    --rpc=*) rpc=${1#--rpc=}; shift ;;
    --n) n=${2:?--n needs a number}; shift 2 ;;
    --n=*) n=${1#--n=}; shift ;;
    --json) json=1; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-cast-send: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$n" in ''|*[!0-9]*) echo "bench-cast-send: --n must be a positive integer" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] || { echo "bench-cast-send: --n must be >= 1" >&2; exit 2; }

cast() { "$here/tool.sh" cast "$@"; }
anvil_pid="" tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-cast-bench.XXXXXX")
cleanup() {
  if [ -n "$anvil_pid" ]; then kill "$anvil_pid" 2>/dev/null || true; wait "$anvil_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$rpc" ]; then
  "$here/tool.sh" anvil --host 127.0.0.1 --port 0 >"$tmp/anvil.log" 2>&1 &
  anvil_pid=$!
  for _ in $(seq 1 300); do
    port=$(sed -n 's/^Listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/anvil.log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$anvil_pid" 2>/dev/null || { echo "bench-cast-send: anvil exited:" >&2; cat "$tmp/anvil.log" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "${port:-}" ] || { echo "bench-cast-send: anvil did not start" >&2; exit 1; }
  rpc="http://127.0.0.1:$port"
fi
case "$rpc" in http://127.0.0.1:*|http://localhost:*) ;; *) echo "bench-cast-send: only a loopback anvil is supported (got $rpc)" >&2; exit 2 ;; esac

from=0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266   # anvil dev account 0 (unlocked)
to=0x70997970C51812dC3A010C7d01b50e0d17dc79C8     # anvil dev account 1
cast send --rpc-url "$rpc" --unlocked --from "$from" "$to" --value 1 >/dev/null   # warm-up

for i in $(seq 1 "$n"); do
  t0=$(date +%s%N)
  cast send --rpc-url "$rpc" --unlocked --from "$from" "$to" --value 1 >/dev/null
  t1=$(date +%s%N)
  echo $(( t1 - t0 ))
done >"$tmp/ns"

sort -n "$tmp/ns" | awk -v n="$n" -v json="$json" -v rpc="$rpc" '
  { v[NR] = $1 / 1e6 }
  END {
    med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    k = int(0.9 * n + 0.999999); if (k < 1) k = 1
    if (json) printf "{\"mode\":\"cast-send\",\"n\":%d,\"rpc\":\"%s\",\"median_ms\":%.3f,\"min_ms\":%.3f,\"p90_ms\":%.3f}\n", n, rpc, med, v[1], v[k]
    else printf "cast send (1 wei, --unlocked), %d transactions on %s\n  milliseconds  min %.3f  median %.3f  p90 %.3f\n", n, rpc, v[1], med, v[k]
  }'
