import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { parseAbiItem, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/http.js';
import { loseAnswer, proofMaker, railA, railASession, type PayingFetch } from '../../../test/support/pay.js';
import { advances } from './tables.js';
import { JobRunner } from '../../jobs/runner.js';
import { createLogger } from '../../log.js';
import { EmployersService } from '../employers/service.js';
import { TreasuryService } from '../treasury/service.js';
import { defineWagesJobs } from './jobs.js';
import { ratePerSecond, WagesService } from './service.js';

/**
 * Streamed wages end to end: the balance stream paid per tick through an mppx session, and
 * advances claimed on the embedded Tempo chain's StreamVesting contract.
 */
let t: TestApp;
let server: LoopbackServer;
let treasury: TreasuryService;
let ownerToken: string;
let employerId: string;
let pay: PayingFetch;

const SALARY_USD = '100000';
const RATE = ratePerSecond(100_000n * 1_000_000n);
const TICK = 1_000n;

const json = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;

async function addEmployee(token: string, id: string, extra: Record<string, unknown> = {}) {
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  const email = `wages-${randomUUID().slice(0, 8)}@wages.example`;
  const response = await t.request('POST', `/api/employers/${id}/team`, {
    token,
    body: { email, full_name: 'Ada Wages', wallet_address: wallet, annual_salary_usd: SALARY_USD, ...extra },
  });
  expect(response.status).toBe(201);
  const employeeId = (await json<{ id: string }>(response)).id;
  // Signing in with the invited email links the user to the employee record.
  return { id: employeeId, wallet, token: await t.token(`employee-${employeeId}`, email) };
}

async function fundTreasury(id: string, usd: bigint) {
  const service = t.chains!.tempo.serviceAddress;
  expect((await t.request('POST', '/api/dev/faucet', { body: { network: 'eip155:4217', address: service, amount: usd.toString() } })).status).toBe(200);
  await t.chains!.tempo.depositToTreasury(await treasury.accountId(id), usd * 1_000_000n);
}

const streamUrl = (query: string) => `${server.url}/api/mpp/employee/balance/stream?${query}`;
const advance = (token: string, employeeAddress: string) =>
  pay('/api/mpp/employee/advance', { method: 'POST', body: { employeeAddress }, headers: { 'X-Identity-Token': token } });

interface Tick {
  tick: number;
  employeeId: string;
  address: string;
  balance: string;
  accrued_raw: string;
  accrued_usd: string;
  salary_per_second_usd: string;
  timestamp: number;
}

/** Reads `count` ticks from a paid stream, then leaves. */
async function readTicks(manager: Awaited<ReturnType<typeof railASession>>, url: string, headers: Record<string, string>, count: number) {
  const ticks: Tick[] = [];
  const leave = new AbortController();
  for await (const data of await manager.sse(url, { headers, signal: leave.signal })) {
    ticks.push(JSON.parse(data) as Tick);
    if (ticks.length === count) {
      leave.abort();
      break;
    }
  }
  return ticks;
}

beforeAll(async () => {
  t = await startTestApp({}, { chains: true });
  server = await serveOnLoopback(t.app.fetch);
  treasury = new TreasuryService({ tempo: t.chains!.tempo, employers: t.services.employers });
  ownerToken = await t.token('wages-owner', 'wages-owner@wages.example');
  employerId = (await json<{ id: string }>(await t.request('POST', '/api/employers', { token: ownerToken, body: { name: 'Wages Inc' } }))).id;
  await fundTreasury(employerId, 10_000n);
  pay = (await railA(t, server.url, '20')).pay;
});

afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('GET /api/mpp/employee/balance/stream', () => {
  it('asks for an MPP session priced per tick', async () => {
    const response = await fetch(streamUrl(`employeeId=${randomUUID()}`));
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ unit: 'tick', price: '0.001000', rails: ['A'] });
  });

  it('streams one tick a second at the salary rate, and charges exactly the ticks served', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const manager = await railASession(t, server.url);
    const started = Date.now();
    const ticks = await readTicks(manager, streamUrl(`employeeId=${employee.id}`), { 'X-Identity-Token': employee.token }, 5);
    const elapsed = Date.now() - started;

    expect(ticks.map((tick) => tick.tick)).toEqual([1, 2, 3, 4, 5]);
    // 100,000 USD a year is 0.003170 USD a second (3,170 base units, rounded down).
    expect(RATE).toBe(3170n);
    expect(new Set(ticks.map((tick) => tick.salary_per_second_usd))).toEqual(new Set(['0.003170']));
    expect(new Set(ticks.map((tick) => [tick.employeeId, tick.address].join()))).toEqual(new Set([[employee.id, employee.wallet].join()]));
    // Each tick's accrual is the rate times the whole seconds since the first: integer math, increasing.
    const first = ticks[0]!;
    for (const tick of ticks.slice(1)) {
      const seconds = BigInt(Math.floor(tick.timestamp / 1000) - Math.floor(first.timestamp / 1000));
      expect(BigInt(tick.accrued_raw) - BigInt(first.accrued_raw)).toBe(seconds * RATE);
      expect(BigInt(tick.balance) - BigInt(tick.accrued_raw)).toBe(0n); // a new wallet holds nothing yet
    }
    expect(BigInt(ticks[4]!.accrued_raw)).toBeGreaterThan(BigInt(ticks[0]!.accrued_raw));
    // Five events a second apart: about four seconds from the first to the last.
    expect(ticks[4]!.timestamp - ticks[0]!.timestamp).toBeGreaterThanOrEqual(3_900);
    expect(elapsed).toBeLessThan(15_000);

    // The client left after five: five ticks were charged, no more.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const channel = await t.payments!.sessions.channel(manager.channelId!);
    expect(channel).toMatchObject({ spent: 5n * TICK, units: 5 });
    await manager.close();
  });

  it('takes the legacy address, and the employer owner', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const manager = await railASession(t, server.url);
    const ticks = await readTicks(manager, streamUrl(`address=${employee.wallet}`), { 'X-Identity-Token': ownerToken }, 1);
    expect(ticks[0]).toMatchObject({ tick: 1, employeeId: employee.id, salary_per_second_usd: '0.003170' });
    await manager.close();
  });

  it('answers 404 to another employer and to anonymous payers, like a missing employee', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const rivalToken = await t.token('wages-rival', 'rival@wages.example');
    await t.request('POST', '/api/employers', { token: rivalToken, body: { name: 'Rival' } });
    const manager = await railASession(t, server.url);
    for (const headers of [{ 'X-Identity-Token': rivalToken }, {}] as Record<string, string>[]) {
      const response = await manager.fetch(streamUrl(`employeeId=${employee.id}`), { headers });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    const missing = await manager.fetch(streamUrl(`employeeId=${randomUUID()}`), { headers: { 'X-Identity-Token': ownerToken } });
    expect(missing.status).toBe(404);
    await manager.close();
  });

  it('refuses a request that names no employee (400 naming the field)', async () => {
    const manager = await railASession(t, server.url);
    const response = await manager.fetch(streamUrl(''), { headers: { 'X-Identity-Token': ownerToken } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'employeeId' });
    await manager.close();
  });

  it('ends the stream when the session runs dry', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    // A deposit of three ticks: the fourth needs a voucher the client cannot sign.
    const manager = await railASession(t, server.url, '0.003');
    const ticks: Tick[] = [];
    const reading = (async () => {
      for await (const data of await manager.sse(streamUrl(`employeeId=${employee.id}`), { headers: { 'X-Identity-Token': employee.token } })) {
        ticks.push(JSON.parse(data) as Tick);
      }
    })();
    await reading.catch(() => {});
    expect(ticks.length).toBe(3);
    // The stream's ticks are written when the server has seen it end (metering.ts), just after the client did.
    await expect.poll(() => t.payments!.sessions.channel(manager.channelId!), { timeout: 5_000 }).toMatchObject({ spent: 3n * TICK, units: 3 });
  }, 60_000);
  it('shows a claim in a stream already open: accrual restarts and the wallet holds the claim', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const manager = await railASession(t, server.url);
    const ticks: Tick[] = [];
    let claimed: bigint | null = null;
    const leave = new AbortController();
    for await (const data of await manager.sse(streamUrl(`employeeId=${employee.id}`), { headers: { 'X-Identity-Token': employee.token }, signal: leave.signal })) {
      const tick = JSON.parse(data) as Tick;
      ticks.push(tick);
      if (ticks.length === 3) {
        const response = await advance(employee.token, employee.wallet);
        expect(response.status).toBe(200);
        claimed = BigInt((await json<{ amount: string }>(response)).amount);
      }
      // Done once a tick reflects the claim (the wallet part of the balance), or after 8 ticks.
      if ((claimed !== null && BigInt(tick.balance) - BigInt(tick.accrued_raw) === claimed) || ticks.length === 8) break;
    }
    leave.abort();
    await manager.close();
    const last = ticks.at(-1)!;
    expect(claimed).not.toBeNull();
    expect(BigInt(last.balance) - BigInt(last.accrued_raw)).toBe(claimed);
    expect(BigInt(last.accrued_raw)).toBeLessThan(BigInt(ticks[2]!.accrued_raw));
  });
});

