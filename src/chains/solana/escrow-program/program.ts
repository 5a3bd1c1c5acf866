import { Assembler, r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, type Register } from './sbpf.js';
import { ACCOUNT_LAYOUT, DISCRIMINATORS, EscrowProgramError, EscrowStatus, SEED_PREFIX, STATE, STATE_SIZE, SYSTEM_PROGRAM_BYTES, TOKEN_ACCOUNT, TOKEN_PROGRAM_BYTES } from './layout.js';

/**
 * The escrow program (spec 4.4): custody in a vault token account whose authority is the escrow's
 * state account, a program-derived address that only this program can sign for. Its instructions
 * (docs/decisions.md, "Escrow custody", lists their accounts and data; layout.ts the offsets):
 *
 * - initialize: creates the state account at PDA("escrow", escrow id), checks the vault is a plain
 *   token account the state owns, moves `amount` into it from the requester (who signed).
 * - submit_deliverable: the worker (or the validator, for a worker without keys) records the
 *   deliverable's hash, before `expires_at`; once.
 * - record_verdict: the validator records approved or rejected for a recorded deliverable; once.
 * - settle: anyone; after `approved`, pays the whole vault to a token account the worker owns and
 *   closes the vault (rent to the requester).
 * - refund: anyone; after `rejected`, or at `expires_at` without a verdict, pays the vault back to
 *   a token account the requester owns and closes it.
 *
 * A refused instruction ends with a custom program error (EscrowProgramError) naming the check.
 * Register use: r6 and r7 hold the handler's account or state pointers (kept across syscalls),
 * r8 and r9 are the macros' scratch, r1-r5 are free between syscalls.
 */

// The stack frame (offsets from r10, within its 4 KB).
const FRAME = {
  accounts: -64, // up to 8 pointers to the serialised accounts
  accountCount: -72,
  data: -80, // pointer to the instruction data
  dataLength: -88,
  programId: -96, // pointer to this program's id
  clock: -136, // 40 bytes: the Clock sysvar (unix_timestamp at +32)
  seedText: -144, // "escrow"
  seeds: -192, // 3 SolSignerSeed {addr, len}
  signers: -208, // 1 SolSignerSeeds {addr, len}
  instruction: -248, // SolInstruction {program_id, accounts, account_len, data, data_len}
  metas: -312, // 4 SolAccountMeta {pubkey, is_writable, is_signer}
  cpiData: -376, // 64 bytes
  infos: -600, // 4 SolAccountInfo (56 bytes each)
} as const;
const MAX_ACCOUNTS = 8;
const ACCOUNT_INFO_SIZE = 56;
// The loader's serialisation: data, then 10 KB of room to grow, aligned to 8, then rent_epoch.
const DATA_ROOM = 10 * 1024;

const failLabel = (error: EscrowProgramError) => `fail_${error}`;

export function escrowProgram(): Uint8Array {
  const a = new Assembler();
  const m = macros(a);
  parseInput(a, m);
  initialize(a, m);
  submitDeliverable(a, m);
  recordVerdict(a, m);
  release(a, m);
  // Failures: each check's own custom error.
  for (const error of Object.values(EscrowProgramError).filter((value): value is number => typeof value === 'number')) {
    a.label(failLabel(error)).mov(r0, error).exit();
  }
  return a.toElf();
}

type Macros = ReturnType<typeof macros>;

