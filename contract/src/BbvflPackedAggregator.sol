// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {BbvflBase} from "./BbvflBase.sol";

/// @title bbvfl on-chain aggregators with bit-packed values: BbvflPackedAggregator (aggregate()
/// with the packed payloads) and BbvflOptimisticAggregator (postSum() and dispute())
/// @notice BbvflPacked, their shared part: the hashed mode of BbvflHashAggregator (same Config with hashed = true, same rounds,
/// pipelining, staleness, timeout, election, rewards and views; read that contract's header
/// first) with two differences that cut the calldata toward one copy of the values:
///
/// - Packing ("bits"). Plain values only (masked sessions are refused). A value 0..b travels at
///   VB = ceil(log2(b+1)) bits (5 for b = 16), bit-sliced in blocks of 256 values: the n values
///   of a round form ceil(n/256) blocks, block j holds values 256j .. 256j+w-1 (w = min(256,
///   n-256j)) as VB planes of pb = ceil(w/8) bytes each, plane k (k = 0 the least significant
///   bit) first to last; in a plane, value 256j+t is bit 7-(t%8) of byte t/8. The bits past w in
///   the last byte of a plane must be 0 (PaddingNotZero). Length: VB*(32*floor(n/256) +
///   ceil((n%256)/8)) bytes. submit checks every value <= b on the planes (a bit-sliced compare,
///   ValueAboveLevels). The contract sums in the same layout with SB = ceil(log2(M*b+1)) planes
///   (a bit-sliced ripple-carry adder, 256 values per word operation): RoundCompleted's sum is
///   SB-bit bit-sliced, same blocks (7 planes for M = 5, b = 16).
/// - BbvflPackedAggregator: aggregate(round, payloads) as in the hashed mode, with the packed
///   payloads (client index order), summed from the packing.
/// - BbvflOptimisticAggregator (no aggregate()): a participant may postSum(round, sumHash):
///   keccak256 of the round's packed sum (the SB-bit bit-sliced layout above), without the sum or
///   the payloads: the values are on chain once (the submissions' calldata and SubmittedPayload
///   logs) and every reader sums them itself. The contract checks only the round (head, complete,
///   not aggregated), stores one word (block << 192 | low 192 bits of keccak256(round, claimer,
///   sumHash, the participants' stored payload hashes in index order)), emits SumClaimed(round,
///   claimer, sumHash) and RoundCompleted(round, n, empty sum), and the round proceeds as if
///   aggregated. Within roundTimeoutBlocks blocks after the claim anyone may dispute(round,
///   claimer, sumHash, payloads) with the payloads of the round (client index order, read from the
///   SubmittedPayload logs): the contract checks them against the claim's stored hashes
///   (ClaimMismatch), recomputes the sum and, when it differs, excludes the claimer (Excluded
///   reason 4; a new active client is elected, reason 3, if it was the active one), rolls the
///   session back to that round (head = round, aggregated with the recomputed sum, emitted as
///   SumDisputed then RoundCompleted again: a TRAIN round waits for a new gradient, an EVAL round
///   is done) and clears the latest label-gradient posts. A correct sum's dispute reverts
///   SumCorrect, a late one DisputeTooLate(deadline), a round with no claim standing NoClaim
///   (never claimed, already disputed, or a claim erased by a roll-back to an earlier round). An
///   accepted dispute clears the metrics of the round's epoch (posted again when it completes
///   again); payRewards(e) is refused DisputeWindowOpen(until) while a claim of epoch e can still
///   be disputed, so no payout is ever made for a sum a dispute undoes. One honest participant
///   that checks every claim within the deadline suffices: no honest majority.
///   Rounds submitted ahead of the disputed one keep their submissions (they were computed
///   before its gradient); later claims are erased by the roll-back and re-posted.
/// - packing() returns (VB, SB, optimistic, dispute window in blocks).
abstract contract BbvflPacked is BbvflBase {
    uint256 public constant RING = 8;
    uint256 internal constant HASH_BASE = uint256(keccak256("bbvfl.packed.hashes"));
    uint256 private constant M64 = 0xFFFFFFFFFFFFFFFF;
    uint256 internal constant M192 = (1 << 192) - 1;

    uint256 internal immutable VB; // bits per value on the wire
    uint256 internal immutable SB; // bits per sum value


    /// A submission (see BbvflHashAggregator): q is the packed payload exactly as submitted.
    event SubmittedPayload(uint64 indexed round, address indexed client, bytes q);
    /// @notice Packing: a bit past the last value of a block's plane is set.
    error PaddingNotZero();
    constructor(Config memory c, address[] memory members) BbvflBase(c, true, members) {
        require(!c.masked, MaskedUnsupported());
        VB = _bitsFor(c.levels);
        SB = _bitsFor(uint256(c.clients) * c.levels);
    }

    function _bitsFor(uint256 x) private pure returns (uint256 n) {
        while ((uint256(1) << n) <= x) n++;
    }

    /// Bits per value on the wire, bits per sum value, optimistic mode, dispute window (blocks).
    function packing() external view returns (uint8 valueBits, uint8 sumBits, bool optimistic, uint64 disputeBlocks) {
        return (uint8(VB), uint8(SB), _optimistic(), TIMEOUT_BLOCKS);
    }

    function _optimistic() internal pure virtual returns (bool);

    /// Bytes of n values at `bits` bits each in the bit-sliced block layout.
    function _plen(uint256 n, uint256 bits) internal pure returns (uint256) {
        unchecked {
            return bits * (((n >> 8) << 5) + (((n & 255) + 7) >> 3));
        }
    }

    // ------------------------------------------------------------------ submission

    /// Stores keccak256(q) for (round, sender); see BbvflHashAggregator for which rounds are open.
    function submit(uint64 round, bytes calldata q) external {
        uint256 hw;
        assembly ("memory-safe") {
            hw := sload(_hot.slot)
        }
        if (!(hw & HOT_STARTED != 0)) _revert(NotTraining.selector);
        if (!(hw & HOT_ENDED == 0)) _revert(SessionOver.selector);
        uint256 head = hw & M64;
        if (!(round >= head)) _revert(RoundClosed.selector, round, head);
        if (!(_open(round, head))) _revert(RoundNotOpen.selector, round, head);
        uint256 w = _client[msg.sender];
        if (!(w & F_REG != 0)) _revert(NotRegistered.selector);
        if (!(w & F_EXCL == 0)) _revert(ClientExcluded.selector);
        _validate(round, q);
        uint256 dk;
        unchecked {
            dk = HASH_BASE + ((round % RING) << 6) + ((w >> SH_INDEX) & 0xFF);
        }
        uint256 old;
        assembly ("memory-safe") {
            old := sload(dk)
        }
        if (!(old >> 224 != uint256(round) + 1)) _revert(AlreadySubmitted.selector, round);
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
        uint256 word;
        unchecked {
            word = ((uint256(round) + 1) << 224) | ((block.number & M32) << 192) | (uint256(d) & M192);
        }
        bytes32 topic = SubmittedPayload.selector;
        assembly ("memory-safe") {
            sstore(dk, word)
            log3(f, dl, topic, round, caller())
        }
    }

    /// Length, padding and range of a packed payload of `round`.
    function _validate(uint64 round, bytes calldata q) private view {
        uint256 n = _dataLen(round);
        uint256 want = _plen(n, VB);
        if (!(q.length == want)) _revert(BadLength.selector, want, q.length);
        (bool above, bool pad) = _check(q, n);
        if (!(!pad)) _revert(PaddingNotZero.selector);
        if (!(!above)) _revert(ValueAboveLevels.selector, LEVELS);
    }

    /// r is open for submissions while head is `head` (r >= head given).
    function _open(uint256 r, uint256 head) private view returns (bool) {
        unchecked {
            return r < TOTAL_ROUNDS && r - head < RING && _trainBefore(r) - _trainBefore(head) <= STALENESS;
        }
    }

    function _curvOn() internal pure override returns (bool) {
        return false;
    }

    function _locate(uint256 r) internal view override returns (uint256 e, uint256 pos, bool ce) {
        unchecked {
            uint256 per = uint256(T) + V;
            return (r / per, r % per, false);
        }
    }

    function _trainBefore(uint256 x) private view returns (uint256) {
        unchecked {
            uint256 t = T;
            uint256 per = t + V;
            uint256 pos = x % per;
            return (x / per) * t + (pos < t ? pos : t);
        }
    }

    /// Bit-sliced checks of a packed payload of n values: some value above b; some padding bit set.
    /// Full blocks (256 values, VB words) take a fast path when b = 2^VB - 1 (every VB-bit value
    /// is in range: nothing to check) or b = 16 (5 bits: a value is above 16 iff bit 4 is set
    /// with any lower bit, one AND per block of plane 4 with the OR of planes 0..3). Other b, and
    /// the last partial block (the only one with padding), take the general bit-sliced compare.
    function _check(bytes calldata q, uint256 n) private view returns (bool above, bool pad) {
        uint256 vb = VB;
        uint256 lv = LEVELS;
        // 0: no compare needed on full blocks, 1: b = 16 (top plane AND lower planes), 2: general compare
        uint256 shape;
        unchecked {
            shape = lv + 1 == (uint256(1) << vb) ? 0 : (lv == 16 ? 1 : 2);
        }
        assembly ("memory-safe") {
            let off := q.offset
            let gtb := 0
            let bad := 0
            let j := 0
            if lt(shape, 2) {
                let stride := shl(5, vb)
                let end := add(off, mul(shr(8, n), stride))
                if shape {
                    // b = 16: above iff plane 4 and any of planes 0..3
                    for {} lt(off, end) { off := add(off, 0xa0) } {
                        let lo := or(or(calldataload(off), calldataload(add(off, 0x20))), or(calldataload(add(off, 0x40)), calldataload(add(off, 0x60))))
                        gtb := or(gtb, and(lo, calldataload(add(off, 0x80))))
                    }
                }
                off := end
                j := shr(8, n)
            }
            let nb := shr(8, add(n, 255))
            for {} lt(j, nb) { j := add(j, 1) } {
                let w := sub(n, shl(8, j))
                if gt(w, 256) { w := 256 }
                let pb := shr(3, add(w, 7))
                let keep := not(sub(shl(sub(256, shl(3, pb)), 1), 1))
                let valid := not(sub(shl(sub(256, w), 1), 1))
                let same := valid
                for { let k := vb } gt(k, 0) {} {
                    k := sub(k, 1)
                    let x := and(calldataload(add(off, mul(k, pb))), keep)
                    bad := or(bad, and(x, not(valid)))
                    switch and(shr(k, lv), 1)
                    case 0 {
                        gtb := or(gtb, and(same, x))
                        same := and(same, not(x))
                    }
                    default { same := and(same, x) }
                }
                off := add(off, mul(vb, pb))
            }
            above := iszero(iszero(gtb))
            pad := iszero(iszero(bad))
        }
    }

    // ------------------------------------------------------------------ aggregation

    /// Checks that `round` is the head, open, complete and not aggregated; returns its participant mask.
    function _headOpen(Hot memory h, uint64 round) internal view returns (uint64 mask) {
        mask = _headReady(h, round);
        if (!(_submitted(round, mask) == mask)) _revert(RoundNotComplete.selector, round);
    }

    /// _headOpen without the completeness check (the caller reads the hash words itself).
    function _headReady(Hot memory h, uint64 round) internal pure returns (uint64) {
        if (!(h.started && !h.ended)) _revert(NotTraining.selector);
        if (!(round >= h.round)) _revert(RoundClosed.selector, round, h.round);
        if (!(round == h.round)) _revert(RoundNotOpen.selector, round, h.round);
        if (!(h.count == 0)) _revert(AlreadyAggregated.selector, round);
        return h.submitted;
    }

    /// head's sum exists: a TRAIN round waits for its gradient, an EVAL round is done.
    function _done(Hot memory h, uint64 round) internal {
        _markEpoch(round);
        if (_isTrain(round)) {
            h.count = 1;
            h.completedAt = uint40(block.number);
        } else {
            _advance(h);
        }
        _hot = h;
    }

    function _inc(uint256 i) internal pure returns (uint256) {
        unchecked {
            return i + 1;
        }
    }

    function _hash(bytes calldata p) internal pure returns (bytes32 d) {
        assembly ("memory-safe") {
            let f := mload(0x40)
            calldatacopy(f, p.offset, p.length)
            d := keccak256(f, p.length)
        }
    }

    /// The SB-bit bit-sliced sum of the packed payloads (n values each, lengths checked).
    function _sum(bytes[] calldata payloads, uint256 n) internal view returns (bytes memory out) {
        uint256 vb = VB;
        uint256 sb = SB;
        uint256 nb;
        uint256 words;
        unchecked {
            nb = (n + 255) >> 8;
            words = nb * sb;
        }
        uint256[] memory acc = new uint256[](words);
        for (uint256 i = 0; i < payloads.length; i = _inc(i)) {
            bytes calldata p = payloads[i];
            assembly ("memory-safe") {
                let a := add(acc, 0x20)
                let off := p.offset
                for { let j := 0 } lt(j, nb) { j := add(j, 1) } {
                    let w := sub(n, shl(8, j))
                    if gt(w, 256) { w := 256 }
                    let pb := shr(3, add(w, 7))
                    let keep := not(sub(shl(sub(256, shl(3, pb)), 1), 1))
                    let c := 0
                    for { let k := 0 } lt(k, sb) { k := add(k, 1) } {
                        let x := 0
                        switch lt(k, vb)
                        case 1 { x := and(calldataload(add(off, mul(k, pb))), keep) }
                        default { if iszero(c) { break } }
                        let ptr := add(a, shl(5, k))
                        let y := mload(ptr)
                        let t := xor(y, x)
                        mstore(ptr, xor(t, c))
                        c := or(and(y, x), and(c, t))
                    }
                    a := add(a, shl(5, sb))
                    off := add(off, mul(vb, pb))
                }
            }
        }
        uint256 len = _plen(n, sb);
        unchecked {
            out = new bytes(len + 32);
        }
        assembly ("memory-safe") {
            let a := add(acc, 0x20)
            let o := add(out, 0x20)
            for { let j := 0 } lt(j, nb) { j := add(j, 1) } {
                let w := sub(n, shl(8, j))
                if gt(w, 256) { w := 256 }
                let pb := shr(3, add(w, 7))
                for { let k := 0 } lt(k, sb) { k := add(k, 1) } {
                    mstore(o, mload(a))
                    a := add(a, 0x20)
                    o := add(o, pb)
                }
            }
            mstore(out, len)
        }
    }

    /// The clients of `mask` (bit = index) whose submission word holds round r.
    function _submitted(uint256 r, uint64 mask) internal view returns (uint64 got) {
        unchecked {
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
    }

    // ------------------------------------------------------------------ timeout

    /// When head has not completed within roundTimeoutBlocks of opening: excludes the
    /// participants that did not submit to it (plain values: the round completes without them).
    function expireRound() external {
        Hot memory h = _hot;
        if (!(h.started && !h.ended)) _revert(NotTraining.selector);
        uint64 keep = _submitted(h.round, h.submitted);
        if (!(keep != h.submitted)) _revert(RoundAlreadyComplete.selector);
        uint256 due;
        unchecked {
            due = uint256(h.openedAt) + TIMEOUT_BLOCKS;
        }
        if (!(block.number > due)) _revert(RoundNotTimedOut.selector, due);
        if (!(keep != 0)) _revert(NoSubmissions.selector);
        if (_excludeMissing(h, keep, 3)) _reelect(h.round, 2);
        h.submitted = keep;
        h.completedAt = uint40(block.number);
        _hot = h;
    }

    // ------------------------------------------------------------------ views

    /// No sum is stored: the sums are in the RoundCompleted events.
    function roundSum(uint64) external pure returns (bytes memory) {
        _revert(NoStoredSum.selector);
    }

    /// As in BbvflHashAggregator.
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
        unchecked {
            for (; b != 0; b &= b - 1) n++;
        }
    }

    function _onElected(Hot memory h, uint64 mask) internal pure override {
        h.submitted = mask;
    }

    function _hashed() internal pure override returns (bool) {
        return true;
    }
}

