#!/usr/bin/env bash
# A client's --state-dir belongs to one session (docs/ONCHAIN.md "The state dir"): its noise key
# and election secret are made for that session and serve no other; files open to group or others
# are refused. Every refusal comes before any transaction: the client's nonce does not move.
#  1. session A (one client, the active one): the client stops itself after 2 rounds
#     (--exit-after-round 2, as if killed); its state dir holds session-binding.json naming A, the
#     noise key, the election secret and checkpoints, all 0600;
#  2. the noise key made 0644: the restart is refused (one error line naming the file, the mode
#     and chmod 600), nothing sent; the same for a party checkpoint made 0640;
#  3. modes back to 0600: the restart of the same session resumes from its checkpoint and
#     completes; bbvfl audit passes (the commitment bound to A's contract and chain id);
#  4. session B on the same chain, the same key and state dir: refused before any transaction
#     (the nonce as it was, no Registered event in B), one error line naming the state dir,
#     session A's chain id and aggregator, a fresh --state-dir or deleting it; the state dir is
#     left as it was;
#  5. the same key with a fresh state dir takes part in B and completes it, with a new noise key
#     and election secret (not A's), and B's audit passes.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}"
session_test statedir
session_keys 1
addr=${addrs[0]}
cols=("0-29")
client_flags=(--labels --seed 4 --round-timeout 60)
client_party=0
nonce() { echo $(($(rpc eth_getTransactionCount "[\"$addr\",\"latest\"]"))); }
# client STATE-DIR [flags]: the one client of the session in $run, in the foreground
client() {
  local st=$1
  shift
  "$BBVFL_BIN" client --session "$run/session.json" --key-file "$work/k0.key" --columns "${cols[0]}" \
    --state-dir "$st" "${client_flags[@]}" "$@"
}
# refused WHAT STATE-DIR REGEX...: the client exits non-zero with one error line matching every
# REGEX, and sends nothing
refused() {
  local what=$1 st=$2
  shift 2
  local n0 rc
  n0=$(nonce)
  set +e
  client "$st" >"$work/out" 2>"$work/err"
  rc=$?
  set -e
  [ "$rc" != 0 ] && [ "$rc" -lt 128 ] || fail "$what: exit $rc"
  [ "$(wc -l <"$work/err")" = 1 ] || fail "$what: not one error line: $(cat "$work/err")"
  local re
  for re in "$@"; do grep -qE -- "$re" "$work/err" || fail "$what: expected /$re/, got: $(cat "$work/err")"; done
  [ "$(nonce)" = "$n0" ] || fail "$what: the client sent $(($(nonce) - n0)) transaction(s) before failing"
  echo "ok: $what -> $(cat "$work/err")"
}

# ------------------------------------------------------------------ 1. session A, stopped after 2 rounds
runA="$work/A"
mkdir -p "$runA"
run=$runA
session_deploy --clients 1 --epochs 2 --seed 4
contractA=$contract
st="$work/st"
if client "$st" --exit-after-round 2 >"$work/a1.out" 2>&1; then fail "session A: the client did not stop after 2 rounds"; fi
grep -q "stopped after 2 rounds" "$work/a1.out" || { cat "$work/a1.out" >&2; fail "session A: unexpected exit"; }
python3 - "$st/session-binding.json" "$runA/session.json" <<'PY'
import json, sys
b, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert b["chain_id"] == s["chain_id"], (b, s)
assert b["contract"].lower() == s["contract"].lower(), (b, s)
PY
for f in session-binding.json noise.key election-secret.hex progress.ckpt; do
  [ "$(stat -c %a "$st/$f")" = 600 ] || fail "$st/$f: mode $(stat -c %a "$st/$f"), not 600"
done
ls "$st"/party-*.ckpt >/dev/null || fail "session A left no party checkpoint"
echo "ok: session A stopped after 2 rounds; $st bound to it"

# ------------------------------------------------------------------ 2. files open to group or others
chmod 644 "$st/noise.key"
refused "a noise key of mode 0644" "$st" "$st/noise.key" "mode 0644" "chmod 600"
chmod 600 "$st/noise.key"
ck=$(ls "$st"/party-*.ckpt | head -1)
chmod 640 "$ck"
refused "a checkpoint of mode 0640" "$st" "$ck" "mode 0640" "chmod 600"
chmod 600 "$ck"

# ------------------------------------------------------------------ 3. the same session restarts
client "$st" >"$work/a2.out" 2>&1 || { cat "$work/a2.out" >&2; fail "session A: the restart failed"; }
grep -q "resuming at round" "$work/a2.out" || { cat "$work/a2.out" >&2; fail "session A: the restart did not resume"; }
grep -q "session complete" "$work/a2.out" || fail "session A: not complete"
audit_passes >/dev/null
echo "ok: session A restarted with the same state dir: $(grep -m1 "resuming at round" "$work/a2.out")"

# ------------------------------------------------------------------ 4. session B with A's state dir
runB="$work/B"
mkdir -p "$runB"
run=$runB
session_deploy --clients 1 --epochs 1 --seed 4
[ "${contract,,}" != "${contractA,,}" ] || fail "session B has session A's contract"
before=$(cd "$st" && sha256sum -- * | sort)
refused "session A's state dir in session B" "$st" "--state-dir $st belongs to another session" \
  "chain id $(json_get "$runA/session.json" chain_id), aggregator (0x)?[0-9a-fA-F]{40}" \
  "fresh --state-dir" "delete $st"
grep -qi "aggregator ${contractA}" "$work/err" || fail "the refusal does not name session A's aggregator $contractA"
# (after the deployment's block: its constructor logs Members)
after=$(printf '0x%x' $(($(json_get "$run/deploy.json" deploy_block) + 1)))
[ -z "$(rpc eth_getLogs "[{\"address\":\"$contract\",\"fromBlock\":\"$after\",\"toBlock\":\"latest\"}]" | tr -d '[]')" ] ||
  fail "the refused client left events on session B's contract"
[ "$(cd "$st" && sha256sum -- * | sort)" = "$before" ] || fail "the refused client changed $st"

# ------------------------------------------------------------------ 5. a fresh state dir for session B
stB="$work/stB"
client "$stB" >"$work/b.out" 2>&1 || { cat "$work/b.out" >&2; fail "session B with a fresh state dir failed"; }
grep -q "session complete" "$work/b.out" || fail "session B: not complete"
for f in noise.key election-secret.hex; do
  cmp -s "$st/$f" "$stB/$f" && fail "session B reuses session A's $f"
done
audit_passes >/dev/null
echo "ok: session B with a fresh state dir: new noise key and election secret, audit passes"
echo ok