describe('POST /api/mpp/employee/advance', () => {
  it('claims what accrued to the wallet, on chain', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    // The stream starts on first use; let a few seconds accrue.
    const manager = await railASession(t, server.url);
    await readTicks(manager, streamUrl(`employeeId=${employee.id}`), { 'X-Identity-Token': employee.token }, 1);
    await manager.close();
    await new Promise((resolve) => setTimeout(resolve, 2_100));

    const response = await advance(employee.token, employee.wallet);
    expect(response.status).toBe(200);
    const body = await json<{ success: boolean; employee_address: string; tx_hash: string; claimed_at: string; amount: string }>(response);
    expect(body).toMatchObject({ success: true, employee_address: employee.wallet, tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(Date.parse(body.claimed_at)).not.toBeNaN();
    const amount = BigInt(body.amount);
    expect(amount % RATE).toBe(0n);
    expect(amount).toBeGreaterThanOrEqual(2n * RATE);
    expect(await t.chains!.tempo.balanceOf(employee.wallet)).toBe(amount);
    const [row] = await t.database.db.select().from(advances).where(eq(advances.employeeId, employee.id));
    expect(row).toMatchObject({ status: 'claimed', amount, txHash: body.tx_hash });
  });

  it('pays once when two advances race', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const manager = await railASession(t, server.url);
    await readTicks(manager, streamUrl(`employeeId=${employee.id}`), { 'X-Identity-Token': employee.token }, 1);
    await manager.close();
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    const other = (await railA(t, server.url, '5')).pay;
    const responses = await Promise.all([
      advance(employee.token, employee.wallet),
      other('/api/mpp/employee/advance', { method: 'POST', body: { employeeAddress: employee.wallet }, headers: { 'X-Identity-Token': employee.token } }),
    ]);
    // Overlapping, the second is refused (409 in progress, or 422 nothing left); one after the other
    // (a busy machine), it claims only the seconds accrued since. Either way each second is paid once.
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    expect([200, 409, 422], JSON.stringify(await Promise.all(responses.map((r) => r.clone().text())))).toContain(statuses[1]);
    const paid = await Promise.all(responses.filter((r) => r.status === 200).map((r) => json<{ amount: string }>(r)));
    expect(await t.chains!.tempo.balanceOf(employee.wallet)).toBe(paid.reduce((sum, p) => sum + BigInt(p.amount), 0n));
  });

  it('answers 422 NOTHING_ACCRUED when no second has passed since the last claim', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    // The first advance starts the stream; a second may or may not have accrued by its claim.
    expect([200, 422]).toContain((await advance(employee.token, employee.wallet)).status);
    // Pin the chain's clock: a claim in a block with the latest timestamp, then the advance's fee and
    // claim in blocks with the same timestamp, so zero seconds accrue in between. The fee's block
    // comes first, and the chain's clock runs on from its pinned time in whole seconds: when the real
    // second turns between those two blocks, one second accrues and the advance pays it. Then again.
    const tempo = t.chains!.tempo;
    const pinClock = async (timestamp: bigint) =>
      t.embeddedChains!.tempo.evm.request({ method: 'evm_setNextBlockTimestamp', params: [`0x${timestamp.toString(16)}`] } as never);
    let response: Response;
    let before: bigint;
    let attempts = 0;
    do {
      const { timestamp } = await tempo.connection.publicClient.getBlock();
      await pinClock(timestamp);
      await tempo.claimSalary(employee.wallet as Address).catch(() => {}); // reverts when nothing accrued: the stream already starts at `timestamp`
      await pinClock(timestamp);
      before = await tempo.balanceOf(employee.wallet as Address);
      response = await advance(employee.token, employee.wallet);
      expect([200, 422]).toContain(response.status);
    } while (response.status === 200 && ++attempts < 5);
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: 'NOTHING_ACCRUED', error: expect.stringMatching(/Nothing has accrued/) });
    expect(await tempo.balanceOf(employee.wallet as Address)).toBe(before);
    const rows = await t.database.db.select().from(advances).where(eq(advances.employeeId, employee.id));
    expect(rows.filter((row) => row.status === 'pending')).toEqual([]);
    expect(rows.at(-1)?.status).not.toBe('claimed');
  });

  it('answers 404 to a caller who is neither the employee nor their employer', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const stranger = await t.token('wages-stranger', 'stranger@wages.example');
    const response = await advance(stranger, employee.wallet);
    expect(response.status).toBe(404);
  });

  it('refuses a malformed address (400 naming the field)', async () => {
    const response = await advance(ownerToken, '0x1234');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'employeeAddress' });
  });
});

