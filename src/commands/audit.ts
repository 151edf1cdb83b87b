import { collectAudit } from '../audit/collect.js';
import { resolveAuditSettings } from '../audit/settings.js';
import { readOptions } from '../config/options.js';
import { auditSummary, formatAuditSummary } from '../audit/summary.js';
import { EXIT } from '../exit-codes.js';
import { AUDIT_MANIFEST, type AuditCollection } from '../audit/collect.js';
import { toManifestFile } from '../collect/write.js';
import { signManifest } from '../sign/manifest-signature.js';
import { withHttpClient } from '../http/client.js';
import { withStaging, type Staging } from '../publish/index.js';
import { checkOutputOptions, resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';
import { applyKeep } from '../cron/retention.js';
import { planArchive, writeArchive } from '../archive/write.js';

/**
 * `svc-snapshot audit` (README.md, "The audit service"): flags → settings (checked before
 * any request) → collection → publish with the token leak scan → summary.
 */
export async function runAudit(flags: RawFlags, deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('audit', flags, deps.env);
  checkOutputOptions(deps.cwd, o, 'audit');
  const settings = resolveAuditSettings(o, deps.env);
  const signKey = o.signKey;
  const archive = planArchive(o.encryptTo, deps.env);
  const t0 = performance.now();
  const abort = new AbortController();
  return withHttpClient({ ...settings, signal: abort.signal }, undefined, async (http) => {
    deps.reporter.info(
      `collecting from the audit service at ${settings.auditUrl} for ${settings.from} to ${settings.to}`,
    );
    const facts = deps.facts;
    const collection = await collectAudit(settings, {
      http,
      reporter: deps.reporter,
      abort,
      now: deps.now,
      ...(facts ? { onRequestEnded: (state: 'read' | 'failed') => facts.requestDone(state) } : {}),
    });
    const outDir = resolveOutDir(deps.cwd, o.outDir, `svc-snapshot-audit-${collection.manifest.date}`);
    deps.reporter.info(`publishing ${outDir}`);
    await withStaging(
      outDir,
      [settings.token.value],
      async (staging) => {
        await writeAudit(staging, collection);
        await signManifest(staging, AUDIT_MANIFEST, signKey);
      },
      'audit',
      (m) => deps.reporter.warn(m),
    );
    await writeArchive(archive, outDir, 'audit', signKey, deps.reporter, o.debug);
    const pruned = applyKeep(o.keep, true, outDir, 'audit', deps.reporter);
    deps.reporter.close();
    const summary = {
      ...auditSummary(collection.manifest, outDir, collection.files.size + 1, Math.round(performance.now() - t0)),
      ...(pruned ? { pruned } : {}),
    };
    deps.stdout(o.json ? `${JSON.stringify(summary, null, 2)}\n` : formatAuditSummary(summary));
    return {
      exitCode: EXIT.ok,
      report: {
        routes: { read: collection.manifest.routes.length, skipped: 0, failed: 0 },
        validationIssues: collection.manifest.validation.issues,
      },
      notice: {
        command: 'audit',
        site: settings.auditUrl,
        time: collection.manifest.time,
        exitCode: EXIT.ok,
        outDir,
      },
    };
  });
}

/** Writes every file of the collection, then `_audit-manifest.json`. */
async function writeAudit(staging: Staging, collection: AuditCollection): Promise<void> {
  for (const [file, bytes] of collection.files) await staging.writeFile(file, bytes);
  // Redacted as every manifest: server text in it may echo a token.
  await staging.writeFile(AUDIT_MANIFEST, toManifestFile(collection.manifest));
}
