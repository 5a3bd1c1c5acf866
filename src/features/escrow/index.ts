/** The escrow feature's public face: what the app mounts and what other features may use. */
export { escrowRoutes } from './routes.js';
export type { EscrowService } from './service.js';
// The MCP tools' schemas.
export { DeliverBody, EscrowIdParams, PostEscrowBody } from './schema.js';
// The admin view.
export { escrowMetadataPage, type EscrowMetadataRow } from './store.js';
