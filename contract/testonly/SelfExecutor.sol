// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title A minimal EIP-7702 delegate, for tests only (never in a session's contracts)
/// @notice An EOA that delegates to this code (a type-4 transaction's authorization) can forward
/// one call through itself: execute(to, data) calls `to` with `data` as the account, so `to`
/// sees the account as msg.sender. Only the account itself may call it (a transaction it signs
/// to its own address); a revert of the inner call is passed on unchanged, so the caller reads
/// the target's custom error. This is what `bbvfl client --submit-via-self` sends.
contract SelfExecutor {
    /// execute() was called by someone other than the delegated account itself.
    error NotSelf();

    /// Calls `to` with `data` (and the value sent) as this account; returns its return data.
    function execute(address to, bytes calldata data) external payable returns (bytes memory ret) {
        if (msg.sender != address(this)) revert NotSelf();
        bool ok;
        (ok, ret) = to.call{value: msg.value}(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
    }
}
