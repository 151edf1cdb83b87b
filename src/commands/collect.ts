import { resolveConnection } from '../config/settings.js';
import { readOptions } from '../config/options.js';
import { withHttpClient } from '../http/client.js';
import { collect, collectionDate, type CollectDeps } from '../collect/collect.js';
import type { Staging } from '../publish/staging.js';
import { BodyWrites, COLLECTION_MANIFEST, writeCollectionManifest } from '../collect/write.js';
import { signManifest } from '../sign/manifest-signature.js';
import { withStaging } from '../publish/index.js';
import { EXIT } from '../exit-codes.js';
import { FailedError } from '../errors.js';
import { checkOutputOptions, resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import type { CollectSummary } from '../summaries/schemas.js';
import { summariseRoutes } from '../summaries/routes.js';
import { applyKeep, formatPruned } from '../cron/retention.js';
import { BodySpool } from '../collect/body-spool.js';
import { planArchive, writeArchive } from '../archive/write.js';
import path from 'node:path';

export async function runCollect(flags: RawFlags, deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('collect', flags, deps.env);
  checkOutputOptions(deps.cwd, o, 'collection');
  const settings = resolveConnection(o, deps.env);
  const signKey = o.signKey;
  const archive = planArchive(o.encryptTo, deps.env);
  const t0 = performance.now();
  const abort = new AbortController();
  return withHttpClient({ ...settings, signal: abort.signal }, deps.dispatcher, async (http) => {
    deps.reporter.info(`collecting from ${settings.baseUrl}`);
    const started = deps.now();
    const outDir = resolveOutDir(deps.cwd, o.outDir, `svc-snapshot-raw-${collectionDate(started)}`);
    const { collection, failed } = await withStaging(
      outDir,
      settings.tokens.secrets,
      async (staging) => {
        const result = await collectWritten(
          staging,
          new BodySpool(path.dirname(outDir), settings.tokens.secrets),
          (onRoute, spool) =>
            collect(settings, { http, reporter: deps.reporter, abort, now: () => started, onRoute, spool }),
          abort,
        );
        const { collection, failed } = result;
        if (failed.length > 0 && failed.length === collection.manifest.routes.filter((r) => !r.skipped).length) {
          throw new FailedError(
            `no route could be collected from ${settings.baseUrl}; first error: ${failed[0]!.route}: ` +
              `${failed[0]!.error}. Nothing was published.`,
          );
        }
        await writeCollectionManifest(staging, collection.manifest);
        await signManifest(staging, COLLECTION_MANIFEST, signKey);
        return result;
      },
      'collection',
      (m) => deps.reporter.warn(m),
    );
    await writeArchive(archive, outDir, 'collection', signKey, deps.reporter, o.debug);
    const pruned = applyKeep(o.keep, failed.length === 0, outDir, 'collection', deps.reporter);
    deps.reporter.close();
    const s = summariseRoutes(collection.manifest.routes);
    const summary: CollectSummary = {
      command: 'collect',
      outDir,
      baseUrl: collection.manifest.baseUrl,
      date: collection.manifest.date,
      complete: failed.length === 0,
      routes: s.counts,
      skipped: s.skipped,
      failed: s.failed,
      ...(pruned ? { pruned } : {}),
      durationMs: Math.round(performance.now() - t0),
    };
    deps.stdout(o.json ? `${JSON.stringify(summary, null, 2)}\n` : formatCollectSummary(summary));
    const exitCode = failed.length === 0 ? EXIT.ok : EXIT.incomplete;
    return {
      exitCode,
      report: { routes: { read: s.counts.ok, skipped: s.counts.skipped, failed: s.counts.failed } },
      // A collection has no exports or findings to tell, only its outcome.
      notice: {
        command: 'collect',
        site: collection.manifest.baseUrl,
        time: started.toISOString(),
        exitCode,
        failedRoutes: s.failed.map((r) => ({ route: r.route, error: r.error })),
        outDir,
      },
    };
  });
}

/**
 * `run` with every body written into `staging` as soon as it is in (and
 * searched for the tokens), while the other routes download, then dropped
 * from memory; a large body arrives into a spool beside the output and is
 * copied from there. The first failed write aborts the routes still
 * downloading.
 */
async function collectWritten<T>(
  staging: Staging,
  spool: BodySpool,
  run: (onRoute: NonNullable<CollectDeps['onRoute']>, spool: BodySpool) => Promise<T>,
  abort: AbortController,
): Promise<T> {
  const writes = new BodyWrites(staging, (err) => abort.abort(err));
  try {
    let result: T;
    try {
      result = await run((record, body) => writes.take(record.file, body), spool);
    } catch (err) {
      // The collector's failure (a refused token) is the one to report; the writes only need to end.
      await writes.settled().catch(() => {});
      throw err;
    }
    await writes.settled();
    return result;
  } finally {
    spool.remove();
  }
}

function formatCollectSummary(s: CollectSummary): string {
  const lines = [
    `Raw collection written to ${s.outDir}`,
    `  routes: ${s.routes.ok} collected, ${s.routes.skipped} skipped, ${s.routes.failed} failed (${(s.durationMs / 1000).toFixed(1)} s)`,
    ...s.skipped.map((r) => `  skipped ${r.route}: ${r.reason}`),
    ...s.failed.map((r) => `  FAILED  ${r.route}: ${r.error}`),
  ];
  if (!s.complete)
    lines.push('  Incomplete: some routes failed (exit 4); their files are missing from the collection.');
  lines.push(...formatPruned(s.pruned));
  return `${lines.join('\n')}\n`;
}
