import { z } from '@hono/zod-openapi';
import { isAddress } from '@solana/kit';
import { emailSchema, evmAddressSchema, usdAmountSchema } from '../../http/validation.js';
import { AGENT_KEY_HEADER, IDENTITY_TOKEN_HEADER } from './paid-caller.js';
import { PAY_FREQUENCIES } from './pay-schedule.js';

/**
 * Free text stored as is (names, departments): trimmed, and without control characters. A NUL
 * byte would otherwise reach PostgreSQL (which refuses it: a 500) and a line break could reach an
 * email header through the invite's subject.
 */
const isControl = (code: number) => code < 0x20 || code === 0x7f;

/** The text with each run of control characters (C0 and DEL) replaced by one space. */
export function withoutControlCharacters(text: string): string {
  let out = '';
  let inRun = false;
  for (const char of text) {
    if (isControl(char.charCodeAt(0))) {
      if (!inRun) out += ' ';
      inRun = true;
    } else {
      out += char;
      inRun = false;
    }
  }
  return out;
}

export const plainText = (max: number, min = 1) =>
  z
    .string()
    .trim()
    .min(min)
    .max(max)
    .refine((text) => withoutControlCharacters(text) === text, 'must not contain control characters');

/** A Solana address: base58 of exactly 32 bytes (43 or 44 characters, occasionally fewer). */
export const solanaAddressSchema = z
  .string()
  .refine((value) => isAddress(value), 'must be a base58 Solana address (32 bytes)')
  .openapi({ example: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' });

export const EmployerIdParams = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'Employer id.' }),
});

export const CreateEmployerBody = z
  .object({
    name: plainText(200).openapi({ example: 'Acme Robotics' }),
    admin_wallet: evmAddressSchema.optional().openapi({ description: 'EVM address that administers the treasury.' }),
  })
  .openapi('CreateEmployerRequest');

/** A calendar day, YYYY-MM-DD (UTC). */
export const isoDateSchema = z.iso.date().openapi({ format: 'date', example: '2026-12-04' });

export const PayPeriodSchema = z.object({ start: isoDateSchema, end: isoDateSchema }).openapi('PayPeriod', { description: 'Both days included.' });

const FREQUENCY_DESCRIPTION =
  '`monthly` on `pay_day` (1-31, clamped to the last day of shorter months; 31 pays its own month, any other day the previous month); ' +
  '`semi_monthly` on the 15th (pays the 1st-15th) and the last day (pays the 16th-last day); ' +
  '`weekly` / `biweekly` every 7 / 14 days from `anchor_date`, the first pay date (each pays the 7 / 14 days ending on it).';

export const PayScheduleSchema = z
  .object({
    frequency: z.enum(PAY_FREQUENCIES).openapi({ description: FREQUENCY_DESCRIPTION }),
    pay_day: z.number().int().nullable().openapi({ description: 'monthly: the day of the month; null otherwise.' }),
    anchor_date: z.string().nullable().openapi({ format: 'date', description: 'weekly, biweekly: the first pay date; null otherwise.' }),
    next_pay_date: z.string().openapi({ format: 'date', description: 'The next pay date, today (UTC) or later.' }),
    next_period: PayPeriodSchema.openapi({ description: 'The pay period the next pay date pays.' }),
  })
  .openapi('PaySchedule');

/**
 * The PATCH form of a schedule: one shape per frequency, each with exactly its own anchor (a field
 * of another frequency is refused as unknown, naming it).
 */
export const PayScheduleInput = z
  .discriminatedUnion(
    'frequency',
    [
      z
        .strictObject({
          frequency: z.literal('monthly'),
          pay_day: z.number().int().min(1).max(31).openapi({ description: 'The day of the month, 1-31 (clamped to shorter months; 31 is the last day).', example: 28 }),
        })
        .openapi('MonthlyPayScheduleRequest'),
      z.strictObject({ frequency: z.literal('semi_monthly') }).openapi('SemiMonthlyPayScheduleRequest'),
      z
        .strictObject({
          frequency: z.enum(['weekly', 'biweekly']),
          anchor_date: isoDateSchema.openapi({ description: 'The first pay date; pay dates repeat every 7 or 14 days from it.' }),
        })
        .openapi('RepeatingPayScheduleRequest'),
    ],
    // A frequency that is none of them (the discriminator's own issue).
    { error: (issue) => (issue.code === 'invalid_union' ? `must be one of: ${PAY_FREQUENCIES.join(', ')}` : undefined) },
  )
  .openapi('PayScheduleRequest', { description: FREQUENCY_DESCRIPTION });

