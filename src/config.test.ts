import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTING_NAMES } from './config.js';

/** Every setting live mode needs. */
const LIVE = {
  DATABASE_URL: 'postgres://db.example/payroll',
  PUBLIC_BASE_URL: 'https://pay.example/',
  IDP_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
  IDP_ISSUER: 'https://idp.example/',
  IDP_AUDIENCE: 'payroll',
  TEMPO_RPC_URL: 'https://rpc.tempo.example',
  BASE_RPC_URL: 'https://rpc.base.example',
  SOLANA_RPC_URL: 'https://rpc.solana.example',
  X402_FACILITATOR_URL: 'https://facilitator.example',
  MPP_SECRET_KEY: 'k'.repeat(32),
  AGENT_SECRETS_KEY: 'a'.repeat(32),
  OAUTH_SIGNING_KEY: JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x'.repeat(43), y: 'y'.repeat(43), d: 'd'.repeat(43) }),
  SMTP_URL: 'smtp://mail.example',
  EMAIL_FROM: 'payroll@mail.example',
  EVM_SERVICE_KEY: `0x${'11'.repeat(32)}`,
  SOLANA_SERVICE_KEY: JSON.stringify([...Array(32).fill(7), ...Array(32).fill(9)]),
  TEMPO_CONTRACTS: JSON.stringify({
    payrollTreasury: `0x${'01'.repeat(20)}`,
    streamVesting: `0x${'02'.repeat(20)}`,
    yieldRouter: `0x${'03'.repeat(20)}`,
    agentIdentityRegistry: `0x${'04'.repeat(20)}`,
    agentReputationRegistry: `0x${'05'.repeat(20)}`,
  }),
};


