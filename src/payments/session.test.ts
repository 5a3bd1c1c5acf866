import { eq } from 'drizzle-orm';
import { Challenge, Credential } from 'mppx';
import { tempo } from 'mppx/client';
import { Session } from 'mppx/tempo';
import { createClient, encodeFunctionData, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { tempo as tempoChain } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serveOnLoopback, type LoopbackServer } from '../../test/support/http.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { mppSessions, paymentReceipts, payments } from './tables.js';
import type { PaidRoute } from './prices.js';
import { registerSessionManagement } from './routes.js';

/**
 * MPP sessions end to end: mppx's unmodified session client opens a channel on the embedded Tempo
 * chain's escrow, streams a per-tick route (refilling its vouchers when the server asks), pays
 * per-session calls, and closes; the service collects exactly what was served.
 */
let t: TestApp;
let server: LoopbackServer;
let base: string;

const TICK = 1_000n; // $0.001
const STREAM: PaidRoute = { method: 'GET', path: '/test/stream', price: TICK, rails: ['A'], unit: 'tick', card: false, effect: 'reads', summary: 'A test stream' };
const CALL: PaidRoute = { method: 'POST', path: '/test/session-call', price: 20_000n, rails: ['A'], unit: 'session', card: false, effect: 'reads', summary: 'A test call' };
let callRuns = 0;
/** Calls with outcome `held-fail` wait here until the test lets them fail. */
const held: (() => void)[] = [];

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  const gate = t.payments!.gate;
  // Session management (vouchers, top-ups, closes) is POSTed to the route's own URL.
  registerSessionManagement(t.app, STREAM, gate);
  t.app.get(STREAM.path, gate(STREAM), (c) => {
    const ticks = Number(c.req.query('ticks') ?? '1');
    // The employer a stream is for, as a feature sets it once it has checked the caller may act for it.
    const employer = c.req.query('employer');
    if (employer) c.var.payment.attribute(employer);
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
    if (outcome === 'held-fail') await new Promise<void>((resolve) => held.push(resolve));
    if (outcome === 'fail' || outcome === 'held-fail') return c.json({ error: 'Broken.', code: 'INTERNAL_ERROR' }, 500);
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

/** mppx's session manager, unmodified, signing against the dev RPC (`fetch` lets a test intercept). */
function sessionManager(payer: PrivateKeyAccount, fetchImpl: typeof fetch = fetch, maxDeposit = '0.05') {
  const client = createClient({ chain: tempoChain, transport: http(`${base}/api/dev/rpc/tempo`), account: payer });
  return Session.Client.sessionManager({ account: payer, client, maxDeposit, fetch: fetchImpl });
}

/** A session manager whose requests the test can read afterwards. */
function recordingSessionManager(payer: PrivateKeyAccount) {
  const sent: RequestInit[] = [];
  const manager = sessionManager(payer, async (input, init) => {
    if (init) sent.push(init);
    return fetch(input, init);
  });
  return { manager, sent };
}

const rpc = async (method: string, params: unknown[]) =>
  (await (await fetch(`${base}/api/dev/rpc/tempo`, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json()) as {
    result?: unknown;
    error?: { code: number; message: string };
  };

const callInit = (outcome: string): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ outcome }),
});
const sessionCredentialOf = (init: RequestInit | undefined) => {
  const authorization = new Headers(init?.headers).get('Authorization');
  return authorization ? Credential.deserialize(Credential.extractPaymentScheme(authorization)!) : null;
};

