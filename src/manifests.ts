/**
 * The manifests of the three kinds of output, their one source: each kind's
 * name and zod schema (types inferred from them), the views of a manifest
 * that a reader needing fewer fields parses, and the files a snapshot
 * directory may hold besides those its manifest lists.
 */
import { z } from 'zod';
import { AuthModeSchema, RealmsRecordSchema, RouteRecordSchema } from './api/route-record.js';
import { INCLUDES } from './includes.js';
import { isPlainFileName } from './util/safe-read.js';

/** The three kinds of output directory and the manifest that marks each. */
export type OutputKind = 'snapshot' | 'collection' | 'audit';

export const MANIFEST_OF: Record<OutputKind, string> = {
  snapshot: '_snapshot-manifest.json',
  collection: '_collection-manifest.json',
  audit: '_audit-manifest.json',
};

/** Lower-case hex SHA-256, as every manifest writes it. */
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

function isSiteUrl(value: string): boolean {
  // The URL parser drops tabs and newlines silently: a value holding one is refused, not cleaned.
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(value)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** `_collection-manifest.json`, as `collect` writes it and `--replay` reads it back. */
export const CollectionManifestSchema = z.object({
  kind: z.literal('collection'),
  tool: z.object({ name: z.string(), version: z.string() }),
  /** The site: an http(s) URL with nothing a terminal or a log would act on (it is printed, and names metrics). */
  baseUrl: z.string().refine(isSiteUrl, { error: 'not an http(s) URL' }),
  /** As the collector writes it (Date.toISOString): UTC, `Z`; a real date and time. */
  time: z.iso.datetime({ error: 'not an ISO 8601 UTC time (YYYY-MM-DDTHH:MM:SS.sssZ)' }),
  /** A real calendar date: it names files and directories. */
  date: z.iso.date({ error: 'not a calendar date (YYYY-MM-DD)' }),
  authMode: AuthModeSchema,
  realms: RealmsRecordSchema,
  routes: z.array(RouteRecordSchema),
});
export type CollectionManifest = z.infer<typeof CollectionManifestSchema>;

/**
 * One `exports[]` entry of `_snapshot-manifest.json` (docs/exports.md).
 * `sha256` is of the file's bytes as written, so a reader (the history
 * database, an auditor) can verify a file without trusting its name.
 */
const ManifestExportSchema = z.object({
  export: z.string(),
  file: z.string(),
  count: z.number().int().nonnegative(),
  available: z.boolean(),
  reason: z.string().optional(),
  proposedRoute: z.string().optional(),
  sha256: Sha256,
});
export type ManifestExport = z.infer<typeof ManifestExportSchema>;

/**
 * One `files[]` entry (docs/verify.md): a file of the snapshot other
 * than its exports (a spreadsheet; `raw/_collection-manifest.json` with
 * --raw), its size and SHA-256, so that `verify` covers it.
 */
const ListedFileSchema = z.object({ name: z.string(), bytes: z.number().int().nonnegative(), sha256: Sha256 });
export type ListedFile = z.infer<typeof ListedFileSchema>;

/** `_snapshot-manifest.json` as the snapshot command writes it. */
export const SnapshotManifestSchema = z.object({
  kind: z.literal('snapshot'),
  source: z.enum(['live', 'replay']),
  // What the snapshot says of its collection is what the collection manifest says.
  ...CollectionManifestSchema.pick({ tool: true, baseUrl: true, time: true, date: true, authMode: true, realms: true })
    .shape,
  /** With --include: the export groups written after the 15 (absent without, so that such a manifest is as before). */
  include: z.array(z.enum(INCLUDES)).optional(),
  exports: z.array(ManifestExportSchema),
  nullFields: z.array(
    z.object({ export: z.string(), field: z.string(), reason: z.string(), proposedRoute: z.string().optional() }),
  ),
  routes: z.array(RouteRecordSchema),
  validation: z.object({
    issues: z.number().int().nonnegative(),
    samples: z.array(z.object({ route: z.string(), index: z.number().int(), path: z.string(), message: z.string() })),
  }),
  drift: z.array(z.object({ route: z.string(), unknownFields: z.array(z.string()) })),
  complete: z.boolean(),
  /** With --format or --raw: the other files the snapshot holds. */
  files: z.array(ListedFileSchema).optional(),
});
export type SnapshotManifest = z.infer<typeof SnapshotManifestSchema>;

/**
 * The snapshot manifest as readers accept it: an export's `sha256` is absent
 * in manifests written before export hashes were recorded, and is then not
 * checked; `bytes`, where a manifest gives a file's size, is checked with it.
 */
export const ReadableManifestSchema = SnapshotManifestSchema.extend({
  exports: z.array(
    ManifestExportSchema.extend({ sha256: Sha256.optional(), bytes: z.number().int().nonnegative().optional() }),
  ),
});
export type ReadableManifest = z.infer<typeof ReadableManifestSchema>;

/** A file of `_audit-manifest.json`, with the size and sha256 recorded for it where it records them. */
const AuditFile = z.object({
  file: z.string(),
  bytes: z.number().int().nonnegative().optional(),
  sha256: Sha256.optional(),
});

/** `_audit-manifest.json` as `verify` reads it: the files it names (README.md, "The audit service"). */
export const AuditManifestSchema = z.object({
  kind: z.literal('audit'),
  routes: z.array(AuditFile),
  queries: z.array(AuditFile).optional(),
  reports: z.array(AuditFile).optional(),
  objects: z.array(AuditFile).optional(),
});

/** The collection manifest as `verify` reads it: the files its routes name. */
export const CoveredCollectionSchema = CollectionManifestSchema.pick({ kind: true }).extend({
  routes: z.array(
    RouteRecordSchema.pick({ bytes: true, sha256: true }).extend({ file: z.string().nullable().optional() }),
  ),
});

const ThisTool = CollectionManifestSchema.shape.tool.extend({ name: z.literal('svc-snapshot') });
const PlainName = z.string().refine(isPlainFileName, 'not a plain file name');

/**
 * Each kind's manifest as deciding whether a directory is ours reads it: one
 * this tool wrote, every file it names a plain name inside the directory,
 * and whether the run was complete.
 */
export const OWNED_MANIFEST = {
  snapshot: SnapshotManifestSchema.pick({ kind: true, date: true, complete: true }).extend({
    tool: ThisTool,
    exports: z.array(z.object({ file: PlainName })),
    // Spreadsheets and raw/_collection-manifest.json (checked with raw/ itself).
    files: z.array(ListedFileSchema.pick({ name: true })).optional(),
  }),
  collection: CollectionManifestSchema.pick({ kind: true }).extend({
    tool: ThisTool,
    routes: z.array(RouteRecordSchema.pick({ error: true }).extend({ file: PlainName.nullable().optional() })),
  }),
  audit: AuditManifestSchema.pick({ kind: true }).extend({
    tool: ThisTool,
    routes: z.array(z.object({ status: z.number(), file: PlainName, error: z.unknown().optional() })),
    queries: z.array(z.object({ file: PlainName })).optional(),
    reports: z.array(z.object({ file: PlainName })).optional(),
  }),
};

/** The files `--findings` adds to a snapshot directory (listed in the manifest's `files`). */
export const FINDINGS_FILE_NAME = '_findings.json';
/** `--findings --format csv`: the findings as rows, beside FINDINGS_FILE_NAME (docs/findings.md). */
export const FINDINGS_CSV_NAME = '_findings.csv';

/** The report's page in a snapshot of that date (README.md, "The report"). */
export function reportFileName(date: string): string {
  return `svc-snapshot-${date}.html`;
}

/** The workbook of a snapshot of that date (docs/spreadsheets.md). */
export function workbookFileName(date: string): string {
  return `svc-snapshot-${date}.xlsx`;
}

/** An export's CSV form: its JSON file's name, ending in .csv (docs/spreadsheets.md). */
export function csvFileName(exportFile: string): string {
  return exportFile.replace(/\.json$/, '.csv');
}

/**
 * The files `convert` and `report` write into a snapshot directory after
 * its manifest, listed there or not: each export's CSV form, the workbook
 * and the report page.
 */
export function laterFiles(m: {
  readonly exports: readonly { readonly file: string }[];
  readonly date: string;
}): string[] {
  return [...m.exports.map((e) => csvFileName(e.file)), workbookFileName(m.date), reportFileName(m.date)];
}
