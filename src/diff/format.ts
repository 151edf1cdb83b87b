/**
 * The readable summary of a change set (stdout without --json): one line per
 * export, then the details of each export that changed, at most
 * `maxRecords` records each. docs/diff.md shows an example.
 */
import type { ExportRecord } from '../exports/types.js';
import { DEFAULT_IGNORE } from './ignore.js';
import type { ChangeSet, DiffSide, ExportDiff } from './types.js';
import { basename, dirname, join } from 'node:path';
import { escapeControl } from '../util/escape.js';
import { sameSite } from '../config/url.js';
import { readableColumnValue, readableTime } from '../util/readable.js';

export interface FormatOptions {
  /** Records shown per export (added, removed and changed together); default 20. */
  readonly maxRecords?: number;
  /** Column changes shown per changed record; default 8. */
  readonly maxColumns?: number;
  /** Characters of one value; default 60. */
  readonly maxValue?: number;
  /** User and team ids → the names a person reads (readableNames): a key or value of such a column is shown by name. */
  readonly names?: ReadonlyMap<string, string>;
}

/** A column that holds a user's or a team's id, other than an export's own `id`. */
const PERSON_COLUMN = /^(user|member|owner|team|creator|manager)(ID|Id)?$/;

/** `memberID` reads `member`: the column names a person, shown by name. */
function personColumn(column: string): string {
  return column.replace(/(ID|Id)$/, '');
}

/** Columns that name a record for a reader, in order of preference, when they are not part of the key. */
const LABEL_COLUMNS = ['name', 'email', 'teamName', 'server', 'projectName'];

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/**
 * A value as JSON, so that `"1"` and `1` read differently; a number of a
 * time column as ISO 8601 UTC, of a size column in KiB, MiB or GiB (the
 * exact value is in --json).
 */
function valueText(v: unknown, max: number, column?: string, names?: ReadonlyMap<string, string>): string {
  if (typeof v === 'string' && column !== undefined && PERSON_COLUMN.test(column)) {
    const name = names?.get(v);
    if (name !== undefined) return clip(escapeControl(JSON.stringify(name)), max);
  }
  const readable = column !== undefined ? readableColumnValue(column, v) : undefined;
  if (readable !== undefined) return readable;
  // JSON leaves U+2028, C1 and bidi controls as they are; values come from files.
  return clip(escapeControl(JSON.stringify(v === undefined ? null : v)), max);
}

/** An identifying value: bare when it is a plain word (most ids), else as JSON. */
function idText(v: unknown, max: number): string {
  return typeof v === 'string' && /^[A-Za-z0-9_.@:/+=|-]+$/.test(v) ? clip(v, max) : valueText(v, max);
}

function keyText(
  key: readonly string[],
  rec: Record<string, unknown>,
  max: number,
  names?: ReadonlyMap<string, string>,
): string {
  return key
    .map((k) => {
      const v = rec[k];
      const name = typeof v === 'string' && PERSON_COLUMN.test(k) ? names?.get(v) : undefined;
      return name !== undefined ? `${personColumn(k)}=${idText(name, max)}` : `${k}=${idText(v, max)}`;
    })
    .join(' ');
}

function labelText(d: ExportDiff, rec: ExportRecord, max: number): string {
  const col = LABEL_COLUMNS.find((c) => !d.key.includes(c) && rec[c] !== undefined && rec[c] !== null && rec[c] !== '');
  return col ? `  ${col}=${idText(rec[col], max)}` : '';
}

/** A staging directory (`.<name>.partial-<pid>-<random>`) is named as the directory it is published as. */
function publishedDir(dir: string): string {
  const staged = /^\.(.+)\.partial-\d+-[A-Za-z0-9]+$/.exec(basename(dir));
  return staged ? join(dirname(dir), staged[1]!) : dir;
}

function sideText(s: DiffSide): string {
  const kind = s.kind === 'collection' ? 'raw collection' : 'snapshot';
  const when = s.time ? `, ${readableTime(s.time)}` : s.date ? `, ${s.date}` : '';
  return `${escapeControl(publishedDir(s.dir))} (${kind}${when})`;
}

function countsText(d: ExportDiff): string {
  return `+${d.counts.added} −${d.counts.removed} ~${d.counts.changed}`;
}

function availabilityText(d: ExportDiff): string {
  const other = d.availability === 'newer-only' ? d.older : d.newer;
  const here = d.availability === 'newer-only' ? d.newer : d.older;
  const side = d.availability === 'newer-only' ? 'newer' : 'older';
  const count = `${here.count} record${here.count === 1 ? '' : 's'}`;
  return `available only in ${side} (${count}); ${side === 'newer' ? 'older' : 'newer'}: ${escapeControl(other.reason ?? 'unavailable')}`;
}

