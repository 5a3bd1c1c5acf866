/** The oauth feature's public face: what the app mounts and what other features may use. */
export { oauthRoutes } from './routes.js';
export type { OAuthService } from './service.js';
export { AccessTokens, MCP_SCOPE } from './access-tokens.js';
