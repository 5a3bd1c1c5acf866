/** The treasury feature's public face: what the app mounts and what other features may use. */
export { treasuryRoutes } from './routes.js';
export type { TreasuryService } from './service.js';
