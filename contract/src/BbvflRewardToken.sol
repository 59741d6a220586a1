// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title bbvfl reward token
/// @notice A plain OpenZeppelin ERC-20. The whole supply (the reward pool) is minted once, in the
/// constructor, to the deployer, which is the BbvflAggregator that creates this token in its own
/// constructor. There is no other mint and no burn, so the total supply never changes.
contract BbvflRewardToken is ERC20 {
    constructor(uint256 pool) ERC20("bbvfl reward", "BBVR") {
        _mint(msg.sender, pool);
    }
}
