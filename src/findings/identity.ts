/**
 * A finding's stable id (docs/findings.md): a UUID version 5 (RFC 9562
 * §5.5, SHA-1) in the namespace FINDING_ID_NAMESPACE, of the name
 * `JSON.stringify([rule, subject export, subject key, part])`, where `part`
 * is what tells apart several findings of one rule on one subject (the
 * requirement of the certification rules; null where a subject has one
 * finding). Nothing in it depends on the night, the machine or the order of
 * the findings, so a finding keeps its id from one night to the next.
 */
import { hash } from 'node:crypto';
import type { RowRef } from './define.js';

/** The namespace of the findings' ids: itself the UUID v5 of `svc-snapshot findings` in RFC 9562's URL namespace. */
export const FINDING_ID_NAMESPACE = '53dfa2c6-4101-551d-b900-908101cfc3d1';

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

// Every finding's id is in this namespace: its bytes are made once, not once a finding.
const FINDING_ID_NAMESPACE_BYTES = uuidBytes(FINDING_ID_NAMESPACE);

/** RFC 9562 UUID version 5 of `name` (UTF-8) in `namespace`. */
export function uuidV5(namespace: string, name: string): string {
  const ns = namespace === FINDING_ID_NAMESPACE ? FINDING_ID_NAMESPACE_BYTES : uuidBytes(namespace);
  const b = hash('sha1', Buffer.concat([ns, Buffer.from(name, 'utf8')]), 'buffer').subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A finding's id, of the name documented in docs/findings.md. */
export function findingId(rule: string, subject: RowRef, part: string | undefined): string {
  return uuidV5(FINDING_ID_NAMESPACE, JSON.stringify([rule, subject.export, subject.key, part ?? null]));
}
