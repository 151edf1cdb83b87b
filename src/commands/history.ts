import { isMatch } from 'date-fns/isMatch';
import { EXIT } from '../exit-codes.js';
import { DomainError, FailedError, UsageError } from '../errors.js';
import type { HistoryLoadSummary, HistoryLogSummary, HistoryRunsSummary } from '../summaries/schemas.js';
import { SNAPSHOT_MANIFEST } from '../snapshot/dir.js';
import { trustStore } from '../config/values.js';
import { normaliseSite } from '../config/url.js';
import { openHistory, type HistoryDb } from '../history/engine.js';
import { openInput, readInput, type InputHead, type SnapshotInput } from '../history/input.js';
import { CATALOG } from '../exports/catalog.js';
import type { Include } from '../includes.js';
import { loadSnapshot, type AfterExport, type LoadStatus } from '../history/load.js';
import { chooseSite, exportsAsOf, keptFilesAsOf, listRuns, recordLog, runAsOf } from '../history/query.js';
import { shown } from '../snapshot/dir.js';
import { ensureSchema } from '../history/schema.js';
import { parseHistoryTarget, type HistoryTarget } from '../history/target.js';
import { withStaging } from '../publish/index.js';
import { checkOutputOptions, resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import { readOptions, type CommandOptions } from '../config/options.js';
import type { SnapshotManifest } from '../manifests.js';
import { snapshotSummary } from '../summaries/snapshot.js';
import { whenInterrupted } from '../publish/registry.js';
import { requireSignatures } from '../history/signed.js';
import { manifestOfKept } from '../snapshot/listed-files.js';

type HistoryOptions = CommandOptions<'history'>;

const ACTIONS = ['load', 'runs', 'log', 'as-of'] as const;

/** `svc-snapshot history <load|runs|log|as-of>` (docs/history.md). */
export async function runHistory(
  rawFlags: RawFlags,
  args: readonly string[],
  deps: CommandDeps,
  afterExport?: AfterExport,
): Promise<CommandResult> {
  const flags = readOptions('history', rawFlags, deps.env);
  const [action, ...rest] = args;
  if (!ACTIONS.includes(action as (typeof ACTIONS)[number])) {
    throw new UsageError(`history needs one of ${ACTIONS.join(', ')}${action ? `, not "${action.slice(0, 40)}"` : ''}`);
  }
  const target = parseHistoryTarget(flags.history, deps.cwd);
  if (action === 'load') return runLoad(flags, rest, deps, target, afterExport);
  if (action === 'runs') return historyRuns(flags, rest, deps, target);
  if (action === 'log') return historyLog(flags, rest, deps, target);
  return historyAsOf(flags, rest, deps, target);
}

/** `history runs`: the snapshots the history holds of the site. */
async function historyRuns(
  flags: HistoryOptions,
  rest: readonly string[],
  deps: CommandDeps,
  target: HistoryTarget,
): Promise<CommandResult> {
  if (rest.length > 0) throw new UsageError('history runs takes no arguments');
  return withDb(target, flags, deps, false, async (db) => {
    const site = await chooseSite(db, flags.site);
    const summary: HistoryRunsSummary = { runs: site === null ? [] : await listRuns(db, site) };
    deps.reporter.close();
    if (flags.json) deps.stdout(`${JSON.stringify(summary, null, 2)}\n`);
    else if (summary.runs.length === 0) deps.stdout(`No snapshots in ${target.label}.\n`);
    else {
      const lines = summary.runs.map(
        (r) =>
          `${r.time}  ${r.date}  ${r.source.padEnd(6)}  ` +
          `${Object.values(r.counts).reduce((a, b) => a + b, 0)} records  ` +
          `${shown(r.baseUrl)}${r.key ? `  signed ${r.key}` : ''}`,
      );
      deps.stdout(`${lines.join('\n')}\n`);
    }
    return { exitCode: EXIT.ok };
  });
}

/** `history log <export> <key>...`: the versions of one record. */
async function historyLog(
  flags: HistoryOptions,
  rest: readonly string[],
  deps: CommandDeps,
  target: HistoryTarget,
): Promise<CommandResult> {
  const [exportName, ...key] = rest;
  if (exportName === undefined || key.length === 0) {
    throw new UsageError(
      'history log needs an export and its key: svc-snapshot history log <export> <key>... (one value per key column)',
    );
  }
  return withDb(target, flags, deps, false, async (db) => {
    const site = await chooseSite(db, flags.site);
    if (site === null) throw new FailedError(`${target.label} holds no snapshots yet`);
    const log = await recordLog(db, site, exportName, key);
    const summary: HistoryLogSummary = { export: exportName, key: log.key, versions: log.versions };
    deps.reporter.close();
    deps.stdout(flags.json ? `${JSON.stringify(summary, null, 2)}\n` : formatLog(summary));
    return { exitCode: EXIT.ok };
  });
}

/** `history as-of <date>`: the snapshot directory the history holds for that date. */
async function historyAsOf(
  flags: HistoryOptions,
  rest: readonly string[],
  deps: CommandDeps,
  target: HistoryTarget,
): Promise<CommandResult> {
  const [date, ...extra] = rest;
  if (date === undefined || extra.length > 0 || !/^\d{4}-\d{2}-\d{2}$/.test(date) || !isMatch(date, 'yyyy-MM-dd')) {
    throw new UsageError(
      'history as-of needs one date, YYYY-MM-DD: svc-snapshot history as-of 2026-11-21 --out-dir <dir>',
    );
  }
  // The output is a snapshot directory: the same --out-dir rules as a snapshot (README.md, "Output"), checked before the database is opened.
  checkOutputOptions(deps.cwd, flags, 'snapshot');
  return withDb(target, flags, deps, false, async (db) => {
    const t0 = performance.now();
    const site = await chooseSite(db, flags.site);
    if (site === null) throw new FailedError(`${target.label} holds no snapshots yet`);
    const run = await runAsOf(db, site, date);
    const files = await exportsAsOf(db, site, run.time);
    const kept = await keptFilesAsOf(db, site, run.time);
    const outDir = resolveOutDir(deps.cwd, flags.outDir, `svc-snapshot-${run.date}`);
    // The manifest lists what is written: not the spreadsheets, the report or raw/ the snapshot also held (docs/history.md).
    const manifestText = manifestOfKept(
      run.manifestText,
      kept.map((f) => f.name),
    );
    await withStaging(
      outDir,
      [],
      async (staging) => {
        for (const f of [...files, ...kept]) await staging.writeFile(f.name, f.content);
        await staging.writeFile(SNAPSHOT_MANIFEST, manifestText);
      },
      'snapshot',
      (m) => deps.reporter.warn(m),
    );
    const manifest = JSON.parse(manifestText) as SnapshotManifest;
    deps.reporter.close();
    const summary = snapshotSummary({ outDir, manifest, durationMs: Math.round(performance.now() - t0) });
    deps.stdout(
      flags.json
        ? `${JSON.stringify(summary, null, 2)}\n`
        : `Snapshot of ${shown(site)} taken ${run.time} (as of ${date}) written to ${outDir}: ${files.length} ` +
            `exports, ${summary.exports.reduce((a, e) => a + e.count, 0)} records\n`,
    );
    return { exitCode: manifest.complete ? EXIT.ok : EXIT.incomplete };
  });
}

/** Opens the history database (its schema created when `write`, else required), runs `fn` on it, then closes it. */
async function withDb<T>(
  target: HistoryTarget,
  flags: Pick<HistoryOptions, 'caFile'>,
  deps: CommandDeps,
  write: boolean,
  fn: (db: HistoryDb) => Promise<T>,
): Promise<T> {
  const ca = target.engine === 'postgres' ? trustStore(flags.caFile, deps.env) : undefined;
  const db = await openHistory(target, { mustExist: !write, ...(ca ? { ca } : {}) });
  try {
    if (!(await ensureSchema(db, write)))
      throw new FailedError(
        `${target.label} holds no svc-snapshot history yet; load snapshots first with svc-snapshot history load <dir>...`,
      );
    return await fn(db);
  } finally {
    await db.close();
  }
}

function formatLog(s: HistoryLogSummary): string {
  const key = Object.entries(s.key)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
  if (s.versions.length === 0) return `${s.export} ${key}: no version in the history\n`;
  const lines = [`${s.export} ${key}: ${s.versions.length} version${s.versions.length > 1 ? 's' : ''}`];
  let prev: Record<string, unknown> | undefined;
  for (const v of s.versions) {
    const span = `${v.from} → ${v.to ?? 'now'}`;
    if (!prev) lines.push(`  ${span}  first seen`);
    else {
      const before = prev;
      const changed = v.changed.map(
        (c) => `${c} ${JSON.stringify(before[c] ?? null)} → ${JSON.stringify(v.record[c] ?? null)}`,
      );
      lines.push(`  ${span}  changed: ${changed.join('; ') || '(reappeared unchanged)'}`);
    }
    prev = v.record;
  }
  return `${lines.join('\n')}\n`;
}

async function runLoad(
  flags: HistoryOptions,
  dirs: readonly string[],
  deps: CommandDeps,
  target: HistoryTarget,
  afterExport?: AfterExport,
): Promise<CommandResult> {
  if (dirs.length === 0) {
    throw new UsageError(
      'history load needs snapshot directories or raw collections: svc-snapshot history load <dir>... --history <target>',
    );
  }
  const allowed = flags.allowedSigners;
  const include = flags.include;
  const heads: InputHead[] = [];
  for (const d of dirs) heads.push(await openInput(resolveOutDir(deps.cwd, d, d)));
  // With --allowed-signers, every signature is checked before anything is loaded.
  const signed = allowed ? await requireSignatures(heads, allowed, deps.now()) : undefined;
  if (flags.site !== undefined) checkSite(heads, flags.site);
  // Oldest first, whatever order the shell expanded the names in.
  heads.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  // A signal from here on stops a transaction, which the database rolls back.
  whenInterrupted(
    'nothing of the snapshot being loaded is in the history database; the snapshots loaded before it stay loaded. ' +
      'Run the same command again to go on',
  );
  const loaded: HistoryLoadSummary['snapshots'] = [];
  let skipped = 0;
  try {
    await withDb(target, flags, deps, true, async (db) => {
      // Each taken off the list as it is loaded: what a snapshot holds (its buffer as large as its largest export) is let go.
      for (let h = heads.shift(); h !== undefined; h = heads.shift()) {
        const dir = h.dir;
        const read = await readInput(h, include).catch((err: unknown) => {
          throw stopped(err, dir, loaded.length);
        });
        warnNotHeld(read, include, deps);
        const input = signed ? { ...read, signingKey: signed.get(dir)! } : read;
        const entry = { dir, baseUrl: input.baseUrl, time: input.time };
        if (!input.complete && !flags.allowPartial) {
          deps.reporter.warn(
            `${dir} is a partial snapshot (complete: false); skipped. Pass --allow-partial to load it anyway`,
          );
          loaded.push({ ...entry, status: 'skipped', opened: 0, closed: 0 });
          skipped++;
          continue;
        }
        deps.reporter.info(`loading ${dir} (${input.time}) into ${target.label}`);
        const result = await loadSnapshot(db, input, afterExport).catch((err: unknown) => {
          throw stopped(err, dir, loaded.filter((l) => l.status !== 'skipped').length);
        });
        if (result.status === 'already loaded') deps.reporter.info(`${dir} was loaded before; nothing changed`);
        const { status, opened, closed } = result;
        loaded.push({ ...entry, status: status satisfies LoadStatus, opened, closed });
      }
    });
  } finally {
    whenInterrupted(undefined);
  }
  deps.reporter.close();
  writeLoadSummary(loaded, skipped, target, flags.json, deps);
  return { exitCode: skipped > 0 ? EXIT.incomplete : EXIT.ok };
}

/** Refuses the load when a snapshot is of another site than --site. */
function checkSite(heads: readonly { dir: string; baseUrl: string }[], flagSite: string): void {
  const site = normaliseSite(flagSite);
  const other = heads.find((h) => h.baseUrl !== site);
  if (other)
    throw new UsageError(`${other.dir} is a snapshot of ${other.baseUrl}, not of --site ${site}; nothing was loaded`);
}

/** What `history load` did, on stdout: JSON with --json, else a line per snapshot. */
function writeLoadSummary(
  loaded: HistoryLoadSummary['snapshots'],
  skipped: number,
  target: HistoryTarget,
  json: boolean,
  deps: CommandDeps,
): void {
  const summary: HistoryLoadSummary = {
    command: 'history load',
    target: target.label,
    snapshots: loaded,
    complete: skipped === 0,
  };
  if (json) {
    deps.stdout(`${JSON.stringify(summary, null, 2)}\n`);
    return;
  }
  const lines = loaded.map(
    (l) =>
      `  ${l.status.padEnd(14)} ${l.time}  ` +
      `${l.dir}${l.status === 'loaded' ? `  (${l.opened} versions opened, ${l.closed} closed)` : ''}`,
  );
  deps.stdout(
    `History ${target.label}:\n${lines.join('\n')}\n${skipped > 0 ? `  ${skipped} partial snapshot(s) skipped (exit 4)\n` : ''}`,
  );
}

function stopped(err: unknown, dir: string, before: number): unknown {
  if (err instanceof DomainError && !(err instanceof FailedError)) return err;
  const note = before > 0 ? `; the ${before} snapshot(s) before it stay loaded` : '';
  // A database error (a lost connection, a full disk) rolled the snapshot back: say so, without a stack.
  const what =
    err instanceof FailedError
      ? err.message
      : `the history database failed ` +
        `(${err instanceof Error ? err.message : String(err)}); nothing of this snapshot was loaded`;
  return new FailedError(`history load stopped at ${dir}: ${what}${note}`, { cause: err });
}

/**
 * A snapshot directory is loaded as it holds its exports: one taken without
 * --include vms leaves the VM records of the database as they were (like an
 * export unavailable that night), which a warning says.
 */
function warnNotHeld(input: SnapshotInput, include: readonly Include[], deps: CommandDeps): void {
  const absent = include.filter((i) =>
    CATALOG.some((e) => e.include === i && !input.exports.some((x) => x.export === e.name)),
  );
  if (absent.length > 0)
    deps.reporter.warn(
      `${input.dir} was taken without --include ${absent.join(',')}: its records of those exports are left as they were`,
    );
}

/** `snapshot --history`: loads the snapshot just published. */
export async function loadPublished(
  dir: string,
  target: HistoryTarget,
  flags: Pick<HistoryOptions, 'caFile'>,
  deps: CommandDeps,
): Promise<LoadStatus> {
  return withDb(
    target,
    flags,
    deps,
    true,
    async (db) => (await loadSnapshot(db, await readInput(await openInput(dir)))).status,
  );
}
