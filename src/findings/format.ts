/**
 * The text table of `svc-snapshot findings`: the rules (evaluated with their
 * counts, or not evaluated with the reason), then one line per finding.
 * Every value that came from the data is escaped for the terminal.
 */
import { escapeControl } from '../util/escape.js';
import type { RowRef } from './define.js';
import type { FindingsReport } from './evaluate.js';

function refText(r: RowRef): string {
  return `${r.export} ${r.key.map((k) => escapeControl(k)).join(' / ')}`;
}

export function formatFindings(report: FindingsReport, dir: string): string {
  const lines = [`Findings in ${escapeControl(dir)} at ${escapeControl(report.time)}`];
  const idWidth = Math.max(...report.rules.map((r) => r.id.length));
  for (const r of report.rules) {
    const head = `  ${r.id.padEnd(idWidth)}  ${r.severity.padEnd(8)}`;
    if (!r.evaluated) lines.push(`${head}  not evaluated: ${escapeControl(r.reason ?? '')}`);
    else
      lines.push(
        `${head}  ${String(r.count).padStart(6)}${r.reason !== undefined ? `  (${escapeControl(r.reason)})` : ''}`,
      );
  }
  if (report.findings.length === 0) {
    const evaluated = report.rules.filter((r) => r.evaluated).length;
    lines.push(
      '',
      evaluated === 0
        ? 'No rule could be evaluated on this snapshot: no findings can be told (not that there are none).'
        : evaluated < report.rules.length
          ? 'No findings from the rules evaluated.'
          : 'No findings.',
    );
    return `${lines.join('\n')}\n`;
  }
  lines.push('');
  for (const f of report.findings) {
    lines.push(`${f.severity.toUpperCase().padEnd(8)}  ${f.rule}  ${refText(f.subject)}`);
    lines.push(`          ${escapeControl(f.detail)}`);
  }
  return `${lines.join('\n')}\n`;
}