/** The channel-opening credential among a client's requests. */
const openCredentialOf = (sent: RequestInit[]) =>
  sent.map(sessionCredentialOf).find((c) => (c?.payload as { action?: string } | undefined)?.action === 'open');

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
    // The first voucher covered the first tick; the server then asked for one covering 300 ticks ahead,
    // capped at the channel's deposit ($0.05, 50 ticks): one refill, not one a tick. Only the ticks
    // served are collected (below).
    expect(channel!.highestVoucherAmount).toBe(50n * TICK);

    const closing = await manager.close();
    expect(closing?.spent).toBe((10n * TICK).toString());
    expect(await tempoBalance(payee)).toBe(payeeBefore + 10n * TICK);
    expect(await tempoBalance(payer.address)).toBe(payerBefore - 10n * TICK);
    expect(await t.payments!.sessions.channel(channelId)).toMatchObject({ finalized: true });

    // The history: the session's row mirrors the closed channel, and the stream left one receipt.
    const db = t.database.db;
    const [session] = await db.select().from(mppSessions).where(eq(mppSessions.id, channelId.toLowerCase()));
    expect(session).toMatchObject({ route: 'GET /test/stream', payer: payer.address, status: 'closed', spent: 10n * TICK, acceptedCumulative: 50n * TICK });
    const receipts = await db.select().from(paymentReceipts).where(eq(paymentReceipts.sessionId, channelId.toLowerCase()));
    expect(receipts).toEqual([expect.objectContaining({ route: 'GET /test/stream', rail: 'A', amount: 10n * TICK, status: 'voucher' })]);
  });

  it('charges a per-session call once, and nothing when its handler fails', async () => {
    const payer = await fundedPayer();
    const manager = sessionManager(payer);
    const call = (outcome: string) => manager.fetch(`${base}${CALL.path}`, callInit(outcome));

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

  it('a call that fails after its channel was closed leaves spent at what the close captured, and refunds the payer once', async () => {
    const payer = await fundedPayer();
    const before = await tempoBalance(payer.address);
    const manager = sessionManager(payer);
    const call = (outcome: string) => manager.fetch(`${base}${CALL.path}`, callInit(outcome));
    expect((await call('ok')).status).toBe(200);
    const channelId = manager.channelId!;

    // A second call is charged; while its handler runs, the payer closes the channel (capturing both).
    const failing = call('held-fail');
    await vi.waitFor(() => expect(held).toHaveLength(1));
    await manager.close();
    expect(await tempoBalance(payer.address)).toBe(before - 2n * CALL.price);
    held.shift()!();
    const failed = await failing;
    expect(failed.status).toBe(500);
    expect(failed.headers.get('payment-refund')).toBe('pending');

    // The channel cannot give back what it already paid out: spent stays at the capture ...
    expect(await t.payments!.sessions.channel(channelId)).toMatchObject({ finalized: true, spent: 2n * CALL.price, settledOnChain: 2n * CALL.price });
    // ... and the failed call's price is owed to the payer, refunded on rail A by the reconciler, once.
    const owed = await t.database.db.select().from(payments).where(eq(payments.reference, channelId.toLowerCase()));
    expect(owed).toEqual([expect.objectContaining({ rail: 'A', status: 'refunding', amount: CALL.price, payer: payer.address, httpStatus: 500 })]);
    await t.payments!.reconciler.run();
    await t.payments!.reconciler.run();
    const [refunded] = await t.database.db.select().from(payments).where(eq(payments.id, owed[0]!.id));
    expect(refunded).toMatchObject({ status: 'refunded', refundReference: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await tempoBalance(payer.address)).toBe(before - CALL.price);
  });

  it('serves one voucher once, however many times it is sent at the same time', async () => {
    const payer = await fundedPayer();
    let replays: Response[] = [];
    let replayNext = false;
    // Sends the credentialed request 20 times at once; the client sees the first success.
    const replaying: typeof fetch = async (input, init) => {
      if (!replayNext || !sessionCredentialOf(init)) return fetch(input, init);
      replayNext = false;
      replays = await Promise.all(Array.from({ length: 20 }, () => fetch(input, init)));
      return replays.find((r) => r.status === 200) ?? replays[0]!;
    };
    const manager = sessionManager(payer, replaying);
    expect((await manager.fetch(`${base}${CALL.path}`, callInit('ok'))).status).toBe(200);
    const channelId = manager.channelId!;
    const runs = callRuns;

    replayNext = true;
    expect((await manager.fetch(`${base}${CALL.path}`, callInit('ok'))).status).toBe(200);
    expect(replays.map((r) => r.status).sort()).toEqual([200, ...Array<number>(19).fill(402)]);
    const refused = await Promise.all(replays.filter((r) => r.status === 402).map((r) => r.json() as Promise<{ code: string }>));
    expect(new Set(refused.map((r) => r.code))).toEqual(new Set(['PAYMENT_INSUFFICIENT']));
    expect(callRuns).toBe(runs + 1);
    expect(await t.payments!.sessions.channel(channelId)).toMatchObject({ spent: 2n * CALL.price, units: 2 });
    await manager.close();
  });

  it('refuses a voucher whose amount was altered after signing, and charges nothing', async () => {
    const payer = await fundedPayer();
    const { manager, sent } = recordingSessionManager(payer);
    expect((await manager.fetch(`${base}${CALL.path}`, callInit('ok'))).status).toBe(200);
    expect((await manager.fetch(`${base}${CALL.path}`, callInit('ok'))).status).toBe(200);
    const voucher = sessionCredentialOf(sent.at(-1))!;
    expect(voucher.payload).toMatchObject({ action: 'voucher' });

    const inflated = { ...voucher, payload: { ...(voucher.payload as object), cumulativeAmount: (2n * CALL.price + 5_000n).toString() } };
    const response = await fetch(`${base}${CALL.path}`, {
      ...callInit('ok'),
      headers: { 'Content-Type': 'application/json', Authorization: Credential.serialize(inflated) },
    });
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ code: 'PAYMENT_INVALID', error: expect.stringMatching(/signature/i) });
    expect(await t.payments!.sessions.channel(manager.channelId!)).toMatchObject({ spent: 2n * CALL.price, highestVoucherAmount: 2n * CALL.price });
    await manager.close();
  });

  it('gives back the tick a stream was charged when its handler fails', async () => {
    const payer = await fundedPayer();
    const { manager, sent } = recordingSessionManager(payer);
    await expect(manager.sse(`${base}${STREAM.path}?ticks=3&fail=1`)).rejects.toThrow();
    // The channel was opened with a voucher for the first tick; that tick was charged, then given back.
    const open = openCredentialOf(sent);
    const channelId = (open?.payload as { channelId: string } | undefined)?.channelId;
    expect(channelId).toMatch(/^0x[0-9a-f]{64}$/i);
    expect(await t.payments!.sessions.channel(channelId!)).toMatchObject({ highestVoucherAmount: TICK, spent: 0n, units: 0 });
  });

  it('refuses a single charge on a per-tick route', async () => {
    const payer = await fundedPayer();
    const offered = Challenge.fromResponseList(await fetch(`${base}${CALL.path}`, { method: 'POST' }));
    const charge = offered.find((c) => c.intent === 'charge')!;
    const client = createClient({ chain: tempoChain, transport: http(`${base}/api/dev/rpc/tempo`), account: payer });
    const credential = await tempo.charge({ account: payer, getClient: () => client }).createCredential({ challenge: charge, context: {} } as never);
    const response = await fetch(`${base}${STREAM.path}?ticks=1`, { headers: { Authorization: credential } });
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ code: 'PAYMENT_INVALID', error: expect.stringMatching(/per tick/) });
  });
});