describe('POST /api/employees/{id}/advance (the portal: free for the employee)', () => {
  const ownAdvance = (token: string | undefined, id: string, headers: Record<string, string> = {}) =>
    t.request('POST', `/api/employees/${id}/advance`, { token, headers });
  /** An employee whose stream has run for a couple of seconds. */
  async function accruing() {
    const employee = await addEmployee(ownerToken, employerId);
    expect((await t.request('GET', `/api/employees/${employee.id}/salary-stream`, { token: employee.token })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    return employee;
  }

  it('claims what accrued to the wallet with no fee, and the claim waits to be netted from the next payroll', async () => {
    const employee = await accruing();
    const response = await ownAdvance(employee.token, employee.id);
    expect(response.status).toBe(200);
    const body = await json<{ success: boolean; employee_address: string; tx_hash: string; amount: string; amount_usd: string }>(response);
    expect(body).toMatchObject({ success: true, employee_address: employee.wallet, tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const amount = BigInt(body.amount);
    expect(amount).toBeGreaterThanOrEqual(2n * RATE);
    expect(await t.chains!.tempo.balanceOf(employee.wallet)).toBe(amount);
    const [row] = await t.database.db.select().from(advances).where(eq(advances.employeeId, employee.id));
    expect(row).toMatchObject({ status: 'claimed', amount, feePaymentId: null, nettedRunId: null });
  });

  it('allows one advance a minute per employee: a second, even at the same moment, is 429 with Retry-After and pays nothing', async () => {
    const employee = await accruing();
    const responses = await Promise.all([ownAdvance(employee.token, employee.id), ownAdvance(employee.token, employee.id)]);
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 429]);
    const refused = responses.find((r) => r.status === 429)!;
    expect(await json(refused)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    const paid = await json<{ amount: string }>(responses.find((r) => r.status === 200)!);
    expect(await t.chains!.tempo.balanceOf(employee.wallet)).toBe(BigInt(paid.amount));
    const rows = await t.database.db.select().from(advances).where(eq(advances.employeeId, employee.id));
    expect(rows).toHaveLength(1);
  });

  it('answers a repeated Idempotency-Key with the first claim, not a second one', async () => {
    const employee = await accruing();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await ownAdvance(employee.token, employee.id, headers);
    expect(first.status).toBe(200);
    const again = await ownAdvance(employee.token, employee.id, headers);
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(await json(first));
    expect(await t.database.db.select().from(advances).where(eq(advances.employeeId, employee.id))).toHaveLength(1);
  });

  it("is the employee's alone: the owner and another employee get 404 like a missing employee, anonymous callers 401", async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const other = await addEmployee(ownerToken, employerId);
    expect((await ownAdvance(ownerToken, employee.id)).status).toBe(404);
    expect((await ownAdvance(other.token, employee.id)).status).toBe(404);
    expect((await ownAdvance(employee.token, randomUUID())).status).toBe(404);
    expect((await ownAdvance(undefined, employee.id)).status).toBe(401);
    expect(await t.database.db.select().from(advances).where(eq(advances.employeeId, employee.id))).toEqual([]);
  });

  it('refuses an id that is not a uuid (400 naming the field)', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const response = await ownAdvance(employee.token, 'not-a-uuid');
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ code: 'VALIDATION_ERROR', field: 'id' });
  });
});

