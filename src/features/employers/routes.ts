import { createRoute, type RouteHandler } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../http/context.js';
import { featureApp, type FeatureApp } from '../../http/feature-app.js';
import { ErrorSchema, errorResponses, jsonBody, jsonContent, validationHook } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import {
  AgentKeyResponse,
  BulkImportBody,
  BulkImportResponse,
  CreateEmployeeBody,
  CreateEmployeeResponse,
  CreateEmployerBody,
  Employee,
  EmployeeIdParams,
  Employer,
  EmployerIdParams,
  PayScheduleInput,
  TeamMemberParams,
  TeamQuery,
  TeamResponse,
  UpdateEmployerBody,
  UpdateOwnProfileBody,
  UpdateTeamMemberBody,
} from './schema.js';
import type { EmployersService, NewEmployeeInput, PolicyExists } from './service.js';
import type { EmployeeRow, EmployerRow } from './store.js';
import { unpayableReason } from './payability.js';
import { nextPayment, scheduleFromColumns, utcDay, type PaySchedule } from './pay-schedule.js';

export interface EmployerRouteDeps {
  employers: EmployersService;
  requireUser: MiddlewareHandler<AppEnv>;
  idempotency: MiddlewareHandler<AppEnv>;
  /** Checks a TIP-403 policy id on the Tempo chain; absent when the app runs without chains (ids are then stored unchecked). */
  policyExists?: PolicyExists | undefined;
  /** The service's public URL; invite emails link to its employee portal. */
  publicBaseUrl: string;
}

/**
 * The default validation hook, except that an unknown key of a strict (PATCH) body is named as
 * the offending field, so a typo is a 400 naming it instead of a silently ignored key.
 */
function namingUnknownKeys<R>(
  result: ({ success: true } | { success: false; error: z.ZodError }) & { target: string },
  c: Context,
): R | undefined {
  if (result.success) return undefined;
  const issues = result.error.issues.map((issue) =>
    issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined
      ? { ...issue, path: [...issue.path, issue.keys[0]], message: 'is not a field this request can change' }
      : issue,
  );
  return validationHook({ success: false, error: new z.ZodError(issues), target: result.target }, c) as R | undefined;
}

function createInput(body: {
  email: string;
  full_name: string;
  wallet_address?: string | undefined;
  solana_wallet_address?: string | undefined;
  annual_salary_usd?: string | undefined;
  department?: string | undefined;
  cost_centre?: string | undefined;
}): NewEmployeeInput {
  return {
    email: body.email,
    fullName: body.full_name,
    walletAddress: body.wallet_address,
    solanaWalletAddress: body.solana_wallet_address,
    annualSalaryUsd: body.annual_salary_usd,
    department: body.department,
    costCentre: body.cost_centre,
  };
}

const security = [{ bearerAuth: [] }];

// Middleware (`requireUser`, and `idempotency` on the routes that change something) is added where
// the routes are mounted: it needs the app's dependencies.
const createEmployer = createRoute({
  method: 'post',
  path: '/api/employers',
  tags: ['Employers'],
  summary: "Create the caller's employer, or return the one they already own",
  security,
  request: { body: jsonBody(CreateEmployerBody) },
  responses: {
    201: jsonContent(Employer, 'Created.'),
    200: jsonContent(Employer, 'The employer the caller already owns.'),
    ...errorResponses(400, 401, 409, 413, 415, 422),
  },
});

const readEmployer = createRoute({
  method: 'get',
  path: '/api/employers/{id}',
  tags: ['Employers'],
  summary: "The caller's employer (owner only)",
  security,
  request: { params: EmployerIdParams },
  responses: {
    200: jsonContent(Employer, 'The employer (`created` is false).'),
    ...errorResponses(400, 401, 404),
  },
});

const listTeam = createRoute({
  method: 'get',
  path: '/api/employers/{id}/team',
  tags: ['Employers'],
  summary: 'List active employees',
  security,
  request: { params: EmployerIdParams, query: TeamQuery },
  responses: {
    200: jsonContent(TeamResponse, 'Active employees, oldest first.'),
    ...errorResponses(400, 401, 404),
  },
});

