/**
 * Every value from the site reaches the page through these functions, which
 * escape it for the one place it goes: element text, or a quoted attribute
 * value (SVG text is element text too). Escaping `&`, `<`, `>`, `"` and `'`
 * everywhere means the same text is safe in both places; nothing from the
 * site is ever placed in a tag name, an attribute name, a URL, a style or a
 * script, so no other context exists on the page.
 *
 * Bidi controls and other invisible or line-changing characters (U+202E
 * reverses what follows it) are shown spelled `\uXXXX` (escapeControl, the
 * terminal's rule), so the page reads as the data is; a very long value is
 * shown cut, with the number of characters not shown.
 */
import { escapeControl } from '../util/escape.js';

/** The longest value shown whole; a 50,000-character name shows this much and says how much more it holds. */
export const MAX_SHOWN = 200;

const HTML_SPECIAL = /[&<>"']/g;
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Markup-safe text for an element or a quoted attribute value (no truncation; for the tool's own words as well). */
export function esc(text: string): string {
  return text.replace(HTML_SPECIAL, (c) => ENTITY[c]!);
}

/** A sentence that quotes values (a finding's detail, a reason) is shown whole up to this many characters. */
const MAX_SENTENCE = 1000;

/** A value from the site as it is displayed: control characters spelled out, cut past `max` characters (by code point). */
export function shown(text: string, max = MAX_SHOWN): string {
  const spelled = escapeControl(text);
  if (spelled.length <= max) return spelled;
  const points = Array.from(spelled);
  if (points.length <= max) return spelled;
  return `${points.slice(0, max).join('')}… (${points.length - max} more characters)`;
}

/** Any export value (string, number, boolean, null, array) as displayed, escaped for the page. */
export function value(v: unknown): string {
  if (v === null || v === undefined) return '<span class="null">null</span>';
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return esc(shown(text));
}

/** A value from the site as escaped display text (names, ids, routes). */
export function text(v: string): string {
  return esc(shown(v));
}

/** A sentence from the rules or the site (a finding's detail, a reason, a validation message) as escaped display text. */
export function sentence(v: string): string {
  return esc(shown(v, MAX_SENTENCE));
}
