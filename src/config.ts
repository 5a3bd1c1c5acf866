import path from 'node:path';
import { z } from 'zod';
import { CRASH_POINTS } from './faults.js';
import type { LimitName } from './http/rate-limits.js';
import { parseUsd, USD_DECIMAL_PATTERN } from './money.js';
import { facilitatorSigningKey, type FacilitatorApiKey } from './payments/x402/facilitator-auth.js';
import { urlSecrets, valueSecrets, type Secret } from './secrets.js';

/**
 * Every environment variable the service reads, in one schema. Nothing else in the code reads
 * process.env: features take what they need from the typed Config.
 */
const optionalString = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s))
  .optional();
const optionalUrl = optionalString.pipe(z.url().optional());
/** OFAC's Sanctions List Service: the SDN list in the advanced XML format. */
const OFAC_SDN_ADVANCED_URL = 'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN_ADVANCED.XML';
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, '0x and 40 hex characters');
const jsonObject = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
    return z.NEVER;
  }
});
/** Our contracts on live Tempo; the stablecoin and the two registries default to Tempo's own. */
const tempoContractsSchema = z.object({
  payrollTreasury: evmAddress,
  streamVesting: evmAddress,
  yieldRouter: evmAddress,
  agentIdentityRegistry: evmAddress,
  agentReputationRegistry: evmAddress,
  stablecoin: evmAddress.default('0x20C000000000000000000000b9537d11c60E8b50'), // USDC.e
  tip403Registry: evmAddress.default('0x403c000000000000000000000000000000000000'), // TIP-403 precompile
  addressRegistry: evmAddress.default('0xfdc0000000000000000000000000000000000000'), // virtual-address registry
});
/** A Solana private key: 64 hex characters (the 32-byte seed) or a solana-keygen JSON file's 64 numbers. */
const solanaSeedSchema = z.string().transform((text, ctx) => {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Uint8Array.from(Buffer.from(text, 'hex'));
  try {
    const bytes = JSON.parse(text) as unknown;
    if (Array.isArray(bytes) && bytes.length === 64 && bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
      return Uint8Array.from(bytes.slice(0, 32) as number[]);
    }
  } catch {
    // reported below
  }
  ctx.addIssue({ code: 'custom', message: '64 hex characters or a JSON array of 64 bytes' });
  return z.NEVER;
});

/** Why an x402 facilitator API key secret cannot sign, or true; the message never quotes the secret. */
function facilitatorKeyProblem(secret: string): string | true {
  try {
    facilitatorSigningKey(secret);
    return true;
  } catch (error) {
    return (error as Error).message;
  }
}

function isEs256PrivateJwk(value: string): boolean {
  try {
    const jwk = JSON.parse(value) as Record<string, unknown>;
    return jwk.kty === 'EC' && jwk.crv === 'P-256' && ['x', 'y', 'd'].every((k) => typeof jwk[k] === 'string' && /^[A-Za-z0-9_-]{43}$/.test(jwk[k] as string));
  } catch {
    return false;
  }
}