describe('config', () => {
  it('defaults to local mode on loopback with the demo admin', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ mode: 'local', port: 3000, host: '127.0.0.1', serviceSlug: 'svc' });
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect([...config.adminUserIds]).toEqual(['demo-admin']);
  });

  it('bounds shutdown and the database pools, with defaults, naming a bad value', () => {
    expect(loadConfig({})).toMatchObject({ shutdownGraceSeconds: 20, dbPoolMax: 10, dbConnectTimeoutMs: 5_000, jobsPoolMax: 4 });
    expect(loadConfig({ SHUTDOWN_GRACE_SECONDS: '3', DB_CONNECT_TIMEOUT_MS: '2500', JOBS_POOL_MAX: '2' })).toMatchObject({
      shutdownGraceSeconds: 3,
      dbConnectTimeoutMs: 2_500,
      jobsPoolMax: 2,
    });
    for (const [name, value] of [['SHUTDOWN_GRACE_SECONDS', '0'], ['DB_CONNECT_TIMEOUT_MS', 'soon'], ['JOBS_POOL_MAX', '0']] as const) {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
    }
  });

  it('refuses live mode with one message naming every missing setting', () => {
    let error: unknown;
    try {
      loadConfig({ APP_MODE: 'live', PUBLIC_BASE_URL: 'https://pay.example', PORT: 'eighty' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['DATABASE_URL', 'IDP_JWKS_URL', 'IDP_ISSUER', 'IDP_AUDIENCE', 'TEMPO_RPC_URL', 'BASE_RPC_URL', 'SOLANA_RPC_URL', 'X402_FACILITATOR_URL', 'MPP_SECRET_KEY', 'AGENT_SECRETS_KEY', 'OAUTH_SIGNING_KEY', 'SMTP_URL', 'EMAIL_FROM', 'EVM_SERVICE_KEY', 'SOLANA_SERVICE_KEY', 'TEMPO_CONTRACTS']) {
      expect(message).toContain(name);
    }
    const missing = /missing required settings: ([^;]+)/.exec(message)?.[1] ?? '';
    expect(missing).not.toContain('PUBLIC_BASE_URL'); // it was given
    expect(message).toContain('PORT'); // invalid values are reported in the same message
  });

  it('takes the crash-test settings in local mode only, and only known crash points', () => {
    expect(loadConfig({ CRASH_AT: 'escrow.settle.after-send#2', LOCAL_TAKEOVER_SECONDS: '1' }).faults).toEqual({ crashAt: 'escrow.settle.after-send#2', takeoverSeconds: 1 });
    expect(loadConfig({}).faults).toEqual({ crashAt: undefined, takeoverSeconds: undefined });
    expect(() => loadConfig({ CRASH_AT: 'escrow.settle' })).toThrow(/CRASH_AT: one of payroll\.before-broadcast/);
    expect(() => loadConfig({ CRASH_AT: 'payroll.after-broadcast#0' })).toThrow(/CRASH_AT/);
    expect(() => loadConfig({ LOCAL_TAKEOVER_SECONDS: '0' })).toThrow(/LOCAL_TAKEOVER_SECONDS/);
    expect(() => loadConfig({ ...LIVE, CRASH_AT: 'payroll.after-broadcast' })).toThrow(/CRASH_AT: local mode only/);
    expect(() => loadConfig({ ...LIVE, LOCAL_TAKEOVER_SECONDS: '5' })).toThrow(/LOCAL_TAKEOVER_SECONDS: local mode only/);
  });

  it('treats a configured live chain as live mode', () => {
    expect(() => loadConfig({ TEMPO_RPC_URL: 'https://rpc.tempo.example' })).toThrow(/live mode is missing/);
  });

  it('refuses an OAUTH_SIGNING_KEY that is not an ES256 private JWK', () => {
    for (const key of ['not json', JSON.stringify({ kty: 'RSA', n: 'x' }), JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'x'.repeat(43), y: 'y'.repeat(43) })]) {
      expect(() => loadConfig({ ...LIVE, OAUTH_SIGNING_KEY: key })).toThrow(/OAUTH_SIGNING_KEY/);
    }
  });

  it('accepts a complete live configuration', () => {
    const config = loadConfig({
      ...LIVE,
      ADMIN_USER_IDS: ' a , b ,',
    });
    expect(config).toMatchObject({ mode: 'live', host: '0.0.0.0', publicBaseUrl: 'https://pay.example' });
    // The seed is the first half of a solana-keygen key file; Tempo's own addresses fill the rest.
    expect([...config.live.solanaServiceSeed!]).toEqual(Array(32).fill(7));
    expect(config.live.tempoContracts).toMatchObject({
      stablecoin: '0x20C000000000000000000000b9537d11c60E8b50',
      tip403Registry: '0x403c000000000000000000000000000000000000',
      addressRegistry: '0xfdc0000000000000000000000000000000000000',
    });
    expect([...config.adminUserIds]).toEqual(['a', 'b']);
  });

  it('names invalid values', () => {
    expect(() => loadConfig({ SERVICE_SLUG: 'Bad Slug' })).toThrow(/SERVICE_SLUG/);
    expect(() => loadConfig({ DATABASE_URL: 'not a url' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ APP_MODE: 'staging' })).toThrow(/APP_MODE/);
    expect(() => loadConfig({ TEMPO_CONTRACTS: '{"payrollTreasury": "0x12"}' })).toThrow(/TEMPO_CONTRACTS/);
    expect(() => loadConfig({ TEMPO_CONTRACTS: 'not json' })).toThrow(/TEMPO_CONTRACTS: must be a JSON object/);
    expect(() => loadConfig({ SOLANA_SERVICE_KEY: '[1,2,3]' })).toThrow(/SOLANA_SERVICE_KEY/);
  });
});

