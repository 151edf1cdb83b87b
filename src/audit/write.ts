import type { Staging } from '../publish/index.js';
import { AUDIT_MANIFEST, type AuditCollection } from './collect.js';

export function toJsonFile(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Writes every file of the collection, then `_audit-manifest.json`. */
export async function writeAudit(staging: Staging, collection: AuditCollection): Promise<void> {
  for (const [file, bytes] of collection.files) await staging.writeFile(file, bytes);
  await staging.writeFile(AUDIT_MANIFEST, toJsonFile(collection.manifest));
}
