// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice ERC-8004 identity registry: each agent is an ERC-721 token (agentId) whose URI
/// (agentURI) points at its registration file. A minimal ERC-721: ownership, approvals and
/// transfers, no safe-transfer callbacks.
contract AgentIdentityRegistry {
    string public constant name = "Agent Identity";
    string public constant symbol = "AGENT";

    uint256 private _lastId;
    mapping(uint256 => address) private _owners;
    mapping(address => uint256) private _balances;
    mapping(uint256 => string) private _uris;
    mapping(uint256 => address) private _approvals;
    mapping(address => mapping(address => bool)) private _operators;

    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);

    error NonexistentAgent(uint256 agentId);
    error NotAuthorized();
    error InvalidRecipient();

    function register(string calldata agentURI) external returns (uint256) {
        return _register(agentURI);
    }

    function register() external returns (uint256) {
        return _register("");
    }

    function _register(string memory agentURI) private returns (uint256 agentId) {
        agentId = ++_lastId;
        _owners[agentId] = msg.sender;
        _balances[msg.sender] += 1;
        _uris[agentId] = agentURI;
        emit Transfer(address(0), msg.sender, agentId);
        emit Registered(agentId, agentURI, msg.sender);
    }

    function ownerOf(uint256 agentId) public view returns (address owner) {
        owner = _owners[agentId];
        if (owner == address(0)) revert NonexistentAgent(agentId);
    }

    function balanceOf(address owner) external view returns (uint256) {
        return _balances[owner];
    }

    function tokenURI(uint256 agentId) external view returns (string memory) {
        ownerOf(agentId);
        return _uris[agentId];
    }

    function setAgentURI(uint256 agentId, string calldata newURI) external {
        if (!_isAuthorized(msg.sender, agentId)) revert NotAuthorized();
        _uris[agentId] = newURI;
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    function approve(address to, uint256 agentId) external {
        address owner = ownerOf(agentId);
        if (msg.sender != owner && !_operators[owner][msg.sender]) revert NotAuthorized();
        _approvals[agentId] = to;
        emit Approval(owner, to, agentId);
    }

    function getApproved(uint256 agentId) external view returns (address) {
        ownerOf(agentId);
        return _approvals[agentId];
    }

    function setApprovalForAll(address operator, bool approved) external {
        _operators[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function isApprovedForAll(address owner, address operator) external view returns (bool) {
        return _operators[owner][operator];
    }

    function transferFrom(address from, address to, uint256 agentId) external {
        if (to == address(0)) revert InvalidRecipient();
        if (ownerOf(agentId) != from || !_isAuthorized(msg.sender, agentId)) revert NotAuthorized();
        delete _approvals[agentId];
        _balances[from] -= 1;
        _balances[to] += 1;
        _owners[agentId] = to;
        emit Transfer(from, to, agentId);
    }

    function _isAuthorized(address spender, uint256 agentId) private view returns (bool) {
        address owner = ownerOf(agentId);
        return spender == owner || _operators[owner][spender] || _approvals[agentId] == spender;
    }
}
