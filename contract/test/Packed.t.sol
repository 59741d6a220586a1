// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base} from "./utils/Base.sol";
import {BbvflBase} from "../src/BbvflBase.sol";
import {BbvflPacked, BbvflPackedAggregator, BbvflOptimisticAggregator} from "../src/BbvflPackedAggregator.sol";

/// Packed values (bit-sliced at ceil(log2(b+1)) bits) and the optimistic mode (postSum, dispute).
contract PackedTest is Base {
    bytes32 internal constant RC = keccak256("RoundCompleted(uint64,uint8,bytes)");
    bytes32 internal constant EX = keccak256("Excluded(address,uint8)");
    address internal constant ANYONE = address(0xA11CE);

    BbvflBase.Config internal c;

    function bitsFor(uint256 x) internal pure returns (uint256 n) {
        while ((uint256(1) << n) <= x) n++;
    }

    /// Reference packer (independent of the contract): blocks of 256 values, nb planes each of
    /// ceil(w/8) bytes, plane k = bit k, value t of a block at bit 7-(t%8) of byte t/8.
    function pack(uint256[] memory v, uint256 nb) internal pure returns (bytes memory out) {
        uint256 n = v.length;
        uint256 len = nb * ((n / 256) * 32 + ((n % 256) + 7) / 8);
        out = new bytes(len);
        uint256 o;
        for (uint256 j = 0; j < n; j += 256) {
            uint256 w = n - j < 256 ? n - j : 256;
            uint256 pb = (w + 7) / 8;
            for (uint256 k = 0; k < nb; k++) {
                for (uint256 t = 0; t < w; t++) {
                    if ((v[j + t] >> k) & 1 == 1) out[o + t / 8] |= bytes1(uint8(0x80 >> (t % 8)));
                }
                o += pb;
            }
        }
    }

    function cfg(uint8 m, uint32 p, uint8 levels, uint32 r) internal pure returns (BbvflBase.Config memory k) {
        k = configW(m, 1, p, levels, false, r, 1, 0, 0, 1);
        k.hashed = true;
    }

    function startP(BbvflBase.Config memory k) internal returns (BbvflPackedAggregator agg) {
        c = k;
        agg = new BbvflPackedAggregator(k, openRegistration());
        registerAll(agg, k.clients);
        commitAll(agg, k.clients);
        revealAll(agg, k.clients);
    }

    function startO(BbvflBase.Config memory k) internal returns (BbvflOptimisticAggregator agg) {
        c = k;
        agg = new BbvflOptimisticAggregator(k, openRegistration());
        registerAll(agg, k.clients);
        commitAll(agg, k.clients);
        revealAll(agg, k.clients);
    }

    function vals(uint256 i, uint64 r) internal view returns (uint256[] memory v) {
        v = new uint256[](c.dim);
        for (uint256 j = 0; j < v.length; j++) v[j] = uint256(keccak256(abi.encode(i, r, j))) % (uint256(c.levels) + 1);
    }

    function payload(uint256 i, uint64 r) internal view returns (bytes memory) {
        return pack(vals(i, r), bitsFor(c.levels));
    }

    function submitAs(BbvflBase agg, uint256 i, uint64 r) internal {
        bytes memory q = payload(i, r);
        vm.prank(clientAddr(i));
        BbvflPacked(address(agg)).submit(r, q);
    }

    function payloads(BbvflBase agg, uint64 r) internal view returns (bytes[] memory ps) {
        address[] memory parts = agg.participants();
        ps = new bytes[](parts.length);
        for (uint256 k = 0; k < parts.length; k++) ps[k] = payload(indexOf(parts[k]), r);
    }

    /// The packed sum of the clients in `idx` for round r (plus `delta` on value 0).
    function sumOf(uint256[] memory idx, uint64 r, uint256 delta) internal view returns (bytes memory) {
        uint256[] memory s = new uint256[](c.dim);
        for (uint256 k = 0; k < idx.length; k++) {
            uint256[] memory v = vals(idx[k], r);
            for (uint256 j = 0; j < v.length; j++) s[j] += v[j];
        }
        s[0] += delta;
        return pack(s, bitsFor(uint256(c.clients) * c.levels));
    }

    function all(uint256 m) internal pure returns (uint256[] memory idx) {
        idx = new uint256[](m);
        for (uint256 i = 0; i < m; i++) idx[i] = i;
    }

    function lastSum(uint64 r) internal returns (bytes memory sum, uint256 contributors, bool found) {
        VmExtraLogs[] memory logs = _logs();
        for (uint256 i = logs.length; i > 0; i--) {
            if (logs[i - 1].topics[0] == RC && uint256(logs[i - 1].topics[1]) == r) {
                (uint8 n, bytes memory s) = abi.decode(logs[i - 1].data, (uint8, bytes));
                return (s, n, true);
            }
        }
    }

    struct VmExtraLogs {
        bytes32[] topics;
        bytes data;
        address emitter;
    }

    function _logs() internal returns (VmExtraLogs[] memory out) {
        bytes memory raw = abi.encode(vx.getRecordedLogs());
        out = abi.decode(raw, (VmExtraLogs[]));
    }

    // ------------------------------------------------------------------ packing

    /// Lengths, range and padding at block boundaries and bit widths: n = 1, 7, 8, 9, 255, 256,
    /// 257, 300, 513 values, b = 1, 2, 8, 15, 16, 17 (1, 2, 4, 4, 5, 5 bits: the range check's
    /// paths, b = 2^VB - 1 (no compare), b = 16 (plane 4 AND planes 0..3) and any other b).
    function test_packing_boundaries() public {
        uint32[9] memory ns = [uint32(1), 7, 8, 9, 255, 256, 257, 300, 513];
        uint8[6] memory bs = [uint8(1), 2, 8, 15, 16, 17];
        for (uint256 a = 0; a < bs.length; a++) {
            for (uint256 t = 0; t < ns.length; t++) boundary(ns[t], bs[a]);
        }
    }

    function boundary(uint32 nn, uint8 lv) internal {
        BbvflPackedAggregator agg = startP(cfg(2, nn, lv, 4));
        (uint8 vb, uint8 sb, bool opt,) = agg.packing();
        assertEq(vb, bitsFor(lv), "value bits");
        assertEq(sb, bitsFor(2 * uint256(lv)), "sum bits");
        assertTrue(!opt, "packed is not optimistic");
        uint256[] memory v = new uint256[](nn);
        // the largest value at the first and last position, b+1 refused at each
        v[0] = lv;
        v[nn - 1] = lv;
        bytes memory q = pack(v, vb);
        assertEq(q.length, uint256(vb) * ((uint256(nn) / 256) * 32 + (uint256(nn) % 256 + 7) / 8), "length");
        if ((uint256(lv) + 1) >> vb == 0) {
            v[nn - 1] = uint256(lv) + 1;
            vm.prank(clientAddr(0));
            vx.expectPartialRevert(BbvflBase.ValueAboveLevels.selector);
            agg.submit(0, pack(v, vb));
            v[nn - 1] = lv;
            v[0] = uint256(lv) + 1;
            vm.prank(clientAddr(0));
            vx.expectPartialRevert(BbvflBase.ValueAboveLevels.selector);
            agg.submit(0, pack(v, vb));
            v[0] = lv;
        }
        // a set bit past the last value of the last block (when the block's bytes have room)
        if (nn % 8 != 0) {
            bytes memory bad = pack(v, vb);
            bad[bad.length - 1] |= bytes1(uint8(1));
            vm.prank(clientAddr(0));
            vx.expectPartialRevert(BbvflPacked.PaddingNotZero.selector);
            agg.submit(0, bad);
        }
        bytes memory longer = bytes.concat(q, hex"00");
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.BadLength.selector);
        agg.submit(0, longer);
        bytes memory shorter = new bytes(q.length - 1);
        for (uint256 j = 0; j < shorter.length; j++) shorter[j] = q[j];
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.BadLength.selector);
        agg.submit(0, shorter);
        vm.prank(clientAddr(0));
        agg.submit(0, q);
        vm.prank(clientAddr(1));
        agg.submit(0, q);
        bytes[] memory ps = new bytes[](2);
        ps[0] = q;
        ps[1] = q;
        vx.recordLogs();
        agg.aggregate(0, ps);
        uint256[] memory s = new uint256[](nn);
        s[0] = 2 * uint256(lv);
        s[nn - 1] = 2 * uint256(lv);
        (bytes memory got,,) = lastSum(0);
        assertEq(got, pack(s, sb), "sum of the largest values");
    }

    /// Every value above b is refused wherever it sits in a full block (each plane and word of
    /// the 256-value block: the fast path of b = 16, the general compare of b = 8) and in the
    /// partial last block;
    /// b itself is accepted there.
    function test_range_check_full_blocks() public {
        uint8[2] memory bs = [uint8(16), 8];
        for (uint256 a = 0; a < bs.length; a++) {
            uint8 lv = bs[a];
            BbvflPackedAggregator agg = startP(cfg(2, 600, lv, 4));
            uint256 vb = bitsFor(lv);
            uint256[] memory v = new uint256[](600);
            uint16[6] memory at = [uint16(0), 31, 100, 255, 256 + 170, 599];
            for (uint256 t = 0; t < at.length; t++) {
                for (uint256 x = uint256(lv) + 1; x < (uint256(1) << vb); x++) {
                    v[at[t]] = x;
                    vm.prank(clientAddr(0));
                    vx.expectPartialRevert(BbvflBase.ValueAboveLevels.selector);
                    agg.submit(0, pack(v, vb));
                }
                v[at[t]] = lv;
            }
            vm.prank(clientAddr(0));
            agg.submit(0, pack(v, vb));
        }
    }

    /// Masked sessions are refused (packing carries plain values only).
    function test_masked_refused() public {
        BbvflBase.Config memory k = cfg(2, 8, 16, 4);
        k.masked = true;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.MaskedUnsupported.selector));
        new BbvflPackedAggregator(k, openRegistration());
    }

    /// Random values of 5 clients over 3 blocks: the contract's sum is the reference packing of the sums.
    function test_packed_sum_matches_reference() public {
        BbvflPackedAggregator agg = startP(cfg(5, 600, 16, 4));
        for (uint64 r = 0; r < 3; r++) {
            for (uint256 i = 0; i < 5; i++) submitAs(agg, i, r);
            vx.recordLogs();
            agg.aggregate(r, payloads(agg, r));
            (bytes memory got, uint256 n,) = lastSum(r);
            assertEq(n, 5, "contributors");
            assertEq(got, sumOf(all(5), r, 0), "sum");
            vm.prank(agg.active());
            agg.postGradient(r, new bytes(600 * 4), "");
        }
    }

    // ------------------------------------------------------------------ optimistic

    function test_optimistic_correct_sum_stands() public {
        BbvflOptimisticAggregator agg = startO(cfg(3, 300, 16, 4));
        (,, bool opt, uint64 win) = agg.packing();
        assertTrue(opt, "optimistic");
        assertEq(win, c.roundTimeoutBlocks, "dispute window = round timeout");
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 0);
        bytes memory s = sumOf(all(3), 0, 0);
        // only a participant may claim
        vm.prank(ANYONE);
        vx.expectPartialRevert(BbvflBase.NotRegistered.selector);
        agg.postSum(0, keccak256(s));
        vx.recordLogs();
        vm.prank(clientAddr(1));
        agg.postSum(0, keccak256(s));
        // the claim carries only keccak256(sum): SumClaimed(round, claimer, sumHash), then
        // RoundCompleted with an empty sum (the values are on chain once, in the submissions)
        VmExtraLogs[] memory lg = _logs();
        bool claimed;
        for (uint256 i = 0; i < lg.length; i++) {
            if (lg[i].topics[0] == BbvflOptimisticAggregator.SumClaimed.selector) {
                assertEq(uint256(lg[i].topics[1]), 0, "claim round");
                assertEq(address(uint160(uint256(lg[i].topics[2]))), clientAddr(1), "claimer");
                assertEq(abi.decode(lg[i].data, (bytes32)), keccak256(s), "claimed hash");
                claimed = true;
            }
            if (lg[i].topics[0] == RC) {
                (uint8 np, bytes memory es) = abi.decode(lg[i].data, (uint8, bytes));
                assertEq(np, 3, "contributors");
                assertEq(es.length, 0, "no sum in the claim's RoundCompleted");
            }
        }
        assertTrue(claimed, "SumClaimed emitted");
        vm.prank(clientAddr(2));
        vx.expectPartialRevert(BbvflBase.AlreadyAggregated.selector);
        agg.postSum(0, keccak256(s));
        // a correct sum's dispute is refused
        bytes[] memory ok = payloads(agg, 0);
        vm.prank(clientAddr(2));
        vx.expectPartialRevert(BbvflOptimisticAggregator.SumCorrect.selector);
        agg.dispute(0, clientAddr(1), keccak256(s), ok);
        // the wrong claimer, sum or payloads do not match the claim
        vx.expectPartialRevert(BbvflOptimisticAggregator.ClaimMismatch.selector);
        agg.dispute(0, clientAddr(2), keccak256(s), ok);
        bytes[] memory ps = payloads(agg, 0);
        ps[2] = ps[1];
        vx.expectPartialRevert(BbvflOptimisticAggregator.ClaimMismatch.selector);
        agg.dispute(0, clientAddr(1), keccak256(s), ps);
        bytes memory s1 = sumOf(all(3), 0, 1);
        vx.expectPartialRevert(BbvflOptimisticAggregator.ClaimMismatch.selector);
        agg.dispute(0, clientAddr(1), keccak256(s1), ok);
        // no claim on round 1
        vx.expectPartialRevert(BbvflOptimisticAggregator.NoClaim.selector);
        agg.dispute(1, clientAddr(1), keccak256(s), ok);
        vm.prank(agg.active());
        agg.postGradient(0, new bytes(300 * 4), "");
        assertEq(agg.currentRound(), 1, "round 0 done");
        assertEq(agg.participants().length, 3, "nobody excluded");
    }

    /// A wrong sum is disputed: the claimer is excluded, the session rolls back to the round
    /// (even after its gradient and the next round's submissions), and the session finishes.
    function test_optimistic_wrong_sum_disputed_round_redone() public {
        BbvflOptimisticAggregator agg = startO(cfg(3, 300, 16, 3));
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 0);
        address cheat = agg.active();
        uint256 ci = indexOf(cheat);
        bytes memory bad = sumOf(all(3), 0, 1);
        vm.prank(cheat);
        agg.postSum(0, keccak256(bad));
        vm.prank(cheat);
        agg.postGradient(0, new bytes(300 * 4), "");
        assertEq(agg.currentRound(), 1, "moved on");
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 1);
        bytes[] memory ps0 = payloads(agg, 0);
        uint256 honest = (ci + 1) % 3;
        vm.roll(block.number + c.roundTimeoutBlocks);
        vx.recordLogs();
        vm.prank(clientAddr(honest));
        agg.dispute(0, cheat, keccak256(bad), ps0);
        (bytes memory got, uint256 n, bool found) = lastSum(0);
        assertTrue(found, "recomputed sum emitted");
        assertEq(n, 3, "contributors of the recomputed sum");
        assertEq(got, sumOf(all(3), 0, 0), "recomputed sum");
        assertEq(agg.currentRound(), 0, "rolled back to the round");
        assertEq(agg.participants().length, 2, "claimer excluded");
        assertTrue(agg.active() != cheat, "new active client");
        vm.prank(cheat);
        vx.expectPartialRevert(BbvflBase.ClientExcluded.selector);
        agg.postSum(1, keccak256(bad));
        // the disputed claim is gone
        vx.expectPartialRevert(BbvflOptimisticAggregator.NoClaim.selector);
        agg.dispute(0, cheat, keccak256(bad), ps0);
        // the round is redone: a new gradient, then round 1 (submitted before) and round 2
        vm.prank(agg.active());
        agg.postGradient(0, new bytes(300 * 4), "");
        uint256[] memory two = new uint256[](2);
        uint256 k;
        for (uint256 i = 0; i < 3; i++) if (i != ci) two[k++] = i;
        vm.prank(agg.active());
        agg.postSum(1, keccak256(sumOf(two, 1, 0)));
        vm.prank(agg.active());
        agg.postGradient(1, new bytes(300 * 4), "");
        for (uint256 i = 0; i < 3; i++) if (i != ci) submitAs(agg, i, 2);
        vm.prank(clientAddr(two[0]));
        agg.postSum(2, keccak256(sumOf(two, 2, 0)));
        vm.prank(agg.active());
        agg.postGradient(2, new bytes(300 * 4), "");
        assertEq(uint256(agg.phase()), uint256(BbvflBase.Phase.Ended), "session finished");
    }

    /// Issue 26, a passive participant's wrong claim that the active client's gradient follows:
    /// the dispute excludes that claimer (not the active client), rolls back to the round with the
    /// recomputed sum, and the same active client posts the round's gradient again.
    function test_optimistic_passive_wrong_claim_after_gradient_redone() public {
        BbvflOptimisticAggregator agg = startO(cfg(3, 300, 16, 3));
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 0);
        address act = agg.active();
        uint256 ci = (indexOf(act) + 1) % 3;
        address cheat = clientAddr(ci);
        bytes memory bad = sumOf(all(3), 0, 2);
        vm.prank(cheat);
        agg.postSum(0, keccak256(bad));
        // the active client computed the right sum itself and posts its gradient on the claim
        vm.prank(act);
        agg.postGradient(0, new bytes(300 * 4), "");
        assertEq(agg.currentRound(), 1, "moved on");
        vx.recordLogs();
        vm.prank(clientAddr((ci + 1) % 3));
        agg.dispute(0, cheat, keccak256(bad), payloads(agg, 0));
        (bytes memory got,, bool found) = lastSum(0);
        assertTrue(found, "recomputed sum emitted");
        assertEq(got, sumOf(all(3), 0, 0), "recomputed sum");
        assertEq(agg.currentRound(), 0, "rolled back");
        assertEq(agg.active(), act, "the active client stays");
        assertEq(agg.participants().length, 2, "the claimer excluded");
        // the round waits for its gradient again: the next round's claim is refused until then
        vm.prank(act);
        agg.postGradient(0, new bytes(300 * 4), "");
        assertEq(agg.currentRound(), 1, "redone");
    }

    /// A dispute after the window (roundTimeoutBlocks after the claim) is refused.
    function test_optimistic_dispute_after_deadline_refused() public {
        BbvflOptimisticAggregator agg = startO(cfg(3, 40, 16, 3));
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 0);
        bytes memory bad = sumOf(all(3), 0, 2);
        vm.prank(clientAddr(0));
        agg.postSum(0, keccak256(bad));
        uint256 claimedAt = block.number;
        bytes[] memory ps = payloads(agg, 0);
        vm.roll(claimedAt + c.roundTimeoutBlocks + 1);
        vx.expectPartialRevert(BbvflOptimisticAggregator.DisputeTooLate.selector);
        agg.dispute(0, clientAddr(0), keccak256(bad), ps);
        // the last block of the window is still in time
        vm.roll(claimedAt + c.roundTimeoutBlocks);
        agg.dispute(0, clientAddr(0), keccak256(bad), ps);
        assertEq(agg.participants().length, 2, "claimer excluded");
    }

    /// A wrong claim on the session's last (EVAL) round: the dispute re-opens the ended session
    /// and completes it with the recomputed sum.
    function test_optimistic_dispute_last_round() public {
        BbvflBase.Config memory k = configW(2, 1, 20, 16, false, 1, 1, 4, 4, 1);
        k.hashed = true;
        BbvflOptimisticAggregator agg = startO(k);
        for (uint256 i = 0; i < 2; i++) submitAs(agg, i, 0);
        vm.prank(clientAddr(0));
        agg.postSum(0, keccak256(sumOf(all(2), 0, 0)));
        vm.prank(agg.active());
        agg.postGradient(0, new bytes(20 * 4), "");
        // eval round 1: 4 rows of 20 values (c.dim is the row length; the round has 80 values)
        c.dim = 80;
        for (uint256 i = 0; i < 2; i++) submitAs(agg, i, 1);
        bytes memory bad = sumOf(all(2), 1, 3);
        vm.prank(clientAddr(1));
        agg.postSum(1, keccak256(bad));
        assertEq(uint256(agg.phase()), uint256(BbvflBase.Phase.Ended), "ended");
        vm.prank(clientAddr(0));
        agg.dispute(1, clientAddr(1), keccak256(bad), payloads(agg, 1));
        assertEq(uint256(agg.phase()), uint256(BbvflBase.Phase.Ended), "ended again with the right sum");
        assertEq(agg.participants().length, 1, "claimer excluded");
    }

    /// Once the payout is made (after the window), a dispute of the epoch's claims is too late.
    function test_optimistic_payout_after_window_then_dispute_too_late() public {
        BbvflOptimisticAggregator agg = startO(cfg(3, 40, 16, 2)); // 2 rounds per epoch, 1 epoch
        uint256 t0 = block.number;
        bytes memory bad = claimRounds(agg, 0, 2, 0, 1);
        bytes[] memory ps = payloads(agg, 1);
        vm.prank(agg.active());
        agg.postMetrics(0, 900000, 800000, 100000);
        vm.roll(t0 + c.roundTimeoutBlocks + 1);
        vm.prank(agg.active());
        agg.payRewards(0);
        vm.expectRevert(abi.encodeWithSelector(BbvflOptimisticAggregator.DisputeTooLate.selector, t0 + c.roundTimeoutBlocks));
        agg.dispute(1, clientAddr(0), keccak256(bad), ps);
    }

    /// After a roll-back, a claim of a later round made before it no longer stands, and an
    /// aggregate-free redo of that round replaces it.
    function test_optimistic_stale_claim_after_rollback() public {
        BbvflBase.Config memory k = cfg(3, 40, 16, 4);
        k.staleness = 1;
        BbvflOptimisticAggregator agg = startO(k);
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 0);
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 1);
        address cheat = clientAddr(0);
        bytes memory bad = sumOf(all(3), 0, 1);
        vm.prank(cheat);
        agg.postSum(0, keccak256(bad));
        vm.prank(agg.active());
        agg.postGradient(0, new bytes(40 * 4), "");
        bytes memory s1 = sumOf(all(3), 1, 0);
        vm.prank(clientAddr(1));
        agg.postSum(1, keccak256(s1));
        assertEq(agg.currentRound(), 1, "round 1 aggregated");
        bytes[] memory ps = payloads(agg, 0);
        vm.prank(clientAddr(2));
        agg.dispute(0, cheat, keccak256(bad), ps);
        assertEq(agg.currentRound(), 0, "rolled back to round 0");
        bytes[] memory ps1 = new bytes[](3);
        for (uint256 i = 0; i < 3; i++) ps1[i] = payload(i, 1);
        // round 1's claim was made before the roll-back: not disputable until round 1 is claimed again
        vx.expectPartialRevert(BbvflOptimisticAggregator.NoClaim.selector);
        agg.dispute(1, clientAddr(1), keccak256(s1), ps1);
    }

    /// A round claimed again after a roll-back: the new claim replaces the erased one, so a
    /// dispute matches the new claim.
    function test_optimistic_reclaim_after_rollback_replaces() public {
        BbvflOptimisticAggregator agg = startO(cfg(3, 40, 16, 4));
        address cheat = clientAddr(0);
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 0);
        vm.prank(cheat);
        agg.postSum(0, keccak256(sumOf(all(3), 0, 1)));
        vm.prank(agg.active());
        agg.postGradient(0, new bytes(40 * 4), "");
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 1);
        vm.prank(clientAddr(1));
        agg.postSum(1, keccak256(sumOf(all(3), 1, 0)));
        agg.dispute(0, cheat, keccak256(sumOf(all(3), 0, 1)), payloads(agg, 0));
        vm.prank(agg.active());
        agg.postGradient(0, new bytes(40 * 4), "");
        uint256[] memory two = new uint256[](2);
        two[0] = 1;
        two[1] = 2;
        bytes memory bad = sumOf(two, 1, 2);
        vm.prank(clientAddr(2));
        agg.postSum(1, keccak256(bad));
        bytes[] memory ps = new bytes[](2);
        address[] memory parts = agg.participants();
        for (uint256 k = 0; k < 2; k++) ps[k] = payload(indexOf(parts[k]), 1);
        agg.dispute(1, clientAddr(2), keccak256(bad), ps);
        assertEq(agg.participants().length, 1, "second claimer excluded");
    }

    /// postSum refuses a round some participant has not submitted to (the claim's one pass over
    /// the hash words checks each one's round tag), then accepts it once complete.
    function test_optimistic_postsum_incomplete_refused() public {
        BbvflOptimisticAggregator agg = startO(cfg(3, 40, 16, 4));
        submitAs(agg, 0, 0);
        submitAs(agg, 2, 0);
        bytes memory s = sumOf(all(3), 0, 0);
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.RoundNotComplete.selector);
        agg.postSum(0, keccak256(s));
        submitAs(agg, 1, 0);
        vm.prank(clientAddr(0));
        agg.postSum(0, keccak256(s));
        assertEq(agg.currentRound(), 0, "waits for the gradient");
    }

    // ------------------------------------------------------------------ sequences

    /// aggregate() checks every payload against its stored hash, the first one included.
    function test_packed_first_payload_hash_checked() public {
        BbvflPackedAggregator agg = startP(cfg(3, 40, 16, 2));
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 0);
        bytes[] memory ps = payloads(agg, 0);
        ps[0] = payload(7, 0); // same length, another client's values
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.PayloadHashMismatch.selector, uint256(0)));
        agg.aggregate(0, ps);
        ps = payloads(agg, 0);
        ps[2] = payload(7, 0);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.PayloadHashMismatch.selector, uint256(2)));
        agg.aggregate(0, ps);
    }

    /// A late submitter cannot take the active role (packed and optimistic): the active
    /// client's deadline counts from the head round's last submission.
    function test_late_submitter_cannot_steal_active_role() public {
        for (uint256 mode = 0; mode < 2; mode++) {
            BbvflBase agg = mode == 0 ? BbvflBase(startP(cfg(3, 40, 16, 2))) : BbvflBase(startO(cfg(3, 40, 16, 2)));
            address act = agg.active();
            uint256 late = indexOf(act) == 2 ? 1 : 2;
            for (uint256 i = 0; i < 3; i++) if (i != late) submitAs(agg, i, 0);
            vm.roll(block.number + c.activeBlocks + 1);
            submitAs(agg, late, 0);
            vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
            agg.reelect();
            vm.roll(block.number + c.activeBlocks);
            vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
            agg.reelect();
            vm.roll(block.number + 1);
            agg.reelect();
            assertTrue(agg.active() != act, "re-elected after the full activeBlocks");
        }
    }

    /// Three clients, P = 40, 2 TRAIN rounds an epoch, 2 epochs (the pool covers both).
    function twoEpochs() internal pure returns (BbvflBase.Config memory k) {
        k = cfg(3, 40, 16, 2);
        k.epochs = 2;
        k.rewardPool *= 2;
    }

    /// Rounds [from, to) of an optimistic session (P = 40): every client submits, client
    /// `claimer` claims each sum (one too many on value 0 in round `wrong`), the active client
    /// posts the gradient; returns the wrong claim's packed sum (empty when no round is wrong).
    function claimRounds(BbvflOptimisticAggregator agg, uint64 from, uint64 to, uint256 claimer, uint64 wrong)
        internal
        returns (bytes memory bad)
    {
        return claimRoundsOf(agg, all(3), from, to, claimer, wrong);
    }

    /// As claimRounds, with the participants `idx` (client indices) submitting.
    function claimRoundsOf(
        BbvflOptimisticAggregator agg,
        uint256[] memory idx,
        uint64 from,
        uint64 to,
        uint256 claimer,
        uint64 wrong
    ) internal returns (bytes memory bad) {
        for (uint64 r = from; r < to; r++) {
            for (uint256 i = 0; i < idx.length; i++) submitAs(agg, idx[i], r);
            bytes memory s = sumOf(idx, r, r == wrong ? 1 : 0);
            if (r == wrong) bad = s;
            vm.prank(clientAddr(claimer));
            agg.postSum(r, keccak256(s));
            vm.prank(agg.active());
            agg.postGradient(r, new bytes(40 * 4), "");
        }
    }

    /// Optimistic, the issue's sequences: a wrong claim on an epoch's last round, postMetrics and
    /// payRewards sent at once (payRewards before postMetrics too). The payout is refused while
    /// the claim can be disputed (DisputeWindowOpen), the dispute is accepted after postMetrics
    /// (the claimer excluded, the epoch's metrics rolled back), the redone epoch is settled after
    /// the dispute's own window, and every later payout works (rewarded <= accepted, no panic).
    function test_optimistic_last_claim_disputable_after_settlement_calls() public {
        BbvflOptimisticAggregator agg = startO(twoEpochs());
        uint256 t0 = block.number;
        bytes memory bad = claimRounds(agg, 0, 2, 0, 1);
        address act = agg.active();
        vm.prank(act);
        vm.expectRevert(abi.encodeWithSelector(BbvflOptimisticAggregator.DisputeWindowOpen.selector, t0 + c.roundTimeoutBlocks));
        agg.payRewards(0);
        vm.prank(act);
        agg.postMetrics(0, 1, 1, 1);
        vm.roll(t0 + c.roundTimeoutBlocks); // the window's last block: still refused
        vm.prank(act);
        vm.expectRevert(abi.encodeWithSelector(BbvflOptimisticAggregator.DisputeWindowOpen.selector, t0 + c.roundTimeoutBlocks));
        agg.payRewards(0);
        bytes[] memory ps = payloads(agg, 1);
        vm.prank(ANYONE);
        agg.dispute(1, clientAddr(0), keccak256(bad), ps);
        (, bool metrics, bool rewards) = agg.epochState(0);
        assertTrue(!metrics, "the dispute rolled epoch 0's metrics back");
        assertTrue(!rewards, "nothing paid");
        assertEq(agg.participants().length, 2, "claimer excluded");
        // round 1 (TRAIN) waits for its gradient from the active client (a new one if the claimer was)
        uint256 d = block.number;
        vm.prank(agg.active());
        agg.postGradient(1, new bytes(40 * 4), "");
        vm.prank(agg.active());
        vm.expectRevert(abi.encodeWithSelector(BbvflOptimisticAggregator.DisputeWindowOpen.selector, d + c.roundTimeoutBlocks));
        agg.payRewards(0);
        vm.prank(agg.active());
        agg.postMetrics(0, 2, 2, 2); // posted again for the redone epoch
        vm.roll(d + c.roundTimeoutBlocks + 1);
        vm.prank(agg.active());
        agg.payRewards(0);
        for (uint256 i = 0; i < 3; i++) {
            (,,,,,, uint32 acc, uint32 rew) = agg.clientInfo(clientAddr(i));
            assertTrue(rew <= acc, "rewarded <= accepted");
        }
        uint256 e1 = block.number;
        uint256 claimer = clientAddr(1) == agg.active() ? 2 : 1;
        uint256[] memory two = new uint256[](2); // client 0 excluded
        two[0] = 1;
        two[1] = 2;
        claimRoundsOf(agg, two, 2, 4, claimer, type(uint64).max);
        vm.prank(agg.active());
        agg.postMetrics(1, 1, 1, 1);
        vm.roll(e1 + c.roundTimeoutBlocks + 1);
        vm.prank(agg.active());
        agg.payRewards(1);
        (,,,,,, uint32 acc0, uint32 rew0) = agg.clientInfo(clientAddr(0));
        assertEq(rew0, acc0, "the excluded claimer is paid its accepted rounds before the disputed one");
        assertEq(acc0, 1, "claimer: round 0 only");
        for (uint256 i = 1; i < 3; i++) {
            (,,,,,, uint32 acc, uint32 rew) = agg.clientInfo(clientAddr(i));
            assertEq(acc, 4, "accepted");
            assertEq(rew, 4, "rewarded");
        }
    }

    /// Optimistic: payRewards(1) (out of order) waits for epoch 1's window, which bounds epoch 0's
    /// too; once paid, a dispute of epoch 0 is too late, and payRewards(0) finds nobody due.
    function test_optimistic_later_payout_waits_for_every_window() public {
        BbvflOptimisticAggregator agg = startO(twoEpochs());
        uint256 t0 = block.number;
        bytes memory bad = claimRounds(agg, 0, 2, 0, 1);
        vm.roll(t0 + 5);
        claimRounds(agg, 2, 4, 0, type(uint64).max);
        vm.prank(agg.active());
        vm.expectRevert(abi.encodeWithSelector(BbvflOptimisticAggregator.DisputeWindowOpen.selector, t0 + 5 + c.roundTimeoutBlocks));
        agg.payRewards(1);
        vm.roll(t0 + 5 + c.roundTimeoutBlocks + 1);
        vm.prank(agg.active());
        agg.payRewards(1);
        bytes[] memory ps = payloads(agg, 1);
        vm.expectRevert(abi.encodeWithSelector(BbvflOptimisticAggregator.DisputeTooLate.selector, t0 + c.roundTimeoutBlocks));
        agg.dispute(1, clientAddr(0), keccak256(bad), ps);
        vm.prank(agg.active());
        agg.payRewards(0); // nobody due: no underflow
    }

    /// Optimistic: the active client's payout deadline counts from the close of the epoch's
    /// dispute window (the payout is refused before it), not from the epoch's completion.
    function test_optimistic_payout_deadline_from_window_end() public {
        BbvflOptimisticAggregator agg = startO(twoEpochs());
        uint256 t0 = block.number;
        claimRounds(agg, 0, 2, 0, type(uint64).max);
        vm.prank(agg.active());
        agg.postMetrics(0, 1, 1, 1);
        // round 2's submissions wait: head is not waiting for the active client, only epoch 0's payout
        vm.roll(t0 + c.activeBlocks + 1); // past completion + activeBlocks, inside the window
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        vm.roll(t0 + c.roundTimeoutBlocks + c.activeBlocks);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        vm.roll(t0 + c.roundTimeoutBlocks + c.activeBlocks + 1);
        agg.reelect();
    }
}
