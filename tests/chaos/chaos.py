#!/usr/bin/env python3
"""The chaos suite (issue 27, deliverable 6): one fault injected into a live on-chain session.

    chaos.py CASE            run one case (ctest: chaos_<CASE>, labels chaos and multiprocess)
    chaos.py list            the case names
    chaos.py summary [DIR]   the table of the results in DIR (markdown, on stdout)

Each case starts a stock anvil with 1 s blocks (`bbvfl devnet up --block-time 1 --hardfork default
--persist` on a free loopback port; stopped by its recorded pid), runs `bbvfl demo --rpc URL
--compare --reproducible-noise --seed 11` on it (the replay equals the chain only with the seed's
noise, which voids every epsilon: what this suite checks is the protocol, not privacy; 5 clients, 4 epochs, a window of a whole epoch, hashed aggregation: 8
rounds), and injects ONE fault mid-session from a thread of this driver, over anvil's own JSON-RPC
methods. Every injection is triggered by what the driver observes on the chain (a Submitted event
of round TRIGGER_ROUND in eth_getLogs, a block number, a pending transaction in txpool_content, a
client's log line), never by a sleep guessing a duration. The case passes in one of two ways only:

  finished  the demo exits 0, its on-chain test AUROC equals its same-seed off-chain replay
            (report.json: auroc == auroc_offchain_same_seed) and `bbvfl audit` says PASS (exit 0);
  stopped   the demo exits non-zero within the driver's deadline, its last error line names a cause,
            and `bbvfl audit` says INCOMPLETE (its own verdict and exit status, neither PASS nor FAIL).

Anything else fails the case: a wrong sum (audit FAIL), an AUROC different from the replay, a stop
the audit calls PASS, a session that neither finished nor stopped by the deadline (a silent stall:
the demo is then killed by its process group id), or a fault the driver could not inject (a case
never passes vacuously). Cases the issue requires to finish (MUST_FINISH) fail when they stop.

Never a wrong sum is checked twice: by the audit, and by the driver itself (every RoundCompleted sum
against the byte-wise sum of the payloads submitted to that round, read back from the chain).

Each case prints one JSON line `CHAOS-RESULT {...}` (outcome, blocks from the deploy to the
session's end or stop, wall seconds of the demo, what was injected, the cause) and writes it to
$BBVFL_CHAOS_RESULTS/<case>.json (default: <cwd>/chaos-results; every run is also appended to
history.jsonl there); `summary` compares each with the baseline case (a fault-free run of the same
session) for the extra blocks and wall time.
Environment: BBVFL_BIN, BBVFL_SOURCE_DIR (ctest sets them), BBVFL_CHAOS_TIMEOUT (driver deadline,
default 300 s), BBVFL_KEEP_TEST_DIR (keep the work folder), BBVFL_CHAOS_DEMO_FLAGS (more flags for
every case's demo, e.g. "--confirmations 3"). A case whose fault needs a feature not
there yet (the 7702 option, the proxy's getLogs caps) exits 77 (ctest: skipped) saying so; under
BBVFL_REQUIRE_SETUP=1 that is a failure instead (tests/support/skip.sh's rule).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SRC = os.environ.get("BBVFL_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from faultproxy import keccak256  # noqa: E402  (pure-Python Keccak-256, no subprocess per hash)

BIN = os.environ.get("BBVFL_BIN") or os.path.join(SRC, "build", "bbvfl")
DEADLINE = float(os.environ.get("BBVFL_CHAOS_TIMEOUT", "300"))
EPOCHS, SEED, TRIGGER_ROUND = 4, 11, 3
ROUND_TIMEOUT = 60
GWEI = 10 ** 9
# anvil's unlocked dev accounts 8 and 9: funded non-participants (the demo funds from account 0)
STRANGER = "0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f"
STRANGER2 = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720"
# fault-free blocks from the deploy to SessionEnded of this session, measured (the baseline case;
# its own result, when in the results folder, is used instead)
BASELINE_BLOCKS = 14
MUST_FINISH = {"frontrun_correct", "frontrun_wrong", "delegate_7702", "reorg_3", "basefee_100gwei_3blocks"}


def log(msg):
    print("[chaos %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


class Skip(Exception):
    pass


class RpcError(Exception):
    def __init__(self, method, err):
        super().__init__("%s: %s" % (method, err))
        self.err = err


def rpc(url, method, params, timeout=10):
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 {"content-type": "application/json"})
    o = json.load(urllib.request.urlopen(req, timeout=timeout))
    if "error" in o:
        raise RpcError(method, o["error"])
    return o["result"]


def sel(sig):
    return keccak256(sig.encode())[:4]


def h(n):
    return hex(n)


def word(n):
    return n.to_bytes(32, "big")


def enc_aggregate(rnd, payloads):
    """aggregate(uint64,bytes[]) calldata."""
    head = sel("aggregate(uint64,bytes[])") + word(rnd) + word(64)
    body = word(len(payloads))
    tails = b""
    offs = []
    for p in payloads:
        offs.append(32 * len(payloads) + len(tails))
        tails += word(len(p)) + p + b"\0" * ((-len(p)) % 32)
    return head + body + b"".join(word(o) for o in offs) + tails


class Abi:
    """The submission event as the checked-in ABI declares it: Submitted(round, client, hash), or
    SubmittedPayload(round, client, q) where the contract has it (the payload in the log)."""

    def __init__(self):
        abi = json.load(open(os.path.join(SRC, "abi", "BbvflHashAggregator.json")))["abi"]
        # h/live's hashed aggregator emits SubmittedPayload(round, client, q) instead of Submitted
        evs = {e["name"]: e for e in abi if e.get("type") == "event"}
        ev = evs.get("SubmittedPayload") or evs["Submitted"]
        self.sub_name = ev["name"]
        self.sub_inputs = ev["inputs"]
        self.sub_topic = "0x" + keccak256(("%s(%s)" % (self.sub_name, ",".join(i["type"] for i in ev["inputs"]))).encode()).hex()
        self.done_topic = "0x" + keccak256(b"RoundCompleted(uint64,uint8,bytes)").hex()
        self.ended_topic = "0x" + keccak256(b"SessionEnded(uint64)").hex()
        self.submit_sel = sel("submit(uint64,bytes)")

    def event_payload(self, data):
        """The payload carried in a Submitted event's data, or None when the event has none."""
        d = bytes.fromhex(data[2:])
        k = 0
        for i in self.sub_inputs:
            if i["indexed"]:
                continue
            if i["type"] == "bytes":
                off = int.from_bytes(d[32 * k:32 * k + 32], "big")
                n = int.from_bytes(d[off:off + 32], "big")
                return d[off + 32:off + 32 + n]
            k += 1
        return None


