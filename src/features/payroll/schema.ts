import { z } from '@hono/zod-openapi';
import { PAYMENT_ITEM_STATUSES, PAYROLL_BATCH_STATUSES, PAYROLL_RUN_STATUSES } from './tables.js';
import { withEvmAddressRule } from '../agents/index.js';
import { evmAddressSchema, usdAmountSchema } from '../../http/validation.js';
import { MemoFieldsSchema } from '../memo/index.js';
import { PayPeriodSchema } from '../employers/index.js';

export const MAX_RUN_ITEMS = 10_000;

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD')
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value), 'is not a calendar date')
  .openapi({ format: 'date', example: '2026-11-01' });

/** One payment of a run or a plan: whom, and how much (a strict decimal string, more than zero). */
const payment = z.object({
  employee_id: z.uuid(),
  amount_usd: usdAmountSchema.refine((v) => /[1-9]/.test(v), 'must be more than zero'),
});

export const PrepareBody = z
  .object({
    items: z
      .array(
        payment.extend({
          wallet_address: evmAddressSchema.optional().openapi({ description: 'If given, must be the employee’s recorded wallet.' }),
        }),
      )
      .min(1)
      .max(MAX_RUN_ITEMS),
    pay_period_start: isoDate.optional(),
    pay_period_end: isoDate.optional(),
    pay_date: isoDate.optional().openapi({ description: 'The day the run pays, e.g. the scheduled pay date; payslips show it as their pay date.' }),
  })
  .refine((b) => !b.pay_period_start || !b.pay_period_end || b.pay_period_start <= b.pay_period_end, {
    path: ['pay_period_end'],
    message: 'must not be before pay_period_start',
  })
  .openapi('PayrollPrepareRequest');

export const ExpectedPayQuery = z
  .object({
    period_start: isoDate.optional().openapi({ description: 'With period_end: the period to price. Without both, the pay schedule\'s next period.' }),
    period_end: isoDate.optional(),
  })
  .refine((q) => (q.period_start === undefined) === (q.period_end === undefined), {
    path: ['period_end'],
    message: 'period_start and period_end go together',
  })
  .refine((q) => !q.period_start || !q.period_end || q.period_start <= q.period_end, { path: ['period_end'], message: 'must not be before period_start' });

export const ExpectedPayResponse = z
  .object({
    employer_id: z.uuid(),
    pay_date: z.string().nullable().openapi({ format: 'date', description: "The scheduled pay date when no period was given and the employer has a pay schedule (its next one); null otherwise." }),
    period: PayPeriodSchema.nullable().openapi({ description: 'The period priced; null when none was given and there is no pay schedule (then a twelfth of the annual salary).' }),
    total_usd: z.string().openapi({ description: 'The expected pay of every payable employee (`payable`), USD decimal.' }),
    employees: z.array(
      z.object({
        employee_id: z.uuid(),
        expected_usd: z.string().openapi({ description: 'The annual salary for the whole days of the period (both ends) over 365, to the cent; the AMOUNT_OUTLIER warning compares with it.' }),
        payable: z.boolean().openapi({ description: 'false when payroll cannot pay them now (see the employee\'s `unpayable_reason`).' }),
      }),
    ),
  })
  .openapi('PayrollExpectedPay');

export const RunWarningSchema = z
  .object({
    code: z.enum(['PERIOD_ALREADY_PAID', 'RECENTLY_PAID', 'AMOUNT_OUTLIER']),
    message: z.string().openapi({ description: 'A sentence for the owner.' }),
    employee_id: z.uuid().nullable(),
    run_id: z.uuid().nullable().openapi({ description: 'The other run (PERIOD_ALREADY_PAID, RECENTLY_PAID).' }),
    amount_usd: z.string().nullable(),
    expected_usd: z.string().nullable().openapi({ description: 'AMOUNT_OUTLIER: the salary for the period.' }),
    threshold_percent: z.number().int().nullable().openapi({ description: 'AMOUNT_OUTLIER: how far from `expected_usd` an amount may be.' }),
  })
  .openapi('PayrollRunWarning');
export const RunChecksResponse = z.object({ warnings: z.array(RunWarningSchema) }).openapi('PayrollRunChecks');

