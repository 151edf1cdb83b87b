/**
 * Findings through the binary: `--findings` on a replay of the shipped
 * recordings (3.14.1 shows findings, 3.13.8 shows every rule not evaluated),
 * `svc-snapshot findings` over the published directory giving the same
 * bytes, --fail-on's exit 6, hostile values, and an edited snapshot refused.
 */
import { prometheusToolsUnavailable, promtoolCheck } from '../helpers/prometheus.js';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { parseCsv } from '../helpers/csv-parse.js';
import { writeSnapshot } from '../helpers/snapshot-dir.js';
import { publishedValidator } from '../helpers/summary-schema.js';

const findingsSchema = publishedValidator('findings');

const R3141 = join(REPO_ROOT, 'recordings', 'platform-3.14.1');
const R3138 = join(REPO_ROOT, 'recordings', 'platform-3.13.8');
const NIGHT3 = join(REPO_ROOT, 'recordings', 'platform-3.14.1-night3');

interface Report {
  time: string;
  rules: Array<{ id: string; severity: string; evaluated: boolean; reason?: string; count: number | null }>;
  findings: Array<{
    rule: string;
    severity: string;
    subject: { export: string; key: string[] };
    related: Array<{ export: string; key: string[] }>;
    detail: string;
  }>;
}

