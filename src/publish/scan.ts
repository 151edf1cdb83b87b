import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { FailedError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { MAX_BACKSLASHES, MAX_SPELLING_BYTES, secretPattern } from '../util/redact.js';
import { knownSigningSecrets } from '../sign/key.js';

/** Bytes searched per step; a secret spanning two steps is still found (see `SecretSearch`). */
export const SCAN_CHUNK_BYTES = 1024 * 1024;

export interface Tree {
  /** Relative paths, parents before children. */
  dirs: string[];
  files: string[];
}

/**
 * Lists a staging directory. Only plain files and directories are published:
 * a symlink could point outside the output and `chmod` would follow it.
 */
export async function listTree(root: string): Promise<Tree> {
  const tree: Tree = { dirs: [], files: [] };
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(root, rel), { withFileTypes: true });
    for (const entry of entries) {
      const child = rel === '' ? entry.name : path.join(rel, entry.name);
      if (entry.isDirectory()) {
        tree.dirs.push(child);
        await walk(child);
      } else if (entry.isFile()) {
        tree.files.push(child);
      } else {
        throw new FailedError(`output entry ${child} is not a plain file or directory; nothing was published`);
      }
    }
  };
  await walk('');
  return tree;
}

/**
 * What the scan looks for: every secret in every spelling it can take in a
 * file (raw, URL-encoded, JSON-escaped any number of times, mixed), matched
 * on bytes read as latin1 so that a match may straddle nothing but a chunk
 * boundary. The bytes are matched after every run of backslashes longer than
 * MAX_BACKSLASHES is cut to that length (BackslashRuns): the pattern accepts
 * up to that many per character, so a spelling escaped more deeply is found
 * too, and no match is longer than `longest`.
 */
export interface SecretMatcher {
  readonly pattern: RegExp;
  /** Longest text a match can span, in bytes (after the cut of backslash runs). */
  readonly longest: number;
  /** What a match of `pattern` is a spelling of, for the message. */
  kindOf(match: string): SecretKind;
}

/** A secret the scan looks for: a token in use, or the signing key's secret (--sign-key). */
export type SecretKind = 'token' | 'signing key';

/** Empty secrets are ignored; null when there is nothing to look for. */
export function secretMatcher(tokens: readonly string[]): SecretMatcher | null {
  // The signing key's secret (--sign-key) is looked for with the tokens.
  const signing = knownSigningSecrets();
  const secrets = [...tokens, ...signing];
  const pattern = secretPattern(secrets, true);
  if (pattern === null) return null;
  // Per UTF-16 unit at most MAX_SPELLING_BYTES (`\\…\\u00e9`); a raw (4 bytes) or URL-encoded character
  // (`%F0%9F%98%80`, 12 bytes for two units) is shorter.
  const longest = Math.max(...secrets.map((s) => s.length * MAX_SPELLING_BYTES));
  const signingPattern = secretPattern(signing, true);
  const kindOf = (match: string): SecretKind => {
    if (signingPattern === null) return 'token';
    signingPattern.lastIndex = 0;
    return signingPattern.test(match) ? 'signing key' : 'token';
  };
  return { pattern, longest, kindOf };
}

/** What the first secret in `text` is a spelling of; null when it holds none. */
function firstSecret(m: SecretMatcher, text: string): SecretKind | null {
  m.pattern.lastIndex = 0;
  const hit = m.pattern.exec(text);
  return hit === null ? null : m.kindOf(hit[0]);
}

const BACKSLASH = 0x5c;

/**
 * A stream of bytes with every run of backslashes cut to MAX_BACKSLASHES, a
 * run being followed across the pieces pushed. A piece with no longer run
 * comes back as it is (no copy).
 */
export class BackslashRuns {
  /** Backslashes at the end of what was pushed so far. */
  private run = 0;

  cut(bytes: Uint8Array): Buffer {
    const piece = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (piece.length === 0) return piece;
    let out: Buffer | undefined;
    let outLength = 0;
    let copiedTo = 0;
    let carried = this.run;
    this.run = 0;
    for (let i = piece.indexOf(BACKSLASH); i !== -1; i = piece.indexOf(BACKSLASH, i)) {
      let j = i + 1;
      while (j < piece.length && piece[j] === BACKSLASH) j++;
      const before = i === 0 ? carried : 0;
      const keep = Math.max(0, Math.min(j - i, MAX_BACKSLASHES - before));
      if (keep < j - i) {
        out ??= Buffer.allocUnsafe(piece.length);
        piece.copy(out, outLength, copiedTo, i + keep);
        outLength += i + keep - copiedTo;
        copiedTo = j;
      }
      if (j === piece.length) this.run = before + (j - i);
      carried = 0;
      i = j;
      if (i >= piece.length) break;
    }
    if (!out) return piece;
    piece.copy(out, outLength, copiedTo, piece.length);
    return out.subarray(0, outLength + piece.length - copiedTo);
  }
}

