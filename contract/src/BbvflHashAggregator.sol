// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {BbvflBase} from "./BbvflBase.sol";

/// @title bbvfl on-chain aggregator, hashed mode with bounded staleness
/// @notice Same session as BbvflAggregator (same Config with hashed = true, same registration,
/// election, rewards, events and views; read that contract's header first). What differs is how
/// a round's sum is formed and which rounds are open:
///
/// - submit(round, q): same sender and length checks as the lane mode; plain mode range-checks
///   every value <= b (SWAR over calldata). The contract writes ONE storage word: for (the round's
///   ring slot, the client's index) the word (round + 1) << 224 | (block number mod 2^32) << 192
///   | low 192 bits of keccak256(q) (the tag says which round the word belongs to: a word of an
///   older round in the same slot means "not submitted"; the block is when the submission landed,
///   from which reelect() counts the active client's deadline: see BbvflBase.reelect); it emits SubmittedPayload(round, client, q) (instead of the lane
///   mode's Submitted(round, client, keccak256(q))): the payload is in the log, so anyone can
///   aggregate from the logs however the participant submitted. No lane words, no bitmap, no hot-word write: the sum is formed later, in memory, from
///   the payloads themselves. (A steady-state submit: one cold read + one rewrite of that word,
///   the client's word, the hot word, the event, keccak and the range check.)
/// - Pipelining. head = the oldest round that is not done (a TRAIN round is done when its
///   gradient is posted, an EVAL round when it is aggregated); currentRound() returns head
///   (totalRounds after the session ended). A submission to round r is accepted iff
///   head <= r < totalRounds, r < head + RING (RING = 8 slots) and at most `staleness` TRAIN
///   rounds lie in [head, r). So with staleness 0 the clients may already submit the next rounds
///   while EVAL rounds are open (eval rounds never gate), and with staleness s a client may run s
///   TRAIN rounds ahead of the last posted gradient. Rejected: r < head RoundClosed(r, head),
///   otherwise RoundNotOpen(r, head).
/// - aggregate(round, payloads): anyone may call it, the contract checks everything. round must
///   be head, not aggregated yet, and every current participant must have submitted to it
///   (RoundNotComplete). payloads = the bytes each participant submitted (the `q` of its
///   SubmittedPayload event), one per participant, in client index order; each must
///   hash to the stored keccak256 (PayloadHashMismatch(index): wrong bytes or wrong order),
///   BadPayloadCount otherwise. The sum is formed in memory with the lane rules of the lane
///   mode (8-bit lanes when M*b < 256 in plain mode, else 16-bit; masked: 16-bit wrapping mod
///   2^16) and emitted as RoundCompleted(round, contributors, sum) with the same bytes. Then an
///   EVAL round is done (head advances; epoch completion, SessionEnded after the last round); a
///   TRAIN round is aggregated and waits for postGradient(round, ...) from the active client,
///   which marks it done. postLabelGradient applies to an aggregated TRAIN head round.
/// - expireRound() applies to head: after roundTimeoutBlocks blocks since head opened, with at
///   least one submission, the participants that did not submit to head are excluded (reason 3;
///   a new active client is drawn if it was one of them). Plain mode: head becomes complete with
///   the submitters and is aggregated as usual. Masked mode: head is re-opened for the remaining
///   participants, and so is every later round of the ring that already had submissions (their
///   masks were for the old set): RoundReopened(round, participants, n) for each.
///   Submissions by excluded clients to later rounds are ignored (only current participants'
///   bits count).
/// - Rewards: accepted = done rounds for a participant (every participant contributed to every
///   done round), frozen at exclusion for an excluded client; clientInfo().lastRoundPlus1 = that.
/// - reelect(): the active deadline (activeBlocks) runs while head has every participant's
///   submission but is not done (not aggregated, or aggregated without a gradient), counted from
///   the later of roundState().completedAt and the current active client's election. In this
///   mode completedAt is the block head opened (or an expireRound made it complete), and for an
///   aggregated TRAIN head the block of its aggregation: submit does not record when the last
///   submission arrived (that would cost every submission a write). The epoch metrics/rewards
///   deadline is as in the lane mode.
/// - roundState() describes head (submitted = participants whose word holds head); roundStatus(r)
///   gives a ring round's submission bitmap (read from the M words) and whether its sum was
///   emitted; hasSubmitted(r, client) is exact for rounds in the ring and true for a round
///   before head that the client contributed to. roundSum() has no stored sum to return: read the
///   RoundCompleted event.
contract BbvflHashAggregator is BbvflBase {
    uint256 public constant RING = 8;
    uint256 private constant HASH_BASE = uint256(keccak256("bbvfl.hash.hashes"));
    uint256 private constant M64 = 0xFFFFFFFFFFFFFFFF;
    uint256 private constant M192 = (1 << 192) - 1;
    uint256 private constant VOID = 1; // a voided submission word (tag 0, never a round's)

    /// A submission to `round` by `client`: q is the payload exactly as submitted (its keccak256
    /// is what the contract stored), so aggregate() can be called by anyone from the logs alone,
    /// however the participant sent submit() (an EOA, an EIP-7702 delegate, a contract wallet,
    /// a multicall). Emitted instead of Submitted (one log per submission).
    event SubmittedPayload(uint64 indexed round, address indexed client, bytes q);

    constructor(Config memory c, address[] memory members) BbvflBase(c, true, members) {}

    // ------------------------------------------------------------------ submission

    /// Stores keccak256(q) for (round, sender); see the header for which rounds are open.
    function submit(uint64 round, bytes calldata q) external {
        uint256 hw;
        assembly ("memory-safe") {
            hw := sload(_hot.slot)
        }
        if (!(hw & HOT_STARTED != 0)) _revert(NotTraining.selector);
        if (!(hw & HOT_ENDED == 0)) _revert(SessionOver.selector);
        uint256 head = hw & M64;
        // Every check here uses BbvflBase's _revert (arguments checked by abi_fresh's
        // check-revert-sites.mjs): this contract's runtime code must keep 512 bytes under EIP-170
        // (contract/GAS.md, "Contract sizes").
        if (!(round >= head)) _revert(RoundClosed.selector, round, head);
        if (!(_open(round, head))) _revert(RoundNotOpen.selector, round, head);
        uint256 w = _client[msg.sender];
        if (!(w & F_REG != 0)) _revert(NotRegistered.selector);
        if (!(w & F_EXCL == 0)) _revert(ClientExcluded.selector);
        if (!(q.length == _dataLen(round))) _revert(BadLength.selector, _dataLen(round), q.length);
        if (!MASKED && _aboveB(q)) _revert(ValueAboveLevels.selector, LEVELS);
        uint256 dk = HASH_BASE + ((round % RING) << 6) + ((w >> SH_INDEX) & 0xFF);
        uint256 old;
        assembly ("memory-safe") {
            old := sload(dk)
        }
        if (!(old >> 224 != uint256(round) + 1)) _revert(AlreadySubmitted.selector, round);
        // q is copied once into free memory as the ABI encoding of the event's data (offset,
        // length, q zero-padded): keccak256 reads it there and the log emits it from there.
        bytes32 d;
        uint256 f;
        uint256 dl;
        assembly ("memory-safe") {
            f := mload(0x40)
            let len := q.length
            mstore(f, 0x20)
            mstore(add(f, 0x20), len)
            mstore(add(add(f, 0x40), and(len, not(31))), 0)
            calldatacopy(add(f, 0x40), q.offset, len)
            d := keccak256(add(f, 0x40), len)
            dl := add(0x40, and(add(len, 31), not(31)))
        }
        uint256 word = ((uint256(round) + 1) << 224) | ((block.number & M32) << 192) | (uint256(d) & M192);
        bytes32 topic = SubmittedPayload.selector;
        assembly ("memory-safe") {
            sstore(dk, word)
            log3(f, dl, topic, round, caller())
        }
    }

    /// r is open for submissions while head is `head` (r >= head given).
    function _open(uint256 r, uint256 head) private view returns (bool) {
        return r < TOTAL_ROUNDS && r - head < RING && _trainBefore(r) - _trainBefore(head) <= STALENESS;
    }

    function _curvOn() internal pure override returns (bool) {
        return false;
    }

    /// No curvature rounds in hashed mode (the constructor refuses them): the plain layout.
    function _locate(uint256 r) internal view override returns (uint256 e, uint256 pos, bool ce) {
        uint256 per = uint256(T) + V;
        return (r / per, r % per, false);
    }

    /// Number of TRAIN rounds in [0, x).
    function _trainBefore(uint256 x) private view returns (uint256) {
        uint256 t = T;
        uint256 per = t + V;
        uint256 pos = x % per;
        return (x / per) * t + (pos < t ? pos : t);
    }

    /// Plain mode: true when some byte of q is above b (SWAR, bytes past q's end ignored).
    function _aboveB(bytes calldata q) private view returns (bool bad) {
        uint256 k = (255 - uint256(LEVELS)) * L8;
        assembly ("memory-safe") {
            let off := q.offset
            let len := q.length
            let n := shr(5, add(len, 31))
            let viol := 0
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                let x := calldataload(add(off, shl(5, i)))
                let end := shl(5, add(i, 1))
                if gt(end, len) { x := and(x, not(sub(shl(shl(3, sub(end, len)), 1), 1))) }
                // carry out of each byte of x + (255 - b): set iff that byte is above b
                let t := add(and(x, not(H8)), and(k, not(H8)))
                viol := or(viol, and(or(and(x, k), and(or(x, k), t)), H8))
            }
            bad := gt(viol, 0)
        }
    }

    // ------------------------------------------------------------------ aggregation

    /// Forms the sum of head from the participants' payloads (client index order), checks each
    /// against its stored hash, emits RoundCompleted. Anyone may call it.
    function aggregate(uint64 round, bytes[] calldata payloads) external {
        Hot memory h = _hot;
        if (!(h.started && !h.ended)) _revert(NotTraining.selector);
        if (!(round >= h.round)) _revert(RoundClosed.selector, round, h.round);
        if (!(round == h.round)) _revert(RoundNotOpen.selector, round, h.round);
        if (!(h.count == 0)) _revert(AlreadyAggregated.selector, round);
        uint64 mask = h.submitted;
        uint256 base = HASH_BASE + ((round % RING) << 6);
        if (!(_submitted(round, mask) == mask)) _revert(RoundNotComplete.selector, round);
        if (!(payloads.length == h.n)) _revert(BadPayloadCount.selector, h.n, payloads.length);
        uint256 len = _dataLen(round);
        bytes memory sum = new bytes(len << (LANE_BITS == 16 && !MASKED ? 1 : 0));
        uint256 k;
        for (uint256 i = 0; mask >> i != 0; i++) {
            if ((mask >> i) & 1 == 0) continue;
            bytes calldata p = payloads[k++];
            uint256 want;
            uint256 dk = base + i;
            assembly ("memory-safe") {
                want := sload(dk)
            }
            if (!(p.length == len && uint256(_hash(p)) & M192 == want & M192)) _revert(PayloadHashMismatch.selector, k - 1);
            _add(sum, p);
        }
        emit RoundCompleted(round, h.n, sum);
        _markEpoch(round);
        if (_isTrain(round)) {
            // aggregated, waiting for the gradient: the active deadline counts from now
            h.count = 1;
            h.completedAt = uint40(block.number);
        } else {
            _advance(h);
        }
        _hot = h;
    }

    function _hash(bytes calldata p) private pure returns (bytes32 d) {
        assembly ("memory-safe") {
            let f := mload(0x40)
            calldatacopy(f, p.offset, p.length)
            d := keccak256(f, p.length)
        }
    }

    /// Adds payload p lane-wise into sum (layout of the lane mode).
    function _add(bytes memory sum, bytes calldata p) private view {
        uint256 mode = LANE_BITS == 8 ? 0 : (MASKED ? 1 : 2);
        uint256 words = (sum.length + 31) >> 5;
        assembly ("memory-safe") {
            let off := p.offset
            let len := p.length
            let n := shr(5, add(len, 31))
            let out := add(sum, 32)
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                let x := calldataload(add(off, shl(5, i)))
                let end := shl(5, add(i, 1))
                if gt(end, len) { x := and(x, not(sub(shl(shl(3, sub(end, len)), 1), 1))) }
                switch mode
                case 0 {
                    let ptr := add(out, shl(5, i))
                    mstore(ptr, add(mload(ptr), x))
                }
                case 1 {
                    let ptr := add(out, shl(5, i))
                    let a := mload(ptr)
                    mstore(ptr, xor(add(and(a, not(H16)), and(x, not(H16))), and(xor(a, x), H16)))
                }
                default {
                    // one byte per value widened to two 16-bit lane words
                    for { let hh := 0 } lt(hh, 2) { hh := add(hh, 1) } {
                        let j := add(shl(1, i), hh)
                        if lt(j, words) {
                            let y := and(shr(sub(128, shl(7, hh)), x), 0xffffffffffffffffffffffffffffffff)
                            y := and(or(y, shl(64, y)), 0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff)
                            y := and(or(y, shl(32, y)), 0x00000000ffffffff00000000ffffffff00000000ffffffff00000000ffffffff)
                            y := and(or(y, shl(16, y)), 0x0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff)
                            y := and(or(y, shl(8, y)), 0x00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff)
                            let ptr := add(out, shl(5, j))
                            mstore(ptr, add(mload(ptr), y))
                        }
                    }
                }
            }
        }
    }

    /// The clients of `mask` (bit = index) whose submission word holds round r.
    function _submitted(uint256 r, uint64 mask) private view returns (uint64 got) {
        uint256 base = HASH_BASE + ((r % RING) << 6);
        uint256 tag = r + 1;
        for (uint256 i = 0; mask >> i != 0; i++) {
            if ((mask >> i) & 1 == 0) continue;
            uint256 dk = base + i;
            uint256 x;
            assembly ("memory-safe") {
                x := sload(dk)
            }
            if (x >> 224 == tag) got |= uint64(1 << i);
        }
    }

    // ------------------------------------------------------------------ timeout

    /// When head has not completed within roundTimeoutBlocks of opening: excludes the
    /// participants that did not submit to it (see the header for plain and masked mode).
    function expireRound() external {
        Hot memory h = _hot;
        if (!(h.started && !h.ended)) _revert(NotTraining.selector);
        uint64 keep = _submitted(h.round, h.submitted);
        if (!(keep != h.submitted)) _revert(RoundAlreadyComplete.selector);
        if (!(block.number > uint256(h.openedAt) + TIMEOUT_BLOCKS)) _revert(RoundNotTimedOut.selector, uint256(h.openedAt) + TIMEOUT_BLOCKS);
        if (!(keep != 0)) _revert(NoSubmissions.selector);
        if (_excludeMissing(h, keep, 3)) _reelect(h.round, 2);
        h.submitted = keep;
        h.completedAt = uint40(block.number);
        if (MASKED) {
            // the missing clients' masks do not cancel: every round with submissions re-opens
            uint256 end = uint256(h.round) + RING;
            if (end > TOTAL_ROUNDS) end = TOTAL_ROUNDS;
            for (uint256 r = h.round; r < end; r++) {
                uint64 got = _submitted(r, keep);
                if (r != h.round && got == 0) continue;
                uint256 base = HASH_BASE + ((r % RING) << 6);
                for (uint256 i = 0; got >> i != 0; i++) {
                    if ((got >> i) & 1 == 0) continue;
                    uint256 dk = base + i;
                    assembly ("memory-safe") {
                        sstore(dk, VOID)
                    }
                }
                emit RoundReopened(uint64(r), keep, h.n);
            }
            h.openedAt = uint40(block.number);
        }
        _hot = h;
    }

    // ------------------------------------------------------------------ views

    /// No sum is stored in the hashed mode: the sums are in the RoundCompleted events.
    function roundSum(uint64) external pure returns (bytes memory) {
        _revert(NoStoredSum.selector);
    }

    /// Submission bitmap (bit = client index, every registered client, excluded ones too) of round
    /// r while its ring slot holds it (r < head + RING), and whether r's sum was emitted.
    function roundStatus(uint64 r) external view returns (uint64 submitted, bool aggregated) {
        Hot memory h = _hot;
        submitted = _submitted(r, uint64((1 << _clients.length) - 1));
        aggregated = h.started && (r < h.round || (r == h.round && (h.ended || h.count != 0)));
    }

    /// Whether `client` submitted to `round`: exact for rounds in the ring (head and later); for
    /// a round before head, true when the client contributed to it (a participant when it was
    /// done).
    function hasSubmitted(uint64 round, address client) external view returns (bool) {
        uint256 w = _client[client];
        Hot memory h = _hot;
        if (round < _accepted(w, h)) return true;
        if (!h.started || h.ended || round < h.round || w & F_REG == 0) return false;
        return _submitted(round, uint64(1 << ((w >> SH_INDEX) & 0xFF))) != 0;
    }

    // ------------------------------------------------------------------ mode hooks

    function _advance(Hot memory h) internal override {
        super._advance(h);
        // the active deadline of a complete but unaggregated head counts from its opening
        h.completedAt = uint40(block.number);
    }

    function _acceptedLive(uint256, Hot memory h) internal pure override returns (uint256) {
        return uint256(h.round) + (h.ended ? 1 : 0);
    }

    function _headComplete(Hot memory h) internal pure override returns (bool) {
        return h.count != 0;
    }

    function _headWaiting(Hot memory h) internal view override returns (bool) {
        return h.count != 0 || _submitted(h.round, h.submitted) == h.submitted;
    }

    /// The later of the block head became head (or was aggregated, or expired: completedAt) and
    /// the block of its last submission (BbvflBase._latestSubmission).
    function _readyAt(Hot memory h) internal view override returns (uint256) {
        if (h.count != 0) return h.completedAt;
        return _latestSubmission(HASH_BASE + ((uint256(h.round) % RING) << 6), h.submitted, h.completedAt);
    }

    function _headCount(Hot memory h) internal view override returns (uint8 n) {
        uint64 b = _submitted(h.round, h.submitted);
        for (; b != 0; b &= b - 1) n++;
    }

    function _onElected(Hot memory h, uint64 mask) internal pure override {
        h.submitted = mask;
    }

    function _hashed() internal pure override returns (bool) {
        return true;
    }
}