export const MemoObject = z.object({ memo: z.string(), fields: MemoFieldsSchema.nullable() }).openapi('Memo');

export const PreparedRunSchema = z
  .object({
    payroll_run_id: z.uuid(),
    status: z.literal('draft'),
    employer_account_id: z.string(),
    recipient_count: z.number().int(),
    total_amount_usd: z.string(),
    pay_period_start: z.string().nullable(),
    pay_period_end: z.string().nullable(),
    pay_date: z.string().nullable().openapi({ format: 'date', description: 'The day the run pays (YYYY-MM-DD); null when none was given.' }),
    calldata: z
      .object({
        chain_id: z.number().int(),
        to: z.string(),
        data: z.string(),
        function: z.literal('executeBatchPayroll(address[],uint256[],bytes32[],uint256)'),
      })
      .openapi({ description: 'Unsigned: sign and send it from the treasury admin (or an agent), then POST the hash to /submit.' }),
    items: z.array(
      z.object({
        employee_id: z.uuid(),
        wallet_address: z.string(),
        amount_usd: z.string().openapi({ description: 'What the item pays: the gross less the advances it nets.' }),
        gross_amount_usd: z.string().openapi({ description: 'The amount asked for this employee.' }),
        advance_deduction_usd: z.string().openapi({ description: "Advances (streamed salary the employee already claimed) deducted; each advance is netted by one run." }),
        memo: z.string(),
      }),
    ),
  })
  .openapi('PreparedPayrollRun');

export const RunIdParams = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }),
  runId: z.uuid().openapi({ param: { name: 'runId', in: 'path' } }),
});

export const SubmitBody = z
  .object({ tx_hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte transaction hash') })
  .openapi('PayrollSubmitRequest');

export const PayrollBatchSchema = z
  .object({
    seq: z.number().int().openapi({ description: 'Position in the run, from 0; batches are sent in this order.' }),
    status: z.enum(PAYROLL_BATCH_STATUSES).openapi({ description: 'pending: not signed yet; submitted: signed and broadcast, not mined; confirmed: paid; failed: refused on chain, or not sent after an earlier one was.' }),
    recipient_count: z.number().int(),
    total_amount_usd: z.string(),
    tx_hash: z.string().nullable(),
    block_number: z.number().nullable(),
    failure_reason: z.string().nullable(),
  })
  .openapi('PayrollBatch');

export const RunSchema = z
  .object({
    id: z.uuid(),
    employer_id: z.uuid(),
    status: z.enum(PAYROLL_RUN_STATUSES),
    total_amount_usd: z.string(),
    recipient_count: z.number().int(),
    pay_period_start: z.string().nullable(),
    pay_period_end: z.string().nullable(),
    pay_date: z.string().nullable().openapi({ format: 'date', description: 'The day the run pays (YYYY-MM-DD); null when none was given.' }),
    submitted_by: z.enum(['owner', 'agent']).nullable(),
    tx_hash: z.string().nullable(),
    block_number: z.number().nullable(),
    failure_reason: z.string().nullable(),
    created_at: z.string(),
    submitted_at: z.string().nullable(),
    finalized_at: z.string().nullable(),
    batches: z
      .array(PayrollBatchSchema)
      .openapi({ description: 'The Tempo transactions that pay the run, in order (none before it is submitted; an owner-signed run has one).' }),
  })
  .openapi('PayrollRun');

export const RunsQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});

export const RunsResponse = z
  .object({ employer_id: z.uuid(), runs: z.array(RunSchema), page: z.number().int(), limit: z.number().int(), total: z.number().int() })
  .openapi('PayrollRuns');

const isoTimestamp = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp, e.g. 2026-11-01T00:00:00Z' });

export const TransactionsQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(25),
  employeeId: z.uuid().optional(),
  status: z.enum(PAYMENT_ITEM_STATUSES).optional(),
  from: isoTimestamp.optional(),
  to: isoTimestamp.optional(),
});

