/** The mcp feature's public face: what the app mounts and what other features may use. */
export { mcpRoutes } from './routes.js';
