#!/usr/bin/env bash
# bbvfl audit against real sessions: `bbvfl demo` (real `bbvfl client` processes) on the test's
# devnet, once with the product contract and once with each test-only tampered contract
# (contract/testonly/make-tampered.sh) deployed through the ordinary deploy path.
#  - honest session: exit 0, every check PASS, and the audit's figures equal the run's report.json
#    (rounds, submissions, session seed, rewards per client, submission gas, last metrics, epsilon);
#    the HTML report renders in headless Chromium without console errors, with its charts
#    (skipped with a message when chromium is not installed);
#  - mis-added lane: exit 3, only `sums` fails, at round 1, lane 0;
#  - one client paid less: exit 3, only `rewards` fails, epoch 0, the client with index 1;
#  - a contributor count one short in round 2: exit 3, only `contributors` fails, at round 2 (the
#    active client may stop first: a short count makes the sum exceed count*b, which it refuses);
#  - a wrong initial pick (election), half a public key for client 1 (registration), an AUROC above
#    1 in epoch 1 (metrics), params() misreporting a deadline (params): only that check fails;
#  - the schedule from the chain alone; --train-rows the chain's passes, another fails `schedule`;
#  - windows: a session of K = 45 (one window per epoch, all test rows in one EVAL round) audits
#    clean; one of K = 7 (a ragged last window) with 3 evaluation rounds against the mis-added lane
#    fails only `sums`, at round 1;
#  - hashed aggregation (--aggregation hashed --staleness 1 --window 5): the pipelined session
#    audits clean and the audit counts the submissions ahead of the head. (gradients:
#    test_audit_gradient_poster.sh)
# Runs under tests/with-devnet.sh (BBVFL_RPC_URL), needs BBVFL_BIN and BBVFL_SOURCE_DIR.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../support/skip.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}" "${BBVFL_SOURCE_DIR:?}"
session_test audit-test
fails=0
check() { # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what" >&2; fails=$((fails + 1)); fi
}

"$BBVFL_SOURCE_DIR/contract/testonly/make-tampered.sh" "$work/tamper"

# DEMO_ARGS: extra demo options (windows, evaluation rounds) for one call. The demos run without
# their own audit (--no-audit: this test is about `bbvfl audit`), except where DEMO_AUDIT=1.
run_demo() { # may-fail name [env...]: a short 3-client session
  local may_fail=$1 name=$2; shift 2
  local na=--no-audit
  [ -n "${DEMO_AUDIT:-}" ] && na=
  # shellcheck disable=SC2086
  if ! env "$@" "$BBVFL_BIN" demo --rpc "$BBVFL_RPC_URL" --clients 3 --epochs 2 --seed 11 ${DEMO_ARGS:-} $na --out "$work/$name" \
    >"$work/$name.log" 2>&1; then
    [ "$may_fail" = 1 ] || { cat "$work/$name.log" >&2; fail "demo $name failed"; }
    echo "demo $name stopped early (allowed): $(tail -n 1 "$work/$name.log")"
  fi
  test -f "$work/$name/session.json" || { cat "$work/$name.log" >&2; fail "demo $name deployed nothing"; }
}
demo() { run_demo 0 "$@"; }
# as demo, but a client refusing the tampered history is allowed
demo_may_fail() { run_demo 1 "$@"; }

audited_clean() { # name what: the audit of run `name` exits 0
  local rc
  rc=$(audit "$1")
  check "$2: exit status 0 (got $rc)" test "$rc" = 0
}

audit() { # name: writes $work/name.audit.json, echoes the exit status
  set +e
  "$BBVFL_BIN" audit --session "$work/$1/session.json" --json --quiet --html "$work/$1.html" \
    >"$work/$1.audit.json" 2>"$work/$1.audit.err"
  local rc=$?
  set -e
  echo "$rc"
}

# ------------------------------------------------------------------ honest session
DEMO_AUDIT=1 demo honest
audited_clean honest "honest session"
check "honest session: every check passes, figures match report.json and metrics.csv" python3 - \
  "$work/honest.audit.json" "$work/honest/report.json" "$work/honest/metrics.csv" <<'PY'
