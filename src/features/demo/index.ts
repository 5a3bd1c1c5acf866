/** The demo feature's public face: what the app mounts and what other features may use. */
export { demoAgentRoutes } from './routes.js';
export type { DemoAgentService } from './service.js';
