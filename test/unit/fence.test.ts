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
/** Kept for memory, outside exports/fast/: slicing, a body read from its file, spooling. */
const FENCED_ELSEWHERE = ['src/api/slices.ts', 'src/collect/body-file.ts', 'src/publish/spool.ts'];

function header(file: string): string {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  return text.slice(0, text.indexOf('*/'));
}

describe('the fence', () => {
  const files = [...readdirSync(FAST).filter((f) => f.endsWith('.ts') && f !== 'switches.ts').map((f) => `src/exports/fast/${f}`), ...FENCED_ELSEWHERE];

  it.each(files)('%s opens with what it is equivalent to and the differential tests that hold it, which exist', (file) => {
    const head = header(file);
    expect(head).toMatch(/equivalent|stands in for/i);
    const tests = [...head.matchAll(/test\/unit\/[\w.-]+\.test\.ts/g)].map((m) => m[0]);
    expect(tests.length, `${file} names no test`).toBeGreaterThan(0);
    for (const t of tests) expect(existsSync(join(REPO_ROOT, t)), `${file} names ${t}`).toBe(true);
  });

  it('every fast path can be turned off (exports/fast/switches.ts), one switch per file', () => {
    const switches = readFileSync(join(FAST, 'switches.ts'), 'utf8');
    for (const f of readdirSync(FAST).filter((x) => x.endsWith('.ts') && x !== 'switches.ts')) expect(switches, f).toContain(`${f}:`);
  });
});
