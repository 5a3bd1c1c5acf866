/** The payroll feature's public face: what the app mounts and what other features may use. */
export { PAYROLL_RUN_STATUSES } from './tables.js';
export { payrollRoutes, decisionRoutes, paidPayrollRoutes } from './routes.js';
export type { PayrollService, RecipientScreen } from './service.js';
export { definePayrollJobs } from './jobs.js';
export { confirmRun, failRun } from './settlement.js';
export { ExecuteBody, HistoryParams, HistoryQuery, PayslipParams } from './schema.js';
/** The AI's anomaly analysis reads runs, their items and the paid history. */
export { findEmployerRun, itemsOfRun, lastPaidWallets, recentPaidAmounts, type ItemRow } from './store.js';
// Read models: the portal's activity feed and the admin view.
export { payrollPaymentFeed, payrollRunCounts, payrollRunsPage, type RunRow } from './store.js';
