// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";

contract FlowTest is Base {
    function test_flow() public {
        BbvflBase.Config memory c = config(5, 10, 16, 16, false, 2, 1, 2);
        BbvflAggregator agg = startSession(c);
        assertEq(uint256(agg.phase()), 3, "phase");
        for (uint64 r = 0; r < 6; r++) {
            bytes memory want = new bytes(160);
            for (uint256 i = 0; i < 5; i++) {
                bytes memory q = plainData(i, r, 160, 16);
                for (uint256 j = 0; j < 160; j++) want[j] = bytes1(uint8(want[j]) + uint8(q[j]));
                vm.prank(clientAddr(i));
                agg.submit(r, q);
            }
            assertEq(agg.roundSum(r), want, "sum");
            (bool train,,,,) = agg.roundLayout(r);
            if (train) {
                vm.prank(agg.active());
                agg.postGradient(r, new bytes(640), hex"01");
            }
        }
        assertEq(uint256(agg.phase()), 4, "ended");
    }
}
