#!/usr/bin/env bash
# Labels split across clients (DP-BBVFL Algorithm 2, lines 11-14) through real client processes:
# `bbvfl deploy` (3 clients, 2 epochs), clients 0 and 1 hold the labels of one half of the rows
# each (--label-rows), client 2 holds none; whoever is elected, the session completes; holder 1
# stops after 20 rounds (as if killed) and is restarted. Then:
#  - labelHolders() is clients 0 and 1, declared by LabelHolder events;
#  - every TRAIN round has a LabelGradientPosted from every label holder other than the active
#    client (B x 1 binary32, zero on the rows that holder does not label), none for EVAL rounds;
#  - the label holders' training loss falls from epoch 1 to 2 and the test AUROC over their own
#    labelled test rows is above chance;
#  - `bbvfl audit` passes (it checks the posts too), `head` replaying every TRAIN round bit for bit;
#  - bad --label-rows gets a clear error before anything touches the chain.
# Window variants (ctest test_onchain_labels_window_sh, _hashed_sh): BBVFL_TEST_WINDOW=K deploys
# windows of K minibatches (a post is then K x B rows x 1 binary32 per window), BBVFL_TEST_AGG=hashed
# hashed aggregation (BBVFL_TEST_STALENESS=s with it); holder 1 then stops after 6 rounds (a 2-epoch
# session of K=5 has 20).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../support/session.sh"
session_test labels
session_variant
stop_after=20
[ -n "${BBVFL_TEST_WINDOW:-}" ] && stop_after=6
session_deploy --clients 3 --epochs 2 --seed 7 ${variant[@]+"${variant[@]}"}
nrows=$(json_get "$work/session.json" training n_rows)
half=$((nrows / 2))

# bad --label-rows: clear errors, nothing sent
"$BBVFL_BIN" key new --out "$work/bad.key" --json >/dev/null
for spec in "0-$nrows" "5-2" "x" "0-3/4-5"; do
  if "$BBVFL_BIN" client --session "$work/session.json" --key-file "$work/bad.key" --columns 0-9 --label-rows "$spec" \
    --state-dir "$work/bad" 2>"$work/bad.err"; then fail "--label-rows $spec accepted"; fi
  grep -q -- "--label-rows" "$work/bad.err" || fail "no clear message for --label-rows $spec: $(cat "$work/bad.err")"
done

session_keys 3
cols=("0-9" "10-19" "20-29")
lab=("--label-rows=0-$((half - 1))" "--label-rows=$half-$((nrows - 1))" "")
client_flags=(--seed 7 --round-timeout 60)
# label holder 1 stops after 20 rounds as if killed (--exit-after-round: at a deterministic point;
# a whole session takes a second or two) and is restarted: it resumes from its checkpoint (head
# included) and never posts twice for a round. Whether it is the active client or not depends on
# the election; both cases must work.
victim=1
client_start 0 ${lab[0]}
client_start 1 ${lab[1]} --exit-after-round $stop_after
client_start 2
if wait "${pids[$victim]}"; then fail "client $victim did not stop after $stop_after rounds"; fi
grep -q "stopped after $stop_after rounds" "$work/c$victim.out" || { cat "$work/c$victim.out" >&2; fail "client $victim: unexpected exit"; }
client_start "$victim" ${lab[$victim]}
wait_clients
grep -h "active client" "$work"/c*.out | head -n 1
grep -q "resuming at round" "$work/c$victim.out" || { cat "$work/c$victim.out" >&2; fail "holder $victim did not resume"; }
logs_hold_no_secret

