#!/usr/bin/env bash
# Keystores against the pinned Foundry's `cast wallet`: a keystore made by `cast wallet new`, and one
# by `cast wallet import --private-key` of a known key, read by `bbvfl key address --keystore` (the
# address cast prints, the key's own); a keystore written by `bbvfl key new --keystore` read back by
# `cast wallet address --keystore` (same address), mode 0600, never overwritten. Bad input, each with
# its clear error and a non-zero exit: a wrong password, corrupt JSON, an unknown KDF, a bad MAC,
# scrypt parameters that are invalid or need too much memory, a missing password, two key sources. (Decoding in detail, pbkdf2 included: test_eth_keystore.c. A
# cast keystore driving a client on chain: tests/integration/test_onchain_hosted.sh.)
set -euo pipefail
: "${BBVFL_BIN:?}" "${BBVFL_CAST:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-keystore.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
pw='s3cret pass'
printf '%s\n' "$pw" >pw
chmod 600 pw

# cast wallet new -> bbvfl
"$BBVFL_CAST" wallet new . made.json --unsafe-password "$pw" >/dev/null || fail "cast wallet new"
want=$("$BBVFL_CAST" wallet address --keystore made.json --password "$pw")
got=$("$BBVFL_BIN" key address --keystore made.json --password-file pw)
[ "$got" = "$want" ] || fail "cast wallet new: bbvfl reads $got, cast $want"
PW_VAR="$pw" got=$(PW_VAR="$pw" "$BBVFL_BIN" key address --keystore made.json --password-env PW_VAR)
[ "$got" = "$want" ] || fail "--password-env: $got, want $want"

# cast wallet import of a known (throwaway, test-only) key -> bbvfl, and the key's own address
key=0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
mkdir ks
"$BBVFL_CAST" wallet import imported --private-key "$key" --keystore-dir ks --unsafe-password "$pw" >/dev/null \
  || fail "cast wallet import"
want=$("$BBVFL_CAST" wallet address --private-key "$key")
got=$("$BBVFL_BIN" key address --keystore ks/imported --password-file pw)
[ "$got" = "$want" ] || fail "cast wallet import: bbvfl reads $got, the key is $want"

# bbvfl key new --keystore -> cast
got=$("$BBVFL_BIN" key new --keystore ours.json --password-file pw --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["address"])')
[ "$(stat -c %a ours.json)" = 600 ] || fail "ours.json is mode $(stat -c %a ours.json), not 600"
want=$("$BBVFL_CAST" wallet address --keystore ours.json --password "$pw")
[ "$got" = "$want" ] || fail "bbvfl key new printed $got, cast reads $want"
python3 -c 'import json,sys; c=json.load(open("ours.json"))["crypto"]; p=c["kdfparams"]
assert (c["kdf"], c["cipher"], p["n"], p["r"], p["p"], p["dklen"]) == ("scrypt", "aes-128-ctr", 262144, 8, 1, 32), c' \
  || fail "ours.json does not have the standard parameters"
sum=$(sha256sum ours.json)
if "$BBVFL_BIN" key new --keystore ours.json --password-file pw >out 2>&1; then fail "an existing keystore was overwritten"; fi
grep -q "already exists" out || fail "no clear error for an existing keystore: $(cat out)"
[ "$(sha256sum ours.json)" = "$sum" ] || fail "ours.json changed"

# bad input: exit non-zero, a clear message, never the key
bad() { # words file flags...
  local words=$1
  shift
  if "$BBVFL_BIN" key address "$@" >out 2>&1; then fail "accepted: $*"; fi
  grep -q -- "$words" out || fail "$*: expected \"$words\", got: $(cat out)"
  ! grep -qi "0123456789abcdef0123" out || fail "the key appears in an error"
}
printf 'wrong\n' >wrong
chmod 600 wrong
bad "wrong password" --keystore ks/imported --password-file wrong
printf '{"version":3,"crypto":{' >corrupt.json
bad "not a JSON object" --keystore corrupt.json --password-file pw
python3 -c 'import json; d=json.load(open("ks/imported")); d["crypto"]["kdf"]="argon2"; json.dump(d, open("kdf.json","w"))'
bad 'kdf "argon2" is not supported' --keystore kdf.json --password-file pw
python3 -c 'import json; d=json.load(open("ks/imported")); m=d["crypto"]["mac"]; d["crypto"]["mac"]=("0" if m[0]!="0" else "1")+m[1:]; json.dump(d, open("mac.json","w"))'
bad "MAC does not match" --keystore mac.json --password-file pw
# scrypt parameters: each refused before any derivation, the error naming the cause
kdf() { # file key value
  python3 -c 'import json,sys; d=json.load(open("ks/imported")); d["crypto"]["kdfparams"][sys.argv[2]]=int(sys.argv[3]); json.dump(d, open(sys.argv[1],"w"))' "$@"
}
kdf n.json n 1000
bad "scrypt n must be a power of two > 1 (got 1000)" --keystore n.json --password-file pw
kdf r.json r 0
bad "scrypt r must be >= 1 (got 0)" --keystore r.json --password-file pw
kdf mem.json n 67108864
bad "scrypt parameters need 64.0 GiB of memory .*over the limit of 2.0 GiB" --keystore mem.json --password-file pw
bad "password-file" --keystore ks/imported
bad "exactly one" --keystore ks/imported --password-file pw --key-env HOME
chmod 644 pw
bad "readable by group or others" --keystore ks/imported --password-file pw
chmod 600 pw
bad "no such file\|No such file" --keystore missing.json --password-file pw
echo ok
