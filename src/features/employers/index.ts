/** The employers feature's public face: what the app mounts and what other features may use. */
export { employeesAwaitingKyc, lockEmployee, setBridgeCustomerIfUnset, setKycStatus } from './store.js';
/** The users store's per-request read and sign-in linking. */
export { activeEmployeeIdsOf, linkEmployeesByEmail, ownedEmployerIdOf } from './store.js';
/** Payroll's receipts and the AI's analyses. */
export { employeeContacts, findEmployee, findEmployeesByIds } from './store.js';
export * as virtualMasterStore from './virtual-master-store.js';
export { employerRoutes } from './routes.js';
export type { EmployersService } from './service.js';
export { tip403PolicyExists } from './service.js';
export { unpayableReason } from './payability.js';
export { AGENT_KEY_HEADER, PaidCallers, type PaidCaller } from './paid-caller.js';
export { CreateEmployeeBody, EmployeeIdParams, EmployerIdParams, PaidIdentityHeaders, plainText, solanaAddressSchema } from './schema.js';
export type { EmployeeRow, EmployerRow } from './store.js';
export { EMPLOYEE_STATUSES } from './tables.js';
// The admin view.
export { employerCounts, employerNames, employersPage, type EmployerWithHeadcount } from './store.js';
// Pay schedules (issue 29): payroll's next scheduled pay date and period.
export { nextPayment, periodFor, scheduleFromColumns, utcDay, type PayPeriod, type PaySchedule } from './pay-schedule.js';
export { PayPeriodSchema, isoDateSchema } from './schema.js';
