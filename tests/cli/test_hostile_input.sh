#!/usr/bin/env bash
# Hostile input through the command line: malformed CSV files, bad flags of every subcommand,
# bad key files, URLs that are not JSON-RPC URLs, unwritable or full output folders. Each case
# must end quickly with a non-zero exit status below 128 (no signal, no sanitizer abort), one
# clear error line on stderr that matches what was wrong, and (key files) never the secret.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/skip.sh"
: "${BBVFL_BIN:?}"
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
tmp=$(mktemp -d)
cleanup() { umount "$tmp/mnt" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
cd "$tmp"
ncase=0
# A throwaway key (never used for anything): no output of any case below may contain it.
secret=4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318

# bad EXPECTED_REGEX CMD...: CMD must fail cleanly with an error matching EXPECTED_REGEX.
bad() {
  local want=$1; shift
  local st=0
  timeout 60 "$BBVFL_BIN" "$@" >out.txt 2>err.txt </dev/null || st=$?
  local e; e=$(cat err.txt)
  [ "$st" -ne 0 ] || fail "accepted: bbvfl $* (stdout: $(head -c 300 out.txt))"
  [ "$st" -ne 124 ] || fail "hung (killed after 60 s): bbvfl $*"
  [ "$st" -lt 128 ] || fail "crashed with status $st: bbvfl $*: $e"
  grep -qiE "sanitizer|runtime error|leak" err.txt && fail "sanitizer report: bbvfl $*: $e"
  [ -n "$e" ] || fail "no error message: bbvfl $*"
  [ "$(wc -l <err.txt)" -le 2 ] || fail "error is not short: bbvfl $*: $e"
  grep -qE -- "$want" err.txt || fail "bbvfl $*: expected /$want/, got: $e"
  if grep -qi "${secret:20:24}" err.txt out.txt; then fail "key material in the output of: bbvfl $*"; fi
  ncase=$((ncase + 1))
}

# ------------------------------------------------------------------ malformed CSV
T=(train --offchain --epochs 1 --quiet --out "$tmp/run")
printf 'a,b,y\n1,2,0\n3,x,1\n' >badnum.csv
printf 'a,b,y\n1,2,0\n3,1\n' >ragged.csv
printf 'a,b,y\n1,2,0\n3,nan,1\n' >nan.csv
printf 'a,b,y\n1,2,0\n3,-inf,1\n' >inf.csv
printf 'a,b,y\n1,2,0,5\n' >wide.csv
printf 'a,b,y\n1,,0\n' >emptycell.csv
printf 'a,b,y\n1,1e999,0\n' >overflow.csv
: >empty.csv
printf 'a,b,y\n' >header.csv
printf '\x00\xff\x13garbage\n\x01\x02' >binary.csv
head -c 4096 /dev/urandom >random.csv
python3 -c 'import sys; sys.stdout.write("a,b,y\n" + "7" * 10_000_000)' >huge.csv
bad "line 3, column 2 \('b'\): 'x' is not a number" "${T[@]}" --data badnum.csv
bad "line 3 has 2 fields, the header has 3" "${T[@]}" --data ragged.csv
bad "line 3, column 2 .*not a finite number" "${T[@]}" --data nan.csv
bad "line 3, column 2 .*not a finite number" "${T[@]}" --data inf.csv
bad "line 2 has 4 fields, the header has 3" "${T[@]}" --data wide.csv
bad "line 2, column 2" "${T[@]}" --data emptycell.csv
bad "line 2, column 2" "${T[@]}" --data overflow.csv
bad "empty" "${T[@]}" --data empty.csv
bad "only a header row" "${T[@]}" --data header.csv
bad "binary.csv: " "${T[@]}" --data binary.csv
bad "random.csv: " "${T[@]}" --data random.csv
bad "huge.csv: line 2" "${T[@]}" --data huge.csv
bad "cannot open .*No such file" "${T[@]}" --data "$tmp/no-such.csv"
bad "$tmp is a folder, not a file" "${T[@]}" --data "$tmp"
bad "no label column named 'nope'" "${T[@]}" --label nope
[ ! -e "$tmp/run/report.json" ] || fail "a failed run wrote report.json"

# ------------------------------------------------------------------ bad flags, every subcommand
bad "unknown option --bogus" train --offchain --bogus
bad "--clients needs a value" train --offchain --clients
bad "--clients needs a whole number, got 'abc'" train --offchain --clients abc
bad "--clients must be in 1..1000" "${T[@]}" --clients 0
bad "b must be in 1..255" "${T[@]}" --b 0
bad "b must be in 1..255" "${T[@]}" --b 300
bad "--b needs a whole number" "${T[@]}" --b 1.5
bad "beta must be in \(0, 0.5\)" "${T[@]}" --beta 0.6
bad "beta must be in \(0, 0.5\)" "${T[@]}" --beta 0
bad "beta must be in \(0, 0.5\), got 0.5 .*no privacy" "${T[@]}" --beta 0.5
bad "--beta needs a number" "${T[@]}" --beta 0.1x
bad "--privacy must be paper or row, got 'bogus'" "${T[@]}" --privacy bogus
bad "--label-epsilon must be 0 \(off\) or in" "${T[@]}" --label-epsilon -1
bad "--dpsgd-noise must be in \[0.1, 1000\], got 0" "${T[@]}" --privacy row --dpsgd-noise 0
bad "--scale-epsilon must be > 0" "${T[@]}" --privacy row --scale-epsilon 0
bad "--epochs must be in 1..100000" "${T[@]}" --epochs -1
bad "--batch must be >= 1 \(or 0: full batch\)" "${T[@]}" --batch -1
bad "at least one batch of 100000" "${T[@]}" --batch 100000
bad "--P must be in 1..4096" "${T[@]}" --P 0
bad "learning rate must be positive" "${T[@]}" --lr -1
bad "learning rate must be positive" "${T[@]}" --lr inf
bad "--lr needs a number" "${T[@]}" --lr nan
bad "momentum must be in \[0, 1\)" "${T[@]}" --momentum 1.5
bad "decay must be in \(0, 1\]" "${T[@]}" --lr-decay 0
bad "sigma must be positive" "${T[@]}" --mechanism gaussian --sigma -1
bad "clip norm must be positive" "${T[@]}" --mechanism gaussian --clip 0
bad "not npq, pbm or gaussian" "${T[@]}" --mechanism laplace
bad "not adam, sgd or sqn" "${T[@]}" --optimizer rmsprop
bad "--model: 'svm' is not mlp or lr" "${T[@]}" --model svm
bad "--loss: 'hinge' is not logistic or taylor" "${T[@]}" --model lr --loss hinge
bad "--optimizer sqn needs --model lr" "${T[@]}" --optimizer sqn
bad "--loss and --logit-clip are for --model lr" "${T[@]}" --loss taylor
bad "--sqn-interval must be in 1..100000" "${T[@]}" --model lr --optimizer sqn --sqn-interval 0
bad "--l2 must be >= 0" "${T[@]}" --model lr --l2 -1
bad "--model lr runs with --staleness 0" "${T[@]}" --model lr --staleness 1
bad "--seed: '-1' is not an unsigned 64-bit integer" "${T[@]}" --seed -1
bad "--delta must be in \(0, 1\)" "${T[@]}" --delta 1
bad "--hidden 'abc'" "${T[@]}" --hidden abc
bad "column 30 does not exist" "${T[@]}" --partition 0-100
bad "--partition names 2 clients but --clients is 5" "${T[@]}" --partition 0-9/10-29
bad "pass --offchain" train --epochs 1
S=(sweep --epochs 1 --seeds 1 --out "$tmp/sweep")
bad "--clients: 0 is not a positive integer" "${S[@]}" --clients 0
bad "--b: 300 is not an integer in 1..255" "${S[@]}" --b 300
bad "--beta: 0.6 is not in \(0, 0.5\)" "${S[@]}" --beta 0.6
bad "--beta: 0.5 is not in \(0, 0.5\): at 0.5 there is no privacy" "${S[@]}" --beta 0.2,0.5
bad "expected a comma-separated list" "${S[@]}" --clients 1,abc
bad "expected a comma-separated list" "${S[@]}" --b ""
bad "--seeds must be in 1..64" "${S[@]}" --seeds 0
bad "--epochs must be in 1..100000" "${S[@]}" --epochs -1
bad "b \(binomial trials\) must be in 1..255" privacy --b 0
bad "b \(binomial trials\) must be in 1..255" privacy --b 300
bad "beta must be in \(0, 0.5\)" privacy --beta 0.6
bad "P \(embedding dimension\) must be >= 1" privacy --P 0
bad "M \(number of clients\) must be >= 1" privacy --M 0
bad "epochs must be >= 1" privacy --epochs -1
bad "delta must be in \(0, 1\)" privacy --delta 2
bad "target epsilon must be a finite number > 0" privacy --target -1 --b 16
bad "--level must be feature or sample" privacy --level row
bad "sigma must be > 0" privacy --mechanism gaussian --clip 1 --sigma -1
bad "--n must be between 1 and 1000000" bench floor --n 0
bad "--n must be between 1 and 1000000" bench floor --n -1
bad "--warmup must be >= 0" bench floor --warmup -1
bad "--n needs a whole number" bench floor --n abc
bad "unknown mode 'nosuch'" bench nosuch
bad "port 70000 is out of range" devnet up --dir "$tmp/dv" --port 70000
bad "port -1 is out of range" devnet up --dir "$tmp/dv" --port -1
bad "--timeout must be in \(0, 3600\]" devnet up --dir "$tmp/dv" --timeout 0
bad "--timeout must be in \(0, 3600\]" devnet down --dir "$tmp/dv" --timeout inf
bad "--block-time must be in \[0, 86400\]" devnet up --dir "$tmp/dv" --block-time -1
bad "unknown action 'sideways'" devnet sideways
bad "no devnet recorded" devnet down --dir "$tmp/dv"
[ ! -e "$tmp/dv/devnet.json" ] || fail "a refused devnet up left a devnet behind"
bad "unknown command|unknown" nosuchcommand
# the on-chain commands refuse bad flags before they touch a node
printf 'a' >notjson.json
export BBVFL_TEST_KEY_HEX=$secret
bad "--clients must be in 1..64" demo --clients 0 --out "$tmp/demo"
bad "--clients must be in 1..64" demo --clients 65 --out "$tmp/demo"
bad "b must be in 1..255" demo --b 300 --out "$tmp/demo"
bad "--round-timeout must be > 0" demo --round-timeout 0 --out "$tmp/demo"
bad "only pbm" demo --mechanism npq --out "$tmp/demo"
bad "--batch 0 \\(full batch\\) is for --model lr" demo --batch 0 --out "$tmp/demo"
bad "--optimizer sqn on chain runs with --batch 0" demo --model lr --optimizer sqn --batch 10 --out "$tmp/demo"
bad "--round-rows -1: a positive row count" demo --model lr --batch 0 --round-rows -1 --out "$tmp/demo"
bad "'ftp://x' is not a JSON-RPC URL" demo --rpc ftp://x --out "$tmp/demo"
# the session runner (run/local.c) checks the partition before it touches a node; the run folder
# the demo made is removed again
bad "--partition names 2 clients but --clients is 5" demo --partition 0-9/10-29 --out "$tmp/demo-part"
[ ! -e "$tmp/demo-part" ] || fail "demo --partition mismatch left its run folder behind"
bad "--rpc URL is required" deploy
bad "'localhost' is not a JSON-RPC URL" deploy --rpc localhost
bad "--clients must be in 1..64" deploy --clients 0 --rpc http://127.0.0.1:1
bad "not a JSON object" deploy --config notjson.json --rpc http://127.0.0.1:1
bad "cannot open" deploy --config "$tmp/no-such.json" --rpc http://127.0.0.1:1
bad "need --session, --columns, --state-dir" client --session notjson.json --columns 0-5
bad "session file notjson.json: not a JSON object" client --session notjson.json --columns 0-5 \
  --state-dir "$tmp/st" --key-env BBVFL_TEST_KEY_HEX
bad "cannot open" client --session "$tmp/no-such.json" --columns 0-5 --state-dir "$tmp/st" \
  --key-env BBVFL_TEST_KEY_HEX
bad "--round-timeout must be > 0" client --session notjson.json --columns 0-5 --state-dir "$tmp/st" \
  --key-env BBVFL_TEST_KEY_HEX --round-timeout -1
bad "say --rpc URL and --contract ADDR" audit
bad "40 hex digits" audit --rpc http://127.0.0.1:1 --contract 0x12
bad "--from-block needs a non-negative number" audit --rpc http://127.0.0.1:1 --contract 0x12 --from-block -1
bad "session file notjson.json: not a JSON object" audit --session notjson.json
unset BBVFL_TEST_KEY_HEX

# ------------------------------------------------------------------ key files
key() { # name content mode
  printf '%s' "$2" >"$1"
  chmod "$3" "$1"
}
nosecret() {
  for s in "$secret" "${secret:0:16}" "${secret:24:16}" "${secret:48:16}"; do
    if grep -qi "$s" err.txt out.txt; then fail "the key material appears in the output of: $*"; fi
  done
}
keybad() { # regex file
  bad "$1" key address --key-file "$2"
  nosecret "$2"
}
key k_perm "$secret" 644
keybad "readable by group or others \(mode 644\)" k_perm
key k_nothex "zz${secret:2}" 600
keybad "non-hex character" k_nothex
key k_short "${secret:0:60}" 600
keybad "64 hex digits.*found 60" k_short
key k_long "${secret}00" 600
keybad "64 hex digits.*found 66" k_long
key k_zero "$(printf '0%.0s' {1..64})" 600
keybad "between 1 and the secp256k1 group order" k_zero
key k_order fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141 600
keybad "between 1 and the secp256k1 group order" k_order
key k_max ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff 600
keybad "between 1 and the secp256k1 group order" k_max
key k_empty "" 600
keybad "found 0 characters" k_empty
key k_extra "$secret extra words" 600
keybad "64 hex digits" k_extra
keybad "No such file" "$tmp/no-such-key"
keybad "not a regular file" "$tmp"
bad "environment variable NOPE_UNSET_VAR is not set" key address --key-env NOPE_UNSET_VAR
BBVFL_TEST_BADKEY="${secret}x" bad "64 hex digits" key address --key-env BBVFL_TEST_BADKEY
nosecret key-env
# the good key works (so the refusals above are about the content, not the command)
key k_good "0x$secret" 600
addr=$("$BBVFL_BIN" key address --key-file k_good)
[ "$addr" = 0x2c7536E3605D9C16a7a3D7b1898e529396a65c23 ] || fail "good key: address $addr"
bad "exists" key new --out k_good
[ "$(cat k_good)" = "0x$secret" ] || fail "key new without --force changed an existing key file"

# ------------------------------------------------------------------ RPC URLs that are not one
bad "'ftp://x' is not a JSON-RPC URL" bench floor --rpc ftp://x --n 1
bad "'localhost' is not a JSON-RPC URL" bench floor --rpc localhost --n 1
bad "'http://' is not a JSON-RPC URL: no host" bench floor --rpc http:// --n 1
bad "no host" bench floor --rpc http://:8545 --n 1
bad "no JSON-RPC URL given" bench floor --rpc "" --n 1
bad "cannot reach the node at http://127.0.0.1:1" bench floor --rpc http://127.0.0.1:1 --n 1

# ------------------------------------------------------------------ unwritable / full output folder
echo "not a folder" >afile
bad "afile exists and is not a folder" "${T[@]/$tmp\/run/afile}"
bad "cannot create folder afile/sub" train --offchain --epochs 1 --quiet --out afile/sub
[ "$(cat afile)" = "not a folder" ] || fail "the file given as --out was changed"
if [ "$(id -u)" -ne 0 ]; then
  mkdir ro && chmod 500 ro
  bad "ro/" train --offchain --epochs 1 --quiet --out ro
  [ -z "$(ls -A ro)" ] || fail "files left in an unwritable folder"
else
  echo "note: running as root: the read-only-folder case is covered by the full-disk case below"
fi
mkdir -p mnt
if mount -t tmpfs -o size=64k tmpfs "$tmp/mnt" 2>/dev/null; then
  "$BBVFL_BIN" train --offchain --epochs 1 --quiet --seed 1 --out mnt/run >/dev/null
  sum_before=$(cd mnt/run && md5sum metrics.csv report.json)
  dd if=/dev/zero of=mnt/fill bs=1k count=256 2>/dev/null || true # fill the disk (ENOSPC ends dd)
  bad "No space left on device" train --offchain --epochs 3 --quiet --seed 1 --out mnt/run
  grep -q "wrote" out.txt && fail "a failed write still says 'wrote': $(cat out.txt)"
  [ "$(cd mnt/run && md5sum metrics.csv report.json)" = "$sum_before" ] ||
    fail "a full disk changed the old run files"
  [ "$(find mnt/run -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')" = "metrics.csv report.json " ] ||
    fail "temporary files left behind: $(ls -A mnt/run)"
  bad "No space left on device" sweep --epochs 1 --seeds 1 --clients 2 --b 4 --beta 0.1 --out mnt/sweep
  [ -z "$(ls -A mnt/sweep 2>/dev/null)" ] || fail "half-written sweep files: $(ls -A mnt/sweep)"
  umount "$tmp/mnt"
else
  bbvfl_skip_machine "full-disk case: cannot mount a tmpfs here (not root or no permission)"
fi
echo "ok: $ncase hostile inputs refused cleanly"
bbvfl_skip_exit
