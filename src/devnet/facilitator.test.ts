import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { startDevnet, type RunningDevnet } from './devnet.js';

/** The devnet's x402 facilitator API (X402_FACILITATOR_URL=<devnet>/x402); paid calls through it: test/live-devnet.test.ts. */
describe("the devnet's x402 facilitator API", () => {
  let devnet: RunningDevnet;

  beforeAll(async () => {
    devnet = await startDevnet({ port: 0, host: '127.0.0.1', dataDir: null, virtualMasterZeroBytes: 0, log: createLogger('silent') });
  }, 120_000);
  afterAll(async () => devnet?.close());

  it("lists the exact scheme on the devnet's Base and Solana", async () => {
    const response = await fetch(`${devnet.url}/x402/supported`);
    expect(response.status).toBe(200);
    const { kinds } = (await response.json()) as { kinds: { scheme: string; network: string }[] };
    expect(kinds).toEqual(
      expect.arrayContaining([expect.objectContaining({ scheme: 'exact', network: 'eip155:8453' }), expect.objectContaining({ scheme: 'exact', network: devnet.chains.solana.network })]),
    );
  });

  it('answers 400 naming the missing field', async () => {
    const post = (path: string, body: unknown) => fetch(`${devnet.url}/x402/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const noPayload = await post('verify', { paymentRequirements: {} });
    expect(noPayload.status).toBe(400);
    expect(JSON.stringify(await noPayload.json())).toContain('paymentPayload');
    const noRequirements = await post('settle', { paymentPayload: {} });
    expect(noRequirements.status).toBe(400);
    expect(JSON.stringify(await noRequirements.json())).toContain('paymentRequirements');
  });
});