class Ctx:
    def __init__(self, name, work):
        self.name, self.work = name, work
        self.url = None
        self.port = None
        self.dn = os.path.join(work, "devnet")
        self.run = os.path.join(work, "run")
        self.stop = threading.Event()
        self.injected = []   # what the injector did (strings), for the result line
        self.inject_ok = False
        self.inject_err = None
        self.abi = Abi()
        self.demo_url = None
        self.demo_flags = []
        self.procs = []      # extra processes this driver started (proxy, clients): stopped by pid
        self.runner = None   # a session other than the demo's (the 7702 case)
        self.artificial_blocks = 0  # blocks the fault itself mined (anvil_mine): not counted
        self.demo = None

    # ---------------------------------------------------------------- chain observation
    def r(self, method, params, timeout=10):
        return rpc(self.url, method, params, timeout)

    def block(self, tag="latest"):
        return self.r("eth_getBlockByNumber", [tag, False])

    def head(self):
        return int(self.r("eth_blockNumber", []), 16)

    def logs(self, topics, frm=0):
        return self.r("eth_getLogs", [{"fromBlock": h(frm), "toBlock": "latest", "topics": topics}])

    def submitted(self, rnd):
        return self.logs([self.abi.sub_topic, "0x" + word(rnd).hex()])

    def wait(self, what, cond, secs=DEADLINE):
        """Polls cond() every 20 ms until it returns something truthy (returned); raises on stop/deadline."""
        t0 = time.time()
        while not self.stop.is_set():
            try:
                v = cond()
            except (OSError, RpcError, urllib.error.URLError):
                v = None
            if v:
                return v
            if time.time() - t0 > secs:
                raise RuntimeError("gave up waiting for %s after %d s" % (what, secs))
            time.sleep(0.02)
        raise RuntimeError("the session ended before %s" % what)

    def wait_trigger(self, rnd=TRIGGER_ROUND):
        self.wait("a Submitted event of round %d" % rnd, lambda: self.submitted(rnd))
        b = self.head()
        log("trigger: round %d has a submission (head block %d)" % (rnd, b))
        return b

    def contract(self):
        return json.load(open(os.path.join(self.run, "session.json")))["contract"]

    def call(self, to, data):
        return bytes.fromhex(self.r("eth_call", [{"to": to, "data": "0x" + data.hex()}, "latest"])[2:])

    def note(self, s):
        log("inject: " + s)
        self.injected.append(s)


# -------------------------------------------------------------------- the faults (injectors)

def inj_none(c):
    c.inject_ok = True


def inj_basefee_x100(c):
    c.wait_trigger()
    bf = int(c.block()["baseFeePerGas"], 16)
    new = max(bf, 1) * 100
    c.r("anvil_setNextBlockBaseFeePerGas", [h(new)])
    n = c.head()
    blk = c.wait("the next block", lambda: c.block(h(n + 1)))
    c.note("base fee %d -> %d wei (x100) from block %d (its base fee %d)" % (bf, new, n + 1, int(blk["baseFeePerGas"], 16)))
    c.inject_ok = True


def setup_maxfee(c):
    """Under the cap: when the demo has --max-fee-gwei (h/fees), a cap well above 100 gwei."""
    helptext = subprocess.run([BIN, "demo", "--help"], capture_output=True, text=True).stdout
    if "--max-fee-gwei" in helptext:
        c.demo_flags += ["--max-fee-gwei", "1000"]


