/** The treasury feature's public face: what the app mounts and what other features may use. */
export { treasuryRoutes } from './routes.js';
export { TreasuryService } from './service.js';
export type { TreasuryOperations } from './operations.js';
export { numbersIn } from './optimizer.js';
export { OptimizeBody, SessionBody, YieldRatesQuery } from './schema.js';
export { TreasuryHistory } from './history.js';
export { defineTreasuryJobs } from './jobs.js';
