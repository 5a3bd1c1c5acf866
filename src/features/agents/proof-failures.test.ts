import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentProofHeaders } from '../../../test/support/agents.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { AppError } from '../../errors.js';
import { RateLimits, rateLimitRules } from '../../http/rate-limits.js';
import { ProofFailures } from './proof-failures.js';
import { AgentRequestVerifier, type SignedAgentRequest } from './request-proof.js';
import { SecretBox } from './secret-box.js';
import { AgentsService } from './service.js';

/**
 * Refused identity proofs per identifier, counted over instances (two verifiers, two limiters, one
 * database): past the limit a bad proof answers 429 with Retry-After, a good one is still accepted.
 */
let t: TestApp;
let verifiers: [AgentRequestVerifier, AgentRequestVerifier];

const PATH = '/api/escrow/deliver';
const BODY = '{"deliverable_uri":"https://example.com/x"}';

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  const agents = new AgentsService({ database: t.database, employers: t.services.employers, secrets: new SecretBox({ configured: undefined, dataDir: t.dataDir }) });
  const verifier = () => new AgentRequestVerifier({ database: t.database, agents, tempo: t.chains!.tempo, failures: new ProofFailures(new RateLimits(t.database, rateLimitRules({ proofFailures: 3 }))) });
  verifiers = [verifier(), verifier()];
});
afterAll(() => t?.close());

async function signed(identifier: string, key: `0x${string}`): Promise<SignedAgentRequest> {
  const headers = await agentProofHeaders(identifier, { evm: privateKeyToAccount(key) }, { method: 'POST', path: PATH, body: BODY });
  return { method: 'POST', pathWithQuery: PATH, headers: new Headers(headers), body: new TextEncoder().encode(BODY) };
}

/** The refusal a verification throws (null: accepted). */
async function refusal(instance: 0 | 1, identifier: string, request: SignedAgentRequest): Promise<AppError | null> {
  try {
    await verifiers[instance].verifyForEmployer(randomUUID(), identifier, request);
    return null;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

describe('identity-proof failures per identifier', () => {
  it('answers 429 with Retry-After once an identifier has 3 refused proofs on any instance, and still accepts a valid proof', async () => {
    const victimKey = generatePrivateKey();
    const victim = privateKeyToAccount(victimKey);
    const attacker = generatePrivateKey();
    for (const instance of [0, 1, 0] as const) {
      expect(await refusal(instance, victim.address, await signed(victim.address, attacker))).toMatchObject({ status: 401, code: 'PROOF_INVALID' });
    }
    const limited = await refusal(1, victim.address, await signed(victim.address, attacker));
    expect(limited).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(limited!.headers['Retry-After'])).toBeGreaterThan(0);

    // The attacker's failures lock nobody out: the identifier's own key still proves it, on either instance.
    expect(await refusal(0, victim.address, await signed(victim.address, victimKey))).toBeNull();
    expect(await refusal(1, victim.address, await signed(victim.address, victimKey))).toBeNull();
    // Another identifier has its own count.
    const other = privateKeyToAccount(generatePrivateKey()).address;
    expect(await refusal(0, other, await signed(other, attacker))).toMatchObject({ status: 401 });
  });

  it('does not count valid proofs', async () => {
    const key = generatePrivateKey();
    const { address } = privateKeyToAccount(key);
    for (let i = 0; i < 5; i++) expect(await refusal((i % 2) as 0 | 1, address, await signed(address, key))).toBeNull();
    expect(await refusal(0, address, await signed(address, generatePrivateKey()))).toMatchObject({ status: 401 });
  });
});
