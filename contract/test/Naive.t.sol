// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base} from "./utils/Base.sol";
import {NaiveAggregator} from "../src/NaiveAggregator.sol";

/// The naive baseline must compute the same sums as bbvfl's aggregator, or the gas comparison
/// compares different work.
contract NaiveTest is Base {
    function test_naive_sum_and_reverts() public {
        NaiveAggregator n = new NaiveAggregator(3, 4);
        for (uint256 i = 0; i < 3; i++) {
            vm.prank(clientAddr(i));
            n.register();
            if (i == 0) {
                vm.prank(clientAddr(0));
                vm.expectRevert(NaiveAggregator.AlreadyRegistered.selector);
                n.register();
            }
        }
        vm.prank(clientAddr(3));
        vm.expectRevert(NaiveAggregator.RegistrationClosed.selector);
        n.register();
        uint256[] memory want = new uint256[](4);
        for (uint256 i = 0; i < 3; i++) {
            uint256[] memory v = new uint256[](4);
            for (uint256 j = 0; j < 4; j++) {
                v[j] = (i + 1) * (j + 3);
                want[j] += v[j];
            }
            if (i == 0) {
                vm.prank(clientAddr(i));
                vx.expectPartialRevert(NaiveAggregator.BadLength.selector);
                n.submit(0, new uint256[](3));
                vx.expectPartialRevert(NaiveAggregator.MissingSubmission.selector);
                n.aggregate(0);
            }
            vm.prank(clientAddr(i));
            n.submit(0, v);
        }
        vm.prank(clientAddr(0));
        vx.expectPartialRevert(NaiveAggregator.NaiveAlreadySubmitted.selector);
        n.submit(0, new uint256[](4));
        vm.prank(clientAddr(5));
        vm.expectRevert(NaiveAggregator.NotRegistered.selector);
        n.submit(0, new uint256[](4));
        n.aggregate(0);
        uint256[] memory got = n.roundSum(0);
        assertEq(got.length, 4, "sum length");
        for (uint256 j = 0; j < 4; j++) assertEq(got[j], want[j], "naive sum");
        vx.expectPartialRevert(NaiveAggregator.NaiveAlreadyAggregated.selector);
        n.aggregate(0);
    }
}