import csv, sys
import bbvfl_audit
a, r = bbvfl_audit.clean_run(sys.argv[1], sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[3])))
assert 1000 < a["peak_rss_kb"] < 1000000, a.get("peak_rss_kb")  # the auditor measures its own peak
assert a["code_matches_artifact"] is True, a["code_matches_artifact"]
f = a["figures"]
assert f["rounds"] == r["rounds"], (f["rounds"], r["rounds"])
assert f["submissions"] == r["rounds"] * r["clients"], f["submissions"]
assert f["session_ended"] is True
assert f["seed"] == r["session_seed"], (f["seed"], r["session_seed"])
paid = {c["client"].lower(): c["transferred"] for c in f["rewards_per_client"]}
want = {k.lower(): v for k, v in r["rewards"].items()}
assert paid == want, (paid, want)
assert sum(c["gas"] for c in f["rewards_per_client"]) == r["gas_submit_total"]
me = f["metrics_per_epoch"]
assert [m["epoch"] + 1 for m in me] == [int(x["epoch"]) for x in rows], (me, rows)
for m, x in zip(me, rows):  # posted on chain in micro units, the run's CSV has 6 decimals
    for k, c in (("auroc", "auroc"), ("accuracy", "accuracy"), ("loss", "test_loss")):
        assert abs(m[k] - float(x[c])) <= 2e-6, (m, x)
assert abs(me[-1]["auroc"] - r["auroc"]) <= 1e-6, (me[-1], r["auroc"])
assert abs(f["epsilon"]["feature"] - r["epsilon_feature"]) <= 1e-6 * r["epsilon_feature"]
# the per-person headline: the same figure (null: unbounded, labels unprotected) in the demo and the audit
assert (f["epsilon"]["sample"] is None) == (r["epsilon_sample"] is None), (f["epsilon"], r["epsilon_sample"])
assert r["epsilon_sample"] is None or abs(f["epsilon"]["sample"] - r["epsilon_sample"]) <= 1e-6 * r["epsilon_sample"]
assert abs(f["epsilon"]["sample_features"] - r["epsilon_sample_features"]) <= 1e-6 * r["epsilon_sample_features"]
assert f["epsilon"]["labels_protected"] == r["labels_protected"], (f["epsilon"], r["labels_protected"])
assert f["epsilon"]["headline"] == "per_person" and f["epsilon"]["sample_level"] == "per_person", f["epsilon"]
assert f["epsilon"]["feature_level"] == "per_party" and "epsilon_void" not in f["epsilon"], f["epsilon"]
assert len(f["schedule"]) == r["epochs"], f["schedule"]
assert sum(g["gas"] for g in f["gas_per_round"]) == f["gas_total"] > 0
PY

# the human report starts with the verdict
set +e
"$BBVFL_BIN" audit --session "$work/honest/session.json" --quiet >"$work/honest.txt"
rc=$?
set -e
check "human report: exit 0 and verdict first" sh -c "test $rc = 0 && head -1 '$work/honest.txt' | grep -q '^bbvfl audit: PASS'"

# the schedule comes from the chain (params() records the training rows); --train-rows is only a
# cross-check: the chain's count passes, another one fails the schedule check naming both
rows=$(json_get "$work/honest.audit.json" params train_rows)
set +e
"$BBVFL_BIN" audit --session "$work/honest/session.json" --train-rows "$rows" --json --quiet >"$work/rows-ok.json"
rc_ok=$?
"$BBVFL_BIN" audit --session "$work/honest/session.json" --train-rows 1000 --json --quiet >"$work/rows.json"
rc=$?
set -e
check "schedule: --train-rows $rows (the chain's) passes (exit $rc_ok)" test "$rc_ok" = 0
check "schedule: a row count other than the chain's fails, naming both (exit $rc)" sh -c "test $rc = 3 && python3 -c \"
import json; a = json.load(open('$work/rows.json'))
s = {c['name']: c for c in a['checks']}
assert s['schedule']['status'] == 'FAIL' and s['sums']['status'] == 'PASS', s
d = s['schedule']['first_failure']['detail']
assert '1000' in d and '$rows' in d, d\""

# ------------------------------------------------------------------ windows
# K = 45 minibatches per TRAIN round (one window per epoch) and the whole test split in one EVAL
# round: every check passes, the schedule without --train-rows, and the figures are per round
DEMO_ARGS="--window 45" demo win45
audited_clean win45 "windowed session (K=45)"
check "windowed session (K=45): every check passes, rounds of their own length" python3 - \
  "$work/win45.audit.json" "$work/win45/report.json" <<'PY'
import sys
import bbvfl_audit
a, r = bbvfl_audit.clean_run(sys.argv[1], sys.argv[2])
p = a["params"]
assert p["window"] == 45 and p["train_rounds"] == 1 and p["eval_rounds"] == 1, p
assert p["aggregation"] == "lanes" and p["staleness"] == 0, p
assert p["eval_rows"] == p["test_rows"] and p["eval_rows_per_round"] == p["eval_rows"], p  # every test row, one round
f = a["figures"]
assert f["rounds"] == r["rounds"] == 2 * p["epochs"], (f["rounds"], r["rounds"])
assert f["gradients"] == p["epochs"], f["gradients"]
assert len(f["schedule"]) == p["epochs"], f["schedule"]
sc = bbvfl_audit.check(a, "schedule")
assert sc["checked"] == p["epochs"] and "training rows" in sc["note"], sc
PY

