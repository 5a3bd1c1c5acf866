/** The streams feature's public face: what the app mounts and what other features may use. */
export { streamRoutes } from './routes.js';
export { openStubStream } from './service.js';
