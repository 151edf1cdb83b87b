/**
 * Values as a person reads them in every text form (digest, `diff` text):
 * times in ISO 8601 UTC, never epoch numbers; sizes in KiB, MiB, GiB with
 * one decimal, never byte counts; no UUID or raw key in a sentence. Exact
 * values stay in JSON and CSV, where programs read them.
 */

const UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** `512 B`, `1.5 KiB`, `9.6 GiB`: binary units, one decimal. */
function readableSize(bytes: number): string {
  if (!Number.isFinite(bytes) || Math.abs(bytes) < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** An instant (epoch milliseconds or a date text) as ISO 8601 UTC to the second: `2026-11-22T02:00:00Z`. */
export function readableTime(at: number | string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? String(at) : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A column holding an instant as epoch milliseconds (`lastLogin`, `createdAt`, `expires`, …), by its name. */
const TIME_COLUMN = /(time|date|login|created|modified|updated|expires|expiration|until|deleted|^start|^end|At$)/i;
/** A column holding a size in bytes (`size`, `sizeOnDisk`, `vaultBytes`, …), by its name. */
const SIZE_COLUMN = /(size|bytes|capacity)/i;

/**
 * A number of an export's column as a person reads it, by the column's
 * name: an instant of a time column as ISO 8601 UTC, a byte count of a size
 * column in KiB, MiB or GiB; undefined for any other value.
 */
export function readableColumnValue(column: string, v: unknown): string | undefined {
  if (typeof v !== 'number') return undefined;
  if (TIME_COLUMN.test(column) && v > 1e11 && v < 1e14) return readableTime(v);
  if (SIZE_COLUMN.test(column) && Number.isInteger(v)) return readableSize(v);
  return undefined;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** A key as the API writes ids: a UUID, with a type prefix (`proj|…`) or without. */
const KEY = `(?:[a-z]{1,20}\\|)?${UUID}`;

/**
 * A sentence of the data with its ids taken out: a key in parentheses
 * after a name is dropped, any other key is `…`, a row id (`row cG06…`) is
 * dropped, `(N bytes)` is a size in binary units and a time loses its
 * milliseconds. The names around them stay.
 */
export function withoutIds(text: string): string {
  return text
    .replace(new RegExp(` \\(${KEY}\\)`, 'gi'), '')
    .replace(new RegExp(KEY, 'gi'), '…')
    .replace(/:? row [A-Za-z0-9+/_-]{6,}={0,2}/g, '')
    .replace(/\((\d+) bytes\)/g, (_, n: string) => `(${readableSize(Number(n))})`)
    .replace(/(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.\d{3}Z/g, '$1Z');
}
