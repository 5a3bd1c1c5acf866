import type { RpcTransport } from '@solana/kit';
import { createPublicClient, createWalletClient, custom, defineChain, parseAbi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveShapedApp, startTestApp, type TestApp } from '../../../test/support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
});
afterAll(() => t.close());

const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)', 'function transfer(address,uint256) returns (bool)']);

/** An unmodified viem client whose transport is the app's dev RPC route. */
function rpcClient(name: 'tempo' | 'base', id: number) {
  return createPublicClient({
    chain: defineChain({ id, name, nativeCurrency: { name: 'E', symbol: 'E', decimals: 18 }, rpcUrls: { default: { http: ['http://x'] } } }),
    transport: custom({
      async request({ method, params }) {
        const res = await t.request('POST', `/api/dev/rpc/${name}`, { body: { jsonrpc: '2.0', id: 1, method, params } });
        const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
        if (body.error) throw Object.assign(new Error(body.error.message), body.error);
        return body.result;
      },
    }),
  });
}

const rpc = (name: string, body: unknown) => t.request('POST', `/api/dev/rpc/${name}`, { body });

describe('POST /api/dev/faucet', () => {
  it('credits stablecoin on each embedded EVM network, readable through the dev RPC', async () => {
    const who = '0x2000000000000000000000000000000000000002' as Address;
    for (const [name, network, id] of [['tempo', 'eip155:4217', 4217], ['base', 'eip155:8453', 8453]] as const) {
      const res = await t.request('POST', '/api/dev/faucet', { body: { network, address: who, amount: '12.345678' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ network, address: who, amount: '12.345678', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      const token = (name === 'tempo' ? t.embeddedChains!.tempo : t.embeddedChains!.base).contracts.stablecoin!;
      const client = rpcClient(name, id);
      expect(await client.readContract({ address: token, abi: ERC20, functionName: 'balanceOf', args: [who] })).toBe(12_345_678n);
      expect(await client.getBalance({ address: who })).toBeGreaterThan(0n); // gas to pay with
    }
  });

  it('serves concurrent requests without nonce clashes', async () => {
    const who = '0x3000000000000000000000000000000000000003' as Address;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: who, amount: '1' } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const balance = await rpcClient('tempo', 4217).readContract({
      address: t.embeddedChains!.tempo.contracts.stablecoin!,
      abi: ERC20,
      functionName: 'balanceOf',
      args: [who],
    });
    expect(balance).toBe(10_000_000n);
  });

  it('names the field of a bad request', async () => {
    const good = { network: 'eip155:4217', address: '0x2000000000000000000000000000000000000002', amount: '1' };
    for (const [patch, field] of [
      [{ network: 'eip155:1' }, 'network'],
      [{ address: 'bob' }, 'address'],
      [{ address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' }, 'address'],
      [{ network: 'SOLANA' }, 'network'],
      [{ amount: '0' }, 'amount'],
      [{ amount: '1000000.000001' }, 'amount'],
      [{ amount: 5 }, 'amount'],
    ] as const) {
      const res = await t.request('POST', '/api/dev/faucet', { body: { ...good, ...patch } });
      expect(res.status, JSON.stringify(patch)).toBe(400);
      expect(((await res.json()) as { field: string }).field).toBe(field);
    }
  });
});

describe('POST /api/dev/rpc/{chain}', () => {
  it('answers single calls and batches', async () => {
    const single = await (await rpc('tempo', { jsonrpc: '2.0', id: 9, method: 'eth_chainId' })).json();
    expect(single).toEqual({ jsonrpc: '2.0', id: 9, result: '0x1079' });
    const batch = (await (await rpc('base', [
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
    ])).json()) as { id: number; result: string }[];
    expect(batch.map((r) => r.id)).toEqual([1, 2]);
    expect(batch[0]!.result).toBe('0x2105');
  });

  it('answers bad requests with JSON-RPC errors, never a crash', async () => {
    const cases: [unknown, number][] = [
      ['{"jsonrpc": "2.0", "method"', -32700],
      [[], -32600],
      [{ id: 1, method: 'eth_chainId' }, -32600],
      [{ jsonrpc: '2.0', id: 1, method: 42 }, -32600],
      [{ jsonrpc: '2.0', id: 1, method: 'eth_call', params: 'x' }, -32602],
      [Array.from({ length: 101 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId' })), -32600],
    ];
    for (const [body, code] of cases) {
      const res = await rpc('tempo', body);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(code);
    }
    const unknown = (await (await rpc('tempo', { jsonrpc: '2.0', id: 3, method: 'no_such_method', params: [] })).json()) as {
      error: { code: number };
    };
    expect(unknown.error.code).toBeLessThan(0);
  });

  it('reports a revert as code 3 with the revert data', async () => {
    const token = t.embeddedChains!.tempo.contracts.stablecoin!;
    const { encodeFunctionData } = await import('viem');
    const data = encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: ['0x4000000000000000000000000000000000000004', 1n] });
    const res = (await (await rpc('tempo', {
      jsonrpc: '2.0',
      id: 4,
      method: 'eth_call',
      params: [{ from: '0x5000000000000000000000000000000000000005', to: token, data }, 'latest'],
    })).json()) as { error: { code: number; data: string } };
    expect(res.error.code).toBe(3);
    expect(res.error.data).toMatch(/^0x[0-9a-f]{8}/); // InsufficientBalance(available, required)
  });

  it('lists the embedded networks with their contracts', async () => {
    const { networks } = (await (await t.request('GET', '/api/dev/chains')).json()) as {
      networks: { network: string; rpc_url: string; contracts: Record<string, string> }[];
    };
    expect(networks.map((n) => [n.network, n.rpc_url])).toEqual([
      ['eip155:4217', '/api/dev/rpc/tempo'],
      ['eip155:8453', '/api/dev/rpc/base'],
      [t.embeddedChains!.solana.network, '/api/dev/rpc/solana'],
    ]);
    expect(networks[0]!.contracts).toMatchObject({ stablecoin: t.embeddedChains!.tempo.contracts.stablecoin, payrollTreasury: expect.any(String) });
  });

  it("lists the development wallets, whose keys send tokens as a browser wallet would: signed locally, raw through the dev RPC", async () => {
    const { mnemonic, wallets } = (await (await t.request('GET', '/api/dev/wallets')).json()) as {
      mnemonic: string;
      wallets: { index: number; address: Address; private_key: Hex }[];
    };
    expect(mnemonic).toBe('test test test test test test test test test test test junk');
    expect(wallets).toHaveLength(10);
    // The well-known first development account (Hardhat, Anvil): a test key, never a secret.
    expect(wallets[0]!.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    for (const wallet of wallets) expect(privateKeyToAccount(wallet.private_key).address).toBe(wallet.address);

    const sender = wallets[7]!;
    const token = t.embeddedChains!.tempo.contracts.stablecoin! as Address;
    expect((await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: sender.address, amount: '3' } })).status).toBe(200);
    const client = rpcClient('tempo', 4217);
    const wallet = createWalletClient({ account: privateKeyToAccount(sender.private_key), chain: client.chain, transport: custom({ request: (args) => client.request(args as never) }) });
    const to = '0x7000000000000000000000000000000000000007' as Address;
    const hash = await wallet.writeContract({ address: token, abi: ERC20, functionName: 'transfer', args: [to, 1_250_000n] });
    expect((await client.waitForTransactionReceipt({ hash, pollingInterval: 10 })).status).toBe('success');
    expect(await client.readContract({ address: token, abi: ERC20, functionName: 'balanceOf', args: [to] })).toBe(1_250_000n);
  });

  it('leaves the chains out of readiness (they are in /api/admin?scope=health)', async () => {
    expect(await (await t.request('GET', '/readyz')).json()).toEqual({ status: 'ready', checks: { database: { ok: true } } });
  });
});

describe('live mode', () => {
  it('has no development routes at all', async () => {
    const live = liveShapedApp(t, { embeddedChains: t.embeddedChains });
    for (const path of ['/api/dev/token', '/api/dev/faucet', '/api/dev/rpc/tempo', '/api/dev/rpc/base', '/api/dev/rpc/solana']) {
      expect((await live.request(path, { method: 'POST', body: '{}' })).status, path).toBe(404);
    }
    expect((await live.request('/api/dev/chains')).status).toBe(404);
    expect((await live.request('/api/dev/wallets')).status).toBe(404);
  });
});

describe('embedded Solana through the dev routes', () => {
  it('funds a wallet that an unmodified @solana/kit client then pays from', async () => {
    const kit = await import('@solana/kit');
    const token = await import('@solana-program/token');
    const transport = (async ({ payload }: { payload: unknown }) =>
      (await t.request('POST', '/api/dev/rpc/solana', { body: payload })).json()) as RpcTransport;
    const rpc = kit.createSolanaRpcFromTransport(transport);
    const solana = t.embeddedChains!.solana;
    const [alice, bob] = await Promise.all([kit.generateKeyPairSigner(), kit.generateKeyPairSigner()]);

    for (const [who, amount] of [[alice, '25'], [bob, '0.000001']] as const) {
      const res = await t.request('POST', '/api/dev/faucet', { body: { network: solana.network, address: who.address, amount } });
      expect(res.status).toBe(200);
    }
    expect((await t.request('POST', '/api/dev/faucet', { body: { network: solana.network, address: '0x2000000000000000000000000000000000000002', amount: '1' } })).status).toBe(400);

    const mint = await token.fetchMint(rpc as never, solana.mint);
    expect(mint.data.decimals).toBe(6);
    const { value: latest } = await rpc.getLatestBlockhash().send();
    const [source] = await token.findAssociatedTokenPda({ mint: solana.mint, owner: alice.address, tokenProgram: token.TOKEN_PROGRAM_ADDRESS });
    const [destination] = await token.findAssociatedTokenPda({ mint: solana.mint, owner: bob.address, tokenProgram: token.TOKEN_PROGRAM_ADDRESS });
    const message = kit.pipe(
      kit.createTransactionMessage({ version: 0 }),
      (m) => kit.setTransactionMessageFeePayerSigner(alice, m),
      (m) => kit.setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) =>
        kit.appendTransactionMessageInstructions(
          [token.getTransferCheckedInstruction({ source, mint: solana.mint, destination, authority: alice, amount: 10_000_000n, decimals: 6 })],
          m,
        ),
    );
    const signed = await kit.signTransactionMessageWithSigners(message);
    const wire = kit.getBase64EncodedWireTransaction(signed);
    expect((await rpc.simulateTransaction(wire, { encoding: 'base64' }).send()).value.err).toBeNull();
    const sig = await rpc.sendTransaction(wire, { encoding: 'base64' }).send();
    const { value: statuses } = await rpc.getSignatureStatuses([sig]).send();
    expect(statuses[0]).toMatchObject({ err: null, confirmationStatus: 'finalized' });
    expect(await solana.tokenBalance(bob.address)).toBe(10_000_001n);
    expect(await solana.tokenBalance(alice.address)).toBe(15_000_000n);

    // The same signed transaction again is refused, as a real cluster would.
    const replay = (await (await t.request('POST', '/api/dev/rpc/solana', {
      body: { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [wire, { encoding: 'base64' }] },
    })).json()) as { error: { message: string } };
    expect(replay.error.message).toMatch(/AlreadyProcessed/);
  });

  it('answers unknown methods and bad params with JSON-RPC errors', async () => {
    const call = async (method: string, params: unknown[]) =>
      ((await (await t.request('POST', '/api/dev/rpc/solana', { body: { jsonrpc: '2.0', id: 1, method, params } })).json()) as {
        error?: { code: number };
      }).error?.code;
    expect(await call('getProgramAccounts', [])).toBe(-32601);
    expect(await call('getAccountInfo', ['0xnot-base58'])).toBe(-32602);
    expect(await call('sendTransaction', ['!!!', { encoding: 'base64' }])).toBe(-32602);
    expect(await call('sendTransaction', ['AAAA', { encoding: 'base58' }])).toBe(-32602);
    expect(await call('getSignatureStatuses', [['nope']])).toBe(-32602);
  });
});
