import { fileURLToPath } from 'node:url';
import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { methodNotAllowed } from 'hono/method-not-allowed';
import type { LocalChains } from './chains/embedded/index.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { registerComplianceRoutes } from './features/compliance/routes.js';
import { ComplianceService } from './features/compliance/service.js';
import { registerAiRoutes } from './features/ai/routes.js';
import { registerAgentDirectoryRoutes } from './features/agent-directory/routes.js';
import { AgentDirectoryService } from './features/agent-directory/service.js';
import { AgentPayService } from './features/agents/pay.js';
import { ProofFailures } from './features/agents/proof-failures.js';
import { AgentRequestVerifier } from './features/agents/request-proof.js';
import { registerAgentRoutes } from './features/agents/routes.js';
import { SecretBox } from './features/agents/secret-box.js';
import { AgentsService } from './features/agents/service.js';
import { registerEscrowRoutes } from './features/escrow/routes.js';
import { EscrowService, escrowOptionsFrom } from './features/escrow/service.js';
import { LOCAL_ESCROW_PROGRAM_ID } from './chains/embedded/escrow-program.js';
import { AccessTokens } from './features/oauth/access-tokens.js';
import { registerOAuthRoutes } from './features/oauth/routes.js';
import { OAuthService } from './features/oauth/service.js';
import { registerReputationRoutes } from './features/reputation/routes.js';
import { ReputationService, enqueueReputationWrite } from './features/reputation/service.js';
import { registerBridgeRoutes } from './features/bridge/routes.js';
import { BridgeService, bridgeProviderFor } from './features/bridge/service.js';
import { registerDemoAgentRoutes } from './features/demo/routes.js';
import { Faucet } from './features/dev/faucet.js';
import { registerAdminRoutes } from './features/admin/routes.js';
import { AdminService } from './features/admin/service.js';
import { registerAnnouncementRoutes } from './features/announcements/routes.js';
import { AnnouncementsService } from './features/announcements/service.js';
import { registerDevRoutes } from './features/dev/routes.js';
import { registerEmployerRoutes } from './features/employers/routes.js';
import { PaidCallers } from './features/employers/paid-caller.js';
import { EmployersService, tip403PolicyExists } from './features/employers/service.js';
import { registerMcpRoutes } from './features/mcp/routes.js';
import { registerMemoRoutes } from './features/memo/routes.js';
import { registerDecisionRoutes, registerPaidPayrollRoutes, registerPayrollRoutes } from './features/payroll/routes.js';
import { DEFAULT_ALLOWED_PROGRAMS, SolanaPolicyWallet } from './features/payroll/solana-policy.js';
import { PayrollService } from './features/payroll/service.js';
import { registerMppActivityRoutes } from './features/mpp-activity/routes.js';
import { MppActivityService } from './features/mpp-activity/service.js';
import { registerNotificationRoutes } from './features/notifications/routes.js';
import { NotificationsService } from './features/notifications/service.js';
import { registerOpsRoutes, type ReadinessCheck } from './features/ops/routes.js';
import { createObservability, type Observability } from './features/ops/observability.js';
import { GATE_CODES } from './features/agents/spend-gates.js';
import { registerStreamRoutes } from './features/streams/routes.js';
import { registerTreasuryRoutes } from './features/treasury/routes.js';
import { TreasuryService } from './features/treasury/service.js';
import { registerWagesRoutes } from './features/wages/routes.js';
import { WagesService } from './features/wages/service.js';
import { registerDepositAddressRoute } from './features/virtual-addresses/routes.js';
import { VirtualMasterService, virtualMasterOptionsFrom } from './features/virtual-addresses/master.js';
import { registerVirtualMasterRoutes } from './features/virtual-addresses/master-routes.js';
import { registerActivityRoutes } from './features/activity/routes.js';
import type { Chains } from './chains/index.js';
import { UsersService } from './features/users/service.js';
import { requireUser } from './http/auth.js';
import { webApp } from './http/web.js';
import { registerSessionRoute, registerSignInOptionsRoute } from './features/users/routes.js';
import type { AppEnv } from './http/context.js';
import { errorResponse, handleError } from './http/errors.js';
import { AppError } from './errors.js';
import { idempotency } from './http/idempotency.js';
import { RateLimits, rateLimitRules } from './http/rate-limits.js';
import { requestContext } from './http/request-context.js';
import { drainUnreadBody } from './http/unread-body.js';
import { validationHook } from './http/validation.js';
import type { Logger } from './log.js';
import type { Payments } from './payments/index.js';
import { createAiProvider } from './providers/ai/index.js';
import type { DevIdentityProvider } from './providers/identity/dev-idp.js';
import type { IdentityVerifier } from './providers/identity/verifier.js';

