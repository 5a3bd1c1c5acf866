/** The users feature's public face: what the app mounts and what other features may use. */
export { signInOptionsRoute, sessionRoute } from './routes.js';
export type { UsersService } from './service.js';
