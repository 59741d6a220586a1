// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {BbvflBase} from "./BbvflBase.sol";

/// @title bbvfl on-chain aggregator
/// @notice One training session of DP-BBVFL: registration, commit-reveal election of the active
/// client, per-round aggregation of the clients' quantized embeddings in packed lanes, gradient and
/// fusion-parameter posts, metric posts and ERC-20 rewards. Every state change emits an event; the
/// event log alone is enough to recompute every sum, the election, the minibatch seed and every
/// payment.
///
/// Two deployable modes share this interface: this contract (lane storage, one round open at a
/// time) and BbvflHashAggregator (hashed: hashes in storage, aggregate() forms the sum from the
/// payloads, rounds pipelined within a staleness bound; see its header). The session logic they
/// share (registration, election, re-election, gradients, labels, metrics, rewards, views) is the
/// abstract BbvflBase; Config, Params and Phase are declared there (BbvflBase.Config).
///
/// Interface notes (what the clients and the auditor rely on):
/// - Constructor takes one `Config` tuple. All of its fields are static, so its ABI encoding is the
///   same as the flat argument list (M, B, P, b, betaMicro, masked, R = batchesPerEpoch,
///   K = window, NE = evalRows, ER = evalRowsPerRound, trainRows, testRows, staleness, hashed,
///   epochs, rewardPerSubmission, rewardPool, commitBlocks, revealBlocks, activeBlocks,
///   roundTimeoutBlocks). This contract is the lane-storage mode: hashed must be false and
///   staleness 0 (BbvflHashAggregator takes the same tuple for the hashed mode). trainRows and
///   testRows are only recorded (trainRows >= R*B, testRows >= NE): with the seed they let an
///   auditor re-derive every minibatch from the chain alone. params() returns the Config fields
///   in the same order, then T, V, laneBits, token, totalRounds, maxCoords.
///   It deploys its own BbvflRewardToken whose whole supply (rewardPool) is minted to this contract;
///   `token()` returns it. The pool must cover rewardPerSubmission * M * totalRounds.
/// - Deadlines are block counts. Registration closes at block C when the M-th client registers;
///   commits are accepted up to block C + commitBlocks (inclusive), reveals up to
///   C + commitBlocks + revealBlocks (inclusive). Reveals open when every registered client has
///   committed or the commit deadline has passed (so nobody reveals before the last commit).
/// - Windows: an epoch has R training minibatches of B rows, carried K at a time: T = ceil(R/K)
///   TRAIN rounds, window w carrying nb = min(K, R - w*K) consecutive minibatches (batches w*K ..
///   w*K+nb-1 of the epoch's schedule; the last window may be shorter, a window never crosses an
///   epoch), so rows = nb*B. Then V = ceil(NE/ER) EVAL rounds (0 when NE = 0), eval round v
///   carrying the test rows v*ER .. v*ER+rows-1 in test-set order, rows = min(ER, NE - v*ER).
///   A round's coords = rows*P; roundLayout(r) returns all of it. K = 1, NE = V*B, ER = B is the
///   protocol of one minibatch per round. Ring slots are sized for the largest round (maxCoords).
/// - Rounds are numbered globally from 0: epoch = r / (T+V), pos = r % (T+V); pos < T is a TRAIN
///   round (window pos), otherwise an EVAL round (eval round pos - T). Only `currentRound()` is open.
/// - Curvature rounds (Config curvEvery = L > 0, curvRows = S; LR's quasi-Newton optimizer, B = 1):
///   every epoch e with (e+1) % L == 0 and e+1 >= 2L has C = ceil(S/K) more rounds between its T
///   TRAIN rounds and its V EVAL rounds (round c: rows c*K .. of the epoch's permutation,
///   min(K, S - c*K) of them); they take a gradient like a TRAIN round (roundLayout: train, index
///   T + c) and totalRounds includes them (_locate gives a round's epoch and position).
///   A complete TRAIN round opens the next one when the active client posts its gradient; a
///   complete EVAL round opens the next one at once. After the last round: SessionEnded.
/// - submit(round, q): plain mode q is coords bytes (the round's rows, row-major, P values per
///   row), one value per byte, each <= b; masked mode q is coords 16-bit big-endian lanes
///   (2*coords bytes), no range check, sums wrap mod 2^16. The running sum lives in a ring of RING
///   round slots of ceil(maxCoords*laneBytes/32) words each; the first words of a slot,
///   concatenated and cut to coords*laneBytes, are the flat sum (coordinate j at byte offset
///   j*laneBytes, big-endian). roundSum() and RoundCompleted carry exactly those bytes;
///   RoundCompleted also states how many submissions the sum covers. The first
///   submission of a round overwrites the slot, later ones add lane-wise (SWAR, no per-byte loops).
///   There is no per-slot header word: only the current round can be written, so the submission
///   count lives in the one hot state word and a slot's round is implied by the ring position.
///   roundSum(r) works while r is complete and r + RING > currentRound; older sums are in the
///   RoundCompleted events.
/// - Re-election (reelect): the new seed is keccak256(abi.encodePacked(previous election seed,
///   uint64(currentRound))); when more than one participant is left the new active client is
///   drawn from the participants OTHER than the current one, in client index order:
///   others[uint256(newSeed) % (n - 1)]. `seed()` stays the session seed S (it drives the
///   minibatch schedule and never changes); `electionSeed()` is the latest seed of the chain.
/// - Round timeout (beyond the issue text): when the open round has not completed within
///   roundTimeoutBlocks blocks of opening and at least one client has submitted, anyone may call
///   expireRound(): participants that did not submit are excluded (reason 3) and the round
///   completes with the submissions it has. If the active client was excluded that way a new
///   active client is drawn from the seed chain (Elected reason 2). Masked mode differs (the
///   missing clients' masks would not cancel): the round's submissions are voided and the round
///   re-opens for the clients that submitted (RoundReopened with their index bitmap, a fresh
///   timeout); they submit again, masked for the new set (docs/MASKED.md).
/// - Rewards: payRewards(e) pays every client (accepted - rewarded) * rewardPerSubmission, i.e.
///   all accepted submissions not paid yet at the time of the call, and sets rewarded = accepted.
///   When nobody is due anything it emits one RewardsPaid(e, address(0), 0, 0) so that every
///   payRewards call leaves an event.
/// - Per-client state is one storage word (registered, excluded, committed, revealed, index,
///   accepted count frozen at exclusion, rewarded count). A submission does NOT write it: the open
///   round's submissions are a bitmap (bit = client index) in the hot state word, so a steady-state
///   submit writes only the lane words and that one hot word. Because a round completes only when
///   every participant has submitted, a participant's accepted count is currentRound + its bit;
///   clientInfo() derives it (and lastRoundPlus1, which equals it). Hence M <= 64.
/// - reelect() (anyone) succeeds when the open TRAIN round has been complete for more than
///   activeBlocks blocks without a gradient, or when the oldest epoch with missing metrics or
///   rewards completed more than activeBlocks blocks ago (measured from the latest epoch
///   completion, so never too early; the optimistic mode: not before the epoch's dispute window
///   closes); both counted from the later of that event and the current active client's election. The new active client resumes from
///   the last GradientPosted (lastFusionRound(), lastFusionParamsHash() to check the bytes).
/// - Commit-reveal leaves one known bias: the last client to reveal can withhold its secret and
///   so choose between two seeds, at the price of being excluded from the session.
/// - Masked mode: the contract cannot range-check masked values (they look uniform); a masked
///   client could add any value to the sum. Only plain mode enforces values <= b.
/// - currentRound() returns totalRounds once the session has ended.
/// - hasSubmitted(round, client): whether the client submitted to that round (for a round before
///   the open one: whether it contributed, i.e. round < its accepted count).
/// - Errors are custom errors declared in BbvflBase (`NotActive()`, `BadLength(expected, got)` ...):
///   the revert data is the error's 4-byte selector and its ABI-encoded arguments, never a string.
/// - Labels split across clients (DP-BBVFL Algorithm 2, lines 11-14): a client that holds labels
///   registers with registerLabelHolder(pubkey) instead of register(pubkey) (same checks, plus the
///   LabelHolder event). The set of label holders is therefore fixed when registration closes and
///   auditable from the events (and labelHolders(), a bitmap by client index). Which rows each
///   holder labels is the holders' business (the contract does not see rows). In a TRAIN round that
///   is complete and whose gradient is not posted yet, each label holder may post once
///   postLabelGradient(round, grad): dLoss/dlogits of the fusion head for its rows of the batch
///   (rows*C IEEE-754 binary32, big-endian, C logits per row, rows = the round's rows, zero on
///   rows it does not hold; the contract checks only that the length is a non-zero multiple of
///   4*rows, at most 4*rows*256). The active client sums the posts (and its own rows) before its
///   backward. postGradient does not wait for them: the active client decides (a session in
///   which the active client holds every label needs no post). The holders that posted for the
///   latest round are one reused storage word
///   (labelPosts()); the submit path is untouched. Note: such a gradient reveals the labels of
///   its rows to anyone who can compute the logits (the sum and the head parameters are public).
/// - postGradient(round, gradient, fusionParams): gradient is coords binary32 big-endian: the
///   window's nb batches' dLoss/dh_hat concatenated in batch order, each B*P row-major.
/// - Excluded reasons: 1 no commit by the commit deadline, 2 no reveal by the reveal deadline,
///   3 missed a round (expireRound). Elected reasons: 0 election, 1 re-election after a missed
///   active deadline, 2 active client excluded by expireRound.
contract BbvflAggregator is BbvflBase {
    uint256 public constant RING = 4;
    uint256 private constant SUMS_BASE = uint256(keccak256("bbvfl.aggregator.sums"));

    constructor(Config memory c, address[] memory members) BbvflBase(c, false, members) {}

    // ------------------------------------------------------------------ aggregation

    /// Submits this client's quantized embedding for `round` (see the header for the format).
    function submit(uint64 round, bytes calldata q) external {
        // The hot word is handled as a raw word here (same layout as the Hot struct: Solidity packs
        // members from the low-order end), which keeps the steady-state path lean.
        uint256 hw;
        assembly ("memory-safe") {
            hw := sload(_hot.slot)
        }
        if (!(hw & HOT_STARTED != 0)) revert NotTraining();
        if (!(hw & HOT_ENDED == 0)) revert SessionOver();
        uint256 cur = hw & 0xFFFFFFFFFFFFFFFF;
        if (!(round <= cur)) revert RoundNotOpen(round, uint64(cur));
        uint256 count = (hw >> HOT_SH_COUNT) & 0xFF;
        if (!(round == cur && count < (hw >> HOT_SH_N) & 0xFF)) revert RoundClosed(round, uint64(cur));
        uint256 w = _client[msg.sender];
        if (!(w & F_REG != 0)) revert NotRegistered();
        if (!(w & F_EXCL == 0)) revert ClientExcluded();
        uint256 bit = 1 << (HOT_SH_SUBMITTED + ((w >> SH_INDEX) & 0xFF));
        if (!(hw & bit == 0)) revert AlreadySubmitted(round);
        if (!(q.length == _dataLen(cur))) revert BadLength(_dataLen(cur), q.length);

        bool bad = _accumulate(q, SUMS_BASE + (cur % RING) * LANE_WORDS, count == 0);
        if (bad) revert ValueAboveLevels(LEVELS);

        emit Submitted(round, msg.sender, keccak256(q));
        hw = (hw | bit) + (1 << HOT_SH_COUNT);
        assembly ("memory-safe") {
            sstore(_hot.slot, hw)
        }
        if (count + 1 == (hw >> HOT_SH_N) & 0xFF) {
            Hot memory h = _hot;
            _complete(h);
            _hot = h;
        }
    }

    /// Adds (or, for the first submission of a round, writes) q into the slot at `base`.
    /// Returns true when some plain-mode value exceeds b.
    function _accumulate(bytes calldata q, uint256 base, bool first) private returns (bool) {
        if (LANE_BITS == 8) return _acc8(q, base, first, RANGE_K);
        if (MASKED) {
            _accMasked16(q, base, first);
            return false;
        }
        return _accPlain16(q, base, first, RANGE_K, (q.length + 15) >> 4);
    }

    /// 8-bit lanes: one calldata word is one lane word.
    function _acc8(bytes calldata q, uint256 base, bool first, uint256 k) private returns (bool bad) {
        assembly ("memory-safe") {
            let off := q.offset
            let len := q.length
            let n := shr(5, add(len, 31))
            let viol := 0
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                let x := calldataload(add(off, shl(5, i)))
                let end := shl(5, add(i, 1))
                // bytes past q's end are cleared (ABI padding is not trusted)
                if gt(end, len) { x := and(x, not(sub(shl(shl(3, sub(end, len)), 1), 1))) }
                // carry out of each byte of x + (255 - b): set iff that byte is above b
                let t := add(and(x, not(H8)), and(k, not(H8)))
                viol := or(viol, and(or(and(x, k), and(or(x, k), t)), H8))
                let slot := add(base, i)
                switch first
                case 1 { sstore(slot, x) }
                default { sstore(slot, add(sload(slot), x)) }
            }
            bad := gt(viol, 0)
        }
    }

    /// Masked mode: 16-bit lanes straight from calldata, each lane sum wraps mod 2^16.
    function _accMasked16(bytes calldata q, uint256 base, bool first) private {
        uint256 n = (q.length + 31) >> 5;
        for (uint256 i = 0; i < n; i++) {
            uint256 x = _word(q, i);
            assembly ("memory-safe") {
                let slot := add(base, i)
                switch first
                case 1 { sstore(slot, x) }
                default {
                    let a := sload(slot)
                    sstore(slot, xor(add(and(a, not(H16)), and(x, not(H16))), and(xor(a, x), H16)))
                }
            }
        }
    }

    /// Plain values (one byte each) widened to 16-bit lanes: each calldata word feeds two lane words.
    function _accPlain16(bytes calldata q, uint256 base, bool first, uint256 k, uint256 words)
        private
        returns (bool)
    {
        uint256 n = (q.length + 31) >> 5;
        uint256 viol;
        for (uint256 i = 0; i < n; i++) {
            uint256 x = _word(q, i);
            for (uint256 h = 0; h < 2; h++) {
                uint256 j = 2 * i + h;
                if (j >= words) break;
                assembly ("memory-safe") {
                    let y := and(shr(sub(128, shl(7, h)), x), 0xffffffffffffffffffffffffffffffff)
                    y := and(or(y, shl(64, y)), 0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff)
                    y := and(or(y, shl(32, y)), 0x00000000ffffffff00000000ffffffff00000000ffffffff00000000ffffffff)
                    y := and(or(y, shl(16, y)), 0x0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff)
                    y := and(or(y, shl(8, y)), 0x00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff)
                    viol := or(viol, and(add(y, k), C16))
                    let slot := add(base, j)
                    switch first
                    case 1 { sstore(slot, y) }
                    default { sstore(slot, add(sload(slot), y)) }
                }
            }
        }
        return viol != 0;
    }

    function _complete(Hot memory h) private {
        h.completedAt = uint40(block.number);
        uint64 r = h.round;
        emit RoundCompleted(r, h.count, _readSum(r));
        _markEpoch(r);
        if (!_isTrain(r)) _advance(h);
    }

    function _readSum(uint64 r) private view returns (bytes memory out) {
        // sum bytes: the submission's bytes, doubled when plain values widen to 16-bit lanes
        uint256 len = _dataLen(r) << (LANE_BITS == 16 && !MASKED ? 1 : 0);
        uint256 words = (len + 31) >> 5;
        uint256 base = SUMS_BASE + (uint256(r) % RING) * LANE_WORDS;
        out = new bytes(words * 32);
        assembly ("memory-safe") {
            for { let i := 0 } lt(i, words) { i := add(i, 1) } {
                mstore(add(add(out, 32), shl(5, i)), sload(add(base, i)))
            }
            mstore(out, len)
        }
    }

    /// When the open round has not completed within roundTimeoutBlocks, excludes the participants
    /// that did not submit to it and completes it with the submissions it has.
    function expireRound() external {
        Hot memory h = _hot;
        if (!(h.started && !h.ended)) revert NotTraining();
        if (!(h.count < h.n)) revert RoundAlreadyComplete();
        if (!(block.number > uint256(h.openedAt) + TIMEOUT_BLOCKS)) revert RoundNotTimedOut(uint256(h.openedAt) + TIMEOUT_BLOCKS);
        if (!(h.count > 0)) revert NoSubmissions();
        if (_excludeMissing(h, h.submitted, 3)) _reelect(h.round, 2);
        if (MASKED) {
            // the masks of the missing clients do not cancel, so this attempt's sum is garbage:
            // void it and re-open the round for the clients that submitted (they re-mask for the
            // new set, which is strictly smaller, so the masks are fresh)
            emit RoundReopened(h.round, h.submitted, h.n);
            h.count = 0;
            h.submitted = 0;
            h.openedAt = uint40(block.number);
        } else {
            _complete(h);
        }
        _hot = h;
    }

    /// The flat sum of a complete round still held by the ring (see header for the format).
    function roundSum(uint64 r) external view returns (bytes memory) {
        Hot memory h = _hot;
        if (!(_isComplete(r, h))) revert RoundNotComplete(r);
        if (!(uint256(r) + RING > h.round)) revert SumOverwritten(r);
        return _readSum(r);
    }

    /// Whether `client` submitted to `round`: exact for the open round; a round before it counts
    /// as submitted for a participant (every participant contributed to every completed round)
    /// and for an excluded client when it was before the client's exclusion.
    function hasSubmitted(uint64 round, address client) external view returns (bool) {
        return round < _accepted(_client[client], _hot);
    }

    // ------------------------------------------------------------------ mode hooks

    function _advance(Hot memory h) internal override {
        super._advance(h);
        // after the last round the bitmap stays: accepted = last round + 1
        if (!h.ended) h.submitted = 0;
    }

    function _acceptedLive(uint256 w, Hot memory h) internal pure override returns (uint256) {
        return uint256(h.round) + ((h.submitted >> uint8(w >> SH_INDEX)) & 1);
    }

    function _headComplete(Hot memory h) internal pure override returns (bool) {
        return h.count == h.n;
    }

    function _headWaiting(Hot memory h) internal view override returns (bool) {
        return h.count == h.n && _isTrain(h.round);
    }

    function _headCount(Hot memory h) internal pure override returns (uint8) {
        return h.count;
    }

    function _onElected(Hot memory, uint64) internal pure override {}

    function _hashed() internal pure override returns (bool) {
        return false;
    }
}
