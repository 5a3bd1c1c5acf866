// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IMemoToken {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function transferWithMemo(address to, uint256 amount, bytes32 memo) external;
}

/// @notice Employer treasuries on the Tempo chain. Each employer has an account with an available
/// and a locked balance, an admin, and agents the admin authorises (the service's agent wallet,
/// the vesting contract). Payroll is paid from the available balance in one atomic batch.
contract PayrollTreasury {
    struct Account {
        address admin;
        uint256 available;
        uint256 locked;
    }

    IMemoToken public immutable token;
    uint256 public accountCount;
    mapping(uint256 => Account) private _accounts;
    mapping(uint256 => mapping(address => bool)) public isAgent;

    event AccountCreated(uint256 indexed accountId, address indexed admin);
    event AgentUpdated(uint256 indexed accountId, address indexed agent, bool allowed);
    event Deposited(uint256 indexed accountId, address indexed from, uint256 amount);
    event Withdrawn(uint256 indexed accountId, address indexed to, uint256 amount);
    event Locked(uint256 indexed accountId, uint256 amount);
    event Unlocked(uint256 indexed accountId, uint256 amount);
    event PayrollPayment(uint256 indexed accountId, address indexed recipient, uint256 amount, bytes32 memo);
    event PayrollExecuted(uint256 indexed accountId, uint256 recipientCount, uint256 total);
    event AccountTransfer(uint256 indexed accountId, address indexed to, uint256 amount, bytes32 memo);

    error UnknownAccount();
    error Unauthorized();
    error InsufficientAvailable(uint256 available, uint256 required);
    error LengthMismatch();
    error EmptyBatch();
    error InvalidRecipient();

    constructor(address token_) {
        token = IMemoToken(token_);
    }

    /// @notice Opens an account for `admin`. An opener other than the admin (the service, opening
    /// an employer's treasury) becomes its agent, until the admin revokes it with setAgent.
    function createAccount(address admin) external returns (uint256 accountId) {
        if (admin == address(0)) revert Unauthorized();
        accountId = ++accountCount;
        _accounts[accountId].admin = admin;
        emit AccountCreated(accountId, admin);
        if (msg.sender != admin) {
            isAgent[accountId][msg.sender] = true;
            emit AgentUpdated(accountId, msg.sender, true);
        }
    }

    function accountOf(uint256 accountId) external view returns (address admin, uint256 available, uint256 locked) {
        Account storage account = _existing(accountId);
        return (account.admin, account.available, account.locked);
    }

    function setAgent(uint256 accountId, address agent, bool allowed) external {
        if (_existing(accountId).admin != msg.sender) revert Unauthorized();
        isAgent[accountId][agent] = allowed;
        emit AgentUpdated(accountId, agent, allowed);
    }

    /// @notice Anyone may fund an account (pulls tokens approved to this contract).
    function deposit(uint256 accountId, uint256 amount) external {
        Account storage account = _existing(accountId);
        token.transferFrom(msg.sender, address(this), amount);
        account.available += amount;
        emit Deposited(accountId, msg.sender, amount);
    }

    function withdraw(uint256 accountId, address to, uint256 amount) external {
        Account storage account = _existing(accountId);
        if (account.admin != msg.sender) revert Unauthorized();
        _debit(account, amount);
        token.transferWithMemo(to, amount, bytes32(0));
        emit Withdrawn(accountId, to, amount);
    }

    function lock(uint256 accountId, uint256 amount) external {
        Account storage account = _operated(accountId);
        _debit(account, amount);
        account.locked += amount;
        emit Locked(accountId, amount);
    }

    function unlock(uint256 accountId, uint256 amount) external {
        Account storage account = _operated(accountId);
        if (account.locked < amount) revert InsufficientAvailable(account.locked, amount);
        account.locked -= amount;
        account.available += amount;
        emit Unlocked(accountId, amount);
    }

    /// @notice Pays every recipient from the account in this one transaction, or none of them.
    function executeBatchPayroll(
        address[] calldata recipients,
        uint256[] calldata amounts,
        bytes32[] calldata memos,
        uint256 employerAccountId
    ) external {
        if (recipients.length != amounts.length || recipients.length != memos.length) revert LengthMismatch();
        if (recipients.length == 0) revert EmptyBatch();
        Account storage account = _operated(employerAccountId);
        uint256 total;
        for (uint256 i = 0; i < amounts.length; i++) total += amounts[i];
        _debit(account, total);
        for (uint256 i = 0; i < recipients.length; i++) {
            if (recipients[i] == address(0)) revert InvalidRecipient();
            token.transferWithMemo(recipients[i], amounts[i], memos[i]);
            emit PayrollPayment(employerAccountId, recipients[i], amounts[i], memos[i]);
        }
        emit PayrollExecuted(employerAccountId, recipients.length, total);
    }

    /// @notice One payment from the account by its admin or an agent (agent pay, vesting claims).
    function transferFromAccount(uint256 accountId, address to, uint256 amount, bytes32 memo) external {
        Account storage account = _operated(accountId);
        if (to == address(0)) revert InvalidRecipient();
        _debit(account, amount);
        token.transferWithMemo(to, amount, memo);
        emit AccountTransfer(accountId, to, amount, memo);
    }

    function _debit(Account storage account, uint256 amount) private {
        if (account.available < amount) revert InsufficientAvailable(account.available, amount);
        account.available -= amount;
    }

    function _existing(uint256 accountId) private view returns (Account storage account) {
        account = _accounts[accountId];
        if (account.admin == address(0)) revert UnknownAccount();
    }

    function _operated(uint256 accountId) private view returns (Account storage account) {
        account = _existing(accountId);
        if (account.admin != msg.sender && !isAgent[accountId][msg.sender]) revert Unauthorized();
    }
}
