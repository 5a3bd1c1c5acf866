import { z } from '@hono/zod-openapi';
import { evmAddressSchema } from '../../http/validation.js';
import type { CreateEmployeeBody } from '../employers/index.js';

/**
 * The row fields of `POST /api/employees/bulk` (CreateEmployeeRequest), in its order: a mapping
 * names the CSV column for each, so the client can build the bulk rows directly.
 */
export const CSV_FIELDS = [
  'email',
  'full_name',
  'wallet_address',
  'solana_wallet_address',
  'annual_salary_usd',
  'department',
  'cost_centre',
] as const satisfies readonly (keyof z.infer<typeof CreateEmployeeBody>)[];
export type CsvField = (typeof CSV_FIELDS)[number];

export const MAX_HEADERS = 100;
export const MAX_HEADER_CHARS = 200;
export const MAX_SAMPLE_ROWS = 20;
export const MAX_SAMPLE_CELL_CHARS = 1000;

/** Who produced the answer: the deterministic rules, or the configured model (validated). */
const Source = z.enum(['model', 'heuristic']).openapi({
  description: '`heuristic`: the deterministic rules. `model`: the configured AI provider\'s answer, validated (see the route description).',
});

const EmployerId = z.uuid().openapi({ description: 'The employer; the caller must own it (otherwise 404, as for a missing one).' });

const perField = <T extends z.ZodType>(schema: T) =>
  z.object(Object.fromEntries(CSV_FIELDS.map((field) => [field, schema])) as Record<CsvField, T>);

// ---- POST /api/ai/parse-csv --------------------------------------------------------------------

const header = z
  .string()
  .min(1)
  .max(MAX_HEADER_CHARS)
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters');

export const ParseCsvBody = z
  .object({
    employerId: EmployerId,
    headers: z
      .array(header)
      .min(1)
      .max(MAX_HEADERS)
      .superRefine((headers, ctx) => {
        // A mapping names columns by header, so two equal headers could not be told apart.
        const seen = new Set<string>();
        headers.forEach((h, index) => {
          if (seen.has(h)) ctx.addIssue({ code: 'custom', path: [index], message: 'repeats an earlier header' });
          seen.add(h);
        });
      })
      .openapi({ description: `The CSV header row, 1 to ${MAX_HEADERS} distinct headers of 1 to ${MAX_HEADER_CHARS} characters.`, example: ['E-mail', 'Employee name', 'Wallet', 'Salary (USD)', 'Dept', 'Cost center'] }),
    sampleRows: z
      .array(z.array(z.string().max(MAX_SAMPLE_CELL_CHARS)).max(MAX_HEADERS))
      .max(MAX_SAMPLE_ROWS)
      .optional()
      .openapi({ description: `Up to ${MAX_SAMPLE_ROWS} data rows, cells in header order; their values sharpen the mapping. Cells beyond the headers are ignored.` }),
  })
  .openapi('AiParseCsvRequest');

export const ParseCsvResponse = z
  .object({
    mapping: perField(z.string().nullable()).openapi({ description: 'For each bulk-import field, the header of its column, or null; no header is used twice.' }),
    confidence: perField(z.number().min(0).max(1)).openapi({ description: 'For each field, 0 to 1; 0 when unmapped.' }),
    unmapped_columns: z.array(z.string()).openapi({ description: 'Headers no field uses, in header order.' }),
    source: Source,
  })
  .openapi('AiParseCsvResult');

// ---- POST /api/ai/anomaly-detect ---------------------------------------------------------------

export const ANOMALY_KINDS = ['amount_spike', 'new_recipient', 'wallet_changed', 'duplicate_wallet', 'above_annual_salary'] as const;
export const SEVERITIES = ['info', 'warning', 'error'] as const;

export const AnomalyDetectBody = z
  .object({
    employerId: EmployerId,
    payrollRunId: z.uuid().openapi({ description: "A payroll run of that employer; another employer's run answers 404 like a missing one." }),
  })
  .openapi('AiAnomalyDetectRequest');

export const Anomaly = z
  .object({
    employee_id: z.uuid(),
    kind: z.enum(ANOMALY_KINDS),
    severity: z.enum(SEVERITIES),
    message: z.string(),
  })
  .openapi('PayrollAnomaly');

export const AnomalyDetectResponse = z
  .object({
    payroll_run_id: z.uuid(),
    anomalies: z.array(Anomaly).openapi({ description: 'In item order; always computed by the rules, never by the model.' }),
    summary: z.string().openapi({ description: 'One paragraph; the model may reword it, never the anomalies.' }),
    source: Source,
  })
  .openapi('AiAnomalyReport');

// ---- POST /api/ai/compliance-explain -----------------------------------------------------------

export const ComplianceExplainBody = z
  .object({
    employerId: EmployerId,
    walletAddress: evmAddressSchema.openapi({ description: 'The EVM wallet whose latest compliance check (in this employer\'s ledger) is explained.' }),
  })
  .openapi('AiComplianceExplainRequest');

export const NEXT_ACTION_KINDS = ['open_employee', 'review_blocklist', 'run_payroll'] as const;

export const NextAction = z
  .object({
    kind: z.enum(NEXT_ACTION_KINDS).openapi({
      description: "Where the web app takes the employer: `open_employee` the employee's page (change or review the wallet), `review_blocklist` the blocklist on the Compliance page, `run_payroll` a new payroll run (which screens every wallet before paying it).",
    }),
    label: z.string().openapi({ description: 'The link or button text, e.g. "Review your blocklist".' }),
    employee_id: z.uuid().optional().openapi({ description: 'With `open_employee`: the employee.' }),
    blocklist_entry_id: z.uuid().optional().openapi({ description: 'With `review_blocklist`: the entry that blocks the wallet.' }),
  })
  .openapi('AiComplianceNextAction');

export const ComplianceExplainResponse = z
  .object({
    wallet_address: z.string().openapi({ description: 'Lower-cased.' }),
    status: z.enum(['CLEARED', 'BLOCKED', 'UNKNOWN']).openapi({ description: "The result of the employer's latest check of the wallet; UNKNOWN when it never checked it." }),
    checked_at: z.string().nullable().openapi({ format: 'date-time', description: 'When that check ran; null when UNKNOWN.' }),
    reasons: z.array(z.string()).openapi({ description: 'What the check found, one sentence each.' }),
    explanation: z.string().openapi({ description: 'One paragraph; the model may reword it.' }),
    recommended_actions: z.array(z.string()).openapi({ description: 'What to do, one sentence each, in terms of the web app\'s pages (never API routes).' }),
    actions: z.array(NextAction).openapi({ description: 'The same next steps as links into the web app; empty when nothing is to be done.' }),
    source: Source,
  })
  .openapi('AiComplianceExplanation');
