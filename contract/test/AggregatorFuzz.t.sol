// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base, VmExtra} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";

/// Fuzz tests: random vectors and random client orders; the stored sum always equals the sum of
/// the submissions (plain 8-bit lanes, plain 16-bit lanes, masked 16-bit wrapping lanes), and the
/// SWAR range check rejects exactly the vectors with a value above b.
contract AggregatorFuzzTest is Base {
    /// Random permutation of 0..n-1 (Fisher-Yates driven by seed).
    function perm(uint256 n, uint256 seed) internal pure returns (uint256[] memory p) {
        p = new uint256[](n);
        for (uint256 i = 0; i < n; i++) p[i] = i;
        for (uint256 i = n; i > 1; i--) {
            uint256 j = uint256(keccak256(abi.encode(seed, "perm", i))) % i;
            (p[i - 1], p[j]) = (p[j], p[i - 1]);
        }
    }

    function randValue(uint256 seed, uint256 client, uint256 r, uint256 j, uint256 modulus)
        internal
        pure
        returns (uint256)
    {
        return uint256(keccak256(abi.encode(seed, client, r, j))) % modulus;
    }

    /// Runs `rounds` rounds with random data in random client order and checks every sum, both
    /// through roundSum() and the RoundCompleted event. Covers the ring wrap-around (round 4
    /// overwrites round 0's slot).
    function checkSums(BbvflBase.Config memory k, uint256 seed, uint64 rounds) internal {
        BbvflAggregator agg = startSession(k);
        for (uint64 r = 0; r < rounds; r++) {
            bytes memory want = submitRound(agg, k, seed, r);
            assertEq(agg.roundSum(r), want, "roundSum = sum of submissions");
            VmExtra.Log[] memory logs = vx.getRecordedLogs();
            VmExtra.Log memory last = logs[logs.length - 1];
            assertEq(last.topics[0], keccak256("RoundCompleted(uint64,uint8,bytes)"), "RoundCompleted last");
            (uint8 n, bytes memory sum) = abi.decode(last.data, (uint8, bytes));
            assertEq(n, k.clients, "event count = every client submitted");
            assertEq(sum, want, "event sum = sum of submissions");
            vm.prank(agg.active());
            agg.postGradient(r, new bytes(uint256(k.batch) * k.dim * 4), "");
        }
    }

    /// Every client submits random data to round r in a random order (logs are being recorded);
    /// returns the expected flat sum in the contract's lane format.
    function submitRound(BbvflAggregator agg, BbvflBase.Config memory k, uint256 seed, uint64 r)
        internal
        returns (bytes memory)
    {
        uint256 n = uint256(k.batch) * k.dim;
        uint256[] memory sum = new uint256[](n);
        uint256[] memory order = perm(k.clients, uint256(keccak256(abi.encode(seed, r))));
        vx.recordLogs();
        for (uint256 o = 0; o < order.length; o++) {
            bytes memory q = randomSubmission(k, seed, order[o], r, sum);
            vm.prank(clientAddr(order[o]));
            agg.submit(r, q);
        }
        return encodeSum(sum, k.masked || agg.params().laneBits == 16);
    }

    function randomSubmission(BbvflBase.Config memory k, uint256 seed, uint256 i, uint64 r, uint256[] memory sum)
        internal
        pure
        returns (bytes memory q)
    {
        uint256 n = sum.length;
        q = new bytes(n * (k.masked ? 2 : 1));
        for (uint256 j = 0; j < n; j++) {
            if (k.masked) {
                uint256 v = randValue(seed, i, r, j, 65536);
                q[2 * j] = bytes1(uint8(v >> 8));
                q[2 * j + 1] = bytes1(uint8(v));
                sum[j] = (sum[j] + v) % 65536;
            } else {
                uint256 v = randValue(seed, i, r, j, uint256(k.levels) + 1);
                q[j] = bytes1(uint8(v));
                sum[j] += v;
            }
        }
    }

    function encodeSum(uint256[] memory sum, bool wide) internal pure returns (bytes memory want) {
        uint256 n = sum.length;
        want = new bytes(wide ? 2 * n : n);
        for (uint256 j = 0; j < n; j++) {
            if (!wide) {
                want[j] = bytes1(uint8(sum[j]));
            } else {
                want[2 * j] = bytes1(uint8(sum[j] >> 8));
                want[2 * j + 1] = bytes1(uint8(sum[j]));
            }
        }
    }

    function testFuzz_plain_sum(uint256 seed, uint8 mRaw, uint8 bRaw, uint8 pRaw, uint8 levelsRaw) public {
        uint8 m = uint8(bound(mRaw, 1, 6));
        uint8 levels = uint8(bound(levelsRaw, 1, 255 / m)); // M*b < 256: 8-bit lanes
        BbvflBase.Config memory k =
            config(m, uint32(bound(bRaw, 1, 4)), uint32(bound(pRaw, 1, 40)), levels, false, 6, 0, 1);
        checkSums(k, seed, 5);
    }

    function testFuzz_plain16_sum(uint256 seed, uint8 mRaw, uint8 pRaw, uint8 levelsRaw) public {
        uint8 m = uint8(bound(mRaw, 2, 6));
        uint8 levels = uint8(bound(levelsRaw, 256 / m + 1, 255)); // M*b >= 256: 16-bit lanes
        BbvflBase.Config memory k = config(m, 1, uint32(bound(pRaw, 1, 70)), levels, false, 6, 0, 1);
        checkSums(k, seed, 5);
    }

    function testFuzz_masked_sum(uint256 seed, uint8 mRaw, uint8 pRaw) public {
        uint8 m = uint8(bound(mRaw, 1, 6));
        BbvflBase.Config memory k = config(m, 1, uint32(bound(pRaw, 1, 50)), 16, true, 6, 0, 1);
        checkSums(k, seed, 5);
    }

    /// One value set to `val` at `pos` in an otherwise valid vector: rejected iff val > b.
    function rangeCase(uint8 m, uint8 levels, uint256 len, uint256 seed, uint256 pos, uint8 val) internal {
        BbvflBase.Config memory k = config(m, 1, uint32(len), levels, false, 2, 0, 1);
        BbvflAggregator agg = startSession(k);
        bytes memory q = new bytes(len);
        for (uint256 j = 0; j < len; j++) q[j] = bytes1(uint8(randValue(seed, 0, 0, j, uint256(levels) + 1)));
        q[pos % len] = bytes1(val);
        vm.prank(clientAddr(0));
        if (val > levels) vm.expectRevert(abi.encodeWithSelector(BbvflBase.ValueAboveLevels.selector, uint256(levels)));
        agg.submit(0, q);
    }

    function testFuzz_range_check_8bit(uint256 seed, uint256 pos, uint8 val, uint8 levelsRaw, uint8 lenRaw) public {
        uint8 levels = uint8(bound(levelsRaw, 1, 85)); // M = 3, 8-bit lanes
        rangeCase(3, levels, bound(lenRaw, 1, 100), seed, pos, val);
    }

    function testFuzz_range_check_16bit(uint256 seed, uint256 pos, uint8 val, uint8 levelsRaw, uint8 lenRaw) public {
        uint8 levels = uint8(bound(levelsRaw, 86, 254)); // M = 3, 16-bit lanes
        rangeCase(3, levels, bound(lenRaw, 1, 100), seed, pos, val);
    }

    function testFuzz_range_check_single_client(uint256 seed, uint256 pos, uint8 val, uint8 levels) public {
        // M = 1: 8-bit lanes for every b up to 255, including b >= 128
        rangeCase(1, uint8(bound(levels, 1, 255)), 33, seed, pos, val);
    }
}
