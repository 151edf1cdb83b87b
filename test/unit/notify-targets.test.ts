/**
 * Notification targets: the scheme names the sink, a
 * target URL is a secret that no message repeats, http:// only to loopback,
 * and SVC_NOTIFY_FILE is checked as the token files are.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHmacKey, readTargets } from '../../src/notify/targets.js';
import { notifySettings } from '../../src/notify/index.js';
import { UsageError } from '../../src/errors.js';
import { clearSecrets, redact } from '../../src/util/redact.js';
import { tmpDir } from '../helpers/run-cli.js';

afterEach(() => clearSecrets());

const SLACK = 'slack+https://hooks.slack.com/services/T0AAAA/B0BBBB/s3cr3tSlackKeyXYZ';

function refused(targets: string[]): string {
  try {
    readTargets(targets, {});
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('not refused');
}

describe('notification targets', () => {
  it('name the sink by scheme, and each sink by its kind and host alone', () => {
    const t = readTargets(
      [
        'https://hooks.example.org/in/abc',
        'alertmanager+https://am.example.org:9093/',
        SLACK,
        'teams+https://prod.westeurope.logic.azure.com/workflows/1/triggers/manual/paths/invoke?sig=abc123def456',
        'smtp://mailer:pa55word-long@mail.example.org?from=svc@example.org&to=a@example.org,b@example.org',
        'smtps://mail.example.org?from=svc@example.org&to=a@example.org',
        'slack+https://hooks.slack.com/services/T1/B1/another-key-0000',
      ],
      {},
    );
    expect(t.map((x) => x.name)).toEqual([
      'webhook hooks.example.org',
      'alertmanager am.example.org:9093',
      'slack hooks.slack.com',
      'teams prod.westeurope.logic.azure.com',
      'email mail.example.org:587',
      'email mail.example.org:465',
      'slack hooks.slack.com #2',
    ]);
    expect(t[1]).toMatchObject({ kind: 'alertmanager', url: 'https://am.example.org:9093' });
    expect(t[4]).toMatchObject({ implicitTls: false, to: ['a@example.org', 'b@example.org'] });
  });

  it('are secrets: redacted from any message once read, URL and password alike', () => {
    readTargets([SLACK, 'smtp://mailer:pa55word-long@mail.example.org?from=s@example.org&to=a@example.org'], {});
    expect(redact(`failed posting to ${SLACK.slice(6)}`)).not.toContain('s3cr3tSlackKeyXYZ');
    expect(redact('login pa55word-long refused')).toBe('login [redacted] refused');
  });

  it('are refused without repeating them: unknown scheme, not a URL, credentials, http:// to another host', () => {
    expect(refused(['ftp://user:Secret-9876@host/x'])).toMatch(/a scheme that names no sink .*starts with https:\/\//);
    expect(refused(['xoxb-Secret-token-9876:x'])).toMatch(/--notify \(the 1st\) has a scheme that names no sink/);
    expect(refused(['not a url Secret-9876'])).toMatch(/--notify \(the 1st\) is not a URL/);
    expect(refused(['https://user:Secret-9876@hooks.example.org/x'])).toMatch(/must not hold a user name or password/);
    expect(refused(['https://hooks.example.org/Secret-9876 # the ops channel'])).toMatch(
      /--notify \(the 1st\) holds white space; a target is one URL \(put a comment on a line of its own\)/,
    );
    expect(refused(['slack+http://hooks.example.org/Secret-9876'])).toMatch(/http:\/\/ to a host that is not loopback/);
    expect(refused(['smtp://mail.example.org?to=a@example.org'])).toMatch(/needs from=/);
    expect(refused(['smtp://mail.example.org?from=a@example.org&to=x%0d%0aBcc:y@example.org'])).toMatch(/needs to=/);
    const badEscape = 'smtp://us%ZZer-Secret-9876:pw@127.0.0.1:18025?from=a@example.org&to=b@example.org';
    expect(refused([badEscape])).toMatch(/--notify \(the 1st\) has a user name or password that is not valid percent/);
    expect(refused(['smtp://user:p%E0%A4w@127.0.0.1?from=a@example.org&to=b@example.org'])).toMatch(
      /not valid percent/,
    );
    const leaky = ['ftp://user:Secret-9876@host/x', 'https://user:Secret-9876@hooks.example.org/x', badEscape];
    for (const bad of [...leaky, 'xoxb-Secret-token-9876:x']) expect(refused([bad])).not.toMatch(/secret-\w*9876|ftp/i);
    expect(readTargets(['alertmanager+http://127.0.0.1:9093'], {})[0]!.name).toBe('alertmanager 127.0.0.1:9093');
  });

  it('SVC_NOTIFY_FILE: one a line, comments skipped, mode 0600 or stricter as the token files', () => {
    const dir = tmpDir();
    const file = join(dir, 'targets');
    writeFileSync(file, `# the team's channel\n${SLACK}\n\nhttps://hooks.example.org/in/abc\n`, { mode: 0o600 });
    expect(readTargets([], { SVC_NOTIFY_FILE: file }).map((t) => t.kind)).toEqual(['slack', 'webhook']);
    chmodSync(file, 0o644);
    expect(() => readTargets([], { SVC_NOTIFY_FILE: file })).toThrow(/open to its group or others \(mode 0644\)/);
    writeFileSync(join(dir, 'bad'), 'https://ok.example.org/x\ngopher://Secret-in-file-123\n', { mode: 0o600 });
    let message = '';
    try {
      readTargets([], { SVC_NOTIFY_FILE: join(dir, 'bad') });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/SVC_NOTIFY_FILE line 2 has a scheme that names no sink/);
    expect(message).not.toMatch(/gopher|secret-in-file/i);
  });

  it('given twice, on the command line, in SVC_NOTIFY_FILE or both, are one target, numbered where first given', () => {
    const file = join(tmpDir(), 'targets');
    const mail = 'smtp://mail.example.org:587?from=svc@example.org&to=a@example.org,b@example.org';
    writeFileSync(
      file,
      [
        'HTTPS://HOOKS.EXAMPLE.ORG:443/in/abc',
        'smtp://MAIL.example.org?to=B@example.org&to=a@example.org&from=svc@example.org',
        'teams+https://teams.example.org/w/1',
        SLACK,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const t = readTargets([SLACK, 'https://hooks.example.org/in/abc', mail, 'https://hooks.example.org/in/ABC'], {
      SVC_NOTIFY_FILE: file,
    });
    expect(t.map((x) => x.label)).toEqual(['slack #1', 'webhook #2', 'email #3', 'webhook #4', 'teams #5']);
    expect(t.map((x) => x.name)).toEqual([
      'slack hooks.slack.com',
      'webhook hooks.example.org',
      'email mail.example.org:587',
      'webhook hooks.example.org #2',
      'teams teams.example.org',
    ]);
  });

  it('--report-url (SVC_REPORT_URL): an http(s) URL of where the directories are served, else a usage error', () => {
    const hook = ['https://hooks.example.org/in/abc'];
    expect(
      notifySettings('snapshot', { notify: hook, reportUrl: 'https://reports.example.org/svc/' }, {})!.reportUrl,
    ).toBe('https://reports.example.org/svc');
    expect(notifySettings('notify', { notify: hook }, { SVC_REPORT_URL: 'https://r.example.org' })!.reportUrl).toBe(
      'https://r.example.org',
    );
    expect(() => notifySettings('snapshot', { notify: hook, reportUrl: 'reports/svc' }, {})).toThrow(
      /^--report-url is not a URL; give where the snapshot directories are served/,
    );
    expect(() => notifySettings('collect', { notify: hook }, { SVC_REPORT_URL: 'ftp://r.example.org' })).toThrow(
      /^SVC_REPORT_URL must be an https:\/\/ \(or http:\/\/\) URL/,
    );
    expect(() => notifySettings('audit', { notify: hook, reportUrl: 'https://u:p@r.example.org' }, {})).toThrow(
      UsageError,
    );
  });

  it('SVC_NOTIFY_HMAC_FILE: a key file of its owner alone, 16 characters or more', () => {
    const dir = tmpDir();
    writeFileSync(join(dir, 'key'), 'k'.repeat(32) + '\n', { mode: 0o600 });
    expect(readHmacKey({ SVC_NOTIFY_HMAC_FILE: join(dir, 'key') })).toBe('k'.repeat(32));
    writeFileSync(join(dir, 'short'), 'short', { mode: 0o600 });
    expect(() => readHmacKey({ SVC_NOTIFY_HMAC_FILE: join(dir, 'short') })).toThrow(/shorter than 16/);
  });

  it('the --notify-* options need a target, and are parsed before the run', () => {
    expect(() => notifySettings('snapshot', { notifyOn: 'changes' }, {})).toThrow(/--notify-on needs a target/);
    expect(() => notifySettings('snapshot', { notify: [SLACK], notifyOn: 'sometimes' }, {})).toThrow(
      /--notify-on takes failure, changes, findings, always/,
    );
    const s = notifySettings('snapshot', { notify: [SLACK] }, {})!;
    expect(s).toMatchObject({ on: ['failure', 'changes', 'findings'], severity: 'high', intervalHours: 26 });
    expect(s.timeoutMs).toBe(30_000);
  });
});
