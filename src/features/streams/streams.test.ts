import { OpenAPIHono } from '@hono/zod-openapi';
import { erc20Abi, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { proofMaker, x402, type PayingFetch } from '../../../test/support/pay.js';
import type { AppEnv } from '../../http/context.js';
import { handleError } from '../../http/errors.js';
import { createLogger } from '../../log.js';
import { validationHook } from '../../http/validation.js';
import { MAX_STREAM_SECONDS } from './schema.js';
import { streamRoutes } from './routes.js';
import { STUB_NOTE } from './service.js';

const RECIPIENT = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const valid = { recipientAddress: RECIPIENT, amountUsdc: 1500.5, durationSeconds: 2_592_000, cliffSeconds: 86_400, cancelAuthority: 'sender' };

describe('POST /api/x402/streams', () => {
  let t: TestApp;
  let server: LoopbackServer;
  let pay: PayingFetch;
  beforeAll(async () => {
    t = await startTestApp({}, { chains: true });
    server = await serveOnLoopback(t.app.fetch);
    ({ pay } = await x402(t, server.url, 'B', '100'));
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('answers a paid call on rail B with the stub stream handle of spec 2.2', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await pay('/api/x402/streams', { method: 'POST', body: valid });
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-response')).toBeTruthy();
    const handle = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(handle).sort()).toEqual(
      ['claimedUsdc', 'estimatedEndAt', 'note', 'provider', 'remainingUsdc', 'startedAt', 'streamId', 'stub'].sort(),
    );
    expect(handle).toMatchObject({ provider: 'native', claimedUsdc: 0, remainingUsdc: 1500.5, stub: true, note: STUB_NOTE });
    expect(handle.streamId).toEqual(expect.any(String));
    expect(handle.startedAt).toBeGreaterThanOrEqual(before);
    expect(handle.startedAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect((handle.estimatedEndAt as number) - (handle.startedAt as number)).toBe(valid.durationSeconds);

    // The fee was settled on rail B, $0.05.
    const { rows } = await t.database.pool.query(
      "SELECT rail, amount::text AS amount, status FROM payments WHERE route LIKE '%/api/x402/streams' ORDER BY created_at DESC LIMIT 1",
    );
    expect(rows[0]).toEqual({ rail: 'B', amount: '50000', status: 'served' });

    // Each stream gets its own id; a 43-character key and no cliff are fine.
    const other = await pay('/api/x402/streams', {
      method: 'POST',
      body: { recipientAddress: '11111111111111111111111111111111', amountUsdc: 0.000001, durationSeconds: 1, cancelAuthority: 'both' },
    });
    expect(other.status).toBe(200);
    const second = (await other.json()) as Record<string, unknown>;
    expect(second.streamId).not.toBe(handle.streamId);
    expect(second.remainingUsdc).toBe(0.000001);
  });

  it('asks for payment first (402 on rails B and C only), before any validation', async () => {
    const res = await fetch(`${server.url}/api/x402/streams`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(402);
    const body = (await res.json()) as { rails: string[] };
    expect(body.rails).toEqual(['B', 'C']);
    expect(res.headers.get('payment-required')).toBeTruthy();
  });

  it('answers 400 naming the field of an invalid stream', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...valid, recipientAddress: undefined }, 'recipientAddress'],
      [{ ...valid, recipientAddress: '0x2222222222222222222222222222222222222222' }, 'recipientAddress'],
      [{ ...valid, recipientAddress: '1111111111111111111111111111111' }, 'recipientAddress'],
      [{ ...valid, amountUsdc: 0 }, 'amountUsdc'],
      [{ ...valid, amountUsdc: -5 }, 'amountUsdc'],
      [{ ...valid, amountUsdc: 1.0000001 }, 'amountUsdc'],
      [{ ...valid, amountUsdc: 1_000_000.5 }, 'amountUsdc'],
      [{ ...valid, amountUsdc: '100' }, 'amountUsdc'],
      [{ ...valid, durationSeconds: 0 }, 'durationSeconds'],
      [{ ...valid, durationSeconds: 1.5 }, 'durationSeconds'],
      [{ ...valid, durationSeconds: MAX_STREAM_SECONDS + 1 }, 'durationSeconds'],
      [{ ...valid, cliffSeconds: valid.durationSeconds }, 'cliffSeconds'],
      [{ ...valid, cliffSeconds: -1 }, 'cliffSeconds'],
      [{ ...valid, cancelAuthority: 'nobody' }, 'cancelAuthority'],
    ];
    for (const [body, field] of cases) {
      const res = await pay('/api/x402/streams', { method: 'POST', body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json(), JSON.stringify(body)).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });

  it('is described in the OpenAPI document as a paid route on rails B and C', async () => {
    const document = (await (await t.request('GET', '/api/openapi.json')).json()) as { paths: Record<string, Record<string, any>> };
    const route = document.paths['/api/x402/streams']!.post;
    expect(route['x-payment']).toMatchObject({ price: '0.050000', rails: ['B', 'C'] });
    expect(Object.keys(route.responses)).toEqual(expect.arrayContaining(['200', '400', '402', '503']));
    expect(route.requestBody.content['application/json'].schema).toBeTruthy();
  });

  describe('charge before acting', () => {
    it('two streams at once from a payer who can cover one fee: one handle, the other refused (402) before opening anything', async () => {
      const payer = await proofMaker(t, server.url, 'B', '0.05');
      const proofs = [await payer.proof('/api/x402/streams'), await payer.proof('/api/x402/streams')];
      const bodies = [valid, { ...valid, amountUsdc: 20, cliffSeconds: undefined }];
      const responses = await Promise.all(
        bodies.map((body, i) =>
          fetch(`${server.url}/api/x402/streams`, { method: 'POST', headers: { 'content-type': 'application/json', ...proofs[i] }, body: JSON.stringify(body) }),
        ),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([200, 402]);
      expect(await responses.find((r) => r.status === 402)!.json()).toMatchObject({ code: 'PAYMENT_SETTLEMENT_FAILED' });
      expect(await responses.find((r) => r.status === 200)!.json()).toMatchObject({ stub: true });
      // The stub records nothing of its own: the one action is the one payment served; the other was voided unsettled.
      const { rows } = await t.database.pool.query('SELECT status FROM payments WHERE lower(payer) = lower($1) ORDER BY status', [payer.payer]);
      expect(rows.map((row) => row.status)).toEqual(['served', 'voided']);
      const usdc = t.embeddedChains!.base;
      expect(
        await usdc.connection.publicClient.readContract({ address: usdc.contracts.stablecoin!, abi: erc20Abi, functionName: 'balanceOf', args: [payer.payer as Address] }),
      ).toBe(0n);
    });
  });

  it('answers 503 SOLANA_AGENT_WALLET_NOT_CONFIGURED, before asking for payment, when the server has no Solana agent wallet', async () => {
    const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
    app.use('*', async (c, next) => {
      c.set('log', createLogger('silent'));
      await next();
    });
    app.route('/', streamRoutes({ gate: t.payments!.gate, solanaAgentWallet: null, clock: t.database.clock }));
    app.onError(handleError);
    const res = await app.request('/api/x402/streams', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(valid) });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'SOLANA_AGENT_WALLET_NOT_CONFIGURED' });
  });
});
