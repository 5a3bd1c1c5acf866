import { createRoute, type z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Hex } from 'viem';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { EmployerIdParams, PaidIdentityHeaders } from '../employers/index.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { requirePaidCaller } from '../../http/paid-caller.js';
import { formatUsd, parseUsd } from '../../money.js';
import { PAID, type PaidRoute } from '../../payments/prices.js';
import { paidRoute } from '../../payments/routes.js';
import type { PaidCallers } from '../employers/index.js';
import { decodeMemo } from '../memo/index.js';
import { payslipFilename, payslipPdf } from './payslip-pdf.js';
import {
  CostHistoryQuery,
  CostHistoryResponse,
  EmployeePayslipResponse,
  EmployeePayslipsResponse,
  PayslipsQuery,
  RunPayslipsResponse,
  ExecuteBody,
  ExecuteResponse,
  HistoryParams,
  HistoryQuery,
  HistoryResponse,
  PayslipResponse,
  PayslipParams,
  PrepareBody,
  RunChecksResponse,
  ExpectedPayQuery,
  ExpectedPayResponse,
  ProposeDecisionBody,
  DecisionResponse,
  X402ExecuteBody,
  X402ExecuteResponse,
  PreparedRunSchema,
  RunIdParams,
  RunSchema,
  RunsQuery,
  RunsResponse,
  SubmitBody,
  TransactionsQuery,
  TransactionsResponse,
} from './schema.js';
import { grossPay, type Payslip, type PayrollService, type PreparedRun } from './service.js';
import type { SolanaPolicyWallet } from './solana-policy.js';
import type { BatchRow, ItemRow, RunRow } from './store.js';

const security = [{ bearerAuth: [] }];
const day = (date: Date | null) => (date ? date.toISOString().slice(0, 10) : null);
const iso = (date: Date | null) => (date ? date.toISOString() : null);
const memoObject = (memo: string | null) => (memo ? { memo, fields: decodeMemo(memo as Hex) } : null);
/** Spec 2.4/2.5 give amount_usd as a number: derived from the integer at the last moment. */
const usdNumber = (units: bigint) => Number(formatUsd(units));

function presentBatch(batch: BatchRow) {
  return {
    seq: batch.seq,
    status: batch.status,
    recipient_count: batch.recipientCount,
    total_amount_usd: formatUsd(batch.totalAmount),
    tx_hash: batch.txHash,
    block_number: batch.blockNumber === null ? null : Number(batch.blockNumber),
    failure_reason: batch.failureReason,
  };
}

function presentRun({ batches, ...run }: RunRow & { batches: BatchRow[] }) {
  return {
    id: run.id,
    employer_id: run.employerId,
    status: run.status,
    total_amount_usd: formatUsd(run.totalAmount),
    recipient_count: run.recipientCount,
    pay_period_start: day(run.payPeriodStart),
    pay_period_end: day(run.payPeriodEnd),
    pay_date: run.payDate,
    submitted_by: run.submittedBy,
    tx_hash: run.txHash,
    block_number: run.blockNumber === null ? null : Number(run.blockNumber),
    failure_reason: run.failureReason,
    created_at: run.createdAt.toISOString(),
    submitted_at: iso(run.submittedAt),
    finalized_at: iso(run.finalizedAt),
    batches: batches.map(presentBatch),
  };
}

function presentTransaction(item: ItemRow) {
  return {
    id: item.id,
    payroll_run_id: item.runId,
    employee_id: item.employeeId,
    chain: item.chain,
    wallet_address: item.walletAddress,
    amount_usd: formatUsd(item.amount),
    status: item.status,
    reason: item.reason,
    tx_hash: item.txHash,
    memo: item.memo,
    block_number: item.blockNumber === null ? null : Number(item.blockNumber),
    created_at: item.createdAt.toISOString(),
    finalized_at: iso(item.finalizedAt),
  };
}

function presentPayslip(runId: string, item: ItemRow) {
  return {
    run_id: runId,
    employee_id: item.employeeId,
    amount_usd: usdNumber(item.amount),
    gross_amount_usd: usdNumber(grossPay(item)),
    advance_deduction_usd: usdNumber(item.advanceDeduction),
    status: item.status,
    tx_hash: item.txHash,
    memo: memoObject(item.memo),
    finalized_at: iso(item.finalizedAt),
    block_number: item.blockNumber === null ? null : Number(item.blockNumber),
    created_at: item.createdAt.toISOString(),
  };
}

