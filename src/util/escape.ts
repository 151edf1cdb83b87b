/**
 * Text that came from a server or a file may hold bytes that drive a
 * terminal: ESC and CSI sequences move the cursor or rewrite earlier lines,
 * BEL rings, CR overwrites a line, and Unicode bidi controls or line
 * separators make a line read differently from what it holds; invisible
 * characters (soft hyphens, zero-width spaces and joiners, Hangul fillers,
 * variation selectors, tag characters) hide what a text holds. Every such
 * character is shown as `\uXXXX` (one above U+FFFF as its two UTF-16 units,
 * `\udb40\udc41`), a spelling that is also valid inside a JSON string, so
 * the same escaping serves plain text and `--json`.
 *
 * The characters: the controls (Cc), every Default_Ignorable_Code_Point,
 * U+2028 and U+2029 (line and paragraph separators) and U+FFF9-U+FFFB
 * (interlinear annotation); test/unit/trust.test.ts checks the class
 * against Unicode's properties, code point by code point. It is spelled
 * out rather than `\p{Default_Ignorable_Code_Point}` with the `u` flag,
 * which scans text that is not Latin-1 a third slower or more. Above
 * U+FFFF it matches the lead units of U+1BCA0-1BCA3, U+1D173-1D17A and
 * U+E0000-E0FFF with any trail unit, and `spell` leaves the other
 * characters of those lead units as they are. U+00A0-U+00AC (no-break
 * space, ¡ … ¬) are visible and left as they are too, but matched: the
 * Latin-1 part of the class is then one range, U+007F-U+00AD, and ordinary
 * names scan as fast as before U+00AD was added (a tenth slower without).
 */
// The class by its ranges: U+007F-U+00AD and the invisible characters up to U+FFFF (C0 is added to each below),
// then those above U+FFFF by their UTF-16 units.
const INVISIBLE = [
  String.raw`\u007f-\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f`,
  String.raw`\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb`,
].join('');
const ASTRAL = String.raw`[\ud82f\ud834\udb40-\udb43][\udc00-\udfff]`;
const CONTROL = new RegExp(String.raw`[\u0000-\u001f${INVISIBLE}]|${ASTRAL}`, 'g');
const CONTROL_BUT_LAYOUT = new RegExp(String.raw`[\u0000-\u0008\u000b-\u001f${INVISIBLE}]|${ASTRAL}`, 'g');

function unit(u: number): string {
  return `\\u${u.toString(16).padStart(4, '0')}`;
}

function spell(c: string): string {
  const u = c.charCodeAt(0);
  if (c.length === 1) return u >= 0xa0 && u <= 0xac ? c : unit(u);
  const cp = c.codePointAt(0)!;
  const invisible = cp >= 0xe0000 || (cp >= 0x1bca0 && cp <= 0x1bca3) || (cp >= 0x1d173 && cp <= 0x1d17a);
  return invisible ? unit(u) + unit(c.charCodeAt(1)) : c;
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
