// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;
import {Vm} from "forge-std/Vm.sol";
import {Probe} from "../src/Probe.sol";
contract ProbeTest {
  Vm constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));
  function test_mint() public { Probe p = new Probe(); require(p.balanceOf(address(this)) == 10, "bal"); }
  function testFuzz_x(uint8 a) public { vm.roll(100); require(block.number == 100 && a <= 255, "x"); }
}
