/**
 * The fence around what is kept for speed or memory. The fast paths are the
 * code's own list, the switches of FAST_PATHS (src/fast-paths.ts); each must
 * have one file that opens with what it stands in for, its switch and its
 * differential test, and that test, run on its own, must make the code read
 * the switch both on and off (test/helpers/fast-paths.ts notes every read).
 * So a fast path that loses its switch (the code no longer reads it), its
 * differential test (deleted, or no longer turning it off) or its header
 * fails here. What is kept for memory opens with what it is equivalent to
 * and the tests that hold it, which exist.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-cli.js';
import { FAST_PATH_NAMES } from '../helpers/fast-paths.js';

const run = promisify(execFile);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Each file of src/ with its opening comment. */
const HEADERS = sourceFiles(join(REPO_ROOT, 'src')).map((path) => {
  const text = readFileSync(path, 'utf8');
  return { file: relative(REPO_ROOT, path), head: text.startsWith('/**') ? text.slice(0, text.indexOf('*/')) : '' };
});

const FAST = HEADERS.filter((h) => /^\/\*\*\s*\*\s*FAST PATH:/.test(h.head)).map((h) => ({
  ...h,
  switchName: /Switch: `(\w+)`/.exec(h.head)?.[1],
  differential: /[Dd]ifferential test: (test\/unit\/[\w.-]+\.test\.ts)/.exec(h.head.replace(/\n\s*\*\s*/g, ' '))?.[1],
}));
const KEPT = HEADERS.filter((h) => /^\/\*\*\s*\*\s*KEPT FOR MEMORY/.test(h.head));

/** The test files a header names. */
const namedTests = (head: string) => [...head.matchAll(/test\/unit\/[\w.-]+\.test\.ts/g)].map((m) => m[0]);

describe('the fence', () => {
  it('finds the fast paths and what is kept for memory', () => {
    expect(FAST_PATH_NAMES.length).toBeGreaterThan(0);
    expect(FAST.length).toBeGreaterThan(0);
    expect(KEPT.length).toBeGreaterThan(0);
  });

  it('gives every switch of FAST_PATHS exactly one fast path file, and every fast path file a switch of FAST_PATHS', () => {
    for (const f of FAST)
      expect(FAST_PATH_NAMES, `${f.file} names no switch of FAST_PATHS (Switch: \`name\`)`).toContain(f.switchName);
    for (const name of FAST_PATH_NAMES)
      expect(
        FAST.filter((f) => f.switchName === name).map((f) => f.file),
        name,
      ).toHaveLength(1);
  });

  it.each([...FAST, ...KEPT].map((h) => [h.file, h.head] as const))(
    '%s opens with what it is equivalent to and the tests that hold it, which exist',
    (file, head) => {
      expect(head).toMatch(/equivalent|stands in for/i);
      const tests = namedTests(head);
      expect(tests.length, `${file} names no test`).toBeGreaterThan(0);
      for (const t of tests) expect(existsSync(join(REPO_ROOT, t)), `${file} names ${t}`).toBe(true);
    },
  );

  describe('each switch, read by the code both on and off while its differential test runs', () => {
    const trace = mkdtempSync(join(tmpdir(), 'svc-fence-'));
    afterAll(() => rmSync(trace, { recursive: true, force: true }));
    const byTest = new Map<string, string[]>();
    for (const f of FAST) {
      if (f.differential === undefined || f.switchName === undefined) continue;
      byTest.set(f.differential, [...(byTest.get(f.differential) ?? []), f.switchName]);
    }

    it('names a differential test file for every fast path', () => {
      for (const f of FAST) {
        expect(f.differential, `${f.file} names no differential test`).toBeDefined();
        expect(existsSync(join(REPO_ROOT, f.differential!)), f.differential).toBe(true);
      }
    });

    it.each([...byTest])('%s, run on its own, reads %j on and off, and passes', async (testFile, names) => {
      const out = join(trace, testFile.replace(/\W/g, '_'));
      const env: NodeJS.ProcessEnv = { ...process.env, SVC_FENCE_TRACE: out };
      // The child is a vitest run of its own, not a worker of this one.
      for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
      await run(
        process.execPath,
        [
          join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
          'run',
          testFile,
          '--project',
          'shared',
          '--reporter',
          'dot',
        ],
        { cwd: REPO_ROOT, env, maxBuffer: 64 * 1024 * 1024 },
      );
      const seen = existsSync(out) ? readFileSync(out, 'utf8').split('\n') : [];
      for (const name of names) {
        expect(seen, `${testFile} never ran the code with ${name} on`).toContain(`${name}=on`);
        expect(seen, `${testFile} never ran the code with ${name} off`).toContain(`${name}=off`);
      }
    });
  });
});
