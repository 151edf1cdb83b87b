/**
 * A manifest's `date` is a real calendar date and its `time` an ISO 8601
 * UTC time as the collector writes it (Date.toISOString): the one manifest
 * schema (src/manifests.ts) says so, so that every reader refuses
 * anything else as a manifest that is not a snapshot's, before `convert`
 * names files after an impossible date or the findings compare with one.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CollectionManifestSchema } from '../../src/manifests.js';
import { runConvert } from '../../src/commands/convert.js';
import { runDiff } from '../../src/commands/diff.js';
import { runFindings } from '../../src/commands/findings.js';
import { runHistory } from '../../src/commands/history.js';
import { runNotify } from '../../src/commands/notify.js';
import { runReport } from '../../src/commands/report.js';
import { runVerify } from '../../src/commands/verify.js';
import type { CommandDeps, CommandResult } from '../../src/commands/context.js';
import { ending } from '../helpers/command-ending.js';
import { REPO_ROOT, tmpDir } from '../helpers/run-cli.js';
import { writeSnapshot } from '../helpers/snapshot-dir.js';

const manifests: Array<[string, Record<string, string>, RegExp]> = [
  ['a month 13, day 45', { date: '2026-13-45' }, /date: not a calendar date/],
  ['the 30th of February', { date: '2026-02-30' }, /date: not a calendar date/],
  ['a time that is a word', { time: 'yesterday' }, /time: not an ISO 8601 UTC time/],
  ['a time with no day', { time: '2026-11-21' }, /time: not an ISO 8601 UTC time/],
  ['a time of hour 25', { time: '2026-11-21T25:00:00.000Z' }, /time: not an ISO 8601 UTC time/],
  ['a time not in UTC', { time: '2026-11-21T02:00:00.000+01:00' }, /time: not an ISO 8601 UTC time/],
];

/** A snapshot whose manifest has `fields` in place of its own. */
function snapshotWith(fields: Record<string, string>): string {
  const dir = writeSnapshot(join(tmpDir(), 'svc-snapshot-2026-11-21'));
  const path = join(dir, '_snapshot-manifest.json');
  writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), ...fields }));
  return dir;
}

/** Each command, and its exit code for a directory whose manifest is not a snapshot's (verify reports it: exit 1). */
const commands: Array<[string, number, (dir: string, deps: CommandDeps) => Promise<CommandResult>]> = [
  ['convert', 2, (dir, deps) => runConvert({ format: 'csv,xlsx', outDir: join(tmpDir(), 'out') }, [dir], deps)],
  ['report', 2, (dir, deps) => runReport({ out: join(tmpDir(), 'page.html') }, [dir], deps)],
  ['findings', 2, (dir, deps) => runFindings({}, [dir], deps)],
  ['diff', 2, (dir, deps) => runDiff({}, [writeSnapshot(join(tmpDir(), 'other')), dir], deps)],
  ['history load', 2, (dir, deps) => runHistory({ history: join(tmpDir(), 'h.sqlite') }, ['load', dir], deps)],
  ['verify', 1, (dir, deps) => runVerify({}, [dir], deps)],
  ['notify', 2, (dir, deps) => runNotify({ notify: ['http://127.0.0.1:9/hook'] }, [dir], deps)],
];

describe("a manifest's date and time are checked by its schema, for every command", () => {
  for (const [name, fields, problem] of manifests) {
    for (const [command, exitCode, run] of commands) {
      it(`${name}: ${command} refuses the manifest (exit ${exitCode})`, async () => {
        const dir = snapshotWith(fields);
        const { code, said } = await ending((deps) => run(dir, deps));
        expect(code).toBe(exitCode);
        expect(said).toMatch(/not a snapshot manifest/);
        expect(said).toMatch(problem);
        expect(said).not.toMatch(/unexpected failure/);
      });
    }
  }

  it('the date and time the collector writes pass, and so do those of every shipped recording', () => {
    const now = new Date();
    const written = { date: '2028-02-29', time: now.toISOString() };
    const recordings = readdirSync(join(REPO_ROOT, 'recordings'), { withFileTypes: true }).filter(
      (d) => d.isDirectory() && d.name.startsWith('platform-'),
    );
    expect(recordings.length).toBeGreaterThan(0);
    for (const d of recordings) {
      const m = JSON.parse(readFileSync(join(REPO_ROOT, 'recordings', d.name, '_collection-manifest.json'), 'utf8'));
      expect(CollectionManifestSchema.safeParse(m).success, d.name).toBe(true);
      expect(CollectionManifestSchema.safeParse({ ...m, ...written }).success).toBe(true);
    }
  });
});
