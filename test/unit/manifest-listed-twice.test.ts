/**
 * A snapshot manifest that lists an export twice, or names one file twice
 * (two exports, or an export and `files`), is refused by openSnapshot
 * (src/snapshot/dir.ts), so that every command that reads a snapshot says
 * the same: exit 1, the snapshot is damaged, and what to do. Before, `history
 * load` failed on a database constraint, `report` on an internal assertion,
 * and others read one file as two exports.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runConvert } from '../../src/commands/convert.js';
import { runDiff } from '../../src/commands/diff.js';
import { runFindings } from '../../src/commands/findings.js';
import { runHistory } from '../../src/commands/history.js';
import { runNotify } from '../../src/commands/notify.js';
import { runReport } from '../../src/commands/report.js';
import { runVerify } from '../../src/commands/verify.js';
import type { CommandDeps, CommandResult } from '../../src/commands/context.js';
import { ending } from '../helpers/command-ending.js';
import { tmpDir } from '../helpers/run-cli.js';
import { rec, writeSnapshot } from '../helpers/snapshot-dir.js';

interface Entry {
  export: string;
  file: string;
  count: number;
  sha256: string;
}
interface Manifest {
  exports: Entry[];
  files?: Array<{ name: string; bytes: number; sha256: string }>;
}

/** A snapshot whose manifest `edit` changed. */
function damaged(edit: (m: Manifest) => void): string {
  const parent = tmpDir();
  const dir = writeSnapshot(join(parent, 'svc-snapshot-2026-11-21'), {
    records: {
      users: [rec('users', { id: 'u1', firstName: 'Ada' })],
      teams: [rec('teams', { id: 't1', name: 'Team 1' })],
    },
  });
  const path = join(dir, '_snapshot-manifest.json');
  const m = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  edit(m);
  writeFileSync(path, `${JSON.stringify(m, null, 2)}\n`);
  return dir;
}

const manifests: Array<[string, (m: Manifest) => void, RegExp]> = [
  ['an export listed twice', (m) => m.exports.push({ ...m.exports[0]! }), /lists export users twice/],
  [
    'two exports naming the same file',
    (m) => {
      const [users, teams] = [
        m.exports.find((e) => e.export === 'users')!,
        m.exports.find((e) => e.export === 'teams')!,
      ];
      Object.assign(teams, { file: users.file, count: users.count, sha256: users.sha256 });
    },
    /names the file 1-users \(11-21-2026\)\.json twice/,
  ],
  [
    'an export file named again in files',
    (m) => {
      const users = m.exports.find((e) => e.export === 'users')!;
      m.files = [{ name: users.file, bytes: 1, sha256: users.sha256 }];
    },
    /names the file 1-users \(11-21-2026\)\.json twice/,
  ],
  [
    'a file named twice in files',
    (m) => {
      const f = { name: '_findings.json', bytes: 2, sha256: '0'.repeat(64) };
      m.files = [f, { ...f }];
    },
    /names the file _findings\.json twice/,
  ],
];

const commands: Array<[string, (dir: string, deps: CommandDeps) => Promise<CommandResult>]> = [
  ['convert', (dir, deps) => runConvert({ format: 'csv,xlsx', outDir: join(tmpDir(), 'out') }, [dir], deps)],
  ['report', (dir, deps) => runReport({ out: join(tmpDir(), 'page.html') }, [dir], deps)],
  ['findings', (dir, deps) => runFindings({}, [dir], deps)],
  ['diff', (dir, deps) => runDiff({}, [writeSnapshot(join(tmpDir(), 'other')), dir], deps)],
  ['history load', (dir, deps) => runHistory({ history: join(tmpDir(), 'h.sqlite') }, ['load', dir], deps)],
  ['verify', (dir, deps) => runVerify({}, [dir], deps)],
  ['notify', (dir, deps) => runNotify({ notify: ['http://127.0.0.1:9/hook'] }, [dir], deps)],
];

describe('a manifest listing an export or a file twice is damaged, for every command', () => {
  for (const [name, edit, problem] of manifests) {
    for (const [command, run] of commands) {
      it(`${name}: ${command} exits 1 saying so`, async () => {
        const dir = damaged(edit);
        const { code, said } = await ending((deps) => run(dir, deps));
        expect(code).toBe(1);
        expect(said).toMatch(problem);
        expect(said).toMatch(/the snapshot is damaged/);
        expect(said).not.toMatch(/unexpected failure|UNIQUE constraint|ask has\(\) first/);
      });
    }
  }
});
