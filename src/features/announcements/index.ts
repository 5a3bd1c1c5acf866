/** The announcements feature's public face: what the app mounts and what other features may use. */
export { announcementRoutes } from './routes.js';
export type { AnnouncementsService } from './service.js';
export { presentForAdmin } from './service.js';
export { AdminAnnouncement } from './schema.js';
export { listAnnouncements } from './store.js';
