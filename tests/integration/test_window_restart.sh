#!/usr/bin/env bash
# A pipelined session (`--aggregation hashed --window 5 --staleness 1`: windows of 5 minibatches,
# a client forwards one window ahead of its applied gradients; M=3, 2 epochs = 2 x (9 windows + 1
# evaluation round)) through real `bbvfl client` processes, one client SIGKILLed mid-window and
# restarted with the same key and --state-dir. Every client freezes itself right after submitting
# round 3 (--pause-after-submit 4): with staleness 1 the window before it (round 2) is then still
# open for that client (its gradient not applied; for the active client not aggregated), so the
# restart has to pick up a pipeline of two submitted windows. The victim is the active client (it
# holds the head and calls aggregate()); BBVFL_TEST_KILL_PASSIVE=1 kills a passive one instead.
# Checked:
#  - every client exits 0; the victim logs "resuming at round" and that round 3 was "already
#    submitted before the restart";
#  - SubmittedPayload events: each client submitted each round exactly once (none twice, none lost);
#  - `bbvfl audit --session` passes;
#  - a third run of the same session where the victim instead stops itself after 6 finished rounds
#    (--exit-after-round 6: its checkpoint then names a window it already finished on chain) and
#    is restarted: it completes, the audit passes;
#  - the same session replayed without the kill gives the same chain: the test fixes each client's
#    election secret (state-dir/election-secret.hex, which the client takes when present, beside
#    the state dir's session-binding.json naming the session) and the
#    registration order, so a second deployment with the same seeds has the same session seed S; its
#    run, uninterrupted, must post bit-identical submissions (every SubmittedPayload q per round and
#    client) and the same per-epoch AUROC (MetricsPosted and the active client's summary) as the run
#    with the kill and the run with the stop. (`bbvfl train --offchain` cannot be given the chain's S, so the replay is on
#    chain; `bbvfl demo --compare` shows elsewhere that an uninterrupted on-chain run equals the
#    off-chain trainer.)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
: "${BBVFL_RPC_URL:?run under tests/with-devnet.sh}" "${BBVFL_BIN:?}"
session_test window-restart
# --reproducible-noise: the comparison is with another session (the replay), whose clients hold
# other private noise keys; only noise from the seed can be the same there (a restart with private
# noise resuming its own stream: test_vfl_train's test_party_noise_key)
SESSION=(--clients 3 --epochs 2 --seed 3 --window 5 --staleness 1 --aggregation hashed --reproducible-noise)
session_keys 3
for m in 0 1 2; do python3 -c 'import secrets; print(secrets.token_hex(32))' >"$work/secret$m.hex"; done
cols=("0-9" "10-19" "20-29")
client_flags=(--labels --seed 3 --round-timeout 90 --takeover-after 0)

# registered: how many Registered events the run's aggregator has emitted
registered() {
  python3 -c 'import os, sys
from bbvfl_chain import Chain
print(len(Chain(os.environ["BBVFL_RPC_URL"], sys.argv[1]).logs("Registered(address,uint8,bytes)")))' "$contract"
}
# client_registered M: client M (in $run) has registered (the fail ends the test when it exited first)
client_registered() {
  kill -0 "${pids[$1]}" 2>/dev/null || { cat "$run/c$1.out" >&2; fail "client $1 (${run#"$work/"}) exited before registering"; }
  [ "$(registered)" -gt "$1" ]
}

# setup RUN [client flags]: deploy, the fixed election secrets, the clients started in index order
setup() {
  run="$work/$1"
  shift
  mkdir -p "$run"
  session_deploy "${SESSION[@]}"
  local m
  for m in 0 1 2; do
    mkdir -p "$run/c$m" && chmod 700 "$run/c$m"
    # the state dir bound to this session (docs/ONCHAIN.md "The state dir") before the secret
    python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))
print(json.dumps({"chain_id": s["chain_id"], "contract": s["contract"]}))' "$run/session.json" \
      >"$run/c$m/session-binding.json"
    install -m 600 "$work/secret$m.hex" "$run/c$m/election-secret.hex"
    # shellcheck disable=SC2086
    client_start "$m" "$@" ${only_flags[$m]:-}
    # the next client registers only after this one (same indices in both runs)
    wait_until 120 "client $m (${run#"$work/"}) did not register" client_registered "$m"
  done
}

# ------------------------------------------------------------------ the run with the kill
only_flags=()
setup kill --pause-after-submit 4
wait_paused "$run" "${pids[@]}" || fail "the clients did not all reach round 3"
if [ -n "${BBVFL_TEST_KILL_PASSIVE:-}" ]; then pick_victim passive; else pick_victim active; fi
echo "killing client $victim (${addrs[$victim]}) after its submission of round 3"
kill_client "$victim"
resume_clients "$victim"
client_start "$victim"
wait_clients
grep -q "resuming at round" "$run/c$victim.out" || { cat "$run/c$victim.out" >&2; fail "client $victim did not resume"; }
grep -q "round 3: already submitted before the restart" "$run/c$victim.out" ||
  { cat "$run/c$victim.out" >&2; fail "client $victim did not recognise its round-3 submission after the restart"; }