/** The instruction sequences every handler uses; r8 and r9 are their scratch registers. */
function macros(a: Assembler) {
  const account = (dst: Register, index: number) => a.ldx('dw', dst, r10, FRAME.accounts + 8 * index);
  const fail = (error: EscrowProgramError) => failLabel(error);

  /** Jumps to `otherwise` unless the 8 * words bytes at x+xOffset equal those at y+yOffset. */
  const requireEqual = (x: Register, xOffset: number, y: Register, yOffset: number, words: number, otherwise: string) => {
    for (let i = 0; i < words; i++) {
      a.ldx('dw', r8, x, xOffset + 8 * i).ldx('dw', r9, y, yOffset + 8 * i).jump('ne', r8, r9, otherwise);
    }
  };
  const requireKey = (x: Register, xOffset: number, y: Register, yOffset: number, otherwise: string) => requireEqual(x, xOffset, y, yOffset, 4, otherwise);
  const requireConstantKey = (x: Register, xOffset: number, key: Buffer, otherwise: string) => {
    for (let i = 0; i < 4; i++) a.ldx('dw', r8, x, xOffset + 8 * i).lddw(r9, key.readBigUInt64LE(8 * i)).jump('ne', r8, r9, otherwise);
  };
  const copy = (dst: Register, dstOffset: number, src: Register, srcOffset: number, bytes: number) => {
    for (let i = 0; i < bytes; i += 8) a.ldx('dw', r8, src, srcOffset + i).st('dw', dst, dstOffset + i, r8);
  };
  const succeed = () => a.mov(r0, 0).exit();
  const requireLength = (length: number, minimumAccounts: number) => {
    a.ldx('dw', r8, r10, FRAME.dataLength).jump('ne', r8, length, fail(EscrowProgramError.InvalidInstructionData));
    a.ldx('dw', r8, r10, FRAME.accountCount).jump('lt', r8, minimumAccounts, fail(EscrowProgramError.NotEnoughAccounts));
  };
  /** The account is an escrow state: owned by this program, of the state's size. */
  const requireState = (acct: Register) => {
    a.ldx('dw', r4, r10, FRAME.programId);
    requireKey(acct, ACCOUNT_LAYOUT.owner, r4, 0, fail(EscrowProgramError.NotEscrowState));
    a.ldx('dw', r8, acct, ACCOUNT_LAYOUT.dataLength).jump('ne', r8, STATE_SIZE, fail(EscrowProgramError.NotEscrowState));
  };
  /** dst = the data of state account `index`, which must be an escrow state in `status` (omitted: any). */
  const openState = (dst: Register, index: number, status?: EscrowStatus) => {
    account(dst, index);
    requireState(dst);
    a.add(dst, ACCOUNT_LAYOUT.data);
    if (status !== undefined) a.ldx('b', r8, dst, STATE.status).jump('ne', r8, status, fail(EscrowProgramError.WrongStatus));
  };
  const requireSigner = (acct: Register) => a.ldx('b', r8, acct, ACCOUNT_LAYOUT.isSigner).jump('eq', r8, 0, fail(EscrowProgramError.NotSigned));
  /** r8 = the cluster's unix time (clobbers r1-r5). */
  const now = () => a.mov(r1, r10).add(r1, FRAME.clock).syscall('sol_get_clock_sysvar').ldx('dw', r8, r10, FRAME.clock + 32);

  // Cross-program invocation: the C ABI's structures on the stack, pointing into the input region.
  const meta = (slot: number, acct: Register, writable: 0 | 1, signer: 0 | 1) => {
    const at = FRAME.metas + 16 * slot;
    a.mov(r8, acct).add(r8, ACCOUNT_LAYOUT.key).st('dw', r10, at, r8).st('b', r10, at + 8, writable).st('b', r10, at + 9, signer);
  };
  const accountInfo = (slot: number, acct: Register) => {
    const at = FRAME.infos + ACCOUNT_INFO_SIZE * slot;
    a.mov(r8, acct).add(r8, ACCOUNT_LAYOUT.key).st('dw', r10, at, r8);
    a.mov(r8, acct).add(r8, ACCOUNT_LAYOUT.lamports).st('dw', r10, at + 8, r8);
    a.ldx('dw', r8, acct, ACCOUNT_LAYOUT.dataLength).st('dw', r10, at + 16, r8);
    a.mov(r8, acct).add(r8, ACCOUNT_LAYOUT.data).st('dw', r10, at + 24, r8);
    a.mov(r8, acct).add(r8, ACCOUNT_LAYOUT.owner).st('dw', r10, at + 32, r8);
    a.st('dw', r10, at + 40, 0);
    a.ldx('b', r8, acct, ACCOUNT_LAYOUT.isSigner).st('b', r10, at + 48, r8);
    a.ldx('b', r8, acct, ACCOUNT_LAYOUT.isWritable).st('b', r10, at + 49, r8);
    a.ldx('b', r8, acct, ACCOUNT_LAYOUT.executable).st('b', r10, at + 50, r8);
  };
  /** Passes account `index` to the callee: as meta `slot` (when given) and as account info `slot`. */
  const pass = (slot: number, index: number, flags?: { writable: 0 | 1; signer: 0 | 1 }) => {
    account(r1, index);
    if (flags) meta(slot, r1, flags.writable, flags.signer);
    accountInfo(slot, r1);
  };
  const instruction = (programAccount: number, metaCount: number, dataLength: number) => {
    account(r1, programAccount);
    a.mov(r8, r1).add(r8, ACCOUNT_LAYOUT.key).st('dw', r10, FRAME.instruction, r8);
    a.mov(r8, r10).add(r8, FRAME.metas).st('dw', r10, FRAME.instruction + 8, r8);
    a.st('dw', r10, FRAME.instruction + 16, metaCount);
    a.mov(r8, r10).add(r8, FRAME.cpiData).st('dw', r10, FRAME.instruction + 24, r8);
    a.st('dw', r10, FRAME.instruction + 32, dataLength);
  };
  /** The state's signer seeds: "escrow", the escrow id, the bump (pointers given as base + offset). */
  const stateSeeds = (idBase: Register, idOffset: number, bumpBase: Register, bumpOffset: number) => {
    a.st('w', r10, FRAME.seedText, SEED_PREFIX.readInt32LE(0)).st('h', r10, FRAME.seedText + 4, SEED_PREFIX.readInt16LE(4));
    a.mov(r8, r10).add(r8, FRAME.seedText).st('dw', r10, FRAME.seeds, r8).st('dw', r10, FRAME.seeds + 8, SEED_PREFIX.length);
    a.mov(r8, idBase).add(r8, idOffset).st('dw', r10, FRAME.seeds + 16, r8).st('dw', r10, FRAME.seeds + 24, 16);
    a.mov(r8, bumpBase).add(r8, bumpOffset).st('dw', r10, FRAME.seeds + 32, r8).st('dw', r10, FRAME.seeds + 40, 1);
    a.mov(r8, r10).add(r8, FRAME.seeds).st('dw', r10, FRAME.signers, r8).st('dw', r10, FRAME.signers + 8, 3);
  };
  const invoke = (infoCount: number, signedByState: boolean) => {
    a.mov(r1, r10).add(r1, FRAME.instruction).mov(r2, r10).add(r2, FRAME.infos).mov(r3, infoCount);
    if (signedByState) a.mov(r4, r10).add(r4, FRAME.signers).mov(r5, 1);
    else a.mov(r4, 0).mov(r5, 0);
    a.syscall('sol_invoke_signed_c').jump('ne', r0, 0, fail(EscrowProgramError.InvocationFailed));
  };
  /** A token program call on [from, to (both writable), authority (signer)], its data in cpiData. */
  const tokenCall = (accounts: { from: number; to: number; authority: number; tokenProgram: number }, dataLength: number, signedByState: boolean) => {
    pass(0, accounts.from, { writable: 1, signer: 0 });
    pass(1, accounts.to, { writable: 1, signer: 0 });
    pass(2, accounts.authority, { writable: 0, signer: 1 });
    pass(3, accounts.tokenProgram);
    instruction(accounts.tokenProgram, 3, dataLength);
    invoke(4, signedByState);
  };
  return { account, fail, requireEqual, requireKey, requireConstantKey, copy, succeed, requireLength, openState, requireSigner, now, pass, instruction, stateSeeds, invoke, tokenCall };
}

