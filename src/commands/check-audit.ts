import { requireAuditToken, requireAuditUrl } from '../audit/settings.js';
import { auditAuth } from '../http/auth.js';
import { resolveTransport } from '../config/settings.js';
import type { CommandOptions } from '../config/options.js';
import { withHttpClient } from '../http/client.js';
import { HttpError } from '../http/errors.js';
import { describeTls, observeTls, tlsForJson, tlsVerdict } from '../http/tls-observer.js';
import { EXIT } from '../exit-codes.js';
import { escapeControl } from '../util/escape.js';
import type { CommandDeps, CommandResult } from './context.js';
import type { CheckAuditSummary } from '../summaries/schemas.js';

type AuditCheckReport = Omit<CheckAuditSummary, 'tls'> & { tls: { ok: boolean; error?: string } };

/** `check --audit`: GET /info without the token, then an information route with it. */
export async function runCheckAudit(o: CommandOptions<'check'>, deps: CommandDeps): Promise<CommandResult> {
  const auditUrl = requireAuditUrl(o.auditUrl);
  const token = requireAuditToken(o.auditToken);
  const transport = resolveTransport(o, deps.env);
  return withHttpClient({ ...transport, retries: Math.min(transport.retries, 1) }, undefined, async (http) => {
    const report: AuditCheckReport = {
      reachable: true,
      tls: { ok: true },
      token: { source: token.source, accepted: null },
      ok: false,
    };
    const observer = observeTls(new URL(auditUrl).hostname);
    try {
      try {
        const info = await http.read({ label: 'GET /info', url: `${auditUrl}/info` });
        if (info.status === 200) {
          const v = (safeJson(info.body) ?? {}) as { name?: unknown; version?: unknown };
          report.service = {
            ...(typeof v.name === 'string' ? { name: v.name } : {}),
            ...(typeof v.version === 'string' ? { version: v.version } : {}),
          };
        }
        const list = await http.read({
          label: 'GET /queries/list',
          url: `${auditUrl}/queries/list`,
          headers: auditAuth(token.value),
        });
        const answered = list.status === 200 && !Array.isArray(safeJson(list.body));
        report.token = answered
          ? { source: token.source, accepted: null, status: 200, error: notAList(list.body) }
          : { source: token.source, accepted: list.status === 200, status: list.status };
      } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        if (err.kind === 'tls') report.tls = { ok: false, error: err.detail };
        else if (err.status === 0) report.reachable = false;
      }
      report.tls = tlsVerdict(auditUrl, observer.authorized(), report.tls, report.reachable);
      report.ok = report.reachable && report.tls.ok && report.token.accepted === true;
      deps.reporter.close();
      const json: CheckAuditSummary = { ...report, tls: tlsForJson(auditUrl, report.tls, report.reachable) };
      deps.stdout(o.json ? `${JSON.stringify(json, null, 2)}\n` : formatAuditCheck(auditUrl, report));
      if (report.ok) return { exitCode: EXIT.ok };
      if (report.token.status === 401 || report.token.status === 403) return { exitCode: EXIT.tokenRejected };
      return { exitCode: EXIT.failed };
    } finally {
      observer.stop();
    }
  });
}

function formatAuditCheck(url: string, r: AuditCheckReport): string {
  const lines = [
    `Checking the audit service at ${url}`,
    `  reachable: ${r.reachable ? 'yes' : 'no'}`,
    `  TLS: ${describeTls(url, r.tls, r.reachable)}`,
  ];
  // The service's own words: a newline there must not add a line of ours (an "OK" it did not earn).
  if (r.service)
    lines.push(
      `  service: ${escapeControl(r.service.name ?? '?')} ${escapeControl(r.service.version ?? '')}`.trimEnd(),
    );
  if (r.reachable && r.tls.ok) {
    lines.push(
      r.token.error !== undefined
        ? `  token from ${r.token.source}: not known: ${r.token.error}`
        : `  token from ${r.token.source}: ${r.token.accepted ? 'accepted' : `REFUSED${r.token.status ? ` (HTTP ${r.token.status})` : ''}`}`,
    );
  }
  lines.push(r.ok ? 'OK: an audit collection would run.' : 'NOT OK: an audit collection would not run as things are.');
  return `${lines.join('\n')}\n`;
}

/** What answered 200 instead of the list of queries: a login page or a proxy's, most often. */
function notAList(body: Buffer): string {
  const start = body.subarray(0, 64).toString('utf8').trimStart();
  const kind = start.startsWith('<')
    ? 'HTML or XML'
    : safeJson(body) !== undefined
      ? 'JSON that is not a list'
      : 'not JSON';
  return (
    `GET /queries/list answered 200 with ${body.length} bytes of ${kind}; a login page or a proxy answers instead ` +
    'of the audit service: check --audit-url and any proxy'
  );
}

/** A body's JSON value, undefined when it is not JSON. */
export function safeJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
