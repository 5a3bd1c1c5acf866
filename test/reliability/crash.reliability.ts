import { generateKeyPairSync, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getBase58Decoder, type Signature } from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedChains, type EmbeddedChains } from '../../src/chains/embedded/index.js';
import { embeddedChainPorts } from '../../src/chains/index.js';
import { openDatabase } from '../../src/db/client.js';
import type { CrashPoint } from '../../src/faults.js';
import { parseUsd } from '../../src/money.js';
import { agentProofHeaders } from '../support/agents.js';
import { createTestDatabaseTarget, type TestDatabaseTarget } from '../support/database.js';
import { proofMaker, railA, x402WithAssets, type PayingFetch } from '../support/pay.js';
import { freePort, RemoteService, startServiceProcess, waitForHealthy, type ServiceProcess } from '../support/service-process.js';
import { reportFigure } from './figures.js';

/**
 * kill -9 of the real server (src/main.ts in its own process, local mode) in the middle of a
 * payroll execute, an escrow settlement and the reputation job, then a restart on the same data:
 * every run, escrow and write must end in exactly one final state and the chain must show each
 * payment once. The server kills itself with SIGKILL at a named point (CRASH_AT, src/faults.ts),
 * so each kill lands exactly between two effects; LOCAL_TAKEOVER_SECONDS=1 lets the restarted
 * process take over the dead one's claims at once instead of after the production leases.
 * The lives run in order on one data dir; each test below is one or two lives.
 */
type Json = Record<string, unknown>;
const json = async <T = Json>(response: Response) => (await response.json()) as T;
const USD = 1_000_000n;

let target: TestDatabaseTarget;
let dataDir: string;
let port: number;
let remote: RemoteService;
let life: ServiceProcess | null = null;
const lives: ServiceProcess[] = [];
let owner: string;
let employerId: string;
/** The lives build on each other: a test starts only where the previous one left off. */
let livesCompleted = 0;
const after = (lifeCount: number) => expect(livesCompleted, 'an earlier life of the server failed; see the first failure').toBe(lifeCount);

/** Starts the next life of the server, armed to kill itself at `crashAt`. */
async function startLife(crashAt?: `${CrashPoint}${'' | `#${number}`}`): Promise<void> {
  life = startServiceProcess({
    PORT: String(port),
    DATA_DIR: dataDir,
    LOCAL_TAKEOVER_SECONDS: '1',
    // Two recipients per batch transaction: each payroll run below is several batches, so a kill lands mid-run.
    PAYROLL_BATCH_MAX_RECIPIENTS: '2',
    ...(crashAt ? { CRASH_AT: crashAt } : {}),
    ...(target.url ? { DATABASE_URL: target.url } : {}),
  });
  lives.push(life);
  const current = life;
  // Work a dead life left behind resumes while this one starts: it may reach its crash point before it is healthy.
  const ready = await Promise.race([waitForHealthy(remote.base, 60_000).then(() => 'healthy' as const), current.exited]).catch((error: Error) => {
    throw new Error(`${error.message}; its output:\n${current.output()}`);
  });
  if (ready !== 'healthy' && !crashAt) expect.fail(`the server exited while starting (${JSON.stringify(ready)}); its output:\n${current.output()}`);
}

/** Waits until the current life has killed itself with SIGKILL (at its crash point); `state` explains a miss. */
async function killedAtCrashPoint(timeoutMs: number, state: () => Promise<unknown> = async () => null): Promise<void> {
  const current = life!;
  const outcome = await Promise.race([current.exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs))]);
  if (outcome === 'timeout') expect.fail(`the server did not reach its crash point; state: ${JSON.stringify(await state())}; its output:\n${current.output()}`);
  expect(outcome).toEqual({ code: null, signal: 'SIGKILL' });
  life = null;
}

/** Polls `read` until `done` holds (bounded). */
async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms; server output:\n${life?.output() ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A request whose server dies while answering: the client sees the connection drop. */
async function dropped(request: Promise<Response>): Promise<void> {
  await expect(request).rejects.toThrow();
}

beforeAll(async () => {
  target = await createTestDatabaseTarget();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'crash-test-'));
  port = await freePort();
  remote = new RemoteService(`http://127.0.0.1:${port}`);
});

