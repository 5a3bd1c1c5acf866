import { createHash } from 'node:crypto';
import { getAddressEncoder } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';

/** The escrow program's byte layouts, shared by the program (program.ts) and its clients (client.ts). */

/** Anchor-style: the first 8 bytes of sha256("global:<name>"). */
const discriminator = (name: string) => createHash('sha256').update(`global:${name}`).digest().subarray(0, 8);
export const DISCRIMINATORS = {
  initialize: discriminator('initialize'),
  submit_deliverable: discriminator('submit_deliverable'),
  record_verdict: discriminator('record_verdict'),
  settle: discriminator('settle'),
  refund: discriminator('refund'),
} as const;

/** The state account's seeds: PDA("escrow", escrow id as 16 UUID bytes). */
export const SEED_PREFIX = Buffer.from('escrow');

export enum EscrowStatus {
  Funded = 1,
  Delivered = 2,
  Approved = 3,
  Rejected = 4,
  Settled = 5,
  Refunded = 6,
}

/** The state account's data. */
export const STATE = {
  status: 0, // u8 EscrowStatus
  bump: 1, // u8
  escrowId: 8, // [16]
  amount: 24, // u64: what initialize moved in
  expiresAt: 32, // i64 unix seconds
  requester: 40, // [32] refunds go to its token account; the vault's rent to it
  worker: 72, // [32] settlement goes to its token account
  validator: 104, // [32] records verdicts
  vault: 136, // [32]
  mint: 168, // [32]
  deliverable: 200, // [32] the recorded hash
} as const;
export const STATE_SIZE = 232;

/** Custom program errors: each refusal names its check. */
export enum EscrowProgramError {
  NotEnoughAccounts = 1,
  UnsupportedAccounts = 2,
  UnknownInstruction = 3,
  InvalidInstructionData = 4,
  WrongProgram = 5,
  NotEscrowState = 6,
  WrongEscrow = 7,
  WrongStatus = 8,
  NotSigned = 9,
  NotWorker = 10,
  NotValidator = 11,
  Expired = 12,
  NotExpired = 13,
  WrongVault = 14,
  WrongDestination = 15,
  WrongRentReceiver = 16,
  ZeroAmount = 17,
  VaultNotSecure = 18,
  InvocationFailed = 19,
}

/** Where the loader puts each field of a (non-duplicate) account in the program's input. */
export const ACCOUNT_LAYOUT = {
  isSigner: 1,
  isWritable: 2,
  executable: 3,
  key: 8,
  owner: 40,
  lamports: 72,
  dataLength: 80,
  data: 88,
} as const;

/** An SPL token account's data (165 bytes). */
export const TOKEN_ACCOUNT = { mint: 0, owner: 32, amount: 64, delegateTag: 72, state: 108, closeAuthorityTag: 129, size: 165 } as const;

export const TOKEN_PROGRAM_BYTES = Buffer.from(getAddressEncoder().encode(TOKEN_PROGRAM_ADDRESS));
export const SYSTEM_PROGRAM_BYTES = Buffer.alloc(32);