/// @title Packed hashed mode: aggregate(round, payloads) re-supplies the packed payloads (see BbvflPacked).
contract BbvflPackedAggregator is BbvflPacked {
    constructor(Config memory c, address[] memory members) BbvflPacked(c, members) {}

    function _optimistic() internal pure override returns (bool) {
        return false;
    }

    /// Forms the sum of head from the participants' payloads (client index order), checks each
    /// against its stored hash, emits RoundCompleted. Anyone may call it (both modes).
    function aggregate(uint64 round, bytes[] calldata payloads) external {
        Hot memory h = _hot;
        uint64 mask = _headOpen(h, round);
        if (!(payloads.length == h.n)) _revert(BadPayloadCount.selector, h.n, payloads.length);
        uint256 n = _dataLen(round);
        uint256 plen = _plen(n, VB);
        uint256 base = HASH_BASE + ((round % RING) << 6);
        uint256 k;
        for (uint256 i = 0; mask >> i != 0; i++) {
            if ((mask >> i) & 1 == 0) continue;
            bytes calldata p = payloads[k++];
            uint256 want;
            uint256 dk = base + i;
            assembly ("memory-safe") {
                want := sload(dk)
            }
            if (!(p.length == plen && uint256(_hash(p)) & M192 == want & M192)) _revert(PayloadHashMismatch.selector, k - 1);
        }
        emit RoundCompleted(round, h.n, _sum(payloads, n));
        _done(h, round);
    }
}