describe("a session in the employer's history", () => {
  let owner: string;
  let employerId: string;
  beforeAll(async () => {
    owner = await t.token('session-history-owner');
    employerId = ((await (await t.request('POST', '/api/employers', { token: owner, body: { name: 'Co' } })).json()) as { id: string }).id;
  });

  const history = async <T>(feed: 'mpp-receipts' | 'mpp-sessions') => {
    const response = await t.request('GET', `/api/employers/${employerId}/${feed}`, { token: owner });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  };
  type Receipts = { receipts: { route: string; amount_usd: string; reference: string }[] };
  type Sessions = { sessions: { channel_id: string; status: string; deposit_usd: string; spent_usd: string; settled_usd: string; opened_at: string; closed_at: string | null }[] };
  /** The stream's use is recorded when it ends, after the client has gone. */
  const recorded = (channelId: string) =>
    vi.waitFor(async () => {
      const rows = await t.database.db.select().from(paymentReceipts).where(eq(paymentReceipts.sessionId, channelId.toLowerCase()));
      expect(rows).toHaveLength(1);
    });

  it('a stream the payer stops paying for shows the ticks it was charged, not one more', async () => {
    const payer = await fundedPayer();
    const payee = t.payments!.payTo.tempo as Address;
    const payeeBefore = await tempoBalance(payee);
    // The deposit covers 4 ticks; asked for a 5th, the client refuses (beyond its limit) and leaves.
    const manager = sessionManager(payer, fetch, '0.004');
    const events: unknown[] = [];
    await expect(
      (async () => {
        for await (const data of await manager.sse(`${base}${STREAM.path}?ticks=10&employer=${employerId}`)) events.push(JSON.parse(data));
      })(),
    ).rejects.toThrow(/exceeds local maxDeposit/);
    expect(events).toHaveLength(4);
    const channelId = manager.channelId!;
    await recorded(channelId);
    await manager.close();
    expect(await tempoBalance(payee)).toBe(payeeBefore + 4n * TICK);

    const { receipts } = await history<Receipts>('mpp-receipts');
    expect(receipts.filter((r) => r.reference === channelId.toLowerCase())).toEqual([
      expect.objectContaining({ route: 'GET /test/stream', amount_usd: '0.004000' }),
    ]);
    const { sessions } = await history<Sessions>('mpp-sessions');
    expect(sessions.find((s) => s.channel_id === channelId.toLowerCase())).toMatchObject({ status: 'closed', spent_usd: '0.004000', settled_usd: '0.004000' });
  });

  it('shows when the session opened and the deposit it was opened with, also once it is closed', async () => {
    const payer = await fundedPayer();
    const manager = sessionManager(payer);
    const arrivals: number[] = [];
    for await (const data of await manager.sse(`${base}${STREAM.path}?ticks=10&employer=${employerId}`)) if (data) arrivals.push(Date.now());
    expect(arrivals).toHaveLength(10);
    const channelId = manager.channelId!;
    await recorded(channelId);
    await manager.close();

    const { sessions } = await history<Sessions>('mpp-sessions');
    const session = sessions.find((s) => s.channel_id === channelId.toLowerCase())!;
    expect(session).toMatchObject({ status: 'closed', deposit_usd: '0.050000', spent_usd: '0.010000', settled_usd: '0.010000' });
    // Opened before the stream's first event, not when its use was recorded or the channel closed.
    expect(Date.parse(session.opened_at)).toBeLessThanOrEqual(arrivals[0]!);
    expect(Date.parse(session.opened_at)).toBeLessThan(Date.parse(session.closed_at!));
  });
});