def setup_confirm(c):
    """A reorg deeper than one block: the client runs as the README says for a chain that reorgs,
    with --confirmations at least the depth (clients act only on events that deep)."""
    c.demo_flags += ["--confirmations", "3"]


def inj_basefee_100gwei(c):
    c.wait_trigger()
    bf0 = int(c.block()["baseFeePerGas"], 16)
    hit = []
    while len(hit) < 3:
        n = c.head()
        c.r("anvil_setNextBlockBaseFeePerGas", [h(100 * GWEI)])
        c.wait("block %d" % (n + 1), lambda: c.head() > n)
        b = c.block(h(n + 1))
        if int(b["baseFeePerGas"], 16) == 100 * GWEI:
            hit.append(n + 1)
    c.r("anvil_setNextBlockBaseFeePerGas", [h(bf0)])
    c.note("base fee 100 gwei in blocks %s, then back to %d wei" % (hit, bf0))
    c.inject_ok = True


def inj_drop(c):
    c.wait_trigger(TRIGGER_ROUND - 1)
    subsel = "0x" + c.abi.submit_sel.hex()

    def pending_submit():
        pool = c.r("txpool_content", [])
        for frm, txs in pool.get("pending", {}).items():
            for nonce, tx in txs.items():
                if tx.get("input", "").startswith(subsel):
                    return tx
        return None
    tx = c.wait("a pending submit() in txpool_content", pending_submit)
    c.r("anvil_dropTransaction", [tx["hash"]])
    c.note("dropped pending submit %s from %s nonce %d" % (tx["hash"], tx["from"], int(tx["nonce"], 16)))
    c.inject_ok = True


def inj_reorg(depth):
    def f(c):
        b = c.wait_trigger()
        c.wait("block %d" % (b + 1), lambda: c.head() > b)
        before = c.block()["hash"]
        c.r("anvil_reorg", [depth, []])
        after = c.block()
        c.note("anvil_reorg depth %d at head %d (head hash %s -> %s)" % (depth, int(after["number"], 16), before[:10], after["hash"][:10]))
        c.inject_ok = True
    return f


def payload_of_log(c, contract, lg):
    """The payload of one Submitted log: from the event's data when it carries it, else from the
    calldata of a direct submit() call (None when neither has it)."""
    p = c.abi.event_payload(lg["data"])
    if p is None:
        tx = c.r("eth_getTransactionByHash", [lg["transactionHash"]])
        inp = bytes.fromhex(tx["input"][2:])
        if tx["to"] and tx["to"].lower() == contract.lower() and inp[:4] == c.abi.submit_sel:
            ln = int.from_bytes(inp[4 + 64:4 + 96], "big")
            p = inp[4 + 96:4 + 96 + ln]
    return p


def payloads_of(c, contract, rnd):
    """The payloads of round rnd in client index order, read from the chain."""
    raw = c.call(contract, sel("clients()"))
    n = int.from_bytes(raw[32:64], "big")
    order = ["0x" + raw[64 + 32 * i + 12:64 + 32 * i + 32].hex() for i in range(n)]
    got = {}
    for lg in c.submitted(rnd):
        got["0x" + lg["topics"][2][-40:]] = payload_of_log(c, contract, lg)
    return [got[a] for a in order if a in got]


def check_sums(c, session):
    """The driver's own check that no round's sum is wrong, independent of `bbvfl audit`: each
    RoundCompleted sum equals the byte-wise sum of the payloads submitted to that round before it
    (8-bit lanes, plain mode; the last submission of each client). Returns (checked, unchecked,
    wrong rounds)."""
    cp = session.get("contract_params", {})
    if cp.get("lane_bits") != 8 or cp.get("masked"):
        return 0, 0, []
    contract = session["contract"]
    checked, unchecked, wrong = 0, 0, []
    for lg in c.logs([c.abi.done_topic]):
        rnd = int(lg["topics"][1], 16)
        d = bytes.fromhex(lg["data"][2:])
        contributors = int.from_bytes(d[0:32], "big")
        off = int.from_bytes(d[32:64], "big")
        got = d[off + 32:off + 32 + int.from_bytes(d[off:off + 32], "big")]
        at = (int(lg["blockNumber"], 16), int(lg["logIndex"], 16))
        last = {}
        for s in c.submitted(rnd):
            if (int(s["blockNumber"], 16), int(s["logIndex"], 16)) < at:
                last[s["topics"][2]] = s
        ps = [payload_of_log(c, contract, s) for s in last.values()]
        if len(ps) != contributors or any(p is None for p in ps) or len(set(map(len, ps))) != 1:
            unchecked += 1
            continue
        checked += 1
        if bytes(min(sum(col), 255) for col in zip(*ps)) != got or any(sum(col) > 255 for col in zip(*ps)):
            wrong.append(rnd)
    return checked, unchecked, wrong


