/**
 * Notification targets (docs/notify.md): a URL whose scheme names the
 * sink, as shoutrrr and Apprise spell them. A target URL is a secret (a Slack
 * or Teams webhook's path is its key, an SMTP URL may hold a password): each
 * is registered for redaction as soon as it is read, and a sink is named in
 * every message and metric by its kind and host alone (`slack
 * hooks.slack.com`), never by its URL.
 */
import { readOrProblem, UsageError } from '../errors.js';
import { isLoopbackHost } from '../config/url.js';
import { readSecretFile } from '../config/token-file.js';
import { registerSecret } from '../util/redact.js';

interface TargetBase {
  /** How the metrics' `sink` label names it: kind and host, `#2` on for a second one alike. */
  readonly name: string;
  /** How a person's messages name it: `<kind> #<n>`, n counting the distinct targets in the order first given, from 1. */
  readonly label: string;
}

export interface HttpTarget extends TargetBase {
  readonly kind: 'webhook' | 'alertmanager' | 'slack' | 'teams';
  /** The https (or loopback http) URL posted to; for Alertmanager, its base (the API is under /api/v2). */
  readonly url: string;
}

export interface EmailTarget extends TargetBase {
  readonly kind: 'email';
  readonly host: string;
  readonly port: number;
  /** smtps://: TLS from the first byte; smtp://: STARTTLS, required. */
  readonly implicitTls: boolean;
  readonly from: string;
  readonly to: readonly string[];
  readonly auth?: { readonly user: string; readonly pass: string };
}

export type Target = HttpTarget | EmailTarget;

const PREFIXED = { 'alertmanager+': 'alertmanager', 'slack+': 'slack', 'teams+': 'teams' } as const;
const SCHEMES = 'https://, alertmanager+https://, slack+https://, teams+https://, smtp:// or smtps://';

/** A plain address: no display name, no CR/LF or anything else a header could be split on. */
const ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*$/;

/**
 * One target; `where` names it in messages (`--notify (the 2nd)`,
 * `SVC_NOTIFY_FILE line 3`), since the text itself is never repeated.
 */
type Parsed = Omit<HttpTarget, 'name' | 'label'> | Omit<EmailTarget, 'name' | 'label'>;

function parseTarget(raw: string, where: string): Parsed {
  const text = raw.trim();
  registerSecret(text);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) throw new UsageError(`${where} is not a URL; a target starts with ${SCHEMES}`);
  // A URL has no white space: text after one is most often a comment, which would become part of the path.
  if (/\s/.test(text))
    throw new UsageError(`${where} holds white space; a target is one URL (put a comment on a line of its own)`);
  if (scheme === 'smtp' || scheme === 'smtps') return parseEmail(text, scheme, where);
  const prefix = (Object.keys(PREFIXED) as Array<keyof typeof PREFIXED>).find((p) => scheme.startsWith(p));
  const inner = prefix ? text.slice(prefix.length) : text;
  const kind = prefix ? PREFIXED[prefix] : 'webhook';
  const innerScheme = prefix ? scheme.slice(prefix.length) : scheme;
  if (innerScheme !== 'https' && innerScheme !== 'http') {
    // Not even the scheme is repeated: a token pasted alone reads as one (`xoxb-…:…`).
    throw new UsageError(
      `${where} has a scheme that names no sink (it is not shown: it may hold a secret); a target starts with ${SCHEMES}`,
    );
  }
  const url = parseUrl(inner, where);
  if (url.username || url.password)
    throw new UsageError(`${where} must not hold a user name or password (that part is not shown)`);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new UsageError(
      `${where} uses http:// to a host that is not loopback; use https:// (http:// only to 127.0.0.1, ::1 and localhost)`,
    );
  }
  // The parts that hold the secret, in every form a message could echo them.
  for (const part of [url.pathname + url.search, url.search.slice(1), url.href]) registerSecret(part);
  const base = kind === 'alertmanager' ? `${url.origin}${url.pathname.replace(/\/+$/, '')}` : url.href;
  return { kind, url: base };
}

function parseUrl(text: string, where: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new UsageError(`${where} is not a URL (it is not shown: it may hold a secret)`);
  }
}

/** A user name or password of an smtp:// target, percent-decoded; bad encoding is the target's usage error. */
function decoded(part: string, where: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new UsageError(
      `${where} has a user name or password that is not valid percent-encoding (%XX; it is not shown: it may hold a secret)`,
    );
  }
}

