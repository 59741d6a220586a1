// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Base} from "./utils/Base.sol";
import {ModesHandler} from "./utils/ModesHandler.sol";
import {BbvflBase} from "../src/BbvflBase.sol";
import {BbvflAggregator} from "../src/BbvflAggregator.sol";
import {BbvflHashAggregator} from "../src/BbvflHashAggregator.sol";
import {BbvflPackedAggregator, BbvflOptimisticAggregator} from "../src/BbvflPackedAggregator.sol";
import {BbvflRewardToken} from "../src/BbvflRewardToken.sol";
import {console} from "forge-std/console.sol";

/// @title Stateful fuzzing of every aggregation mode (lane, hashed, packed, optimistic)
/// @notice One test contract per mode, each deploying a fresh, unregistered session and a
/// ModesHandler that Forge drives at random: register, commit, reveal, finalizeElection, submit
/// (right and wrong), aggregate (hashed, packed) or postSum (right and wrong) and dispute by anyone
/// (optimistic), postGradient, postMetrics, payRewards, expireRound, reelect, block rolls, and a
/// `step` that makes the next honest move so that sessions get through their epochs.
///
/// Invariants, each checked after every call of its own campaign (runs x depth >= 10,000 calls
/// per invariant per mode):
/// - rewarded <= accepted for every client (clientInfo);
/// - token supply = pool = paid + the aggregator's balance, paid = what the clients hold =
///   rewardPerSubmission x the sum of the rewarded counts;
/// - every payout follows the per-epoch rule: payRewards(e) takes each client's rewarded count to
///   max(rewarded, min(accepted, first round of epoch e + 1)) and pays rate x the increase;
/// - the active client is never replaced before its deadline: reelect() succeeds only when the
///   handler's ghost state says the active client is overdue (head aggregatable for more than
///   activeBlocks blocks since the later of the block it became aggregatable and the active
///   client's election; or the oldest unsettled epoch complete that long, counted in optimistic
///   mode from no earlier than the close of its dispute window), and no other call
///   replaces the active client unless it excluded it (expireRound, an accepted dispute);
/// - no call reverts with Panic(uint256);
/// - protocol expectations: wrong calls are refused, right calls are accepted (including a
///   dispute of a wrong standing claim inside its window, whatever was posted or paid before; a
///   payout of an epoch whose window is open is refused DisputeWindowOpen, counted), and
///   the participant list and active client agree with the ghost state.
///
/// Session shape (all modes): M = 3 clients out of 5 actors, B = 1, P = 10 values per round,
/// b = 6, two TRAIN rounds and one EVAL round per epoch, 4 epochs (12 rounds), staleness 1 in the
/// hashed modes, activeBlocks 4, roundTimeoutBlocks 6 (also the dispute window), commit and
/// reveal windows 8 blocks. Lane mode runs masked, so that expireRound voids and re-opens rounds.
abstract contract ModesInvariantBase is Base {
    /// The ABI of Forge's targetSelectors() entries.
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    ModesHandler internal h;
    BbvflBase internal agg;

    function cfg(bool hashed) internal pure returns (BbvflBase.Config memory c) {
        c = configW(3, 1, 10, 6, !hashed, 2, 1, 1, 1, 4);
        c.hashed = hashed;
        c.staleness = hashed ? 1 : 0;
        c.commitBlocks = 8;
        c.revealBlocks = 8;
        c.activeBlocks = 4;
        c.roundTimeoutBlocks = 6;
    }

    function deploy(ModesHandler.Mode m, BbvflBase a) internal {
        agg = a;
        h = new ModesHandler(m, a);
    }

    function targetContracts() public view returns (address[] memory t) {
        t = new address[](1);
        t[0] = address(h);
    }

    /// The actions every mode has.
    function commonSelectors(uint256 extra) internal view returns (FuzzSelector[] memory s, uint256 n) {
        s = new FuzzSelector[](1);
        s[0].addr = address(h);
        bytes4[] memory x = new bytes4[](14 + extra);
        x[0] = ModesHandler.register.selector;
        x[1] = ModesHandler.commit.selector;
        x[2] = ModesHandler.reveal.selector;
        x[3] = ModesHandler.finalizeElection.selector;
        x[4] = ModesHandler.submit.selector;
        x[5] = ModesHandler.submitAll.selector;
        x[6] = ModesHandler.postGradient.selector;
        x[7] = ModesHandler.postMetrics.selector;
        x[8] = ModesHandler.payRewards.selector;
        x[9] = ModesHandler.expireRound.selector;
        x[10] = ModesHandler.reelect.selector;
        x[11] = ModesHandler.roll.selector;
        // step twice: one call in seven is the next honest move, so sessions get through epochs
        x[12] = ModesHandler.step.selector;
        x[13] = ModesHandler.step.selector;
        s[0].selectors = x;
        n = 14;
    }

    /// Logs the run's statistics (shown with -vv when a run fails or logs are printed).
    function afterInvariant() public view virtual {
        console.log("rounds done", h.roundsDone());
        console.log("reelections", h.reelections());
        console.log("expiries", h.expiries());
        console.log("wrong claims", h.wrongClaims());
        console.log("disputes accepted", h.disputesAccepted());
        console.log("payouts refused DisputeWindowOpen", h.windowRefusals());
    }

    // ------------------------------------------------------------ the checks

    /// rewarded <= accepted for every registered client (and 0 = 0 for the outsiders).
    function checkRewardedLeAccepted() internal view {
        for (uint256 k = 0; k < h.ACTORS(); k++) {
            (,,,,,, uint32 acc, uint32 rew) = agg.clientInfo(h.actor(k));
            if (rew > acc) {
                revert(
                    string.concat(
                        "rewarded > accepted: actor ", vx.toString(k), " rewarded ", vx.toString(rew), " accepted ",
                        vx.toString(acc), " (head ", vx.toString(h.head()), ")"
                    )
                );
            }
        }
    }

    /// supply = pool = paid + the aggregator's balance; paid = clients' balances = rate x rewarded.
    function checkSupply() internal view {
        BbvflRewardToken t = h.token();
        uint256 pool = h.POOL();
        assertEq(t.totalSupply(), pool, "total supply = reward pool");
        assertEq(h.ghostPaid() + t.balanceOf(address(agg)), pool, "supply = paid + pool balance");
        uint256 held;
        uint256 rewarded;
        for (uint256 k = 0; k < h.ACTORS(); k++) {
            held += t.balanceOf(h.actor(k));
            (,,,,,,, uint32 rew) = agg.clientInfo(h.actor(k));
            rewarded += rew;
        }
        assertEq(held, h.ghostPaid(), "paid = what the clients hold");
        assertEq(h.ghostPaid(), rewarded * h.RATE(), "paid = rate x rewarded submissions");
    }

    function checkPayoutRule() internal view {
        assertEq(h.payMismatches(), 0, h.lastPayMismatch());
    }

    function checkActiveDeadline() internal view {
        assertEq(h.earlyReelects(), 0, string.concat("active replaced before its deadline: ", h.lastEarly()));
        assertEq(h.unexpectedActiveChanges(), 0, "active client changed by a call that may not change it");
    }

    function checkNoPanic() internal view {
        assertEq(h.panics(), 0, h.lastPanic());
    }

    function checkExpectations() internal view {
        assertEq(h.wrongAccepted(), 0, h.lastWrongAccepted());
        assertEq(h.rightRefused(), 0, h.lastRightRefused());
        assertTrue(h.participantsMatch(), "participants = ghost participants");
        if (h.started()) {
            address act = agg.active();
            assertEq(act, h.ghostActive(), "active = ghost active");
            assertTrue(h.idx1(act) != 0, "active is a registered client");
        }
    }

    // The six invariants, run by each mode's contract below with its handler and selectors (20
    // runs x depth 500 = 10,000 calls each, set on each contract; a failing handler call fails).

    function invariant_rewarded_le_accepted() public view {
        checkRewardedLeAccepted();
    }

    function invariant_supply_is_paid_plus_pool() public view {
        checkSupply();
    }

    function invariant_payout_follows_epoch_rule() public view {
        checkPayoutRule();
    }

    function invariant_active_kept_until_deadline() public view {
        checkActiveDeadline();
    }

    function invariant_no_panic() public view {
        checkNoPanic();
    }

    function invariant_protocol_expectations() public view {
        checkExpectations();
    }
}

