import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { FailedError } from '../../src/errors.js';
import { withStaging } from '../../src/publish/index.js';

// Lets a test make one rename fail: the ones into place can only be made to
// fail this way without root or a second file system.
const failRename = vi.hoisted(() => ({ when: undefined as ((from: string, to: string) => boolean) | undefined }));

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return {
    ...actual,
    renameSync: (from: string, to: string) => {
      if (failRename.when?.(String(from), String(to))) {
        throw Object.assign(new Error(`EXDEV: simulated failure, rename '${String(from)}'`), { code: 'EXDEV' });
      }
      actual.renameSync(from, to);
    },
  };
});

let work: string;

beforeEach(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'publish-rollback-test-'));
});

afterEach(async () => {
  failRename.when = undefined;
  await rm(work, { recursive: true, force: true });
});

it('puts the previous directory back when the new one cannot be renamed into place', async () => {
  const target = path.join(work, 'out');
  await mkdir(target);
  await writeFile(
    path.join(target, '_audit-manifest.json'),
    '{"kind":"audit","tool":{"name":"svc-snapshot","version":"0.0.0"},"routes":[{"status":200,"file":"old.txt"}]}',
  );
  await writeFile(path.join(target, 'old.txt'), 'old contents');
  failRename.when = (from) => path.basename(from).startsWith('.out.partial-');

  const error = await withStaging(
    target,
    [],
    async (s) => {
      await s.writeFile('new.txt', 'new contents');
    },
    'audit',
  ).then(
    () => undefined,
    (err: unknown) => err,
  );

  expect(error).toBeInstanceOf(FailedError);
  expect((error as FailedError).message).toMatch(/nothing was published/);
  expect((await readdir(target)).sort()).toEqual(['_audit-manifest.json', 'old.txt']);
  expect(await readFile(path.join(target, 'old.txt'), 'utf8')).toBe('old contents');
  expect(await readdir(work)).toEqual(['out']);
});

it('leaves the previous directory and no staging directory when it cannot be moved aside', async () => {
  const target = path.join(work, 'out');
  await mkdir(target);
  await writeFile(
    path.join(target, '_audit-manifest.json'),
    '{"kind":"audit","tool":{"name":"svc-snapshot","version":"0.0.0"},"routes":[{"status":200,"file":"old.txt"}]}',
  );
  await writeFile(path.join(target, 'old.txt'), 'old contents');
  failRename.when = (from) => from === target;

  await expect(withStaging(target, [], async (s) => s.writeFile('new.txt', 'new'), 'audit')).rejects.toBeInstanceOf(
    FailedError,
  );
  expect((await readdir(target)).sort()).toEqual(['_audit-manifest.json', 'old.txt']);
  expect(await readdir(work)).toEqual(['out']);
});
