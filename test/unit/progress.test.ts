import { describe, expect, it } from 'vitest';
import { ttyReporter } from '../../src/progress/tty.js';
import { plainReporter } from '../../src/progress/reporter.js';
import { clearSecrets, registerSecret } from '../../src/util/redact.js';

function fakeTerminal(columns = 60) {
  const writes: string[] = [];
  return { writes, stream: { columns, write: (s: string) => (writes.push(s), true) } };
}

describe('the terminal display', () => {
  it('draws routes in flight with counts, and erases itself and restores the cursor on close', () => {
    const t = fakeTerminal(200);
    let now = 0;
    const r = ttyReporter(t.stream, false, () => now);
    r.info('collecting from https://platform.example.org');
    r.routeStarted('GET /api/users');
    r.routeStarted('GET /api/teams');
    r.routeDone({ route: 'GET /api/users', tokenType: 'User', status: 200, file: 'api-users.json', bytes: 2048 }, 12);
    now = 1500;
    r.warn('something to know');
    const screen = t.writes.join('');
    expect(screen).toContain('svc-snapshot: warning: something to know');
    expect(screen).toMatch(/1 done, 1 in flight — 12 records, 2\.0 KiB — 1\.5 s/);
    expect(screen).toContain('… GET /api/teams');
    r.close();
    const tail = t.writes.slice(-2).join('');
    expect(tail).toContain('\x1b[0J');
    expect(tail.endsWith('\x1b[?25h')).toBe(true);
  });

  it('stays silent but for errors with --quiet', () => {
    const t = fakeTerminal();
    const r = ttyReporter(t.stream, true);
    r.info('phase');
    r.routeStarted('GET /api/users');
    r.warn('not shown');
    r.error('shown');
    r.close();
    expect(t.writes.join('')).toBe('svc-snapshot: error: shown\n');
  });

  it('clips lines to the terminal width', () => {
    const t = fakeTerminal();
    const r = ttyReporter(t.stream, false);
    r.info('x'.repeat(200));
    r.routeStarted('GET /api/users');
    r.warn('w');
    r.close();
    for (const line of t.writes.join('').split('\n'))
      expect(line.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace('\r', '').length).toBeLessThanOrEqual(60);
  });
});

describe('plain progress lines', () => {
  it('redact any known secret', () => {
    registerSecret('fake-secret-in-a-message');
    const lines: string[] = [];
    plainReporter((l) => lines.push(l), false).error('server said fake-secret-in-a-message');
    expect(lines).toEqual(['svc-snapshot: error: server said [redacted]\n']);
    clearSecrets();
  });
});
