import { createPublicClient, custom } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveShapedApp, startTestApp, type TestApp } from '../../../test/support/app.js';

/** GET /api/dev/clock and POST /api/dev/clock/advance (issue 33): local mode's time travel. */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
});
afterAll(() => t.close());

type Reading = { now: string; unix: number; offset_seconds: number };
const read = async () => (await (await t.request('GET', '/api/dev/clock')).json()) as Reading;
const advance = (body: unknown) => t.request('POST', '/api/dev/clock/advance', { body });

/** The timestamp of a new block on an embedded EVM chain: the time its next transaction runs at. */
async function evmTime(chain: 'tempo' | 'base'): Promise<number> {
  const client = createPublicClient({ transport: custom(t.embeddedChains![chain].evm) });
  await client.request({ method: 'evm_mine' } as never);
  return Number((await client.getBlock()).timestamp);
}

describe('the dev clock', () => {
  it('reads the service time: the real time until advanced', async () => {
    const reading = await read();
    expect(reading.offset_seconds).toBe(0);
    expect(Math.abs(reading.unix - Date.now() / 1000)).toBeLessThan(5);
    expect(Math.floor(Date.parse(reading.now) / 1000)).toBe(reading.unix);
  });

  it('moves the service, Tempo and Solana forward together, and runs what was waiting for it', async () => {
    let ran = 0;
    t.services.onChain!.devClock!.onAdvance(async () => {
      ran++;
    });
    const before = { tempo: await evmTime('tempo'), base: await evmTime('base'), solana: Number(t.embeddedChains!.solana.unixTime()) };
    const res = await advance({ seconds: 7200 });
    expect(res.status).toBe(200);
    const after = (await res.json()) as Reading;
    expect(after.offset_seconds).toBe(7200);
    expect(Math.abs(after.unix - (Date.now() / 1000 + 7200))).toBeLessThan(5);
    expect(await read()).toMatchObject({ offset_seconds: 7200 });
    expect(Math.abs(t.database.clock.nowSeconds() - after.unix)).toBeLessThan(5);
    // Tempo and Solana are 2 h further on (give or take the seconds the test took); Base, which
    // carries no time rule of ours but clients' x402 validBefore, stays on the real time.
    const moved = {
      tempo: (await evmTime('tempo')) - before.tempo,
      base: (await evmTime('base')) - before.base,
      solana: Number(t.embeddedChains!.solana.unixTime()) - before.solana,
    };
    expect({ tempo: moved.tempo >= 7200 && moved.tempo < 7230, solana: moved.solana >= 7200 && moved.solana < 7230, base: moved.base < 30 }).toEqual({
      tempo: true,
      solana: true,
      base: true,
    });
    expect(ran).toBe(1);
  });

  it('never goes back, nor stands still: 400 naming seconds, and nothing moves', async () => {
    for (const body of [{}, { seconds: 0 }, { seconds: -60 }, { seconds: 1.5 }, { seconds: '60' }, { seconds: 366 * 24 * 3600 + 1 }]) {
      const res = await advance(body);
      const error = (await res.json()) as { code: string; field: string };
      expect({ body, status: res.status, code: error.code, field: error.field }).toEqual({ body, status: 400, code: 'VALIDATION_ERROR', field: 'seconds' });
    }
    expect(await read()).toMatchObject({ offset_seconds: 7200 });
  });

  it('is not there in live mode, and is in the OpenAPI document', async () => {
    const live = liveShapedApp(t, { chains: t.chains });
    expect((await live.request('/api/dev/clock')).status).toBe(404);
    const post = await live.request('/api/dev/clock/advance', { method: 'POST', body: JSON.stringify({ seconds: 60 }), headers: { 'content-type': 'application/json' } });
    expect(post.status).toBe(404);
    expect(await read()).toMatchObject({ offset_seconds: 7200 });
    const openapi = (await (await t.request('GET', '/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(openapi.paths['/api/dev/clock/advance'] ?? {})).toEqual(['post']);
    expect(Object.keys(openapi.paths['/api/dev/clock'] ?? {})).toEqual(['get']);
  });
});
