#!/usr/bin/env bash
# Gas per coordinate of on-chain aggregation, measured from transaction receipts on a fresh anvil.
#
#   devnet/gas-report.sh [--rounds N] [--quick] [--rpc URL] [--hardfork NAME]   (Markdown report)
#   --rounds N  rounds per session (default 7, >= 5); --quick  first table row only;
#   --rpc URL   use a running loopback anvil instead of starting one;
#   --hardfork NAME  start anvil with --hardfork NAME (default: anvil's default, Prague/Osaka rules).
#   GAS_REPORT_VERBOSE=1 prints every transaction hash and its gas on stderr.
#
# Starts the pinned anvil on a free 127.0.0.1 port, deploys BbvflAggregator from abi/ with
# `cast send --create` from anvil's first (unlocked) dev account, and drives whole sessions with
# cast: registration, commit-reveal election, N TRAIN rounds of M submissions (plus the active
# client's gradient post after each round). A row with window K carries K minibatches of B rows per
# round (the session has R = N*K batches per epoch, one epoch, no eval rounds), so a submission
# holds K*B*P values. Clients are impersonated addresses (anvil_impersonateAccount)
# derived from fixed 64-byte test public keys, so no private key exists anywhere. The figure is
#   gas per coordinate = sum of gasUsed of a round's M submit transactions / (M * K * B * P)
# (gasUsed is the whole transaction: 21000 base + calldata + execution), averaged over the
# steady-state rounds (round >= RING, when every slot of the ring has been written once), and
# round 0 (first use of storage) for comparison. The naive baseline (NaiveAggregator: one
# uint256 storage word per value, sum in a separate aggregate() call) is measured the same way;
# its figure counts its M submissions plus its aggregate() call.
# anvil is stopped by its pid on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=7
quick=0
rpc=
hardfork=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --rpc) rpc=$2; shift 2 ;;
    --hardfork) hardfork=$2; shift 2 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "gas-report: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$rounds" -ge 5 ] || { echo "gas-report: --rounds must be >= 5 (4 ring slots + 1 steady round)" >&2; exit 2; }
