import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Mode } from '../../config.js';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { errorResponse } from '../../http/errors.js';
import { AppError } from '../../errors.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import type { AiProvider } from '../../providers/ai/index.js';
import {
  AnomalyDetectBody,
  AnomalyDetectResponse,
  ComplianceExplainBody,
  ComplianceExplainResponse,
  ParseCsvBody,
  ParseCsvResponse,
} from './schema.js';
import type { AiService } from './service.js';

export interface AiRouteDeps {
  mode: Mode;
  ai: AiProvider;
  rules: AiService;
  requireUser: MiddlewareHandler<AppEnv>;
}

const security = [{ bearerAuth: [] }];

const AI_NOT_CONFIGURED = 'AI is not configured on this server: set AI_PROVIDER and AI_API_KEY.';
const errors = {
  ...errorResponses(400, 401, 404, 413, 415),
  503: jsonContent(ErrorSchema, `Live mode without an AI provider (code AI_NOT_CONFIGURED): "${AI_NOT_CONFIGURED}"`),
};
const MODEL_NOTE =
  'Owner only (bearer identity token); another tenant\'s ids answer 404 like missing ones. The answer is computed by deterministic rules; ' +
  'in live mode these routes need a configured AI provider (spec 5.8), else 503 AI_NOT_CONFIGURED.';

// The routes' middleware (the bearer identity, then requireAi) is added when they are built: it needs the app's dependencies.

const parseCsv = createRoute({
  method: 'post',
  path: '/api/ai/parse-csv',
  tags: ['AI'],
  summary: 'Map CSV columns to the fields of POST /api/employees/bulk',
  description:
    `${MODEL_NOTE} Headers are matched by their words (synonyms such as "E-mail", "Employee name", "0x address", "Salary (USD)", ` +
    '"Dept", "Cost center") and by the sample values (emails, 0x addresses, base58 Solana keys, amounts, names). A model\'s mapping ' +
    'replaces the heuristic one only when it names given headers, none twice.',
  security,
  request: { body: jsonBody(ParseCsvBody) },
  responses: { 200: jsonContent(ParseCsvResponse, 'The mapping.'), ...errors },
});

const anomalyDetect = createRoute({
  method: 'post',
  path: '/api/ai/anomaly-detect',
  tags: ['AI'],
  summary: 'Anomalies of a payroll run against each employee\'s paid history',
  description:
    `${MODEL_NOTE} Rules, per item (policy-rejected items are skipped), against the employee's paid items created before the run: ` +
    'new_recipient (info) with none; amount_spike (warning) above 1.5x the median of the last 6; wallet_changed (warning) when the wallet ' +
    'differs from the last paid one on that chain; duplicate_wallet (error) when one wallet is paid for two employees in the run; ' +
    'above_annual_salary (warning) above 1.5x a month of a non-zero annual salary. A model may reword only `summary`.',
  security,
  request: { body: jsonBody(AnomalyDetectBody) },
  responses: { 200: jsonContent(AnomalyDetectResponse, 'The anomalies and a summary.'), ...errors },
});

const complianceExplain = createRoute({
  method: 'post',
  path: '/api/ai/compliance-explain',
  tags: ['AI'],
  summary: "A readable explanation of a wallet's latest compliance check",
  description:
    `${MODEL_NOTE} Reads the employer's latest compliance event for the wallet (sanctions list, employer blocklist entry and its reason, ` +
    'TIP-403 policy) and where the wallet is listed now. A model may reword only `explanation`, and never into text naming an API route. ' +
    'The next steps are given in the web app\'s terms: `recommended_actions` as sentences, `actions` as links (employee page, blocklist, payroll run).',
  security,
  request: { body: jsonBody(ComplianceExplainBody) },
  responses: { 200: jsonContent(ComplianceExplainResponse, 'The explanation.'), ...errors },
});

/**
 * Spec 5.8: live mode serves AI routes only with a provider key. Local mode's offline provider
 * is the deterministic stand-in. Runs after authentication, before validation or any work.
 */
function requireAi(deps: Pick<AiRouteDeps, 'mode' | 'ai'>): MiddlewareHandler<AppEnv> {
  const unconfigured = deps.mode === 'live' && deps.ai.name === 'offline';
  return async (c, next) => {
    if (unconfigured) return errorResponse(c, new AppError('AI_NOT_CONFIGURED', AI_NOT_CONFIGURED));
    await next();
  };
}

export function aiRoutes(deps: AiRouteDeps): FeatureApp {
  const app = featureApp();
  const service = deps.rules;
  const middleware = [deps.requireUser, requireAi(deps)];

  app.openapi({ ...parseCsv, middleware }, async (c) => c.json(await service.parseCsv(c.var.caller, c.req.valid('json')), 200));

  app.openapi({ ...anomalyDetect, middleware }, async (c) => {
    const { employerId, payrollRunId } = c.req.valid('json');
    return c.json(await service.detectAnomalies(c.var.caller, employerId, payrollRunId), 200);
  });

  app.openapi({ ...complianceExplain, middleware }, async (c) => {
    const { employerId, walletAddress } = c.req.valid('json');
    return c.json(await service.explainCompliance(c.var.caller, employerId, walletAddress), 200);
  });
  return app;
}