export const Employer = z
  .object({
    id: z.uuid(),
    name: z.string(),
    admin_wallet: z.string().nullable(),
    employer_account_id: z.string().nullable(),
    tip403_policy_id: z.number().int().nullable().openapi({ description: 'TIP-403 policy checked against every payroll recipient; null when none.' }),
    pay_schedule: PayScheduleSchema.nullable().openapi({ description: 'When payroll pays, and the next pay date; null until one is set.' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    created: z.boolean().openapi({ description: 'false when the caller already owned this employer.' }),
  })
  .openapi('Employer');

export const CreateEmployeeBody = z
  .object({
    email: emailSchema.openapi({ example: 'ada@example.com' }),
    full_name: plainText(200).openapi({ example: 'Ada Lovelace' }),
    wallet_address: evmAddressSchema.optional(),
    solana_wallet_address: solanaAddressSchema.optional(),
    annual_salary_usd: usdAmountSchema.optional().openapi({ description: 'Annual salary in USD; default 0.' }),
    department: plainText(100, 0).optional(),
    cost_centre: plainText(100, 0).optional(),
  })
  .openapi('CreateEmployeeRequest');

export const Employee = z
  .object({
    id: z.uuid(),
    employer_id: z.uuid(),
    email: z.string(),
    full_name: z.string(),
    wallet_address: z.string().nullable(),
    solana_wallet_address: z.string().nullable(),
    annual_salary_usd: z.string().openapi({ description: 'Decimal string, 6 places.' }),
    department: z.string().nullable(),
    cost_centre: z.string().nullable(),
    status: z.enum(['active', 'removed']),
    payroll_paused: z.boolean(),
    manual_review_status: z.enum(['none', 'pending', 'approved', 'rejected']).openapi({
      description: '`pending` after the employee changed a payout wallet: the employer approves it before payroll pays the new wallet.',
    }),
    manual_review_note: z.string().nullable(),
    manual_reviewed_at: z.string().nullable().openapi({ format: 'date-time' }),
    kyc_status: z.string(),
    unpayable_reason: z.string().nullable().openapi({
      description:
        'Why payroll cannot pay this employee to their Tempo wallet now (`removed`, `payroll paused`, `new wallet awaiting review`, ' +
        '`wallet rejected in review`, `no wallet address`), or null: the reason a run naming them is refused with `EMPLOYEE_NOT_PAYABLE`.',
    }),
    linked_user: z.boolean().openapi({ description: 'Whether the employee has signed in.' }),
    invited_at: z.string().nullable().openapi({ format: 'date-time', description: 'When the invite email was queued.' }),
    removed_at: z.string().nullable().openapi({ format: 'date-time' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Employee');

export const CreateEmployeeResponse = Employee.extend({
  created: z.boolean().openapi({ description: 'false when an employee with this email already existed.' }),
}).openapi('CreateEmployeeResponse');

export const TeamQuery = z.object({
  page: z.coerce.number().int().min(1).default(1).openapi({ description: '1-indexed page.' }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const TeamResponse = z
  .object({
    employer_id: z.uuid(),
    employees: z.array(Employee),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
  })
  .openapi('Team');

export const AgentKeyResponse = z
  .object({
    employer_id: z.uuid(),
    agent_key: z.string().openapi({ description: 'Shown this once; send it as `X-Agent-Key` on paid routes. Only its hash is stored.' }),
    prefix: z.string().openapi({ description: 'The first characters, to recognise the key later.' }),
    rotated: z.boolean().openapi({ description: 'true when an earlier key was replaced (it no longer works).' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AgentKey');

// ---- PATCH /api/employers/{id} -----------------------------------------------------------------

/** TIP-403 ids 0 (reject all) and 1 (allow all) are built in; employer policies start at 2. */
export const MAX_POLICY_ID = Number.MAX_SAFE_INTEGER;

export const UpdateEmployerBody = z
  .strictObject({
    name: plainText(200).optional().openapi({ example: 'Acme Robotics' }),
    tip403_policy_id: z
      .number()
      .int()
      .min(2)
      .max(MAX_POLICY_ID)
      .nullable()
      .optional()
      .openapi({ description: 'A TIP-403 policy id (>= 2) that exists on the Tempo chain; null clears it.' }),
    pay_schedule: PayScheduleInput.nullable().optional().openapi({ description: 'The pay schedule; null clears it.' }),
  })
  .refine((body) => Object.keys(body).length > 0, 'at least one of name, tip403_policy_id, pay_schedule is required')
  .openapi('UpdateEmployerRequest');

// ---- PATCH /api/employers/{id}/team/{employeeId} -------------------------------------------------

export const TeamMemberParams = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'Employer id.' }),
  employeeId: z.uuid().openapi({ param: { name: 'employeeId', in: 'path' }, description: 'Employee id.' }),
});

export const MANUAL_REVIEW_DECISIONS = ['pending', 'approved', 'rejected'] as const;

export const UpdateTeamMemberBody = z
  .strictObject({
    annual_salary_usd: usdAmountSchema.optional(),
    payroll_paused: z.boolean().optional().openapi({ description: 'true leaves the employee out of payroll runs until unpaused.' }),
    remove: z
      .literal(true)
      .optional()
      .openapi({ description: 'Removes the employee (status `removed`); removing twice is a no-op. A removed employee cannot be edited.' }),
    manual_review: z
      .strictObject({
        status: z.enum(MANUAL_REVIEW_DECISIONS),
        note: plainText(1000).optional(),
      })
      .optional()
      .openapi({ description: 'Records the owner\'s review (e.g. approving a payout wallet the employee changed).' }),
    wallet_address: evmAddressSchema.nullable().optional(),
    solana_wallet_address: solanaAddressSchema.nullable().optional(),
    department: plainText(100).nullable().optional(),
    cost_centre: plainText(100).nullable().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'at least one field to change is required')
  .openapi('UpdateTeamMemberRequest');

// ---- POST /api/employees/bulk ------------------------------------------------------------------

export const BULK_MAX_ROWS = 1000;

export const BulkImportBody = z
  .object({
    rows: z
      .array(
        // Validated row by row in the service (an invalid row is reported, not a 400).
        z.record(z.string(), z.unknown()).openapi({
          description:
            'A mapped CSV row with the fields of CreateEmployeeRequest (email, full_name, wallet_address, solana_wallet_address, ' +
            'annual_salary_usd, department, cost_centre), every value a string; blank values count as absent, other keys are ignored.',
          example: { email: 'ada@example.com', full_name: 'Ada Lovelace', annual_salary_usd: '120000', department: 'Engineering' },
        }),
      )
      .min(1)
      .max(BULK_MAX_ROWS)
      .openapi({ description: `1 to ${BULK_MAX_ROWS} mapped rows (see BulkImportRow); each row is validated on its own and reported.` }),
  })
  .openapi('BulkImportRequest');

export const BulkRowResult = z
  .object({
    row: z.number().int().openapi({ description: '1-based position in `rows`.' }),
    status: z.enum(['created', 'existing', 'invalid']),
    id: z.uuid().optional(),
    email: z.string().optional(),
    field: z.string().optional().openapi({ description: 'The offending field of an invalid row.' }),
    reason: z.string().optional(),
  })
  .openapi('BulkImportRowResult');

export const BulkImportResponse = z
  .object({
    employer_id: z.uuid(),
    totals: z.object({
      rows: z.number().int(),
      created: z.number().int(),
      existing: z.number().int(),
      invalid: z.number().int(),
    }),
    results: z.array(BulkRowResult),
  })
  .openapi('BulkImportResult');

// ---- PATCH /api/employees/{id} -----------------------------------------------------------------

export const EmployeeIdParams = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' }, description: 'Employee id.' }),
});

export const UpdateOwnProfileBody = z
  .strictObject({
    full_name: plainText(200).optional(),
    wallet_address: evmAddressSchema.nullable().optional().openapi({
      description: 'Changing it sets manual_review_status to `pending` until the employer approves the new wallet.',
    }),
    solana_wallet_address: solanaAddressSchema.nullable().optional().openapi({
      description: 'Changing it sets manual_review_status to `pending` until the employer approves the new wallet.',
    }),
  })
  .refine((body) => Object.keys(body).length > 0, 'at least one of full_name, wallet_address, solana_wallet_address is required')
  .openapi('UpdateOwnProfileRequest');

/** Identity on paid routes (docs/decisions.md, "Who may call a paid route beyond paying"): one of the two. */
export const PaidIdentityHeaders = z.object({
  [IDENTITY_TOKEN_HEADER.toLowerCase()]: z.string().optional().openapi({ description: 'The identity-provider JWT of the employer owner (or the employee, where allowed).' }),
  [AGENT_KEY_HEADER.toLowerCase()]: z.string().optional().openapi({ description: "The employer's agent key." }),
});
