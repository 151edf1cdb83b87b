import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../cli/errors.js';
import { escapeControl } from '../util/escape.js';

/** The kinds of directory this tool writes, each known by its manifest (CONTRACT section 6). */
export type OutputKind = 'snapshot' | 'collection' | 'audit';

export const MANIFEST_OF: Record<OutputKind, string> = {
  snapshot: '_snapshot-manifest.json',
  collection: '_collection-manifest.json',
  audit: '_audit-manifest.json',
};

/** Files a snapshot directory may hold besides those its manifest names: the spreadsheet forms (CONTRACT section 10). */
const SNAPSHOT_EXTRA = [/^\d+-[A-Za-z0-9_-]+ \(\d{1,2}-\d{1,2}-\d{4}\)\.(?:json|csv)$/, /^svc-snapshot-\d{4}-\d{2}-\d{2}\.xlsx$/];

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function isSameOrAncestor(candidate: string, of: string): boolean {
  const rel = path.relative(candidate, of);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * `--out-dir` values that name a place the tool must never replace: an empty
 * value (an unset shell variable in a cron line), `/`, the working directory
 * or any directory above it, and the home directory. Replacing any of these
 * would delete whatever else lives there.
 */
export function assertSafeTarget(flagValue: string, cwd: string, home: string = homedir()): void {
  if (flagValue.trim() === '') {
    throw new UsageError('--out-dir is empty (an unset variable?); give the directory to write, e.g. --out-dir /var/lib/svc/snapshots/nightly');
  }
  const target = path.resolve(cwd, flagValue);
  const resolved = real(target);
  const where = escapeControl(flagValue);
  const why = (what: string) =>
    new UsageError(`--out-dir "${where}" is ${what}; the output directory is replaced as a whole, so it must be a directory of its own, e.g. --out-dir ./svc-snapshot-nightly`);
  if (path.dirname(resolved) === resolved) throw why('the root directory');
  for (const c of new Set([cwd, real(cwd)])) {
    if (isSameOrAncestor(target, c) || isSameOrAncestor(resolved, c)) throw why(target === c || resolved === c ? 'the working directory' : 'a parent of the working directory');
  }
  for (const h of new Set([home, real(home)])) {
    if (h && (target === h || resolved === h)) throw why('the home directory');
  }
}

const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

function tryManifest(file: string, kind: OutputKind): Record<string, unknown> | undefined {
  const st = lstatSync(file, { throwIfNoEntry: false });
  // A manifest is kilobytes; a huge file under its name is not one (and is not read).
  if (!st?.isFile() || st.size > MAX_MANIFEST_BYTES) return undefined;
  try {
    const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (json && typeof json === 'object' && !Array.isArray(json) && (json as { kind?: unknown }).kind === kind) return json as Record<string, unknown>;
  } catch {
    // not a manifest of ours
  }
  return undefined;
}

/** Every `file` named anywhere in a manifest (routes, exports, queries, reports). */
function namedFiles(manifest: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(manifest)) for (const v of manifest) namedFiles(v, out);
  else if (manifest && typeof manifest === 'object') {
    for (const [k, v] of Object.entries(manifest)) {
      if (k === 'file' && typeof v === 'string') out.add(v);
      else if (typeof v === 'object') namedFiles(v, out);
    }
  }
  return out;
}

/** Why `dir` is not a directory of `kind` that holds only what this tool writes; undefined when it is. */
function foreignContent(dir: string, kind: OutputKind): string | undefined {
  const entries = readdirSync(dir, { withFileTypes: true });
  if (entries.length === 0) return undefined;
  const manifest = tryManifest(path.join(dir, MANIFEST_OF[kind]), kind);
  if (!manifest) return `it is not empty and holds no ${MANIFEST_OF[kind]}`;
  const known = namedFiles(manifest);
  known.add(MANIFEST_OF[kind]);
  for (const e of entries) {
    if (kind === 'snapshot' && e.name === 'raw' && e.isDirectory()) {
      const inner = foreignContent(path.join(dir, 'raw'), 'collection');
      if (inner) return `its raw/ is not a collection this tool wrote (${inner})`;
      continue;
    }
    const ours = e.isFile() && (known.has(e.name) || (kind === 'snapshot' && SNAPSHOT_EXTRA.some((re) => re.test(e.name))));
    if (!ours) return `it holds ${escapeControl(e.name)}, which this tool did not write`;
  }
  return undefined;
}

/**
 * Refuses (exit 2) to replace anything but a missing directory, an empty
 * one, or one holding a manifest of the same kind and only files this tool
 * writes. Synchronous: it runs just before the rename that replaces it.
 */
export function assertReplaceable(target: string, kind: OutputKind | undefined): void {
  const st = lstatSync(target, { throwIfNoEntry: false });
  if (!st) return;
  const shown = escapeControl(target);
  if (!st.isDirectory()) {
    throw new UsageError(`${shown} exists and is not a directory; nothing was written and it was left as it is. Remove it or choose another output directory (--out-dir)`);
  }
  let why: string | undefined;
  try {
    why = kind ? foreignContent(target, kind) : readdirSync(target).length > 0 ? 'it is not empty' : undefined;
  } catch (err) {
    why = `it cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if (why) {
    throw new UsageError(
      `refusing to replace ${shown}: ${why}. Only an empty directory or an earlier output of the same command is replaced; choose another output directory (--out-dir), or move its contents away`,
    );
  }
}
