import { fileURLToPath } from 'node:url';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { methodNotAllowed } from 'hono/method-not-allowed';
import type { LocalChains } from './chains/embedded/index.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { AppError } from './errors.js';
import { activityRoutes } from './features/activity/index.js';
import { adminRoutes } from './features/admin/index.js';
import { agentDirectoryRoutes } from './features/agent-directory/index.js';
import { agentRoutes } from './features/agents/index.js';
import { GATE_CODES } from './features/agents/spend-gates.js';
import { aiRoutes } from './features/ai/index.js';
import { announcementRoutes } from './features/announcements/index.js';
import { bridgeRoutes } from './features/bridge/index.js';
import { complianceRoutes } from './features/compliance/index.js';
import { demoAgentRoutes } from './features/demo/index.js';
import { publicChainRoutes } from './features/chains/index.js';
import { devRoutes } from './features/dev/index.js';
import { employerRoutes, tip403PolicyExists } from './features/employers/index.js';
import { escrowRoutes } from './features/escrow/index.js';
import { mcpRoutes } from './features/mcp/index.js';
import { memoRoutes } from './features/memo/index.js';
import { mppActivityRoutes } from './features/mpp-activity/index.js';
import { CardCreditAccess, cardCreditRoutes } from './features/card-credits/index.js';
import { notificationRoutes } from './features/notifications/index.js';
import { oauthRoutes } from './features/oauth/index.js';
import { createObservability, opsRoutes, type Observability, type ReadinessCheck } from './features/ops/index.js';
import { decisionRoutes, paidPayrollRoutes, payrollRoutes } from './features/payroll/index.js';
import { reputationRoutes } from './features/reputation/index.js';
import { streamRoutes } from './features/streams/index.js';
import { treasuryRoutes } from './features/treasury/index.js';
import { sessionRoute, signInOptionsRoute } from './features/users/index.js';
import { depositAddressRoute, virtualMasterRoutes } from './features/virtual-addresses/index.js';
import { wagesRoutes } from './features/wages/index.js';
import type { Chains } from './chains/index.js';
import { requireUser } from './http/auth.js';
import type { AppEnv } from './http/context.js';
import { errorResponse, handleError } from './http/errors.js';
import { featureApp, type FeatureApp } from './http/feature-app.js';
import { idempotency } from './http/idempotency.js';
import { requestContext } from './http/request-context.js';
import { drainUnreadBody } from './http/unread-body.js';
import { webApp } from './http/web.js';
import type { Logger } from './log.js';
import type { Payments } from './payments/index.js';
import type { DevIdentityProvider } from './providers/identity/dev-idp.js';
import type { IdentityVerifier } from './providers/identity/verifier.js';
import { createServices, type Services } from './services.js';

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

