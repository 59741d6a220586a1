#!/usr/bin/env python3
"""A fault-injecting JSON-RPC proxy for tests (Python standard library only).

Listens on 127.0.0.1 (a free port unless --port is given), forwards each HTTP POST to --target
and, for the requests it selects, injects one fault instead of (or on top of) forwarding:

  pass      forward unchanged (the default: a transparent proxy that logs)
  delay     wait --delay seconds, then forward (longer than the client's timeout: a slow node)
  hang      never answer until the client gives up (the connection is then closed)
  garbage   HTTP 200 with a body that is not JSON
  truncate  HTTP 200 with the node's real answer cut in half (a complete HTTP message whose
            JSON is truncated)
  cut       HTTP 200 announcing the full length, then the connection closes half way
  huge      HTTP 200 with an enormous body (--size bytes, default 100 MB) shaped like a JSON
            result; the client is expected to stop reading at its cap
  reset     the TCP connection is reset (RST) without an answer
  status    an HTTP error (--status, default 500) with a short text body
  swallow   eth_sendRawTransaction is answered with the right transaction hash (keccak256 of
            the raw bytes) but not forwarded: the transaction is "dropped from the pool"
  ratelimit     HTTP 429 "too many requests" without Retry-After (a hosted node under a burst)
  ratelimit_ra  HTTP 429 with "Retry-After: --retry-after" (seconds; with --retry-after-date as an
            HTTP date that many seconds ahead)

Hosted nodes' caps, on every eth_getLogs that is forwarded (whatever --mode): --logs-max-range N
refuses a query over more than N blocks and --logs-max-results N one whose answer holds more than
N logs, each with a JSON-RPC error as hosted nodes answer (HTTP 200; -32602 "query exceeds max
block range", -32005 "query returned more than N results"); logged as actions logs_range and
logs_results. "latest" (or no toBlock) is the node's current block number.

Mixed faults on top of --mode: --mix "reset=0.03,status=0.03,delay=0.02" gives every request not
already faulted by --mode each of these actions with its probability (same seed). --no-sync
answers eth_sendRawTransactionSync with "method not found" (-32601), so clients fall back to
eth_sendRawTransaction + receipt polling, the path swallow applies to.

Selection: only requests whose JSON-RPC method is in --methods (comma list; default all, for
swallow eth_sendRawTransaction); of those, the first --count (default: all) or each with
probability --prob (seeded by --seed). --skip N lets the first N matching requests through
before faults start.

The chosen port is printed on stdout and written to --port-file (atomically). Each request is
logged as one JSON line to --log: {"n", "method", "action", "params"}. SIGTERM stops it.
"""
import argparse
import http.client
import json
import os
import random
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# ---------------------------------------------------------------- Keccak-256 (original padding)
_RC = [0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
       0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
       0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
       0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
       0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
       0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008]
_ROT = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61], [28, 55, 25, 21, 56],
        [27, 20, 39, 8, 14]]
_M = (1 << 64) - 1


def _rol(v, n):
    return ((v << n) | (v >> (64 - n))) & _M if n else v


def _keccak_f(a):
    for rc in _RC:
        c = [a[x][0] ^ a[x][1] ^ a[x][2] ^ a[x][3] ^ a[x][4] for x in range(5)]
        d = [c[(x - 1) % 5] ^ _rol(c[(x + 1) % 5], 1) for x in range(5)]
        a = [[a[x][y] ^ d[x] for y in range(5)] for x in range(5)]
        b = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5):
                b[y][(2 * x + 3 * y) % 5] = _rol(a[x][y], _ROT[x][y])
        a = [[b[x][y] ^ ((~b[(x + 1) % 5][y]) & b[(x + 2) % 5][y]) for y in range(5)]
             for x in range(5)]
        a[0][0] ^= rc
    return a


