#!/usr/bin/env bash
# Gas per coordinate of on-chain aggregation, measured from transaction receipts on a fresh anvil.
#
#   devnet/gas-report.sh [--rounds N] [--quick] [--rpc URL] [--hardfork NAME]   (Markdown report)
#   --rounds N  rounds per lane-mode session (default 7, >= 5); --quick  the lane and hashed K=5
#               rows only (no packed rows, no baseline);
#   --rpc URL   use a running loopback anvil instead of starting one;
#   --hardfork NAME  start anvil with --hardfork NAME (default: anvil's default, Prague/Osaka rules).
#   --hashed-rounds N  rounds per hashed-mode session (default 10, >= 9: the ring has 8 slots).
#   --hashed-only  the hashed-mode rows only (after a change to BbvflHashAggregator alone: the lane
#               rows and the naive baseline do not depend on it).
#   --packed-only  the packed rows only (BbvflPackedAggregator: aggregate() with the payloads;
#               BbvflOptimisticAggregator: postSum(round, keccak256(sum)) by a participant), M=5, B=10,
#               P=16, b=16, K=5 and 45; --quick with it: K=45 only.
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
# its figure counts its M submissions plus its aggregate() call. The hashed mode
# (BbvflHashAggregator) is driven the same way with an aggregate(round, payloads) transaction per
# round (sent by the deployer: anyone may); its figure counts the M submissions plus that call.
# anvil is stopped by its pid on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=7
quick=0
hashed_only=0
packed_only=0
rpc=
hardfork=
hashed_rounds=10
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --hashed-only) hashed_only=1; shift ;;
    --packed-only) packed_only=1; shift ;;
    --rpc) rpc=$2; shift 2 ;;
    --hardfork) hardfork=$2; shift 2 ;;
    --hashed-rounds) hashed_rounds=$2; shift 2 ;;
    -h|--help) sed -n 2,30p "$0"; exit 0 ;;
    *) echo "gas-report: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$rounds" -ge 5 ] || { echo "gas-report: --rounds must be >= 5 (4 ring slots + 1 steady round)" >&2; exit 2; }
