/** The announcements feature's public face: what the app mounts and what other features may use. */
export { announcementRoutes } from './routes.js';
export type { AnnouncementsService } from './service.js';