describe('GET /api/employees/{id}/salary-stream', () => {
  it("starts the employee's own stream for free and reports what the portal ticks from", async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const response = await t.request('GET', `/api/employees/${employee.id}/salary-stream`, { token: employee.token });
    expect(response.status).toBe(200);
    const stream = await json<Record<string, string | boolean>>(response);
    expect(stream).toMatchObject({ employee_id: employee.id, wallet_address: employee.wallet, active: true, rate_per_second: RATE.toString(), wallet_balance: '0' });
    expect(Number(stream.accruing_since)).toBeGreaterThan(0);
    // The chain agrees: the stream runs at the salary rate.
    expect((await t.chains!.tempo.salaryStream(employee.wallet)).ratePerSecond).toBe(RATE);
  });

  it('is the employee\'s alone: the owner, another employee and anonymous callers get 404 or 401', async () => {
    const employee = await addEmployee(ownerToken, employerId);
    const other = await addEmployee(ownerToken, employerId);
    const path = `/api/employees/${employee.id}/salary-stream`;
    expect((await t.request('GET', path, { token: ownerToken })).status).toBe(404);
    expect((await t.request('GET', path, { token: other.token })).status).toBe(404);
    expect((await t.request('GET', path)).status).toBe(401);
    expect((await t.request('GET', '/api/employees/not-a-uuid/salary-stream', { token: employee.token })).status).toBe(400);
  });
});

