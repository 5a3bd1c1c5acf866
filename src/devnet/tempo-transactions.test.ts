import { createClient, encodeFunctionData, erc20Abi, http, keccak256, type Address, type Hex } from 'viem';
import { prepareTransactionRequest, signTransaction } from 'viem/actions';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { startDevnet, type RunningDevnet } from './devnet.js';

/** The devnet's /tempo applies signed Tempo transactions as a node does (what live rail A broadcasts). */
describe("the devnet's Tempo RPC and signed Tempo transactions", () => {
  let devnet: RunningDevnet;
  let stablecoin: Address;
  const payer = privateKeyToAccount(generatePrivateKey());
  const recipient = privateKeyToAccount(generatePrivateKey()).address;

  beforeAll(async () => {
    devnet = await startDevnet({ port: 0, host: '127.0.0.1', dataDir: null, virtualMasterZeroBytes: 0, log: createLogger('silent') });
    stablecoin = devnet.chains.tempo.contracts.stablecoin!;
    await fetch(`${devnet.url}/faucet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ network: 'eip155:4217', address: payer.address, amount: '1.00' }),
    });
  }, 120_000);
  afterAll(async () => devnet?.close());

  const rpc = async (method: string, params: unknown[]) =>
    (await (
      await fetch(`${devnet.url}/tempo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
    ).json()) as { result?: Record<string, unknown> & { logs: unknown[] }; error?: { code: number; message: string } };
  const balance = (holder: Address) => devnet.chains.tempo.connection.publicClient.readContract({ address: stablecoin, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
  // With gas given, nothing is estimated before signing: the devnet sees even a transfer that would revert.
  const signedTransfer = async (amount: bigint): Promise<Hex> => {
    const client = createClient({ chain: tempoChain, transport: http(`${devnet.url}/tempo`), account: payer });
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [recipient, amount] });
    const prepared = await prepareTransactionRequest(client, { account: payer, calls: [{ to: stablecoin, data }], nonceKey: 'expiring', feeToken: stablecoin, gas: 200_000n } as never);
    return signTransaction(client, prepared as never);
  };

  it('applies one once, answering its receipt under the Tempo hash', async () => {
    const signed = await signedTransfer(250_000n);
    const sent = await rpc('eth_sendRawTransactionSync', [signed]);
    expect(sent.error).toBeUndefined();
    expect(sent.result).toMatchObject({ transactionHash: keccak256(signed), status: '0x1', from: payer.address });
    expect(sent.result!.logs).toHaveLength(1);
    expect(await balance(recipient)).toBe(250_000n);

    const again = await rpc('eth_sendRawTransaction', [signed]);
    expect(again.result).toBe(keccak256(signed));
    expect(await balance(recipient)).toBe(250_000n);
    expect((await rpc('eth_getTransactionReceipt', [keccak256(signed)])).result).toEqual(sent.result);
  });

  it('refuses one whose call would revert, moving nothing', async () => {
    const before = await balance(payer.address);
    const refused = await rpc('eth_sendRawTransactionSync', [await signedTransfer(before + 1n)]);
    expect(refused.error).toBeDefined();
    expect(await balance(payer.address)).toBe(before);
  });
});
