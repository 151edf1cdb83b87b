import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HttpResponse } from 'msw';
import { getTestCerts } from '../fake/certs.js';
import type { FakeServer } from '../fake/server.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';
import { leftovers } from '../helpers/assert-output.js';
import { snapshotWithPeak, startBodySite, TOKEN } from '../helpers/body-site.js';
import { LARGE_BODY_BYTES } from '../../src/body/file.js';

/**
 * A live run's body larger than LARGE_BODY_BYTES that ends: written to disk
 * as it arrives (src/collect/body-spool.ts), built from there, copied into
 * raw/ (snapshot --raw) and into a collection, byte for byte, the spool then
 * gone. An endless body is test/e2e/endless-body.test.ts's.
 */

/** Far above what the run holds in memory besides the body itself. */
const RSS_BOUND_BYTES = 400 * 1024 * 1024;

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a response body larger than the memory bound', () => {
  it('keeps a large body that ends (over the memory bound) byte for byte, built from and in raw/, with no spool left', async () => {
    // Records of 10 KB each, together past LARGE_BODY_BYTES: the body goes through the spool.
    const record = (i: number) => JSON.stringify({ id: `u${i}`, username: `user${i}`, note: 'n'.repeat(10_000) });
    const count = Math.ceil((LARGE_BODY_BYTES + 1024 * 1024) / record(0).length);
    const body = Buffer.from(`[${Array.from({ length: count }, (_, i) => record(i)).join(',')}]`);
    const site = await startBodySite(() => new HttpResponse(body, { headers: { 'content-type': 'application/json' } }));
    server = site.server;
    const parent = tmpDir();
    const out = join(parent, 'snap');
    const res = await snapshotWithPeak(site.url, out, ['--raw']);
    expect(res.code, res.stderr).toBe(0);
    const raw = readFileSync(join(out, 'raw', 'api-users.json'));
    expect(raw.equals(body)).toBe(true);
    const manifest = JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8'));
    const users = manifest.routes.find((r: { route: string }) => r.route === 'GET /api/users');
    expect(users).toMatchObject({ bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
    expect(readdirSync(out).some((f) => f.startsWith(`${count}-users (`))).toBe(true);
    expect(res.peak).toBeLessThan(RSS_BOUND_BYTES + body.length);
    expect(leftovers(parent)).toEqual([]);
    // collect: the same bytes, copied from the spool into the collection.
    const collected = join(parent, 'raw');
    const c = await runCli(
      ['collect', '--base-url', site.url, '--ca-file', getTestCerts().caFile, '--out-dir', collected],
      {
        env: { SVC_TOKEN: TOKEN },
      },
    );
    expect(c.code, c.stderr).toBe(0);
    expect(readFileSync(join(collected, 'api-users.json')).equals(body)).toBe(true);
    expect(leftovers(parent)).toEqual([]);
  }, 120_000);
});
