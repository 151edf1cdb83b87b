import type { Staging } from '../publish/index.js';
import { toManifestFile } from '../collect/write.js';
import { AUDIT_MANIFEST, type AuditCollection } from './collect.js';

/** Writes every file of the collection, then `_audit-manifest.json`. */
export async function writeAudit(staging: Staging, collection: AuditCollection): Promise<void> {
  for (const [file, bytes] of collection.files) await staging.writeFile(file, bytes);
  // Redacted as every manifest: server text in it may echo a token.
  await staging.writeFile(AUDIT_MANIFEST, toManifestFile(collection.manifest));
}
