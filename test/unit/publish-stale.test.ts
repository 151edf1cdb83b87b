import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { cleanupAllSync, withStaging } from '../../src/publish/index.js';
import { recoverStale } from '../../src/publish/stale.js';
import { deadPid } from '../helpers/run-cli.js';

// What a run killed with SIGKILL leaves beside its output directory (no
// signal handler ran): the next publish of the same directory recovers it.
let dead: number;
let work: string;

beforeAll(async () => {
  dead = await deadPid();
});

beforeEach(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'publish-stale-test-'));
});

afterEach(async () => {
  cleanupAllSync();
  await rm(work, { recursive: true, force: true });
});

/** A directory holding one file with `text`. */
function dirWith(name: string, text: string): string {
  const dir = path.join(work, name);
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(path.join(dir, 'note.txt'), text);
  return dir;
}

it('recovers a killed run’s directories and leaves alone a running one’s, links, files and other names', async () => {
  dirWith(`.out.partial-${dead}-aB3xY9`, 'half written');
  dirWith(`.out.previous-${dead}-0a1b2c3d`, 'the last complete output');
  for (const name of [`.out.partial-${process.pid}-live01`, `.out.previous-${process.pid}-0000beef`])
    dirWith(name, 'a concurrent run');
  const elsewhere = dirWith('elsewhere', 'not to be followed');
  symlinkSync(elsewhere, path.join(work, `.out.partial-${dead}-link01`));
  symlinkSync(elsewhere, path.join(work, `.out.previous-${dead}-11111111`));
  writeFileSync(path.join(work, `.out.partial-${dead}-file01`), 'a file');
  for (const name of [`.outer.partial-${dead}-other1`, `.out.partial-${dead}-x`, `.out.previous-${dead}-NOTHEX00`])
    dirWith(name, 'not this output’s');
  const untouched = readdirSync(work).filter((n) => !n.includes(`-${dead}-aB3xY9`) && !n.includes(`-${dead}-0a1b`));

  const warnings: string[] = [];
  // Restored, then refused as not empty (no kind given): what was restored stays.
  await expect(
    withStaging(
      path.join(work, 'out'),
      [],
      async () => {},
      undefined,
      (m) => warnings.push(m),
    ),
  ).rejects.toThrow(/refusing to replace .*out: it is not empty/);
  expect(warnings).toEqual([
    `removed .out.partial-${dead}-aB3xY9, left by a run that was killed`,
    `restored out from .out.previous-${dead}-0a1b2c3d, left by a run killed while publishing`,
  ]);
  expect(readFileSync(path.join(work, 'out', 'note.txt'), 'utf8')).toBe('the last complete output');
  expect(readdirSync(work).sort()).toEqual([...untouched, 'out'].sort());
  expect(lstatSync(path.join(work, `.out.partial-${dead}-link01`)).isSymbolicLink()).toBe(true);
  expect(existsSync(path.join(elsewhere, 'note.txt'))).toBe(true);
});

it('removes the spool of large bodies a killed run left beside, whatever its output, and not a running one’s', async () => {
  dirWith(`.svc-snapshot-bodies.partial-${dead}-aB3xY9`, 'half a body');
  dirWith(`.svc-snapshot-bodies.partial-${process.pid}-live01`, 'a body being received');
  dirWith(`.svc-snapshot-bodies.previous-${dead}-0a1b2c3d`, 'not a spool');
  const warnings: string[] = [];
  await withStaging(
    path.join(work, 'out'),
    [],
    async () => {},
    'snapshot',
    (m) => warnings.push(m),
  );
  expect(warnings).toEqual([`removed .svc-snapshot-bodies.partial-${dead}-aB3xY9, left by a run that was killed`]);
  expect(readdirSync(work).sort()).toEqual([
    `.svc-snapshot-bodies.partial-${process.pid}-live01`,
    `.svc-snapshot-bodies.previous-${dead}-0a1b2c3d`,
    'out',
  ]);
});

it('removes the moved-aside output when the output directory exists again', async () => {
  mkdirSync(path.join(work, 'out'));
  dirWith(`.out.previous-${dead}-deadbeef`, 'older');
  const warnings: string[] = [];
  await withStaging(
    path.join(work, 'out'),
    [],
    async () => {},
    undefined,
    (m) => warnings.push(m),
  );
  expect(warnings).toEqual([`removed .out.previous-${dead}-deadbeef, left by a run killed while publishing`]);
  expect(readdirSync(work)).toEqual(['out']);
});

it('removes from the output only the temporary files of names convert and report write into its snapshot', () => {
  const out = path.join(work, 'out');
  mkdirSync(out);
  const manifest = { kind: 'snapshot', tool: { name: 'svc-snapshot', version: '1.0.0' }, date: '2026-11-21' };
  const temp = (name: string) => `.${name}.partial-${dead}-0a1b2c3d`;
  const ours = [temp('a.csv'), temp('svc-snapshot-2026-11-21.xlsx'), temp('svc-snapshot-2026-11-21.html')];
  const others = [temp('notes.txt'), temp('b.csv'), temp('svc-snapshot-2026-11-20.xlsx')];
  for (const name of [...ours, ...others]) writeFileSync(path.join(out, name), 'half written', { mode: 0o600 });
  // No snapshot manifest yet: nothing there is known to be a file the tool writes.
  expect(recoverStale(out)).toEqual([]);

  const full = { ...manifest, complete: true, exports: [{ file: 'a.json' }] };
  writeFileSync(path.join(out, '_snapshot-manifest.json'), JSON.stringify(full));
  const left = 'left in ' + out + ' by a convert or report that was killed';
  expect(recoverStale(out)).toEqual(ours.sort().map((n) => `removed ${n}, ${left}`));
  expect(readdirSync(out).sort()).toEqual(['_snapshot-manifest.json', ...others].sort());
});
