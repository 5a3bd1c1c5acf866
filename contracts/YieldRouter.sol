// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface ITreasuryAccounts {
    function accountOf(uint256 accountId) external view returns (address admin, uint256 available, uint256 locked);
    function isAgent(uint256 accountId, address agent) external view returns (bool);
}

/// @notice Treasury yield (spec 2.8): the blended APY in basis points, the yield sources, and
/// each employer account's allocation across them in basis points summing to 10,000.
contract YieldRouter {
    uint256 public constant TOTAL_BPS = 10_000;

    ITreasuryAccounts public immutable treasury;
    address public owner;
    string[] private _sources;
    uint256[] private _sourceApyBps;
    mapping(uint256 => uint256[]) private _allocations;

    event SourcesUpdated(uint256 count);
    event Rebalanced(uint256 indexed accountId, uint256[] allocationBps);

    error Unauthorized();
    error LengthMismatch();
    error AllocationNotWhole(uint256 sumBps);

    constructor(address treasury_, string[] memory sourceNames, uint256[] memory apyBps) {
        treasury = ITreasuryAccounts(treasury_);
        owner = msg.sender;
        _setSources(sourceNames, apyBps);
    }

    function setSources(string[] calldata sourceNames, uint256[] calldata apyBps) external {
        if (msg.sender != owner) revert Unauthorized();
        _setSources(sourceNames, apyBps);
    }

    function sources() external view returns (string[] memory) {
        return _sources;
    }

    function sourceApyBps() external view returns (uint256[] memory) {
        return _sourceApyBps;
    }

    /// @notice The account's allocation; an account never rebalanced sits wholly in the first source.
    function allocationOf(uint256 accountId) public view returns (uint256[] memory allocation) {
        allocation = _allocations[accountId];
        if (allocation.length != _sources.length) {
            allocation = new uint256[](_sources.length);
            if (allocation.length > 0) allocation[0] = TOTAL_BPS;
        }
    }

    /// @notice The account's blended APY in basis points under its allocation.
    function apyBps(uint256 accountId) external view returns (uint256 weighted) {
        uint256[] memory allocation = allocationOf(accountId);
        for (uint256 i = 0; i < allocation.length; i++) weighted += allocation[i] * _sourceApyBps[i];
        weighted /= TOTAL_BPS;
    }

    function rebalance(uint256 accountId, uint256[] calldata allocationBps) external {
        (address admin, , ) = treasury.accountOf(accountId);
        if (msg.sender != admin && !treasury.isAgent(accountId, msg.sender)) revert Unauthorized();
        if (allocationBps.length != _sources.length) revert LengthMismatch();
        uint256 sum;
        for (uint256 i = 0; i < allocationBps.length; i++) sum += allocationBps[i];
        if (sum != TOTAL_BPS) revert AllocationNotWhole(sum);
        _allocations[accountId] = allocationBps;
        emit Rebalanced(accountId, allocationBps);
    }

    function _setSources(string[] memory sourceNames, uint256[] memory apyBps_) private {
        if (sourceNames.length != apyBps_.length || sourceNames.length == 0) revert LengthMismatch();
        delete _sources;
        for (uint256 i = 0; i < sourceNames.length; i++) _sources.push(sourceNames[i]);
        _sourceApyBps = apyBps_;
        emit SourcesUpdated(sourceNames.length);
    }
}
