import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

/** Every file under `dir`, relative paths, sorted. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, prefix: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), `${prefix}${e.name}/`);
      else out.push(`${prefix}${e.name}`);
    }
  };
  walk(dir, '');
  return out.sort();
}

/** No secret (as is or URL-encoded) in any file under `dirs` nor in the given texts. */
export function expectNoSecrets(secrets: readonly string[], dirs: readonly string[], texts: readonly string[]): void {
  const forms = secrets.flatMap((s) => [s, encodeURIComponent(s)]);
  for (const text of texts)
    for (const f of forms) expect(text.includes(f), `a token appears in output text`).toBe(false);
  for (const dir of dirs) {
    let files: string[] = [];
    try {
      files = listFiles(dir);
    } catch {
      continue;
    }
    for (const file of files) {
      const content = readFileSync(join(dir, file));
      for (const f of forms) expect(content.includes(f), `a token appears in ${file}`).toBe(false);
    }
  }
}

/** Directories 0700 and files 0600, all the way down. */
export function expectPrivateModes(dir: string): void {
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        expect(statSync(p).mode & 0o777, p).toBe(0o700);
        walk(p);
      } else expect(statSync(p).mode & 0o777, p).toBe(0o600);
    }
  };
  walk(dir);
}

/** Names in `parent` that look like leftovers of a staging step. */
export function leftovers(parent: string): string[] {
  return readdirSync(parent).filter((n) => n.startsWith('.'));
}
