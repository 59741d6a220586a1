// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base, VmExtra} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";

/// Windows: K minibatches per TRAIN round (ragged last window), eval rounds of ER test rows
/// (ragged last eval round), lengths of submissions, sums, gradients and label gradients per
/// round, K = R sessions, the new constructor checks and the bytecode size.
contract WindowTest is Base {
    bytes32 internal constant RC = keccak256("RoundCompleted(uint64,uint8,bytes)");


    function value(uint256 i, uint64 r, uint256 j, uint256 modulus) internal pure returns (uint256) {
        return uint256(keccak256(abi.encode(i, r, j))) % modulus;
    }

    /// Submits every participant's data for round r (length `coords`), checks the sum against
    /// roundSum and the RoundCompleted event; returns the coordinates.
    function fill(BbvflAggregator agg, BbvflBase.Config memory k, uint64 r) internal returns (uint256 coords) {
        (,,,, uint32 co) = agg.roundLayout(r);
        coords = co;
        uint256 lb = agg.params().laneBits / 8;
        address[] memory ps = agg.participants();
        uint256[] memory sum = new uint256[](coords);
        uint256 modulus = k.masked ? 65536 : uint256(k.levels) + 1;
        vx.recordLogs();
        for (uint256 c = 0; c < ps.length; c++) {
            uint256 i = indexOf(ps[c]);
            bytes memory q = new bytes(k.masked ? 2 * coords : coords);
            for (uint256 j = 0; j < coords; j++) {
                uint256 v = value(i, r, j, modulus);
                sum[j] = (sum[j] + v) % (lb == 1 ? 256 : 65536);
                if (k.masked) {
                    q[2 * j] = bytes1(uint8(v >> 8));
                    q[2 * j + 1] = bytes1(uint8(v));
                } else {
                    q[j] = bytes1(uint8(v));
                }
            }
            if (c == 0) {
                // one byte short and one byte long are refused
                bytes memory shortQ = new bytes(q.length - 1);
                vm.prank(ps[c]);
                vx.expectPartialRevert(BbvflBase.BadLength.selector);
                agg.submit(r, shortQ);
                bytes memory longQ = new bytes(q.length + 1);
                vm.prank(ps[c]);
                vx.expectPartialRevert(BbvflBase.BadLength.selector);
                agg.submit(r, longQ);
            }
            vm.prank(ps[c]);
            agg.submit(r, q);
        }
        bytes memory want = new bytes(coords * lb);
        for (uint256 j = 0; j < coords; j++) {
            if (lb == 1) {
                want[j] = bytes1(uint8(sum[j]));
            } else {
                want[2 * j] = bytes1(uint8(sum[j] >> 8));
                want[2 * j + 1] = bytes1(uint8(sum[j]));
            }
        }
        assertEq(agg.roundSum(r), want, "roundSum");
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        bool found;
        for (uint256 x = 0; x < logs.length; x++) {
            if (logs[x].topics[0] != RC) continue;
            assertEq(uint256(logs[x].topics[1]), r, "RoundCompleted round");
            (uint8 n, bytes memory s) = abi.decode(logs[x].data, (uint8, bytes));
            assertEq(n, ps.length, "contributors");
            assertEq(s, want, "RoundCompleted sum");
            found = true;
        }
        assertTrue(found, "RoundCompleted emitted");
    }

    /// Runs the whole session: every round filled, gradient (of the round's length) after TRAIN
    /// rounds, with the wrong lengths refused first; metrics and rewards per epoch.
    function runSession(BbvflBase.Config memory k) internal returns (BbvflAggregator agg) {
        agg = startSession(k);
        BbvflBase.Params memory p = agg.params();
        for (uint64 r = 0; r < p.totalRounds; r++) {
            uint256 coords = fill(agg, k, r);
            (bool train, uint32 epoch,, uint32 rows,) = agg.roundLayout(r);
            if (train) {
                address act = agg.active();
                vm.prank(act);
                vx.expectPartialRevert(BbvflBase.BadGradientLength.selector);
                agg.postGradient(r, new bytes(coords * 4 - 4), "");
                vm.prank(act);
                vx.expectPartialRevert(BbvflBase.BadGradientLength.selector);
                agg.postGradient(r, new bytes(uint256(k.batch) * k.dim * 4 + (coords == uint256(k.batch) * k.dim ? 4 : 0)), "");
                vm.prank(act);
                agg.postGradient(r, new bytes(coords * 4), "");
                assertEq(rows * k.dim, coords, "coords = rows * P");
            }
            (,, uint32 pos,,) = agg.roundLayout(r);
            if (!train && pos + 1 == p.evalRoundsPerEpoch || train && pos + 1 == p.trainRoundsPerEpoch && p.evalRoundsPerEpoch == 0) {
                vm.startPrank(agg.active());
                agg.postMetrics(epoch, 900000, 800000, 1);
                agg.payRewards(epoch);
                vm.stopPrank();
            }
        }
        assertEq(agg.currentRound(), p.totalRounds, "session over");
        (,,,,,, uint32 acc,) = agg.clientInfo(clientAddr(0));
        assertEq(acc, p.totalRounds, "one accepted submission per round");
        assertEq(agg.token().balanceOf(clientAddr(0)), p.totalRounds * k.rewardPerSubmission, "paid per round");
    }

    // ------------------------------------------------------------ layout

    /// R = 7, K = 3: windows of 3, 3, 1 batches; NE = 5, ER = 2: eval rounds of 2, 2, 1 rows.
    function test_layout_ragged() public {
        BbvflBase.Config memory k = configW(3, 2, 3, 16, false, 7, 3, 5, 2, 2);
        BbvflAggregator agg = new BbvflAggregator(k, openRegistration());
        BbvflBase.Params memory p = agg.params();
        assertEq(p.trainRoundsPerEpoch, 3, "T = ceil(7/3)");
        assertEq(p.evalRoundsPerEpoch, 3, "V = ceil(5/2)");
        assertEq(p.totalRounds, 12, "2 epochs of 6");
        assertEq(p.maxCoords, 18, "3 batches * B=2 * P=3");
        assertEq(p.window, 3, "K");
        assertEq(p.batchesPerEpoch, 7, "R");
        assertEq(p.trainRows, 21, "N_train");
        assertEq(p.testRows, 8, "N_test");
        uint32[6] memory rows = [uint32(6), 6, 2, 2, 2, 1];
        for (uint64 r = 0; r < 12; r++) {
            (bool train, uint32 epoch, uint32 index, uint32 n, uint32 coords) = agg.roundLayout(r);
            uint64 pos = r % 6;
            assertTrue(train == (pos < 3), "kind");
            assertEq(epoch, r / 6, "epoch");
            assertEq(index, pos < 3 ? pos : pos - 3, "index");
            assertEq(n, rows[pos], "rows");
            assertEq(coords, rows[pos] * 3, "coords");
        }
        vx.expectPartialRevert(BbvflBase.NoSuchRound.selector);
        agg.roundLayout(12);
    }

    /// K = 1, ER = B: today's layout (every round B*P coordinates).
    function test_layout_k1_is_todays() public {
        BbvflAggregator agg = new BbvflAggregator(config(3, 2, 5, 16, false, 4, 2, 1), openRegistration());
        BbvflBase.Params memory p = agg.params();
        assertEq(p.trainRoundsPerEpoch, 4, "T = R");
        assertEq(p.evalRoundsPerEpoch, 2, "V = NE / B");
        for (uint64 r = 0; r < 6; r++) {
            (bool train,, uint32 index, uint32 rows, uint32 coords) = agg.roundLayout(r);
            assertTrue(train == (r < 4), "kind");
            assertEq(index, r < 4 ? r : r - 4, "index");
            assertEq(rows, 2, "B rows");
            assertEq(coords, 10, "B*P");
        }
    }

    /// No eval rows: V = 0, every round trains.
    function test_layout_no_eval() public {
        BbvflAggregator agg = new BbvflAggregator(configW(2, 2, 2, 16, false, 5, 2, 0, 0, 3), openRegistration());
        BbvflBase.Params memory p = agg.params();
        assertEq(p.evalRoundsPerEpoch, 0, "V = 0");
        assertEq(p.totalRounds, 9, "3 epochs of 3 windows");
        (,,, uint32 rows,) = agg.roundLayout(5);
        assertEq(rows, 2, "last window: 1 batch");
    }

    // ------------------------------------------------------------ sessions

    function test_session_ragged_8bit() public {
        runSession(configW(3, 2, 3, 16, false, 7, 3, 5, 2, 2));
    }

    function test_session_ragged_16bit() public {
        runSession(configW(3, 2, 3, 100, false, 7, 3, 5, 2, 2)); // M*b = 300: 16-bit lanes
    }

    function test_session_ragged_masked() public {
        runSession(configW(3, 2, 3, 16, true, 7, 3, 5, 2, 2));
    }

    /// Eval rounds larger than the largest window size the ring slots.
    function test_session_eval_larger_than_window() public {
        BbvflBase.Config memory k = configW(2, 2, 5, 16, false, 4, 2, 23, 11, 2);
        BbvflAggregator agg = runSession(k);
        assertEq(agg.params().maxCoords, 55, "11 eval rows * P");
    }

    /// K = R: one TRAIN round per epoch, then one EVAL round of the whole test set.
    function test_session_k_equals_r() public {
        BbvflBase.Config memory k = configW(3, 2, 3, 16, false, 5, 5, 9, 9, 3);
        BbvflAggregator agg = runSession(k);
        BbvflBase.Params memory p = agg.params();
        assertEq(p.trainRoundsPerEpoch, 1, "T = 1");
        assertEq(p.evalRoundsPerEpoch, 1, "V = 1");
        assertEq(p.totalRounds, 6, "3 epochs of 2 rounds");
        (bool train,,, uint32 rows, uint32 coords) = agg.roundLayout(2);
        assertTrue(train, "round 2 trains");
        assertEq(rows, 10, "R*B rows");
        assertEq(coords, 30, "R*B*P");
        (train,,, rows,) = agg.roundLayout(3);
        assertTrue(!train, "round 3 evaluates");
        assertEq(rows, 9, "NE rows");
    }

    /// Label gradients are per window: a multiple of 4 * rows of the round.
    function test_label_gradient_per_window() public {
        BbvflBase.Config memory k = configW(2, 2, 3, 16, false, 3, 2, 0, 0, 1);
        BbvflAggregator agg = new BbvflAggregator(k, openRegistration());
        for (uint256 i = 0; i < 2; i++) {
            (address a, bytes memory pk) = clientKey(i);
            vm.prank(a);
            agg.registerLabelHolder(pk);
        }
        commitAll(agg, 2);
        revealAll(agg, 2);
        address other = agg.active() == clientAddr(0) ? clientAddr(1) : clientAddr(0);
        for (uint64 r = 0; r < 2; r++) {
            fill(agg, k, r);
            uint256 rows = r == 0 ? 4 : 2; // windows of 2 and 1 batches of B = 2
            vm.prank(other);
            vx.expectPartialRevert(BbvflBase.BadLabelGradientLength.selector);
            agg.postLabelGradient(r, new bytes(4 * rows + 4));
            if (r == 0) {
                vm.prank(other);
                vx.expectPartialRevert(BbvflBase.BadLabelGradientLength.selector);
                agg.postLabelGradient(r, new bytes(8)); // one batch's worth: too short
            }
            vm.prank(other);
            agg.postLabelGradient(r, new bytes(4 * rows * 2)); // two logits per row
            vm.prank(agg.active());
            agg.postGradient(r, new bytes(rows * 3 * 4), "");
        }
    }

    // ------------------------------------------------------------ curvature rounds

    /// LR's sqn: B = 1, R = 7 rows in windows of 3, NE = 5 in eval rounds of 2, 6 epochs, L = 2,
    /// S = 5: epochs 4 and 6 (1-based) have C = 2 curvature rounds (3 and 2 rows) between their
    /// windows and their eval rounds; they take a gradient of their length like a window.
    function test_curvature_layout_and_session() public {
        BbvflBase.Config memory k = configW(3, 1, 1, 16, false, 7, 3, 5, 2, 6);
        k.curvEvery = 2;
        k.curvRows = 5;
        k.rewardPool = 1e18 * 3 * 40; // the pool covers the curvature rounds' submissions too
        BbvflAggregator agg = new BbvflAggregator(k, openRegistration());
        BbvflBase.Params memory p = agg.params();
        assertEq(p.curvEvery, 2, "L");
        assertEq(p.curvRows, 5, "S");
        assertEq(p.curvRoundsPerEpoch, 2, "C = ceil(5/3)");
        assertEq(p.totalRounds, 6 * 6 + 2 * 2, "6 epochs of 6 rounds and two curvature epochs' 2");
        for (uint64 r = 0; r < p.totalRounds; r++) {
            (bool train, uint32 epoch, uint32 index, uint32 rows,) = agg.roundLayout(r);
            bool curv = r == 21 || r == 22 || r == 35 || r == 36;
            if (curv) {
                assertTrue(train, "a curvature round takes a gradient");
                assertEq(epoch, r < 30 ? 3 : 5, "curvature epoch");
                assertEq(index, r == 21 || r == 35 ? 3 : 4, "index T + c");
                assertEq(rows, r == 21 || r == 35 ? 3 : 2, "curvature rows");
            }
            if (r == 23 || r == 37) assertTrue(!train && index == 0 && epoch == (r < 30 ? 3 : 5), "eval after them");
        }
        runSession(k);
    }

    function test_curvature_constructor_reverts() public {
        BbvflBase.Config memory k = configW(3, 2, 1, 16, false, 7, 3, 5, 2, 6);
        k.curvEvery = 2;
        k.curvRows = 5;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.CurvatureUnsupported.selector, false, k.batch));
        new BbvflAggregator(k, openRegistration());
        k.batch = 1;
        k.curvRows = 8;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.CurvRowsOutOfRange.selector, k.curvRows, k.batchesPerEpoch));
        new BbvflAggregator(k, openRegistration());
    }

    // ------------------------------------------------------------ constructor

    function test_constructor_window_reverts() public {
        BbvflBase.Config memory base = configW(3, 2, 3, 16, false, 7, 3, 5, 2, 1);
        BbvflBase.Config memory k = base;
        k.window = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.WindowOutOfRange.selector, k.window, k.batchesPerEpoch));
        new BbvflAggregator(k, openRegistration());
        k = configW(3, 2, 3, 16, false, 7, 3, 5, 2, 1);
        k.window = 8;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.WindowOutOfRange.selector, k.window, k.batchesPerEpoch));
        new BbvflAggregator(k, openRegistration());
        k = configW(3, 2, 3, 16, false, 7, 3, 5, 2, 1);
        k.evalRowsPerRound = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.ZeroEvalRowsPerRound.selector, k.evalRows));
        new BbvflAggregator(k, openRegistration());
        k = configW(3, 2, 3, 16, false, 7, 3, 5, 2, 1);
        k.trainRows = 13;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.TrainRowsBelowEpoch.selector, k.trainRows, uint256(k.batchesPerEpoch) * k.batch));
        new BbvflAggregator(k, openRegistration());
        k = configW(3, 2, 3, 16, false, 7, 3, 5, 2, 1);
        k.testRows = 4;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.TestRowsBelowEvalRows.selector, k.testRows, k.evalRows));
        new BbvflAggregator(k, openRegistration());
        k = configW(3, 2, 3, 16, false, 7, 3, 5, 2, 1);
        k.staleness = 1;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.StalenessTooLarge.selector, k.staleness, 0));
        new BbvflAggregator(k, openRegistration());
        k = configW(3, 2, 3, 16, false, 7, 3, 5, 2, 1);
        k.hashed = true;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.WrongModeContract.selector, true, false));
        new BbvflAggregator(k, openRegistration());
        // the largest round decides: 2^20 coordinates pass, one window more does not
        k = configW(1, 1024, 256, 16, false, 4, 4, 0, 0, 1);
        new BbvflAggregator(k, openRegistration());
        k = configW(1, 1024, 256, 16, false, 5, 5, 0, 0, 1);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundTooLarge.selector, uint256(5 * 1024) * 256, 1 << 20));
        new BbvflAggregator(k, openRegistration());
        k = configW(1, 2, 2, 16, false, 1, 1, 1 << 19 + 1, 1 << 19 + 1, 1);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundTooLarge.selector, uint256(1 << 20) * 2, 1 << 20));
        new BbvflAggregator(k, openRegistration());
        // evalRowsPerRound is free when there is no eval
        k = configW(3, 2, 3, 16, false, 7, 3, 0, 0, 1);
        assertEq(new BbvflAggregator(k, openRegistration()).params().evalRoundsPerEpoch, 0, "no eval");
    }

    // ------------------------------------------------------------ size

    /// EIP-170: the runtime code must stay under 24,576 bytes.
    function test_runtime_size_below_eip170() public {
        BbvflAggregator agg = new BbvflAggregator(configW(5, 10, 16, 16, false, 45, 5, 110, 110, 1), openRegistration());
        assertTrue(address(agg).code.length < 24576, "runtime code above the EIP-170 limit");
        assertTrue(address(agg).code.length < 24576 - 512, "less than 512 bytes of margin under EIP-170");
    }
}
