/**
 * Why a text is not JSON, without any of the text: JSON.parse's own message
 * quotes the text ("Unexpected token 'x', "…" is not valid JSON"), and the
 * text may be a file the user never meant to show (a symlinked secret) or
 * bytes chosen by a hostile server. Only the position and the kind of fault
 * are kept.
 */
export function describeJsonError(err: unknown, text?: string): string {
  return describeJsonFault(
    err,
    (position) => ({ offset: position, lineColumn: lineColumn(text, position) }),
    () => text !== undefined && /^\s*$/.test(text),
  );
}

/**
 * describeJsonError for an error JSON.parse raised on a part of a text (a
 * slice of a large body): `place` turns the position in that part into the
 * offset in the whole text and its " (line L, column C)", so that the
 * message is the one the whole text would have given.
 */
export function describeJsonFault(
  err: unknown,
  place: (position: number) => { offset: number; lineColumn: string },
  empty: () => boolean,
): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/end of JSON input|Unterminated string/i.test(message)) return 'it ends before the JSON is complete';
  const at = /at position (\d+)/.exec(message);
  if (at) {
    const p = place(Number(at[1]));
    return `invalid JSON at character ${p.offset}${p.lineColumn}`;
  }
  if (empty()) return 'it is empty';
  return 'invalid JSON';
}

function lineColumn(text: string | undefined, offset: number): string {
  if (text === undefined || offset > text.length) return '';
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return ` (line ${line}, column ${column})`;
}
