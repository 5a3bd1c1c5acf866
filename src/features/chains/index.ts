/** The chains feature's public face: the public network and contract ids. */
export { publicChainRoutes, publicNetworks } from './routes.js';
