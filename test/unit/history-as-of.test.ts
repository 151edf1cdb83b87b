/**
 * `history as-of` of snapshots taken with --findings, --raw and --format
 * (docs/history.md, "Reading"): `_findings.json` comes back as it was
 * loaded, the manifest byte for byte when the snapshot held nothing else,
 * and otherwise lists only what as-of writes, so that the directory passes
 * verify. On SQLite and PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/cli/main.js';
import { runHistory } from '../../src/commands/history.js';
import { runSnapshot } from '../../src/commands/snapshot.js';
import { DomainError } from '../../src/errors.js';
import { EXIT } from '../../src/exit-codes.js';
import { openHistory } from '../../src/history/engine.js';
import { parseHistoryTarget } from '../../src/history/target.js';
import { manifestsIn, verifyDir } from '../../src/verify/verify-dir.js';
import { captureDeps } from '../helpers/history-fixtures.js';
import { RECORDED_NIGHTS } from '../helpers/history-v2.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { REPO_ROOT } from '../helpers/run-cli.js';

const NIGHT3 = join(REPO_ROOT, 'recordings', 'platform-3.14.1-night3');
const MANIFEST = '_snapshot-manifest.json';
const FINDINGS = '_findings.json';

interface Manifest {
  files?: { name: string; bytes: number; sha256: string }[];
  routes: { file: string | null }[];
}
const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Manifest;
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

async function expectError(p: Promise<unknown>, exitCode: number, pattern: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect(exitCodeOf(err as DomainError)).toBe(exitCode);
  expect((err as DomainError).message).toMatch(pattern);
}

async function verified(dir: string): Promise<void> {
  const report = await verifyDir(dir, await manifestsIn(dir), undefined, new Date());
  expect(
    report.files.filter((f) => f.state !== 'ok'),
    `verify ${dir}: ${JSON.stringify(report.files)}`,
  ).toEqual([]);
  expect(report.ok).toBe(true);
}

let work: string;
/** Night 1 with --raw --findings, night 2 with --findings, night 3 with --findings --format csv,xlsx,html; all with --include vms. */
const taken: string[] = [];
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'svc-hist-asof-'));
  const options = [{ raw: true }, {}, { format: 'csv,xlsx,html' }];
  for (const [i, replay] of [...RECORDED_NIGHTS, NIGHT3].entries()) {
    const outDir = join(work, `night${i + 1}`);
    const result = await runSnapshot(
      { replay, outDir, findings: true, include: 'vms', ...options[i] },
      captureDeps(work).deps,
    );
    expect(result.exitCode).toBe(EXIT.ok);
    taken.push(outDir);
  }
  expect(readdirSync(taken[0]!)).toContain('raw');
  expect(manifestOf(taken[2]!).files!.map((f) => f.name)).toEqual(
    expect.arrayContaining(['svc-snapshot-2026-11-23.xlsx', 'svc-snapshot-2026-11-23.html', FINDINGS]),
  );
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

