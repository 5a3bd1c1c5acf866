import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv, Caller, FeePayment } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { notFound } from '../../errors.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { requirePaidCaller } from '../../http/paid-caller.js';
import { formatUsd, parseUsd } from '../../money.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import type { PaidCallers } from '../employers/index.js';
import { EmployeeIdParams, PaidIdentityHeaders } from '../employers/index.js';
import { BankAccount, BankAccountBody, BankAccounts, CardResult, KycResult, OfframpBody, OfframpList, OfframpResult, PaidOfframpBody, WalletBalance } from './schema.js';
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

/** A route of an employee's money (the caller's identity token; `requireUser` is added where the routes are wired). */
const employeeRoute = <M extends 'get' | 'post', P extends string>(method: M, path: P, summary: string) => ({
  method,
  path,
  tags: ['Employees'],
  summary,
  security: [{ bearerAuth: [] }],
});

const offrampErrors = {
  ...errorResponses(400, 401, 404, 415),
  409: jsonContent(ErrorSchema, '`KYC_NOT_APPROVED`.'),
  422: jsonContent(ErrorSchema, '`INSUFFICIENT_BALANCE` (field `amount`) or `NO_WALLET`.'),
  503: jsonContent(ErrorSchema, '`BRIDGE_UNAVAILABLE` or `BRIDGE_NOT_CONFIGURED`; nothing was created.'),
};

const walletBalance = createRoute({
  ...employeeRoute('get', '/api/employees/{id}/balance', "The employee's live wallet balance on the Tempo chain (employee)"),
  request: { params: EmployeeIdParams },
  responses: { 200: jsonContent(WalletBalance, 'Read from the chain now.'), ...errorResponses(401, 404) },
});

const startKyc = createRoute({
  ...employeeRoute('post', '/api/employees/{id}/kyc', 'Create the fiat-bridge customer if needed and return a fresh KYC link (employer owner)'),
  request: { params: EmployeeIdParams },
  responses: { 200: jsonContent(KycResult, 'The customer and a fresh link.'), ...errorResponses(401, 404), 503: jsonContent(ErrorSchema, 'The bridge is unavailable or not configured.') },
});

const getCard = createRoute({
  ...employeeRoute('get', '/api/employees/{id}/card', "The employee's card status (employee or employer owner)"),
  request: { params: EmployeeIdParams },
  responses: { 200: jsonContent(CardResult, '`card` is null until one is issued.'), ...errorResponses(401, 404) },
});

const issueCard = createRoute({
  ...employeeRoute('post', '/api/employees/{id}/card', 'Issue the employee a card (employee or employer owner); one live card per employee'),
  request: { params: EmployeeIdParams },
  responses: {
    200: jsonContent(CardResult, 'The employee already has a live card: that one.'),
    201: jsonContent(CardResult, 'Issued.'),
    ...errorResponses(401, 404),
    409: jsonContent(ErrorSchema, '`KYC_NOT_APPROVED`.'),
    503: jsonContent(ErrorSchema, 'The bridge is unavailable or not configured.'),
  },
});

const listBankAccounts = createRoute({
  ...employeeRoute('get', '/api/employees/{id}/bank-accounts', "The employee's registered bank accounts (employee)"),
  request: { params: EmployeeIdParams },
  responses: { 200: jsonContent(BankAccounts, 'Oldest first.'), ...errorResponses(401, 404) },
});

const addBankAccount = createRoute({
  ...employeeRoute('post', '/api/employees/{id}/bank-accounts', 'Register a bank account with the fiat bridge (employee; KYC approved)'),
  request: { params: EmployeeIdParams, body: jsonBody(BankAccountBody) },
  responses: {
    201: jsonContent(BankAccount, 'Registered (the same account sent again returns the same record).'),
    ...errorResponses(400, 401, 404, 415),
    409: jsonContent(ErrorSchema, '`KYC_NOT_APPROVED`.'),
    503: jsonContent(ErrorSchema, 'The bridge is unavailable or not configured.'),
  },
});

const createOfframp = createRoute({
  ...employeeRoute('post', '/api/employees/{id}/offramp', 'Cash out from the wallet to a registered bank account (employee)'),
  request: { params: EmployeeIdParams, body: jsonBody(OfframpBody) },
  responses: { 200: jsonContent(OfframpResult, 'Created at the provider; send the deposit to the address given.'), ...offrampErrors },
});

const listOfframps = createRoute({
  ...employeeRoute('get', '/api/employees/{id}/offramps', "The employee's off-ramps, newest first, open ones refreshed (employee)"),
  request: { params: EmployeeIdParams },
  responses: { 200: jsonContent(OfframpList, 'At most 50.'), ...errorResponses(401, 404) },
});

/** `POST /api/mpp/offramp`: the paid route's own part (the gate and the paid-caller middleware are added where it is wired). */
/** The off-ramp's card offer is a card credit (src/payments/card/credit.ts): later calls name it instead of paying. */
const PaidOfframpHeaders = PaidIdentityHeaders.extend({
  'payment-credit': z
    .uuid()
    .optional()
    .openapi({ description: 'Pays the fee from this card credit of the caller (the Payment-Credit header of the answer that bought it) instead of a payment.' }),
});

const paidOfframp = {
  request: { headers: PaidOfframpHeaders, body: jsonBody(PaidOfframpBody) },
  description: "The employee's own off-ramp (X-Identity-Token of the employee); anyone else gets 404 and keeps nothing but the fee.",
  responses: { 200: jsonContent(OfframpResult, 'Created at the provider; send the deposit to the address given.'), ...offrampErrors },
};