def keccak256(data: bytes) -> bytes:
    rate = 136
    msg = bytearray(data) + b"\x01" + b"\x00" * ((-len(data) - 1) % rate)
    msg[-1] |= 0x80
    a = [[0] * 5 for _ in range(5)]
    for off in range(0, len(msg), rate):
        block = msg[off:off + rate]
        for i in range(rate // 8):
            x, y = i % 5, i // 5
            a[x][y] ^= struct.unpack_from("<Q", block, 8 * i)[0]
        a = _keccak_f(a)
    out = b"".join(struct.pack("<Q", a[i % 5][i // 5]) for i in range(4))
    return out


# ---------------------------------------------------------------- proxy
class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.n = 0
        self.matched = 0
        self.faults = 0
        self.rng = random.Random(args.seed)
        self.methods = set(m for m in args.methods.split(",") if m) if args.methods else None
        if self.methods is None and args.mode == "swallow":
            self.methods = {"eth_sendRawTransaction"}
        u = urllib.parse.urlsplit(args.target)
        if u.scheme != "http" or u.hostname not in ("127.0.0.1", "localhost", "::1"):
            sys.exit("faultproxy: --target must be an http:// URL on the loopback interface")
        self.host, self.port, self.path = u.hostname, u.port or 80, u.path or "/"
        self.logf = open(args.log, "a", buffering=1) if args.log else None
        self.mix = []
        for part in (args.mix or "").split(","):
            if not part:
                continue
            act, _, pr = part.partition("=")
            if act not in ("delay", "hang", "garbage", "truncate", "cut", "reset", "status", "ratelimit",
                           "ratelimit_ra") or not pr:
                sys.exit("faultproxy: --mix: '%s' is not ACTION=PROBABILITY" % part)
            self.mix.append((act, float(pr)))

    def decide(self, methods):
        """Returns (request number, action) for a request with these JSON-RPC methods."""
        n, action = self._decide(methods)
        if action == "pass" and self.mix:
            with self.lock:
                x = self.rng.random()
                for act, pr in self.mix:
                    if x < pr:
                        return n, act
                    x -= pr
        return n, action

    def _decide(self, methods):
        with self.lock:
            self.n += 1
            n = self.n
            if self.args.mode == "pass":
                return n, "pass"
            if self.methods is not None and not (set(methods) & self.methods):
                return n, "pass"
            self.matched += 1
            if self.matched <= self.args.skip:
                return n, "pass"
            if self.args.count is not None and self.faults >= self.args.count:
                return n, "pass"
            if self.args.prob < 1.0 and self.rng.random() >= self.args.prob:
                return n, "pass"
            self.faults += 1
            return n, self.args.mode

    def log(self, n, methods, action, params):
        if not self.logf:
            return
        with self.lock:
            self.logf.write(json.dumps({"n": n, "method": ",".join(methods), "action": action,
                                        "params": params}) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultproxy"

    def log_message(self, fmt, *a):  # quiet: the JSON log says what happened
        pass

    def forward(self, body):
        st = self.server.st
        c = http.client.HTTPConnection(st.host, st.port, timeout=120)
        try:
            c.request("POST", st.path, body=body, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def answer(self, status, body, ctype="application/json", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        st = self.server.st
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        methods, params, ids = [], None, [None]
        try:
            req = json.loads(body)
            reqs = req if isinstance(req, list) else [req]
            methods = [str(r.get("method")) for r in reqs if isinstance(r, dict)]
            ids = [r.get("id") for r in reqs if isinstance(r, dict)] or [None]
            if len(reqs) == 1 and isinstance(reqs[0], dict):
                params = reqs[0].get("params")
        except ValueError:
            pass
        if st.args.no_sync and methods == ["eth_sendRawTransactionSync"]:
            st.log(0, methods, "nosync", None)
            res = {"jsonrpc": "2.0", "id": ids[0],
                   "error": {"code": -32601, "message": "the method eth_sendRawTransactionSync does not exist"}}
            self.answer(200, json.dumps(res).encode())
            return
        n, action = st.decide(methods)
        if action == "swallow" and (len(methods) != 1 or methods[0] != "eth_sendRawTransaction"):
            action = "pass"
        st.log(n, methods, action, params)
        try:
            self.inject(action, body, ids[0], params)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def rpc_error(self, rid, code, msg, kind):
        st = self.server.st
        st.log(0, ["eth_getLogs"], kind, None)
        res = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": msg}}
        self.answer(200, json.dumps(res).encode())
        return True

    def block_of(self, tag):
        """A block tag of a filter as a number ("latest" and the like: the node's head)."""
        if isinstance(tag, str) and tag.startswith("0x"):
            return int(tag, 16)
        if tag == "earliest":
            return 0
        _, out = self.forward(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber",
                                          "params": []}).encode())
        return int(json.loads(out)["result"], 16)

    def logs_cap(self, body, rid, params):
        """Answers an eth_getLogs over a hosted node's caps with its JSON-RPC error (True), else
        None (forward it)."""
        st = self.server.st
        rng, cnt = st.args.logs_max_range, st.args.logs_max_results
        if not (rng or cnt) or not isinstance(params, list) or not params or not isinstance(params[0], dict):
            return None
        try:
            if json.loads(body).get("method") != "eth_getLogs":
                return None
        except (ValueError, AttributeError):
            return None
        f = params[0]
        if rng and "blockHash" not in f:
            lo, hi = self.block_of(f.get("fromBlock", "latest")), self.block_of(f.get("toBlock", "latest"))
            if hi - lo + 1 > rng:
                return self.rpc_error(rid, -32602, "query exceeds max block range %d" % rng, "logs_range")
        if cnt:
            status, out = self.forward(body)
            try:
                n = len(json.loads(out).get("result") or [])
            except (ValueError, AttributeError):
                n = 0
            if n > cnt:
                return self.rpc_error(rid, -32005, "query returned more than %d results" % cnt, "logs_results")
            self.answer(status, out)
            return True
        return None

    def inject(self, action, body, rid, params):
        st = self.server.st
        if action == "delay":
            time.sleep(st.args.delay)
            action = "pass"
        if action == "pass":
            refusal = self.logs_cap(body, rid, params)
            if refusal is not None:
                return
            status, out = self.forward(body)
            self.answer(status, out)
        elif action == "hang":
            # wait until the client closes the connection (or a long time passes)
            self.connection.settimeout(st.args.delay)
            try:
                self.connection.recv(1)
            except OSError:
                pass
            self.close_connection = True
        elif action == "garbage":
            self.answer(200, b"<html>\x00\xff not json at all " + os.urandom(64), "text/html")
        elif action == "truncate":
            status, out = self.forward(body)
            self.answer(200, out[: max(1, len(out) // 2)])
        elif action == "cut":
            status, out = self.forward(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out[: len(out) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif action == "huge":
            size = st.args.size
            head = b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":"0x'
            tail = b'"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            self.wfile.write(head)
            left = size - len(head) - len(tail)
            chunk = b"ab" * 32768
            while left > 0:
                k = min(left, len(chunk))
                self.wfile.write(chunk[:k])
                left -= k
            self.wfile.write(tail)
        elif action == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
        elif action == "status":
            self.answer(st.args.status, b"injected HTTP error\n", "text/plain")
        elif action == "ratelimit":
            self.answer(429, b"too many requests\n", "text/plain")
        elif action == "ratelimit_ra":
            ra = st.args.retry_after
            if st.args.retry_after_date:
                from email.utils import formatdate
                val = formatdate(time.time() + ra, usegmt=True)
            else:
                val = "%d" % ra
            self.answer(429, b"too many requests\n", "text/plain", [("Retry-After", val)])
        elif action == "swallow":
            raw = bytes.fromhex(params[0][2:]) if params and isinstance(params[0], str) else b""
            res = {"jsonrpc": "2.0", "id": rid, "result": "0x" + keccak256(raw).hex()}
            self.answer(200, json.dumps(res).encode())
        else:
            raise AssertionError(action)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--target", required=True, help="the node's URL (loopback only)")
    p.add_argument("--mode", default="pass",
                   choices=["pass", "delay", "hang", "garbage", "truncate", "cut", "huge", "reset",
                            "status", "swallow", "ratelimit", "ratelimit_ra"])
    p.add_argument("--methods", default="", help="comma list of JSON-RPC methods to fault")
    p.add_argument("--count", type=int, default=None, help="fault only the first N selected")
    p.add_argument("--skip", type=int, default=0, help="let the first N selected through")
    p.add_argument("--prob", type=float, default=1.0, help="fault probability per request")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--delay", type=float, default=5.0, help="seconds for delay/hang")
    p.add_argument("--size", type=int, default=100 * 1000 * 1000, help="bytes for huge")
    p.add_argument("--status", type=int, default=500, help="HTTP status for status")
    p.add_argument("--retry-after", type=int, default=1, help="seconds for ratelimit_ra")
    p.add_argument("--retry-after-date", action="store_true", help="ratelimit_ra: Retry-After as an HTTP date")
    p.add_argument("--logs-max-range", type=int, default=0, help="refuse eth_getLogs over more blocks")
    p.add_argument("--logs-max-results", type=int, default=0, help="refuse eth_getLogs with more logs")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", default=None)
    p.add_argument("--log", default=None, help="JSON lines, one per request")
    p.add_argument("--mix", default="", help="ACTION=PROB,... faults on top of --mode, for every method")
    p.add_argument("--no-sync", action="store_true", help="refuse eth_sendRawTransactionSync (-32601)")
    args = p.parse_args()
    st = State(args)
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.st = st
    port = srv.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print(port, flush=True)
    signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=srv.shutdown).start())
    try:
        srv.serve_forever(poll_interval=0.1)
    finally:
        srv.server_close()


if __name__ == "__main__":
    # sanity check of the hash the swallow mode answers with (Keccak-256 of the empty string)
    assert keccak256(b"").hex() == \
        "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    main()
