/** The wages feature's public face: what the app mounts and what other features may use. */
export { wagesRoutes } from './routes.js';
export type { WagesService } from './service.js';
export { queueReleasedStream } from './service.js';
export { defineWagesJobs } from './jobs.js';
export { AdvanceBody } from './schema.js';
// The portal's activity feed.
export { claimedAdvanceFeed } from './store.js';
