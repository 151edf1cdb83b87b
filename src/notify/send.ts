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
    return res.statusCode >= 200 && res.statusCode <= 299 ? undefined : `answered HTTP ${res.statusCode}`;
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

/** The reason an SMTP attempt failed: nodemailer's error code and response code, never the message (it may quote a login). */
function smtpWhy(err: unknown, t: EmailTarget): string {
  const e = err as { code?: string; responseCode?: number; command?: string; reason?: string };
  const tlsCode = (err as { cause?: { code?: string } }).cause?.code;
  const parts = [e.code ?? 'error', e.responseCode !== undefined ? `SMTP ${e.responseCode}` : '', tlsCode ?? ''];
  return `mail to ${t.host}:${t.port} failed (${escapeControl(parts.filter((p) => p !== '').join(', '))})`;
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
