import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { rec, writeSnapshot, type Rec } from '../helpers/snapshot-dir.js';
import { HOSTILE_NAMES } from '../helpers/hostile-names.js';
import { launchChromium, openFile, type OpenedPage } from '../helpers/browser.js';
import { hasSshKeygen, keyDir, makeKey, removeKeys } from '../helpers/ssh-keys.js';
import type { ChangeSet } from '../../src/diff/types.js';
import { ReportSummary } from '../../src/summaries/schemas.js';

const SITE = 'https://platform.example.org';
const MANIFEST = '_snapshot-manifest.json';

/** Two nights of a site whose every text column that reaches the page holds a hostile name. */
function hostileNights(parent: string): { older: string; newer: string } {
  const users = (lastName: (h: string) => string): Rec[] =>
    HOSTILE_NAMES.map((h, i) => rec('users', { id: `u${i}`, firstName: h, lastName: lastName(h), email: h, role: h }));
  const older = writeSnapshot(join(parent, 'svc-snapshot-2026-11-20'), {
    date: '2026-11-20',
    baseUrl: SITE,
    records: {
      users: [...users(() => 'same'), ...HOSTILE_NAMES.map((h) => rec('users', { id: `gone ${h}`, firstName: h }))],
      teams: HOSTILE_NAMES.map((h) => rec('teams', { id: h, name: h })),
    },
  });
  const newer = writeSnapshot(join(parent, 'svc-snapshot-2026-11-21'), {
    date: '2026-11-21',
    baseUrl: SITE,
    records: {
      users: [
        ...users((h) => `${h} (new)`),
        ...HOSTILE_NAMES.map((h) => rec('users', { id: `new ${h}`, lastName: h })),
      ],
      teams: HOSTILE_NAMES.map((h) => rec('teams', { id: h, name: h })),
    },
    unavailable: { drives: HOSTILE_NAMES[0] },
    nullFields: [['users', 'permissions']],
  });
  // The manifest's own texts from the site: drift, validation samples, null-column reasons.
  const file = join(newer, MANIFEST);
  const m = JSON.parse(readFileSync(file, 'utf8'));
  m.drift = [{ route: 'GET /api/users', unknownFields: [...HOSTILE_NAMES] }];
  m.validation = {
    issues: HOSTILE_NAMES.length,
    samples: HOSTILE_NAMES.map((h, i) => ({ route: 'GET /api/users', index: i, path: h, message: h })),
  };
  m.nullFields = [{ export: 'users', field: 'permissions', reason: HOSTILE_NAMES[3] }];
  writeFileSync(file, `${JSON.stringify(m, null, 2)}\n`);
  return { older, newer };
}

/** A snapshot replayed from a shipped recording; with `time`, its manifest says it was taken then (the recordings share one time). */
async function replayInto(dir: string, recording: string, time?: string): Promise<string> {
  const res = await runCli(['--replay', join(REPO_ROOT, 'recordings', recording), '--out-dir', dir, '--quiet']);
  expect(res.code).toBe(0);
  if (time !== undefined) {
    const file = join(dir, MANIFEST);
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), time }, null, 2));
  }
  return dir;
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