export const TransactionSchema = z
  .object({
    id: z.uuid(),
    payroll_run_id: z.uuid(),
    employee_id: z.uuid(),
    chain: z.enum(['tempo', 'solana']),
    wallet_address: z.string(),
    amount_usd: z.string(),
    status: z.enum(PAYMENT_ITEM_STATUSES),
    reason: z.string().nullable(),
    tx_hash: z.string().nullable(),
    memo: z.string().nullable(),
    block_number: z.number().nullable(),
    created_at: z.string(),
    finalized_at: z.string().nullable(),
  })
  .openapi('PayrollTransaction');

export const TransactionsResponse = z
  .object({ transactions: z.array(TransactionSchema), page: z.number().int(), limit: z.number().int(), total: z.number().int() })
  .openapi('PayrollTransactions');

// ---- paid routes ----

export const ExecuteBody = z.object({ payrollRunId: z.uuid() }).openapi('PayrollExecuteRequest');
export const ExecuteResponse = z
  .object({
    success: z.boolean(),
    tx_hash: z.string(),
    payroll_run_id: z.string(),
    recipient_count: z.number(),
    employer_admin_wallet: z.string().optional(),
    employer_account_id: z.string().optional(),
    status: z.enum(['confirmed', 'partially_paid']).optional().openapi({
      description: 'confirmed: every batch paid (success true); partially_paid: a later batch was refused, so only the earlier ones paid (success false; see failure_reason).',
    }),
    tx_hashes: z.array(z.string()).optional().openapi({ description: 'Every paid batch transaction, in order; tx_hash is the first.' }),
    batch_count: z.number().int().optional(),
    failure_reason: z.string().nullable().optional(),
  })
  .openapi('PayrollExecuteResult');

export const PayslipParams = z.object({
  runId: z.uuid().openapi({ param: { name: 'runId', in: 'path' } }),
  employeeId: z.uuid().openapi({ param: { name: 'employeeId', in: 'path' } }),
});

export const Payslip = z
  .object({
    run_id: z.string(),
    employee_id: z.string(),
    amount_usd: z.number().openapi({ description: 'Paid by this run: the gross less the advance deduction.' }),
    gross_amount_usd: z.number(),
    advance_deduction_usd: z.number().openapi({ description: 'Advances (streamed salary already claimed) netted by this run.' }),
    status: z.string(),
    tx_hash: z.string().nullable(),
    memo: MemoObject.nullable(),
    finalized_at: z.string().nullable(),
    block_number: z.number().nullable(),
    created_at: z.string(),
  })
  .openapi('Payslip');
export const PayslipResponse = z.object({ payslip: Payslip }).openapi('PayslipResponse');

export const HistoryParams = z.object({ id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }) });
export const HistoryQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) });
export const HistoryResponse = z
  .object({
    employee_id: z.string(),
    payments: z.array(
      z.object({
        id: z.string(),
        amount_usd: z.number(),
        status: z.string(),
        tx_hash: z.string().nullable(),
        memo: MemoObject.nullable(),
        created_at: z.string(),
      }),
    ),
    count: z.number(),
  })
  .openapi('EmployeePaymentHistory');

// ---- payslips (issue 29): free, for the employee and the employer's owner ----

export const PayslipsQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

const baseUnits = (description: string) => z.string().openapi({ description: `${description} Integer base units (6 decimals).`, example: '1000000000' });
const usd = (description: string) => z.string().openapi({ description: `${description} USD decimal.`, example: '1000.000000' });

export const EmployeePayslip = z
  .object({
    run_id: z.uuid(),
    employee_id: z.uuid(),
    employee_name: z.string().nullable(),
    employer_id: z.uuid(),
    employer_name: z.string().nullable(),
    status: z.enum(PAYMENT_ITEM_STATUSES).openapi({ description: 'submitted (sent, not final), paid, failed or policy_rejected; drafts have no payslip.' }),
    chain: z.enum(['tempo', 'solana']),
    wallet_address: z.string(),
    gross_amount: baseUnits('Before deductions.'),
    gross_amount_usd: usd('Before deductions.'),
    advance_deduction: baseUnits('Advances (streamed salary already claimed) deducted.'),
    advance_deduction_usd: usd('Advances deducted.'),
    net_amount: baseUnits('Paid: the gross less the deduction.'),
    net_amount_usd: usd('Paid.'),
    memo: MemoObject.nullable(),
    tx_hash: z.string().nullable(),
    tx_url: z.string().nullable().openapi({ description: 'The transaction on a block explorer, when the chain has one.' }),
    block_number: z.number().nullable(),
    pay_period: z.object({ start: z.string().nullable(), end: z.string().nullable() }).nullable().openapi({ description: "The run's pay period (YYYY-MM-DD); null when the run has none." }),
    pay_date: z.string().nullable().openapi({ description: "Null until the payment is paid; then the run's pay date (midnight UTC) when it has one, else when the payment was final." }),
    created_at: z.string(),
  })
  .openapi('EmployeePayslip');

