import { generateKeyPairSigner, getCompiledTransactionMessageDecoder, getTransactionDecoder, type Address as SolanaAddress } from '@solana/kit';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { tempo } from 'mppx/client';
import { createClient, decodeFunctionData, http, parseAbi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { Transaction as TempoTransaction } from 'viem/tempo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';

/** Unmodified payment clients building payments against the local dev RPC, over real HTTP. */
let t: TestApp;
let server: LoopbackServer;
let base: string;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  base = server.url;
});

afterAll(async () => {
  await server.close();
  await t.close();
});

const faucet = (network: string, address: string, amount: string) =>
  t.request('POST', '/api/dev/faucet', { body: { network, address, amount } }).then((r) => expect(r.status).toBe(200));

const rpc = async (method: string, params: unknown[]) =>
  (await (await fetch(`${base}/api/dev/rpc/tempo`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json()) as {
    result?: string;
    error?: { code: number; message: string };
  };

describe('Tempo call batches', () => {
  const memoTransfer = parseAbi(['function transferWithMemo(address to, uint256 amount, bytes32 memo)']);

  it('estimates gas for a batch as the sum of its calls', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await faucet('eip155:4217', payer.address, '5');
    const token = t.embeddedChains!.tempo.contracts.stablecoin!;
    // transferWithMemo(payee, 0.01, memo)
    const data = `0x95777d59${payer.address.slice(2).toLowerCase().padStart(64, '0')}${(10_000).toString(16).padStart(64, '0')}${'ab'.repeat(32)}` as Hex;
    expect(decodeFunctionData({ abi: memoTransfer, data }).functionName).toBe('transferWithMemo');
    const call = { to: token, data, value: '0x' };
    const one = await rpc('eth_estimateGas', [{ from: payer.address, type: '0x76', calls: [call] }]);
    const two = await rpc('eth_estimateGas', [{ from: payer.address, type: '0x76', calls: [call, call] }]);
    const plain = await rpc('eth_estimateGas', [{ from: payer.address, to: token, data }]);
    expect(BigInt(one.result!)).toBe(BigInt(plain.result!));
    expect(BigInt(two.result!)).toBe(2n * BigInt(one.result!) - 21_000n);

    // A call the sender cannot pay reverts the estimate; a malformed batch is refused.
    const broke = privateKeyToAccount(generatePrivateKey()).address;
    expect((await rpc('eth_estimateGas', [{ from: broke, type: '0x76', calls: [call] }])).error?.code).toBe(3);
    expect((await rpc('eth_estimateGas', [{ from: payer.address, calls: [] }])).error?.code).toBe(-32602);
    expect((await rpc('eth_estimateGas', [{ from: payer.address, calls: 'nope' }])).error?.code).toBe(-32602);
  });

  it('lets the unmodified mppx client sign a Tempo charge', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    await faucet('eip155:4217', payer.address, '5');
    const token = t.embeddedChains!.tempo.contracts.stablecoin!;
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const client = createClient({ chain: tempoChain, transport: http(`${base}/api/dev/rpc/tempo`), account: payer });
    const method = tempo.charge({ account: payer, getClient: () => client });

    const credential = await method.createCredential({
      challenge: {
        id: 'challenge-1',
        realm: 'local.test',
        method: 'tempo',
        intent: 'charge',
        request: { amount: '10000', currency: token, recipient, methodDetails: { chainId: 4217 } },
      },
      context: {},
    } as never);

    const decoded = JSON.parse(Buffer.from(credential.replace(/^Payment /, ''), 'base64url').toString('utf8')) as {
      payload: { type: string; signature: Hex };
      source: string;
    };
    expect(decoded.payload.type).toBe('transaction');
    expect(decoded.source).toBe(`did:pkh:eip155:4217:${payer.address}`);
    const transaction = TempoTransaction.deserialize(decoded.payload.signature) as { chainId: number; calls: { to: Address; data: Hex }[] };
    expect(transaction.chainId).toBe(4217);
    expect(transaction.calls).toHaveLength(1);
    expect(transaction.calls[0]!.to.toLowerCase()).toBe(token.toLowerCase());
    const { functionName, args } = decodeFunctionData({ abi: memoTransfer, data: transaction.calls[0]!.data });
    expect(functionName).toBe('transferWithMemo');
    expect(args.slice(0, 2)).toEqual([recipient, 10_000n]);
  });
});

describe('Solana', () => {
  it('lets the unmodified x402 SVM client build an exact payment', async () => {
    const solana = t.embeddedChains!.solana;
    const payer = await generateKeyPairSigner();
    const payTo = (await generateKeyPairSigner()).address;
    await faucet(solana.network, payer.address, '5');
    const scheme = new ExactSvmScheme(payer, { rpcUrl: `${base}/api/dev/rpc/solana` });

    const { payload } = await scheme.createPaymentPayload(2, {
      scheme: 'exact',
      network: solana.network as `solana:${string}`,
      asset: solana.mint,
      amount: '10000',
      payTo,
      maxTimeoutSeconds: 60,
      extra: { feePayer: solana.operator.address },
    });

    const transaction = getTransactionDecoder().decode(Buffer.from((payload as { transaction: string }).transaction, 'base64'));
    const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    expect(message.lifetimeToken).toBe(solana.latestBlockhash());
    const accounts = message.staticAccounts as SolanaAddress[];
    expect(accounts[0]).toBe(solana.operator.address); // the facilitator pays the fee
    expect(accounts).toContain(payer.address);
    expect(accounts).toContain(solana.mint);
    expect(transaction.signatures[payer.address]).toBeTruthy(); // signed by the payer, fee payer to sign
    expect(transaction.signatures[solana.operator.address]).toBeNull();
  });
});
