/**
 * An e-mail that could not be sent is named for what to check (host and
 * port, STARTTLS, the certificate, the login, the sender, the recipient),
 * never by nodemailer's raw code (`ESOCKET`, `ETLS 454`), tried against the
 * real SMTP receiver of the notify tests (aiosmtpd) in each failing
 * configuration it can take, and a port where nothing, or something silent,
 * listens.
 */
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { getTestCerts, getUntrustedCerts } from '../fake/certs.js';
import { startSmtpReceiver, type SmtpFailure } from '../helpers/notify-receivers.js';
import { freePort } from '../helpers/free-port.js';
import { Deadline, sendEmail, statusWhy } from '../../src/notify/send.js';
import type { EmailTarget } from '../../src/notify/targets.js';

const certs = getTestCerts();
const available = existsSync('/usr/lib/python3/dist-packages/aiosmtpd');
const CONTENT = { subject: 'digest', text: 'text', html: '<p>text</p>' };
const PASSWORD = 'smtp-pa55word-9f8e7d';

function target(port: number, extra: Partial<EmailTarget> = {}): EmailTarget {
  return {
    kind: 'email',
    name: `email 127.0.0.1:${port}`,
    label: 'email #1',
    host: '127.0.0.1',
    port,
    implicitTls: false,
    from: 'svc@example.org',
    to: ['admins@example.org'],
    ...extra,
  };
}

/** Why sending to a receiver that fails so failed: at most 1.5 s of attempts. */
async function whyWith(failure: SmtpFailure | undefined, extra: Partial<EmailTarget> = {}, trusted = true) {
  const receiver = await startSmtpReceiver(failure === undefined && !trusted ? getUntrustedCerts() : certs, failure);
  try {
    const why = await sendEmail(target(receiver.port, extra), CONTENT, [certs.caPem], new Deadline(1500));
    return { why: why ?? '', received: receiver.received().length, port: receiver.port };
  } finally {
    await receiver.close();
  }
}

function noRawCode(why: string): void {
  expect(why).not.toMatch(/ESOCKET|ETLS|EENVELOPE|EAUTH|ECONNECTION/);
  expect(why).not.toContain(PASSWORD);
  expect(why).not.toContain('@example.org');
}

describe.skipIf(!available)('an e-mail that could not be sent says what to check', () => {
  it('the sender refused', async () => {
    const r = await whyWith('sender');
    expect(r.why).toBe(
      `the mail server 127.0.0.1:${r.port} refused the sender (SMTP 553); check from= in the target and that the server lets this host send as that address`,
    );
    expect(r.received).toBe(0);
  }, 30_000);

  it('the recipient refused', async () => {
    const r = await whyWith('recipient');
    expect(r.why).toBe(`the mail server 127.0.0.1:${r.port} refused the recipient (SMTP 550); check to= in the target`);
    noRawCode(r.why);
  }, 30_000);

  it('the login refused, its password never repeated', async () => {
    const r = await whyWith('auth', { auth: { user: 'mailer', pass: PASSWORD } });
    expect(r.why).toMatch(/^the mail server 127\.0\.0\.1:\d+ refused the login \(SMTP 535\); check the user name/);
    noRawCode(r.why);
  }, 30_000);

  it('STARTTLS refused (454), and STARTTLS not offered: never sent in clear text', async () => {
    for (const failure of ['starttls-refused', 'no-starttls'] as const) {
      const r = await whyWith(failure);
      expect(r.why).toMatch(/^the mail server 127\.0\.0\.1:\d+ refused STARTTLS \(SMTP 454\); it must offer STARTTLS/);
      expect(r.received).toBe(0);
      noRawCode(r.why);
    }
  }, 30_000);

  it('a certificate not trusted: --ca-file', async () => {
    const r = await whyWith(undefined, {}, false);
    expect(r.why).toBe(
      'the certificate of the mail server 127.0.0.1 is not trusted; if it is issued by an internal CA, pass its PEM certificate with --ca-file',
    );
  }, 30_000);

  it('smtps:// to a port that speaks STARTTLS', async () => {
    const r = await whyWith(undefined, { implicitTls: true });
    expect(r.why).toMatch(/does not speak TLS from the first byte; use smtp:\/\/ \(STARTTLS\) for this port$/);
  }, 30_000);

  it('connection refused, and no answer in time: the host and port', async () => {
    const port = await freePort();
    const refused = await sendEmail(target(port), CONTENT, undefined, new Deadline(1000));
    expect(refused).toBe(
      `connection refused by 127.0.0.1:${port}; check the host and port in the target, and that the mail server is up`,
    );
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const at = (silent.address() as AddressInfo).port;
      const why = await sendEmail(target(at), CONTENT, undefined, new Deadline(1000));
      expect(why).toBe(
        `no answer from 127.0.0.1:${at} in time; check the host and port in the target, and any firewall between`,
      );
    } finally {
      silent.close();
    }
  }, 30_000);
});

describe('an HTTP status of a receiver', () => {
  it('says what to check: the key, the URL, the receiver', () => {
    expect(statusWhy(403)).toBe(
      'answered HTTP 403: the receiver refused the key in the target URL; check the URL (a webhook may have been revoked)',
    );
    expect(statusWhy(404)).toMatch(/does not know this webhook; check the target URL/);
    expect(statusWhy(503)).toBe(
      'answered HTTP 503: the receiver failed on its side; check it, the next run sends again',
    );
  });
});