export const EmployeePayslipResponse = z.object({ payslip: EmployeePayslip }).openapi('EmployeePayslipResponse');

export const EmployeePayslipsResponse = z
  .object({ employee_id: z.uuid(), payslips: z.array(EmployeePayslip), page: z.number().int(), limit: z.number().int(), total: z.number().int() })
  .openapi('EmployeePayslips');

export const RunPayslipsResponse = z.object({ employer_id: z.uuid(), run_id: z.uuid(), payslips: z.array(EmployeePayslip) }).openapi('RunPayslips');

// ---- agent decisions and x402/payroll/execute (spec 4.5) ----

export const ProposeDecisionBody = z
  .object({
    items: z
      .array(
        payment.extend({ chain: z.enum(['tempo', 'solana']).default('tempo') }),
      )
      .min(1)
      .max(MAX_RUN_ITEMS),
    agent_identifier: withEvmAddressRule(z.string().trim().min(1).max(300)).optional().openapi({ description: 'The agent that planned it, for the record.' }),
    pay_period_start: isoDate.optional(),
    pay_period_end: isoDate.optional(),
    pay_date: isoDate.optional().openapi({ description: 'The day the run pays, e.g. the scheduled pay date; payslips show it as their pay date.' }),
  })
  .refine((b) => !b.pay_period_start || !b.pay_period_end || b.pay_period_start <= b.pay_period_end, {
    path: ['pay_period_end'],
    message: 'must not be before pay_period_start',
  })
  .openapi('PayrollDecisionRequest');

export const DecisionResponse = z
  .object({ decision_id: z.uuid(), employer_id: z.uuid(), status: z.string(), created_at: z.string() })
  .openapi('PayrollDecision');

export const X402ExecuteBody = z.object({ employer_id: z.uuid(), decision_id: z.uuid() }).openapi('X402PayrollExecuteRequest');

export const X402ExecuteResponse = z
  .object({
    payroll_run_id: z.string(),
    decision_id: z.string(),
    solana_signatures: z.array(z.string()),
    tempo_tx_hash: z.string().nullable(),
    tempo_broadcast_error: z.string().nullable(),
    tempo_explorer_url: z.string().nullable(),
    solana_broadcast_error: z.string().nullable(),
    solana_policy_rejections: z.array(z.object({ employee_id: z.string(), reason: z.string() })),
    solana_explorer_urls: z.array(z.string()),
    total_amount: z.number(),
    employee_count: z.number().int(),
  })
  .openapi('X402PayrollExecuteResult');

export const CostHistoryQuery = z.object({
  months: z.coerce
    .number()
    .int()
    .min(1)
    .max(36)
    .default(12)
    .openapi({ param: { name: 'months', in: 'query' }, description: 'How many UTC calendar months back, the current one included (1-36, default 12).' }),
});

export const CostHistoryResponse = z
  .object({
    employer_id: z.uuid(),
    months: z
      .array(
        z.object({
          month: z.string().openapi({ description: 'The UTC calendar month (YYYY-MM).', example: '2026-11' }),
          paid_usd: z.string().openapi({ description: "What the month's confirmed runs paid (paid items, net of netted advances): USD decimal with 6 places.", example: '25000.000000' }),
          runs: z.number().int().openapi({ description: 'Confirmed runs that paid something that month.' }),
          recipients: z.number().int().openapi({ description: 'Distinct employees paid that month.' }),
        }),
      )
      .openapi({ description: 'Oldest first, one per month; a month without a paid run is a zero.' }),
  })
  .openapi('PayrollCostHistory');
