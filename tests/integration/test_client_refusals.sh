#!/usr/bin/env bash
# Refusals that must cost nothing: every check of local input runs before the first transaction,
# a refused command leaves no folder behind, and a server that is not a JSON-RPC node gets a
# one-line error naming the URL and what came back.
#  - a data file whose label column holds a class the session does not have (a `2` in the binary
#    Breast Cancer table): refused before any transaction (the key's nonce stays 0, no Registered
#    event), --state-dir not created;
#  - a row-count error and a --columns error: refused, --state-dir not created;
#  - an HTTP server answering HTML (python3 -m http.server: HTTP 501 pages) behind deploy, client,
#    audit and demo: exit non-zero with one line naming the URL and the content type; the demo
#    leaves no run folder behind;
#  - a demo pointed at a port nothing listens on: no run folder (no empty keys/) left behind.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
srv=
extra_cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null || true; }
session_test refusals
data="$BBVFL_SOURCE_DIR/data/breast_cancer.csv"
session_deploy --clients 2 --epochs 1 --seed 1
session_keys 1
addr=${addrs[0]}
nothing_sent() { # what
  local nonce
  nonce=$(rpc eth_getTransactionCount "[\"$addr\",\"latest\"]")
  [ "$((nonce))" = 0 ] || fail "$1: the client sent $((nonce)) transaction(s)"
}
refused() { # want-regex state-dir what, then client args
  local want=$1 st=$2 what=$3; shift 3
  set +e
  "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k0.key" --labels --state-dir "$st" \
    --round-timeout 5 "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  set -e
  [ $rc -ne 0 ] || fail "$what: accepted"
  grep -qE -- "$want" "$work/err" || fail "$what: expected /$want/, got: $(cat "$work/err")"
  [ "$(wc -l <"$work/err")" -le 1 ] || fail "$what: more than one line: $(cat "$work/err")"
  [ ! -e "$st" ] || fail "$what: left $st behind"
  nothing_sent "$what"
  echo "ok: $what -> $(cat "$work/err")"
}

# a label the session does not have
python3 - "$data" "$work/bad-label.csv" <<'PY'
import sys
rows = open(sys.argv[1]).read().splitlines()
cells = rows[5].split(","); cells[-1] = "2"; rows[5] = ",".join(cells)
open(sys.argv[2], "w").write("\n".join(rows) + "\n")
PY
refused "label column holds the classes '0', '1', '2', but the session's table has '0', '1'" "$work/st1" \
  "a class the session does not have" --columns 0-14 --data "$work/bad-label.csv"
# a row fewer
head -n -1 "$data" >"$work/short.csv"
refused "has 568 rows but the session was set up for 569" "$work/st2" "a missing row" --columns 0-14 --data "$work/short.csv"
# a column that does not exist
refused "does not exist" "$work/st3" "a column that does not exist" --columns 0-99
# the same key and session still work afterwards: nothing about the refusals stuck
# (after the deployment's block: its constructor logs Members)
after=$(printf '0x%x' $(($(json_get "$run/deploy.json" deploy_block) + 1)))
[ -z "$(rpc eth_getLogs "[{\"address\":\"$contract\",\"fromBlock\":\"$after\",\"toBlock\":\"latest\"}]" | tr -d '[]')" ] ||
  fail "the refused clients left events on chain"

# an HTTP server that is not a JSON-RPC node
mkdir -p "$work/www"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
(cd "$work/www" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
srv=$!
wait_until 30 "the HTML server did not start" curl -s -o /dev/null "http://127.0.0.1:$port/"
html="http://127.0.0.1:$port"
one_line() { # what, then a command that must fail with one line naming the URL and the content type
  local what=$1; shift
  set +e
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  set -e
  [ $rc -ne 0 ] || fail "$what: accepted an HTML server"
  # one error line (the demo may say which node and run folder it uses first), no page in it
  [ "$(grep -c "^bbvfl: error: " "$work/err")" = 1 ] || fail "$what: not one error line: $(head -c 400 "$work/err")"
  [ "$(wc -l <"$work/err")" -le 2 ] || fail "$what: $(wc -l <"$work/err") lines: $(head -c 400 "$work/err")"
  ! grep -qE "Error code|</html>|</body>" "$work/err" || fail "$what: the page was printed: $(head -c 400 "$work/err")"
  [ "$(grep "^bbvfl: error: " "$work/err" | wc -c)" -le 400 ] || fail "$what: an error line of over 400 characters"
  grep "^bbvfl: error: " "$work/err" | grep "$html" | grep "text/html" | grep -q "not JSON-RPC" ||
    fail "$what: unclear: $(cat "$work/err")"
  echo "ok: $what -> $(grep "^bbvfl: error: " "$work/err")"
}
one_line "deploy" "$BBVFL_BIN" deploy --rpc "$html" --clients 2 --out "$work/s2.json"
[ ! -e "$work/s2.json" ] || fail "deploy against an HTML server wrote a session file"
one_line "client" "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k0.key" --columns 0-14 \
  --state-dir "$work/st4" --rpc "$html" --round-timeout 5
[ ! -e "$work/st4" ] || fail "client against an HTML server left its state folder"
one_line "audit" "$BBVFL_BIN" audit --rpc "$html" --contract "$contract"
one_line "demo" "$BBVFL_BIN" demo --rpc "$html" --clients 2 --epochs 1 --out "$work/demo-html"
[ ! -e "$work/demo-html" ] || fail "demo against an HTML server left $(find "$work/demo-html")"

# a port nothing listens on
dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
if "$BBVFL_BIN" demo --rpc "http://127.0.0.1:$dead" --clients 2 --epochs 1 --out "$work/demo-dead" 2>"$work/err"; then
  fail "demo against a dead port succeeded"
fi
[ ! -e "$work/demo-dead" ] || fail "demo against a dead port left $(find "$work/demo-dead")"
echo "ok: demo against a dead port -> $(cat "$work/err")"

# a session file that cannot be written: refused before any transaction (the file is the only
# record of the contracts a deploy creates)
b0=$(rpc eth_blockNumber '[]')
if "$BBVFL_BIN" deploy --rpc "$BBVFL_RPC_URL" --open-registration --clients 2 --epochs 1 --out "$work/no/such/dir/s.json" 2>"$work/err"; then
  fail "deploy into a missing folder succeeded"
fi
grep -q "does not exist" "$work/err" || fail "unclear message for a missing --out folder: $(cat "$work/err")"
mkdir "$work/adir"
if "$BBVFL_BIN" deploy --rpc "$BBVFL_RPC_URL" --open-registration --clients 2 --epochs 1 --out "$work/adir" 2>"$work/err"; then
  fail "deploy onto a folder succeeded"
fi
grep -q "is a folder" "$work/err" || fail "unclear message for a folder as --out: $(cat "$work/err")"
[ "$(rpc eth_blockNumber '[]')" = "$b0" ] || fail "a refused deploy mined a block ($b0 -> $(rpc eth_blockNumber '[]'))"
echo "ok: deploy with an unwritable --out -> no block mined"
echo ok
