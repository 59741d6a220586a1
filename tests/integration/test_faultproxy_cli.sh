#!/usr/bin/env bash
# `bbvfl bench floor` through tests/tools/faultproxy.py: the real command's network path with
# connection resets and HTTP 5xx on a share of the requests still completes every transfer;
# garbage, truncated or enormous answers and a persistent HTTP 500 make it stop with a clear
# error (status below 128, bounded time). Slow and hanging nodes are covered with a short client
# timeout in test_faultproxy.c (the command's own timeout is 30 s).
set -euo pipefail
: "${BBVFL_BIN:?}" "${BBVFL_RPC_URL:?}" "${BBVFL_SOURCE_DIR:?}"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
tmp=$(mktemp -d)
pid=
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap 'stop; rm -rf "$tmp"' EXIT

start() { # faultproxy args...
  stop
  rm -f "$tmp/port" "$tmp/log"
  python3 "$BBVFL_SOURCE_DIR/tests/tools/faultproxy.py" --target "$BBVFL_RPC_URL" \
    --port-file "$tmp/port" --log "$tmp/log" "$@" >/dev/null &
  pid=$!
  for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  [ -s "$tmp/port" ] || fail "faultproxy did not start"
  url="http://127.0.0.1:$(cat "$tmp/port")"
}
faults() { grep -c "\"action\": \"$1\"" "$tmp/log" || true; }

for mode in reset status cut; do
  start --mode "$mode" --prob 0.2 --seed 3
  out=$("$BBVFL_BIN" bench floor --rpc "$url" --n 20 --warmup 0 --json) ||
    fail "$mode: bench floor failed through the proxy"
  python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert o["n"]==20 and o["floor_ms"]>0, o' "$out" ||
    fail "$mode: bad report $out"
  n=$(faults "$mode")
  [ "$n" -gt 0 ] || fail "$mode: no fault was injected"
  echo "ok: $mode on 20% of requests ($n injected): 20 transfers completed"
done

bad() { # regex, max seconds, faultproxy args...
  local want=$1 max=$2; shift 2
  start "$@"
  local st=0 t0 t1
  t0=$(date +%s)
  timeout 120 "$BBVFL_BIN" bench floor --rpc "$url" --n 3 --warmup 0 >/dev/null 2>"$tmp/err" || st=$?
  t1=$(date +%s)
  [ "$st" -ne 0 ] || fail "$*: accepted"
  [ "$st" -lt 124 ] || fail "$*: status $st (hang or crash): $(cat "$tmp/err")"
  grep -qE -- "$want" "$tmp/err" || fail "$*: expected /$want/, got: $(cat "$tmp/err")"
  [ $((t1 - t0)) -le "$max" ] || fail "$*: took $((t1 - t0)) s"
  echo "ok: $* -> $(head -c 160 "$tmp/err")"
}
bad "did not answer JSON-RPC" 20 --mode garbage
bad "malformed JSON-RPC response" 20 --mode truncate --skip 2
bad "larger than the .*-byte limit" 30 --mode huge
bad "HTTP 500" 30 --mode status
