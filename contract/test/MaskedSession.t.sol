// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base, VmExtra} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";

/// Masked sessions with Protocol-0 masks computed here, off-chain: client i submits
/// y_i = q_i + sum over j in S, j != i, of (u(i->j) - u(j->i)) mod 2^16, where u is a
/// pseudo-random function of (seed, round, participant set, i, j, coordinate) standing in for the
/// ECDH-keyed expansion of client/dp/masks.c. AggregatorFuzz already checks that masked lane sums
/// wrap mod 2^16 for arbitrary lanes; this file checks what masking adds on top: the masks cancel
/// so each round sum is the sum of the UNMASKED q, masked lanes far above b are accepted, and a
/// timed-out masked round is voided and re-run among the remaining clients with fresh masks.
contract MaskedSessionTest is Base {
    function mask(uint256 seed, uint64 r, uint64 set, uint256 from, uint256 to, uint256 j)
        internal
        pure
        returns (uint256)
    {
        return uint256(keccak256(abi.encode(seed, r, set, from, to, j))) % 65536;
    }

    /// Unmasked vector of client i in round r: values 0..levels (the test knows it, the chain not).
    function qOf(uint256 seed, uint256 i, uint64 r, uint256 j, uint8 levels) internal pure returns (uint256) {
        return uint256(keccak256(abi.encode(seed, "q", i, r, j))) % (uint256(levels) + 1);
    }

    /// Client i's masked submission for round r and participant set `set` (bit k = client k).
    function masked(uint256 seed, uint256 i, uint64 r, uint64 set, uint256 m, uint256 n, uint8 levels)
        internal
        pure
        returns (bytes memory y)
    {
        y = new bytes(2 * n);
        for (uint256 j = 0; j < n; j++) {
            uint256 v = qOf(seed, i, r, j, levels);
            for (uint256 k = 0; k < m; k++) {
                if (k == i || (set >> k) & 1 == 0) continue;
                v = (v + mask(seed, r, set, i, k, j) + 65536 - mask(seed, r, set, k, i, j)) % 65536;
            }
            y[2 * j] = bytes1(uint8(v >> 8));
            y[2 * j + 1] = bytes1(uint8(v));
        }
    }

    /// The exact sum of the unmasked q over `set`, as 16-bit big-endian lanes.
    function plainSum(uint256 seed, uint64 r, uint64 set, uint256 m, uint256 n, uint8 levels)
        internal
        pure
        returns (bytes memory s)
    {
        s = new bytes(2 * n);
        for (uint256 j = 0; j < n; j++) {
            uint256 v;
            for (uint256 k = 0; k < m; k++) {
                if ((set >> k) & 1 != 0) v += qOf(seed, k, r, j, levels);
            }
            s[2 * j] = bytes1(uint8(v >> 8));
            s[2 * j + 1] = bytes1(uint8(v));
        }
    }

    /// The submission equals the unmasked vector lane for lane.
    function equalsUnmasked(bytes memory y, uint256 seed, uint256 i, uint64 r, uint8 levels)
        internal
        pure
        returns (bool)
    {
        for (uint256 j = 0; 2 * j < y.length; j++) {
            if (uint256(uint8(y[2 * j])) << 8 | uint8(y[2 * j + 1]) != qOf(seed, i, r, j, levels)) return false;
        }
        return true;
    }

    /// Some lane is above b (the plain-mode range check would have rejected it).
    function someLaneAbove(bytes memory y, uint8 levels) internal pure returns (bool) {
        for (uint256 j = 0; 2 * j < y.length; j++) {
            if (uint256(uint8(y[2 * j])) << 8 | uint8(y[2 * j + 1]) > levels) return true;
        }
        return false;
    }

    function submitAll(BbvflAggregator agg, uint256 seed, uint64 r, uint64 set, uint256 m, uint256 n, uint8 levels)
        internal
    {
        for (uint256 i = 0; i < m; i++) {
            if ((set >> i) & 1 == 0) continue;
            bytes memory y = masked(seed, i, r, set, m, n, levels);
            if (m > 1) assertTrue(!equalsUnmasked(y, seed, i, r, levels), "a masked submission equals its q");
            vm.prank(clientAddr(i));
            agg.submit(r, y);
        }
    }

    /// Masks cancel: every round sum is the sum of the unmasked q, for random M, B, P, b.
    function testFuzz_masks_cancel(uint256 seed, uint8 mRaw, uint8 pRaw, uint8 levelsRaw) public {
        uint8 m = uint8(bound(mRaw, 2, 6));
        uint8 levels = uint8(bound(levelsRaw, 1, 255));
        BbvflBase.Config memory k = config(m, 2, uint32(bound(pRaw, 1, 24)), levels, true, 3, 1, 1);
        BbvflAggregator agg = startSession(k);
        uint256 n = uint256(k.batch) * k.dim;
        uint64 set = uint64((1 << m) - 1);
        for (uint64 r = 0; r < 4; r++) {
            submitAll(agg, seed, r, set, m, n, levels);
            assertEq(agg.roundSum(r), plainSum(seed, r, set, m, n, levels), "round sum = sum of unmasked q");
            (bool train,,,,) = agg.roundLayout(r);
            if (train) {
                vm.prank(agg.active());
                agg.postGradient(r, new bytes(n * 4), "");
            }
        }
    }

    /// Masked lanes far above b are accepted (no range check); the same lanes revert in plain mode.
    function test_masked_lanes_above_b_accepted() public {
        BbvflBase.Config memory k = config(3, 2, 8, 16, true, 2, 0, 1);
        BbvflAggregator agg = startSession(k);
        bytes memory y = masked(7, 0, 0, 7, 3, 16, 16);
        assertTrue(someLaneAbove(y, 16), "test data: a lane above b");
        vm.prank(clientAddr(0));
        agg.submit(0, y); // accepted

        // plain mode, same b: a byte above b is rejected
        BbvflBase.Config memory kp = config(3, 2, 8, 16, false, 2, 0, 1);
        BbvflAggregator plain = startSession(kp);
        bytes memory q = new bytes(16);
        q[3] = bytes1(uint8(17));
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.ValueAboveLevels.selector);
        plain.submit(0, q);
    }

    function countTopic(VmExtra.Log[] memory logs, bytes32 topic) internal pure returns (uint256 c) {
        for (uint256 i = 0; i < logs.length; i++) {
            if (logs[i].topics[0] == topic) c++;
        }
    }

    function findTopic(VmExtra.Log[] memory logs, bytes32 topic) internal pure returns (VmExtra.Log memory) {
        for (uint256 i = 0; i < logs.length; i++) {
            if (logs[i].topics[0] == topic) return logs[i];
        }
        revert("event not found");
    }

    /// Drops client `drop` in round 1 of a 4-client masked session: expireRound voids the round
    /// (no RoundCompleted, announces the set), the remaining three re-submit masked for the new
    /// set and the sum is theirs exactly; the session finishes with M-1; rewards count each
    /// client's round once.
    uint256 internal constant SEED = 42;
    uint8 internal constant DM = 4; // clients
    uint8 internal constant DL = 16; // b
    uint256 internal constant DN = 10; // B*P
    uint64 internal constant FULL = 15; // all four clients

    function dropoutConfig() internal pure returns (BbvflBase.Config memory) {
        return config(DM, 2, 5, DL, true, 3, 1, 1);
    }

    function finishRound(BbvflAggregator agg, uint64 r) internal {
        (bool train,,,,) = agg.roundLayout(r);
        if (train) {
            vm.prank(agg.active());
            agg.postGradient(r, new bytes(DN * 4), "");
        }
    }

    /// Checks the logs of the voiding expireRound of round 1 after `drop` went silent.
    function checkVoided(BbvflAggregator agg, VmExtra.Log[] memory logs, uint256 drop, bool activeDropped) internal {
        uint64 rest = FULL & ~uint64(1 << drop);
        assertEq(countTopic(logs, keccak256("RoundCompleted(uint64,uint8,bytes)")), 0, "no RoundCompleted");
        VmExtra.Log memory ro = findTopic(logs, keccak256("RoundReopened(uint64,uint64,uint8)"));
        assertEq(uint256(ro.topics[1]), 1, "RoundReopened round");
        (uint64 setOut, uint8 nOut) = abi.decode(ro.data, (uint64, uint8));
        assertEq(setOut, rest, "announced participant set");
        assertEq(nOut, 3, "announced size");
        VmExtra.Log memory ex = findTopic(logs, keccak256("Excluded(address,uint8)"));
        assertEq(address(uint160(uint256(ex.topics[1]))), clientAddr(drop), "dropped client excluded");
        assertEq(countTopic(logs, keccak256("Elected(bytes32,address,uint64,uint8,uint8)")), activeDropped ? 1 : 0,
            "re-election iff the active client dropped");
        assertTrue(agg.active() != clientAddr(drop), "active client is a remaining one");
        (uint64 round, uint8 submitted, uint8 np, bool complete, uint64 openedAt,) = agg.roundState();
        assertEq(round, 1, "same round re-opened");
        assertEq(submitted, 0, "submissions voided");
        assertEq(np, 3, "3 participants");
        assertTrue(!complete, "not complete");
        assertEq(openedAt, block.number, "fresh timeout");
        vx.expectPartialRevert(BbvflBase.RoundNotComplete.selector);
        agg.roundSum(1);
        vm.roll(block.number + 31);
        vm.expectRevert(BbvflBase.NoSubmissions.selector);
        agg.expireRound();
        vm.roll(block.number - 31);
    }

    /// Drops client `drop` in round 1 of a 4-client masked session: expireRound voids the round
    /// (no RoundCompleted, announces the set), the remaining three re-submit masked for the new
    /// set and the sum is theirs exactly; the session finishes with M-1; rewards count each
    /// client's round once.
    function dropout(uint256 drop) internal {
        BbvflAggregator agg = startSession(dropoutConfig());
        bool activeDropped = agg.active() == clientAddr(drop);
        submitAll(agg, SEED, 0, FULL, DM, DN, DL);
        assertEq(agg.roundSum(0), plainSum(SEED, 0, FULL, DM, DN, DL), "round 0 sum");
        finishRound(agg, 0);

        // round 1: everyone but `drop` submits, masked for the full set; then the timeout
        for (uint256 i = 0; i < DM; i++) {
            if (i == drop) continue;
            vm.prank(clientAddr(i));
            agg.submit(1, masked(SEED, i, 1, FULL, DM, DN, DL));
        }
        vm.roll(block.number + 31);
        vx.recordLogs();
        agg.expireRound();
        checkVoided(agg, vx.getRecordedLogs(), drop, activeDropped);

        // the dropped client cannot come back
        vm.prank(clientAddr(drop));
        vm.expectRevert(BbvflBase.ClientExcluded.selector);
        agg.submit(1, masked(SEED, drop, 1, FULL, DM, DN, DL));

        // re-run among the three with masks for the new set, then the rest of the session
        uint64 rest = FULL & ~uint64(1 << drop);
        for (uint64 r = 1; r < 4; r++) {
            vx.recordLogs();
            submitAll(agg, SEED, r, rest, DM, DN, DL);
            VmExtra.Log memory done = findTopic(vx.getRecordedLogs(), keccak256("RoundCompleted(uint64,uint8,bytes)"));
            (uint8 covered,) = abi.decode(done.data, (uint8, bytes));
            assertEq(covered, 3, "the re-opened round's sum covers the three re-submissions");
            assertEq(agg.roundSum(r), plainSum(SEED, r, rest, DM, DN, DL), "sum = sum of the three q");
            finishRound(agg, r);
        }
        vm.prank(agg.active());
        agg.payRewards(0);
        for (uint256 i = 0; i < DM; i++) {
            (,,,,,, uint32 acc,) = agg.clientInfo(clientAddr(i));
            assertEq(acc, i == drop ? 1 : 4, "accepted: each round once");
            assertEq(agg.token().balanceOf(clientAddr(i)), uint256(acc) * 1e18, "reward = rate x accepted");
        }
    }

    function test_masked_dropout_passive_client() public {
        BbvflAggregator agg = startSession(dropoutConfig());
        uint256 act = indexOf(agg.active());
        dropout((act + 1) % 4);
    }

    function test_masked_dropout_active_client() public {
        BbvflAggregator agg = startSession(dropoutConfig());
        dropout(indexOf(agg.active()));
    }

    /// Why the round must be re-run: with one client missing, the first attempt's lane sum is not
    /// the sum of the submitters' q (the missing client's masks do not cancel).
    function test_masked_first_attempt_does_not_cancel() public pure {
        uint256 seed = 9;
        uint256 n = 10;
        uint64 full = 15;
        bytes memory acc = new bytes(2 * n);
        for (uint256 i = 0; i < 3; i++) {
            bytes memory y = masked(seed, i, 0, full, 4, n, 16);
            for (uint256 j = 0; j < n; j++) {
                uint256 v = (uint256(uint8(acc[2 * j])) << 8 | uint8(acc[2 * j + 1]))
                    + (uint256(uint8(y[2 * j])) << 8 | uint8(y[2 * j + 1]));
                acc[2 * j] = bytes1(uint8(v >> 8));
                acc[2 * j + 1] = bytes1(uint8(v));
            }
        }
        assertTrue(keccak256(acc) != keccak256(plainSum(seed, 0, 7, 4, n, 16)), "partial sum would be garbage");
    }

    // ------------------------------------------------------------ sequences

    /// Lane masked mode: A submits to the first round of epoch 1, payRewards(0) runs, B times out
    /// and expireRound voids the round (A's accepted count drops back), then A is excluded at the
    /// re-run. payRewards(0) paid epoch 0's rounds only, so A is never paid more than it has
    /// accepted and every later payout works (it used to revert Panic(0x11) for ever).
    function test_masked_expiry_after_payout_no_panic() public {
        BbvflBase.Config memory k = config(3, 1, 4, 16, true, 2, 0, 2); // 2 TRAIN rounds an epoch
        BbvflAggregator agg = startSession(k);
        bytes memory y = new bytes(8); // masked lanes: any 16-bit values
        for (uint64 r = 0; r < 2; r++) {
            for (uint256 i = 0; i < 3; i++) {
                vm.prank(clientAddr(i));
                agg.submit(r, y);
            }
            vm.prank(agg.active());
            agg.postGradient(r, new bytes(4 * 4), "");
        }
        address a = clientAddr(0);
        vm.prank(a);
        agg.submit(2, y);
        vm.prank(clientAddr(2));
        agg.submit(2, y);
        vm.prank(agg.active());
        agg.payRewards(0);
        (,,,,,, uint32 acc, uint32 rew) = agg.clientInfo(a);
        assertEq(acc, 3, "A's open-round submission counts as accepted");
        assertEq(rew, 2, "but is paid with epoch 1");
        vm.roll(block.number + k.roundTimeoutBlocks + 1);
        agg.expireRound(); // B excluded, round 2 voided and re-opened for {A, C}
        vm.prank(clientAddr(2));
        agg.submit(2, y);
        vm.roll(block.number + k.roundTimeoutBlocks + 1);
        agg.expireRound(); // A excluded (accepted frozen at 2), re-opened for {C}
        (,,,,,, acc, rew) = agg.clientInfo(a);
        assertEq(acc, 2, "A's accepted count after its exclusion");
        assertTrue(rew <= acc, "A never paid beyond what it has accepted");
        for (uint64 r = 2; r < 4; r++) {
            vm.prank(clientAddr(2));
            agg.submit(r, y);
            vm.prank(agg.active());
            agg.postGradient(r, new bytes(4 * 4), "");
        }
        vm.prank(agg.active());
        agg.payRewards(1);
        (,,,,,, acc, rew) = agg.clientInfo(clientAddr(2));
        assertEq(rew, 4, "C paid for all four rounds");
        for (uint256 i = 0; i < 3; i++) {
            (,,,,,, acc, rew) = agg.clientInfo(clientAddr(i));
            assertTrue(rew <= acc, "rewarded <= accepted");
            assertEq(agg.token().balanceOf(clientAddr(i)), uint256(rew) * k.rewardPerSubmission, "paid = rewarded x rate");
        }
    }

}