describe('charge before acting', () => {
  const ADVANCE = '/api/mpp/employee/advance';
  const send = (proof: Record<string, string>, employeeAddress: string) =>
    fetch(`${server.url}${ADVANCE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Identity-Token': ownerToken, ...proof },
      body: JSON.stringify({ employeeAddress }),
    });
  const advancesOf = (employeeId: string) => t.database.db.select().from(advances).where(eq(advances.employeeId, employeeId));
  /** An employee whose stream runs (started for free by their own read) and has accrued for a second. */
  async function accruing() {
    const employee = await addEmployee(ownerToken, employerId);
    expect((await t.request('GET', `/api/employees/${employee.id}/salary-stream`, { token: employee.token })).status).toBe(200);
    return employee;
  }
  const second = () => new Promise((resolve) => setTimeout(resolve, 1_100));



  it('two advances at once from a payer who can cover one fee: one claim on chain, the other refused (402) before claiming', async () => {
    const employees = [await accruing(), await accruing()];
    await second();
    const payer = await proofMaker(t, server.url, 'A', '0.50');
    const proofs = [await payer.proof(ADVANCE), await payer.proof(ADVANCE)];

    const responses = await Promise.all(employees.map((employee, i) => send(proofs[i]!, employee.wallet)));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 402]);
    expect((await json<{ code: string }>(responses.find((r) => r.status === 402)!)).code).toBe('PAYMENT_SETTLEMENT_FAILED');

    const paid = responses.findIndex((r) => r.status === 200);
    const refused = employees[1 - paid]!;
    const { amount } = await json<{ amount: string }>(responses[paid]!);
    expect(await t.chains!.tempo.balanceOf(employees[paid]!.wallet)).toBe(BigInt(amount));
    expect(await t.chains!.tempo.balanceOf(refused.wallet)).toBe(0n);
    expect((await advancesOf(employees[paid]!.id)).map((row) => [row.status, typeof row.feePaymentId])).toEqual([['claimed', 'string']]);
    expect(await advancesOf(refused.id)).toEqual([]);
    expect(await t.chains!.tempo.balanceOf(payer.payer as Address)).toBe(0n);
  });

  it('a fee whose answer was lost: the same proof and request get the first claim again, with no second claim and no second charge', async () => {
    const employee = await accruing();
    await second();
    const payer = await proofMaker(t, server.url, 'A', '5');
    const proof = await payer.proof(ADVANCE);
    const first = await send(proof, employee.wallet);
    expect(first.status).toBe(200);
    const answer = await json<{ amount: string }>(first);
    const paymentId = await loseAnswer(t, { payer: payer.payer });
    await second(); // a second claim now would pay what accrued since

    const again = await send(proof, employee.wallet);
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(answer);
    expect(await t.chains!.tempo.balanceOf(employee.wallet)).toBe(BigInt(answer.amount));
    expect((await advancesOf(employee.id)).map((row) => [row.status, row.feePaymentId])).toEqual([['claimed', paymentId]]);
    expect(await t.chains!.tempo.balanceOf(payer.payer as Address)).toBe(4_500_000n);

    // Served now: a third time is a replay.
    const third = await send(proof, employee.wallet);
    expect(third.status).toBe(402);
    expect((await json<{ code: string }>(third)).code).toBe('PAYMENT_ALREADY_USED');
  });
});

describe('a wallet changed under review (issue 26, item 3)', () => {
  const ADVANCE = '/api/mpp/employee/advance';
  const newWallet = () => privateKeyToAccount(generatePrivateKey()).address;
  const advancesOf = (employeeId: string) => t.database.db.select().from(advances).where(eq(advances.employeeId, employeeId));
  const second = () => new Promise((resolve) => setTimeout(resolve, 1_100));
  const changeOwnWallet = (employee: { id: string; token: string }, wallet: string) =>
    t.request('PATCH', `/api/employees/${employee.id}`, { token: employee.token, body: { wallet_address: wallet } });
  const stoppedEvent = parseAbiItem('event StreamStopped(address indexed employee, uint256 accrued)');
  const claimedEvent = parseAbiItem('event Claimed(address indexed employee, uint256 indexed accountId, uint256 amount)');
  /** What StreamVesting paid `wallet` (every Claimed event, a claim's or a stop's), and how many stops it logged. */
  async function vestingPaid(wallet: Address) {
    const client = t.chains!.tempo.connection.publicClient;
    const address = t.chains!.tempo.contracts.streamVesting;
    const claims = await client.getLogs({ address, event: claimedEvent, args: { employee: wallet }, fromBlock: 0n });
    const stops = await client.getLogs({ address, event: stoppedEvent, args: { employee: wallet }, fromBlock: 0n });
    return { total: claims.reduce((sum, log) => sum + log.args.amount!, 0n), stops: stops.length };
  }
  /** An employee whose stream runs on their first wallet (started by their own free read) and has accrued a second. */
  async function streaming() {
    const employee = await addEmployee(ownerToken, employerId);
    expect((await t.request('GET', `/api/employees/${employee.id}/salary-stream`, { token: employee.token })).status).toBe(200);
    await second();
    return employee;
  }

  it('refuses an advance and a stream to the new wallet while its review is pending (409 WALLET_UNDER_REVIEW): no claim, no stream, the fee kept', async () => {
    const employee = await streaming();
    const wallet = newWallet();
    const changed = await changeOwnWallet(employee, wallet);
    expect(changed.status).toBe(200);
    expect(await json(changed)).toMatchObject({ wallet_address: wallet, manual_review_status: 'pending' });

    const payer = await proofMaker(t, server.url, 'A', '0.50');
    const response = await fetch(`${server.url}${ADVANCE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Identity-Token': employee.token, ...(await payer.proof(ADVANCE)) },
      body: JSON.stringify({ employeeAddress: wallet }),
    });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ code: 'WALLET_UNDER_REVIEW' });
    // A business refusal after payment keeps the fee (< 500), as every other refusal does.
    expect(await t.chains!.tempo.balanceOf(payer.payer as Address)).toBe(0n);
    // Nothing was claimed for the new wallet, and no stream runs to it.
    expect(await t.chains!.tempo.balanceOf(wallet)).toBe(0n);
    expect((await t.chains!.tempo.salaryStream(wallet)).active).toBe(false);
    expect((await advancesOf(employee.id)).filter((row) => row.feePaymentId !== null)).toEqual([]);
    // The free view of the stream does not start one either.
    const view = await t.request('GET', `/api/employees/${employee.id}/salary-stream`, { token: employee.token });
    expect(view.status).toBe(409);
    expect(await view.json()).toMatchObject({ code: 'WALLET_UNDER_REVIEW' });
    expect((await t.chains!.tempo.salaryStream(wallet)).active).toBe(false);

    // Once the employer approves the new wallet, it streams.
    const approved = await t.request('PATCH', `/api/employers/${employerId}/team/${employee.id}`, { token: ownerToken, body: { manual_review: { status: 'approved' } } });
    expect(approved.status).toBe(200);
    expect((await t.request('GET', `/api/employees/${employee.id}/salary-stream`, { token: employee.token })).status).toBe(200);
    expect((await t.chains!.tempo.salaryStream(wallet)).active).toBe(true);
  });

  it("stops the old wallet's stream on chain at once; what it accrued is paid to the old wallet once and recorded as an advance", async () => {
    const employee = await streaming();
    expect((await changeOwnWallet(employee, newWallet())).status).toBe(200);

    // Read straight after the answer: StreamVesting no longer streams to the old wallet.
    const old = await t.chains!.tempo.salaryStream(employee.wallet as Address);
    expect(old.active).toBe(false);
    await second();
    expect(await t.chains!.tempo.accruedSalary(employee.wallet as Address)).toBe(0n);
    // The stop paid what had accrued, to the old wallet, and the ledger records it once.
    const paid = await t.chains!.tempo.balanceOf(employee.wallet as Address);
    expect(paid).toBeGreaterThanOrEqual(RATE);
    expect(paid % RATE).toBe(0n);
    expect(await vestingPaid(employee.wallet as Address)).toEqual({ total: paid, stops: 1 });
    expect((await advancesOf(employee.id)).map((row) => [row.status, row.amount])).toEqual([['claimed', paid]]);
  });

  it('stops it too when the owner changes the wallet, and when the owner removes the employee', async () => {
    const moved = await streaming();
    const team = (id: string, body: unknown) => t.request('PATCH', `/api/employers/${employerId}/team/${id}`, { token: ownerToken, body });
    expect((await team(moved.id, { wallet_address: newWallet() })).status).toBe(200);
    expect((await t.chains!.tempo.salaryStream(moved.wallet as Address)).active).toBe(false);

    const removed = await streaming();
    expect((await team(removed.id, { remove: true })).status).toBe(200);
    expect((await t.chains!.tempo.salaryStream(removed.wallet as Address)).active).toBe(false);
    for (const employee of [moved, removed]) {
      const paid = await t.chains!.tempo.balanceOf(employee.wallet as Address);
      expect((await advancesOf(employee.id)).map((row) => row.amount)).toEqual([paid]);
    }
  });

  it('a process that died between the wallet change and the chain call: the job stops the stream once, and running again changes nothing', async () => {
    const employee = await streaming();
    // The same change committed by a process that then died: its EmployersService had nobody to tell.
    const dying = new EmployersService({ database: t.database, users: t.services.users });
    const caller = await t.services.users.resolveCaller(await t.verifyIdentity(employee.token));
    await dying.updateOwnProfile(caller, employee.id, { walletAddress: newWallet() }, 'crashed-request');
    expect((await t.chains!.tempo.salaryStream(employee.wallet as Address)).active).toBe(true);

    // Another instance's job runner picks the stop up.
    const jobs = new JobRunner(t.database, createLogger('silent'), { pollingIntervalSeconds: 0.5, cronIntervalSeconds: 1 });
    defineWagesJobs(jobs, { wages: new WagesService({ database: t.database, employers: t.services.employers, treasury, tempo: t.chains!.tempo }) });
    await jobs.start();
    try {
      const deadline = Date.now() + 20_000;
      while ((await t.chains!.tempo.salaryStream(employee.wallet as Address)).active && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await jobs.stop();
    }
    expect((await t.chains!.tempo.salaryStream(employee.wallet as Address)).active).toBe(false);
    const wages = new WagesService({ database: t.database, employers: t.services.employers, treasury, tempo: t.chains!.tempo });
    // Twice more, the second while the first runs: nothing left to stop, nothing recorded twice.
    await Promise.all([wages.stopStreams(), wages.stopStreams()]);
    const paid = await t.chains!.tempo.balanceOf(employee.wallet as Address);
    expect(await vestingPaid(employee.wallet as Address)).toEqual({ total: paid, stops: 1 });
    expect((await advancesOf(employee.id)).map((row) => [row.status, row.amount])).toEqual([['claimed', paid]]);
  });

  it('a salary change re-rates the stream: what accrued at the old rate is paid and recorded as an advance, then it accrues at the new rate', async () => {
    const employee = await streaming();
    const raised = await t.request('PATCH', `/api/employers/${employerId}/team/${employee.id}`, { token: ownerToken, body: { annual_salary_usd: '200000' } });
    expect(raised.status).toBe(200);
    expect((await t.request('GET', `/api/employees/${employee.id}/salary-stream`, { token: employee.token })).status).toBe(200);

    const stream = await t.chains!.tempo.salaryStream(employee.wallet as Address);
    expect(stream).toMatchObject({ active: true, ratePerSecond: ratePerSecond(200_000n * 1_000_000n) });
    const paid = await t.chains!.tempo.balanceOf(employee.wallet as Address);
    expect(paid).toBeGreaterThanOrEqual(RATE);
    expect((await vestingPaid(employee.wallet as Address)).total).toBe(paid);
    expect((await advancesOf(employee.id)).map((row) => [row.status, row.amount])).toEqual([['claimed', paid]]);
  });

  it('an advance whose claim landed but whose record a crash lost is recorded from the chain, not closed without its amount', async () => {
    const employee = await streaming();
    // What a process that died after its claim was mined leaves: the pending row, holding the claim's hash.
    let hash: string | null = null;
    await t.chains!.tempo.claimSalary(employee.wallet as Address, { beforeBroadcast: async (signed) => void (hash = signed.hash) });
    const [interrupted] = await t.database.db
      .insert(advances)
      .values({ employeeId: employee.id, txHash: hash, createdAt: new Date(Date.now() - 5 * 60_000) })
      .returning();
    await second();

    const response = await advance(employee.token, employee.wallet);
    expect(response.status).toBe(200);
    const paid = await t.chains!.tempo.balanceOf(employee.wallet as Address);
    expect((await vestingPaid(employee.wallet as Address)).total).toBe(paid);
    const rows = await advancesOf(employee.id);
    expect(rows.find((row) => row.id === interrupted!.id)).toMatchObject({ status: 'claimed', txHash: hash });
    expect(rows.filter((row) => row.status === 'claimed').reduce((sum, row) => sum + row.amount!, 0n)).toBe(paid);
  });

  it('a wallet change racing advances: every unit StreamVesting paid is recorded once, and only the old wallet was paid', async () => {
    const employee = await streaming();
    const wallet = newWallet();
    const payers = await Promise.all([railA(t, server.url, '1'), railA(t, server.url, '1')]);
    const requests = payers.map(({ pay: payWith }) =>
      payWith(ADVANCE, { method: 'POST', body: { employeeAddress: employee.wallet }, headers: { 'X-Identity-Token': employee.token } }),
    );
    const [change, ...answers] = await Promise.all([changeOwnWallet(employee, wallet), ...requests]);
    expect(change.status).toBe(200);
    // Each advance either claimed before the stop, or found the wallet gone (404), in progress (409) or empty (422).
    for (const answer of answers) expect([200, 404, 409, 422], await answer.clone().text()).toContain(answer.status);

    expect((await t.chains!.tempo.salaryStream(employee.wallet as Address)).active).toBe(false);
    expect((await t.chains!.tempo.salaryStream(wallet)).active).toBe(false);
    expect(await t.chains!.tempo.balanceOf(wallet)).toBe(0n);
    const paid = await t.chains!.tempo.balanceOf(employee.wallet as Address);
    expect((await vestingPaid(employee.wallet as Address)).total).toBe(paid);
    const recorded = (await advancesOf(employee.id)).filter((row) => row.status === 'claimed');
    expect(recorded.reduce((sum, row) => sum + row.amount!, 0n)).toBe(paid);
  });
});

