/** The dev feature's public face: what the app mounts and what other features may use. */
export { devRoutes } from './routes.js';
export { Faucet } from './faucet.js';
export { devWallets } from './wallets.js';
