/** The agents feature's public face: what the app mounts and what other features may use. */
export { agentRoutes } from './routes.js';
export type { AgentPayService } from './pay.js';
export type { AgentsService } from './service.js';
