import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { DESTINATION_TYPES } from './tables.js';
import type { AppEnv, Caller, FeePayment } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { notFound } from '../../errors.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent, usdAmountSchema } from '../../http/validation.js';
import { requirePaidCaller } from '../../http/paid-caller.js';
import { formatUsd, parseUsd } from '../../money.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import type { PaidCallers } from '../employers/paid-caller.js';
import { EmployeeIdParams, PaidIdentityHeaders } from '../employers/schema.js';
import type { BridgeService } from './service.js';
import type { BankAccountRow, CardRow, OfframpRow } from './store.js';

export interface BridgeRouteDeps {
  bridge: BridgeService;
  requireUser: MiddlewareHandler<AppEnv>;
  paidCallers: PaidCallers;
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
  /** CAIP-2 id and token of the chain off-ramps are funded on. */
  network: string;
  token: string;
}

const positiveUsd = usdAmountSchema.refine((value) => (parseUsd(value) ?? 0n) > 0n, 'must be more than 0');
const OfframpFields = {
  amount: positiveUsd.openapi({ description: 'USD decimal, more than 0, at most the wallet balance not already promised to waiting off-ramps.', example: '250.00' }),
  destinationType: z.enum(DESTINATION_TYPES),
  bankAccountId: z.string().min(1).max(200).openapi({ description: 'A bank account registered for this employee (`bank_account_id` of its bank-accounts list).' }),
};
const OfframpBody = z.object(OfframpFields);
export const PaidOfframpBody = z.object({ employeeId: z.uuid(), ...OfframpFields });
const OfframpResult = z
  .object({
    success: z.boolean(),
    transfer_id: z.uuid(),
    bridge_transfer_id: z.string().nullable(),
    status: z.string().openapi({ description: '`awaiting_funds` -> `funds_received` -> `payment_submitted` -> `payment_processed`; or `canceled`, `error`, `returned`.' }),
    amount: z.string(),
    destination_type: z.enum(DESTINATION_TYPES),
    created_at: z.string().openapi({ format: 'date-time' }),
    deposit_instructions: z
      .object({ network: z.string(), token: z.string(), from_address: z.string(), to_address: z.string(), amount: z.string() })
      .nullable()
      .openapi({ description: 'Send exactly this from the wallet; the provider pays the bank once it arrives.' }),
  })
  .openapi('OfframpTransfer');
const OfframpList = z.object({ employee_id: z.uuid(), transfers: z.array(OfframpResult) }).openapi('OfframpTransfers');