# hashed aggregation, windows of 5, staleness 1: the clients submit ahead of the oldest open
# round (Submitted of round r+1 before RoundCompleted/GradientPosted of round r); every check
# passes and the audit saw the pipelining
DEMO_ARGS="--aggregation hashed --staleness 1 --window 5" demo hashed
audited_clean hashed "hashed pipelined session"
check "hashed pipelined session: every check passes, submissions ahead of the head" python3 - \
  "$work/hashed.audit.json" "$work/hashed/report.json" <<'PY'
import sys
import bbvfl_audit
a, r = bbvfl_audit.clean_run(sys.argv[1], sys.argv[2])
p = a["params"]
assert p["aggregation"] == "hashed" and p["staleness"] == 1 and p["window"] == 5 and p["train_rounds"] == 9, p
f = a["figures"]
assert f["rounds"] == r["rounds"] == (p["train_rounds"] + p["eval_rounds"]) * p["epochs"], (f["rounds"], r["rounds"])
assert f["submissions_ahead"] > 0 and f["max_rounds_ahead"] >= 1, (f["submissions_ahead"], f["max_rounds_ahead"])
assert a["code_matches_artifact"] is True, a["code_matches_artifact"]
paid = {c["client"].lower(): c["transferred"] for c in f["rewards_per_client"]}
assert paid == {k.lower(): v for k, v in r["rewards"].items()}, paid
PY

# a ragged window (K = 7: six windows of 7 batches and one of 3) and three evaluation rounds
# (114 test rows in rounds of 50) against the contract whose RoundCompleted of round 1 (a window
# of 7 batches) mis-adds lane 0: only sums fails, there
DEMO_ARGS="--window 7 --eval-rows-per-round 50" demo_may_fail sumwin BBVFL_ABI_DIR="$work/tamper/sum"
rc=$(audit sumwin)
check "windowed mis-added lane: exit 3 (got $rc)" test "$rc" = 3
check "windowed mis-added lane: only sums fails, round 1, lane 0" python3 - "$work/sumwin.audit.json" <<'PY'
import sys
import bbvfl_audit
a = bbvfl_audit.load(sys.argv[1])
ff = bbvfl_audit.only_fails(a, "sums")
assert ff["round"] == 1 and ff["tx"] and ff["detail"].startswith("lane 0:"), ff
p = a["params"]
assert p["window"] == 7 and p["train_rounds"] == 7 and p["eval_rounds"] == 3, p
assert bbvfl_audit.check(a, "gradients")["checked"] >= 7, bbvfl_audit.check(a, "gradients")  # the ragged last window's gradient too
PY

# the HTML report: self-contained, renders, shows the charts
html="$work/honest.html"
check "HTML: no external resource, inline SVG charts" sh -c "! grep -Eq '(src|href)=\"(https?:)?//' '$html' && test \$(grep -c '<svg' '$html') -ge 5"
if command -v chromium >/dev/null 2>&1; then
  prof=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-chromium.XXXXXX")
  shot=${BBVFL_AUDIT_SCREENSHOT:-$work/audit.png}
  chrome=(chromium --headless --no-sandbox --disable-gpu --disable-background-networking
          --disable-component-update --disable-sync --no-first-run --user-data-dir="$prof")
  timeout 120 "${chrome[@]}" --enable-logging=stderr --v=0 --window-size=1200,2000 --screenshot="$shot" \
    "file://$html" >"$work/chromium.log" 2>&1 || true
  timeout 120 "${chrome[@]}" --dump-dom "file://$html" >"$work/dom.html" 2>/dev/null || true
  rm -rf "$prof"
  check "HTML: chromium wrote a screenshot" test -s "$shot"
  check "HTML: no console errors" sh -c "! grep -E 'Uncaught|CONSOLE|Refused to' '$work/chromium.log'"
  check "HTML: the rendered DOM holds the charts and the verdict" sh -c \
    "test \$(grep -o '<svg' '$work/dom.html' | wc -l) -ge 5 && grep -q 'PASS: every check holds' '$work/dom.html'"
else
  bbvfl_skip_setup "chromium is not installed (apt-get install chromium): HTML rendering not checked"
fi

# the run folder alone: a demo whose chain was persisted in RUN/devnet and stopped is audited
# with --session only (the audit resumes that devnet, then stops it again)
mkdir -p "$work/kept"
"$BBVFL_BIN" devnet up --dir "$work/kept/devnet" --persist --json >"$work/kept.devnet.json"
kurl=$(sed -n 's/.*"rpc_url": *"\([^"]*\)".*/\1/p' "$work/kept.devnet.json")
"$BBVFL_BIN" demo --rpc "$kurl" --clients 3 --epochs 1 --seed 4 --out "$work/kept" >"$work/kept.log" 2>&1 ||
  { cat "$work/kept.log" >&2; "$BBVFL_BIN" devnet down --dir "$work/kept/devnet"; exit 1; }