/** The free payslip routes' payslip: amounts as base units and USD decimals. */
function presentEmployeePayslip(slip: Payslip) {
  return {
    run_id: slip.runId,
    employee_id: slip.employeeId,
    employee_name: slip.employeeName,
    employer_id: slip.employerId,
    employer_name: slip.employerName,
    status: slip.status,
    chain: slip.chain,
    wallet_address: slip.walletAddress,
    gross_amount: slip.gross.toString(),
    gross_amount_usd: formatUsd(slip.gross),
    advance_deduction: slip.advanceDeduction.toString(),
    advance_deduction_usd: formatUsd(slip.advanceDeduction),
    net_amount: slip.net.toString(),
    net_amount_usd: formatUsd(slip.net),
    memo: memoObject(slip.memo),
    tx_hash: slip.txHash,
    tx_url: slip.txUrl,
    block_number: slip.blockNumber === null ? null : Number(slip.blockNumber),
    pay_period: slip.payPeriod && { start: day(slip.payPeriod.start), end: day(slip.payPeriod.end) },
    pay_date: iso(slip.payDate),
    created_at: slip.createdAt.toISOString(),
  };
}

function presentPrepared(prepared: PreparedRun) {
  return {
    payroll_run_id: prepared.run.id,
    status: 'draft' as const,
    employer_account_id: prepared.accountId.toString(),
    recipient_count: prepared.items.length,
    total_amount_usd: formatUsd(prepared.run.totalAmount),
    pay_period_start: day(prepared.run.payPeriodStart),
    pay_period_end: day(prepared.run.payPeriodEnd),
    pay_date: prepared.run.payDate,
    calldata: {
      chain_id: prepared.calldata.chainId,
      to: prepared.calldata.to,
      data: prepared.calldata.data,
      function: 'executeBatchPayroll(address[],uint256[],bytes32[],uint256)' as const,
    },
    items: prepared.items.map((i) => ({
      employee_id: i.employeeId,
      wallet_address: i.walletAddress,
      amount_usd: formatUsd(i.amount),
      gross_amount_usd: formatUsd(grossPay(i)),
      advance_deduction_usd: formatUsd(i.advanceDeduction),
      memo: i.memo,
    })),
  };
}

/** The prepare request as the service takes it: amounts in base units, pay-period days as UTC midnights. */
/** A YYYY-MM-DD pay-period day as midnight UTC. */
const dateOf = (day: string | undefined) => (day ? new Date(`${day}T00:00:00Z`) : null);

function prepareInput(body: z.infer<typeof PrepareBody>) {
  return {
    items: body.items.map((item) => ({ employeeId: item.employee_id, amount: parseUsd(item.amount_usd)!, walletAddress: item.wallet_address })),
    payPeriodStart: dateOf(body.pay_period_start),
    payPeriodEnd: dateOf(body.pay_period_end),
    payDate: body.pay_date ?? null,
  };
}

// The owner routes' middleware (bearer identity, idempotency) and the paid routes' gate and
// paid-caller middleware are added when the routes are built: they need the app's dependencies.

const prepareRun = createRoute({
  method: 'post',
  path: '/api/employers/{id}/payroll',
  tags: ['Payroll'],
  summary: 'Prepare a payroll run: checks, memos, a draft, and the unsigned batch call',
  security,
  request: { params: EmployerIdParams, body: jsonBody(PrepareBody) },
  responses: {
    201: jsonContent(PreparedRunSchema, 'The draft run and its unsigned batch calldata.'),
    ...errorResponses(400, 401, 404, 409, 413, 415),
    422: jsonContent(
      ErrorSchema,
      'INSUFFICIENT_TREASURY, RECIPIENT_BLOCKED (`blocked_wallets` names them), EMPLOYEE_NOT_PAYABLE, or ADVANCES_EXCEED_PAY (`employees` names them: their advances are not less than the payment).',
    ),
  },
});

const checkRun = createRoute({
  method: 'post',
  path: '/api/employers/{id}/payroll/checks',
  tags: ['Payroll'],
  summary: 'What to look at before paying a run: an already paid period, employees paid in the last 7 days, outlier amounts',
  description:
    'Owner only. Writes nothing and refuses nothing: the wizard shows the warnings and asks the owner to confirm. An amount is an ' +
    'outlier when it is more than `threshold_percent` away from the salary for the period (the annual salary for the days of the ' +
    'period, or a twelfth of it without a period).',
  security,
  request: { params: EmployerIdParams, body: jsonBody(PrepareBody) },
  responses: {
    200: jsonContent(RunChecksResponse, 'The warnings; empty when there is nothing to look at.'),
    ...errorResponses(400, 401, 404, 413, 415),
  },
});