def inj_frontrun(wrong):
    def f(c):
        who = STRANGER2 if wrong else STRANGER
        c.wait_trigger(0)
        contract = c.contract()
        cur_sel = sel("currentRound()")
        part_sel = sel("participants()")
        sent = {}
        landed = reverted = 0
        while not c.stop.is_set():
            try:
                rnd = int.from_bytes(c.call(contract, cur_sel), "big")
                npart = int.from_bytes(c.call(contract, part_sel)[32:64], "big")
                # a participant's aggregate(rnd) waiting in the pool is a trigger too (the stranger
                # then goes out in the same block with a higher tip)
                agg = "0x" + sel("aggregate(uint64,bytes[])").hex()
                pooled = any(tx.get("input", "").startswith(agg) and tx["from"].lower() != who.lower()
                             and int(tx["input"][10:74], 16) == rnd
                             for txs in c.r("txpool_content", []).get("pending", {}).values() for tx in txs.values())
                if rnd not in sent and (pooled or len(c.submitted(rnd)) >= npart) \
                        and not c.logs([c.abi.done_topic, "0x" + word(rnd).hex()]):
                    ps = payloads_of(c, contract, rnd)
                    if len(ps) == npart and all(p is not None for p in ps):
                        if wrong:
                            ps[0] = bytes([ps[0][0] ^ 1]) + ps[0][1:]
                        bf = int(c.block()["baseFeePerGas"], 16)
                        tx = c.r("eth_sendTransaction", [{"from": who, "to": contract, "data": "0x" + enc_aggregate(rnd, ps).hex(),
                                                         "gas": h(8_000_000), "maxPriorityFeePerGas": h(20 * GWEI),
                                                         "maxFeePerGas": h(2 * bf + 40 * GWEI)}])
                        sent[rnd] = tx
                for r0, tx in list(sent.items()):
                    if tx is None:
                        continue
                    rc = c.r("eth_getTransactionReceipt", [tx])
                    if rc:
                        ok = rc["status"] == "0x1"
                        landed += ok
                        reverted += not ok
                        log("stranger's aggregate(%d) %s in block %d" % (r0, "landed" if ok else "reverted", int(rc["blockNumber"], 16)))
                        sent[r0] = None
            except (OSError, RpcError, urllib.error.URLError) as e:
                log("stranger: %s" % e)
            time.sleep(0.02)
        c.note("%s stranger %s sent aggregate() for %d rounds: %d landed first, %d reverted"
               % ("wrong-payload" if wrong else "front-running", who, len(sent), landed, reverted))
        c.inject_ok = (reverted if wrong else landed) > 0
    return f


def inj_gaslimit(c):
    c.wait_trigger()
    gl0 = int(c.block()["gasLimit"], 16)
    low = 1_000_000  # one aggregate() of this session is about 1.9 M gas, a submit() about 0.2 M
    c.r("evm_setBlockGasLimit", [h(low)])
    c.note("block gas limit %d (was %d) from block %d" % (low, gl0, c.head() + 1))
    c.inject_ok = True
    lows = []
    try:
        while len(lows) < 10:
            n = c.head()
            c.wait("block %d" % (n + 1), lambda: c.head() > n)
            for k in range(n + 1, c.head() + 1):
                if int(c.block(h(k))["gasLimit"], 16) == low and k not in lows:
                    lows.append(k)
    finally:
        c.r("evm_setBlockGasLimit", [h(gl0)])
        c.note("block gas limit restored to %d after %d blocks at %d" % (gl0, len(lows), low))


def inj_restart(c):
    c.wait_trigger()
    # mining paused first so the state dump is not taken in the middle of a block (see
    # tests/cli/test_onchain_devnet_restart.sh); interval mining off = no block after this one
    c.r("evm_setIntervalMining", [0])
    n = c.head()
    subprocess.run([BIN, "devnet", "down", "--dir", c.dn], check=True, stdout=subprocess.DEVNULL)
    c.note("node stopped at block %d" % n)
    logs = [os.path.join(c.run, "clients", str(m), "client.log") for m in range(5)]

    def all_noticed():
        k = 0
        for f in logs:
            try:
                k += "unreachable" in open(f, errors="replace").read()
            except OSError:
                pass
        return k == len(logs)
    c.wait("every client to log that the node is unreachable", all_noticed, 120)
    subprocess.run([BIN, "devnet", "up", "--dir", c.dn, "--port", str(c.port), "--persist", "--block-time", "1",
                    "--hardfork", "default", "--timeout", "120", "--json"], check=True, stdout=subprocess.DEVNULL)
    c.note("node restarted from its state on port %d at block %d" % (c.port, c.head()))
    c.inject_ok = True


def need(flagdesc, ok):
    if not ok:
        raise Skip(flagdesc)


def proxy_flags(kind):
    helptext = subprocess.run([sys.executable, os.path.join(SRC, "tests", "tools", "faultproxy.py"), "--help"],
                              capture_output=True, text=True).stdout
    if kind == "429":
        if "ratelimit_ra" in helptext:  # h/node: 429 with and without Retry-After
            return ["--mix", "ratelimit=0.03,ratelimit_ra=0.02", "--retry-after", "1", "--seed", "3"]
        return ["--mix", "status=0.05", "--status", "429", "--seed", "3"]
    rng = re.findall(r"--[a-z-]*logs[a-z-]*range[a-z-]*|--[a-z-]*range[a-z-]*logs[a-z-]*", helptext)
    res = re.findall(r"--[a-z-]*logs[a-z-]*result[a-z-]*|--[a-z-]*result[a-z-]*logs[a-z-]*", helptext)
    need("tests/tools/faultproxy.py has no eth_getLogs cap options yet (h/node adds a block-range and a result cap)",
         rng and res)
    return [rng[0], "500", res[0], "1000"]


