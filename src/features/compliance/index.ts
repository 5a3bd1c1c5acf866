/** The compliance feature's public face: what the app mounts and what other features may use. */
export { complianceRoutes } from './routes.js';
export { BUILTIN_SANCTIONS, ComplianceService } from './service.js';
export { CheckBody } from './schema.js';
/** The AI's compliance explanation reads the latest check and the lists. */
export { latestEvent, listingsNow, type Listing } from './store.js';
