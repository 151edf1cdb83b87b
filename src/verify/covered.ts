/**
 * What each kind of output's manifest says it holds (CONTRACT sections 4, 5,
 * 7 and 13): every file it names, with the size and sha256 it records for it
 * (a field the manifest does not record is left undefined, and `verify`
 * says so), and the files this tool may add to a snapshot after it was
 * published (convert's spreadsheets, report's page), which are "not
 * covered" rather than unexpected.
 */
import { z } from 'zod';
import { isPlainFileName } from '../util/safe-read.js';
import { MANIFEST_OF, type OutputKind } from '../publish/owned.js';

export interface Covered {
  /** As shown: `/`-separated, relative to the directory. */
  readonly file: string;
  /** The path's segments, each checked to be a plain name; undefined when the manifest's name is not one (never opened). */
  readonly segments: readonly string[] | undefined;
  readonly bytes: number | undefined;
  readonly sha256: string | undefined;
}

export interface ManifestContents {
  readonly covered: readonly Covered[];
  /** Names (as shown) of files the tool adds later: present, they are "not covered", a warning. */
  readonly later: ReadonlySet<string>;
}

const Hex = z.string().regex(/^[0-9a-f]{64}$/);
const Sized = { bytes: z.number().int().nonnegative().optional(), sha256: Hex.optional() };

const Snapshot = z.object({
  kind: z.literal('snapshot'),
  date: z.string(),
  exports: z.array(z.object({ file: z.string(), sha256: Hex.optional() })),
  routes: z.array(z.object({ file: z.string().nullable().optional(), ...Sized })).optional(),
  files: z.array(z.object({ name: z.string(), bytes: z.number().int().nonnegative(), sha256: Hex })).optional(),
});
const Collection = z.object({
  kind: z.literal('collection'),
  routes: z.array(z.object({ file: z.string().nullable().optional(), ...Sized })),
});
const AuditFile = z.object({ file: z.string(), ...Sized });
const Audit = z.object({
  kind: z.literal('audit'),
  routes: z.array(AuditFile),
  queries: z.array(AuditFile).optional(),
  reports: z.array(AuditFile).optional(),
  objects: z.array(AuditFile).optional(),
});

/** `raw/<name>` or `<name>`, each part a plain name; undefined otherwise. */
function segmentsOf(name: string, allowRaw: boolean): string[] | undefined {
  const parts = name.split('/');
  if (parts.length === 1 && isPlainFileName(parts[0]!)) return parts;
  if (allowRaw && parts.length === 2 && parts[0] === 'raw' && isPlainFileName(parts[1]!)) return parts;
  return undefined;
}

function entry(file: string, segments: string[] | undefined, bytes: number | undefined, sha256: string | undefined): Covered {
  return { file, segments, bytes, sha256 };
}

/** The manifest's contents, or why the JSON is not a manifest of that kind. */
export function manifestContents(kind: OutputKind, json: unknown): ManifestContents | string {
  const schema = kind === 'snapshot' ? Snapshot : kind === 'collection' ? Collection : Audit;
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return `${MANIFEST_OF[kind]} is not a ${kind} manifest of svc-snapshot (${i?.path.join('.') || 'top level'}: ${i?.message ?? 'invalid'})`;
  }
  const covered = new Map<string, Covered>();
  const add = (c: Covered) => {
    if (!covered.has(c.file)) covered.set(c.file, c);
  };
  const later = new Set<string>();
  if (kind === 'snapshot') {
    const m = parsed.data as z.infer<typeof Snapshot>;
    for (const e of m.exports) {
      add(entry(e.file, segmentsOf(e.file, false), undefined, e.sha256));
      later.add(e.file.replace(/\.json$/, '.csv'));
    }
    for (const f of m.files ?? []) add(entry(f.name, segmentsOf(f.name, true), f.bytes, f.sha256));
    for (const r of m.routes ?? []) if (r.file) add(entry(`raw/${r.file}`, isPlainFileName(r.file) ? ['raw', r.file] : undefined, r.bytes, r.sha256));
    later.add(`svc-snapshot-${m.date}.xlsx`);
    later.add(`svc-snapshot-${m.date}.html`);
    later.add(`raw/${MANIFEST_OF.collection}`);
  } else if (kind === 'collection') {
    const m = parsed.data as z.infer<typeof Collection>;
    for (const r of m.routes) if (r.file) add(entry(r.file, segmentsOf(r.file, false), r.bytes, r.sha256));
  } else {
    const m = parsed.data as z.infer<typeof Audit>;
    // Every file is a request's (routes, with its hash); queries, reports and objects name the same files.
    for (const r of [...m.routes, ...(m.queries ?? []), ...(m.reports ?? []), ...(m.objects ?? [])]) add(entry(r.file, segmentsOf(r.file, false), r.bytes, r.sha256));
  }
  for (const c of covered.values()) later.delete(c.file);
  return { covered: [...covered.values()], later };
}
