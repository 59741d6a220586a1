"""params() of a BbvflAggregator, decoded, and the layout of each round (the integration tests'
one copy of what client/vfl/contract.h's bbvfl_cdec_params and bbvfl_cconfig_round do in C).

Params words, in order: clients, batch, dim, levels, betaMicro, masked, batchesPerEpoch (R),
window (K), evalRows (NE), evalRowsPerRound (ER), trainRows, testRows, staleness, hashed, epochs,
rewardPerSubmission, rewardPool, commitBlocks, revealBlocks, activeBlocks, roundTimeoutBlocks,
trainRoundsPerEpoch (T), evalRoundsPerEpoch (V), laneBits, token, totalRounds, maxCoords."""

NAMES = ["M", "B", "P", "levels", "beta_micro", "masked", "R", "K", "NE", "ER", "train_rows", "test_rows",
         "staleness", "hashed", "epochs", "rate", "pool", "commit_blocks", "reveal_blocks", "active_blocks",
         "timeout_blocks", "T", "V", "lane_bits", "token", "total", "max_coords"]


def decode(data):
    """params() return data (bytes) -> dict of the words above (ints)."""
    return {k: int.from_bytes(data[32 * i:32 * i + 32], "big") for i, k in enumerate(NAMES)}


def layout(p, r):
    """Round r -> dict(train, epoch, index, nb, first, rows, coords)."""
    per = p["T"] + p["V"]
    e, pos = divmod(r, per)
    if pos < p["T"]:
        first = pos * p["K"]
        nb = min(p["K"], p["R"] - first)
        rows = nb * p["B"]
        return dict(train=True, epoch=e, index=pos, nb=nb, first=first, rows=rows, coords=rows * p["P"])
    v = pos - p["T"]
    first = v * p["ER"]
    rows = min(p["ER"], p["NE"] - first)
    return dict(train=False, epoch=e, index=v, nb=0, first=first, rows=rows, coords=rows * p["P"])
