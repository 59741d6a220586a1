#!/usr/bin/env python3
"""Packed and optimistic gas rows of devnet/gas-report.sh, driven over raw JSON-RPC.

  devnet/gas-packed-rpc.py [--hardfork NAME] [--k K] [--rounds N] [--mode aggregate|optimistic|both]

The same sessions as gas-report.sh's run_packed (same Config, client keys and addresses, commit
secrets, payloads drawn by the same seeded generator and packing, same transactions in the same
order: M submits, then aggregate() by the deployer or postSum() by client 0, then the active
client's gradient), but each transaction is one HTTP request from this process instead of one
`cast` process, so a session takes seconds instead of many minutes on a loaded machine. Starts
the pinned anvil (devnet/tool.sh) on a free 127.0.0.1 port and stops it by its pid. Prints one
Markdown row per mode, as gas-report.sh --packed-only does. Keccak comes from anvil (web3_sha3).
"""
import argparse, json, os, random, socket, subprocess, sys, time, urllib.request

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
url = None


def rpc(method, params):
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
                                 {"Content-Type": "application/json"})
    r = json.loads(urllib.request.urlopen(req, timeout=600).read())
    if "error" in r:
        raise RuntimeError("%s: %s" % (method, r["error"]))
    return r["result"]


def keccak(data: bytes) -> bytes:
    return bytes.fromhex(rpc("web3_sha3", ["0x" + data.hex()])[2:])


def sel(sig):
    return keccak(sig.encode())[:4]


def word(x):
    return int(x).to_bytes(32, "big")


def enc_bytes(b):
    return word(len(b)) + b + b"\0" * ((-len(b)) % 32)


def send(frm, to, data, create=False):
    tx = {"from": frm, "data": "0x" + data.hex()}
    if not create:
        tx["to"] = to
    h = rpc("eth_sendTransaction", [tx])
    for _ in range(600):
        r = rpc("eth_getTransactionReceipt", [h])
        if r:
            break
        time.sleep(0.05)
    if r["status"] != "0x1":
        try:
            rpc("eth_call", [tx, hex(int(r["blockNumber"], 16) - 1)])
            why = "?"
        except RuntimeError as e:
            why = str(e)
        sys.exit("gas-packed-rpc: transaction %s (selector %s) reverted: %s" % (h, tx["data"][:10], why[:300]))
    return r


def bits(x):
    k = 0
    while (1 << k) <= x:
        k += 1
    return k


def pack(v, nb):
    out = bytearray()
    for j in range(0, len(v), 256):
        blk = v[j:j + 256]
        pb = (len(blk) + 7) // 8
        for k in range(nb):
            plane = bytearray(pb)
            for t, x in enumerate(blk):
                if (x >> k) & 1:
                    plane[t >> 3] |= 0x80 >> (t & 7)
            out += plane
    return bytes(out)


def packed(m, r, n, lv):
    """gas-report.sh's packed(): the m payloads of round r and their packed sum."""
    tot = [0] * n
    qs = []
    for i in range(m):
        g = random.Random(1000003 * i + r)
        v = [g.randint(0, lv) for _ in range(n)]
        tot = [a + b for a, b in zip(tot, v)]
        qs.append(pack(v, bits(lv)))
    return qs, pack(tot, bits(m * lv))