"$BBVFL_BIN" devnet down --dir "$work/kept/devnet" >/dev/null
set +e
"$BBVFL_BIN" audit --session "$work/kept/session.json" --json >"$work/kept.audit.json" 2>"$work/kept.audit.err"
rc=$?
set -e
check "run folder only: the audit resumes the run's devnet and passes (exit $rc)" sh -c \
  "test $rc = 0 && grep -q 'resuming the run' '$work/kept.audit.err' && python3 -c \"
import json; a = json.load(open('$work/kept.audit.json')); r = json.load(open('$work/kept/report.json'))
assert a['ok'] and a['figures']['rounds'] == r['rounds'] == 46, (a['summary'], a['figures']['rounds'], r['rounds'])\""
check "run folder only: the resumed devnet was stopped again" sh -c "! test -e '$work/kept/devnet/devnet.json'"

# ------------------------------------------------------------------ tampered contracts
demo sum BBVFL_ABI_DIR="$work/tamper/sum"
# the demo's own audit (before its chain stops) sees it too: exit 3, the verdict and its files
set +e
BBVFL_ABI_DIR="$work/tamper/sum" "$BBVFL_BIN" demo --rpc "$BBVFL_RPC_URL" --clients 3 --epochs 2 --seed 11 \
  --out "$work/sumaudit" >"$work/sumaudit.log" 2>&1
drc=$?
set -e
check "mis-added lane, the demo's own audit: exit 3 (got $drc)" test "$drc" = 3
check "mis-added lane, the demo's own audit: FAIL at sums, audit.json and audit.html written" python3 - "$work/sumaudit" <<'PY'
import json, os, sys
run = sys.argv[1]
rep = json.load(open(os.path.join(run, "report.json")))
assert rep["audit"]["verdict"] == "FAIL" and rep["audit"]["first_failure"].startswith("sums:"), rep["audit"]
assert json.load(open(os.path.join(run, "audit.json")))["verdict"] == "FAIL"
assert os.path.getsize(os.path.join(run, "audit.html")) > 0
PY
rc=$(audit sum)
check "mis-added lane: exit 3 (got $rc)" test "$rc" = 3
check "mis-added lane: only sums fails, round 1, lane 0" python3 - "$work/sum.audit.json" <<'PY'
import sys
import bbvfl_audit
a = bbvfl_audit.load(sys.argv[1])
ff = bbvfl_audit.only_fails(a, "sums")
assert a["code_matches_artifact"] is False  # informational: the deployed code is not the product's
assert ff["round"] == 1 and ff["tx"] and ff["detail"].startswith("lane 0:"), ff
assert bbvfl_audit.check(a, "sums")["failures"] == 1
PY

# one tampered contract per check: exactly that check fails, where it should, with its transaction
tampered() { # variant check round-or-"-" epoch-or-"-" client-index-or-"-" detail-substring
  local v=$1
  demo_may_fail "$v" BBVFL_ABI_DIR="$work/tamper/$v"
  local rc
  rc=$(audit "$v")
  check "$v: exit 3 (got $rc)" test "$rc" = 3
  check "$v: only $2 fails, round $3, epoch $4, client index $5" python3 - "$work/$v.audit.json" \
    "$2" "$3" "$4" "$5" "$6" <<'PY'
import sys
import bbvfl_audit
a = bbvfl_audit.load(sys.argv[1])
check, rnd, epoch, idx, detail = sys.argv[2:7]
ff = bbvfl_audit.only_fails(a, check)
assert detail in ff["detail"] and ff.get("tx"), ff
if rnd != "-": assert ff.get("round") == int(rnd), ff
if epoch != "-": assert ff.get("epoch") == int(epoch), ff
if idx != "-":
    # the client with that registration index (the audit's per-client figures name the index)
    who = ff.get("client")
    assert who, ff
    idx_of = {c["client"].lower(): c["index"] for c in a["figures"]["rewards_per_client"]}
    assert idx_of.get(who.lower()) == int(idx), (who, idx_of, ff)
PY
}
tampered pay rewards - 0 1 "rate x"
tampered count contributors 2 - - "covers 2 submissions; the round has 3 Submitted events"
tampered elect election - - - "participants[S mod n]"
tampered register registration - - 1 "public key is 32 bytes"
tampered metrics metrics - 1 - "metric above 1"
tampered params params - - - "does not match the constructor arguments"

if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed" >&2; exit 1; fi
echo "all audit demo checks passed"
bbvfl_skip_exit
