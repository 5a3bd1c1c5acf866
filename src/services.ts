import type { LocalChains } from './chains/embedded/index.js';
import type { Chains } from './chains/index.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { ActivityService } from './features/activity/service.js';
import { AdminService } from './features/admin/service.js';
import { AgentDirectoryService } from './features/agent-directory/service.js';
import { AgentPayService } from './features/agents/pay.js';
import { ProofFailures } from './features/agents/proof-failures.js';
import { AgentRequestVerifier } from './features/agents/request-proof.js';
import { SecretBox } from './features/agents/secret-box.js';
import { AgentsService } from './features/agents/service.js';
import { AiService } from './features/ai/service.js';
import { AnnouncementsService } from './features/announcements/service.js';
import { BridgeService, bridgeProviderFor } from './features/bridge/service.js';
import { ComplianceService } from './features/compliance/service.js';
import { DemoAgentService } from './features/demo/service.js';
import { DevClock } from './features/dev/clock.js';
import { Faucet } from './features/dev/faucet.js';
import { PaidCallers } from './features/employers/paid-caller.js';
import { EmployersService } from './features/employers/service.js';
import { posterReservations } from './features/escrow/index.js';
import { EscrowService, escrowOptionsFrom } from './features/escrow/service.js';
import { MppActivityService } from './features/mpp-activity/service.js';
import { NotificationsService } from './features/notifications/service.js';
import { AccessTokens } from './features/oauth/access-tokens.js';
import { OAuthService } from './features/oauth/service.js';
import type { Observability } from './features/ops/observability.js';
import { PayrollService } from './features/payroll/service.js';
import { DEFAULT_ALLOWED_PROGRAMS, SolanaPolicyWallet } from './features/payroll/solana-policy.js';
import { ReputationService, enqueueReputationWrite } from './features/reputation/service.js';
import { TreasuryHistory } from './features/treasury/history.js';
import { TreasuryOperations } from './features/treasury/operations.js';
import { TreasuryService } from './features/treasury/service.js';
import { UsersService } from './features/users/service.js';
import { VirtualInflowIndexer, inflowTokens } from './features/virtual-addresses/indexer.js';
import { VirtualMasterService, virtualMasterOptionsFrom } from './features/virtual-addresses/master.js';
import { WagesService } from './features/wages/service.js';
import { RateLimits, rateLimitRules } from './http/rate-limits.js';
import type { Logger } from './log.js';
import { createAiProvider, type AiProvider } from './providers/ai/index.js';
import type { IdentityVerifier } from './providers/identity/verifier.js';

/** What the services are built from: settings, the database, the chain ports and the log. */
export interface ServiceDependencies {
  config: Config;
  database: Database;
  log: Logger;
  verifyIdentity: IdentityVerifier;
  /** Dependency health, read by the admin routes. */
  observability: Pick<Observability, 'health'>;
  /** The chain ports; without them (tests that run no chains) `onChain` is absent. */
  chains?: Chains | undefined;
  /** The embedded chains (local mode), for the faucet. */
  embeddedChains?: LocalChains | undefined;
}

/** The services that move money or read chains: present whenever the chain ports are. */
export interface ChainServices {
  ai: AiProvider;
  treasury: TreasuryService;
  /** The treasury routes' reads and actions (balances, yield, optimisation, session actions). */
  treasuryOperations: TreasuryOperations;
  /** The treasury balance as observed over time (daily snapshots), for the history chart. */
  treasuryHistory: TreasuryHistory;
  compliance: ComplianceService;
  payroll: PayrollService;
  solanaPayrollWallet: SolanaPolicyWallet;
  wages: WagesService;
  bridge: BridgeService;
  /** Absent without a service key that can deploy a virtual-address master. */
  virtualMasters: VirtualMasterService | null;
  inflowIndexer: VirtualInflowIndexer;
  agents: AgentsService;
  agentDirectory: AgentDirectoryService;
  reputation: ReputationService;
  agentPay: AgentPayService;
  escrow: EscrowService;
  /** Local mode only: funds wallets on the embedded chains. */
  faucet: Faucet | null;
  /** Local mode only: moves the service's and the embedded chains' time forward. */
  devClock: DevClock | null;
  demoAgent: DemoAgentService;
}

export interface Services {
  users: UsersService;
  employers: EmployersService;
  mppActivity: MppActivityService;
  announcements: AnnouncementsService;
  notifications: NotificationsService;
  activity: ActivityService;
  admin: AdminService;
  aiRules: AiService;
  accessTokens: AccessTokens;
  oauth: OAuthService;
  rateLimits: RateLimits;
  /** Resolves the identity headers of paid requests (an identity token or an agent key). */
  paidCallers: PaidCallers;
  onChain?: ChainServices;
}

/**
 * The composition root: every service of the process, built once. Routes and jobs receive them
 * from here and never construct their own, so one rule has one configuration.
 */
