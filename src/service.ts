import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { buildApp, type App } from './app.js';
import { openEmbeddedChains, stopAtOnce, type LocalChains } from './chains/embedded/index.js';
import { openDevnetChains } from './devnet/remote.js';
import { embeddedChainPorts, liveChainPorts, type Chains } from './chains/index.js';
import { checkLiveChains } from './chains/live-checks.js';
import type { Config } from './config.js';
import { startServiceClock } from './clock/clock.js';
import { openDatabase, type Database } from './db/client.js';
import { migrate } from './db/migrate.js';
import { fundDemo, seedDemo } from './features/demo/seed.js';
import { readinessChecks } from './features/ops/readiness.js';
import { createObservability } from './features/ops/observability.js';
import { reportingSettled } from './features/ops/business-metrics.js';
import { createEmailTransport } from './features/email/jobs.js';
import { defineJobs } from './jobs/definitions.js';
import { attestSettledPayment } from './features/reputation/service.js';
import { JobRunner } from './jobs/runner.js';
import { armCrashPoint } from './faults.js';
import { listen } from './http/server.js';
import type { Logger } from './log.js';
import { SecretRedactor } from './secrets.js';
import { openPayments, type Payments } from './payments/index.js';
import { DevIdentityProvider } from './providers/identity/dev-idp.js';
import { createIdentityVerifier } from './providers/identity/verifier.js';
import { createServices, type Services } from './services.js';

export interface RunningService {
  app: App;
  services: Services;
  database: Database;
  chains: Chains;
  jobs: JobRunner;
  devIdentityProvider: DevIdentityProvider | null;
  /** The bound base URL, e.g. http://127.0.0.1:3000. */
  url: string;
  /**
   * Shuts down within SHUTDOWN_GRACE_SECONDS (docs/operations.md, "Shutdown"). `clean` is false when
   * answers still running had to be cut off.
   */
  close(): Promise<{ clean: boolean }>;
}

/** Of the grace period: the share in-flight answers get, and what is kept for closing chains and the database. */
const DRAIN_SHARE = 0.6;
const CLOSE_RESERVE_SHARE = 0.15;

/** config -> database -> migrations -> identity -> jobs -> seed -> HTTP (ARCHITECTURE.md). */
export async function startService(config: Config, log: Logger): Promise<RunningService> {
  armCrashPoint(config.faults.crashAt);
  // Live chains and contracts are checked before anything opens: a wrong chain or address refuses start-up.
  if (config.mode === 'live') await checkLiveChains(config.live);
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.databaseUrl ? null : config.dataDir,
    poolMax: config.dbPoolMax,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    log: log.child({ component: 'db' }),
  });
  let embeddedChains: LocalChains | undefined;
  try {
    const migrations = await migrate(database);
    log.info({ engine: database.engine, applied: migrations.applied, repaired: migrations.repaired }, 'database ready');
    for (const { name, refused } of migrations.repaired) {
      if (refused.length > 0) log.warn({ repair: name, refused }, 'stored values a person must correct (docs/operations.md, "Data repairs")');
    }
    await startServiceClock(config.mode, database, log);

    const { devIdentityProvider, verifyIdentity } = await openIdentity(config);

    // The registry's difficulty is fixed when the embedded chain is first created (its journal
    // replays the same deployment); VIRTUAL_MASTER_ZERO_BYTES later has no effect on that data dir.
    embeddedChains = config.devnetUrl
      ? await openDevnetChains(config.devnetUrl, database)
      : config.mode === 'local'
        ? await openEmbeddedChains(database, { virtualMasterZeroBytes: config.virtualMaster.zeroBytes, onJournalLost: stopAtOnce(log) })
        : undefined;
    const chains = embeddedChains ? await embeddedChainPorts(embeddedChains) : await liveChainPorts(config.live, database, new SecretRedactor(config.secrets));
    log.info(
      { embedded: Boolean(embeddedChains), tempo: chains.tempo.token, base: chains.base.token, solana: chains.solana.mint },
      'chains ready',
    );

    const jobs = new JobRunner(database, log.child({ component: 'jobs' }), { poolMax: config.jobsPoolMax });
    const observability = createObservability({ config, database, chains, processMetrics: true });
    const events = observability.business;
    const onSettled = reportingSettled(attestSettledPayment, events);
    const services = createServices({ config, database, log, verifyIdentity, observability, chains, embeddedChains });
    const payments = await openPayments({ config, database, chains, embedded: embeddedChains, onSettled, paidCallers: services.paidCallers, log });
    const onChain = services.onChain!; // present: the chain ports are given
    defineJobs(jobs, services, {
      database,
      email: createEmailTransport({ mode: config.mode, smtpUrl: config.live.smtpUrl, emailFrom: config.live.emailFrom }),
      payrollStaleSeconds: config.faults.takeoverSeconds,
      paymentReconciler: payments.reconciler,
      evmConnections: [chains.tempo.connection, chains.base.connection],
      events,
      sanctionsSdnUrl: config.sanctions.sdnUrl,
    });
    // A process that died between recording a payroll batch and broadcasting it left those bytes
    // unsent: send them before this process signs anything else with that wallet and takes their nonce.
    // (Batches never signed wait for the payroll-reconcile job: start-up signs nothing.)
    await onChain.payroll.reconcileStale(0, { send: false });
    if (config.jobsEnabled) await jobs.start();
    onChain.devClock?.onAdvance(() => jobs.runScheduledNow());

    log.info(await onChain.compliance.loadSanctionsSnapshot(), 'sanctions list in force');
    if (config.mode === 'local') {
      const { employerId } = await seedDemo(services, database);
      if (onChain.faucet) await fundDemo(employerId, onChain.treasury, chains, onChain.faucet);
    }

    // Aborted when shutdown begins: every event stream ends with its final event (AppDependencies.shutdown).
    const shutdown = new AbortController();
    // One listener per open stream: thousands are expected, not a leak.
    setMaxListeners(0, shutdown.signal);
    const app = buildApp(
      {
        config,
        shutdown: shutdown.signal,
        database,
        log,
        verifyIdentity,
        devIdentityProvider,
        embeddedChains,
        chains,
        payments,
        observability,
        readiness: readinessChecks(database, config.jobsEnabled ? jobs : undefined),
      },
      services,
    );
    const http = await listen(app.fetch, config.port, config.host);
    const { port } = http.server.address() as AddressInfo;
    return {
      app,
      services,
      database,
      chains,
      jobs,
      devIdentityProvider,
      url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
      close: () => closeService({ config, log, shutdown, http, jobs, payments, embeddedChains, database }),
    };
  } catch (error) {
    await embeddedChains?.close().catch(() => {});
    await database.close().catch(() => {});
    throw error;
  }
}