let pg: TestPostgres | undefined;
const ENGINES = [
  { name: 'SQLite', skip: null as string | null },
  { name: 'PostgreSQL', skip: postgresUnavailable() },
];

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(
    `history as-of of snapshots with findings, raw/ and spreadsheets on ${engine.name}`,
    () => {
      let n = 0;
      const target = async () =>
        engine.name === 'SQLite' ? join(work, `${engine.name}-${++n}.sqlite`) : pg!.createDatabase(`asof_${++n}`);
      const asOf = async (history: string, date: string): Promise<string> => {
        const out = join(work, `asof-${engine.name}-${++n}`);
        expect((await runHistory({ history, outDir: out }, ['as-of', date], captureDeps(work).deps)).exitCode).toBe(
          EXIT.ok,
        );
        return out;
      };
      beforeAll(async () => {
        if (engine.name === 'PostgreSQL') pg = await startPostgres();
      });
      afterAll(() => {
        pg?.stop();
        pg = undefined;
      });

      it('gives back _findings.json as loaded and a manifest that lists only what it writes, byte for byte when that is all the snapshot held', async () => {
        const history = await target();
        expect((await runHistory({ history }, ['load', ...taken], captureDeps(work).deps)).exitCode).toBe(EXIT.ok);
        for (const [i, date] of ['2026-11-21', '2026-11-22', '2026-11-23'].entries()) {
          const snapshot = taken[i]!;
          const out = await asOf(history, date);
          const exportsAndFindings = readdirSync(snapshot).filter((f) => f.endsWith('.json') && f !== MANIFEST);
          expect(exportsAndFindings).toContain(FINDINGS);
          expect(readdirSync(out).sort()).toEqual([...exportsAndFindings, MANIFEST].sort());
          for (const f of exportsAndFindings)
            expect(readFileSync(join(out, f)).equals(readFileSync(join(snapshot, f))), f).toBe(true);
          const original = manifestOf(snapshot);
          const restored = manifestOf(out);
          if (i === 1)
            expect(readFileSync(join(out, MANIFEST)).equals(readFileSync(join(snapshot, MANIFEST)))).toBe(true);
          // raw/, the spreadsheets and the report are not written, and the manifest no longer names them; the rest is as it was.
          expect(restored.files).toEqual(original.files!.filter((f) => f.name === FINDINGS));
          expect(restored.routes).toEqual(original.routes.map((r) => ({ ...r, file: null })));
          expect({ ...restored, files: null, routes: null }).toEqual({ ...original, files: null, routes: null });
          await verified(out);
        }
      });

      it('keeps the bytes the snapshot held, not the findings this version would evaluate', async () => {
        const history = await target();
        const edited = join(work, `edited-${engine.name}`);
        cpSync(taken[1]!, edited, { recursive: true });
        // As another version's rules could have written it: other bytes, listed in the manifest with their hash.
        const findings = readFileSync(join(edited, FINDINGS), 'utf8')
          .replace('"findings": [', '"findings": [\n    ')
          .replace(/\n$/, '\n\n');
        expect(findings).not.toBe(readFileSync(join(taken[1]!, FINDINGS), 'utf8'));
        writeFileSync(join(edited, FINDINGS), findings);
        const manifest = manifestOf(edited);
        manifest.files = manifest.files!.map((f) =>
          f.name === FINDINGS ? { name: f.name, bytes: Buffer.byteLength(findings), sha256: sha256(findings) } : f,
        );
        const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
        writeFileSync(join(edited, MANIFEST), manifestText);
        expect((await runHistory({ history }, ['load', edited], captureDeps(work).deps)).exitCode).toBe(EXIT.ok);
        const out = await asOf(history, '2026-11-22');
        expect(readFileSync(join(out, FINDINGS), 'utf8')).toBe(findings);
        expect(readFileSync(join(out, MANIFEST), 'utf8')).toBe(manifestText);
        await verified(out);
      });

      it('refuses a snapshot whose _findings.json is missing or not the one its manifest lists, loading nothing; and as-of refuses one changed in the database', async () => {
        const history = await target();
        const changed = join(work, `changed-${engine.name}`);
        cpSync(taken[1]!, changed, { recursive: true });
        writeFileSync(
          join(changed, FINDINGS),
          readFileSync(join(changed, FINDINGS), 'utf8').replace('"time"', '"time" '),
        );
        await expectError(
          runHistory({ history }, ['load', changed], captureDeps(work).deps),
          EXIT.failed,
          /_findings\.json in .* (does not match the sha256|is \d+ bytes but)/,
        );
        const missing = join(work, `missing-${engine.name}`);
        cpSync(taken[1]!, missing, { recursive: true });
        unlinkSync(join(missing, FINDINGS));
        await expectError(
          runHistory({ history }, ['load', missing], captureDeps(work).deps),
          EXIT.failed,
          /_findings\.json/,
        );
        const db = await openHistory(parseHistoryTarget(history, work), { mustExist: true });
        try {
          expect(await db.all('SELECT COUNT(*) FROM runs')).toEqual([[engine.name === 'SQLite' ? 0 : '0']]);
        } finally {
          await db.close();
        }
        expect((await runHistory({ history }, ['load', taken[1]!], captureDeps(work).deps)).exitCode).toBe(EXIT.ok);
        const edit = await openHistory(parseHistoryTarget(history, work), { mustExist: true });
        try {
          await edit.run("UPDATE run_files SET content = content || ' '");
        } finally {
          await edit.close();
        }
        await expectError(
          runHistory(
            { history, outDir: join(work, `refused-${engine.name}`) },
            ['as-of', '2026-11-22'],
            captureDeps(work).deps,
          ),
          EXIT.failed,
          /_findings\.json as of .* does not come back as the file that was loaded/,
        );
        expect(readdirSync(work)).not.toContain(`refused-${engine.name}`);
      });
    },
  );
}
