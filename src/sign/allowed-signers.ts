/**
 * OpenSSH's allowed_signers file (ssh-keygen(1), ALLOWED SIGNERS): one key
 * per line, `principals [options] keytype base64-key [comment]`; empty lines
 * and lines starting with `#` are comments. Options: `cert-authority`,
 * `namespaces="pattern,…"`, `valid-after="timestamp"`,
 * `valid-before="timestamp"`. A line this parser cannot read is a usage
 * error naming its line number, as ssh-keygen refuses it too.
 */
import { readSmallFile } from '../util/safe-read.js';
import { UsageError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { blobKeyType } from './wire.js';

/** An allowed_signers file of a site is a few KB; past this it is not one. */
const MAX_FILE_BYTES = 1024 * 1024;

export type AllowedSigner = Readonly<
  Options & { line: number; principals: string; keyType: string; publicBlob: Buffer }
>;

export interface AllowedSigners {
  readonly file: string;
  readonly signers: readonly AllowedSigner[];
}

const KEY_TYPES = [
  'ssh-ed25519',
  'ssh-rsa',
  'ssh-dss',
  'ecdsa-sha2-nistp(256|384|521)',
  'sk-ssh-ed25519@openssh\\.com',
  'sk-ecdsa-sha2-nistp256@openssh\\.com',
];
const KEY_TYPE = new RegExp(`^(${KEY_TYPES.join('|')})(-cert-v01@openssh\\.com)?$`);

/** Reads and parses `file` (a regular file of bounded size; links are followed, as ssh-keygen does). */
export function readAllowedSigners(file: string, from = '--allowed-signers'): AllowedSigners {
  const where = `${from} ${escapeControl(file)}`;
  const read = readSmallFile(file, { maxBytes: MAX_FILE_BYTES, followLinks: true });
  if (Buffer.isBuffer(read)) return { file, signers: parseAllowedSigners(read.toString('utf8'), where) };
  if (read.problem === 'not a regular file')
    throw new UsageError(`${where} is not a regular file; give an allowed_signers file`);
  if (read.problem === 'too large')
    throw new UsageError(
      `${where} is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; it is not an allowed_signers file`,
    );
  throw new UsageError(
    `${where} ${read.code === 'ENOENT' ? 'does not exist' : `cannot be read (${read.code})`}; give an ` +
      `allowed_signers file (ssh-keygen(1), ALLOWED SIGNERS)`,
  );
}

/** Parses the text of an allowed_signers file; `where` names it in messages. */
export function parseAllowedSigners(text: string, where: string): AllowedSigner[] {
  const out: AllowedSigner[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '').trim();
    if (line === '' || line.startsWith('#')) return;
    const malformed = (why: string) =>
      new UsageError(
        `${where} line ${i + 1} is malformed: ${why}; each line is: principals [options] keytype base64-key [comment]`,
      );
    const fields = splitFields(line);
    if (fields === undefined) throw malformed('a quote is not closed');
    if (fields.length < 3) throw malformed('too few fields');
    const principals = unquote(fields[0]!);
    let at = 1;
    let options = NO_OPTIONS;
    if (!KEY_TYPE.test(fields[1]!)) {
      const parsed = parseOptions(fields[1]!);
      if (typeof parsed === 'string') throw malformed(parsed);
      options = parsed;
      at = 2;
    }
    const keyType = fields[at];
    const b64 = fields[at + 1];
    if (keyType === undefined || !KEY_TYPE.test(keyType))
      throw malformed(`"${escapeControl((keyType ?? '').slice(0, 40))}" is not a key type`);
    if (b64 === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw malformed('the key is not base64');
    const publicBlob = Buffer.from(b64, 'base64');
    if (blobKeyType(publicBlob) !== keyType) throw malformed(`the key is not a ${keyType} key`);
    if (principals === '') throw malformed('no principals');
    out.push({ line: i + 1, principals, ...options, keyType, publicBlob });
  });
  return out;
}

interface Options {
  certAuthority: boolean;
  namespaces: string | undefined;
  validAfter: Date | undefined;
  validBefore: Date | undefined;
}

