import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BodySpool } from '../../src/collect/body-spool.js';
import { FailedError } from '../../src/errors.js';
import { tmpDir } from '../helpers/run-cli.js';

async function* chunks(parts: string[], fail?: Error): AsyncGenerator<Buffer> {
  for (const p of parts) yield Buffer.from(p);
  if (fail) throw fail;
}

describe("the spool of a live run's large bodies", () => {
  it('writes each body to a file of its own beside the output, with its size and sha256, and removes them all', async () => {
    const parent = tmpDir();
    const spool = new BodySpool(parent, []);
    expect(readdirSync(parent)).toEqual([]); // made on the first body only
    const file = await spool.write('GET /api/users', chunks(['[{"a":', '1}]']));
    expect(readFileSync(file.path, 'utf8')).toBe('[{"a":1}]');
    expect(file.size).toBe(9);
    expect(file.sha256).toBe(createHash('sha256').update('[{"a":1}]').digest('hex'));
    expect([...file.chunks()].join('')).toBe('[{"a":1}]');
    const [dir] = readdirSync(parent);
    expect(dir).toMatch(/^\.svc-snapshot-bodies\.partial-\d+-[A-Za-z0-9]{6}$/);
    expect(statSync(join(parent, dir!)).mode & 0o777).toBe(0o700);
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    const second = await spool.write('GET /api/users', chunks(['[]']));
    expect(second.path).not.toBe(file.path);
    spool.remove();
    expect(readdirSync(parent)).toEqual([]);
  });

  it('removes the file of a body that failed on its way, and passes its error on', async () => {
    const parent = tmpDir();
    const spool = new BodySpool(parent, []);
    const why = new Error('too large');
    await expect(spool.write('GET /api/users', chunks(['[1,', '2,'], why))).rejects.toBe(why);
    const [dir] = readdirSync(parent);
    expect(readdirSync(join(parent, dir!))).toEqual([]);
    spool.remove();
  });

  it('says where and what to do when the file system refuses, as for any output file', async () => {
    const parent = tmpDir();
    writeFileSync(join(parent, 'a-file'), '');
    const spool = new BodySpool(join(parent, 'a-file', 'out'), []);
    const err = await spool.write('GET /api/users', chunks(['[]'])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FailedError);
    expect((err as Error).message).toContain(join(parent, 'a-file'));
    expect((err as Error).message).toMatch(/not a directory/);
    expect(existsSync(join(parent, 'a-file', 'out'))).toBe(false);
  });

  it('writes no token to disk: a body holding one fails the run, its file removed', async () => {
    const parent = tmpDir();
    const token = 'spool-token-0123456789abcdef';
    const spool = new BodySpool(parent, [token]);
    const err = await spool
      .write('GET /api/users', chunks(['[{"echo":"spool-token-', '0123456789abcdef"}]']))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FailedError);
    expect((err as Error).message).toMatch(/^the answer of GET \/api\/users holds the token in use/);
    expect((err as Error).message).not.toContain(token);
    const [dir] = readdirSync(parent);
    expect(readdirSync(join(parent, dir!))).toEqual([]);
    spool.remove();
  });
});
