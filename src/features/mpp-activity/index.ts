/** The mpp-activity feature's public face: what the app mounts and what other features may use. */
export { mppActivityRoutes } from './routes.js';
export type { MppActivityService } from './service.js';
export { PageQuery } from './schema.js';
