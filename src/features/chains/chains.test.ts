import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveShapedApp, startTestApp, type TestApp } from '../../../test/support/app.js';
import { LOCAL_ESCROW_PROGRAM_ID } from '../../chains/solana/escrow-program/index.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
});
afterAll(() => t.close());

type Networks = { networks: { network: string; chain_id: number | null; token: string; pay_to: string; contracts: Record<string, string> }[] };

describe('GET /api/chains', () => {
  it('lists every public id a client needs, with no sign-in: the escrow program and the session escrow included', async () => {
    const res = await t.request('GET', '/api/chains');
    expect(res.status).toBe(200);
    const { networks } = (await res.json()) as Networks;
    const [tempo, base, solana] = networks;
    expect(tempo).toMatchObject({
      network: 'eip155:4217',
      chain_id: 4217,
      token: t.chains!.tempo.token,
      pay_to: t.chains!.tempo.serviceAddress,
      contracts: { ...t.chains!.tempo.contracts, channelEscrow: '0x4d50500000000000000000000000000000000000' },
    });
    expect(base).toMatchObject({ network: 'eip155:8453', chain_id: 8453, token: t.chains!.base.token, contracts: { usdc: t.chains!.base.token } });
    expect(solana).toMatchObject({
      network: t.chains!.solana.network,
      chain_id: null,
      token: t.chains!.solana.mint,
      pay_to: t.chains!.solana.serviceAddress,
      contracts: { mint: t.chains!.solana.mint, escrowProgram: LOCAL_ESCROW_PROGRAM_ID, tokenProgram: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' },
    });
  });

  it('is there in live mode too (no development routes), and in the OpenAPI document', async () => {
    const live = liveShapedApp(t, { chains: t.chains });
    expect((await live.request('/api/dev/chains')).status).toBe(404);
    const res = await live.request('/api/chains');
    expect(res.status).toBe(200);
    expect(((await res.json()) as Networks).networks.map((n) => n.network)).toEqual(['eip155:4217', 'eip155:8453', t.chains!.solana.network]);
    const openapi = (await (await t.request('GET', '/api/openapi.json')).json()) as { paths: Record<string, { get?: { security?: unknown[] } }> };
    expect(openapi.paths['/api/chains']?.get).toBeDefined();
  });

  it('/api/dev/chains names the escrow program too, beside the RPC endpoints', async () => {
    const { networks } = (await (await t.request('GET', '/api/dev/chains')).json()) as Networks;
    expect(networks[2]!.contracts).toMatchObject({ escrowProgram: LOCAL_ESCROW_PROGRAM_ID });
    expect(networks[0]!.contracts).toMatchObject({ channelEscrow: '0x4d50500000000000000000000000000000000000' });
  });
});
