import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { and, eq, sql } from 'drizzle-orm';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payrollRuns } from '../../src/features/payroll/tables.js';
import { payments } from '../../src/payments/tables.js';
import { findPaidRoute } from '../../src/payments/prices.js';
import { parseUsd } from '../../src/money.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createScratchDatabase } from '../support/database.js';
import { railA, x402Payloads } from '../support/pay.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../support/round-robin-proxy.js';
import { freePort, RemoteService, startDevnetProcess, startServiceProcess, waitForHealthy, type ServiceProcess } from '../support/service-process.js';
import { reportFigure } from '../reliability/figures.js';
import {
  authorizeAgent,
  baseBalance,
  dollars,
  feePayer,
  fireAll,
  fundedEmployer,
  newRecipient,
  PAY,
  signCall,
  tally,
  tempoBalance,
} from '../reliability/support/agent-pay.js';

/**
 * Several instances on one database (issue 25, part 5): PostgreSQL, one devnet process, three
 * service processes sharing the database and DATA_DIR, and a round-robin proxy in front. The
 * guarantees that hold for one instance must hold across them: caps, single use of a proof, the
 * service wallet's nonces, and a payroll run whose instance dies mid-execute.
 */
const SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const INSTANCES = 3;
const CHECK = '/api/mpp/compliance/check';

let database: { url: string; drop(): Promise<void> };
let dataDir: string;
let devnetDir: string;
let devnet: ChildProcess;
let devnetUrl: string;
const instances: { process: ServiceProcess; url: string }[] = [];
let proxy: RoundRobinProxy;
let t: TestApp;

const json = async <T>(response: Response): Promise<T> => (await response.json()) as T;

/** One instance; the last one is armed to kill itself mid-execute (the payroll test sends it there). */
async function startInstance(index: number): Promise<void> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startServiceProcess({
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    DEVNET_URL: devnetUrl,
    LOCAL_TAKEOVER_SECONDS: '1',
    ...(index === INSTANCES - 1 ? { CRASH_AT: 'payroll.before-broadcast' } : {}),
  });
  instances[index] = { process: child, url };
  await waitForHealthy(url, 90_000).catch((error: Error) => {
    throw new Error(`instance ${index} did not start: ${error.message}\n${child.output()}`);
  });
}

