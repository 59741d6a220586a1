// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base, VmExtra} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";
import {BbvflRewardToken} from "../src/BbvflRewardToken.sol";

/// Unit tests: every external function of BbvflAggregator and every revert path.
contract AggregatorTest is Base {
    BbvflBase.Config internal c;

    function setUp() public {
        // M=3, B=2, P=5 (10 coordinates), b=16, 2 train + 1 eval rounds per epoch, 2 epochs
        c = config(3, 2, 5, 16, false, 2, 1, 2);
    }


    /// Submits a deterministic vector for every participant of round r; returns the plain sum.
    function fillRound(BbvflAggregator agg, uint64 r) internal returns (bytes memory want) {
        address[] memory ps = agg.participants();
        uint256 len = uint256(c.batch) * c.dim;
        want = new bytes(len);
        for (uint256 k = 0; k < ps.length; k++) {
            bytes memory q = plainData(indexOf(ps[k]), r, len, c.levels);
            for (uint256 j = 0; j < len; j++) want[j] = bytes1(uint8(want[j]) + uint8(q[j]));
            vm.prank(ps[k]);
            agg.submit(r, q);
        }
    }

    function postGrad(BbvflAggregator agg, uint64 r) internal {
        vm.prank(agg.active());
        agg.postGradient(r, new bytes(uint256(c.batch) * c.dim * 4), hex"0102");
    }

    /// Runs rounds [from, to) completely (gradient after TRAIN rounds).
    function runRounds(BbvflAggregator agg, uint64 from, uint64 to) internal {
        for (uint64 r = from; r < to; r++) {
            fillRound(agg, r);
            (bool train,,,,) = agg.roundLayout(r);
            if (train) postGrad(agg, r);
        }
    }

    // ------------------------------------------------------------ constructor and params

    function test_constructor_params_and_token() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        BbvflBase.Params memory p = agg.params();
        assertEq(p.clients, 3, "M");
        assertEq(p.batch, 2, "B");
        assertEq(p.dim, 5, "P");
        assertEq(p.levels, 16, "b");
        assertEq(p.betaMicro, 200000, "beta");
        assertTrue(!p.masked, "masked");
        assertEq(p.laneBits, 8, "lane bits: 3*16 < 256");
        assertEq(p.totalRounds, 6, "total rounds");
        assertEq(p.maxCoords, 10, "max coords = B*P");
        assertEq(p.batchesPerEpoch, 2, "R");
        assertEq(p.window, 1, "K");
        assertEq(p.evalRows, 2, "NE");
        assertEq(p.evalRowsPerRound, 2, "ER");
        assertEq(p.trainRows, 4, "N_train");
        assertEq(p.testRows, 2, "N_test");
        assertEq(p.staleness, 0, "s");
        assertTrue(!p.hashed, "hashed");
        assertEq(p.trainRoundsPerEpoch, 2, "T");
        assertEq(p.evalRoundsPerEpoch, 1, "V");
        assertEq(p.epochs, 2, "epochs");
        assertEq(p.rewardPerSubmission, 1e18, "rate");
        assertEq(p.roundTimeoutBlocks, 30, "timeout");
        assertEq(p.token, address(agg.token()), "token");
        BbvflRewardToken t = agg.token();
        assertEq(t.totalSupply(), c.rewardPool, "supply = pool");
        assertEq(t.balanceOf(address(agg)), c.rewardPool, "pool minted to the aggregator");
        assertEq(uint256(agg.phase()), 0, "registration phase");
        (uint64 a, uint64 b_, uint64 d) = agg.deadlines();
        assertEq(a + b_ + d, 0, "no deadlines before registration closes");
    }

    function test_constructor_lane_width() public {
        BbvflBase.Config memory k = config(15, 1, 1, 17, false, 1, 0, 1); // 255 < 256
        assertEq(new BbvflAggregator(k, openRegistration()).params().laneBits, 8, "M*b = 255 -> 8");
        k = config(16, 1, 1, 16, false, 1, 0, 1); // 256
        assertEq(new BbvflAggregator(k, openRegistration()).params().laneBits, 16, "M*b = 256 -> 16");
        k = config(2, 3, 3, 4, true, 1, 0, 1);
        BbvflBase.Params memory p = new BbvflAggregator(k, openRegistration()).params();
        assertEq(p.laneBits, 16, "masked -> 16");
        assertEq(p.maxCoords, 9, "max coords = B*P");
    }

    function test_constructor_reverts() public {
        BbvflBase.Config memory k = c;
        k.clients = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.ClientsOutOfRange.selector, k.clients, 64));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.clients = 65;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.ClientsOutOfRange.selector, k.clients, 64));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.batch = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.EmptyBatchOrDim.selector, k.batch, k.dim));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.dim = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.EmptyBatchOrDim.selector, k.batch, k.dim));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.levels = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.ZeroLevels.selector));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.betaMicro = 500001;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.BetaTooLarge.selector, k.betaMicro, 500000));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.batchesPerEpoch = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.ZeroBatchesPerEpoch.selector));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.epochs = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.ZeroEpochs.selector));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.revealBlocks = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.DeadlineOutOfRange.selector, k.commitBlocks, k.revealBlocks, k.activeBlocks, k.roundTimeoutBlocks));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.roundTimeoutBlocks = 0;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.DeadlineOutOfRange.selector, k.commitBlocks, k.revealBlocks, k.activeBlocks, k.roundTimeoutBlocks));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.activeBlocks = 1 << 32;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.DeadlineOutOfRange.selector, k.commitBlocks, k.revealBlocks, k.activeBlocks, k.roundTimeoutBlocks));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.batch = 1025;
        k.dim = 1024;
        k.trainRows = 2 * 1025;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundTooLarge.selector, uint256(1025) * 1024, 1 << 20));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.epochs = type(uint32).max;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.TooManyRounds.selector, uint256(type(uint32).max) * 3, type(uint32).max));
        new BbvflAggregator(k, openRegistration());
        k = c;
        k.rewardPool -= 1;
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.RewardPoolTooSmall.selector, k.rewardPool, k.rewardPerSubmission, k.clients, 6));
        new BbvflAggregator(k, openRegistration());
    }

    // ------------------------------------------------------------ registration

    function test_register() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        (address a0, bytes memory pk0) = clientKey(0);
        vm.prank(a0);
        agg.register(pk0);
        (bool reg, bool excl,,, uint8 idx,,,) = agg.clientInfo(a0);
        assertTrue(reg && !excl, "registered");
        assertEq(idx, 0, "index 0");
        assertEq(agg.pubkeyOf(a0), pk0, "pubkey stored");
        registerAll2(agg, 1, 3);
        address[] memory cs = agg.clients();
        assertEq(cs.length, 3, "3 clients");
        assertEq(cs[2], clientAddr(2), "index order");
        assertEq(uint256(agg.phase()), 1, "commit phase after M registrations");
        (uint64 closed, uint64 cd, uint64 rd) = agg.deadlines();
        assertEq(closed, block.number, "closed now");
        assertEq(cd, block.number + 10, "commit deadline");
        assertEq(rd, block.number + 20, "reveal deadline");
    }

    function registerAll2(BbvflAggregator agg, uint256 from, uint256 to) internal {
        for (uint256 i = from; i < to; i++) {
            (address a, bytes memory pk) = clientKey(i);
            vm.prank(a);
            agg.register(pk);
        }
    }

    function test_register_real_key() public {
        // secp256k1 generator point G = public key of private key 1; its address is well known
        bytes memory g = abi.encodePacked(
            uint256(0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798),
            uint256(0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)
        );
        address a = 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf;
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        vm.prank(a);
        agg.register(g);
        (bool reg,,,,,,,) = agg.clientInfo(a);
        assertTrue(reg, "key 1 registers");
    }

    function test_register_reverts() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        (address a0, bytes memory pk0) = clientKey(0);
        vm.prank(a0);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.BadPubkeyLength.selector, 64, 2));
        agg.register(hex"0011");
        (, bytes memory pk1) = clientKey(1);
        vm.prank(a0);
        vm.expectRevert(BbvflBase.PubkeyNotSender.selector);
        agg.register(pk1);
        vm.prank(a0);
        agg.register(pk0);
        vm.prank(a0);
        vm.expectRevert(BbvflBase.AlreadyRegistered.selector);
        agg.register(pk0);
        registerAll2(agg, 1, 3);
        (address a3, bytes memory pk3) = clientKey(3);
        vm.prank(a3);
        vm.expectRevert(BbvflBase.RegistrationClosed.selector);
        agg.register(pk3);
    }

    // ------------------------------------------------------------ election

    function test_election_all_reveal() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        registerAll(agg, 3);
        commitAll(agg, 3);
        assertEq(uint256(agg.phase()), 2, "reveal phase once all committed");
        assertEq(agg.commitmentOf(clientAddr(1)), commitmentFor(address(agg), secretOf(1), clientAddr(1)), "commitment");
        vx.recordLogs();
        revealAll(agg, 3);
        bytes32 s = keccak256(abi.encodePacked(secretOf(0), secretOf(1), secretOf(2)));
        assertEq(agg.seed(), s, "S = keccak of secrets in index order");
        assertEq(agg.electionSeed(), s, "election seed starts at S");
        assertEq(agg.active(), clientAddr(uint256(s) % 3), "active = participants[S mod n]");
        assertEq(uint256(agg.phase()), 3, "training");
        assertEq(agg.participants().length, 3, "3 participants");
        assertEq(agg.activeSince(), block.number, "active since");
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        bytes32 topic = keccak256("Elected(bytes32,address,uint64,uint8,uint8)");
        bool found;
        for (uint256 i = 0; i < logs.length; i++) {
            if (logs[i].topics[0] == topic) {
                found = true;
                (bytes32 es, uint64 fromRound, uint8 n, uint8 reason) = abi.decode(logs[i].data, (bytes32, uint64, uint8, uint8));
                assertEq(es, s, "event seed");
                assertEq(fromRound, 0, "from round 0");
                assertEq(n, 3, "participants");
                assertEq(reason, 0, "reason 0");
                assertEq(address(uint160(uint256(logs[i].topics[1]))), agg.active(), "event active");
            }
        }
        assertTrue(found, "Elected emitted");
    }

    function test_commit_reverts() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.RegistrationOpen.selector);
        agg.commit(bytes32(uint256(1)));
        registerAll(agg, 3);
        vm.prank(clientAddr(7));
        vm.expectRevert(BbvflBase.NotRegistered.selector);
        agg.commit(bytes32(uint256(1)));
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.EmptyCommitment.selector);
        agg.commit(bytes32(0));
        vm.prank(clientAddr(0));
        agg.commit(bytes32(uint256(1)));
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.AlreadyCommitted.selector);
        agg.commit(bytes32(uint256(2)));
        vm.roll(block.number + 11);
        vm.prank(clientAddr(1));
        vm.expectRevert(BbvflBase.CommitDeadlinePassed.selector);
        agg.commit(bytes32(uint256(1)));
    }

    function test_reveal_reverts() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.RegistrationOpen.selector);
        agg.reveal(secretOf(0));
        registerAll(agg, 3);
        address a0 = clientAddr(0);
        vm.prank(a0);
        agg.commit(commitmentFor(address(agg), secretOf(0), a0));
        vm.prank(a0);
        vm.expectRevert(BbvflBase.RevealNotOpen.selector);
        agg.reveal(secretOf(0));
        address a1 = clientAddr(1);
        vm.prank(a1);
        agg.commit(commitmentFor(address(agg), secretOf(1), a1));
        vm.roll(block.number + 11); // client 2 never commits
        vm.prank(clientAddr(2));
        vm.expectRevert(BbvflBase.NotCommitted.selector);
        agg.reveal(secretOf(2));
        vm.prank(a0);
        vm.expectRevert(BbvflBase.SecretMismatch.selector);
        agg.reveal(secretOf(1));
        vm.prank(a0);
        agg.reveal(secretOf(0));
        vm.prank(a0);
        vm.expectRevert(BbvflBase.AlreadyRevealed.selector);
        agg.reveal(secretOf(0));
        vm.roll(block.number + 9); // the reveal deadline block itself
        vm.expectRevert(BbvflBase.RevealDeadlineNotPassed.selector);
        agg.finalizeElection();
        vm.roll(block.number + 1);
        vm.prank(a1);
        vm.expectRevert(BbvflBase.RevealDeadlinePassed.selector);
        agg.reveal(secretOf(1));
        vx.recordLogs();
        agg.finalizeElection(); // client 1 did not reveal, client 2 did not commit
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        bytes32 topic = keccak256("Excluded(address,uint8)");
        uint256 seen;
        for (uint256 i = 0; i < logs.length; i++) {
            if (logs[i].topics[0] != topic) continue;
            address who = address(uint160(uint256(logs[i].topics[1])));
            uint8 reason = abi.decode(logs[i].data, (uint8));
            if (who == a1) assertEq(reason, 2, "non-revealer reason 2");
            else if (who == clientAddr(2)) assertEq(reason, 1, "non-committer reason 1");
            else revert("unexpected exclusion");
            seen++;
        }
        assertEq(seen, 2, "two exclusions");
        address[] memory ps = agg.participants();
        assertEq(ps.length, 1, "one participant");
        assertEq(ps[0], a0, "client 0 participates");
        assertEq(agg.seed(), keccak256(abi.encodePacked(secretOf(0))), "seed from the revealed secret only");
        assertEq(agg.active(), a0, "only participant is active");
        vm.expectRevert(BbvflBase.ElectionOver.selector);
        agg.finalizeElection();
        vm.prank(a1);
        vm.expectRevert(BbvflBase.ElectionOver.selector);
        agg.reveal(secretOf(1));
        // excluded clients cannot submit
        vm.prank(a1);
        vm.expectRevert(BbvflBase.ClientExcluded.selector);
        agg.submit(0, new bytes(10));
    }

    /// A commitment is bound to its session: one made for another aggregator, for another chain id,
    /// or in the old form without either (keccak256(secret, sender)) does not open here; on another
    /// chain the commitments made for that chain's id open.
    function test_reveal_commitment_of_another_session() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        BbvflAggregator other = new BbvflAggregator(c, openRegistration());
        registerAll(agg, 3);
        address a0 = clientAddr(0);
        address a1 = clientAddr(1);
        address a2 = clientAddr(2);
        vm.prank(a0);
        agg.commit(commitmentFor(address(other), secretOf(0), a0)); // another contract address
        vm.prank(a1);
        agg.commit(commitmentFor(address(agg), secretOf(1), a1, block.chainid + 1)); // another chain id
        vm.prank(a2);
        agg.commit(keccak256(abi.encodePacked(secretOf(2), a2))); // without the session
        vm.prank(a0);
        vm.expectRevert(BbvflBase.SecretMismatch.selector);
        agg.reveal(secretOf(0));
        vm.prank(a1);
        vm.expectRevert(BbvflBase.SecretMismatch.selector);
        agg.reveal(secretOf(1));
        vm.prank(a2);
        vm.expectRevert(BbvflBase.SecretMismatch.selector);
        agg.reveal(secretOf(2));
        // a session on chain 5: the same secrets committed for this contract and chain id 5 open
        vm.chainId(5);
        BbvflAggregator fresh = new BbvflAggregator(c, openRegistration());
        registerAll(fresh, 3);
        for (uint256 i = 0; i < 3; i++) {
            vm.prank(clientAddr(i));
            fresh.commit(commitmentFor(address(fresh), secretOf(i), clientAddr(i), 5));
        }
        revealAll(fresh, 3);
        assertEq(uint256(fresh.phase()), 3, "the session's own commitments open");
    }

    function test_election_auto_after_commit_deadline() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        registerAll(agg, 3);
        for (uint256 i = 0; i < 2; i++) {
            address a = clientAddr(i);
            vm.prank(a);
            agg.commit(commitmentFor(address(agg), secretOf(i), a));
        }
        vm.roll(block.number + 11);
        assertEq(uint256(agg.phase()), 2, "reveal phase after the commit deadline");
        for (uint256 i = 0; i < 2; i++) {
            vm.prank(clientAddr(i));
            agg.reveal(secretOf(i));
        }
        assertEq(uint256(agg.phase()), 3, "elected as soon as every committer revealed");
        assertEq(agg.participants().length, 2, "two participants");
        (, bool excl,,,,,,) = agg.clientInfo(clientAddr(2));
        assertTrue(excl, "non-committer excluded");
    }

    function test_election_nobody_reveals_ends_session() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        registerAll(agg, 3);
        vm.roll(block.number + 21);
        agg.finalizeElection();
        assertEq(uint256(agg.phase()), 4, "ended");
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.NotTraining.selector);
        agg.submit(0, new bytes(10));
    }

    // ------------------------------------------------------------ submit

    function test_submit_sum_events_and_state() public {
        BbvflAggregator agg = startSession(c);
        bytes memory q0 = plainData(0, 0, 10, 16);
        vx.recordLogs();
        vm.prank(clientAddr(0));
        agg.submit(0, q0);
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        assertEq(logs.length, 1, "one event");
        assertEq(logs[0].topics[0], keccak256("Submitted(uint64,address,bytes32)"), "Submitted");
        assertEq(uint256(logs[0].topics[1]), 0, "round topic");
        assertEq(address(uint160(uint256(logs[0].topics[2]))), clientAddr(0), "client topic");
        assertEq(abi.decode(logs[0].data, (bytes32)), keccak256(q0), "data hash");
        (uint64 round, uint8 sub, uint8 n, bool complete,,) = agg.roundState();
        assertEq(round, 0, "round 0");
        assertEq(sub, 1, "1 submitted");
        assertEq(n, 3, "3 participants");
        assertTrue(!complete, "incomplete");
        (,,,,, uint64 last, uint32 acc,) = agg.clientInfo(clientAddr(0));
        assertEq(last, 1, "last round + 1");
        assertEq(acc, 1, "accepted 1");
        checkOutsider(agg);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundNotComplete.selector, 0));
        agg.roundSum(0);
        bytes memory q1 = plainData(1, 0, 10, 16);
        bytes memory q2 = plainData(2, 0, 10, 16);
        vm.prank(clientAddr(1));
        agg.submit(0, q1);
        vx.recordLogs();
        vm.prank(clientAddr(2));
        agg.submit(0, q2);
        bytes memory want = new bytes(10);
        for (uint256 j = 0; j < 10; j++) want[j] = bytes1(uint8(q0[j]) + uint8(q1[j]) + uint8(q2[j]));
        assertEq(agg.roundSum(0), want, "roundSum");
        logs = vx.getRecordedLogs();
        assertEq(logs.length, 2, "Submitted + RoundCompleted");
        assertEq(logs[1].topics[0], keccak256("RoundCompleted(uint64,uint8,bytes)"), "RoundCompleted");
        (uint8 covered, bytes memory sum) = abi.decode(logs[1].data, (uint8, bytes));
        assertEq(covered, 3, "event count: three submissions");
        assertEq(sum, want, "event sum");
        (,,, complete,,) = agg.roundState();
        assertTrue(complete, "complete");
        assertEq(agg.currentRound(), 0, "train round waits for the gradient");
    }

    function checkOutsider(BbvflAggregator agg) internal view {
        (bool reg,,,,, uint64 lastOut, uint32 accOut,) = agg.clientInfo(clientAddr(9));
        assertTrue(!reg, "outsider not registered");
        assertEq(lastOut + accOut, 0, "outsider has no submissions (not client 0's bit)");
    }

    function test_submit_reverts() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.NotTraining.selector);
        agg.submit(0, new bytes(10));
        registerAll(agg, 3);
        commitAll(agg, 3);
        revealAll(agg, 3);
        vm.prank(clientAddr(9));
        vm.expectRevert(BbvflBase.NotRegistered.selector);
        agg.submit(0, new bytes(10));
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.RoundNotOpen.selector);
        agg.submit(1, new bytes(10));
        vm.prank(clientAddr(0));
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.BadLength.selector, 10, 11));
        agg.submit(0, new bytes(11));
        vm.prank(clientAddr(0));
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.BadLength.selector, 10, 9));
        agg.submit(0, new bytes(9));
        bytes memory q = new bytes(10);
        q[9] = bytes1(uint8(17));
        vm.prank(clientAddr(0));
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.ValueAboveLevels.selector, 16));
        agg.submit(0, q);
        q[9] = bytes1(uint8(255));
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.ValueAboveLevels.selector);
        agg.submit(0, q);
        q[9] = bytes1(uint8(16));
        q[0] = bytes1(uint8(128));
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.ValueAboveLevels.selector);
        agg.submit(0, q);
        q[0] = bytes1(uint8(16));
        vm.prank(clientAddr(0));
        agg.submit(0, q); // b itself is fine
        vm.prank(clientAddr(0));
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.AlreadySubmitted.selector, 0));
        agg.submit(0, q);
        vm.prank(clientAddr(1));
        agg.submit(0, q);
        vm.prank(clientAddr(2));
        agg.submit(0, q);
        vm.prank(clientAddr(0));
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundClosed.selector, 0, 0));
        agg.submit(0, q); // complete
        postGrad(agg, 0);
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.RoundClosed.selector);
        agg.submit(0, q); // past
        runRounds(agg, 1, 6);
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.SessionOver.selector);
        agg.submit(5, q);
    }

    /// ABI padding after the data is not trusted: nonzero padding bytes must not reach the sum.
    function test_submit_ignores_dirty_padding() public {
        BbvflAggregator agg = startSession(c);
        address[] memory ps = agg.participants();
        for (uint256 k = 0; k < 3; k++) {
            bytes memory data = abi.encodeCall(BbvflAggregator.submit, (0, plainData(k, 0, 10, 2)));
            // calldata: selector, round, offset, length, 10 data bytes, 22 padding bytes
            for (uint256 j = 4 + 96 + 10; j < data.length; j++) data[j] = 0xff;
            vm.prank(ps[k]);
            (bool ok,) = address(agg).call(data);
            assertTrue(ok, "dirty padding accepted");
        }
        bytes memory want = new bytes(10);
        for (uint256 k = 0; k < 3; k++) {
            bytes memory q = plainData(k, 0, 10, 2);
            for (uint256 j = 0; j < 10; j++) want[j] = bytes1(uint8(want[j]) + uint8(q[j]));
        }
        // the participants are clients 0..2 in index order
        assertEq(agg.roundSum(0), want, "sum unaffected by padding");
    }

    function test_submit_plain_16bit_lanes() public {
        BbvflBase.Config memory k = config(3, 3, 7, 200, false, 1, 0, 1); // M*b = 600
        BbvflAggregator agg = startSession(k);
        assertEq(agg.params().laneBits, 16, "16-bit lanes");
        bytes memory want = new bytes(42);
        for (uint256 i = 0; i < 3; i++) {
            bytes memory q = new bytes(21);
            for (uint256 j = 0; j < 21; j++) q[j] = bytes1(uint8(j == 20 ? 200 : (i * 37 + j * 11) % 201));
            for (uint256 j = 0; j < 21; j++) {
                uint256 v = (uint256(uint8(want[2 * j])) << 8 | uint8(want[2 * j + 1])) + uint8(q[j]);
                want[2 * j] = bytes1(uint8(v >> 8));
                want[2 * j + 1] = bytes1(uint8(v));
            }
            if (i == 0) {
                bytes memory bad = new bytes(21);
                bad[20] = bytes1(uint8(201));
                vm.prank(clientAddr(0));
                vx.expectPartialRevert(BbvflBase.ValueAboveLevels.selector);
                agg.submit(0, bad);
            }
            vm.prank(clientAddr(i));
            agg.submit(0, q);
        }
        assertEq(agg.roundSum(0), want, "16-bit big-endian sum");
    }

    function test_submit_masked_wraps() public {
        BbvflBase.Config memory k = config(2, 1, 3, 16, true, 1, 0, 1);
        BbvflAggregator agg = startSession(k);
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(BbvflBase.BadLength.selector);
        agg.submit(0, new bytes(3));
        // lanes: 0xffff + 0x0002 wraps to 0x0001; no range check on masked values
        vm.prank(clientAddr(0));
        agg.submit(0, hex"ffff8000fff0");
        vm.prank(clientAddr(1));
        agg.submit(0, hex"000280010020");
        assertEq(agg.roundSum(0), hex"000100010010", "mod 2^16 lane sums");
    }

    // ------------------------------------------------------------ rounds, gradient, ring

    function test_round_sequence_and_ring() public {
        BbvflBase.Config memory k = config(2, 1, 40, 16, false, 3, 1, 2); // 40 coords = 2 lane words
        c = k;
        BbvflAggregator agg = startSession(k);
        bytes[] memory sums = new bytes[](8);
        for (uint64 r = 0; r < 8; r++) {
            assertEq(agg.currentRound(), r, "current round");
            sums[r] = fillRound(agg, r);
            assertEq(agg.roundSum(r), sums[r], "sum of the round just completed");
            (bool train, uint32 epoch, uint32 idx,,) = agg.roundLayout(r);
            assertTrue(train == (r % 4 < 3), "kind");
            assertEq(epoch, r / 4, "epoch");
            assertEq(idx, train ? r % 4 : 0, "index");
            if (train) postGrad(agg, r);
            for (uint64 old = r >= 3 ? r - 3 : 0; old <= r; old++) {
                if (old + 4 > agg.currentRound() || agg.phase() == BbvflBase.Phase.Ended) {
                    assertEq(agg.roundSum(old), sums[old], "ring keeps the last 4 sums");
                }
            }
        }
        assertEq(uint256(agg.phase()), 4, "ended");
        assertEq(agg.currentRound(), 8, "currentRound = total after the end");
        vx.expectPartialRevert(BbvflBase.SumOverwritten.selector);
        agg.roundSum(3);
        vx.expectPartialRevert(BbvflBase.RoundNotComplete.selector);
        agg.roundSum(9);
    }

    function test_postGradient() public {
        BbvflAggregator agg = startSession(c);
        address act = agg.active();
        bytes memory grad = new bytes(40);
        vm.prank(act);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.RoundNotComplete.selector, 0));
        agg.postGradient(0, grad, "");
        fillRound(agg, 0);
        address other = act == clientAddr(0) ? clientAddr(1) : clientAddr(0);
        vm.prank(other);
        vm.expectRevert(BbvflBase.NotActive.selector);
        agg.postGradient(0, grad, "");
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.RoundNotOpen.selector);
        agg.postGradient(1, grad, "");
        vm.prank(act);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.BadGradientLength.selector, 40, 39));
        agg.postGradient(0, new bytes(39), "");
        vm.prank(act);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.FusionParamsTooLong.selector, 262144, 262145));
        agg.postGradient(0, grad, new bytes(262145));
        assertEq(agg.lastFusionParamsHash(), bytes32(0), "no params yet");
        bytes memory fp = hex"3f8000004000000040400000";
        vx.recordLogs();
        vm.prank(act);
        agg.postGradient(0, grad, fp);
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        assertEq(logs[0].topics[0], keccak256("GradientPosted(uint64,address,bytes,bytes)"), "GradientPosted");
        (bytes memory g2, bytes memory fp2) = abi.decode(logs[0].data, (bytes, bytes));
        assertEq(g2, grad, "event gradient");
        assertEq(fp2, fp, "event params");
        assertEq(agg.lastFusionParamsHash(), keccak256(fp), "params hash");
        assertEq(agg.lastFusionRound(), 0, "params round");
        assertEq(agg.currentRound(), 1, "next round open");
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.RoundClosed.selector);
        agg.postGradient(0, grad, fp);
        fillRound(agg, 1);
        postGrad(agg, 1);
        fillRound(agg, 2); // eval round: opens round 3 by itself
        assertEq(agg.currentRound(), 3, "eval completion opens the next round");
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.RoundClosed.selector);
        agg.postGradient(2, grad, fp);
        runRounds(agg, 3, 6);
        vm.prank(act);
        vm.expectRevert(BbvflBase.NotTraining.selector);
        agg.postGradient(5, grad, fp);
    }

    function test_postGradient_eval_round() public {
        BbvflBase.Config memory k = config(2, 1, 4, 16, false, 1, 2, 1);
        c = k;
        BbvflAggregator agg = startSession(k);
        runRounds(agg, 0, 1);
        // round 1 is EVAL and opens round 2 on completion; round 2 is EVAL and the last
        fillRound(agg, 1);
        vm.prank(agg.active());
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.EvalRound.selector, 2));
        agg.postGradient(2, new bytes(16), "");
    }

    function test_session_ended_event() public {
        BbvflAggregator agg = startSession(c);
        runRounds(agg, 0, 5);
        vx.recordLogs();
        fillRound(agg, 5); // last round is EVAL: completes and ends the session
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        VmExtra.Log memory last = logs[logs.length - 1];
        assertEq(last.topics[0], keccak256("SessionEnded(uint64)"), "SessionEnded last");
        assertEq(abi.decode(last.data, (uint64)), 6, "6 rounds");
        assertEq(uint256(agg.phase()), 4, "phase Ended");
    }

    // ------------------------------------------------------------ metrics and rewards

    function test_postMetrics() public {
        BbvflAggregator agg = startSession(c);
        address act = agg.active();
        address other = act == clientAddr(0) ? clientAddr(1) : clientAddr(0);
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.EpochNotComplete.selector);
        agg.postMetrics(0, 1, 1, 1);
        runRounds(agg, 0, 3);
        vm.prank(other);
        vm.expectRevert(BbvflBase.NotActive.selector);
        agg.postMetrics(0, 1, 1, 1);
        vm.prank(act);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.NoSuchEpoch.selector, 2));
        agg.postMetrics(2, 1, 1, 1);
        vm.prank(act);
        vm.expectRevert(BbvflBase.MetricAbove1e6.selector);
        agg.postMetrics(0, 1000001, 1, 1);
        vm.prank(act);
        vm.expectRevert(BbvflBase.MetricAbove1e6.selector);
        agg.postMetrics(0, 1, 1000001, 1);
        vx.recordLogs();
        vm.prank(act);
        agg.postMetrics(0, 987654, 950000, 123456);
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        assertEq(logs[0].topics[0], keccak256("MetricsPosted(uint32,address,uint32,uint32,uint64)"), "MetricsPosted");
        (uint32 au, uint32 ac, uint64 lo) = abi.decode(logs[0].data, (uint32, uint32, uint64));
        assertEq(au, 987654, "auroc");
        assertEq(ac, 950000, "accuracy");
        assertEq(lo, 123456, "loss");
        (bool complete, bool mp, bool rp) = agg.epochState(0);
        assertTrue(complete && mp && !rp, "epoch state");
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.MetricsAlreadyPosted.selector);
        agg.postMetrics(0, 1, 1, 1);
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.EpochNotComplete.selector);
        agg.postMetrics(1, 1, 1, 1);
    }

    function test_payRewards() public {
        BbvflAggregator agg = startSession(c);
        BbvflRewardToken t = agg.token();
        address act = agg.active();
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.EpochNotComplete.selector);
        agg.payRewards(0);
        runRounds(agg, 0, 3);
        fillRound(agg, 3); // one round of epoch 1 already accepted
        address other = act == clientAddr(0) ? clientAddr(1) : clientAddr(0);
        vm.prank(other);
        vm.expectRevert(BbvflBase.NotActive.selector);
        agg.payRewards(0);
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.NoSuchEpoch.selector);
        agg.payRewards(7);
        vx.recordLogs();
        vm.prank(act);
        agg.payRewards(0);
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        uint256 paidEvents;
        bytes32 topic = keccak256("RewardsPaid(uint32,address,uint256,uint32)");
        for (uint256 i = 0; i < logs.length; i++) {
            if (logs[i].topics[0] != topic) continue;
            (uint256 amount, uint32 subs) = abi.decode(logs[i].data, (uint256, uint32));
            // the submission to epoch 1's open round is accepted but paid with epoch 1: an
            // expiry may still void it (masked mode) before that round completes
            assertEq(subs, 3, "epoch 0's 3 accepted submissions each");
            assertEq(amount, 3e18, "rate x submissions");
            paidEvents++;
        }
        assertEq(paidEvents, 3, "three clients paid");
        for (uint256 i = 0; i < 3; i++) {
            assertEq(t.balanceOf(clientAddr(i)), 3e18, "balance");
            (,,,,,, uint32 acc, uint32 rew) = agg.clientInfo(clientAddr(i));
            assertEq(acc, 4, "accepted");
            assertEq(rew, 3, "rewarded: epoch 0's rounds only");
        }
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.RewardsAlreadyPaid.selector);
        agg.payRewards(0);
        postGrad(agg, 3);
        runRounds(agg, 4, 6);
        vm.prank(act);
        agg.payRewards(1);
        for (uint256 i = 0; i < 3; i++) assertEq(t.balanceOf(clientAddr(i)), 6e18, "all 6 rounds paid");
        // an epoch is paid once
        vm.prank(act);
        vx.expectPartialRevert(BbvflBase.RewardsAlreadyPaid.selector);
        agg.payRewards(1);
        assertEq(t.balanceOf(address(agg)), c.rewardPool - 18e18, "pool debited");
        assertEq(t.totalSupply(), c.rewardPool, "supply unchanged");
        assertEq(agg.unsettledEpoch(), 0, "epoch 0 metrics still missing");
        vm.prank(act);
        agg.postMetrics(0, 1, 1, 1);
        vm.prank(act);
        agg.postMetrics(1, 1, 1, 1);
        assertEq(agg.unsettledEpoch(), 2, "all settled");
    }

    // ------------------------------------------------------------ re-election

    function test_reelect_after_missed_gradient() public {
        BbvflAggregator agg = startSession(c);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        fillRound(agg, 0);
        address old = agg.active();
        vm.roll(block.number + 20);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        vm.roll(block.number + 1);
        bytes32 s0 = agg.electionSeed();
        vx.recordLogs();
        agg.reelect(); // anyone may call
        bytes32 s1 = keccak256(abi.encodePacked(s0, uint64(0)));
        assertEq(agg.electionSeed(), s1, "seed chain");
        assertEq(agg.seed(), s0, "session seed unchanged");
        address[] memory others = new address[](2);
        uint256 k;
        for (uint256 i = 0; i < 3; i++) if (clientAddr(i) != old) others[k++] = clientAddr(i);
        assertEq(agg.active(), others[uint256(s1) % 2], "drawn among the others");
        checkElectedEvent(s1, agg.active(), 0, 3, 1);
        // the old active one can no longer post; the new one resumes
        vm.prank(old);
        vm.expectRevert(BbvflBase.NotActive.selector);
        agg.postGradient(0, new bytes(40), "");
        postGrad(agg, 0);
        assertEq(agg.currentRound(), 1, "resumed");
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
    }

    /// The last recorded log must be Elected(seed, active, fromRound, n, reason).
    function checkElectedEvent(bytes32 seed_, address act, uint64 fromRound, uint8 n, uint8 reason) internal {
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        VmExtra.Log memory l = logs[logs.length - 1];
        assertEq(l.topics[0], keccak256("Elected(bytes32,address,uint64,uint8,uint8)"), "Elected");
        assertEq(address(uint160(uint256(l.topics[1]))), act, "Elected active");
        (bytes32 es, uint64 fr, uint8 np, uint8 rs) = abi.decode(l.data, (bytes32, uint64, uint8, uint8));
        assertEq(es, seed_, "Elected seed");
        assertEq(fr, fromRound, "Elected fromRound");
        assertEq(np, n, "Elected participants");
        assertEq(rs, reason, "Elected reason");
    }

    function test_payRewards_nobody_due() public {
        BbvflAggregator agg = startSession(c);
        runRounds(agg, 0, 6);
        address act = agg.active();
        vm.prank(act);
        agg.payRewards(1); // pays all 6 rounds
        vx.recordLogs();
        vm.prank(act);
        agg.payRewards(0); // nobody is due anything any more
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        assertEq(logs.length, 1, "one marker event, no transfer");
        assertEq(logs[0].topics[0], keccak256("RewardsPaid(uint32,address,uint256,uint32)"), "RewardsPaid");
        assertEq(address(uint160(uint256(logs[0].topics[2]))), address(0), "marker address 0");
        (uint256 amount, uint32 subs) = abi.decode(logs[0].data, (uint256, uint32));
        assertEq(amount + subs, 0, "nothing paid");
        (,, bool rp) = agg.epochState(0);
        assertTrue(rp, "epoch 0 marked paid");
    }

    function test_reelect_overdue_metrics() public {
        BbvflAggregator agg = startSession(c);
        runRounds(agg, 0, 3); // epoch 0 complete, round 3 open
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
        vm.roll(block.number + 21);
        address old = agg.active();
        agg.reelect();
        assertTrue(agg.active() != old, "new active client");
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect(); // the new one has its own deadline
        vm.prank(agg.active());
        agg.postMetrics(0, 1, 1, 1);
        vm.prank(agg.active());
        agg.payRewards(0);
        vm.roll(block.number + 100);
        vm.expectRevert(BbvflBase.ActiveNotOverdue.selector);
        agg.reelect();
    }

    function test_reelect_reverts_before_election() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        vm.expectRevert(BbvflBase.NoElectionYet.selector);
        agg.reelect();
    }

    function test_reelect_single_participant() public {
        BbvflBase.Config memory k = config(1, 1, 4, 16, false, 2, 0, 1);
        c = k;
        BbvflAggregator agg = startSession(k);
        fillRound(agg, 0);
        vm.roll(block.number + 21);
        agg.reelect();
        assertEq(agg.active(), clientAddr(0), "the only participant stays active");
    }

    // ------------------------------------------------------------ round timeout

    function test_expireRound() public {
        BbvflAggregator agg = startSession(c);
        vm.expectRevert(BbvflBase.NoSubmissions.selector);
        vm.roll(block.number + 31);
        agg.expireRound();
        vm.roll(block.number - 31);
        address act = agg.active();
        // the two clients other than the active one submit; the active one goes silent
        uint256 idxAct = indexOf(act);
        bytes memory want = new bytes(10);
        for (uint256 i = 0; i < 3; i++) {
            if (i == idxAct) continue;
            bytes memory q = plainData(i, 0, 10, 16);
            for (uint256 j = 0; j < 10; j++) want[j] = bytes1(uint8(want[j]) + uint8(q[j]));
            vm.prank(clientAddr(i));
            agg.submit(0, q);
        }
        vx.expectPartialRevert(BbvflBase.RoundNotTimedOut.selector);
        agg.expireRound();
        vm.roll(block.number + 31);
        vx.recordLogs();
        agg.expireRound();
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        assertEq(logs[0].topics[0], keccak256("Excluded(address,uint8)"), "Excluded first");
        assertEq(abi.decode(logs[0].data, (uint8)), 3, "reason 3");
        VmExtra.Log memory done = logs[logs.length - 1];
        assertEq(done.topics[0], keccak256("RoundCompleted(uint64,uint8,bytes)"), "RoundCompleted last");
        (uint8 covered, bytes memory evSum) = abi.decode(done.data, (uint8, bytes));
        assertEq(covered, 2, "the expired round's sum covers the two submissions it had");
        assertEq(evSum, want, "event sum of the expired round");
        (, bool excl,,,,,,) = agg.clientInfo(act);
        assertTrue(excl, "silent client excluded");
        assertEq(agg.participants().length, 2, "2 left");
        assertTrue(agg.active() != act, "new active client");
        checkElectedAmong(logs, agg.active());
        assertEq(agg.roundSum(0), want, "round completed with the submissions it had");
        (,, uint8 n, bool complete,,) = agg.roundState();
        assertEq(n, 2, "n = 2");
        assertTrue(complete, "complete");
        vm.expectRevert(BbvflBase.RoundAlreadyComplete.selector);
        agg.expireRound();
        postGrad(agg, 0);
        runRounds(agg, 1, 3);
        vm.prank(agg.active());
        agg.payRewards(0);
        assertEq(agg.token().balanceOf(act), 0, "excluded client had no accepted submission");
        (,,,,,, uint32 acc,) = agg.clientInfo(agg.active());
        assertEq(acc, 3, "participants: 3 accepted");
        runRounds(agg, 3, 6);
        vm.expectRevert(BbvflBase.NotTraining.selector);
        agg.expireRound();
    }

    function checkElectedAmong(VmExtra.Log[] memory logs, address act) internal pure {
        bytes32 topic = keccak256("Elected(bytes32,address,uint64,uint8,uint8)");
        for (uint256 i = 0; i < logs.length; i++) {
            if (logs[i].topics[0] != topic) continue;
            assertEq(address(uint160(uint256(logs[i].topics[1]))), act, "Elected active");
            (,, uint8 np, uint8 rs) = abi.decode(logs[i].data, (bytes32, uint64, uint8, uint8));
            assertEq(np, 2, "2 participants");
            assertEq(rs, 2, "reason 2: active excluded by expireRound");
            return;
        }
        revert("no Elected event");
    }

    function test_views_phase_progression() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        assertEq(uint256(agg.phase()), 0, "registration");
        registerAll(agg, 3);
        assertEq(uint256(agg.phase()), 1, "commit");
        vm.roll(block.number + 11);
        assertEq(uint256(agg.phase()), 2, "reveal after commit deadline");
        (uint64 r, uint8 s, uint8 n, bool complete,,) = agg.roundState();
        assertEq(r + s + n, 0, "no round before election");
        assertTrue(!complete, "not complete before election");
        (bool ec,,) = agg.epochState(0);
        assertTrue(!ec, "epoch not complete before election");
    }

    // ------------------------------------------------------------ who may join

    /// A closed session (members given at deploy): a stranger's register reverts NotMember and
    /// cannot take a slot; the members register and the session starts.
    function test_closed_session_members_only() public {
        vx.recordLogs();
        BbvflAggregator agg = new BbvflAggregator(c, membersOf(3));
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        bool seen;
        for (uint256 i = 0; i < logs.length; i++) {
            if (logs[i].topics[0] != keccak256("Members(address[])")) continue;
            address[] memory got = abi.decode(logs[i].data, (address[]));
            assertEq(got.length, 3, "Members lists the three");
            assertEq(got[2], clientAddr(2), "in the order given");
            seen = true;
        }
        assertTrue(seen, "Members emitted at deploy");
        for (uint256 i = 3; i < 6; i++) {
            (address a, bytes memory pk) = clientKey(i);
            vm.prank(a);
            vm.expectRevert(BbvflBase.NotMember.selector);
            agg.register(pk);
            vm.prank(a);
            vm.expectRevert(BbvflBase.NotMember.selector);
            agg.registerLabelHolder(pk);
        }
        registerAll(agg, 3);
        commitAll(agg, 3);
        revealAll(agg, 3);
        assertEq(agg.participants().length, 3, "the members take part");
        (address s, bytes memory spk) = clientKey(7);
        vm.prank(s);
        vm.expectRevert(BbvflBase.RegistrationClosed.selector);
        agg.register(spk);
    }

    /// The member list names exactly M distinct non-zero addresses.
    function test_member_list_checks() public {
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.MembersMismatch.selector, uint256(2), uint256(3)));
        new BbvflAggregator(c, membersOf(2));
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.MembersMismatch.selector, uint256(4), uint256(3)));
        new BbvflAggregator(c, membersOf(4));
        address[] memory dup = membersOf(3);
        dup[2] = dup[0];
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.DuplicateMember.selector, dup[0]));
        new BbvflAggregator(c, dup);
        dup[2] = address(0);
        vm.expectRevert(abi.encodeWithSelector(BbvflBase.DuplicateMember.selector, address(0)));
        new BbvflAggregator(c, dup);
    }

    /// An open session (no member list, deployed so on purpose) takes anyone, as before.
    function test_open_session_takes_anyone() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        for (uint256 i = 10; i < 13; i++) {
            (address a, bytes memory pk) = clientKey(i);
            vm.prank(a);
            agg.register(pk);
        }
        assertEq(agg.clients().length, 3, "three strangers registered");
    }

}
