/**
 * The findings as CSV (docs/findings.md): one row per finding, then one
 * per resolved finding, one per finding carried for a rule not evaluated,
 * and one per rule not evaluated, written with the spreadsheets' CSV rules.
 */
import { BOM, csvField, guardText } from '../sheets/csv.js';
import type { CarriedFinding, Finding, FindingsReport, ResolvedFinding } from './evaluate.js';

/** The members of a finding's `display`, each a column of its own. */
const DISPLAY_COLUMNS = ['user', 'email', 'project', 'team', 'requirement', 'level', 'vms'] as const;

/** The header, in order (docs/findings.md lists it). */
export const FINDINGS_CSV_COLUMNS = [
  'id',
  'state',
  'severity',
  'rule',
  ...DISPLAY_COLUMNS,
  'subject_export',
  'subject_key',
  'detail',
  'first_seen',
  'waived_reason',
  'waived_owner',
  'waived_expires',
  'waiver_ended',
] as const;

const ROWS_PER_CHUNK = 2000;

const field = (v: string | undefined): string => (v === undefined ? '' : csvField(guardText(v)));

function row(f: Finding | ResolvedFinding | CarriedFinding, state: string | undefined, eol: string): string {
  // A carried finding has tonight's waiver, if any, as a finding of tonight has (docs/findings.md).
  const w = 'waived' in f ? f.waived : undefined;
  const ended = 'waiverEnded' in f ? f.waiverEnded : undefined;
  const cells = [
    f.id,
    state,
    f.severity,
    f.rule,
    ...DISPLAY_COLUMNS.map((c) => f.display[c]),
    f.subject.export,
    f.subject.key.join('; '),
    f.detail,
    f.firstSeen,
    w?.reason,
    w?.owner,
    w?.expires,
    ended ? `${ended.owner} until ${ended.expires}: ${ended.reason}` : undefined,
  ];
  return `${cells.map(field).join(',')}${eol}`;
}

/**
 * The CSV's text a chunk at a time: a large site's findings are never one
 * string. `stream`: for stdout, where every byte passes the terminal's
 * escaping (which spells out CR and the byte-order mark): LF line ends and
 * no byte-order mark, the same rows otherwise.
 */
export function* findingsCsvChunks(report: FindingsReport, stream = false): Generator<string> {
  const eol = stream ? '\n' : '\r\n';
  yield `${stream ? '' : BOM}${FINDINGS_CSV_COLUMNS.join(',')}${eol}`;
  yield* chunked(report.findings, (f) => row(f, f.state, eol));
  yield* chunked(report.resolved ?? [], (f) => row(f, 'resolved', eol));
  yield* chunked(report.carried ?? [], (f) => row(f, 'carried', eol));
  // A rule that could not look is said in the file itself: without a row, its absence would read as "no findings".
  for (const r of report.rules)
    if (!r.evaluated) {
      const cells = FINDINGS_CSV_COLUMNS.map((c) =>
        c === 'state'
          ? 'not evaluated'
          : c === 'severity'
            ? r.severity
            : c === 'rule'
              ? r.id
              : c === 'detail'
                ? r.reason
                : undefined,
      );
      yield `${cells.map(field).join(',')}${eol}`;
    }
}

function* chunked<T>(list: readonly T[], toRow: (f: T) => string): Generator<string> {
  for (let i = 0; i < list.length; i += ROWS_PER_CHUNK)
    yield list
      .slice(i, i + ROWS_PER_CHUNK)
      .map(toRow)
      .join('');
}
