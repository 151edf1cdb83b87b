import { readSmallFile } from '../util/safe-read.js';
import { rootCertificates } from 'node:tls';
import { UsageError } from '../errors.js';
import { SHORTEST_SECRET, registerSecret } from '../util/redact.js';
import { INCLUDES, type Include } from '../includes.js';

/**
 * A number as a flag takes it: plain decimal digits, with a fraction after a
 * point where one makes sense; no sign, exponent, hex, spaces or `Infinity`,
 * which `Number()` would all take (`0x10` is 16, `1e-9` a billionth).
 */
const DECIMAL = /^\d+(?:\.\d+)?$/;
const WHOLE = /^\d+$/;

/** A number greater than 0 (at least `min` when given) and at most `max`. */
export function parsePositiveNumber(flag: string, raw: string, max: number, min?: number): number {
  const n = Number(raw);
  if (!DECIMAL.test(raw) || n > max || (min === undefined ? n <= 0 : n < min)) {
    const range = min === undefined ? `greater than 0 and at most ${max}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be a number ${range} (got "${raw}")`);
  }
  return n;
}

/** A whole number from `min` (0 or more: no sign is taken) to `max`. */
export function parseInteger(flag: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!WHOLE.test(raw) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return n;
}

/** `--realms a,b`: the ids, once each, in order. */
export function parseRealms(raw: string): string[] {
  const ids = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (ids.length === 0) throw new UsageError('--realms needs at least one realm id, e.g. --realms libvirt,altvirt');
  return [...new Set(ids)];
}

/** `--keep <n>`: a whole number of at least 1 (the new directory always counts). */
export function parseKeep(raw: string): number {
  const n = Number(raw);
  if (!WHOLE.test(raw) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(
      `--keep must be a whole number of at least 1: how many output directories to keep, the new one included (got "${raw.slice(0, 40)}")`,
    );
  }
  return n;
}

/** `n/t` of `verify --sample`: the n-th of t parts, 1 <= n <= t <= 1000. */
export function parseSample(raw: string, from: string): { n: number; t: number } {
  const m = /^(\d{1,4})\/(\d{1,4})$/.exec(raw.trim());
  const n = m ? Number(m[1]) : NaN;
  const t = m ? Number(m[2]) : NaN;
  if (!m || t < 1 || t > 1000 || n < 1 || n > t)
    throw new UsageError(
      `${from} must be n/t with 1 <= n <= t <= 1000: check the n-th of t parts (such as 3/7; got "${raw.slice(0, 40)}")`,
    );
  return { n, t };
}

const DATE_SHAPE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A real calendar date `YYYY-MM-DD` (2026-02-30 is not one); returns it
 * unchanged. A round trip through a UTC date rather than date-fns: this module
 * is on the path of `--help`, which starts without loading date-fns.
 */
export function parseCalendarDate(what: string, raw: string): string {
  const day = new Date(`${raw}T00:00:00.000Z`);
  if (!DATE_SHAPE.test(raw) || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== raw) {
    throw new UsageError(`${what} must be a calendar date YYYY-MM-DD, e.g. 2026-11-21 (got "${raw.slice(0, 40)}")`);
  }
  return raw;
}

/** The spreadsheet forms `--format` can add to the JSON exports. */
export type SheetFormat = 'csv' | 'xlsx';
/** What `--format` can add: the spreadsheets, and on a snapshot the report page (convert refuses html). */
type OutputFormat = SheetFormat | 'html';
const FORMATS = ['json', 'csv', 'xlsx', 'html'] as const;

/** The entries of a comma-separated list, lower case; an unknown or empty one is a usage error naming the valid ones. */
function listOf(raw: string, from: string, valid: readonly string[]): string[] {
  const items = raw.split(',').map((s) => s.trim().toLowerCase());
  const bad = items.filter((s) => !valid.includes(s));
  if (bad.length > 0) {
    const shown = bad.map((b) => JSON.stringify(b.slice(0, 20))).join(', ');
    throw new UsageError(`${from} takes a comma-separated list of ${valid.join(', ')}; ${shown} is not one of them`);
  }
  return items;
}

/** `--format json,csv,xlsx,html` → the formats asked for besides json (which is always written). */
export function parseFormats(raw: string, from: string): OutputFormat[] {
  const items = listOf(raw, from, FORMATS);
  return (['csv', 'xlsx', 'html'] as const).filter((f) => items.includes(f));
}

/** `--include vms`: the export groups to add after the 15, once each, in the order of INCLUDES. */
export function parseInclude(raw: string, from: string): Include[] {
  const items = listOf(raw, from, INCLUDES);
  return INCLUDES.filter((i) => items.includes(i));
}

/** A secret and where it came from (`SVC_TOKEN_VM`, `--token`, …: safe to print). */
export interface ResolvedToken {
  /** The secret. Never printed, logged or written. */
  readonly value: string;
  readonly source: string;
}

// A cookie value may not hold whitespace, quotes, commas, semicolons or backslashes (RFC 6265).
const COOKIE_SAFE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]+$/;

/** An API token (management API): registered for redaction first, then checked; empty is absent. */
export function parseToken(raw: string, from: string): ResolvedToken | undefined {
  if (raw === '') return undefined;
  registerSecret(raw);
  if (raw.length < SHORTEST_SECRET) {
    // Not repeated: too short to be redacted in messages without garbling them.
    throw new UsageError(
      `the token in ${from} is ${raw.length} character${raw.length === 1 ? '' : 's'} long; an API token is longer: check what is set there`,
    );
  }
  if (!COOKIE_SAFE.test(raw)) {
    throw new UsageError(
      `the token in ${from} contains spaces, quotes, commas, semicolons, backslashes or control characters, ` +
        'which no API token has; check for a trailing newline or stray quotes where it is set',
    );
  }
  return { value: raw, source: from };
}

