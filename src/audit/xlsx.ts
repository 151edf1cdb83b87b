import { redactedStart } from '../util/redact.js';

/** Every .xlsx is a zip archive, and a zip with entries starts with a local file header. */
const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

export function isSpreadsheet(body: Buffer): boolean {
  return body.length >= ZIP_SIGNATURE.length && body.subarray(0, ZIP_SIGNATURE.length).equals(ZIP_SIGNATURE);
}

function kindOf(body: Buffer): string {
  const text = body.subarray(0, 200).toString('utf8').trimStart();
  if (body.length === 0) return 'an empty body';
  if (/^[[{]/.test(text)) return `${body.length} bytes of JSON`;
  if (text.startsWith('<')) return `${body.length} bytes of HTML or XML`;
  if (body.subarray(0, 2).toString('latin1') === 'PK')
    return `${body.length} bytes of a zip archive with no entries or a damaged header`;
  return `${body.length} bytes that are not a spreadsheet`;
}

/** What arrived instead of a spreadsheet, e.g. `57 bytes of JSON (application/json) starting "{"error":…}"`. */
export function describeNotSpreadsheet(body: Buffer, contentType: string | undefined): string {
  const type = contentType ? ` (${contentType.split(';')[0]!.trim()})` : '';
  const printable = redactedStart(body, 100)
    .replace(/[^\x20-\x7E]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const start = printable !== '' ? ` starting "${printable.slice(0, 100)}${printable.length > 100 ? '…' : ''}"` : '';
  return `${kindOf(body)}${type}${start}`;
}
