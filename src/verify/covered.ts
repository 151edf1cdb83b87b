/**
 * What each kind of output's manifest says it holds (docs/verify.md): every
 * file it names, with the size and sha256 it records for it
 * (a field the manifest does not record is left undefined, and `verify`
 * says so), and the files this tool may add to a snapshot after it was
 * published (convert's spreadsheets, report's page), which are "not
 * covered" rather than unexpected.
 */
import { isPlainFileName } from '../util/safe-read.js';
import { AuditManifestSchema, CoveredCollectionSchema, MANIFEST_OF, type OutputKind } from '../manifests.js';
import type { SnapshotFiles } from '../snapshot/dir.js';

export interface Covered {
  /** As shown: `/`-separated, relative to the directory. */
  readonly file: string;
  /** The path's segments, each checked to be a plain name; undefined when the manifest's name is not one (never opened). */
  readonly segments: readonly string[] | undefined;
  readonly bytes: number | undefined;
  readonly sha256: string | undefined;
  /** Set when the manifest names the file more than once and its entries record different sizes or hashes: which entries say what. */
  readonly conflict?: string;
}

export interface ManifestContents {
  readonly covered: readonly Covered[];
  /** Names (as shown) of files the tool adds later: present, they are "not covered", a warning. */
  readonly later: ReadonlySet<string>;
}

/** `raw/<name>` or `<name>`, each part a plain name; undefined otherwise. */
function segmentsOf(name: string, allowRaw: boolean): string[] | undefined {
  const parts = name.split('/');
  if (parts.length === 1 && isPlainFileName(parts[0]!)) return parts;
  if (allowRaw && parts.length === 2 && parts[0] === 'raw' && isPlainFileName(parts[1]!)) return parts;
  return undefined;
}

/** One entry of the manifest naming a file; `at` says where (`exports[3]`), for a message. */
interface Entry extends Covered {
  readonly at: string;
}

function entry(
  at: string,
  file: string,
  segments: string[] | undefined,
  sized: { bytes?: number | undefined; sha256?: string | undefined },
): Entry {
  return { at, file, segments, bytes: sized.bytes, sha256: sized.sha256 };
}

/**
 * The entries naming one file as one: a manifest may name a file more than
 * once (an audit manifest names a query's file in `routes` and `queries`),
 * but only where every entry that records a size or a hash records the same
 * one. Otherwise the first entry would be checked and the others ignored, so
 * a manifest could vouch for two contents of one file: it is a conflict.
 */
function merge(entries: readonly Entry[]): Covered {
  const first = entries[0]!;
  const bytes = entries.find((e) => e.bytes !== undefined)?.bytes;
  const sha256 = entries.find((e) => e.sha256 !== undefined)?.sha256;
  const disagree = (field: 'bytes' | 'sha256', value: unknown) =>
    entries.some((e) => e[field] !== undefined && e[field] !== value);
  const fields = [...(disagree('sha256', sha256) ? ['sha256'] : []), ...(disagree('bytes', bytes) ? ['size'] : [])];
  const covered: Covered = { file: first.file, segments: first.segments, bytes, sha256 };
  if (fields.length === 0) return covered;
  const said = entries.map(
    (e) =>
      `${e.at}: ${e.sha256 !== undefined ? `sha256 ${e.sha256.slice(0, 12)}…` : 'no sha256'}, ${e.bytes !== undefined ? `${e.bytes} bytes` : 'no size'}`,
  );
  return {
    ...covered,
    conflict:
      `the manifest names it ${entries.length} times with different ${fields.join(' and ')} (${said.join('; ')}); ` +
      'at most one of them can be right, so the file is not taken as verified',
  };
}

/** The entries naming files, gathered by file as `add` is given them, and the files added later: a manifest's contents once every entry is added. */
function gather(fill: (add: (c: Entry) => void, later: Set<string>) => void): ManifestContents {
  const named = new Map<string, Entry[]>();
  const later = new Set<string>();
  fill((c) => {
    const list = named.get(c.file);
    if (list === undefined) named.set(c.file, [c]);
    else list.push(c);
  }, later);
  for (const file of named.keys()) later.delete(file);
  return { covered: [...named.values()].map(merge), later };
}

/** What a snapshot's manifest covers, from the files the opened snapshot says it holds (src/snapshot/dir.ts). */
export function snapshotContents(files: SnapshotFiles): ManifestContents {
  return gather((add, later) => {
    for (const f of files.listed)
      add(entry(`${f.list}[${f.index}]`, f.name, segmentsOf(f.name, f.list !== 'exports'), f));
    for (const name of files.later) later.add(name);
  });
}

/** A collection's or an audit collection's manifest contents, or why the JSON is not a manifest of that kind. */
export function manifestContents(kind: Exclude<OutputKind, 'snapshot'>, json: unknown): ManifestContents | string {
  const parsed = (kind === 'collection' ? CoveredCollectionSchema : AuditManifestSchema).safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return `${MANIFEST_OF[kind]} is not a ${kind} manifest of svc-snapshot (${i?.path.join('.') || 'top level'}: ${i?.message ?? 'invalid'})`;
  }
  const m = parsed.data;
  return gather((add) => {
    if (m.kind === 'collection') {
      m.routes.forEach((r, i) => r.file && add(entry(`routes[${i}]`, r.file, segmentsOf(r.file, false), r)));
      return;
    }
    // Every file is a request's (routes, with its hash); queries, reports and objects name the same files.
    for (const list of ['routes', 'queries', 'reports', 'objects'] as const) {
      (m[list] ?? []).forEach((r, i) => add(entry(`${list}[${i}]`, r.file, segmentsOf(r.file, false), r)));
    }
  });
}
