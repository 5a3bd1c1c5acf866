// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface ITIP20 {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @notice The embedded Tempo chain's TIP-1034 channel escrow, installed at the precompile's
/// canonical address with the precompile's ABI, events and voucher domain, so unmodified mppx
/// session clients and servers run against it.
///
/// Tempo binds a channel to the transaction that opened it (`expiringNonceHash`, a hash of the
/// signed Tempo transaction and its sender). A plain EVM cannot compute that, so the embedded
/// chain's Tempo RPC, which applies signed Tempo transactions, appends it to the calldata of
/// `open` and `topUp`; a transaction hash is accepted once. Calls without it (gas estimates,
/// simulations) use zero and consume nothing.
contract TIP20ChannelEscrow {
    struct ChannelDescriptor {
        address payer;
        address payee;
        address operator;
        address token;
        bytes32 salt;
        address authorizedSigner;
        bytes32 expiringNonceHash;
    }

    struct ChannelState {
        uint96 settled;
        uint96 deposit;
        uint32 closeRequestedAt;
    }

    struct Channel {
        ChannelDescriptor descriptor;
        ChannelState state;
    }

    uint64 public constant CLOSE_GRACE_PERIOD = 900;
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint96 cumulativeAmount)");
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    uint256 private constant MAX_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    // Calldata sizes of open and topUp without the appended transaction hash.
    uint256 private constant OPEN_CALLDATA = 4 + 6 * 32;
    uint256 private constant TOP_UP_CALLDATA = 4 + 8 * 32;

    mapping(bytes32 => ChannelState) private states;
    /// @notice Channels that existed: a closed channel's id is never opened again.
    mapping(bytes32 => bool) public used;
    /// @notice Signed Tempo transactions already applied (their expiring nonce hashes).
    mapping(bytes32 => bool) public appliedTransactions;

    event ChannelOpened(
        bytes32 indexed channelId,
        address indexed payer,
        address indexed payee,
        address operator,
        address token,
        address authorizedSigner,
        bytes32 salt,
        bytes32 expiringNonceHash,
        uint96 deposit
    );
    event Settled(
        bytes32 indexed channelId, address indexed payer, address indexed payee, uint96 cumulativeAmount, uint96 deltaPaid, uint96 newSettled
    );
    event TopUp(bytes32 indexed channelId, address indexed payer, address indexed payee, uint96 additionalDeposit, uint96 newDeposit);
    event CloseRequested(bytes32 indexed channelId, address indexed payer, address indexed payee, uint256 closeGraceEnd);
    event ChannelClosed(bytes32 indexed channelId, address indexed payer, address indexed payee, uint96 settledToPayee, uint96 refundedToPayer);
    event CloseRequestCancelled(bytes32 indexed channelId, address indexed payer, address indexed payee);

    error InvalidPayee();
    error ZeroDeposit();
    error ChannelExists();
    error ChannelNotFound();
    error TransactionAlreadyApplied();
    error Unauthorized();
    error InvalidSignature();
    error AmountNotIncreasing();
    error AmountExceedsDeposit();
    error InvalidCaptureAmount();
    error CloseNotRequested();
    error CloseGracePending();
    error TransferFailed();

    // ---- channel lifecycle ---------------------------------------------------------------------

    function open(address payee, address operator, address token, uint96 deposit, bytes32 salt, address authorizedSigner)
        external
        returns (bytes32 channelId)
    {
        if (payee == address(0)) revert InvalidPayee();
        if (deposit == 0) revert ZeroDeposit();
        bytes32 nonceHash = _consumeTransaction(OPEN_CALLDATA);
        ChannelDescriptor memory d = ChannelDescriptor(msg.sender, payee, operator, token, salt, authorizedSigner, nonceHash);
        channelId = _channelId(d);
        if (used[channelId]) revert ChannelExists();
        used[channelId] = true;
        states[channelId] = ChannelState(0, deposit, 0);
        _pull(token, msg.sender, deposit);
        emit ChannelOpened(channelId, msg.sender, payee, operator, token, authorizedSigner, salt, nonceHash, deposit);
    }

    function topUp(ChannelDescriptor calldata d, uint96 additionalDeposit) external {
        _consumeTransaction(TOP_UP_CALLDATA);
        (bytes32 id, ChannelState storage s) = _open(d);
        if (msg.sender != d.payer) revert Unauthorized();
        if (additionalDeposit == 0) revert ZeroDeposit();
        s.deposit += additionalDeposit;
        if (s.closeRequestedAt != 0) {
            s.closeRequestedAt = 0;
            emit CloseRequestCancelled(id, d.payer, d.payee);
        }
        _pull(d.token, msg.sender, additionalDeposit);
        emit TopUp(id, d.payer, d.payee, additionalDeposit, s.deposit);
    }

    /// @notice The payee (or operator) collects what a voucher grants beyond what was settled.
    function settle(ChannelDescriptor calldata d, uint96 cumulativeAmount, bytes calldata signature) external {
        (bytes32 id, ChannelState storage s) = _open(d);
        _onlyPayeeSide(d);
        if (cumulativeAmount <= s.settled) revert AmountNotIncreasing();
        if (cumulativeAmount > s.deposit) revert AmountExceedsDeposit();
        _requireVoucher(d, id, cumulativeAmount, signature);
        uint96 delta = cumulativeAmount - s.settled;
        s.settled = cumulativeAmount;
        _push(d.token, d.payee, delta);
        emit Settled(id, d.payer, d.payee, cumulativeAmount, delta, cumulativeAmount);
    }

    /// @notice The payee (or operator) closes: captures up to what the voucher grants, refunds the rest.
    function close(ChannelDescriptor calldata d, uint96 cumulativeAmount, uint96 captureAmount, bytes calldata signature) external {
        (bytes32 id, ChannelState storage s) = _open(d);
        _onlyPayeeSide(d);
        if (captureAmount < s.settled || captureAmount > s.deposit) revert InvalidCaptureAmount();
        if (captureAmount > s.settled) {
            if (captureAmount > cumulativeAmount) revert InvalidCaptureAmount();
            _requireVoucher(d, id, cumulativeAmount, signature);
        }
        _finalize(id, d, s, captureAmount);
    }

    /// @notice The payer starts the grace period after which it may withdraw unsettled funds.
    function requestClose(ChannelDescriptor calldata d) external {
        (bytes32 id, ChannelState storage s) = _open(d);
        if (msg.sender != d.payer) revert Unauthorized();
        if (s.closeRequestedAt == 0) s.closeRequestedAt = uint32(block.timestamp);
        emit CloseRequested(id, d.payer, d.payee, uint256(s.closeRequestedAt) + CLOSE_GRACE_PERIOD);
    }

    function withdraw(ChannelDescriptor calldata d) external {
        (bytes32 id, ChannelState storage s) = _open(d);
        if (msg.sender != d.payer) revert Unauthorized();
        if (s.closeRequestedAt == 0) revert CloseNotRequested();
        if (block.timestamp < uint256(s.closeRequestedAt) + CLOSE_GRACE_PERIOD) revert CloseGracePending();
        _finalize(id, d, s, s.settled);
    }

    // ---- views ---------------------------------------------------------------------------------

    function getChannel(ChannelDescriptor calldata d) external view returns (Channel memory) {
        return Channel(d, states[_channelId(d)]);
    }

    function getChannelState(bytes32 channelId) external view returns (ChannelState memory) {
        return states[channelId];
    }

    function getChannelStatesBatch(bytes32[] calldata channelIds) external view returns (ChannelState[] memory result) {
        result = new ChannelState[](channelIds.length);
        for (uint256 i = 0; i < channelIds.length; i++) result[i] = states[channelIds[i]];
    }

    function computeChannelId(
        address payer,
        address payee,
        address operator,
        address token,
        bytes32 salt,
        address authorizedSigner,
        bytes32 expiringNonceHash
    ) external view returns (bytes32) {
        return _channelId(ChannelDescriptor(payer, payee, operator, token, salt, authorizedSigner, expiringNonceHash));
    }

    function getVoucherDigest(bytes32 channelId, uint96 cumulativeAmount) public view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, cumulativeAmount))));
    }

    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, keccak256("TIP20 Channel Reserve"), keccak256("1"), block.chainid, address(this)));
    }

    // ---- internals -----------------------------------------------------------------------------

    function _channelId(ChannelDescriptor memory d) private view returns (bytes32) {
        return keccak256(
            abi.encode(d.payer, d.payee, d.operator, d.token, d.salt, d.authorizedSigner, d.expiringNonceHash, address(this), block.chainid)
        );
    }

    function _open(ChannelDescriptor calldata d) private view returns (bytes32 id, ChannelState storage s) {
        id = _channelId(d);
        s = states[id];
        if (s.deposit == 0) revert ChannelNotFound();
    }

    function _onlyPayeeSide(ChannelDescriptor calldata d) private view {
        if (msg.sender != d.payee && (d.operator == address(0) || msg.sender != d.operator)) revert Unauthorized();
    }

    /// @dev The transaction hash the Tempo RPC appended after `size` bytes of calldata, if any.
    function _consumeTransaction(uint256 size) private returns (bytes32 hash) {
        if (msg.data.length != size + 32) return bytes32(0);
        hash = bytes32(msg.data[size:size + 32]);
        if (appliedTransactions[hash]) revert TransactionAlreadyApplied();
        appliedTransactions[hash] = true;
    }

    function _finalize(bytes32 id, ChannelDescriptor calldata d, ChannelState storage s, uint96 captureAmount) private {
        uint96 toPayee = captureAmount - s.settled;
        uint96 refund = s.deposit - captureAmount;
        delete states[id];
        if (toPayee > 0) _push(d.token, d.payee, toPayee);
        if (refund > 0) _push(d.token, d.payer, refund);
        emit ChannelClosed(id, d.payer, d.payee, captureAmount, refund);
    }

    function _requireVoucher(ChannelDescriptor calldata d, bytes32 id, uint96 cumulativeAmount, bytes calldata signature) private view {
        address signer = d.authorizedSigner == address(0) ? d.payer : d.authorizedSigner;
        if (signature.length != 65) revert InvalidSignature();
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (uint256(s) > MAX_S) revert InvalidSignature();
        address recovered = ecrecover(getVoucherDigest(id, cumulativeAmount), v, r, s);
        if (recovered == address(0) || recovered != signer) revert InvalidSignature();
    }

    function _pull(address token, address from, uint96 amount) private {
        if (!ITIP20(token).transferFrom(from, address(this), amount)) revert TransferFailed();
    }

    function _push(address token, address to, uint96 amount) private {
        if (!ITIP20(token).transfer(to, amount)) revert TransferFailed();
    }
}