const NO_OPTIONS: Readonly<Options> = {
  certAuthority: false,
  namespaces: undefined,
  validAfter: undefined,
  validBefore: undefined,
};

/** `text` cut at every one of `separators` outside double quotes: a quoted part (with its separators) stays in its piece. */
function splitOutsideQuotes(text: string, separators: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    if (!quoted && separators.includes(ch)) {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  parts.push(current);
  return parts;
}

/** Whitespace-separated fields, a double-quoted part (with its spaces) staying within its field; undefined when a quote is not closed. */
function splitFields(line: string): string[] | undefined {
  if ((line.split('"').length - 1) % 2 === 1) return undefined;
  return splitOutsideQuotes(line, ' \t').filter((f) => f !== '');
}

function unquote(s: string): string {
  return s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s;
}

function parseOptions(field: string): Options | string {
  const options: Options = { ...NO_OPTIONS };
  for (const part of splitOutsideQuotes(field, ',')) {
    const m = /^([A-Za-z-]+)(?:="([^"]*)")?$/.exec(part);
    const name = m?.[1]?.toLowerCase();
    const value = m?.[2];
    if (name === 'cert-authority' && value === undefined) options.certAuthority = true;
    else if (name === 'namespaces' && value !== undefined) options.namespaces = value;
    else if ((name === 'valid-after' || name === 'valid-before') && value !== undefined) {
      const when = parseTimestamp(value);
      if (when === undefined)
        return `${name} "${escapeControl(value.slice(0, 30))}" is not a time YYYYMMDD[HHMM[SS]][Z]`;
      if (name === 'valid-after') options.validAfter = when;
      else options.validBefore = when;
    } else
      return (
        `"${escapeControl(part.slice(0, 40))}" is neither a key type nor an option (cert-authority, ` +
        `namespaces="…", valid-after="…", valid-before="…")`
      );
  }
  return options;
}

/** `YYYYMMDD[HHMM[SS]]`, local time, or UTC with a trailing `Z` (ssh-keygen(1)). */
function parseTimestamp(value: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?(Z)?$/.exec(value);
  if (!m) return undefined;
  const n = (i: number) => Number(m[i] ?? 0);
  const [y, mo, d, h, mi, s] = [n(1), n(2), n(3), n(4), n(5), n(6)];
  const date = m[7] ? new Date(Date.UTC(y, mo - 1, d, h, mi, s)) : new Date(y, mo - 1, d, h, mi, s);
  if (Number.isNaN(date.getTime()) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59)
    return undefined;
  return date;
}

/** OpenSSH's match_pattern_list: `*` and `?` wildcards, `!` negates; a negated match wins. */
function matchPatternList(value: string, list: string): boolean {
  let matched = false;
  for (const raw of list.split(',')) {
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    const re = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    if (re.test(value)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

/** Whether a valid signature by `publicBlob` in `namespace` is allowed at `now`: the principals of the line that allows it, or why none does. */
export function findSigner(
  allowed: AllowedSigners,
  publicBlob: Buffer,
  namespace: string,
  now: Date,
): { ok: true; principals: string; line: number } | { ok: false; reason: string } {
  const lines = allowed.signers.filter((s) => !s.certAuthority && s.publicBlob.equals(publicBlob));
  if (lines.length === 0) return { ok: false, reason: `its key is not listed in ${escapeControl(allowed.file)}` };
  const reasons: string[] = [];
  for (const s of lines) {
    if (s.namespaces !== undefined && !matchPatternList(namespace, s.namespaces)) {
      reasons.push(`line ${s.line} lists the key for namespaces "${escapeControl(s.namespaces)}", not "${namespace}"`);
    } else if (s.validAfter !== undefined && now < s.validAfter) {
      reasons.push(`line ${s.line} lists the key as valid only after ${s.validAfter.toISOString()}`);
    } else if (s.validBefore !== undefined && now > s.validBefore) {
      reasons.push(`line ${s.line} lists the key as valid only before ${s.validBefore.toISOString()}`);
    } else {
      return { ok: true, principals: s.principals, line: s.line };
    }
  }
  return { ok: false, reason: `its key is in ${escapeControl(allowed.file)}, but ${reasons.join('; ')}` };
}
