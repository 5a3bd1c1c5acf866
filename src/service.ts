import type { AddressInfo } from 'node:net';
import { buildApp, createServices, type App, type Services } from './app.js';
import { openEmbeddedChains, type LocalChains } from './chains/embedded/index.js';
import { openDevnetChains } from './devnet/remote.js';
import { embeddedChainPorts, liveChainPorts, type Chains } from './chains/index.js';
import { checkLiveChains } from './chains/live-checks.js';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/client.js';
import { migrate } from './db/migrate.js';
import { ComplianceService } from './features/compliance/service.js';
import { fundDemo, seedDemo } from './features/demo/seed.js';
import { Faucet } from './features/dev/faucet.js';
import { readinessChecks } from './features/ops/readiness.js';
import { createObservability } from './features/ops/observability.js';
import { reportingSettled } from './features/ops/business-metrics.js';
import { defineBridgeJobs } from './features/bridge/jobs.js';
import { defineWagesJobs } from './features/wages/jobs.js';
import { WagesService } from './features/wages/service.js';
import { BridgeService, bridgeProviderFor } from './features/bridge/service.js';
import { createEmailTransport, defineEmailJobs } from './features/email/jobs.js';
import { defineJobs } from './jobs/definitions.js';
import { defineAgentJobs } from './features/agents/jobs.js';
import { AgentPayService } from './features/agents/pay.js';
import { AgentRequestVerifier } from './features/agents/request-proof.js';
import { SecretBox } from './features/agents/secret-box.js';
import { AgentsService } from './features/agents/service.js';
import { defineEscrowJobs } from './features/escrow/jobs.js';
import { VirtualInflowIndexer, inflowTokens } from './features/virtual-addresses/indexer.js';
import { defineVirtualAddressJobs } from './features/virtual-addresses/jobs.js';
import { EscrowService, escrowOptionsFrom } from './features/escrow/service.js';
import { LOCAL_ESCROW_PROGRAM_ID } from './chains/embedded/escrow-program.js';
import { createAiProvider } from './providers/ai/index.js';
import { defineReputationJobs } from './features/reputation/jobs.js';
import { ReputationService, attestSettledPayment, enqueueReputationWrite } from './features/reputation/service.js';
import { PayrollService } from './features/payroll/service.js';
import { TreasuryService } from './features/treasury/service.js';
import { JobRunner } from './jobs/runner.js';
import { armCrashPoint } from './faults.js';
import { listen } from './http/server.js';
import type { Logger } from './log.js';
import { SecretRedactor } from './secrets.js';
import { openPayments } from './payments/index.js';
import { DevIdentityProvider } from './providers/identity/dev-idp.js';
import { createIdentityVerifier } from './providers/identity/verifier.js';

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
    log.info({ engine: database.engine, applied: migrations.applied }, 'database ready');

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

    // The registry's difficulty is fixed when the embedded chain is first created (its journal
    // replays the same deployment); VIRTUAL_MASTER_ZERO_BYTES later has no effect on that data dir.
    embeddedChains = config.devnetUrl
      ? await openDevnetChains(config.devnetUrl, database)
      : config.mode === 'local'
        ? await openEmbeddedChains(database, { virtualMasterZeroBytes: config.virtualMaster.zeroBytes })
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
    const payments = await openPayments({ config, database, chains, embedded: embeddedChains, onSettled, log });

    const services = createServices({ config, database });
    // Settles payroll runs left submitted (a crash mid-execute, an owner's transaction in flight).
    const treasury = new TreasuryService(chains.tempo, services.employers);
    const payrollReconciler = new PayrollService(database, services.employers, treasury, chains.tempo, null);
    defineJobs(jobs, {
      database,
      payroll: payrollReconciler,
      payrollStaleSeconds: config.faults.takeoverSeconds,
      paymentReconciler: payments.reconciler,
      evmConnections: [chains.tempo.connection, chains.base.connection],
      events,
    });
    defineWagesJobs(jobs, { wages: new WagesService(database, services.employers, treasury, chains.tempo) });
    defineBridgeJobs(jobs, { bridge: new BridgeService(database, services.employers, chains.tempo, bridgeProviderFor(config, database, chains.tempo)) });
    // Local mode: the outbox is the mailbox (admins read it); live mode sends through SMTP.
    defineEmailJobs(jobs, { database, transport: createEmailTransport({ mode: config.mode, smtpUrl: config.live.smtpUrl, emailFrom: config.live.emailFrom }) });
    const reputation = new ReputationService(database, chains, { serviceSlug: config.serviceSlug, leaseSeconds: config.faults.takeoverSeconds });
    defineReputationJobs(jobs, { reputation });
    const agents = new AgentsService(database, services.employers, new SecretBox({ configured: config.agentSecretsKey, dataDir: config.dataDir }));
    const reputationPort = { tierOf: (identity: Parameters<ReputationService['tierOf']>[0]) => reputation.tierOf(identity), enqueue: enqueueReputationWrite };
    const agentVerifier = new AgentRequestVerifier(database, agents, chains.tempo);
    defineAgentJobs(jobs, { database, agentPay: new AgentPayService(database, agentVerifier, services.employers, chains.tempo, reputationPort, log), events });
    const escrow = new EscrowService(
      database,
      agentVerifier,
      services.employers,
      chains.tempo,
      chains.solana,
      reputation,
      createAiProvider(config.ai, log),
      escrowOptionsFrom(config, LOCAL_ESCROW_PROGRAM_ID),
      log.child({ component: 'escrow' }),
    );
    defineEscrowJobs(jobs, { escrow, events });
    defineVirtualAddressJobs(jobs, {
      indexer: new VirtualInflowIndexer(database, chains.tempo, inflowTokens(config.mode, chains.tempo.token), { confirmations: config.virtualInflows.confirmations }),
    });
    // A process that died between recording a payroll batch and broadcasting it left those bytes
    // unsent: send them before this process signs anything else with that wallet and takes their nonce.
    await payrollReconciler.reconcileStale(0);
    if (config.jobsEnabled) await jobs.start();

    log.info(await new ComplianceService(database, services.employers, chains.tempo, config.serviceSlug).syncSanctionsList(), 'sanctions list synced');
    if (config.mode === 'local') {
      const { employerId } = await seedDemo(services, database);
      if (embeddedChains) await fundDemo(employerId, treasury, chains, new Faucet(embeddedChains));
    }

    // Aborted when shutdown begins: every event stream ends with its final event (AppDependencies.shutdown).
    const shutdown = new AbortController();
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
      async close() {
        const graceMs = config.shutdownGraceSeconds * 1000;
        const deadline = Date.now() + graceMs;
        shutdown.abort();
        const answered = await http.drain(graceMs * DRAIN_SHARE);
        if (!answered) log.warn('shutdown: answers still running were cut off');
        // Jobs stop after the answers: a request in flight may still enqueue one.
        await jobs.stop(deadline - Date.now() - graceMs * CLOSE_RESERVE_SHARE);
        await embeddedChains?.close();
        await database.close();
        return { clean: answered };
      },
    };
  } catch (error) {
    await embeddedChains?.close().catch(() => {});
    await database.close().catch(() => {});
    throw error;
  }
}
