#!/usr/bin/env bash
# Deadlines that fit a block time: `bbvfl deploy` turns --round-timeout-seconds / --active-timeout
# (default 600 s each) into blocks from the chain's block time, measured from its recent blocks'
# timestamps. Checked:
#  - on a chain with 1 s blocks (its own anvil, `bbvfl devnet up --block-time 1`, waited until it
#    has mined 4 blocks): --round-timeout-seconds 120 --active-timeout 60 give 120 and 60 blocks
#    in the contract's params() and in the session file's "deadlines" (block_time_s 1); no
#    flags: 600 and 600 blocks;
#  - on the automining node of tests/with-devnet.sh (a block per transaction): 100000 blocks, as
#    before (a stalled session makes no blocks there);
#  - a deadline in blocks and in seconds at once is refused, naming both flags.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_BIN:?}" "${BBVFL_RPC_URL:?}"
session_test deploy-deadlines
extra_cleanup() { [ -e "$work/devnet/devnet.json" ] && "$BBVFL_BIN" devnet down --dir "$work/devnet" >/dev/null 2>&1 || true; }

"$BBVFL_BIN" devnet up --dir "$work/devnet" --block-time 1 --json >"$work/devnet.json" || fail "devnet up --block-time 1"
bt_url=$(json_get "$work/devnet.json" rpc_url)
mined4() { local n; n=$(rpc_url=$bt_url rpc eth_blockNumber '[]') && [ $((n)) -ge 4 ]; }
wait_until 30 "4 blocks at 1 s" mined4

check() { # URL OUT ROUND_BLOCKS ACTIVE_BLOCKS BLOCK_TIME [FLAGS...]
  local url=$1 out=$2 rb=$3 ab=$4 bt=$5
  shift 5
  "$BBVFL_BIN" deploy --rpc "$url" --open-registration --clients 3 --epochs 1 --out "$work/$out.json" --json "$@" >"$work/$out.out" ||
    fail "deploy $out"
  python3 - "$url" "$work/$out.json" "$rb" "$ab" "$bt" <<'PY' || fail "deadlines of $out"
import json, sys
from bbvfl_chain import Chain
url, path, rb, ab, bt = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
s = json.load(open(path))
pp = Chain(url, s["contract"]).params()
assert (pp["timeout_blocks"], pp["active_blocks"]) == (rb, ab), pp
d = s["deadlines"]
assert (d["round_timeout_blocks"], d["active_blocks"]) == (rb, ab) and abs(d["block_time_s"] - bt) < 0.01, d
print("%s: block time %.2f s, round timeout %d blocks, active %d blocks" % (path.split("/")[-1], d["block_time_s"], rb, ab))
PY
}
check "$bt_url" given 120 60 1 --round-timeout-seconds 120 --active-timeout 60
check "$bt_url" defaults 600 600 1
check "$BBVFL_RPC_URL" automine 100000 100000 0

set +e
"$BBVFL_BIN" deploy --rpc "$bt_url" --open-registration --clients 3 --epochs 1 --out "$work/both.json" --round-timeout-blocks 5 \
  --round-timeout-seconds 5 >"$work/both.out" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] && grep -q "not both" "$work/both.out" && [ ! -e "$work/both.json" ] ||
  { cat "$work/both.out" >&2; fail "blocks and seconds at once were not refused"; }
echo ok
