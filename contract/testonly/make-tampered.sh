#!/usr/bin/env bash
# Test-only: builds deliberately wrong aggregators for the audit tests, each a copy of the
# product contract (contract/src/BbvflAggregator.sol and the BbvflBase.sol it inherits, or for the
# hashed variants BbvflHashAggregator.sol) with ONE change, compiled with the pinned solc-js (same
# settings as foundry.toml) into OUTDIR/<variant>/BbvflAggregator.json
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
#   hashed    (BbvflHashAggregator.json) the hashed-mode contract unchanged, when the source has it
#   hashsum   (BbvflHashAggregator.json) aggregate() of round 1 emits lane 0 plus one
#   stale     (BbvflHashAggregator.json) submit() lets a client run one TRAIN round further ahead
#             than the staleness allows
# Usage: contract/testonly/make-tampered.sh OUTDIR
# Each substitution must match exactly once; when the product source changes shape the script
# fails and says which one no longer applies.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: make-tampered.sh OUTDIR}
mkdir -p "$out"
src=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-tamper.XXXXXX")
trap 'rm -rf "$src"' EXIT

variant() { # name perl-substitution [file...]: the substitution must match exactly once in the files
  local name=$1 expr=$2 total=0 f n
  shift 2
  local files=("$@")
  [ ${#files[@]} -gt 0 ] || files=(BbvflAggregator.sol BbvflBase.sol) # the lane product and what it inherits
  mkdir -p "$src/$name"
  cp "$root"/contract/src/*.sol "$src/$name/"
  for f in "${files[@]}"; do
    [ -f "$src/$name/$f" ] || continue
    n=$(perl -0pi -e "\$n = ($expr); END { print STDERR (\$n || 0) }" "$src/$name/$f" 2>&1 >/dev/null)
    total=$((total + n))
  done
  [ "$total" = 1 ] ||
    { echo "make-tampered: the change for '$name' matches $total times in ${files[*]} (must be once)" >&2; exit 1; }
}
variant sum \
  's/emit RoundCompleted\(r, h\.count, _readSum\(r\)\);/bytes memory s_ = _readSum(r);\n        if (r == 1) s_[0] = bytes1(uint8(s_[0]) + 1);\n        emit RoundCompleted(r, h.count, s_);/g'
variant count \
  's/emit RoundCompleted\(r, h\.count, _readSum\(r\)\);/emit RoundCompleted(r, r == 2 ? h.count - 1 : h.count, _readSum(r));/g'
variant pay \
  's/uint256 amount = \(acc - rew\) \* RATE;/uint256 amount = (acc - rew) * RATE - (i == 1 ? 1 : 0);/g'
variant stranger \
  's/if \(!\(w & F_REG != 0\)\) revert NotRegistered\(\);\n(\s*)if \(!\(w & F_EXCL == 0\)\) revert ClientExcluded\(\);/if (!(w & F_EXCL == 0)) revert ClientExcluded();/g'

variant elect \
  's/address act = _participants\[uint256\(s\) % np\];/address act = _participants[(uint256(s) + 1) % np];/g'
variant register \
  's/emit Registered\(msg\.sender, uint8\(index\), pubkey\);/emit Registered(msg.sender, uint8(index), index == 1 ? pubkey[:32] : pubkey);/g'
variant metrics \
  's/emit MetricsPosted\(epoch, msg\.sender, aurocMicro,/emit MetricsPosted(epoch, msg.sender, epoch == 1 ? aurocMicro + 1000001 : aurocMicro,/g'
variant params \
  's/p\.commitBlocks = COMMIT_BLOCKS;/p.commitBlocks = COMMIT_BLOCKS + 1;/g'
variant gradient \
  's/function postGradient\(uint64 round, bytes calldata gradient, bytes calldata fusionParams\) external \{\n\s*if \(!\(msg\.sender == _active\)\) _revert\(NotActive\.selector\);/function postGradient(uint64 round, bytes calldata gradient, bytes calldata fusionParams) external {/g'

# the hashed mode (BbvflHashAggregator), when the source has it: the product contract as is (for
# tests that deploy it before its artifact is in abi/), and one with a mis-added lane
if [ -f "$root/contract/src/BbvflHashAggregator.sol" ]; then
  variant hashed 's/contract BbvflHashAggregator is BbvflBase \{/contract BbvflHashAggregator is BbvflBase {/g' \
    BbvflHashAggregator.sol
  echo BbvflHashAggregator >"$src/hashed/TARGET"
  variant hashsum \
    's/emit RoundCompleted\(round, h\.n, sum\);/if (round == 1) sum[0] = bytes1(uint8(sum[0]) + 1);\n        emit RoundCompleted(round, h.n, sum);/g' \
    BbvflHashAggregator.sol
  echo BbvflHashAggregator >"$src/hashsum/TARGET"
  variant stale \
    's/_trainBefore\(r\) - _trainBefore\(head\) <= STALENESS;/_trainBefore(r) - _trainBefore(head) <= uint256(STALENESS) + 1;/g' \
    BbvflHashAggregator.sol
  echo BbvflHashAggregator >"$src/stale/TARGET"
fi

node - "$root" "$src" "$out" <<'JS'
const [root, src, out] = process.argv.slice(2);
const fs = require('fs'), path = require('path');
const solc = require(path.join(root, 'devnet/node_modules/solc'));
for (const v of fs.readdirSync(src)) {
const dir = path.join(src, v);
// the lane product unless the variant tampered with the hashed one
const main = fs.existsSync(path.join(dir, 'TARGET')) ? fs.readFileSync(path.join(dir, 'TARGET'), 'utf8').trim()
                                                     : 'BbvflAggregator';
const sources = { [main + '.sol']: { content: fs.readFileSync(path.join(dir, main + '.sol'), 'utf8') } };
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
const c = res.contracts[main + '.sol'][main];
const doc = { contractName: main, tampered: v, abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
fs.mkdirSync(path.join(out, v), { recursive: true });
fs.writeFileSync(path.join(out, v, main + '.json.tmp'), JSON.stringify(doc));
fs.renameSync(path.join(out, v, main + '.json.tmp'), path.join(out, v, main + '.json'));
}
JS