/** Records where each account starts, the instruction data and the program id; dispatches. */
function parseInput(a: Assembler, { fail }: Macros) {
  a.ldx('dw', r2, r1, 0).jump('gt', r2, MAX_ACCOUNTS, fail(EscrowProgramError.UnsupportedAccounts));
  a.st('dw', r10, FRAME.accountCount, r2);
  a.mov(r3, r1).add(r3, 8).mov(r4, r10).add(r4, FRAME.accounts).mov(r5, 0);
  a.label('parse');
  a.jump('ge', r5, r2, 'parsed');
  // A repeated account is serialised as a back-reference; the program takes each account once.
  a.ldx('b', r6, r3, 0).jump('ne', r6, 0xff, fail(EscrowProgramError.UnsupportedAccounts));
  a.st('dw', r4, 0, r3);
  a.ldx('dw', r6, r3, ACCOUNT_LAYOUT.dataLength).add(r3, r6).add(r3, ACCOUNT_LAYOUT.data + DATA_ROOM + 7).and(r3, -8).add(r3, 8);
  a.add(r4, 8).add(r5, 1).goto('parse');
  a.label('parsed');
  a.ldx('dw', r6, r3, 0).st('dw', r10, FRAME.dataLength, r6).add(r3, 8).st('dw', r10, FRAME.data, r3);
  a.mov(r7, r3).add(r7, r6).st('dw', r10, FRAME.programId, r7);
  a.jump('lt', r6, 8, fail(EscrowProgramError.InvalidInstructionData));
  a.ldx('dw', r6, r3, 0);
  for (const [name, discriminator] of Object.entries(DISCRIMINATORS)) a.lddw(r7, discriminator.readBigUInt64LE(0)).jump('eq', r6, r7, name);
  a.goto(fail(EscrowProgramError.UnknownInstruction));
}

