/**
 * What is kept for speed or memory is fenced: each file opens with what it is
 * equivalent to and the differential test that holds the two equal, and that
 * test exists. A newcomer may delete a fast path and the named tests say
 * whether behaviour changed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-cli.js';

const FAST = join(REPO_ROOT, 'src', 'exports', 'fast');
/** Outside exports/fast/: the body's fast path (the live body scan), and what is kept for memory (slicing, a body read from its file, spooling). */
const FAST_IN_BODY = ['src/body/json-scan.ts'];
const FENCED_ELSEWHERE = [...FAST_IN_BODY, 'src/body/slices.ts', 'src/body/file.ts', 'src/snapshot/spool.ts'];

function header(file: string): string {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  return text.slice(0, text.indexOf('*/'));
}

describe('the fence', () => {
  const fast = readdirSync(FAST).filter((f) => f.endsWith('.ts')).map((f) => `src/exports/fast/${f}`);
  const files = [...fast, ...FENCED_ELSEWHERE];

  it.each(files)('%s opens with what it is equivalent to and the differential tests that hold it, which exist', (file) => {
    const head = header(file);
    expect(head).toMatch(/equivalent|stands in for/i);
    const tests = [...head.matchAll(/test\/unit\/[\w.-]+\.test\.ts/g)].map((m) => m[0]);
    expect(tests.length, `${file} names no test`).toBeGreaterThan(0);
    for (const t of tests) expect(existsSync(join(REPO_ROOT, t)), `${file} names ${t}`).toBe(true);
  });

  it('every fast path can be turned off (src/fast-paths.ts), one switch per file', () => {
    const switches = readFileSync(join(REPO_ROOT, 'src', 'fast-paths.ts'), 'utf8');
    for (const f of [...fast, ...FAST_IN_BODY]) expect(switches, f).toContain(`${f.split('/').pop()}:`);
  });
});