const expectedPayRoute = createRoute({
  method: 'get',
  path: '/api/employers/{id}/payroll/expected',
  tags: ['Payroll'],
  summary: "What each active employee earns for a pay period, and the total (by default the pay schedule's next period)",
  description:
    'Owner only. The same rule as the AMOUNT_OUTLIER warning: the annual salary for the whole days of the period over 365, to the cent. ' +
    "Without a period, the pay schedule's next period and its pay date; without a schedule either, a twelfth of the annual salary.",
  security,
  request: { params: EmployerIdParams, query: ExpectedPayQuery },
  responses: {
    200: jsonContent(ExpectedPayResponse, 'The expected pay per active employee and the total over the payable ones.'),
    ...errorResponses(400, 401, 404),
  },
});

const submitRun = createRoute({
  method: 'post',
  path: '/api/employers/{id}/payroll/{runId}/submit',
  tags: ['Payroll'],
  summary: 'Record the hash of the signed batch transaction (draft -> submitted, once)',
  security,
  request: { params: RunIdParams, body: jsonBody(SubmitBody) },
  responses: {
    200: jsonContent(RunSchema, 'The run: submitted, or already confirmed/failed when its transaction was mined.'),
    ...errorResponses(400, 401, 404, 409, 415),
  },
});

const listRuns = createRoute({
  method: 'get',
  path: '/api/employers/{id}/payroll/runs',
  tags: ['Payroll'],
  summary: 'Payroll runs, newest first',
  security,
  request: { params: EmployerIdParams, query: RunsQuery },
  responses: { 200: jsonContent(RunsResponse, 'A page of runs.'), ...errorResponses(400, 401, 404) },
});

const costHistory = createRoute({
  method: 'get',
  path: '/api/employers/{id}/payroll/cost-history',
  tags: ['Payroll'],
  summary: 'What confirmed payroll runs paid per UTC calendar month (zero months included)',
  description: "Owner only. A run counts in the month it was confirmed, with the items it actually paid (not failed or policy-rejected ones).",
  security,
  request: { params: EmployerIdParams, query: CostHistoryQuery },
  responses: { 200: jsonContent(CostHistoryResponse, 'The months, oldest first.'), ...errorResponses(400, 401, 404) },
});

const listTransactions = createRoute({
  method: 'get',
  path: '/api/transactions',
  tags: ['Payroll'],
  summary: "The owner's payroll transactions (payment items), newest first",
  security,
  request: { query: TransactionsQuery },
  responses: { 200: jsonContent(TransactionsResponse, 'A page of payment items.'), ...errorResponses(400, 401, 404) },
});

const listEmployeePayslips = createRoute({
  method: 'get',
  path: '/api/employees/{id}/payslips',
  tags: ['Payroll'],
  summary: "An employee's payslips, newest first (the employee themselves or the employer's owner)",
  security,
  request: { params: HistoryParams, query: PayslipsQuery },
  responses: { 200: jsonContent(EmployeePayslipsResponse, 'A page of payslips.'), ...errorResponses(400, 401, 404) },
});

const getEmployeePayslip = createRoute({
  method: 'get',
  path: '/api/employees/{id}/payslips/{runId}',
  tags: ['Payroll'],
  summary: "One run's payslip of an employee (the employee themselves or the employer's owner)",
  security,
  request: { params: RunIdParams },
  responses: { 200: jsonContent(EmployeePayslipResponse, 'The payslip.'), ...errorResponses(400, 401, 404) },
});

const getEmployeePayslipPdf = createRoute({
  method: 'get',
  path: '/api/employees/{id}/payslips/{runId}/pdf',
  tags: ['Payroll'],
  summary: 'The same payslip as a PDF (an attachment named with its date)',
  security,
  request: { params: RunIdParams },
  responses: {
    200: { description: 'The payslip, one A4 page; amounts in dollars to the cent.', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } },
    ...errorResponses(400, 401, 404),
  },
});

