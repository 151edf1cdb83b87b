/**
 * CONTRACT section 18 through the binary, over the three shipped nights and
 * recordings/waivers.yaml: states against the night before, a waived
 * finding, an ended waiver, a stale one; `_findings.json` valid against the
 * committed JSON Schema; the findings CSV beside it, the same from
 * `svc-snapshot findings --format csv`, read back by LibreOffice; the
 * metrics; a night whose route for a rule failed, its findings carried with
 * that night's waivers; an unusable waivers file refused with nothing written.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishedValidator } from '../helpers/summary-schema.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { SOFFICE, fodsViaLibreOffice } from '../helpers/libreoffice.js';
import { writeSnapshot } from '../helpers/snapshot-dir.js';
import { startPingReceiver } from '../helpers/ping-receiver.js';
import { getTestCerts } from '../fake/certs.js';
import { openHistory } from '../../src/history/engine.js';
import { parseHistoryTarget } from '../../src/history/target.js';

const findingsSchema = publishedValidator('findings');

const NIGHTS = ['platform-3.14.1', 'platform-3.14.1-night2', 'platform-3.14.1-night3'].map((n) =>
  join(REPO_ROOT, 'recordings', n),
);
const WAIVERS = join(REPO_ROOT, 'recordings', 'waivers.yaml');
const NIGHT1_TIME = '2026-11-21T02:00:00.000Z';

interface Finding {
  id: string;
  rule: string;
  severity: string;
  state?: string;
  firstSeen?: string;
  subject: { export: string; key: string[] };
  display: Record<string, string>;
  waived?: { reason: string; owner: string; expires: string };
  waiverEnded?: { owner: string; expires: string };
}
interface Report {
  time: string;
  previous?: { time: string; source: string };
  waivers?: {
    sha256: string;
    stale: Array<{ line: number }>;
    endingSoon: Array<{ line: number }>;
    ended: Array<{ line: number }>;
  };
  findings: Finding[];
  resolved?: Finding[];
  carried?: Finding[];
}

let parent: string;
let night3: string;
let metrics: string;

beforeAll(async () => {
  parent = tmpDir('svc-over-time-');
  metrics = join(parent, 'svc.prom');
  for (const [i, night] of NIGHTS.entries()) {
    const res = await runCli(
      ['--replay', night, '--findings', '--format', 'csv', '--waivers', WAIVERS, '--metrics-file', metrics],
      { cwd: parent },
    );
    expect(res.code, res.stderr).toBe(0);
    // Night 3: the one waiver of the file that ended before it (line 14) is said, and nothing else is.
    if (i === 2)
      expect(res.stderr.split('\n').filter((l) => l.includes('warning'))).toEqual([
        'svc-snapshot: warning: waiver on line 14 (quota-exceeded, platform-team@example.org) ended 2026-11-22: ' +
          'its findings count again; renew it or remove it from the waivers file',
      ]);
  }
  night3 = join(parent, 'svc-snapshot-2026-11-23');
}, 120_000);

describe('the third night with the shipped waivers', () => {
  it('_findings.json: valid against the schema, each finding new or open since its first night, the resolved ones listed', () => {
    const report = JSON.parse(readFileSync(join(night3, '_findings.json'), 'utf8')) as Report;
    expect(findingsSchema(report), JSON.stringify(findingsSchema.errors)).toBe(true);
    expect(report.previous).toEqual({ time: '2026-11-22T02:00:00.000Z', source: 'snapshot' });
    const states = report.findings.map((f) => f.state);
    expect(states.filter((s) => s === 'new').length).toBeGreaterThan(0);
    expect(report.findings.some((f) => f.state === 'open' && f.firstSeen === NIGHT1_TIME)).toBe(true);
    expect(report.resolved!.length).toBeGreaterThan(0);
    expect(report.resolved!.every((f) => f.firstSeen === NIGHT1_TIME)).toBe(true);
    // No resolved finding is still there; every id once.
    const ids = new Set(report.findings.map((f) => f.id));
    expect(ids.size).toBe(report.findings.length);
    expect(report.resolved!.some((f) => ids.has(f.id))).toBe(false);
  });

  it('two findings waived, one waiver ended (its finding active again), one stale, one ending soon; the file hash recorded', () => {
    const report = JSON.parse(readFileSync(join(night3, '_findings.json'), 'utf8')) as Report;
    const waived = report.findings.filter((f) => f.waived);
    expect(waived.map((f) => [f.display.user, f.display.requirement])).toEqual([
      ['Priya Tanaka', 'Requirement 1: Clinical data course'],
      ['Priya Tanaka', 'Requirement 3: Clinical data course'],
    ]);
    expect(waived[0]!.waived!.owner).toBe('security-office@example.org');
    const ended = report.findings.filter((f) => f.waiverEnded);
    expect(ended.map((f) => [f.rule, f.display.team, f.waiverEnded!.expires])).toEqual([
      ['quota-exceeded', 'Team 2 Imaging', '2026-11-22'],
    ]);
    expect(report.waivers!.sha256).toBe(createHash('sha256').update(readFileSync(WAIVERS)).digest('hex'));
    expect(report.waivers!.ended.map((n) => n.line)).toEqual([14]);
    expect(report.waivers!.stale.map((n) => n.line)).toEqual([20]);
    expect(report.waivers!.endingSoon.map((n) => n.line)).toEqual([8]);
  });

  it('--fail-on counts what is not waived; the metrics split the waived ones out', async () => {
    const text = readFileSync(metrics, 'utf8');
    expect(text).toMatch(/^svc_snapshot_findings\{[^}]*rule="certification-missing",severity="high"\} 12$/m);
    expect(text).toMatch(/^svc_snapshot_findings_waived\{[^}]*rule="certification-missing",severity="high"\} 2$/m);
    expect(text).toMatch(/^svc_snapshot_findings_waived\{[^}]*rule="quota-exceeded",severity="medium"\} 0$/m);
    const res = await runCli(['findings', night3, '--waivers', WAIVERS, '--fail-on', 'high']);
    expect(res.code).toBe(6);
    expect(res.stderr).toContain('--fail-on high: 16 finding(s) of severity high or higher (exit 6)');
    const without = await runCli(['findings', night3, '--fail-on', 'high']);
    expect(without.stderr).toContain('--fail-on high: 18 finding(s) of severity high or higher (exit 6)');
  });

  it('the text shows new and resolved first, then each person once with their projects', async () => {
    const res = await runCli(['findings', night3, '--waivers', WAIVERS]);
    expect(res.code).toBe(0);
    const out = res.stdout;
    expect(out).toMatch(
      /Since the snapshot of 2026-11-22T02:00:00Z: \d+ new, \d+ open, \d+ resolved, \d+ waived, \d+ active\.\nNew:\n/,
    );
    expect(out.indexOf('Resolved:')).toBeLessThan(out.indexOf('\nPriya Tanaka <priya.tanaka.10@example.org>\n'));
    expect(out.split('\n').filter((l) => l === 'Priya Tanaka <priya.tanaka.10@example.org>')).toHaveLength(1);
    expect(out).toContain('[waived by security-office@example.org until 2026-12-15: ');
    expect(out).toContain('Stale (they match no finding):\n  line 20: certification-missing');
  });

  it('the report page: new and resolved first, then each person once, the waived findings marked', async () => {
    const page = join(tmpDir('svc-over-time-page-'), 'page.html');
    const res = await runCli(['report', night3, '--waivers', WAIVERS, '--out', page]);
    expect(res.code, res.stderr).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).toMatch(
      /<p class="counts">Since the snapshot of 2026-11-22T02:00:00Z: \d+ new, \d+ open, \d+ resolved, \d+ waived, \d+ active\.<\/p>/,
    );
    const person = '<summary><bdi>Priya Tanaka &lt;priya.tanaka.10@example.org&gt;</bdi>: 3 findings</summary>';
    expect(html.split(person)).toHaveLength(2);
    expect(html.indexOf('<summary>New: ')).toBeLessThan(html.indexOf(person));
    expect(html.indexOf('<summary>Resolved: ')).toBeLessThan(html.indexOf('<h3>By person</h3>'));
    expect(html).toContain('waived by <bdi>security-office@example.org</bdi> until 2026-12-15');
    expect(html).toContain('<p>Stale (they match no finding):</p>');
  });

  it('the text and the report page read as a person reads them: no UUID, each waiver with owner, reason and end date, the resolved ones dated', async () => {
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-/;
    const res = await runCli(['findings', night3, '--waivers', WAIVERS]);
    expect(res.code, res.stderr).toBe(0);
    const out = res.stdout;
    expect(out).not.toMatch(uuid);
    expect(out.split('\n')[0]).toMatch(/ at 2026-11-23T02:00:00Z$/);
    // Each waiver by the names of the findings it matches (the stale one: the findings it matched, resolved tonight).
    expect(out).toContain(
      'Ended (their findings are active again):\n  line 14: quota-exceeded, team Team 2 Imaging: ' +
        'extra cores granted for the imaging campaign (platform-team@example.org, until 2026-11-22)\n',
    );
    expect(out).toMatch(
      /\n {2}line 8: certification-missing, Priya Tanaka <priya\.tanaka\.10@example\.org>, project Project 1\b.*: NDA and course booked for 4 December; access reviewed by the PI \(security-office@example\.org, until 2026-12-15\)\n/,
    );
    expect(out).toMatch(
      /\n {2}line 20: certification-missing, Femi Weiß <femi\.wei\.0@example\.org>, project Project 1\b.*: NDA being signed \(security-office@example\.org, until 2027-01-15\)\n/,
    );
    const resolved = out.slice(out.indexOf('Resolved:\n'), out.indexOf('\nWaivers ')).split('\n').slice(1, -1);
    expect(resolved.length).toBe(4);
    for (const line of resolved) expect(line).toContain('(resolved 2026-11-23, first seen 2026-11-21; ');

    const page = join(tmpDir('svc-over-time-readable-'), 'page.html');
    const report = await runCli(['report', night3, '--waivers', WAIVERS, '--out', page]);
    expect(report.code, report.stderr).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).not.toMatch(uuid);
    expect(html).toContain(
      '<li>line 14: <code>quota-exceeded</code>, <bdi>team Team 2 Imaging</bdi>: extra cores granted for the ' +
        'imaging campaign (<bdi>platform-team@example.org</bdi>, until 2026-11-22)</li>',
    );
    expect(html).toMatch(
      /<li>line 20: <code>certification-missing<\/code>, <bdi>Femi Weiß &lt;femi\.wei\.0@example\.org&gt;, project Project 1[^<]*<\/bdi>: NDA being signed \(<bdi>security-office@example\.org<\/bdi>, until 2027-01-15\)<\/li>/,
    );
    const resolvedTable = html.slice(
      html.indexOf('<summary>Resolved: '),
      html.indexOf('</details>', html.indexOf('<summary>Resolved: ')),
    );
    expect(resolvedTable).toContain('<th scope="col">Resolved</th><th scope="col">First seen</th>');
    expect(resolvedTable.split('<td class="nw">2026-11-23</td><td class="nw">2026-11-21</td></tr>')).toHaveLength(5);
    // The changes by name: a user's changed record, its time column in ISO 8601.
    expect(html).toMatch(
      /<span class="k">id<\/span>=<bdi>Bo Nakamura<\/bdi><\/td><td class="wide"><ul class="cols"><li><span class="k">expiration<\/span>: <bdi class="old"><span class="null">null<\/span><\/bdi> → <bdi class="new">2026-11-22T02:00:00Z<\/bdi>/,
    );
  });

  it('findings --previous <dir>: the states against that snapshot', async () => {
    const res = await runCli(['findings', night3, '--json', '--previous', join(parent, 'svc-snapshot-2026-11-21')]);
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout) as Report;
    expect(report.previous).toEqual({ time: NIGHT1_TIME, source: 'snapshot' });
    expect(report.findings.filter((f) => f.state === 'open').every((f) => f.firstSeen === NIGHT1_TIME)).toBe(true);
  });

  it('findings --previous <dir> of another site: told against it as asked, with a warning (silent with --quiet)', async () => {
    const night1 = join(parent, 'svc-snapshot-2026-11-21');
    const own = (JSON.parse(readFileSync(join(night3, '_snapshot-manifest.json'), 'utf8')) as { baseUrl: string })
      .baseUrl;
    const copyOf = (baseUrl: string) => {
      const dir = join(tmpDir(), 'svc-snapshot-2026-11-21');
      cpSync(night1, dir, { recursive: true });
      const file = join(dir, '_snapshot-manifest.json');
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), baseUrl }, null, 2));
      return dir;
    };
    const other = copyOf('https://other.example.org');
    const res = await runCli(['findings', night3, '--json', '--previous', other]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(
      `svc-snapshot: warning: --previous ${other} is a snapshot of https://other.example.org, not of ${own}: ` +
        "every finding is told against another site's",
    );
    expect((JSON.parse(res.stdout) as Report).previous).toEqual({ time: NIGHT1_TIME, source: 'snapshot' });
    const quiet = await runCli(['findings', night3, '--json', '--quiet', '--previous', other]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    // The same site spelled with /api/, as the snapshot found beside is told: no warning.
    const same = await runCli(['findings', night3, '--json', '--previous', copyOf(`${own}/api/`)]);
    expect(same.code).toBe(0);
    expect(same.stderr).not.toContain('is a snapshot of');
  });

  it('findings --previous <dir> taken after the snapshot, or at its time: a usage error naming both times, nothing printed', async () => {
    const night1 = join(parent, 'svc-snapshot-2026-11-21');
    const later = await runCli(['findings', night1, '--json', '--previous', night3]);
    expect(later.code).toBe(2);
    expect(later.stderr).toContain(
      `--previous ${night3} was taken at 2026-11-23T02:00:00.000Z, after ${night1} (${NIGHT1_TIME}): ` +
        'give an older snapshot as --previous',
    );
    expect(JSON.parse(later.stdout)).toMatchObject({ command: 'findings', exitCode: 2 });
    const same = await runCli(['findings', night3, '--format', 'csv', '--previous', night3]);
    expect(same.code).toBe(2);
    expect(same.stdout).toBe('');
    expect(same.stderr).toContain(
      `--previous ${night3} was taken at the same time as ${night3} (2026-11-23T02:00:00.000Z), so it is no night ` +
        'before: give an older snapshot as --previous',
    );
  });

  it('_findings.csv is listed and verified with the snapshot; findings --format csv prints the same bytes; LibreOffice reads it as text', async () => {
    const manifest = JSON.parse(readFileSync(join(night3, '_snapshot-manifest.json'), 'utf8')) as {
      files: Array<{ name: string }>;
    };
    expect(manifest.files.map((f) => f.name)).toContain('_findings.csv');
    expect((await runCli(['verify', night3])).code).toBe(0);
    const res = await runCli(['findings', night3, '--format', 'csv', '--waivers', WAIVERS]);
    expect(res.code).toBe(0);
    const written = readFileSync(join(night3, '_findings.csv'), 'utf8');
    // On stdout every byte passes the terminal's escaping: LF line ends, no byte-order mark, the same rows.
    expect(res.stdout).toBe(written.slice(1).replace(/\r\n/g, '\n'));
    expect(written.split('\r\n')[0]).toBe(
      '\uFEFFid,state,severity,rule,user,email,project,team,requirement,level,vms,subject_export,subject_key,detail,' +
        'first_seen,waived_reason,waived_owner,waived_expires,waiver_ended',
    );
    if (!SOFFICE) throw new Error('LibreOffice (soffice) is not installed: node scripts/test-prereqs.mjs installs it');
    const work = tmpDir('svc-findings-csv-');
    const file = join(work, 'findings.csv');
    writeFileSync(file, written);
    const fods = fodsViaLibreOffice(file, work, 'CSV:44,34,76,1');
    expect(fods).toContain('<text:p>Priya Tanaka</text:p>');
    expect(fods).toContain('<text:p>security-office@example.org</text:p>');
    // A team whose name a spreadsheet would take for a formula: text, through findings --format csv.
    const hostile = writeSnapshot(join(work, 'snap'), {
      records: {
        teams: [
          {
            id: 'team|x',
            name: '=HYPERLINK("http://example.org","x")',
            teamQuotas_cores: 1,
            usage_vms_cores: 2,
            usage_vms_mem: 0,
            usage_vms_cnt: 1,
            usage_drives_cnt: 0,
            endDate: null,
          },
        ],
      },
    });
    const printed = await runCli(['findings', hostile, '--format', 'csv']);
    expect(printed.code).toBe(0);
    const hostileFile = join(work, 'hostile.csv');
    writeFileSync(hostileFile, printed.stdout);
    const hostileFods = fodsViaLibreOffice(hostileFile, work, 'CSV:44,34,76,1');
    expect(hostileFods).not.toContain('table:formula');
    expect(hostileFods).toContain('&apos;=HYPERLINK(&quot;http://example.org&quot;,&quot;x&quot;)');
    expect((await runCli(['findings', night3, '--format', 'xlsx'])).code).toBe(2);
  }, 120_000);
});

describe('the findings in the history database', () => {
  it('findings_versions: open since their first night, the resolved ones closed; a snapshot with no neighbour takes its states from it', async () => {
    const dir = tmpDir('svc-over-time-history-');
    const history = join(dir, 'h.sqlite');
    const nights = ['2026-11-21', '2026-11-22', '2026-11-23'].map((d) => join(parent, `svc-snapshot-${d}`));
    const load = await runCli(['history', 'load', ...nights, `--history=${history}`]);
    expect(load.code, load.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(night3, '_findings.json'), 'utf8')) as Report;
    const db = await openHistory(parseHistoryTarget(history, dir), { mustExist: true });
    try {
      const current = await db.all(
        'SELECT id, first_seen, waived_owner FROM findings_versions WHERE seen_to IS NULL ORDER BY id',
      );
      expect(current.map((r) => [r[0], r[1]])).toEqual(
        report.findings.map((f) => [f.id, f.firstSeen]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
      );
      expect(current.filter((r) => r[2] !== null)).toHaveLength(2);
      for (const f of report.resolved!) {
        const rows = await db.all('SELECT seen_to FROM findings_versions WHERE id = ? ORDER BY version_id', [f.id]);
        expect(rows.at(-1)![0]).toBe(report.time);
      }
    } finally {
      await db.close();
    }
    // Nights 1 and 2 in a database; night 3 taken alone elsewhere: its states come from the database.
    const partial = join(dir, 'two.sqlite');
    expect((await runCli(['history', 'load', ...nights.slice(0, 2), `--history=${partial}`])).code).toBe(0);
    const out = join(dir, 'alone', 'svc-snapshot-2026-11-23');
    const res = await runCli(['--replay', NIGHTS[2]!, '--out-dir', out, '--findings', `--history=${partial}`]);
    expect(res.code, res.stderr).toBe(0);
    const alone = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as Report;
    expect(alone.previous).toEqual({ time: '2026-11-22T02:00:00.000Z', source: 'history' });
    expect(alone.findings.map((f) => [f.id, f.state, f.firstSeen])).toEqual(
      report.findings.map((f) => [f.id, f.state, f.firstSeen]),
    );
    expect(alone.resolved!.map((f) => f.id)).toEqual(report.resolved!.map((f) => f.id));
  });
});

/** A copy of the recording `night` in which `route` failed (HTTP 503), as a collection records it. */
function withFailedRoute(night: string, route: string): string {
  const collection = join(tmpDir('svc-failed-route-'), 'collection');
  cpSync(night, collection, { recursive: true });
  const manifestFile = join(collection, '_collection-manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { routes: Array<Record<string, unknown>> };
  const entry = manifest.routes.find((r) => r.route === route)!;
  rmSync(join(collection, entry.file as string));
  for (const k of ['file', 'bytes', 'sha256', 'durationMs']) delete entry[k];
  Object.assign(entry, { status: 503, file: null, attempts: 4, error: 'HTTP 503 Service Unavailable' });
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  return collection;
}

describe("a rule not evaluated tonight: the night before's findings carried, with tonight's waivers", () => {
  it('a waiver ended since no longer waives a carried finding, one added tonight does, none without a file', async () => {
    const dir = tmpDir('svc-over-time-carried-');
    const team1 = 'team|b0c1b8d1-efba-4f64-a100-9d93ac8086f6';
    const waivers = (name: string, owner: string, expires: string) => {
      const file = join(dir, name);
      writeFileSync(
        file,
        `waivers:\n  - rule: quota-exceeded\n    subject: ["${team1}"]\n    reason: extra cores\n` +
          `    owner: ${owner}\n    expires: ${expires}\n`,
      );
      return file;
    };
    // In force on night 2 (2026-11-22T02:00), ended by night 3's time.
    const ended = waivers('ended.yaml', 'platform-team@example.org', '2026-11-22');
    const added = waivers('added.yaml', 'capacity@example.org', '2027-01-15');
    const before = join(dir, 'svc-snapshot-2026-11-22');
    const night2 = await runCli(['--replay', NIGHTS[1]!, '--out-dir', before, '--findings', '--waivers', ended]);
    expect(night2.code, night2.stderr).toBe(0);
    const quota = (f: Finding) => f.rule === 'quota-exceeded' && f.subject.key[0] === team1;
    const was = (JSON.parse(readFileSync(join(before, '_findings.json'), 'utf8')) as Report).findings.find(quota)!;
    expect(was.waived?.expires).toBe('2026-11-22');

    // Night 3: the teams' usage could not be read, so quota-exceeded is not evaluated; its finding is carried.
    const out = join(dir, 'svc-snapshot-2026-11-23');
    const prom = join(dir, 'svc.prom');
    const collection = withFailedRoute(NIGHTS[2]!, 'GET /api/teams/usage');
    const args = ['--out-dir', out, '--findings', '--format', 'csv', '--allow-partial', '--metrics-file', prom];
    const night3 = await runCli(['--replay', collection, ...args, '--waivers', ended]);
    expect(night3.code, night3.stderr).toBe(4);
    const report = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as Report;
    expect(findingsSchema(report), JSON.stringify(findingsSchema.errors)).toBe(true);
    expect(report.findings.some((f) => f.rule === 'quota-exceeded')).toBe(false);
    const carried = report.carried!.find(quota)!;
    expect(carried).toMatchObject({ id: was.id, firstSeen: '2026-11-22T02:00:00.000Z' });
    expect(carried.waived).toBeUndefined();
    expect(report.waivers!.ended.map((n) => n.line)).toEqual([2]);
    // The CSV's carried row says the same; the metrics count no finding of a rule not evaluated.
    const csv = readFileSync(join(out, '_findings.csv'), 'utf8').split('\r\n');
    const row = csv.find((l) => l.startsWith(`${was.id},carried,`))!;
    expect(row.endsWith(',,,,')).toBe(true);
    const metrics = readFileSync(prom, 'utf8');
    expect(metrics).toMatch(/^svc_snapshot_findings_unevaluated\{[^}]*rule="quota-exceeded",severity="medium"\} 1$/m);
    expect(metrics).not.toMatch(/^svc_snapshot_findings(_waived)?\{[^}]*rule="quota-exceeded"/m);

    // A waiver added tonight waives the carried finding (and is not stale); without a waivers file, nothing does.
    const again = await runCli(['findings', out, '--json', '--waivers', added]);
    expect(again.code, again.stderr).toBe(0);
    const waived = JSON.parse(again.stdout) as Report;
    expect(waived.carried!.find(quota)!.waived).toEqual({
      reason: 'extra cores',
      owner: 'capacity@example.org',
      expires: '2027-01-15',
    });
    expect(waived.waivers!.stale).toEqual([]);
    const addedCsv = await runCli(['findings', out, '--format', 'csv', '--waivers', added]);
    expect(addedCsv.stdout).toContain(',extra cores,capacity@example.org,2027-01-15,\n');
    const none = await runCli(['findings', out, '--json']);
    expect((JSON.parse(none.stdout) as Report).carried!.find(quota)!.waived).toBeUndefined();

    // The text and the report page show the carried finding too, with why its rule was not evaluated.
    const reason = (JSON.parse(none.stdout) as { rules: Array<{ id: string; reason?: string }> }).rules.find(
      (r) => r.id === 'quota-exceeded',
    )!.reason!;
    expect(reason).toContain('GET /api/teams/usage');
    const text = await runCli(['findings', out, '--waivers', added]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    const carriedText = text.stdout.split(
      'Carried from the night before (their rule was not evaluated tonight):\n',
    )[1]!;
    const line = carriedText.split('\n')[0]!;
    expect(line.startsWith(`  MEDIUM    quota-exceeded  [carried: not evaluated tonight, ${reason}] `)).toBe(true);
    expect(line).toContain('[waived by capacity@example.org until 2027-01-15: extra cores] team Team 1 IT: ');
    expect(line).toContain('(first seen 2026-11-22; teams)');
    const page = join(dir, 'page.html');
    const pageRun = await runCli(['report', out, '--waivers', added, '--out', page]);
    expect(pageRun.code, pageRun.stderr).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    const section = html.slice(html.indexOf('<summary>Carried: '));
    expect(section).toMatch(/^<summary>Carried: 1 finding<\/summary>/);
    expect(section).toContain('<bdi>team Team 1 IT</bdi>');
    expect(section).toContain('<td class="nw">2026-11-22</td>');
    expect(section).toContain('waived by <bdi>capacity@example.org</bdi> until 2027-01-15');
    expect(section.slice(0, section.indexOf('</details>'))).toContain('GET /api/teams/usage');

    // The digest counts the carried finding as active, or as waived when tonight's waivers waive it.
    const certs = getTestCerts();
    const hook = await startPingReceiver(undefined, certs);
    try {
      const notify = (...more: string[]) =>
        runCli(['notify', out, '--ca-file', certs.caFile, '--notify', `${hook.url}/in/x`, ...more]);
      expect((await notify()).code).toBe(0);
      expect((await notify('--waivers', added)).code).toBe(0);
      const [asWritten, withAdded] = hook.received.map(
        (r) => (JSON.parse(r.body) as { findings: { active: number; waived: number } }).findings,
      );
      expect(asWritten!.waived).toBe(0);
      expect(withAdded).toEqual(expect.objectContaining({ active: asWritten!.active - 1, waived: 1 }));
    } finally {
      await hook.close();
    }
  }, 120_000);
});

describe('an unusable waivers file', () => {
  it('is exit 2 naming the line: findings writes nothing, a snapshot is published all the same', async () => {
    const dir = tmpDir('svc-bad-waivers-');
    const bad = join(dir, 'waivers.yaml');
    writeFileSync(bad, 'waivers:\n  - rule: quota-exceeded\n    subject: [t]\n    reason: r\n    owner: o\n');
    const out = join(dir, 'snap');
    const res = await runCli(['--replay', NIGHTS[2]!, '--out-dir', out, '--findings'], { env: { SVC_WAIVERS: bad } });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`SVC_WAIVERS ${bad}, line 2: expires is missing`);
    // The file concerns only what comes after publishing: the night is published, told without it.
    expect(existsSync(join(out, '_snapshot-manifest.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')).waivers).toBeUndefined();
    const findings = await runCli(['findings', night3, '--waivers', bad]);
    expect(findings.code).toBe(2);
    expect(findings.stdout).toBe('');
    const noFindings = await runCli(['--replay', NIGHTS[2]!, '--out-dir', out, '--waivers', WAIVERS]);
    expect(noFindings.code).toBe(2);
    expect(noFindings.stderr).toContain('--waivers needs --findings on a snapshot (or --format html)');
  });
});
