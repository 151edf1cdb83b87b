import { EXIT } from '../exit-codes.js';
import type { VerifySummary } from '../summaries/schemas.js';
import { readOptions } from '../config/options.js';
import { UsageError } from '../errors.js';
import { escapeControl } from '../util/escape.js';
import { manifestsIn, verifyDir, WARNING_STATES, type DirReport } from '../verify/verify-dir.js';
import { resolveOutDir, type CommandDeps, type CommandResult, type RawFlags } from './context.js';

/** `svc-snapshot verify <dir>...` (docs/verify.md): usage errors are refused before anything is read. */
export async function runVerify(flags: RawFlags, args: readonly string[], deps: CommandDeps): Promise<CommandResult> {
  const o = readOptions('verify', flags, deps.env);
  if (args.length === 0) throw new UsageError('verify needs directories: svc-snapshot verify <dir>...');
  const allowed = o.allowedSigners;
  const targets = [];
  for (const arg of args) {
    const dir = resolveOutDir(deps.cwd, arg, arg);
    targets.push({ dir, kinds: await manifestsIn(dir) });
  }
  const now = deps.now();
  const reports: DirReport[] = [];
  for (const t of targets) {
    deps.reporter.info(`verifying ${t.dir}`);
    reports.push(await verifyDir(t.dir, t.kinds, allowed, now));
  }
  deps.reporter.close();
  const summary: VerifySummary = { dirs: reports.map((r) => ({ ...r, files: [...r.files] })) };
  deps.stdout(o.json ? `${JSON.stringify(summary, null, 2)}\n` : formatVerify(reports));
  return { exitCode: reports.every((r) => r.ok) ? EXIT.ok : EXIT.failed };
}

function formatVerify(reports: readonly DirReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    const checked = r.files.filter((f) => f.state === 'ok').length;
    const head = `${escapeControl(r.dir)}${r.kind ? ` (${r.kind})` : ''}: ${r.ok ? 'OK' : 'FAILED'}`;
    if (r.error !== undefined) {
      lines.push(`${head}: ${r.error}`);
      continue;
    }
    const sig = r.signature;
    const signed =
      sig.state === 'valid'
        ? `signed by ${sig.key}${sig.reason ? ` (${sig.reason})` : ''}`
        : sig.state === 'unsigned'
          ? 'unsigned'
          : `signature ${sig.state}`;
    lines.push(`${head}, ${checked} file${checked === 1 ? '' : 's'} match the manifest, ${signed}`);
    const sizeless = r.files.filter((f) => f.state === 'ok' && f.detail !== undefined).length;
    if (sizeless > 0)
      lines.push(`  note: the manifest records no size for ${sizeless} of them (the exports); their sha256 matches`);
    for (const f of r.files) {
      if (f.state === 'ok') continue;
      const level = WARNING_STATES.has(f.state) ? 'warning' : 'FAILED';
      lines.push(`  ${level}: ${escapeControl(f.file)}: ${f.state}${f.detail ? ` (${f.detail})` : ''}`);
    }
    if (sig.state !== 'valid' && sig.reason !== undefined)
      lines.push(`  ${r.ok ? 'warning' : 'FAILED'}: signature: ${sig.reason}`);
  }
  return `${lines.join('\n')}\n`;
}