describe('the balance stream at shutdown', () => {
  it('ends with the session receipt for the ticks served when the server shuts down (AppDependencies.shutdown)', async () => {
    // The same services behind a second app whose shutdown signal this test owns.
    const shutdown = new AbortController();
    const app = t.anotherInstance({ shutdown: shutdown.signal });
    const closing = await serveOnLoopback(app.fetch);
    try {
      const employee = await addEmployee(ownerToken, employerId);
      const manager = await railASession(t, closing.url);
      const receipts: unknown[] = [];
      const ticks: Tick[] = [];
      const stream = await manager.sse(`${closing.url}/api/mpp/employee/balance/stream?employeeId=${employee.id}`, {
        headers: { 'X-Identity-Token': employee.token },
        onReceipt: (receipt) => receipts.push(receipt),
      });
      for await (const data of stream) {
        ticks.push(JSON.parse(data) as Tick);
        if (ticks.length === 2) shutdown.abort();
      }
      // The loop ended without the client leaving: the server ended the stream, receipt last.
      expect(ticks.map((tick) => tick.tick)).toEqual([1, 2]);
      expect(receipts).toHaveLength(1);
      expect(receipts[0]).toMatchObject({ units: 2, spent: (2n * TICK).toString() });
      await manager.close();
    } finally {
      await closing.close();
    }
  });
});
