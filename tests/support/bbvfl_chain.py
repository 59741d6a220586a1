"""The integration tests' one copy of reading a chain from Python: JSON-RPC over plain urllib (not
`cast call`: see chain.sh), event logs by signature, argument-less contract calls, and the ABI
words and byte strings the tests take apart. tests/support/session.sh puts this folder on
PYTHONPATH, so a test's inline Python says `from bbvfl_chain import Chain, word, dyn_bytes`.

    c = Chain(url, contract)     # url: the node; contract: 0x... (None for rpc() alone)
    c.rpc(method, params)        # the result; AssertionError naming the node's error object
    c.logs("Submitted(uint64,address,bytes32)")  # every log of that event of the contract
    c.call("params()")           # the return data (bytes) of an argument-less call
    c.params()                   # params() decoded (bbvfl_params.decode)
    c.calldata(log)              # the input (bytes) of the transaction that emitted the log
    c.registered()               # {address: registration index} from the Registered events
    c.completed()                # [(round, submissions, sum bytes, log)] from the RoundCompleted events

keccak() runs `cast keccak` (BBVFL_CAST): Python's hashlib has SHA3, not Keccak-256."""
import json
import os
import subprocess
import urllib.request

import bbvfl_params


def keccak(hexdata):
    """0x-hex bytes -> 0x + 64 hex digits (Keccak-256)."""
    return subprocess.check_output([os.environ["BBVFL_CAST"], "keccak", hexdata], text=True).strip()


def topic(sig):
    """An event or function signature -> its Keccak-256 (topic 0; the first 10 characters are a selector)."""
    return keccak("0x" + sig.encode().hex())


def word(b, i):
    """The i-th 32-byte word of ABI data, as an int."""
    return int.from_bytes(b[32 * i:32 * i + 32], "big")


def dyn_bytes(b, i):
    """The byte string whose offset is the i-th head word of ABI data."""
    off = word(b, i)
    n = word(b, off // 32)
    return b[off + 32:off + 32 + n]


def addr(t):
    """An address-typed topic (or word in hex) -> 0x + 40 lower-case hex digits."""
    return "0x" + t[-40:].lower()


def data(log):
    """A log's data field as bytes."""
    return bytes.fromhex(log["data"][2:])


def pos(log):
    """A log's place in the chain, for ordering: (block, index in block)."""
    return (int(log["blockNumber"], 16), int(log["logIndex"], 16))


class Chain:
    def __init__(self, url, contract=None, timeout=30):
        self.url, self.contract, self.timeout = url, contract, timeout

    def rpc(self, method, params):
        req = urllib.request.Request(self.url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                                           "params": params}).encode(),
                                     {"content-type": "application/json"})
        o = json.load(urllib.request.urlopen(req, timeout=self.timeout))
        assert "error" not in o, o
        return o["result"]

    def logs(self, sig):
        return self.rpc("eth_getLogs", [{"address": self.contract, "fromBlock": "0x0", "toBlock": "latest",
                                         "topics": [topic(sig)]}])

    def call(self, sig, args=""):
        sel = topic(sig)[:10]
        return bytes.fromhex(self.rpc("eth_call", [{"to": self.contract, "data": sel + args}, "latest"])[2:])

    def params(self):
        return bbvfl_params.decode(self.call("params()"))

    def calldata(self, log):
        return bytes.fromhex(self.rpc("eth_getTransactionByHash", [log["transactionHash"]])["input"][2:])

    def registered(self):
        return {addr(l["topics"][1]): word(data(l), 0) for l in self.logs("Registered(address,uint8,bytes)")}

    def completed(self):
        out = []
        for l in self.logs("RoundCompleted(uint64,uint8,bytes)"):
            d = data(l)
            out.append((int(l["topics"][1], 16), word(d, 0), dyn_bytes(d, 1), l))
        return out