export function createServices(deps: ServiceDependencies): Services {
  const { config, database } = deps;
  const users = new UsersService({ database, adminUserIds: config.adminUserIds });
  const employers = new EmployersService({ database, users });
  const ai = createAiProvider(config.ai, deps.log);
  // MCP access tokens (spec 5.5): issued by the OAuth routes, required by /api/mcp.
  const accessTokens = new AccessTokens({
    issuer: config.publicBaseUrl,
    audience: `${config.publicBaseUrl}/api/mcp`,
    configuredKey: config.oauthSigningKey,
    dataDir: config.dataDir,
    clock: database.clock,
  });
  const rateLimits = new RateLimits(database, rateLimitRules(config.rateLimits));
  const services: Services = {
    users,
    employers,
    mppActivity: new MppActivityService({ database, employers }),
    announcements: new AnnouncementsService({ database }),
    notifications: new NotificationsService({ database, employers }),
    activity: new ActivityService({ database }),
    admin: new AdminService({ database, health: deps.observability.health }),
    aiRules: new AiService({ ai, employers, database }),
    accessTokens,
    oauth: new OAuthService({ database, accessTokens, issuer: config.publicBaseUrl, resource: accessTokens.audience }),
    rateLimits,
    paidCallers: new PaidCallers({ database, verifyIdentity: deps.verifyIdentity, users }),
  };
  if (deps.chains) services.onChain = createChainServices(deps, deps.chains, { employers, ai, rateLimits });
  return services;
}

function createChainServices(
  deps: ServiceDependencies,
  chains: Chains,
  shared: { employers: EmployersService; ai: AiProvider; rateLimits: RateLimits },
): ChainServices {
  const { config, database, log } = deps;
  const { employers, ai } = shared;
  const { tempo, solana } = chains;
  const treasury = new TreasuryService({ tempo, employers });
  const compliance = new ComplianceService({ database, employers, tempo, serviceSlug: config.serviceSlug });
  const wages = new WagesService({ database, employers, treasury, tempo });
  // A change that takes salary away from a wallet stops its stream at once (the wages job retries).
  employers.onStreamStops((stopIds) => wages.stopStreams(stopIds));
  const masterOptions = virtualMasterOptionsFrom(config, tempo, deps.embeddedChains?.tempo.operatorKey, log);
  const agents = new AgentsService({ database, employers, secrets: new SecretBox({ configured: config.agentSecretsKey, dataDir: config.dataDir }) });
  const proofFailures = new ProofFailures(shared.rateLimits);
  const agentDirectory = new AgentDirectoryService({ database, tempo, failures: proofFailures });
  const reputation = new ReputationService({
    database,
    chains,
    serviceSlug: config.serviceSlug,
    leaseSeconds: config.faults.takeoverSeconds,
    linkedIdentity: (address) => agentDirectory.linkedIdentity(address),
  });
  const agentVerifier = new AgentRequestVerifier({ database, agents, tempo, failures: proofFailures });
  const reputationPort = { tierOf: (identity: Parameters<ReputationService['tierOf']>[0]) => reputation.tierOf(identity), enqueue: enqueueReputationWrite };
  const { perTxCap, allowedPrograms } = config.solanaPayrollPolicy;
  const faucet = deps.embeddedChains ? new Faucet({ chains: deps.embeddedChains }) : null;
  const { livePrivateKey, liveSpendCapUsd } = config.demoAgent;
  const liveWallet = livePrivateKey ? { privateKey: livePrivateKey, spendCapUsd: liveSpendCapUsd } : null;
  return {
    ai,
    treasury,
    treasuryOperations: new TreasuryOperations({ treasury, employers, database, ai }),
    treasuryHistory: new TreasuryHistory({ treasury, employers, database }),
    compliance,
    payroll: new PayrollService({ database, employers, treasury, tempo, screen: compliance, batchMaxRecipients: config.payrollBatchMaxRecipients }),
    solanaPayrollWallet: new SolanaPolicyWallet(solana, { perTxCap, allowedPrograms: allowedPrograms ? new Set(allowedPrograms) : DEFAULT_ALLOWED_PROGRAMS }),
    wages,
    bridge: new BridgeService({ database, employers, tempo, provider: bridgeProviderFor(config, database, tempo) }),
    virtualMasters: masterOptions ? new VirtualMasterService({ database, employers, tempo, ...masterOptions }) : null,
    inflowIndexer: new VirtualInflowIndexer({ database, chain: tempo, tokens: inflowTokens(config.mode, tempo.token), confirmations: config.virtualInflows.confirmations }),
    agents,
    agentDirectory,
    reputation,
    agentPay: new AgentPayService({ database, verifier: agentVerifier, employers, tempo, reputation: reputationPort, escrowReservations: posterReservations, log }),
    escrow: new EscrowService({
      database,
      verifier: agentVerifier,
      employers,
      tempo,
      solana,
      reputation,
      ai,
      ...escrowOptionsFrom(config),
      log: log.child({ component: 'escrow' }),
    }),
    faucet,
    devClock: deps.embeddedChains ? new DevClock({ database, chains: deps.embeddedChains }) : null,
    demoAgent: new DemoAgentService({ mode: config.mode, faucet, chains, liveWallet, database }),
  };
}
