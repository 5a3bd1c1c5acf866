/** The reputation feature's public face: what the app mounts and what other features may use. */
export { reputationRoutes } from './routes.js';
export type { ReputationService } from './service.js';
