import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandDeps } from '../../src/commands/context.js';
import { EXPORTS } from '../../src/exports/catalog.js';
import { exportFileName } from '../../src/exports/serialize.js';
import { sortRecords } from '../../src/exports/order.js';
import { serializeExport } from '../../src/exports/serialize.js';
import { plainReporter } from '../../src/progress/reporter.js';
import { rec, type Rec } from './snapshot-dir.js';

export { rec };

export interface Night {
  date: string;
  time?: string;
  baseUrl?: string;
  records?: Record<string, Rec[]>;
  unavailable?: Record<string, string>;
  complete?: boolean;
}

/** A snapshot directory as the snapshot command writes it, with the manifest's sha256 of every export file. */
export function writeNight(dir: string, night: Night): string {
  mkdirSync(dir, { recursive: true });
  const exports = EXPORTS.map((def) => {
    const reason = night.unavailable?.[def.name];
    const records = reason !== undefined ? [] : [...(night.records?.[def.name] ?? [])].map((r) => rec(def.name, r));
    sortRecords(
      records,
      def.key,
      def.columns.map((c) => c.name),
    );
    const file = exportFileName(def.name, records.length, night.date);
    const text = serializeExport({ records });
    writeFileSync(join(dir, file), text);
    const sha256 = createHash('sha256').update(text).digest('hex');
    return {
      export: def.name,
      file,
      count: records.length,
      available: reason === undefined,
      ...(reason !== undefined ? { reason } : {}),
      sha256,
    };
  });
  const manifest = {
    kind: 'snapshot',
    source: 'live',
    tool: { name: 'svc-snapshot', version: '1.0.0' },
    baseUrl: night.baseUrl ?? 'https://platform.example.org',
    time: night.time ?? `${night.date}T02:00:00.000Z`,
    date: night.date,
    authMode: 'token',
    realms: { source: 'GET /api/realms', ids: ['libvirt'] },
    exports,
    nullFields: [],
    routes: [],
    validation: { issues: 0, samples: [] },
    drift: [],
    complete: night.complete ?? true,
  };
  writeFileSync(join(dir, '_snapshot-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

export interface Captured {
  deps: CommandDeps;
  out: () => string;
  err: () => string;
}

export function captureDeps(cwd: string, env: NodeJS.ProcessEnv = {}): Captured {
  let out = '';
  let err = '';
  return {
    deps: {
      env,
      cwd,
      stdout: (t) => (out += t),
      reporter: plainReporter((l) => (err += l), false),
      now: () => new Date('2026-11-22T02:00:00Z'),
    },
    out: () => out,
    err: () => err,
  };
}

/** Three nights of one site: a user deactivated, a drive moved to another team, a user gone and back, storage growing. */
export const USERS = (names: Record<string, string>) =>
  Object.entries(names).map(([id, firstName]) => ({ id, firstName, permissions: ['read', 'write'] }));

export const NIGHTS: Night[] = [
  {
    date: '2026-11-01',
    records: {
      users: USERS({ u1: 'Ann', u2: 'Bob', u3: 'Zoë \u0007 "quoted"' }),
      user_profiles: [
        { id: 'u1', state: 'ACTIVE', lastLogin: 1761955200000 },
        { id: 'u2', state: 'ACTIVE' },
      ],
      drives: [
        { id: 'd1', team: 't1', capacity: 1.5e12, noBackup: true },
        { id: 'd2', team: 't1', capacity: 10 },
      ],
      teams: [{ id: 't1', name: 'one', usage_drives_used: 100 }],
      team_memberships: [
        { teamID: 't1', memberID: 'u1', perm: 'admin' },
        { teamID: 't1', memberID: 'u2', perm: 'member' },
      ],
    },
  },
  {
    date: '2026-11-02',
    records: {
      users: USERS({ u1: 'Ann', u3: 'Zoë \u0007 "quoted"' }),
      user_profiles: [
        { id: 'u1', state: 'DEACTIVATED', stateReason: 'left', lastLogin: 1761955200000 },
        { id: 'u2', state: 'ACTIVE' },
      ],
      drives: [
        { id: 'd1', team: 't2', capacity: 1.5e12, noBackup: true },
        { id: 'd2', team: 't1', capacity: 10 },
      ],
      teams: [
        { id: 't1', name: 'one', usage_drives_used: 150 },
        { id: 't2', name: 'two', usage_drives_used: 7 },
      ],
      team_memberships: [{ teamID: 't1', memberID: 'u1', perm: 'admin' }],
    },
    unavailable: { vm_images: 'route failed' },
  },
  {
    date: '2026-11-03',
    records: {
      users: USERS({ u1: 'Ann', u2: 'Bob', u3: 'Zoë \u0007 "quoted"' }),
      user_profiles: [
        { id: 'u1', state: 'DEACTIVATED', stateReason: 'left', lastLogin: 1761955200000 },
        { id: 'u2', state: 'ACTIVE' },
      ],
      drives: [{ id: 'd1', team: 't2', capacity: 1.6e12, noBackup: true }],
      teams: [
        { id: 't1', name: 'one', usage_drives_used: 150 },
        { id: 't2', name: 'two', usage_drives_used: 9.25 },
      ],
      team_memberships: [{ teamID: 't1', memberID: 'u1', perm: 'admin' }],
    },
  },
];

/** Rewrites one export file of a night and makes the manifest's sha256 match it, as a hostile or careless hand would; returns the new text. */
export function tamperExport(dir: string, exportName: string, change: (text: string) => string): string {
  const file = readdirSync(dir).find((n) => n.includes(`-${exportName} (`))!;
  const text = change(readFileSync(join(dir, file), 'utf8'));
  writeFileSync(join(dir, file), text);
  const manifest = JSON.parse(readFileSync(join(dir, '_snapshot-manifest.json'), 'utf8')) as {
    exports: { export: string; sha256: string }[];
  };
  manifest.exports.find((e) => e.export === exportName)!.sha256 = createHash('sha256').update(text).digest('hex');
  writeFileSync(join(dir, '_snapshot-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return text;
}

/** An export file's text with the record of user `a` and the one after it swapped: each record's text as written, their order not. */
export function swapWithNext(text: string, id: string): string {
  const a = text.indexOf(`  {\n    "id": "${id}"`);
  const b = text.indexOf('\n  {', a + 1) + 1;
  const c = text.indexOf('\n  {', b + 1) + 1;
  return text.slice(0, a) + text.slice(b, c - 2) + ',\n' + text.slice(a, b - 2) + text.slice(c - 2);
}