const listRunPayslips = createRoute({
  method: 'get',
  path: '/api/employers/{id}/payroll/runs/{runId}/payslips',
  tags: ['Payroll'],
  summary: "A run's payslips, one per employee (the employer's owner)",
  security,
  request: { params: RunIdParams },
  responses: { 200: jsonContent(RunPayslipsResponse, "The run's payslips; none while it is a draft."), ...errorResponses(400, 401, 404) },
});

const proposeDecision = createRoute({
  method: 'post',
  path: '/api/employers/{id}/payroll/decisions',
  tags: ['Payroll'],
  summary: 'Record an agent-planned payroll (a decision) for x402/payroll/execute',
  security,
  request: { params: EmployerIdParams, body: jsonBody(ProposeDecisionBody) },
  responses: { 201: jsonContent(DecisionResponse, 'The decision, proposed.'), ...errorResponses(400, 401, 404, 409, 415) },
});

const executeDecision = createRoute({
  method: 'post',
  path: '/api/x402/payroll/execute',
  tags: ['Payroll'],
  summary: 'Execute an agent decision (identity JWT; no charge)',
  description:
    'Tempo items are paid in one batch from the agent wallet; Solana items through the policy-enforcing wallet. ' +
    'A Solana item over the per-transaction cap or calling a program outside the whitelist is `policy_rejected` ' +
    '(listed in `solana_policy_rejections`) and the run still succeeds.',
  security,
  request: { body: jsonBody(X402ExecuteBody) },
  responses: {
    200: jsonContent(X402ExecuteResponse, 'Executed; per-item rejections and broadcast errors are in the body.'),
    ...errorResponses(400, 401, 404, 409, 415),
    422: jsonContent(ErrorSchema, 'INSUFFICIENT_TREASURY, RECIPIENT_BLOCKED, EMPLOYEE_NOT_PAYABLE or DECISION_INVALID: nothing was sent; the decision stays proposed.'),
  },
});

/** POST /api/mpp/payroll/execute (PAID.payrollExecute), less its gate and paid-caller middleware. */
const executeRunRoute = {
  request: { headers: PaidIdentityHeaders, body: jsonBody(ExecuteBody) },
  responses: {
    200: jsonContent(ExecuteResponse, 'Paid on chain in one batch transaction from the agent wallet.'),
    ...errorResponses(400, 401, 404, 409, 415),
    422: jsonContent(ErrorSchema, 'The chain refused the batch (e.g. INSUFFICIENT_TREASURY); the run is failed and nothing was paid.'),
  },
};

/** GET /api/mpp/payslips/{runId}/{employeeId} (PAID.payslip), less its gate and paid-caller middleware. */
const payslipRoute = {
  request: { headers: PaidIdentityHeaders, params: PayslipParams },
  responses: { 200: jsonContent(PayslipResponse, 'The payslip.'), ...errorResponses(400, 401, 404) },
};

/** GET /api/mpp/employee/{id}/history (PAID.employeeHistory), less its gate and paid-caller middleware. */
const historyRoute = {
  request: { headers: PaidIdentityHeaders, params: HistoryParams, query: HistoryQuery },
  responses: { 200: jsonContent(HistoryResponse, 'Newest first.'), ...errorResponses(400, 401, 404) },
};

export interface PayrollRouteDeps {
  payroll: PayrollService;
  requireUser: MiddlewareHandler<AppEnv>;
  idempotency: MiddlewareHandler<AppEnv>;
}