[ "$hashed_rounds" -ge 9 ] || { echo "gas-report: --hashed-rounds must be >= 9 (8 ring slots + 1 steady round)" >&2; exit 2; }
tool="$root/devnet/tool.sh"
cast() { "$tool" cast "$@"; }
for f in BbvflAggregator BbvflHashAggregator NaiveAggregator BbvflPackedAggregator BbvflOptimisticAggregator; do
  [ -f "$root/abi/$f.json" ] || { echo "gas-report: abi/$f.json missing; run devnet/gen-abi.sh" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-gas.XXXXXX")
anvil_pid=
cleanup() {
  if [ -n "$anvil_pid" ]; then kill "$anvil_pid" 2>/dev/null || true; wait "$anvil_pid" 2>/dev/null || true; fi
  if [ -n "${GAS_REPORT_KEEP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

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
chain=$(cast chain-id)
# The election commitment of secret $1 by client $2 for the aggregator $3 on this chain (BbvflBase.commit)
commitment() {
  cast keccak "$(cast abi-encode --packed "f(bytes32,address,address,uint256)" "$1" "$2" "$3" "$chain")"
}
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
if fmt == "hex16":  # masked mode: uniform 16-bit lanes, big-endian
    print("0x" + b"".join(g.randrange(65536).to_bytes(2, "big") for _ in range(n)).hex())
    sys.exit(0)
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
  # epochs, rate, pool, commit/reveal/active/timeout blocks, curvEvery, curvRows (no curvature rounds);
  # no member list (open registration)
  local nb=$(((rounds + 1) * k))
  args=$(cast abi-encode "c((uint8,uint32,uint32,uint8,uint32,bool,uint32,uint32,uint32,uint32,uint32,uint32,uint8,bool,uint32,uint256,uint256,uint64,uint64,uint64,uint64,uint32,uint32),address[])" \
    "($m,$b,$p,$lv,200000,false,$nb,$k,0,0,$((nb * b)),0,0,false,1,1,$((m * (rounds + 1))),50,50,50,50,0,0)" "[]")
  out=$(cast send --unlocked --from "$deployer" --json --create "$bytecode${args#0x}")
  agg=$(jq -r .contractAddress <<<"$out")
  setup_clients "$m"
  for ((i = 0; i < m; i++)); do send "$(client_addr "$i")" "$agg" "register(bytes)" "$(client_pk "$i")" >/dev/null; done
  for ((i = 0; i < m; i++)); do
    a=$(client_addr "$i")
    send "$a" "$agg" "commit(bytes32)" "$(commitment "$(cast keccak "s$i")" "$a" "$agg")" >/dev/null
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

# hashed mode (BbvflHashAggregator): one session, M submissions then one aggregate() (sent by the
# deployer: anyone may) and the gradient per round; prints "first steady submit-per-tx aggregate"
# with the per-coordinate figures counting the M submissions plus the aggregate() transaction.
# Steady = rounds >= 8 (every slot of the 8-slot ring written once).
run_hashed() { # m b p levels k masked(true|false)
  local m=$1 b=$2 p=$3 lv=$4 k=$5 masked=$6 n
  n=$((k * b * p))
  local hr=$hashed_rounds
  local bytecode args out agg i r a active g total sub first=0 steady=0 steady_sub=0 steady_agg=0 steady_rounds=0
  bytecode=$(jq -r .bytecode "$root/abi/BbvflHashAggregator.json")
  local nb=$(((hr + 1) * k)) fmt=hex
  [ "$masked" = true ] && fmt=hex16
  args=$(cast abi-encode "c((uint8,uint32,uint32,uint8,uint32,bool,uint32,uint32,uint32,uint32,uint32,uint32,uint8,bool,uint32,uint256,uint256,uint64,uint64,uint64,uint64,uint32,uint32),address[])" \
    "($m,$b,$p,$lv,200000,$masked,$nb,$k,0,0,$((nb * b)),0,0,true,1,1,$((m * (hr + 1))),50,50,50,50,0,0)" "[]")
  out=$(cast send --unlocked --from "$deployer" --json --create "$bytecode${args#0x}")
  agg=$(jq -r .contractAddress <<<"$out")
  setup_clients "$m"
  for ((i = 0; i < m; i++)); do send "$(client_addr "$i")" "$agg" "register(bytes)" "$(client_pk "$i")" >/dev/null; done
  for ((i = 0; i < m; i++)); do
    a=$(client_addr "$i")
    send "$a" "$agg" "commit(bytes32)" "$(commitment "$(cast keccak "s$i")" "$a" "$agg")" >/dev/null
  done
  for ((i = 0; i < m; i++)); do send "$(client_addr "$i")" "$agg" "reveal(bytes32)" "$(cast keccak "s$i")" >/dev/null; done
  active=$(cast call "$agg" "active()(address)")
  local grad; grad="0x$(printf '%0*d' $((n * 8)) 0)"
  local q list
  for ((r = 0; r < hr; r++)); do
    sub=0
    list=
    for ((i = 0; i < m; i++)); do
      q=$(values "$i" "$r" "$n" "$lv" "$fmt")
      g=$(send "$(client_addr "$i")" "$agg" "submit(uint64,bytes)" "$r" "$q")
      sub=$((sub + g))
      list="$list${list:+,}$q"
    done
    g=$(send "$deployer" "$agg" "aggregate(uint64,bytes[])" "$r" "[$list]")
    total=$((sub + g))
    [ -n "${GAS_REPORT_VERBOSE:-}" ] && echo "hashed round $r: submits $sub aggregate $g" >&2
    [ "$r" -eq 0 ] && first=$total
    if [ "$r" -ge 8 ]; then
      steady=$((steady + total)); steady_sub=$((steady_sub + sub)); steady_agg=$((steady_agg + g))
      steady_rounds=$((steady_rounds + 1))
    fi
    send "$active" "$agg" "postGradient(uint64,bytes,bytes)" "$r" "$grad" 0x >/dev/null
  done
  [ "$(cast call "$agg" "currentRound()(uint64)" | cut -d' ' -f1)" = "$hr" ] || { echo "gas-report: hashed session did not advance" >&2; exit 1; }
  python3 -c "import sys; m,n,f,s,ss,sa,k=map(int,sys.argv[1:]); print(f'{f/(m*n):.1f} {s/k/(m*n):.1f} {ss//k//m} {sa//k}')" \
    "$m" "$n" "$first" "$steady" "$steady_sub" "$steady_agg" "$steady_rounds"
}

# packed values (BbvflPacked*): prints the m clients' payloads of round r (one line each), then the
# packed sum: values as values() draws them, bit-sliced in blocks of 256 (see the contract)
packed() { # m round count levels
  python3 - "$@" <<'EOF'
import random, sys
m, r, n, lv = map(int, sys.argv[1:])
def bits(x):
    k = 0
    while (1 << k) <= x: k += 1
    return k
def pack(v, nb):
    out = bytearray()
    for j in range(0, len(v), 256):
        blk = v[j:j + 256]
        pb = (len(blk) + 7) // 8
        for k in range(nb):
            plane = bytearray(pb)
            for t, x in enumerate(blk):
                if (x >> k) & 1: plane[t >> 3] |= 0x80 >> (t & 7)
            out += plane
    return bytes(out)
tot = [0] * n
for i in range(m):
    g = random.Random(1000003 * i + r)
    v = [g.randint(0, lv) for _ in range(n)]
    tot = [a + b for a, b in zip(tot, v)]
    print("0x" + pack(v, bits(lv)).hex())
print("0x" + pack(tot, bits(m * lv)).hex())
EOF
}

# packed modes: one session; mode aggregate (BbvflPackedAggregator, the deployer sends
# aggregate(round, payloads)) or optimistic (BbvflOptimisticAggregator, client 0 sends
# postSum(round, keccak256(sum))); prints "first steady submit-per-tx aggregate-or-postSum" as run_hashed.
run_packed() { # m b p levels k mode
  local m=$1 b=$2 p=$3 lv=$4 k=$5 mode=$6 n
  n=$((k * b * p))
  local hr=$hashed_rounds
  local bytecode args out agg i r a active g total sub first=0 steady=0 steady_sub=0 steady_agg=0 steady_rounds=0
  local name=BbvflPackedAggregator
  [ "$mode" = optimistic ] && name=BbvflOptimisticAggregator
  bytecode=$(jq -r .bytecode "$root/abi/$name.json")
  local nb=$(((hr + 1) * k))
  args=$(cast abi-encode "c((uint8,uint32,uint32,uint8,uint32,bool,uint32,uint32,uint32,uint32,uint32,uint32,uint8,bool,uint32,uint256,uint256,uint64,uint64,uint64,uint64,uint32,uint32),address[])" \
    "($m,$b,$p,$lv,200000,false,$nb,$k,0,0,$((nb * b)),0,0,true,1,1,$((m * (hr + 1))),50,50,50,50,0,0)" "[]")
  out=$(cast send --unlocked --from "$deployer" --json --create "$bytecode${args#0x}")
  agg=$(jq -r .contractAddress <<<"$out")
  setup_clients "$m"
  for ((i = 0; i < m; i++)); do send "$(client_addr "$i")" "$agg" "register(bytes)" "$(client_pk "$i")" >/dev/null; done
  for ((i = 0; i < m; i++)); do
    a=$(client_addr "$i")
    send "$a" "$agg" "commit(bytes32)" "$(commitment "$(cast keccak "s$i")" "$a" "$agg")" >/dev/null
  done
  for ((i = 0; i < m; i++)); do send "$(client_addr "$i")" "$agg" "reveal(bytes32)" "$(cast keccak "s$i")" >/dev/null; done
  active=$(cast call "$agg" "active()(address)")
  local grad; grad="0x$(printf '%0*d' $((n * 8)) 0)"
  local list qs
  for ((r = 0; r < hr; r++)); do
    sub=0
    list=
    mapfile -t qs < <(packed "$m" "$r" "$n" "$lv")
    for ((i = 0; i < m; i++)); do
      g=$(send "$(client_addr "$i")" "$agg" "submit(uint64,bytes)" "$r" "${qs[$i]}")
      sub=$((sub + g))
      list="$list${list:+,}${qs[$i]}"
    done
    if [ "$mode" = optimistic ]; then
      g=$(send "$(client_addr 0)" "$agg" "postSum(uint64,bytes32)" "$r" "$(cast keccak "${qs[$m]}")")
    else
      g=$(send "$deployer" "$agg" "aggregate(uint64,bytes[])" "$r" "[$list]")
    fi
    total=$((sub + g))
    [ -n "${GAS_REPORT_VERBOSE:-}" ] && echo "$mode round $r: submits $sub aggregate $g" >&2
    [ "$r" -eq 0 ] && first=$total
    if [ "$r" -ge 8 ]; then
      steady=$((steady + total)); steady_sub=$((steady_sub + sub)); steady_agg=$((steady_agg + g))
      steady_rounds=$((steady_rounds + 1))
    fi
    send "$active" "$agg" "postGradient(uint64,bytes,bytes)" "$r" "$grad" 0x >/dev/null
  done
  [ "$(cast call "$agg" "currentRound()(uint64)" | cut -d' ' -f1)" = "$hr" ] || { echo "gas-report: $mode session did not advance" >&2; exit 1; }
  python3 -c "import sys; m,n,f,s,ss,sa,k=map(int,sys.argv[1:]); print(f'{f/(m*n):.1f} {s/k/(m*n):.1f} {ss//k//m} {sa//k}')" \
    "$m" "$n" "$first" "$steady" "$steady_sub" "$steady_agg" "$steady_rounds"
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

echo "## Gas per coordinate, hardfork: ${hardfork:-anvil default (Prague/Osaka rules, EIP-7623 calldata floor)}"
echo
echo "Measured $(date -u +%Y-%m-%d) by devnet/gas-report.sh on $anvil_version; lane mode $rounds rounds per session (steady ="
echo "rounds >= 4), hashed mode $hashed_rounds rounds (steady = rounds >= 8). Gas per coordinate = gasUsed of a round's M"
echo "submit transactions, plus its aggregate() transaction in the hashed mode (whole transactions: 21000 base + calldata"
echo "+ execution, or the EIP-7623 floor where it applies) / (M x K x B x P), K = minibatches per round (window)."
echo
echo "| contract | values | M | B | P | b | K | lane bits | gas/coord, round 0 | gas/coord, steady | submit tx, steady | aggregate tx, steady |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
rows=("5 10 16 16 1" "5 10 16 16 5" "5 10 16 16 45" "10 10 16 16 1" "5 100 64 16 1" "5 10 16 64 1" "5 100 64 64 1")
hrows=("5 10 16 16 1 false" "5 10 16 16 5 false" "5 10 16 16 45 false" "10 10 16 16 5 false" "5 10 16 64 5 false" "5 10 16 16 5 true")
prows=("5 10 16 16 5 aggregate" "5 10 16 16 45 aggregate" "5 10 16 16 5 optimistic" "5 10 16 16 45 optimistic")
if [ "$quick" -eq 1 ]; then rows=("5 10 16 16 5"); hrows=("5 10 16 16 5 false"); prows=(); fi
if [ "$hashed_only" -eq 1 ]; then rows=(); prows=(); fi
if [ "$packed_only" -eq 1 ]; then
  rows=(); hrows=()
  [ "$quick" -eq 1 ] && prows=("5 10 16 16 45 aggregate" "5 10 16 16 45 optimistic")
fi
for row in ${rows[@]+"${rows[@]}"}; do
  read -r m b p lv k <<<"$row"
  bits=8; [ $((m * lv)) -ge 256 ] && bits=16
  read -r f s per <<<"$(run_bbvfl "$m" "$b" "$p" "$lv" "$k")"
  echo "| BbvflAggregator (lanes) | plain | $m | $b | $p | $lv | $k | $bits | $f | **$s** | $per | - |"
done
for row in ${hrows[@]+"${hrows[@]}"}; do
  read -r m b p lv k masked <<<"$row"
  bits=8; [ $((m * lv)) -ge 256 ] || [ "$masked" = true ] && bits=16
  read -r f s per ag <<<"$(run_hashed "$m" "$b" "$p" "$lv" "$k" "$masked")"
  vals=plain; [ "$masked" = true ] && vals=masked
  echo "| BbvflHashAggregator (hashed) | $vals | $m | $b | $p | $lv | $k | $bits | $f | **$s** | $per | $ag |"
done
for row in ${prows[@]+"${prows[@]}"}; do
  read -r m b p lv k mode <<<"$row"
  read -r f s per ag <<<"$(run_packed "$m" "$b" "$p" "$lv" "$k" "$mode")"
  if [ "$mode" = optimistic ]; then c="BbvflOptimisticAggregator (optimistic, postSum)"; else c="BbvflPackedAggregator (hashed, packed)"; fi
  echo "| $c | plain | $m | $b | $p | $lv | $k | 5 | $f | **$s** | $per | $ag |"
done
if [ "$quick" -eq 0 ] && [ "$hashed_only" -eq 0 ] && [ "$packed_only" -eq 0 ]; then
  read -r f s per <<<"$(run_naive 5 10 16 16)"
  echo "| NaiveAggregator (baseline, submits + aggregate) | plain | 5 | 10 | 16 | 16 | 1 | 256 | $f | **$s** | $per | - |"
fi