def setup_proxy(kind):
    def f(c):
        flags = proxy_flags(kind)
        pf = os.path.join(c.work, "proxy.port")
        p = subprocess.Popen([sys.executable, os.path.join(SRC, "tests", "tools", "faultproxy.py"), "--target", c.url,
                              "--port-file", pf, "--log", os.path.join(c.work, "proxy.log")] + flags,
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(c.work, "proxy.err"), "w"))
        c.procs.append(p)
        t0 = time.time()
        while not os.path.exists(pf):
            if p.poll() is not None or time.time() - t0 > 30:
                raise RuntimeError("faultproxy did not start: %s" % open(os.path.join(c.work, "proxy.err")).read())
            time.sleep(0.02)
        c.demo_url = "http://127.0.0.1:%s" % open(pf).read().strip()
        c.note("demo and clients talk through faultproxy %s" % " ".join(flags))
    return f


def inj_getlogs_gap(c):
    """A session of 20 blocks never asks for 500: 600 empty blocks mined at once mid-session
    (anvil_mine) make every later query from an earlier block span more than the cap."""
    c.wait_trigger()
    c.r("anvil_mine", [h(600)])
    c.artificial_blocks = 600
    c.note("600 empty blocks mined at once (anvil_mine) at head %d, so later eth_getLogs ranges exceed 500" % c.head())
    c.inject_ok = True


def proxy_injected(c):
    n = 0
    try:
        for line in open(os.path.join(c.work, "proxy.log")):
            n += json.loads(line)["action"] != "pass"
    except OSError:
        pass
    c.note("faultproxy faulted %d requests" % n)
    c.inject_ok = n > 0


DEV7 = "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955"  # anvil dev account 7: deploys the test delegate
COLUMNS = ["0-5", "6-11", "12-17", "18-23", "24-29"]


def setup_7702(c):
    """A participant submitting through an EIP-7702 delegate: h/live's `bbvfl client
    --submit-via-self` and its test-only delegate contract/testonly/SelfExecutor.sol. The demo has
    no such option, so this case runs the session as a consortium (deploy + 5 clients, as
    tests/support/session.sh does) instead of the demo: no same-seed replay to compare with."""
    helptext = subprocess.run([BIN, "client", "--help"], capture_output=True, text=True).stdout
    sol = os.path.join(SRC, "contract", "testonly", "SelfExecutor.sol")
    need("`bbvfl client` has no --submit-via-self and/or contract/testonly/SelfExecutor.sol is absent "
         "(h/live adds both)", "--submit-via-self" in helptext and os.path.exists(sol))
    need("BBVFL_CAST (cast, for the type-4 delegation) is not set", os.environ.get("BBVFL_CAST"))
    c.runner = consortium_7702


