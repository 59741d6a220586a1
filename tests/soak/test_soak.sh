#!/usr/bin/env bash
# Soak: one long on-chain session with 10 client processes (`bbvfl demo --clients 10` forks them,
# its own embedded anvil), at least BBVFL_SOAK_ROUNDS rounds (default 100, the CI form; the full
# form is BBVFL_SOAK_ROUNDS=500). A sampler reads every client's VmRSS (/proc/PID/status) and open
# file descriptors (/proc/PID/fd, not counting the temporary file of a checkpoint being written at
# that instant) five times a second: "start" is the first sample once the session is
# past round 10 (election done, buffers allocated), "end" the last sample before the client exits.
# Checked: the demo exits 0 with every round done; every client's RSS grew by at most 512 kB plus
# 1 kB per sampled round (not checked under ASan, whose quarantine grows by design: BBVFL_SOAK_RSS_CHECK=0)
# and its fd count did not grow; afterwards no process (client or anvil) of the run is left.
# Prints the figures (one line per client) and writes them to $BBVFL_SOAK_REPORT when set.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
rounds=${BBVFL_SOAK_ROUNDS:-100}
work=$(mktemp -d "${TMPDIR:-/tmp}/bbvfl-soak.XXXXXX")
demo=""
cleanup() {
  [ -n "$demo" ] && kill -INT "$demo" 2>/dev/null && wait "$demo" 2>/dev/null || true
  if [ -n "${BBVFL_KEEP_TEST_DIR:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
export OPENBLAS_NUM_THREADS=1
# the bundled table gives 45 training rounds + 1 evaluation round (every test row) per epoch at
# the default window of one minibatch (checked below)
epochs=$(( (rounds + 45) / 46 ))
run="$work/run"
# everything the sampler needs is ready before the demo starts: a session of a few seconds must not
# be over before a slow start of the sampler on a loaded machine
sel=$("$BBVFL_CAST" sig "currentRound()")
"$BBVFL_BIN" demo --clients 10 --epochs "$epochs" --seed 11 --out "$run" --round-timeout 300 --json \
  >"$work/demo.out" 2>"$work/demo.err" &
demo=$!

python3 - "$run" "$demo" "$sel" >"$work/samples.json" <<'PY'
import json, os, sys, time, urllib.request
run, demo, sel = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False
def clients():
    # the demo forks its 10 clients (run/local_clients.c), each with its stdout on its own
    # RUN/clients/M/client.log. The demo's other children (the embedded anvil, a sanitizer's
    # symbolizer) show the demo's command line between fork and exec, so it is the log, not the
    # command line, that says which process is a client; a client's own children (a symbolizer)
    # have the client as their parent
    out = []
    logs = os.path.join(os.path.realpath(run), "clients")
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            out1 = os.readlink("/proc/%s/fd/1" % d)
            ppid = int(open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == demo and out1.startswith(logs + "/") and out1.endswith("/client.log"):
            out.append(int(d))
    return out
def sample(pid):
    try:
        rss = [int(l.split()[1]) for l in open("/proc/%d/status" % pid) if l.startswith("VmRSS:")][0]
        fds = 0
        for f in os.listdir("/proc/%d/fd" % pid):
            try:
                if ".tmp." in os.readlink("/proc/%d/fd/%s" % (pid, f)):
                    continue  # a checkpoint being written atomically at this instant
            except OSError:
                continue
            fds += 1
        return rss, fds
    except (OSError, IndexError):
        return None
url = contract = None
rnd, st = 0, {}
while alive(demo):
    if url is None and os.path.exists(run + "/session.json"):
        try:
            s = json.load(open(run + "/session.json"))
            url, contract = s["rpc_url"], s["contract"]
        except (ValueError, KeyError):
            pass
    if url:
        try:
            req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_call",
                                         "params": [{"to": contract, "data": sel}, "latest"]}).encode(),
                                         {"content-type": "application/json"})
            rnd = int(json.load(urllib.request.urlopen(req, timeout=5))["result"], 16)
        except Exception:
            pass
    for pid in clients():
        v = sample(pid)
        if v is None:
            continue
        e = st.setdefault(pid, {"pid": pid})
        if "start_rss_kb" not in e and rnd >= 10:
            e["start_rss_kb"], e["start_fds"], e["start_round"] = v[0], v[1], rnd
        e["end_rss_kb"], e["end_fds"], e["end_round"] = v[0], v[1], rnd
        e["max_rss_kb"] = max(e.get("max_rss_kb", 0), v[0])
    time.sleep(0.2)
