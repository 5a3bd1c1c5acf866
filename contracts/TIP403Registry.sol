// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice Transfer policies (TIP-403), mirroring the interface of Tempo's registry for the parts
/// the service uses. Policy 0 rejects everyone and policy 1 allows everyone (built in); policies
/// from 2 on are whitelists (only listed accounts pass) or blacklists (listed accounts fail),
/// each changed only by its admin.
contract TIP403Registry {
    uint8 public constant WHITELIST = 0;
    uint8 public constant BLACKLIST = 1;

    struct Policy {
        uint8 policyType;
        address admin;
        bool exists;
    }

    uint64 public policyIdCounter = 2;
    mapping(uint64 => Policy) private _policies;
    mapping(uint64 => mapping(address => bool)) private _listed;

    event PolicyAdminUpdated(uint64 indexed policyId, address indexed updater, address indexed admin);
    event PolicyCreated(uint64 indexed policyId, address indexed updater, uint8 policyType);
    event WhitelistUpdated(uint64 indexed policyId, address indexed updater, address indexed account, bool allowed);
    event BlacklistUpdated(uint64 indexed policyId, address indexed updater, address indexed account, bool restricted);

    error Unauthorized();
    error PolicyNotFound();
    error PolicyNotSimple();
    error InvalidPolicyType();
    error IncompatiblePolicyType();

    function policyExists(uint64 policyId) public view returns (bool) {
        return policyId < 2 || _policies[policyId].exists;
    }

    function policyData(uint64 policyId) external view returns (uint8 policyType, address admin) {
        if (policyId < 2) revert PolicyNotSimple();
        Policy storage policy = _existing(policyId);
        return (policy.policyType, policy.admin);
    }

    function isAuthorized(uint64 policyId, address user) public view returns (bool) {
        if (policyId == 0) return false;
        if (policyId == 1) return true;
        Policy storage policy = _existing(policyId);
        bool listed = _listed[policyId][user];
        return policy.policyType == WHITELIST ? listed : !listed;
    }

    function isAuthorizedSender(uint64 policyId, address user) external view returns (bool) {
        return isAuthorized(policyId, user);
    }

    function isAuthorizedRecipient(uint64 policyId, address user) external view returns (bool) {
        return isAuthorized(policyId, user);
    }

    function createPolicy(address admin, uint8 policyType) public returns (uint64 policyId) {
        if (policyType > BLACKLIST) revert InvalidPolicyType();
        policyId = policyIdCounter++;
        _policies[policyId] = Policy(policyType, admin, true);
        emit PolicyCreated(policyId, msg.sender, policyType);
        emit PolicyAdminUpdated(policyId, msg.sender, admin);
    }

    function createPolicyWithAccounts(address admin, uint8 policyType, address[] calldata accounts)
        external
        returns (uint64 policyId)
    {
        policyId = createPolicy(admin, policyType);
        for (uint256 i = 0; i < accounts.length; i++) {
            _listed[policyId][accounts[i]] = true;
            if (policyType == WHITELIST) emit WhitelistUpdated(policyId, msg.sender, accounts[i], true);
            else emit BlacklistUpdated(policyId, msg.sender, accounts[i], true);
        }
    }

    function setPolicyAdmin(uint64 policyId, address admin) external {
        _administered(policyId).admin = admin;
        emit PolicyAdminUpdated(policyId, msg.sender, admin);
    }

    function modifyPolicyWhitelist(uint64 policyId, address account, bool allowed) external {
        if (_administered(policyId).policyType != WHITELIST) revert IncompatiblePolicyType();
        _listed[policyId][account] = allowed;
        emit WhitelistUpdated(policyId, msg.sender, account, allowed);
    }

    function modifyPolicyBlacklist(uint64 policyId, address account, bool restricted) external {
        if (_administered(policyId).policyType != BLACKLIST) revert IncompatiblePolicyType();
        _listed[policyId][account] = restricted;
        emit BlacklistUpdated(policyId, msg.sender, account, restricted);
    }

    function _existing(uint64 policyId) private view returns (Policy storage policy) {
        policy = _policies[policyId];
        if (!policy.exists) revert PolicyNotFound();
    }

    function _administered(uint64 policyId) private view returns (Policy storage policy) {
        policy = _existing(policyId);
        if (policy.admin != msg.sender) revert Unauthorized();
    }
}
