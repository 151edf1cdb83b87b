/**
 * Text that came from a server or a file may hold bytes that drive a
 * terminal: ESC and CSI sequences move the cursor or rewrite earlier lines,
 * BEL rings, CR overwrites a line, and Unicode bidi controls or line
 * separators make a line read differently from what it holds. Every such
 * character is shown as `\uXXXX`, a spelling that is also valid inside a
 * JSON string, so the same escaping serves plain text and `--json`.
 */
const CONTROL =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]/g;
const CONTROL_BUT_LAYOUT =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]/g;

function spell(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** For one value from outside (a body snippet, a field name, a realm id): every control character escaped, newlines too. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, spell);
}

/**
 * For a whole message or output block on its way to stdout/stderr: the
 * tool's own newlines and tabs stay, everything else that could drive the
 * terminal is escaped. The last line of defence; values from outside are
 * escaped where they are quoted as well (`escapeControl`).
 */
export function escapeForTerminal(text: string): string {
  return text.replace(CONTROL_BUT_LAYOUT, spell);
}
