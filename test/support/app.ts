import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type App, type AppDependencies } from '../../src/app.js';
import { createServices, type Services } from '../../src/services.js';
import { openEmbeddedChains, type EmbeddedChains, type LocalChains } from '../../src/chains/embedded/index.js';
import { openDevnetChains } from '../../src/devnet/remote.js';
import { embeddedChainPorts, type Chains } from '../../src/chains/index.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { reportingSettled } from '../../src/features/ops/business-metrics.js';
import { createObservability, type Observability } from '../../src/features/ops/observability.js';
import { migrate } from '../../src/db/migrate.js';
import { readinessChecks } from '../../src/features/ops/readiness.js';
import { attestSettledPayment } from '../../src/features/reputation/service.js';
import { createLogger } from '../../src/log.js';
import { openPayments, type Payments } from '../../src/payments/index.js';
import { DevIdentityProvider } from '../../src/providers/identity/dev-idp.js';
import { createIdentityVerifier, type IdentityVerifier } from '../../src/providers/identity/verifier.js';
import { createTestDatabaseTarget } from './database.js';

export interface TestApp {
  app: App;
  /** The embedded chains in this process (with `chains: true`). */
  embeddedChains: EmbeddedChains | undefined;
  /** Local mode's chains, in this process or on a shared devnet (`devnet`). */
  localChains: LocalChains | undefined;
  /** The chain ports over the embedded chains (with `chains: true`). */
  chains: Chains | undefined;
  /** The payment gate (with `chains: true`). */
  payments: Payments | undefined;
  /** The app's metrics (and the chains' health), for jobs a test runs beside it. */
  observability: Observability;
  config: Config;
  database: Database;
  services: Services;
  idp: DevIdentityProvider;
  /** Verifies the development identity provider's tokens, as the app does. */
  verifyIdentity: IdentityVerifier;
  dataDir: string;
  /** A bearer token from the development identity provider. */
  token(sub: string, email?: string): Promise<string>;
  /** A second app over the same database, chains and services, as another instance would be. */
  anotherInstance(changes?: Partial<AppDependencies>): App;
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  close(): Promise<void>;
}

export interface RequestOptions {
  token?: string;
  /** Sent as JSON unless it is a string (sent as is). */
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * Settings that turn the abuse limits off, for tests that send many requests from one client
 * address (app.request has no socket: every request counts as the same client).
 */
export const NO_RATE_LIMITS: Record<string, string> = {
  RATE_LIMIT_OAUTH_REGISTER_PER_HOUR: '0',
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '0',
  RATE_LIMIT_OAUTH_TOKEN_PER_MINUTE: '0',
  RATE_LIMIT_PROOF_FAILURES_PER_15_MINUTES: '0',
};

/** The fetch init of a test request: the bearer token, and a JSON body unless the body is already text. */
export function requestInit(method: string, options: RequestOptions = {}): RequestInit {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return { method, headers, ...(body === undefined ? {} : { body }) };
}

/**
 * The app over a fresh database (in-memory PGlite, or a new database on TEST_DATABASE_URL);
 * `chains: true` also runs the embedded chains, as local mode does. `devnet` instead joins running
 * instances: their database, their DATA_DIR (the keys of tokens and agent secrets) and their devnet.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { chains?: boolean; devnet?: { url: string; databaseUrl: string; dataDir: string } } = {},
): Promise<TestApp> {
  const { devnet } = options;
  const dataDir = devnet?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'payroll-test-'));
  const target = devnet ? { url: devnet.databaseUrl, drop: async () => {} } : await createTestDatabaseTarget();
  // The embedded registry wants 1 zero byte unless a test sets VIRTUAL_MASTER_ZERO_BYTES.
  const config = loadConfig({ APP_MODE: 'local', DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: target.url, VIRTUAL_MASTER_ZERO_BYTES: '1', ...env });
  const database = await openDatabase({ url: target.url, dataDir: null });
  await migrate(database);
  const idp = await DevIdentityProvider.open({ dataDir, issuer: config.idp.issuer, audience: config.idp.audience });
  const embeddedChains = options.chains ? await openEmbeddedChains(database, { virtualMasterZeroBytes: config.virtualMaster.zeroBytes }) : undefined;
  const localChains = devnet ? await openDevnetChains(devnet.url, database) : embeddedChains;
  const chains = localChains && (await embeddedChainPorts(localChains));
  // As the service does: the payment gate reports kept fees to the app's metrics.
  const observability = createObservability({ config, database, chains });
  const onSettled = reportingSettled(attestSettledPayment, observability.business);
  const verifyIdentity = createIdentityVerifier({ issuer: config.idp.issuer, audience: config.idp.audience, jwks: { keys: idp.jwks().keys } });
  const log = createLogger('silent');
  const services = createServices({ config, database, log, verifyIdentity, observability, chains, embeddedChains: localChains });
  const payments = chains && (await openPayments({ config, database, chains, embedded: localChains, onSettled, paidCallers: services.paidCallers, log }));
  const deps: AppDependencies = {
    config,
    database,
    log,
    verifyIdentity,
    devIdentityProvider: idp,
    embeddedChains: localChains,
    chains,
    payments,
    readiness: readinessChecks(database),
    observability,
  };
  const app = buildApp(deps, services);
  return {
    app,
    embeddedChains,
    localChains,
    chains,
    payments,
    observability,
    config,
    database,
    services,
    idp,
    verifyIdentity,
    dataDir,
    token: (sub, email) => idp.issue({ sub, email }),
    // Its own metrics: two apps in one registry would register every metric twice.
    anotherInstance: (changes = {}) => buildApp({ ...deps, observability: undefined, ...changes }, services),
    request(method, requestPath, options = {}) {
      return Promise.resolve(app.request(requestPath, requestInit(method, options)));
    },
    async close() {
      await embeddedChains?.close();
      await database.close();
      await target.drop();
      if (!devnet) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The app as live mode builds it over a test app's database: no development identity provider, so
 * no `/api/dev` routes, and no identity tokens verify. `deps` adds what the test needs (chain ports).
 */
export function liveShapedApp(t: TestApp, deps: Partial<AppDependencies> = {}): App {
  return buildApp({
    config: t.config,
    database: t.database,
    log: createLogger('silent'),
    verifyIdentity: async () => {
      throw new Error('unused');
    },
    devIdentityProvider: null,
    readiness: [],
    ...deps,
  });
}
