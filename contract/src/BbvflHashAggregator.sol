// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {BbvflBase} from "./BbvflBase.sol";

/// @title bbvfl on-chain aggregator, hashed mode with bounded staleness
/// @notice Same session as BbvflAggregator (same Config with hashed = true, same registration,
/// election, rewards, events and views; read that contract's header first). What differs is how
/// a round's sum is formed and which rounds are open:
///
/// - submit(round, q): same sender and length checks as the lane mode; plain mode range-checks
///   every value <= b (SWAR over calldata). The contract stores only keccak256(q) for (the round's
///   ring slot, the client's index) and sets the client's bit in the slot's header word
///   (round + 1 as a tag, submission bitmap, aggregated flag); it emits Submitted(round, client,
///   keccak256(q)) as the lane mode does. No lane words are written: the sum is formed later, in
///   memory, from the payloads themselves.
/// - Pipelining. head = the oldest round that is not done (a TRAIN round is done when its
///   gradient is posted, an EVAL round when it is aggregated); currentRound() returns head
///   (totalRounds after the session ended). A submission to round r is accepted iff
///   head <= r < totalRounds, r < head + RING (RING = 8 slots) and at most `staleness` TRAIN
///   rounds lie in [head, r). So with staleness 0 the clients may already submit the next rounds
///   while EVAL rounds are open (eval rounds never gate), and with staleness s a client may run s
///   TRAIN rounds ahead of the last posted gradient. Rejected: r < head "round closed", otherwise
///   "round not open".
/// - aggregate(round, payloads): anyone may call it, the contract checks everything. round must
///   be head, not aggregated yet, and every current participant must have submitted to it
///   ("round not complete"). payloads = the bytes each participant submitted (the `q` of its
///   submit transaction's calldata), one per participant, in client index order; each must
///   hash to the stored keccak256 ("payload hash mismatch": wrong bytes or wrong order),
///   "bad payload count" otherwise. The sum is formed in memory with the lane rules of the lane
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
///   the later of the block head became complete (roundState().completedAt) and the current
///   active client's election; the epoch metrics/rewards deadline is as in the lane mode.
/// - roundState() describes head; roundStatus(r) gives any ring round's submission bitmap and
///   aggregated flag; hasSubmitted(r, client) is exact for rounds in the ring and true for a round
///   before head that the client contributed to. roundSum() has no stored sum to return: read the
///   RoundCompleted event.
contract BbvflHashAggregator is BbvflBase {
    uint256 public constant RING = 8;
    uint256 private constant HDR_BASE = uint256(keccak256("bbvfl.hash.headers"));
    uint256 private constant HASH_BASE = uint256(keccak256("bbvfl.hash.hashes"));
    uint256 private constant M64 = 0xFFFFFFFFFFFFFFFF;
    uint256 private constant AGG = 1 << 128;
    uint256 private constant HOT_SH_COMPLETED = 136;

    constructor(Config memory c) BbvflBase(c, true) {}

    // ------------------------------------------------------------------ submission

    /// Stores keccak256(q) for (round, sender); see the header for which rounds are open.
    function submit(uint64 round, bytes calldata q) external {
        uint256 hw;
        assembly ("memory-safe") {
            hw := sload(_hot.slot)
        }
        if (!(hw & HOT_STARTED != 0)) _fail("not training");
        if (!(hw & HOT_ENDED == 0)) _fail("session over");
        uint256 head = hw & M64;
        if (!(round >= head)) _fail("round closed");
        if (!(_open(round, head))) _fail("round not open");
        uint256 w = _client[msg.sender];
        if (!(w & F_REG != 0)) _fail("not registered");
        if (!(w & F_EXCL == 0)) _fail("excluded");
        if (!(q.length == _dataLen(round))) _fail("bad length");
        if (!MASKED) if (!(!_aboveB(q))) _fail("value above b");
        uint256 idx = (w >> SH_INDEX) & 0xFF;
        uint256 slot = round % RING;
        uint256 hk = HDR_BASE + slot;
        uint256 hdr;
        assembly ("memory-safe") {
            hdr := sload(hk)
        }
        if (hdr & M64 != uint256(round) + 1) hdr = uint256(round) + 1;
        uint256 bit = 1 << (64 + idx);
        if (!(hdr & bit == 0)) _fail("already submitted");
        hdr |= bit;
        bytes32 d = _hash(q);
        uint256 dk = HASH_BASE + (slot << 6) + idx;
        assembly ("memory-safe") {
            sstore(hk, hdr)
            sstore(dk, d)
        }
        emit Submitted(round, msg.sender, d);
        if (round == head) {
            uint256 mask = (hw >> HOT_SH_SUBMITTED) & M64;
            if ((hdr >> 64) & mask == mask) {
                // head just became complete: the active deadline starts now
                hw = (hw & ~(uint256(0xFFFFFFFFFF) << HOT_SH_COMPLETED)) | (block.number << HOT_SH_COMPLETED);
                assembly ("memory-safe") {
                    sstore(_hot.slot, hw)
                }
            }
        }
    }

    /// r is open for submissions while head is `head` (r >= head given).
    function _open(uint256 r, uint256 head) private view returns (bool) {
        return r < TOTAL_ROUNDS && r - head < RING && _trainBefore(r) - _trainBefore(head) <= STALENESS;
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
        if (!(h.started && !h.ended)) _fail("not training");
        if (!(round >= h.round)) _fail("round closed");
        if (!(round == h.round)) _fail("round not open");
        uint256 slot = round % RING;
        uint256 hdr = _header(round);
        if (!(hdr & AGG == 0)) _fail("already aggregated");
        uint64 mask = h.submitted;
        if (!(uint64(hdr >> 64) & mask == mask)) _fail("round not complete");
        if (!(payloads.length == h.n)) _fail("bad payload count");
        uint256 len = _dataLen(round);
        bytes memory sum = new bytes(len << (LANE_BITS == 16 && !MASKED ? 1 : 0));
        uint256 k;
        for (uint256 i = 0; mask >> i != 0; i++) {
            if ((mask >> i) & 1 == 0) continue;
            bytes calldata p = payloads[k++];
            bytes32 want;
            uint256 dk = HASH_BASE + (slot << 6) + i;
            assembly ("memory-safe") {
                want := sload(dk)
            }
            if (!(p.length == len && _hash(p) == want)) _fail("payload hash mismatch");
            _add(sum, p);
        }
        emit RoundCompleted(round, h.n, sum);
        _markEpoch(round);
        if (_isTrain(round)) {
            uint256 hk = HDR_BASE + slot;
            assembly ("memory-safe") {
                sstore(hk, or(hdr, AGG))
            }
        } else {
            _advance(h);
            _hot = h;
        }
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

    /// Header word of round r's ring slot, or 0 when the slot holds another round.
    function _header(uint256 r) private view returns (uint256 hdr) {
        uint256 hk = HDR_BASE + r % RING;
        assembly ("memory-safe") {
            hdr := sload(hk)
        }
        if (hdr & M64 != r + 1) hdr = 0;
    }

    /// Every participant in `mask` submitted to round r.
    function _full(uint256 r, uint64 mask) private view returns (bool) {
        return uint64(_header(r) >> 64) & mask == mask;
    }

    // ------------------------------------------------------------------ timeout

    /// When head has not completed within roundTimeoutBlocks of opening: excludes the
    /// participants that did not submit to it (see the header for plain and masked mode).
    function expireRound() external {
        Hot memory h = _hot;
        if (!(h.started && !h.ended)) _fail("not training");
        uint64 keep = uint64(_header(h.round) >> 64) & h.submitted;
        if (!(keep != h.submitted)) _fail("round complete");
        if (!(block.number > uint256(h.openedAt) + TIMEOUT_BLOCKS)) _fail("round not timed out");
        if (!(keep != 0)) _fail("no submissions");
        if (_excludeMissing(h, keep)) _reelect(h.round, 2);
        h.submitted = keep;
        if (MASKED) {
            // the missing clients' masks do not cancel: every round with submissions re-opens
            uint256 end = uint256(h.round) + RING;
            if (end > TOTAL_ROUNDS) end = TOTAL_ROUNDS;
            for (uint256 r = h.round; r < end; r++) {
                uint256 hdr = _header(r);
                if (r != h.round && hdr >> 64 == 0) continue;
                uint256 hk = HDR_BASE + r % RING;
                assembly ("memory-safe") {
                    sstore(hk, add(r, 1))
                }
                emit RoundReopened(uint64(r), keep, h.n);
            }
            h.openedAt = uint40(block.number);
        } else {
            h.completedAt = uint40(block.number);
        }
        _hot = h;
    }

    // ------------------------------------------------------------------ views

    /// No sum is stored in the hashed mode: the sums are in the RoundCompleted events.
    function roundSum(uint64) external pure returns (bytes memory) {
        revert("hashed mode: read RoundCompleted");
    }

    /// Submission bitmap (bit = client index; all clients that submitted, excluded ones too) and
    /// aggregated flag of round r while its ring slot holds it (zeros otherwise).
    function roundStatus(uint64 r) external view returns (uint64 submitted, bool aggregated) {
        uint256 hdr = _header(r);
        submitted = uint64(hdr >> 64);
        aggregated = hdr & AGG != 0;
    }

    /// Whether `client` submitted to `round`: exact for rounds in the ring (head and later); for
    /// a round before head, true when the client contributed to it (a participant when it was
    /// done).
    function hasSubmitted(uint64 round, address client) external view returns (bool) {
        uint256 w = _client[client];
        Hot memory h = _hot;
        if (round < _accepted(w, h)) return true;
        if (!h.started || h.ended || round < h.round) return false;
        return (_header(round) >> (64 + ((w >> SH_INDEX) & 0xFF))) & 1 != 0 && w & F_REG != 0;
    }

    // ------------------------------------------------------------------ mode hooks

    function _advance(Hot memory h) internal override {
        super._advance(h);
        if (!h.ended && _full(h.round, h.submitted)) h.completedAt = uint40(block.number);
    }

    function _acceptedLive(uint256, Hot memory h) internal pure override returns (uint256) {
        return uint256(h.round) + (h.ended ? 1 : 0);
    }

    function _headComplete(Hot memory h) internal view override returns (bool) {
        return _header(h.round) & AGG != 0;
    }

    function _headWaiting(Hot memory h) internal view override returns (bool) {
        return _full(h.round, h.submitted);
    }

    function _headCount(Hot memory h) internal view override returns (uint8 n) {
        uint64 b = uint64(_header(h.round) >> 64) & h.submitted;
        for (; b != 0; b &= b - 1) n++;
    }

    function _onElected(Hot memory h, uint64 mask) internal pure override {
        h.submitted = mask;
    }

    function _hashed() internal pure override returns (bool) {
        return true;
    }
}
