#!/usr/bin/env bash
# The audit's check `head` (core/headcheck.h, client/audit/audit_head.c) against honest sessions of
# real `bbvfl client` processes (`bbvfl demo`, 3 clients), the modes combined into few sessions:
#  - lane aggregation, one batch per round, label DP (--label-epsilon 1: the randomized labels,
#    drawn once per row, are what the gradients imply);
#  - hashed aggregation, windows of 3 batches, staleness 2 (pipelined), masked mode;
#  - three classes (wine), the MLP with windows of 2 (multiclass: the class read over K);
#  - --model lr on wine (softmax, K = 3) and --model lr --batch 0 --optimizer sqn --sqn-pairs round (curvature
#    rounds: counted, not replayed).
# Each: `bbvfl audit --session` exits 0, `head` PASS with every TRAIN round's gradient checked,
# all of them bit for bit (the same code in the same order). Labels split across clients:
# test_onchain_labels.sh (and its window/hashed variants) asserts the same.
# Then a session file whose learning rate is not the one the session ran with: `head` FAILs
# (exit 3) at the first TRAIN round (round 0: its gradient is still the initial head's, the step
# is not), naming the active client, and no other check fails. The audit's time with and without
# `head` (no session file: skipped) is printed.
# Runs under tests/with-devnet.sh (BBVFL_RPC_URL), needs BBVFL_BIN and BBVFL_SOURCE_DIR.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}" "${BBVFL_SOURCE_DIR:?}"
session_test audit-head
data="$BBVFL_SOURCE_DIR/data"

demo() { # name, demo flags
  local name=$1
  shift
  "$BBVFL_BIN" demo --rpc "$BBVFL_RPC_URL" --clients 3 --epochs 2 --seed 11 --out "$work/$name" "$@" \
    >"$work/$name.log" 2>&1 || { tail -n 30 "$work/$name.log" >&2; fail "demo $name $*"; }
}

head_passes() { # name: audit exit 0, head PASS, every TRAIN round bit for bit
  local name=$1 rc=0
  "$BBVFL_BIN" audit --session "$work/$name/session.json" --json --quiet >"$work/$name.audit.json" \
    2>"$work/$name.audit.err" || rc=$?
  [ "$rc" = 0 ] || { cat "$work/$name.audit.err" >&2; fail "audit of $name exit $rc"; }
  python3 - "$work/$name.audit.json" "$name" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
name = sys.argv[2]
ck = {c["name"]: c for c in a["checks"]}
h, g = ck["head"], a["figures"]["gradients"]
assert a["verdict"] == "PASS" and h["status"] == "PASS", (name, h)
curv = a["head"]["curvature_rounds_not_replayed"]
assert h["checked"] == g and a["head"]["rounds"] + curv == g, (name, h, a["head"], g)
assert a["head"]["exact"] == a["head"]["rounds"] > 0, (name, a["head"])
assert a["head"]["max_rel_dev_gradient"] == 0 and a["head"]["max_rel_dev_params"] == 0, (name, a["head"])
assert any("test labels" in t for t in a["trusted"]), a["trusted"]
print("ok: %s: head %s (%d TRAIN rounds, %d bit for bit, %d curvature rounds counted)" %
      (name, h["status"], h["checked"], a["head"]["exact"], curv))
PY
}

demo lane_ldp --label-epsilon 1
head_passes lane_ldp
demo hashed_masked --aggregation hashed --window 3 --staleness 2 --masked
head_passes hashed_masked
demo wine_mlp --data "$data/wine.csv" --window 2
head_passes wine_mlp
demo wine_lr --data "$data/wine.csv" --model lr
head_passes wine_lr
demo lr_sqn --model lr --batch 0 --optimizer sqn --sqn-pairs round --sqn-interval 1 --epochs 4
head_passes lr_sqn
python3 - "$work/lr_sqn.audit.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
assert a["head"]["curvature_rounds_not_replayed"] > 0, a["head"]
PY

# a session file that lies about the learning rate: the first posted head is not its step
python3 - "$work/lane_ldp/session.json" "$work/wrong_lr.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["training"]["lr"] = s["training"]["lr"] * 2
json.dump(s, open(sys.argv[2], "w"))
PY
rc=0
"$BBVFL_BIN" audit --session "$work/wrong_lr.json" --json --quiet >"$work/wrong.json" 2>"$work/wrong.err" || rc=$?
[ "$rc" = 3 ] || { cat "$work/wrong.err" >&2; fail "audit with a wrong learning rate: exit $rc, expected 3"; }
python3 - "$work/wrong.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
ck = {c["name"]: c for c in a["checks"]}
h = ck["head"]
assert a["verdict"] == "FAIL" and h["status"] == "FAIL", h
assert [n for n, c in ck.items() if c["status"] == "FAIL"] == ["head"], [(n, c["status"]) for n, c in ck.items()]
f = h["first_failure"]
assert f["round"] == 0 and "params not the step" in f["detail"], f
assert f["client"] and f["client"].lower() == a["figures"]["active"].lower(), (f, a["figures"]["active"])
print("ok: a wrong learning rate fails head at round %d, client %s: %s" % (f["round"], f["client"], f["detail"]))
PY

# the audit's time with and without the check (no session file: `head` skipped)
contract=$(json_get "$work/lane_ldp/session.json" contract)
t0=$(date +%s.%N)
"$BBVFL_BIN" audit --session "$work/lane_ldp/session.json" --quiet >/dev/null
t1=$(date +%s.%N)
"$BBVFL_BIN" audit --rpc "$BBVFL_RPC_URL" --contract "$contract" --quiet >"$work/nohead.txt"
t2=$(date +%s.%N)
grep -q "^SKIP head" "$work/nohead.txt" || fail "head not skipped without a session file: $(grep head "$work/nohead.txt")"
python3 -c "import sys; a,b,c = map(float, sys.argv[1:]); print('audit of a 2-epoch session: %.2f s with head, %.2f s without' % (b - a, c - b))" "$t0" "$t1" "$t2"
echo ok
