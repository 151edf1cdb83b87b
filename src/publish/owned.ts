import { lstatSync, readdirSync } from 'node:fs';
import { isPlainFileName, MANIFEST_MAX_BYTES, readSmallFile } from '../util/safe-read.js';
import path from 'node:path';
import { escapeControl } from '../util/escape.js';
import { SIGNATURE_SUFFIX } from '../sign/manifest-signature.js';
import { FINDINGS_FILE_NAME, laterFiles, MANIFEST_OF, OWNED_MANIFEST, type OutputKind } from '../manifests.js';
import { deadLeftover } from './leftovers.js';

/** What a directory holds, every entry checked, for deleting it without following a link. */
interface OwnedTree {
  /** Relative paths, the manifest first. */
  readonly files: readonly string[];
  /** Relative paths of subdirectories, deepest first. */
  readonly dirs: readonly string[];
}

export type Ownership = { owned: true; tree: OwnedTree } | { owned: false; reason: string };

/**
 * `complete: true` (deleting an older output, `--keep`): only a complete run's
 * directory qualifies. `complete: false` (replacing the output directory of
 * this run): an earlier partial output of the same kind qualifies too.
 */
export interface OwnershipRule {
  readonly complete: boolean;
}

/**
 * Whether `dir` is a complete output directory of `kind` written by this tool
 * and holding nothing else (README.md, "Output"; docs/cron.md): a real directory, its
 * manifest a regular file that parses as a complete manifest of that kind, and
 * every entry a regular file (or, in a snapshot, the `raw/` collection) that
 * the manifest accounts for. Anything else, a symbolic link anywhere included,
 * makes it not ours. Synchronous, reading only the manifests.
 */
export function ownedOutput(dir: string, kind: OutputKind, rule: OwnershipRule = { complete: true }): Ownership {
  try {
    return check(dir, kind, '', rule);
  } catch (err) {
    return {
      owned: false,
      reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    };
  }
}

function check(dir: string, kind: OutputKind, rel: string, rule: OwnershipRule): Ownership {
  const info = lstatSync(dir);
  if (!info.isDirectory())
    return { owned: false, reason: info.isSymbolicLink() ? 'is a symbolic link' : 'is not a directory' };
  const manifestName = MANIFEST_OF[kind];
  const json = readJson(path.join(dir, manifestName));
  if (json === NO_FILE) return { owned: false, reason: `has no ${manifestName} that is a regular file` };
  if (json === NOT_JSON) return { owned: false, reason: `its ${manifestName} is not valid JSON` };
  const allowed = allowedEntries(kind, json, rule);
  if (typeof allowed === 'string') return { owned: false, reason: allowed };
  // Each kind's manifest may have its signature beside it.
  allowed.add(`${manifestName}${SIGNATURE_SUFFIX}`);
  const temps = laterNames(json);

  const files: string[] = [path.join(rel, manifestName)];
  const dirs: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === manifestName) continue;
    const child = path.join(rel, entry.name);
    // A snapshot's raw/ is the collection it was built from.
    if (entry.isDirectory() && kind === 'snapshot' && entry.name === 'raw') {
      const sub = check(path.join(dir, entry.name), 'collection', child, rule);
      if (!sub.owned) return { owned: false, reason: `${escapeControl(child)}/ ${sub.reason}` };
      files.push(...sub.tree.files);
      dirs.push(...sub.tree.dirs);
      continue;
    }
    if (!entry.isFile()) return { owned: false, reason: `holds ${escapeControl(child)}, which is not a regular file` };
    // A snapshot may hold a killed convert's temporary file.
    if (!allowed.has(entry.name) && !deadTemp(dir, entry.name, temps))
      return { owned: false, reason: `holds ${escapeControl(child)}, which its manifest does not list` };
    files.push(child);
  }
  dirs.push(rel);
  return { owned: true, tree: { files, dirs } };
}

/**
 * A temporary file a killed `convert` or `report` left of one of the names
 * they write into the snapshot (`temps`, laterNames): recoverStale removes it
 * before a publish replaces the directory, and --keep once the directory is
 * found to be ours.
 */
function deadTemp(dir: string, name: string, temps: ReadonlySet<string>): boolean {
  const base = deadLeftover('temp', dir, name)?.base;
  return base !== undefined && temps.has(base);
}

/**
 * The names `convert` and `report` write into a snapshot directory after its
 * manifest (JSON, as parsed): the CSV forms, the workbook and the report
 * page (docs/spreadsheets.md; README.md, "The report"). None when it is no snapshot manifest.
 */
function laterNames(json: unknown): Set<string> {
  const m = OWNED_MANIFEST.snapshot.safeParse(json);
  return new Set(m.success ? laterFiles(m.data) : []);
}

/**
 * Whether `name` is one `convert` or `report` writes into the snapshot `dir`
 * (laterNames), by its manifest, a regular file; never when `dir` holds no
 * snapshot manifest of the tool.
 */
export function writesLater(dir: string): (name: string) => boolean {
  const names = laterNames(readJson(path.join(dir, MANIFEST_OF.snapshot)));
  return (name) => names.has(name);
}

/** The names a complete manifest accounts for, or why the manifest does not qualify. */
function allowedEntries(kind: OutputKind, json: unknown, rule: OwnershipRule): Set<string> | string {
  const parsed = OWNED_MANIFEST[kind].safeParse(json);
  if (!parsed.success) return `does not hold a ${kind} manifest of svc-snapshot`;
  const m = parsed.data;
  if (m.kind === 'snapshot') {
    if (rule.complete && !m.complete) return 'is a partial snapshot (published with --allow-partial)';
    // The spreadsheet forms (docs/spreadsheets.md), the report page (README.md, "The report") and `--findings`' file are the tool's too.
    const files = [...m.exports.map((e) => e.file), ...laterFiles(m), FINDINGS_FILE_NAME];
    return new Set([...files, ...(m.files ?? []).map((f) => f.name).filter(isPlainFileName)]);
  }
  if (m.kind === 'collection') {
    if (rule.complete && m.routes.some((r) => r.error !== undefined)) return 'is a collection with failed routes';
    return new Set(m.routes.flatMap((r) => (r.file ? [r.file] : [])));
  }
  if (rule.complete && m.routes.some((r) => r.error !== undefined || r.status < 200 || r.status > 299)) {
    return 'is an audit collection with failed requests';
  }
  return new Set([...m.routes, ...(m.queries ?? []), ...(m.reports ?? [])].map((r) => r.file));
}

const NO_FILE = Symbol('no file');
const NOT_JSON = Symbol('not JSON');

/** The file's JSON: NO_FILE when it is not a regular file (a link is never followed) or too large, NOT_JSON when it is no JSON. */
function readJson(file: string): unknown {
  const read = readSmallFile(file, { maxBytes: MANIFEST_MAX_BYTES, followLinks: false });
  if (!Buffer.isBuffer(read)) return NO_FILE;
  try {
    return JSON.parse(read.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}