function parseEmail(text: string, scheme: 'smtp' | 'smtps', where: string): Omit<EmailTarget, 'name' | 'label'> {
  const url = parseUrl(text, where);
  registerSecret(url.password);
  const user = decoded(url.username, where);
  const pass = decoded(url.password, where);
  registerSecret(pass);
  if (url.hostname === '') throw new UsageError(`${where} names no mail server: smtp://host:587?from=…&to=…`);
  const from = url.searchParams.get('from') ?? '';
  const to = url.searchParams
    .getAll('to')
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (!ADDRESS.test(from)) throw new UsageError(`${where} needs from=<address>, one plain e-mail address`);
  if (to.length === 0 || !to.every((t) => ADDRESS.test(t)))
    throw new UsageError(`${where} needs to=<address>[,<address>…], plain e-mail addresses`);
  return {
    kind: 'email',
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port !== '' ? Number(url.port) : scheme === 'smtps' ? 465 : 587,
    implicitTls: scheme === 'smtps',
    from,
    to,
    ...(user !== '' ? { auth: { user, pass } } : {}),
  };
}

/** How a sink is named: its kind and host (with the port when one is given), never its path or query. */
function sinkName(t: Parsed): string {
  if (t.kind === 'email') return `email ${t.host}:${t.port}`;
  return `${t.kind} ${new URL(t.url).host}`;
}

function ordinal(n: number): string {
  return n === 1 ? '1st' : n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}

/** The lines of a targets file: one target each; blank lines and lines starting with # are skipped. */
function fileTargets(variable: string, path: string): Array<{ raw: string; where: string }> {
  const text = readSecretFile(variable, path, 'the targets file', 'the notification targets, one a line');
  const out: Array<{ raw: string; where: string }> = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const t = line.trim();
    if (t !== '' && !t.startsWith('#')) out.push({ raw: t, where: `${variable} line ${i + 1}` });
  });
  if (out.length === 0) throw new UsageError(`${variable}=${path}: holds no target; write one a line`);
  return out;
}

/**
 * What makes two targets the same one: the parsed URL (scheme and host in
 * lower case, a default port dropped, as WHATWG URL writes them; the path and
 * query as given, since a receiver may tell them apart by case), and for
 * e-mail the server, TLS mode, login, sender and the set of recipients.
 */
function sameKey(t: Parsed): string {
  if (t.kind !== 'email') return `${t.kind} ${t.url}`;
  const to = [...new Set(t.to.map((a) => a.toLowerCase()))].sort();
  return JSON.stringify([t.host.toLowerCase(), t.port, t.implicitTls, t.auth ?? null, t.from.toLowerCase(), to]);
}

/**
 * The run's targets: each `--notify`, then each line of SVC_NOTIFY_FILE; one
 * given twice (in either place, or both) is sent to once, where first given.
 */
export function readTargets(
  flags: readonly string[] | undefined,
  env: NodeJS.ProcessEnv,
  problems?: string[],
): Target[] {
  // With `problems`, a target that cannot be used is said there and left out: the others are sent to.
  const tried = <T>(read: () => T): T | undefined => readOrProblem(read, problems);
  const given = (flags ?? []).map((raw, i) => ({ raw, where: `--notify (the ${ordinal(i + 1)})` }));
  const file = env.SVC_NOTIFY_FILE;
  if (file !== undefined && file !== '') given.push(...(tried(() => fileTargets('SVC_NOTIFY_FILE', file)) ?? []));
  const seen = new Map<string, number>();
  const keys = new Set<string>();
  const out: Target[] = [];
  for (const { raw, where } of given) {
    const parsed = tried(() => parseTarget(raw, where));
    if (parsed === undefined) continue;
    const key = sameKey(parsed);
    if (keys.has(key)) continue;
    keys.add(key);
    const base = sinkName(parsed);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    out.push({
      ...parsed,
      name: n === 1 ? base : `${base} #${n}`,
      label: `${parsed.kind} #${out.length + 1}`,
    } as Target);
  }
  return out;
}

/** SVC_NOTIFY_HMAC_FILE: the webhook signing key, read as a token file is; undefined when unset. */
export function readHmacKey(env: NodeJS.ProcessEnv): string | undefined {
  const file = env.SVC_NOTIFY_HMAC_FILE;
  if (file === undefined || file === '') return undefined;
  const key = readSecretFile('SVC_NOTIFY_HMAC_FILE', file, 'the signing key file', 'the signing key').trim();
  if (key.length < 16)
    throw new UsageError(`SVC_NOTIFY_HMAC_FILE=${file}: the key is shorter than 16 characters; use a longer one`);
  registerSecret(key);
  return key;
}
