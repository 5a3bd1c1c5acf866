import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../../http/context.js';
import { errorResponses, jsonBody, jsonContent } from '../../http/validation.js';
import { formatUsd } from '../../money.js';
import {
  AgentKeyResponse,
  CreateEmployeeBody,
  CreateEmployeeResponse,
  CreateEmployerBody,
  Employer,
  EmployerIdParams,
  TeamQuery,
  TeamResponse,
} from './schema.js';
import type { EmployersService } from './service.js';
import type { EmployeeRow, EmployerRow } from './store.js';

export interface EmployerRouteDeps {
  employers: EmployersService;
  requireUser: MiddlewareHandler<AppEnv>;
  idempotency: MiddlewareHandler<AppEnv>;
}

const security = [{ bearerAuth: [] }];

export function registerEmployerRoutes(app: OpenAPIHono<AppEnv>, deps: EmployerRouteDeps): void {
  const createEmployer = createRoute({
    method: 'post',
    path: '/api/employers',
    tags: ['Employers'],
    summary: "Create the caller's employer, or return the one they already own",
    security,
    middleware: [deps.requireUser, deps.idempotency] as const,
    request: { body: jsonBody(CreateEmployerBody) },
    responses: {
      201: jsonContent(Employer, 'Created.'),
      200: jsonContent(Employer, 'The employer the caller already owns.'),
      ...errorResponses(400, 401, 409, 413, 415, 422),
    },
  });
  app.openapi(createEmployer, async (c) => {
    const body = c.req.valid('json');
    const { employer, created } = await deps.employers.createOrGet(
      c.var.caller,
      { name: body.name, adminWallet: body.admin_wallet },
      c.var.requestId,
    );
    return c.json(presentEmployer(employer, created), created ? 201 : 200);
  });

  const listTeam = createRoute({
    method: 'get',
    path: '/api/employers/{id}/team',
    tags: ['Employers'],
    summary: 'List active employees',
    security,
    middleware: [deps.requireUser] as const,
    request: { params: EmployerIdParams, query: TeamQuery },
    responses: {
      200: jsonContent(TeamResponse, 'Active employees, oldest first.'),
      ...errorResponses(400, 401, 404),
    },
  });
  app.openapi(listTeam, async (c) => {
    const { id } = c.req.valid('param');
    const query = c.req.valid('query');
    const { rows, total } = await deps.employers.listTeam(c.var.caller, id, query);
    return c.json({ employer_id: id, employees: rows.map(presentEmployee), page: query.page, limit: query.limit, total }, 200);
  });

  const addEmployee = createRoute({
    method: 'post',
    path: '/api/employers/{id}/team',
    tags: ['Employers'],
    summary: 'Add an employee (or return the existing one with this email)',
    security,
    middleware: [deps.requireUser, deps.idempotency] as const,
    request: { params: EmployerIdParams, body: jsonBody(CreateEmployeeBody) },
    responses: {
      201: jsonContent(CreateEmployeeResponse, 'Created.'),
      200: jsonContent(CreateEmployeeResponse, 'An employee with this email already existed.'),
      ...errorResponses(400, 401, 404, 409, 413, 415, 422),
    },
  });
  app.openapi(addEmployee, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const { employee, created } = await deps.employers.addEmployee(
      c.var.caller,
      id,
      {
        email: body.email,
        fullName: body.full_name,
        walletAddress: body.wallet_address,
        solanaWalletAddress: body.solana_wallet_address,
        annualSalaryUsd: body.annual_salary_usd,
        department: body.department,
        costCentre: body.cost_centre,
      },
      c.var.requestId,
    );
    return c.json({ ...presentEmployee(employee), created }, created ? 201 : 200);
  });
  const rotateAgentKey = createRoute({
    method: 'post',
    path: '/api/employers/{id}/agent-key',
    tags: ['Employers'],
    summary: "Generate or rotate the employer's agent key (shown once)",
    security,
    middleware: [deps.requireUser] as const,
    request: { params: EmployerIdParams },
    responses: {
      201: jsonContent(AgentKeyResponse, 'The new key; any earlier key stopped working.'),
      ...errorResponses(400, 401, 404),
    },
  });
  app.openapi(rotateAgentKey, async (c) => {
    const { id } = c.req.valid('param');
    const key = await deps.employers.rotateAgentKey(c.var.caller, id, c.var.requestId);
    c.header('Cache-Control', 'no-store');
    return c.json({ employer_id: id, agent_key: key.key, prefix: key.prefix, rotated: key.rotated, created_at: key.rotatedAt.toISOString() }, 201);
  });
}

function presentEmployer(employer: EmployerRow, created: boolean) {
  return {
    id: employer.id,
    name: employer.name,
    admin_wallet: employer.adminWallet,
    employer_account_id: employer.employerAccountId,
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
    kyc_status: employee.kycStatus,
    linked_user: employee.userId !== null,
    created_at: employee.createdAt.toISOString(),
  };
}
