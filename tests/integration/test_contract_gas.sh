#!/usr/bin/env bash
# Gas budget of on-chain aggregation (DESIGN.md "Budgets"), M=5, B=10, P=16, b=16, a window of K=5
# minibatches per round, measured from receipts on the devnet this test gets (BBVFL_RPC_URL):
#  - hashed aggregation (BbvflHashAggregator): the M submissions plus the aggregate() that
#    re-supplies them, per value summed, at most 120 in steady state;
#  - lane storage (BbvflAggregator, the baseline): at most 400, and above the hashed figure.
# Gas is deterministic (it is not a timing), so this is a test; the full table, on both the Cancun
# and the Prague/Osaka rules, is devnet/gas-report.sh / contract/GAS.md.
set -euo pipefail
: "${BBVFL_SOURCE_DIR:?}" "${BBVFL_RPC_URL:?}"
out=$("$BBVFL_SOURCE_DIR/devnet/gas-report.sh" --quick --rounds 5 --rpc "$BBVFL_RPC_URL" 2>/dev/null)
steady() { # the "gas/coord, steady" column of the row whose first cell starts with $1
  local line
  line=$(grep -F "| $1" <<<"$out" | grep -F '| 5 | 10 | 16 | 16 | 5 |' | head -n 1) || return 1
  awk -F'|' '{gsub(/[ *]/, "", $11); print $11}' <<<"$line"
}
lane=$(steady "BbvflAggregator (lanes)") || { echo "no lane-mode K=5 row in:"; echo "$out"; exit 1; }
hashed=$(steady "BbvflHashAggregator (hashed)") || { echo "no hashed K=5 row in:"; echo "$out"; exit 1; }
echo "steady-state gas per coordinate at K=5: hashed $hashed (budget 120), lane $lane (budget 400)"
python3 -c 'import sys; h, l = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if 0 < h <= 120 and 0 < l <= 400 and h < l else 1)' \
  "$hashed" "$lane" || { echo "FAIL: gas per coordinate hashed $hashed (budget 120), lane $lane (budget 400)" >&2; exit 1; }
echo ok
