import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AuditManifest } from '../../src/audit/collect.js';
import { FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';

const DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../recordings/audit/svc-snapshot-audit-2026-11-21',
);

describe('the recorded audit collection', () => {
  const manifest = JSON.parse(readFileSync(path.join(DIR, '_audit-manifest.json'), 'utf8')) as AuditManifest;

  it('holds exactly the files its manifest lists, each matching its size and sha256', () => {
    expect(readdirSync(DIR).sort()).toEqual([...manifest.routes.map((r) => r.file), '_audit-manifest.json'].sort());
    for (const r of manifest.routes) {
      const bytes = readFileSync(path.join(DIR, r.file));
      expect(bytes.length, r.file).toBe(r.bytes);
      expect(createHash('sha256').update(bytes).digest('hex'), r.file).toBe(r.sha256);
    }
  });

  it('holds no token', () => {
    for (const f of readdirSync(DIR))
      expect(readFileSync(path.join(DIR, f)).includes(Buffer.from(FAKE_AUDIT_TOKEN)), f).toBe(false);
  });
});
