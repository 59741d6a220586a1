#!/usr/bin/env bash
# Test-only: builds deliberately wrong aggregators for the audit tests, each a copy of the
# product contract (contract/src/BbvflAggregator.sol) with ONE change, compiled with the pinned
# solc-js (same settings as foundry.toml) into OUTDIR/<variant>/BbvflAggregator.json
# ({contractName, abi, bytecode}: point BBVFL_ABI_DIR at OUTDIR/<variant> and the ordinary deploy
# path, e.g. `bbvfl demo`, deploys the tampered contract). Nothing here touches contract/src or abi/.
#   sum       RoundCompleted of round 1 carries lane 0 plus one (a mis-added lane)
#   pay       payRewards pays the client with index 1 one token unit less
#   stranger  submit() does not check that the sender registered
#   count     RoundCompleted of round 2 states one submission fewer than the sum covers
#   elect     the initial election makes participants[(S + 1) mod n] active, not participants[S mod n]
#   register  Registered of the client with index 1 carries only half its public key
#   metrics   MetricsPosted of epoch 1 carries an AUROC above 1
#   params    params() reports one more commit block than the deployment asked for
#   gradient  postGradient() does not check that the sender is the active client
# Usage: contract/testonly/make-tampered.sh OUTDIR
# Each substitution must match exactly once; when the product source changes shape the script
# fails and says which one no longer applies.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: make-tampered.sh OUTDIR}
mkdir -p "$out"
src=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-tamper.XXXXXX")
trap 'rm -rf "$src"' EXIT

variant() { # name perl-substitution
  local name=$1 expr=$2
  mkdir -p "$src/$name"
  cp "$root/contract/src/BbvflRewardToken.sol" "$src/$name/"
  perl -0pe "\$n = ($expr); END { exit(\$n == 1 ? 0 : 3) }" \
    "$root/contract/src/BbvflAggregator.sol" >"$src/$name/BbvflAggregator.sol" ||
    { echo "make-tampered: the change for '$name' no longer applies to BbvflAggregator.sol" >&2; exit 1; }
}
variant sum \
  's/emit RoundCompleted\(r, h\.count, _readSum\(r\)\);/bytes memory s_ = _readSum(r);\n        if (r == 1) s_[0] = bytes1(uint8(s_[0]) + 1);\n        emit RoundCompleted(r, h.count, s_);/g'
variant count \
  's/emit RoundCompleted\(r, h\.count, _readSum\(r\)\);/emit RoundCompleted(r, r == 2 ? h.count - 1 : h.count, _readSum(r));/g'
variant pay \
  's/uint256 amount = \(acc - rew\) \* RATE;/uint256 amount = (acc - rew) * RATE - (i == 1 ? 1 : 0);/g'
variant stranger \
  's/require\(w & F_REG != 0, "not registered"\);\n(\s*)require\(w & F_EXCL == 0, "excluded"\);/require(w & F_EXCL == 0, "excluded");/g'

variant elect \
  's/address act = _participants\[uint256\(s\) % np\];/address act = _participants[(uint256(s) + 1) % np];/g'
variant register \
  's/emit Registered\(msg\.sender, uint8\(index\), pubkey\);/emit Registered(msg.sender, uint8(index), index == 1 ? pubkey[:32] : pubkey);/g'
variant metrics \
  's/emit MetricsPosted\(epoch, msg\.sender, aurocMicro,/emit MetricsPosted(epoch, msg.sender, epoch == 1 ? aurocMicro + 1000001 : aurocMicro,/g'
variant params \
  's/p\.commitBlocks = COMMIT_BLOCKS;/p.commitBlocks = COMMIT_BLOCKS + 1;/g'
variant gradient \
  's/function postGradient\(uint64 round, bytes calldata gradient, bytes calldata fusionParams\) external \{\n\s*require\(msg\.sender == _active, "not active"\);/function postGradient(uint64 round, bytes calldata gradient, bytes calldata fusionParams) external {/g'

node - "$root" "$src" "$out" <<'JS'
const [root, src, out] = process.argv.slice(2);
const fs = require('fs'), path = require('path');
const solc = require(path.join(root, 'devnet/node_modules/solc'));
for (const v of ['sum', 'pay', 'stranger', 'count', 'elect', 'register', 'metrics', 'params', 'gradient']) {
const dir = path.join(src, v);
const sources = {};
for (const n of ['BbvflAggregator.sol', 'BbvflRewardToken.sol'])
  sources[n] = { content: fs.readFileSync(path.join(dir, n), 'utf8') };
const input = {
  language: 'Solidity', sources,
  settings: {
    optimizer: { enabled: true, runs: 200 }, evmVersion: 'prague',
    metadata: { bytecodeHash: 'none', appendCBOR: false },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
function findImports(p) {
  const cands = [path.join(dir, p), path.join(root, 'devnet/node_modules', p)];
  for (const c of cands) if (fs.existsSync(c)) return { contents: fs.readFileSync(c, 'utf8') };
  return { error: 'not found: ' + p };
}
const res = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errs = (res.errors || []).filter(e => e.severity === 'error');
if (errs.length) { for (const e of errs) console.error(e.formattedMessage); process.exit(1); }
const c = res.contracts['BbvflAggregator.sol']['BbvflAggregator'];
const doc = { contractName: 'BbvflAggregator', tampered: v, abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
fs.mkdirSync(path.join(out, v), { recursive: true });
fs.writeFileSync(path.join(out, v, 'BbvflAggregator.json.tmp'), JSON.stringify(doc));
fs.renameSync(path.join(out, v, 'BbvflAggregator.json.tmp'), path.join(out, v, 'BbvflAggregator.json'));
}
JS
