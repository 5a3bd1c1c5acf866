import { z } from '@hono/zod-openapi';
import { evmAddressSchema } from '../../http/validation.js';

export const YieldRatesQuery = z.object({
  token: evmAddressSchema.optional().openapi({ param: { name: 'token', in: 'query' }, description: 'Token address; default the base stable token.' }),
});
export const YieldRates = z
  .object({
    apy_bps: z.number(),
    apy_percent: z.number(),
    sources: z.array(z.string()),
    allocation: z.array(z.number()).openapi({ description: 'Basis points per source.' }),
    timestamp: z.number().openapi({ description: 'Unix milliseconds.' }),
  })
  .openapi('YieldRates');

const usd = (description: string) => z.string().openapi({ description: `${description} USD decimal string with 6 places.`, example: '1250.000000' });

export const OwnerTreasury = z
  .object({
    employer_id: z.uuid(),
    employer_account_id: z.string().openapi({ description: 'The treasury account id on the Tempo chain (decimal).' }),
    token: z.string().openapi({ description: 'Address of the stablecoin the treasury holds.' }),
    available_usd: usd('Spendable balance.'),
    locked_usd: usd('Balance locked for pending payroll and payments.'),
    total_usd: usd('available + locked.'),
  })
  .openapi('EmployerTreasury');

export const BalanceHistoryQuery = z.object({
  days: z.coerce
    .number()
    .int()
    .min(1)
    .max(366)
    .default(90)
    .openapi({ param: { name: 'days', in: 'query' }, description: 'How many UTC days back, today included (1-366, default 90).' }),
});

const BalanceSnapshot = z.object({
  day: z.string().openapi({ description: 'The UTC day (YYYY-MM-DD).', example: '2026-11-26' }),
  available_usd: usd('Spendable balance at the observation.'),
  locked_usd: usd('Locked balance at the observation.'),
  total_usd: usd('available + locked.'),
  observed_at: z.string().openapi({ description: "When the service read the chain: the day's last observation (ISO 8601)." }),
});

export const BalanceHistory = z
  .object({
    employer_id: z.uuid(),
    days: z.number().int(),
    first_observed_day: z
      .string()
      .nullable()
      .openapi({ description: 'The first UTC day the service observed this treasury: the history starts there, never earlier.' }),
    points: z.array(BalanceSnapshot).openapi({ description: 'One per observed day in the window, oldest first. A day the service did not observe has no point; nothing is interpolated.' }),
  })
  .openapi('TreasuryBalanceHistory');

const YieldSourceAllocation = z.object({ name: z.string(), apy_bps: z.number().int(), allocation_bps: z.number().int() });
export const YieldSummary = z
  .object({
    employer_id: z.uuid(),
    apy_bps: z.number().int().openapi({ description: "Blended APY of the account's allocation, basis points (rounded down)." }),
    apy_percent: z.number(),
    sources: z.array(YieldSourceAllocation).openapi({ description: 'Each source, its APY and the account\'s allocation to it (basis points summing to 10,000).' }),
    available_usd: usd('Spendable balance.'),
    locked_usd: usd('Locked balance.'),
    total_usd: usd('available + locked.'),
    projected_annual_yield_usd: usd('A year of yield on total_usd at the current allocation, rounded down.'),
  })
  .openapi('EmployerYieldSummary');

const questionText = z
  .string()
  .max(2000)
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  .regex(/^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/, 'must not contain control characters other than line breaks and tabs');

export const OptimizeBody = z
  .object({
    employerId: z.uuid().openapi({ description: 'The employer; the caller must act for it (owner identity token or its agent key).' }),
    question: questionText.optional().openapi({ description: 'A natural-language question (at most 2,000 characters).' }),
  })
  .openapi('TreasuryOptimizeRequest');

const Recommendation = z.object({ id: z.string(), text: z.string(), impact: z.enum(['high', 'medium']) }).openapi('TreasuryRecommendation');
export const Optimization = z
  .object({
    employerId: z.uuid(),
    employerAdminWallet: z.string().openapi({ description: "The treasury account's administrator on chain." }),
    employerAccountId: z.string(),
    question: z.string().nullable(),
    summary: z.object({
      available_usd: usd('Spendable balance.'),
      locked_usd: usd('Locked balance.'),
      total_usd: usd('available + locked.'),
      current_apy_percent: z.number().openapi({ description: 'Blended APY of the current allocation, percent.' }),
      accrued_yield_usd: usd('Yield credited to the treasury so far; the yield router credits none, so "0.000000" (docs/api.md).'),
    }),
    suggestion: z.string(),
    recommendations: z.array(Recommendation),
    sources: z.array(z.object({ name: z.string(), apy_bps: z.number().int() })).openapi({ description: 'The yield sources, in allocation order.' }),
    current_allocation: z.array(z.number().int()).openapi({ description: 'Basis points per source (as yield-rates), summing to 10,000.' }),
    recommended_allocation: z.array(z.number().int()).openapi({ description: 'Basis points per source, summing to 10,000. Divide by 100 for session/treasury rebalance percentages.' }),
    recommended_apy_percent: z.number(),
    current_projected_annual_yield_usd: usd('A year of yield on total_usd at the current allocation.'),
    projected_annual_yield_usd: usd('A year of yield on total_usd at the recommended allocation.'),
    advice_source: z.enum(['deterministic', 'ai']).openapi({ description: 'Who worded suggestion and recommendation texts; numbers are always the engine\'s.' }),
    analyzedAt: z.iso.datetime(),
  })
  .openapi('TreasuryOptimization');

const SESSION_ACTIONS = ['balance', 'yield', 'rebalance', 'headcount'] as const;
const percentages = z.array(z.number()).max(100);
export const SessionBody = z
  .object({
    action: z.enum(SESSION_ACTIONS),
    employerId: z.uuid(),
    allocation: percentages.optional().openapi({ description: 'rebalance: target percentages, one per yield source, 0-100 with at most 2 decimals, summing to 100.' }),
    params: z.object({ targetAllocation: percentages.optional().openapi({ description: 'Alternative location of the rebalance target.' }) }).optional(),
  })
  .openapi('TreasurySessionRequest');

const SessionResult = z.union([
  z.object({ employerId: z.uuid(), availableUsd: usd('Spendable balance.'), lockedUsd: usd('Locked balance.'), totalUsd: usd('available + locked.') }).openapi('TreasurySessionBalance'),
  z
    .object({
      employerId: z.uuid(),
      apyBps: z.number().int(),
      apyPercent: z.number(),
      sources: z.array(z.object({ name: z.string(), apyBps: z.number().int(), allocationBps: z.number().int() })),
    })
    .openapi('TreasurySessionYield'),
  z
    .object({
      employerId: z.uuid(),
      allocation_bps: z.array(z.number().int()),
      previous_allocation_bps: z.array(z.number().int()),
      tx_hash: z.string(),
    })
    .openapi('TreasurySessionRebalance'),
  z.object({ employerId: z.uuid(), activeEmployees: z.number().int() }).openapi('TreasurySessionHeadcount'),
]);
export const SessionEnvelope = z
  .object({
    action: z.enum(SESSION_ACTIONS),
    result: SessionResult.openapi({ description: 'balance, yield, rebalance or headcount result (docs/api.md).' }),
    timestamp: z.number().int().openapi({ description: 'Unix milliseconds.' }),
  })
  .openapi('TreasurySessionResponse');
