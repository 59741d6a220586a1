// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base, VmExtra} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";

/// Labels split across clients: registerLabelHolder, postLabelGradient (every revert path),
/// labelHolders(), labelPosts() and the events.
contract LabelGradientTest is Base {
    BbvflBase.Config internal c;

    function setUp() public {
        // M=3, B=2, P=5, 2 train + 1 eval rounds per epoch, 2 epochs
        c = config(3, 2, 5, 16, false, 2, 1, 2);
    }


    /// Clients 0 and 1 hold labels, client 2 does not.
    function start() internal returns (BbvflAggregator agg) {
        agg = new BbvflAggregator(c, openRegistration());
        for (uint256 i = 0; i < 3; i++) {
            (address a, bytes memory pk) = clientKey(i);
            vm.prank(a);
            if (i < 2) agg.registerLabelHolder(pk);
            else agg.register(pk);
        }
        commitAll(agg, 3);
        revealAll(agg, 3);
    }

    function fillRound(BbvflAggregator agg, uint64 r) internal {
        address[] memory ps = agg.participants();
        uint256 len = uint256(c.batch) * c.dim;
        for (uint256 k = 0; k < ps.length; k++) {
            vm.prank(ps[k]);
            agg.submit(r, plainData(indexOf(ps[k]), r, len, c.levels));
        }
    }

    function postGrad(BbvflAggregator agg, uint64 r) internal {
        vm.prank(agg.active());
        agg.postGradient(r, new bytes(uint256(c.batch) * c.dim * 4), hex"0102");
    }

    function test_registerLabelHolder() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        (address a0, bytes memory pk0) = clientKey(0);
        (address a1, bytes memory pk1) = clientKey(1);
        vx.recordLogs();
        vm.prank(a0);
        agg.registerLabelHolder(pk0);
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        assertEq(logs.length, 2, "Registered + LabelHolder");
        assertEq(logs[0].topics[0], keccak256("Registered(address,uint8,bytes)"), "Registered first");
        assertEq(logs[1].topics[0], keccak256("LabelHolder(address,uint8)"), "LabelHolder");
        assertEq(logs[1].topics[1], bytes32(uint256(uint160(a0))), "holder topic");
        assertEq(abi.decode(logs[1].data, (uint8)), 0, "holder index");
        vm.prank(a1);
        agg.register(pk1);
        assertEq(agg.labelHolders(), 1, "bitmap: index 0 only");
        // the register checks apply
        vm.prank(a0);
        vm.expectRevert(BbvflBase.AlreadyRegistered.selector);
        agg.registerLabelHolder(pk0);
        vm.prank(a0);
        vm.expectRevert(BbvflBase.PubkeyNotSender.selector);
        agg.registerLabelHolder(pk1);
        (address a2, bytes memory pk2) = clientKey(2);
        vm.prank(a2);
        vx.expectPartialRevert(BbvflBase.BadPubkeyLength.selector);
        agg.registerLabelHolder(hex"01");
        vm.prank(a2);
        agg.registerLabelHolder(pk2);
        assertEq(agg.labelHolders(), 5, "bitmap: indices 0 and 2");
        (address a3, bytes memory pk3) = clientKey(3);
        vm.prank(a3);
        vm.expectRevert(BbvflBase.RegistrationClosed.selector);
        agg.registerLabelHolder(pk3);
    }

    function test_postLabelGradient() public {
        BbvflAggregator agg = start();
        assertEq(agg.labelHolders(), 3, "holders 0 and 1");
        bytes memory g = new bytes(8); // B=2 rows x K=1
        g[3] = 0x01;
        address h0 = clientAddr(0);
        address h1 = clientAddr(1);
        vm.prank(h0);
        vx.expectPartialRevert(BbvflBase.RoundNotComplete.selector);
        agg.postLabelGradient(0, g);
        fillRound(agg, 0);
        vm.prank(clientAddr(2));
        vm.expectRevert(BbvflBase.NotLabelHolder.selector);
        agg.postLabelGradient(0, g);
        vm.prank(clientAddr(7));
        vm.expectRevert(BbvflBase.NotLabelHolder.selector);
        agg.postLabelGradient(0, g);
        vm.prank(h0);
        vx.expectPartialRevert(BbvflBase.RoundNotOpen.selector);
        agg.postLabelGradient(1, g);
        vm.prank(h0);
        vx.expectPartialRevert(BbvflBase.BadLabelGradientLength.selector);
        agg.postLabelGradient(0, new bytes(0));
        vm.prank(h0);
        vx.expectPartialRevert(BbvflBase.BadLabelGradientLength.selector);
        agg.postLabelGradient(0, new bytes(12));
        vm.prank(h0);
        vx.expectPartialRevert(BbvflBase.BadLabelGradientLength.selector);
        agg.postLabelGradient(0, new bytes(8 * 257));
        vm.prank(h0);
        agg.postLabelGradient(0, new bytes(8 * 256)); // K = 256 is the most
        vm.prank(h0);
        vx.expectPartialRevert(BbvflBase.LabelGradientAlreadyPosted.selector);
        agg.postLabelGradient(0, g);
        (uint64 pr, uint64 posted) = agg.labelPosts();
        assertEq(pr, 0, "posts round");
        assertEq(posted, 1, "holder 0 posted");
        vx.recordLogs();
        vm.prank(h1);
        agg.postLabelGradient(0, g);
        VmExtra.Log[] memory logs = vx.getRecordedLogs();
        assertEq(logs.length, 1, "one event");
        assertEq(logs[0].topics[0], keccak256("LabelGradientPosted(uint64,address,bytes)"), "event signature");
        assertEq(logs[0].topics[1], bytes32(uint256(0)), "round topic");
        assertEq(logs[0].topics[2], bytes32(uint256(uint160(h1))), "client topic");
        assertEq(abi.decode(logs[0].data, (bytes)), g, "event bytes");
        (pr, posted) = agg.labelPosts();
        assertEq(posted, 3, "both posted");
        // the posts do not open the next round; the gradient does
        assertEq(agg.currentRound(), 0, "still round 0");
        postGrad(agg, 0);
        vm.prank(h0);
        vx.expectPartialRevert(BbvflBase.RoundClosed.selector);
        agg.postLabelGradient(0, g);
        // next round: the word is reused, the bitmap starts empty
        fillRound(agg, 1);
        vm.prank(h1);
        agg.postLabelGradient(1, g);
        (pr, posted) = agg.labelPosts();
        assertEq(pr, 1, "posts round 1");
        assertEq(posted, 2, "holder 1 only");
        postGrad(agg, 1);
        // round 2 is EVAL
        vm.prank(h0);
        vx.expectPartialRevert(BbvflBase.EvalRound.selector);
        agg.postLabelGradient(2, g);
        for (uint64 r = 2; r < 6; r++) {
            fillRound(agg, r);
            (bool train,,,,) = agg.roundLayout(r);
            if (train) postGrad(agg, r);
        }
        vm.prank(h0);
        vm.expectRevert(BbvflBase.NotTraining.selector);
        agg.postLabelGradient(5, g);
    }

    function test_postLabelGradient_before_election() public {
        BbvflAggregator agg = new BbvflAggregator(c, openRegistration());
        (address a0, bytes memory pk0) = clientKey(0);
        vm.prank(a0);
        agg.registerLabelHolder(pk0);
        vm.prank(a0);
        vm.expectRevert(BbvflBase.NotTraining.selector);
        agg.postLabelGradient(0, new bytes(8));
    }

    function test_postLabelGradient_excluded_holder() public {
        BbvflAggregator agg = start();
        uint256 len = uint256(c.batch) * c.dim;
        // holder 0 misses round 0 and is excluded by expireRound
        for (uint256 i = 1; i < 3; i++) {
            vm.prank(clientAddr(i));
            agg.submit(0, plainData(i, 0, len, c.levels));
        }
        vm.roll(block.number + c.roundTimeoutBlocks + 1);
        agg.expireRound();
        vm.prank(clientAddr(0));
        vm.expectRevert(BbvflBase.ClientExcluded.selector);
        agg.postLabelGradient(0, new bytes(8));
        vm.prank(clientAddr(1));
        agg.postLabelGradient(0, new bytes(8));
        assertEq(agg.labelHolders(), 3, "the declared set does not change");
    }
}
