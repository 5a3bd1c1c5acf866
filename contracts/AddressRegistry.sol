// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice Virtual deposit addresses (spec 2.13), mirroring the interface of Tempo's address
/// registry. A virtual address is 20 bytes: a 4-byte masterId, the 10-byte magic 0xFD..FD, then a
/// 6-byte userTag. A master registers once with a salt whose hash proves work:
/// keccak256(master, salt) must begin with `proofOfWorkZeroBytes` zero bytes (4 on real chains).
/// The masterId is the next 4 bytes of that hash.
contract AddressRegistry {
    bytes10 public constant VIRTUAL_MAGIC = 0xFDFDFDFDFDFDFDFDFDFD;
    uint8 public immutable proofOfWorkZeroBytes;

    mapping(bytes4 => address) private _masters;

    event MasterRegistered(bytes4 indexed masterId, address indexed masterAddress);

    error MasterIdCollision(address master);
    error InvalidMasterAddress();
    error ProofOfWorkFailed();
    error VirtualAddressUnregistered();

    constructor(uint8 zeroBytes) {
        require(zeroBytes <= 28, "difficulty out of range");
        proofOfWorkZeroBytes = zeroBytes;
    }

    function registerVirtualMaster(bytes32 salt) external returns (bytes4 masterId) {
        if (msg.sender == address(0) || isVirtualAddress(msg.sender)) revert InvalidMasterAddress();
        bytes32 proof = keccak256(abi.encodePacked(msg.sender, salt));
        for (uint256 i = 0; i < proofOfWorkZeroBytes; i++) {
            if (proof[i] != 0) revert ProofOfWorkFailed();
        }
        masterId = bytes4(proof << 32);
        address holder = _masters[masterId];
        if (holder != address(0)) revert MasterIdCollision(holder);
        _masters[masterId] = msg.sender;
        emit MasterRegistered(masterId, msg.sender);
    }

    function getMaster(bytes4 masterId) external view returns (address) {
        return _masters[masterId];
    }

    function isVirtualAddress(address addr) public pure returns (bool) {
        return bytes10(bytes20(addr) << 32) == VIRTUAL_MAGIC;
    }

    function decodeVirtualAddress(address addr) public pure returns (bool isVirtual, bytes4 masterId, bytes6 userTag) {
        bytes20 raw = bytes20(addr);
        isVirtual = bytes10(raw << 32) == VIRTUAL_MAGIC;
        masterId = bytes4(raw);
        userTag = bytes6(raw << 112);
    }

    /// @notice The master behind a virtual address; reverts for an unregistered or non-virtual one.
    function resolveVirtualAddress(address virtualAddr) public view returns (address master) {
        (bool isVirtual, bytes4 masterId, ) = decodeVirtualAddress(virtualAddr);
        master = isVirtual ? _masters[masterId] : address(0);
        if (master == address(0)) revert VirtualAddressUnregistered();
    }

    /// @notice Where a transfer to `to` lands: its master when virtual, else `to` itself.
    function resolveRecipient(address to) external view returns (address) {
        return isVirtualAddress(to) ? resolveVirtualAddress(to) : to;
    }
}