python3 - "$contract" "$work" "$victim" "${addrs[@]}" <<'PY'
import json, os, struct, sys
import bbvfl_params
from bbvfl_chain import Chain, addr, data, word
contract, work = sys.argv[1:3]
victim = int(sys.argv[3])
addrs = [a.lower() for a in sys.argv[4:7]]
c = Chain(os.environ["BBVFL_RPC_URL"], contract)
pp = c.params()
B, T, V, total = pp['B'], pp['T'], pp['V'], pp['total']
w, agg = os.environ.get("BBVFL_TEST_WINDOW"), os.environ.get("BBVFL_TEST_AGG")
assert (not w or pp["K"] == int(w)) and pp["hashed"] == (agg == "hashed"), pp
reg = {addr(l["topics"][1]): word(data(l), 0) for l in c.logs("Registered(address,uint8,bytes)")}
lh = {addr(l["topics"][1]): word(data(l), 0) for l in c.logs("LabelHolder(address,uint8)")}
assert sorted(lh) == sorted(addrs[:2]), (lh, addrs)
assert all(lh[a] == reg[a] for a in lh), "LabelHolder index differs from Registered"
assert word(c.call("labelHolders()"), 0) == sum(1 << reg[a] for a in addrs[:2]), "labelHolders() is not clients 0 and 1"
active = "0x" + c.call("active()")[12:32].hex()
others = [a for a in addrs[:2] if a != active]
posts = {}
for l in c.logs("LabelGradientPosted(uint64,address,bytes)"):
    r = int(l["topics"][1], 16); who = addr(l["topics"][2])
    d = data(l)
    g = d[64:64 + word(d, 1)]
    L = bbvfl_params.layout(pp, r)
    rows = L['rows']
    assert L['train'] and rows == L['nb'] * B and L['nb'] == min(pp['K'], pp['R'] - L['first']), L
    assert len(g) == 4 * rows, "round %d: a label gradient of %d bytes, not 4 x %d rows (window of %d)" % (r, len(g), rows, L['nb'])
    vals = struct.unpack(">%df" % rows, g)
    assert all(v == v and abs(v) <= 1.0 / B + 1e-6 for v in vals), vals
    assert (r, who) not in posts, "two posts of one holder for round %d" % r
    posts[(r, who)] = vals
train = [r for r in range(total) if r % (T + V) < T]
for r in range(total):
    for a in others:
        assert ((r, a) in posts) == (r in train), "round %d: post of %s %s" % (r, a, "missing" if r in train else "on an EVAL round")
assert not any(a == active for (_, a) in posts), "the active client posted a label gradient"
open(work + "/posts", "w").write(str(len(posts)))
print("active client: %s" % ("client %d" % addrs.index(active) if active in addrs else active))
print("ok: %d label gradient posts (%d train rounds x %d holders besides the active client %s)" % (len(posts), len(train), len(others), active))

for m in range(3):
    s = json.load(open("%s/c%d/summary.json" % (work, m)))
    assert s["label_split"] is True
    assert s["label_holder"] == (m < 2), (m, s)
    if m < 2:
        eps = s["epochs"]
        assert len(eps) == 2 and s["labelled_test_rows"] > 0, s
        # the restarted holder's epoch-1 training loss covers only the rounds after its restart
        if m != victim:
            assert eps[1]["train_loss"] < eps[0]["train_loss"], ("training loss did not fall", m, eps)
        assert eps[1]["test_loss"] < 0.6931, ("test loss not below chance (ln 2)", m, eps)
        assert eps[1]["auroc"] > 0.6, ("AUROC over its labelled test rows at chance", m, eps)
        if addrs[m] != active:  # the restarted holder counts the posts of its second process only
            assert (s["label_posts"] == len(train)) if m != victim else (0 < s["label_posts"] < len(train)), \
                (m, s["label_posts"], len(train))
        else:
            assert s["label_posts"] == 0, s
        print("client %d: %d labelled test rows, train loss %s -> %.4f, AUROC %.4f" %
              (m, s["labelled_test_rows"], eps[0]["train_loss"], eps[1]["train_loss"], eps[1]["auroc"]))
    else:
        assert s["label_posts"] == 0 and s["labelled_test_rows"] == 0, s
        if s["active"]:  # an active client without labels measured nothing, and says so
            assert all(e["auroc"] is None and e["test_loss"] is None for e in s["epochs"]), s["epochs"]
PY

audit_passes --json >/dev/null
python3 - "$work/audit.txt" "$work/posts" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
posts = int(open(sys.argv[2]).read())
ck = {c["name"]: c for c in a["checks"]}
assert a["ok"] and ck["gradients"]["status"] == "PASS", a["checks"]
# the audit checked every label gradient post (holder, once, open complete TRAIN round, length)
assert ck["gradients"]["checked"] == a["figures"]["gradients"] + posts, (ck["gradients"], posts)
assert ck["registration"]["checked"] == 3 + 2, ck["registration"]  # 3 Registered + 2 LabelHolder
# the active client replayed (the check `head`): every TRAIN round, bit for bit, from the holders'
# posts and its own rows (also when the restarted holder is the active client)
assert ck["head"]["status"] == "PASS" and ck["head"]["checked"] == a["figures"]["gradients"], ck["head"]
assert a["head"]["exact"] == a["figures"]["gradients"], a["head"]
print("audit ok: %d gradient and label-gradient posts checked" % ck["gradients"]["checked"])
PY
echo ok
