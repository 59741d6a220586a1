"""params() of a BbvflAggregator, decoded, and the layout of each round (the integration tests'
one copy of what client/binding/contract.h's bbvfl_cdec_params and bbvfl_cconfig_round do in C).

Params words, in order: clients, batch, dim, levels, betaMicro, masked, batchesPerEpoch (R),
window (K), evalRows (NE), evalRowsPerRound (ER), trainRows, testRows, staleness, hashed, epochs,
rewardPerSubmission, rewardPool, commitBlocks, revealBlocks, activeBlocks, roundTimeoutBlocks,
trainRoundsPerEpoch (T), evalRoundsPerEpoch (V), laneBits, token, totalRounds, maxCoords, curvEvery (L),
curvRows (S), curvRoundsPerEpoch (C): with L > 0 every epoch e with (e+1) % L == 0 and e+1 >= 2L has C
curvature rounds (LR's sqn) between its T windows and its V evaluation rounds."""

NAMES = ["M", "B", "P", "levels", "beta_micro", "masked", "R", "K", "NE", "ER", "train_rows", "test_rows",
         "staleness", "hashed", "epochs", "rate", "pool", "commit_blocks", "reveal_blocks", "active_blocks",
         "timeout_blocks", "T", "V", "lane_bits", "token", "total", "max_coords", "curv_every", "curv_rows", "C"]


def decode(data):
    """params() return data (bytes) -> dict of the words above (ints)."""
    return {k: int.from_bytes(data[32 * i:32 * i + 32], "big") for i, k in enumerate(NAMES)}


def locate(p, r):
    """Round r -> (epoch, position in it, the epoch has curvature rounds)."""
    per, L = p["T"] + p["V"], p.get("curv_every", 0)
    if L == 0 or r < L * per:
        return r // per, r % per, False
    blk = L * per + p["C"]
    b, o = divmod(r - L * per, blk)
    k = min(o // per, L - 1)
    return L + b * L + k, o - k * per, k == L - 1


def layout(p, r):
    """Round r -> dict(train, curv, epoch, index, nb, first, rows, coords)."""
    e, pos, ce = locate(p, r)
    tc = p["T"] + (p["C"] if ce else 0)
    if p["T"] <= pos < tc:
        first = (pos - p["T"]) * p["K"]
        rows = min(p["K"], p["curv_rows"] - first)
        return dict(train=True, curv=True, epoch=e, index=pos, nb=rows, first=first, rows=rows, coords=rows * p["P"])
    if pos < p["T"]:
        first = pos * p["K"]
        nb = min(p["K"], p["R"] - first)
        rows = nb * p["B"]
        return dict(train=True, curv=False, epoch=e, index=pos, nb=nb, first=first, rows=rows, coords=rows * p["P"])
    v = pos - tc
    first = v * p["ER"]
    rows = min(p["ER"], p["NE"] - first)
    return dict(train=False, curv=False, epoch=e, index=v, nb=0, first=first, rows=rows, coords=rows * p["P"])
