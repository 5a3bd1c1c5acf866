/** The compliance feature's public face: what the app mounts and what other features may use. */
export { complianceRoutes } from './routes.js';
export { ComplianceService } from './service.js';
export { sanctionsSnapshot } from './sanctions-list.js';
export { CheckBody } from './schema.js';
/** The AI's compliance explanation reads the latest check and the lists. */
export { latestEvent, listingsNow, type Listing } from './store.js';
/** The admin overview and the metrics read the sanctions list in force. */
export { sanctionsState } from './store.js';