json.dump(sorted(st.values(), key=lambda e: e["pid"]), sys.stdout)
PY
set +e
wait "$demo"
drc=$?
set -e
demo=""
[ "$drc" = 0 ] || { tail -20 "$work/demo.err" >&2; fail "bbvfl demo exit $drc"; }

# no process of the run left (clients, the embedded anvil: both name the run folder); the demo
# has waited for its children, so any left over after 10 s of looking is a leak
left=$(python3 - "$run" <<'PY'
import os, sys, time
run = sys.argv[1].encode()
def left():
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                cmd = open("/proc/%s/cmdline" % d, "rb").read()
            except OSError:
                continue
            if run in cmd:
                out.append("%s %s" % (d, cmd.replace(b"\0", b" ").decode(errors="replace")))
    return out
end = time.time() + 10
while left() and time.time() < end:
    time.sleep(0.1)
print("\n".join(left()))
PY
)
[ -z "$left" ] || { echo "$left" >&2; fail "processes of the run are still there"; }
# nor anvil's scratch states (devnet down deletes RUN/devnet/anvil-cache)
cache=$(find "$run" -name anvil-cache)
[ -z "$cache" ] || fail "anvil's state cache was left behind: $cache"

python3 - "$work/samples.json" "$run/session.json" "$rounds" "${BBVFL_SOAK_RSS_CHECK:-1}" "${BBVFL_SOAK_REPORT:-}" <<'PY'
import json, sys
samples, session, want, rss_check, report = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
st = json.load(open(samples))
cp = json.load(open(session))["contract_params"]
total = (cp["train_rounds"] + cp["eval_rounds"]) * cp["epochs"]
assert total >= want, "the session has %d rounds, fewer than %d" % (total, want)
assert len(st) == 10, "sampled %d client processes, expected 10" % len(st)
bad = []
for e in st:
    assert "start_rss_kb" in e, "client pid %d was never sampled past round 10" % e["pid"]
    g = e["end_rss_kb"] - e["start_rss_kb"]
    print("client pid %d: RSS %d kB at round %d -> %d kB at round %d (%+d kB, peak %d kB); fds %d -> %d"
          % (e["pid"], e["start_rss_kb"], e["start_round"], e["end_rss_kb"], e["end_round"], g, e["max_rss_kb"],
             e["start_fds"], e["end_fds"]))
    assert e["end_round"] >= total - 60, "client pid %d: last sample at round %d of %d" % (e["pid"], e["end_round"], total)
    # a steady leak must show: at most 512 kB of one-off growth (the active client's first
    # end-of-epoch work allocated +248 kB once in a CI-form run) plus 1 kB per sampled round:
    # healthy clients grow by 0-8 kB over the CI form's ~100 rounds and by at most +60 kB over 500;
    # a 6 kB/round leak fails the CI form, a 2 kB/round leak the 500-round run
    span = e["end_round"] - e["start_round"]
    if rss_check and g > 512 + span:
        bad.append("pid %d RSS +%d kB over %d rounds" % (e["pid"], g, span))
    if e["end_fds"] > e["start_fds"]:
        bad.append("pid %d fds %d -> %d" % (e["pid"], e["start_fds"], e["end_fds"]))
print("soak: %d rounds, 10 clients; RSS start mean %.0f kB, end mean %.0f kB" % (
    total, sum(e["start_rss_kb"] for e in st) / 10, sum(e["end_rss_kb"] for e in st) / 10))
if report:
    json.dump({"rounds": total, "clients": st}, open(report, "w"), indent=1)
assert not bad, bad
PY
echo ok