/// @title Optimistic packed mode: postSum(round, sum) and dispute() (see BbvflPacked).
/// @notice The claim word of round r is claim block << 192 | the low 192 bits of the claim's
/// commitment keccak256(r, claimer, sumHash, the participants' stored payload hashes in
/// index order), one fresh word per round (a mapping by round, never overwritten by another round).
contract BbvflOptimisticAggregator is BbvflPacked {
    // round => claim word (see the contract's notice); low 192 bits 0: no claim standing (a
    // disputed round keeps the dispute's block in the high bits: see _disputableUntil)
    mapping(uint256 => uint256) private _claims;

    /// Optimistic mode: `claimer` claimed keccak256(packed sum) of `round` is sumHash (RoundCompleted,
    /// with an empty sum, follows in the same transaction; the sum is the payloads').
    event SumClaimed(uint64 indexed round, address indexed claimer, bytes32 sumHash);
    /// Optimistic mode: `disputer` proved the sum `claimer` posted for `round` wrong; the session
    /// rolled back to `round` (RoundCompleted with the recomputed sum follows).
    event SumDisputed(uint64 indexed round, address indexed claimer, address indexed disputer);

    /// @notice No claimed sum of this round can be disputed (never claimed, already disputed,
    /// or erased by a roll-back).
    /// @param round the round
    error NoClaim(uint64 round);
    /// @notice The dispute window of the claim closed.
    /// @param deadline last block a dispute was accepted
    error DisputeTooLate(uint256 deadline);
    /// @notice A claim of the epoch can still be disputed: its payout waits until the window has
    /// closed, so that no payout is ever made for a sum a dispute undoes.
    /// @param until the last block of the window (payRewards is accepted from the next one)
    error DisputeWindowOpen(uint256 until);
    /// @notice The claimer, sum or payloads are not those the claim committed to.
    error ClaimMismatch();
    /// @notice The disputed sum is the sum of the payloads: nothing to correct.
    /// @param round the round
    error SumCorrect(uint64 round);
    constructor(Config memory c, address[] memory members) BbvflPacked(c, members) {}

    function _optimistic() internal pure override returns (bool) {
        return true;
    }

    /// The last block a claim of epoch e can be disputed in: its last round's claim (or that
    /// round's dispute) plus the window. Claims are made round by round and a roll-back erases
    /// the later ones, so claim blocks grow with the round: the last round's bounds the epoch's.
    function _disputableUntil(uint32 e) private view returns (uint256) {
        unchecked {
            return (_claims[_epochEnd(e) - 1] >> 192) + TIMEOUT_BLOCKS;
        }
    }

    function _onPay(uint32 e) internal view override {
        uint256 until = _disputableUntil(e);
        if (!(block.number > until)) _revert(DisputeWindowOpen.selector, until);
    }

    function _settleFrom(uint32 e) internal view override returns (uint256) {
        uint256 d = super._settleFrom(e);
        uint256 until = _disputableUntil(e);
        return until > d ? until : d;
    }

    /// Optimistic mode: a participant posts keccak256 of head's packed sum, without the sum or
    /// the payloads (see the header). One pass over the participants' hash words checks that the
    /// round is complete and lays out the commitment.
    function postSum(uint64 round, bytes32 sumHash) external {
        uint256 w = _client[msg.sender];
        if (!(w & F_REG != 0)) _revert(NotRegistered.selector);
        if (!(w & F_EXCL == 0)) _revert(ClientExcluded.selector);
        Hot memory h = _hot;
        (uint256 f, uint256 o) = _commitHashes(round, _headReady(h, round));
        uint256 c;
        assembly ("memory-safe") {
            mstore(add(f, 0x40), sumHash)
            c := and(keccak256(f, sub(o, f)), M192)
        }
        _claims[round] = (block.number << 192) | c;
        emit SumClaimed(round, msg.sender, sumHash);
        emit RoundCompleted(round, h.n, "");
        _done(h, round);
    }

    /// Lays out [round][claimer][(sum hash, later)][each participant's stored hash] at f (free
    /// memory, not allocated: the caller uses it before any allocation), checking that every
    /// participant of `mask` submitted to `round`; o is the end of the layout.
    function _commitHashes(uint64 round, uint64 mask) private view returns (uint256 f, uint256 o) {
        uint256 base;
        unchecked {
            base = HASH_BASE + ((round % RING) << 6);
        }
        bool complete;
        assembly ("memory-safe") {
            f := mload(0x40)
            mstore(f, round)
            mstore(add(f, 0x20), caller())
            o := add(f, 0x60)
            let tag := add(round, 1)
            complete := 1
            for { let i := 0 } iszero(iszero(shr(i, mask))) { i := add(i, 1) } {
                if and(shr(i, mask), 1) {
                    let x := sload(add(base, i))
                    if iszero(eq(shr(224, x), tag)) { complete := 0 }
                    mstore(o, and(x, M192))
                    o := add(o, 0x20)
                }
            }
        }
        if (!complete) _revert(RoundNotComplete.selector, round);
    }

    /// Anyone proves the claimed sum of `round` wrong with the round's payloads (see the header).
    function dispute(uint64 round, address claimer, bytes32 sumHash, bytes[] calldata payloads) external {
        Hot memory h = _hot;
        uint256 c = _claimStanding(h, round);
        uint256 n = _dataLen(round);
        if (!(_claimHash(round, claimer, sumHash, payloads, _plen(n, VB)) == c & M192)) _revert(ClaimMismatch.selector);
        bytes memory s = _sum(payloads, n);
        if (!(keccak256(s) != sumHash)) _revert(SumCorrect.selector, round);
        _claims[round] = block.number << 192;
        _rollback(h, round, claimer);
        emit SumDisputed(round, claimer, msg.sender);
        emit RoundCompleted(round, uint8(payloads.length), s);
        _done(h, round);
    }

    /// The claim word of `round` when a dispute of it is accepted now (see the header).
    function _claimStanding(Hot memory h, uint64 round) private view returns (uint256 c) {
        c = _claims[round];
        if (!(c & M192 != 0 && (round < h.round || (round == h.round && (h.count != 0 || h.ended))))) _revert(NoClaim.selector, round);
        uint256 deadline;
        unchecked {
            deadline = (c >> 192) + TIMEOUT_BLOCKS;
        }
        if (!(block.number <= deadline)) _revert(DisputeTooLate.selector, deadline);
    }

    /// Low 192 bits of keccak256(round, claimer, sumHash, the payloads' hashes' low 192 bits).
    function _claimHash(uint64 round, address claimer, bytes32 sumHash, bytes[] calldata payloads, uint256 plen)
        private
        pure
        returns (uint256)
    {
        uint256 np = payloads.length;
        uint256 f;
        assembly ("memory-safe") {
            f := mload(0x40)
            mstore(0x40, add(f, shl(5, add(np, 3))))
        }
        assembly ("memory-safe") {
            mstore(f, round)
            mstore(add(f, 0x20), claimer)
            mstore(add(f, 0x40), sumHash)
        }
        for (uint256 i = 0; i < np; i = _inc(i)) {
            bytes calldata p = payloads[i];
            if (!(p.length == plen)) _revert(ClaimMismatch.selector);
            uint256 hv = uint256(_hash(p)) & M192;
            assembly ("memory-safe") {
                mstore(add(f, shl(5, add(i, 3))), hv)
            }
        }
        uint256 d;
        assembly ("memory-safe") {
            d := keccak256(f, shl(5, add(np, 3)))
        }
        return d & M192;
    }

    /// Roll-back of a disputed round: head = round (not aggregated yet), the claimer excluded.
    function _rollback(Hot memory h, uint64 round, address claimer) private {
        // the round's epoch is not complete any more: its metrics are posted again when it is
        (uint256 e,,) = _locate(round);
        _epoch[uint32(e)] &= ~uint256(1);
        h.round = round;
        h.count = 0;
        h.ended = false;
        h.openedAt = uint40(block.number);
        _labelPosts = 0;
        uint256 w = _client[claimer];
        if (w & F_EXCL != 0 || _participants.length < 2) return;
        uint64 keep = h.submitted & ~uint64(1 << ((w >> SH_INDEX) & 0xFF));
        _excludeMissing(h, keep, 4);
        h.submitted = keep;
        if (claimer == _active) _reelect(round, 3);
    }
}
