// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";

/// Drives a masked session with random actions, including silent clients, round timeouts
/// (expireRound voids and re-opens the round) and re-elections. Clients mask their vectors with
/// Protocol-0 masks keyed by (round, participant set), as client/dp/masks.c does with ECDH keys.
/// Ghost state: the unmasked vectors (known here, never on chain) and the accepted counts.
contract MaskedHandler is Base {
    BbvflAggregator public immutable agg;
    uint256 public constant CLIENTS = 4;
    uint256 public constant N = 12; // B*P
    uint8 public constant LEVELS = 16;

    mapping(address => uint256) public ghostAccepted;
    uint256 public completedRounds;
    uint256 public voidedRounds;
    uint256 public badSums; // completed rounds whose sum is not the exact sum of the unmasked q
    uint64 internal _openSet; // set the open attempt's submitters masked for
    address[] internal _openSubmitters;

    constructor(BbvflAggregator a) {
        agg = a;
    }

    function q(uint256 i, uint64 r, uint256 j) public pure returns (uint256) {
        return uint256(keccak256(abi.encode("q", i, r, j))) % (uint256(LEVELS) + 1);
    }

    function u(uint64 r, uint64 set, uint256 from, uint256 to, uint256 j) internal pure returns (uint256) {
        return uint256(keccak256(abi.encode("u", r, set, from, to, j))) % 65536;
    }

    /// The participant set as a bitmap of client indexes.
    function currentSet() public view returns (uint64 set) {
        address[] memory ps = agg.participants();
        for (uint256 k = 0; k < ps.length; k++) {
            (,,,, uint8 idx,,,) = agg.clientInfo(ps[k]);
            set |= uint64(1) << idx;
        }
    }

    function masked(uint256 i, uint64 r, uint64 set) internal pure returns (bytes memory y) {
        y = new bytes(2 * N);
        for (uint256 j = 0; j < N; j++) {
            uint256 v = q(i, r, j);
            for (uint256 k = 0; k < CLIENTS; k++) {
                if (k == i || (set >> k) & 1 == 0) continue;
                v = (v + u(r, set, i, k, j) + 65536 - u(r, set, k, i, j)) % 65536;
            }
            y[2 * j] = bytes1(uint8(v >> 8));
            y[2 * j + 1] = bytes1(uint8(v));
        }
    }

    /// Client `who` submits its masked vector for the open round and the current set.
    function submit(uint256 who) public {
        uint256 i = who % CLIENTS;
        address a = clientAddr(i);
        uint64 r = agg.currentRound();
        uint64 set = currentSet();
        vm.prank(a);
        try agg.submit(r, masked(i, r, set)) {
            ghostAccepted[a]++;
            if (_openSubmitters.length == 0) _openSet = set;
            require(_openSet == set, "participant set changed inside an attempt");
            _openSubmitters.push(a);
            (,,, bool complete,,) = agg.roundState();
            if (complete || agg.currentRound() > r) {
                checkSum(r, set);
                delete _openSubmitters;
            }
        } catch {}
    }

    /// Round r just completed with the submissions masked for `set`: its sum must be the exact
    /// sum of the set's unmasked q.
    function checkSum(uint64 r, uint64 set) internal {
        completedRounds++;
        bytes memory s = agg.roundSum(r);
        for (uint256 j = 0; j < N; j++) {
            uint256 want;
            for (uint256 k = 0; k < CLIENTS; k++) {
                if ((set >> k) & 1 != 0) want += q(k, r, j);
            }
            if (uint256(uint8(s[2 * j])) << 8 | uint8(s[2 * j + 1]) != want) {
                badSums++;
                return;
            }
        }
    }

    /// Every participant that has not submitted yet submits (drives progress), then the gradient.
    function completeRound() external {
        for (uint256 i = 0; i < CLIENTS; i++) submit(i);
        postGradient();
    }

    function postGradient() public {
        uint64 r = agg.currentRound();
        vm.prank(agg.active());
        try agg.postGradient(r, new bytes(N * 4), "") {} catch {}
    }

    function expire() external {
        uint64 r = agg.currentRound();
        try agg.expireRound() {
            // a masked round must never complete here: the submitters' masks were for a set
            // that included the missing clients (checkSum flags the garbage sum if it does)
            (,,, bool complete,,) = agg.roundState();
            if (complete || agg.currentRound() > r) {
                checkSum(r, _openSet);
                delete _openSubmitters;
                return;
            }
            // masked mode: the attempt is voided, its submissions no longer count
            voidedRounds++;
            for (uint256 k = 0; k < _openSubmitters.length; k++) ghostAccepted[_openSubmitters[k]]--;
            delete _openSubmitters;
        } catch {}
    }

    function roll(uint8 blocks) external {
        vm.roll(block.number + blocks % 16);
    }

    function reelect() external {
        try agg.reelect() {} catch {}
    }
}

contract MaskedInvariantTest is Base {
    MaskedHandler internal h;
    BbvflAggregator internal agg;

    function setUp() public {
        BbvflBase.Config memory c = config(4, 1, 12, 16, true, 3, 1, 3); // 12 rounds
        c.roundTimeoutBlocks = 5;
        agg = startSession(c);
        h = new MaskedHandler(agg);
    }

    function targetContracts() public view returns (address[] memory t) {
        t = new address[](1);
        t[0] = address(h);
    }

    /// forge-config: default.invariant.runs = 48
    /// forge-config: default.invariant.depth = 80
    function invariant_round_sums_are_unmasked_sums() public view {
        assertEq(h.badSums(), 0, "a completed masked round's sum differs from the sum of the unmasked q");
    }

    /// forge-config: default.invariant.runs = 48
    /// forge-config: default.invariant.depth = 80
    function invariant_accepted_counts_each_round_once() public view {
        for (uint256 i = 0; i < h.CLIENTS(); i++) {
            (,,,,,, uint32 acc,) = agg.clientInfo(clientAddr(i));
            assertEq(acc, h.ghostAccepted(clientAddr(i)), "accepted = submissions not voided");
        }
    }
}