export interface AppDependencies {
  config: Config;
  database: Database;
  log: Logger;
  verifyIdentity: IdentityVerifier;
  /** Present in local mode only. */
  devIdentityProvider: DevIdentityProvider | null;
  /** The embedded chains (local mode), for the development routes. */
  embeddedChains?: LocalChains | undefined;
  readiness: ReadinessCheck[];
  /** The chain ports and the payment gate; without them (tests that run no chains) no paid route is registered. */
  chains?: Chains | undefined;
  payments?: Payments | undefined;
  /** Node process metrics (off in tests, where many apps share one process); used when `observability` is absent. */
  processMetrics?: boolean;
  /** Aborted when the process begins to shut down: open event streams end with their final event. */
  shutdown?: AbortSignal;
  /** Metrics and dependency health, made by the caller when its jobs and payments report to them; else made here. */
  observability?: Observability | undefined;
}

export interface Services {
  users: UsersService;
  employers: EmployersService;
  mppActivity: MppActivityService;
}

const EXPOSED_HEADERS = [
  'WWW-Authenticate',
  'Payment-Receipt',
  'Payment-Refund',
  'PAYMENT-REQUIRED',
  'PAYMENT-RESPONSE',
  'X-PAYMENT-RESPONSE',
  'X-Request-Id',
  'Idempotent-Replayed',
  'Retry-After',
];
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'X-Request-Id',
  'X-PAYMENT',
  'PAYMENT-SIGNATURE',
  'X-Agent-Identifier',
  'X-Agent-Timestamp',
  'X-Agent-Signature',
  'X-Agent-Solana-Signature',
  'X-Agent-Key',
  'X-Identity-Token',
  'X-Payment-Authorization',
  'Mcp-Protocol-Version',
  'Mcp-Session-Id',
];

/** Refusals by the agent spend gates (spec 8.2), counted where every route's errors pass. */
const SPEND_GATE_CODES: ReadonlySet<string> = new Set(GATE_CODES);

export function createServices(deps: Pick<AppDependencies, 'config' | 'database'>): Services {
  const users = new UsersService(deps.database, deps.config.adminUserIds);
  const employers = new EmployersService(deps.database, users);
  return { users, employers, mppActivity: new MppActivityService(deps.database, employers) };
}

