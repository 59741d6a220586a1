"""The Python side of the dropout tests (tests/support/dropout.sh): what dropout_session leaves,
read back. The test's inline Python gets `"$contract" "$work" "$victim" "${addrs[@]}"` as its
arguments and calls load(sys.argv):

    d = load(sys.argv)
    d.c        Chain of the session's contract (BBVFL_RPC_URL)
    d.pp       params(), decoded
    d.work     the test's work folder (the clients' dumped q in work/q)
    d.victim   the killed client (its key index); d.addrs the clients' addresses (lower case)
    d.index    {address: registration index}; d.vidx the victim's registration index
    d.q(i, r)  the unmasked q (bytes) the client with registration index i dumped for round r"""
import os
from types import SimpleNamespace

from bbvfl_chain import Chain


def load(argv):
    contract, work, victim = argv[1:4]
    addrs = [a.lower() for a in argv[4:]]
    c = Chain(os.environ["BBVFL_RPC_URL"], contract)
    index = c.registered()
    victim = int(victim)

    def q(i, r):
        with open(os.path.join(work, "q", "q-%d-%d.bin" % (i, r)), "rb") as f:
            return f.read()
    return SimpleNamespace(c=c, pp=c.params(), work=work, victim=victim, addrs=addrs, index=index,
                           vidx=index[addrs[victim]], q=q)
