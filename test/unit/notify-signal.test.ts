/**
 * notifyRunSync when its sending process cannot do its work: here, run from
 * src/ by the tests, it finds no ./notify-child.js beside it (the build puts
 * one in lib/), so the process exits with an error. The run is told so, each
 * sink counts as failed, and nothing of the target is printed.
 */
import { describe, expect, it } from 'vitest';
import { notifyRunSync } from '../../src/notify/signal.js';
import type { NotifySettings } from '../../src/notify/index.js';

const SECRET = 'unit-signal-secret-0a1b2c';

describe('notifyRunSync', () => {
  it('a sending process that fails: every target failed, saying why, no secret', () => {
    const settings: NotifySettings = {
      targets: [
        { kind: 'webhook', name: 'webhook 127.0.0.1:9', label: 'webhook #1', url: `https://127.0.0.1:9/in/${SECRET}` },
      ],
      hmacKey: undefined,
      on: ['always'],
      severity: 'high',
      intervalHours: 26,
      timeoutMs: 2000,
      ca: undefined,
      reportUrl: undefined,
    };
    const results = notifyRunSync(
      { command: 'snapshot', site: 'https://site', time: new Date(0).toISOString(), exitCode: 143, failure: 'x' },
      settings,
    );
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ sink: 'webhook 127.0.0.1:9', target: 'webhook #1', state: 'failed' });
    expect(results[0]!.why).toMatch(/could not be sent \(the process sending them exited 1\)/);
    expect(JSON.stringify(results)).not.toContain(SECRET);
  });
});
