/** The escrow feature's public face: what the app mounts and what other features may use. */
export { escrowRoutes } from './routes.js';
export type { EscrowService } from './service.js';
// The MCP tools' schemas.
export { DeliverBody, EscrowIdParams, PostEscrowBody } from './schema.js';
/** The agents' spend gates count escrow posts toward the poster's caps (given as a port: escrow imports agents). */
export { posterReservations } from './store.js';
// The admin view.
export { escrowMetadataPage, type EscrowMetadataRow } from './store.js';