/** What a page must never do: ask for anything but itself, log an error, open a dialog, or hold an element or handler from the data. */
async function expectInert(opened: OpenedPage, file: string): Promise<void> {
  const { page } = opened;
  expect(opened.requests).toEqual([pathToFileURL(file).href]);
  expect(opened.consoleErrors).toEqual([]);
  expect(opened.dialogs).toEqual([]);
  expect(
    await page
      .locator(
        'script, img, iframe, object, embed, svg foreignObject, a[href^="javascript"], [onload], [onerror], [onclick]',
      )
      .count(),
  ).toBe(0);
  // Every link stays on the page.
  for (const href of await page.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href'))))
    expect(href).toMatch(/^#/);
}

describe('svc-snapshot report', () => {
  it('writes the page into the snapshot (0600) with the changes since the older snapshot beside it, every hostile name shown as text', async () => {
    const parent = tmpDir();
    const { older, newer } = hostileNights(parent);
    const res = await runCli(['report', newer, '--json']);
    expect(res.stderr).not.toMatch(/error/i);
    expect(res.code).toBe(0);
    const file = join(newer, 'svc-snapshot-2026-11-21.html');
    expect(ReportSummary.parse(JSON.parse(res.stdout))).toMatchObject({ command: 'report', file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(newer).filter((n) => n.startsWith('.'))).toEqual([]);
    // verify still passes: the page is a file the manifest does not cover.
    expect((await runCli(['verify', newer])).code).toBe(0);

    const diff = JSON.parse((await runCli(['diff', older, newer, '--json'])).stdout) as ChangeSet;
    const manifest = JSON.parse(readFileSync(join(newer, MANIFEST), 'utf8')) as {
      exports: Array<{ export: string; count: number }>;
    };
    for (const javaScriptEnabled of [true, false]) {
      const opened = await openFile(browser, file, { javaScriptEnabled });
      try {
        await expectInert(opened, file);
        const { page } = opened;
        const body = (await page.locator('body').textContent()) ?? '';
        for (const h of HOSTILE_NAMES.slice(0, 5)) expect(body).toContain(h);
        expect(body).toContain('\\u202egnp.exe');
        expect(body).toContain(`long-${'x'.repeat(195)}… (49805 more characters)`);
        // The counts and the changes are the snapshot's and the diff's.
        const rows = await page
          .locator('table.exports tbody tr')
          .evaluateAll((trs) =>
            trs.map((tr) =>
              Array.from(tr.children as ArrayLike<{ textContent: string | null }>, (c) => (c.textContent ?? '').trim()),
            ),
          );
        expect(rows.map((r) => [r[0], Number(r[1])])).toEqual(manifest.exports.map((e) => [e.export, e.count]));
        for (const d of diff.exports) {
          const row = rows.find((r) => r[0] === d.export)!;
          const n = (s: string | undefined) => (s === '–' || s === '0' ? 0 : Number(/\d+/.exec(s ?? '')?.[0]));
          expect([n(row[2]), n(row[3]), n(row[4])]).toEqual([d.counts.added, d.counts.removed, d.counts.changed]);
        }
        expect(await page.locator('tr.added').count()).toBe(diff.totals.added);
        expect(await page.locator('tr.removed').count()).toBe(diff.totals.removed);
        expect(await page.locator('tr.changed').count()).toBe(diff.totals.changed);
        // The filter is CSS alone: it works with JavaScript off.
        await page.locator('label[for="show-added"]').click();
        expect(await page.locator('tr.added').first().isVisible()).toBe(true);
        expect(await page.locator('tr.removed').first().isVisible()).toBe(false);
        expect(await page.locator('tr.changed').first().isVisible()).toBe(false);
        await page.locator('label[for="show-all"]').click();
        expect(await page.locator('tr.removed').first().isVisible()).toBe(true);
      } finally {
        await opened.close();
      }
    }
  });

  it('lays the page out without horizontal overflow at 1280×800 and 390×844', async () => {
    const parent = tmpDir();
    const { newer } = hostileNights(parent);
    const out = join(parent, 'page.html');
    expect((await runCli(['report', newer, '--out', out])).code).toBe(0);
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      const opened = await openFile(browser, out, { width, height });
      try {
        // An expression, not a function: the tests compile without the DOM's types.
        const { scroll, client } = await opened.page.evaluate<{ scroll: number; client: number }>(
          '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
        );
        expect(scroll).toBeLessThanOrEqual(client);
      } finally {
        await opened.close();
      }
    }
  });

  it('gives the same bytes from the same inputs, and draws the nights of a history database as inline charts', async () => {
    const parent = tmpDir();
    const older = await replayInto(
      join(parent, 'svc-snapshot-2026-11-20'),
      'platform-3.13.8',
      '2026-11-20T02:00:00.000Z',
    );
    const newer = await replayInto(join(parent, 'svc-snapshot-2026-11-21'), 'platform-3.14.1');
    const db = join(parent, 'history.sqlite');
    const load = await runCli(['history', 'load', older, newer, `--history=${db}`]);
    expect(load.stderr).not.toMatch(/error/);
    expect(load.code).toBe(0);
    const a = join(parent, 'a.html');
    const b = join(parent, 'b.html');
    expect((await runCli(['report', newer, '--history', db, '--previous', older, '--out', a])).code).toBe(0);
    expect((await runCli(['report', newer, '--history', db, '--previous', older, '--out', b])).code).toBe(0);
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
    const opened = await openFile(browser, a);
    try {
      await expectInert(opened, a);
      const charts = opened.page.locator('#trends figure.trend svg');
      expect(await charts.count()).toBeGreaterThanOrEqual(15);
      expect(await opened.page.locator('#trends').textContent()).toContain('over 2 nights');
    } finally {
      await opened.close();
    }
  });

  it('refuses a snapshot whose export was edited (exit 1) and writes nothing', async () => {
    const parent = tmpDir();
    const { newer } = hostileNights(parent);
    const users = readdirSync(newer).find((n) => n.includes('-users ('))!;
    writeFileSync(join(newer, users), readFileSync(join(newer, users), 'utf8').replace('"u0"', '"u9"'));
    const res = await runCli(['report', newer]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/does not match the sha256/);
    expect(existsSync(join(newer, 'svc-snapshot-2026-11-21.html'))).toBe(false);
  });

  it('refuses (exit 2) a --previous taken after the snapshot, or at its time, and writes nothing', async () => {
    const parent = tmpDir();
    const { older, newer } = hostileNights(parent);
    const out = join(parent, 'page.html');
    const later = await runCli(['report', older, '--previous', newer, '--out', out]);
    expect(later.code).toBe(2);
    expect(later.stderr).toContain(
      `--previous ${newer} was taken at 2026-11-21T02:00:00.000Z, after ${older} (2026-11-20T02:00:00.000Z): ` +
        'give an older snapshot as --previous',
    );
    const same = await runCli(['report', newer, '--previous', newer]);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain(`--previous ${newer} was taken at the same time as ${newer} `);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(older).some((n) => n.endsWith('.html'))).toBe(false);
    expect(readdirSync(newer).some((n) => n.endsWith('.html'))).toBe(false);
    // The right way round, the page is written.
    expect((await runCli(['report', newer, '--previous', older, '--out', out])).code).toBe(0);
    expect(existsSync(out)).toBe(true);
  });

  it('writes the page against a --previous of another site, as asked, with a warning (silent with --quiet)', async () => {
    const parent = tmpDir();
    const { newer } = hostileNights(parent);
    const previousOf = (name: string, baseUrl: string) =>
      writeSnapshot(join(parent, name), {
        date: '2026-11-19',
        baseUrl,
        records: { users: [rec('users', { id: 'u0' })] },
      });
    const other = previousOf('svc-snapshot-2026-11-19', 'https://other.example.org');
    const out = join(parent, 'page.html');
    const res = await runCli(['report', newer, '--previous', other, '--out', out]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(
      `svc-snapshot: warning: --previous ${other} is a snapshot of https://other.example.org, not of ${SITE}: ` +
        "every finding is told against another site's",
    );
    expect(existsSync(out)).toBe(true);
    const quiet = await runCli(['report', newer, '--quiet', '--previous', other, '--out', out]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('is a snapshot of');
    const same = previousOf('svc-snapshot-2026-11-19-same', `${SITE}/`);
    const sameRes = await runCli(['report', newer, '--previous', same, '--out', out]);
    expect(sameRes.code).toBe(0);
    expect(sameRes.stderr).not.toContain('is a snapshot of');
  });

  it('is a usage error (exit 2) without a snapshot directory, and on convert --format html', async () => {
    expect((await runCli(['report'])).code).toBe(2);
    const parent = tmpDir();
    const { newer } = hostileNights(parent);
    const res = await runCli(['convert', newer, '--format', 'html']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/svc-snapshot report <snapshot-dir>/);
  });
});

describe('report --out into the snapshot', () => {
  it('refuses (exit 2) a spreadsheet form of the snapshot, written or not yet, and replaces only its own page', async () => {
    const dir = await replayInto(join(tmpDir(), 'svc-snapshot-2026-11-21'), 'platform-3.14.1');
    expect((await runCli(['convert', dir, '--format', 'csv,xlsx', '--quiet'])).code).toBe(0);
    const workbook = readdirSync(dir).find((f) => f.endsWith('.xlsx'))!;
    const csv = readdirSync(dir).find((f) => f.startsWith('12-users') && f.endsWith('.csv'))!;
    // A CSV form convert did not write (yet) is refused the same.
    const notYet = readdirSync(dir).find((f) => f.startsWith('3-teams') && f.endsWith('.csv'))!;
    rmSync(join(dir, notYet));
    const before = new Map([workbook, csv].map((f) => [f, readFileSync(join(dir, f))]));
    for (const name of [workbook, csv, notYet]) {
      const refused = await runCli(['report', dir, '--out', join(dir, name)]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(
        `--out ${join(dir, name)} is a file of the snapshot ${dir} (a spreadsheet form convert writes); give another file`,
      );
    }
    for (const [f, bytes] of before) expect(readFileSync(join(dir, f)).equals(bytes)).toBe(true);
    expect(existsSync(join(dir, notYet))).toBe(false);
    // The report page itself, by default or named, is written and written again.
    const page = join(dir, 'svc-snapshot-2026-11-21.html');
    expect((await runCli(['report', dir])).code).toBe(0);
    const again = await runCli(['report', dir, '--out', page]);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(page, 'utf8')).toContain('<html');
  });

  it('names the --out file, not its temporary name, when its directory is missing (exit 1)', async () => {
    const dir = await replayInto(join(tmpDir(), 'svc-snapshot-2026-11-21'), 'platform-3.14.1');
    const missing = join(tmpDir(), 'missing', 'dir');
    const res = await runCli(['report', dir, '--out', join(missing, 'x.html')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `svc-snapshot: error: cannot write ${join(missing, 'x.html')} (ENOENT); ${missing} is not a directory that ` +
        'exists: create it, or give a file in one that does. The file was not written',
    );
    expect(res.stderr).not.toContain('.partial-');
  });
});

describe('snapshot --format html', () => {
  it('writes the page into the snapshot, listed in the manifest so verify covers it, the same bytes on a second run', async () => {
    const pages: Buffer[] = [];
    for (const run of [1, 2]) {
      const parent = tmpDir();
      await replayInto(join(parent, 'svc-snapshot-2026-11-20'), 'platform-3.13.8', '2026-11-20T02:00:00.000Z');
      const dir = join(parent, 'svc-snapshot-2026-11-21');
      const res = await runCli([
        '--replay',
        join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
        '--out-dir',
        dir,
        '--format',
        'html',
        '--quiet',
      ]);
      expect(res.code).toBe(0);
      const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as { files?: Array<{ name: string }> };
      expect(manifest.files?.map((f) => f.name)).toEqual(['svc-snapshot-2026-11-21.html']);
      const verified = await runCli(['verify', dir, '--json']);
      expect(verified.code).toBe(0);
      expect(verified.stdout).not.toContain('not covered');
      const page = readFileSync(join(dir, 'svc-snapshot-2026-11-21.html'));
      expect(page.toString('utf8')).toContain('svc-snapshot-2026-11-20');
      if (run === 1) {
        // The page the `report` command writes from the published snapshot shows the same.
        const again = join(parent, 'again.html');
        expect((await runCli(['report', dir, '--out', again])).code).toBe(0);
        expect(readFileSync(again, 'utf8').replace(/unsigned \(no signature beside the manifest\)/, '')).toBe(
          page.toString('utf8').replace(/unsigned \(no signature beside the manifest\)/, ''),
        );
        // `report` never replaces a file of the snapshot: the page the manifest lists, the manifest, an export.
        const exportFile = readdirSync(dir).find((f) => f.startsWith('12-users'))!;
        for (const out of [[], ['--out', join(dir, MANIFEST)], ['--out', join(dir, '..', basename(dir), exportFile)]]) {
          const refused = await runCli(['report', dir, ...out]);
          expect(refused.code).toBe(2);
          expect(refused.stderr).toMatch(
            out.length === 0 ? /own report, listed in its manifest/ : /is a file of the snapshot/,
          );
        }
        expect(readFileSync(join(dir, 'svc-snapshot-2026-11-21.html')).equals(page)).toBe(true);
        expect((await runCli(['verify', dir])).code).toBe(0);
      }
      pages.push(page);
    }
    expect(pages[0]!.equals(pages[1]!)).toBe(true);
  });

  it.runIf(hasSshKeygen())(
    'with --history and --sign-key, shows the nights loaded before this one and says the manifest is signed, by which key',
    async () => {
      const keys = keyDir();
      try {
        const key = makeKey(keys, 'night');
        const parent = tmpDir();
        const older = await replayInto(
          join(parent, 'svc-snapshot-2026-11-20'),
          'platform-3.13.8',
          '2026-11-20T02:00:00.000Z',
        );
        const db = join(parent, 'history.sqlite');
        expect((await runCli(['history', 'load', older, `--history=${db}`, '--quiet'])).code).toBe(0);
        const dir = join(parent, 'svc-snapshot-2026-11-21');
        const res = await runCli([
          '--replay',
          join(REPO_ROOT, 'recordings', 'platform-3.14.1'),
          '--out-dir',
          dir,
          '--format',
          'html',
          `--history=${db}`,
          '--sign-key',
          key,
          '--quiet',
        ]);
        expect(res.code).toBe(0);
        const page = readFileSync(join(dir, 'svc-snapshot-2026-11-21.html'), 'utf8');
        const fingerprint = /^256 (SHA256:\S+)/.exec(
          execFileSync('ssh-keygen', ['-l', '-f', `${key}.pub`], { encoding: 'utf8' }),
        )![1]!;
        expect(page).toContain(`<dt>Signature</dt><dd>signed (key <code>${fingerprint}</code>)`);
        expect(page).toContain('over 2 nights');
        // Read back later, the signature is checked: valid, by the same key.
        const again = join(parent, 'again.html');
        expect((await runCli(['report', dir, '--out', again])).code).toBe(0);
        expect(readFileSync(again, 'utf8')).toContain(`<dt>Signature</dt><dd>valid (key <code>${fingerprint}</code>)`);
        expect((await runCli(['verify', dir])).code).toBe(0);
      } finally {
        removeKeys(keys);
      }
    },
  );
});
