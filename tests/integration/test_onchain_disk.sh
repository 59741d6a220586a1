#!/usr/bin/env bash
# Unwritable or full run folders on the on-chain path:
#  - `bbvfl client --state-dir` naming a file: non-zero exit, one clear error line, before anything
#    is sent (the client's account nonce stays 0), the file untouched;
#  - `bbvfl demo --out` naming a file: the same, and no devnet left running;
#  - --state-dir on a small tmpfs (skipped with a message when mount is not permitted) that is
#    filled up mid-session: the client stops with a "No space left" error at its next checkpoint,
#    leaves no temporary file and no half-written checkpoint (every file in the folder is complete);
#    once space is freed the same command resumes from the last checkpoint and finishes the
#    session, and bbvfl audit passes.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/skip.sh"
mounted=0
cpid=""
extra_cleanup() {
  [ -n "$cpid" ] && kill -9 "$cpid" 2>/dev/null || true
  [ "$mounted" = 1 ] && umount "$mnt" 2>/dev/null || true
}
session_test disk
mnt="$work/mnt"
one_error_line() { # file: exactly one line, starting with "bbvfl"
  [ "$(wc -l <"$1")" = 1 ] && grep -q "^bbvfl" "$1"
}

session_deploy --clients 1 --epochs 25 --seed 4
session_keys 1
addr=${addrs[0]}
client() { # state dir [extra flags]; `client ... &` forks a subshell: add --exec to replace it by bbvfl
  local dir=$1 ex=""; shift
  if [ "${1:-}" = --exec ]; then ex=exec; shift; fi
  $ex "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/k0.key" --columns 0-29 --labels \
    --state-dir "$dir" --seed 4 --round-timeout 60 "$@"
}

# 1. --state-dir is a file
echo "precious" >"$work/afile"
set +e
client "$work/afile" >"$work/file.out" 2>"$work/file.err"
rc=$?
set -e
[ "$rc" != 0 ] && [ "$rc" -lt 128 ] || fail "--state-dir FILE: exit $rc"
one_error_line "$work/file.err" || { cat "$work/file.err" >&2; fail "--state-dir FILE: not one error line"; }
grep -qi "state-dir" "$work/file.err" || fail "--state-dir FILE: the error does not name --state-dir: $(cat "$work/file.err")"
[ "$(cat "$work/afile")" = precious ] || fail "--state-dir FILE: the file changed"
nonce=$(($(rpc eth_getTransactionCount "[\"$addr\",\"latest\"]")))
[ "$nonce" = 0 ] || fail "--state-dir FILE: the client sent $nonce transactions before failing"
echo "state-dir is a file: $(cat "$work/file.err")"

# 2. bbvfl demo --out FILE
set +e
"$BBVFL_BIN" demo --out "$work/afile" --epochs 1 --clients 2 >"$work/demo.out" 2>"$work/demo.err"
rc=$?
set -e
[ "$rc" != 0 ] && [ "$rc" -lt 128 ] || fail "demo --out FILE: exit $rc"
one_error_line "$work/demo.err" || { cat "$work/demo.err" >&2; fail "demo --out FILE: not one error line"; }
[ "$(cat "$work/afile")" = precious ] || fail "demo --out FILE: the file changed"
if python3 - "$work/afile" <<'PY'
import os, sys
me = os.getpid()
for d in os.listdir("/proc"):
    if d.isdigit() and int(d) != me:
        try:
            if sys.argv[1].encode() in open("/proc/%s/cmdline" % d, "rb").read():
                sys.exit(0)
        except OSError:
            pass
sys.exit(1)
PY
then fail "demo --out FILE left a process behind"; fi
echo "demo --out is a file: $(cat "$work/demo.err")"

# 3. a state folder that fills up mid-session
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=1m tmpfs "$mnt" 2>"$work/mount.err"; then
  bbvfl_skip_machine "full disk part: cannot mount a tmpfs here: $(cat "$work/mount.err")"
  echo ok
  bbvfl_skip_exit
fi
mounted=1
state="$mnt/state"
# the client freezes itself right after submitting round 20, the disk is filled while it is stopped,
# and it goes on from there: its next checkpoint hits the full disk whatever the machine's speed
client "$state" --exec --pause-after-submit 21 >"$work/c0.out" 2>&1 &
cpid=$!
wait_paused "$work" "$cpid" || fail "the client did not reach round 20"
dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null || true # until ENOSPC
kill -CONT "$cpid"
set +e
wait "$cpid"
rc=$?
set -e
cpid=""
[ "$rc" != 0 ] && [ "$rc" -lt 128 ] || { cat "$work/c0.out" >&2; fail "full disk: client exit $rc"; }
grep -q "No space left on device" "$work/c0.out" || { cat "$work/c0.out" >&2; fail "full disk: no clear error"; }
echo "full disk: $(tail -1 "$work/c0.out")"
left=$(find "$state" -name '*.tmp.*')
[ -z "$left" ] || fail "temporary files left: $left"
rm -f "$mnt/filler"
# every checkpoint file that exists is complete: the restarted client loads them (a truncated file
# would be a load error), resumes and finishes
client "$state" >"$work/c1.out" 2>&1 || { cat "$work/c1.out" >&2; fail "the restarted client failed"; }
grep -q "resuming at round" "$work/c1.out" || { cat "$work/c1.out" >&2; fail "the restarted client did not resume"; }
grep -q "session complete" "$work/c1.out" || fail "the restarted client did not complete"
verdict=$(audit_passes)
echo "restart after freeing space: $(grep "resuming" "$work/c1.out"); $verdict"
echo ok