const envSchema = z.object({
  // Not plain MODE: Vite and Vitest export MODE=development/test into the environment.
  APP_MODE: z.enum(['local', 'live']).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: optionalString,
  DATA_DIR: z.string().trim().min(1).default('./data'),
  DATABASE_URL: optionalUrl,
  // Local mode: use the chains of a shared devnet (npm run devnet) instead of in-process ones.
  DEVNET_URL: optionalUrl,
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  // How long opening one PostgreSQL connection may take before the query that needed it fails.
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  // pg-boss's own pool (job fetches, completions, cron); separate from DB_POOL_MAX.
  JOBS_POOL_MAX: z.coerce.number().int().min(1).max(50).default(4),
  // SIGTERM/SIGINT: stop accepting, end streams, drain, stop jobs; exit within this many seconds.
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(1).max(600).default(20),
  PUBLIC_BASE_URL: optionalUrl,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SERVICE_SLUG: z
    .string()
    .regex(/^[a-z][a-z0-9]{0,30}$/, 'lower-case letters and digits, starting with a letter')
    .default('svc'),
  ADMIN_USER_IDS: optionalString,
  // The bearer token /metrics asks for; live mode without it turns /metrics off (404).
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'at least 16 characters').optional()),
  IDP_JWKS_URL: optionalUrl,
  IDP_ISSUER: optionalString,
  IDP_AUDIENCE: optionalString,
  // The identity provider's hosted login for the web app: it is sent `redirect_uri=<base>/signin` and
  // must come back with the token in the fragment (`#id_token=...`, `#access_token=...` or `#token=...`).
  IDP_LOGIN_URL: optionalUrl,
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(50 * 1024 * 1024).default(1024 * 1024),
  CORS_ORIGINS: z.string().trim().default('*'),
  // Origins a browser may call POST /api/mcp from (comma-separated, or `*`). Default: the public base
  // URL's origin plus CORS_ORIGINS (a `*` there adds nothing: the MCP endpoint must check Origin).
  MCP_ALLOWED_ORIGINS: optionalString.pipe(
    z
      .string()
      .regex(/^(\*|https?:\/\/[^/,\s]+(,\s*https?:\/\/[^/,\s]+)*)$/, '`*` or comma-separated origins such as https://app.example')
      .optional(),
  ),
  JOBS_ENABLED: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  // Live-mode infrastructure; local mode runs embedded replacements for each of these.
  TEMPO_RPC_URL: optionalUrl,
  BASE_RPC_URL: optionalUrl,
  SOLANA_RPC_URL: optionalUrl,
  X402_FACILITATOR_URL: optionalUrl,
  // One facilitator call (supported, verify, settle) may take this long; a settle that times out is
  // `unknown` and the payments reconciler finds out what happened on chain.
  X402_FACILITATOR_TIMEOUT_MS: z.coerce.number().int().min(1000).max(120_000).default(30_000),
  // A hosted facilitator's API key (CDP's: key id and a PEM EC or base64 Ed25519 secret); both or
  // neither. Without them no auth header is sent (an open or self-hosted facilitator).
  X402_FACILITATOR_KEY_ID: optionalString,
  X402_FACILITATOR_KEY_SECRET: optionalString.pipe(
    z
      .string()
      .superRefine((secret, ctx) => {
        const problem = facilitatorKeyProblem(secret);
        if (problem !== true) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  ),
  MPP_SECRET_KEY: optionalString.pipe(z.string().min(32, 'at least 32 characters').optional()),
  // Encrypts agent authorizations' HMAC secrets at rest (AES-256-GCM under its SHA-256). Local
  // mode generates one under DATA_DIR when unset.
  AGENT_SECRETS_KEY: optionalString.pipe(z.string().min(32, 'at least 32 characters').optional()),
  // Signs MCP access tokens (ES256): a private JWK as JSON. Local mode generates one under DATA_DIR.
  OAUTH_SIGNING_KEY: optionalString.pipe(z.string().refine(isEs256PrivateJwk, 'a JSON private JWK with kty EC, crv P-256, x, y and d').optional()),
  SMTP_URL: optionalUrl,
  /** The From address of outgoing email (live mode). */
  EMAIL_FROM: optionalString,
  // Card fallback on payroll execute and bridge offramp (live); without a key no card is offered.
  STRIPE_SECRET_KEY: optionalString,
  STRIPE_NETWORK_ID: optionalString,
  // Each Stripe API call (charge, refund) gives up after this; network errors, 429 and 5xx are
  // retried with the same idempotency key up to STRIPE_MAX_ATTEMPTS attempts in all.
  STRIPE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  STRIPE_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  // The service's wallets on the live chains and where our contracts are deployed there.
  EVM_SERVICE_KEY: optionalString.pipe(z.string().regex(/^0x[0-9a-fA-F]{64}$/, '0x and 64 hex characters').optional()),
  SOLANA_SERVICE_KEY: optionalString.pipe(solanaSeedSchema.optional()),
  TEMPO_CONTRACTS: optionalString.pipe(jsonObject.pipe(tempoContractsSchema).optional()),
  BASE_USDC_ADDRESS: evmAddress.default('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
  SOLANA_USDC_MINT: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'a base58 address').default('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'),
  SOLANA_NETWORK: z.string().regex(/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/, 'solana: and 32 base58 characters').default('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'),
  // The policy of the Solana payroll wallet (x402/payroll/execute): per-payment cap in USD, and the
  // programs a payment may call (comma-separated; default: SPL token, associated token, memo).
  // The most recipients one payroll batch transaction carries; unset: as many as 80% of the gas cap fits.
  PAYROLL_BATCH_MAX_RECIPIENTS: optionalString.pipe(z.string().regex(/^[1-9][0-9]{0,4}$/, 'a whole number, 1 to 99999').transform(Number).optional()),
  SOLANA_PAYROLL_PER_TX_CAP_USD: z.string().regex(USD_DECIMAL_PATTERN, 'a USD decimal with at most 6 places').default('10000'),
  SOLANA_PAYROLL_ALLOWED_PROGRAMS: optionalString.pipe(
    z
      .string()
      .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}(,[1-9A-HJ-NP-Za-km-z]{32,44})*$/, 'comma-separated base58 program ids')
      .optional(),
  ),
  // The fiat bridge (src/providers/bridge): live mode talks to the provider's API with this key;
  // local mode runs a sandbox whose KYC and transfers move on every BRIDGE_SANDBOX_STEP_SECONDS.
  BRIDGE_API_KEY: optionalString,
  BRIDGE_BASE_URL: optionalUrl,
  SANCTIONS_SDN_URL: optionalUrl,
  BRIDGE_SANDBOX_STEP_SECONDS: z.coerce.number().int().min(0).max(3600).default(5),
  // The demo agent (POST /api/demo/run-agent) in live mode: its own wallet and a spending cap.
  DEMO_AGENT_LIVE_PRIVATE_KEY: optionalString.pipe(z.string().regex(/^0x[0-9a-fA-F]{64}$/, '0x and 64 hex characters').optional()),
  DEMO_AGENT_LIVE_SPEND_CAP_USD: z.string().regex(USD_DECIMAL_PATTERN, 'a USD decimal with at most 6 places').default('1.00'),
  // Behind a reverse proxy: take the client IP from the last X-Forwarded-For entry (rate limits).
  TRUST_PROXY: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  // Abuse limits shared by every instance (src/http/rate-limits.ts): hits per window, 0 = off.
  RATE_LIMIT_OAUTH_REGISTER_PER_HOUR: z.coerce.number().int().min(0).optional(),
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: z.coerce.number().int().min(0).optional(),
  RATE_LIMIT_OAUTH_TOKEN_PER_MINUTE: z.coerce.number().int().min(0).optional(),
  RATE_LIMIT_PROOF_FAILURES_PER_15_MINUTES: z.coerce.number().int().min(0).optional(),
  RATE_LIMIT_DEMO_RUNS_PER_10_MINUTES: z.coerce.number().int().min(0).optional(),
  RATE_LIMIT_FREE_ADVANCES_PER_MINUTE: z.coerce.number().int().min(0).optional(),
  // The AI provider port (src/providers/ai): `offline` is deterministic and needs no network.
  AI_PROVIDER: optionalString.pipe(z.enum(['offline', 'anthropic', 'openai']).default('offline')),
  AI_API_KEY: optionalString,
  AI_BASE_URL: optionalUrl,
  AI_MODEL: optionalString,
  AI_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  // Escrow (src/features/escrow): a verdict below this confidence goes to the employer instead of settling.
  ESCROW_JUDGE_MIN_CONFIDENCE: z.coerce.number().int().min(0).max(100).default(70),
  // `ipfs://<cid>/path` is fetched as `<gateway><cid>/path`.
  ESCROW_IPFS_GATEWAY: z.string().trim().url().regex(/^https:\/\/.*\/$/, 'an https URL ending in /').default('https://ipfs.io/ipfs/'),
  // Hosts a deliverable may be fetched from although they resolve to loopback or private addresses
  // (tests serve from 127.0.0.1); comma-separated `host` or `host:port`. Leave empty in production.
  ESCROW_FETCH_ALLOW_HOSTS: z.string().trim().default(''),
  // The escrow program whose submit_deliverable instruction deliver-signed accepts (live mode;
  // local mode runs its own program on the embedded chain). Unset in live mode: deliver-signed answers 503.
  SOLANA_ESCROW_PROGRAM_ID: optionalString.pipe(z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'a base58 program id').optional()),
  // Virtual deposit addresses (spec 2.13, 8.1): the embedded registry's proof-of-work difficulty
  // (local mode only, fixed when the chain is first created; live Tempo demands 4) and the
  // salt-mining iterations one POST /api/employers/{id}/virtual-master may spend.
  VIRTUAL_MASTER_ZERO_BYTES: optionalString.pipe(z.string().regex(/^[0-4]$/, 'an integer from 0 to 4').transform(Number).optional()),
  VIRTUAL_MASTER_BUDGET: z.coerce.number().int().min(1).max(50_000_000).default(50_000_000),
  // Blocks mined on top of a transfer to a virtual address before the indexer records it (a reorg
  // shallower than that never reaches the rows). Default: 20 on live Tempo (about 10 s of 0.5 s
  // blocks), 0 on the embedded chain, which mines one block per transaction and cannot reorganise.
  VIRTUAL_INFLOW_CONFIRMATIONS: optionalString.pipe(z.string().regex(/^(0|[1-9][0-9]{0,2}|1000)$/, 'whole blocks, 0 to 1000').transform(Number).optional()),
  // Reliability suite only (local mode; refused in live mode): kill the process at a named point
  // (src/faults.ts), and let a restarted process take over a dead one's payroll run, escrow or
  // reputation write after this many seconds instead of the production leases (60 s, 90 s, 300 s).
  CRASH_AT: optionalString.pipe(
    z
      .string()
      .regex(new RegExp(`^(${CRASH_POINTS.map((p) => p.replaceAll('.', '\\.')).join('|')})(#[1-9][0-9]{0,3})?$`), `one of ${CRASH_POINTS.join(', ')}, optionally #n`)
      .optional(),
  ),
  LOCAL_TAKEOVER_SECONDS: optionalString.pipe(z.string().regex(/^[1-9][0-9]{0,3}$/, 'whole seconds, 1 to 9999').transform(Number).optional()),
});