/**
 * accounts: 0 requester (signer, writable), 1 state (writable), 2 vault (writable), 3 source token
 * account (writable), 4 system program, 5 token program. data: see client.ts initializeInstruction.
 */
function initialize(a: Assembler, { account, fail, requireKey, requireConstantKey, copy, succeed, requireLength, pass, instruction, stateSeeds, invoke, tokenCall }: Macros) {
  a.label('initialize');
  requireLength(113, 6);
  a.ldx('dw', r5, r10, FRAME.data).ldx('dw', r8, r5, 24).jump('eq', r8, 0, fail(EscrowProgramError.ZeroAmount));
  account(r6, 4);
  requireConstantKey(r6, ACCOUNT_LAYOUT.key, SYSTEM_PROGRAM_BYTES, fail(EscrowProgramError.WrongProgram));
  account(r6, 5);
  requireConstantKey(r6, ACCOUNT_LAYOUT.key, TOKEN_PROGRAM_BYTES, fail(EscrowProgramError.WrongProgram));

  // The state account, created at PDA("escrow", id, bump): a second initialize finds it in use.
  a.st('w', r10, FRAME.cpiData, 0); // SystemInstruction::CreateAccount
  a.ldx('dw', r8, r5, 40).st('dw', r10, FRAME.cpiData + 4, r8); // lamports
  a.st('dw', r10, FRAME.cpiData + 12, STATE_SIZE);
  a.ldx('dw', r6, r10, FRAME.programId);
  copy(r10, FRAME.cpiData + 20, r6, 0, 32); // owner: this program
  pass(0, 0, { writable: 1, signer: 1 });
  pass(1, 1, { writable: 1, signer: 1 });
  pass(2, 4);
  instruction(4, 2, 52);
  a.ldx('dw', r5, r10, FRAME.data);
  stateSeeds(r5, 8, r5, 112);
  invoke(3, true);

  // The vault: a token account whose authority is the state, with no delegate or close authority.
  const vaultRefused = fail(EscrowProgramError.VaultNotSecure);
  account(r6, 2);
  account(r7, 1);
  requireConstantKey(r6, ACCOUNT_LAYOUT.owner, TOKEN_PROGRAM_BYTES, vaultRefused);
  a.ldx('dw', r8, r6, ACCOUNT_LAYOUT.dataLength).jump('ne', r8, TOKEN_ACCOUNT.size, vaultRefused);
  requireKey(r6, ACCOUNT_LAYOUT.data + TOKEN_ACCOUNT.owner, r7, ACCOUNT_LAYOUT.key, vaultRefused);
  a.ldx('w', r8, r6, ACCOUNT_LAYOUT.data + TOKEN_ACCOUNT.delegateTag).jump('ne', r8, 0, vaultRefused);
  a.ldx('w', r8, r6, ACCOUNT_LAYOUT.data + TOKEN_ACCOUNT.closeAuthorityTag).jump('ne', r8, 0, vaultRefused);
  a.ldx('b', r8, r6, ACCOUNT_LAYOUT.data + TOKEN_ACCOUNT.state).jump('ne', r8, 1, vaultRefused);

  // Token Transfer (3) of `amount` from the source into the vault, under the requester's signature.
  a.ldx('dw', r5, r10, FRAME.data);
  a.st('b', r10, FRAME.cpiData, 3).ldx('dw', r8, r5, 24).st('dw', r10, FRAME.cpiData + 1, r8);
  tokenCall({ from: 3, to: 2, authority: 0, tokenProgram: 5 }, 9, false);

  account(r7, 1);
  a.add(r7, ACCOUNT_LAYOUT.data);
  a.ldx('dw', r5, r10, FRAME.data);
  a.st('b', r7, STATE.status, EscrowStatus.Funded);
  a.ldx('b', r8, r5, 112).st('b', r7, STATE.bump, r8);
  copy(r7, STATE.escrowId, r5, 8, 16);
  copy(r7, STATE.amount, r5, 24, 16); // amount, expires_at
  copy(r7, STATE.worker, r5, 48, 64); // worker, validator
  account(r6, 0);
  copy(r7, STATE.requester, r6, ACCOUNT_LAYOUT.key, 32);
  account(r6, 2);
  copy(r7, STATE.vault, r6, ACCOUNT_LAYOUT.key, 32);
  copy(r7, STATE.mint, r6, ACCOUNT_LAYOUT.data + TOKEN_ACCOUNT.mint, 32);
  succeed();
}

