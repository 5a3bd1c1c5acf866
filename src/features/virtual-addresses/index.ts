/** The virtual-addresses feature's public face: what the app mounts and what other features may use. */
export { depositAddressRoute, TIP20_ONLY_WARNING, virtualMasterRoutes } from './routes.js';
export type { VirtualMasterService } from './master.js';
export { userTag, virtualAddress } from './address.js';
// The portal's activity feed.
export { virtualInflowFeed } from './inflow-store.js';