describe('snapshot --findings over the shipped 3.14.1 recording', () => {
  it('writes _findings.json before the manifest; findings <dir> --json gives the same bytes; a second run replaces the directory', async () => {
    const out = join(tmpDir(), 'snap');
    const res = await runCli(['--replay', R3141, '--out-dir', out, '--findings']);
    expect(res.stderr).toContain(
      'findings (_findings.json): 22 new, 0 open, 0 resolved, 0 waived, 22 active (20 high, 2 medium)\n',
    );
    expect(res.code).toBe(0);
    const bytes = readFileSync(join(out, '_findings.json'), 'utf8');
    const report = JSON.parse(bytes) as Report;
    expect(report.time).toBe('2026-11-21T02:00:00.000Z');
    expect(report.rules.every((r) => r.evaluated)).toBe(true);
    expect(report.rules.map((r) => r.id).sort()).toEqual([
      'certification-expired',
      'certification-expiring',
      'certification-missing',
      'deleted-owner-holds-resources',
      'membership-expired',
      'quota-exceeded',
      'security-reference-unknown',
      'team-ended-with-resources',
      'user-expired-with-access',
    ]);
    const counts = Object.fromEntries(report.rules.map((r) => [r.id, r.count]));
    expect(counts).toMatchObject({
      'certification-missing': 18,
      'certification-expired': 2,
      'certification-expiring': 0,
      'membership-expired': 0,
      'user-expired-with-access': 0,
      'quota-exceeded': 1,
      'team-ended-with-resources': 0,
      'deleted-owner-holds-resources': 1,
    });
    // Project fb7a… was deleted and still holds 3 drives; the deleted team c917… holding 3 drives too is in no export, which the rule says.
    expect(report.findings.filter((f) => f.rule === 'deleted-owner-holds-resources').map((f) => f.detail)).toEqual([
      'deleted project proj|fb7a262e-3ce2-48a5-bd1c-bb3817469a5d (exists: false) still holds 0 VM(s), 3 drive(s) and 0 vault file(s) (0 bytes)',
    ]);
    expect(report.rules.find((r) => r.id === 'deleted-owner-holds-resources')!.reason).toMatch(
      /^deleted teams not evaluated: /,
    );
    // Team 1 IT uses 32 cores; its teamQuotas set no core limit, its legacy quotas map says 26.
    expect(report.findings.filter((f) => f.rule === 'quota-exceeded').map((f) => f.detail)).toEqual([
      'team "Team 1 IT" (team|b0c1b8d1-efba-4f64-a100-9d93ac8086f6) uses 32 cores, above its legacy quota of 26 (quotas.cores; teamQuotas sets no cores limit)',
    ]);
    // The certification of "Requirement 2: NDA" that expired in April 2026, held by a member of Project 1; and one a member of Project 2 holds
    // of a requirement of Project 1's level, which Project 2 inherits.
    const expired = report.findings.filter((f) => f.rule === 'certification-expired');
    expect(expired.map((f) => f.subject.key)).toEqual([
      ['proj|580bfea5-bd8e-4a2e-855c-ff02699c0a36', 'ddd7b4ee-e24c-421a-b349-123f09acb886', 'cG06MToxMQ=='],
      ['proj|fa021be1-8de6-4dff-901d-da077a51f0bb', '996f25a8-3527-42e3-a038-541dc1ba6043', 'cG06MDoxMA=='],
    ]);
    expect(expired[1]!.detail).toContain('expired 2026-04-16T03:40:31.422Z');
    expect(expired[0]!.detail).toContain(
      'member of project "Project 2" (proj|580bfea5-bd8e-4a2e-855c-ff02699c0a36), which inherits from its parent project "Project 1" (proj|fa021be1-8de6-4dff-901d-da077a51f0bb) the security level "Level 1"',
    );
    // Project 4 (Level 2: requirement 1) is a child of Project 2, a child of Project 1 (Level 1: requirements 1, 2 and 3): its members are held to all three,
    // requirement 1 once (its own level's). 77919497 holds requirement 1 without expiry and nothing else; e434d7d2 holds nothing.
    const p4 = report.findings.filter((f) => f.subject.key[0] === 'proj|453b718e-909b-4fbc-bbf5-7d8c569a2289');
    expect(
      p4
        .map(
          (f) =>
            `${f.subject.key[1]!.slice(0, 8)} ${f.related.at(-1)!.key[0]!.slice(0, 9)} ${f.related.filter((x) => x.export === 'projects').length}`,
        )
        .sort(),
    ).toEqual([
      '77919497 sreq|0f2a 2',
      '77919497 sreq|d636 2',
      'e434d7d2 sreq|0f2a 2',
      'e434d7d2 sreq|9d88 1',
      'e434d7d2 sreq|d636 2',
    ]);
    expect(p4.find((f) => f.related.length === 4)!.detail).toContain(
      'which inherits from its ancestor project "Project 1"',
    );

    // Today's reading, --no-findings-inherit-levels: a project is held to its own level alone (12 high findings fewer).
    const own = JSON.parse(
      (await runCli(['findings', out, '--json', '--no-findings-inherit-levels'])).stdout,
    ) as Report;
    expect(Object.fromEntries(own.rules.map((r) => [r.id, r.count]))).toMatchObject({
      'certification-missing': 7,
      'certification-expired': 1,
    });
    expect(
      own.findings
        .filter((f) => f.subject.key[0] === 'proj|453b718e-909b-4fbc-bbf5-7d8c569a2289')
        .map((f) => f.subject.key[1]),
    ).toEqual(['e434d7d2-c4e3-4a41-aea1-feea6aaec34a']);
    expect(own.findings.some((f) => f.subject.key[0] === 'proj|580bfea5-bd8e-4a2e-855c-ff02699c0a36')).toBe(false);
    expect((await runCli(['findings', out, '--json', '--findings-inherit-levels'])).stdout).toBe(bytes);
    const ownSnap = join(tmpDir(), 'own');
    expect(
      (await runCli(['--replay', R3141, '--out-dir', ownSnap, '--findings', '--no-findings-inherit-levels', '--quiet']))
        .code,
    ).toBe(0);
    expect(JSON.parse(readFileSync(join(ownSnap, '_findings.json'), 'utf8'))).toEqual(own);
    const ownPage = join(tmpDir(), 'own.html');
    expect((await runCli(['report', out, '--out', ownPage, '--no-findings-inherit-levels'])).code).toBe(0);
    const page = join(tmpDir(), 'page.html');
    expect((await runCli(['report', out, '--out', page])).code).toBe(0);
    expect(readFileSync(page, 'utf8')).toContain('which inherits from its parent project');
    expect(readFileSync(ownPage, 'utf8')).not.toContain('which inherits from');
    // The setting says which findings to evaluate: a snapshot that evaluates none refuses it.
    const refused = await runCli([
      '--replay',
      R3141,
      '--out-dir',
      join(tmpDir(), 'none'),
      '--no-findings-inherit-levels',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--no-findings-inherit-levels needs --findings on a snapshot (or --format html)');

    const again = await runCli(['findings', out, '--json']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(bytes);
    // Listed in the manifest's files with the size and sha256 of the bytes on disk (taken as they were written).
    const listed = (
      JSON.parse(readFileSync(join(out, '_snapshot-manifest.json'), 'utf8')) as {
        files: Array<{ name: string; bytes: number; sha256: string }>;
      }
    ).files;
    expect(listed).toEqual([
      {
        name: '_findings.json',
        bytes: Buffer.byteLength(bytes),
        sha256: createHash('sha256').update(bytes).digest('hex'),
      },
    ]);
    expect((await runCli(['verify', out])).code).toBe(0);

    const replaced = await runCli(['--replay', R3141, '--out-dir', out, '--findings', '--quiet']);
    expect(replaced.code).toBe(0);
    expect(readFileSync(join(out, '_findings.json'), 'utf8')).toBe(bytes);
    expect(readdirSync(join(out, '..')).filter((n) => n.includes('.partial-'))).toEqual([]);
  });

  it('--fail-on high exits 6 with the snapshot published; --fail-on critical exits 0; --fail-on without --findings is a usage error', async () => {
    const base = tmpDir();
    const six = await runCli(['--replay', R3141, '--out-dir', join(base, 'a'), '--findings', '--fail-on', 'high']);
    expect(six.code).toBe(6);
    expect(six.stderr).toContain('--fail-on high: 20 finding(s) of severity high or higher (exit 6)');
    expect(existsSync(join(base, 'a', '_snapshot-manifest.json'))).toBe(true);
    expect(existsSync(join(base, 'a', '_findings.json'))).toBe(true);
    const zero = await runCli([
      '--replay',
      R3141,
      '--out-dir',
      join(base, 'b'),
      '--findings',
      '--fail-on',
      'critical',
      '--quiet',
    ]);
    expect(zero.code).toBe(0);
    const usage = await runCli(['--replay', R3141, '--out-dir', join(base, 'c'), '--fail-on', 'high']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--fail-on needs --findings');
    expect(existsSync(join(base, 'c'))).toBe(false);
    const bad = await runCli(['findings', join(base, 'a'), '--fail-on', 'urgent']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--fail-on must be one of critical, high, medium, low, info');
    const cmd = await runCli(['findings', join(base, 'a'), '--fail-on', 'medium', '--quiet']);
    expect(cmd.code).toBe(6);
  });
});

describe('snapshot --findings over the third night (scripts/record-platform.ts NIGHT3_CHANGES)', () => {
  it('reports the positive case of every rule and none of the negatives beside it', async () => {
    const out = join(tmpDir(), 'snap');
    const res = await runCli(['--replay', NIGHT3, '--out-dir', out, '--findings', '--quiet']);
    expect(res.code).toBe(0);
    const report = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as Report;
    expect(report.time).toBe('2026-11-23T02:00:00.000Z');
    const counts = Object.fromEntries(report.rules.map((r) => [r.id, r.count]));
    expect(counts).toEqual({
      'certification-missing': 14,
      'certification-expired': 2,
      'certification-expiring': 3,
      'membership-expired': 1,
      'user-expired-with-access': 2,
      'team-ended-with-resources': 2,
      'deleted-owner-holds-resources': 2,
      'quota-exceeded': 2,
      'security-reference-unknown': 2,
    });
    const details = (rule: string) => report.findings.filter((f) => f.rule === rule).map((f) => f.detail);
    // Expiring: in 10 days, later on the snapshot's day, exactly at its time; the one expiring in 60 days is not reported.
    const expiring = details('certification-expiring').join('\n');
    for (const when of ['2026-12-03T02:00:00.000Z', '2026-11-23T07:00:00.000Z', '2026-11-23T02:00:00.000Z'])
      expect(expiring).toContain(`expires ${when}`);
    expect(report.findings.some((f) => f.detail.includes('2027-01-22T02:00:00.000Z'))).toBe(false);
    // The membership expired yesterday is reported; the one expiring tomorrow is not.
    expect(details('membership-expired')).toEqual([
      expect.stringContaining('a membership that expired 2026-11-22T02:00:00.000Z'),
    ]);
    // The user expired yesterday and the one deactivated on night 2; not the one expiring tomorrow nor the one whose deactivation ended.
    expect(details('user-expired-with-access').map((d) => d.replace(/^user [^:]+: /, ''))).toEqual([
      'account expired 2026-11-22T02:00:00.000Z, still a member of 1 team(s) and 1 project(s)',
      'deactivated (Admin), still a member of 1 team(s) and 1 project(s)',
    ]);
    expect(report.findings.some((f) => f.detail.includes('Timeout'))).toBe(false);
    // Team 1 ended yesterday holding a VM; Team 3 ended too, holding vault files only; Team 2 ends tomorrow.
    expect(details('team-ended-with-resources')).toEqual([
      expect.stringContaining('team "Team 1 IT"'),
      expect.stringContaining(
        'team "Team 3 Genomics" (team|c49f6278-b4fe-49de-8394-a4b2fe73ce0f) ended 2026-11-22T02:00:00.000Z and still holds 0 VM(s), 0 drive(s) and 4471 vault file(s) (1714421760 bytes)',
      ),
    ]);
    // Team 2 runs 40 cores over a team quota of 39; Team 1 runs 32 over its legacy 26 (its teamQuotas set no core limit), and its memory quota equals its usage, which is not above it.
    expect(details('quota-exceeded')).toEqual([
      expect.stringContaining(
        'team "Team 1 IT" (team|b0c1b8d1-efba-4f64-a100-9d93ac8086f6) uses 32 cores, above its legacy quota of 26 (quotas.cores; teamQuotas sets no cores limit)',
      ),
      expect.stringContaining(
        'team "Team 2 Imaging" (team|cf57d6b4-dc48-4249-96e2-24cfc8c1dbeb) uses 40 cores, above its team quota of 39 (teamQuotas.cores)',
      ),
    ]);
    // The negatives are in the recording: the absence above is the rules' doing.
    const body = (file: string) => readFileSync(join(NIGHT3, file), 'utf8');
    const tomorrow = Date.UTC(2026, 10, 24, 2);
    expect(body('api-users-certifications.json')).toContain(`"expires":${Date.UTC(2027, 0, 22, 2)}`);
    expect(body('api-projects-memberships.json')).toContain(`"expires":${tomorrow}`);
    expect(body('api-users.json')).toContain(`"expiration":${tomorrow}`);
    expect(body('api-users.json')).toContain(`"deactivatedUntil":${Date.UTC(2026, 10, 22, 2)}`);
    expect(body('api-teams.json').match(/"endDate":\d+/g)).toEqual([
      `"endDate":${Date.UTC(2026, 10, 22, 2)}`,
      `"endDate":${tomorrow}`,
      `"endDate":${Date.UTC(2026, 10, 22, 2)}`,
      `"endDate":${Date.UTC(2026, 10, 22, 2)}`,
    ]);
    // A project naming a level, and a level naming a requirement, that the site does not list.
    expect(details('security-reference-unknown')).toEqual([
      expect.stringContaining('requires security level slvl|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b5a'),
      expect.stringContaining(
        'names requirement sreq|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b70, which security_requirements does not list',
      ),
    ]);
    // Taken without --include vms: the running VMs are left out, and the rule says so.
    expect(report.rules.find((r) => r.id === 'user-expired-with-access')).toMatchObject({
      evaluated: true,
      reason: expect.stringContaining('the running VMs (active_vms) not evaluated'),
    });
    // Said on the terminal and on the report's page too.
    const text = await runCli(['findings', out]);
    expect(text.stdout).toMatch(
      /user-expired-with-access +high +2 {2}\(the running VMs \(active_vms\) not evaluated: the snapshot has no active_vms export \(it is written with --include vms\)\)/,
    );
    const page = join(tmpDir(), 'page.html');
    expect((await runCli(['report', out, '--out', page])).code).toBe(0);
    expect(readFileSync(page, 'utf8')).toContain(
      '<h3>Rules evaluated in part</h3>\n<ul><li><code>user-expired-with-access</code>: the running VMs (active_vms) not evaluated',
    );
  });

  it('the rules as an auditor reads them: vault files, legacy quotas, deleted owners, a duplicate row, inherited levels, each beside its negative', async () => {
    const out = join(tmpDir(), 'auditor');
    expect(
      (await runCli(['--replay', NIGHT3, '--out-dir', out, '--findings', '--include', 'vms', '--quiet'])).code,
    ).toBe(0);
    const report = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as Report;
    const of = (rule: string) => report.findings.filter((f) => f.rule === rule);
    const body = (file: string) => readFileSync(join(NIGHT3, file), 'utf8');
    // Ended yesterday: Team 3 holds vault files alone (reported); Night3 Archive holds nothing at all, files included (not).
    expect(of('team-ended-with-resources').map((f) => f.subject.key[0])).toEqual([
      'team|b0c1b8d1-efba-4f64-a100-9d93ac8086f6',
      'team|c49f6278-b4fe-49de-8394-a4b2fe73ce0f',
    ]);
    expect(body('api-teams-usage.json')).toContain(
      '{"id":"team|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b80","exists":true,"files":{"cnt":0,"size":0}}',
    );
    // Team 1's legacy quotas: cores 26 under its 32 (teamQuotas sets no core limit: reported); memory one byte under its usage,
    // but teamQuotas sets a memory limit equal to it (not reported: the legacy entry is not read).
    expect(of('quota-exceeded').map((f) => f.detail)).toEqual([
      expect.stringContaining('uses 32 cores, above its legacy quota of 26'),
      expect.stringContaining('above its team quota of 39 (teamQuotas.cores)'),
    ]);
    expect(body('api-teams.json')).toContain(
      '"quotas":{"cores":26,"memory":8589934591},"teamQuotas":{"memory":8589934592,',
    );
    // Deleted projects: one holding 3 drives, one vault files alone (reported); one holding nothing, and the existing ones (not).
    // The deleted team holding 3 drives is in no export, which the rule's reason says.
    expect(of('deleted-owner-holds-resources').map((f) => f.detail)).toEqual([
      'deleted project proj|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b81 (exists: false) still holds 0 VM(s), 0 drive(s) and 12 vault file(s) (12582912 bytes)',
      'deleted project proj|fb7a262e-3ce2-48a5-bd1c-bb3817469a5d (exists: false) still holds 0 VM(s), 3 drive(s) and 0 vault file(s) (0 bytes)',
    ]);
    expect(body('api-projects-usage.json')).toContain(
      '{"id":"proj|0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b82","exists":false,"files":{"cnt":0,"size":0},"drives":{"cnt":0,"size":0,"used":0}}',
    );
    expect(body('api-teams-usage.json')).toContain(
      '{"id":"team|c917e2d7-39a4-44ec-93c5-1b8f7dfb58d7","exists":false,"drives":{"cnt":3,',
    );
    expect(report.rules.find((r) => r.id === 'deleted-owner-holds-resources')).toMatchObject({
      evaluated: true,
      count: 2,
      reason: expect.stringMatching(/^deleted teams not evaluated: /),
    });
    // The expired membership has a second row marked duplicate, after it in key order: the detail names that row, not the subject.
    const [expired] = of('membership-expired');
    expect(expired!.subject.key[2]).toBe('cG06MToxMQ==');
    expect(expired!.detail).toMatch(
      /; marked duplicate \(the membership is also inherited, so the user may keep access through a parent project\): row cG06bmlnaHQzOmR1cA==$/,
    );
    expect(expired!.related).toContainEqual({
      export: 'project_memberships',
      key: [
        'proj|580bfea5-bd8e-4a2e-855c-ff02699c0a36',
        'ddd7b4ee-e24c-421a-b349-123f09acb886',
        'cG06bmlnaHQzOmR1cA==',
      ],
    });
    // A VM listed with active false: its owner, deactivated and a member of nothing, is not reported; the expired user it authorizes,
    // reported for the memberships, has it counted apart.
    const users = of('user-expired-with-access');
    expect(users.some((f) => f.subject.key[0] === '0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b63')).toBe(false);
    expect(body('api-vms-altvirt-active.json')).toMatch(
      /"owner":"0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b63"[^}]*"active":false/,
    );
    expect(users.find((f) => f.detail.includes('account expired'))!.detail).toMatch(
      /owns 0 running VM\(s\) and is authorized on 1 other\(s\) \(not counted: owns 0 and is authorized on 1 VM\(s\) listed as running with `active` not true\)$/,
    );
    // Inherited levels: a member of Project 2 (child of Project 1, no level of its own) who holds Project 1's requirement 1 is not reported for it; the one who does not is.
    const p2 = of('certification-missing').filter(
      (f) => f.subject.key[0] === 'proj|580bfea5-bd8e-4a2e-855c-ff02699c0a36',
    );
    const req = (f: Report['findings'][number]) =>
      `${f.subject.key[1]!.slice(0, 8)} ${f.related.at(-1)!.key[0]!.slice(0, 9)}`;
    expect(p2.map(req).sort()).toEqual([
      '77919497 sreq|0f2a',
      '77919497 sreq|d636',
      'af94b3f5 sreq|0f2a',
      'af94b3f5 sreq|9d88',
      'af94b3f5 sreq|d636',
      'ddd7b4ee sreq|0f2a',
      'ddd7b4ee sreq|9d88',
    ]);
    expect(body('api-users-certifications.json')).toMatch(
      /"requirementID":"sreq\|9d88ee8d-233b-430e-acd3-939279504f73","userID":"77919497-9fda-4a1f-b5ef-a3628ffdbcdb"/,
    );
  });

  it("a partial run (one realm's running VMs not read, --allow-partial): user-expired-with-access is not evaluated, naming the route, and --fail-on high says so", async () => {
    const collection = join(tmpDir(), 'partial');
    cpSync(NIGHT3, collection, { recursive: true });
    const manifestFile = join(collection, '_collection-manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { routes: Array<Record<string, unknown>> };
    const route = manifest.routes.find((r) => r.route === 'GET /api/vms/libvirt/active')!;
    rmSync(join(collection, route.file as string));
    for (const k of ['file', 'bytes', 'sha256', 'durationMs']) delete route[k];
    Object.assign(route, { status: 503, file: null, attempts: 4, error: 'HTTP 503 Service Unavailable' });
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
    const out = join(tmpDir(), 'snap');
    const res = await runCli([
      '--replay',
      collection,
      '--out-dir',
      out,
      '--findings',
      '--include',
      'vms',
      '--allow-partial',
      '--fail-on',
      'high',
    ]);
    // Incomplete wins over --fail-on (exit 4); the warning still names the rule and why.
    expect(res.code).toBe(4);
    const report = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as Report;
    const reason = 'active_vms is incomplete: GET /api/vms/libvirt/active failed: HTTP 503 Service Unavailable';
    expect(report.rules.find((r) => r.id === 'user-expired-with-access')).toEqual({
      id: 'user-expired-with-access',
      severity: 'high',
      evaluated: false,
      reason,
      count: null,
    });
    expect(report.findings.some((f) => f.rule === 'user-expired-with-access')).toBe(false);
    expect(res.stderr).toContain(
      `1 rule(s) of severity high or higher not evaluated, so not checked: user-expired-with-access (${reason})`,
    );
    // The other rules do not read the running VMs: evaluated as on the complete night.
    expect(report.rules.filter((r) => !r.evaluated).map((r) => r.id)).toEqual(['user-expired-with-access']);
    const again = await runCli(['findings', out, '--fail-on', 'high', '--quiet']);
    expect(again.code).toBe(6);
  });

  it("with --include vms: a deactivated user who is a member of nothing but owns a running VM; the VM's authorized user who expires tomorrow is not reported", async () => {
    const out = join(tmpDir(), 'vms');
    const res = await runCli(['--replay', NIGHT3, '--out-dir', out, '--findings', '--include', 'vms', '--quiet']);
    expect(res.code).toBe(0);
    const report = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as Report & {
      rules: Array<{ id: string; reason?: string }>;
    };
    const rule = report.rules.find((r) => r.id === 'user-expired-with-access')!;
    expect(rule).toEqual({ id: 'user-expired-with-access', severity: 'high', evaluated: true, count: 3 });
    const owner = report.findings.find((f) => f.subject.key[0] === '0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b61')!;
    expect(owner.detail).toBe(
      'user 0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b61: deactivated (Admin), still a member of 0 team(s) and 0 project(s), owns 1 running VM(s) and is authorized on 0 other(s)',
    );
    expect(owner.related).toEqual([{ export: 'active_vms', key: ['libvirt', expect.any(String)] }]);
    // The negative beside it: in the VM's authedUsers, expiring tomorrow.
    const active = readFileSync(join(NIGHT3, 'api-vms-libvirt-active.json'), 'utf8');
    expect(active).toContain('0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b62');
    expect(report.findings.some((f) => f.subject.key[0] === '0b5e2c1a-7d3f-4e6a-9c8b-2f1e0d3c4b62')).toBe(false);
    // The same findings from the published directory, as docs/summary-schema.json publishes them.
    const again = await runCli(['findings', out, '--json']);
    expect(again.stdout).toBe(readFileSync(join(out, '_findings.json'), 'utf8'));
    expect(findingsSchema(JSON.parse(again.stdout)), JSON.stringify(findingsSchema.errors)).toBe(true);
  });
});

describe('the 3.13.8 recording', () => {
  it('lists every rule as not evaluated with the reason, never as zero findings; --fail-on fails closed on them', async () => {
    const out = join(tmpDir(), 'snap');
    // Nothing could be checked: --fail-on info exits 6 with the snapshot published, naming the rules and why.
    const res = await runCli(['--replay', R3138, '--out-dir', out, '--findings', '--fail-on', 'info']);
    expect(res.code).toBe(6);
    expect(res.stderr).toMatch(
      /--fail-on info: 9 rule\(s\) of severity info or higher not evaluated, so not checked: certification-expired \(project_memberships is unavailable: GET \/api\/projects\/memberships was skipped: route added in backend 3\.14\.1; not served here\); /,
    );
    expect(res.stderr).toContain(', and 4 more; --fail-on-unevaluated=false fails on findings alone (exit 6)');
    expect(existsSync(join(out, '_snapshot-manifest.json'))).toBe(true);
    // On findings alone: none, exit 0; both spellings of the value; a bad one is a usage error before anything is published.
    for (const off of [['--fail-on-unevaluated=false'], ['--fail-on-unevaluated', 'false']]) {
      const quiet = await runCli([
        '--replay',
        R3138,
        '--out-dir',
        join(tmpDir(), 'off'),
        '--findings',
        '--fail-on',
        'info',
        ...off,
        '--quiet',
      ]);
      expect(quiet.code, off.join(' ')).toBe(0);
      expect((await runCli(['findings', out, '--fail-on', 'info', ...off, '--quiet'])).code).toBe(0);
    }
    // No rule is critical: nothing of that severity was left unchecked.
    expect((await runCli(['findings', out, '--fail-on', 'critical', '--quiet'])).code).toBe(0);
    expect((await runCli(['findings', out, '--fail-on', 'high', '--quiet'])).code).toBe(6);
    for (const bad of [
      ['--fail-on', 'info', '--fail-on-unevaluated=no'],
      ['--fail-on', 'urgent'],
      ['--fail-on-unevaluated=false'],
    ]) {
      const target = join(tmpDir(), 'bad');
      const refused = await runCli(['--replay', R3138, '--out-dir', target, '--findings', ...bad]);
      expect(refused.code, bad.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(
        /--fail-on-unevaluated must be true or false|--fail-on must be one of|--fail-on-unevaluated changes what --fail-on <severity> fails on/,
      );
      expect(existsSync(target), bad.join(' ')).toBe(false);
      expect((await runCli(['findings', out, ...bad])).code, bad.join(' ')).toBe(2);
    }
    const report = JSON.parse(readFileSync(join(out, '_findings.json'), 'utf8')) as Report;
    expect(findingsSchema(report), JSON.stringify(findingsSchema.errors)).toBe(true);
    // The schema holds: a count that is not a whole number, or a severity of its own, is refused.
    expect(findingsSchema({ ...report, rules: [{ ...report.rules[0]!, count: 0.5 }] })).toBe(false);
    expect(findingsSchema({ ...report, rules: [{ ...report.rules[0]!, severity: 'unknown' }] })).toBe(false);
    expect(report.findings).toEqual([]);
    for (const r of report.rules) {
      expect(r.evaluated, r.id).toBe(false);
      expect(r.count, r.id).toBeNull();
      expect(r.reason, r.id).toMatch(/route added in backend 3\.14\.1; not served here$/);
    }
    const text = await runCli(['findings', out]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      / {2}membership-expired +medium {4}not evaluated: project_memberships is unavailable: GET \/api\/projects\/memberships was skipped/,
    );
    expect(text.stdout).toContain('No rule could be evaluated on this snapshot');
    expect(text.stdout).not.toMatch(/ 0\n/);
    // The CSV says so too: a row per rule not evaluated, never a file with the header alone.
    const csv = await runCli(['findings', out, '--format', 'csv']);
    const rows = parseCsv(csv.stdout);
    const at = (name: string) => rows[0]!.indexOf(name);
    expect(rows.slice(1).map((r) => [r[at('state')], r[at('rule')]])).toEqual(
      report.rules.map((r) => ['not evaluated', r.id]),
    );
    expect(rows[1]![at('detail')]).toBe(report.rules[0]!.reason);
  });
});

describe('svc-snapshot findings <dir>', () => {
  it('hostile ids and names: escaped on the terminal, exact in --json', async () => {
    const id = 'team|\u001b[31mred\u202e';
    const dir = writeSnapshot(join(tmpDir(), 'snap'), {
      records: {
        teams: [
          {
            id,
            name: 'bell\u0007\r\nname',
            teamQuotas_memory: 1,
            usage_vms_mem: 2,
            usage_vms_cores: 0,
            usage_vms_cnt: 1,
            usage_drives_cnt: 0,
            endDate: null,
          },
        ],
      },
    });
    const text = await runCli(['findings', dir]);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(/[\u0007\u001b\u202e\r]/);
    // The team by its name, escaped (the exact id is in --json).
    expect(text.stdout).toContain('\nteam bell\\u0007\\u000d\\u000aname\n');
    const json = await runCli(['findings', dir, '--json']);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.findings).toHaveLength(1);
    expect(report.findings[0]!.subject).toEqual({ export: 'teams', key: [id] });
    expect(report.findings[0]!.detail).toContain('"bell\u0007\r\nname"');
  });

  it('refuses a snapshot whose exports were edited, a file the rules read or not (exit 1), and a directory that is not a snapshot (exit 2)', async () => {
    for (const victim of ['teams', 'drives']) {
      const dir = writeSnapshot(join(tmpDir(), `snap-${victim}`), {
        records: { drives: [{ id: 'd1', name: 'x' }], teams: [{ id: 't1', name: 'T' }] },
      });
      const file = readdirSync(dir).find((n) => n.startsWith(`1-${victim} `))!;
      writeFileSync(join(dir, file), readFileSync(join(dir, file), 'utf8').replace(/"T"|"x"/, '"Y"'));
      const res = await runCli(['findings', dir]);
      expect(res.code, victim).toBe(1);
      expect(res.stderr).toContain('does not match the sha256 in _snapshot-manifest.json');
      expect(res.stdout).toBe('');
    }
    const empty = await runCli(['findings', tmpDir()]);
    expect(empty.code).toBe(2);
    const none = await runCli(['findings']);
    expect(none.code).toBe(2);
    // --format takes csv alone: json beside it is not dropped quietly (the JSON form is --json).
    const good = writeSnapshot(join(tmpDir(), 'snap'), { records: { teams: [{ id: 't1', name: 'T' }] } });
    for (const format of ['csv,json', 'json', 'xlsx']) {
      const res = await runCli(['findings', good, '--format', format]);
      expect(res.code, format).toBe(2);
      expect(res.stderr).toContain('findings --format takes csv (one row per finding); for JSON give --json');
      expect(res.stdout).toBe('');
    }
    expect((await runCli(['findings', good, '--format', 'csv'])).code).toBe(0);
  });
});

describe('--fail-on in a nightly job', () => {
  it('exit 6 is a complete snapshot: the metrics file keeps it as the last success and says exit code 6', async () => {
    const base = tmpDir();
    const metrics = join(base, 'svc.prom');
    const res = await runCli([
      '--replay',
      R3141,
      '--out-dir',
      join(base, 'snap'),
      '--findings',
      '--fail-on',
      'high',
      '--metrics-file',
      metrics,
      '--quiet',
    ]);
    expect(res.code).toBe(6);
    const text = readFileSync(metrics, 'utf8');
    expect(text).toMatch(/^svc_snapshot_exit_code\{[^}]*\} 6$/m);
    expect(text).not.toMatch(/^svc_snapshot_last_success_timestamp_seconds\{[^}]*\} 0$/m);
    // The findings by rule and severity, with the site label, as _findings.json counts them; rules not evaluated have no series.
    const file = JSON.parse(readFileSync(join(base, 'snap', '_findings.json'), 'utf8')) as {
      rules: Array<{ id: string; severity: string; evaluated: boolean; count: number | null }>;
    };
    for (const r of file.rules) {
      const series = new RegExp(
        `^svc_snapshot_findings\\{command="snapshot",site="[^"]+",rule="${r.id}",severity="${r.severity}"\\} (\\d+)$`,
        'm',
      ).exec(text);
      const unevaluated = new RegExp(
        `^svc_snapshot_findings_unevaluated\\{command="snapshot",site="[^"]+",rule="${r.id}",severity="${r.severity}"\\} 1$`,
        'm',
      ).exec(text);
      if (r.evaluated) expect(Number(series?.[1]), r.id).toBe(r.count);
      else expect(series, r.id).toBeNull();
      expect(unevaluated !== null, r.id).toBe(!r.evaluated);
    }
    expect(text).toMatch(/^svc_snapshot_findings\{[^}]*rule="certification-missing",severity="high"\} 18$/m);
    if (!prometheusToolsUnavailable()) expect(promtoolCheck(text).code).toBe(0);
  });

  it('exit 6 for rules not evaluated (3.13.8, --fail-on info): no finding series, one series per rule not evaluated, the run a success', async () => {
    const base = tmpDir();
    const metrics = join(base, 'svc.prom');
    const res = await runCli([
      '--replay',
      R3138,
      '--out-dir',
      join(base, 'snap'),
      '--findings',
      '--fail-on',
      'info',
      '--metrics-file',
      metrics,
      '--quiet',
    ]);
    expect(res.code).toBe(6);
    const text = readFileSync(metrics, 'utf8');
    expect(text).toMatch(/^svc_snapshot_exit_code\{[^}]*\} 6$/m);
    expect(text).not.toMatch(/^svc_snapshot_findings\{/m);
    expect(text.match(/^svc_snapshot_findings_unevaluated\{[^}]*\} 1$/gm)).toHaveLength(9);
    expect(text).toMatch(
      /^svc_snapshot_findings_unevaluated\{command="snapshot",site="https:\/\/platform\.example\.org",rule="deleted-owner-holds-resources",severity="medium"\} 1$/m,
    );
    if (!prometheusToolsUnavailable()) expect(promtoolCheck(text).code).toBe(0);
  });
});
