/** The employers feature's public face: what the app mounts and what other features may use. */
export { employerRoutes } from './routes.js';
export type { EmployersService } from './service.js';
export { tip403PolicyExists } from './service.js';
