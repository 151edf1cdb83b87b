/**
 * Delivery: one POST (or one e-mail) per target, retried with backoff until
 * the target's deadline (`--notify-timeout`, all attempts together). TLS is
 * verified always, with the run's trust store (--ca-file) and proxy settings
 * (the site's undici dispatcher, src/http/client.ts); nothing here follows a
 * redirect. What fails is described by the sink's name, a status or an error
 * code, never by the target's URL.
 */
import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { createDispatcher } from '../http/client.js';
import { describeTransportError } from '../http/errors.js';
import { redact } from '../util/redact.js';
import { escapeControl } from '../util/escape.js';
import { TOOL } from '../version.js';
import type { EmailTarget, HttpTarget } from './targets.js';
import type { EmailContent } from './formats.js';

/** The headers of a signed webhook body (docs/notify.md shows a receiver's check). */
const SIGNATURE_HEADER = 'x-svc-snapshot-signature';
const TIMESTAMP_HEADER = 'x-svc-snapshot-timestamp';

/** `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<body>`: the timestamp is signed with the body, against replay. */
function signBody(key: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Where one sink's attempts end: a failure tells why, the last attempt's reason. */
export class Deadline {
  readonly end: number;
  constructor(ms: number) {
    this.end = Date.now() + ms;
  }
  left(): number {
    return Math.max(0, this.end - Date.now());
  }
}

/**
 * Attempts `once` until it succeeds or the deadline passes, waiting 0.5 s,
 * 1 s, 2 s … (at most 8 s, never past the deadline) between attempts.
 * Resolves to undefined, or to why the last attempt failed.
 */
async function withRetries(
  deadline: Deadline,
  once: (timeoutMs: number) => Promise<string | undefined>,
): Promise<string | undefined> {
  let why: string | undefined = 'no time left for an attempt';
  for (let attempt = 0; deadline.left() > 0; attempt++) {
    why = await once(deadline.left());
    if (why === undefined) return undefined;
    const wait = Math.min(500 * 2 ** attempt, 8000, deadline.left());
    if (wait <= 0 || deadline.left() - wait < 50) break;
    await sleep(wait);
  }
  return why;
}

/** One dispatcher per run for every HTTP sink, as the site's: verified TLS, --ca-file, the proxy variables. */
export function notifyDispatcher(ca: readonly string[] | undefined, timeoutMs: number): Dispatcher {
  return createDispatcher({ concurrency: 4, ca, timeoutMs });
}

export interface Post {
  readonly url: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What an HTTP status of a receiver asks to check: the target URL's key, the receiver, or nothing but time. */
export function statusWhy(status: number): string {
  const what =
    status === 401 || status === 403
      ? 'the receiver refused the key in the target URL; check the URL (a webhook may have been revoked)'
      : status === 404 || status === 410
        ? 'the receiver does not know this webhook; check the target URL (it may have been removed)'
        : status === 413
          ? 'the receiver found the message too large'
          : status === 429
            ? 'the receiver asked to slow down; the next run sends again'
            : status >= 500
              ? 'the receiver failed on its side; check it, the next run sends again'
              : 'the receiver refused the message; check the target URL';
  return `answered HTTP ${status}: ${what}`;
}

/** One POST; undefined on a 2xx answer, else why (status or transport error, with the host alone). */
async function postOnce(dispatcher: Dispatcher, p: Post, timeoutMs: number): Promise<string | undefined> {
  const url = new URL(p.url);
  try {
    const res = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': `${TOOL.name}/${TOOL.version}`, ...p.headers },
      body: p.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
    return res.statusCode >= 200 && res.statusCode <= 299 ? undefined : statusWhy(res.statusCode);
  } catch (err) {
    if ((err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError') return 'no answer in time';
    return redact(describeTransportError(err, url.host, undefined, "the notification target's host").detail);
  }
}

/**
 * The POSTs of one sink, in order, each retried within the one deadline and
 * sent once the one before is answered. Each body is made when it is asked
 * for (Alertmanager's batches), right after the one before is handed to
 * undici, which writes it when the event loop next turns.
 */
export async function postAll(
  dispatcher: Dispatcher,
  posts: Iterable<Post>,
  deadline: Deadline,
): Promise<string | undefined> {
  let sending: Promise<string | undefined> | undefined;
  for (const p of posts) {
    const why = await sending;
    if (why !== undefined) return why;
    sending = withRetries(deadline, (ms) => postOnce(dispatcher, p, ms));
  }
  return sending;
}

export function webhookPost(target: HttpTarget, payload: unknown, hmacKey: string | undefined, now: Date): Post {
  const body = JSON.stringify(payload);
  if (hmacKey === undefined) return { url: target.url, body };
  const timestamp = String(Math.floor(now.getTime() / 1000));
  return {
    url: target.url,
    body,
    headers: { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signBody(hmacKey, timestamp, body) },
  };
}

/** Alertmanager takes any number of alerts in one POST; batches keep each body a few MB at most. */
const ALERTS_PER_POST = 2000;

/** The POSTs of the alerts, each batch's body made when it is asked for. */
export function* alertmanagerPosts(target: HttpTarget, alerts: Iterable<unknown>): Generator<Post> {
  let batch: unknown[] = [];
  for (const a of alerts) {
    batch.push(a);
    if (batch.length === ALERTS_PER_POST) {
      yield { url: `${target.url}/api/v2/alerts`, body: JSON.stringify(batch) };
      batch = [];
    }
  }
  if (batch.length > 0) yield { url: `${target.url}/api/v2/alerts`, body: JSON.stringify(batch) };
}

/** What Node's TLS layer says of a certificate it does not accept (nodemailer keeps the message, not the code). */
const UNTRUSTED = /unable to verify|unable to get (local )?issuer|self[- ]signed|certificate chain|unknown ca/i;

/**
 * Why an SMTP attempt failed, named for what to check: the host and port,
 * STARTTLS, the certificate, the login, the sender or the recipient. Built
 * from nodemailer's code, command and response code and Node's socket
 * error, never from the server's text (it may quote an address or a login).
 */
function smtpWhy(err: unknown, t: Pick<EmailTarget, 'host' | 'port' | 'implicitTls'>): string {
  const e = err as { code?: string; responseCode?: number; command?: string; message?: string };
  const at = `${t.host}:${t.port}`;
  const smtp = e.responseCode !== undefined ? ` (SMTP ${e.responseCode})` : '';
  const message = e.message ?? '';
  if (e.code === 'EENVELOPE' && e.command === 'MAIL FROM')
    return `the mail server ${at} refused the sender${smtp}; check from= in the target and that the server lets this host send as that address`;
  if (e.code === 'EENVELOPE') return `the mail server ${at} refused the recipient${smtp}; check to= in the target`;
  if (e.code === 'EAUTH' || e.command === 'AUTH PLAIN' || e.command === 'AUTH LOGIN')
    return `the mail server ${at} refused the login${smtp}; check the user name and password in the target`;
  if (e.code === 'ENOAUTH') return `the mail server ${at} asks for a login; put user:password@ in the target`;
  if (e.code === 'ETLS' || e.command === 'STARTTLS')
    return (
      `the mail server ${at} refused STARTTLS${smtp}; it must offer STARTTLS on this port ` +
      '(mail is never sent in clear text), or use smtps:// to its TLS port (465)'
    );
  if (/ECONNREFUSED/.test(message))
    return `connection refused by ${at}; check the host and port in the target, and that the mail server is up`;
  if (/ENOTFOUND|EAI_AGAIN/.test(message))
    return `the mail server's host ${t.host} could not be resolved; check the host in the target`;
  if (e.code === 'ETIMEDOUT' || /ETIMEDOUT|timeout|Greeting never received/i.test(message))
    return `no answer from ${at} in time; check the host and port in the target, and any firewall between`;
  if (UNTRUSTED.test(message))
    return `the certificate of the mail server ${t.host} is not trusted; if it is issued by an internal CA, pass its PEM certificate with --ca-file`;
  if (/expired|not yet valid/i.test(message))
    return `the certificate of the mail server ${t.host} is outside its validity period; renew it on the server`;
  if (/altnames|does not match/i.test(message))
    return `the certificate of the mail server ${t.host} does not name that host; use the host name it was issued for`;
  if (/wrong version number|packet length too long/i.test(message))
    return t.implicitTls
      ? `TLS could not start with ${at}: it does not speak TLS from the first byte; use smtp:// (STARTTLS) for this port`
      : `TLS could not start with ${at}; check the port in the target`;
  return `mail to ${at} failed (${escapeControl([e.code ?? 'error', smtp.trim()].filter((p) => p !== '').join(' '))})`;
}

/** One e-mail with a plain-text and an HTML part; STARTTLS required on smtp://, verified TLS on both. */
export async function sendEmail(
  t: EmailTarget,
  content: EmailContent,
  ca: readonly string[] | undefined,
  deadline: Deadline,
): Promise<string | undefined> {
  const nodemailer = (await import('nodemailer')).default;
  return withRetries(deadline, async (timeoutMs) => {
    const transport = nodemailer.createTransport({
      host: t.host,
      port: t.port,
      secure: t.implicitTls,
      requireTLS: !t.implicitTls,
      ...(t.auth ? { auth: { user: t.auth.user, pass: t.auth.pass } } : {}),
      tls: { rejectUnauthorized: true, ...(ca ? { ca: [...ca] } : {}) },
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    try {
      await transport.sendMail({
        from: t.from,
        to: [...t.to],
        subject: content.subject,
        text: content.text,
        html: content.html,
        headers: { 'X-Mailer': `${TOOL.name}/${TOOL.version}` },
      });
      return undefined;
    } catch (err) {
      return smtpWhy(err, t);
    } finally {
      transport.close();
    }
  });
}