/** accounts: 0 worker or validator (signer), 1 state (writable). */
function submitDeliverable(a: Assembler, { account, fail, requireEqual, requireKey, copy, succeed, requireLength, openState, requireSigner, now }: Macros) {
  a.label('submit_deliverable');
  requireLength(56, 2);
  account(r6, 0);
  openState(r7, 1, EscrowStatus.Funded);
  a.ldx('dw', r5, r10, FRAME.data);
  requireEqual(r5, 8, r7, STATE.escrowId, 2, fail(EscrowProgramError.WrongEscrow));
  requireSigner(r6);
  requireKey(r6, ACCOUNT_LAYOUT.key, r7, STATE.worker, 'deliverer_not_worker');
  a.goto('deliverer_known');
  a.label('deliverer_not_worker');
  requireKey(r6, ACCOUNT_LAYOUT.key, r7, STATE.validator, fail(EscrowProgramError.NotWorker));
  a.label('deliverer_known');
  now();
  a.ldx('dw', r9, r7, STATE.expiresAt).jump('sge', r8, r9, fail(EscrowProgramError.Expired));
  a.ldx('dw', r5, r10, FRAME.data);
  copy(r7, STATE.deliverable, r5, 24, 32);
  a.st('b', r7, STATE.status, EscrowStatus.Delivered);
  succeed();
}

