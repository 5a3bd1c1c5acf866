/** The admin feature's public face: what the app mounts and what other features may use. */
export { adminRoutes } from './routes.js';
export type { AdminService } from './service.js';
export { jobCounts, jobsAvailable } from './store.js';
