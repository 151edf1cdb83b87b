import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryLoadSummary, HistoryRunsSummary } from '../../src/summaries/schemas.js';
import { NIGHTS, writeNight } from '../helpers/history-fixtures.js';
import { postgresUnavailable, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { runCli, tmpDir, type CliResult } from '../helpers/run-cli.js';

// The password is made when the tests run, so that none is ever committed;
// it holds characters that URL-encoding and JSON-escaping would change, so
// that an echo in any of those forms is caught too.
const ROLE = 'svc_pw';
const PASSWORD = `pw-${randomBytes(12).toString('base64url')}/+:"`;
const FORMS = [
  PASSWORD,
  encodeURIComponent(PASSWORD),
  JSON.stringify(PASSWORD).slice(1, -1),
  Buffer.from(PASSWORD).toString('base64'),
];

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Neither output stream nor any file the run could have written holds the password, in any form. */
function neverShown(res: CliResult, dirs: readonly string[]): void {
  for (const form of FORMS) {
    expect(res.stdout).not.toContain(form);
    expect(res.stderr).not.toContain(form);
    for (const d of dirs)
      for (const f of files(d)) if (!f.endsWith('.pgpass')) expect(readFileSync(f, 'latin1'), f).not.toContain(form);
  }
}

describe.skipIf(postgresUnavailable() !== null)(
  'PostgreSQL with password authentication (scram-sha-256) through the real binary',
  () => {
    let pg: TestPostgres;
    let nights: string[];
    let work: string;
    beforeAll(async () => {
      pg = await startPostgres({ passwordRole: { user: ROLE, password: PASSWORD } });
      work = tmpDir();
      nights = NIGHTS.slice(0, 2).map((n) => writeNight(join(work, `svc-snapshot-${n.date}`), n));
    });
    afterAll(() => pg?.stop());

    /** A HOME of its own, with no .pgpass unless the test writes one. */
    const home = () => tmpDir();

    /** Loads both nights and lists them through the binary; both must succeed, and the runs are the two nights. */
    async function loadAndList(url: string, env: Record<string, string | undefined>) {
      const load = await runCli(['history', 'load', ...nights, `--history=${url}`, '--json', '--quiet'], { env });
      expect(load.stderr).toBe('');
      expect(load.code).toBe(0);
      expect(HistoryLoadSummary.parse(JSON.parse(load.stdout)).snapshots.map((s) => s.status)).toEqual([
        'loaded',
        'loaded',
      ]);
      const runs = await runCli(['history', 'runs', `--history=${url}`, '--json'], { env });
      expect(runs.code).toBe(0);
      expect(HistoryRunsSummary.parse(JSON.parse(runs.stdout)).runs.map((r) => r.date)).toEqual(
        NIGHTS.slice(0, 2).map((n) => n.date),
      );
      return { load, runs };
    }

    it('loads and lists snapshots with the password in PGPASSWORD', async () => {
      const url = await pg.createDatabase('with_env', ROLE);
      expect(url).toBe(`postgres://${ROLE}@127.0.0.1:${pg.port}/with_env`);
      const env = { HOME: home(), PGPASSWORD: PASSWORD };
      const { load, runs } = await loadAndList(url, env);
      neverShown(load, [work, env.HOME]);
      neverShown(runs, []);
    });

    it('loads and lists snapshots with the password in ~/.pgpass (mode 0600) and no PGPASSWORD', async () => {
      const url = await pg.createDatabase('with_pgpass', ROLE);
      const h = home();
      // .pgpass escapes ':' and '\\' in its fields.
      writeFileSync(
        join(h, '.pgpass'),
        `127.0.0.1:${pg.port}:with_pgpass:${ROLE}:${PASSWORD.replace(/[\\:]/g, (c) => `\\${c}`)}\n`,
        { mode: 0o600 },
      );
      chmodSync(join(h, '.pgpass'), 0o600);
      const env = { HOME: h, PGPASSWORD: undefined };
      const { load, runs } = await loadAndList(url, env);
      const back = join(work, 'back-pgpass');
      const asOf = await runCli(
        ['history', 'as-of', NIGHTS[1]!.date, `--history=${url}`, '--out-dir', back, '--quiet'],
        { env },
      );
      expect(asOf.code).toBe(0);
      for (const f of readdirSync(nights[1]!))
        expect(readFileSync(join(back, f)).equals(readFileSync(join(nights[1]!, f))), f).toBe(true);
      neverShown(load, [work, h]);
      neverShown(runs, []);
      neverShown(asOf, [back]);
      // The file keeps the mode the user gave it: nothing rewrote it.
      expect(statSync(join(h, '.pgpass')).mode & 0o777).toBe(0o600);
    });

    it('a wrong password exits 1, names the target and where the password comes from, and never shows it', async () => {
      const url = await pg.createDatabase('wrong_pw', ROLE);
      const wrong = `${PASSWORD}-not`;
      const out = join(work, 'never-wrong');
      for (const args of [
        ['history', 'load', ...nights, `--history=${url}`],
        ['history', 'runs', `--history=${url}`],
        ['history', 'as-of', NIGHTS[0]!.date, `--history=${url}`, '--out-dir', out],
      ]) {
        const res = await runCli(args, { env: { HOME: home(), PGPASSWORD: wrong } });
        expect(res.code, args[1]).toBe(1);
        expect(res.stderr).toContain(`postgres://${ROLE}@127.0.0.1:${pg.port}/wrong_pw`);
        expect(res.stderr).toMatch(/password authentication failed/);
        expect(res.stderr).toMatch(/PGPASSWORD or ~\/\.pgpass/);
        expect(res.stderr).not.toMatch(/\n\s+at /);
        expect(res.stderr).not.toContain(wrong);
        neverShown(res, [work]);
      }
      expect(existsSync(out)).toBe(false);
    });

    it('no password at all (no PGPASSWORD, no ~/.pgpass) exits 1 and says where to put one', async () => {
      const url = await pg.createDatabase('no_pw', ROLE);
      const res = await runCli(['history', 'load', nights[0]!, `--history=${url}`], {
        env: { HOME: home(), PGPASSWORD: undefined },
      });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`postgres://${ROLE}@127.0.0.1:${pg.port}/no_pw`);
      expect(res.stderr).toMatch(
        /asks for a password for svc_pw and none was found: set PGPASSWORD, or put it in ~\/\.pgpass/,
      );
      expect(res.stderr).not.toMatch(/\n\s+at /);
      neverShown(res, [work]);
    });

    it('a .pgpass readable by others is ignored (as psql does), so the server still gets no password', async () => {
      const url = await pg.createDatabase('open_pgpass', ROLE);
      const h = home();
      writeFileSync(
        join(h, '.pgpass'),
        `127.0.0.1:${pg.port}:open_pgpass:${ROLE}:${PASSWORD.replace(/[\\:]/g, (c) => `\\${c}`)}\n`,
      );
      chmodSync(join(h, '.pgpass'), 0o644);
      const res = await runCli(['history', 'runs', `--history=${url}`], { env: { HOME: h, PGPASSWORD: undefined } });
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/group or world access/);
      neverShown(res, []);
    });

    it('a URL carrying the password is a usage error before any connection, and the password is never echoed', async () => {
      const out = join(work, 'never-url');
      for (const [args, env] of [
        [
          [
            'history',
            'runs',
            `--history=postgres://${ROLE}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${pg.port}/postgres`,
          ],
          {},
        ],
        [
          ['history', 'load', nights[0]!, `--history=postgresql://${ROLE}:${PASSWORD}@127.0.0.1:${pg.port}/postgres`],
          { PGPASSWORD: PASSWORD },
        ],
        [
          [
            'history',
            'as-of',
            NIGHTS[0]!.date,
            '--out-dir',
            out,
            `--history=postgres://${ROLE}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${pg.port}/postgres`,
          ],
          {},
        ],
      ] as const) {
        const res = await runCli([...args], { env: { HOME: home(), ...env } });
        expect(res.code, args[1]).toBe(2);
        expect(res.stderr).toMatch(/carries a password|cannot be parsed/);
        expect(res.stderr).toMatch(/PGPASSWORD or ~\/\.pgpass|postgres:\/\/user@host:port\/db/);
        neverShown(res, [work]);
      }
      expect(existsSync(out)).toBe(false);
    });
  },
);