def consortium_7702(c):
    """Runs the 7702 session; returns (exit status, stalled, error text) like the demo's."""
    os.makedirs(os.path.join(c.run, "clients"), exist_ok=True)
    js = ("const fs=require('fs'),path=require('path');const root=process.argv[1];"
          "const solc=require(path.join(root,'devnet/node_modules/solc'));"
          "const src=fs.readFileSync(path.join(root,'contract/testonly/SelfExecutor.sol'),'utf8');"
          "const inp={language:'Solidity',sources:{'S.sol':{content:src}},settings:{optimizer:{enabled:true,runs:200},"
          "evmVersion:'prague',outputSelection:{'*':{'*':['evm.bytecode.object']}}}};"
          "const r=JSON.parse(solc.compile(JSON.stringify(inp)));"
          "if((r.errors||[]).some(e=>e.severity==='error')){console.error(JSON.stringify(r.errors));process.exit(1);}"
          "process.stdout.write('0x'+r.contracts['S.sol'].SelfExecutor.evm.bytecode.object);")
    code = subprocess.run(["node", "-e", js, SRC], capture_output=True, text=True, check=True).stdout
    tx = c.r("eth_sendTransaction", [{"from": DEV7, "data": code, "gas": h(3_000_000)}])
    rc = c.wait("the delegate's deployment", lambda: c.r("eth_getTransactionReceipt", [tx]), 60)
    delegate = rc["contractAddress"]
    subprocess.run([BIN, "deploy", "--rpc", c.url, "--clients", "5", "--epochs", str(EPOCHS), "--seed", str(SEED),
                    "--aggregation", "hashed", "--window", "45", "--out", os.path.join(c.run, "session.json"), "--json"],
                   check=True, stdout=open(os.path.join(c.work, "deploy.json"), "w"))
    keys, addrs = [], []
    for m in range(5):
        k = os.path.join(c.work, "k%d.key" % m)
        out = subprocess.run([BIN, "key", "new", "--out", k, "--json"], capture_output=True, text=True, check=True).stdout
        keys.append(k)
        addrs.append(json.loads(out)["address"])
        c.r("anvil_setBalance", [addrs[m], h(100 * 10 ** 18)])
    # party 0 delegates its account to the test delegate (a type-4 transaction to another account)
    subprocess.run([os.environ["BBVFL_CAST"], "send", "--rpc-url", c.url, "--private-key", open(keys[0]).read().strip(),
                    "--auth", delegate, STRANGER, "--json"], check=True, stdout=subprocess.DEVNULL)
    want = "0xef0100" + delegate[2:].lower()
    got = c.r("eth_getCode", [addrs[0], "latest"]).lower()
    if got != want:
        raise RuntimeError("party 0's code is %s, not the delegation %s" % (got, want))
    c.note("party 0 (%s) delegated to %s; it runs with --submit-via-self" % (addrs[0], delegate))
    procs = []
    for m in range(5):
        d = os.path.join(c.run, "clients", str(m))
        os.makedirs(d, exist_ok=True)
        argv = [BIN, "client", "--session", os.path.join(c.run, "session.json"), "--key-file", keys[m], "--columns", COLUMNS[m],
                "--state-dir", d, "--labels", "--seed", str(SEED), "--party", str(m), "--round-timeout", str(ROUND_TIMEOUT),
                "--expire"] + (["--submit-via-self"] if m == 0 else [])
        procs.append(subprocess.Popen(argv, stdout=open(os.path.join(d, "client.log"), "w"), stderr=subprocess.STDOUT,
                                      start_new_session=True))
    c.procs += procs
    t_end = time.time() + DEADLINE
    rcs = []
    stalled = False
    for p in procs:
        try:
            rcs.append(p.wait(timeout=max(1, t_end - time.time())))
        except subprocess.TimeoutExpired:
            stalled = True
    if stalled:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        return 1, True, ""
    bad = [m for m, r in enumerate(rcs) if r != 0]
    return (1 if bad else 0), False, ("bbvfl: error: %d client(s) failed" % len(bad) if bad else "")


def inj_7702(c):
    c.wait_trigger(0)
    txs = [c.r("eth_getTransactionByHash", [lg["transactionHash"]]) for lg in c.submitted(0)]
    n = sum(1 for t in txs if t.get("type") == "0x4" or (t.get("to") or "").lower() != c.contract().lower())
    c.note("%d of round 0's submissions did not call submit() directly" % n)
    c.inject_ok = n > 0


# name -> (set-up before the demo or None, injector thread, after the demo or None)
CASES = {
    "baseline": (None, inj_none, None),
    "basefee_x100": (None, inj_basefee_x100, None),
    "basefee_100gwei_3blocks": (setup_maxfee, inj_basefee_100gwei, None),
    "drop_pending": (None, inj_drop, None),
    "reorg_1": (None, inj_reorg(1), None),
    "reorg_2": (setup_confirm, inj_reorg(2), None),
    "reorg_3": (setup_confirm, inj_reorg(3), None),
    "frontrun_correct": (None, inj_frontrun(False), None),
    "frontrun_wrong": (None, inj_frontrun(True), None),
    "delegate_7702": (setup_7702, inj_7702, None),
    "gaslimit_10blocks": (None, inj_gaslimit, None),
    "node_restart": (None, inj_restart, None),
    "getlogs_cap": (setup_proxy("cap"), inj_getlogs_gap, proxy_injected),
    "rpc_429": (setup_proxy("429"), inj_none, proxy_injected),
}


def last_error_line(text):
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.search(r"error|fail|cannot|could not|gave up|stall|timed out|revert|abort|INCOMPLETE", ln, re.I):
            return ln
    return lines[-1] if lines else ""


def client_errors(run):
    out = []
    d = os.path.join(run, "clients")
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        try:
            for ln in open(os.path.join(d, f, "client.log"), errors="replace"):
                if ln.startswith("bbvfl: error"):
                    out.append("client %s: %s" % (f, ln.strip()[:400]))
                    break
        except OSError:
            pass
    return out


def run_demo(c, name):
    """The demo's session; returns (exit status, stalled, start time)."""
    argv = [BIN, "demo", "--rpc", c.demo_url, "--epochs", str(EPOCHS), "--seed", str(SEED), "--compare", "--reproducible-noise",
            "--window", "45", "--aggregation", "hashed", "--round-timeout", str(ROUND_TIMEOUT),
            "--out", c.run, "--json"] + c.demo_flags + os.environ.get("BBVFL_CHAOS_DEMO_FLAGS", "").split()
    log("%s: %s" % (name, " ".join(argv)))
    t0 = time.time()
    out, err = open(os.path.join(c.work, "demo.out"), "w"), open(os.path.join(c.work, "demo.err"), "w")
    c.demo = subprocess.Popen(argv, stdout=out, stderr=err, start_new_session=True)
    try:
        return c.demo.wait(timeout=DEADLINE), False, t0
    except subprocess.TimeoutExpired:
        os.killpg(c.demo.pid, signal.SIGKILL)
        c.demo.wait()
        return c.demo.returncode, True, t0


