import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('config', () => {
  it('defaults to local mode on loopback with the demo admin', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ mode: 'local', port: 3000, host: '127.0.0.1', serviceSlug: 'svc' });
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect([...config.adminUserIds]).toEqual(['demo-admin']);
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
    for (const name of ['DATABASE_URL', 'IDP_JWKS_URL', 'IDP_ISSUER', 'IDP_AUDIENCE', 'TEMPO_RPC_URL', 'BASE_RPC_URL', 'SOLANA_RPC_URL', 'X402_FACILITATOR_URL', 'MPP_SECRET_KEY', 'SMTP_URL']) {
      expect(message).toContain(name);
    }
    const missing = /missing required settings: ([^;]+)/.exec(message)?.[1] ?? '';
    expect(missing).not.toContain('PUBLIC_BASE_URL'); // it was given
    expect(message).toContain('PORT'); // invalid values are reported in the same message
  });

  it('treats a configured live chain as live mode', () => {
    expect(() => loadConfig({ TEMPO_RPC_URL: 'https://rpc.tempo.example' })).toThrow(/live mode is missing/);
  });

  it('accepts a complete live configuration', () => {
    const config = loadConfig({
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
      SMTP_URL: 'smtp://mail.example',
      ADMIN_USER_IDS: ' a , b ,',
    });
    expect(config).toMatchObject({ mode: 'live', host: '0.0.0.0', publicBaseUrl: 'https://pay.example' });
    expect([...config.adminUserIds]).toEqual(['a', 'b']);
  });

  it('names invalid values', () => {
    expect(() => loadConfig({ SERVICE_SLUG: 'Bad Slug' })).toThrow(/SERVICE_SLUG/);
    expect(() => loadConfig({ DATABASE_URL: 'not a url' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ APP_MODE: 'staging' })).toThrow(/APP_MODE/);
  });
});
