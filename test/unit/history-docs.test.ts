import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import { runHistory } from '../../src/commands/history.js';
import { openHistory } from '../../src/history/engine.js';
import { parseHistoryTarget } from '../../src/history/target.js';
import { captureDeps } from '../helpers/history-fixtures.js';
import { RECORDED_NIGHTS } from '../helpers/history-v2.js';
import { REPO_ROOT, runCli } from '../helpers/run-cli.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../helpers/postgres.js';

interface Block {
  readonly sql: string;
  /** `sqlite` or `postgres` for a block of one engine alone; null for both. */
  readonly engine: 'sqlite' | 'postgres' | null;
  /** `requires:<table>`: runs once the database has that table with rows. */
  readonly requires: string | null;
}

/** Every ```sql block of docs/history.md, with the marks after `sql`. */
function docBlocks(): Block[] {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'history.md'), 'utf8');
  return [...doc.matchAll(/^```sql([^\n]*)\n([\s\S]*?)^```$/gm)].map((m) => {
    const marks = m[1]!.trim().split(/\s+/).filter(Boolean);
    for (const mark of marks)
      if (!/^(sqlite|postgres|requires:[a-z_]+)$/.test(mark))
        throw new Error(`docs/history.md: unknown mark "${mark}" on a sql block`);
    const engine = marks.includes('sqlite') ? 'sqlite' : marks.includes('postgres') ? 'postgres' : null;
    return {
      sql: m[2]!,
      engine,
      requires: marks.find((x) => x.startsWith('requires:'))?.slice('requires:'.length) ?? null,
    };
  });
}

let pg: TestPostgres | undefined;
const ENGINES = [
  { name: 'sqlite' as const, skip: null as string | null },
  { name: 'postgres' as const, skip: postgresUnavailable() },
];

describe('docs/history.md', () => {
  it('marks its sql blocks only as the test reads them, and has one for each question', () => {
    const blocks = docBlocks();
    expect(blocks.filter((b) => b.requires === null && b.engine === null).length).toBeGreaterThanOrEqual(8);
    // A block for one engine has its twin for the other.
    for (const engine of ['sqlite', 'postgres'] as const) {
      expect(blocks.filter((b) => b.engine === engine).map((b) => b.requires)).toEqual(
        blocks.filter((b) => b.engine !== null && b.engine !== engine).map((b) => b.requires),
      );
    }
  });
});

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`docs/history.md queries on ${engine.name}`, () => {
    let work: string;
    let history: string;
    beforeAll(async () => {
      if (engine.name === 'postgres') pg = await startPostgres();
      work = mkdtempSync(join(tmpdir(), 'svc-hist-docs-'));
      history = engine.name === 'sqlite' ? join(work, 'docs.sqlite') : await pg!.createDatabase('docs');
      // With the VM exports (CONTRACT section 14), which the VM questions read, and the findings (section 18), which
      // the findings' questions read: each night taken with --include vms --findings, as a nightly job would.
      const nights: string[] = [];
      for (const [i, night] of RECORDED_NIGHTS.entries()) {
        const out = join(work, `night${i + 1}`);
        const taken = await runCli(['--replay', night, '--include', 'vms', '--findings', '--out-dir', out, '--quiet']);
        expect(taken.code, taken.stderr).toBe(0);
        nights.push(out);
      }
      const loaded = await runHistory({ history, include: 'vms' }, ['load', ...nights], captureDeps(work).deps);
      expect(loaded.exitCode).toBe(EXIT.ok);
    });
    afterAll(() => {
      pg?.stop();
      pg = undefined;
      rmSync(work, { recursive: true, force: true });
    });

    it('runs every sql block of the page as written, and each returns rows', async () => {
      const db = await openHistory(parseHistoryTarget(history, work), { mustExist: true });
      try {
        const relations = await db.relations();
        const ran: string[] = [];
        for (const block of docBlocks()) {
          if (block.engine !== null && block.engine !== engine.name) continue;
          // A block that needs an --include export (vm_configs) runs too: the recordings are loaded with --include vms.
          expect(relations.has(block.requires ?? 'runs'), `docs/history.md needs ${block.requires}`).toBe(true);
          const rows = await db.all(block.sql).catch((e: unknown) => {
            throw new Error(
              `docs/history.md, the block\n${block.sql}\nfailed on ${engine.name}: ${(e as Error).message}`,
            );
          });
          expect(
            rows.length,
            `docs/history.md, the block\n${block.sql}\nreturned no rows on ${engine.name}`,
          ).toBeGreaterThan(0);
          ran.push(block.sql);
          // The answers the recordings hold (scripts/record-platform.ts, NIGHT2_CHANGES).
          if (block.sql.includes("'added' AS change"))
            expect(rows.map((r) => r[0])).toEqual(['added', 'changed', 'removed']);
          if (block.sql.includes('member_since'))
            expect(rows.map((r) => [r[1], r[3] === null])).toEqual([
              ['Team 1 IT', false],
              ['Team 2 Imaging', true],
            ]);
          if (block.sql.includes('days_open'))
            expect(new Set(rows.map((r) => `${String(r[4])} ${Number(r[5])}`))).toEqual(
              new Set(['2026-11-21T02:00:00.000Z 1', '2026-11-22T02:00:00.000Z 0']),
            );
          if (block.sql.includes('first_seen_disabled'))
            expect(rows).toEqual([['2026-11-22T02:00:00.000Z', '2026-11-21T02:00:00.000Z', 'Deactivated (Admin)']]);
        }
        expect(ran.length).toBe(docBlocks().filter((b) => b.engine === null || b.engine === engine.name).length);
        expect(ran.some((sql) => sql.includes('FROM vm_configs'))).toBe(true);
      } finally {
        await db.close();
      }
    });
  });
}
