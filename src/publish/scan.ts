import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { FailedError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { secretPattern } from '../util/redact.js';
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
 * file (raw, URL-encoded, JSON-escaped, mixed), matched on bytes read as
 * latin1 so that a match may straddle nothing but a chunk boundary.
 */
export interface SecretMatcher {
  readonly pattern: RegExp;
  /** Longest text a match can span, in bytes. */
  readonly longest: number;
}

/** Empty secrets are ignored; null when there is nothing to look for. */
export function secretMatcher(tokens: readonly string[]): SecretMatcher | null {
  // The signing key's secret (--sign-key) is looked for with the tokens.
  const secrets = [...tokens, ...knownSigningSecrets()];
  const pattern = secretPattern(secrets, true);
  if (pattern === null) return null;
  // The longest single spelling of one character is 12 bytes (`%F0%9F%98%80`,
  // `\uD83D\uDE00`); twice that leaves room for doubly escaped forms (`\\u002d`).
  const longest = Math.max(...secrets.map((s) => [...s].length * 24));
  return { pattern, longest };
}

function matches(m: SecretMatcher, text: string): boolean {
  m.pattern.lastIndex = 0;
  return m.pattern.test(text);
}

/** Whether bytes about to be written (a block of a workbook before it is compressed) hold a secret in any spelling. */
export function bytesHoldSecret(m: SecretMatcher, bytes: Buffer): boolean {
  return matches(m, bytes.toString('latin1'));
}

/**
 * Throws `FailedError` naming the first path (name or content) that holds a
 * secret. The message names the file, never the secret. Files in `searched`
 * (every byte searched with the same secrets as it was written, see Staging)
 * are not read again.
 */
export async function assertNoSecrets(root: string, tree: Tree, matcher: SecretMatcher | null, searched: ReadonlySet<string> = new Set()): Promise<void> {
  if (matcher === null) return;
  for (const rel of [...tree.dirs, ...tree.files]) {
    if (matches(matcher, Buffer.from(rel, 'utf8').toString('latin1'))) {
      // The name itself holds the token, so it cannot be shown.
      throw new FailedError('a token was found in the name of an output file; nothing was published');
    }
  }
  for (const rel of tree.files) {
    if (searched.has(rel)) continue;
    if (await fileContains(path.join(root, rel), matcher)) throw secretInFile(rel);
  }
}

/**
 * A secret search over bytes given a piece at a time (a file being written,
 * or read back): each piece is searched together with the last (longest
 * match − 1) bytes before it, so a match that straddles two pieces lies whole
 * inside one window. Works on bytes, so a multi-byte character split between
 * pieces does not matter either; a long piece is searched a window of
 * SCAN_CHUNK_BYTES at a time (no string as long as a large body).
 */
export class SecretSearch {
  private readonly overlap: number;
  private readonly window: Buffer;
  private carried = 0;
  found = false;

  constructor(private readonly matcher: SecretMatcher) {
    this.overlap = Math.max(0, matcher.longest - 1);
    this.window = Buffer.allocUnsafe(SCAN_CHUNK_BYTES + this.overlap);
  }

  /** Searches `bytes` (after every byte pushed before); true once a secret was found. */
  push(bytes: Uint8Array): boolean {
    for (let at = 0; at < bytes.length && !this.found; at += SCAN_CHUNK_BYTES) {
      const piece = bytes.subarray(at, at + SCAN_CHUNK_BYTES);
      this.window.set(piece, this.carried);
      const end = this.carried + piece.length;
      if (matches(this.matcher, this.window.toString('latin1', 0, end))) this.found = true;
      this.carried = Math.min(this.overlap, end);
      this.window.copyWithin(0, end - this.carried, end);
    }
    return this.found;
  }
}

/** The message for a secret found in an output file, which names the file and never the secret. */
export function secretInFile(rel: string): FailedError {
  return new FailedError(`a token was found in output file ${escapeControl(rel)}; nothing was published (this is a bug: tokens must never be written to output)`);
}

/** Whether the file holds a secret in any spelling: read SCAN_CHUNK_BYTES at a time and searched with SecretSearch. */
export async function fileContains(file: string, matcher: SecretMatcher): Promise<boolean> {
  const search = new SecretSearch(matcher);
  const buf = Buffer.allocUnsafe(SCAN_CHUNK_BYTES);
  const handle = await open(file, 'r');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, SCAN_CHUNK_BYTES, null);
      if (bytesRead === 0) return false;
      if (search.push(buf.subarray(0, bytesRead))) return true;
    }
  } finally {
    await handle.close();
  }
}