def session(m, b, p, lv, k, mode, hr):
    n = k * b * p
    name = "BbvflOptimisticAggregator" if mode == "optimistic" else "BbvflPackedAggregator"
    code = bytes.fromhex(json.load(open(os.path.join(root, "abi", name + ".json")))["bytecode"][2:])
    deployer = rpc("eth_accounts", [])[0]
    nb = (hr + 1) * k
    cfg = [m, b, p, lv, 200000, 0, nb, k, 0, 0, nb * b, 0, 0, 1, 1, 1, m * (hr + 1), 50, 50, 50, 50, 0, 0]
    agg = send(deployer, None, code + b"".join(word(x) for x in cfg), create=True)["contractAddress"]
    pks, addrs = [], []
    for i in range(m):
        pk = keccak(("bbvfl-gas-x-%d" % i).encode()) + keccak(("bbvfl-gas-y-%d" % i).encode())
        a = "0x" + keccak(pk)[12:].hex()
        pks.append(pk)
        addrs.append(a)
        rpc("anvil_impersonateAccount", [a])
        rpc("anvil_setBalance", [a, "0x56BC75E2D63100000"])
    for i in range(m):
        send(addrs[i], agg, sel("register(bytes)") + word(32) + enc_bytes(pks[i]))
    secrets = [keccak(("s%d" % i).encode()) for i in range(m)]
    chain = int(rpc("eth_chainId", []), 16)
    for i in range(m):
        send(addrs[i], agg, sel("commit(bytes32)") +
             keccak(secrets[i] + bytes.fromhex(addrs[i][2:]) + bytes.fromhex(agg[2:]) + word(chain)))
    for i in range(m):
        send(addrs[i], agg, sel("reveal(bytes32)") + secrets[i])
    active = "0x" + rpc("eth_call", [{"to": agg, "data": "0x" + sel("active()").hex()}, "latest"])[-40:]
    grad = bytes(n * 4)
    first = steady = ssub = sagg = cnt = 0
    for r in range(hr):
        qs, s = packed(m, r, n, lv)
        sub = 0
        for i in range(m):
            sub += int(send(addrs[i], agg, sel("submit(uint64,bytes)") + word(r) + word(64) + enc_bytes(qs[i]))["gasUsed"], 16)
        if mode == "optimistic":
            g = int(send(addrs[0], agg, sel("postSum(uint64,bytes32)") + word(r) + keccak(s))["gasUsed"], 16)
        else:
            heads, tails, off = b"", b"", 32 * m
            for q in qs:
                heads += word(off)
                e = enc_bytes(q)
                tails += e
                off += len(e)
            g = int(send(deployer, agg, sel("aggregate(uint64,bytes[])") + word(r) + word(64) + word(m) + heads + tails)["gasUsed"], 16)
        print("%s round %d: submits %d %s %d" % (mode, r, sub, "aggregate" if mode != "optimistic" else "postSum", g), file=sys.stderr)
        if r == 0:
            first = sub + g
        if r >= 8:
            steady += sub + g
            ssub += sub
            sagg += g
            cnt += 1
        send(active, agg, sel("postGradient(uint64,bytes,bytes)") + word(r) + word(96) + word(96 + 32 + len(grad)) + enc_bytes(grad) + enc_bytes(b""))
    cur = int(rpc("eth_call", [{"to": agg, "data": "0x" + sel("currentRound()").hex()}, "latest"]), 16)
    if cur != hr:
        sys.exit("gas-packed-rpc: %s session did not advance" % mode)
    return "%.1f" % (first / (m * n)), "%.1f" % (steady / cnt / (m * n)), ssub // cnt // m, sagg // cnt


def main():
    global url
    ap = argparse.ArgumentParser()
    ap.add_argument("--hardfork")
    ap.add_argument("--k", type=int, default=45)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--mode", default="both", choices=["aggregate", "optimistic", "both"])
    a = ap.parse_args()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cmd = [os.path.join(root, "devnet", "tool.sh"), "anvil", "--host", "127.0.0.1", "--port", str(port), "--accounts", "2",
           "--silent", "--gas-limit", "100000000"] + (["--hardfork", a.hardfork] if a.hardfork else [])
    anvil = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    try:
        for _ in range(600):
            try:
                rpc("eth_chainId", [])
                break
            except Exception:
                time.sleep(0.1)
        modes = ["aggregate", "optimistic"] if a.mode == "both" else [a.mode]
        for mode in modes:
            f, st, per, ag = session(5, 10, 16, 16, a.k, mode, a.rounds)
            c = "BbvflOptimisticAggregator (optimistic, postSum)" if mode == "optimistic" else "BbvflPackedAggregator (hashed, packed)"
            print("| %s | %s | plain | 5 | 10 | 16 | 16 | %d | 5 | %s | **%s** | %d | %d |" % (a.hardfork or "Prague/Osaka", c, a.k, f, st, per, ag), flush=True)
    finally:
        anvil.terminate()
        anvil.wait()


if __name__ == "__main__":
    main()
