import { randomUUID } from 'node:crypto';
import {
  AccountRole,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  getTransactionEncoder,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type TransactionSigner,
} from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../../../test/support/database.js';
import { escrowProgramElf, LOCAL_ESCROW_PROGRAM_ID } from '../../chains/embedded/escrow-program.js';
import { EmbeddedSolana } from '../../chains/embedded/solana.js';
import { openDatabase, type Database } from '../../db/client.js';
import { migrate } from '../../db/migrate.js';
import { inspectSignedDeliverable, submitDeliverableInstruction, SUBMIT_DELIVERABLE_DISCRIMINATOR, uriHash } from './signed-deliverable.js';

const BLOCKHASH = { blockhash: '4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi' as Blockhash, lastValidBlockHeight: 10n ** 9n };
const program = LOCAL_ESCROW_PROGRAM_ID;

async function wire(feePayer: TransactionSigner, instructions: Instruction[], options: { partial?: boolean; blockhash?: typeof BLOCKHASH } = {}) {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(options.blockhash ?? BLOCKHASH, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = options.partial ? await partiallySignTransactionMessageWithSigners(message) : await signTransactionMessageWithSigners(message);
  return getBase64EncodedWireTransaction(signed);
}

describe('submit_deliverable codec', () => {
  let worker: KeyPairSigner;
  let escrowAccount: Address;
  const escrowId = randomUUID();
  const hash = uriHash('https://example.com/report.md');
  const instruction = () => submitDeliverableInstruction({ programAddress: program, worker, escrowAccount, escrowId, uriHash: hash });

  beforeAll(async () => {
    worker = await generateKeyPairSigner();
    escrowAccount = (await generateKeyPairSigner()).address;
  });

  it('round-trips the escrow id, account, hash, fee payer and signature', async () => {
    const transaction = await wire(worker, [instruction()]);
    const inspected = inspectSignedDeliverable(transaction, { programAddress: program });
    expect(inspected).toMatchObject({ ok: true, feePayer: worker.address, worker: worker.address, escrowId, escrowAccount, wire: transaction });
    if (!inspected.ok) return;
    expect(Buffer.from(inspected.uriHash).equals(Buffer.from(hash))).toBe(true);
    expect(inspected.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
  });

  it('hashes the URI as UTF-8 SHA-256 and lays out 56 bytes of data', () => {
    expect(Buffer.from(uriHash('abc')).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const data = submitDeliverableInstruction({ programAddress: program, worker: { address: program } as TransactionSigner, escrowAccount: program, escrowId, uriHash: hash }).data!;
    expect(data.length).toBe(56);
    expect(Buffer.from(data.subarray(0, 8)).equals(Buffer.from(SUBMIT_DELIVERABLE_DISCRIMINATOR))).toBe(true);
    expect(Buffer.from(data.subarray(8, 24)).toString('hex')).toBe(escrowId.replace(/-/g, ''));
  });

  it('refuses garbage, oversize, missing and forged signatures, and malformed instructions', async () => {
    const other = await generateKeyPairSigner();
    const good = await wire(worker, [instruction()]);
    const forged = (() => {
      const decoded = getTransactionDecoder().decode(Buffer.from(good, 'base64'));
      const signature = new Uint8Array(decoded.signatures[worker.address]!);
      signature[0] = signature[0]! ^ 1;
      return Buffer.from(getTransactionEncoder().encode({ ...decoded, signatures: { ...decoded.signatures, [worker.address]: signature } })).toString('base64');
    })();
    // The worker is an extra signer the fee payer's wallet left unsigned.
    const unsigned = await wire(other, [submitDeliverableInstruction({ programAddress: program, worker: { address: worker.address } as never, escrowAccount, escrowId, uriHash: hash })], {
      partial: true,
    });
    const badData: Instruction = { ...instruction(), data: new Uint8Array(55) };
    const unsignedWorker: Instruction = { ...instruction(), accounts: [{ address: other.address, role: AccountRole.WRITABLE }, { address: escrowAccount, role: AccountRole.READONLY }] };
    const cases: [string, string][] = [
      ['not base64!', 'TRANSACTION_INVALID'],
      [Buffer.from('not a transaction').toString('base64'), 'TRANSACTION_INVALID'],
      [Buffer.alloc(1300, 1).toString('base64'), 'TRANSACTION_INVALID'],
      [forged, 'SIGNATURE_INVALID'],
      [unsigned, 'SIGNATURE_MISSING'],
      [await wire(worker, []), 'INSTRUCTION_MISSING'],
      [await wire(worker, [instruction(), instruction()]), 'INSTRUCTION_INVALID'],
      [await wire(worker, [badData]), 'INSTRUCTION_INVALID'],
      [await wire(worker, [unsignedWorker]), 'INSTRUCTION_INVALID'],
    ];
    for (const [transaction, code] of cases) {
      expect({ code: (inspectSignedDeliverable(transaction, { programAddress: program }) as { code?: string }).code }).toEqual({ code });
    }
    // Another fee payer is the caller's to refuse: the codec reports both parties.
    const paidByOther = inspectSignedDeliverable(await wire(other, [instruction()]), { programAddress: program });
    expect(paidByOther).toMatchObject({ ok: true, feePayer: other.address, worker: worker.address });
    // For another program the same transaction holds no submit_deliverable.
    expect(inspectSignedDeliverable(good, { programAddress: escrowAccount })).toMatchObject({ ok: false, code: 'INSTRUCTION_MISSING' });
  });
});

describe('the local escrow program on LiteSVM', () => {
  let target: TestDatabaseTarget;
  let database: Database;

  beforeAll(async () => {
    target = await createTestDatabaseTarget();
    database = await openDatabase({ url: target.url, dataDir: null });
    await migrate(database);
  });
  afterAll(async () => {
    await database.close();
    await target.drop();
  });

  it('is a minimal ELF: header, eight instructions, two named sections', () => {
    const elf = Buffer.from(escrowProgramElf());
    expect(elf.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(elf.readUInt16LE(18)).toBe(247);
    expect(elf.length).toBeLessThan(512);
  });

  it('lands the worker-signed instruction, fails an unsigned worker, and survives a reopen', async () => {
    const chain = await EmbeddedSolana.open(database.db);
    const [worker, payer] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    await chain.airdrop(worker.address, 1_000_000_000n);
    await chain.airdrop(payer.address, 1_000_000_000n);
    const blockhash = { blockhash: chain.latestBlockhash() as Blockhash, lastValidBlockHeight: 10n ** 9n };
    const escrowAccount = (await generateKeyPairSigner()).address;
    const submit = submitDeliverableInstruction({ programAddress: program, worker, escrowAccount, escrowId: randomUUID(), uriHash: uriHash('data:,x') });
    const landed = await chain.sendTransaction(await wire(worker, [submit], { blockhash }));
    expect(landed.error).toBeUndefined();

    // The program itself refuses an instruction whose first account did not sign.
    const unsignedWorker: Instruction = { ...submit, accounts: [{ address: worker.address, role: AccountRole.WRITABLE }, submit.accounts![1]!] };
    const refused = await chain.sendTransaction(await wire(payer, [unsignedWorker], { blockhash }));
    expect(refused.error).toMatch(/InstructionErrorCustom \{ code: 1 \}/);

    const reopened = await EmbeddedSolana.open(database.db);
    const again = submitDeliverableInstruction({ programAddress: program, worker, escrowAccount, escrowId: randomUUID(), uriHash: uriHash('data:,y') });
    expect((await reopened.sendTransaction(await wire(worker, [again], { blockhash }))).error).toBeUndefined();
  });
});
