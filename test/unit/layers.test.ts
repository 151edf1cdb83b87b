import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/cli/main.js';
import { FailedError, InterruptedError, TokenRejectedError, UsageError } from '../../src/errors.js';
import { REPO_ROOT } from '../helpers/run-cli.js';

const SRC = join(REPO_ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The folders a module imports from, relative to src/ ("cli", "commands", …); `import type` only when asked. */
function importedFolders(file: string, withTypes = false): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(withTypes ? /^import [^;]*? from '(\.{1,2}\/[^']+)'/gm : /^import (?!type )[^;]*? from '(\.{1,2}\/[^']+)'/gm)) {
    const target = relative(SRC, join(file, '..', m[1]!));
    out.push(target.split('/')[0]!);
  }
  return out;
}

describe('the layers', () => {
  it('below the command layer, no module imports from cli/ or commands/ (errors come from src/errors.ts, the snapshot manifest from exports/)', () => {
    const offenders = sources(SRC)
      .filter((f) => !/^(cli|commands)\//.test(relative(SRC, f)))
      .flatMap((f) => importedFolders(f).filter((d) => d === 'cli' || d === 'commands').map((d) => `${relative(SRC, f)} → ${d}/`));
    expect(offenders).toEqual([]);
  });

  it('config/ and progress/ take the route record and auth mode from api/, reaching up into no pipeline stage', () => {
    const above = new Set(['collect', 'exports', 'publish', 'commands', 'cli']);
    const offenders = sources(SRC)
      .filter((f) => /^(config|progress)\//.test(relative(SRC, f)))
      .flatMap((f) => importedFolders(f, true).filter((d) => above.has(d)).map((d) => `${relative(SRC, f)} → ${d}/`));
    expect(offenders).toEqual([]);
  });

  it('maps each error from below to its exit code in one place (CONTRACT section 6)', () => {
    expect(exitCodeOf(new UsageError('x'))).toBe(2);
    expect(exitCodeOf(new FailedError('x'))).toBe(1);
    expect(exitCodeOf(new TokenRejectedError('x'))).toBe(3);
    expect(exitCodeOf(new InterruptedError('SIGINT'))).toBe(130);
    expect(exitCodeOf(new InterruptedError('SIGTERM'))).toBe(143);
  });
});

/**
 * The modules `svc-snapshot --help` loads: src/cli/main.ts and what it imports
 * statically (`import type` and `await import()` load nothing at start).
 */
function startupGraph(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const queue = [entry];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const file = queue.shift()!;
    files.push(relative(SRC, file));
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export) (?!type )[^;]*? from '([^']+)'/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('node:')) continue;
      if (!spec.startsWith('.')) {
        packages.add(spec.split('/')[0]!);
        continue;
      }
      const target = join(file, '..', spec.replace(/\.js$/, '.ts'));
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return { files, packages };
}

describe('start-up', () => {
  it('--help and --version load commander and no other package (zod, undici, date-fns and the drivers cost 40-60 ms each)', () => {
    const { files, packages } = startupGraph(join(SRC, 'cli', 'main.ts'));
    expect(files.length).toBeGreaterThan(5);
    expect([...packages]).toEqual(['commander']);
  });
});

describe('date-fns', () => {
  it('is imported one function at a time: its index loads some 250 modules, 0.1 s of every start of the binary', () => {
    const offenders = sources(SRC).filter((f) => /^import [^;]*? from 'date-fns'/m.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => relative(SRC, f))).toEqual([]);
  });
});
