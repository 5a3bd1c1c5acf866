/** The payroll feature's public face: what the app mounts and what other features may use. */
export { payrollRoutes, decisionRoutes, paidPayrollRoutes } from './routes.js';
export type { PayrollService } from './service.js';
