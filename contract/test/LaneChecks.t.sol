// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";

/// Lane mode (BbvflAggregator): every check of the submit path, roundSum, expireRound and the
/// gradient posts, probed at every index and on both sides of every boundary, so that a check
/// that is off by one (or off at one position) makes a test here fail.
/// Submissions are 70 bytes (B = 2, P = 35): two full calldata words and a ragged tail of 6 bytes.
contract LaneChecksTest is Base {
    uint32 internal constant BB = 2;
    uint32 internal constant PP = 35;
    uint256 internal constant LEN = 70;

    BbvflBase.Config internal c;

    /// A session of m clients, bound b, 1 TRAIN round then v EVAL rounds per epoch.
    function start(uint8 m, uint8 b, uint32 v, uint32 epochs) internal returns (BbvflAggregator agg) {
        c = config(m, BB, PP, b, false, 1, v, epochs);
        agg = startSession(c);
    }

    function submitAs(BbvflAggregator agg, uint256 i, uint64 r, bytes memory q) internal {
        vm.prank(clientAddr(i));
        agg.submit(r, q);
    }

    function filled(uint256 n, uint8 v) internal pure returns (bytes memory q) {
        q = new bytes(n);
        for (uint256 j = 0; j < n; j++) q[j] = bytes1(v);
    }

    function postGrad(BbvflAggregator agg, uint64 r) internal {
        vm.prank(agg.active());
        agg.postGradient(r, new bytes(LEN * 4), "");
    }

    /// The flat sum in the lane layout: value s at coordinate j, lanes of lb bytes.
    function laneBytes(uint256[] memory s, uint256 lb) internal pure returns (bytes memory out) {
        out = new bytes(s.length * lb);
        for (uint256 j = 0; j < s.length; j++) {
            if (lb == 1) {
                out[j] = bytes1(uint8(s[j]));
            } else {
                out[2 * j] = bytes1(uint8(s[j] >> 8));
                out[2 * j + 1] = bytes1(uint8(s[j]));
            }
        }
    }

    // ------------------------------------------------------------ range check

    /// For each (M, b): b + 1 and 255 refused at every byte position (both full words and each
    /// byte of the ragged tail), b accepted everywhere, and the sum of M submissions of b is M*b
    /// in every lane. M*b < 256 gives 8-bit lanes, M*b >= 256 16-bit lanes (M*b = 256 exactly).
    function test_range_each_position_both_lane_widths() public {
        uint8[6] memory ms = [uint8(2), 2, 2, 2, 2, 3];
        uint8[6] memory bs = [uint8(1), 16, 127, 128, 200, 254];
        uint8[6] memory bits = [uint8(8), 8, 8, 16, 16, 16];
        for (uint256 t = 0; t < ms.length; t++) {
            BbvflAggregator agg = start(ms[t], bs[t], 1, 1);
            assertEq(agg.params().laneBits, bits[t], "lane width");
            uint8 b = bs[t];
            bytes memory q = filled(LEN, b);
            for (uint256 j = 0; j < LEN; j++) {
                for (uint256 w = 0; w < 2; w++) {
                    q[j] = bytes1(w == 0 ? b + 1 : 255);
                    vm.prank(clientAddr(0));
                    vm.expectRevert(abi.encodeWithSelector(BbvflBase.ValueAboveLevels.selector, uint256(b)));
                    agg.submit(0, q);
                }
                q[j] = bytes1(b);
            }
            for (uint256 i = 0; i < ms[t]; i++) submitAs(agg, i, 0, q);
            uint256[] memory s = new uint256[](LEN);
            for (uint256 j = 0; j < LEN; j++) s[j] = uint256(ms[t]) * b;
            assertEq(agg.roundSum(0), laneBytes(s, bits[t] / 8), "sum of M*b in every lane");
        }
    }

    /// b accepted at one position when every other byte is 0 (the check does not let one
    /// position's value mask another's), at every position, 8-bit and 16-bit lanes.
    function test_range_b_alone_each_position() public {
        uint8[2] memory bs = [uint8(127), 128];
        for (uint256 t = 0; t < 2; t++) {
            // one EVAL round per position: client 0 puts b at j, client 1 puts b - 1 at j
            BbvflAggregator agg = start(2, bs[t], uint32(LEN), 1);
            uint256 lb = agg.params().laneBits / 8;
            assertEq(lb, t + 1, "lane width");
            submitAs(agg, 0, 0, new bytes(LEN));
            submitAs(agg, 1, 0, new bytes(LEN));
            postGrad(agg, 0);
            for (uint256 j = 0; j < LEN; j++) {
                uint64 r = uint64(j + 1);
                bytes memory q = new bytes(LEN);
                q[j] = bytes1(bs[t]);
                submitAs(agg, 0, r, q);
                q[j] = bytes1(bs[t] - 1);
                submitAs(agg, 1, r, q);
                uint256[] memory s = new uint256[](LEN);
                s[j] = 2 * uint256(bs[t]) - 1;
                assertEq(agg.roundSum(r), laneBytes(s, lb), "one-hot sum at each position");
            }
        }
    }

    /// ABI padding past a ragged tail is not trusted: bytes 0xFF in the padding neither trip the
    /// range check nor reach the sum (8-bit and 16-bit lanes).
    function test_padding_after_tail_ignored() public {
        uint8[2] memory bs = [uint8(16), 200];
        for (uint256 t = 0; t < 2; t++) {
            BbvflAggregator agg = start(2, bs[t], 1, 1);
            uint256 lb = agg.params().laneBits / 8;
            bytes memory q = filled(LEN, bs[t]);
            bytes memory pad = filled(96 - LEN, 0xFF);
            for (uint256 i = 0; i < 2; i++) {
                bytes memory data = bytes.concat(
                    abi.encodeWithSelector(BbvflAggregator.submit.selector, uint64(0), uint256(0x40), LEN), q, pad
                );
                vm.prank(clientAddr(i));
                (bool ok,) = address(agg).call(data);
                assertTrue(ok, "submission with dirty ABI padding accepted");
            }
            uint256[] memory s = new uint256[](LEN);
            for (uint256 j = 0; j < LEN; j++) s[j] = 2 * uint256(bs[t]);
            assertEq(agg.roundSum(0), laneBytes(s, lb), "padding not in the sum");
        }
    }

    // ------------------------------------------------------------ lane sums at word boundaries

    /// Every coordinate gets a distinct value per client; the sum is checked lane by lane, which
    /// covers the last lane of each word and the first lane of the next (bytes 31/32 and 63/64 of
    /// 8-bit lanes; 15/16, 31/32, 47/48, 63/64 of 16-bit lanes) and the ragged tail.
    function test_lane_sums_each_coordinate() public {
        uint8[2] memory ms = [uint8(2), 3];
        uint8[2] memory bs = [uint8(127), 254];
        for (uint256 t = 0; t < 2; t++) {
            BbvflAggregator agg = start(ms[t], bs[t], 1, 1);
            uint256 lb = agg.params().laneBits / 8;
            uint256[] memory s = new uint256[](LEN);
            for (uint256 i = 0; i < ms[t]; i++) {
                bytes memory q = new bytes(LEN);
                for (uint256 j = 0; j < LEN; j++) {
                    uint256 v = (j * 7 + i * 31 + 1) % (uint256(bs[t]) + 1);
                    q[j] = bytes1(uint8(v));
                    s[j] += v;
                }
                submitAs(agg, i, 0, q);
            }
            assertEq(agg.roundSum(0), laneBytes(s, lb), "sum lane by lane");
        }
    }

    // ------------------------------------------------------------ length

    /// One byte short, one byte long, empty and one word long are refused with
    /// BadLength(expected, got); the exact length is accepted.
    function test_bad_length_boundaries() public {
        uint8[2] memory bs = [uint8(16), 200];
        for (uint256 t = 0; t < 2; t++) {
            BbvflAggregator agg = start(2, bs[t], 1, 1);
            uint256[4] memory bad = [LEN - 1, LEN + 1, 0, LEN + 32];
            for (uint256 k = 0; k < 4; k++) {
                vm.prank(clientAddr(0));
                vm.expectRevert(abi.encodeWithSelector(BbvflBase.BadLength.selector, LEN, bad[k]));
                agg.submit(0, new bytes(bad[k]));
            }
            submitAs(agg, 0, 0, new bytes(LEN));
        }
    }

    // ------------------------------------------------------------ AlreadySubmitted

    /// M = 64 (the bitmap's width): every client index is refused a second submission to the
    /// open round, and a client's bit does not refuse any other index. Round 0 in index order,
    /// round 1 in reverse order, so every index is checked while the round is still open.
    function test_already_submitted_each_index() public {
        BbvflAggregator agg = start(64, 3, 1, 1);
        bytes memory q = new bytes(LEN);
        for (uint64 r = 0; r < 2; r++) {
            for (uint256 k = 0; k < 64; k++) {
                uint256 i = r == 0 ? k : 63 - k;
                submitAs(agg, i, r, q);
                assertTrue(agg.hasSubmitted(r, clientAddr(i)), "submitted");
                if (k < 63) {
                    vm.prank(clientAddr(i));
                    vm.expectRevert(abi.encodeWithSelector(BbvflBase.AlreadySubmitted.selector, r));
                    agg.submit(r, q);
                    if (k + 1 < 64) {
                        uint256 nxt = r == 0 ? k + 1 : 62 - k;
                        assertTrue(!agg.hasSubmitted(r, clientAddr(nxt)), "next not submitted");
                    }
                }
            }
            if (r == 0) postGrad(agg, 0);
        }
    }

    // ------------------------------------------------------------ open round boundaries

    /// In each round r of an epoch (TRAIN, then EVAL): r + 1 is RoundNotOpen, r - 1 RoundClosed,
    /// r accepted; once r is complete and waits for its gradient, r is RoundClosed too.
    function test_open_round_boundaries() public {
        BbvflAggregator agg = start(2, 16, 3, 2);
        bytes memory q = new bytes(LEN);
        uint64 total = agg.params().totalRounds;
        assertEq(total, 8, "rounds");
        for (uint64 r = 0; r < total; r++) {
            assertEq(agg.currentRound(), r, "open round");
            vm.prank(clientAddr(0));
            vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundNotOpen.selector, r + 1, r));
            agg.submit(r + 1, q);
            vm.prank(clientAddr(0));
            vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundNotOpen.selector, type(uint64).max, r));
            agg.submit(type(uint64).max, q);
            if (r > 0) {
                vm.prank(clientAddr(0));
                vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundClosed.selector, r - 1, r));
                agg.submit(r - 1, q);
            }
            submitAs(agg, 0, r, q);
            submitAs(agg, 1, r, q);
            (bool train,,,,) = agg.roundLayout(r);
            if (train) {
                // complete, waiting for the gradient: still the open round, but closed to submissions
                assertEq(agg.currentRound(), r, "waits for the gradient");
                for (uint256 i = 0; i < 2; i++) {
                    vm.prank(clientAddr(i));
                    vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundClosed.selector, r, r));
                    agg.submit(r, q);
                }
                postGrad(agg, r);
            }
        }
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.SessionOver.selector);
        agg.submit(total, q);
    }

    // ------------------------------------------------------------ roundSum ring

    /// After each round: roundSum works for the rounds still in the ring (r + RING > open) and
    /// returns their own sums; r = open - RING is SumOverwritten; the open round and the one
    /// after it are RoundNotComplete.
    function test_roundsum_ring_bound_each_round() public {
        BbvflAggregator agg = start(2, 16, 9, 1);
        assertEq(agg.RING(), 4, "ring");
        uint64 total = agg.params().totalRounds;
        bytes[] memory want = new bytes[](total);
        want[0] = fillRound(agg, 0, 0);
        postGrad(agg, 0);
        for (uint64 open = 1; open < total; open++) {
            assertEq(agg.currentRound(), open, "open round");
            checkRing(agg, open, want);
            // one submission: the open round's slot (that of open - RING) now holds new bytes
            submitAs(agg, 0, open, plainData(0, open, LEN, 16));
            checkRing(agg, open, want);
            want[open] = fillRound(agg, open, 1);
        }
    }

    /// Submits plainData for clients from..1 of round r; returns the sum of clients 0 and 1.
    function fillRound(BbvflAggregator agg, uint64 r, uint256 from) internal returns (bytes memory) {
        uint256[] memory s = new uint256[](LEN);
        for (uint256 i = 0; i < 2; i++) {
            bytes memory q = plainData(i, r, LEN, 16);
            for (uint256 j = 0; j < LEN; j++) s[j] += uint8(q[j]);
            if (i >= from) submitAs(agg, i, r, q);
        }
        return laneBytes(s, 1);
    }

    function checkRing(BbvflAggregator agg, uint64 open, bytes[] memory want) internal view {
        for (uint64 k = 0; k < open; k++) {
            if (k + 4 > open) {
                assertEq(agg.roundSum(k), want[k], "sum still in the ring");
            } else {
                try agg.roundSum(k) {
                    revert("roundSum of a round RING behind the open one must revert");
                } catch (bytes memory e) {
                    assertEq(e, abi.encodeWithSelector(BbvflBase.SumOverwritten.selector, k), "SumOverwritten");
                }
            }
        }
        for (uint64 k = open; k < open + 2; k++) {
            try agg.roundSum(k) {
                revert("roundSum of the open round must revert");
            } catch (bytes memory e) {
                assertEq(e, abi.encodeWithSelector(BbvflBase.RoundNotComplete.selector, k), "RoundNotComplete");
            }
        }
    }

    // ------------------------------------------------------------ expireRound timeout

    /// For each round of an epoch: expireRound at exactly openedAt + roundTimeoutBlocks is
    /// RoundNotTimedOut(openedAt + timeout); one block later it completes the round (excluding
    /// the client that did not submit). M = 4, so each expiry excludes one client.
    function test_expire_timeout_bound_each_round() public {
        BbvflAggregator agg = start(4, 16, 3, 1);
        bytes memory q = new bytes(LEN);
        uint256 timeout = c.roundTimeoutBlocks;
        uint256 bn = block.number + 100;
        vm.roll(bn);
        // round 0 opened at the election; complete it normally at a known block
        for (uint256 i = 0; i < 4; i++) submitAs(agg, i, 0, q);
        vm.roll(bn);
        postGrad(agg, 0); // round 1 opens at bn
        uint256 missing = 3;
        for (uint64 r = 1; r < 4; r++) {
            uint256 opened = bn;
            // every participant except `missing` submits
            address[] memory ps = agg.participants();
            for (uint256 k = 0; k < ps.length; k++) {
                if (indexOf(ps[k]) != missing) {
                    vm.prank(ps[k]);
                    agg.submit(r, q);
                }
            }
            vm.roll(opened + timeout);
            vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundNotTimedOut.selector, opened + timeout));
            agg.expireRound();
            vm.roll(opened + timeout + 1);
            bn = opened + timeout + 1;
            agg.expireRound();
            assertTrue(agg.currentRound() == r + 1 || r + 1 == agg.params().totalRounds, "round completed");
            assertTrue(!agg.hasSubmitted(r, clientAddr(missing)), "missing client did not submit");
            if (missing > 0) missing--;
        }
    }

    /// The bound is counted from the round's own opening: a round opened late (blocks after the
    /// previous one completed) is not expirable at previous + timeout + 1.
    function test_expire_counts_from_opening() public {
        BbvflAggregator agg = start(2, 16, 1, 1);
        bytes memory q = new bytes(LEN);
        uint256 bn = block.number + 50;
        vm.roll(bn);
        submitAs(agg, 0, 0, q);
        submitAs(agg, 1, 0, q);
        vm.roll(bn + 25); // gradient 25 blocks after completion: round 1 opens at bn + 25
        postGrad(agg, 0);
        submitAs(agg, 0, 1, q);
        vm.roll(bn + 25 + c.roundTimeoutBlocks);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundNotTimedOut.selector, bn + 25 + c.roundTimeoutBlocks));
        agg.expireRound();
        vm.roll(bn + 26 + c.roundTimeoutBlocks);
        agg.expireRound();
    }

    // ------------------------------------------------------------ gradient posts

    /// postGradient: gradient one byte short / long (and one float short / long) is
    /// BadGradientLength(expected, got); fusion params of MAX + 1 bytes are refused, MAX accepted.
    function test_gradient_length_boundaries() public {
        BbvflAggregator agg = start(2, 16, 1, 1);
        bytes memory q = new bytes(LEN);
        submitAs(agg, 0, 0, q);
        submitAs(agg, 1, 0, q);
        address a = agg.active();
        uint256 g = LEN * 4;
        uint256[4] memory bad = [g - 1, g + 1, g - 4, g + 4];
        for (uint256 k = 0; k < 4; k++) {
            vm.prank(a);
            vm.expectRevert(abi.encodeWithSelector(BbvflBase.BadGradientLength.selector, g, bad[k]));
            agg.postGradient(0, new bytes(bad[k]), "");
        }
        uint256 maxFp = 262144;
        vm.prank(a);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.FusionParamsTooLong.selector, maxFp, maxFp + 1));
        agg.postGradient(0, new bytes(g), new bytes(maxFp + 1));
        vm.prank(a);
        agg.postGradient(0, new bytes(g), new bytes(maxFp));
        assertEq(agg.currentRound(), 1, "gradient accepted");
    }

    /// postLabelGradient (M = 8, every client a label holder, rows = B = 2 so unit = 8 bytes):
    /// lengths 0, unit - 1, unit + 1, unit + 4 (whole floats, not whole rows), 2*unit - 1 and
    /// 257*unit are BadLabelGradientLength(unit, got);
    /// unit and 256*unit accepted; each holder index is refused a second post to the round with
    /// LabelGradientAlreadyPosted, and its post does not refuse any other index.
    function test_label_gradient_boundaries_each_index() public {
        c = config(8, BB, PP, 16, false, 2, 0, 1);
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        for (uint256 i = 0; i < 8; i++) {
            (address a, bytes memory pk) = clientKey(i);
            vm.prank(a);
            agg.registerLabelHolder(pk);
        }
        commitAll(agg, 8);
        revealAll(agg, 8);
        uint256 unit = uint256(BB) * 4;
        for (uint64 r = 0; r < 2; r++) {
            for (uint256 i = 0; i < 8; i++) submitAs(agg, i, r, new bytes(LEN));
            uint256[6] memory bad = [uint256(0), unit - 1, unit + 1, unit + 4, 2 * unit - 1, 257 * unit];
            for (uint256 k = 0; k < 6; k++) {
                vm.prank(clientAddr(0));
                vm.expectRevert(abi.encodeWithSelector(BbvflBase.BadLabelGradientLength.selector, unit, bad[k]));
                agg.postLabelGradient(r, new bytes(bad[k]));
            }
            for (uint256 k = 0; k < 8; k++) {
                uint256 i = r == 0 ? k : 7 - k;
                vm.prank(clientAddr(i));
                agg.postLabelGradient(r, new bytes(k % 2 == 0 ? unit : 256 * unit));
                vm.prank(clientAddr(i));
                vm.expectRevert(abi.encodeWithSelector(BbvflBase.LabelGradientAlreadyPosted.selector, r));
                agg.postLabelGradient(r, new bytes(unit));
            }
            (uint64 lr, uint64 posted) = agg.labelPosts();
            assertEq(lr, r, "posts round");
            assertEq(posted, 0xFF, "every holder posted");
            postGrad(agg, r);
        }
    }
}
