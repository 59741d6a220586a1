// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base, VmExtra} from "./utils/Base.sol";
import {BbvflBase} from "../src/BbvflBase.sol";
import {BbvflHashAggregator} from "../src/BbvflHashAggregator.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";

/// Hashed mode (BbvflHashAggregator): submissions store hashes, aggregate() forms the sum from
/// the payloads, rounds pipeline within the staleness bound, eval rounds never gate.
contract HashedTest is Base {
    bytes32 internal constant RC = keccak256("RoundCompleted(uint64,uint8,bytes)");
    bytes32 internal constant RR = keccak256("RoundReopened(uint64,uint64,uint8)");
    address internal constant ANYONE = address(0xA11CE);

    BbvflBase.Config internal c;


    function configH(uint8 m, bool masked, uint32 r, uint32 k, uint32 ne, uint32 er, uint32 epochs, uint8 s)
        internal
        pure
        returns (BbvflBase.Config memory k_)
    {
        k_ = configW(m, 2, 3, 16, masked, r, k, ne, er, epochs);
        k_.hashed = true;
        k_.staleness = s;
    }

    function start(BbvflBase.Config memory k) internal returns (BbvflHashAggregator agg) {
        c = k;
        agg = new BbvflHashAggregator(k, openRegistration());
        registerAll(agg, k.clients);
        commitAll(agg, k.clients);
        revealAll(agg, k.clients);
    }

    /// Client i's payload for round r (plain: values 0..b, one byte each; masked: 16-bit lanes).
    function payload(BbvflHashAggregator agg, uint256 i, uint64 r) internal view returns (bytes memory q) {
        (,,,, uint32 coords) = agg.roundLayout(r);
        q = new bytes(c.masked ? 2 * uint256(coords) : coords);
        for (uint256 j = 0; j < coords; j++) {
            uint256 v = uint256(keccak256(abi.encode(i, r, j))) % (c.masked ? 65536 : uint256(c.levels) + 1);
            if (c.masked) {
                q[2 * j] = bytes1(uint8(v >> 8));
                q[2 * j + 1] = bytes1(uint8(v));
            } else {
                q[j] = bytes1(uint8(v));
            }
        }
    }

    function submitAs(BbvflHashAggregator agg, uint256 i, uint64 r) internal {
        bytes memory q = payload(agg, i, r);
        vm.prank(clientAddr(i));
        agg.submit(r, q);
    }

    /// The participants' payloads for round r in index order.
    function payloads(BbvflHashAggregator agg, uint64 r) internal view returns (bytes[] memory ps) {
        address[] memory parts = agg.participants();
        ps = new bytes[](parts.length);
        for (uint256 k = 0; k < parts.length; k++) ps[k] = payload(agg, indexOf(parts[k]), r);
    }

    /// The expected sum of round r over the participants, in the lane layout.
    function expectedSum(BbvflHashAggregator agg, uint64 r) internal view returns (bytes memory want) {
        bytes[] memory ps = payloads(agg, r);
        uint256 lb = agg.params().laneBits / 8;
        uint256 n = c.masked ? ps[0].length / 2 : ps[0].length;
        want = new bytes(n * lb);
        for (uint256 j = 0; j < n; j++) {
            uint256 s;
            for (uint256 k = 0; k < ps.length; k++) {
                s += c.masked ? (uint256(uint8(ps[k][2 * j])) << 8 | uint8(ps[k][2 * j + 1])) : uint8(ps[k][j]);
            }
            if (lb == 1) {
                want[j] = bytes1(uint8(s));
            } else {
                want[2 * j] = bytes1(uint8(s >> 8));
                want[2 * j + 1] = bytes1(uint8(s));
            }
        }
    }

    /// Aggregates round r from a non-participant and checks the emitted sum and count.
    function aggregateAndCheck(BbvflHashAggregator agg, uint64 r) internal {
        bytes memory want = expectedSum(agg, r);
        bytes[] memory ps = payloads(agg, r);
        vx.recordLogs();
        vm.prank(ANYONE);
        agg.aggregate(r, ps);
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

    /// Finishes head round r: aggregate, gradient for TRAIN, metrics and rewards at epoch end.
    function finish(BbvflHashAggregator agg, uint64 r) internal {
        assertEq(agg.currentRound(), r, "head");
        aggregateAndCheck(agg, r);
        (bool train, uint32 epoch,,, uint32 coords) = agg.roundLayout(r);
        if (train) {
            assertEq(agg.currentRound(), r, "TRAIN head waits for its gradient");
            address act = agg.active();
            vm.prank(act);
            agg.postGradient(r, new bytes(uint256(coords) * 4), "");
        }
        BbvflBase.Params memory p = agg.params();
        if ((r + 1) % (p.trainRoundsPerEpoch + p.evalRoundsPerEpoch) == 0) {
            address act = agg.active();
            vm.startPrank(act);
            agg.postMetrics(epoch, 900000, 800000, 1);
            agg.payRewards(epoch);
            vm.stopPrank();
        }
    }

    function isOpen(BbvflHashAggregator agg, uint64 r) internal returns (bool) {
        bytes memory q = payload(agg, 0, r);
        vm.prank(clientAddr(0));
        try agg.submit(r, q) {
            return true;
        } catch (bytes memory err) {
            assertEq(err, abi.encodeWithSelector(BbvflBase.RoundNotOpen.selector, r, agg.currentRound()), "refusal");
            return false;
        }
    }

    // ------------------------------------------------------------ happy path

    /// K = 5 windows, staleness 1: every client submits the next TRAIN round before the gradient
    /// of the current one, and across the EVAL round; anyone aggregates; rewards per round.
    function test_pipelined_session() public {
        // R = 10, K = 5: T = 2 windows of 5 batches; NE = 4, ER = 4: V = 1; 3 epochs
        BbvflHashAggregator agg = start(configH(3, false, 10, 5, 4, 4, 3, 1));
        BbvflBase.Params memory p = agg.params();
        assertTrue(p.hashed, "hashed");
        assertEq(p.staleness, 1, "staleness");
        assertEq(p.totalRounds, 9, "3 epochs of 3 rounds");
        assertEq(agg.RING(), 8, "ring");
        uint64 next; // next round not yet submitted by anyone
        for (uint64 head = 0; head < p.totalRounds; head++) {
            // submit every round that is open, client 0 first (it probes), then the others
            while (next < p.totalRounds && isOpen(agg, next)) {
                for (uint256 i = 1; i < 3; i++) submitAs(agg, i, next);
                next++;
            }
            // staleness 1: the head plus at most one more TRAIN round (plus EVAL rounds)
            uint256 trains;
            for (uint64 r = head; r < next; r++) {
                (bool t,,,,) = agg.roundLayout(r);
                if (t && r != next - 1) trains++;
            }
            assertTrue(trains <= 1, "at most staleness TRAIN rounds before the newest");
            assertTrue(next > head + 1 || next == p.totalRounds, "pipelined: more than the head is open");
            finish(agg, head);
        }
        assertEq(agg.currentRound(), p.totalRounds, "session over");
        for (uint256 i = 0; i < 3; i++) {
            (,,,,, uint64 last, uint32 acc,) = agg.clientInfo(clientAddr(i));
            assertEq(acc, p.totalRounds, "accepted = done rounds");
            assertEq(last, p.totalRounds, "lastRoundPlus1");
            assertEq(agg.token().balanceOf(clientAddr(i)), p.totalRounds * c.rewardPerSubmission, "paid per round");
            assertTrue(agg.hasSubmitted(8, clientAddr(i)), "hasSubmitted after the end");
        }
        bytes memory q8 = payload(agg, 0, 8);
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.SessionOver.selector);
        agg.submit(8, q8);
    }

    /// Staleness 0: rounds behind an open EVAL round may be submitted (eval rounds never gate),
    /// a second TRAIN round may not.
    function test_staleness_zero_eval_does_not_gate() public {
        // R = 4, K = 2: T = 2; NE = 2, ER = 1: V = 2; rounds 0,1 train, 2,3 eval, 4,5 train, ...
        BbvflHashAggregator agg = start(configH(2, false, 4, 2, 2, 1, 2, 0));
        for (uint256 i = 0; i < 2; i++) submitAs(agg, i, 0);
        assertTrue(!isOpen(agg, 1), "second TRAIN round closed at staleness 0");
        finish(agg, 0);
        for (uint256 i = 0; i < 2; i++) submitAs(agg, i, 1);
        assertTrue(!isOpen(agg, 2), "EVAL round behind an open TRAIN round");
        finish(agg, 1);
        // head = 2 (EVAL): 3 (EVAL) and 4 (TRAIN of epoch 1) are open, 5 is not
        assertTrue(isOpen(agg, 3), "EVAL round 3 open");
        assertTrue(isOpen(agg, 4), "next epoch's TRAIN round open behind EVAL rounds");
        assertTrue(!isOpen(agg, 5), "second TRAIN round closed");
        assertTrue(isOpen(agg, 2), "head open");
        submitAs(agg, 1, 2);
        submitAs(agg, 1, 3);
        submitAs(agg, 1, 4);
        // aggregate the EVAL rounds in order; round 4 then is head and complete
        finish(agg, 2);
        finish(agg, 3);
        (, uint8 submitted, uint8 n, bool complete,,) = agg.roundState();
        assertTrue(complete && submitted == 2 && n == 2, "round 4 already complete when it became head");
        finish(agg, 4);
        bytes memory q4 = payload(agg, 0, 4);
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.RoundClosed.selector);
        agg.submit(4, q4);
    }

    /// The ring holds 8 rounds: head + 8 is refused whatever the staleness.
    function test_ring_bound() public {
        BbvflHashAggregator agg = start(configH(1, false, 20, 1, 0, 0, 1, 7));
        for (uint64 r = 0; r < 8; r++) submitAs(agg, 0, r);
        assertTrue(!isOpen(agg, 8), "head + 8 refused (7 TRAIN rounds before it: staleness 7 also allows)");
        finish(agg, 0);
        assertTrue(isOpen(agg, 8), "open once head moved");
        bytes memory q8 = payload(agg, 0, 8);
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.AlreadySubmitted.selector);
        agg.submit(8, q8);
    }

    // ------------------------------------------------------------ aggregate checks

    function test_aggregate_checks() public {
        BbvflHashAggregator agg = start(configH(3, false, 10, 5, 4, 4, 1, 1));
        submitAs(agg, 0, 0);
        submitAs(agg, 2, 0);
        bytes[] memory ps = payloads(agg, 0);
        vx.expectPartialRevert(BbvflBase.RoundNotComplete.selector);
        agg.aggregate(0, ps);
        submitAs(agg, 1, 0);
        vx.expectPartialRevert(BbvflBase.RoundNotOpen.selector);
        agg.aggregate(1, ps);
        // a changed byte, the wrong order, a missing or extra payload, a wrong length
        ps[1][3] = bytes1(uint8(ps[1][3]) ^ 1);
        vx.expectPartialRevert(BbvflBase.PayloadHashMismatch.selector);
        agg.aggregate(0, ps);
        ps = payloads(agg, 0);
        (ps[0], ps[1]) = (ps[1], ps[0]);
        vx.expectPartialRevert(BbvflBase.PayloadHashMismatch.selector);
        agg.aggregate(0, ps);
        ps = payloads(agg, 0);
        bytes[] memory two = new bytes[](2);
        two[0] = ps[0];
        two[1] = ps[1];
        vx.expectPartialRevert(BbvflBase.BadPayloadCount.selector);
        agg.aggregate(0, two);
        bytes[] memory four = new bytes[](4);
        for (uint256 k = 0; k < 3; k++) four[k] = ps[k];
        four[3] = ps[0];
        vx.expectPartialRevert(BbvflBase.BadPayloadCount.selector);
        agg.aggregate(0, four);
        bytes memory shortP = new bytes(ps[2].length - 1);
        for (uint256 j = 0; j < shortP.length; j++) shortP[j] = ps[2][j];
        ps[2] = shortP;
        vx.expectPartialRevert(BbvflBase.PayloadHashMismatch.selector);
        agg.aggregate(0, ps);
        // the gradient needs the aggregation
        address act = agg.active();
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.RoundNotComplete.selector);
        agg.postGradient(0, new bytes(120), "");
        aggregateAndCheck(agg, 0);
        ps = payloads(agg, 0);
        vx.expectPartialRevert(BbvflBase.AlreadyAggregated.selector);
        agg.aggregate(0, ps);
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.BadGradientLength.selector);
        agg.postGradient(0, new bytes(4), "");
        vm.prank(clientAddr(0) == act ? clientAddr(1) : clientAddr(0));
        vm.expectRevert(BbvflBase.NotActive.selector);
        agg.postGradient(0, new bytes(120), "");
        vm.prank(act);
        agg.postGradient(0, new bytes(120), "");
        vx.expectPartialRevert(BbvflBase.RoundClosed.selector);
        agg.aggregate(0, ps);
        vm.expectRevert(BbvflBase.NoStoredSum.selector);
        agg.roundSum(0);
    }

    function test_submit_checks() public {
        BbvflHashAggregator agg = start(configH(2, false, 10, 5, 4, 4, 1, 0));
        bytes memory q = payload(agg, 0, 0);
        q[0] = bytes1(uint8(17));
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.ValueAboveLevels.selector);
        agg.submit(0, q);
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.BadLength.selector);
        agg.submit(0, new bytes(59));
        bytes memory q0 = payload(agg, 0, 0);
        vm.prank(clientAddr(7));
        vm.expectRevert(BbvflBase.NotRegistered.selector);
        agg.submit(0, q0);
        submitAs(agg, 0, 0);
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.AlreadySubmitted.selector);
        agg.submit(0, q0);
        assertTrue(agg.hasSubmitted(0, clientAddr(0)), "hasSubmitted");
        assertTrue(!agg.hasSubmitted(0, clientAddr(1)), "not yet");
        assertTrue(!agg.hasSubmitted(0, clientAddr(9)), "stranger");
        (uint64 bm, bool aggd) = agg.roundStatus(0);
        assertEq(bm, 1, "bitmap");
        assertTrue(!aggd, "not aggregated");
        (uint64 round, uint8 submitted, uint8 n, bool complete,,) = agg.roundState();
        assertTrue(round == 0 && submitted == 1 && n == 2 && !complete, "roundState");
    }

    // ------------------------------------------------------------ expiry and re-election

    /// Plain mode: the silent client is excluded; head completes with the others and is
    /// aggregated without it, and so is a later round it had submitted to.
    function test_expire_plain() public {
        BbvflHashAggregator agg = start(configH(3, false, 10, 5, 4, 4, 1, 1));
        submitAs(agg, 0, 0);
        submitAs(agg, 1, 0);
        submitAs(agg, 2, 1); // client 2 skipped round 0 but submitted round 1
        submitAs(agg, 0, 1);
        submitAs(agg, 1, 1);
        vx.expectPartialRevert(BbvflBase.RoundNotTimedOut.selector);
        agg.expireRound();
        vm.roll(block.number + 31);
        address act = agg.active();
        agg.expireRound();
        (bool reg, bool excl,,,,, uint32 acc,) = agg.clientInfo(clientAddr(2));
        assertTrue(reg && excl, "client 2 excluded");
        assertEq(acc, 0, "no done round");
        assertEq(agg.participants().length, 2, "two left");
        assertTrue(agg.active() != clientAddr(2), "active client among the rest");
        if (act != clientAddr(2)) assertEq(agg.active(), act, "active kept");
        (, uint8 submitted, uint8 n, bool complete,, uint64 completedAt) = agg.roundState();
        assertTrue(submitted == 2 && n == 2 && complete, "head complete with the rest");
        assertEq(completedAt, block.number, "active deadline starts");
        finish(agg, 0);
        finish(agg, 1); // without client 2's submission
        submitAs(agg, 0, 2);
        submitAs(agg, 1, 2);
        finish(agg, 2);
        assertEq(agg.token().balanceOf(clientAddr(0)), 3e18, "3 rounds");
        assertEq(agg.token().balanceOf(clientAddr(2)), 0, "excluded before any round was done");
        assertTrue(!agg.hasSubmitted(0, clientAddr(2)), "excluded client did not contribute to round 0");
    }

    /// Masked mode: head and every later round with submissions re-open for the rest.
    function test_expire_masked_reopens_later_rounds() public {
        BbvflHashAggregator agg = start(configH(3, true, 10, 5, 4, 4, 1, 1));
        submitAs(agg, 0, 0);
        submitAs(agg, 1, 0);
        submitAs(agg, 0, 1);
        vm.roll(block.number + 31);
        vx.recordLogs();
        agg.expireRound();
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        uint256 reopened;
        for (uint256 x = 0; x < logs.length; x++) {
            if (logs[x].topics[0] != RR) continue;
            assertEq(uint256(logs[x].topics[1]), reopened, "rounds 0 then 1");
            (uint64 set, uint8 n) = abi.decode(logs[x].data, (uint64, uint8));
            assertEq(set, 3, "clients 0 and 1");
            assertEq(n, 2, "two left");
            reopened++;
        }
        assertEq(reopened, 2, "two rounds re-opened");
        (uint64 bm,) = agg.roundStatus(1);
        assertEq(bm, 0, "round 1 voided");
        (, uint8 submitted,,, uint64 openedAt,) = agg.roundState();
        assertEq(submitted, 0, "head voided");
        assertEq(openedAt, block.number, "fresh timeout");
        assertTrue(!agg.hasSubmitted(0, clientAddr(0)), "must submit again");
        for (uint64 r = 0; r < 3; r++) {
            submitAs(agg, 0, r);
            submitAs(agg, 1, r);
            finish(agg, r);
        }
        assertEq(agg.currentRound(), 3, "ended");
    }

    /// reelect(): the active deadline runs from the block head became complete.
    function test_reelect_when_head_waits() public {
        BbvflHashAggregator agg = start(configH(3, false, 10, 5, 4, 4, 1, 1));
        for (uint256 i = 0; i < 3; i++) submitAs(agg, i, 0);
        vm.roll(block.number + 20);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        vm.roll(block.number + 1);
        address old = agg.active();
        agg.reelect();
        assertTrue(agg.active() != old, "new active client");
        aggregateAndCheck(agg, 0);
        vm.roll(block.number + 10);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        vm.prank(agg.active());
        agg.postGradient(0, new bytes(120), "");
        // round 1 nobody submitted yet: no deadline
        vm.roll(block.number + 100);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
    }

    /// Label gradients in the hashed mode: for the aggregated TRAIN head, of the window's rows.
    function test_label_gradient() public {
        BbvflBase.Config memory k = configH(2, false, 10, 5, 0, 0, 1, 1);
        c = k;
        BbvflHashAggregator agg = new BbvflHashAggregator(k, openRegistration());
        for (uint256 i = 0; i < 2; i++) {
            (address a, bytes memory pk) = clientKey(i);
            vm.prank(a);
            agg.registerLabelHolder(pk);
        }
        commitAll(agg, 2);
        revealAll(agg, 2);
        address other = agg.active() == clientAddr(0) ? clientAddr(1) : clientAddr(0);
        for (uint256 i = 0; i < 2; i++) submitAs(agg, i, 0);
        vm.prank(other);
        vx.expectPartialRevert(BbvflBase.RoundNotComplete.selector);
        agg.postLabelGradient(0, new bytes(40));
        aggregateAndCheck(agg, 0);
        vm.prank(other);
        vx.expectPartialRevert(BbvflBase.BadLabelGradientLength.selector);
        agg.postLabelGradient(0, new bytes(8));
        vm.prank(other);
        agg.postLabelGradient(0, new bytes(40)); // 10 rows, one logit
    }

    // ------------------------------------------------------------ constructor and size

    function test_constructor_mode_checks() public {
        BbvflBase.Config memory k = configH(2, false, 10, 5, 4, 4, 1, 1);
        k.hashed = false;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.WrongModeContract.selector, false, true));
        new BbvflHashAggregator(k, openRegistration());
        k = configH(2, false, 10, 5, 4, 4, 1, 8);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.StalenessTooLarge.selector, 8, 7));
        new BbvflHashAggregator(k, openRegistration());
        k = configH(15, false, 10, 5, 4, 4, 1, 7);
        k.levels = 17; // M*b = 255: 8-bit lanes
        assertEq(new BbvflHashAggregator(k, openRegistration()).params().laneBits, 8, "8-bit");
        k.clients = 16; // 256: 16-bit
        k.rewardPool = 1e30;
        assertEq(new BbvflHashAggregator(k, openRegistration()).params().laneBits, 16, "16-bit");
    }

    function test_sums_16bit_plain() public {
        BbvflBase.Config memory k = configH(3, false, 7, 3, 5, 2, 1, 2);
        k.levels = 100; // M*b = 300: 16-bit lanes
        BbvflHashAggregator agg = start(k);
        assertEq(agg.params().laneBits, 16, "16-bit lanes");
        runAll(agg);
    }

    function test_sums_masked_ragged() public {
        runAll(start(configH(3, true, 7, 3, 5, 2, 2, 2)));
    }

    function test_sums_8bit_ragged() public {
        runAll(start(configH(3, false, 7, 3, 5, 2, 2, 0)));
    }

    /// Every round submitted as soon as it is open, finished in order.
    function runAll(BbvflHashAggregator agg) internal {
        uint64 total = agg.params().totalRounds;
        uint64 next;
        for (uint64 head = 0; head < total; head++) {
            while (next < total && isOpen(agg, next)) {
                for (uint256 i = 1; i < c.clients; i++) submitAs(agg, i, next);
                next++;
            }
            finish(agg, head);
        }
        assertEq(agg.currentRound(), total, "ended");
    }

    uint256 internal fseed;

    /// The hashed mode emits exactly the lane mode's sum bytes for the same submissions.
    function testFuzz_same_sum_as_lanes(uint256 seed, uint8 mRaw, uint8 lvRaw, bool masked, uint8 pRaw) public {
        BbvflBase.Config memory k =
            configW(uint8(bound(mRaw, 1, 6)), 3, uint32(bound(pRaw, 1, 23)), uint8(bound(lvRaw, 1, 100)), masked, 3, 2, 0, 0, 1);
        BbvflAggregator lanes = startSession(k);
        k.hashed = true;
        fseed = seed;
        BbvflHashAggregator agg = start(k);
        for (uint64 r = 0; r < 2; r++) sameRound(lanes, agg, r);
    }

    function fuzzPayload(uint256 i, uint64 r, uint256 coords) internal view returns (bytes memory q) {
        q = new bytes(c.masked ? 2 * coords : coords);
        for (uint256 j = 0; j < q.length; j++) {
            uint256 v = uint256(keccak256(abi.encode(fseed, i, r, j)));
            q[j] = bytes1(uint8(c.masked ? v : v % (uint256(c.levels) + 1)));
        }
    }

    function sameRound(BbvflAggregator lanes, BbvflHashAggregator agg, uint64 r) internal {
        (,,,, uint32 coords) = agg.roundLayout(r);
        bytes[] memory ps = new bytes[](c.clients);
        for (uint256 i = 0; i < c.clients; i++) {
            ps[i] = fuzzPayload(i, r, coords);
            vm.prank(clientAddr(i));
            agg.submit(r, ps[i]);
            vm.prank(clientAddr(i));
            lanes.submit(r, ps[i]);
        }
        bytes memory want = lanes.roundSum(r);
        vx.recordLogs();
        agg.aggregate(r, ps);
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        uint256 seen;
        for (uint256 x = 0; x < logs.length; x++) {
            if (logs[x].topics[0] != RC) continue;
            (, bytes memory got) = abi.decode(logs[x].data, (uint8, bytes));
            assertEq(got, want, "hashed sum = lane sum");
            seen++;
        }
        assertEq(seen, 1, "one RoundCompleted");
        address a1 = agg.active();
        vm.prank(a1);
        agg.postGradient(r, new bytes(uint256(coords) * 4), "");
        address a2 = lanes.active();
        vm.prank(a2);
        lanes.postGradient(r, new bytes(uint256(coords) * 4), "");
    }

    function test_runtime_size_below_eip170() public {
        BbvflHashAggregator agg = new BbvflHashAggregator(configH(5, false, 45, 5, 110, 110, 1, 1), openRegistration());
        assertTrue(address(agg).code.length < 24576 - 512, "less than 512 bytes of margin under EIP-170");
    }

    // ------------------------------------------------------------ each check at each index and boundary
    // (issue 27, deliverable 7: every test below fails when the one check it names is off)


    /// submit emits SubmittedPayload(round, client, q) with q exactly (ABI encoding, zero padding
    /// of a ragged tail) and no Submitted event; the stored word is keccak256 of that q.
    function test_submit_emits_payload() public {
        // 2 x 3 x 5 = 30 values (ragged: not a multiple of 32) and 2 x 3 x 20 = 120
        uint32[2] memory ks = [uint32(5), uint32(20)];
        for (uint256 t = 0; t < 2; t++) {
            BbvflHashAggregator agg = start(configH(2, false, 20, ks[t], 0, 0, 1, 0));
            bytes memory q = payload(agg, 1, 0);
            vx.recordLogs();
            vm.prank(clientAddr(1));
            agg.submit(0, q);
            VmExtra.Log[] memory logs = vx.getRecordedLogs();
            assertEq(logs.length, 1, "one log per submission");
            assertEq(logs[0].topics.length, 3, "round and client indexed");
            assertEq(logs[0].topics[0], keccak256("SubmittedPayload(uint64,address,bytes)"), "topic0");
            assertEq(uint256(logs[0].topics[1]), 0, "round");
            assertEq(address(uint160(uint256(logs[0].topics[2]))), clientAddr(1), "client");
            assertEq(logs[0].data, abi.encode(q), "data = abi.encode(q), padded with zeros");
            // the logged bytes are what aggregate() accepts
            submitAs(agg, 0, 0);
            bytes[] memory ps = new bytes[](2);
            ps[0] = payload(agg, 0, 0);
            ps[1] = abi.decode(logs[0].data, (bytes));
            agg.aggregate(0, ps);
        }
    }

    /// M = 5: a payload changed at any position (first byte, last byte, one byte short, one byte
    /// long, another client's bytes) is refused with PayloadHashMismatch(that position).
    function test_payload_check_each_index() public {
        BbvflHashAggregator agg = start(configH(5, false, 20, 20, 0, 0, 1, 0));
        for (uint256 i = 0; i < 5; i++) submitAs(agg, i, 0);
        for (uint256 i = 0; i < 5; i++) {
            for (uint256 v = 0; v < 5; v++) {
                bytes[] memory ps = payloads(agg, 0);
                bytes memory p = ps[i];
                if (v == 0) {
                    p[0] = bytes1(uint8(p[0]) ^ 1);
                } else if (v == 1) {
                    p[p.length - 1] = bytes1(uint8(p[p.length - 1]) ^ 1);
                } else if (v == 2) {
                    bytes memory sh = new bytes(p.length - 1);
                    for (uint256 j = 0; j < sh.length; j++) sh[j] = p[j];
                    ps[i] = sh;
                } else if (v == 3) {
                    ps[i] = bytes.concat(p, hex"00");
                } else {
                    ps[i] = ps[(i + 1) % 5];
                }
                vm.expectRevert(abi.encodeWithSelector(BbvflBase.PayloadHashMismatch.selector, i));
                agg.aggregate(0, ps);
            }
        }
        aggregateAndCheck(agg, 0);
    }

    /// Staleness s (no EVAL rounds): head + s is accepted, head + s + 1 refused, for each s
    /// below the ring.
    function test_staleness_bound_each_s() public {
        for (uint8 s = 0; s < 7; s++) {
            BbvflHashAggregator agg = start(configH(1, false, 20, 1, 0, 0, 1, s));
            for (uint64 r = 0; r <= s; r++) submitAs(agg, 0, r);
            assertTrue(!isOpen(agg, uint64(s) + 1), "head + s + 1 refused");
            finish(agg, 0);
            assertTrue(isOpen(agg, uint64(s) + 1), "open once head moved");
        }
    }

    /// A full ring, the staleness not binding: an epoch of 1 TRAIN + 7 EVAL rounds with s = 7, so
    /// head + 8 (the next epoch's TRAIN round, 1 TRAIN round before it) is refused by the ring
    /// alone; head + 7 is accepted; head + 8 opens when head moves.
    function test_ring_full_staleness_not_binding() public {
        BbvflHashAggregator agg = start(configH(1, false, 1, 1, 7, 1, 2, 7));
        for (uint64 r = 0; r < 8; r++) submitAs(agg, 0, r);
        assertTrue(!isOpen(agg, 8), "head + RING refused");
        finish(agg, 0);
        assertTrue(isOpen(agg, 8), "open once head moved");
        for (uint64 r = 1; r < 9; r++) finish(agg, r);
    }

    /// The range check at every byte position (4 words, a ragged tail): b + 1 and 255 refused at
    /// each position, b accepted everywhere; the same with b = 3.
    function test_range_each_position() public {
        uint8[2] memory lv = [uint8(16), uint8(3)];
        for (uint256 t = 0; t < 2; t++) {
            BbvflBase.Config memory k = configH(2, false, 20, 20, 0, 0, 1, 0);
            k.levels = lv[t];
            BbvflHashAggregator agg = start(k);
            uint256 n = payload(agg, 0, 0).length;
            assertEq(n, 120, "coords");
            bytes memory q = new bytes(n);
            for (uint256 j = 0; j < n; j++) q[j] = bytes1(lv[t]);
            for (uint256 j = 0; j < n; j++) {
                for (uint256 w = 0; w < 2; w++) {
                    q[j] = bytes1(w == 0 ? lv[t] + 1 : 255);
                    vm.prank(clientAddr(0));
                    vm.expectRevert(abi.encodeWithSelector(BbvflBase.ValueAboveLevels.selector, uint256(lv[t])));
                    agg.submit(0, q);
                }
                q[j] = bytes1(lv[t]);
            }
            vm.prank(clientAddr(0));
            agg.submit(0, q);
        }
    }

    // ------------------------------------------------------------ sequences

    /// A participant that submits last at openedAt + activeBlocks + 1 (inside its round timeout)
    /// cannot re-elect in the same block: the active client's deadline counts from that
    /// submission, so it keeps its full activeBlocks (issue: deadlines nobody can game).
    function test_late_submitter_cannot_steal_active_role() public {
        BbvflHashAggregator agg = start(configH(3, false, 4, 1, 0, 0, 1, 0));
        address act = agg.active();
        uint256 late = indexOf(act) == 2 ? 1 : 2;
        for (uint256 i = 0; i < 3; i++) if (i != late) submitAs(agg, i, 0);
        uint256 t0 = block.number;
        vm.roll(t0 + c.activeBlocks + 1);
        submitAs(agg, late, 0);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        vm.roll(block.number + c.activeBlocks);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        vm.roll(block.number + 1);
        agg.reelect();
        assertTrue(agg.active() != act, "re-elected once the active client had its activeBlocks");
    }

}
