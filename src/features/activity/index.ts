/** The activity feature's public face: what the app mounts and what other features may use. */
export { activityRoutes } from './routes.js';
export type { ActivityService } from './service.js';