type Env = z.infer<typeof envSchema>;

/** Every setting the service reads (README.md's settings table lists each). */
export const SETTING_NAMES: readonly string[] = Object.keys(envSchema.shape);

/** Settings live mode cannot run without. Local mode has an embedded stand-in for each. */
const LIVE_REQUIRED = [
  'DATABASE_URL',
  'PUBLIC_BASE_URL',
  'IDP_JWKS_URL',
  'IDP_ISSUER',
  'IDP_AUDIENCE',
  'TEMPO_RPC_URL',
  'BASE_RPC_URL',
  'SOLANA_RPC_URL',
  'X402_FACILITATOR_URL',
  'MPP_SECRET_KEY',
  'AGENT_SECRETS_KEY',
  'OAUTH_SIGNING_KEY',
  'SMTP_URL',
  'EMAIL_FROM',
  'EVM_SERVICE_KEY',
  'SOLANA_SERVICE_KEY',
  'TEMPO_CONTRACTS',
] as const satisfies readonly (keyof Env)[];

/** Settings whose values never appear in an answer or a log line (src/secrets.ts). */
const SECRET_SETTINGS = [
  'MPP_SECRET_KEY',
  'AGENT_SECRETS_KEY',
  'OAUTH_SIGNING_KEY',
  'STRIPE_SECRET_KEY',
  'EVM_SERVICE_KEY',
  'SOLANA_SERVICE_KEY',
  'BRIDGE_API_KEY',
  'AI_API_KEY',
  'DEMO_AGENT_LIVE_PRIVATE_KEY',
  'X402_FACILITATOR_KEY_SECRET',
  'METRICS_TOKEN',
] as const satisfies readonly (keyof Env)[];
/** URL settings that may carry credentials (a password, an API key in the path or query). */
const CREDENTIALED_URL_SETTINGS = [
  'DATABASE_URL',
  'TEMPO_RPC_URL',
  'BASE_RPC_URL',
  'SOLANA_RPC_URL',
  'X402_FACILITATOR_URL',
  'SMTP_URL',
  'BRIDGE_BASE_URL',
  'AI_BASE_URL',
] as const satisfies readonly (keyof Env)[];

