/**
 * Trust hardening (CONTRACT sections 2, 5 and 6), each case through the real
 * binary against the real HTTPS fake: TLS that no variable turns off, URLs
 * whose credentials are refused and never echoed, output directories that
 * cannot eat a working directory, hostile bytes from a server or a file,
 * symlinks out of a collection or a snapshot, and errors that blame the
 * right thing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { http, HttpResponse, type RequestHandler } from 'msw';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { REPO_ROOT, runCli, tmpDir, type CliResult } from '../helpers/run-cli.js';
import { listFiles } from '../helpers/assert-output.js';
import { ALL_TYPES_TOKEN, createFakeBackend, type FakeBackend } from '../fake/backend.js';
import { createAuditBackend, FAKE_AUDIT_TOKEN } from '../fake/audit-backend.js';
import { getTestCerts, getUntrustedCerts } from '../fake/certs.js';
import { startFakeServer } from '../fake/server.js';
import { hasSshKeygen, keyDir, makeKey, removeKeys } from '../helpers/ssh-keys.js';
import { rewriteExport } from '../helpers/snapshot-dir.js';

const TOKEN = ALL_TYPES_TOKEN.value;
const RECORDING = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
const ESC = '\u001b';
const BEL = '\u0007';

/** The fake backend with `extra` handlers answering before it (first match wins). */
async function siteWith(
  extra: (url: string) => RequestHandler[],
): Promise<{ url: string; caFile: string; backend: FakeBackend; close: () => Promise<void> }> {
  const handlers: RequestHandler[] = [];
  const server = await startFakeServer(handlers, { tls: true });
  const backend = createFakeBackend({ baseUrl: server.url });
  handlers.push(...extra(server.url), ...backend.handlers);
  return { url: server.url, caFile: getTestCerts().caFile, backend, close: () => server.close() };
}

