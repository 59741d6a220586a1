#!/usr/bin/env bash
# Runs bbvfl under valgrind on a few hostile inputs (malformed CSV, bad key file, a URL that is
# not one, an unreachable node, bad flags): each must be refused (non-zero status, not a signal)
# with no memory error and no definite leak (valgrind's status 99).
# Usage: valgrind-hostile.sh BBVFL_BIN VALGRIND [VALGRIND_ARGS...]
set -uo pipefail
bin=$1; shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'a,b,y\n1,2,0\n3,1\n' >"$tmp/ragged.csv"
printf 'a,b,y\n1,2,0\n3,nan,1\n' >"$tmp/nan.csv"
printf 'a,b,y\n' >"$tmp/header.csv"
head -c 2000 /dev/urandom >"$tmp/random.csv"
printf 'zz%062d' 0 >"$tmp/key" && chmod 600 "$tmp/key"
failed=0
n=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  read -r -a args <<<"$line"
  "$@" "$bin" "${args[@]}" >/dev/null 2>"$tmp/err"
  st=$?
  n=$((n + 1))
  if [ "$st" -eq 99 ] || [ "$st" -eq 0 ] || [ "$st" -ge 128 ] || ! grep -q "^bbvfl: error: " "$tmp/err"; then
    echo "FAIL (status $st): bbvfl $line" >&2
    cat "$tmp/err" >&2
    failed=1
  fi
done <<LIST
train --offchain --epochs 1 --quiet --out $tmp/run --data $tmp/ragged.csv
train --offchain --epochs 1 --quiet --out $tmp/run --data $tmp/nan.csv
train --offchain --epochs 1 --quiet --out $tmp/run --data $tmp/header.csv
train --offchain --epochs 1 --quiet --out $tmp/run --data $tmp/random.csv
train --offchain --epochs 1 --quiet --out $tmp/run --data $tmp/no-such-file
train --offchain --epochs 1 --quiet --out $tmp/run --clients 0
train --offchain --bogus
key address --key-file $tmp/key
bench floor --rpc http:// --n 1
bench floor --rpc http://127.0.0.1:1 --n 1
privacy --beta 0.7
LIST
[ "$failed" -eq 0 ] && echo "ok: $n hostile inputs under valgrind"
exit "$failed"