/** What secret bytes about to be written (a block of a workbook before it is compressed) hold in any spelling; null for none. */
export function secretInBytes(m: SecretMatcher, bytes: Buffer): SecretKind | null {
  return firstSecret(m, new BackslashRuns().cut(bytes).toString('latin1'));
}

/**
 * Throws `FailedError` naming the first path (name or content) that holds a
 * secret. The message names the file, never the secret. Files in `searched`
 * (every byte searched with the same secrets as it was written, see Staging)
 * are not read again.
 */
export async function assertNoSecrets(
  root: string,
  tree: Tree,
  matcher: SecretMatcher | null,
  searched: ReadonlySet<string> = new Set(),
): Promise<void> {
  if (matcher === null) return;
  for (const rel of [...tree.dirs, ...tree.files]) {
    const kind = firstSecret(matcher, Buffer.from(rel, 'utf8').toString('latin1'));
    // The name itself holds the secret, so it cannot be shown.
    if (kind !== null) throw secretFound(kind, 'the name of an output file (not shown, as it holds the secret)');
  }
  for (const rel of tree.files) {
    if (searched.has(rel)) continue;
    const kind = await secretInFileBytes(path.join(root, rel), matcher);
    if (kind !== null) throw secretFound(kind, `output file ${escapeControl(rel)}`);
  }
}

/**
 * A secret search over bytes given a piece at a time (a file being written,
 * or read back): the bytes, their backslash runs cut (BackslashRuns), are
 * searched a window at a time, each window with the last (longest match − 1)
 * bytes before it, so a match that straddles two windows lies whole inside
 * one. Works on bytes, so a multi-byte character split between pieces does
 * not matter either; a long piece is searched a window of `chunkBytes`
 * (SCAN_CHUNK_BYTES) at a time (no string as long as a large body).
 */
export class SecretSearch {
  private readonly overlap: number;
  private readonly window: Buffer;
  private readonly runs = new BackslashRuns();
  private carried = 0;
  /** What the first secret found is a spelling of; null while none was. */
  found: SecretKind | null = null;

  constructor(
    private readonly matcher: SecretMatcher,
    private readonly chunkBytes = SCAN_CHUNK_BYTES,
  ) {
    this.overlap = Math.max(0, matcher.longest - 1);
    this.window = Buffer.allocUnsafe(chunkBytes + this.overlap);
  }

  /** Searches `bytes` (after every byte pushed before); true once a secret was found. */
  push(bytes: Uint8Array): boolean {
    for (let at = 0; at < bytes.length && this.found === null; at += this.chunkBytes) {
      const piece = this.runs.cut(bytes.subarray(at, at + this.chunkBytes));
      this.window.set(piece, this.carried);
      const end = this.carried + piece.length;
      this.found = firstSecret(this.matcher, this.window.toString('latin1', 0, end));
      this.carried = Math.min(this.overlap, end);
      this.window.copyWithin(0, end - this.carried, end);
    }
    return this.found !== null;
  }
}

/**
 * The refusal of an output that holds a secret: what was found and where
 * (`where`: "output file …"), never the secret. A token is written only by a
 * bug; the signing key's secret gets in with the data (the site's, or a
 * waivers file's text), since nothing of the tool writes it, so that message
 * says what to do about a key that others can read.
 */
export function secretFound(kind: SecretKind, where: string): FailedError {
  if (kind === 'token')
    return new FailedError(
      `a token was found in ${where}; nothing was published (this is a bug: tokens must never be written to output)`,
    );
  return new FailedError(
    `the signing key's secret (--sign-key or SVC_SIGN_KEY), in one of its spellings (the key file's base64 text, or ` +
      `the key's seed in hex or base64), was found in ${where}; nothing was published. ` +
      "svc-snapshot never writes it, so the data the file was built from holds it (the site's records, or a waivers " +
      "file's text): treat the key as exposed. " +
      "Make a new key (ssh-keygen -t ed25519 -N '' -f <new key>), replace the old key's line in the verifiers' " +
      "allowed_signers with the new one's, have the text removed where the data holds it, and run again with the new " +
      'key',
  );
}

/** What secret the file holds in any spelling (null for none): read `chunkBytes` at a time and searched with SecretSearch. */
export async function secretInFileBytes(
  file: string,
  matcher: SecretMatcher,
  chunkBytes = SCAN_CHUNK_BYTES,
): Promise<SecretKind | null> {
  const search = new SecretSearch(matcher, chunkBytes);
  const buf = Buffer.allocUnsafe(chunkBytes);
  const handle = await open(file, 'r');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, chunkBytes, null);
      if (bytesRead === 0) return null;
      if (search.push(buf.subarray(0, bytesRead))) return search.found;
    }
  } finally {
    await handle.close();
  }
}
