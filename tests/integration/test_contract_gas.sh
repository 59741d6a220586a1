#!/usr/bin/env bash
# Gas budget of on-chain aggregation (DESIGN.md "Budgets"): the steady-state gas per coordinate of
# a round's M submissions, M=5, B=10, P=16, b=16, must stay <= 400 on the devnet this test gets
# (BBVFL_RPC_URL). Gas is deterministic (it is not a timing), so this is a test; the full table is
# devnet/gas-report.sh / contract/GAS.md.
set -euo pipefail
: "${BBVFL_SOURCE_DIR:?}" "${BBVFL_RPC_URL:?}"
out=$("$BBVFL_SOURCE_DIR/devnet/gas-report.sh" --quick --rounds 5 --rpc "$BBVFL_RPC_URL" 2>/dev/null)
line=$(grep -F '| BbvflAggregator | 5 | 10 | 16 | 16 |' <<<"$out") || { echo "no BbvflAggregator row in:"; echo "$out"; exit 1; }
steady=$(awk -F'|' '{gsub(/[ *]/, "", $9); print $9}' <<<"$line")
naive=$(grep -F '| NaiveAggregator' <<<"$out" | awk -F'|' '{gsub(/[ *]/, "", $9); print $9}')
echo "steady-state gas per coordinate: $steady (budget 400); naive baseline: $naive"
python3 -c 'import sys; s, n = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if 0 < s <= 400 and n > 10 * s else 1)' \
  "$steady" "$naive" || { echo "FAIL: gas per coordinate $steady is over the 400 budget (or not 10x below naive $naive)" >&2; exit 1; }