/** Local mode's identity provider (none in live mode), and the verifier of its or the configured issuer's tokens. */
async function openIdentity(config: Config) {
  const devIdentityProvider =
    config.mode === 'local'
      ? await DevIdentityProvider.open({ dataDir: config.dataDir, issuer: config.idp.issuer, audience: config.idp.audience })
      : null;
  const jwksUrl = config.idp.jwksUrl;
  const verifyIdentity = createIdentityVerifier({
    issuer: config.idp.issuer,
    audience: config.idp.audience,
    jwks: jwksUrl ? { url: jwksUrl } : { keys: devIdentityProvider?.jwks().keys ?? [] },
  });
  return { devIdentityProvider, verifyIdentity };
}

/** Answers in flight first, then jobs, then chains and the database, all within SHUTDOWN_GRACE_SECONDS. */
async function closeService(parts: {
  config: Config;
  log: Logger;
  shutdown: AbortController;
  http: Awaited<ReturnType<typeof listen>>;
  jobs: JobRunner;
  payments: Payments;
  embeddedChains: LocalChains | undefined;
  database: Database;
}): Promise<{ clean: boolean }> {
  const { config, log, http, jobs, embeddedChains, database } = parts;
  const graceMs = config.shutdownGraceSeconds * 1000;
  const deadline = Date.now() + graceMs;
  parts.shutdown.abort();
  const answered = await http.drain(graceMs * DRAIN_SHARE);
  if (!answered) log.warn('shutdown: answers still running were cut off');
  // Streams that ended write their ticks and record their use; the ticks of any cut off are written too.
  const settleMs = Math.max(0, deadline - Date.now() - graceMs * CLOSE_RESERVE_SHARE);
  const settled = await Promise.race([
    parts.payments.sessions.settle().then(() => true),
    delay(settleMs, undefined, { ref: false }).then(() => false),
  ]);
  if (!settled) log.warn('shutdown: stream ticks still being written were cut off');
  // Jobs stop after the answers: a request in flight may still enqueue one.
  await jobs.stop(deadline - Date.now() - graceMs * CLOSE_RESERVE_SHARE);
  await embeddedChains?.close();
  await database.close();
  return { clean: answered };
}