describe('AI settings', () => {

  it('defaults to the offline provider, in local and live mode', () => {
    expect(loadConfig({}).ai).toEqual({ provider: 'offline', apiKey: undefined, baseUrl: undefined, model: 'offline', timeoutMs: 10_000 });
    expect(loadConfig({ AI_PROVIDER: '' }).ai.provider).toBe('offline');
    expect(loadConfig(LIVE).ai.provider).toBe('offline');
  });

  it('live mode with a hosted provider and no key refuses to start, naming AI_API_KEY with the other missing settings', () => {
    let error: unknown;
    try {
      loadConfig({ ...LIVE, AI_PROVIDER: 'anthropic', SMTP_URL: '' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/live mode is missing required settings: .*SMTP_URL.*AI_API_KEY/);
    expect(() => loadConfig({ ...LIVE, AI_PROVIDER: 'openai', AI_BASE_URL: 'http://127.0.0.1:8080/v1' })).toThrow(/AI_API_KEY/);
    const live = loadConfig({ ...LIVE, AI_PROVIDER: 'anthropic', AI_API_KEY: 'sk-ant', AI_TIMEOUT_MS: '4000' });
    expect(live.ai).toEqual({ provider: 'anthropic', apiKey: 'sk-ant', baseUrl: undefined, model: 'claude-sonnet-4-5', timeoutMs: 4000 });
  });

  it('local mode: a keyless provider only for an OpenAI-compatible local model server', () => {
    expect(() => loadConfig({ AI_PROVIDER: 'anthropic' })).toThrow(/AI_API_KEY: required with AI_PROVIDER=anthropic/);
    expect(() => loadConfig({ AI_PROVIDER: 'openai' })).toThrow(/AI_API_KEY/);
    const local = loadConfig({ AI_PROVIDER: 'openai', AI_BASE_URL: 'http://127.0.0.1:11434/v1', AI_MODEL: 'llama3.2' });
    expect(local.ai).toMatchObject({ provider: 'openai', apiKey: undefined, baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' });
    expect(loadConfig({ AI_PROVIDER: 'openai', AI_API_KEY: 'sk' }).ai.model).toBe('gpt-4o-mini');
  });

  it('names invalid AI settings', () => {
    expect(() => loadConfig({ AI_PROVIDER: 'gemini' })).toThrow(/AI_PROVIDER/);
    expect(() => loadConfig({ AI_TIMEOUT_MS: '5' })).toThrow(/AI_TIMEOUT_MS/);
    expect(() => loadConfig({ AI_BASE_URL: 'not a url', AI_PROVIDER: 'openai' })).toThrow(/AI_BASE_URL/);
  });
});

describe('Solana payroll policy settings', () => {
  it('defaults to a $10,000 cap and the default programs, and names invalid values', () => {
    expect(loadConfig({}).solanaPayrollPolicy).toEqual({ perTxCap: 10_000_000_000n, allowedPrograms: null });
    const custom = loadConfig({ SOLANA_PAYROLL_PER_TX_CAP_USD: '250.5', SOLANA_PAYROLL_ALLOWED_PROGRAMS: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' });
    expect(custom.solanaPayrollPolicy).toEqual({ perTxCap: 250_500_000n, allowedPrograms: ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'] });
    expect(() => loadConfig({ SOLANA_PAYROLL_PER_TX_CAP_USD: '1e3' })).toThrow(/SOLANA_PAYROLL_PER_TX_CAP_USD/);
    expect(() => loadConfig({ SOLANA_PAYROLL_ALLOWED_PROGRAMS: '0xabc' })).toThrow(/SOLANA_PAYROLL_ALLOWED_PROGRAMS/);
  });
});

describe('virtual inflow settings', () => {
  it('waits 20 blocks on live Tempo and none on the embedded chain by default, and takes VIRTUAL_INFLOW_CONFIRMATIONS', () => {
    expect(loadConfig({}).virtualInflows).toEqual({ confirmations: 0 });
    expect(loadConfig(LIVE).virtualInflows).toEqual({ confirmations: 20 });
    expect(loadConfig({ VIRTUAL_INFLOW_CONFIRMATIONS: '3' }).virtualInflows.confirmations).toBe(3);
    expect(loadConfig({ ...LIVE, VIRTUAL_INFLOW_CONFIRMATIONS: '0' }).virtualInflows.confirmations).toBe(0);
    for (const value of ['-1', 'deep', '2.5', '1001']) {
      expect(() => loadConfig({ VIRTUAL_INFLOW_CONFIRMATIONS: value })).toThrow(/VIRTUAL_INFLOW_CONFIRMATIONS/);
    }
  });
});

describe('SANCTIONS_SDN_URL', () => {
  it('refreshes from OFAC in live mode by default, never by default in local mode, from a mirror when set', () => {
    expect(loadConfig({ ...LIVE, AI_PROVIDER: 'anthropic', AI_API_KEY: 'sk-ant' }).sanctions.sdnUrl).toMatch(/^https:\/\/sanctionslistservice\.ofac\.treas\.gov\//);
    expect(loadConfig({}).sanctions.sdnUrl).toBeUndefined();
    expect(loadConfig({ SANCTIONS_SDN_URL: 'https://mirror.example/sdn_advanced.xml' }).sanctions.sdnUrl).toBe('https://mirror.example/sdn_advanced.xml');
    expect(() => loadConfig({ SANCTIONS_SDN_URL: 'not a url' })).toThrow(/SANCTIONS_SDN_URL/);
  });
});

describe('README settings table', () => {
  it('lists every setting the service reads', () => {
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const listed = new Set([...readme.matchAll(/^\| ([^|]+) \|/gm)].flatMap(([, cell]) => [...cell!.matchAll(/`([A-Z0-9_]+)`/g)].map(([, name]) => name)));
    expect(SETTING_NAMES.filter((name) => !listed.has(name))).toEqual([]);
  });
});
