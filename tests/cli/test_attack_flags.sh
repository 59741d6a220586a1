#!/usr/bin/env bash
# The flags of `bbvfl attack`, `bbvfl bench attacks` and the VFL-AFE flags on PBM: each bad value is
# refused before any training (exit 2, the flag named on stderr, nothing on stdout); --only runs just
# the rows named (one row, its name printed).
set -euo pipefail
: "${BBVFL_BIN:?}"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test attack-flags
refused() { # what pattern args...
  local what=$1 pattern=$2; shift 2
  set +e
  "$BBVFL_BIN" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$work/err" >&2; fail "$what: exit $rc, expected 2"; }
  [ ! -s "$work/out" ] || fail "$what: wrote to stdout"
  grep -q -- "$pattern" "$work/err" || { cat "$work/err" >&2; fail "$what: the message does not say '$pattern'"; }
  echo "ok: $what"
}
refused "--test-frac 1" "--test-frac 1: must be in (0, 1)" attack --test-frac 1
refused "--seeds 65" "--seeds 65" attack --seeds 65
refused "--only 99" "--only '99'" attack --sweep --only 99
refused "--only 1,x" "--only '1,x'" bench attacks --only 1,x
refused "bench afe --mechanism npq" "gaussian or pbm" bench afe --mechanism npq
refused "train --afe with npq" "--afe needs --mechanism gaussian or pbm" train --offchain --mechanism npq --afe
refused "train --afe with pbm and t = 0" "clip threshold t must be > 0" train --offchain --mechanism pbm --afe --clip 0 --epochs 1
# --only: one row of the sweep, quickly (1 epoch, 1 shadow)
"$BBVFL_BIN" attack --sweep --only 0 --epochs 1 --shadows 1 --out "$work/sweep" >"$work/only.out" 2>"$work/only.err" ||
  { cat "$work/only.err" >&2; fail "--only 0 failed"; }
[ "$(grep -c '^npq ' "$work/only.out")" = 1 ] || fail "--only 0: not exactly the npq row: $(cat "$work/only.out")"
! grep -q '^pbm ' "$work/only.out" || fail "--only 0 ran other rows"
[ "$(wc -l <"$work/sweep/attack.csv")" = 2 ] || fail "--only 0: attack.csv is not the header and one row"
echo "PASS"
