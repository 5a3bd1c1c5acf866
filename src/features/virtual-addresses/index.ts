/** The virtual-addresses feature's public face: what the app mounts and what other features may use. */
export { depositAddressRoute, virtualMasterRoutes } from './routes.js';
export type { VirtualMasterService } from './master.js';