const addEmployee = createRoute({
  method: 'post',
  path: '/api/employers/{id}/team',
  tags: ['Employers'],
  summary: 'Add an employee (or return the existing one with this email)',
  security,
  request: { params: EmployerIdParams, body: jsonBody(CreateEmployeeBody) },
  responses: {
    201: jsonContent(CreateEmployeeResponse, 'Created.'),
    200: jsonContent(CreateEmployeeResponse, 'An employee with this email already existed.'),
    ...errorResponses(400, 401, 404, 409, 413, 415, 422),
  },
});

const updateEmployer = createRoute({
  method: 'patch',
  path: '/api/employers/{id}',
  tags: ['Employers'],
  summary: 'Rename the employer, set its TIP-403 policy or its pay schedule',
  description:
    'Owner only. `tip403_policy_id` must exist on the Tempo chain (422 `POLICY_NOT_FOUND` otherwise); null clears it. ' +
    '`pay_schedule` takes `frequency` and its anchor (`pay_day` for monthly, `anchor_date` for weekly and biweekly, none for semi_monthly); null clears it. ' +
    'Fields left out stay as they are; unknown fields are refused.',
  security,
  request: { params: EmployerIdParams, body: jsonBody(UpdateEmployerBody) },
  responses: {
    200: jsonContent(Employer, 'The employer after the change (`created` is false).'),
    ...errorResponses(400, 401, 404, 409, 413, 415),
    422: jsonContent(ErrorSchema, '`POLICY_NOT_FOUND`: no such TIP-403 policy on the Tempo chain; or the same Idempotency-Key with a different request.'),
  },
});

const updateTeamMember = createRoute({
  method: 'patch',
  path: '/api/employers/{id}/team/{employeeId}',
  tags: ['Employers'],
  summary: 'Update salary, pause payroll, record a manual review, or remove an employee',
  description:
    'Owner only. Send at least one field; fields left out stay as they are. A removed employee cannot be edited ' +
    '(409 `EMPLOYEE_REMOVED`); `remove: true` on a removed employee is a no-op. Concurrent edits apply one after another.',
  security,
  request: { params: TeamMemberParams, body: jsonBody(UpdateTeamMemberBody) },
  responses: {
    200: jsonContent(Employee, 'The employee after the change.'),
    ...errorResponses(400, 401, 404, 409, 413, 415, 422),
  },
});

const createEmployee = createRoute({
  method: 'post',
  path: '/api/employees',
  tags: ['Employees'],
  summary: "Add an employee to the caller's employer and email them an invite",
  description:
    "Owner of an employer only (the caller's own employer; 404 when they own none). The same email at this employer " +
    'returns the existing employee (200, `created: false`, no second invite).',
  security,
  request: { body: jsonBody(CreateEmployeeBody) },
  responses: {
    201: jsonContent(CreateEmployeeResponse, 'Created; the invite email is queued.'),
    200: jsonContent(CreateEmployeeResponse, 'An employee with this email already existed.'),
    ...errorResponses(400, 401, 404, 409, 413, 415, 422),
  },
});

const importEmployees = createRoute({
  method: 'post',
  path: '/api/employees/bulk',
  tags: ['Employees'],
  summary: 'Bulk import employees from mapped CSV rows',
  description:
    'Owner of an employer only. Every row is validated and reported (`created`, `existing` or `invalid` with `field` ' +
    'and `reason`); the valid rows are written in one transaction, all or none. A repeated email is invalid in the later ' +
    'row. New employees get an invite email.',
  security,
  request: { body: jsonBody(BulkImportBody) },
  responses: {
    200: jsonContent(BulkImportResponse, 'One result per row, in order, and the totals.'),
    ...errorResponses(400, 401, 404, 409, 413, 415, 422),
  },
});

const updateOwnProfile = createRoute({
  method: 'patch',
  path: '/api/employees/{id}',
  tags: ['Employees'],
  summary: 'The employee updates their own name and payout wallets',
  description:
    'The employee only (anyone else: 404). Changing a payout wallet sets `manual_review_status` to `pending`: the ' +
    'employer approves the new wallet (PATCH /api/employers/{id}/team/{employeeId} with `manual_review`) before payroll pays it.',
  security,
  request: { params: EmployeeIdParams, body: jsonBody(UpdateOwnProfileBody) },
  responses: {
    200: jsonContent(Employee, 'The employee record after the change.'),
    ...errorResponses(400, 401, 404, 409, 413, 415, 422),
  },
});