beforeAll(async () => {
  database = await createScratchDatabase(SERVER_URL);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-'));
  devnetDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-devnet-'));
  ({ url: devnetUrl, child: devnet } = await startDevnetProcess(devnetDir));
  // The first creates the shared keys in DATA_DIR and seeds; the others start together.
  await startInstance(0);
  await Promise.all(Array.from({ length: INSTANCES - 1 }, (_, i) => startInstance(i + 1)));
  proxy = await startRoundRobinProxy(instances.map((i) => i.url));
  // Set-up and reads in this process: the same database, DATA_DIR and devnet as the instances.
  t = await startTestApp({}, { devnet: { url: devnetUrl, databaseUrl: database.url, dataDir } });
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  await t?.close();
  for (const instance of instances) instance?.process.child.kill('SIGKILL');
  await Promise.all(instances.map((instance) => instance?.process.exited));
  devnet?.kill('SIGTERM');
  await database?.drop();
  for (const dir of [dataDir, devnetDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('three instances, one database, one devnet, a round-robin proxy', () => {
  it('50 writes with the service key at once, spread over the instances: no nonce error, each nonce once', async ({ task }) => {
    const before = proxy.served();
    const holders = Array.from({ length: 50 }, () => newRecipient());
    const started = Date.now();
    const answers = await Promise.all(
      holders.map((address) => fetch(`${proxy.url}/api/dev/faucet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ network: 'eip155:8453', address, amount: '1' }) })),
    );
    const ms = Date.now() - started;
    expect(answers.map((a) => a.status)).toEqual(holders.map(() => 200));
    const hashes = await Promise.all(answers.map(async (a) => (await json<{ tx_hash: Hex }>(a)).tx_hash));
    const client = t.localChains!.base.connection.publicClient;
    const nonces = await Promise.all(hashes.map(async (hash) => (await client.getTransaction({ hash })).nonce));
    expect(new Set(nonces).size).toBe(50);
    for (const holder of holders) expect(await baseBalance(t, holder)).toBe(1_000_000n);
    const perInstance = proxy.served().map((n, i) => n - before[i]!);
    expect(perInstance.every((n) => n > 0)).toBe(true);

    reportFigure(task, {
      check: 'cluster-nonces',
      summary: `50 concurrent faucet mints with the one operator key through the proxy (${perInstance.join('/')} per instance, ${(ms / 1000).toFixed(1)} s): 50 mined, 0 nonce errors, 50 distinct nonces, every balance exact`,
    });
  });

  it('200 concurrent agent/pay calls across the instances against one daily cap: filled exactly, never overshot', async ({ task }) => {
    const amount = 250_000n;
    const cap = 9_300_000n;
    const employer = await fundedEmployer(t, 'Cluster Race Co', 1_000_000_000n);
    const agent = await authorizeAgent(t, employer, { per_tx_cap_usd: '1', per_day_cap_usd: dollars(cap).slice(1), velocity_per_minute: 600 });
    const fees = await feePayer(t, proxy.url, '12');
    const calls = [];
    for (let i = 0; i < 200; i++) calls.push(await signCall(agent, employer.id, dollars(amount).slice(1), await fees.sign()));

    const started = Date.now();
    const answers = await fireAll(proxy.url, calls);
    const ms = Date.now() - started;
    const counts = tally(answers);
    const expectedPaid = Number(cap / amount);
    expect(counts).toEqual({ '200': expectedPaid, '403 PER_DAY_CAP_EXCEEDED': 200 - expectedPaid });
    const paidTotal = answers.reduce((sum, answer) => sum + (answer.status === 200 ? answer.amount! : 0n), 0n);
    const received = await Promise.all(calls.map((call) => tempoBalance(t, call.recipient)));
    answers.forEach((answer, i) => expect(received[i], `recipient of call ${i}`).toBe(answer.status === 200 ? answer.amount : 0n));
    const overshoot = paidTotal > cap ? paidTotal - cap : 0n;
    expect(overshoot).toBe(0n);
    const feeRows = await t.database.db.select().from(payments).where(and(eq(payments.route, `POST ${PAY}`), eq(payments.payer, fees.payer)));
    expect(feeRows.filter((row) => row.status === 'served')).toHaveLength(200);

    reportFigure(task, {
      check: 'cluster-cap',
      summary:
        `200 concurrent agent/pay calls through the proxy (${(ms / 1000).toFixed(1)} s), ${dollars(amount)} each against a ${dollars(cap)} daily cap: ` +
        `${expectedPaid} paid, ${counts['403 PER_DAY_CAP_EXCEEDED']} refused PER_DAY_CAP_EXCEEDED; on chain ${dollars(received.reduce((a, b) => a + b, 0n))}; overshoot ${dollars(overshoot)}; 200 fees charged once`,
    });
  });

  it('one payment proof sent 100 times at once across the instances: served once, charged once', async ({ task }) => {
    const make = await x402Payloads(t, proxy.url, 'B', '1');
    const body = JSON.stringify({ walletAddress: newRecipient() });
    const post = (headers: Record<string, string>) => fetch(`${proxy.url}${CHECK}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const challenge = await post({});
    expect(challenge.status).toBe(402);
    const payload = await make(decodePaymentRequiredHeader(challenge.headers.get('PAYMENT-REQUIRED')!));
    const payer = (payload.payload as { authorization: { from: `0x${string}` } }).authorization.from;
    const before = await baseBalance(t, payer);
    const proof = encodePaymentSignatureHeader(payload);

    const answers = await Promise.all(Array.from({ length: 100 }, () => post({ 'PAYMENT-SIGNATURE': proof })));
    const statuses = tally(await Promise.all(answers.map(async (a) => ({ status: a.status, code: (await json<{ code?: string }>(a)).code ?? null, amount: null, recipient: null, txHash: null }))));
    expect(statuses['200']).toBe(1);
    expect((statuses['402 PAYMENT_ALREADY_USED'] ?? 0) + (statuses['402 PAYMENT_INVALID'] ?? 0)).toBe(99);
    const price = findPaidRoute('POST', CHECK)!.price;
    expect(before - (await baseBalance(t, payer))).toBe(price);
    const rows = await t.database.db.select().from(payments).where(and(eq(payments.route, `POST ${CHECK}`), sql`lower(${payments.payer}) = ${payer.toLowerCase()}`));
    expect(rows.map((row) => row.status)).toEqual(['served']);

    reportFigure(task, {
      check: 'cluster-replay',
      summary: `one rail-B proof x 100 at once through the proxy: served 1, refused 402 ${100 - 1} (${Object.entries(statuses).filter(([k]) => k !== '200').map(([k, n]) => `${k}: ${n}`).join(', ')}); charged ${dollars(price)} once on chain`,
    });
  });

  it('a payroll run whose instance is killed (SIGKILL) mid-execute is confirmed once by the others', async ({ task }) => {
    const armed = instances[INSTANCES - 1]!;
    const remote = new RemoteService(armed.url);
    const owner = await remote.token('demo-owner');
    const employerId = (await json<{ id: string }>(await remote.request('POST', '/api/employers', { token: owner, body: { name: 'Demo' } }))).id;
    const { employees } = await json<{ employees: { id: string; wallet_address: string | null }[] }>(await remote.request('GET', `/api/employers/${employerId}/team`, { token: owner }));
    const staff = employees.filter((e) => e.wallet_address).slice(0, 3);
    expect(staff).toHaveLength(3);
    const amounts = ['11.000001', '12.000002', '13.000003'];
    const prepared = await remote.request('POST', `/api/employers/${employerId}/payroll`, { token: owner, body: { items: staff.map((e, i) => ({ employee_id: e.id, amount_usd: amounts[i] })) } });
    expect(prepared.status, await prepared.clone().text()).toBe(201);
    const draft = await json<{ payroll_run_id: string; items: { wallet_address: `0x${string}`; amount_usd: string }[] }>(prepared);
    const before = await Promise.all(draft.items.map((item) => tempoBalance(t, item.wallet_address)));

    // Executed on the armed instance: it signs and records the batch, then dies before broadcasting it.
    const { pay } = await railA(remote, armed.url, '5');
    await expect(pay('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: { 'X-Identity-Token': owner } })).rejects.toThrow();
    expect(await armed.process.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const killedAt = Date.now();

    // The next service-wallet write on Tempo waits behind the nonce the dead instance held, until its
    // writer finds the stall and broadcasts the recorded batch (the same bytes: they pay once).
    const write = await fetch(`${proxy.url}/api/dev/faucet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ network: 'eip155:4217', address: newRecipient(), amount: '1' }) });
    expect(write.status).toBe(200);
    const unblockedAfter = Date.now() - killedAt;

    // The survivors' reconcile job takes the run over, broadcasts the recorded bytes once and confirms.
    const deadline = killedAt + 150_000;
    let status = '';
    while (status !== 'confirmed' && Date.now() < deadline) {
      const [run] = await t.database.db.select().from(payrollRuns).where(eq(payrollRuns.id, draft.payroll_run_id));
      status = run!.status;
      if (status !== 'confirmed') await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(status).toBe('confirmed');
    const confirmedAfter = Date.now() - killedAt;
    const received = await Promise.all(draft.items.map(async (item, i) => (await tempoBalance(t, item.wallet_address)) - before[i]!));
    expect(received).toEqual(draft.items.map((item) => parseUsd(item.amount_usd)));

    reportFigure(task, {
      check: 'cluster-kill',
      summary:
        `payroll execute on 1 of 3 instances, killed with SIGKILL after signing and recording the batch, before broadcasting it: ` +
        `the next service-wallet write waited ${(unblockedAfter / 1000).toFixed(1)} s behind its nonce, then the recorded batch went out; ` +
        `the run confirmed by a surviving instance ${(confirmedAfter / 1000).toFixed(0)} s after the kill; 3 of 3 items received exactly their amount, 0 paid twice`,
    });
  });
});
