/**
 * The fence around what is kept for speed or memory. Each fast path is a
 * file of src/ that opens with `FAST PATH:`, what it stands in for and its
 * differential test; what is kept for memory opens with `KEPT FOR MEMORY`,
 * what it is equivalent to and the tests that hold it. So a fast path whose
 * differential test is deleted, or whose header is lost, fails here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-cli.js';

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
  differential: /[Dd]ifferential test: (test\/unit\/[\w.-]+\.test\.ts)/.exec(h.head.replace(/\n\s*\*\s*/g, ' '))?.[1],
}));
const KEPT = HEADERS.filter((h) => /^\/\*\*\s*\*\s*KEPT FOR MEMORY/.test(h.head));

/** The test files a header names. */
const namedTests = (head: string) => [...head.matchAll(/test\/unit\/[\w.-]+\.test\.ts/g)].map((m) => m[0]);

describe('the fence', () => {
  it('finds the fast paths and what is kept for memory', () => {
    expect(FAST.length).toBeGreaterThan(0);
    expect(KEPT.length).toBeGreaterThan(0);
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

  it('names a differential test file for every fast path', () => {
    for (const f of FAST) {
      expect(f.differential, `${f.file} names no differential test`).toBeDefined();
      expect(existsSync(join(REPO_ROOT, f.differential!)), f.differential).toBe(true);
    }
  });
});
