/** The agent-directory feature's public face: what the app mounts and what other features may use. */
export { agentDirectoryRoutes } from './routes.js';
export type { AgentDirectoryService } from './service.js';
// The MCP tools' schemas.
export { AgentProfile, Directory, DirectoryQuery, ProfileParams, RegisterBody } from './schema.js';