/// Lane mode (BbvflAggregator), masked.
/// forge-config: default.invariant.runs = 20
/// forge-config: default.invariant.depth = 500
/// forge-config: default.invariant.fail-on-revert = true
contract ModesInvariantLaneTest is ModesInvariantBase {
    function setUp() public {
        deploy(ModesHandler.Mode.Lane, new BbvflAggregator(cfg(false), openRegistration()));
    }

    function targetSelectors() public view returns (FuzzSelector[] memory s) {
        (s,) = commonSelectors(0);
    }
}

/// Hashed mode (BbvflHashAggregator), plain values.
/// forge-config: default.invariant.runs = 20
/// forge-config: default.invariant.depth = 500
/// forge-config: default.invariant.fail-on-revert = true
contract ModesInvariantHashedTest is ModesInvariantBase {
    function setUp() public {
        deploy(ModesHandler.Mode.Hashed, new BbvflHashAggregator(cfg(true), openRegistration()));
    }

    function targetSelectors() public view returns (FuzzSelector[] memory s) {
        uint256 n;
        (s, n) = commonSelectors(1);
        s[0].selectors[n] = ModesHandler.aggregate.selector;
    }
}

/// Packed mode (BbvflPackedAggregator).
/// forge-config: default.invariant.runs = 20
/// forge-config: default.invariant.depth = 500
/// forge-config: default.invariant.fail-on-revert = true
contract ModesInvariantPackedTest is ModesInvariantBase {
    function setUp() public {
        deploy(ModesHandler.Mode.Packed, new BbvflPackedAggregator(cfg(true), openRegistration()));
    }

    function targetSelectors() public view returns (FuzzSelector[] memory s) {
        uint256 n;
        (s, n) = commonSelectors(1);
        s[0].selectors[n] = ModesHandler.aggregate.selector;
    }
}

/// Optimistic mode (BbvflOptimisticAggregator): right and wrong claims, disputes by anyone.
/// forge-config: default.invariant.runs = 20
/// forge-config: default.invariant.depth = 500
/// forge-config: default.invariant.fail-on-revert = true
contract ModesInvariantOptimisticTest is ModesInvariantBase {
    function setUp() public {
        deploy(ModesHandler.Mode.Optimistic, new BbvflOptimisticAggregator(cfg(true), openRegistration()));
    }

    function targetSelectors() public view returns (FuzzSelector[] memory s) {
        uint256 n;
        (s, n) = commonSelectors(3);
        s[0].selectors[n] = ModesHandler.postSum.selector;
        // disputes twice as often: a dispute lands in a claim's short window more often
        s[0].selectors[n + 1] = ModesHandler.dispute.selector;
        s[0].selectors[n + 2] = ModesHandler.dispute.selector;
    }
}