def run_case(name, results):
    setup, injector, after = CASES[name]
    work = tempfile.mkdtemp(prefix="bbvfl-chaos-%s." % name)
    c = Ctx(name, work)
    res = {"case": name}
    try:
        up = subprocess.run([BIN, "devnet", "up", "--dir", c.dn, "--block-time", "1", "--hardfork", "default",
                             "--persist", "--json"], capture_output=True, text=True)
        if up.returncode != 0:
            raise RuntimeError("devnet up: %s %s" % (up.stderr, open(os.path.join(c.dn, "anvil.log")).read()[-2000:]))
        info = json.loads(up.stdout)
        c.url, c.port = info["rpc_url"], info["port"]
        c.demo_url = c.url
        if setup:
            setup(c)
        th_err = []

        def body():
            try:
                injector(c)
            except Exception as e:  # before the fault was in: the case fails; after: only said
                if c.inject_ok:
                    c.note("after the fault: %s" % e)
                else:
                    th_err.append("%s: %s" % (type(e).__name__, e))
        th = threading.Thread(target=body, daemon=True)
        th.start()
        if c.runner:
            t0 = time.time()
            try:
                rc, stalled, errtext0 = c.runner(c)
            except (subprocess.CalledProcessError, RuntimeError, RpcError, OSError) as e:
                rc, stalled, errtext0 = 1, False, "the session's set-up failed: %s" % e
                th_err.append(errtext0)
            with open(os.path.join(work, "demo.err"), "w") as f:
                f.write(errtext0)
        else:
            rc, stalled, t0 = run_demo(c, name)
        wall = time.time() - t0
        c.stop.set()
        th.join(30)
        if after:
            after(c)
        end_head = c.head()
        res.update(demo_exit=rc, wall_s=round(wall, 1), stalled=stalled)
        session = json.load(open(os.path.join(c.run, "session.json"))) if os.path.exists(os.path.join(c.run, "session.json")) else {}
        deploy_block = session.get("deploy_block")
        ended = c.logs([c.abi.ended_topic])
        end_block = int(ended[-1]["blockNumber"], 16) if ended else end_head
        res.update(deploy_block=deploy_block, end_block=end_block, session_ended=bool(ended),
                   blocks=(end_block - deploy_block - c.artificial_blocks) if deploy_block is not None else None)
        if c.artificial_blocks:
            res["blocks_mined_by_the_fault"] = c.artificial_blocks
        rep_path = os.path.join(c.run, "report.json")
        if rc == 0 and os.path.exists(rep_path):
            rep = json.load(open(rep_path))
            res.update(auroc=rep.get("auroc"), auroc_replay=rep.get("auroc_offchain_same_seed"))
        errtext = open(os.path.join(work, "demo.err"), errors="replace").read()
        if rc != 0:
            res["cause"] = last_error_line(errtext)
            # the demo names the failed clients; their own first error line names the cause
            cl = client_errors(c.run)
            if cl:
                res["client_cause"] = cl[0]
        if session:
            a = subprocess.run([BIN, "audit", "--session", os.path.join(c.run, "session.json"), "--quiet"],
                               capture_output=True, text=True, timeout=300)
            res.update(audit_exit=a.returncode, audit=(a.stdout.splitlines() or [a.stderr.strip()])[0][:160])
            with open(os.path.join(work, "audit.txt"), "w") as f:
                f.write(a.stdout + a.stderr)
        else:
            res.update(audit_exit=None, audit="no session.json (the demo did not deploy)")
        if session:
            ck, unck, wrong = check_sums(c, session)
            res.update(sums_checked=ck, sums_unchecked=unck)
            if wrong:
                res["wrong_sums"] = wrong
        res["injected"] = c.injected
        if th_err:
            res["inject_error"] = th_err[0]
        # the verdict
        problems = []
        if th_err or not c.inject_ok:
            problems.append("the fault was not injected (%s)" % (th_err[0] if th_err else "nothing observed"))
        if stalled:
            problems.append("silent stall: the demo neither finished nor stopped within %d s" % DEADLINE)
            outcome = "stall"
        elif rc == 0:
            outcome = "finished"
            if c.runner:
                res["auroc"] = "n/a: clients, not the demo (no same-seed replay)"
            elif res.get("auroc") is None or res.get("auroc") != res.get("auroc_replay"):
                problems.append("on-chain AUROC %s != same-seed replay %s" % (res.get("auroc"), res.get("auroc_replay")))
            if res["audit_exit"] != 0 or not res["audit"].startswith("bbvfl audit: PASS"):
                problems.append("audit of a finished session: %s (exit %s)" % (res["audit"], res["audit_exit"]))
        else:
            outcome = "stopped"
            if not res.get("cause"):
                problems.append("the demo stopped (exit %d) without a message naming the cause" % rc)
            if "INCOMPLETE" not in res["audit"] or res["audit_exit"] in (0, None):
                problems.append("audit of a stopped session is not INCOMPLETE: %s (exit %s)" % (res["audit"], res["audit_exit"]))
            if name in MUST_FINISH:
                problems.append("issue 27 requires this session to finish")
        if name == "basefee_100gwei_3blocks" and outcome == "finished":
            base = BASELINE_BLOCKS
            try:
                base = max(base, json.load(open(os.path.join(results, "baseline.json")))["blocks"])
            except (OSError, KeyError, TypeError, ValueError):
                pass
            if res["blocks"] is not None and res["blocks"] > base + 3 + 3:
                problems.append("%d blocks: more than 3 extra beyond the fault's 3 blocks (fault-free: %d)" % (res["blocks"], base))
        if res.get("wrong_sums"):
            problems.append("WRONG SUM in rounds %s (the driver's byte-wise sum of the submitted payloads)" % res["wrong_sums"])
        if "FAIL" in res.get("audit", "") and outcome != "stall":
            problems.append("the audit found a wrong result")
        res["outcome"] = outcome
        res["pass"] = not problems
        res["problems"] = problems
        if problems:
            for f in sorted(os.listdir(os.path.join(c.run, "clients"))) if os.path.isdir(os.path.join(c.run, "clients")) else []:
                tail = open(os.path.join(c.run, "clients", f, "client.log"), errors="replace").read().splitlines()[-8:]
                print("--- client %s log (last lines)\n%s" % (f, "\n".join(tail)))
            print("--- demo stderr (last lines)\n%s" % "\n".join(errtext.splitlines()[-15:]))
    finally:
        c.stop.set()
        if c.demo is not None and c.demo.poll() is None:
            os.killpg(c.demo.pid, signal.SIGKILL)
            c.demo.wait()
        for p in c.procs:
            if p.poll() is None:
                p.terminate()
                p.wait()
        subprocess.run([BIN, "devnet", "down", "--dir", c.dn], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if os.environ.get("BBVFL_KEEP_TEST_DIR"):
            print("kept %s" % work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    base = os.path.join(results, "baseline.json")
    if name != "baseline" and os.path.exists(base) and res.get("blocks") is not None:
        b = json.load(open(base))
        if b.get("blocks") is not None:
            res["extra_blocks"] = res["blocks"] - b["blocks"]
            res["extra_wall_s"] = round(res["wall_s"] - b["wall_s"], 1)
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, name + ".json"), "w") as f:
        json.dump(res, f)
    with open(os.path.join(results, "history.jsonl"), "a") as f:  # every run (stress: both copies)
        f.write(json.dumps(res) + "\n")
    print("CHAOS-RESULT " + json.dumps(res), flush=True)
    return res


