/**
 * The digest's text, as every text sink shows it: one verdict line first,
 * then the lines that come right after it (a re-run, configuration
 * problems), then the counts; a cut list ends with "and N more" on a line
 * of its own; the link is last; no UUID or key list anywhere.
 */
import { describe, expect, it } from 'vitest';
import { buildDigest } from '../../src/notify/digest.js';
import type { FindingIn } from '../../src/findings/file.js';
import { emailContent, slackPayload } from '../../src/notify/formats.js';
import { runNotice } from '../helpers/run-notice.js';

const UUID = '996f25a8-3527-42e3-a038-541dc1ba6043';

function finding(i: number, extra: Partial<FindingIn> = {}): FindingIn {
  return {
    rule: 'certification-missing',
    severity: 'high',
    subject: { export: 'project_memberships', key: [`proj|${UUID}`, `u${i}`] },
    detail:
      `user ${UUID}, member of project "Project 1" (proj|${UUID}), whose security level "Level 1" requires ` +
      `"NDA" (sreq|${UUID}), holds no certification for it`,
    display: { user: `Person ${i}`, email: `p${i}@example.org`, project: 'Project 1', requirement: 'NDA' },
    id: `${UUID.slice(0, -2)}${String(i).padStart(2, '0')}`,
    state: 'new',
    ...extra,
  };
}

const text = (n: Parameters<typeof buildDigest>[0], url?: string) => emailContent(buildDigest(n, url)).text;

describe('the verdict line', () => {
  it('is OK, PARTIAL with the routes that failed, or FAILED with why', () => {
    expect(text(runNotice([])).split('\n')[0]).toBe('https://platform.example.org 2026-11-22: OK');
    const partial = runNotice([], {
      exitCode: 4,
      failedRoutes: [
        { route: 'GET /api/drives', error: 'HTTP 500' },
        { route: 'GET /api/teams', error: 'HTTP 502' },
      ],
    });
    expect(text(partial).split('\n')[0]).toBe('https://platform.example.org 2026-11-22: PARTIAL (2 routes failed)');
    const failed = runNotice([], { exitCode: 3, outDir: undefined, failure: 'the token was rejected (401)' });
    expect(text(failed).split('\n')[0]).toBe(
      'https://platform.example.org 2026-11-22: FAILED (the token was rejected (401))',
    );
  });

  it('is followed by the re-run line and the problems, then the counts', () => {
    const lines = text(
      runNotice(
        [finding(1), finding(2, { state: 'open', waived: { reason: 'r', owner: 'o', expires: '2027-01-01' } })],
        {
          rerun: { of: '2026-11-22', newer: '2026-11-23' },
          problems: [
            'SVC_WAIVERS=waivers.yaml line 4: unknown rule certifcation-missing; did you mean certification-missing?',
          ],
        },
      ),
    ).split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'https://platform.example.org 2026-11-22: OK',
      're-run of 2026-11-22: 2026-11-23 is newer',
      'SVC_WAIVERS=waivers.yaml line 4: unknown rule certifcation-missing; did you mean certification-missing?',
      '1 new, 1 open, 0 resolved, 1 waived, 1 active',
    ]);
  });
});

describe('the lists', () => {
  it('group the new findings by person, name no UUID or key, and end a cut with "and N more" on its own line', () => {
    const d = buildDigest(runNotice(Array.from({ length: 60 }, (_, i) => finding(i))), 'https://r.example.org/svc/');
    const mail = emailContent(d).text;
    expect(mail.length).toBeLessThanOrEqual(2500);
    expect(mail).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-|proj\||sreq\|/);
    expect(mail).toMatch(
      /^ {2}Person 0:\n {4}- \[high\] Certification missing \(Project 1, NDA\): holds no certification for it$/m,
    );
    expect(mail).toMatch(/^ {2}and \d+ more$/m);
    expect(mail.trimEnd().split('\n').at(-1)).toBe('Snapshot: https://r.example.org/svc/svc-snapshot-2026-11-22/');
    const slack = slackPayload(d)
      .blocks.map((b) => (b as { text: { text: string } }).text.text)
      .join('\n');
    expect(slack.split('\n').at(-1)).toBe('Snapshot: https://r.example.org/svc/svc-snapshot-2026-11-22/');
    expect(slack).toMatch(/^and \d+ more$/m);
  });

  it('show only the exports that changed, as +added −removed ~changed', () => {
    const n = runNotice([], {
      exports: [
        { export: 'users', count: 12, available: true },
        { export: 'teams', count: 3, available: true },
      ],
      previous: {
        dir: '/var/lib/svc/svc-snapshot-2026-11-21',
        changes: {
          hasChanges: true,
          exports: [
            { export: 'users', counts: { added: 3, removed: 1, changed: 2 } },
            { export: 'teams', counts: { added: 0, removed: 0, changed: 0 } },
          ],
        } as never,
      },
    });
    const mail = text(n);
    expect(mail).toContain('Changed since the night before (1)\n  users +3 \u22121 ~2\n');
    expect(mail).not.toMatch(/teams/);
  });
});
