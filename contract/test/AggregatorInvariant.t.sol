// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base} from "./utils/Base.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflBase} from "../src/BbvflBase.sol";
import {BbvflRewardToken} from "../src/BbvflRewardToken.sol";

/// Drives a session with random actions from registered clients and outsiders and keeps ghost
/// state (what the chain should hold) for the invariants.
contract Handler is Base {
    BbvflAggregator public immutable agg;
    BbvflRewardToken public immutable token;
    uint256 public constant CLIENTS = 4;
    uint256 public constant ACTORS = 6; // clients 0..3 and two outsiders 4, 5
    uint256 public immutable n;

    mapping(address => uint256) public ghostAccepted;
    mapping(uint64 => mapping(address => bool)) public ghostSubmitted;
    mapping(uint64 => uint256[]) internal _ghostSum;
    uint64 public ghostLastComplete; // last complete round + 1
    uint256 public outsiderAccepted; // submissions accepted from outsiders (must stay 0)
    uint256 public doubleAccepted; // second submissions accepted (must stay 0)
    uint256 public badAccepted; // submissions with a value above b accepted (must stay 0)
    uint256 public ghostPaid; // tokens paid out, summed from the calls' balance changes

    constructor(BbvflAggregator a, uint256 coords) {
        agg = a;
        token = a.token();
        n = coords;
    }

    function actor(uint256 i) public pure returns (address) {
        return clientAddr(i % ACTORS);
    }

    function ghostSum(uint64 r) external view returns (uint256[] memory) {
        return _ghostSum[r];
    }

    /// A submission to the open round (or a stale/future one) from any actor, valid data or not.
    function submit(uint256 who, uint256 seed, uint8 roundShift) external {
        address a = actor(who);
        uint64 cur = agg.currentRound();
        uint64 r = roundShift % 8 == 0 && cur > 0 ? cur - 1 : (roundShift % 8 == 1 ? cur + 1 : cur);
        bool bad = seed % 8 == 0;
        bytes memory q = new bytes(n);
        for (uint256 j = 0; j < n; j++) q[j] = bytes1(uint8(uint256(keccak256(abi.encode(seed, j))) % 17));
        if (bad) q[seed % n] = bytes1(uint8(17 + seed % 200));
        bool already = ghostSubmitted[r][a];
        vm.prank(a);
        try agg.submit(r, q) {
            if (who % ACTORS >= CLIENTS) outsiderAccepted++;
            if (already) doubleAccepted++;
            if (bad) badAccepted++;
            ghostSubmitted[r][a] = true;
            ghostAccepted[a]++;
            if (_ghostSum[r].length == 0) _ghostSum[r] = new uint256[](n);
            for (uint256 j = 0; j < n; j++) _ghostSum[r][j] += uint8(q[j]);
            (,,, bool complete,,) = agg.roundState();
            if (complete || agg.currentRound() > r) ghostLastComplete = r + 1;
        } catch {}
    }

    /// Every registered client that has not submitted yet submits valid data (drives progress).
    function completeRound(uint256 seed) external {
        for (uint256 i = 0; i < CLIENTS; i++) this.submit(i, uint256(keccak256(abi.encode(seed, i))) | 1, 2);
        if (seed % 2 == 0) this.postGradient(1);
    }

    function postGradient(uint256 who) external {
        address a = who % 4 != 0 ? agg.active() : actor(who);
        uint64 cur = agg.currentRound();
        vm.prank(a);
        try agg.postGradient(cur, new bytes(n * 4), hex"00") {} catch {}
    }

    function postMetrics(uint32 epoch, uint256 who) external {
        address a = who % 2 == 0 ? agg.active() : actor(who);
        vm.prank(a);
        try agg.postMetrics(epoch % 4, 500000, 500000, 1) {} catch {}
    }

    function payRewards(uint32 epoch, uint256 who) external {
        address a = who % 2 == 0 ? agg.active() : actor(who);
        uint256 before = token.balanceOf(address(agg));
        vm.prank(a);
        try agg.payRewards(epoch % 4) {} catch {}
        ghostPaid += before - token.balanceOf(address(agg));
    }

    function roll(uint8 blocks) external {
        vm.roll(block.number + blocks);
    }

    function reelect() external {
        try agg.reelect() {} catch {}
    }

    /// Clients moving tokens around must not break the supply invariant.
    function transfer(uint256 from, uint256 to, uint256 amount) external {
        address a = actor(from);
        uint256 bal = token.balanceOf(a);
        if (bal == 0) return;
        vm.prank(a);
        token.transfer(actor(to), amount % (bal + 1));
    }
}

