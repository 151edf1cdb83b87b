import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/cli/main.js';
import { FailedError, InterruptedError, TokenRejectedError, UsageError } from '../../src/errors.js';
import { REPO_ROOT } from '../helpers/run-cli.js';

const SRC = join(REPO_ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The folders a module imports from, relative to src/ ("cli", "commands", …); `import type` only when asked. */
function importedFolders(file: string, withTypes = false): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(
    withTypes ? /^import [^;]*? from '(\.{1,2}\/[^']+)'/gm : /^import (?!type )[^;]*? from '(\.{1,2}\/[^']+)'/gm,
  )) {
    const target = relative(SRC, join(file, '..', m[1]!));
    out.push(target.split('/')[0]!);
  }
  return out;
}

/** Every module each module imports: static imports and re-exports, `import type` too, and `await import()`; paths relative to src/, as .ts. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const m of text.matchAll(/^(?:import|export) [^;]*? from '(\.{1,2}\/[^']+)'|import\('(\.{1,2}\/[^']+)'\)/gm)) {
      targets.push(relative(SRC, join(file, '..', (m[1] ?? m[2])!.replace(/\.js$/, '.ts'))));
    }
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/** A module's folder under src/ ("." for src/errors.ts and the other files at the top). */
function folderOf(path: string): string {
  return path.includes('/') ? path.split('/')[0]! : '.';
}

/** The cycles of a directed graph: its strongly connected components of more than one node (Tarjan), each sorted. */
function cycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('the layers', () => {
  it('below the command layer, no module imports from cli/ or commands/, not even a type (errors come from src/errors.ts, exit codes from src/exit-codes.ts, summaries from summaries/)', () => {
    const offenders = sources(SRC)
      .filter((f) => !/^(cli|commands)\//.test(relative(SRC, f)))
      .flatMap((f) =>
        importedFolders(f, true)
          .filter((d) => d === 'cli' || d === 'commands')
          .map((d) => `${relative(SRC, f)} → ${d}/`),
      );
    expect(offenders).toEqual([]);
  });

  it('no import cycle between modules, nor between folders (each folder only imports folders below it)', () => {
    const graph = importGraph();
    expect(cycles(graph)).toEqual([]);
    const folders = new Map<string, string[]>();
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      folders.set(from, [...(folders.get(from) ?? []), ...targets.map(folderOf).filter((to) => to !== from)]);
    }
    expect(cycles(folders)).toEqual([]);
  });

  it('finds a cycle where there is one (the check itself)', () => {
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('config/ and progress/ take the route record and auth mode from api/, reaching up into no pipeline stage', () => {
    const above = new Set(['collect', 'exports', 'publish', 'commands', 'cli']);
    const offenders = sources(SRC)
      .filter((f) => /^(config|progress)\//.test(relative(SRC, f)))
      .flatMap((f) =>
        importedFolders(f, true)
          .filter((d) => above.has(d))
          .map((d) => `${relative(SRC, f)} → ${d}/`),
      );
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
