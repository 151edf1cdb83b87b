/**
 * `convert` leaves nothing half written (CONTRACT section 6): an export file
 * found changed after the snapshot was taken (same size, one byte changed),
 * whichever export it is, fails the command (exit 1) with no spreadsheet
 * published, no temporary file left, an --out-dir it made removed, and the
 * files of an earlier conversion as they were. So does a file name taken by
 * a directory or a symbolic link, found before any file is renamed.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runConvert } from '../../src/commands/convert.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { FailedError } from '../../src/errors.js';
import { EXPORTS } from '../../src/exports/catalog.js';
import { captureDeps } from '../helpers/history-fixtures.js';
import { tmpDir } from '../helpers/run-cli.js';
import { rec, writeSnapshot } from '../helpers/snapshot-dir.js';

function snapshot(): string {
  return writeSnapshot(join(tmpDir(), 'svc-snapshot-2026-11-21'), {
    records: {
      users: [rec('users', { id: 'u1', firstName: 'Ada' })],
      licensing_servers: [rec('licensing_servers', { id: 'l1', server: 'flexlm.example.org' })],
    },
  });
}

/** Changes one byte of an export's file, keeping its size: only its sha256 tells. */
function tamper(dir: string, exportName: string): void {
  const m = JSON.parse(readFileSync(join(dir, '_snapshot-manifest.json'), 'utf8')) as {
    exports: Array<{ export: string; file: string }>;
  };
  const path = join(dir, m.exports.find((e) => e.export === exportName)!.file);
  const bytes = readFileSync(path);
  bytes[bytes.length - 1] = 0x20;
  writeFileSync(path, bytes);
}

/** Each file of `dir` with the sha256 of its bytes and its mtime (set in the past by `age`): a file written again is newer. */
function contents(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((f) => {
        const sha256 = createHash('sha256')
          .update(readFileSync(join(dir, f)))
          .digest('hex');
        return [f, `${sha256} ${statSync(join(dir, f)).mtimeMs}`];
      }),
  );
}

/** Dates every file of `dir` a day back. */
function age(dir: string): void {
  const then = new Date(Date.now() - 86_400_000);
  for (const f of readdirSync(dir)) utimesSync(join(dir, f), then, then);
}

async function convertFails(dir: string, flags: Record<string, unknown>): Promise<void> {
  const io = captureDeps(tmpDir());
  const err = await runConvert(flags, [dir], io.deps).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FailedError);
  expect((err as Error).message).toMatch(/does not match the sha256 in _snapshot-manifest\.json/);
  expect(exitCodeOf(err as FailedError)).toBe(1);
  expect(io.out()).toBe('');
}

describe('convert of a snapshot with a changed export writes nothing', () => {
  const last = EXPORTS[EXPORTS.length - 1]!.name;
  for (const format of ['csv', 'csv,xlsx']) {
    for (const changed of [EXPORTS[0]!.name, last]) {
      it(`--format ${format}, ${changed} changed: a new --out-dir is not left behind`, async () => {
        const dir = snapshot();
        tamper(dir, changed);
        const out = join(tmpDir(), 'made', 'sheets');
        await convertFails(dir, { format, outDir: out });
        expect(existsSync(join(out, '..'))).toBe(false);
      });

      it(`--format ${format}, ${changed} changed: an existing --out-dir keeps what it held`, async () => {
        const dir = snapshot();
        tamper(dir, changed);
        const out = tmpDir();
        writeFileSync(join(out, 'notes.txt'), 'kept');
        await convertFails(dir, { format, outDir: out });
        expect(readdirSync(out)).toEqual(['notes.txt']);
      });

      it(`--format ${format}, ${changed} changed: into the snapshot, the earlier conversion stays as it was`, async () => {
        const dir = snapshot();
        expect((await runConvert({ format }, [dir], captureDeps(tmpDir()).deps)).exitCode).toBe(0);
        tamper(dir, changed);
        age(dir);
        const before = contents(dir);
        await convertFails(dir, { format });
        expect(contents(dir)).toEqual(before);
      });
    }
  }
});

describe('convert whose file name is taken by something other than a file publishes nothing', () => {
  const cases: Array<[string, string, (path: string) => void]> = [
    ['a directory in place of the workbook', 'svc-snapshot-2026-11-21.xlsx', (p) => mkdirSync(p)],
    ['a symbolic link in place of the workbook', 'svc-snapshot-2026-11-21.xlsx', (p) => symlinkSync('/nowhere', p)],
    ['a directory in place of the last CSV file', '1-licensing_servers (11-21-2026).csv', (p) => mkdirSync(p)],
  ];
  for (const [name, taken, make] of cases) {
    it(`${name}: exit 1 naming it and what to do, no file renamed, none staged left`, async () => {
      const dir = snapshot();
      const out = tmpDir();
      writeFileSync(join(out, 'notes.txt'), 'kept');
      make(join(out, taken));
      const io = captureDeps(tmpDir());
      const err = await runConvert({ format: 'csv,xlsx', outDir: out }, [dir], io.deps).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(FailedError);
      expect(exitCodeOf(err as FailedError)).toBe(1);
      expect((err as Error).message).toContain(join(out, taken));
      expect((err as Error).message).toMatch(
        /it exists and is a (directory|symbolic link), not a file; nothing was written\. Move it away/,
      );
      expect(readdirSync(out).sort()).toEqual([taken, 'notes.txt'].sort());
      expect(io.out()).toBe('');
    });
  }
});
