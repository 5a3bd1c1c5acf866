/** The wages feature's public face: what the app mounts and what other features may use. */
export { wagesRoutes } from './routes.js';
export type { WagesService } from './service.js';
export { queueReleasedStream } from './service.js';
/** Payroll nets claimed advances from a run's pay, in its own transaction. */
export { advancesToNet, netAdvances, releaseNettedAdvances } from './store.js';
export { defineWagesJobs } from './jobs.js';
export { AdvanceBody } from './schema.js';
// The portal's activity feed.
export { claimedAdvanceFeed } from './store.js';
