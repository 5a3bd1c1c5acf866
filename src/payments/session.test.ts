import { Challenge } from 'mppx';
import { Session } from 'mppx/tempo';
import { createClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../test/support/http.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import type { PaidRoute } from './prices.js';

/**
 * MPP sessions end to end: mppx's unmodified session client opens a channel on the embedded Tempo
 * chain's escrow, streams a per-tick route (refilling its vouchers when the server asks), pays
 * per-session calls, and closes; the service collects exactly what was served.
 */
let t: TestApp;
let server: LoopbackServer;
let base: string;

const TICK = 1_000n; // $0.001
const STREAM: PaidRoute = { method: 'GET', path: '/test/stream', price: TICK, rails: ['A'], unit: 'tick', card: false, summary: 'A test stream' };
const CALL: PaidRoute = { method: 'POST', path: '/test/session-call', price: 20_000n, rails: ['A'], unit: 'session', card: false, summary: 'A test call' };
let callRuns = 0;

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  const gate = t.payments!.gate;
  // Session management (vouchers, top-ups, closes) is POSTed to the route's own URL.
  t.app.on(['GET', 'POST'], STREAM.path, gate(STREAM), (c) => {
    const ticks = Number(c.req.query('ticks') ?? '1');
    if (c.req.query('fail')) return c.json({ error: 'Broken.', code: 'INTERNAL_ERROR' }, 500);
    const encoder = new TextEncoder();
    const body = new ReadableStream({
      async start(controller) {
        for (let tick = 1; tick <= ticks; tick += 1) {
          controller.enqueue(encoder.encode(`data: ${JSON.stringify({ tick })}\n\n`));
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        controller.close();
      },
    });
    return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
  });
  t.app.post(CALL.path, gate(CALL), async (c) => {
    callRuns += 1;
    const { outcome } = (await c.req.json()) as { outcome: string };
    if (outcome === 'fail') return c.json({ error: 'Broken.', code: 'INTERNAL_ERROR' }, 500);
    return c.json({ served: true });
  });
  server = await serveOnLoopback(t.app.fetch);
  base = server.url;
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

const tempoBalance = (owner: Address) =>
  t.embeddedChains!.tempo.connection.publicClient.readContract({ address: t.embeddedChains!.tempo.contracts.stablecoin!, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

async function fundedPayer(): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  const response = await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: payer.address, amount: '5' } });
  expect(response.status).toBe(200);
  return payer;
}

/** mppx's session manager, unmodified, signing against the dev RPC. */
function sessionManager(payer: PrivateKeyAccount, maxDeposit = '0.05') {
  const client = createClient({ chain: tempoChain, transport: http(`${base}/api/dev/rpc/tempo`), account: payer });
  return Session.Client.sessionManager({ account: payer, client, maxDeposit });
}

describe('MPP sessions', () => {
  it('offers a session (and no single charge) on a per-tick route, with its price per tick', async () => {
    const response = await fetch(`${base}${STREAM.path}`);
    expect(response.status).toBe(402);
    const challenges = Challenge.fromResponseList(response);
    expect(challenges.map((c) => `${c.method}/${c.intent}`)).toEqual(['tempo/session']);
    expect(challenges[0]!.request).toMatchObject({ amount: '1000', unitType: 'second' });
    const body = (await response.json()) as { unit: string; price: string };
    expect(body).toMatchObject({ unit: 'tick', price: '0.001000' });
  });

  it('streams 10 ticks to an unmodified session client and collects 10 x $0.001 on close', async () => {
    const payer = await fundedPayer();
    const payee = t.payments!.payTo.tempo as Address;
    const [payerBefore, payeeBefore] = [await tempoBalance(payer.address), await tempoBalance(payee)];

    const manager = sessionManager(payer);
    const events: unknown[] = [];
    for await (const data of await manager.sse(`${base}${STREAM.path}?ticks=10`)) events.push(JSON.parse(data));
    expect(events).toEqual(Array.from({ length: 10 }, (_, i) => ({ tick: i + 1 })));

    const channelId = manager.channelId!;
    const channel = await t.payments!.sessions.channel(channelId);
    expect(channel).toMatchObject({ spent: 10n * TICK, units: 10 });
    // The vouchers were refilled as the stream ran (need-voucher events), never beyond what was served.
    expect(channel!.highestVoucherAmount).toBe(10n * TICK);

    const closing = await manager.close();
    expect(closing?.spent).toBe((10n * TICK).toString());
    expect(await tempoBalance(payee)).toBe(payeeBefore + 10n * TICK);
    expect(await tempoBalance(payer.address)).toBe(payerBefore - 10n * TICK);
    expect(await t.payments!.sessions.channel(channelId)).toMatchObject({ finalized: true });
  });

  it('charges a per-session call once, and nothing when its handler fails', async () => {
    const payer = await fundedPayer();
    const manager = sessionManager(payer);
    const call = (outcome: string) =>
      manager.fetch(`${base}${CALL.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ outcome }) });

    const served = await call('ok');
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual({ served: true });
    const channelId = manager.channelId!;
    expect(await t.payments!.sessions.channel(channelId)).toMatchObject({ spent: CALL.price, units: 1 });

    const runs = callRuns;
    const failed = await call('fail');
    expect(failed.status).toBe(500);
    expect(callRuns).toBe(runs + 1);
    expect(await t.payments!.sessions.channel(channelId)).toMatchObject({ spent: CALL.price, units: 1 });

    const again = await call('ok');
    expect(again.status).toBe(200);
    expect(await t.payments!.sessions.channel(channelId)).toMatchObject({ spent: 2n * CALL.price, units: 2 });
    await manager.close();
  });
});