/** Builds the HTTP app from the feature modules. No I/O happens here. */
export function buildApp(deps: AppDependencies, services: Services = createServices(deps)) {
  const { config } = deps;
  const shutdown = deps.shutdown ?? new AbortController().signal;
  const observability =
    deps.observability ?? createObservability({ config, database: deps.database, chains: deps.chains, processMetrics: deps.processMetrics });
  const metrics = observability.http;
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  // MCP access tokens (spec 5.5): issued by the OAuth routes, required by /api/mcp.
  const accessTokens = new AccessTokens({
    issuer: config.publicBaseUrl,
    audience: `${config.publicBaseUrl}/api/mcp`,
    configuredKey: config.oauthSigningKey,
    dataDir: config.dataDir,
  });
  const rateLimits = new RateLimits(deps.database, rateLimitRules(config.rateLimits));
  const oauth = new OAuthService(deps.database, accessTokens, { issuer: config.publicBaseUrl, resource: accessTokens.audience });

  app.use('*', requestContext(deps.log, metrics));
  app.use(
    '*',
    cors({
      origin: config.http.corsOrigins,
      allowHeaders: ALLOWED_HEADERS,
      exposeHeaders: EXPOSED_HEADERS,
      allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      maxAge: 600,
    }),
  );
  app.use(
    '*',
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        errorResponse(
          c,
          new AppError('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed here.`, { allow: methods }, {
            Allow: methods.join(', '),
          }),
        ),
    }),
  );
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: config.http.maxBodyBytes,
      onError: (c) =>
        errorResponse(
          c,
          new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${config.http.maxBodyBytes} bytes.`),
        ),
    }),
  );
  app.use('/api/*', drainUnreadBody());

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Identity-provider JWT (internal routes).',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'metricsToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'METRICS_TOKEN (GET /metrics).',
  });

  const authenticated = requireUser(deps.verifyIdentity, services.users);
  const idempotent = idempotency(deps.database);

  let openApiDocument: object | undefined;
  registerOpsRoutes(app, {
    metrics,
    metricsAccess: config.metricsAccess,
    readiness: deps.readiness,
    // Built on first request, after every route has registered itself.
    openApiDocument: () => (openApiDocument ??= buildOpenApiDocument(app, config)),
  });
  if (deps.devIdentityProvider) {
    registerDevRoutes(app, { idp: deps.devIdentityProvider, chains: deps.embeddedChains, cardSandbox: deps.payments?.cardSandbox });
  }
  registerEmployerRoutes(app, {
    employers: services.employers,
    requireUser: authenticated,
    idempotency: idempotent,
    // Without chains (some tests), policy ids are stored unchecked.
    policyExists: deps.chains ? tip403PolicyExists(deps.chains.tempo) : undefined,
    publicBaseUrl: config.publicBaseUrl,
  });
  registerAdminRoutes(app, { admin: new AdminService(deps.database, observability.health), requireUser: authenticated });
  registerAnnouncementRoutes(app, { announcements: new AnnouncementsService(deps.database), requireUser: authenticated, idempotency: idempotent });
  registerMppActivityRoutes(app, { activity: services.mppActivity, requireUser: authenticated });
  registerNotificationRoutes(app, { notifications: new NotificationsService(deps.database, services.employers), requireUser: authenticated });
  registerActivityRoutes(app, { database: deps.database, requireUser: authenticated });
  registerOAuthRoutes(app, {
    oauth,
    requireUser: authenticated,
    devSignIn: deps.devIdentityProvider !== null,
    identityProviderIssuer: config.idp.issuer,
    rateLimits,
    trustProxy: config.http.trustProxy,
  });
  if (deps.payments && deps.chains) {
    const gate = deps.payments.gate;
    // Paid routes carry the payment in Authorization; identity comes in its own headers.
    const paidCallers = new PaidCallers(deps.database, deps.verifyIdentity, services.users);
    const treasury = new TreasuryService(deps.chains.tempo, services.employers);
    const ai = createAiProvider(config.ai, deps.log);
    registerTreasuryRoutes(app, { treasury, gate, paidCallers, employers: services.employers, database: deps.database, requireUser: authenticated, ai });
    registerAiRoutes(app, { mode: config.mode, ai, employers: services.employers, database: deps.database, requireUser: authenticated });
    registerStreamRoutes(app, { gate, solanaAgentWallet: deps.chains.solana.serviceAddress });
    const compliance = new ComplianceService(deps.database, services.employers, deps.chains.tempo, config.serviceSlug);
    registerComplianceRoutes(app, { compliance, paidCallers, gate, requireUser: authenticated, idempotency: idempotent });
    registerMemoRoutes(app, { gate });
    const payroll = new PayrollService(deps.database, services.employers, treasury, deps.chains.tempo, compliance);
    registerPayrollRoutes(app, { payroll, requireUser: authenticated, idempotency: idempotent });
    registerPaidPayrollRoutes(app, { payroll, paidCallers, gate });
    const wages = new WagesService(deps.database, services.employers, treasury, deps.chains.tempo);
    // A change that takes salary away from a wallet stops its stream at once (the wages job retries).
    services.employers.onStreamStops((stopIds) => wages.stopStreams(stopIds));
    registerWagesRoutes(app, { wages, requireUser: authenticated, paidCallers, gate, shutdown });
    const { tempo: tempoChain } = deps.chains;
    const bridge = new BridgeService(deps.database, services.employers, tempoChain, bridgeProviderFor(config, deps.database, tempoChain));
    registerBridgeRoutes(app, { bridge, requireUser: authenticated, paidCallers, gate, network: tempoChain.network, token: tempoChain.token });
    registerDepositAddressRoute(app, { employers: services.employers, requireUser: authenticated, network: tempoChain.network });
    const masterOptions = virtualMasterOptionsFrom(config, tempoChain, deps.embeddedChains?.tempo.operatorKey, deps.log);
    if (masterOptions) {
      const masters = new VirtualMasterService(deps.database, services.employers, tempoChain, masterOptions);
      registerVirtualMasterRoutes(app, { masters, requireUser: authenticated, idempotency: idempotent });
    }
    const agents = new AgentsService(deps.database, services.employers, new SecretBox({ configured: config.agentSecretsKey, dataDir: config.dataDir }));
    const proofFailures = new ProofFailures(rateLimits);
    const directory = new AgentDirectoryService(deps.database, tempoChain, proofFailures);
    const reputation = new ReputationService(deps.database, deps.chains, {
      serviceSlug: config.serviceSlug,
      linkedIdentity: (address) => directory.linkedIdentity(address),
    });
    const agentVerifier = new AgentRequestVerifier(deps.database, agents, tempoChain, proofFailures);
    const agentPay = new AgentPayService(deps.database, agentVerifier, services.employers, tempoChain, { tierOf: (identity) => reputation.tierOf(identity), enqueue: enqueueReputationWrite }, deps.log);
    registerAgentRoutes(app, { agents, agentPay, requireUser: authenticated, gate });
    const escrow = new EscrowService(
      deps.database,
      agentVerifier,
      services.employers,
      tempoChain,
      deps.chains.solana,
      reputation,
      ai,
      escrowOptionsFrom(config, LOCAL_ESCROW_PROGRAM_ID),
      deps.log.child({ component: 'escrow' }),
    );
    registerEscrowRoutes(app, { escrow, gate, requireUser: authenticated, solanaExplorerUrl: (signature) => deps.chains!.solana.explorerUrl(signature) });
    registerAgentDirectoryRoutes(app, { database: deps.database, gate, tempo: tempoChain, directory });
    registerReputationRoutes(app, { reputation });
    registerDemoAgentRoutes(app, {
      mode: config.mode,
      faucet: deps.embeddedChains ? new Faucet(deps.embeddedChains) : null,
      chains: deps.chains,
      liveWallet: config.demoAgent.livePrivateKey ? { privateKey: config.demoAgent.livePrivateKey, spendCapUsd: config.demoAgent.liveSpendCapUsd } : null,
      trustProxy: config.http.trustProxy,
      shutdown,
      rateLimits,
      database: deps.database,
    });
    const { perTxCap, allowedPrograms } = config.solanaPayrollPolicy;
    const solanaWallet = new SolanaPolicyWallet(deps.chains.solana, { perTxCap, allowedPrograms: allowedPrograms ? new Set(allowedPrograms) : DEFAULT_ALLOWED_PROGRAMS });
    const { solana, tempo } = deps.chains;
    registerDecisionRoutes(app, {
      payroll,
      requireUser: authenticated,
      idempotency: idempotent,
      solanaWallet,
      solanaExplorerUrl: (signature) => solana.explorerUrl(signature),
      tempoExplorerUrl: (txHash) => tempo.explorerUrl(txHash),
    });
  }

  // MCP front door (spec 4.6): outside the chains block, so its free tools exist without chains.
  registerMcpRoutes(app, { config, oauth });

  registerSessionRoute(app, { requireUser: authenticated });
  registerSignInOptionsRoute(app, { devSignIn: deps.devIdentityProvider !== null, loginUrl: config.idp.loginUrl });
  // The web app (web/dist, built by `npm run build:web`) on the same port, for what no route matched.
  const web = webApp(fileURLToPath(new URL('../web/dist', import.meta.url)));
  app.notFound((c) => web(c) ?? errorResponse(c, new AppError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}.`)));
  app.onError((error, c) => {
    if (error instanceof AppError && SPEND_GATE_CODES.has(error.code)) observability.business.spendRefused(error.code);
    return handleError(error, c);
  });
  return app;
}

export type App = ReturnType<typeof buildApp>;

function buildOpenApiDocument(app: OpenAPIHono<AppEnv>, config: Config): object {
  const document = app.getOpenAPIDocument({
    openapi: '3.0.3',
    info: {
      title: 'Payroll and agent payments API',
      version: '1.0.0',
      description:
        'Payroll on stablecoin rails, pay-per-call routes over HTTP 402 (MPP and x402), agent payments and escrow. ' +
        'Amounts are decimal strings in USD; the service stores integer base units (6 decimals).',
    },
    servers: [{ url: config.publicBaseUrl }],
  });
  return {
    ...document,
    'x-mcp-server': {
      url: `${config.publicBaseUrl}/api/mcp`,
      transport: 'streamable-http',
      auth: 'oauth2.1',
    },
  };
}