/** Internal REST (spec 4.8): prepare, submit, runs, transactions; payslips (issue 29). */
export function payrollRoutes(deps: PayrollRouteDeps): FeatureApp {
  const app = featureApp();
  const owner = [deps.requireUser];
  const ownerWrite = [deps.requireUser, deps.idempotency];

  app.openapi({ ...prepareRun, middleware: ownerWrite }, async (c) => {
    const { id } = c.req.valid('param');
    const prepared = await deps.payroll.prepare(c.var.caller, id, prepareInput(c.req.valid('json')), c.var.requestId);
    return c.json(presentPrepared(prepared), 201);
  });

  app.openapi({ ...checkRun, middleware: owner }, async (c) => {
    const warnings = await deps.payroll.runWarnings(c.var.caller, c.req.valid('param').id, prepareInput(c.req.valid('json')));
    return c.json({ warnings }, 200);
  });

  app.openapi({ ...expectedPayRoute, middleware: owner }, async (c) => {
    const { id } = c.req.valid('param');
    const query = c.req.valid('query');
    const period = query.period_start && query.period_end ? { start: query.period_start, end: query.period_end } : null;
    const expected = await deps.payroll.expectedPay(c.var.caller, id, period);
    return c.json(
      {
        employer_id: id,
        pay_date: expected.payDate,
        period: expected.period,
        total_usd: formatUsd(expected.total),
        employees: expected.employees.map((e) => ({ employee_id: e.employee.id, expected_usd: formatUsd(e.amount), payable: e.payable })),
      },
      200,
    );
  });

  app.openapi({ ...submitRun, middleware: ownerWrite }, async (c) => {
    const { id, runId } = c.req.valid('param');
    const { tx_hash } = c.req.valid('json');
    return c.json(presentRun(await deps.payroll.submit(c.var.caller, id, runId, tx_hash as Hex, c.var.requestId)), 200);
  });

  app.openapi({ ...listRuns, middleware: owner }, async (c) => {
    const { id } = c.req.valid('param');
    const page = c.req.valid('query');
    const { rows, total } = await deps.payroll.listRuns(c.var.caller, id, page);
    return c.json({ employer_id: id, runs: rows.map(presentRun), page: page.page, limit: page.limit, total }, 200);
  });

  app.openapi({ ...costHistory, middleware: owner }, async (c) => {
    const { id } = c.req.valid('param');
    const months = await deps.payroll.costHistory(c.var.caller, id, c.req.valid('query').months);
    const presented = months.map((m) => ({ month: m.month, paid_usd: formatUsd(m.paid), runs: m.runs, recipients: m.recipients }));
    return c.json({ employer_id: id, months: presented }, 200);
  });

  app.openapi({ ...listTransactions, middleware: owner }, async (c) => {
    const query = c.req.valid('query');
    const { rows, total } = await deps.payroll.transactions(
      c.var.caller,
      { employeeId: query.employeeId, status: query.status, from: query.from ? new Date(query.from) : undefined, to: query.to ? new Date(query.to) : undefined },
      query,
    );
    return c.json({ transactions: rows.map(presentTransaction), page: query.page, limit: query.limit, total }, 200);
  });

  app.openapi({ ...listEmployeePayslips, middleware: owner }, async (c) => {
    const { id } = c.req.valid('param');
    const page = c.req.valid('query');
    const { payslips, total } = await deps.payroll.employeePayslips(c.var.caller, id, page);
    return c.json({ employee_id: id, payslips: payslips.map(presentEmployeePayslip), page: page.page, limit: page.limit, total }, 200);
  });

  app.openapi({ ...getEmployeePayslip, middleware: owner }, async (c) => {
    const { id, runId } = c.req.valid('param');
    return c.json({ payslip: presentEmployeePayslip(await deps.payroll.employeePayslip(c.var.caller, id, runId)) }, 200);
  });

  app.openapi({ ...getEmployeePayslipPdf, middleware: owner }, async (c) => {
    const { id, runId } = c.req.valid('param');
    const slip = await deps.payroll.employeePayslip(c.var.caller, id, runId);
    const body = await payslipPdf(slip);
    return c.body(body as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': 'application/pdf',
      'Content-Disposition': `attachment; filename="${payslipFilename(slip)}"`,
      'Cache-Control': 'private, no-store',
    });
  });

  app.openapi({ ...listRunPayslips, middleware: owner }, async (c) => {
    const { id, runId } = c.req.valid('param');
    const payslips = await deps.payroll.runPayslips(c.var.caller, id, runId);
    return c.json({ employer_id: id, run_id: runId, payslips: payslips.map(presentEmployeePayslip) }, 200);
  });
  return app;
}

export interface DecisionRouteDeps {
  payroll: PayrollService;
  requireUser: MiddlewareHandler<AppEnv>;
  idempotency: MiddlewareHandler<AppEnv>;
  solanaWallet: SolanaPolicyWallet;
  /** Explorer link of a Solana signature (cluster-aware). */
  solanaExplorerUrl: (signature: string) => string;
  tempoExplorerUrl: (txHash: Hex) => string | null;
}

/**
 * Agent-planned payroll: an owner records a plan (decision), and `POST /api/x402/payroll/execute`
 * (identity JWT, no charge; spec 4.5) carries it out once.
 */
