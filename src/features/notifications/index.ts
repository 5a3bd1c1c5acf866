/** The notifications feature's public face: what the app mounts and what other features may use. */
export { notificationRoutes } from './routes.js';
export type { NotificationsService } from './service.js';
export { agentSpikeDetected, notify } from './service.js';
export { SEVERITIES } from './tables.js';