afterAll(async () => {
  for (const each of lives) each.child.kill('SIGKILL');
  await Promise.all(lives.map((each) => each.exited));
  await target.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('kill -9 during payroll execute', () => {
  const runs: { id: string; items: { employee_id: string; wallet_address: string; amount_usd: string }[] }[] = [];
  const before = new Map<string, bigint>();
  let payOwner: PayingFetch;

  async function prepareAndExecute(amounts: string[]): Promise<void> {
    const { employees } = await json<{ employees: { id: string; wallet_address: string | null }[] }>(await remote.request('GET', `/api/employers/${employerId}/team`, { token: owner }));
    const staff = employees.filter((e) => e.wallet_address).slice(0, amounts.length);
    expect(staff).toHaveLength(amounts.length);
    const prepared = await remote.request('POST', `/api/employers/${employerId}/payroll`, { token: owner, body: { items: staff.map((e, i) => ({ employee_id: e.id, amount_usd: amounts[i] })) } });
    expect(prepared.status, await prepared.clone().text()).toBe(201);
    const draft = await json<{ payroll_run_id: string; items: { employee_id: string; wallet_address: string; amount_usd: string }[] }>(prepared);
    runs.push({ id: draft.payroll_run_id, items: draft.items });
    for (const item of draft.items) if (!before.has(item.wallet_address)) before.set(item.wallet_address, await remote.stablecoinBalance(item.wallet_address));
    await dropped(payOwner('/api/mpp/payroll/execute', { method: 'POST', body: { payrollRunId: draft.payroll_run_id }, headers: { 'X-Identity-Token': owner } }));
  }

  const runStatus = async (id: string) => {
    const { runs: page } = await json<{ runs: { id: string; status: string }[] }>(await remote.request('GET', `/api/employers/${employerId}/payroll/runs?limit=100`, { token: owner }));
    const run = page.find((each) => each.id === id);
    return run?.status === 'failed' ? JSON.stringify(run) : run?.status;
  };

  it('confirms both runs after restarts and pays every item exactly once', async ({ task }) => {
    await startLife('payroll.before-broadcast');
    owner = await remote.token('demo-owner');
    employerId = (await json<{ id: string }>(await remote.request('POST', '/api/employers', { token: owner, body: { name: 'Demo' } }))).id;
    payOwner = (await railA(remote, remote.base, '50')).pay;

    // Life 1: killed after run 1's first batch (of 2) is signed and recorded, before it is broadcast.
    await prepareAndExecute(['101.000001', '102.000002', '103.000003']);
    await killedAtCrashPoint(30_000);

    // Life 2: the reconciler broadcasts the recorded bytes once and sends run 1's second batch (the first
    // pass of after-broadcast); then run 2 is killed after its first batch mined, before it is recorded
    // and before its second batch is sent.
    await startLife('payroll.after-broadcast#2');
    payOwner = (await railA(remote, remote.base, '50')).pay;
    expect(await until('run 1', () => runStatus(runs[0]!.id), (status) => status === 'confirmed')).toBe('confirmed');
    await prepareAndExecute(['201.000004', '202.000005', '203.000006']);
    await killedAtCrashPoint(30_000);

    // Life 3 (unarmed for payroll): the reconciler finds run 2's mined batch and confirms it, without paying
    // again, then sends the batch never sent.
    await startLife('escrow.settle.before-send');
    expect(await until('run 2', () => runStatus(runs[1]!.id), (status) => status === 'confirmed')).toBe('confirmed');
    let doubled = 0;
    for (const [wallet, start] of before) {
      const owed = runs.flatMap((run) => run.items).filter((item) => item.wallet_address === wallet).reduce((sum, item) => sum + parseUsd(item.amount_usd)!, 0n);
      const received = (await remote.stablecoinBalance(wallet)) - start;
      if (received !== owed) doubled++;
      expect(received, `wallet ${wallet}`).toBe(owed);
    }
    const { runs: page } = await json<{ runs: { id: string; batches: { status: string }[] }[] }>(
      await remote.request('GET', `/api/employers/${employerId}/payroll/runs?limit=100`, { token: owner }),
    );
    for (const run of runs) expect(page.find((each) => each.id === run.id)?.batches.map((b) => b.status)).toEqual(['confirmed', 'confirmed']);
    const items = runs.flatMap((run) => run.items).length;
    livesCompleted = 2;
    reportFigure(task, {
      check: 'crash',
      summary:
        `payroll execute: 2 runs of 3 in 2 batches each killed mid-run (first batch signed and recorded, not broadcast; first batch mined, not recorded, second not sent), restarted: ` +
        `2 of 2 confirmed, ${items} of ${items} items received exactly their amount on chain, ${doubled} paid twice`,
    });
  });
});

describe('kill -9 during escrow settlement', () => {
  it('settles after two kills in its payout and pays the worker once', async ({ task }) => {
    after(2);
    // Life 3 continues: an escrow approved by the judge, killed with its payout recorded, not sent.
    const pay = (await railA(remote, remote.base, '50')).pay;
    const authorized = await remote.request('POST', `/api/employers/${employerId}/agents/authorizations`, {
      token: owner,
      body: { label: 'Crash poster', agent_identifier: `poster-${randomUUID()}`, per_tx_cap_usd: '50', per_day_cap_usd: '500', velocity_per_minute: 100 },
    });
    expect(authorized.status, await authorized.clone().text()).toBe(201);
    const poster = await json<{ agent_identifier: string; hmac_secret: string }>(authorized);
    const { publicKey } = generateKeyPairSync('ed25519');
    const workerWallet = getBase58Decoder().decode(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
    // The worker proves its identifier (an EVM address) on deliver.
    const workerKey = privateKeyToAccount(generatePrivateKey());
    const workerIdentifier = workerKey.address.toLowerCase();
    const postBody = JSON.stringify({
      employer_id: employerId,
      worker_wallet_address: workerWallet,
      worker_agent_identifier: workerIdentifier,
      amount_usdc: '10.00',
      rubric_prompt: 'Write a short note for the payroll team.\nmust include: ledger',
    });
    const proof = await agentProofHeaders(poster.agent_identifier, { hmac: poster.hmac_secret }, { method: 'POST', path: '/api/mpp/escrow/post', body: postBody });
    const posted = await pay('/api/mpp/escrow/post', { method: 'POST', body: postBody, headers: proof });
    expect(posted.status, await posted.clone().text()).toBe(200);
    const escrowId = (await json<{ escrow_id: string }>(posted)).escrow_id;
    const deliverable = `data:text/plain;base64,${Buffer.from('The ledger balances to the cent.').toString('base64')}`;
    // The judge and the payout run right behind the answer: the kill may beat the answer to the wire.
    const deliverBody = JSON.stringify({ escrow_id: escrowId, deliverable_uri: deliverable });
    const delivered = await pay('/api/mpp/escrow/deliver', {
      method: 'POST',
      body: deliverBody,
      headers: await agentProofHeaders(workerIdentifier, { evm: workerKey }, { method: 'POST', path: '/api/mpp/escrow/deliver', body: deliverBody }),
    }).catch(() => null);
    if (delivered) expect(delivered.status, await delivered.clone().text()).toBe(200);
    const escrowState = async () => (await remote.request('GET', `/api/employers/${employerId}/escrows`, { token: owner })).json();
    await killedAtCrashPoint(30_000, escrowState); // the judge approved; the payout to the worker was recorded, then the kill

    // Life 4: the reconciler sends the recorded payout (it lands), then the kill before the escrow is marked settled.
    await startLife('escrow.settle.after-send');
    await killedAtCrashPoint(30_000, escrowState);

    // Life 5: the reconciler finds the landed payout and finishes the escrow without paying again.
    await startLife('reputation.before-send#2');
    const status = async () => {
      const escrows = await json<{ escrow_id: string; status: string }[]>(await remote.request('GET', `/api/employers/${employerId}/escrows`, { token: owner }));
      return escrows.find((e) => e.escrow_id === escrowId)?.status;
    };
    expect(await until('escrow', status, (s) => s === 'settled')).toBe('settled');
    const received = await remote.solanaTokenBalance(workerWallet);
    expect(received).toBe(10n * USD);
    livesCompleted = 4;
    reportFigure(task, {
      check: 'crash',
      summary:
        'escrow settlement: 1 approved escrow killed twice (payout recorded, not sent; payout landed, escrow not settled), restarted: ' +
        `settled, the worker received $${Number(received) / 1e6} of $10 on chain, paid 1 time`,
    });
  });
});

describe('kill -9 during the reputation job', () => {
  it('writes every queued attestation exactly once on chain', async ({ task }) => {
    after(4);
    // Life 5 continues: rail C payments each queue a payment attestation; the job's next round is killed
    // after recording its second write's transaction, before sending it.
    const networks = await remote.chains();
    const solanaNetwork = networks.find((n) => n.network.startsWith('solana:'))!;
    const assets = { baseStablecoin: networks.find((n) => n.network === 'eip155:8453')!.contracts.stablecoin!, solanaNetwork: solanaNetwork.network, solanaMint: solanaNetwork.contracts.mint! };
    const { pay } = await x402WithAssets(remote, assets, remote.base, 'C', '20');
    for (let i = 0; i < 4; i++) expect((await pay('/api/mpp/treasury/yield-rates')).status).toBe(200);
    // The job runs every minute: the kill comes with its next round.
    await killedAtCrashPoint(90_000);

    // Life 6: the round at start-up resumes; killed after the second write's transaction landed, before it is marked written.
    await startLife('reputation.after-send#2');
    await killedAtCrashPoint(30_000);

    // Life 7: no crash point; the round at start-up finishes every write.
    await startLife();
    const admin = await remote.token('demo-admin');
    type Write = { kind: string; source: string; subject: string; write_type: string; status: string; chain_reference: string | null };
    const writes = await until(
      'reputation writes',
      async () => (await json<{ items: Write[] }>(await remote.request('GET', '/api/admin?scope=reputation_writes&limit=100', { token: admin }))).items,
      (items) => items.length >= 5 && items.every((w) => w.status === 'written'),
    );
    life!.child.kill('SIGTERM');
    expect((await life!.exited).code).toBe(0);
    life = null;

    // The chain itself, rebuilt from its journal: every attestation the service signed, counted by what it attests.
    const database = await openDatabase({ url: target.url, dataDir: target.url ? null : dataDir });
    let embedded: EmbeddedChains | undefined;
    try {
      embedded = await openEmbeddedChains(database);
      const chains = await embeddedChainPorts(embedded);
      const { rows } = await database.pool.query<{ params: string[] }>("SELECT params FROM embedded_chain_journal WHERE chain = 'solana' AND method = 'sendTransaction' ORDER BY id");
      const onChain = new Map<string, number>();
      for (const { params } of rows) {
        // The first signature of the wire transaction (after its one-byte count) is its id.
        const signature = getBase58Decoder().decode(Buffer.from(params[0]!, 'base64').subarray(1, 65)) as Signature;
        const written = await chains.solana.readAttestation(signature);
        if (!written) continue;
        const key = `${written.attestation.type}|${written.attestation.subject}|${(written.attestation as { source?: string }).source}`;
        onChain.set(key, (onChain.get(key) ?? 0) + 1);
      }
      const attestations = writes.filter((w) => w.kind === 'attestation');
      const duplicates = [...onChain.values()].filter((count) => count > 1).length;
      for (const write of attestations) {
        const key = [...onChain.keys()].find((k) => k.endsWith(`|${write.subject}|${write.source}`) && k.includes(write.write_type));
        expect(key && onChain.get(key), `attestation of ${write.source} on chain`).toBe(1);
      }
      expect(duplicates).toBe(0);
      expect([...onChain.values()].reduce((a, b) => a + b, 0)).toBe(attestations.length);
      reportFigure(task, {
        check: 'crash',
        summary:
          `reputation job: killed twice mid-round (write recorded, not sent; write landed, not marked), restarted: ` +
          `${writes.length} of ${writes.length} writes written; on chain ${attestations.length} attestations for ${attestations.length} writes, ${duplicates} written twice`,
      });
    } finally {
      await embedded?.close();
      await database.close();
    }
    livesCompleted = 7;
  });
});

describe('kill -9 between a fee settlement and its answer (agent/pay, which acts)', () => {
  it('serves each settled fee once when its proof comes back, pays each recipient once, and charges each fee once', async ({ task }) => {
    after(7);
    const PAY = '/api/mpp/agent/pay';
    // Life 8: killed with the fee recorded as settled, before the handler ran.
    await startLife('payment.before-handler');
    const authorized = await remote.request('POST', `/api/employers/${employerId}/agents/authorizations`, {
      token: owner,
      body: { label: 'Crash payer', agent_identifier: `payer-${randomUUID()}`, per_tx_cap_usd: '5', per_day_cap_usd: '50', velocity_per_minute: 100 },
    });
    expect(authorized.status, await authorized.clone().text()).toBe(201);
    const agent = await json<{ agent_identifier: string; hmac_secret: string }>(authorized);
    const fees = await proofMaker(remote, remote.base, 'A', '0.10'); // two fees of $0.05, nothing more
    const recipients = [privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address];
    /** One agent/pay call, fixed once: its retries send exactly these bytes with exactly this proof. */
    const call = async (to: string) => {
      const body = JSON.stringify({ employer_id: employerId, recipient_wallet: to, amount: '1.00', reference: `crash-${randomUUID()}` });
      const identity = await agentProofHeaders(agent.agent_identifier, { hmac: agent.hmac_secret }, { method: 'POST', path: PAY, body });
      const headers = { 'content-type': 'application/json', ...identity, ...(await fees.proof(PAY)) };
      return () => fetch(`${remote.base}${PAY}`, { method: 'POST', headers, body });
    };
    const admin = await remote.token('demo-admin');
    const feeStatus = async () =>
      (await json<{ items: { payer: string | null; status: string }[] }>(await remote.request('GET', '/api/admin?scope=payments&limit=100', { token: admin }))).items
        .filter((p) => p.payer?.toLowerCase() === fees.payer.toLowerCase())
        .map((p) => p.status);
    const first = await call(recipients[0]!);
    await dropped(first());
    await killedAtCrashPoint(30_000, feeStatus);

    // Life 9: the same call again is served (its handler runs now, once); then a second call is killed
    // after its fee moved on chain, before the settlement was recorded.
    await startLife('payment.after-settle');
    const redeemed = await first();
    expect(redeemed.status, await redeemed.clone().text()).toBe(200);
    const second = await call(recipients[1]!);
    await dropped(second());
    await killedAtCrashPoint(30_000, feeStatus);

    // Life 10: the reconciler (at start-up) finds the second fee on chain and marks it settled; the
    // call again runs its handler (the transfer is made), and the kill comes before the answer is recorded.
    await startLife('payment.before-served');
    await until('the second fee, found on chain', feeStatus, (statuses) => statuses.includes('settled'));
    await dropped(second());
    await killedAtCrashPoint(30_000, feeStatus);

    // Life 11: the call once more: it finds the transfer it made and answers with it, paying nothing again.
    await startLife();
    const replayed = await second();
    expect(replayed.status, await replayed.clone().text()).toBe(200);
    expect(await json<{ recipient: string }>(replayed)).toMatchObject({ recipient: recipients[1] });
    const received = await Promise.all(recipients.map((r) => remote.stablecoinBalance(r)));
    expect(received).toEqual([USD, USD]);
    expect(await remote.stablecoinBalance(fees.payer)).toBe(0n);
    expect(await feeStatus()).toEqual(['served', 'served']);
    for (const retry of [first, second]) expect((await json<{ code: string }>(await retry())).code).toBe('PAYMENT_ALREADY_USED');
    livesCompleted = 11;
    reportFigure(task, {
      check: 'crash',
      summary:
        'fee settled before agent/pay acts: 3 kills (fee settled, handler not run; fee moved on chain, not recorded; transfer made, answer not recorded), ' +
        `restarted: 2 of 2 calls served when their proof came back, recipients received ${received.map((r) => `$${Number(r) / 1e6}`).join(' and ')} of $1 each, ` +
        `2 fees charged for 2 calls, 0 charged twice`,
    });
  });
});