tool="$root/devnet/tool.sh"
cast() { "$tool" cast "$@"; }
for f in BbvflAggregator NaiveAggregator; do
  [ -f "$root/abi/$f.json" ] || { echo "gas-report: abi/$f.json missing; run devnet/gen-abi.sh" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-gas.XXXXXX")
anvil_pid=
cleanup() {
  if [ -n "$anvil_pid" ]; then kill "$anvil_pid" 2>/dev/null || true; wait "$anvil_pid" 2>/dev/null || true; fi
  if [ -n "${GAS_REPORT_KEEP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

if [ -n "$rpc" ]; then
  case $rpc in http://127.0.0.1:*|http://localhost:*) ;; *) echo "gas-report: --rpc must be a loopback URL" >&2; exit 2 ;; esac
  export ETH_RPC_URL=$rpc
else
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$tool" anvil --host 127.0.0.1 --port "$port" --accounts 2 --silent ${hardfork:+--hardfork "$hardfork"} \
    --gas-limit 100000000 >"$tmp/anvil.log" 2>&1 &
  anvil_pid=$!
  export ETH_RPC_URL="http://127.0.0.1:$port"
fi
for _ in $(seq 100); do cast chain-id >/dev/null 2>&1 && break; sleep 0.1; done
cast chain-id >/dev/null || { echo "gas-report: anvil did not start" >&2; cat "$tmp/anvil.log" >&2; exit 1; }
deployer=$(cast rpc eth_accounts | jq -r '.[0]')
anvil_version=$("$tool" anvil --version | head -1)

# client i: fixed 64-byte public key and the address it hashes to, impersonated and funded
client_pk() { echo "0x$(cast keccak "bbvfl-gas-x-$1" | cut -c3-)$(cast keccak "bbvfl-gas-y-$1" | cut -c3-)"; }
client_addr() { cast to-check-sum-address "0x$(cast keccak "$(client_pk "$1")" | cut -c27-)"; }
setup_clients() { # m
  local i a
  for ((i = 0; i < $1; i++)); do
    a=$(client_addr "$i")
    cast rpc anvil_impersonateAccount "$a" >/dev/null
    cast rpc anvil_setBalance "$a" 0x56BC75E2D63100000 >/dev/null
  done
}
send() { # from to sig args... -> prints gasUsed, fails on revert
  local from=$1 to=$2; shift 2
  local out
  out=$(cast send --unlocked --from "$from" --json "$to" "$@") || { echo "gas-report: $* failed" >&2; exit 1; }
  [ "$(jq -r .status <<<"$out")" = "0x1" ] || { echo "gas-report: $* reverted" >&2; exit 1; }
  [ -n "${GAS_REPORT_VERBOSE:-}" ] && echo "tx $(jq -r .transactionHash <<<"$out") gas $(printf '%d' "$(jq -r .gasUsed <<<"$out")")" >&2
  printf '%d\n' "$(jq -r .gasUsed <<<"$out")"
}
values() { # m_index round count levels format(hex|list) -> deterministic values 0..levels
  python3 - "$@" <<'EOF'
import random, sys
i, r, n, lv, fmt = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
g = random.Random(1000003 * i + r)
v = [g.randint(0, lv) for _ in range(n)]
print("0x" + bytes(v).hex() if fmt == "hex" else "[" + ",".join(map(str, v)) + "]")
EOF
}

# bbvfl: one session, prints "first steady" gas per coordinate
run_bbvfl() { # m b p levels k
  local m=$1 b=$2 p=$3 lv=$4 k=$5 n
  n=$((k * b * p))
  local bytecode args out agg i r a active g total first=0 steady=0 steady_rounds=0
  bytecode=$(jq -r .bytecode "$root/abi/BbvflAggregator.json")
  # Config: M, B, P, b, betaMicro, masked, R, K, NE, ER, trainRows, testRows, staleness, hashed,
  # epochs, rate, pool, commit/reveal/active/timeout blocks
  local nb=$(((rounds + 1) * k))
  args=$(cast abi-encode "c((uint8,uint32,uint32,uint8,uint32,bool,uint32,uint32,uint32,uint32,uint32,uint32,uint8,bool,uint32,uint256,uint256,uint64,uint64,uint64,uint64))" \
    "($m,$b,$p,$lv,200000,false,$nb,$k,0,0,$((nb * b)),0,0,false,1,1,$((m * (rounds + 1))),50,50,50,50)")
  out=$(cast send --unlocked --from "$deployer" --json --create "$bytecode${args#0x}")
  agg=$(jq -r .contractAddress <<<"$out")
  setup_clients "$m"
  for ((i = 0; i < m; i++)); do send "$(client_addr "$i")" "$agg" "register(bytes)" "$(client_pk "$i")" >/dev/null; done
  for ((i = 0; i < m; i++)); do
    a=$(client_addr "$i")
    send "$a" "$agg" "commit(bytes32)" "$(cast keccak "$(cast keccak "s$i")${a#0x}")" >/dev/null
  done
  for ((i = 0; i < m; i++)); do send "$(client_addr "$i")" "$agg" "reveal(bytes32)" "$(cast keccak "s$i")" >/dev/null; done
  active=$(cast call "$agg" "active()(address)")
  local grad; grad="0x$(printf '%0*d' $((n * 8)) 0)"
  for ((r = 0; r < rounds; r++)); do
    total=0
    for ((i = 0; i < m; i++)); do
      g=$(send "$(client_addr "$i")" "$agg" "submit(uint64,bytes)" "$r" "$(values "$i" "$r" "$n" "$lv" hex)")
      total=$((total + g))
    done
    [ -n "${GAS_REPORT_VERBOSE:-}" ] && echo "round $r: $total" >&2
    [ "$r" -eq 0 ] && first=$total
    if [ "$r" -ge 4 ]; then steady=$((steady + total)); steady_rounds=$((steady_rounds + 1)); fi
    send "$active" "$agg" "postGradient(uint64,bytes,bytes)" "$r" "$grad" 0x >/dev/null
  done
  [ "$(cast call "$agg" "currentRound()(uint64)" | cut -d' ' -f1)" = "$rounds" ] || { echo "gas-report: session did not advance" >&2; exit 1; }
  python3 -c "import sys; m,n,f,s,k=map(int,sys.argv[1:]); print(f'{f/(m*n):.1f} {s/k/(m*n):.1f} {s//k//m}')" "$m" "$n" "$first" "$steady" "$steady_rounds"
}

# naive: every round is fresh storage; prints "first steady" per coordinate incl. aggregate()
run_naive() { # m b p levels
  local m=$1 lv=$4 n
  n=$(($2 * $3))
  local bytecode args out agg i r total g first=0 steady=0 k=0
  bytecode=$(jq -r .bytecode "$root/abi/NaiveAggregator.json")
  args=$(cast abi-encode "c(uint256,uint256)" "$m" "$n")
  out=$(cast send --unlocked --from "$deployer" --json --create "$bytecode${args#0x}")
  agg=$(jq -r .contractAddress <<<"$out")
  setup_clients "$m"
  for ((i = 0; i < m; i++)); do send "$(client_addr "$i")" "$agg" "register()" >/dev/null; done
  local nr=$((rounds < 4 ? rounds : 4))
  for ((r = 0; r < nr; r++)); do
    total=0
    for ((i = 0; i < m; i++)); do
      g=$(send "$(client_addr "$i")" "$agg" "submit(uint256,uint256[])" "$r" "$(values "$i" "$r" "$n" "$lv" list)")
      total=$((total + g))
    done
    g=$(send "$deployer" "$agg" "aggregate(uint256)" "$r")
    total=$((total + g))
    if [ "$r" -eq 0 ]; then first=$total; else steady=$((steady + total)); k=$((k + 1)); fi
  done
  python3 -c "import sys; m,n,f,s,k=map(int,sys.argv[1:]); print(f'{f/(m*n):.1f} {s/k/(m*n):.1f} {s//k//m}')" "$m" "$n" "$first" "$steady" "$k"
}

echo "# Aggregation gas per coordinate"
echo
echo "Measured $(date -u +%Y-%m-%d) by devnet/gas-report.sh on $anvil_version (hardfork: ${hardfork:-anvil default}), $rounds rounds per session."
echo "Gas per coordinate = gasUsed of a round's M submit transactions (whole transaction: 21000 base +"
echo "calldata + execution) / (M x K x B x P), K = minibatches per round (window). Steady state = mean over rounds >= 4, when each of the 4 ring"
echo "slots has been written once; round 0 writes fresh storage. Budget (DESIGN.md): <= 400 steady for"
echo "M=5, B=10, P=16, b=16. The naive baseline adds its aggregate() call to the round's total."
echo
echo "| contract | M | B | P | b | K | lane bits | gas/coordinate, round 0 | gas/coordinate, steady | gas per submit tx, steady |"
echo "|---|---|---|---|---|---|---|---|---|---|"
rows=("5 10 16 16 1" "5 10 16 16 5" "5 10 16 16 45" "10 10 16 16 1" "5 100 64 16 1" "5 10 16 64 1" "5 100 64 64 1")
[ "$quick" -eq 1 ] && rows=("5 10 16 16 1")
for row in "${rows[@]}"; do
  read -r m b p lv k <<<"$row"
  bits=8; [ $((m * lv)) -ge 256 ] && bits=16
  read -r f s per <<<"$(run_bbvfl "$m" "$b" "$p" "$lv" "$k")"
  echo "| BbvflAggregator | $m | $b | $p | $lv | $k | $bits | $f | **$s** | $per |"
done
read -r f s per <<<"$(run_naive 5 10 16 16)"
echo "| NaiveAggregator (baseline, submits + aggregate) | 5 | 10 | 16 | 16 | 1 | 256 | $f | **$s** | $per |"
