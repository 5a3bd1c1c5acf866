/** The ai feature's public face: what the app mounts and what other features may use. */
export { aiRoutes } from './routes.js';
export type { AiService } from './service.js';
