#!/usr/bin/env bash
# A participant that submits through an EIP-7702 delegate. On its own anvil with Prague rules
# (`bbvfl devnet up --hardfork prague`), a hashed session (3 clients, window 5, staleness 1):
# client 0's key delegates its account to contract/testonly/SelfExecutor.sol with a type-4
# transaction (`cast send --auth`), and client 0 runs with --submit-via-self, so each of its
# submissions is a call to its own address, execute(aggregator, submit calldata): no submit()
# calldata to the aggregator exists for it. Checked:
#  - a client with --submit-via-self whose account has no code refuses to start, naming the cause;
#  - the account's code is the delegation designator 0xef0100 || delegate;
#  - the session finishes (every client exits 0), every one of client 0's SubmittedPayload logs
#    comes from a transaction addressed to its own account, and `bbvfl audit` passes (the audit
#    reads each payload from its log).
# Needs BBVFL_BIN and BBVFL_CAST; the devnet it starts is stopped by `bbvfl devnet down`.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_BIN:?}" "${BBVFL_CAST:?}" "${BBVFL_SOURCE_DIR:?}"
session_test submit-7702
extra_cleanup() { [ -e "$work/devnet/devnet.json" ] && "$BBVFL_BIN" devnet down --dir "$work/devnet" >/dev/null 2>&1 || true; }

"$BBVFL_BIN" devnet up --dir "$work/devnet" --hardfork prague --json >"$work/devnet.json" || fail "devnet up --hardfork prague"
rpc_url=$(json_get "$work/devnet.json" rpc_url)

# the delegate's bytecode, compiled with the pinned solc-js
node - "$BBVFL_SOURCE_DIR" >"$work/delegate.hex" <<'JS' || fail "compiling SelfExecutor.sol"
const fs = require('fs'), path = require('path');
const root = process.argv[2];
const solc = require(path.join(root, 'devnet/node_modules/solc'));
const src = fs.readFileSync(path.join(root, 'contract/testonly/SelfExecutor.sol'), 'utf8');
const input = { language: 'Solidity', sources: { 'SelfExecutor.sol': { content: src } },
  settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'prague',
              outputSelection: { '*': { '*': ['evm.bytecode.object'] } } } };
const res = JSON.parse(solc.compile(JSON.stringify(input)));
const errs = (res.errors || []).filter(e => e.severity === 'error');
if (errs.length) { for (const e of errs) console.error(e.formattedMessage); process.exit(1); }
process.stdout.write('0x' + res.contracts['SelfExecutor.sol'].SelfExecutor.evm.bytecode.object);
JS

session_deploy --clients 3 --epochs 2 --seed 3 --aggregation hashed --window 5 --staleness 1
session_keys 3
"$BBVFL_BIN" key new --out "$work/deployer.key" --json >"$work/deployer.json" || fail "key new"
fund "$(json_get "$work/deployer.json" address)"
"$BBVFL_CAST" send --rpc-url "$rpc_url" --private-key "$(cat "$work/deployer.key")" --create "$(cat "$work/delegate.hex")" \
  --json >"$work/create.json" || fail "deploying SelfExecutor"
delegate=$(json_get "$work/create.json" contractAddress)
cols=("0-9" "10-19" "20-29")
client_flags=(--labels --seed 3 --round-timeout 60)

# without the delegation, --submit-via-self refuses to start
set +e
"$BBVFL_BIN" client --session "$run/session.json" --key-file "$work/k0.key" --columns 0-9 --state-dir "$work/refused" \
  --submit-via-self >"$work/refused.out" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] && grep -q "has no code" "$work/refused.out" || { cat "$work/refused.out" >&2; fail "no refusal without a delegation"; }

# the delegation: a type-4 transaction from client 0's key (to another account: its own would now
# run the delegate without calldata), authorising SelfExecutor's code
"$BBVFL_CAST" send --rpc-url "$rpc_url" --private-key "$(cat "$work/k0.key")" --auth "$delegate" \
  "$(json_get "$work/deployer.json" address)" \
  --json >"$work/auth.json" || fail "cast send --auth"
code=$(rpc eth_getCode "[\"${addrs[0]}\",\"latest\"]")
want="0xef0100${delegate#0x}"
[ "${code,,}" = "${want,,}" ] || fail "client 0's code is $code, not the delegation $want"

client_start 0 --submit-via-self
client_start 1
client_start 2
wait_clients

python3 - "$rpc_url" "$contract" "${addrs[0]}" <<'PY' || fail "client 0's submissions"
import sys
from bbvfl_chain import Chain, addr
c = Chain(sys.argv[1], sys.argv[2])
me = sys.argv[3].lower()
pp = c.params()
mine = [l for l in c.logs("SubmittedPayload(uint64,address,bytes)") if addr(l["topics"][2]) == me]
assert len(mine) == pp["total"], (len(mine), pp["total"])
for l in mine:
    tx = c.rpc("eth_getTransactionByHash", [l["transactionHash"]])
    assert tx["to"].lower() == me and tx["from"].lower() == me, tx
print("client 0: %d submissions, each a call to its own delegated account" % len(mine))
PY
audit_passes
echo ok
