// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IPayrollTreasury {
    function accountOf(uint256 accountId) external view returns (address admin, uint256 available, uint256 locked);
    function transferFromAccount(uint256 accountId, address to, uint256 amount, bytes32 memo) external;
}

/// @notice Salary streams: each employee accrues at a per-second rate (base units) from the
/// moment the stream starts or was last claimed; a claim pays the accrued amount from the
/// employer's treasury account, where this contract must be an authorised agent.
contract StreamVesting {
    struct Stream {
        uint256 accountId;
        uint256 ratePerSecond;
        uint64 accruingSince;
        bool active;
    }

    IPayrollTreasury public immutable treasury;
    mapping(address => Stream) private _streams;
    mapping(address => bool) public isOperator;
    address public owner;

    event StreamSet(address indexed employee, uint256 indexed accountId, uint256 ratePerSecond);
    event StreamStopped(address indexed employee, uint256 accrued);
    event Claimed(address indexed employee, uint256 indexed accountId, uint256 amount);
    event OperatorUpdated(address indexed operator, bool allowed);

    error Unauthorized();
    error NoStream();
    error NothingAccrued();

    constructor(address treasury_) {
        treasury = IPayrollTreasury(treasury_);
        owner = msg.sender;
    }

    /// @notice Operators (the service's agent wallet) may claim on an employee's behalf.
    function setOperator(address operator, bool allowed) external {
        if (msg.sender != owner) revert Unauthorized();
        isOperator[operator] = allowed;
        emit OperatorUpdated(operator, allowed);
    }

    /// @notice Starts or re-rates an employee's stream; what accrued at the old rate is paid first.
    function setStream(address employee, uint256 accountId, uint256 ratePerSecond) external {
        _requireAdmin(accountId);
        Stream storage stream = _streams[employee];
        if (stream.active) {
            _requireAdmin(stream.accountId);
            _pay(employee, stream);
        }
        _streams[employee] = Stream(accountId, ratePerSecond, uint64(block.timestamp), true);
        emit StreamSet(employee, accountId, ratePerSecond);
    }

    function stopStream(address employee) external {
        Stream storage stream = _streams[employee];
        if (!stream.active) revert NoStream();
        _requireAdmin(stream.accountId);
        uint256 accrued = accruedOf(employee);
        if (accrued > 0) _pay(employee, stream);
        stream.active = false;
        emit StreamStopped(employee, accrued);
    }

    function streamOf(address employee)
        external
        view
        returns (uint256 accountId, uint256 ratePerSecond, uint64 accruingSince, bool active)
    {
        Stream storage stream = _streams[employee];
        return (stream.accountId, stream.ratePerSecond, stream.accruingSince, stream.active);
    }

    function accruedOf(address employee) public view returns (uint256) {
        Stream storage stream = _streams[employee];
        if (!stream.active) return 0;
        return (block.timestamp - stream.accruingSince) * stream.ratePerSecond;
    }

    /// @notice Pays the employee what has accrued. Two claims in one block pay once.
    function claim(address employee) external returns (uint256 amount) {
        if (msg.sender != employee && !isOperator[msg.sender]) revert Unauthorized();
        Stream storage stream = _streams[employee];
        if (!stream.active) revert NoStream();
        amount = _pay(employee, stream);
        if (amount == 0) revert NothingAccrued();
    }

    function _pay(address employee, Stream storage stream) private returns (uint256 amount) {
        amount = (block.timestamp - stream.accruingSince) * stream.ratePerSecond;
        stream.accruingSince = uint64(block.timestamp);
        if (amount > 0) {
            treasury.transferFromAccount(stream.accountId, employee, amount, bytes32(0));
            emit Claimed(employee, stream.accountId, amount);
        }
    }

    function _requireAdmin(uint256 accountId) private view {
        (address admin, , ) = treasury.accountOf(accountId);
        if (admin != msg.sender) revert Unauthorized();
    }
}
