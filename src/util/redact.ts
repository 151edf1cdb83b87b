/**
 * Secrets known to this process. Every message that leaves the process goes
 * through `redact`, so a token echoed by a server or a library never escapes.
 *
 * A server can echo a secret in more than one spelling: as is, URL-encoded
 * (`%2F`), or JSON-escaped (`\/`, `\u0041`), and a serializer may mix those
 * character by character. Each secret is therefore matched by one pattern in
 * which every character may take any of its spellings; the same pattern
 * serves the messages (`redact`) and the pre-publish scan of output bytes
 * (`secretPattern` in byte mode).
 */
const secrets = new Set<string>();
let textPattern: RegExp | null | undefined;

/**
 * Shorter strings are not registered: they match ordinary text, and
 * redacting a one-letter token made every message unreadable ("svc-snapsho
 * [redacted]"). No secret that short is used: the token parsers refuse one
 * (parseToken), and an audit token is 24 characters.
 */
export const SHORTEST_SECRET = 8;

export function registerSecret(value: string | undefined): void {
  if (value && value.length >= SHORTEST_SECRET && !secrets.has(value)) {
    secrets.add(value);
    textPattern = undefined;
  }
}

export function knownSecrets(): string[] {
  return [...secrets];
}

function hexAlternatives(n: number, width: number): string {
  // Hex digits in either case: `%2f` and `\u002F` are both common.
  return [...n.toString(16).padStart(width, '0')]
    .map((d) => (/[a-f]/i.test(d) ? `[${d.toLowerCase()}${d.toUpperCase()}]` : d))
    .join('');
}

/**
 * The most backslashes one spelling of a character takes in byte mode. A text
 * JSON-escaped N times puts 2^N - 1 backslashes before an escaped character
 * (2^N before a backslash): 64 covers six levels of nesting. The byte scan
 * (src/publish/scan.ts) cuts every longer run of backslashes to this length
 * before matching, so a deeper spelling is found all the same, and the longest
 * match stays bounded: MAX_SPELLING_BYTES per UTF-16 unit of the secret.
 */
export const MAX_BACKSLASHES = 64;

/** The longest spelling of one UTF-16 unit in byte mode: `\\…\\uD83D`, MAX_BACKSLASHES backslashes then `u` and 4 hex digits. */
export const MAX_SPELLING_BYTES = MAX_BACKSLASHES + 5;

// One or more backslashes: a token JSON-escaped twice (a JSON document quoted
// inside another, as in a manifest's error text) is still the token. In text
// mode (messages, whole in memory) any number; in byte mode at most MAX_BACKSLASHES.
function jsonShort(ch: string, bytes: boolean): string | undefined {
  const run = (min: number) => (bytes ? `\\\\{${min},${MAX_BACKSLASHES}}` : min === 1 ? '\\\\+' : `\\\\{${min},}`);
  if (ch === '\\') return run(2);
  const letter = JSON_SHORT[ch];
  return letter === undefined ? undefined : `${run(1)}${letter}`;
}

const JSON_SHORT: Record<string, string> = {
  '"': '"',
  '/': '/',
  '\b': 'b',
  '\f': 'f',
  '\n': 'n',
  '\r': 'r',
  '\t': 't',
};

/**
 * Regular-expression source matching `secret` with each character in any
 * of its spellings. `bytes`: for text decoded as latin1 (one char per byte),
 * so a raw non-ASCII character is matched by its UTF-8 bytes.
 */
function secretPatternSource(secret: string, bytes = false): string {
  let out = '';
  for (const ch of secret) {
    const utf8 = [...Buffer.from(ch, 'utf8')];
    const alts = new Set<string>();
    alts.add((bytes ? String.fromCharCode(...utf8) : ch).replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'));
    alts.add(utf8.map((b) => `%${hexAlternatives(b, 2)}`).join(''));
    let units = '';
    const backslashes = bytes ? `\\\\{1,${MAX_BACKSLASHES}}` : '\\\\+';
    for (let i = 0; i < ch.length; i++) units += `${backslashes}u${hexAlternatives(ch.charCodeAt(i), 4)}`;
    alts.add(units);
    const short = jsonShort(ch, bytes);
    if (short) alts.add(short);
    if (ch === ' ') alts.add('\\+');
    out += alts.size === 1 ? [...alts][0]! : `(?:${[...alts].join('|')})`;
  }
  return out;
}

/** One pattern for several secrets, longest first so that a secret containing another is matched whole. */
export function secretPattern(values: readonly string[], bytes = false): RegExp | null {
  const list = [...new Set(values.filter((v) => v.length > 0))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return null;
  return new RegExp(list.map((v) => secretPatternSource(v, bytes)).join('|'), 'g');
}

export function redact(text: string): string {
  if (textPattern === undefined) textPattern = secretPattern([...secrets]);
  if (textPattern === null) return text;
  textPattern.lastIndex = 0;
  return text.replace(textPattern, '[redacted]');
}

/**
 * The start of a body, decoded and redacted, for a message that quotes at
 * most `shown` characters of it: the text reaches past those by the longest
 * spelling of any known secret, so that a secret starting among them is
 * redacted whole before the message cuts the text (cut first, its prefix
 * would be printed).
 */
export function redactedStart(body: Buffer, shown: number): string {
  let longest = 0;
  for (const s of secrets) longest = Math.max(longest, s.length);
  return redact(body.subarray(0, shown * 4 + longest * MAX_SPELLING_BYTES).toString('utf8'));
}

/** Only for tests. */
export function clearSecrets(): void {
  secrets.clear();
  textPattern = undefined;
}
