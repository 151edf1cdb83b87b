/**
 * docs/architecture.md opens with the pipeline and the files a record passes
 * on the default replay path. That list is checked against the code: a
 * replay of a recording runs in this process while one user record is
 * followed (its body's bytes read from the file, the slice holding it
 * parsed, each read of its fields, the text of its rows made and written),
 * and the files of src/ on the stack at each of those moments, below the
 * command, are the record's way. The doc must name exactly those files, each
 * with a function, class or constant it declares.
 */
import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runSnapshot } from '../../src/commands/snapshot.js';
import { inProcess } from '../helpers/in-process.js';
import { REPO_ROOT, tmpDir } from '../helpers/run-cli.js';

const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
const DOC = readFileSync(join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');

/** The numbered entries of the doc's list: file and the name it gives. */
function documentedWay(): Array<{ file: string; name: string }> {
  const way = DOC.slice(DOC.indexOf("A record's way"), DOC.indexOf('## Folders'));
  return [...way.matchAll(/^\d+\. `(src\/[^`]+\.ts)`: (?:the )?`(\w+)`/gm)].map((m) => ({ file: m[1]!, name: m[2]! }));
}

/** The files of src/ in a stack, innermost first, up to the command that runs them. */
function filesOf(stack: string): string[] {
  const out: string[] = [];
  for (const line of stack.split('\n').slice(1)) {
    const file = /\/(src\/[\w/.-]+\.ts)/.exec(line)?.[1];
    if (file === undefined) continue;
    if (file.startsWith('src/commands/') || file.startsWith('src/cli/')) break;
    if (!out.includes(file)) out.push(file);
  }
  return out;
}

type FileHandleMethods = {
  readFile: (...a: unknown[]) => Promise<Buffer>;
  write: (...a: unknown[]) => Promise<unknown>;
};

/** A replay of the recording, following the record whose `id` is `marker`: the files on its way. */
async function followedReplay(marker: string): Promise<Set<string>> {
  const seen = new Set<string>();
  const note = (stack: string | undefined) => filesOf(stack ?? '').forEach((f) => seen.add(f));
  const probe = await open(join(RECORDING, '_collection-manifest.json'));
  const handle = Object.getPrototypeOf(probe) as FileHandleMethods;
  await probe.close();
  const { readFile, write } = handle;
  vi.spyOn(handle, 'readFile').mockImplementation(async function (this: unknown, ...args: unknown[]) {
    const stack = new Error().stack;
    const bytes = await readFile.apply(this, args);
    if (Buffer.isBuffer(bytes) && bytes.includes(marker)) note(stack);
    return bytes;
  });
  vi.spyOn(handle, 'write').mockImplementation(function (this: unknown, ...args: unknown[]) {
    const data = args[0];
    if ((typeof data === 'string' || data instanceof Uint8Array) && Buffer.from(data).includes(marker))
      note(new Error().stack);
    return write.apply(this, args);
  });
  const { parse, stringify } = JSON;
  vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    const value: unknown = parse(text, reviver);
    if (typeof text !== 'string' || !text.includes(marker)) return value;
    note(new Error().stack);
    // Every read of the record's fields is noted too.
    const follow = (v: unknown) =>
      v !== null && typeof v === 'object' && (v as { id?: unknown }).id === marker
        ? new Proxy(v, { get: (t, k, r) => (note(new Error().stack), Reflect.get(t, k, r)) })
        : v;
    return Array.isArray(value) ? value.map(follow) : value;
  });
  vi.spyOn(JSON, 'stringify').mockImplementation((...args: Parameters<typeof JSON.stringify>) => {
    const text = stringify(...args);
    if (typeof text === 'string' && text.includes(marker)) note(new Error().stack);
    return text;
  });
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = Infinity;
  try {
    const cwd = tmpDir();
    const result = await runSnapshot(
      { replay: RECORDING, outDir: join(cwd, 'out'), quiet: true },
      inProcess([], { cwd }).deps,
    );
    expect(result.exitCode).toBe(0);
  } finally {
    Error.stackTraceLimit = limit;
    vi.restoreAllMocks();
  }
  return seen;
}

describe('docs/architecture.md', () => {
  afterEach(() => vi.restoreAllMocks());

  it('names the files a record passes on a replay, exactly those the code takes it through', async () => {
    const documented = documentedWay();
    expect(documented.length).toBeGreaterThan(0);
    const users = JSON.parse(readFileSync(join(RECORDING, 'api-users.json'), 'utf8')) as Array<{ id: string }>;
    const way = await followedReplay(users[0]!.id);
    const named = documented.map((d) => d.file);
    expect(new Set(named).size, 'a file named twice').toBe(named.length);
    expect(
      named.filter((f) => !way.has(f)),
      "named in the doc but not on the record's way",
    ).toEqual([]);
    expect(
      [...way].filter((f) => !named.includes(f)),
      "on the record's way but not in the doc",
    ).toEqual([]);
    expect(named[0]).toBe('src/collect/replay.ts');
  });

  it('names for each file something it declares', () => {
    for (const { file, name } of documentedWay()) {
      const source = readFileSync(join(REPO_ROOT, file), 'utf8');
      expect(source, `${file} declares no ${name}`).toMatch(
        new RegExp(`(function\\*?|class|const|interface) ${name}\\b`),
      );
    }
  });

  it("puts the record's way before the first section", () => {
    expect(DOC.indexOf("A record's way")).toBeGreaterThan(0);
    expect(DOC.indexOf("A record's way")).toBeLessThan(DOC.indexOf('## '));
  });
});
