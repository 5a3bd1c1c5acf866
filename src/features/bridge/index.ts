/** The bridge feature's public face: what the app mounts and what other features may use. */
export { bridgeRoutes } from './routes.js';
export type { BridgeService } from './service.js';
export { PaidOfframpBody } from './schema.js';
// The portal's activity feed.
export { offrampFeed } from './store.js';
