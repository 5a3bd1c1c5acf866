/** The ops feature's public face: what the app mounts and what other features may use. */
export { opsRoutes } from './routes.js';
export { createObservability, type Observability } from './observability.js';
export type { ReadinessCheck } from './routes.js';
export { readinessChecks } from './readiness.js';
export type { DependencyHealth } from './dependencies.js';
export type { BusinessEvents } from './business-metrics.js';