const rotateAgentKey = createRoute({
  method: 'post',
  path: '/api/employers/{id}/agent-key',
  tags: ['Employers'],
  summary: "Generate or rotate the employer's agent key (shown once)",
  security,
  request: { params: EmployerIdParams },
  responses: {
    201: jsonContent(AgentKeyResponse, 'The new key; any earlier key stopped working.'),
    ...errorResponses(400, 401, 404),
  },
});

type Handler<R extends Parameters<typeof createRoute>[0]> = (deps: EmployerRouteDeps) => RouteHandler<R, AppEnv>;

/** Invite emails link to the employee portal. */
const inviteOptions = (deps: EmployerRouteDeps) => ({ portalUrl: `${deps.publicBaseUrl}/portal` });

const handleCreateEmployer: Handler<typeof createEmployer> = (deps) => async (c) => {
  const body = c.req.valid('json');
  const { employer, created } = await deps.employers.createOrGet(c.var.caller, { name: body.name, adminWallet: body.admin_wallet }, c.var.requestId);
  return c.json(presentEmployer(employer, created, deps.employers.now()), created ? 201 : 200);
};

const handleListTeam: Handler<typeof listTeam> = (deps) => async (c) => {
  const { id } = c.req.valid('param');
  const query = c.req.valid('query');
  const { rows, total } = await deps.employers.listTeam(c.var.caller, id, query);
  return c.json({ employer_id: id, employees: rows.map(presentEmployee), page: query.page, limit: query.limit, total }, 200);
};

const handleAddEmployee: Handler<typeof addEmployee> = (deps) => async (c) => {
  const { id } = c.req.valid('param');
  const body = c.req.valid('json');
  const { employee, created } = await deps.employers.addEmployee(c.var.caller, id, createInput(body), c.var.requestId);
  return c.json({ ...presentEmployee(employee), created }, created ? 201 : 200);
};

const handleReadEmployer: Handler<typeof readEmployer> = (deps) => async (c) => {
  const employer = await deps.employers.ownedEmployer(c.var.caller, c.req.valid('param').id);
  return c.json(presentEmployer(employer, false, deps.employers.now()), 200);
};

const handleUpdateEmployer: Handler<typeof updateEmployer> = (deps) => async (c) => {
  const { id } = c.req.valid('param');
  const body = c.req.valid('json');
  const employer = await deps.employers.updateEmployer(
    c.var.caller,
    id,
    { name: body.name, tip403PolicyId: body.tip403_policy_id, paySchedule: body.pay_schedule === undefined ? undefined : scheduleInput(body.pay_schedule) },
    c.var.requestId,
    deps.policyExists,
  );
  return c.json(presentEmployer(employer, false, deps.employers.now()), 200);
};

const handleUpdateTeamMember: Handler<typeof updateTeamMember> = (deps) => async (c) => {
  const { id, employeeId } = c.req.valid('param');
  const body = c.req.valid('json');
  const employee = await deps.employers.updateTeamMember(
    c.var.caller,
    id,
    employeeId,
    {
      annualSalaryUsd: body.annual_salary_usd,
      payrollPaused: body.payroll_paused,
      remove: body.remove,
      manualReview: body.manual_review,
      walletAddress: body.wallet_address,
      solanaWalletAddress: body.solana_wallet_address,
      department: body.department,
      costCentre: body.cost_centre,
    },
    c.var.requestId,
  );
  return c.json(presentEmployee(employee), 200);
};

const handleCreateEmployee: Handler<typeof createEmployee> = (deps) => {
  const invite = inviteOptions(deps);
  return async (c) => {
    const body = c.req.valid('json');
    const { employee, created } = await deps.employers.createEmployee(c.var.caller, createInput(body), c.var.requestId, invite);
    return c.json({ ...presentEmployee(employee), created }, created ? 201 : 200);
  };
};

const handleImportEmployees: Handler<typeof importEmployees> = (deps) => {
  const invite = inviteOptions(deps);
  return async (c) => {
    const { rows } = c.req.valid('json');
    const report = await deps.employers.importEmployees(c.var.caller, rows, c.var.requestId, invite);
    return c.json({ employer_id: report.employerId, totals: report.totals, results: report.results }, 200);
  };
};

const handleUpdateOwnProfile: Handler<typeof updateOwnProfile> = (deps) => async (c) => {
  const { id } = c.req.valid('param');
  const body = c.req.valid('json');
  const employee = await deps.employers.updateOwnProfile(
    c.var.caller,
    id,
    { fullName: body.full_name, walletAddress: body.wallet_address, solanaWalletAddress: body.solana_wallet_address },
    c.var.requestId,
  );
  return c.json(presentEmployee(employee), 200);
};

