import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, cliEnv, runCli, tmpDir } from '../helpers/run-cli.js';

describe('the CLI test helpers', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  });

  it('resolve the repository root from their own location', () => {
    expect(existsSync(join(REPO_ROOT, 'package.json'))).toBe(true);
    expect(CLI_BIN).toBe(join(REPO_ROOT, 'bin', 'svc-snapshot.js'));
  });

  it('give the CLI PATH, HOME, TZ and TMPDIR only (and the faketime clock), plus what the test passes', () => {
    process.env.SVC_TOKEN = 'fake-token-from-parent';
    process.env.SVC_BASE_URL = 'https://127.0.0.1:1';
    process.env.NODE_EXTRA_CA_CERTS = '/nonexistent/ca.pem';
    const env = cliEnv({ SVC_TOKEN_USER: 'fake-token-user', HOME: undefined });
    expect(Object.keys(env).sort()).toEqual(
      [
        'PATH',
        'SVC_TOKEN_USER',
        ...(process.env.TZ ? ['TZ'] : []),
        ...(process.env.TMPDIR ? ['TMPDIR'] : []),
        ...(process.env.FAKETIME !== undefined ? ['FAKETIME', 'LD_PRELOAD'] : []),
      ].sort(),
    );
  });

  it('run the CLI in that environment and report its exit', async () => {
    process.env.SVC_TOKEN = 'fake-token-from-parent';
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, signal: null, timedOut: false });
    expect(result.stdout).toContain('1.0.0');
  });

  it('kill a CLI that outlives its timeout', async () => {
    const dir = tmpDir();
    // A loopback server that accepts connections and never answers: the CLI waits (CONTRACT: --timeout 30 s).
    const { createServer } = await import('node:net');
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const result = await runCli(
        ['collect', '--base-url', `http://127.0.0.1:${port}`, '--out-dir', join(dir, 'out')],
        {
          env: { SVC_TOKEN: 'fake-token-hang' },
          timeoutMs: 1_500,
        },
      );
      expect(result).toMatchObject({ code: null, signal: 'SIGKILL', timedOut: true });
    } finally {
      server.close();
    }
  });

  it('make temporary directories', () => {
    const dir = tmpDir();
    expect(statSync(dir).isDirectory()).toBe(true);
  });
});
