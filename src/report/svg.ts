/**
 * The trend charts: a few lines of inline SVG per export, drawn here (no
 * chart library). Only numbers and dates go into coordinates; the export's
 * name reaches the SVG only as escaped element text (its <title>).
 */
import { esc, text } from './escape.js';

const W = 240;
const H = 72;
const PAD = { left: 6, right: 6, top: 14, bottom: 14 };

/** One export's records per night, as a line (a gap where a night has no count) with the first and last dates and the range. */
export function countChart(
  id: string,
  name: string,
  points: ReadonlyArray<{ readonly date: string; readonly count: number | undefined }>,
): string {
  const counts = points.map((p) => p.count).filter((c): c is number => c !== undefined);
  const min = counts.length > 0 ? Math.min(...counts) : 0;
  const max = counts.length > 0 ? Math.max(...counts) : 0;
  const span = max - min || 1;
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const x = (i: number) => (points.length <= 1 ? PAD.left + innerW / 2 : PAD.left + (i * innerW) / (points.length - 1));
  const y = (c: number) => (max === min ? PAD.top + innerH / 2 : PAD.top + innerH - ((c - min) * innerH) / span);
  const fmt = (n: number) => (Math.round(n * 10) / 10).toString();
  // Consecutive nights with a count are one polyline (a point alone, a dot); a night without breaks it.
  const runs: string[][] = [[]];
  points.forEach((p, i) => {
    if (p.count === undefined) runs.push([]);
    else runs[runs.length - 1]!.push(`${fmt(x(i))},${fmt(y(p.count))}`);
  });
  const lines = runs
    .filter((r) => r.length > 0)
    .map((r) => {
      const [cx, cy] = r[0]!.split(',');
      return r.length === 1
        ? `<circle fill="#0969da" cx="${cx}" cy="${cy}" r="2.5"/>`
        : `<polyline points="${r.join(' ')}"/>`;
    })
    .join('');
  const last = points.at(-1);
  const range = counts.length > 0 ? `${min} to ${max} records` : 'no counts';
  const lastCount = last?.count !== undefined ? `, ${last.count} on ${esc(last.date)}` : '';
  const label = `${text(name)}: ${range} over ${points.length} night${points.length === 1 ? '' : 's'}${lastCount}`;
  const first = points[0]?.date ?? '';
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${id}"><title id="${id}">${label}</title>` +
    `<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#d0d7de"/>` +
    `<g fill="none" stroke="#0969da" stroke-width="2">${lines}</g>` +
    `<text x="${PAD.left}" y="10" font-size="9" fill="#57606a">${counts.length > 0 ? `min ${min}, max ${max}` : 'no counts'}</text>` +
    `<text x="${W - PAD.right}" y="10" font-size="9" fill="#57606a" text-anchor="end">${last?.count !== undefined ? `last ${last.count}` : ''}</text>` +
    `<text x="${PAD.left}" y="${H - 3}" font-size="9" fill="#57606a">${esc(first)}</text>` +
    `<text x="${W - PAD.right}" y="${H - 3}" font-size="9" fill="#57606a" text-anchor="end">${esc(last?.date ?? '')}</text>` +
    `</svg>`
  );
}