function secretsIn(source: Record<string, string | undefined>): Secret[] {
  return [
    ...SECRET_SETTINGS.flatMap((key) => valueSecrets(key, source[key]?.trim())),
    ...CREDENTIALED_URL_SETTINGS.flatMap((key) => urlSecrets(key, source[key]?.trim())),
  ];
}

export type Mode = 'local' | 'live';

/** VIRTUAL_INFLOW_CONFIRMATIONS when unset: live Tempo, or the embedded chain (see the schema). */
export const DEFAULT_INFLOW_CONFIRMATIONS: Record<Mode, number> = { live: 20, local: 0 };

/** Models used when AI_MODEL is not set. */
export const DEFAULT_AI_MODELS = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-4o-mini' } as const;

export interface AiConfig {
  provider: 'offline' | 'anthropic' | 'openai';
  apiKey: string | undefined;
  /** Without it, the provider's public API. */
  baseUrl: string | undefined;
  model: string;
  timeoutMs: number;
}

export interface Config {
  mode: Mode;
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Local mode: the shared devnet whose chains this instance uses (undefined: in-process chains). */
  devnetUrl: string | undefined;
  dbPoolMax: number;
  dbConnectTimeoutMs: number;
  jobsPoolMax: number;
  shutdownGraceSeconds: number;
  publicBaseUrl: string;
  logLevel: Env['LOG_LEVEL'];
  serviceSlug: string;
  adminUserIds: ReadonlySet<string>;
  /** /metrics: `open` (local mode without METRICS_TOKEN), the bearer token it asks for, or `off` (live mode without one). */
  metricsAccess: { kind: 'open' } | { kind: 'token'; token: string } | { kind: 'off' };
  idp: { jwksUrl: string | undefined; issuer: string; audience: string; loginUrl: string | undefined };
  http: { maxBodyBytes: number; corsOrigins: '*' | string[]; trustProxy: boolean; mcpAllowedOrigins: '*' | string[] };
  jobsEnabled: boolean;
  /** undefined in local mode without AGENT_SECRETS_KEY: a key file under dataDir is used. */
  agentSecretsKey: string | undefined;
  /** undefined in local mode without OAUTH_SIGNING_KEY: a key file under dataDir is used. */
  oauthSigningKey: string | undefined;
  /** Recipients per payroll batch transaction at most; undefined: what the gas limit allows. */
  payrollBatchMaxRecipients: number | undefined;
  /** Solana payroll wallet policy; `allowedPrograms` null = the default set (src/features/payroll/solana-policy.ts). */
  solanaPayrollPolicy: { perTxCap: bigint; allowedPrograms: string[] | null };
  ai: AiConfig;
  escrow: { judgeMinConfidence: number; ipfsGateway: string; fetchAllowHosts: ReadonlySet<string> };
  /** `apiKey` undefined: the sandbox in local mode, no bridge (503) in live mode. */
  bridge: { apiKey: string | undefined; baseUrl: string | undefined; sandboxStepSeconds: number };
  /** Where the sanctions refresh downloads OFAC's sdn_advanced.xml (live default: OFAC's; local: none). */
  sanctions: { sdnUrl: string | undefined };
  demoAgent: { livePrivateKey: `0x${string}` | undefined; liveSpendCapUsd: bigint };
  /** Points per window of the named limits the settings override; the rest keep their defaults. */
  rateLimits: Partial<Record<LimitName, number>>;
  /** zeroBytes: the embedded registry's difficulty when first deployed (4 in live mode); budget: iterations per request. */
  virtualMaster: { zeroBytes: number; budget: number };
  /** confirmations: blocks on top of an inflow's block before the indexer records it. */
  virtualInflows: { confirmations: number };
  /** Values of secret settings, which the logger and the outside systems' error texts never show. */
  secrets: readonly Secret[];
  /** Local mode only: the crash point armed for this process, and the lease override for takeovers after a crash. */
  faults: { crashAt: string | undefined; takeoverSeconds: number | undefined };
  live: {
    tempoRpcUrl: string | undefined;
    baseRpcUrl: string | undefined;
    solanaRpcUrl: string | undefined;
    x402FacilitatorUrl: string | undefined;
    /** The facilitator's API key (signed-JWT auth); undefined: no auth header. */
    x402FacilitatorKey: FacilitatorApiKey | undefined;
    x402FacilitatorTimeoutMs: number;
    mppSecretKey: string | undefined;
    smtpUrl: string | undefined;
    emailFrom: string | undefined;
    stripe: { secretKey: string; networkId: string; timeoutMs: number; maxAttempts: number } | undefined;
    evmServiceKey: `0x${string}` | undefined;
    solanaServiceSeed: Uint8Array | undefined;
    tempoContracts: z.infer<typeof tempoContractsSchema> | undefined;
    baseUsdcAddress: `0x${string}`;
    solanaUsdcMint: string;
    /** The deployed escrow program (`npm run escrow-program`); without it escrows are refused (503). */
    solanaEscrowProgramId: string | undefined;
    solanaNetwork: string;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/** The local development identity provider's issuer and audience (docs/decisions.md). */
export const LOCAL_IDP_ISSUER = 'urn:local-dev-idp';
export const LOCAL_IDP_AUDIENCE = 'payroll-internal-api';
/** Seeded by local mode; an admin so a newcomer can open the admin pages at once. */
export const LOCAL_DEMO_ADMIN_ID = 'demo-admin';

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const { env, mode } = parseEnv(source);
  const port = env.PORT;
  const adminIds = (env.ADMIN_USER_IDS ?? (mode === 'local' ? LOCAL_DEMO_ADMIN_ID : ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

  return {
    mode,
    port,
    // Local mode mints tokens for anyone through /api/dev: never listen beyond loopback by default.
    host: env.HOST ?? (mode === 'local' ? '127.0.0.1' : '0.0.0.0'),
    dataDir: path.resolve(env.DATA_DIR),
    databaseUrl: env.DATABASE_URL,
    devnetUrl: env.DEVNET_URL?.replace(/\/+$/, ''),
    dbPoolMax: env.DB_POOL_MAX,
    dbConnectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
    jobsPoolMax: env.JOBS_POOL_MAX,
    shutdownGraceSeconds: env.SHUTDOWN_GRACE_SECONDS,
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL,
    serviceSlug: env.SERVICE_SLUG,
    adminUserIds: new Set(adminIds),
    metricsAccess: env.METRICS_TOKEN ? { kind: 'token', token: env.METRICS_TOKEN } : { kind: mode === 'live' ? 'off' : 'open' },
    idp: {
      jwksUrl: env.IDP_JWKS_URL,
      issuer: env.IDP_ISSUER ?? LOCAL_IDP_ISSUER,
      audience: env.IDP_AUDIENCE ?? LOCAL_IDP_AUDIENCE,
      loginUrl: env.IDP_LOGIN_URL,
    },
    http: httpSettings(env),
    jobsEnabled: env.JOBS_ENABLED,
    agentSecretsKey: env.AGENT_SECRETS_KEY,
    oauthSigningKey: env.OAUTH_SIGNING_KEY,
    solanaPayrollPolicy: {
      perTxCap: parseUsd(env.SOLANA_PAYROLL_PER_TX_CAP_USD)!,
      allowedPrograms: env.SOLANA_PAYROLL_ALLOWED_PROGRAMS?.split(',') ?? null,
    },
    ai: {
      provider: env.AI_PROVIDER,
      apiKey: env.AI_API_KEY,
      baseUrl: env.AI_BASE_URL,
      model: env.AI_MODEL ?? (env.AI_PROVIDER === 'offline' ? 'offline' : DEFAULT_AI_MODELS[env.AI_PROVIDER]),
      timeoutMs: env.AI_TIMEOUT_MS,
    },
    escrow: {
      judgeMinConfidence: env.ESCROW_JUDGE_MIN_CONFIDENCE,
      ipfsGateway: env.ESCROW_IPFS_GATEWAY,
      fetchAllowHosts: new Set(
        env.ESCROW_FETCH_ALLOW_HOSTS.split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    },
    bridge: { apiKey: env.BRIDGE_API_KEY, baseUrl: env.BRIDGE_BASE_URL, sandboxStepSeconds: env.BRIDGE_SANDBOX_STEP_SECONDS },
    sanctions: { sdnUrl: env.SANCTIONS_SDN_URL ?? (mode === 'live' ? OFAC_SDN_ADVANCED_URL : undefined) },
    demoAgent: {
      livePrivateKey: env.DEMO_AGENT_LIVE_PRIVATE_KEY as `0x${string}` | undefined,
      liveSpendCapUsd: parseUsd(env.DEMO_AGENT_LIVE_SPEND_CAP_USD)!,
    },
    rateLimits: definedOnly({
      oauthRegister: env.RATE_LIMIT_OAUTH_REGISTER_PER_HOUR,
      oauthAuthorize: env.RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE,
      oauthToken: env.RATE_LIMIT_OAUTH_TOKEN_PER_MINUTE,
      proofFailures: env.RATE_LIMIT_PROOF_FAILURES_PER_15_MINUTES,
      demoRuns: env.RATE_LIMIT_DEMO_RUNS_PER_10_MINUTES,
      freeAdvances: env.RATE_LIMIT_FREE_ADVANCES_PER_MINUTE,
    }),
    payrollBatchMaxRecipients: env.PAYROLL_BATCH_MAX_RECIPIENTS,
    virtualMaster: { zeroBytes: mode === 'local' ? (env.VIRTUAL_MASTER_ZERO_BYTES ?? 4) : 4, budget: env.VIRTUAL_MASTER_BUDGET },
    virtualInflows: { confirmations: env.VIRTUAL_INFLOW_CONFIRMATIONS ?? DEFAULT_INFLOW_CONFIRMATIONS[mode] },
    secrets: secretsIn(source),
    faults: { crashAt: env.CRASH_AT, takeoverSeconds: env.LOCAL_TAKEOVER_SECONDS },
    live: liveSettings(env),
  };
}

/**
 * The settings, checked: every problem (missing live settings, a value out of range, a local-only
 * setting in live mode) is collected and thrown together as one ConfigError.
 */
function parseEnv(source: Record<string, string | undefined>): { env: Env; mode: Mode } {
  const problems: string[] = [];
  const present = (key: string) => (source[key] ?? '').trim() !== '';
  // Without an explicit APP_MODE, a configured live chain means live mode: a half-configured live
  // deployment then refuses to start instead of silently running on embedded chains.
  const liveChainConfigured = present('TEMPO_RPC_URL') || present('BASE_RPC_URL') || present('SOLANA_RPC_URL');
  const aiProvider = source.AI_PROVIDER?.trim() || 'offline';
  if ((source.APP_MODE?.trim() || (liveChainConfigured ? 'live' : 'local')) === 'live') {
    const missing: string[] = LIVE_REQUIRED.filter((key) => !present(key));
    // A hosted AI provider needs its key; `offline` needs nothing.
    if (aiProvider !== 'offline' && !present('AI_API_KEY')) missing.push('AI_API_KEY');
    if (missing.length > 0) problems.push(`live mode is missing required settings: ${missing.join(', ')}`);
  } else if ((aiProvider === 'anthropic' || (aiProvider === 'openai' && !present('AI_BASE_URL'))) && !present('AI_API_KEY')) {
    // Local mode may point `openai` at a local model server without a key; nothing else works keyless.
    problems.push(`AI_API_KEY: required with AI_PROVIDER=${aiProvider}${aiProvider === 'openai' ? ' unless AI_BASE_URL names a local model server' : ''}`);
  }
  const parsed = envSchema.safeParse(source);
  const zeroBytes = parsed.success ? parsed.data.VIRTUAL_MASTER_ZERO_BYTES : undefined;
  if (zeroBytes !== undefined && zeroBytes !== 4 && (parsed.data?.APP_MODE ?? (liveChainConfigured ? 'live' : 'local')) === 'live') {
    problems.push("VIRTUAL_MASTER_ZERO_BYTES: local mode only; live Tempo's registry demands 4 zero bytes");
  }
  for (const key of ['CRASH_AT', 'LOCAL_TAKEOVER_SECONDS', 'DEVNET_URL'] as const) {
    const why = key === 'DEVNET_URL' ? 'live mode uses the live chains' : "the reliability suite's crash tests";
    if (present(key) && (parsed.data?.APP_MODE ?? (liveChainConfigured ? 'live' : 'local')) === 'live') problems.push(`${key}: local mode only (${why})`);
  }
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push(`${issue.path.join('.') || 'environment'}: ${issue.message}`);
    }
  }
  if (present('X402_FACILITATOR_KEY_ID') !== present('X402_FACILITATOR_KEY_SECRET')) {
    problems.push('X402_FACILITATOR_KEY_ID and X402_FACILITATOR_KEY_SECRET: set both or neither');
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const env = parsed.data;
  const mode: Mode = env.APP_MODE ?? (liveChainConfigured ? 'live' : 'local');
  return { env, mode };
}

/** How the HTTP server listens and whom it answers (bodies, CORS, proxies, MCP origins). */
function httpSettings(env: Env): Config['http'] {
  return {
    maxBodyBytes: env.MAX_BODY_BYTES,
    corsOrigins:
      env.CORS_ORIGINS === '*'
        ? '*'
        : env.CORS_ORIGINS.split(',')
            .map((s) => s.trim())
            .filter(Boolean),
    trustProxy: env.TRUST_PROXY,
    mcpAllowedOrigins: mcpAllowedOrigins(env),
  };
}

/** The live chains, facilitator, processors and keys (each undefined when unset). */
function liveSettings(env: Env): Config['live'] {
  return {
    tempoRpcUrl: env.TEMPO_RPC_URL,
    baseRpcUrl: env.BASE_RPC_URL,
    solanaRpcUrl: env.SOLANA_RPC_URL,
    x402FacilitatorUrl: env.X402_FACILITATOR_URL,
    x402FacilitatorKey:
      env.X402_FACILITATOR_KEY_ID && env.X402_FACILITATOR_KEY_SECRET ? { keyId: env.X402_FACILITATOR_KEY_ID, keySecret: env.X402_FACILITATOR_KEY_SECRET } : undefined,
    x402FacilitatorTimeoutMs: env.X402_FACILITATOR_TIMEOUT_MS,
    mppSecretKey: env.MPP_SECRET_KEY,
    smtpUrl: env.SMTP_URL,
    emailFrom: env.EMAIL_FROM,
    stripe: env.STRIPE_SECRET_KEY
      ? { secretKey: env.STRIPE_SECRET_KEY, networkId: env.STRIPE_NETWORK_ID ?? 'internal', timeoutMs: env.STRIPE_TIMEOUT_MS, maxAttempts: env.STRIPE_MAX_ATTEMPTS }
      : undefined,
    evmServiceKey: env.EVM_SERVICE_KEY as `0x${string}` | undefined,
    solanaServiceSeed: env.SOLANA_SERVICE_KEY,
    tempoContracts: env.TEMPO_CONTRACTS,
    baseUsdcAddress: env.BASE_USDC_ADDRESS as `0x${string}`,
    solanaUsdcMint: env.SOLANA_USDC_MINT,
    solanaEscrowProgramId: env.SOLANA_ESCROW_PROGRAM_ID,
    solanaNetwork: env.SOLANA_NETWORK,
  };
}

/** `npm run deploy:contracts`: where it deploys, with which key, and what TEMPO_CONTRACTS already names. */
export interface DeployConfig {
  network: 'tempo' | 'base';
  /** TEMPO_RPC_URL or BASE_RPC_URL. */
  rpcUrl: string;
  /** EVM_SERVICE_KEY: the service wallet deploys, so it owns our contracts as on the embedded chains. */
  deployerKey: `0x${string}`;
  /** The Tempo-native three (defaults: Tempo's own) and whichever of ours are already deployed. */
  tempoContracts: z.infer<typeof deployTempoContractsSchema>;
}

// For a deployment, TEMPO_CONTRACTS may name only the Tempo-native contracts (a devnet's stablecoin).
const deployTempoContractsSchema = tempoContractsSchema.extend({
  payrollTreasury: evmAddress.optional(),
  streamVesting: evmAddress.optional(),
  yieldRouter: evmAddress.optional(),
  agentIdentityRegistry: evmAddress.optional(),
  agentReputationRegistry: evmAddress.optional(),
});

export function loadDeployConfig(network: string | undefined, source: Record<string, string | undefined> = process.env): DeployConfig {
  if (network !== 'tempo' && network !== 'base') throw new ConfigError(['--network: tempo or base']);
  const rpcSetting = network === 'tempo' ? 'TEMPO_RPC_URL' : 'BASE_RPC_URL';
  const parsed = z
    .object({
      [rpcSetting]: z.url(),
      EVM_SERVICE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, '0x and 64 hex characters'),
      TEMPO_CONTRACTS: optionalString.pipe(jsonObject.pipe(deployTempoContractsSchema).optional()),
    })
    .safeParse(source);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  const env = parsed.data as { EVM_SERVICE_KEY: `0x${string}`; TEMPO_CONTRACTS: DeployConfig['tempoContracts'] | undefined } & Record<string, string>;
  return {
    network,
    rpcUrl: env[rpcSetting]!,
    deployerKey: env.EVM_SERVICE_KEY,
    tempoContracts: env.TEMPO_CONTRACTS ?? deployTempoContractsSchema.parse({}),
  };
}

/** MCP_ALLOWED_ORIGINS, or the public base URL's origin plus the CORS origins (never `*` by default). */
function mcpAllowedOrigins(env: Env): '*' | string[] {
  const list = (text: string) =>
    text
      .split(',')
      .map((s) => s.trim().replace(/\/+$/, ''))
      .filter(Boolean);
  if (env.MCP_ALLOWED_ORIGINS === '*') return '*';
  if (env.MCP_ALLOWED_ORIGINS) return list(env.MCP_ALLOWED_ORIGINS);
  const base = new URL(env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).origin;
  return [...new Set([base, ...(env.CORS_ORIGINS === '*' ? [] : list(env.CORS_ORIGINS))])];
}

/** The entries whose value is set: settings left out keep the defaults of the module they configure. */
function definedOnly<K extends string, V>(entries: Record<K, V | undefined>): Partial<Record<K, V>> {
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined)) as Partial<Record<K, V>>;
}
