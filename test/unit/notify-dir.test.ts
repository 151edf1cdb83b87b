/**
 * `notify <snapshot-dir>` reads a snapshot as every
 * other reader does: an export file changed, truncated, missing, a symbolic
 * link or named outside the directory refuses the snapshot (exit 1) and
 * nothing is sent. A damaged previous snapshot found beside is warned about
 * and left out, as `report` and `findings` do; one given with --previous is
 * an error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runNotify } from '../../src/commands/notify.js';
import { exitCodeOf } from '../../src/cli/main.js';
import { FailedError } from '../../src/errors.js';
import { captureDeps } from '../helpers/history-fixtures.js';
import { tmpDir } from '../helpers/run-cli.js';
import { rec, writeSnapshot } from '../helpers/snapshot-dir.js';

let server: Server;
let hook = '';
const received: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString('utf8')));
    req.on('end', () => {
      received.push(body);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Two nights beside each other, a user added on the second. */
function nights(): { older: string; newer: string } {
  const parent = tmpDir();
  const ada = rec('users', { id: 'u1', firstName: 'Ada' });
  const older = writeSnapshot(join(parent, 'svc-snapshot-2026-11-20'), {
    date: '2026-11-20',
    records: { users: [ada] },
  });
  const newer = writeSnapshot(join(parent, 'svc-snapshot-2026-11-21'), {
    date: '2026-11-21',
    records: { users: [ada, rec('users', { id: 'u2', firstName: 'Grace' })] },
  });
  return { older, newer };
}

function fileOf(dir: string, exportName: string): string {
  const m = JSON.parse(readFileSync(join(dir, '_snapshot-manifest.json'), 'utf8')) as {
    exports: Array<{ export: string; file: string }>;
  };
  return join(dir, m.exports.find((e) => e.export === exportName)!.file);
}

/** One byte of the file changed, its size kept. */
function tamper(path: string): void {
  const bytes = readFileSync(path);
  bytes[bytes.length - 1] = 0x20;
  writeFileSync(path, bytes);
}

async function notify(dir: string, flags: Record<string, unknown> = {}) {
  received.length = 0;
  const io = captureDeps(tmpDir());
  const result = await runNotify({ notify: [hook], ...flags }, [dir], io.deps).then(
    (r) => r,
    (e: unknown) => e,
  );
  return { result, out: io.out(), err: io.err() };
}

const damages: Array<[string, (dir: string) => void]> = [
  ['an export changed (same size)', (dir) => tamper(fileOf(dir, 'users'))],
  ['an export truncated', (dir) => truncateSync(fileOf(dir, 'users'), 3)],
  ['an export missing', (dir) => rmSync(fileOf(dir, 'teams'))],
  [
    'an export a symbolic link',
    (dir) => {
      const path = fileOf(dir, 'teams');
      const outside = join(tmpDir(), 'outside.json');
      writeFileSync(outside, readFileSync(path));
      rmSync(path);
      symlinkSync(outside, path);
    },
  ],
  [
    'an export named outside the directory',
    (dir) => {
      const path = join(dir, '_snapshot-manifest.json');
      const m = JSON.parse(readFileSync(path, 'utf8')) as { exports: Array<{ export: string; file: string }> };
      m.exports.find((e) => e.export === 'teams')!.file = '../0-teams (11-21-2026).json';
      writeFileSync(path, JSON.stringify(m));
    },
  ],
];

describe('notify <snapshot-dir> checks the snapshot whole before sending', () => {
  for (const [name, damage] of damages) {
    for (const beside of [false, true]) {
      it(`${name}${beside ? ', a previous snapshot beside' : ''}: exit 1, nothing sent`, async () => {
        const { older, newer } = nights();
        if (!beside) rmSync(older, { recursive: true });
        damage(newer);
        const { result, out } = await notify(newer);
        expect(result).toBeInstanceOf(FailedError);
        expect(exitCodeOf(result as FailedError)).toBe(1);
        expect((result as Error).message).toMatch(/svc-snapshot-2026-11-21/);
        expect(received).toEqual([]);
        expect(out).toBe('');
      });
    }
  }

  it('an intact snapshot is sent, with its changes since the night beside', async () => {
    const { newer } = nights();
    const { result, out } = await notify(newer);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!)).toMatchObject({ hasChanges: true });
    // As docs/notify.md shows it: the target by its kind and number, never its URL.
    expect(out).toBe('webhook #1: ok\n');
  });

  it('a target that fails is printed as docs/notify.md shows it', async () => {
    const { newer } = nights();
    const { result, out } = await notify(newer, { notify: ['http://127.0.0.1:9/refused'], notifyTimeout: '1' });
    expect(result).toMatchObject({ exitCode: 1 });
    expect(out).toMatch(/^webhook #1: failed: connection refused by 127\.0\.0\.1:9/);
    const json = await notify(newer, { notify: ['http://127.0.0.1:9/refused'], notifyTimeout: '1', json: true });
    expect(json.result).toMatchObject({ exitCode: 1 });
    expect(JSON.parse(json.out).targets).toEqual([
      { sink: 'webhook 127.0.0.1:9', target: 'webhook #1', state: 'failed', why: expect.stringMatching(/^connection/) },
    ]);
    expect(json.err).toMatch(/^svc-snapshot: error: notify: webhook #1 failed: connection refused/m);
    expect(json.err).not.toContain('outcome is unchanged');
  });
});

describe('notify <snapshot-dir> with a damaged previous snapshot', () => {
  it('found beside: a warning, and the digest sent without changes (exit 0)', async () => {
    const { older, newer } = nights();
    tamper(fileOf(older, 'users'));
    const { result, err } = await notify(newer);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(err).toMatch(/warning: .*svc-snapshot-2026-11-20.*does not match the sha256/);
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!)).toMatchObject({ hasChanges: false });
  });

  it('given with --previous: exit 1, nothing sent', async () => {
    const { older, newer } = nights();
    tamper(fileOf(older, 'users'));
    const { result } = await notify(newer, { previous: older });
    expect(result).toBeInstanceOf(FailedError);
    expect((result as Error).message).toMatch(/svc-snapshot-2026-11-20.*does not match the sha256/);
    expect(received).toEqual([]);
  });
});