/** Builds the HTTP app: the shared middleware, then each feature's routes. No I/O happens here. */
export function buildApp(deps: AppDependencies, given?: Services) {
  const { config } = deps;
  const observability =
    deps.observability ?? createObservability({ config, database: deps.database, chains: deps.chains, processMetrics: deps.processMetrics });
  const services = given ?? createServices({ ...deps, observability });
  const app = featureApp();
  useSharedMiddleware(app, deps, observability);
  let openApiDocument: object | undefined;
  app.route(
    '/',
    opsRoutes({
      metrics: observability.http,
      metricsAccess: config.metricsAccess,
      readiness: deps.readiness,
      // Built on first request, after every route has registered itself.
      openApiDocument: () => (openApiDocument ??= buildOpenApiDocument(app, config)),
    }),
  );
  const mount: Mount = {
    requireUser: requireUser(deps.verifyIdentity, services.users),
    idempotency: idempotency(deps.database),
    appFetch: (request, env) => app.fetch(request, env),
  };
  const features = [accountRoutes, chainRoutes, frontDoorRoutes].flatMap((routes) => routes(deps, services, mount));
  for (const routes of features) app.route('/', routes);

  // The web app (web/dist, built by `npm run build:web`) on the same port, for what no route matched.
  const web = webApp(fileURLToPath(new URL('../web/dist', import.meta.url)));
  app.notFound((c) => web(c) ?? errorResponse(c, new AppError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}.`)));
  app.onError((error, c) => {
    if (error instanceof AppError && SPEND_GATE_CODES.has(error.code)) observability.business.spendRefused(error.code);
    return handleError(error, c);
  });
  return app;
}

interface Mount {
  requireUser: MiddlewareHandler<AppEnv>;
  idempotency: MiddlewareHandler<AppEnv>;
  /** The root app's fetch, for the MCP tools that answer through REST routes. */
  appFetch: (request: Request, env: unknown) => Response | Promise<Response>;
}

/** Request context and metrics, CORS, 405s, the body limit, and the security schemes of the OpenAPI document. */
function useSharedMiddleware(app: FeatureApp, deps: AppDependencies, observability: Observability): void {
  const { config } = deps;
  app.use('*', requestContext(deps.log, observability.http));
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
        errorResponse(c, new AppError('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed here.`, { allow: methods }, { Allow: methods.join(', ') })),
    }),
  );
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: config.http.maxBodyBytes,
      onError: (c) => errorResponse(c, new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${config.http.maxBodyBytes} bytes.`)),
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
}

/** The routes that need no chain: accounts, employers, OAuth, notices and activity. */
function accountRoutes(deps: AppDependencies, services: Services, mount: Mount): FeatureApp[] {
  const { requireUser: authenticated, idempotency } = mount;
  const { config } = deps;
  return [
    ...(deps.devIdentityProvider
      ? [devRoutes({ idp: deps.devIdentityProvider, chains: deps.embeddedChains, cardSandbox: deps.payments?.cardSandbox, faucet: services.onChain?.faucet, clock: services.onChain?.devClock ?? undefined })]
      : []),
    employerRoutes({
      employers: services.employers,
      requireUser: authenticated,
      idempotency,
      // Without chains (some tests), policy ids are stored unchecked.
      policyExists: deps.chains ? tip403PolicyExists(deps.chains.tempo) : undefined,
      publicBaseUrl: config.publicBaseUrl,
    }),
    adminRoutes({ admin: services.admin, requireUser: authenticated }),
    announcementRoutes({ announcements: services.announcements, requireUser: authenticated, idempotency }),
    mppActivityRoutes({ activity: services.mppActivity, requireUser: authenticated }),
    cardCreditRoutes({
      access: new CardCreditAccess({ credits: deps.payments?.cardCredits, employers: services.employers, paidCallers: services.paidCallers, log: deps.log }),
      requireUser: authenticated,
    }),
    notificationRoutes({ notifications: services.notifications, requireUser: authenticated }),
    activityRoutes({ activity: services.activity, requireUser: authenticated }),
    oauthRoutes({
      oauth: services.oauth,
      requireUser: authenticated,
      devSignIn: deps.devIdentityProvider !== null,
      identityProviderIssuer: config.idp.issuer,
      rateLimits: services.rateLimits,
      trustProxy: config.http.trustProxy,
    }),
  ];
}

/** The MCP front door (spec 4.6: its free tools exist without chains), the sign-in routes and the public chain ids. */
function frontDoorRoutes(deps: AppDependencies, services: Services, mount: Mount): FeatureApp[] {
  const { requireUser: authenticated } = mount;
  const { config } = deps;
  return [
    mcpRoutes({ config, oauth: services.oauth, appFetch: mount.appFetch, offers: deps.payments?.offers }),
    sessionRoute({ requireUser: authenticated }),
    signInOptionsRoute({ devSignIn: deps.devIdentityProvider !== null, loginUrl: config.idp.loginUrl }),
    ...(deps.chains ? [publicChainRoutes({ chains: deps.chains })] : []),
  ];
}

/** The routes that pay or move money: none without the chain ports and the payment gate. */
function chainRoutes(deps: AppDependencies, services: Services, mount: Mount): FeatureApp[] {
  const { requireUser: authenticated, idempotency } = mount;
  const { config, chains, payments } = deps;
  const on = services.onChain;
  if (!chains || !payments || !on) return [];
  const { gate } = payments;
  const { tempo, solana } = chains;
  const { paidCallers, employers } = services;
  const shutdown = deps.shutdown ?? new AbortController().signal;
  return [
    treasuryRoutes({ treasury: on.treasury, operations: on.treasuryOperations, history: on.treasuryHistory, gate, paidCallers, requireUser: authenticated }),
    aiRoutes({ mode: config.mode, ai: on.ai, rules: services.aiRules, requireUser: authenticated }),
    streamRoutes({ gate, solanaAgentWallet: solana.serviceAddress, clock: deps.database.clock }),
    complianceRoutes({ compliance: on.compliance, paidCallers, gate, requireUser: authenticated, idempotency }),
    memoRoutes({ gate }),
    payrollRoutes({ payroll: on.payroll, requireUser: authenticated, idempotency }),
    paidPayrollRoutes({ payroll: on.payroll, paidCallers, gate }),
    wagesRoutes({ wages: on.wages, requireUser: authenticated, paidCallers, gate, idempotency, rateLimits: services.rateLimits, shutdown }),
    bridgeRoutes({ bridge: on.bridge, requireUser: authenticated, paidCallers, gate, network: tempo.network, token: tempo.token }),
    depositAddressRoute({ employers, requireUser: authenticated, network: tempo.network }),
    ...(on.virtualMasters ? [virtualMasterRoutes({ masters: on.virtualMasters, requireUser: authenticated, idempotency })] : []),
    agentRoutes({ agents: on.agents, agentPay: on.agentPay, requireUser: authenticated, gate }),
    escrowRoutes({ escrow: on.escrow, gate, requireUser: authenticated, solanaExplorerUrl: (signature) => solana.explorerUrl(signature) }),
    agentDirectoryRoutes({ gate, directory: on.agentDirectory }),
    reputationRoutes({ reputation: on.reputation }),
    demoAgentRoutes({
      demo: on.demoAgent,
      trustProxy: config.http.trustProxy,
      shutdown,
      rateLimits: services.rateLimits,
      appFetch: (request) => mount.appFetch(request, undefined),
    }),
    decisionRoutes({
      payroll: on.payroll,
      requireUser: authenticated,
      idempotency,
      solanaWallet: on.solanaPayrollWallet,
      solanaExplorerUrl: (signature) => solana.explorerUrl(signature),
      tempoExplorerUrl: (txHash) => tempo.explorerUrl(txHash),
    }),
  ];
}

export type App = ReturnType<typeof buildApp>;

function buildOpenApiDocument(app: FeatureApp, config: Config): object {
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
