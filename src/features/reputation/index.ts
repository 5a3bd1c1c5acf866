/** The reputation feature's public face: what the app mounts and what other features may use. */
export { REPUTATION_WRITE_STATUSES } from './tables.js';
export { reputationRoutes } from './routes.js';
export type { ReputationService } from './service.js';
// Used by other features today (agents, escrow, payroll, mcp).
export { enqueueReputationWrite, escrowPayer, type LinkedIdentity, type ReputationTier } from './service.js';
export { ReputationParams, ReputationSummarySchema } from './schema.js';
// The admin view.
export { reputationWriteCounts, reputationWritesPage, type ReputationWriteRow } from './store.js';
