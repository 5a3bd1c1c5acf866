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
import { beforeAll, describe, expect, it } from 'vitest';
import { DISCRIMINATORS, LOCAL_ESCROW_PROGRAM_ID, submitDeliverableInstruction } from '../../chains/solana/escrow-program/index.js';
import { inspectSignedDeliverable, uriHash } from './signed-deliverable.js';

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
  const instruction = () => submitDeliverableInstruction({ program, deliverer: worker, state: escrowAccount, escrowId, hash });

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
    const data = submitDeliverableInstruction({ program, deliverer: { address: program } as TransactionSigner, state: program, escrowId, hash }).data!;
    expect(data.length).toBe(56);
    expect(Buffer.from(data.subarray(0, 8)).equals(DISCRIMINATORS.submit_deliverable)).toBe(true);
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
    const unsigned = await wire(other, [submitDeliverableInstruction({ program, deliverer: { address: worker.address } as never, state: escrowAccount, escrowId, hash })], {
      partial: true,
    });
    const badData: Instruction = { ...instruction(), data: new Uint8Array(55) };
    const unsignedWorker: Instruction = { ...instruction(), accounts: [{ address: other.address, role: AccountRole.WRITABLE }, { address: escrowAccount, role: AccountRole.WRITABLE }] };
    // The program writes the escrow's state: a read-only state account could never land.
    const readonlyState: Instruction = { ...instruction(), accounts: [instruction().accounts![0]!, { address: escrowAccount, role: AccountRole.READONLY }] };
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
      [await wire(worker, [readonlyState]), 'INSTRUCTION_INVALID'],
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
