import { parseAbi, parseAbiItem } from 'viem';

/**
 * The slices of our contracts' interfaces the chain ports call, written out so live mode needs no
 * compiler. A test (abis.test.ts) checks each entry against the compiled contracts.
 */
export const stablecoinAbi = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function transferWithMemo(address to, uint256 amount, bytes32 memo)',
  'event Transfer(address indexed from, address indexed to, uint256 amount)',
  'event TransferWithMemo(address indexed from, address indexed to, uint256 amount, bytes32 indexed memo)',
]);

export const payrollTreasuryAbi = parseAbi([
  'function createAccount(address admin) returns (uint256 accountId)',
  'function accountOf(uint256 accountId) view returns (address admin, uint256 available, uint256 locked)',
  'function isAgent(uint256 accountId, address agent) view returns (bool)',
  'function setAgent(uint256 accountId, address agent, bool allowed)',
  'function deposit(uint256 accountId, uint256 amount)',
  'function withdraw(uint256 accountId, address to, uint256 amount)',
  'function lock(uint256 accountId, uint256 amount)',
  'function unlock(uint256 accountId, uint256 amount)',
  'function executeBatchPayroll(address[] recipients, uint256[] amounts, bytes32[] memos, uint256 employerAccountId)',
  'function transferFromAccount(uint256 accountId, address to, uint256 amount, bytes32 memo)',
  'event AccountCreated(uint256 indexed accountId, address indexed admin)',
  'event PayrollPayment(uint256 indexed accountId, address indexed recipient, uint256 amount, bytes32 memo)',
]);

export const streamVestingAbi = parseAbi([
  'function setStream(address employee, uint256 accountId, uint256 ratePerSecond)',
  'function stopStream(address employee)',
  'function streamOf(address employee) view returns (uint256 accountId, uint256 ratePerSecond, uint64 accruingSince, bool active)',
  'function accruedOf(address employee) view returns (uint256)',
  'function claim(address employee) returns (uint256 amount)',
  'event Claimed(address indexed employee, uint256 indexed accountId, uint256 amount)',
  'event StreamStopped(address indexed employee, uint256 accrued)',
]);

export const yieldRouterAbi = parseAbi([
  'function sources() view returns (string[])',
  'function sourceApyBps() view returns (uint256[])',
  'function allocationOf(uint256 accountId) view returns (uint256[] allocation)',
  'function apyBps(uint256 accountId) view returns (uint256 weighted)',
  'function rebalance(uint256 accountId, uint256[] allocationBps)',
]);

export const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 amount)');

/** Tempo's TIP-403 registry interface (the precompile at 0x403c... on the real chain). */
export const tip403RegistryAbi = parseAbi([
  'function policyExists(uint64 policyId) view returns (bool)',
  'function isAuthorized(uint64 policyId, address user) view returns (bool)',
  'function createPolicyWithAccounts(address admin, uint8 policyType, address[] accounts) returns (uint64 policyId)',
  'function modifyPolicyWhitelist(uint64 policyId, address account, bool allowed)',
  'function modifyPolicyBlacklist(uint64 policyId, address account, bool restricted)',
  'event PolicyCreated(uint64 indexed policyId, address indexed updater, uint8 policyType)',
]);

/** Tempo's virtual-address registry interface (the precompile at 0xfdc0... on the real chain). */
export const addressRegistryAbi = parseAbi([
  'function registerVirtualMaster(bytes32 salt) returns (bytes4 masterId)',
  'function getMaster(bytes4 masterId) view returns (address)',
  // Our local registry's difficulty (AddressRegistry.sol); Tempo's own registry demands 4 zero bytes.
  'function proofOfWorkZeroBytes() view returns (uint8)',
  'function resolveVirtualAddress(address virtualAddr) view returns (address master)',
  'event MasterRegistered(bytes4 indexed masterId, address indexed masterAddress)',
]);

export const agentIdentityRegistryAbi = parseAbi([
  'function register(string agentURI) returns (uint256)',
  'function ownerOf(uint256 agentId) view returns (address)',
  'function tokenURI(uint256 agentId) view returns (string)',
  'event Registered(uint256 indexed agentId, string agentURI, address indexed owner)',
]);

export const agentReputationRegistryAbi = parseAbi([
  'function giveFeedback(uint256 agentId, uint8 score, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)',
  'function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns (uint64 count, uint8 averageScore)',
  'function getLastIndex(uint256 agentId, address clientAddress) view returns (uint64)',
  'event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, uint8 score, string indexed indexedTag1, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)',
]);

/** Every custom error our contracts raise, for naming reverts. */
export const contractErrorsAbi = parseAbi([
  'error Unauthorized()',
  // TIP20ChannelEscrow (its ABI is mppx's escrowAbi)
  'error InvalidPayee()',
  'error ZeroDeposit()',
  'error ChannelExists()',
  'error ChannelNotFound()',
  'error TransactionAlreadyApplied()',
  'error AmountNotIncreasing()',
  'error AmountExceedsDeposit()',
  'error InvalidCaptureAmount()',
  'error CloseNotRequested()',
  'error CloseGracePending()',
  'error TransferFailed()',
  'error InvalidRecipient()',
  'error InsufficientBalance(uint256 available, uint256 required)',
  'error InsufficientAllowance(uint256 allowed, uint256 required)',
  'error AuthorizationNotYetValid()',
  'error AuthorizationExpired()',
  'error AuthorizationAlreadyUsed()',
  'error CallerMustBePayee()',
  'error InvalidSignature()',
  'error UnknownAccount()',
  'error InsufficientAvailable(uint256 available, uint256 required)',
  'error LengthMismatch()',
  'error EmptyBatch()',
  'error NoStream()',
  'error NothingAccrued()',
  'error AllocationNotWhole(uint256 sumBps)',
  'error PolicyNotFound()',
  'error PolicyNotSimple()',
  'error InvalidPolicyType()',
  'error IncompatiblePolicyType()',
  'error MasterIdCollision(address master)',
  'error InvalidMasterAddress()',
  'error ProofOfWorkFailed()',
  'error VirtualAddressUnregistered()',
  'error NonexistentAgent(uint256 agentId)',
  'error NotAuthorized()',
  'error ScoreOutOfRange()',
  'error SelfFeedback()',
  'error UnknownFeedback()',
  'error AlreadyRevoked()',
  'error CallFailed(uint256 index)',
]);
