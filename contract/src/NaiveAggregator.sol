// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Naive aggregator (benchmark baseline only)
/// @notice NOT for use in a session. This is the gas baseline bbvfl's BbvflAggregator is measured
/// against: it follows the storage pattern of the DP-BBVFL paper's public contract, written here
/// from scratch. Every submitted value is kept in its own 256-bit storage word, per client and per
/// round (fresh storage every round), and the sum is computed in a separate aggregate(round) call
/// that loops over all clients and coordinates and stores the result, again one word per value.
/// Checks are minimal: registered sender, one submission per round, exact length.
contract NaiveAggregator {
    uint256 public immutable clientCount;
    uint256 public immutable coords;
    address[] public clients;
    mapping(address => bool) public registered;
    mapping(uint256 => mapping(address => uint256[])) private _values;
    mapping(uint256 => mapping(address => bool)) public submitted;
    mapping(uint256 => uint256[]) private _sums;

    event Submitted(uint256 indexed round, address indexed client);

    /// @notice All clients have registered already.
    error RegistrationClosed();
    /// @notice The sender is registered already.
    error AlreadyRegistered();
    /// @notice The sender is not registered.
    error NotRegistered();
    /// @notice The sender submitted to this round already.
    /// @param round the round
    error NaiveAlreadySubmitted(uint256 round);
    /// @notice A submission must carry exactly `coords` values.
    /// @param expected coords
    /// @param got values sent
    error BadLength(uint256 expected, uint256 got);
    /// @notice The round's sum was computed already.
    /// @param round the round
    error NaiveAlreadyAggregated(uint256 round);
    /// @notice A registered client has not submitted to the round.
    /// @param client its address
    error MissingSubmission(address client);
    event Aggregated(uint256 indexed round, uint256[] sum);

    constructor(uint256 m, uint256 coordinates) {
        clientCount = m;
        coords = coordinates;
    }

    function register() external {
        if (clients.length >= clientCount) revert RegistrationClosed();
        if (registered[msg.sender]) revert AlreadyRegistered();
        registered[msg.sender] = true;
        clients.push(msg.sender);
    }

    function submit(uint256 round, uint256[] calldata values) external {
        if (!registered[msg.sender]) revert NotRegistered();
        if (submitted[round][msg.sender]) revert NaiveAlreadySubmitted(round);
        if (values.length != coords) revert BadLength(coords, values.length);
        submitted[round][msg.sender] = true;
        uint256[] storage dst = _values[round][msg.sender];
        for (uint256 j = 0; j < values.length; j++) dst.push(values[j]);
        emit Submitted(round, msg.sender);
    }

    function aggregate(uint256 round) external {
        if (_sums[round].length != 0) revert NaiveAlreadyAggregated(round);
        uint256[] storage sum = _sums[round];
        for (uint256 j = 0; j < coords; j++) sum.push(0);
        for (uint256 i = 0; i < clients.length; i++) {
            address a = clients[i];
            if (!submitted[round][a]) revert MissingSubmission(a);
            uint256[] storage v = _values[round][a];
            for (uint256 j = 0; j < coords; j++) sum[j] += v[j];
        }
        emit Aggregated(round, sum);
    }

    function roundSum(uint256 round) external view returns (uint256[] memory) {
        return _sums[round];
    }
}