contract AggregatorInvariantTest is Base {
    Handler internal h;
    BbvflAggregator internal agg;
    BbvflBase.Config internal c;

    function setUp() public {
        c = config(4, 1, 40, 16, false, 3, 1, 3); // 12 rounds, 8-bit lanes, 2 lane words
        c.roundTimeoutBlocks = 1000000; // no exclusions here: accepted counts stay exact
        agg = startSession(c);
        h = new Handler(agg, 40);
    }

    /// Forge fuzzes only the handler.
    function targetContracts() public view returns (address[] memory t) {
        t = new address[](1);
        t[0] = address(h);
    }

    /// forge-config: default.invariant.runs = 48
    /// forge-config: default.invariant.depth = 80
    function invariant_token_supply_conserved() public view {
        BbvflRewardToken t = agg.token();
        assertEq(t.totalSupply(), c.rewardPool, "total supply = pool");
        uint256 sum = t.balanceOf(address(agg));
        for (uint256 i = 0; i < h.ACTORS(); i++) sum += t.balanceOf(h.actor(i));
        assertEq(sum, c.rewardPool, "balances add up to the pool");
    }

    /// forge-config: default.invariant.runs = 48
    /// forge-config: default.invariant.depth = 80
    function invariant_rewards_are_rate_times_accepted() public view {
        uint256 rewardedTotal;
        for (uint256 i = 0; i < h.CLIENTS(); i++) {
            (,,,,,, uint32 acc, uint32 rew) = agg.clientInfo(h.actor(i));
            assertTrue(rew <= acc, "rewarded <= accepted");
            rewardedTotal += rew;
        }
        assertEq(h.ghostPaid(), rewardedTotal * c.rewardPerSubmission, "paid = rate x rewarded submissions");
        assertEq(
            c.rewardPool - agg.token().balanceOf(address(agg)),
            rewardedTotal * c.rewardPerSubmission,
            "pool debit = rate x rewarded submissions"
        );
    }

    /// forge-config: default.invariant.runs = 48
    /// forge-config: default.invariant.depth = 80
    function invariant_no_double_or_outside_submission() public view {
        assertEq(h.outsiderAccepted(), 0, "outsider submission accepted");
        assertEq(h.doubleAccepted(), 0, "double submission accepted");
        assertEq(h.badAccepted(), 0, "value above b accepted");
        for (uint256 i = 0; i < h.ACTORS(); i++) {
            (,,,,,, uint32 acc,) = agg.clientInfo(h.actor(i));
            assertEq(acc, h.ghostAccepted(h.actor(i)), "accepted count = submissions the handler saw accepted");
        }
    }

    /// forge-config: default.invariant.runs = 48
    /// forge-config: default.invariant.depth = 80
    function invariant_sums_match_submissions() public view {
        uint64 done = h.ghostLastComplete();
        uint64 cur = agg.currentRound();
        for (uint64 r = cur > 3 ? cur - 3 : 0; r < done; r++) {
            uint256[] memory s = h.ghostSum(r);
            bytes memory want = new bytes(40);
            for (uint256 j = 0; j < 40; j++) want[j] = bytes1(uint8(s[j]));
            assertEq(agg.roundSum(r), want, "stored sum = sum of accepted submissions");
        }
    }
}

