#!/usr/bin/env bash
# A client whose peers never show up does not hang: with a 2-client session and only one client
# running, it stops after --round-timeout with a clear message (exit non-zero). Bad client input
# (missing flags, wrong columns, a session file that is not one) gets clear errors before any
# transaction.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test noshow
session_deploy --clients 2 --epochs 1 --seed 1
session_keys 1
start=$(date +%s)
if "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k0.key" --columns 0-14 --labels \
  --state-dir "$work/c0" --round-timeout 2 2>"$work/err"; then fail "a lone client finished a 2-client session"; fi
end=$(date +%s)
[ $((end - start)) -lt 60 ] || fail "the lone client took $((end - start)) s to give up"
grep -q "are all 2 clients running" "$work/err" || fail "unclear timeout message: $(cat "$work/err")"
# bad input
if "$BBVFL_BIN" client --session "$work/session.json" --columns 0-3 --state-dir "$work/x" 2>"$work/err"; then fail "no key accepted"; fi
grep -q -- "--key-file" "$work/err" || fail "no clear message without a key"
if "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k0.key" --columns 0-99 --state-dir "$work/x" 2>"$work/err"; then
  fail "column 99 accepted"
fi
grep -q "does not exist" "$work/err" || fail "no clear message for a bad column: $(cat "$work/err")"
echo '{"version": 1}' >"$work/bad.json"
if "$BBVFL_BIN" client --session "$work/bad.json" --key-file "$work/k0.key" --columns 0-3 --state-dir "$work/x" 2>"$work/err"; then
  fail "a bad session file accepted"
fi
grep -q "session file" "$work/err" || fail "no clear message for a bad session file: $(cat "$work/err")"
echo ok
