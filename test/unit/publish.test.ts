import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FailedError } from '../../src/errors.js';
import { exitCodeOf } from '../../src/cli/main.js';
import {
  cleanupAllSync,
  commit as commitAny,
  createStaging,
  withStaging as withStagingAny,
} from '../../src/publish/index.js';
import { SCAN_CHUNK_BYTES } from '../../src/publish/scan.js';

// The earlier target in these tests is a raw collection this tool wrote: only such a directory may be replaced.
const withStaging: typeof withStagingAny = (target, secrets, fill) =>
  withStagingAny(target, secrets, fill, 'collection');
const commit: typeof commitAny = (staging, target, secrets) => commitAny(staging, target, secrets, 'collection');

const SECRET = 'fake-token-for-tests';
// Characters that URL-encoding changes, so the encoded form differs from the raw one.
const SECRET_WITH_SPECIALS = 'fake-token-for-tests/+=?&';
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let work: string;

beforeEach(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'publish-test-'));
});

afterEach(async () => {
  cleanupAllSync();
  await rm(work, { recursive: true, force: true });
});

function mode(p: string): number {
  return statSync(p).mode & 0o777;
}

/** Entries of `dir`, so a test can assert that nothing temporary was left beside the target. */
async function entries(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

const OLD_MANIFEST = JSON.stringify({
  kind: 'collection',
  tool: { name: 'svc-snapshot', version: '0.0.0' },
  routes: [{ route: 'GET /api/users', file: 'api-users.json' }],
});

async function makeOldTarget(target: string): Promise<void> {
  await mkdir(target, { recursive: true });
  await writeFile(path.join(target, '_collection-manifest.json'), OLD_MANIFEST);
  await writeFile(path.join(target, 'api-users.json'), '{"old":true}');
}

async function expectOldTargetIntact(target: string): Promise<void> {
  expect((await entries(target)).sort()).toEqual(['_collection-manifest.json', 'api-users.json']);
  expect(await readFile(path.join(target, '_collection-manifest.json'), 'utf8')).toBe(OLD_MANIFEST);
  expect(await readFile(path.join(target, 'api-users.json'), 'utf8')).toBe('{"old":true}');
}

async function leakError(
  target: string,
  secrets: string[],
  fill: Parameters<typeof withStaging>[2],
): Promise<FailedError> {
  const error = await withStaging(target, secrets, fill).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(FailedError);
  return error as FailedError;
}

describe('publishing', () => {
  it('publishes a new directory, creating its parent, and leaves nothing else beside it', async () => {
    const target = path.join(work, 'missing-parent', 'out');
    const result = await withStaging(target, [SECRET], async (s) => {
      expect(path.dirname(s.dir)).toBe(path.dirname(target));
      expect(path.basename(s.dir)).toMatch(new RegExp(`^\\.out\\.partial-${process.pid}-`));
      expect(mode(s.dir)).toBe(0o700);
      await s.writeFile('a.txt', 'hello');
      await s.writeFile('nested/deeper/b.bin', new Uint8Array([1, 2, 3]));
      return 42;
    });
    expect(result).toBe(42);
    expect(await readFile(path.join(target, 'a.txt'), 'utf8')).toBe('hello');
    expect([...(await readFile(path.join(target, 'nested', 'deeper', 'b.bin')))]).toEqual([1, 2, 3]);
    expect(await entries(path.dirname(target))).toEqual(['out']);
  });

  it('sets files to 0600 and directories to 0700 even with a permissive umask', async () => {
    const target = path.join(work, 'out');
    const previous = process.umask(0);
    try {
      await withStaging(target, [SECRET], async (s) => {
        await s.writeFile('x/y/file.txt', 'data');
        // Written behind the staging API's back, with permissive modes.
        await mkdir(path.join(s.dir, 'loose'), { mode: 0o777 });
        await writeFile(path.join(s.dir, 'loose', 'open.txt'), 'data', { mode: 0o666 });
      });
    } finally {
      process.umask(previous);
    }
    expect(mode(target)).toBe(0o700);
    for (const dir of ['x', 'x/y', 'loose']) expect(mode(path.join(target, dir))).toBe(0o700);
    for (const file of ['x/y/file.txt', 'loose/open.txt']) expect(mode(path.join(target, file))).toBe(0o600);
  });

  it('replaces an existing directory only once the new one is complete', async () => {
    const target = path.join(work, 'out');
    await makeOldTarget(target);
    await withStaging(target, [SECRET], async (s) => {
      await s.writeFile('new.txt', 'new contents');
      // While the run is in progress the previous output is still there, whole.
      await expectOldTargetIntact(target);
    });
    expect(await entries(target)).toEqual(['new.txt']);
    expect(await readFile(path.join(target, 'new.txt'), 'utf8')).toBe('new contents');
    expect(await entries(work)).toEqual(['out']);
  });

  it('works with createStaging and commit called directly', async () => {
    const target = path.join(work, 'out');
    await makeOldTarget(target);
    const s = await createStaging(target);
    await s.writeFile('only.txt', 'x');
    await commit(s, target, []);
    expect(await entries(target)).toEqual(['only.txt']);
    // Discarding after publishing must not touch the published directory.
    s.discard();
    expect(await entries(target)).toEqual(['only.txt']);
    await expect(s.writeFile('late.txt', 'x')).rejects.toThrow(/already published or discarded/);
  });

  it('leaves nothing behind and the old directory untouched when fill fails', async () => {
    const target = path.join(work, 'out');
    await makeOldTarget(target);
    await expect(
      withStaging(target, [SECRET], async (s) => {
        await s.writeFile('half.txt', 'half');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expectOldTargetIntact(target);
    expect(await entries(work)).toEqual(['out']);
  });

  it('leaves nothing at all when fill fails and there was no previous directory', async () => {
    const target = path.join(work, 'out');
    await expect(
      withStaging(target, [SECRET], async (s) => {
        await s.writeFile('half.txt', 'half');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await entries(work)).toEqual([]);
  });

  it('refuses a path that is absolute or escapes the staging directory', async () => {
    const target = path.join(work, 'out');
    const s = await createStaging(target);
    for (const bad of ['/etc/passwd', '../escape.txt', 'a/../../escape.txt', '..', '.', '']) {
      await expect(s.writeFile(bad, 'x'), bad).rejects.toThrow(/refusing to write/);
    }
    await s.writeFile('a/../fine.txt', 'ok');
    expect(await entries(s.dir)).toEqual(['fine.txt']);
    expect(await entries(work)).toEqual([path.basename(s.dir)]);
    s.discard();
    s.discard();
    expect(await entries(work)).toEqual([]);
  });
});

describe('the token-leak check', () => {
  it('aborts when a file holds the token as is, keeping the old directory and naming only the file', async () => {
    const target = path.join(work, 'out');
    await makeOldTarget(target);
    const error = await leakError(target, [SECRET], async (s) => {
      await s.writeFile('clean.json', '{}');
      await s.writeFile('raw/users.json', `{"note":"Bearer ${SECRET}"}`);
    });
    expect(exitCodeOf(error)).toBe(1);
    expect(error.message).toContain(path.join('raw', 'users.json'));
    expect(error.message).not.toContain(SECRET);
    await expectOldTargetIntact(target);
    expect(await entries(work)).toEqual(['out']);
  });

  it('aborts when a file holds the URL-encoded token', async () => {
    const target = path.join(work, 'out');
    await makeOldTarget(target);
    const encoded = encodeURIComponent(SECRET_WITH_SPECIALS);
    expect(encoded).not.toBe(SECRET_WITH_SPECIALS);
    const error = await leakError(target, [SECRET_WITH_SPECIALS], async (s) => {
      await s.writeFile('log.txt', `GET /api/x?token=${encoded}\n`);
    });
    expect(error.message).toContain('log.txt');
    expect(error.message).not.toContain(SECRET_WITH_SPECIALS);
    expect(error.message).not.toContain(encoded);
    await expectOldTargetIntact(target);
    expect(await entries(work)).toEqual(['out']);
  });

  it('finds the token straddling a boundary of the search window in a large file', async () => {
    const target = path.join(work, 'out');
    await makeOldTarget(target);
    const size = 3 * SCAN_CHUNK_BYTES;
    const big = Buffer.alloc(size, 'a');
    // Straddle the boundary between the second and third windows.
    const at = 2 * SCAN_CHUNK_BYTES - Math.floor(SECRET.length / 2);
    big.write(SECRET, at, 'utf8');
    const error = await leakError(target, ['another-fake-token', SECRET], async (s) => {
      await s.writeFile('big.bin', big);
    });
    expect(error.message).toContain('big.bin');
    expect(error.message).not.toContain(SECRET);
    await expectOldTargetIntact(target);
    expect(await entries(work)).toEqual(['out']);
  });

  it('finds the token at the very end of a large file', async () => {
    const target = path.join(work, 'out');
    const big = Buffer.alloc(5 * SCAN_CHUNK_BYTES + 7, 'b');
    big.write(SECRET, big.length - SECRET.length, 'utf8');
    await leakError(target, [SECRET], async (s) => {
      await s.writeFile('tail.bin', big);
    });
    expect(await entries(work)).toEqual([]);
  });

  it('aborts without showing the name when a file name holds the token', async () => {
    const target = path.join(work, 'out');
    const error = await leakError(target, [SECRET], async (s) => {
      await s.writeFile(`dir-${SECRET}/x.txt`, 'clean');
    });
    expect(error.message).not.toContain(SECRET);
    expect(await entries(work)).toEqual([]);
  });

  it('publishes a large clean file that only holds parts of the token', async () => {
    const target = path.join(work, 'out');
    const big = Buffer.alloc(4 * SCAN_CHUNK_BYTES, 'c');
    // The token's first half right before a boundary, and its second half right after one.
    big.write(SECRET.slice(0, 10), SCAN_CHUNK_BYTES - 10, 'utf8');
    big.write(SECRET.slice(10), 2 * SCAN_CHUNK_BYTES, 'utf8');
    await withStaging(target, [SECRET, ''], async (s) => {
      await s.writeFile('big.bin', big);
    });
    expect(statSync(path.join(target, 'big.bin')).size).toBe(big.length);
  });
});

describe('writeChunks', () => {
  it('shows onBytes every byte of the file in order, strings as the UTF-8 written', async () => {
    const target = path.join(work, 'out');
    const seen: Buffer[] = [];
    const long = 'é'.repeat(700_000);
    await withStaging(target, [SECRET], async (s) => {
      await s.writeChunks('e.json', ['[', Buffer.from('"ü😀"'), ',', `"${long}"`, ']\n'], (bytes) =>
        seen.push(Buffer.from(bytes)),
      );
    });
    const file = await readFile(path.join(target, 'e.json'));
    expect(Buffer.concat(seen).equals(file)).toBe(true);
    expect(file.toString('utf8')).toBe(`["ü😀","${long}"]\n`);
  });
});

describe('the token-leak check as files are written', () => {
  it('finds a token split between two pieces of writeChunks, before the second piece reaches the disk', async () => {
    const target = path.join(work, 'out');
    await makeOldTarget(target);
    const spelled = SECRET.replace(/-/g, '\\u002d');
    let afterSecond = false;
    const error = await leakError(target, [SECRET], async (s) => {
      await s.writeChunks(
        'export.json',
        (function* () {
          yield `[${'x'.repeat(SCAN_CHUNK_BYTES - 5)}"${spelled.slice(0, 9)}`;
          yield Buffer.from(`${spelled.slice(9)}"]`);
          afterSecond = true;
          yield '\n';
        })(),
      );
    });
    expect(error.message).toContain('export.json');
    expect(error.message).not.toContain(SECRET);
    expect(afterSecond).toBe(false);
    await expectOldTargetIntact(target);
    expect(await entries(work)).toEqual(['out']);
  });

  it('still reads back a file written beside the staging API, or changed after it was written', async () => {
    for (const how of ['beside', 'appended', 'replaced'] as const) {
      const target = path.join(work, `out-${how}`);
      const error = await leakError(target, [SECRET], async (s) => {
        await s.writeFile('clean.json', '{"a":1}');
        const file = path.join(s.dir, how === 'beside' ? 'side.json' : 'clean.json');
        if (how === 'appended') await appendFile(file, SECRET);
        else if (how === 'replaced') {
          await rm(file);
          await writeFile(file, `"${SECRET.slice(0, 5)}"`);
          await writeFile(file, SECRET.slice(0, 7));
          await writeFile(file, `{"${SECRET}":1}`);
        } else await writeFile(file, `{"t":"${SECRET}"}`);
      });
      expect(error.message).toContain(how === 'beside' ? 'side.json' : 'clean.json');
      expect(error.message).not.toContain(SECRET);
      expect(existsSync(target)).toBe(false);
    }
    expect(await entries(work)).toEqual([]);
  });

  it('searches with the secrets the staging directory was made for, and reads everything back for others', async () => {
    const target = path.join(work, 'out');
    const staging = await createStaging(target, ['another-fake-token']);
    await staging.writeFile('a.json', `{"t":"${SECRET}"}`);
    const error = await commit(staging, target, [SECRET]).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(FailedError);
    expect((error as Error).message).toContain('a.json');
    expect(await entries(work)).toEqual([]);
  });
});

describe('interruption', () => {
  const child = `
import { createStaging } from ${JSON.stringify(pathToFileURL(path.join(repoRoot, 'src/publish/staging.ts')).href)};
import { installSignalHandlers } from ${JSON.stringify(pathToFileURL(path.join(repoRoot, 'src/publish/registry.ts')).href)};
const staging = await createStaging(process.argv[2]);
await staging.writeFile('partial/file.txt', 'not finished');
installSignalHandlers((signal) => process.stderr.write('cleaning up after ' + signal + '\\n'));
process.stdout.write(JSON.stringify({ ready: true, dir: staging.dir }) + '\\n');
setInterval(() => {}, 1000);
`;

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`removes the staging directory and exits ${code} on ${signal}, leaving the older target intact`, async () => {
      const target = path.join(work, 'out');
      await makeOldTarget(target);
      const script = path.join(work, 'child.mjs');
      await writeFile(script, child);
      const proc = spawn(process.execPath, ['--import', 'tsx', script, target], {
        cwd: repoRoot,
        // tsx would keep a cache in TMPDIR, which the run must leave empty.
        env: { ...process.env, TSX_DISABLE_CACHE: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = once(proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      try {
        const lines = createInterface({ input: proc.stdout });
        const [first] = (await once(lines, 'line')) as [string];
        const { dir } = JSON.parse(first) as { dir: string };
        expect(existsSync(path.join(dir, 'partial', 'file.txt'))).toBe(true);

        proc.kill(signal);
        const [exitCode, bySignal] = await exited;
        expect({ exitCode, bySignal }).toEqual({ exitCode: code, bySignal: null });
        expect(stderr).toContain(`cleaning up after ${signal}`);
        expect(existsSync(dir)).toBe(false);
        await expectOldTargetIntact(target);
        expect(await entries(work)).toEqual(['child.mjs', 'out']);
      } finally {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      }
    });
  }
});

describe('an output directory that cannot be made', () => {
  it('is refused with a message naming the directory, without hanging under /proc', async () => {
    const { createStaging } = await import('../../src/publish/index.js');
    await expect(createStaging('/proc/svc-snapshot-test-nope/out')).rejects.toThrow(
      /cannot write into \/proc\/svc-snapshot-test-nope \(ENOENT\)/,
    );
  });
});