describe("the embedded Tempo chain's RPC for signed Tempo transactions", () => {
  it('applies a channel-opening transaction once, and refuses it sent again', async () => {
    const payer = await fundedPayer();
    const { manager, sent } = recordingSessionManager(payer);
    expect((await manager.fetch(`${base}${CALL.path}`, callInit('ok'))).status).toBe(200);
    const open = openCredentialOf(sent)!;
    const replay = await rpc('eth_sendRawTransaction', [(open.payload as { transaction: string }).transaction]);
    expect(replay.error?.message).toMatch(/TransactionAlreadyApplied|ChannelExists|revert/);
    await manager.close();
  });

  it('refuses signed Tempo transactions that do not call the channel escrow', async () => {
    const payer = await fundedPayer();
    const client = createClient({ chain: tempoChain, transport: http(`${base}/api/dev/rpc/tempo`), account: payer });
    const { prepareTransactionRequest, signTransaction } = await import('viem/actions');
    const stablecoin = t.embeddedChains!.tempo.contracts.stablecoin!;
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payer.address, 1n] });
    const prepared = await prepareTransactionRequest(client, { account: payer, calls: [{ to: stablecoin, data }], nonceKey: 'expiring', feeToken: stablecoin } as never);
    const signed = await signTransaction(client, prepared as never);
    const response = await rpc('eth_sendRawTransaction', [signed]);
    expect(response.error).toMatchObject({ code: -32003, message: expect.stringMatching(/channel escrow only/) });
  });
});