/** The employee's wallet, card and fiat cash-out through the bridge (spec 4.8); one paid route. */
export function bridgeRoutes(deps: BridgeRouteDeps): FeatureApp {
  const app = featureApp();
  app.route('/', walletAndCardRoutes(deps));
  app.route('/', cashOutRoutes(deps));
  return app;
}

/** Balance, KYC and the card. */
function walletAndCardRoutes(deps: BridgeRouteDeps): FeatureApp {
  const app = featureApp();
  const { bridge, requireUser } = deps;
  app.openapi({ ...walletBalance, middleware: requireUser }, async (c) => {
    const employee = await bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee');
    const balance = (await bridge.walletBalance(employee)) ?? 0n;
    return c.json(presentBalance(employee, balance, deps, bridge.now()), 200, { 'Cache-Control': 'no-store' });
  });
  app.openapi({ ...startKyc, middleware: requireUser }, async (c) => {
    const employee = await bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'owner');
    const kyc = await bridge.startKyc(employee);
    return c.json(
      { employee_id: employee.id, bridge_customer_id: kyc.customerId, kyc_status: kyc.kycStatus, kyc_link: kyc.url, expires_at: kyc.expiresAt?.toISOString() ?? null },
      200,
      { 'Cache-Control': 'no-store' },
    );
  });
  app.openapi({ ...getCard, middleware: requireUser }, async (c) => {
    const employee = await bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee_or_owner');
    return c.json({ employee_id: employee.id, card: presentCard(await bridge.card(employee)) }, 200);
  });
  app.openapi({ ...issueCard, middleware: requireUser }, async (c) => {
    const employee = await bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee_or_owner');
    const { card, created } = await bridge.issueCard(employee);
    return c.json({ employee_id: employee.id, card: presentCard(card) }, created ? 201 : 200);
  });
  return app;
}

/** Bank accounts and off-ramps, the paid off-ramp included. */
function cashOutRoutes(deps: BridgeRouteDeps): FeatureApp {
  const app = featureApp();
  const { bridge, requireUser } = deps;
  app.openapi({ ...listBankAccounts, middleware: requireUser }, async (c) => {
    const employee = await bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee');
    return c.json({ employee_id: employee.id, bank_accounts: (await bridge.listBankAccounts(employee)).map(presentBankAccount) }, 200);
  });
  app.openapi({ ...addBankAccount, middleware: requireUser }, async (c) => {
    const employee = await bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee');
    const body = c.req.valid('json');
    const row = await bridge.addBankAccount(employee, { ...body, label: body.label ?? null });
    return c.json(presentBankAccount(row), 201);
  });
  app.openapi({ ...createOfframp, middleware: requireUser }, async (c) =>
    c.json(presentOfframp(await offramp(bridge, c.var.caller, c.req.valid('param').id, c.req.valid('json')), deps), 200),
  );
  app.openapi({ ...listOfframps, middleware: requireUser }, async (c) => {
    const employee = await bridge.employeeFor(c.var.caller, c.req.valid('param').id, 'employee');
    return c.json({ employee_id: employee.id, transfers: (await bridge.offramps(employee, 50)).map((row) => presentOfframp(row, deps)) }, 200);
  });
  app.openapi(createRoute(paidRoute(PAID.bridgeOfframp, deps.gate, { ...paidOfframp, middleware: [requirePaidCaller(deps.paidCallers)] })), async (c) => {
    const body = c.req.valid('json');
    const paid = c.var.paidCaller;
    if (paid.kind !== 'user') throw notFound('Employee');
    const transfer = await offramp(bridge, paid.caller, body.employeeId, body, c.var.payment);
    c.var.payment.attribute(transfer.employerId);
    return c.json(presentOfframp(transfer, deps), 200);
  });
  return app;
}

/** The caller's off-ramp from the employee's wallet (404 unless the caller is the employee). */
async function offramp(bridge: BridgeService, caller: Caller, employeeId: string, body: z.infer<typeof OfframpBody>, fee: FeePayment | null = null) {
  const employee = await bridge.employeeFor(caller, employeeId, 'employee');
  return bridge.offramp(employee, { amount: parseUsd(body.amount)!, destinationType: body.destinationType, bankAccountId: body.bankAccountId }, fee);
}

/** The chain the wallets and off-ramp deposits are on. */
type Chain = Pick<BridgeRouteDeps, 'network' | 'token'>;

function presentBalance(employee: { id: string; walletAddress: string | null }, balance: bigint, chain: Chain, asOf: Date) {
  return {
    employee_id: employee.id,
    wallet_address: employee.walletAddress,
    network: chain.network,
    token: chain.token,
    balance: balance.toString(),
    balance_usd: formatUsd(balance),
    as_of: asOf.toISOString(),
  };
}

const presentOfframp = (row: OfframpRow, chain: Chain) => ({
  success: row.status !== 'error' && row.status !== 'canceled',
  transfer_id: row.id,
  bridge_transfer_id: row.bridgeTransferId,
  status: row.status,
  amount: formatUsd(row.amount),
  destination_type: row.destinationType,
  created_at: row.createdAt.toISOString(),
  deposit_instructions:
    row.depositAddress && row.sourceAddress
      ? { network: chain.network, token: chain.token, from_address: row.sourceAddress, to_address: row.depositAddress, amount: formatUsd(row.amount) }
      : null,
});

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
