import {
  AccountRole,
  getAddressDecoder,
  getAddressEncoder,
  getProgramDerivedAddress,
  type Address,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { DISCRIMINATORS, EscrowStatus, SEED_PREFIX, STATE, STATE_SIZE } from './layout.js';

/** Building the escrow program's instructions and reading its state (the program: program.ts). */

const SYSTEM_PROGRAM = '11111111111111111111111111111111' as Address;
const signerMeta = (signer: TransactionSigner, role = AccountRole.READONLY_SIGNER) => ({ address: signer.address, role, signer }) as never;
const writable = (address: Address) => ({ address, role: AccountRole.WRITABLE });
const readonly = (address: Address) => ({ address, role: AccountRole.READONLY });

export function uuidBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TypeError(`not a UUID: ${uuid}`);
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

export function uuidString(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The escrow's accounts: its state (the `escrow_pda`) and its vault, the state's token account. */
export async function escrowAccounts(program: Address, escrowId: string, mint: Address): Promise<{ state: Address; bump: number; vault: Address }> {
  const [state, bump] = await getProgramDerivedAddress({ programAddress: program, seeds: [SEED_PREFIX, uuidBytes(escrowId)] });
  const [vault] = await findAssociatedTokenPda({ owner: state, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return { state, bump, vault };
}

export function initializeInstruction(input: {
  program: Address;
  requester: TransactionSigner;
  /** The requester's token account the amount comes from. */
  source: Address;
  state: Address;
  bump: number;
  vault: Address;
  escrowId: string;
  amount: bigint;
  /** Unix seconds. */
  expiresAt: bigint;
  /** Rent for the state account (STATE_SIZE bytes). */
  stateLamports: bigint;
  worker: Address;
  validator: Address;
}): Instruction {
  const data = Buffer.alloc(113);
  DISCRIMINATORS.initialize.copy(data, 0);
  data.set(uuidBytes(input.escrowId), 8);
  data.writeBigUInt64LE(input.amount, 24);
  data.writeBigInt64LE(input.expiresAt, 32);
  data.writeBigUInt64LE(input.stateLamports, 40);
  data.set(getAddressEncoder().encode(input.worker), 48);
  data.set(getAddressEncoder().encode(input.validator), 80);
  data[112] = input.bump;
  return {
    programAddress: input.program,
    accounts: [
      signerMeta(input.requester, AccountRole.WRITABLE_SIGNER),
      writable(input.state),
      writable(input.vault),
      writable(input.source),
      readonly(SYSTEM_PROGRAM),
      readonly(TOKEN_PROGRAM_ADDRESS),
    ],
    data: new Uint8Array(data),
  };
}

/** The worker's (or, for a worker without keys, the validator's) record of the deliverable's hash. */
export function submitDeliverableInstruction(input: { program: Address; deliverer: TransactionSigner; state: Address; escrowId: string; hash: Uint8Array }): Instruction {
  const data = new Uint8Array(56);
  data.set(DISCRIMINATORS.submit_deliverable, 0);
  data.set(uuidBytes(input.escrowId), 8);
  data.set(input.hash, 24);
  return { programAddress: input.program, accounts: [signerMeta(input.deliverer, AccountRole.WRITABLE_SIGNER), writable(input.state)], data };
}

export function recordVerdictInstruction(input: { program: Address; validator: TransactionSigner; state: Address; approved: boolean }): Instruction {
  const data = new Uint8Array(9);
  data.set(DISCRIMINATORS.record_verdict, 0);
  data[8] = input.approved ? 1 : 0;
  return { programAddress: input.program, accounts: [signerMeta(input.validator), writable(input.state)], data };
}

/**
 * settle (to a token account the worker owns) or refund (to one the requester owns). Anyone may
 * send it; `requester` receives the vault's rent when it closes.
 */
export function releaseInstruction(
  kind: 'settle' | 'refund',
  input: { program: Address; state: Address; vault: Address; destination: Address; requester: Address },
): Instruction {
  return {
    programAddress: input.program,
    accounts: [writable(input.state), writable(input.vault), writable(input.destination), writable(input.requester), readonly(TOKEN_PROGRAM_ADDRESS)],
    data: new Uint8Array(DISCRIMINATORS[kind]),
  };
}

export interface EscrowState {
  status: EscrowStatus;
  escrowId: string;
  amount: bigint;
  expiresAt: bigint;
  requester: Address;
  worker: Address;
  validator: Address;
  vault: Address;
  mint: Address;
  /** The recorded deliverable hash (hex), once delivered. */
  deliverable: string | null;
}

export function decodeEscrowState(data: Uint8Array): EscrowState {
  if (data.length !== STATE_SIZE) throw new TypeError(`an escrow state is ${STATE_SIZE} bytes, not ${data.length}`);
  const bytes = Buffer.from(data);
  const key = (offset: number) => getAddressDecoder().decode(bytes.subarray(offset, offset + 32));
  const hash = bytes.subarray(STATE.deliverable, STATE.deliverable + 32);
  return {
    status: bytes[STATE.status] as EscrowStatus,
    escrowId: uuidString(bytes.subarray(STATE.escrowId, STATE.escrowId + 16)),
    amount: bytes.readBigUInt64LE(STATE.amount),
    expiresAt: bytes.readBigInt64LE(STATE.expiresAt),
    requester: key(STATE.requester),
    worker: key(STATE.worker),
    validator: key(STATE.validator),
    vault: key(STATE.vault),
    mint: key(STATE.mint),
    deliverable: hash.some((byte) => byte !== 0) ? hash.toString('hex') : null,
  };
}
