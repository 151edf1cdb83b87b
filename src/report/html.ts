/** The page's small building blocks, shared by render.ts and findings.ts. */

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function section(id: string, title: string, body: string): string {
  return `<section id="${id}" aria-labelledby="${id}-h"><h2 id="${id}-h">${title}</h2>\n${body}</section>\n`;
}

export function table(head: readonly string[], rows: readonly string[], cls = ''): string {
  const th = head.map((h) => `<th scope="col">${h}</th>`).join('');
  return `<div class="scroll"><table${cls ? ` class="${cls}"` : ''}><thead><tr>${th}</tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>\n`;
}

export function notShown(n: number, what: string): string {
  return n > 0 ? `<p class="more">${n} more ${what} not shown.</p>\n` : '';
}

/** A table of the first `max` items' rows, and how many more there are. */
export function cappedTable<T>(
  head: readonly string[],
  items: readonly T[],
  max: number,
  row: (item: T) => string,
  what: string,
): string {
  return table(head, items.slice(0, max).map(row)) + notShown(items.length - max, what);
}
