/**
 * Why a text is not JSON, without any of the text: JSON.parse's own message
 * quotes the text ("Unexpected token 'x', "…" is not valid JSON"), and the
 * text may be a file the user never meant to show (a symlinked secret) or
 * bytes chosen by a hostile server. Only the position and the kind of fault
 * are kept.
 */
export function describeJsonError(err: unknown, text?: string): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/end of JSON input|Unterminated string/i.test(message)) return 'it ends before the JSON is complete';
  const at = /at position (\d+)/.exec(message);
  if (at) return `invalid JSON at character ${Number(at[1])}${lineColumn(text, Number(at[1]))}`;
  if (text !== undefined && /^\s*$/.test(text)) return 'it is empty';
  return 'invalid JSON';
}

function lineColumn(text: string | undefined, offset: number): string {
  if (text === undefined || offset > text.length) return '';
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return ` (line ${line}, column ${column})`;
}