/** Spec section 5: 22 letters or digits followed by `==`. */
export const AUDIT_TOKEN_PATTERN = /^[A-Za-z0-9]{22}==$/;

/** An audit token secret: registered for redaction first, then checked; empty is absent. */
export function parseAuditToken(raw: string, from: string): ResolvedToken | undefined {
  if (raw === '') return undefined;
  registerSecret(raw);
  if (!AUDIT_TOKEN_PATTERN.test(raw)) {
    throw new UsageError(
      `the audit token in ${from} is not an audit token secret, which is 22 letters or digits followed by "==" (24 characters); ` +
        'check for a trailing newline, stray quotes or a truncated copy where it is set',
    );
  }
  return { value: raw, source: from };
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A CA bundle is a few hundred kilobytes; anything past this is not one. */
const MAX_PEM_BYTES = 16 * 1024 * 1024;

/**
 * The text of a CA file, or why it cannot be read: `/dev/zero`, a FIFO or a
 * multi-gigabyte file given by mistake must give a message, not exhaust
 * memory or hang. (Symlinks are followed: system CA paths are often links.)
 */
function readPemText(path: string): { text: string } | { why: string } {
  try {
    const read = readSmallFile(path, { maxBytes: MAX_PEM_BYTES, followLinks: true });
    if (Buffer.isBuffer(read)) return { text: read.toString('utf8') };
    if (read.problem === 'too large') return { why: `larger than ${MAX_PEM_BYTES / 1024 / 1024} MiB` };
    return { why: read.problem === 'unopened' ? read.code : read.problem };
  } catch (e) {
    return { why: (e as NodeJS.ErrnoException).code ?? 'error' };
  }
}

function readPem(path: string, what: string): string[] {
  const read = readPemText(path);
  if ('why' in read)
    throw new UsageError(
      `${what} ${path} cannot be read (${read.why}); give the path of a PEM file holding your CA certificate(s)`,
    );
  const { text } = read;
  const certs = text.match(PEM_CERT) ?? [];
  if (certs.length === 0) {
    throw new UsageError(
      `${what} ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----); convert a DER file with: openssl x509 ` +
        `-inform der -in ca.der -out ca.pem`,
    );
  }
  return certs;
}

/**
 * The trust store when `--ca-file` is given: Node's bundled roots, the
 * certificates of NODE_EXTRA_CA_CERTS (which Node applies only when no `ca` is
 * set, so they are added here explicitly) and the file's. Undefined otherwise,
 * which leaves Node's default store (NODE_EXTRA_CA_CERTS included) in force.
 */
export function trustStore(caFile: string | undefined, env: NodeJS.ProcessEnv): string[] | undefined {
  if (caFile === undefined) return undefined;
  // Node has read NODE_EXTRA_CA_CERTS at start-up (a FIFO there hangs it before this code); it only warns when unreadable.
  const read = env.NODE_EXTRA_CA_CERTS ? readPemText(env.NODE_EXTRA_CA_CERTS) : undefined;
  const extra = read && 'text' in read ? (read.text.match(PEM_CERT) ?? []) : [];
  return [...rootCertificates, ...extra, ...readPem(caFile, '--ca-file')];
}

/** A value as a message may show it: its first 40 characters, each unprintable one as `?`. */
function printable(raw: string): string {
  return raw.slice(0, 40).replace(/[^\x20-\x7e]/g, '?');
}

/** A finding's severity, most severe first (docs/findings.md; src/findings/define.ts). */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** `--fail-on <severity>`, parsed without loading the rules (option records are read before any command runs). */
export function parseSeverity(raw: string, from: string): Severity {
  const s = raw.trim().toLowerCase();
  if ((SEVERITIES as readonly string[]).includes(s)) return s as Severity;
  throw new UsageError(`${from} must be one of ${SEVERITIES.join(', ')}; got "${printable(raw)}"`);
}

/** `--fail-on-unevaluated=false`: a switch that is on by default, turned off by its value. */
export function parseBooleanValue(raw: string, from: string): boolean {
  const s = raw.trim().toLowerCase();
  if (s === 'true') return true;
  if (s === 'false') return false;
  throw new UsageError(`${from} must be true or false (${from}=false); got "${printable(raw)}"`);
}

/** What `--notify-on` may name (docs/notify.md). */
const NOTIFY_ON = ['failure', 'changes', 'findings', 'always'] as const;
export type NotifyOn = (typeof NOTIFY_ON)[number];

/** `--notify-on failure,changes`: the values, once each; an unknown one is a usage error naming the valid ones. */
export function parseNotifyOn(raw: string, from: string): NotifyOn[] {
  const values = raw
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (values.length === 0) throw new UsageError(`${from} needs at least one of ${NOTIFY_ON.join(', ')}`);
  const unknown = values.find((v) => !(NOTIFY_ON as readonly string[]).includes(v));
  if (unknown !== undefined)
    throw new UsageError(`${from} takes ${NOTIFY_ON.join(', ')} (comma-separated); got "${printable(unknown)}"`);
  return [...new Set(values)] as NotifyOn[];
}
