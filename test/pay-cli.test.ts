import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitForHealthy } from './support/service-process.js';

/**
 * `npm run pay` (examples/pay.ts) as a user runs it: every example its --help lists, run as written
 * by a shell against a fresh local server, plus the one-line failures; and examples/fund-treasury.ts
 * funding a new employer's treasury as README says (issue 30).
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const PAY = `${JSON.stringify(process.execPath)} --import tsx examples/pay.ts`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A shell command in the repository root, with `env` added to the environment. */
function sh(command: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The example lines of the usage text, exactly as printed. */
const help = spawnSync(process.execPath, ['--import', 'tsx', 'examples/pay.ts', '--help'], { cwd: ROOT, encoding: 'utf8' });
const examples = help.stdout.split('\n').filter((line) => line.startsWith('  npm run pay -- ')).map((line) => line.trim());

const json = async <T>(response: Response): Promise<T> => {
  if (!response.ok) throw new Error(`${response.url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
};

describe('npm run pay and examples/fund-treasury.ts', () => {
  let server: ChildProcess;
  let dataDir: string;
  let base: string;
  /** What the examples' shell variables hold: README "Try it" makes the same. */
  const vars: Record<string, string> = {};
  const post = (p: string, body: unknown, token?: string) =>
    fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(path.join(tmpdir(), 'pay-cli-'));
    const { DATABASE_URL: _shared, ...env } = process.env;
    server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...env, APP_MODE: 'local', PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: base, DATA_DIR: dataDir, LOG_LEVEL: 'warn', VIRTUAL_MASTER_ZERO_BYTES: '1', BRIDGE_SANDBOX_STEP_SECONDS: '1' },
      stdio: 'ignore',
    });
    await waitForHealthy(base, 55_000);
    vars.TOKEN = (await json<{ token: string }>(await post('/api/dev/token', { sub: 'demo-owner' }))).token;
    vars.EMPLOYER = (await json<{ id: string }>(await post('/api/employers', { name: 'Demo' }, vars.TOKEN))).id;
    const team = await json<{ employees: { id: string }[] }>(await fetch(`${base}/api/employers/${vars.EMPLOYER}/team`, { headers: { authorization: `Bearer ${vars.TOKEN}` } }));
    vars.EMPLOYEE = team.employees[0]!.id;
    const run = await post(`/api/employers/${vars.EMPLOYER}/payroll`, { items: [{ employee_id: vars.EMPLOYEE, amount_usd: '10' }] }, vars.TOKEN);
    vars.RUN = (await json<{ payroll_run_id: string }>(run)).payroll_run_id;
    vars.AGENT_KEY = (await json<{ agent_key: string }>(await post(`/api/employers/${vars.EMPLOYER}/agent-key`, {}, vars.TOKEN))).agent_key;
    await cashOutByCardSetup();
  }, 90_000);

  /** README "Cash out by card": Ada's identity check approved, her token and her bank account. */
  async function cashOutByCardSetup() {
    const team = await json<{ employees: { id: string; email: string }[] }>(await fetch(`${base}/api/employers/${vars.EMPLOYER}/team`, { headers: { authorization: `Bearer ${vars.TOKEN}` } }));
    vars.ADA = team.employees.find((e) => e.email.startsWith('ada@'))!.id;
    for (let tries = 0; ; tries += 1) {
      const { kyc_status } = await json<{ kyc_status: string }>(await post(`/api/employees/${vars.ADA}/kyc`, {}, vars.TOKEN));
      if (kyc_status === 'approved') break;
      if (tries > 30) throw new Error(`KYC still ${kyc_status}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    vars.ADA_TOKEN = (await json<{ token: string }>(await post('/api/dev/token', { sub: 'demo-employee' }))).token;
    const account = { destinationType: 'ach', accountOwnerName: 'Ada Lovelace', details: { routingNumber: '021000021', accountNumber: '000123456789' } };
    vars.BANK = (await json<{ bank_account_id: string }>(await post(`/api/employees/${vars.ADA}/bank-accounts`, account, vars.ADA_TOKEN))).bank_account_id;
  }

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists examples on every rail, the identity ones included', () => {
    expect(help.status).toBe(0);
    expect(examples.map((line) => line.split(' ')[4])).toEqual(['A', 'B', 'C', 'A', 'card', 'card']);
    expect(examples.filter((line) => /--identity-token|--agent-key/.test(line))).toHaveLength(3);
  });

  it.each(examples)('%s: pays, prints the server first and the receipt', async (example) => {
    const command = example.replace(/^npm run pay -- /, `${PAY} --base-url "$BASE" `);
    const result = await sh(command, { ...vars, BASE: base });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(`Server: ${base} (--base-url)`);
    expect(lines[1]).toMatch(/ on rail (A|B|C|card): 200$/);
    expect(lines[2]).toMatch(/^(Payment-Receipt|PAYMENT-RESPONSE): \{.*"(status|success)":("success"|true)/);
    if (example.includes('payroll/execute')) expect(JSON.parse(lines[3]!)).toMatchObject({ success: true, payroll_run_id: vars.RUN });
    if (example.includes('bridge/offramp')) {
      expect(lines[3]).toMatch(/^Card credit [0-9a-f-]{36}: 0\.250000 USD left \(the next call draws on it with --credit [0-9a-f-]{36}\)$/);
      expect(JSON.parse(lines[4]!)).toMatchObject({ success: true, amount: '1.000000' });
    }
  }, 40_000);

  it('draws the next off-ramp fee from the card credit with --credit, charging nothing', async () => {
    const offramp = examples.find((line) => line.includes('bridge/offramp'))!.replace(/^npm run pay -- /, `${PAY} --base-url "$BASE" `);
    const bought = await sh(offramp, { ...vars, BASE: base });
    const credit = /Card credit ([0-9a-f-]{36})/.exec(bought.stdout)![1]!;
    const drawn = await sh(`${offramp} --credit ${credit}`, { ...vars, BASE: base });
    expect(drawn.stderr).toBe('');
    expect(drawn.stdout.split('\n').slice(1, 3)).toEqual(['POST /api/mpp/bridge/offramp on rail card: 200', `Card credit ${credit}: 0.000000 USD left (the next call draws on it with --credit ${credit})`]);
    const empty = await sh(`${offramp} --credit ${credit}`, { ...vars, BASE: base });
    expect(empty.code).toBe(1);
    expect(empty.stdout).toContain('on rail card: 402');
    expect(empty.stdout).toContain('pay again to top it up');
  }, 60_000);

  it('names the rails a route offers in one line when it offers none matching, and pays nothing', async () => {
    const result = await sh(`${PAY} card GET /api/mpp/treasury/yield-rates`, { BASE_URL: base });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`Server: ${base} (BASE_URL)\n`);
    expect(result.stderr).toBe('pay: GET /api/mpp/treasury/yield-rates offers rails A, B, C, not card\n');
  }, 20_000);

  it('says why a paid 404 may be the missing identity', async () => {
    const result = await sh(`${PAY} A GET /api/mpp/employee/${vars.EMPLOYEE}/history --base-url "$BASE"`, { BASE: base });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('on rail A: 404\n');
    expect(result.stderr).toBe("pay: 404 after payment: if the route acts on an employer's data, say who pays with --identity-token or --agent-key\n");
  }, 20_000);

  it('says in one line that the server cannot be reached', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const result = await sh(`${PAY} A GET /api/mpp/treasury/yield-rates --base-url ${nobody}/`);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`Server: ${nobody} (--base-url)\n`);
    expect(result.stderr).toBe(`pay: cannot reach ${nobody}: ECONNREFUSED\n`);
  }, 20_000);

  it("funds a new employer's treasury from the faucet", async () => {
    const token = (await json<{ token: string }>(await post('/api/dev/token', { sub: 'pay-cli-new-owner' }))).token;
    const employer = (await json<{ id: string }>(await post('/api/employers', { name: 'Fresh Co' }, token))).id;
    const fund = `${JSON.stringify(process.execPath)} --import tsx examples/fund-treasury.ts`;
    const result = await sh(`${fund} --base-url "$BASE" --employer "$EMPLOYER" --amount 1234.5 --identity-token "$TOKEN"`, { BASE: base, EMPLOYER: employer, TOKEN: token });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Server: ${base} \\(--base-url\\)\nDeposited \\$1,234\\.50 into treasury account #\\d+: \\$1,234\\.50 available\n$`));
    const treasury = await json<{ available_usd: string }>(await fetch(`${base}/api/employers/${employer}/treasury`, { headers: { authorization: `Bearer ${token}` } }));
    expect(treasury.available_usd).toBe('1234.500000');
  }, 30_000);

  it('answers a wrong command line with one line and exit 2', async () => {
    const result = await sh(`${PAY} D GET /x`);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('pay: the rail must be one of A, B, C, card, not D (npm run pay -- --help)\n');
    expect(result.stderr).not.toMatch(/^\s+at /m);
    const both = await sh(`${PAY} A GET /api/mpp/treasury/yield-rates --identity-token x --agent-key y`);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('pay: give --identity-token or --agent-key, not both (npm run pay -- --help)\n');
  }, 20_000);
});