/** accounts: 0 validator (signer), 1 state (writable); data: approved (0 or 1). */
function recordVerdict(a: Assembler, { account, fail, requireKey, succeed, requireLength, openState, requireSigner }: Macros) {
  a.label('record_verdict');
  requireLength(9, 2);
  account(r6, 0);
  openState(r7, 1, EscrowStatus.Delivered);
  requireSigner(r6);
  requireKey(r6, ACCOUNT_LAYOUT.key, r7, STATE.validator, fail(EscrowProgramError.NotValidator));
  a.ldx('dw', r5, r10, FRAME.data).ldx('b', r8, r5, 8);
  a.jump('eq', r8, 1, 'approved').jump('ne', r8, 0, fail(EscrowProgramError.InvalidInstructionData));
  a.st('b', r7, STATE.status, EscrowStatus.Rejected);
  succeed();
  a.label('approved');
  a.st('b', r7, STATE.status, EscrowStatus.Approved);
  succeed();
}

/**
 * settle and refund. accounts: 0 state (writable), 1 vault (writable), 2 destination token account
 * (writable), 3 requester (writable: the vault's rent), 4 token program.
 */
function release(a: Assembler, { account, fail, requireKey, requireConstantKey, succeed, requireLength, openState, now, stateSeeds, tokenCall }: Macros) {
  a.label('settle');
  requireLength(8, 5);
  openState(r7, 0, EscrowStatus.Approved);
  a.mov(r6, r7).add(r6, STATE.worker);
  a.goto('release');

  a.label('refund');
  requireLength(8, 5);
  openState(r7, 0);
  a.mov(r6, r7).add(r6, STATE.requester);
  a.ldx('b', r8, r7, STATE.status).jump('eq', r8, EscrowStatus.Rejected, 'release');
  a.jump('eq', r8, EscrowStatus.Funded, 'refund_at_expiry').jump('ne', r8, EscrowStatus.Delivered, fail(EscrowProgramError.WrongStatus));
  a.label('refund_at_expiry');
  now();
  a.ldx('dw', r9, r7, STATE.expiresAt).jump('slt', r8, r9, fail(EscrowProgramError.NotExpired));

  // r7: the state's data; r6: where in it the destination's owner is (worker or requester).
  a.label('release');
  account(r1, 1);
  requireKey(r1, ACCOUNT_LAYOUT.key, r7, STATE.vault, fail(EscrowProgramError.WrongVault));
  const destinationRefused = fail(EscrowProgramError.WrongDestination);
  account(r2, 2);
  requireConstantKey(r2, ACCOUNT_LAYOUT.owner, TOKEN_PROGRAM_BYTES, destinationRefused);
  requireKey(r2, ACCOUNT_LAYOUT.data + TOKEN_ACCOUNT.mint, r7, STATE.mint, destinationRefused);
  requireKey(r2, ACCOUNT_LAYOUT.data + TOKEN_ACCOUNT.owner, r6, 0, destinationRefused);
  account(r3, 3);
  requireKey(r3, ACCOUNT_LAYOUT.key, r7, STATE.requester, fail(EscrowProgramError.WrongRentReceiver));
  account(r4, 4);
  requireConstantKey(r4, ACCOUNT_LAYOUT.key, TOKEN_PROGRAM_BYTES, fail(EscrowProgramError.WrongProgram));
  stateSeeds(r7, STATE.escrowId, r7, STATE.bump);

  // Token Transfer (3) of the whole vault, then CloseAccount (9); both signed for the state.
  account(r1, 1);
  a.st('b', r10, FRAME.cpiData, 3).ldx('dw', r8, r1, ACCOUNT_LAYOUT.data + TOKEN_ACCOUNT.amount).st('dw', r10, FRAME.cpiData + 1, r8);
  tokenCall({ from: 1, to: 2, authority: 0, tokenProgram: 4 }, 9, true);
  a.st('b', r10, FRAME.cpiData, 9);
  tokenCall({ from: 1, to: 3, authority: 0, tokenProgram: 4 }, 1, true);

  a.mov(r8, r7).add(r8, STATE.worker).jump('eq', r6, r8, 'settled');
  a.st('b', r7, STATE.status, EscrowStatus.Refunded);
  succeed();
  a.label('settled');
  a.st('b', r7, STATE.status, EscrowStatus.Settled);
  succeed();
}