const WalletBalance = z
  .object({
    employee_id: z.uuid(),
    wallet_address: z.string().nullable(),
    network: z.string(),
    token: z.string(),
    balance: z.string().openapi({ description: 'Base units (6 decimals); "0" without a wallet.' }),
    balance_usd: z.string(),
    as_of: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('WalletBalance');

const KycResult = z
  .object({
    employee_id: z.uuid(),
    bridge_customer_id: z.string(),
    kyc_status: z.string(),
    kyc_link: z.string().openapi({ description: 'A fresh hosted KYC link to send to the employee.' }),
    expires_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('KycLink');

const Card = z
  .object({ id: z.uuid(), status: z.string(), last4: z.string().nullable(), created_at: z.string().openapi({ format: 'date-time' }) })
  .openapi('Card');
const CardResult = z.object({ employee_id: z.uuid(), card: Card.nullable() }).openapi('EmployeeCard');

const BankAccountBody = z.object({
  destinationType: z.enum(DESTINATION_TYPES),
  accountOwnerName: z.string().trim().min(1).max(200),
  details: z
    .record(z.string().max(64), z.string().max(200))
    .refine((d) => Object.keys(d).length <= 20, 'at most 20 fields')
    .openapi({
      description: 'ach: routingNumber, accountNumber; sepa: iban; spei: clabe; pix: pixKey.',
      example: { routingNumber: '021000021', accountNumber: '000123456789' },
    }),
  label: z.string().trim().min(1).max(100).optional(),
});
const BankAccount = z
  .object({ id: z.uuid(), bank_account_id: z.string(), destination_type: z.enum(DESTINATION_TYPES), last4: z.string().nullable(), label: z.string().nullable(), created_at: z.string() })
  .openapi('BankAccount');
const BankAccounts = z.object({ employee_id: z.uuid(), bank_accounts: z.array(BankAccount) }).openapi('BankAccounts');

const presentCard = (card: CardRow | null) =>
  card ? { id: card.id, status: card.status, last4: card.last4, created_at: card.createdAt.toISOString() } : null;
const presentBankAccount = (row: BankAccountRow) => ({
  id: row.id,
  bank_account_id: row.bridgeAccountId,
  destination_type: row.destinationType,
  last4: row.last4,
  label: row.label,
  created_at: row.createdAt.toISOString(),
});

const employeeRoute = <M extends 'get' | 'post', P extends string>(method: M, path: P, summary: string, deps: BridgeRouteDeps) => ({
  method,
  path,
  tags: ['Employees'],
  summary,
  security: [{ bearerAuth: [] }],
  middleware: deps.requireUser,
});

export function bridgeRoutes(deps: BridgeRouteDeps): FeatureApp {
  const app = featureApp();
  const presentOfframp = (row: OfframpRow) => ({
    success: row.status !== 'error' && row.status !== 'canceled',
    transfer_id: row.id,
    bridge_transfer_id: row.bridgeTransferId,
    status: row.status,
    amount: formatUsd(row.amount),
    destination_type: row.destinationType,
    created_at: row.createdAt.toISOString(),
    deposit_instructions:
      row.depositAddress && row.sourceAddress
        ? { network: deps.network, token: deps.token, from_address: row.sourceAddress, to_address: row.depositAddress, amount: formatUsd(row.amount) }
        : null,
  });
  const offramp = async (caller: Caller, employeeId: string, body: z.infer<typeof OfframpBody>, fee: FeePayment | null = null) => {
    const employee = await deps.bridge.employeeFor(caller, employeeId, 'employee');
    return deps.bridge.offramp(employee, { amount: parseUsd(body.amount)!, destinationType: body.destinationType, bankAccountId: body.bankAccountId }, fee);
  };
  const offrampErrors = {
    ...errorResponses(400, 401, 404, 415),
    409: jsonContent(ErrorSchema, '`KYC_NOT_APPROVED`.'),
    422: jsonContent(ErrorSchema, '`INSUFFICIENT_BALANCE` (field `amount`) or `NO_WALLET`.'),
    503: jsonContent(ErrorSchema, '`BRIDGE_UNAVAILABLE` or `BRIDGE_NOT_CONFIGURED`; nothing was created.'),
  };

  app.openapi(
    createRoute({
      ...employeeRoute('get', '/api/employees/{id}/balance', "The employee's live wallet balance on the Tempo chain (employee)", deps),
      request: { params: EmployeeIdParams },
      responses: { 200: jsonContent(WalletBalance, 'Read from the chain now.'), ...errorResponses(401, 404) },
    }),
    async (c) => {
      const employee = await deps.bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee');
      const balance = (await deps.bridge.walletBalance(employee)) ?? 0n;
      return c.json(
        {
          employee_id: employee.id,
          wallet_address: employee.walletAddress,
          network: deps.network,
          token: deps.token,
          balance: balance.toString(),
          balance_usd: formatUsd(balance),
          as_of: new Date().toISOString(),
        },
        200,
        { 'Cache-Control': 'no-store' },
      );
    },
  );

  app.openapi(
    createRoute({
      ...employeeRoute('post', '/api/employees/{id}/kyc', 'Create the fiat-bridge customer if needed and return a fresh KYC link (employer owner)', deps),
      request: { params: EmployeeIdParams },
      responses: { 200: jsonContent(KycResult, 'The customer and a fresh link.'), ...errorResponses(401, 404), 503: jsonContent(ErrorSchema, 'The bridge is unavailable or not configured.') },
    }),
    async (c) => {
      const employee = await deps.bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'owner');
      const kyc = await deps.bridge.startKyc(employee);
      return c.json(
        { employee_id: employee.id, bridge_customer_id: kyc.customerId, kyc_status: kyc.kycStatus, kyc_link: kyc.url, expires_at: kyc.expiresAt?.toISOString() ?? null },
        200,
        { 'Cache-Control': 'no-store' },
      );
    },
  );

  app.openapi(
    createRoute({
      ...employeeRoute('get', '/api/employees/{id}/card', "The employee's card status (employee or employer owner)", deps),
      request: { params: EmployeeIdParams },
      responses: { 200: jsonContent(CardResult, '`card` is null until one is issued.'), ...errorResponses(401, 404) },
    }),
    async (c) => {
      const employee = await deps.bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee_or_owner');
      return c.json({ employee_id: employee.id, card: presentCard(await deps.bridge.card(employee)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      ...employeeRoute('post', '/api/employees/{id}/card', 'Issue the employee a card (employee or employer owner); one live card per employee', deps),
      request: { params: EmployeeIdParams },
      responses: {
        200: jsonContent(CardResult, 'The employee already has a live card: that one.'),
        201: jsonContent(CardResult, 'Issued.'),
        ...errorResponses(401, 404),
        409: jsonContent(ErrorSchema, '`KYC_NOT_APPROVED`.'),
        503: jsonContent(ErrorSchema, 'The bridge is unavailable or not configured.'),
      },
    }),
    async (c) => {
      const employee = await deps.bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee_or_owner');
      const { card, created } = await deps.bridge.issueCard(employee);
      return c.json({ employee_id: employee.id, card: presentCard(card) }, created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      ...employeeRoute('get', '/api/employees/{id}/bank-accounts', "The employee's registered bank accounts (employee)", deps),
      request: { params: EmployeeIdParams },
      responses: { 200: jsonContent(BankAccounts, 'Oldest first.'), ...errorResponses(401, 404) },
    }),
    async (c) => {
      const employee = await deps.bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee');
      return c.json({ employee_id: employee.id, bank_accounts: (await deps.bridge.listBankAccounts(employee)).map(presentBankAccount) }, 200);
    },
  );

  app.openapi(
    createRoute({
      ...employeeRoute('post', '/api/employees/{id}/bank-accounts', 'Register a bank account with the fiat bridge (employee; KYC approved)', deps),
      request: { params: EmployeeIdParams, body: jsonBody(BankAccountBody) },
      responses: {
        201: jsonContent(BankAccount, 'Registered (the same account sent again returns the same record).'),
        ...errorResponses(400, 401, 404, 415),
        409: jsonContent(ErrorSchema, '`KYC_NOT_APPROVED`.'),
        503: jsonContent(ErrorSchema, 'The bridge is unavailable or not configured.'),
      },
    }),
    async (c) => {
      const employee = await deps.bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee');
      const body = c.req.valid('json');
      const row = await deps.bridge.addBankAccount(employee, { ...body, label: body.label ?? null });
      return c.json(presentBankAccount(row), 201);
    },
  );

  app.openapi(
    createRoute({
      ...employeeRoute('post', '/api/employees/{id}/offramp', 'Cash out from the wallet to a registered bank account (employee)', deps),
      request: { params: EmployeeIdParams, body: jsonBody(OfframpBody) },
      responses: { 200: jsonContent(OfframpResult, 'Created at the provider; send the deposit to the address given.'), ...offrampErrors },
    }),
    async (c) => c.json(presentOfframp(await offramp(c.var.caller, c.req.valid('param').id, c.req.valid('json'))), 200),
  );

  app.openapi(
    createRoute({
      ...employeeRoute('get', '/api/employees/{id}/offramps', "The employee's off-ramps, newest first, open ones refreshed (employee)", deps),
      request: { params: EmployeeIdParams },
      responses: { 200: jsonContent(OfframpList, 'At most 50.'), ...errorResponses(401, 404) },
    }),
    async (c) => {
      const employee = await deps.bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee');
      return c.json({ employee_id: employee.id, transfers: (await deps.bridge.offramps(employee, 50)).map(presentOfframp) }, 200);
    },
  );

  app.openapi(
    createRoute(
      paidRoute(PAID.bridgeOfframp, deps.gate, {
        middleware: [requirePaidCaller(deps.paidCallers)],
        request: { headers: PaidIdentityHeaders, body: jsonBody(PaidOfframpBody) },
        description: "The employee's own off-ramp (X-Identity-Token of the employee); anyone else gets 404 and keeps nothing but the fee.",
        responses: { 200: jsonContent(OfframpResult, 'Created at the provider; send the deposit to the address given.'), ...offrampErrors },
      }),
    ),
    async (c) => {
      const body = c.req.valid('json');
      const paid = c.var.paidCaller;
      if (paid.kind !== 'user') throw notFound('Employee');
      const transfer = await offramp(paid.caller, body.employeeId, body, c.var.payment);
      c.var.payment.attribute(transfer.employerId);
      return c.json(presentOfframp(transfer), 200);
    },
  );
  return app;
}
