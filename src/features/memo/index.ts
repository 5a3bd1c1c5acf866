/** The memo feature's public face: what the app mounts and what other features may use. */
export { memoRoutes } from './routes.js';
export { decodeMemo, encodeMemo } from './codec.js';
export { DecodeBody, MemoFieldsSchema } from './schema.js';
