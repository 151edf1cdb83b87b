import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A throwaway PostgreSQL cluster on 127.0.0.1 (trust auth) for the history
// tests: one per test file, so parallel workers never share a database.

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:PORT/<db> for a new, empty database. */
  createDatabase(name: string): Promise<string>;
  readonly port: number;
  stop(): void;
}

function findBinDir(): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : null;
}

/** Why PostgreSQL cannot be started here, or null when it can. In CI (CI=true) a missing server fails the suite instead. */
export function postgresUnavailable(): string | null {
  if (findBinDir()) return null;
  if (process.env.CI) throw new Error('PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb); .ci/run installs postgresql-15');
  return 'PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb)';
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** With `tls`, the server also speaks TLS with that certificate (ssl=on; plain connections are still accepted). */
export async function startPostgres(opts: { tls?: { certPem: string; keyPem: string } } = {}): Promise<TestPostgres> {
  const bin = findBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  const data = join(dir, 'data');
  // initdb refuses to run as root: the cluster belongs to the postgres user then.
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args;
    const r = spawnSync(asRoot ? 'runuser' : join(bin, cmd), argv, { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  if (asRoot) {
    const { uid, gid } = { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) };
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  let ssl = '';
  if (opts.tls) {
    // The key must belong to the server's user and be readable by it alone.
    const cert = join(dir, 'server.crt');
    const key = join(dir, 'server.key');
    writeFileSync(cert, opts.tls.certPem);
    writeFileSync(key, opts.tls.keyPem, { mode: 0o600 });
    if (asRoot) for (const f of [cert, key]) chownSync(f, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), Number(execFileSync('id', ['-g', 'postgres']).toString().trim()));
    ssl = ` -c ssl=on -c ssl_cert_file=${cert} -c ssl_key_file=${key}`;
  }
  const port = await freePort();
  run('pg_ctl', ['-D', data, '-w', '-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${ssl}`, 'start']);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const { default: pg } = await import('pg');
  return {
    port,
    stop,
    async createDatabase(name) {
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
  };
}