grep -h "resuming at round\|already submitted" "$run/c$victim.out" | sed 's/^/  /'
audit_passes

# ------------------------------------------------------------------ a stop after a finished window
# The same session again (the same secrets: the same active client), the victim stopping itself
# after 6 finished rounds (--exit-after-round 6, as if killed): its last checkpoint then names a
# round it already finished on chain (for the active client: aggregated, gradient posted), which
# the restart must take from the chain instead of sending it again.
only_flags=()
only_flags[$victim]="--exit-after-round 6"
setup exit
if wait "${pids[$victim]}"; then fail "exit run: client $victim did not stop after 6 rounds"; fi
grep -q "stopped after 6 rounds" "$run/c$victim.out" || { cat "$run/c$victim.out" >&2; fail "exit run: client $victim: unexpected exit"; }
only_flags=()
client_start "$victim"
wait_clients
grep -q "resuming at round" "$run/c$victim.out" || { cat "$run/c$victim.out" >&2; fail "exit run: client $victim did not resume"; }
grep -h "resuming at round\|already submitted" "$run/c$victim.out" | sed 's/^/  exit run: /'
audit_passes >/dev/null

# ------------------------------------------------------------------ the same session, no kill
setup replay
wait_clients

python3 - "$work" "$victim" "${addrs[@]}" <<'PY'
import json, os, sys
from bbvfl_chain import Chain, addr
work, victim = sys.argv[1:3]
victim = int(victim)
addrs = [a.lower() for a in sys.argv[3:6]]
def run(name):
    c = Chain(os.environ["BBVFL_RPC_URL"], json.load(open(os.path.join(work, name, "deploy.json")))["contract"])
    logs = c.logs
    pp = c.params()
    assert pp["hashed"] == 1 and pp["K"] == 5 and pp["staleness"] == 1 and pp["M"] == 3, pp
    subs = {}
    for l in logs("SubmittedPayload(uint64,address,bytes)"):  # hashed mode: q in the log
        k = (int(l["topics"][1], 16), addr(l["topics"][2]))
        assert k not in subs, "%s: client %s submitted round %d twice" % (name, k[1], k[0])
        subs[k] = l["data"]
    want = {(r, a) for r in range(pp["total"]) for a in addrs}
    assert set(subs) == want, "%s: missing submissions %s" % (name, sorted(want - set(subs))[:5])
    el = logs("Elected(bytes32,address,uint64,uint8,uint8)")
    assert len(el) == 1, "%s: %d elections" % (name, len(el))
    seed = el[0]["data"][2:66]
    active = addr(el[0]["topics"][1])
    # MetricsPosted(uint32 indexed epoch, address indexed client, uint32 auroc, ...): the data words
    met = {int(l["topics"][1], 16): l["data"] for l in logs("MetricsPosted(uint32,address,uint32,uint32,uint64)")}
    assert sorted(met) == list(range(pp["epochs"])), (name, sorted(met))
    summ = json.load(open(os.path.join(work, name, "c%d" % addrs.index(active), "summary.json")))
    assert summ["active"], summ
    return dict(pp=pp, subs=subs, seed=seed, active=active, met=met, auroc=[e["auroc"] for e in summ["epochs"]])
a, b, x = run("kill"), run("replay"), run("exit")
for o, what in ((x, "the run stopped after 6 rounds"),):
    assert o["seed"] == b["seed"] and o["active"] == b["active"], what
    d = sorted(k for k in o["subs"] if o["subs"][k] != b["subs"][k])
    assert not d, "%s: submissions differ from the uninterrupted replay at %s" % (what, d[:6])
    assert o["met"] == b["met"] and o["auroc"] == b["auroc"], (what, o["auroc"], b["auroc"])
assert a["seed"] == b["seed"], "the replay has another session seed: the test's set-up is broken"
assert a["active"] == b["active"]
diff = sorted(k for k in a["subs"] if a["subs"][k] != b["subs"][k])
assert not diff, "submissions differ from the uninterrupted replay at (round, client) %s (victim %s)" % (diff[:6], addrs[victim])
assert a["met"] == b["met"], "MetricsPosted differ: %s vs %s" % (a["met"], b["met"])
assert a["auroc"] == b["auroc"], (a["auroc"], b["auroc"])
assert 0.5 < a["auroc"][-1] <= 1, a["auroc"]
print("ok: %d rounds x 3 clients submitted once each; %d submissions bit-identical to the uninterrupted replay; "
      "AUROC per epoch %s on all three chains (kill, stop after 6 rounds, replay)" % (a["pp"]["total"], len(a["subs"]), a["auroc"]))
PY
echo ok