def summary(results):
    rows = {}
    for f in sorted(os.listdir(results)):
        if f.endswith(".json") and f[:-5] in CASES:
            rows[f[:-5]] = json.load(open(os.path.join(results, f)))
    b = rows.get("baseline", {})
    print("| case | result | outcome | blocks | extra blocks | wall s | extra wall s | cause / problems |")
    print("|---|---|---|---|---|---|---|---|")
    for name in CASES:
        r = rows.get(name)
        if not r:
            continue
        if r.get("skipped"):
            print("| %s | SKIP | - | - | - | - | - | %s |" % (name, r["skipped"]))
            continue
        eb = r["blocks"] - b["blocks"] if b.get("blocks") is not None and r.get("blocks") is not None else None
        ew = round(r["wall_s"] - b["wall_s"], 1) if b.get("wall_s") is not None else None
        why = "; ".join([r.get("client_cause") or r.get("cause") or ""] + (r.get("problems") or [])).strip("; ")
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (name, "pass" if r["pass"] else "FAIL", r["outcome"], r.get("blocks"),
                                                        eb, r["wall_s"], ew, why.replace("|", "/")))


def main():
    results = os.environ.get("BBVFL_CHAOS_RESULTS") or os.path.join(os.getcwd(), "chaos-results")
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    if sys.argv[1] == "list":
        print("\n".join(CASES))
        return 0
    if sys.argv[1] == "summary":
        summary(sys.argv[2] if len(sys.argv) > 2 else results)
        return 0
    name = sys.argv[1]
    if name not in CASES:
        print("chaos.py: unknown case '%s' (chaos.py list)" % name, file=sys.stderr)
        return 2
    try:
        res = run_case(name, results)
    except Skip as e:
        if os.environ.get("BBVFL_REQUIRE_SETUP") == "1":
            print("FAIL: required by the set-up (BBVFL_REQUIRE_SETUP=1), missing: %s" % e, file=sys.stderr)
            return 1
        print("SKIP: %s" % e)
        os.makedirs(results, exist_ok=True)
        with open(os.path.join(results, name + ".json"), "w") as f:
            json.dump({"case": name, "skipped": str(e)}, f)
        return 77
    if not res["pass"]:
        print("FAIL: chaos %s: %s" % (name, "; ".join(res["problems"])), file=sys.stderr)
        return 1
    print("ok: chaos %s %s" % (name, res["outcome"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
