import { randomUUID } from 'node:crypto';
import { generateKeyPairSigner } from '@solana/kit';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { TreasuryService } from '../../../src/features/treasury/service.js';
import { agentProofHeaders } from '../../support/agents.js';
import type { TestApp } from '../../support/app.js';
import { x402Payloads } from '../../support/pay.js';

/**
 * Set-up for the agent/pay reliability tests: an employer with a funded treasury, HMAC agents
 * authorized for it, fees pre-signed on rail B (x402 on Base) and identity proofs pre-signed, so
 * that a burst of calls is only HTTP and the server's own work.
 */
export const PAY = '/api/mpp/agent/pay';

export interface Employer {
  token: string;
  id: string;
}
export interface Agent {
  identifier: string;
  hmac: string;
  authorizationId: string;
}

/** A request ready to send: its body and every header (fee and identity proof). */
export interface SignedRequest {
  /** The route (default agent/pay). */
  path?: string;
  body: string;
  headers: Record<string, string>;
}

/** An agent/pay call ready to send, to a fresh recipient on Tempo. */
export interface SignedCall extends SignedRequest {
  recipient: Address;
}

export const newRecipient = (): Address => privateKeyToAccount(generatePrivateKey()).address;

export function tempoBalance(t: TestApp, owner: Address): Promise<bigint> {
  const tempo = t.chains!.tempo;
  return tempo.connection.publicClient.readContract({ address: tempo.token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
}

export function treasuryService(t: TestApp): TreasuryService {
  return new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
}

/** An employer whose treasury holds `fundUnits` (6-decimal base units) on the embedded Tempo chain. */
export async function fundedEmployer(t: TestApp, name: string, fundUnits: bigint): Promise<Employer> {
  const token = await t.token(`race-${randomUUID()}`, `${randomUUID().slice(0, 8)}@race.example`);
  const created = await t.request('POST', '/api/employers', { token, body: { name } });
  if (created.status !== 201 && created.status !== 200) throw new Error(`creating an employer answered ${created.status}: ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  const service = t.chains!.tempo.serviceAddress;
  const usd = `${fundUnits / 1_000_000n}.${(fundUnits % 1_000_000n).toString().padStart(6, '0')}`;
  const funded = await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: service, amount: usd } });
  if (funded.status !== 200) throw new Error(`faucet answered ${funded.status}: ${await funded.text()}`);
  await t.chains!.tempo.depositToTreasury(await treasuryService(t).accountId(id), fundUnits);
  return { token, id };
}

/** An HMAC agent authorized for the employer with the given caps (USD strings, as the route takes them). */
export async function authorizeAgent(
  t: TestApp,
  employer: Employer,
  caps: { per_tx_cap_usd: string; per_day_cap_usd: string; velocity_per_minute: number },
): Promise<Agent> {
  const body = { label: 'Race bot', agent_identifier: `race-${randomUUID()}`, ...caps };
  const response = await t.request('POST', `/api/employers/${employer.id}/agents/authorizations`, { token: employer.token, body });
  if (response.status !== 201) throw new Error(`authorizing an agent answered ${response.status}: ${await response.text()}`);
  const created = (await response.json()) as { id: string; agent_identifier: string; hmac_secret: string };
  return { identifier: created.agent_identifier, hmac: created.hmac_secret, authorizationId: created.id };
}

/**
 * A fee payer on rail B funded with `fundUsd`: `sign()` returns a fresh PAYMENT-SIGNATURE for one
 * fee of the route at `path` (default agent/pay) (a new EIP-3009 nonce each time), made by @x402's own client from the route's 402.
 */
export async function feePayer(t: TestApp, baseUrl: string, fundUsd: string, path = PAY): Promise<{ payer: Address; sign(): Promise<string> }> {
  const make = await x402Payloads(t, baseUrl, 'B', fundUsd);
  const challenge = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const header = challenge.headers.get('PAYMENT-REQUIRED');
  if (challenge.status !== 402 || !header) throw new Error(`${path} without payment answered ${challenge.status}`);
  const required = decodePaymentRequiredHeader(header);
  // An unsent payload names the payer (its EIP-3009 `from`); it is never presented.
  const probe = (await make(required)).payload as { authorization: { from: Address } };
  return { payer: probe.authorization.from, sign: async () => encodePaymentSignatureHeader(await make(required)) };
}

export function baseBalance(t: TestApp, owner: Address): Promise<bigint> {
  const base = t.localChains!.base;
  return base.connection.publicClient.readContract({ address: base.contracts.stablecoin!, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
}

/** One agent/pay call, fee and identity proof signed now, to a fresh recipient. */
export async function signCall(agent: Agent, employerId: string, amount: string, fee: string): Promise<SignedCall> {
  const recipient = newRecipient();
  const body = JSON.stringify({ employer_id: employerId, recipient_wallet: recipient, amount, reference: `race-${randomUUID()}` });
  const proof = await agentProofHeaders(agent.identifier, { hmac: agent.hmac }, { method: 'POST', path: PAY, body });
  return { recipient, body, headers: { 'content-type': 'application/json', 'PAYMENT-SIGNATURE': fee, ...proof } };
}

export const ESCROW_POST = '/api/mpp/escrow/post';

/** One escrow/post, fee and identity proof signed now, to a fresh worker wallet on Solana. */
export async function signEscrowPost(agent: Agent, employerId: string, amount: string, fee: string): Promise<SignedRequest & { worker: string }> {
  const worker = (await generateKeyPairSigner()).address;
  const body = JSON.stringify({
    employer_id: employerId,
    worker_wallet_address: worker,
    worker_agent_identifier: `solana:${worker}`,
    amount_usdc: amount,
    rubric_prompt: 'Write a short note.\nmust include: ledger',
  });
  const proof = await agentProofHeaders(agent.identifier, { hmac: agent.hmac }, { method: 'POST', path: ESCROW_POST, body });
  return { path: ESCROW_POST, worker, body, headers: { 'content-type': 'application/json', 'PAYMENT-SIGNATURE': fee, ...proof } };
}

export interface Answer {
  status: number;
  code: string | null;
  /** The paid amount the 200 reports, in base units. */
  amount: bigint | null;
  recipient: string | null;
  txHash: string | null;
  /** The escrow a 200 from escrow/post reports. */
  escrowId?: string | null;
}

/** Sends every call at once (each fetch starts before any is awaited) and reads every answer. */
export async function fireAll(baseUrl: string, calls: readonly SignedRequest[]): Promise<Answer[]> {
  const responses = await Promise.all(calls.map((call) => fetch(`${baseUrl}${call.path ?? PAY}`, { method: 'POST', headers: call.headers, body: call.body })));
  return Promise.all(
    responses.map(async (response): Promise<Answer> => {
      const body = (await response.json()) as { code?: string; amount?: string; recipient?: string; tx_hash?: string; escrow_id?: string };
      return {
        status: response.status,
        code: body.code ?? null,
        amount: response.status === 200 && body.amount ? toUnits(body.amount) : null,
        recipient: body.recipient ?? null,
        txHash: body.tx_hash ?? null,
        escrowId: body.escrow_id ?? null,
      };
    }),
  );
}

/** Answers counted by "status code" (e.g. "200", "403 PER_DAY_CAP_EXCEEDED"). */
export function tally(answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const key = answer.code && answer.status !== 200 ? `${answer.status} ${answer.code}` : String(answer.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** A strict decimal USD string (at most 6 places) to base units. */
export function toUnits(usd: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(usd);
  if (!match) throw new Error(`not a USD amount: ${usd}`);
  return BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0'));
}

/** Base units as "$9.30" (cents; more places only when they are not zero). */
export function dollars(units: bigint): string {
  const whole = units / 1_000_000n;
  const fraction = (units % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `$${whole}.${fraction}`;
}