/** A CONNECT proxy on 127.0.0.1 that records the tunnels it opens. */
async function startConnectProxy(): Promise<{ url: string; tunnels: string[]; close: () => Promise<void> }> {
  const tunnels: string[] = [];
  const server: Server = createServer((client) => {
    client.once('data', (head) => {
      const m = /^CONNECT (127\.0\.0\.1):(\d+) HTTP\/1\.1\r\n/.exec(head.toString('latin1'));
      if (!m) return client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      tunnels.push(`${m[1]}:${m[2]}`);
      const upstream = connect(Number(m[2]), m[1]!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    tunnels,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

function allOutput(r: CliResult): string {
  return r.stdout + r.stderr;
}

/** No raw terminal control in what the tool printed. */
function expectNoRawControls(r: CliResult): void {
  expect(allOutput(r)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
}

function copyRecording(): string {
  const dir = join(tmpDir(), 'collection');
  cpSync(RECORDING, dir, { recursive: true });
  return dir;
}

/** Replaces a file of a collection and makes the manifest vouch for it (sha256, bytes), as an attacker with write access would. */
function plant(dir: string, file: string, content: string | Buffer): void {
  writeFileSync(join(dir, file), content);
  const manifestPath = join(dir, '_collection-manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    routes: { file: string | null; sha256?: string; bytes?: number }[];
  };
  const bytes = Buffer.from(content);
  for (const r of manifest.routes) {
    if (r.file === file) {
      r.sha256 = createHash('sha256').update(bytes).digest('hex');
      r.bytes = bytes.length;
    }
  }
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
}

let site: FakeSite;
let untrusted: FakeSite;
beforeAll(async () => {
  site = await startFakeSite();
  untrusted = await startFakeSite({ certs: getUntrustedCerts() });
});
afterAll(async () => {
  await site.close();
  await untrusted.close();
});

describe('1. TLS is verified whatever NODE_TLS_REJECT_UNAUTHORIZED says', () => {
  it('a snapshot from a server with an untrusted certificate fails, sends no token and warns once that the variable is ignored', async () => {
    const cwd = tmpDir();
    const before = untrusted.backend.requests.length;
    const r = await runCli(['--base-url', untrusted.url, '--out-dir', 'out'], {
      cwd,
      env: { SVC_TOKEN: TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/TLS verification failed/);
    expect(r.stderr.match(/NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored/g)).toHaveLength(1);
    expect(r.stderr).not.toMatch(/makes TLS connections and HTTPS requests insecure/);
    expect(untrusted.backend.requests.length).toBe(before);
    expect(existsSync(join(cwd, 'out'))).toBe(false);
  });

  it('through HTTPS_PROXY too: the tunnelled connection is verified end to end', async () => {
    const proxy = await startConnectProxy();
    try {
      const cwd = tmpDir();
      const r = await runCli(['collect', '--base-url', untrusted.url, '--out-dir', 'out'], {
        cwd,
        env: { SVC_TOKEN: TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0', HTTPS_PROXY: proxy.url },
      });
      expect(proxy.tunnels.length).toBeGreaterThan(0);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/TLS verification failed/);
      expect(existsSync(join(cwd, 'out'))).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('check does not call an unverified connection verified', async () => {
    const r = await runCli(['check', '--base-url', untrusted.url, '--json'], {
      env: { SVC_TOKEN: TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { tls: { ok: boolean; error?: string }; ok: boolean };
    expect(report.tls.ok).toBe(false);
    expect(report.ok).toBe(false);
    const text = await runCli(['check', '--base-url', untrusted.url], {
      env: { SVC_TOKEN: TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
    });
    expect(text.stdout).toMatch(/TLS: FAILED/);
    expect(text.stdout).not.toMatch(/verified/);
  });

  it('check reports TLS verified through an HTTPS_PROXY tunnel, from the tunnelled socket', async () => {
    const proxy = await startConnectProxy();
    try {
      const r = await runCli(['check', '--base-url', site.url, '--ca-file', site.caFile], {
        env: { SVC_TOKEN: TOKEN, HTTPS_PROXY: proxy.url },
      });
      expect(proxy.tunnels.length).toBeGreaterThan(0);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/TLS: verified/);
    } finally {
      await proxy.close();
    }
  });

  it('check reports TLS verified from an authorized connection', async () => {
    const r = await runCli(['check', '--base-url', site.url, '--ca-file', site.caFile], { env: { SVC_TOKEN: TOKEN } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/TLS: verified \(certificate chain and host name\)/);
  });

  it('check --audit against an untrusted audit service fails TLS with the variable set', async () => {
    const audit = createAuditBackend();
    const server = await startFakeServer(audit.handlers, { tls: true, certs: getUntrustedCerts() });
    try {
      const r = await runCli(['check', '--audit', '--audit-url', server.url, '--json'], {
        env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
      });
      expect(r.code).toBe(1);
      expect((JSON.parse(r.stdout) as { tls: { ok: boolean } }).tls.ok).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe('2. URLs with credentials are refused and never echoed', () => {
  const PASSWORD = 'hunter2-very-secret';
  const cases: [string, string[], Record<string, string>][] = [
    ['--base-url that parses', ['check', '--base-url', `https://admin:${PASSWORD}@127.0.0.1:9/`], { SVC_TOKEN: TOKEN }],
    ['--base-url that does not parse', ['check', '--base-url', `https://admin:${PASSWORD}@[::1`], { SVC_TOKEN: TOKEN }],
    [
      '--base-url with / and @ in the password',
      ['collect', '--base-url', `https://admin:pa/${PASSWORD}@@127.0.0.1:9`],
      { SVC_TOKEN: TOKEN },
    ],
    ['SVC_BASE_URL', ['collect'], { SVC_TOKEN: TOKEN, SVC_BASE_URL: `https://admin:${PASSWORD}@127.0.0.1:9` }],
    [
      'HTTPS_PROXY',
      ['collect', '--base-url', 'https://127.0.0.1:9'],
      { SVC_TOKEN: TOKEN, HTTPS_PROXY: `http://proxyuser:${PASSWORD}@127.0.0.1:3128` },
    ],
    [
      'HTTP_PROXY that does not parse',
      ['collect', '--base-url', 'https://127.0.0.1:9'],
      { SVC_TOKEN: TOKEN, HTTP_PROXY: `http://proxyuser:${PASSWORD}@[x` },
    ],
    [
      '--audit-url',
      ['audit', '--audit-url', `https://admin:${PASSWORD}@127.0.0.1:9`],
      { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
    ],
  ];
  for (const [name, args, env] of cases) {
    it(`${name}: usage error (exit 2), the password nowhere`, async () => {
      const cwd = tmpDir();
      const r = await runCli(
        [...args, '--out-dir', 'out'].filter(
          (a, i, all) => !(args[0] === 'check' && (a === '--out-dir' || all[i - 1] === '--out-dir')),
        ),
        { cwd, env },
      );
      expect(r.code).toBe(2);
      expect(allOutput(r)).not.toContain(PASSWORD);
      expect(allOutput(r)).not.toContain(encodeURIComponent(PASSWORD));
      expect(allOutput(r)).not.toContain('admin:');
      expect(allOutput(r)).not.toContain('proxyuser:');
      expect(r.stderr).toMatch(/user name or password|is not a URL/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  }
});

describe('3. --out-dir cannot eat a working directory', () => {
  function workdir(): string {
    const cwd = tmpDir();
    writeFileSync(join(cwd, 'precious.txt'), 'do not delete');
    mkdirSync(join(cwd, 'home'));
    return cwd;
  }
  // The other spellings of the working directory, its parents and the root: test/unit/in-process-out-dir.test.ts.
  const unsafe: [string, (cwd: string) => string][] = [
    ['"." (the working directory)', () => '.'],
    ['the home directory', (cwd) => join(cwd, 'home')],
  ];
  for (const [name, outDir] of unsafe) {
    it(`${name}: usage error, nothing deleted (snapshot --replay)`, async () => {
      const cwd = workdir();
      const r = await runCli(['--replay', RECORDING, '--out-dir', outDir(cwd)], {
        cwd,
        env: { HOME: join(cwd, 'home') },
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--out-dir/);
      expect(readFileSync(join(cwd, 'precious.txt'), 'utf8')).toBe('do not delete');
      expect(readdirSync(cwd).sort()).toEqual(['home', 'precious.txt']);
    });
  }

  it('a symlink to the working directory is refused as the working directory is', async () => {
    const cwd = workdir();
    const other = tmpDir();
    symlinkSync(cwd, join(other, 'here'));
    const r = await runCli(['--replay', RECORDING, '--out-dir', join(other, 'here')], { cwd });
    expect(r.code).toBe(2);
    expect(readdirSync(cwd).sort()).toEqual(['home', 'precious.txt']);
  });

  it('a symlink where the output directory would go is left as it is (exit 2)', async () => {
    const cwd = workdir();
    const elsewhere = tmpDir();
    writeFileSync(join(elsewhere, 'keep.txt'), 'keep');
    symlinkSync(elsewhere, join(cwd, 'snap'));
    const r = await runCli(['--replay', RECORDING, '--out-dir', 'snap'], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/exists and is not a directory/);
    expect(readdirSync(elsewhere)).toEqual(['keep.txt']);
  });

  it('collect --out-dir . is refused before any request', async () => {
    const cwd = workdir();
    const before = site.backend.requests.length;
    const r = await runCli(['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', '.'], {
      cwd,
      env: { SVC_TOKEN: TOKEN },
    });
    expect(r.code).toBe(2);
    expect(site.backend.requests.length).toBe(before);
    expect(readdirSync(cwd).sort()).toEqual(['home', 'precious.txt']);
  });

  it('audit --out-dir "" is refused', async () => {
    const cwd = workdir();
    const r = await runCli(['audit', '--audit-url', 'https://127.0.0.1:9', '--out-dir', ''], {
      cwd,
      env: { SVC_AUDIT_TOKEN: FAKE_AUDIT_TOKEN },
    });
    expect(r.code).toBe(2);
    expect(readdirSync(cwd).sort()).toEqual(['home', 'precious.txt']);
  });

  it('a directory holding files the tool did not write is left as it is (exit 2)', async () => {
    const cwd = workdir();
    const out = join(cwd, 'reports');
    mkdirSync(out);
    writeFileSync(join(out, 'thesis.docx'), 'years of work');
    const r = await runCli(['--replay', RECORDING, '--out-dir', out], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refusing to replace .*reports: it is not empty and holds no _snapshot-manifest\.json/);
    expect(readdirSync(out)).toEqual(['thesis.docx']);
  });

  it('an earlier snapshot with an extra file in it is not replaced; a clean one is', async () => {
    const cwd = workdir();
    const first = await runCli(['--replay', RECORDING, '--out-dir', 'snap', '--raw'], { cwd });
    expect(first.code).toBe(0);
    const again = await runCli(['--replay', RECORDING, '--out-dir', 'snap', '--raw'], { cwd });
    expect(again.code).toBe(0);
    writeFileSync(join(cwd, 'snap', 'raw', 'notes.txt'), 'mine');
    const refused = await runCli(['--replay', RECORDING, '--out-dir', 'snap'], { cwd });
    expect(refused.code).toBe(2);
    expect(readFileSync(join(cwd, 'snap', 'raw', 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('an --out-dir whose manifest is a FIFO is refused at once, not waited on (exit 2)', async () => {
    const cwd = workdir();
    mkdirSync(join(cwd, 'snap'));
    execFileSync('mkfifo', [join(cwd, 'snap', '_snapshot-manifest.json')]);
    const r = await runCli(['--replay', RECORDING, '--out-dir', 'snap'], { cwd, timeoutMs: 30_000 });
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refusing to replace .*snap: it has no _snapshot-manifest\.json that is a regular file/);
  });

  it('a collection is not replaced by a snapshot, nor a snapshot by a collection', async () => {
    const cwd = workdir();
    const collection = copyRecording();
    const r = await runCli(['--replay', collection, '--out-dir', collection], { cwd });
    expect(r.code).toBe(2);
    expect(existsSync(join(collection, '_collection-manifest.json'))).toBe(true);
    expect(await runCli(['--replay', RECORDING, '--out-dir', 'snap'], { cwd })).toMatchObject({ code: 0 });
    const c = await runCli(['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'snap'], {
      cwd,
      env: { SVC_TOKEN: TOKEN },
    });
    expect(c.code).toBe(2);
    expect(existsSync(join(cwd, 'snap', '_snapshot-manifest.json'))).toBe(true);
  });
});

describe('4 and 5. hostile bytes from the server: escaped, and the token redacted in every spelling', () => {
  // The token as a hostile server may echo it: JSON-escaped, URL-encoded, mixed.
  const ECHOES = [
    'fake\\u002dtoken\\u002Dall-types',
    'fake%2Dtoken-all%2dtypes',
    '\\u0066ake-token-all-type\\u0073',
    'fake-token-all-types',
  ];
  let hostile: Awaited<ReturnType<typeof siteWith>>;
  beforeAll(async () => {
    hostile = await siteWith((url) => [
      http.get(
        `${url}/api/teams`,
        () =>
          new HttpResponse(`{"error":"${ESC}[2J${ESC}]0;owned${BEL} denied for ${ECHOES.join(' ')} \u202eevil"}`, {
            status: 500,
            headers: { 'content-type': 'application/json' },
          }),
      ),
      http.get(
        `${url}/api/drives`,
        () =>
          new HttpResponse(`[{"id": ${ESC}[31mred}]`, { status: 200, headers: { 'content-type': 'application/json' } }),
      ),
    ]);
  });
  afterAll(async () => hostile.close());

  it('collect: error bodies and parse errors are escaped; the token is in no output, manifest or message', async () => {
    const cwd = tmpDir();
    const r = await runCli(
      [
        'collect',
        '--base-url',
        hostile.url,
        '--ca-file',
        hostile.caFile,
        '--out-dir',
        'raw',
        '--retries',
        '0',
        '--json',
      ],
      { cwd, env: { SVC_TOKEN: TOKEN } },
    );
    expect(r.code).toBe(4);
    expectNoRawControls(r);
    expect(allOutput(r)).toContain('\\u001b[2J');
    const manifest = readFileSync(join(cwd, 'raw', '_collection-manifest.json'), 'utf8');
    for (const text of [r.stdout, r.stderr, manifest]) {
      for (const echo of ECHOES) expect(text).not.toContain(echo);
      expect(text).toContain('[redacted]');
    }
    expect(manifest).not.toContain(ESC);
    expect(manifest).not.toContain(BEL);
    // The parse error names the route and a position, not the bytes.
    expect(r.stderr).toMatch(/GET \/api\/drives[^\n]*invalid JSON/);
    expect(allOutput(r)).not.toContain('red}');
  });

  it('snapshot --json: the same error is redacted and escaped in the JSON summary', async () => {
    const cwd = tmpDir();
    const r = await runCli(
      [
        '--base-url',
        hostile.url,
        '--ca-file',
        hostile.caFile,
        '--out-dir',
        'snap',
        '--retries',
        '0',
        '--allow-partial',
        '--json',
      ],
      { cwd, env: { SVC_TOKEN: TOKEN } },
    );
    expect(r.code).toBe(4);
    expectNoRawControls(r);
    for (const echo of ECHOES) expect(allOutput(r)).not.toContain(echo);
    JSON.parse(r.stdout);
  });

  it('drift field names and realm ids are escaped', async () => {
    const users = JSON.parse(site.backend.responseBody('users')) as Record<string, unknown>[];
    users[0]![`tier${ESC}[8m\u202e`] = 1;
    const realms = JSON.parse(site.backend.responseBody('realms')) as { realms: Record<string, { id: string }> };
    const evil = `lib${ESC}]0;pwned${BEL}virt`;
    realms.realms.evil = { ...Object.values(realms.realms)[0]!, id: evil };
    site.backend.setFault('users', { body: users });
    try {
      const cwd = tmpDir();
      const snap = await runCli(['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'snap'], {
        cwd,
        env: { SVC_TOKEN: TOKEN },
      });
      expect(snap.code).toBe(0);
      expectNoRawControls(snap);
      expect(allOutput(snap)).toContain('tier\\u001b[8m\\u202e');
      site.backend.setFault('realms', { body: realms });
      const check = await runCli(['check', '--base-url', site.url, '--ca-file', site.caFile], {
        env: { SVC_TOKEN: TOKEN },
      });
      expectNoRawControls(check);
      expect(check.stdout).toContain('lib\\u001b]0;pwned\\u0007virt');
    } finally {
      site.backend.clearFaults();
    }
  });

  it('a token echoed in a field name or an HTML page start is redacted in the manifests, so the run still publishes', async () => {
    const users = JSON.parse(site.backend.responseBody('users')) as Record<string, unknown>[];
    users[0]![TOKEN] = 1;
    site.backend.setFault('users', { body: users });
    const echo = await siteWith((url) => [
      http.get(
        `${url}/api/teams`,
        () =>
          new HttpResponse(`<html>session fake\\u002dtoken\\u002dall\\u002dtypes expired</html>`, {
            status: 200,
            headers: { 'content-type': 'text/html' },
          }),
      ),
    ]);
    try {
      const cwd = tmpDir();
      const snap = await runCli(['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'snap'], {
        cwd,
        env: { SVC_TOKEN: TOKEN },
      });
      expect(snap.code).toBe(0);
      const manifest = readFileSync(join(cwd, 'snap', '_snapshot-manifest.json'), 'utf8');
      expect(manifest).toContain('[redacted]');
      expect(manifest).not.toContain(TOKEN);
      expect(allOutput(snap)).not.toContain(TOKEN);
      const col = await runCli(['collect', '--base-url', echo.url, '--ca-file', echo.caFile, '--out-dir', 'raw'], {
        cwd,
        env: { SVC_TOKEN: TOKEN },
      });
      expect(col.code).toBe(4);
      const raw = readFileSync(join(cwd, 'raw', '_collection-manifest.json'), 'utf8');
      expect(raw).toMatch(/GET \/api\/teams|HTML or XML/);
      expect(raw).toContain('[redacted]');
      expect(raw).not.toContain('fake\\\\u002dtoken');
      expect(allOutput(col)).not.toContain('fake\\u002dtoken');
    } finally {
      site.backend.clearFaults();
      await echo.close();
    }
  });

  it('a body holding the token JSON-escaped is caught by the pre-publish scan: nothing is published', async () => {
    const scan = await siteWith((url) => [
      http.get(
        `${url}/api/drives`,
        () =>
          new HttpResponse(`[{"id":"d1","name":"fake\\u002dtoken\\u002dall\\u002dtypes"}]`, {
            status: 200,
            headers: { 'content-type': 'application/json' },
          }),
      ),
    ]);
    try {
      const cwd = tmpDir();
      const r = await runCli(['collect', '--base-url', scan.url, '--ca-file', scan.caFile, '--out-dir', 'raw'], {
        cwd,
        env: { SVC_TOKEN: TOKEN },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/a token was found in output file api-drives\.json; nothing was published/);
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      await scan.close();
    }
  });
});

describe.runIf(hasSshKeygen())('5. the signing key in the data', () => {
  let keys: string;
  beforeAll(() => {
    keys = keyDir();
  });
  afterAll(() => removeKeys(keys));

  it("a drive whose name holds the signing key's text is refused by the scan: says the key's secret, which file and what to do, never the key; nothing published", async () => {
    const key = makeKey(keys, 'nightly');
    const keyText = readFileSync(key, 'utf8');
    const leak = await siteWith((url) => [
      http.get(`${url}/api/drives`, () => HttpResponse.json([{ id: 'd1', name: `pasted by mistake: ${keyText}` }])),
    ]);
    try {
      const cwd = tmpDir();
      const r = await runCli(
        ['--base-url', leak.url, '--ca-file', leak.caFile, '--out-dir', 'snap', '--sign-key', key],
        { cwd, env: { SVC_TOKEN: TOKEN } },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /the signing key's secret \(--sign-key or SVC_SIGN_KEY\), in one of its spellings .*, was found in output file \d+-drives \(\d+-\d+-\d{4}\)\.json; nothing was published/,
      );
      expect(r.stderr).toMatch(/treat the key as exposed\. Make a new key \(ssh-keygen -t ed25519/);
      expect(r.stderr).not.toMatch(/token|this is a bug/);
      // No line of the key's body, nor a long run of it, is ever shown.
      for (const line of keyText.split('\n').filter((l) => !l.startsWith('-----') && l.length > 0)) {
        expect(allOutput(r)).not.toContain(line);
        expect(allOutput(r)).not.toContain(line.slice(20, 50));
      }
      expect(readdirSync(cwd)).toEqual([]);
      // The same data with --raw: the raw body is the first file that holds it.
      const raw = await runCli(
        ['--base-url', leak.url, '--ca-file', leak.caFile, '--out-dir', 'snap', '--raw', '--sign-key', key, '--quiet'],
        { cwd, env: { SVC_TOKEN: TOKEN } },
      );
      expect(raw.code).toBe(1);
      expect(raw.stderr).toMatch(
        /the signing key's secret .* was found in output file raw\/api-drives\.json; nothing was published/,
      );
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      await leak.close();
    }
  });
});

describe('6. files are read only as regular files inside the directory', () => {
  it('replay refuses api-users.json as a symlink, even when its target matches the sha256', async () => {
    const dir = copyRecording();
    const outside = join(tmpDir(), 'users-outside.json');
    renameSync(join(dir, 'api-users.json'), outside);
    symlinkSync(outside, join(dir, 'api-users.json'));
    const cwd = tmpDir();
    const r = await runCli(['--replay', dir, '--out-dir', 'snap'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/api-users\.json is listed in _collection-manifest\.json but is a symbolic link/);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('replay refuses a manifest that is a symlink, and a FIFO planted under a listed name', async () => {
    const dir = copyRecording();
    const outside = join(tmpDir(), 'manifest.json');
    renameSync(join(dir, '_collection-manifest.json'), outside);
    symlinkSync(outside, join(dir, '_collection-manifest.json'));
    const r = await runCli(['--replay', dir, '--out-dir', 'snap'], { cwd: tmpDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/symbolic link/);

    const fifoDir = copyRecording();
    rmSync(join(fifoDir, 'api-teams.json'));
    execFileSync('mkfifo', [join(fifoDir, 'api-teams.json')]);
    // Opened non-blocking and refused: a FIFO nobody writes to must not hang the run.
    const f = await runCli(['--replay', fifoDir, '--out-dir', 'snap'], { cwd: tmpDir() });
    expect(f.timedOut).toBe(false);
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/api-teams\.json is listed in _collection-manifest\.json but is not a regular file/);
  });

  it('diff reads no file outside the snapshots, and never prints a file it could not parse', async () => {
    const cwd = tmpDir();
    expect((await runCli(['--replay', RECORDING, '--out-dir', 'a'], { cwd })).code).toBe(0);
    cpSync(join(cwd, 'a'), join(cwd, 'b'), { recursive: true });
    const usersFile = readdirSync(join(cwd, 'b')).find((f) => / ?\d+-users \(/.test(f))!;
    const secret = join(tmpDir(), 'id_rsa');
    writeFileSync(secret, 'TOP-SECRET-KEY-MATERIAL');
    const target = join(cwd, 'b', usersFile);
    renameSync(target, `${target}.moved`);
    symlinkSync(secret, target);
    const r = await runCli(['diff', 'a', 'b'], { cwd });
    expect(r.code).toBe(1);
    expect(allOutput(r)).not.toContain('TOP-SECRET');
    expect(r.stderr).toMatch(/symbolic link/);
  });

  it('diff never quotes a damaged export file', async () => {
    const cwd = tmpDir();
    expect((await runCli(['--replay', RECORDING, '--out-dir', 'a'], { cwd })).code).toBe(0);
    cpSync(join(cwd, 'a'), join(cwd, 'b'), { recursive: true });
    const usersFile = readdirSync(join(cwd, 'b')).find((f) => / ?\d+-users \(/.test(f))!;
    writeFileSync(join(cwd, 'b', usersFile), 'PRIVATE-LINE-1\nPRIVATE-LINE-2');
    const edited = await runCli(['diff', 'a', 'b'], { cwd });
    expect(edited.code).toBe(1);
    expect(allOutput(edited)).not.toContain('PRIVATE');
    expect(edited.stderr).toMatch(/does not match the sha256/);
    // Damaged as the manifest vouches for it: parsed, and still not quoted.
    rewriteExport(join(cwd, 'b'), usersFile, 'PRIVATE-LINE-1\nPRIVATE-LINE-2');
    const r = await runCli(['diff', 'a', 'b'], { cwd });
    expect(r.code).toBe(1);
    expect(allOutput(r)).not.toContain('PRIVATE');
    expect(r.stderr).toMatch(/is not valid JSON \(invalid JSON/);
  });
});

describe('7 and 8. replay refuses what live refuses', () => {
  const LIST_OF_NON_OBJECTS = [1, 'x', null, []];

  it('an HTML page with a matching sha256: replay fails the route as live does (exit 1)', async () => {
    site.backend.setFault('users', { html200: true });
    let live: CliResult;
    try {
      live = await runCli(['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'snap'], {
        cwd: tmpDir(),
        env: { SVC_TOKEN: TOKEN },
      });
    } finally {
      site.backend.clearFaults();
    }
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(/GET \/api\/users: expected JSON but received \d+ bytes of HTML or XML/);

    const dir = copyRecording();
    plant(dir, 'api-users.json', '<!doctype html><html><body>Please log in</body></html>');
    const cwd = tmpDir();
    const replay = await runCli(['--replay', dir, '--out-dir', 'snap'], { cwd });
    expect(replay.code).toBe(1);
    expect(replay.stderr).toMatch(/GET \/api\/users: expected JSON but received \d+ bytes of HTML or XML/);
    // A file is never quoted.
    expect(replay.stderr).not.toContain('Please log in');
    expect(readdirSync(cwd)).toEqual([]);

    const partial = await runCli(['--replay', dir, '--out-dir', 'snap', '--allow-partial', '--json'], { cwd });
    expect(partial.code).toBe(4);
    expect(
      (JSON.parse(readFileSync(join(cwd, 'snap', '_snapshot-manifest.json'), 'utf8')) as { complete: boolean })
        .complete,
    ).toBe(false);
  });

  it('a list whose elements are not objects fails its route, live and replay', async () => {
    site.backend.setFault('users', { body: LIST_OF_NON_OBJECTS });
    let live: CliResult;
    try {
      live = await runCli(['--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'snap'], {
        cwd: tmpDir(),
        env: { SVC_TOKEN: TOKEN },
      });
    } finally {
      site.backend.clearFaults();
    }
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(/GET \/api\/users: expected a JSON array of objects but element 0 is a JSON number/);

    const dir = copyRecording();
    plant(dir, 'api-users.json', JSON.stringify(LIST_OF_NON_OBJECTS));
    // Both ways a replay checks bodies: during the build, and up front with --raw (raw/ is written before the build).
    for (const extra of [[], ['--raw']]) {
      const replay = await runCli(['--replay', dir, '--out-dir', 'snap', ...extra], { cwd: tmpDir() });
      expect(replay.code).toBe(1);
      expect(replay.stderr).toMatch(
        /GET \/api\/users: expected a JSON array of objects but element 0 is a JSON number/,
      );
    }
    const partial = tmpDir();
    const withRaw = await runCli(['--replay', dir, '--out-dir', 'snap', '--raw', '--allow-partial'], { cwd: partial });
    expect(withRaw.code).toBe(4);
    // The refused body is not republished in raw/, and its route is recorded failed there.
    expect(existsSync(join(partial, 'snap', 'raw', 'api-users.json'))).toBe(false);
    const rawManifest = JSON.parse(readFileSync(join(partial, 'snap', 'raw', '_collection-manifest.json'), 'utf8')) as {
      routes: { route: string; error?: string }[];
    };
    expect(rawManifest.routes.find((r) => r.route === 'GET /api/users')?.error).toMatch(/element 0 is a JSON number/);
  });
});

/** Runs `fn` on a fresh tmpfs of `size` (only root may mount one), unmounted after. */
async function onTmpfs(size: string, fn: (mnt: string) => Promise<void>): Promise<void> {
  const mnt = tmpDir();
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', mnt]);
  try {
    await fn(mnt);
  } finally {
    execFileSync('umount', [mnt]);
  }
}

/** Bytes available or used on the file system of `dir`, as df counts them. */
function dfBytes(dir: string, field: 'avail' | 'used'): number {
  return Number(
    execFileSync('df', [`--output=${field}`, '-B1', dir])
      .toString()
      .trim()
      .split('\n')
      .pop(),
  );
}

describe('9. errors that blame the right thing', () => {
  it('a gzip body sent unasked: the route fails saying the server compressed it, no compressed bytes printed', async () => {
    const gz = await siteWith((url) => [
      http.get(
        `${url}/api/drives`,
        () =>
          new HttpResponse(gzipSync(Buffer.from('[{"id":"d1"}]')), {
            status: 200,
            headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          }),
      ),
      http.get(
        `${url}/api/teams`,
        () =>
          new HttpResponse(Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03, 0x8b, 0xae, 0x05, 0]), {
            status: 200,
            headers: { 'content-type': 'application/json' },
          }),
      ),
    ]);
    try {
      const cwd = tmpDir();
      const r = await runCli(['collect', '--base-url', gz.url, '--ca-file', gz.caFile, '--out-dir', 'raw'], {
        cwd,
        env: { SVC_TOKEN: TOKEN },
      });
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(
        /GET \/api\/drives: the server sent the body compressed \(Content-Encoding: gzip\) although the request asked for none/,
      );
      expect(r.stderr).toMatch(/GET \/api\/teams: expected JSON but received \d+ bytes of gzip-compressed data/);
      expect(r.stderr).not.toMatch(/may be truncated/);
      expectNoRawControls(r);
    } finally {
      await gz.close();
    }
  });

  it('a closed HTTPS_PROXY port names the proxy, not the backend', async () => {
    const port = await closedPort();
    const r = await runCli(
      ['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'raw', '--retries', '0'],
      { cwd: tmpDir(), env: { SVC_TOKEN: TOKEN, HTTPS_PROXY: `http://127.0.0.1:${port}` } },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `the proxy http://127.0.0.1:${port} (from HTTPS_PROXY) could not be reached (ECONNREFUSED)`,
    );
    expect(r.stderr).not.toMatch(/connection refused by 127\.0\.0\.1/);
  });

  it('a name too long for the file system: the path, what happened and what to do (exit 1), nothing written', async () => {
    const cwd = tmpDir();
    const r = await runCli(['--replay', RECORDING, '--out-dir', 'n'.repeat(300)], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /a name is too long for the file system \(ENAMETOOLONG\) while writing .*n{300}.*nothing was published\. Choose a shorter output directory/,
    );
    expect(r.stderr).not.toMatch(/unexpected failure|\n\s+at /);
    expect(readdirSync(cwd)).toEqual([]);
  });

  // A real full disk: a 160 KiB tmpfs, which only root may mount (CI runs as root, as .ci/run's apt-get needs).
  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'a full disk: the path, what happened and what to do (exit 1); the older snapshot stays whole and nothing is left half written',
    async () => {
      await onTmpfs('160k', async (mnt) => {
        const first = await runCli(['--replay', RECORDING, '--out-dir', 'out', '--quiet'], { cwd: mnt });
        expect(first.code).toBe(0);
        const before = Object.fromEntries(
          readdirSync(join(mnt, 'out')).map((f) => [f, readFileSync(join(mnt, 'out', f), 'utf8')]),
        );
        // Leave room for a little less than one more snapshot.
        const free = dfBytes(mnt, 'avail');
        writeFileSync(join(mnt, 'filler'), Buffer.alloc(Math.max(0, free - 24 * 1024)));
        const r = await runCli(['--replay', RECORDING, '--out-dir', 'out'], { cwd: mnt });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(
          /no space is left on the device \(ENOSPC\) while writing .*; nothing was published\. Free some space/,
        );
        expect(r.stderr).not.toMatch(/unexpected failure|\n\s+at /);
        expect(readdirSync(mnt).sort()).toEqual(['filler', 'out']);
        expect(
          Object.fromEntries(readdirSync(join(mnt, 'out')).map((f) => [f, readFileSync(join(mnt, 'out', f), 'utf8')])),
        ).toEqual(before);
      });
    },
  );

  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'a disk that fills while the spreadsheets are written: exit 1 with the path and what to do, nothing left behind',
    async () => {
      await onTmpfs('1m', async (mnt) => {
        const used = () => dfBytes(mnt, 'used');
        const empty = used();
        expect((await runCli(['--replay', RECORDING, '--out-dir', 'json', '--quiet'], { cwd: mnt })).code).toBe(0);
        const json = used() - empty;
        rmSync(join(mnt, 'json'), { recursive: true });
        expect(
          (
            await runCli(['--replay', RECORDING, '--out-dir', 'sheets', '--quiet', '--format', 'csv,xlsx'], {
              cwd: mnt,
            })
          ).code,
        ).toBe(0);
        const sheets = used() - empty;
        rmSync(join(mnt, 'sheets'), { recursive: true });
        // Room for the JSON exports and half of the spreadsheets.
        const free = dfBytes(mnt, 'avail');
        writeFileSync(join(mnt, 'filler'), Buffer.alloc(Math.max(0, free - json - Math.floor((sheets - json) / 2))));
        const r = await runCli(['--replay', RECORDING, '--out-dir', 'out', '--format', 'csv,xlsx'], { cwd: mnt });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(
          /no space is left on the device \(ENOSPC\) while writing .*\.(csv|xlsx); nothing was published\. Free some space/,
        );
        expect(r.stderr).not.toMatch(/unexpected failure|\n\s+at /);
        expect(readdirSync(mnt)).toEqual(['filler']);
      });
    },
  );

  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'a disk that fills while a live collect writes each body as it comes in: exit 1 with the path and what to do, nothing left behind',
    async () => {
      await onTmpfs('160k', async (mnt) => {
        const free = dfBytes(mnt, 'avail');
        writeFileSync(join(mnt, 'filler'), Buffer.alloc(Math.max(0, free - 8 * 1024)));
        const r = await runCli(['collect', '--base-url', site.url, '--ca-file', site.caFile, '--out-dir', 'raw'], {
          cwd: mnt,
          env: { SVC_TOKEN: TOKEN },
        });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(
          /no space is left on the device \(ENOSPC\) while writing .*\.partial-.*; nothing was published\. Free some space/,
        );
        expect(r.stderr).not.toMatch(/unexpected failure|\n\s+at /);
        expect(readdirSync(mnt)).toEqual(['filler']);
      });
    },
  );

  it.runIf(process.platform === 'linux')(
    'a directory that cannot be written (/sys): the path, what happened and what to do (exit 1)',
    async () => {
      const r = await runCli(['--replay', RECORDING, '--out-dir', '/sys/svc-snapshot-test'], { cwd: tmpDir() });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/\((EPERM|EACCES|EROFS)\) while writing \/sys; nothing was published\. (Check|Choose)/);
      expect(r.stderr).not.toMatch(/unexpected failure|\n\s+at /);
    },
  );

  it('a --ca-file that is not a regular file (/dev/zero) is a usage error, not a crash', async () => {
    const r = await runCli(['check', '--base-url', site.url, '--ca-file', '/dev/zero'], { env: { SVC_TOKEN: TOKEN } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--ca-file \/dev\/zero cannot be read \(not a regular file\)/);
  });

  it('a --ca-file that is a FIFO nobody writes to is a usage error at once, not a hang', async () => {
    const fifo = join(tmpDir(), 'ca.pem');
    execFileSync('mkfifo', [fifo]);
    const r = await runCli(['check', '--base-url', site.url, '--ca-file', fifo], {
      env: { SVC_TOKEN: TOKEN },
      timeoutMs: 30_000,
    });
    expect(r.timedOut).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--ca-file ${fifo} cannot be read (not a regular file)`);
  });

  it('a 300-character realm id gets a file name that fits, mapped in the manifest', async () => {
    const realm = `r${'x'.repeat(299)}`;
    const long = await startFakeSite({ realms: [{ id: realm, driver: 'libvirt' }] });
    try {
      const cwd = tmpDir();
      const r = await runCli(
        ['--base-url', long.url, '--ca-file', long.caFile, '--out-dir', 'snap', '--raw', '--quiet'],
        { cwd, env: { SVC_TOKEN: TOKEN } },
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const files = listFiles(join(cwd, 'snap'));
      for (const f of files) for (const part of f.split('/')) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(255);
      const manifest = JSON.parse(readFileSync(join(cwd, 'snap', 'raw', '_collection-manifest.json'), 'utf8')) as {
        routes: { route: string; file: string | null }[];
      };
      const active = manifest.routes.find((x) => x.route.endsWith('/active'))!;
      expect(active.file).toMatch(/^api-vms-rx{99}~[0-9a-f]{16}-active\.json$/);
      expect(files).toContain(`raw/${active.file}`);
      // And the collection replays to the same exports.
      const replay = await runCli(['--replay', join(cwd, 'snap', 'raw'), '--out-dir', 'again'], { cwd });
      expect(replay.code).toBe(0);
    } finally {
      await long.close();
    }
  });
});