function overviewLine(d: ExportDiff, width: number): string {
  const name = d.export.padEnd(width);
  switch (d.availability) {
    case 'neither':
      return `  ${name}  unavailable in both`;
    case 'older-only':
    case 'newer-only':
      return `  ${name}  ${availabilityText(d)}`;
    case 'both':
      return `  ${name}  ${d.hasChanges ? countsText(d) : 'unchanged'}`;
  }
}

function details(d: ExportDiff, o: Required<FormatOptions>): string[] {
  const lines = [`${d.export}: ${countsText(d)}`];
  if (d.older.reason !== undefined) lines.push(`  note: older is ${escapeControl(d.older.reason)}`);
  if (d.newer.reason !== undefined) lines.push(`  note: newer is ${escapeControl(d.newer.reason)}`);
  if (d.unobtainable.length > 0) lines.push(`  not compared (unobtainable): ${d.unobtainable.join(', ')}`);
  let shown = 0;
  const total = d.counts.added + d.counts.removed + d.counts.changed;
  for (const r of d.added) {
    if (shown++ >= o.maxRecords) break;
    lines.push(`  + ${keyText(d.key, r, o.maxValue, o.names)}${labelText(d, r, o.maxValue)}`);
  }
  for (const r of d.removed) {
    if (shown++ >= o.maxRecords) break;
    lines.push(`  − ${keyText(d.key, r, o.maxValue, o.names)}${labelText(d, r, o.maxValue)}`);
  }
  for (const c of d.changed) {
    if (shown++ >= o.maxRecords) break;
    const cols = c.changes
      .slice(0, o.maxColumns)
      .map(
        (ch) =>
          `${ch.column} ${valueText(ch.old, o.maxValue, ch.column, o.names)} → ${valueText(ch.new, o.maxValue, ch.column, o.names)}`,
      );
    const more = c.changes.length > o.maxColumns ? `; and ${c.changes.length - o.maxColumns} more columns` : '';
    lines.push(`  ~ ${keyText(d.key, c.key, o.maxValue, o.names)}: ${cols.join('; ')}${more}`);
  }
  if (total > o.maxRecords) lines.push(`  and ${total - o.maxRecords} more records (use --json for all)`);
  return lines;
}

export function formatChangeSet(cs: ChangeSet, opts: FormatOptions = {}): string {
  const o: Required<FormatOptions> = { maxRecords: 20, maxColumns: 8, maxValue: 60, names: new Map(), ...opts };
  const t = cs.totals;
  const lines = [
    cs.hasChanges
      ? `${t.exportsChanged} export${t.exportsChanged === 1 ? '' : 's'} changed: +${t.added} added, −${t.removed} removed, ~${t.changed} changed`
      : `No changes (${cs.exports.length} export${cs.exports.length === 1 ? '' : 's'} compared)`,
    `  older: ${sideText(cs.older)}`,
    `  newer: ${sideText(cs.newer)}`,
  ];
  if (differentSites(cs)) {
    lines.push(`  note: the two sides come from different sites (${cs.older.baseUrl} and ${cs.newer.baseUrl})`);
  }
  if (cs.ignore.length > 0) {
    const defaults = cs.ignore.length === DEFAULT_IGNORE.length && cs.ignore.every((c, i) => c === DEFAULT_IGNORE[i]);
    const ignored = defaults
      ? 'the volatile defaults (lastLogin, drives.sizeOnDisk, … see docs/diff.md)'
      : cs.ignore.join(', ');
    lines.push(`  ignored columns: ${ignored}; --ignore none compares them`);
  }
  lines.push('');
  const width = Math.max(0, ...cs.exports.map((d) => d.export.length));
  for (const d of cs.exports) lines.push(overviewLine(d, width));
  for (const d of cs.exports) {
    if (d.availability !== 'both' || !d.hasChanges) continue;
    lines.push('', ...details(d, o));
  }
  return `${lines.join('\n')}\n`;
}

/** Whether the two sides name different sites; compared as the previous snapshot beside a new one is found (sameSite). */
export function differentSites(cs: Pick<ChangeSet, 'older' | 'newer'>): boolean {
  return cs.older.baseUrl !== null && cs.newer.baseUrl !== null && !sameSite(cs.older.baseUrl, cs.newer.baseUrl);
}
