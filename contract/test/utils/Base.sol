// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Vm} from "forge-std/Vm.sol";
import {BbvflAggregator} from "../../src/BbvflAggregator.sol";
import {BbvflBase} from "../../src/BbvflBase.sol";
import {BbvflRewardToken} from "../../src/BbvflRewardToken.sol";

/// Cheatcodes the pinned forge-std Vm interface does not declare (same cheatcode address).
interface VmExtra {
    struct Log {
        bytes32[] topics;
        bytes data;
        address emitter;
    }

    function recordLogs() external;
    function getRecordedLogs() external returns (Log[] memory);
    function toString(uint256 value) external pure returns (string memory);
    /// The next call must revert with a custom error whose selector is `sel` (arguments not compared).
    function expectPartialRevert(bytes4 sel) external;
}

/// Minimal test base: cheatcodes, assertions with readable messages, and a session fixture.
abstract contract Base {
    address internal constant HEVM = address(uint160(uint256(keccak256("hevm cheat code"))));
    Vm internal constant vm = Vm(HEVM);
    VmExtra internal constant vx = VmExtra(HEVM);

    // ------------------------------------------------------------ assertions

    function assertTrue(bool c, string memory what) internal pure {
        require(c, what);
    }

    function assertEq(uint256 a, uint256 b, string memory what) internal pure {
        if (a != b) {
            revert(string.concat(what, ": got ", vx.toString(a), ", want ", vx.toString(b)));
        }
    }

    function assertEq(address a, address b, string memory what) internal pure {
        require(a == b, string.concat(what, ": addresses differ"));
    }

    function assertEq(bytes32 a, bytes32 b, string memory what) internal pure {
        require(a == b, string.concat(what, ": words differ"));
    }

    function assertEq(bytes memory a, bytes memory b, string memory what) internal pure {
        if (a.length != b.length) {
            revert(string.concat(what, ": length ", vx.toString(a.length), " != ", vx.toString(b.length)));
        }
        for (uint256 i = 0; i < a.length; i++) {
            if (a[i] != b[i]) revert(string.concat(what, ": first difference at byte ", vx.toString(i)));
        }
    }

    function bound(uint256 x, uint256 lo, uint256 hi) internal pure returns (uint256) {
        require(lo <= hi, "bound: lo > hi");
        return lo + x % (hi - lo + 1);
    }

    // ------------------------------------------------------------ session fixture

    /// A client identity for tests: a 64-byte "public key" and the address it hashes to. The
    /// contract only checks address == keccak(pubkey)[12:], which a real key pair satisfies too.
    function clientKey(uint256 i) internal pure returns (address a, bytes memory pk) {
        pk = abi.encodePacked(keccak256(abi.encode("x", i)), keccak256(abi.encode("y", i)));
        a = address(uint160(uint256(keccak256(pk))));
    }

    function clientAddr(uint256 i) internal pure returns (address a) {
        (a,) = clientKey(i);
    }

    function secretOf(uint256 i) internal pure returns (bytes32) {
        return keccak256(abi.encode("secret", i));
    }

    /// The election commitment of `secret` by `client` for the aggregator `agg` on this chain:
    /// keccak256(abi.encodePacked(secret, client, agg, block.chainid)) (BbvflBase.commit).
    function commitmentFor(address agg, bytes32 secret, address client) internal view returns (bytes32) {
        return commitmentFor(agg, secret, client, block.chainid);
    }

    /// The same for the chain `chainId`.
    function commitmentFor(address agg, bytes32 secret, address client, uint256 chainId)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(abi.encodePacked(secret, client, agg, chainId));
    }

    function config(uint8 m, uint32 b_, uint32 p, uint8 levels, bool masked, uint32 t, uint32 v, uint32 epochs)
        internal
        pure
        returns (BbvflBase.Config memory c)
    {
        c.clients = m;
        c.batch = b_;
        c.dim = p;
        c.levels = levels;
        c.betaMicro = 200000;
        c.masked = masked;
        // today's protocol: one minibatch per TRAIN round (K = 1), v EVAL rounds of B test rows
        c.batchesPerEpoch = t;
        c.window = 1;
        c.evalRows = v * b_;
        c.evalRowsPerRound = b_;
        c.trainRows = t * b_;
        c.testRows = v * b_;
        c.epochs = epochs;
        c.rewardPerSubmission = 1e18;
        c.rewardPool = 1e18 * uint256(m) * epochs * (uint256(t) + v);
        c.commitBlocks = 10;
        c.revealBlocks = 10;
        c.activeBlocks = 20;
        c.roundTimeoutBlocks = 30;
    }

    /// Windowed config: R batches per epoch, K per TRAIN round, NE eval rows per epoch in rounds
    /// of ER rows. The pool covers every round.
    function configW(uint8 m, uint32 b_, uint32 p, uint8 levels, bool masked, uint32 r, uint32 k, uint32 ne, uint32 er, uint32 epochs)
        internal
        pure
        returns (BbvflBase.Config memory c)
    {
        c = config(m, b_, p, levels, masked, r, 0, epochs);
        c.window = k;
        c.evalRows = ne;
        c.evalRowsPerRound = er;
        c.trainRows = r * b_ + 7;
        c.testRows = ne + 3;
        uint256 rounds = (uint256(r) + k - 1) / k + (ne == 0 ? 0 : (uint256(ne) + er - 1) / er);
        c.rewardPool = 1e18 * uint256(m) * epochs * rounds;
    }

    /// No member list: a session open to anyone (the tests' default; a closed session's tests
    /// pass its members).
    function openRegistration() internal pure returns (address[] memory) {
        return new address[](0);
    }

    /// The first m test clients' addresses: a closed session's members.
    function membersOf(uint256 m) internal pure returns (address[] memory a) {
        a = new address[](m);
        for (uint256 i = 0; i < m; i++) a[i] = clientAddr(i);
    }

    function registerAll(BbvflBase agg, uint256 m) internal {
        for (uint256 i = 0; i < m; i++) {
            (address a, bytes memory pk) = clientKey(i);
            vm.prank(a);
            agg.register(pk);
        }
    }

    function commitAll(BbvflBase agg, uint256 m) internal {
        for (uint256 i = 0; i < m; i++) {
            address a = clientAddr(i);
            vm.prank(a);
            agg.commit(commitmentFor(address(agg), secretOf(i), a));
        }
    }

    function revealAll(BbvflBase agg, uint256 m) internal {
        for (uint256 i = 0; i < m; i++) {
            vm.prank(clientAddr(i));
            agg.reveal(secretOf(i));
        }
    }

    /// Deploys and runs registration + election with every client honest.
    function startSession(BbvflBase.Config memory c) internal returns (BbvflAggregator agg) {
        agg = new BbvflAggregator(c, openRegistration());
        registerAll(agg, c.clients);
        commitAll(agg, c.clients);
        revealAll(agg, c.clients);
    }

    function indexOf(address a) internal pure returns (uint256) {
        for (uint256 i = 0; i < 256; i++) {
            if (clientAddr(i) == a) return i;
        }
        revert("not a test client");
    }

    /// Deterministic plain-mode submission of client i for round r: values 0..levels.
    function plainData(uint256 i, uint64 r, uint256 len, uint8 levels) internal pure returns (bytes memory q) {
        q = new bytes(len);
        for (uint256 j = 0; j < len; j++) {
            q[j] = bytes1(uint8(uint256(keccak256(abi.encode(i, r, j))) % (uint256(levels) + 1)));
        }
    }
}
