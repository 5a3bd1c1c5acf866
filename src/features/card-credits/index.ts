/** The card-credits feature's public face: what the app mounts. */
export { cardCreditRoutes } from './routes.js';
export { CardCreditAccess } from './service.js';
