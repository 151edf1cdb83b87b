/**
 * docs/architecture.md opens with the pipeline and the files a record passes
 * on the default replay path: the list stays short and names files that exist.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-cli.js';

describe('docs/architecture.md', () => {
  it("names at most 10 files on a record's way, in order, each one that exists", () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');
    const way = doc.slice(doc.indexOf("A record's way"), doc.indexOf('## Folders'));
    const files = [...way.matchAll(/^\d+\. `(src\/[^`]+\.ts)`/gm)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThanOrEqual(5);
    expect(files.length).toBeLessThanOrEqual(10);
    for (const f of files) expect(existsSync(join(REPO_ROOT, f)), f).toBe(true);
    expect(files[0]).toBe('src/collect/replay.ts');
    expect(doc.indexOf("A record's way")).toBeLessThan(doc.indexOf('## '));
  });
});
