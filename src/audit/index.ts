/** The audit service client: route catalog, models, collection, files. */
export * from './catalog.js';
export * from './collect.js';
export * from './settings.js';
export * from './summary.js';
export { writeAudit } from './write.js';
export type { AuditRouteRecord } from './fetch.js';
