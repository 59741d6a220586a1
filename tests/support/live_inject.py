"""Faults injected mid-session over anvil's own RPC, for the live-chain tests (test_live_chain.sh).

    python3 live_inject.py URL SESSION_JSON reorg D1 D2 ...   # anvil_reorg(Di, []) once the
        contract has logged 40, 60, 80, ... events (each after the previous one and 4 more blocks)
    python3 live_inject.py URL SESSION_JSON spike WEI BLOCKS  # the next BLOCKS blocks' base fee WEI
        (anvil_setNextBlockBaseFeePerGas before each), then back to the base fee before the spike,
        once the contract has logged 40 events

Waits for SESSION_JSON (the demo writes it after the deploy) to learn the contract. Prints one line
per fault injected (the block it was injected at). Gives up (exit 1) when the session does not get
that far in 600 s."""
import json
import os
import sys
import time

from bbvfl_chain import Chain

url, sess, kind, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
t0 = time.time()
while not os.path.exists(sess):
    if time.time() - t0 > 600:
        sys.exit("live_inject: no session file %s" % sess)
    time.sleep(0.05)
time.sleep(0.2)
c = Chain(url, json.load(open(sess))["contract"])


def head():
    return int(c.rpc("eth_blockNumber", []), 16)


def nlogs():
    return len(c.rpc("eth_getLogs", [{"address": c.contract, "fromBlock": "0x0", "toBlock": "latest"}]))


def wait_logs(n):
    while nlogs() < n:
        if time.time() - t0 > 600:
            sys.exit("live_inject: the session did not reach %d events" % n)
        time.sleep(0.05)


def wait_block_after(h):
    while head() <= h:
        if time.time() - t0 > 600:
            sys.exit("live_inject: no block after %d" % h)
        time.sleep(0.02)
    return head()


if kind == "reorg":
    for i, d in enumerate(args):
        wait_logs(40 + 20 * i)
        h = head()
        c.rpc("anvil_reorg", [int(d), []])
        print("reorg of depth %s at block %d" % (d, h), flush=True)
        h = head()
        for _ in range(4):
            h = wait_block_after(h)
elif kind == "spike":
    fee, blocks = int(args[0]), int(args[1])
    wait_logs(40)
    before = int(c.rpc("eth_getBlockByNumber", ["latest", False])["baseFeePerGas"], 16)
    h = head()
    first = None
    for _ in range(blocks):
        c.rpc("anvil_setNextBlockBaseFeePerGas", [hex(fee)])
        h = wait_block_after(h)
        first = first or h
    c.rpc("anvil_setNextBlockBaseFeePerGas", [hex(before)])
    print("base fee %d wei in blocks %d..%d, then %d wei again" % (fee, first, h, before), flush=True)
else:
    sys.exit("live_inject: unknown fault %s" % kind)
