// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IAgentIdentity {
    function ownerOf(uint256 agentId) external view returns (address);
    function isApprovedForAll(address owner, address operator) external view returns (bool);
    function getApproved(uint256 agentId) external view returns (address);
}

/// @notice ERC-8004 reputation registry (v1.1 interface): any client gives an agent feedback with
/// a 0-100 score and optional tags; an agent's owner and operators cannot rate it. Feedback is
/// numbered from 1 per (agent, client) and can be revoked by its client.
contract AgentReputationRegistry {
    uint8 public constant MAX_SCORE = 100;

    struct Feedback {
        uint8 score;
        bool isRevoked;
        string tag1;
        string tag2;
    }

    IAgentIdentity public immutable identityRegistry;
    mapping(uint256 => mapping(address => Feedback[])) private _feedback;
    mapping(uint256 => address[]) private _clients;

    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        uint8 score,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );
    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);

    error ScoreOutOfRange();
    error SelfFeedback();
    error UnknownFeedback();
    error AlreadyRevoked();

    constructor(address identity) {
        identityRegistry = IAgentIdentity(identity);
    }

    function getIdentityRegistry() external view returns (address) {
        return address(identityRegistry);
    }

    function giveFeedback(
        uint256 agentId,
        uint8 score,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external {
        if (score > MAX_SCORE) revert ScoreOutOfRange();
        address owner = identityRegistry.ownerOf(agentId); // reverts for an unknown agent
        if (
            msg.sender == owner || identityRegistry.isApprovedForAll(owner, msg.sender)
                || identityRegistry.getApproved(agentId) == msg.sender
        ) revert SelfFeedback();
        Feedback[] storage list = _feedback[agentId][msg.sender];
        if (list.length == 0) _clients[agentId].push(msg.sender);
        list.push(Feedback(score, false, tag1, tag2));
        emit NewFeedback(agentId, msg.sender, uint64(list.length), score, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash);
    }

    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        Feedback storage entry = _entry(agentId, msg.sender, feedbackIndex);
        if (entry.isRevoked) revert AlreadyRevoked();
        entry.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return uint64(_feedback[agentId][clientAddress].length);
    }

    function getClients(uint256 agentId) external view returns (address[] memory) {
        return _clients[agentId];
    }

    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (uint8 score, string memory tag1, string memory tag2, bool isRevoked)
    {
        Feedback storage entry = _entry(agentId, clientAddress, feedbackIndex);
        return (entry.score, entry.tag1, entry.tag2, entry.isRevoked);
    }

    /// @notice Count and average score of unrevoked feedback, optionally only from some clients
    /// and only with given tags (an empty tag matches any).
    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, uint8 averageScore)
    {
        address[] memory clients = _clients[agentId];
        if (clientAddresses.length > 0) clients = clientAddresses;
        bytes32 tag1Hash = keccak256(bytes(tag1));
        bytes32 tag2Hash = keccak256(bytes(tag2));
        uint256 total;
        for (uint256 i = 0; i < clients.length; i++) {
            Feedback[] storage list = _feedback[agentId][clients[i]];
            for (uint256 j = 0; j < list.length; j++) {
                Feedback storage entry = list[j];
                if (entry.isRevoked) continue;
                if (bytes(tag1).length > 0 && keccak256(bytes(entry.tag1)) != tag1Hash) continue;
                if (bytes(tag2).length > 0 && keccak256(bytes(entry.tag2)) != tag2Hash) continue;
                total += entry.score;
                count++;
            }
        }
        averageScore = count > 0 ? uint8(total / count) : 0;
    }

    function _entry(uint256 agentId, address clientAddress, uint64 feedbackIndex) private view returns (Feedback storage) {
        Feedback[] storage list = _feedback[agentId][clientAddress];
        if (feedbackIndex == 0 || feedbackIndex > list.length) revert UnknownFeedback();
        return list[feedbackIndex - 1];
    }
}