export function decisionRoutes(deps: DecisionRouteDeps): FeatureApp {
  const app = featureApp();

  app.openapi({ ...proposeDecision, middleware: [deps.requireUser, deps.idempotency] }, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const items = body.items.map((i) => ({ employeeId: i.employee_id, amount: parseUsd(i.amount_usd)!, chain: i.chain }));
    const period = { start: dateOf(body.pay_period_start), end: dateOf(body.pay_period_end), payDate: body.pay_date ?? null };
    const decision = await deps.payroll.proposeDecision(c.var.caller, id, items, period, body.agent_identifier ?? null, c.var.requestId);
    return c.json({ decision_id: decision.id, employer_id: id, status: decision.status, created_at: decision.createdAt.toISOString() }, 201);
  });

  app.openapi({ ...executeDecision, middleware: [deps.requireUser] }, async (c) => {
    const { employer_id, decision_id } = c.req.valid('json');
    const done = await deps.payroll.executeDecision(c.var.caller, employer_id, decision_id, deps.solanaWallet, c.var.requestId);
    return c.json(
      {
        payroll_run_id: done.runId,
        decision_id: done.decisionId,
        solana_signatures: done.solanaSignatures,
        tempo_tx_hash: done.tempoTxHash,
        tempo_broadcast_error: done.tempoBroadcastError,
        tempo_explorer_url: done.tempoTxHash ? deps.tempoExplorerUrl(done.tempoTxHash) : null,
        solana_broadcast_error: done.solanaBroadcastError,
        solana_policy_rejections: done.solanaPolicyRejections,
        solana_explorer_urls: done.solanaSignatures.map(deps.solanaExplorerUrl),
        total_amount: usdNumber(done.total),
        employee_count: done.employeeCount,
      },
      200,
    );
  });
  return app;
}

export interface PaidPayrollRouteDeps {
  payroll: PayrollService;
  paidCallers: PaidCallers;
  gate: (route: PaidRoute) => MiddlewareHandler<AppEnv>;
}

/**
 * The paid payroll routes (spec 4.3). Identity beyond payment comes from `X-Identity-Token` or
 * `X-Agent-Key` (docs/decisions.md): execute is for the employer's owner or agent; payslips and
 * history also for the employee themselves. Everyone else gets 404, like a missing record.
 */
export function paidPayrollRoutes(deps: PaidPayrollRouteDeps): FeatureApp {
  const app = featureApp();
  const middleware = [requirePaidCaller(deps.paidCallers)];

  app.openapi(createRoute(paidRoute(PAID.payrollExecute, deps.gate, { middleware, ...executeRunRoute })), async (c) => {
    const { payrollRunId } = c.req.valid('json');
    const paid = c.var.paidCaller;
    const run = await deps.payroll.runFor(paid, payrollRunId);
    c.var.payment.attribute(run.employerId);
    const actor = paid.kind === 'user' ? { userId: paid.caller.userId, kind: 'user' as const } : { userId: null, kind: 'agent' as const };
    const executed = await deps.payroll.execute(run, actor, c.var.requestId, c.var.payment);
    const employer = await deps.payroll.employerOf(run);
    return c.json(
      {
        success: executed.status === 'confirmed',
        tx_hash: executed.txHash,
        payroll_run_id: run.id,
        recipient_count: executed.recipientCount,
        ...(employer?.adminWallet ? { employer_admin_wallet: employer.adminWallet } : {}),
        employer_account_id: executed.accountId.toString(),
        status: executed.status,
        tx_hashes: executed.txHashes,
        batch_count: executed.batchCount,
        failure_reason: executed.failureReason,
      },
      200,
    );
  });

  app.openapi(createRoute(paidRoute(PAID.payslip, deps.gate, { middleware, ...payslipRoute })), async (c) => {
    const { runId, employeeId } = c.req.valid('param');
    const { run, item } = await deps.payroll.payslip(c.var.paidCaller, runId, employeeId);
    c.var.payment.attribute(run.employerId);
    return c.json({ payslip: presentPayslip(run.id, item) }, 200);
  });

  app.openapi(createRoute(paidRoute(PAID.employeeHistory, deps.gate, { middleware, ...historyRoute })), async (c) => {
    const { id } = c.req.valid('param');
    const { limit } = c.req.valid('query');
    const { employee, items } = await deps.payroll.history(c.var.paidCaller, id, limit);
    c.var.payment.attribute(employee.employerId);
    const payments = items.map((item) => ({
      id: item.id,
      amount_usd: usdNumber(item.amount),
      status: item.status,
      tx_hash: item.txHash,
      memo: memoObject(item.memo),
      created_at: item.createdAt.toISOString(),
    }));
    return c.json({ employee_id: id, payments, count: payments.length }, 200);
  });
  return app;
}