const handleRotateAgentKey: Handler<typeof rotateAgentKey> = (deps) => async (c) => {
  const { id } = c.req.valid('param');
  const key = await deps.employers.rotateAgentKey(c.var.caller, id, c.var.requestId);
  c.header('Cache-Control', 'no-store');
  return c.json({ employer_id: id, agent_key: key.key, prefix: key.prefix, rotated: key.rotated, created_at: key.rotatedAt.toISOString() }, 201);
};

/**
 * The employer's account and team (spec 4.8) and the employee's own profile. Every route takes
 * `requireUser`; those that change something also take `idempotency`.
 */
export function employerRoutes(deps: EmployerRouteDeps): FeatureApp {
  const app = featureApp();
  const read = [deps.requireUser];
  const write = [deps.requireUser, deps.idempotency];
  app.openapi({ ...createEmployer, middleware: write }, handleCreateEmployer(deps));
  app.openapi({ ...readEmployer, middleware: read }, handleReadEmployer(deps));
  app.openapi({ ...listTeam, middleware: read }, handleListTeam(deps));
  app.openapi({ ...addEmployee, middleware: write }, handleAddEmployee(deps));
  app.openapi({ ...updateEmployer, middleware: write }, handleUpdateEmployer(deps), namingUnknownKeys);
  app.openapi({ ...updateTeamMember, middleware: write }, handleUpdateTeamMember(deps), namingUnknownKeys);
  app.openapi({ ...createEmployee, middleware: write }, handleCreateEmployee(deps));
  app.openapi({ ...importEmployees, middleware: write }, handleImportEmployees(deps));
  app.openapi({ ...updateOwnProfile, middleware: write }, handleUpdateOwnProfile(deps), namingUnknownKeys);
  app.openapi({ ...rotateAgentKey, middleware: read }, handleRotateAgentKey(deps));
  return app;
}

/** The PATCH body's schedule (validated: each frequency carries its own anchor) as the service takes it. */
function scheduleInput(body: z.infer<typeof PayScheduleInput> | null): PaySchedule | null {
  if (body === null) return null;
  if (body.frequency === 'monthly') return { frequency: 'monthly', payDay: body.pay_day };
  if (body.frequency === 'semi_monthly') return { frequency: 'semi_monthly' };
  return { frequency: body.frequency, anchorDate: body.anchor_date };
}

/** The schedule with its next pay date (today, UTC, or later) and the period that pays. */
function presentSchedule(employer: EmployerRow, now: Date) {
  const schedule = scheduleFromColumns(employer);
  if (!schedule) return null;
  const next = nextPayment(schedule, utcDay(now));
  return {
    frequency: schedule.frequency,
    pay_day: employer.payDay,
    anchor_date: employer.payAnchorDate,
    next_pay_date: next.payDate,
    next_period: next.period,
  };
}

function presentEmployer(employer: EmployerRow, created: boolean, now: Date) {
  return {
    id: employer.id,
    name: employer.name,
    admin_wallet: employer.adminWallet,
    employer_account_id: employer.employerAccountId,
    tip403_policy_id: employer.tip403PolicyId === null ? null : Number(employer.tip403PolicyId),
    pay_schedule: presentSchedule(employer, now),
    created_at: employer.createdAt.toISOString(),
    created,
  };
}

export function presentEmployee(employee: EmployeeRow) {
  return {
    id: employee.id,
    employer_id: employee.employerId,
    email: employee.email,
    full_name: employee.fullName,
    wallet_address: employee.walletAddress,
    solana_wallet_address: employee.solanaWalletAddress,
    annual_salary_usd: formatUsd(employee.annualSalary),
    department: employee.department,
    cost_centre: employee.costCentre,
    status: employee.status,
    payroll_paused: employee.payrollPaused,
    manual_review_status: employee.manualReviewStatus,
    manual_review_note: employee.manualReviewNote,
    manual_reviewed_at: employee.manualReviewedAt?.toISOString() ?? null,
    kyc_status: employee.kycStatus,
    unpayable_reason: unpayableReason(employee),
    linked_user: employee.userId !== null,
    invited_at: employee.invitedAt?.toISOString() ?? null,
    removed_at: employee.removedAt?.toISOString() ?? null,
    created_at: employee.createdAt.toISOString(),
  };
}
